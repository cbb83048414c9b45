//! The ingress-nginx controller's control loop (`internal/ingress/controller` and
//! `internal/ingress/status`): while its controller pod is Ready it records `Sync`
//! "Scheduled for sync" for each Ingress of its class it sees added or changed, and
//! every 60 s (first when it starts leading) writes `status.loadBalancer.ingress`
//! `[{hostname: localhost}]`, the `--publish-status-address` of kind's manifest.
//! It runs in kube-controller-manager's process, as the local-path provisioner does
//! (docs/design.md §6.16); nginx itself is on the data plane (`node::ingress_nginx`).

use std::collections::BTreeMap;

use k8s_openapi::api::networking::v1::{
    Ingress, IngressClass, IngressLoadBalancerIngress, IngressLoadBalancerStatus, IngressStatus,
};

use crate::api::{ApiRequest, Body, Subresource, Verb};
use crate::client::{Change, WorkQueue};
use crate::controllers::util::{is_pod_ready, key_of, split_key};
use crate::controllers::{Action, Controller, Env, Informers, SyncResult};
use crate::node::ingress_route;
use crate::object::{Kind, Object};
use crate::time::{Time, SECOND};

/// The namespace kind's manifest installs the controller in.
pub const NAMESPACE: &str = "ingress-nginx";
/// The status address kind's manifest publishes (`--publish-status-address=localhost`).
pub const STATUS_ADDRESS: &str = "localhost";
/// `UpdateInterval` of the status syncer.
pub const STATUS_PERIOD: Time = 60 * SECOND;
/// How long the new controller takes to win its leader election and sync status first.
const LEADING_AFTER: Time = 2 * SECOND;
/// The queue key of the periodic status sync.
const STATUS_KEY: &str = "\u{0}status";

/// The controller: which controller pod runs, and what it has seen of each Ingress.
#[derive(Default)]
pub struct IngressNginxController {
    /// The Ready controller pod's UID (a new pod relists and syncs everything again).
    running: Option<String>,
    /// Ingress key → (uid, resourceVersion) last scheduled for sync by the running pod:
    /// every add and update the informer delivers is one `Sync` event, the status write
    /// included (so `kubectl describe` shows `(x2 over …)`, as on a real cluster).
    seen: BTreeMap<String, (String, String)>,
}

fn controller_pod_uid(inf: &Informers) -> Option<String> {
    let mut pods: Vec<_> = inf
        .of(Kind::Pod)
        .iter_ns(NAMESPACE)
        .filter_map(|o| match &**o {
            Object::Pod(p) => Some(p),
            _ => None,
        })
        .filter(|p| {
            let l = p.metadata.labels.as_ref();
            l.and_then(|l| l.get("app.kubernetes.io/component"))
                .is_some_and(|v| v == "controller")
                && l.and_then(|l| l.get("app.kubernetes.io/name"))
                    .is_some_and(|v| v == "ingress-nginx")
                && p.metadata.deletion_timestamp.is_none()
                && is_pod_ready(p)
        })
        .filter_map(|p| p.metadata.uid.clone())
        .collect();
    pods.sort();
    pods.into_iter().next()
}

fn classes(inf: &Informers) -> Vec<IngressClass> {
    inf.of(Kind::IngressClass)
        .iter()
        .filter_map(|o| match &**o {
            Object::IngressClass(c) => Some((**c).clone()),
            _ => None,
        })
        .collect()
}

fn desired_status() -> IngressStatus {
    IngressStatus {
        load_balancer: Some(IngressLoadBalancerStatus {
            ingress: Some(vec![IngressLoadBalancerIngress {
                hostname: Some(STATUS_ADDRESS.into()),
                ..IngressLoadBalancerIngress::default()
            }]),
        }),
    }
}

impl IngressNginxController {
    /// Writes the status of every served Ingress that lacks it.
    fn sync_status(&mut self, env: &mut Env, inf: &Informers) {
        let classes = classes(inf);
        let want = desired_status();
        for o in inf.of(Kind::Ingress).iter() {
            let Object::Ingress(ing) = &**o else { continue };
            if !ingress_route::serves(ing, &classes)
                || ing.metadata.deletion_timestamp.is_some()
                || ing.status.as_ref() == Some(&want)
            {
                continue;
            }
            let mut updated: Ingress = (**ing).clone();
            updated.status = Some(want.clone());
            let ns = ing.metadata.namespace.as_deref().unwrap_or("");
            let name = ing.metadata.name.as_deref().unwrap_or("");
            env.fire(
                ApiRequest::new(Verb::Update, Kind::Ingress, ns, name)
                    .with_subresource(Subresource::Status)
                    .with_body(Body::Object(Object::from(updated))),
            );
        }
    }
}

impl Controller for IngressNginxController {
    fn name(&self) -> &'static str {
        "ingress-nginx-controller"
    }

    fn component(&self) -> &'static str {
        "nginx-ingress-controller"
    }

    fn watches(&self) -> &'static [Kind] {
        &[Kind::Ingress, Kind::IngressClass, Kind::Pod]
    }

    fn on_change(
        &mut self,
        kind: Kind,
        change: &Change,
        queue: &mut WorkQueue<String>,
        inf: &Informers,
        _now: Time,
    ) {
        match kind {
            Kind::Ingress => queue.add(key_of(change.object())),
            Kind::IngressClass => {
                for o in inf.of(Kind::Ingress).iter() {
                    queue.add(key_of(o));
                }
            }
            Kind::Pod if change.object().meta().namespace.as_deref() == Some(NAMESPACE) => {
                let now = controller_pod_uid(inf);
                if now != self.running {
                    self.running = now.clone();
                    self.seen.clear();
                    if now.is_some() {
                        for o in inf.of(Kind::Ingress).iter() {
                            queue.add(key_of(o));
                        }
                        queue.add(STATUS_KEY.to_string());
                    }
                }
            }
            _ => {}
        }
    }

    fn sync(&mut self, key: &str, env: &mut Env, inf: &Informers) -> SyncResult {
        if self.running.is_none() {
            return Ok(Action::await_change());
        }
        if key == STATUS_KEY {
            return Ok(self.status_tick(env, inf));
        }
        let (ns, name) = split_key(key);
        let Some(obj) = inf.of(Kind::Ingress).get(ns, name).cloned() else {
            self.seen.remove(key);
            return Ok(Action::await_change());
        };
        let Object::Ingress(ing) = &*obj else {
            return Ok(Action::await_change());
        };
        if !ingress_route::serves(ing, &classes(inf)) || ing.metadata.deletion_timestamp.is_some() {
            return Ok(Action::await_change());
        }
        let mark = (
            ing.metadata.uid.clone().unwrap_or_default(),
            ing.metadata.resource_version.clone().unwrap_or_default(),
        );
        if self.seen.get(key) != Some(&mark) {
            self.seen.insert(key.to_string(), mark);
            env.event(&obj, "Normal", "Sync", "Scheduled for sync");
        }
        Ok(Action::await_change())
    }
}

impl IngressNginxController {
    /// The status syncer's run: the first one a moment after the pod starts leading,
    /// then every [`STATUS_PERIOD`].
    fn status_tick(&mut self, env: &mut Env, inf: &Informers) -> Action {
        let leading = self.seen.contains_key(STATUS_KEY);
        if !leading {
            self.seen
                .insert(STATUS_KEY.to_string(), (String::new(), String::new()));
            return Action::requeue(LEADING_AFTER);
        }
        self.sync_status(env, inf);
        Action::requeue(STATUS_PERIOD)
    }
}
