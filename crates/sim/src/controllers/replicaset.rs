//! The ReplicaSet controller: keeps the number of active pods at spec.replicas, with
//! expectations, slow-start creation batches, the burst limit and upstream's deletion
//! ranking, and keeps the ReplicaSet's status.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use k8s_openapi::api::apps::v1::{ReplicaSet, ReplicaSetStatus};
use k8s_openapi::api::core::v1::Pod;

use crate::api::{ApiRequest, ApiResponse, Body, ReqId, Subresource, Verb};
use crate::client::recorder::{NORMAL, WARNING};
use crate::client::{Change, Pending, WorkQueue};
use crate::controllers::util::{
    controller_key, controller_ref, is_pod_active, is_pod_available, is_pod_ready, key_of,
    pod_from_template, split_key,
};
use crate::controllers::{Action, Controller, Env, Informers, SyncError, SyncResult};
use crate::object::{Kind, Object};
use crate::selector::LabelSelector;
use crate::time::{Time, MINUTE};

/// At most this many creates or deletes per sync (`BurstReplicas`).
pub const BURST_REPLICAS: usize = 500;
/// Expectations older than this are considered satisfied (`ExpectationsTimeout`).
const EXPECTATIONS_TIMEOUT: Time = 5 * MINUTE;

#[derive(Debug, Default)]
struct Expectation {
    adds: i64,
    dels: BTreeSet<String>,
    set_at: Time,
}

/// A slow-start batch sequence in progress for one ReplicaSet.
#[derive(Debug)]
struct Batches {
    remaining: usize,
    batch: usize,
    outstanding: usize,
    failed: bool,
    /// The first error of this round (`manageReplicasErr`).
    first_error: Option<String>,
    pod: Pod,
    rs: Arc<Object>,
}

/// What a request in flight was for (each names its ReplicaSet's key).
#[derive(Debug)]
enum Sent {
    Create(String),
    Status(String),
    Delete(String),
}

/// The ReplicaSet controller.
#[derive(Default)]
pub struct ReplicaSetController {
    expectations: BTreeMap<String, Expectation>,
    batches: BTreeMap<String, Batches>,
    sent: Pending<Sent>,
    /// Consecutive syncs whose creations failed, per ReplicaSet (the work queue's
    /// per-item backoff; kept here because the sync that sent the creates has already
    /// returned when they fail).
    create_failures: BTreeMap<String, u32>,
    /// The error of the last creation round that failed, until a round succeeds: the
    /// ReplicaSet's `ReplicaFailure` condition (`FailedCreate`).
    replica_failure: BTreeMap<String, String>,
    /// Status writes per ReplicaSet: in flight, or the last one's resourceVersion.
    status: BTreeMap<String, StatusWrite>,
}

/// A ReplicaSet's last status write. Upstream's worker is inside `UpdateStatus` until
/// the apiserver answers, and the work queue folds every event that comes meanwhile
/// into one more sync of the key; a sync before the informer has seen the write would
/// only read the old resourceVersion and be refused with a conflict.
#[derive(Debug, Default)]
struct StatusWrite {
    /// A write is in flight.
    in_flight: bool,
    /// Events came while it was: sync again once it is answered.
    dirty: bool,
    /// The resourceVersion the last write stored.
    stored: u64,
}

/// `workqueue.DefaultControllerRateLimiter`'s per-item exponential backoff.
const RETRY_BASE: Time = 5;
const RETRY_MAX: Time = 1_000_000;

impl ReplicaSetController {
    fn satisfied(&self, key: &str, now: Time) -> bool {
        match self.expectations.get(key) {
            None => true,
            Some(e) => {
                (e.adds <= 0 && e.dels.is_empty())
                    || now.saturating_sub(e.set_at) > EXPECTATIONS_TIMEOUT
            }
        }
    }

    fn send_batch(&mut self, key: &str, env: &mut Env) {
        let Some(b) = self.batches.get_mut(key) else {
            return;
        };
        let n = b.batch.min(b.remaining);
        b.remaining -= n;
        b.outstanding += n;
        let pod = b.pod.clone();
        let ns = b.rs.namespace().to_string();
        for _ in 0..n {
            let req = ApiRequest::new(Verb::Create, Kind::Pod, &ns, "")
                .with_body(Body::Object(pod.clone().into()));
            let id = env.send(req);
            self.sent.insert(id, Sent::Create(key.to_string()));
        }
    }

    fn manage(
        &mut self,
        key: &str,
        rs: &Arc<Object>,
        r: &ReplicaSet,
        pods: &[&Arc<Object>],
        inf: &Informers,
        env: &mut Env,
    ) {
        let want = r.spec.as_ref().and_then(|s| s.replicas).unwrap_or(1).max(0) as usize;
        let have = pods.len();
        let now = env.now();
        if have < want {
            let n = (want - have).min(BURST_REPLICAS);
            let Some(template) = r.spec.as_ref().and_then(|s| s.template.clone()) else {
                return;
            };
            let pod = pod_from_template(&template, rs, &format!("{}-", rs.name()));
            self.expectations.insert(
                key.to_string(),
                Expectation {
                    adds: n as i64,
                    dels: BTreeSet::new(),
                    set_at: now,
                },
            );
            self.batches.insert(
                key.to_string(),
                Batches {
                    remaining: n,
                    batch: 1,
                    outstanding: 0,
                    failed: false,
                    first_error: None,
                    pod,
                    rs: rs.clone(),
                },
            );
            self.send_batch(key, env);
        } else if have == want {
            self.replica_failure.remove(key);
        } else if have > want {
            self.replica_failure.remove(key);
            let n = (have - want).min(BURST_REPLICAS);
            // Only a scale-down ranks by co-location, so only it gathers the pods of
            // the owner's other ReplicaSets (upstream's getIndirectlyRelatedPods).
            let related = related_pods(rs, inf);
            let related: Vec<&Arc<Object>> = related.iter().collect();
            let victims = pods_to_delete(pods, &related, n, now);
            let dels: BTreeSet<String> = victims.iter().map(|p| key_of(p)).collect();
            self.expectations.insert(
                key.to_string(),
                Expectation {
                    adds: 0,
                    dels,
                    set_at: now,
                },
            );
            for v in victims {
                let id = env.send(ApiRequest::new(
                    Verb::Delete,
                    Kind::Pod,
                    v.namespace(),
                    v.name(),
                ));
                self.sent.insert(id, Sent::Delete(key.to_string()));
            }
        }
    }
}

impl Controller for ReplicaSetController {
    fn name(&self) -> &'static str {
        "replicaset-controller"
    }

    fn watches(&self) -> &'static [Kind] {
        &[Kind::ReplicaSet, Kind::Pod]
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
            Kind::ReplicaSet => queue.add(key_of(change.object())),
            Kind::Pod => {
                let pod = change.object();
                let Some(key) = controller_key(pod, Kind::ReplicaSet, inf) else {
                    return;
                };
                match change {
                    Change::Added(_) => {
                        if let Some(e) = self.expectations.get_mut(&key) {
                            e.adds -= 1;
                        }
                    }
                    Change::Deleted(_) => {
                        if let Some(e) = self.expectations.get_mut(&key) {
                            e.dels.remove(&key_of(pod));
                        }
                    }
                    Change::Updated(old, new) => {
                        // A pod that started terminating counts as deleted for expectations.
                        if old.meta().deletion_timestamp.is_none()
                            && new.meta().deletion_timestamp.is_some()
                        {
                            if let Some(e) = self.expectations.get_mut(&key) {
                                e.dels.remove(&key_of(pod));
                            }
                        }
                    }
                }
                queue.add(key);
            }
            _ => {}
        }
    }

    fn sync(&mut self, key: &str, env: &mut Env, inf: &Informers) -> SyncResult {
        let (ns, name) = split_key(key);
        let Some(rs) = inf.of(Kind::ReplicaSet).get(ns, name).cloned() else {
            self.expectations.remove(key);
            self.batches.remove(key);
            self.create_failures.remove(key);
            self.replica_failure.remove(key);
            self.status.remove(key);
            return Ok(Action::await_change());
        };
        if let Some(w) = self.status.get_mut(key) {
            if w.in_flight || rs.resource_version() < w.stored {
                // The key's worker is still writing, or the informer has not seen the
                // write yet: its watch event brings the key back.
                w.dirty |= w.in_flight;
                return Ok(Action::await_change());
            }
        }
        let Object::ReplicaSet(r) = &*rs else {
            return Ok(Action::await_change());
        };
        let uid = rs.meta().uid.clone().unwrap_or_default();
        let selector = LabelSelector::from_k8s(r.spec.as_ref().map(|s| &s.selector))
            .map_err(SyncError::new)?;
        // The pods this ReplicaSet controls, from the informer's controller index.
        let owned: Vec<&Arc<Object>> = inf
            .of(Kind::Pod)
            .controlled_by(&uid)
            .filter(|p| p.namespace() == ns && selector.matches_object(p))
            .collect();
        let active: Vec<&Arc<Object>> = owned
            .iter()
            .copied()
            .filter(|p| matches!(&***p, Object::Pod(pod) if is_pod_active(pod)))
            .collect();
        let now = env.now();
        let in_batches = self
            .batches
            .get(key)
            .is_some_and(|b| b.outstanding > 0 || b.remaining > 0);
        if self.satisfied(key, now) && rs.meta().deletion_timestamp.is_none() && !in_batches {
            self.manage(key, &rs, r, &active, inf, env);
        }
        let min_ready = r
            .spec
            .as_ref()
            .and_then(|s| s.min_ready_seconds)
            .unwrap_or(0);
        let mut status = compute_status(r, &owned, &active, min_ready, now);
        set_replica_failure(&mut status, self.replica_failure.get(key), now);
        if r.status.as_ref() != Some(&status) {
            let mut updated = r.clone();
            updated.status = Some(status.clone());
            let req = ApiRequest::new(Verb::Update, Kind::ReplicaSet, ns, name)
                .with_subresource(Subresource::Status)
                .with_body(Body::Object(updated.into()));
            let id = env.send(req);
            self.sent.insert(id, Sent::Status(key.to_string()));
            self.status.entry(key.to_string()).or_default().in_flight = true;
        }
        // Pods that are ready but not yet available need another look later.
        if min_ready > 0
            && status.ready_replicas.unwrap_or(0) > status.available_replicas.unwrap_or(0)
        {
            return Ok(Action::requeue(1000));
        }
        Ok(Action::await_change())
    }

    fn on_response(&mut self, id: ReqId, resp: &ApiResponse, env: &mut Env, inf: &Informers) {
        match self.sent.take(id) {
            Some(Sent::Create(key)) => self.created(key, resp, env, inf),
            Some(Sent::Delete(key)) => self.deleted(key, resp, env, inf),
            Some(Sent::Status(key)) => self.status_written(key, resp, env),
            None => {}
        }
    }
}

impl ReplicaSetController {
    /// A pod creation of a slow-start batch answered: the next batch goes when the
    /// whole batch is back, the round stops at its first error.
    fn created(&mut self, key: String, resp: &ApiResponse, env: &mut Env, inf: &Informers) {
        {
            let mut next = false;
            let mut failure = None;
            if let Some(b) = self.batches.get_mut(&key) {
                b.outstanding = b.outstanding.saturating_sub(1);
                if let Err(s) = &resp.result {
                    b.failed = true;
                    b.first_error.get_or_insert_with(|| s.message.clone());
                    failure = Some((b.rs.clone(), s.message.clone()));
                    if let Some(e) = self.expectations.get_mut(&key) {
                        e.adds -= 1;
                    }
                }
                if b.outstanding == 0 {
                    if b.failed || b.remaining == 0 {
                        // Skipped creations are no longer expected.
                        if let Some(e) = self.expectations.get_mut(&key) {
                            e.adds -= b.remaining as i64;
                        }
                        let failed = b.failed;
                        let error = b.first_error.clone();
                        self.batches.remove(&key);
                        match error {
                            Some(e) => {
                                self.replica_failure.insert(key.clone(), e);
                            }
                            None => {
                                self.replica_failure.remove(&key);
                            }
                        }
                        if failed {
                            // syncReplicaSet returned the error: AddRateLimited.
                            let n = self.create_failures.entry(key.clone()).or_insert(0);
                            let delay = RETRY_BASE.saturating_mul(1 << (*n).min(30)).min(RETRY_MAX);
                            *n += 1;
                            env.enqueue_after(key.clone(), delay);
                        } else {
                            self.create_failures.remove(&key);
                            env.enqueue(key.clone());
                        }
                    } else {
                        let b = self.batches.get_mut(&key).expect("present");
                        b.batch = (b.batch * 2).min(b.remaining);
                        next = true;
                    }
                }
            }
            if let Some((rs, msg)) = failure {
                env.event(
                    &rs,
                    WARNING,
                    "FailedCreate",
                    &format!("Error creating: {msg}"),
                );
            } else if let Ok(crate::api::ApiResult::Object(pod)) = &resp.result {
                let rss = inf.of(Kind::ReplicaSet);
                if let Some(rs) = rss.get(pod.namespace(), split_key(&key).1) {
                    let msg = format!("Created pod: {}", pod.name());
                    env.event(rs, NORMAL, "SuccessfulCreate", &msg);
                }
            }
            if next {
                self.send_batch(&key, env);
            }
        }
    }

    /// A status write answered: a failed one is retried with backoff, and events that
    /// came while it was in flight get their sync.
    fn status_written(&mut self, key: String, resp: &ApiResponse, env: &mut Env) {
        let w = self.status.entry(key.clone()).or_default();
        w.in_flight = false;
        let dirty = std::mem::take(&mut w.dirty);
        match &resp.result {
            Ok(res) => {
                if let crate::api::ApiResult::Object(rs) = res {
                    w.stored = rs.resource_version();
                }
                if dirty {
                    env.enqueue(key);
                }
            }
            Err(_) => {
                w.stored = 0;
                env.retry(key);
            }
        }
    }

    /// A pod deletion answered.
    fn deleted(&mut self, key: String, resp: &ApiResponse, env: &mut Env, inf: &Informers) {
        match &resp.result {
            Ok(crate::api::ApiResult::Object(pod)) => {
                let rss = inf.of(Kind::ReplicaSet);
                if let Some(rs) = rss.get(pod.namespace(), split_key(&key).1) {
                    let msg = format!("Deleted pod: {}", pod.name());
                    env.event(rs, NORMAL, "SuccessfulDelete", &msg);
                }
            }
            Err(s) if s.is_not_found() => {}
            _ => {
                // The pod was not deleted: stop expecting it and retry.
                self.expectations.remove(&key);
                env.retry(key);
            }
        }
    }
}

/// Pods of every ReplicaSet controlled by the same owner as `rs` (for co-location ranks).
fn related_pods(rs: &Arc<Object>, inf: &Informers) -> Vec<Arc<Object>> {
    let ns = rs.namespace();
    let rs_uids: BTreeSet<String> = match controller_ref(rs) {
        Some(o) => inf
            .of(Kind::ReplicaSet)
            .controlled_by(&o.uid)
            .filter(|r| r.namespace() == ns)
            .filter_map(|r| r.meta().uid.clone())
            .collect(),
        None => rs.meta().uid.iter().cloned().collect(),
    };
    let pods = inf.of(Kind::Pod);
    rs_uids
        .iter()
        .flat_map(|uid| pods.controlled_by(uid))
        .filter(|p| p.namespace() == ns)
        .filter(|p| matches!(&***p, Object::Pod(pod) if is_pod_active(pod)))
        .cloned()
        .collect()
}

fn compute_status(
    r: &ReplicaSet,
    owned: &[&Arc<Object>],
    active: &[&Arc<Object>],
    min_ready: i32,
    now: Time,
) -> ReplicaSetStatus {
    let template_labels = r
        .spec
        .as_ref()
        .and_then(|s| s.template.as_ref())
        .and_then(|t| t.metadata.as_ref())
        .and_then(|m| m.labels.clone());
    let mut ready = 0;
    let mut available = 0;
    let mut fully_labeled = 0;
    for p in active {
        let Object::Pod(pod) = &***p else { continue };
        if is_pod_ready(pod) {
            ready += 1;
            if is_pod_available(pod, min_ready, now) {
                available += 1;
            }
        }
        let labels = pod.metadata.labels.as_ref();
        if template_labels
            .iter()
            .flatten()
            .all(|(k, v)| labels.and_then(|l| l.get(k)) == Some(v))
        {
            fully_labeled += 1;
        }
    }
    let _ = owned;
    let old = r.status.clone().unwrap_or_default();
    ReplicaSetStatus {
        replicas: active.len() as i32,
        fully_labeled_replicas: Some(fully_labeled),
        ready_replicas: Some(ready),
        available_replicas: Some(available),
        terminating_replicas: None,
        observed_generation: r.metadata.generation,
        conditions: old.conditions,
    }
}

/// `calculateStatus`'s ReplicaFailure handling: added (reason FailedCreate, the
/// error as message) when the last creation round failed and the condition is absent,
/// removed once a round succeeds.
fn set_replica_failure(status: &mut ReplicaSetStatus, error: Option<&String>, now: Time) {
    let has = status
        .conditions
        .as_ref()
        .is_some_and(|c| c.iter().any(|c| c.type_ == "ReplicaFailure"));
    match error {
        Some(msg) if !has => {
            status.conditions.get_or_insert_with(Vec::new).push(
                k8s_openapi::api::apps::v1::ReplicaSetCondition {
                    type_: "ReplicaFailure".into(),
                    status: "True".into(),
                    reason: Some("FailedCreate".into()),
                    message: Some(msg.clone()),
                    last_transition_time: Some(crate::time::k8s_time(now)),
                },
            );
        }
        None if has => {
            if let Some(c) = status.conditions.as_mut() {
                c.retain(|c| c.type_ != "ReplicaFailure");
            }
            if status.conditions.as_ref().is_some_and(Vec::is_empty) {
                status.conditions = None;
            }
        }
        _ => {}
    }
}

/// The `diff` pods to delete, in upstream's `ActivePodsWithRanks` order.
pub fn pods_to_delete<'a>(
    pods: &[&'a Arc<Object>],
    related: &[&Arc<Object>],
    diff: usize,
    now: Time,
) -> Vec<&'a Arc<Object>> {
    let mut per_node: BTreeMap<String, i32> = BTreeMap::new();
    for p in related {
        if let Object::Pod(pod) = &***p {
            if let Some(n) = pod.spec.as_ref().and_then(|s| s.node_name.clone()) {
                *per_node.entry(n).or_insert(0) += 1;
            }
        }
    }
    let mut ranked: Vec<&'a Arc<Object>> = pods.to_vec();
    if diff < pods.len() {
        ranked.sort_by(|a, b| {
            crate::controllers::ranking::compare_for_deletion(a, b, &per_node, now)
        });
    }
    ranked.into_iter().take(diff).collect()
}

#[cfg(test)]
#[path = "replicaset_tests.rs"]
mod tests;
