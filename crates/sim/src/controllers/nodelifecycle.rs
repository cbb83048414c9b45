//! The node lifecycle controller: watches Lease heartbeats and node conditions, marks
//! silent nodes Unknown after the grace period, taints NotReady/unreachable nodes, marks
//! their pods not ready, and (as the taint-eviction controller) evicts pods whose
//! NoExecute tolerations ran out.

use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_openapi::api::core::v1::{Node, Pod, Taint, Toleration};

use crate::api::{ApiRequest, Body, Subresource, Verb};
use crate::apiserver::write::set_pod_condition;
use crate::client::recorder::NORMAL;
use crate::client::{Change, Recorder, WorkQueue};
use crate::controllers::{Action, Controller, Env, Informers, SyncResult};
use crate::object::{Kind, Object};
use crate::time::{from_k8s_micro_time, from_k8s_time, k8s_time, Time, SECOND};

/// `--node-monitor-period`.
pub const MONITOR_PERIOD: Time = 5 * SECOND;
/// `--node-monitor-grace-period` (50s since v1.32).
pub const GRACE_PERIOD: Time = 50 * SECOND;
/// Taint for NotReady nodes.
pub const NOT_READY: &str = "node.kubernetes.io/not-ready";
/// Taint for nodes that stopped reporting.
pub const UNREACHABLE: &str = "node.kubernetes.io/unreachable";

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
                self.mark_unknown(env, inf, node_obj, node);
                effective = "Unknown".into();
            }
            self.reconcile_taints(env, node_obj, node, &effective);
            self.evict(env, inf, node_obj, node);
        }
    }

    fn mark_unknown(
        &mut self,
        env: &mut Env,
        inf: &Informers,
        node_obj: &Arc<Object>,
        node: &Node,
    ) {
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
        env.event(node_obj, NORMAL, "NodeNotReady", "Node is not ready");
        // MarkPodsNotReady: endpoints drop the node's pods right away.
        self.mark_pods_not_ready(env, inf, node_obj.name());
    }

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
        }
    }

    fn reconcile_taints(
        &mut self,
        env: &mut Env,
        node_obj: &Arc<Object>,
        node: &Node,
        ready: &str,
    ) {
        let now = env.now();
        let existing = node
            .spec
            .as_ref()
            .and_then(|s| s.taints.clone())
            .unwrap_or_default();
        let mut want: Vec<Taint> = existing
            .iter()
            .filter(|t| t.key != NOT_READY && t.key != UNREACHABLE)
            .cloned()
            .collect();
        let key = match ready {
            "False" => Some(NOT_READY),
            "Unknown" => Some(UNREACHABLE),
            _ => None,
        };
        if let Some(k) = key {
            for effect in ["NoSchedule", "NoExecute"] {
                let keep = existing
                    .iter()
                    .find(|t| t.key == k && t.effect == effect)
                    .cloned();
                want.push(keep.unwrap_or_else(|| Taint {
                    key: k.into(),
                    effect: effect.into(),
                    value: None,
                    time_added: (effect == "NoExecute").then(|| k8s_time(now)),
                }));
            }
        }
        if want == existing {
            return;
        }
        let mut n = node.clone();
        n.spec.get_or_insert_with(Default::default).taints =
            if want.is_empty() { None } else { Some(want) };
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
        _queue: &mut WorkQueue<String>,
        _inf: &Informers,
        _now: Time,
    ) {
        if kind == Kind::Pod {
            if let Change::Deleted(o) = change {
                self.evicted
                    .remove(&format!("{}/{}", o.namespace(), o.name()));
            }
        }
    }

    fn sync(&mut self, _key: &str, _env: &mut Env, _inf: &Informers) -> SyncResult {
        Ok(Action::await_change())
    }

    fn tick(&mut self, env: &mut Env, inf: &Informers) {
        self.monitor(env, inf);
    }
}

/// Sets a pod's Ready condition to False (`MarkPodsNotReady`).
pub fn mark_not_ready(p: &mut Pod, now: Time) {
    let status = p.status.get_or_insert_with(Default::default);
    set_pod_condition(
        status.conditions.get_or_insert_with(Vec::new),
        "Ready",
        "False",
        None,
        None,
        now,
    );
}
