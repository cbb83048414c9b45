//! The disruption controller: keeps every PodDisruptionBudget's status (healthy and
//! expected pods, disruptionsAllowed, disruptedPods, the DisruptionAllowed condition)
//! in step with the pods it selects, as `pkg/controller/disruption` does.

use std::sync::Arc;

use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;

use super::disruption_status::{
    build_disrupted_pod_map, count_healthy, expected_pod_count, fail_safe, next_status, Computed,
    Scale,
};
use super::util::{controller_ref, key_of, split_key};
use crate::api::{ApiRequest, ApiResponse, Body, ReqId, StatusReason, Subresource, Verb};
use crate::client::recorder::{NORMAL, WARNING};
use crate::client::{Change, Pending, WorkQueue};
use crate::controllers::{Action, Controller, Env, Informers, SyncError, SyncResult};
use crate::object::{Kind, Object};
use crate::selector::LabelSelector;
use crate::time::Time;

/// The disruption controller.
#[derive(Default)]
pub struct DisruptionController {
    /// Status writes in flight, with their PDB's key.
    sent: Pending<String>,
}

/// The PDB's selector as `LabelSelectorAsSelector` converts it (nil selects nothing).
fn selector_of(pdb: &PodDisruptionBudget) -> Option<LabelSelector> {
    let sel = pdb.spec.as_ref().and_then(|s| s.selector.as_ref());
    LabelSelector::from_k8s(sel).ok()
}

/// The scale of a pod's controller, found in the informers (`finders`): a Deployment
/// through its ReplicaSet, a ReplicaSet no Deployment controls, a StatefulSet.
fn scale_of(inf: &Informers, r: &OwnerReference, ns: &str) -> Option<Scale> {
    let replicas = |o: &Object| match o {
        Object::Deployment(d) => d.spec.as_ref().and_then(|s| s.replicas),
        Object::ReplicaSet(r) => r.spec.as_ref().and_then(|s| s.replicas),
        Object::StatefulSet(s) => s.spec.as_ref().and_then(|s| s.replicas),
        _ => None,
    };
    let uid_of = |o: &Object| o.meta().uid.clone().unwrap_or_default();
    let group_ok = r.api_version.starts_with("apps/") || r.api_version.starts_with("extensions/");
    if !group_ok {
        return None;
    }
    match r.kind.as_str() {
        "ReplicaSet" => {
            let rs = inf
                .of(Kind::ReplicaSet)
                .get(ns, &r.name)
                .filter(|o| uid_of(o) == r.uid)?;
            match controller_ref(rs) {
                Some(d) if d.kind == "Deployment" => {
                    let dep = inf
                        .of(Kind::Deployment)
                        .get(ns, &d.name)
                        .filter(|o| uid_of(o) == d.uid)?;
                    Some((uid_of(dep), replicas(dep).unwrap_or(1)))
                }
                _ => Some((uid_of(rs), replicas(rs).unwrap_or(1))),
            }
        }
        "StatefulSet" => {
            let ss = inf
                .of(Kind::StatefulSet)
                .get(ns, &r.name)
                .filter(|o| uid_of(o) == r.uid)?;
            Some((uid_of(ss), replicas(ss).unwrap_or(1)))
        }
        _ => None,
    }
}

impl DisruptionController {
    /// Queues every PDB in the pod's namespace that selects it.
    fn enqueue_pdbs_for(&mut self, pod: &Object, queue: &mut WorkQueue<String>, inf: &Informers) {
        for o in inf.of(Kind::PodDisruptionBudget).iter_ns(pod.namespace()) {
            let Object::PodDisruptionBudget(pdb) = &**o else {
                continue;
            };
            if selector_of(pdb).is_some_and(|s| s.matches_object(pod)) {
                queue.add(key_of(o));
            }
        }
    }

    fn send_status(&mut self, env: &mut Env, key: &str, mut pdb: PodDisruptionBudget) {
        pdb.metadata.managed_fields = None;
        let ns = pdb.metadata.namespace.clone().unwrap_or_default();
        let name = pdb.metadata.name.clone().unwrap_or_default();
        let req = ApiRequest::new(Verb::Update, Kind::PodDisruptionBudget, &ns, &name)
            .with_subresource(Subresource::Status)
            .with_body(Body::Object(pdb.into()));
        let id = env.send(req);
        self.sent.insert(id, key.to_string());
    }
}

impl Controller for DisruptionController {
    fn name(&self) -> &'static str {
        "disruption-controller"
    }

    fn component(&self) -> &'static str {
        "controllermanager"
    }

    fn watches(&self) -> &'static [Kind] {
        &[
            Kind::PodDisruptionBudget,
            Kind::Pod,
            Kind::Deployment,
            Kind::ReplicaSet,
            Kind::StatefulSet,
        ]
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
            Kind::PodDisruptionBudget => queue.add(key_of(change.object())),
            Kind::Pod => {
                self.enqueue_pdbs_for(change.object(), queue, inf);
                if let Some(old) = change.old() {
                    if old.meta().labels != change.object().meta().labels {
                        self.enqueue_pdbs_for(old, queue, inf);
                    }
                }
            }
            _ => {}
        }
    }

    fn sync(&mut self, key: &str, env: &mut Env, inf: &Informers) -> SyncResult {
        let (ns, name) = split_key(key);
        let Some(obj) = inf.of(Kind::PodDisruptionBudget).get(ns, name).cloned() else {
            return Ok(Action::await_change());
        };
        let Object::PodDisruptionBudget(pdb) = &*obj else {
            return Ok(Action::await_change());
        };
        let now = env.now();
        let selector = selector_of(pdb);
        let pod_objs: Vec<Arc<Object>> = inf
            .of(Kind::Pod)
            .iter_ns(ns)
            .filter(|o| selector.as_ref().is_some_and(|s| s.matches_object(o)))
            .cloned()
            .collect();
        let pods: Vec<&Pod> = pod_objs
            .iter()
            .filter_map(|o| match &**o {
                Object::Pod(p) => Some(&**p),
                _ => None,
            })
            .collect();
        if pods.is_empty() {
            env.event(&obj, NORMAL, "NoPods", "No matching pods found");
        }
        let spec = pdb.spec.clone().unwrap_or_default();
        let status = pdb.status.clone().unwrap_or_default();
        let generation = pdb.metadata.generation.unwrap_or(0);
        let expected = match expected_pod_count(&spec, &pods, &|r, ns| scale_of(inf, r, ns)) {
            Ok(e) => e,
            Err(e) => {
                let msg = format!("Failed to calculate the number of expected pods: {e}");
                env.event(&obj, WARNING, "CalculateExpectedPodCountFailed", &msg);
                let mut failed = (**pdb).clone();
                failed.status = Some(fail_safe(&status, &e, now));
                self.send_status(env, key, failed);
                return Err(SyncError::new(e));
            }
        };
        if !expected.unmanaged.is_empty() {
            let msg = "Pods selected by this PodDisruptionBudget were found to be unmanaged. As a result, the status of the PDB cannot be calculated correctly, which may result in undefined behavior. To account for these pods please set \".spec.minAvailable\" field of the PDB to an integer value.";
            env.event(&obj, WARNING, "UnmanagedPods", msg);
        }
        let (disrupted, recheck, expired) =
            build_disrupted_pod_map(&pods, status.disrupted_pods.as_ref(), now);
        for pod_name in &expired {
            if let Some(p) = pod_objs.iter().find(|o| o.name() == pod_name) {
                let msg =
                    format!("Pod was expected by PDB {ns}/{name} to be deleted but it wasn't");
                env.event(p, WARNING, "NotDeleted", &msg);
            }
        }
        let computed = Computed {
            current_healthy: count_healthy(&pods, &disrupted, now),
            desired_healthy: expected.desired_healthy,
            expected: expected.expected,
            disrupted,
        };
        if let Some(s) = next_status(&status, generation, &computed, now) {
            let mut updated = (**pdb).clone();
            updated.status = Some(s);
            self.send_status(env, key, updated);
        }
        if let Some(t) = recheck {
            // One millisecond past the expiry, so the entry has expired when we look.
            return Ok(Action::requeue(t + 1 - now));
        }
        Ok(Action::await_change())
    }

    fn on_response(&mut self, id: ReqId, resp: &ApiResponse, env: &mut Env, _inf: &Informers) {
        let Some(key) = self.sent.take(id) else {
            return;
        };
        // A conflict (or any failure) means our copy was stale: look again.
        if let Err(s) = &resp.result {
            if s.reason != StatusReason::NotFound {
                env.retry(key);
            }
        }
    }
}
