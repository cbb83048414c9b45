//! What the kubelet checks and builds before a container starts: invalid image names and
//! pull back-off, and the container's configuration (env, mounts, tuning).

use std::collections::BTreeMap;

use crate::client::recorder::{NORMAL, WARNING};
use crate::message::Ctx;
use crate::node::behavior::Overrides;
use crate::node::images;
use crate::node::podworker::{Action, Backoff, Waiting};
use crate::node::runtime::ContainerConfig;
use crate::node::volumes;
use crate::object::{Kind, Object};

use super::Kubelet;

impl Kubelet {
    /// Before looking at an image: invalid names and pull back-off stop the container here.
    pub(super) fn image_blocked(&mut self, ctx: &mut Ctx, uid: &str, container: &str) -> bool {
        let now = ctx.now;
        let Some(w) = self.workers.get_mut(uid) else {
            return true;
        };
        let image = w
            .container_spec(container)
            .and_then(|c| c.image.clone())
            .unwrap_or_default();
        if let Some(msg) = images::invalid_name(&image) {
            w.waiting.insert(
                container.to_string(),
                Waiting {
                    reason: "InvalidImageName".into(),
                    message: Some(msg.clone()),
                },
            );
            self.skip_container(uid, container);
            self.container_event(ctx, uid, container, WARNING, "InspectFailed", &msg);
            self.container_event(
                ctx,
                uid,
                container,
                WARNING,
                "Failed",
                "Error: InvalidImageName",
            );
            self.sync_error(now, uid, container, "InvalidImageName", &msg);
            return true;
        }
        let b = w.pull_backoff.get(&image).copied();
        if !Backoff::in_backoff(b.as_ref(), now) {
            return false;
        }
        let err = w.pull_errors.get(&image).cloned().unwrap_or_default();
        let msg = format!("Back-off pulling image \"{image}\": ErrImagePull: {err}");
        w.waiting.insert(
            container.to_string(),
            Waiting {
                reason: "ImagePullBackOff".into(),
                message: Some(msg.clone()),
            },
        );
        self.skip_container(uid, container);
        self.container_event(
            ctx,
            uid,
            container,
            NORMAL,
            "BackOff",
            &format!("Back-off pulling image \"{image}\""),
        );
        self.container_event(
            ctx,
            uid,
            container,
            WARNING,
            "Failed",
            "Error: ImagePullBackOff",
        );
        self.sync_error(now, uid, container, "ImagePullBackOff", &msg);
        if let Some(b) = b {
            self.pod_timer(ctx, (b.last_update + b.delay).saturating_sub(now), uid);
        }
        true
    }

    /// The container's configuration: env vars resolved, volumes mounted, tuning applied.
    pub(super) fn container_config(
        &self,
        uid: &str,
        name: &str,
        attempt: u32,
    ) -> Result<ContainerConfig, String> {
        let w = self
            .workers
            .get(uid)
            .ok_or_else(|| "pod gone".to_string())?;
        let pod = w.pod().ok_or_else(|| "pod gone".to_string())?;
        let spec = w
            .container_spec(name)
            .ok_or_else(|| format!("container {name} not found"))?;
        let pod_ip = w.sandbox.as_ref().map(|s| s.1.clone()).unwrap_or_default();
        let services: Vec<&k8s_openapi::api::core::v1::Service> = self
            .informers
            .of(Kind::Service)
            .iter()
            .filter_map(|o| match &**o {
                Object::Service(s) => Some(&**s),
                _ => None,
            })
            .collect();
        let mut env: BTreeMap<String, String> = BTreeMap::new();
        if self.informers.of(Kind::Service).has_synced() {
            env.extend(crate::node::env::service_env(pod, &services));
        } else {
            // Before the first list only the master Service's address is known.
            env.extend(volumes::service_links());
        }
        env.extend(volumes::env(
            pod,
            spec,
            &w.volumes.objects,
            &pod_ip,
            &self.ip,
        )?);
        let mut command = spec.command.clone().unwrap_or_default();
        command.extend(spec.args.clone().unwrap_or_default());
        let annotations = pod.metadata.annotations.clone().unwrap_or_default();
        Ok(ContainerConfig {
            name: name.to_string(),
            image: spec.image.clone().unwrap_or_default(),
            command,
            env,
            attempt,
            ports: spec
                .ports
                .iter()
                .flatten()
                .map(|p| p.container_port)
                .collect(),
            mounts: volumes::container_mounts(spec, &w.volumes.mounted),
            stdin: spec.stdin == Some(true),
            overrides: Overrides {
                cpu_limit: spec
                    .resources
                    .as_ref()
                    .and_then(|r| r.limits.as_ref())
                    .and_then(|l| l.get("cpu"))
                    .and_then(|q| crate::quantity::parse(&q.0).ok())
                    .map(|q| q.milli_value().max(0) as u64),
                ..Overrides::for_container(&annotations, name)
            },
        })
    }

    /// Drops the remaining actions for one container (it cannot start in this sync).
    pub(super) fn skip_container(&mut self, uid: &str, container: &str) {
        if let Some(w) = self.workers.get_mut(uid) {
            w.actions.retain(|a| !matches!(a, Action::Create { container: c, .. } | Action::Start { container: c } | Action::Pull { container: c } if c == container));
        }
    }
}
