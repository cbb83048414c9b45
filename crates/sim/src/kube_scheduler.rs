//! The kube-scheduler actor: informers feeding an incremental [`Snapshot`] and the
//! [`SchedulingQueue`], one scheduling cycle at a time through the plugin framework,
//! assumed pods, preemption, and binding cycles (Reserve, Permit, PreBind, Bind, PostBind
//! through the framework) whose writes, such as the pods/binding request carrying the
//! scheduling-result annotations, it sends and whose answers it routes back.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use crate::api::{ApiRequest, ApiResponse, Body, PatchType, ReqId, Subresource, Verb};
use crate::client::recorder::{NORMAL, WARNING};
use crate::client::{Change, Client, Informer, Informers, Recorder, Timers};
use crate::cluster::ClusterConfig;
use crate::message::{Actor, Ctx, Payload};
use crate::object::{Kind, Object};
use crate::rng::Rng;
use crate::scheduler::algorithm::{scheduled_message, truncate_message};
use crate::scheduler::framework::{EventObjects, QueueingHint};
use crate::scheduler::plugins::defaultpreemption;
use crate::scheduler::podinfo::SharedPod;
use crate::scheduler::{
    build_frameworks, in_tree_registry, parse_config, schedule_one, BindingCycle, BindingWrites,
    ClusterEvent, Framework, NodeInfo, PodInfo, Progress, QueuedPodInfo, SchedulerState,
    SchedulingQueue, Snapshot, Status,
};
use crate::time::{k8s_time, Time, SECOND};

/// What a scheduler timer means.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Timer {
    /// Run the next scheduling cycle.
    Cycle,
    /// `flushBackoffQCompleted`, every second.
    FlushBackoff,
    /// `flushUnschedulablePodsLeftover`, every 30 s.
    FlushUnschedulable,
    /// An informer's list/watch backoff ended.
    Informer(Kind),
    /// A binding cycle's wake-up (a Permit deadline, a PreBind poll), by pod key.
    Binding(String),
}

/// The kinds the scheduler's informers watch, in the order they list.
const KINDS: [Kind; 10] = [
    Kind::Node,
    Kind::Pod,
    Kind::PersistentVolumeClaim,
    Kind::PersistentVolume,
    Kind::StorageClass,
    Kind::Service,
    Kind::ReplicaSet,
    Kind::StatefulSet,
    Kind::Namespace,
    Kind::PodDisruptionBudget,
];

/// A pod whose binding cycle is in progress.
struct Binding {
    q: QueuedPodInfo,
    pod: Arc<Object>,
    profile: String,
    cycle: BindingCycle,
    annotations: BTreeMap<String, String>,
}

/// Why an attempt failed, for the failure handler.
struct Failure<'a> {
    status: Status,
    /// The plugins that rejected the pod (the queue requeues it on their events).
    plugins: BTreeSet<&'static str>,
    annotations: &'a BTreeMap<String, String>,
    /// A new `nominatedNodeName` (or null to clear it), from preemption.
    nomination: Option<serde_json::Value>,
}

/// A write a binding cycle's plugin asked for, awaiting the apiserver's answer.
struct BindingWrite {
    key: String,
    plugin: &'static str,
    context: &'static str,
    is_binding: bool,
}

/// kube-scheduler.
pub struct KubeScheduler {
    client: Client,
    rng: Rng,
    informers: Informers,
    timers: Timers<Timer>,
    frameworks: BTreeMap<String, Framework>,
    queue: SchedulingQueue,
    state: SchedulerState,
    snapshot: Option<Snapshot>,
    bindings: BTreeMap<String, Binding>,
    bind_requests: BTreeMap<ReqId, BindingWrite>,
    /// Binding-cycle wake-up timer token → pod key.
    /// One event recorder per profile: events carry the profile's schedulerName.
    recorders: BTreeMap<String, Recorder>,
    cycle_scheduled: bool,
    annotations: bool,
    /// Why the configuration was rejected, if it was (the default profile runs instead).
    pub config_error: Option<String>,
    /// Scheduling cycles run.
    pub cycles: u64,
}

fn pod_key(o: &Object) -> String {
    format!("{}/{}", o.namespace(), o.name())
}

fn as_pod(o: &Arc<Object>) -> Option<SharedPod> {
    SharedPod::from_object(o)
}

fn assigned(o: &Object) -> bool {
    matches!(o, Object::Pod(p) if p.spec.as_ref().and_then(|s| s.node_name.as_deref()).is_some_and(|n| !n.is_empty()))
}

/// Validates a scenario's KubeSchedulerConfiguration the way kube-scheduler does at startup.
pub fn validate_config(v: &serde_json::Value) -> Result<(), Vec<String>> {
    let cfg = parse_config(v)?;
    build_frameworks(&in_tree_registry(), &cfg)
        .map(|_| ())
        .map_err(|e| vec![e])
}

impl KubeScheduler {
    /// A freshly started scheduler with the scenario's configuration (or the default).
    pub fn new(config: &ClusterConfig) -> KubeScheduler {
        let raw = config
            .scheduler_config
            .clone()
            .unwrap_or_else(|| serde_json::json!({}));
        let (cfg, config_error) = match parse_config(&raw) {
            Ok(c) => (c, None),
            Err(e) => (
                parse_config(&serde_json::json!({})).expect("default configuration"),
                Some(e.join("; ")),
            ),
        };
        let frameworks = build_frameworks(&in_tree_registry(), &cfg)
            .or_else(|_| {
                build_frameworks(
                    &in_tree_registry(),
                    &parse_config(&serde_json::json!({})).expect("default"),
                )
            })
            .unwrap_or_default();
        let recorders = frameworks
            .keys()
            .map(|name| (name.clone(), Recorder::new(name, None)))
            .collect();
        KubeScheduler {
            client: Client::new("system:kube-scheduler", &[]),
            recorders,
            rng: Rng::stream(config.seed, "kube-scheduler"),
            informers: Informers::default(),
            timers: Timers::new(0),
            frameworks,
            queue: SchedulingQueue::new(
                cfg.pod_initial_backoff_seconds,
                cfg.pod_max_backoff_seconds,
            ),
            state: SchedulerState {
                next_start_node_index: 0,
                percentage_of_nodes_to_score: cfg.percentage_of_nodes_to_score,
            },
            snapshot: None,
            bindings: BTreeMap::new(),
            bind_requests: BTreeMap::new(),
            cycle_scheduled: false,
            annotations: config.scheduling_annotations,
            config_error,
            cycles: 0,
        }
    }

    /// Starts the informers and the queue's flush loops.
    pub fn start(&mut self, ctx: &mut Ctx) {
        self.timers = Timers::new(ctx.now);
        self.informers = Informers::default();
        for k in KINDS {
            let timers = &mut self.timers;
            self.informers
                .register(k, || timers.standing(Timer::Informer(k)));
        }
        self.informers.start(ctx, &mut self.client);
        self.timers.set(ctx, SECOND, Timer::FlushBackoff);
        self.timers.set(ctx, 30 * SECOND, Timer::FlushUnschedulable);
    }

    /// Pods waiting: (active + backoff + unschedulable, binding).
    pub fn pending(&self) -> (usize, usize) {
        let (a, b, u) = self.queue.pending_counts();
        (a + b + u, self.bindings.len())
    }

    fn informer(&self, kind: Kind) -> &Informer {
        self.informers.of(kind)
    }

    /// Handles a message.
    pub fn handle(&mut self, ctx: &mut Ctx, _from: Actor, payload: Payload) {
        match payload {
            Payload::ApiResp(resp) if self.client.on_event_response(ctx, &resp) => {}
            Payload::ApiResp(resp) => {
                match self.informers.on_response(ctx, &mut self.client, &resp) {
                    Some((kind, changes)) => self.on_changes(ctx, kind, changes),
                    None => self.on_bind_response(ctx, resp),
                }
            }
            Payload::Watch(ev) => {
                if let Some((kind, changes)) = self.informers.on_watch(ctx, &mut self.client, &ev) {
                    self.on_changes(ctx, kind, changes);
                }
            }
            Payload::ConnectionLost => {
                self.informers.on_connection_lost(ctx);
                let ids: Vec<ReqId> = self.bind_requests.keys().copied().collect();
                for id in ids {
                    let s = crate::api::Status::transport(
                        crate::api::Transport::Reset,
                        "connection lost",
                    );
                    self.on_bind_response(ctx, ApiResponse { id, result: Err(s) });
                }
            }
            Payload::Timer(token) => match self.timers.fired(token) {
                Some(Timer::Cycle) => {
                    self.cycle_scheduled = false;
                    self.schedule_one(ctx);
                }
                Some(Timer::FlushBackoff) => {
                    self.queue.flush_backoff_completed(ctx.now);
                    self.timers.set(ctx, SECOND, Timer::FlushBackoff);
                }
                Some(Timer::FlushUnschedulable) => {
                    self.queue.flush_unschedulable_leftover(ctx.now);
                    self.timers.set(ctx, 30 * SECOND, Timer::FlushUnschedulable);
                }
                Some(Timer::Binding(key)) => self.advance_binding(ctx, &key),
                Some(Timer::Informer(kind)) => {
                    self.informers.on_timer(ctx, &mut self.client, kind, token)
                }
                None => {}
            },
            _ => {}
        }
        self.kick(ctx);
    }

    fn synced(&self) -> bool {
        self.informers.synced()
    }

    /// Builds the snapshot once every informer has listed.
    fn ensure_snapshot(&mut self) -> bool {
        if self.snapshot.is_some() {
            return true;
        }
        if !self.synced() {
            return false;
        }
        let nodes: Vec<_> = self
            .informer(Kind::Node)
            .iter()
            .filter_map(|o| match &**o {
                Object::Node(n) => Some(Arc::new((**n).clone())),
                _ => None,
            })
            .collect();
        let pods: Vec<_> = self
            .informer(Kind::Pod)
            .iter()
            .filter(|o| assigned(o))
            .filter_map(as_pod)
            .collect();
        let mut snap = Snapshot::new(&nodes, &pods);
        for o in self.informer(Kind::PersistentVolumeClaim).iter() {
            if let Object::PersistentVolumeClaim(x) = &**o {
                snap.set_pvc(Arc::new((**x).clone()));
            }
        }
        for o in self.informer(Kind::PersistentVolume).iter() {
            if let Object::PersistentVolume(x) = &**o {
                snap.set_pv(Arc::new((**x).clone()));
            }
        }
        for o in self.informer(Kind::StorageClass).iter() {
            if let Object::StorageClass(x) = &**o {
                snap.set_storage_class(Arc::new((**x).clone()));
            }
        }
        self.snapshot = Some(snap);
        self.refresh_workload_lists();
        // Pods already waiting go to the queue.
        let pending: Vec<Arc<Object>> = self
            .informer(Kind::Pod)
            .iter()
            .filter(|o| self.wants(o))
            .cloned()
            .collect();
        for o in pending {
            self.enqueue(&o, 0);
        }
        true
    }

    fn refresh_workload_lists(&mut self) {
        let services = self
            .informer(Kind::Service)
            .iter()
            .filter_map(|o| match &**o {
                Object::Service(s) => Some(Arc::new((**s).clone())),
                _ => None,
            })
            .collect();
        let rss = self
            .informer(Kind::ReplicaSet)
            .iter()
            .filter_map(|o| match &**o {
                Object::ReplicaSet(s) => Some(Arc::new((**s).clone())),
                _ => None,
            })
            .collect();
        let sss = self
            .informer(Kind::StatefulSet)
            .iter()
            .filter_map(|o| match &**o {
                Object::StatefulSet(s) => Some(Arc::new((**s).clone())),
                _ => None,
            })
            .collect();
        let ns_labels = self
            .informer(Kind::Namespace)
            .iter()
            .map(|o| {
                (
                    o.name().to_string(),
                    o.meta().labels.clone().unwrap_or_default(),
                )
            })
            .collect();
        let pdbs = defaultpreemption::pdb_list(self.informer(Kind::PodDisruptionBudget).iter());
        if let Some(s) = self.snapshot.as_mut() {
            s.pdbs = pdbs;
            s.services = services;
            s.replica_sets = rss;
            s.stateful_sets = sss;
            s.namespace_labels = ns_labels;
        }
    }

    /// Whether this scheduler should schedule the pod.
    fn wants(&self, o: &Object) -> bool {
        let Object::Pod(p) = o else { return false };
        let spec = p.spec.as_ref();
        let name = spec
            .and_then(|s| s.scheduler_name.as_deref())
            .unwrap_or("default-scheduler");
        !assigned(o)
            && self.frameworks.contains_key(name)
            && p.metadata.deletion_timestamp.is_none()
            && !matches!(
                p.status.as_ref().and_then(|s| s.phase.as_deref()),
                Some("Succeeded") | Some("Failed")
            )
    }

    fn enqueue(&mut self, o: &Arc<Object>, now: Time) {
        let Some(pod) = as_pod(o) else { return };
        let key = pod_key(o);
        if self.bindings.contains_key(&key) {
            return;
        }
        let name = pod
            .spec
            .as_ref()
            .and_then(|s| s.scheduler_name.clone())
            .unwrap_or_else(|| "default-scheduler".into());
        let info = Arc::new(PodInfo::new(pod));
        if let Some(fw) = self.frameworks.get(&name) {
            self.queue.update(fw, info.clone(), now);
            // The nominator follows the pod's status.nominatedNodeName (AddNominatedPod),
            // so a restarted scheduler keeps the room its preemptions made.
            if let Some(n) = nominated_node(o) {
                self.queue.add_nominated_pod(info, &n);
            }
        }
    }

    fn on_changes(&mut self, ctx: &mut Ctx, kind: Kind, changes: Vec<Change>) {
        if !self.ensure_snapshot() {
            return;
        }
        let now = ctx.now;
        for c in changes {
            let o = c.object().clone();
            match kind {
                Kind::Node => {
                    let snap = self.snapshot.as_mut().expect("snapshot");
                    let ev = match &c {
                        Change::Added(_) => ClusterEvent::NodeAdd,
                        Change::Updated(..) => ClusterEvent::NodeUpdate,
                        Change::Deleted(_) => ClusterEvent::NodeDelete,
                    };
                    let node_info = |o: &Object| match o {
                        Object::Node(n) => Some(NodeInfo::new(Arc::new((**n).clone()))),
                        _ => None,
                    };
                    let (mut old, mut new) = (None, None);
                    match (&c, &*o) {
                        (Change::Deleted(_), _) => snap.remove_node(o.name()),
                        (_, Object::Node(n)) => {
                            snap.update_node(Arc::new((**n).clone()));
                            if self.queue.pending_counts().2 > 0 {
                                new = node_info(&o);
                                if let Change::Updated(before, _) = &c {
                                    old = node_info(before);
                                }
                            }
                        }
                        _ => {}
                    }
                    let objs = match &new {
                        Some(new) => EventObjects::Node {
                            old: old.as_ref(),
                            new,
                        },
                        None => EventObjects::Other,
                    };
                    self.requeue(ev, &objs, now);
                }
                Kind::Pod => self.on_pod_change(&c, now),
                Kind::PersistentVolumeClaim | Kind::PersistentVolume | Kind::StorageClass => {
                    let snap = self.snapshot.as_mut().expect("snapshot");
                    let deleted = matches!(c, Change::Deleted(_));
                    let ev = match &*o {
                        Object::PersistentVolumeClaim(_) if deleted => {
                            snap.pvcs.remove(&pod_key(&o));
                            ClusterEvent::PvcChange
                        }
                        Object::PersistentVolume(_) if deleted => {
                            snap.pvs.remove(o.name());
                            ClusterEvent::PvChange
                        }
                        Object::PersistentVolumeClaim(x) => {
                            snap.set_pvc(Arc::new((**x).clone()));
                            ClusterEvent::PvcChange
                        }
                        Object::PersistentVolume(x) => {
                            snap.set_pv(Arc::new((**x).clone()));
                            ClusterEvent::PvChange
                        }
                        Object::StorageClass(x) => {
                            snap.set_storage_class(Arc::new((**x).clone()));
                            ClusterEvent::StorageClassChange
                        }
                        _ => continue,
                    };
                    let key = pod_key(&o);
                    let objs = match &*o {
                        Object::PersistentVolumeClaim(_) if !deleted => EventObjects::Claim(&key),
                        _ => EventObjects::Other,
                    };
                    self.requeue(ev, &objs, now);
                }
                _ => self.refresh_workload_lists(),
            }
        }
    }

    fn on_pod_change(&mut self, c: &Change, now: Time) {
        let o = c.object();
        let key = pod_key(o);
        let snap = self.snapshot.as_mut().expect("snapshot");
        match c {
            Change::Deleted(_) => {
                self.queue.delete(&key);
                self.queue.delete_nominated_pod_if_exists(&key);
                // A pod deleted in its binding cycle (waiting on Permit or on its volumes)
                // gives back what it reserved (`RejectWaitingPod`, then Unreserve).
                if let Some(mut b) = self.bindings.remove(&key) {
                    if let Some(fw) = self.frameworks.get(&b.profile) {
                        fw.unreserve(&mut b.cycle, snap);
                    }
                }
                if let Some(gone) = snap.remove_pod(&key) {
                    let objs = EventObjects::DeletedPod(&gone);
                    self.requeue(ClusterEvent::AssignedPodDelete, &objs, now);
                }
            }
            _ if assigned(o) => {
                if let Some(p) = as_pod(o) {
                    let terminal = matches!(
                        p.status.as_ref().and_then(|s| s.phase.as_deref()),
                        Some("Succeeded") | Some("Failed")
                    );
                    if terminal {
                        // Gone from the cache once, like a deleted pod.
                        if let Some(gone) = snap.remove_pod(&key) {
                            let objs = EventObjects::DeletedPod(&gone);
                            self.requeue(ClusterEvent::AssignedPodDelete, &objs, now);
                        }
                    } else {
                        let before = snap.pod_info(&key);
                        snap.add_pod(p);
                        let after = snap.pod_info(&key);
                        let (ev, objs) = match (&before, &after) {
                            (Some(old), Some(new)) => (
                                ClusterEvent::AssignedPodUpdate,
                                EventObjects::UpdatedPod { old, new },
                            ),
                            (None, Some(new)) => {
                                (ClusterEvent::AssignedPodAdd, EventObjects::AddedPod(new))
                            }
                            _ => (ClusterEvent::AssignedPodAdd, EventObjects::Other),
                        };
                        self.requeue(ev, &objs, now);
                    }
                }
                self.queue.delete(&key);
                self.queue.delete_nominated_pod_if_exists(&key);
            }
            _ => {
                if self.wants(o) {
                    let o = o.clone();
                    self.enqueue(&o, now);
                    // `UpdateNominatedPod`: a nomination removed from the status goes.
                    if let Change::Updated(old, _) = c {
                        if nominated_node(old).is_some() && nominated_node(&o).is_none() {
                            self.queue.delete_nominated_pod_if_exists(&key);
                        }
                    }
                } else {
                    self.queue.delete(&key);
                }
            }
        }
    }

    /// `MoveAllToActiveOrBackoffQueue` asking each rejecting plugin's QueueingHint (of the
    /// pod's profile) whether the event may help.
    fn requeue(&mut self, ev: ClusterEvent, objs: &EventObjects<'_>, now: Time) {
        let frameworks = &self.frameworks;
        let hint = |q: &QueuedPodInfo, plugin: &'static str| {
            let profile = q
                .pod_info
                .pod
                .spec
                .as_ref()
                .and_then(|s| s.scheduler_name.as_deref())
                .unwrap_or("default-scheduler");
            frameworks
                .get(profile)
                .and_then(|fw| fw.plugin(plugin))
                .is_none_or(|p| p.queueing_hint(&q.pod_info, objs) == QueueingHint::Queue)
        };
        self.queue
            .move_all_to_active_or_backoff_with(ev, now, &hint);
    }

    fn kick(&mut self, ctx: &mut Ctx) {
        if self.cycle_scheduled || self.snapshot.is_none() {
            return;
        }
        if self.queue.can_pop() {
            self.cycle_scheduled = true;
            self.timers.set(ctx, 0, Timer::Cycle);
        }
    }

    fn schedule_one(&mut self, ctx: &mut Ctx) {
        let now = ctx.now;
        let Some(q) = self.queue.pop(now) else { return };
        let key = q.pod_info.key.clone();
        let (ns, name) = key.split_once('/').unwrap_or(("", &key));
        let Some(pod_obj) = self.informer(Kind::Pod).get(ns, name).cloned() else {
            self.queue.done(&key);
            return;
        };
        if !self.wants(&pod_obj) {
            self.queue.done(&key);
            return;
        }
        let sched_name = match &*pod_obj {
            Object::Pod(p) => p
                .spec
                .as_ref()
                .and_then(|s| s.scheduler_name.clone())
                .unwrap_or_else(|| "default-scheduler".into()),
            _ => return,
        };
        let Some(fw) = self.frameworks.get(&sched_name) else {
            return;
        };
        let snap = self.snapshot.as_ref().expect("snapshot");
        self.cycles += 1;
        let outcome = schedule_one(
            fw,
            snap,
            self.queue.nominated(),
            &q.pod_info,
            &mut self.state,
            &mut self.rng,
            self.annotations,
        );
        let annotations = outcome
            .annotations
            .as_ref()
            .map(|a| a.to_pod_annotations())
            .unwrap_or_default();
        match outcome.result {
            Ok(r) => {
                let node = r.suggested_host;
                let snap = self.snapshot.as_mut().expect("snapshot");
                snap.assume_pod(q.pod_info.clone(), &node);
                match fw.start_binding_cycle(
                    outcome.cycle_state,
                    q.pod_info.clone(),
                    &node,
                    snap,
                    now,
                ) {
                    Ok(cycle) => {
                        let b = Binding {
                            q,
                            pod: pod_obj,
                            profile: sched_name,
                            cycle,
                            annotations,
                        };
                        self.bindings.insert(key.clone(), b);
                        self.advance_binding(ctx, &key);
                    }
                    Err(status) => {
                        // ForgetPod, then the failure handler.
                        snap.remove_pod(&key);
                        let failure = Failure {
                            plugins: rejecting_plugin(&status),
                            status,
                            annotations: &annotations,
                            nomination: None,
                        };
                        self.handle_failure(ctx, q, &pod_obj, &sched_name, failure);
                    }
                }
            }
            Err(e) => {
                let status = e.status();
                let mut nomination = None;
                if let crate::scheduler::algorithm::ScheduleError::Fit {
                    post_filter: Some(pf),
                    ..
                } = &e
                {
                    self.preempt(ctx, &pod_obj, &sched_name, &q, pf);
                    let current = match &*pod_obj {
                        Object::Pod(p) => p
                            .status
                            .as_ref()
                            .and_then(|s| s.nominated_node_name.clone()),
                        _ => None,
                    }
                    .unwrap_or_default();
                    // ModeOverride (updatePod): set a new nomination, or clear the old
                    // one when preemption found no candidate.
                    if pf.nominated_node_name != current {
                        nomination = Some(if pf.nominated_node_name.is_empty() {
                            serde_json::Value::Null
                        } else {
                            serde_json::Value::String(pf.nominated_node_name.clone())
                        });
                    }
                }
                let failure = Failure {
                    status,
                    plugins: e.unschedulable_plugins(),
                    annotations: &annotations,
                    nomination,
                };
                self.handle_failure(ctx, q, &pod_obj, &sched_name, failure);
            }
        }
    }

    /// `handleSchedulingFailure`: the FailedScheduling event, the PodScheduled condition
    /// (reason Unschedulable for a rejection, SchedulerError for an error), the nomination,
    /// the scheduling-result annotations of the attempt, and the pod back in the queue.
    fn handle_failure(
        &mut self,
        ctx: &mut Ctx,
        q: QueuedPodInfo,
        pod_obj: &Arc<Object>,
        profile: &str,
        f: Failure<'_>,
    ) {
        let Failure {
            status,
            plugins,
            annotations,
            nomination,
        } = f;
        self.queue
            .add_unschedulable_if_not_present(q, &status, plugins, ctx.now);
        let msg = truncate_message(&status.message());
        self.event(ctx, profile, pod_obj, WARNING, "FailedScheduling", &msg);
        let reason = if status.is_rejected() {
            "Unschedulable"
        } else {
            "SchedulerError"
        };
        let mut patch = serde_json::json!({"conditions": [{
            "type": "PodScheduled", "status": "False", "reason": reason, "message": msg,
            "lastTransitionTime": k8s_time(ctx.now), "lastProbeTime": serde_json::Value::Null
        }]});
        if let Some(n) = nomination {
            patch["nominatedNodeName"] = n;
        }
        let (ns, name) = (pod_obj.namespace().to_string(), pod_obj.name().to_string());
        let req = ApiRequest::new(Verb::Patch, Kind::Pod, &ns, &name)
            .with_subresource(Subresource::Status)
            .with_body(Body::Patch(
                PatchType::StrategicMerge,
                serde_json::json!({ "status": patch }),
            ));
        self.client.send(ctx, req);
        if !annotations.is_empty() {
            let patch = serde_json::json!({"metadata": {"annotations": annotations}});
            self.client.send(
                ctx,
                ApiRequest::new(Verb::Patch, Kind::Pod, &ns, &name)
                    .with_body(Body::Patch(PatchType::Merge, patch)),
            );
        }
    }

    /// Records an event as the profile's scheduler (its schedulerName is the source).
    fn event(
        &mut self,
        ctx: &mut Ctx,
        profile: &str,
        obj: &Object,
        kind: &str,
        reason: &str,
        msg: &str,
    ) {
        let rec = self
            .recorders
            .entry(profile.to_string())
            .or_insert_with(|| Recorder::new(profile, None));
        rec.event(ctx, &mut self.client, obj, kind, reason, msg);
    }

    /// PostFilter's decision: mark and evict the victims and nominate the node.
    fn preempt(
        &mut self,
        ctx: &mut Ctx,
        pod_obj: &Arc<Object>,
        profile: &str,
        q: &QueuedPodInfo,
        pf: &crate::scheduler::framework::PostFilterResult,
    ) {
        let uid = pod_obj.meta().uid.clone().unwrap_or_default();
        for v in &pf.victims {
            let (vns, vname) = v.split_once('/').unwrap_or(("", v));
            if let Some(victim) = self.informer(Kind::Pod).get(vns, vname).cloned() {
                if victim.meta().deletion_timestamp.is_some() {
                    continue; // already going: no second delete
                }
                let msg = format!("Preempted by pod {uid} on node {}", pf.nominated_node_name);
                self.event(ctx, profile, &victim, NORMAL, "Preempted", &msg);
            }
            // The victim learns why it goes before it is deleted (PreemptPod).
            let mark = defaultpreemption::disruption_target_request(pod_obj, vns, vname, ctx.now);
            self.client.send(ctx, mark);
            self.client
                .send(ctx, ApiRequest::new(Verb::Delete, Kind::Pod, vns, vname));
        }
        for c in &pf.clear_nominations {
            let (cns, cname) = c.split_once('/').unwrap_or(("", c));
            let patch =
                serde_json::json!({"status": {"nominatedNodeName": serde_json::Value::Null}});
            self.client.send(
                ctx,
                ApiRequest::new(Verb::Patch, Kind::Pod, cns, cname)
                    .with_subresource(Subresource::Status)
                    .with_body(Body::Patch(PatchType::Merge, patch)),
            );
        }
        if pf.nominated_node_name.is_empty() {
            self.queue.delete_nominated_pod_if_exists(&q.pod_info.key);
        } else {
            self.queue
                .add_nominated_pod(q.pod_info.clone(), &pf.nominated_node_name);
        }
    }

    /// Moves a binding cycle on: sends the writes its plugins asked for, sets a timer when
    /// it waits, and fails it when a plugin does.
    fn advance_binding(&mut self, ctx: &mut Ctx, key: &str) {
        let (Some(b), Some(snap)) = (self.bindings.get_mut(key), self.snapshot.as_ref()) else {
            return;
        };
        let Some(fw) = self.frameworks.get(&b.profile) else {
            return;
        };
        let mut writes = BindingWrites {
            annotations: b.annotations.clone(),
            ..Default::default()
        };
        let progress = fw.advance(&mut b.cycle, snap, ctx.now, &mut writes);
        for (plugin, context, req) in writes.requests {
            let is_binding = req.subresource == Some(Subresource::Binding);
            let id = self.client.send(ctx, req);
            let w = BindingWrite {
                key: key.to_string(),
                plugin,
                context,
                is_binding,
            };
            self.bind_requests.insert(id, w);
        }
        match progress {
            Progress::WaitUntil(t) => {
                self.timers.set(
                    ctx,
                    t.saturating_sub(ctx.now),
                    Timer::Binding(key.to_string()),
                );
            }
            Progress::BindSent => {}
            Progress::Failed(status) => self.fail_binding(ctx, key, status),
        }
    }

    /// `handleBindingCycleError`: Unreserve, forget the assumed pod (which frees its
    /// place for others, like a deleted pod), then the failure handler.
    fn fail_binding(&mut self, ctx: &mut Ctx, key: &str, status: Status) {
        let Some(mut b) = self.bindings.remove(key) else {
            return;
        };
        if let (Some(fw), Some(snap)) = (self.frameworks.get(&b.profile), self.snapshot.as_mut()) {
            fw.unreserve(&mut b.cycle, snap);
            if snap.remove_pod(key).is_some() {
                self.queue
                    .move_all_to_active_or_backoff(ClusterEvent::AssignedPodDelete, ctx.now);
            }
        }
        let failure = Failure {
            plugins: rejecting_plugin(&status),
            status,
            annotations: &b.annotations,
            nomination: None,
        };
        self.handle_failure(ctx, b.q, &b.pod, &b.profile, failure);
    }

    fn on_bind_response(&mut self, ctx: &mut Ctx, resp: ApiResponse) {
        let Some(w) = self.bind_requests.remove(&resp.id) else {
            return;
        };
        if !w.is_binding {
            if let Err(s) = resp.result {
                let msg = format!(
                    "running PreBind plugin {:?}: {}: {}",
                    w.plugin, w.context, s.message
                );
                self.fail_binding(ctx, &w.key, Status::error(msg).with_plugin(w.plugin));
            }
            return;
        }
        let Some(b) = self.bindings.get(&w.key) else {
            return;
        };
        let Some(fw) = self.frameworks.get(&b.profile) else {
            return;
        };
        match fw.finish_bind(&b.cycle, resp.result.map(|_| ()).map_err(|s| s.message)) {
            Ok(()) => {
                let Some(b) = self.bindings.remove(&w.key) else {
                    return;
                };
                self.queue.done(&w.key);
                let (ns, name) = w.key.split_once('/').unwrap_or(("", &w.key));
                let msg = scheduled_message(ns, name, &b.cycle.node);
                self.event(ctx, &b.profile, &b.pod, NORMAL, "Scheduled", &msg);
            }
            Err(status) => self.fail_binding(ctx, &w.key, status),
        }
    }
}

/// A pod's `status.nominatedNodeName`, when set.
fn nominated_node(o: &Object) -> Option<String> {
    match o {
        Object::Pod(p) => p
            .status
            .as_ref()
            .and_then(|s| s.nominated_node_name.clone())
            .filter(|n| !n.is_empty()),
        _ => None,
    }
}

/// The plugin that rejected the pod, for the queue's requeueing (none for an error).
fn rejecting_plugin(status: &Status) -> BTreeSet<&'static str> {
    if status.is_rejected() && !status.plugin.is_empty() {
        BTreeSet::from([status.plugin])
    } else {
        BTreeSet::new()
    }
}
