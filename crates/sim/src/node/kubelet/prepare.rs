//! The sync's `Prepare` step: fetch the ConfigMaps, Secrets, claims and volumes a pod
//! needs, set its volumes up (with upstream's mount retry back-off, `FailedMount` events
//! and the `WaitForAttachAndMount` timeout), and report what blocks it.

use crate::api::{ApiRequest, Verb};
use crate::client::recorder::WARNING;
use crate::message::Ctx;
use crate::node::journal::{q, Level};
use crate::node::podworker::{pod_key, pod_of, spec_of, Waiting, MOUNT_TIMEOUT};
use crate::node::volumes::{self, Setup, RETRY_INITIAL, RETRY_MAX};
use crate::object::{Kind, Object};
use crate::time::{format_duration, Time, SECOND};

use super::{ApiPurpose, Kubelet, OsOp};

/// How often an unprocessed volume (claim missing or unbound) is looked at again.
const UNPROCESSED_RETRY: Time = 2 * SECOND;

fn kind_of(key: &str) -> Option<Kind> {
    match key.split('/').next()? {
        "configmaps" => Some(Kind::ConfigMap),
        "secrets" => Some(Kind::Secret),
        "persistentvolumeclaims" => Some(Kind::PersistentVolumeClaim),
        "persistentvolumes" => Some(Kind::PersistentVolume),
        _ => None,
    }
}

impl Kubelet {
    /// Starts the Prepare step: returns true when it waits for fetches.
    pub(super) fn prepare(&mut self, ctx: &mut Ctx, uid: &str) -> bool {
        let Some(w) = self.workers.get_mut(uid) else {
            return false;
        };
        let pod_obj = w.pod.clone();
        let Some(pod) = pod_of(&pod_obj) else {
            return false;
        };
        let ns = pod.metadata.namespace.clone().unwrap_or_default();
        w.volumes.objects.clear();
        w.volumes.fetching.clear();
        if w.volumes.waiting_since.is_none() && !w.volumes.ready {
            w.volumes.waiting_since = Some(ctx.now);
        }
        let keys: Vec<String> = volumes::needed(&pod).into_iter().map(|(k, _)| k).collect();
        if keys.is_empty() {
            return self.finish_prepare(ctx, uid);
        }
        for key in keys {
            self.fetch(ctx, uid, &ns, &key);
        }
        true
    }

    fn fetch(&mut self, ctx: &mut Ctx, uid: &str, ns: &str, key: &str) {
        let Some(kind) = kind_of(key) else {
            return;
        };
        let name = key.split('/').nth(1).unwrap_or("");
        let ns = if kind == Kind::PersistentVolume {
            ""
        } else {
            ns
        };
        if let Some(w) = self.workers.get_mut(uid) {
            w.volumes.fetching.push(key.to_string());
        }
        let req = ApiRequest::new(Verb::Get, kind, ns, name);
        self.api(
            ctx,
            req,
            ApiPurpose::Fetch(uid.to_string(), key.to_string()),
        );
    }

    /// A fetch answered: when every fetch of the step is back, set the volumes up.
    pub(super) fn on_fetched(
        &mut self,
        ctx: &mut Ctx,
        uid: &str,
        key: &str,
        r: Result<std::sync::Arc<Object>, String>,
    ) {
        let Some(w) = self.workers.get_mut(uid) else {
            return;
        };
        let Some(i) = w.volumes.fetching.iter().position(|k| k == key) else {
            return;
        };
        w.volumes.fetching.remove(i);
        // A bound claim needs its PV too.
        let pv = match &r {
            Ok(o) => match &**o {
                Object::PersistentVolumeClaim(c) => c
                    .spec
                    .as_ref()
                    .and_then(|s| s.volume_name.clone())
                    .filter(|v| !v.is_empty()),
                _ => None,
            },
            Err(_) => None,
        };
        w.volumes.objects.insert(key.to_string(), r);
        let ns = w
            .pod()
            .and_then(|p| p.metadata.namespace.clone())
            .unwrap_or_default();
        if let Some(pv) = pv {
            let k = format!("persistentvolumes/{pv}");
            if !w.volumes.objects.contains_key(&k) && !w.volumes.fetching.contains(&k) {
                self.fetch(ctx, uid, &ns, &k);
            }
        }
        let done = self
            .workers
            .get(uid)
            .is_some_and(|w| w.volumes.fetching.is_empty());
        if done && !self.finish_prepare(ctx, uid) {
            self.next_action(ctx, uid);
        }
    }

    /// Sets the volumes up with what was fetched. Returns true if the sync must wait
    /// (it never does here), false to continue with the next action.
    fn finish_prepare(&mut self, ctx: &mut Ctx, uid: &str) -> bool {
        let now = ctx.now;
        let node = self.name.clone();
        let Some(w) = self.workers.get_mut(uid) else {
            return false;
        };
        let pod_obj = w.pod.clone();
        let Some(pod) = pod_of(&pod_obj) else {
            return false;
        };
        let spec = spec_of(&pod_obj);
        let key = pod_key(pod);
        let pod_name = pod.metadata.name.clone().unwrap_or_default();
        let mut unmounted = Vec::new();
        let mut unprocessed = Vec::new();
        let mut failures: Vec<(String, String)> = Vec::new();
        let mut logs = Vec::new();
        let mut ops = Vec::new();
        let mut next_retry: Option<Time> = None;
        let remount = std::mem::take(&mut w.volumes.remount);
        for v in spec.volumes.iter().flatten() {
            if let Some(m) = w.volumes.mounted.get(&v.name) {
                if remount && volumes::follows_object(m) {
                    ops.extend(remount_ops(&pod, v, &mut w.volumes, &node));
                }
                continue;
            }
            if let Some((_, not_before)) = w.volumes.retry.get(&v.name) {
                if now < *not_before {
                    unmounted.push(v.name.clone());
                    next_retry = Some(next_retry.map_or(*not_before, |t: Time| t.min(*not_before)));
                    continue;
                }
            }
            match volumes::setup(&pod, v, &w.volumes.objects, &node) {
                Setup::Mounted(m) => {
                    let desc = format!(
                        "for volume {} (UniqueName: {}) pod {} (UID: {}) ",
                        q(&m.pv.clone().unwrap_or_else(|| v.name.clone())),
                        q(&m.unique),
                        q(&pod_name),
                        q(uid)
                    );
                    let pk = q(&key);
                    if m.steps.iter().any(|s| s == "attach") {
                        logs.push((Level::Info, "reconciler_common.go:245", format!("{} pod={pk}", q(&format!("operationExecutor.VerifyControllerAttachedVolume started {desc}")))));
                    }
                    logs.push((
                        Level::Info,
                        "reconciler_common.go:218",
                        format!(
                            "{} pod={pk}",
                            q(&format!("operationExecutor.MountVolume started {desc}"))
                        ),
                    ));
                    if m.steps.iter().any(|s| s == "stage") {
                        let dev = m
                            .mounts
                            .first()
                            .map(|x| x.target.clone())
                            .unwrap_or_default();
                        logs.push((
                            Level::Info,
                            "operation_generator.go:580",
                            format!(
                                "{} pod={pk}",
                                q(&format!(
                                    "MountVolume.MountDevice succeeded {desc}device mount path {}",
                                    q(&dev)
                                ))
                            ),
                        ));
                    }
                    logs.push((
                        Level::Info,
                        "operation_generator.go:614",
                        format!(
                            "{} pod={pk}",
                            q(&format!("MountVolume.SetUp succeeded {desc}"))
                        ),
                    ));
                    ops.push(OsOp::Mkdir(m.host_path.clone()));
                    let files: std::collections::BTreeMap<String, String> =
                        volumes::files(&pod, v, &w.volumes.objects)
                            .into_iter()
                            .collect();
                    ops.extend(files.iter().map(|(rel, content)| OsOp::WriteFile {
                        path: format!("{}/{rel}", m.host_path),
                        content: content.clone(),
                    }));
                    w.volumes
                        .written
                        .insert(v.name.clone(), volumes::hashes(&files));
                    ops.extend(m.mounts.iter().cloned().map(OsOp::Mount));
                    w.volumes.retry.remove(&v.name);
                    w.volumes.mounted.insert(v.name.clone(), Box::new(m));
                }
                Setup::Failed(e) => {
                    let delay = w
                        .volumes
                        .retry
                        .get(&v.name)
                        .map_or(RETRY_INITIAL, |(d, _)| (d * 2).min(RETRY_MAX));
                    w.volumes.retry.insert(v.name.clone(), (delay, now + delay));
                    next_retry = Some(next_retry.map_or(now + delay, |t: Time| t.min(now + delay)));
                    unmounted.push(v.name.clone());
                    let plugin = if v.config_map.is_some() {
                        "configmap"
                    } else if v.secret.is_some() {
                        "secret"
                    } else {
                        "host-path"
                    };
                    let until = crate::node::journal::rfc3339_nanos(now + delay);
                    logs.push((Level::Error, "nestedpendingoperations.go:348", format!(
                        "Operation for \"{{volumeName:kubernetes.io/{plugin}/{uid}-{} podName:{uid} nodeName:}}\" failed. No retries permitted until {} (durationBeforeRetry {}). Error: MountVolume.SetUp failed for volume {} (UniqueName: \"kubernetes.io/{plugin}/{uid}-{}\") pod {} (UID: {}) : {e}",
                        v.name, until, format_duration(delay), q(&v.name), v.name, q(&pod_name), q(uid)
                    )));
                    failures.push((v.name.clone(), e));
                }
                Setup::Unprocessed(e) => {
                    unmounted.push(v.name.clone());
                    unprocessed.push(v.name.clone());
                    logs.push((
                        Level::Error,
                        "desired_state_of_world_populator.go:356",
                        format!(
                            "\"Error processing volume\" err={} pod={} volumeName={}",
                            q(&e),
                            q(&key),
                            q(&v.name)
                        ),
                    ));
                    let t = now + UNPROCESSED_RETRY;
                    next_retry = Some(next_retry.map_or(t, |x: Time| x.min(t)));
                }
            }
        }
        for (level, src, msg) in logs {
            self.klog(now, level, src, msg);
        }
        self.os_ops.extend(ops);
        for (name, e) in &failures {
            self.pod_event(
                ctx,
                uid,
                WARNING,
                "FailedMount",
                &format!("MountVolume.SetUp failed for volume \"{name}\" : {e}"),
            );
        }
        let Some(w) = self.workers.get_mut(uid) else {
            return false;
        };
        if unmounted.is_empty() {
            w.volumes.ready = true;
            w.volumes.waiting_since = None;
            return false;
        }
        // Still waiting: containers stay in ContainerCreating; report once per timeout.
        w.volumes.ready = false;
        let names: Vec<String> = spec.containers.iter().map(|c| c.name.clone()).collect();
        for n in names {
            w.waiting.entry(n).or_insert(Waiting {
                reason: "ContainerCreating".into(),
                message: None,
            });
        }
        w.actions.clear();
        let since = *w.volumes.waiting_since.get_or_insert(now);
        let deadline = since + MOUNT_TIMEOUT;
        if now >= deadline {
            w.volumes.waiting_since = Some(now);
            let msg = format!(
                "Unable to attach or mount volumes: unmounted volumes=[{}], unattached volumes=[], failed to process volumes=[{}]: context deadline exceeded",
                unmounted.join(" "),
                unprocessed.join(" ")
            );
            self.pod_event(ctx, uid, WARNING, "FailedMount", &msg);
            self.klog(
                now,
                Level::Error,
                "pod_workers.go:1301",
                format!(
                    "\"Error syncing pod, skipping\" err={} pod={} podUID={}",
                    q(&msg),
                    q(&key),
                    q(uid)
                ),
            );
        }
        let wake = next_retry.unwrap_or(deadline).min(if now >= deadline {
            now + MOUNT_TIMEOUT
        } else {
            deadline
        });
        self.pod_timer(ctx, wake.saturating_sub(now).max(1), uid);
        false
    }
}

/// A periodic sync's remount of a volume that follows an object: the files that changed
/// since the last write (none when the object can't be read now: the old files stay, as
/// the kubelet keeps a volume's last contents when a refresh fails).
fn remount_ops(
    pod: &k8s_openapi::api::core::v1::Pod,
    v: &k8s_openapi::api::core::v1::Volume,
    state: &mut volumes::VolumeState,
    node: &str,
) -> Vec<OsOp> {
    let Some(m) = state.mounted.get(&v.name) else {
        return Vec::new();
    };
    if !matches!(
        volumes::setup(pod, v, &state.objects, node),
        Setup::Mounted(_)
    ) {
        return Vec::new();
    }
    let dir = m.host_path.clone();
    let new: std::collections::BTreeMap<String, String> =
        volumes::files(pod, v, &state.objects).into_iter().collect();
    let old = state.written.entry(v.name.clone()).or_default();
    let change = volumes::refresh(old, &new);
    *old = volumes::hashes(&new);
    let writes = change
        .write
        .into_iter()
        .map(|(rel, content)| OsOp::WriteFile {
            path: format!("{dir}/{rel}"),
            content,
        });
    let removes = change
        .remove
        .into_iter()
        .map(|rel| OsOp::RemoveFile(format!("{dir}/{rel}")));
    writes.chain(removes).collect()
}
