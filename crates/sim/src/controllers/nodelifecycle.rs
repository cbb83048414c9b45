//! The node lifecycle controller: watches Lease heartbeats and node conditions, marks
//! silent nodes Unknown after the grace period, taints NotReady/unreachable nodes, marks
//! their pods not ready, and (as the taint-eviction controller) evicts pods whose
//! NoExecute tolerations ran out.

use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_openapi::api::core::v1::{Node, Pod, Taint, Toleration};

use crate::api::{ApiRequest, Body, Subresource, Verb};
use crate::apiserver::write::set_pod_condition;
use crate::client::recorder::{NORMAL, WARNING};
use crate::client::{Change, Recorder, WorkQueue};
use crate::controllers::{Action, Controller, Env, Informers, SyncResult};
use crate::object::{Kind, Object};
use crate::time::{from_k8s_micro_time, from_k8s_time, k8s_time, Time, SECOND};

/// `--node-monitor-period`.
pub const MONITOR_PERIOD: Time = 5 * SECOND;
/// `--node-monitor-grace-period` (50s since v1.32).
pub const GRACE_PERIOD: Time = 50 * SECOND;
use super::nodelifecycle_taints as taints;
pub use super::nodelifecycle_taints::{NOT_READY, UNREACHABLE, UNSCHEDULABLE};

/// The node lifecycle and taint-eviction controllers.
#[derive(Default)]
pub struct NodeLifecycleController {
    /// The taint-eviction controller's events come from their own component.
    taint_eviction: Option<Recorder>,
    /// Pods already asked to be deleted (so each eviction is sent once).
    evicted: BTreeMap<String, Time>,
}

fn ready_status(n: &Node) -> (String, Time) {
    let c = n
        .status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .and_then(|cs| cs.iter().find(|c| c.type_ == "Ready"));
    match c {
        Some(c) => (
            c.status.clone(),
            c.last_heartbeat_time.as_ref().map_or(0, from_k8s_time),
        ),
        None => ("Unknown".into(), 0),
    }
}

fn tolerates(tols: &[Toleration], t: &Taint) -> Option<Option<i64>> {
    tols.iter()
        .find(|tol| {
            let key_ok = tol.key.as_deref().unwrap_or("").is_empty()
                && tol.operator.as_deref() == Some("Exists")
                || tol.key.as_deref() == Some(&t.key);
            let op_ok = tol.operator.as_deref() == Some("Exists")
                || tol.value.as_deref().unwrap_or("") == t.value.as_deref().unwrap_or("");
            let eff_ok = tol.effect.as_deref().unwrap_or("").is_empty()
                || tol.effect.as_deref() == Some(&t.effect);
            key_ok && op_ok && eff_ok
        })
        .map(|tol| tol.toleration_seconds)
}

impl NodeLifecycleController {
    fn monitor(&mut self, env: &mut Env, inf: &Informers) {
        let now = env.now();
        for node_obj in inf.of(Kind::Node).iter() {
            let Object::Node(node) = &**node_obj else {
                continue;
            };
            let name = node_obj.name();
            let (status, heartbeat) = ready_status(node);
            let lease_renew = inf
                .of(Kind::Lease)
                .get("kube-node-lease", name)
                .and_then(|l| match &**l {
                    Object::Lease(l) => l
                        .spec
                        .as_ref()
                        .and_then(|s| s.renew_time.as_ref())
                        .map(from_k8s_micro_time),
                    _ => None,
                })
                .unwrap_or(0);
            let last = heartbeat.max(lease_renew);
            let mut effective = status.clone();
            if status != "Unknown" && now > last + GRACE_PERIOD {
                self.mark_unknown(env, node_obj, node);
                effective = "Unknown".into();
                // Ready → not Ready: the status-change event and MarkPodsNotReady, once.
                if status == "True" {
                    let msg = format!("Node {name} status is now: NodeNotReady");
                    env.event(node_obj, NORMAL, "NodeNotReady", &msg);
                    self.mark_pods_not_ready(env, inf, name);
                }
            }
            self.reconcile_taints(env, node_obj, node, &effective);
            self.evict(env, inf, node_obj, node);
        }
    }

    fn mark_unknown(&mut self, env: &mut Env, node_obj: &Arc<Object>, node: &Node) {
        let now = env.now();
        let mut n = node.clone();
        for c in n
            .status
            .get_or_insert_with(Default::default)
            .conditions
            .get_or_insert_with(Vec::new)
        {
            if c.status != "Unknown" {
                c.status = "Unknown".into();
                c.reason = Some("NodeStatusUnknown".into());
                c.message = Some("Kubelet stopped posting node status.".into());
                c.last_transition_time = Some(k8s_time(now));
            }
        }
        let req = ApiRequest::new(Verb::Update, Kind::Node, "", node_obj.name())
            .with_subresource(Subresource::Status)
            .with_body(Body::Object(n.into()));
        env.fire(req);
    }

    /// `MarkPodsNotReady`: each pod's Ready condition goes False (so endpoints drop it
    /// right away), with a `NodeNotReady` warning on the pod.
    fn mark_pods_not_ready(&mut self, env: &mut Env, inf: &Informers, node: &str) {
        let now = env.now();
        for pod_obj in inf.of(Kind::Pod).iter() {
            let Object::Pod(p) = &**pod_obj else { continue };
            if p.spec.as_ref().and_then(|s| s.node_name.as_deref()) != Some(node) {
                continue;
            }
            if !crate::controllers::util::is_pod_ready(p) {
                continue;
            }
            let mut np = p.clone();
            mark_not_ready(&mut np, now);
            let req = ApiRequest::new(Verb::Update, Kind::Pod, pod_obj.namespace(), pod_obj.name())
                .with_subresource(Subresource::Status)
                .with_body(Body::Object(np.into()));
            env.fire(req);
            env.event(pod_obj, WARNING, "NodeNotReady", "Node is not ready");
        }
    }

    /// The NoSchedule and NoExecute tainting passes for one node.
    fn reconcile_taints(
        &mut self,
        env: &mut Env,
        node_obj: &Arc<Object>,
        node: &Node,
        ready: &str,
    ) {
        let Some(taints) = taints::reconcile(node, ready, env.now()) else {
            return;
        };
        let mut n = node.clone();
        n.spec.get_or_insert_with(Default::default).taints = (!taints.is_empty()).then_some(taints);
        let req = ApiRequest::new(Verb::Update, Kind::Node, "", node_obj.name())
            .with_body(Body::Object(n.into()));
        env.fire(req);
    }

    /// The taint-eviction controller: deletes pods whose NoExecute tolerations expired.
    fn evict(&mut self, env: &mut Env, inf: &Informers, node_obj: &Arc<Object>, node: &Node) {
        let now = env.now();
        let taints: Vec<Taint> = node
            .spec
            .as_ref()
            .and_then(|s| s.taints.clone())
            .unwrap_or_default()
            .into_iter()
            .filter(|t| t.effect == "NoExecute")
            .collect();
        if taints.is_empty() {
            return;
        }
        for pod_obj in inf.of(Kind::Pod).iter() {
            let Object::Pod(p) = &**pod_obj else { continue };
            if p.spec.as_ref().and_then(|s| s.node_name.as_deref()) != Some(node_obj.name())
                || p.metadata.deletion_timestamp.is_some()
            {
                continue;
            }
            let key = format!("{}/{}", pod_obj.namespace(), pod_obj.name());
            if self.evicted.contains_key(&key) {
                continue;
            }
            if let Some(deadline) = eviction_deadline(p, &taints) {
                if deadline <= now {
                    self.evicted.insert(key, now);
                    let rec = self
                        .taint_eviction
                        .get_or_insert_with(|| Recorder::new("taint-eviction-controller", None));
                    env.event_from(
                        rec,
                        pod_obj,
                        NORMAL,
                        "TaintManagerEviction",
                        &format!(
                            "Marking for deletion Pod {}/{}",
                            pod_obj.namespace(),
                            pod_obj.name()
                        ),
                    );
                    env.fire(ApiRequest::new(
                        Verb::Delete,
                        Kind::Pod,
                        pod_obj.namespace(),
                        pod_obj.name(),
                    ));
                }
            }
        }
    }
}

/// When a pod on a node with these NoExecute taints must go: now for an untolerated taint,
/// timeAdded + tolerationSeconds for tolerated ones (the earliest), never if all are
/// tolerated forever.
pub(crate) fn eviction_deadline(p: &Pod, taints: &[Taint]) -> Option<Time> {
    let tols = p
        .spec
        .as_ref()
        .and_then(|s| s.tolerations.clone())
        .unwrap_or_default();
    let mut deadline: Option<Time> = None;
    for t in taints {
        let added = t.time_added.as_ref().map_or(0, from_k8s_time);
        let d = match tolerates(&tols, t) {
            None => 0,
            Some(None) => continue,
            Some(Some(secs)) => added + secs.max(0) as u64 * 1000,
        };
        deadline = Some(deadline.map_or(d, |x| x.min(d)));
    }
    deadline
}

impl Controller for NodeLifecycleController {
    fn name(&self) -> &'static str {
        "node-lifecycle-controller"
    }

    fn component(&self) -> &'static str {
        "node-controller"
    }

    fn watches(&self) -> &'static [Kind] {
        &[Kind::Node, Kind::Lease, Kind::Pod]
    }

    fn on_change(
        &mut self,
        kind: Kind,
        change: &Change,
        queue: &mut WorkQueue<String>,
        _inf: &Informers,
        _now: Time,
    ) {
        if kind == Kind::Node && !matches!(change, Change::Deleted(_)) {
            // doNoScheduleTaintingPass runs on every node add and update (a cordon).
            queue.add(change.object().name().to_string());
        }
        if kind == Kind::Pod {
            if let Change::Deleted(o) = change {
                self.evicted
                    .remove(&format!("{}/{}", o.namespace(), o.name()));
            }
        }
    }

    fn sync(&mut self, key: &str, env: &mut Env, inf: &Informers) -> SyncResult {
        if let Some(node_obj) = inf.of(Kind::Node).get("", key).cloned() {
            if let Object::Node(node) = &*node_obj {
                let (ready, _) = ready_status(node);
                self.reconcile_taints(env, &node_obj, node, &ready);
            }
        }
        Ok(Action::await_change())
    }

    fn tick(&mut self, env: &mut Env, inf: &Informers) {
        self.monitor(env, inf);
    }
}

/// Sets a pod's Ready condition to False (`MarkPodsNotReady`).
pub fn mark_not_ready(p: &mut Pod, now: Time) {
    let status = p.status.get_or_insert_with(Default::default);
    let conds = status.conditions.get_or_insert_with(Vec::new);
    // Only the status changes; the condition keeps its reason and message.
    let (reason, message) = conds
        .iter()
        .find(|c| c.type_ == "Ready")
        .map(|c| (c.reason.clone(), c.message.clone()))
        .unwrap_or_default();
    set_pod_condition(
        conds,
        "Ready",
        "False",
        reason.as_deref(),
        message.as_deref(),
        now,
    );
}
