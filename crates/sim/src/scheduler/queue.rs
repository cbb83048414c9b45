//! The scheduling queue: activeQ (PrioritySort order), backoffQ (exponential per-pod
//! backoff), unschedulablePods (moved back by relevant cluster events or after 5 minutes),
//! and the nominator for pods that preempted others. Time is passed in explicitly.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use super::framework::{Code, Nominated, Status};
use super::podinfo::PodInfo;
use super::runtime::Framework;
use crate::time::{Time, MINUTE, SECOND};

/// `DefaultPodMaxInUnschedulablePodsDuration`: 5 minutes.
pub const POD_MAX_IN_UNSCHEDULABLE_PODS_DURATION: Time = 5 * MINUTE;
/// How often upstream flushes completed backoffs (the actor's timer period).
pub const BACKOFF_FLUSH_PERIOD: Time = SECOND;
/// How often upstream flushes the unschedulable leftover (the actor's timer period).
pub const UNSCHEDULABLE_FLUSH_PERIOD: Time = 30 * SECOND;

/// A pod in the queue with its scheduling history (`framework.QueuedPodInfo`).
#[derive(Clone, Debug)]
pub struct QueuedPodInfo {
    /// The pod.
    pub pod_info: Arc<PodInfo>,
    /// When the pod was added to the queue or last failed (orders activeQ, starts backoff).
    pub timestamp: Time,
    /// Scheduling attempts so far.
    pub attempts: u32,
    /// When the pod was first popped.
    pub initial_attempt_timestamp: Option<Time>,
    /// Plugins that rejected the pod in its last attempt.
    pub unschedulable_plugins: BTreeSet<&'static str>,
    /// The PreEnqueue plugin keeping the pod out of activeQ, if any.
    pub gating_plugin: Option<&'static str>,
    seq: u64,
}

/// Cluster events that may make an unschedulable pod schedulable (`framework.ClusterEvent`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum ClusterEvent {
    /// A node was added.
    NodeAdd,
    /// A node changed (labels, taints, allocatable, unschedulable).
    NodeUpdate,
    /// A node was deleted.
    NodeDelete,
    /// A pod was bound or assumed on a node.
    AssignedPodAdd,
    /// An assigned pod changed (labels, resources scaled down).
    AssignedPodUpdate,
    /// An assigned pod was deleted (frees resources, ports, spreading).
    AssignedPodDelete,
    /// A PVC was added or changed.
    PvcChange,
    /// A PV was added or changed.
    PvChange,
    /// A StorageClass was added.
    StorageClassChange,
    /// The 5-minute unschedulable timeout.
    UnschedulableTimeout,
    /// Forced: every plugin cares.
    WildCard,
}

/// Which events each in-tree plugin registers for (`EventsToRegister`, without hints).
pub fn plugin_cares(plugin: &str, ev: ClusterEvent) -> bool {
    use ClusterEvent::*;
    if matches!(ev, WildCard | UnschedulableTimeout) {
        return true;
    }
    match plugin {
        "NodeResourcesFit" => matches!(
            ev,
            NodeAdd | NodeUpdate | AssignedPodDelete | AssignedPodUpdate
        ),
        "NodeUnschedulable" | "TaintToleration" | "NodeAffinity" | "NodeName" => {
            matches!(ev, NodeAdd | NodeUpdate)
        }
        "NodePorts" => matches!(ev, NodeAdd | AssignedPodDelete),
        "PodTopologySpread" | "InterPodAffinity" => matches!(
            ev,
            NodeAdd
                | NodeUpdate
                | NodeDelete
                | AssignedPodAdd
                | AssignedPodUpdate
                | AssignedPodDelete
        ),
        "VolumeBinding" | "VolumeZone" | "NodeVolumeLimits" => matches!(
            ev,
            NodeAdd | NodeUpdate | PvcChange | PvChange | StorageClassChange | AssignedPodDelete
        ),
        "VolumeRestrictions" => matches!(ev, AssignedPodDelete | PvcChange),
        // Plugins without EventsToRegister get every event.
        _ => true,
    }
}

/// `isPodUpdated`: whether anything but resourceVersion, generation, managedFields,
/// finalizers or status changed (the scheduler's own status patches must not requeue).
/// The scheduling-result annotations the scheduler itself writes (design.md §3.4) do not
/// count either: upstream has no such write, so it must not cost the pod an attempt.
pub fn is_pod_updated(
    old: &k8s_openapi::api::core::v1::Pod,
    new: &k8s_openapi::api::core::v1::Pod,
) -> bool {
    use super::algorithm::{
        ANNOTATION_FILTER, ANNOTATION_FINAL_SCORE, ANNOTATION_SCORE, ANNOTATION_SELECTED_NODE,
    };
    let strip = |p: &k8s_openapi::api::core::v1::Pod| {
        let mut m = p.metadata.clone();
        m.resource_version = None;
        m.generation = None;
        m.managed_fields = None;
        m.finalizers = None;
        if let Some(a) = m.annotations.as_mut() {
            for k in [
                ANNOTATION_FILTER,
                ANNOTATION_SCORE,
                ANNOTATION_FINAL_SCORE,
                ANNOTATION_SELECTED_NODE,
            ] {
                a.remove(k);
            }
            if a.is_empty() {
                m.annotations = None;
            }
        }
        m
    };
    old.spec != new.spec || strip(old) != strip(new)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Where {
    Active,
    Backoff,
    Unschedulable,
    InFlight,
}

/// The scheduling queue.
#[derive(Debug)]
pub struct SchedulingQueue {
    initial_backoff: Time,
    max_backoff: Time,
    /// v1.33+ `SchedulerPopFromBackoffQ` (beta, on): with activeQ empty, pop from backoffQ.
    pub pop_from_backoff_q: bool,
    pods: BTreeMap<String, (QueuedPodInfo, Where)>,
    active: BTreeSet<(Reverse<i32>, Time, u64, String)>,
    backoff: BTreeSet<(Time, u64, String)>,
    /// Keys of the pods in unschedulablePods (an index into `pods`, in key order).
    unschedulable: BTreeSet<String>,
    seq: u64,
    scheduling_cycle: u64,
    move_request_cycle: u64,
    in_flight_cycle: BTreeMap<String, u64>,
    nominated: Nominated,
    nominated_of: BTreeMap<String, String>,
}

impl SchedulingQueue {
    /// A queue with backoff bounds in seconds (config podInitialBackoffSeconds and
    /// podMaxBackoffSeconds).
    pub fn new(initial_backoff_seconds: i64, max_backoff_seconds: i64) -> SchedulingQueue {
        SchedulingQueue {
            initial_backoff: initial_backoff_seconds.max(0) as Time * SECOND,
            max_backoff: max_backoff_seconds.max(0) as Time * SECOND,
            pop_from_backoff_q: true,
            pods: BTreeMap::new(),
            active: BTreeSet::new(),
            backoff: BTreeSet::new(),
            unschedulable: BTreeSet::new(),
            seq: 0,
            scheduling_cycle: 0,
            move_request_cycle: 0,
            in_flight_cycle: BTreeMap::new(),
            nominated: Nominated::new(),
            nominated_of: BTreeMap::new(),
        }
    }

    /// `calculateBackoffDuration`: initial × 2^(attempts−1), capped at the maximum.
    pub fn backoff_duration(&self, attempts: u32) -> Time {
        let mut d = self.initial_backoff;
        for _ in 1..attempts {
            if d > self.max_backoff.saturating_sub(d) {
                return self.max_backoff;
            }
            d += d;
        }
        d.min(self.max_backoff.max(self.initial_backoff))
    }

    /// When the pod's backoff ends.
    pub fn backoff_expiry(&self, q: &QueuedPodInfo) -> Time {
        q.timestamp + self.backoff_duration(q.attempts)
    }

    fn is_backing_off(&self, q: &QueuedPodInfo, now: Time) -> bool {
        q.attempts > 0 && self.backoff_expiry(q) > now
    }

    fn place(&mut self, mut q: QueuedPodInfo, w: Where) {
        let key = q.pod_info.key.clone();
        self.remove_index(&key);
        self.seq += 1;
        q.seq = self.seq;
        match w {
            Where::Active => {
                self.active.insert((
                    Reverse(q.pod_info.priority),
                    q.timestamp,
                    q.seq,
                    key.clone(),
                ));
            }
            Where::Backoff => {
                self.backoff
                    .insert((self.backoff_expiry(&q), q.seq, key.clone()));
            }
            Where::Unschedulable => {
                self.unschedulable.insert(key.clone());
            }
            Where::InFlight => {}
        }
        self.pods.insert(key, (q, w));
    }

    fn remove_index(&mut self, key: &str) -> Option<(QueuedPodInfo, Where)> {
        let (q, w) = self.pods.remove(key)?;
        match w {
            Where::Active => {
                self.active.remove(&(
                    Reverse(q.pod_info.priority),
                    q.timestamp,
                    q.seq,
                    key.to_string(),
                ));
            }
            Where::Backoff => {
                self.backoff
                    .remove(&(self.backoff_expiry(&q), q.seq, key.to_string()));
            }
            Where::Unschedulable => {
                self.unschedulable.remove(key);
            }
            Where::InFlight => {}
        }
        Some((q, w))
    }

    /// Adds a new pending pod: to activeQ, or to unschedulablePods if a PreEnqueue plugin
    /// (SchedulingGates) keeps it out.
    pub fn add(&mut self, fw: &Framework, pod: Arc<PodInfo>, now: Time) {
        let mut q = QueuedPodInfo {
            pod_info: pod,
            timestamp: now,
            attempts: 0,
            initial_attempt_timestamp: None,
            unschedulable_plugins: BTreeSet::new(),
            gating_plugin: None,
            seq: 0,
        };
        if let Some((old, Where::InFlight)) = self.pods.get(&q.pod_info.key) {
            // Already being scheduled: keep the in-flight record, newest object.
            let mut o = old.clone();
            o.pod_info = q.pod_info;
            self.pods
                .insert(o.pod_info.key.clone(), (o, Where::InFlight));
            return;
        }
        let s = fw.run_pre_enqueue(&q.pod_info);
        if !s.is_success() {
            q.gating_plugin = Some(s.plugin);
            self.place(q, Where::Unschedulable);
        } else {
            self.place(q, Where::Active);
        }
    }

    /// A pending pod's object changed: replace it; a gated or unschedulable pod is
    /// re-evaluated and moved to activeQ/backoffQ when it may now be schedulable.
    pub fn update(&mut self, fw: &Framework, pod: Arc<PodInfo>, now: Time) {
        let Some((old, w)) = self.pods.get(&pod.key).cloned() else {
            return self.add(fw, pod, now);
        };
        let mut q = old;
        let changed = is_pod_updated(&q.pod_info.pod, &pod.pod);
        q.pod_info = pod;
        match w {
            Where::Unschedulable if changed => {
                let s = fw.run_pre_enqueue(&q.pod_info);
                if !s.is_success() {
                    q.gating_plugin = Some(s.plugin);
                    self.place(q, Where::Unschedulable);
                } else {
                    q.gating_plugin = None;
                    let to = if self.is_backing_off(&q, now) {
                        Where::Backoff
                    } else {
                        Where::Active
                    };
                    self.place(q, to);
                }
            }
            _ => self.place(q, w),
        }
    }

    /// Removes a pod (deleted, or bound by someone else).
    pub fn delete(&mut self, key: &str) {
        self.remove_index(key);
        self.in_flight_cycle.remove(key);
        self.delete_nominated_pod_if_exists(key);
    }

    /// The pod [`SchedulingQueue::pop`] would take now, if any.
    fn next_key(&self) -> Option<&str> {
        match self.active.iter().next() {
            Some(k) => Some(&k.3),
            // Only pods backing off after a rejection may jump the queue; pods that hit an
            // error wait out their backoff (upstream keeps them in a separate errorBackoffQ).
            None if self.pop_from_backoff_q => {
                self.backoff.iter().map(|(_, _, k)| k.as_str()).find(|k| {
                    self.pods
                        .get(*k)
                        .is_some_and(|(q, _)| !q.unschedulable_plugins.is_empty())
                })
            }
            None => None,
        }
    }

    /// Whether a pod can be popped now (a scheduling cycle has work).
    pub fn can_pop(&self) -> bool {
        self.next_key().is_some()
    }

    /// Pops the next pod to schedule: the head of activeQ, else (with
    /// `pop_from_backoff_q`) the earliest of backoffQ. The pod is in flight until
    /// [`SchedulingQueue::done`] or [`SchedulingQueue::add_unschedulable_if_not_present`].
    pub fn pop(&mut self, now: Time) -> Option<QueuedPodInfo> {
        let key = self.next_key()?.to_string();
        let (mut q, _) = self.remove_index(&key)?;
        q.attempts += 1;
        if q.initial_attempt_timestamp.is_none() {
            q.initial_attempt_timestamp = Some(now);
        }
        self.scheduling_cycle += 1;
        self.in_flight_cycle
            .insert(key.clone(), self.scheduling_cycle);
        self.pods.insert(key, (q.clone(), Where::InFlight));
        Some(q)
    }

    /// The scheduling cycle counter.
    pub fn scheduling_cycle(&self) -> u64 {
        self.scheduling_cycle
    }

    /// The pod's cycle finished successfully (it was assumed/bound): forget it.
    pub fn done(&mut self, key: &str) {
        if let Some((_, Where::InFlight)) = self.pods.get(key) {
            self.pods.remove(key);
        }
        self.in_flight_cycle.remove(key);
    }

    /// A scheduling attempt failed with `status`. Errors (and rejections while a relevant
    /// move request arrived during the attempt) go to backoffQ/activeQ; rejections go to
    /// unschedulablePods.
    pub fn add_unschedulable_if_not_present(
        &mut self,
        mut q: QueuedPodInfo,
        status: &Status,
        unschedulable_plugins: BTreeSet<&'static str>,
        now: Time,
    ) {
        let key = q.pod_info.key.clone();
        let cycle = self
            .in_flight_cycle
            .remove(&key)
            .unwrap_or(self.scheduling_cycle);
        // Only a pod still in flight goes back: one deleted meanwhile stays gone.
        if !matches!(self.pods.get(&key), Some((_, Where::InFlight))) {
            return;
        }
        q.timestamp = now;
        q.unschedulable_plugins = unschedulable_plugins;
        let rejected = matches!(
            status.code,
            Code::Unschedulable | Code::UnschedulableAndUnresolvable
        );
        if !rejected || q.unschedulable_plugins.is_empty() || self.move_request_cycle >= cycle {
            let w = if self.is_backing_off(&q, now) {
                Where::Backoff
            } else {
                Where::Active
            };
            self.place(q, w);
        } else {
            self.place(q, Where::Unschedulable);
        }
    }

    /// `MoveAllToActiveOrBackoffQueue`: pods in unschedulablePods rejected by a plugin that
    /// cares about `event` move to backoffQ (still backing off) or activeQ.
    pub fn move_all_to_active_or_backoff(&mut self, event: ClusterEvent, now: Time) {
        self.move_all_to_active_or_backoff_with(event, now, &|_, _| true);
    }

    /// `MoveAllToActiveOrBackoffQueue` with QueueingHints: a pod moves when one of its
    /// rejecting plugins registers for the event and its hint (`hint(pod, plugin)`) says
    /// Queue, or when no rejecting plugin was recorded.
    pub fn move_all_to_active_or_backoff_with(
        &mut self,
        event: ClusterEvent,
        now: Time,
        hint: &dyn Fn(&QueuedPodInfo, &'static str) -> bool,
    ) {
        let keys: Vec<String> = self
            .unschedulable_pods()
            .filter(|q| {
                q.gating_plugin.is_none()
                    && (q.unschedulable_plugins.is_empty()
                        || q.unschedulable_plugins
                            .iter()
                            .any(|p| plugin_cares(p, event) && hint(q, p)))
            })
            .map(|q| q.pod_info.key.clone())
            .collect();
        for k in keys {
            if let Some((q, _)) = self.remove_index(&k) {
                let w = if self.is_backing_off(&q, now) {
                    Where::Backoff
                } else {
                    Where::Active
                };
                self.place(q, w);
            }
        }
        self.move_request_cycle = self.scheduling_cycle;
    }

    /// `flushBackoffQCompleted`: pods whose backoff ended move to activeQ.
    pub fn flush_backoff_completed(&mut self, now: Time) {
        while let Some((exp, _, key)) = self.backoff.iter().next().cloned() {
            if exp > now {
                break;
            }
            if let Some((q, _)) = self.remove_index(&key) {
                self.place(q, Where::Active);
            }
        }
    }

    /// `flushUnschedulablePodsLeftover`: pods unschedulable for longer than 5 minutes move.
    pub fn flush_unschedulable_leftover(&mut self, now: Time) {
        let keys: Vec<String> = self
            .unschedulable_pods()
            .filter(|q| {
                q.gating_plugin.is_none()
                    && now.saturating_sub(q.timestamp) > POD_MAX_IN_UNSCHEDULABLE_PODS_DURATION
            })
            .map(|q| q.pod_info.key.clone())
            .collect();
        for k in keys {
            if let Some((q, _)) = self.remove_index(&k) {
                let w = if self.is_backing_off(&q, now) {
                    Where::Backoff
                } else {
                    Where::Active
                };
                self.place(q, w);
            }
        }
    }

    /// The earliest time a backoff completes, for the actor's timer.
    pub fn next_backoff_expiry(&self) -> Option<Time> {
        self.backoff.iter().next().map(|e| e.0)
    }

    /// Pending pods by queue: (activeQ in pop order, backoffQ by expiry, unschedulable).
    pub fn pending_pods(
        &self,
    ) -> (
        Vec<&QueuedPodInfo>,
        Vec<&QueuedPodInfo>,
        Vec<&QueuedPodInfo>,
    ) {
        let get = |k: &String| self.pods.get(k).map(|(q, _)| q);
        let active = self.active.iter().filter_map(|e| get(&e.3)).collect();
        let backoff = self.backoff.iter().filter_map(|e| get(&e.2)).collect();
        let unsched = self.unschedulable_pods().collect();
        (active, backoff, unsched)
    }

    /// The pods in unschedulablePods, in key order.
    fn unschedulable_pods(&self) -> impl Iterator<Item = &QueuedPodInfo> + '_ {
        self.unschedulable
            .iter()
            .filter_map(|k| self.pods.get(k).map(|(q, _)| q))
    }

    /// How many pods wait in (activeQ, backoffQ, unschedulablePods).
    pub fn pending_counts(&self) -> (usize, usize, usize) {
        (
            self.active.len(),
            self.backoff.len(),
            self.unschedulable.len(),
        )
    }

    /// Records that a pod is nominated to a node (after preemption).
    pub fn add_nominated_pod(&mut self, pod: Arc<PodInfo>, node: &str) {
        self.delete_nominated_pod_if_exists(&pod.key);
        if node.is_empty() {
            return;
        }
        self.nominated_of.insert(pod.key.clone(), node.to_string());
        self.nominated
            .entry(node.to_string())
            .or_default()
            .push(pod);
    }

    /// Forgets a pod's nomination.
    pub fn delete_nominated_pod_if_exists(&mut self, key: &str) {
        if let Some(node) = self.nominated_of.remove(key) {
            if let Some(v) = self.nominated.get_mut(&node) {
                v.retain(|p| p.key != key);
                if v.is_empty() {
                    self.nominated.remove(&node);
                }
            }
        }
    }

    /// Nominated pods by node, for filtering.
    pub fn nominated(&self) -> &Nominated {
        &self.nominated
    }
}

#[cfg(test)]
#[path = "queue_tests.rs"]
mod tests;
