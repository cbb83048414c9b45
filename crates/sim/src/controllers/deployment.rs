//! The Deployment controller: finds or creates the new ReplicaSet for the pod template,
//! rolls (RollingUpdate or Recreate), scales proportionally, cleans up history and keeps
//! the status and conditions — one step per sync, as each write's watch event triggers
//! the next sync.

use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_openapi::api::apps::v1::{Deployment, DeploymentStatus, ReplicaSet, ReplicaSetSpec};
use k8s_openapi::api::core::v1::PodTemplateSpec;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector as K8sSelector, ObjectMeta};

use crate::api::{ApiRequest, ApiResponse, Body, ReqId, Subresource, Verb};
use crate::client::recorder::NORMAL;
use crate::client::{Change, Pending, WorkQueue};
use crate::controllers::deployment_util as du;
use crate::controllers::util::{
    compute_hash, controller_ref, equal_ignore_hash, is_pod_active, key_of, owner_ref, split_key,
    with_label,
};
use crate::controllers::{Action, Controller, Env, Informers, SyncError, SyncResult};
use crate::object::{Kind, Object};
use crate::time::{from_k8s_time, Time};

/// The Deployment controller.
#[derive(Default)]
pub struct DeploymentController {
    /// The Deployment each write in flight was for, and the ReplicaSet it scales.
    sent: Pending<(String, Option<String>)>,
    /// Scales sent and not yet seen: ReplicaSet key → (the resourceVersion it was
    /// scaled from, the size asked for). A sync that runs before the write's watch
    /// event arrives sees the old size; it must not send (and announce) the scale again.
    scaling: BTreeMap<String, (u64, i32)>,
}

fn as_rs(o: &Arc<Object>) -> Option<&ReplicaSet> {
    match &**o {
        Object::ReplicaSet(r) => Some(r),
        _ => None,
    }
}

impl DeploymentController {
    fn send(&mut self, env: &mut Env, key: &str, req: ApiRequest) {
        let id = env.send(req);
        self.sent.insert(id, (key.to_string(), None));
    }

    fn event(&mut self, env: &mut Env, d: &Arc<Object>, reason: &str, msg: &str) {
        env.event(d, NORMAL, reason, msg);
    }

    /// Scales a ReplicaSet (spec.replicas + the desired/max annotations); returns whether
    /// anything was sent.
    fn scale_rs(
        &mut self,
        env: &mut Env,
        key: &str,
        dobj: &Arc<Object>,
        d: &Deployment,
        rs_obj: &Arc<Object>,
        n: i32,
    ) -> bool {
        let Some(rs) = as_rs(rs_obj) else {
            return false;
        };
        let rs_key = key_of(rs_obj);
        match self.scaling.get(&rs_key) {
            Some(&(rv, want)) if rv == rs_obj.resource_version() && want == n => return true,
            Some(_) => {
                self.scaling.remove(&rs_key);
            }
            None => {}
        }
        let cur = du::rs_replicas(rs);
        let desired = d
            .spec
            .as_ref()
            .and_then(|s| s.replicas)
            .unwrap_or(1)
            .to_string();
        let max =
            (d.spec.as_ref().and_then(|s| s.replicas).unwrap_or(1) + du::max_surge(d)).to_string();
        let ann = rs.metadata.annotations.clone().unwrap_or_default();
        if cur == n
            && ann.get(du::DESIRED_REPLICAS) == Some(&desired)
            && ann.get(du::MAX_REPLICAS) == Some(&max)
        {
            return false;
        }
        let mut new = rs.clone();
        new.spec
            .get_or_insert_with(ReplicaSetSpec::default)
            .replicas = Some(n);
        let a = new.metadata.annotations.get_or_insert_with(BTreeMap::new);
        a.insert(du::DESIRED_REPLICAS.into(), desired);
        a.insert(du::MAX_REPLICAS.into(), max);
        let req = ApiRequest::new(
            Verb::Update,
            Kind::ReplicaSet,
            rs_obj.namespace(),
            rs_obj.name(),
        )
        .with_body(Body::Object(new.into()));
        let id = env.send(req);
        self.sent
            .insert(id, (key.to_string(), Some(rs_key.clone())));
        self.scaling.insert(rs_key, (rs_obj.resource_version(), n));
        if cur != n {
            let dir = if n > cur { "up" } else { "down" };
            self.event(
                env,
                dobj,
                "ScalingReplicaSet",
                &format!(
                    "Scaled {dir} replica set {} from {cur} to {n}",
                    rs_obj.name()
                ),
            );
        }
        true
    }

    fn create_new_rs(
        &mut self,
        env: &mut Env,
        key: &str,
        dobj: &Arc<Object>,
        d: &Deployment,
        all: &[&ReplicaSet],
    ) {
        let Some(spec) = &d.spec else { return };
        let collision = d.status.as_ref().and_then(|s| s.collision_count);
        let hash = compute_hash(&spec.template, collision);
        let mut template = spec.template.clone();
        let tm = template.metadata.get_or_insert_with(ObjectMeta::default);
        tm.labels = Some(with_label(tm.labels.as_ref(), "pod-template-hash", &hash));
        let mut selector: K8sSelector = spec.selector.clone();
        selector.match_labels = Some(with_label(
            selector.match_labels.as_ref(),
            "pod-template-hash",
            &hash,
        ));
        let max_rev = all
            .iter()
            .map(|r| du::revision_of(r.metadata.annotations.as_ref()))
            .max()
            .unwrap_or(0);
        let replicas = du::new_rs_new_replicas(d, all, 0).unwrap_or(0);
        let replicas = if is_recreate(d) { 0 } else { replicas };
        let mut annotations: BTreeMap<String, String> = d
            .metadata
            .annotations
            .clone()
            .unwrap_or_default()
            .into_iter()
            .filter(|(k, _)| {
                !k.starts_with("deployment.kubernetes.io/")
                    && k != "kubectl.kubernetes.io/last-applied-configuration"
            })
            .collect();
        let d_replicas = spec.replicas.unwrap_or(1);
        annotations.insert(du::REVISION.into(), (max_rev + 1).to_string());
        annotations.insert(du::DESIRED_REPLICAS.into(), d_replicas.to_string());
        annotations.insert(
            du::MAX_REPLICAS.into(),
            (d_replicas + du::max_surge(d)).to_string(),
        );
        let rs = ReplicaSet {
            metadata: ObjectMeta {
                name: Some(format!("{}-{}", dobj.name(), hash)),
                namespace: Some(dobj.namespace().to_string()),
                labels: template.metadata.as_ref().and_then(|m| m.labels.clone()),
                annotations: Some(annotations),
                owner_references: Some(vec![owner_ref(dobj)]),
                ..ObjectMeta::default()
            },
            spec: Some(ReplicaSetSpec {
                replicas: Some(replicas),
                min_ready_seconds: spec.min_ready_seconds,
                selector,
                template: Some(template),
            }),
            status: None,
        };
        let name = rs.metadata.name.clone().unwrap_or_default();
        let req = ApiRequest::new(Verb::Create, Kind::ReplicaSet, dobj.namespace(), "")
            .with_body(Body::Object(rs.into()));
        self.send(env, key, req);
        if replicas > 0 {
            self.event(
                env,
                dobj,
                "ScalingReplicaSet",
                &format!("Scaled up replica set {name} from 0 to {replicas}"),
            );
        }
        // Record the new revision and the Progressing condition on the Deployment.
        let mut status = d.status.clone().unwrap_or_default();
        if has_progress_deadline(d) {
            du::set_condition(
                &mut status,
                du::condition(
                    "Progressing",
                    "True",
                    "NewReplicaSetCreated",
                    &format!("Created new replica set \"{name}\""),
                    env.now(),
                ),
            );
            self.update_status(env, key, d, status);
        }
    }

    fn update_status(
        &mut self,
        env: &mut Env,
        key: &str,
        d: &Deployment,
        status: DeploymentStatus,
    ) {
        if d.status.as_ref() == Some(&status) {
            return;
        }
        let mut new = d.clone();
        new.status = Some(status);
        let (ns, name) = split_key(key);
        let req = ApiRequest::new(Verb::Update, Kind::Deployment, ns, name)
            .with_subresource(Subresource::Status)
            .with_body(Body::Object(new.into()));
        self.send(env, key, req);
    }

    /// Computes status and conditions (`syncRolloutStatus`), and requeues for the deadline.
    fn sync_status(
        &mut self,
        env: &mut Env,
        key: &str,
        d: &Deployment,
        all: &[&ReplicaSet],
        new_rs: Option<&ReplicaSet>,
    ) {
        let now = env.now();
        let mut s = calculate_status(d, all, new_rs, now);
        let paused = d.spec.as_ref().and_then(|x| x.paused).unwrap_or(false);
        let cur = d.status.clone().unwrap_or_default();
        let current = du::get_condition(&cur, "Progressing").cloned();
        // Messages name the new ReplicaSet, or the Deployment when there is none.
        let subject = match new_rs.and_then(|r| r.metadata.name.clone()) {
            Some(rs) => format!("ReplicaSet \"{rs}\""),
            None => format!(
                "Deployment \"{}\"",
                d.metadata.name.as_deref().unwrap_or("")
            ),
        };
        let complete_already = s.replicas == s.updated_replicas
            && current
                .as_ref()
                .is_some_and(|c| c.reason.as_deref() == Some("NewReplicaSetAvailable"));
        if has_progress_deadline(d) && !paused && !complete_already {
            if du::deployment_complete(d, &s) {
                let msg = format!("{subject} has successfully progressed.");
                du::set_condition(
                    &mut s,
                    du::condition("Progressing", "True", "NewReplicaSetAvailable", &msg, now),
                );
            } else if du::deployment_progressing(d, &s) {
                let msg = format!("{subject} is progressing.");
                let mut c = du::condition("Progressing", "True", "ReplicaSetUpdated", &msg, now);
                if let Some(cur) = current.as_ref().filter(|c| c.status == "True") {
                    c.last_transition_time = cur.last_transition_time.clone();
                }
                s.conditions
                    .get_or_insert_with(Vec::new)
                    .retain(|x| x.type_ != "Progressing");
                s.conditions.get_or_insert_with(Vec::new).push(c);
            } else if timed_out(d, &cur, now) {
                let msg = format!("{subject} has timed out progressing.");
                du::set_condition(
                    &mut s,
                    du::condition(
                        "Progressing",
                        "False",
                        "ProgressDeadlineExceeded",
                        &msg,
                        now,
                    ),
                );
            }
        }
        // getReplicaFailures: the new ReplicaSet's ReplicaFailure condition, else any
        // other ReplicaSet's, becomes the Deployment's; none removes it.
        let failure = new_rs
            .into_iter()
            .chain(all.iter().copied())
            .flat_map(|r| r.status.iter().flat_map(|s| s.conditions.iter().flatten()))
            .find(|c| c.type_ == "ReplicaFailure")
            .cloned();
        match failure {
            Some(c) => du::set_condition(
                &mut s,
                k8s_openapi::api::apps::v1::DeploymentCondition {
                    type_: c.type_,
                    status: c.status,
                    reason: c.reason,
                    message: c.message,
                    last_update_time: c.last_transition_time.clone(),
                    last_transition_time: c.last_transition_time,
                },
            ),
            None => {
                if let Some(c) = s.conditions.as_mut() {
                    c.retain(|c| c.type_ != "ReplicaFailure");
                }
            }
        }
        // Requeue to notice a missed deadline.
        if let (Some(c), Some(secs)) = (du::get_condition(&s, "Progressing"), progress_deadline(d))
        {
            if c.reason.as_deref() != Some("NewReplicaSetAvailable")
                && c.reason.as_deref() != Some("ProgressDeadlineExceeded")
            {
                let last = c.last_update_time.as_ref().map_or(now, from_k8s_time);
                let due = last + secs as u64 * 1000 + 1;
                if due > now {
                    env.enqueue_after(key, due - now);
                }
            }
        }
        self.update_status(env, key, d, s);
    }
}

fn is_recreate(d: &Deployment) -> bool {
    d.spec
        .as_ref()
        .and_then(|s| s.strategy.as_ref())
        .and_then(|s| s.type_.as_deref())
        == Some("Recreate")
}

fn progress_deadline(d: &Deployment) -> Option<i32> {
    d.spec
        .as_ref()
        .and_then(|s| s.progress_deadline_seconds)
        .filter(|s| *s != i32::MAX)
}

fn has_progress_deadline(d: &Deployment) -> bool {
    progress_deadline(d).is_some()
}

fn timed_out(d: &Deployment, cur: &DeploymentStatus, now: Time) -> bool {
    let (Some(secs), Some(c)) = (progress_deadline(d), du::get_condition(cur, "Progressing"))
    else {
        return false;
    };
    if c.reason.as_deref() == Some("NewReplicaSetAvailable")
        || c.reason.as_deref() == Some("ProgressDeadlineExceeded")
    {
        return false;
    }
    let last = c.last_update_time.as_ref().map_or(now, from_k8s_time);
    last + secs as u64 * 1000 < now
}

/// `calculateStatus`.
fn calculate_status(
    d: &Deployment,
    all: &[&ReplicaSet],
    new_rs: Option<&ReplicaSet>,
    now: Time,
) -> DeploymentStatus {
    let sum = |f: &dyn Fn(&ReplicaSet) -> i32| all.iter().map(|r| f(r)).sum::<i32>();
    let available = sum(&|r| du::rs_available(r));
    let total_spec = sum(&|r| du::rs_replicas(r));
    let replicas = d.spec.as_ref().and_then(|s| s.replicas).unwrap_or(1);
    let mut s = DeploymentStatus {
        observed_generation: d.metadata.generation,
        replicas: Some(sum(&|r| r.status.as_ref().map_or(0, |s| s.replicas))),
        updated_replicas: Some(new_rs.map_or(0, |r| r.status.as_ref().map_or(0, |s| s.replicas))),
        ready_replicas: Some(sum(&|r| {
            r.status
                .as_ref()
                .and_then(|s| s.ready_replicas)
                .unwrap_or(0)
        })),
        available_replicas: Some(available),
        unavailable_replicas: Some((total_spec - available).max(0)),
        collision_count: d.status.as_ref().and_then(|s| s.collision_count),
        conditions: d.status.as_ref().and_then(|s| s.conditions.clone()),
        terminating_replicas: None,
    };
    let zero_to_none = |v: &mut Option<i32>| {
        if *v == Some(0) {
            *v = None;
        }
    };
    // Upstream omits zero counters (omitempty).
    zero_to_none(&mut s.replicas);
    zero_to_none(&mut s.updated_replicas);
    zero_to_none(&mut s.ready_replicas);
    zero_to_none(&mut s.available_replicas);
    zero_to_none(&mut s.unavailable_replicas);
    let c = if available >= replicas - du::max_unavailable(d) {
        du::condition(
            "Available",
            "True",
            "MinimumReplicasAvailable",
            "Deployment has minimum availability.",
            now,
        )
    } else {
        du::condition(
            "Available",
            "False",
            "MinimumReplicasUnavailable",
            "Deployment does not have minimum availability.",
            now,
        )
    };
    du::set_condition(&mut s, c);
    s
}

impl Controller for DeploymentController {
    fn name(&self) -> &'static str {
        "deployment-controller"
    }

    fn watches(&self) -> &'static [Kind] {
        &[Kind::Deployment, Kind::ReplicaSet, Kind::Pod]
    }

    fn on_change(
        &mut self,
        kind: Kind,
        change: &Change,
        queue: &mut WorkQueue<String>,
        inf: &Informers,
        _now: Time,
    ) {
        let o = change.object();
        match kind {
            Kind::Deployment => queue.add(key_of(o)),
            Kind::ReplicaSet => {
                // The watch event of a scale we sent (or the ReplicaSet's deletion) ends
                // the wait for it.
                let k = key_of(o);
                let seen = matches!(change, Change::Deleted(_))
                    || self
                        .scaling
                        .get(&k)
                        .is_some_and(|(rv, _)| *rv != o.resource_version());
                if seen {
                    self.scaling.remove(&k);
                }
                if let Some(r) = controller_ref(o).filter(|r| r.kind == "Deployment") {
                    queue.add(format!("{}/{}", o.namespace(), r.name));
                }
            }
            Kind::Pod if matches!(change, Change::Deleted(_)) => {
                // Recreate waits for old pods to disappear.
                let rss = inf.of(Kind::ReplicaSet);
                if let Some(rs) = controller_ref(o).and_then(|r| rss.get(o.namespace(), &r.name)) {
                    if let Some(r) = controller_ref(rs).filter(|r| r.kind == "Deployment") {
                        queue.add(format!("{}/{}", o.namespace(), r.name));
                    }
                }
            }
            _ => {}
        }
    }

    fn sync(&mut self, key: &str, env: &mut Env, inf: &Informers) -> SyncResult {
        let (ns, name) = split_key(key);
        let Some(dobj) = inf.of(Kind::Deployment).get(ns, name).cloned() else {
            return Ok(Action::await_change());
        };
        let Object::Deployment(d) = &*dobj else {
            return Ok(Action::await_change());
        };
        let Some(spec) = &d.spec else {
            return Ok(Action::await_change());
        };
        let owned = Owned::of(&dobj, &spec.template, inf);
        if dobj.meta().deletion_timestamp.is_some() {
            self.sync_status(env, key, d, &owned.all, owned.new_rs());
            return Ok(Action::await_change());
        }
        // Each step that writes ends this sync; the write's watch event brings the next.
        if self.check_paused_conditions(env, key, d) || self.sync_revisions(env, key, d, &owned) {
            return Ok(Action::await_change());
        }
        let paused = spec.paused.unwrap_or(false);
        if paused || is_scaling_event(d, &owned.all) {
            if !self.scale(env, key, &dobj, d, &owned.objs, owned.new_idx) {
                if paused {
                    let limit = spec.revision_history_limit.unwrap_or(10);
                    self.cleanup(env, key, limit, &owned.old());
                }
                self.sync_status(env, key, d, &owned.all, owned.new_rs());
            }
            return Ok(Action::await_change());
        }
        if is_recreate(d) {
            self.recreate(env, key, &dobj, d, &owned, inf);
        } else {
            self.rollout_rolling(env, key, &dobj, d, &owned)?;
        }
        Ok(Action::await_change())
    }

    fn on_response(&mut self, id: ReqId, resp: &ApiResponse, env: &mut Env, _inf: &Informers) {
        let Some((key, scaled)) = self.sent.take(id) else {
            return;
        };
        if let Err(s) = &resp.result {
            if let Some(rs) = scaled {
                // The scale did not happen: the next sync may send it again.
                self.scaling.remove(&rs);
            }
            if !s.is_already_exists() {
                env.retry(key);
            }
        }
    }
}

/// A Deployment's ReplicaSets (oldest first) and which of them matches its template.
struct Owned<'a> {
    objs: Vec<&'a Arc<Object>>,
    all: Vec<&'a ReplicaSet>,
    new_idx: Option<usize>,
}

impl<'a> Owned<'a> {
    /// The ReplicaSets `dobj` controls, from the informer's controller index.
    fn of(dobj: &Arc<Object>, template: &PodTemplateSpec, inf: &'a Informers) -> Owned<'a> {
        let uid = dobj.meta().uid.clone().unwrap_or_default();
        let mut objs: Vec<&Arc<Object>> = inf
            .of(Kind::ReplicaSet)
            .controlled_by(&uid)
            .filter(|r| r.namespace() == dobj.namespace())
            .collect();
        objs.sort_by_key(|r| {
            (
                r.meta().creation_timestamp.as_ref().map(from_k8s_time),
                r.name().to_string(),
            )
        });
        let all: Vec<&ReplicaSet> = objs.iter().filter_map(|r| as_rs(r)).collect();
        let new_idx = all.iter().position(|r| {
            r.spec
                .as_ref()
                .and_then(|s| s.template.as_ref())
                .is_some_and(|t| equal_ignore_hash(t, template))
        });
        Owned { objs, all, new_idx }
    }

    fn new_rs(&self) -> Option<&'a ReplicaSet> {
        self.new_idx.map(|i| self.all[i])
    }

    /// The old ReplicaSets: every one but the new.
    fn old(&self) -> Vec<(&'a Arc<Object>, &'a ReplicaSet)> {
        self.objs
            .iter()
            .zip(self.all.iter())
            .enumerate()
            .filter(|(i, _)| Some(*i) != self.new_idx)
            .map(|(_, (o, r))| (*o, *r))
            .collect()
    }
}

/// `isScalingEvent`: an active ReplicaSet whose desired-replicas annotation differs
/// from the Deployment's replicas (ReplicaSets without the annotation do not count).
fn is_scaling_event(d: &Deployment, all: &[&ReplicaSet]) -> bool {
    let replicas = d.spec.as_ref().and_then(|s| s.replicas).unwrap_or(1);
    all.iter().any(|r| {
        du::rs_replicas(r) > 0
            && r.metadata
                .annotations
                .as_ref()
                .and_then(|a| a.get(du::DESIRED_REPLICAS))
                .and_then(|v| v.parse::<i32>().ok())
                .is_some_and(|desired| desired != replicas)
    })
}

impl DeploymentController {
    /// `checkPausedConditions`: Progressing Unknown with DeploymentPaused /
    /// DeploymentResumed (never over a reported ProgressDeadlineExceeded). Returns
    /// whether it wrote.
    fn check_paused_conditions(&mut self, env: &mut Env, key: &str, d: &Deployment) -> bool {
        if !has_progress_deadline(d) {
            return false;
        }
        let paused = d.spec.as_ref().and_then(|s| s.paused).unwrap_or(false);
        let status = d.status.clone().unwrap_or_default();
        let reason = du::get_condition(&status, "Progressing").and_then(|c| c.reason.clone());
        let paused_cond = reason.as_deref() == Some("DeploymentPaused");
        let timed_out = reason.as_deref() == Some("ProgressDeadlineExceeded");
        let change = match (paused, paused_cond) {
            (true, false) => Some(("DeploymentPaused", "Deployment is paused")),
            (false, true) => Some(("DeploymentResumed", "Deployment is resumed")),
            _ => None,
        };
        let (Some((reason, msg)), false) = (change, timed_out) else {
            return false;
        };
        let mut status = status;
        du::set_condition(
            &mut status,
            du::condition("Progressing", "Unknown", reason, msg, env.now()),
        );
        self.update_status(env, key, d, status);
        true
    }

    /// Revision bookkeeping: a ReplicaSet that becomes new again (rollback) takes the
    /// next revision number and remembers its old one (`SetNewReplicaSetAnnotations`),
    /// and the Deployment's revision annotation follows its new ReplicaSet. Returns
    /// whether it wrote.
    fn sync_revisions(&mut self, env: &mut Env, key: &str, d: &Deployment, o: &Owned) -> bool {
        let (Some(n), Some(ni)) = (o.new_rs(), o.new_idx) else {
            return false;
        };
        let max_old = o
            .old()
            .iter()
            .map(|(_, r)| du::revision_of(r.metadata.annotations.as_ref()))
            .max()
            .unwrap_or(0);
        let rev = du::revision_of(n.metadata.annotations.as_ref());
        if rev <= max_old {
            let mut nr = n.clone();
            let a = nr.metadata.annotations.get_or_insert_with(BTreeMap::new);
            let history = a
                .get(du::REVISION_HISTORY)
                .filter(|h| !h.is_empty())
                .map_or(rev.to_string(), |h| format!("{h},{rev}"));
            a.insert(du::REVISION_HISTORY.into(), history);
            a.insert(du::REVISION.into(), (max_old + 1).to_string());
            let obj = o.objs[ni];
            let req = ApiRequest::new(Verb::Update, Kind::ReplicaSet, obj.namespace(), obj.name())
                .with_body(Body::Object(nr.into()));
            self.send(env, key, req);
            return true;
        }
        if du::revision_of(d.metadata.annotations.as_ref()) != rev && rev > 0 {
            let mut nd = d.clone();
            nd.metadata
                .annotations
                .get_or_insert_with(BTreeMap::new)
                .insert(du::REVISION.into(), rev.to_string());
            let (ns, name) = split_key(key);
            let req = ApiRequest::new(Verb::Update, Kind::Deployment, ns, name)
                .with_body(Body::Object(nd.into()));
            self.send(env, key, req);
            return true;
        }
        false
    }

    /// `rolloutRolling`: scale up the new ReplicaSet, else scale down old ones, else
    /// clean up history and sync the status.
    fn rollout_rolling(
        &mut self,
        env: &mut Env,
        key: &str,
        dobj: &Arc<Object>,
        d: &Deployment,
        o: &Owned,
    ) -> Result<(), SyncError> {
        let Some(ni) = o.new_idx else {
            self.create_new_rs(env, key, dobj, d, &o.all);
            return Ok(());
        };
        let new = o.all[ni];
        let replicas = d.spec.as_ref().and_then(|s| s.replicas).unwrap_or(1);
        // reconcileNewReplicaSet
        let new_replicas = du::rs_replicas(new);
        let target = if new_replicas > replicas {
            replicas
        } else {
            du::new_rs_new_replicas(d, &o.all, new_replicas).map_err(SyncError::new)?
        };
        if target != new_replicas && self.scale_rs(env, key, dobj, d, o.objs[ni], target) {
            return Ok(());
        }
        let old = o.old();
        if self.reconcile_old_replica_sets(env, key, dobj, d, new, &o.all, &old)? {
            return Ok(());
        }
        let status = calculate_status(d, &o.all, Some(new), env.now());
        if du::deployment_complete(d, &status) {
            let limit = d.spec.as_ref().and_then(|s| s.revision_history_limit);
            self.cleanup(env, key, limit.unwrap_or(10), &old);
        }
        self.sync_status(env, key, d, &o.all, Some(new));
        Ok(())
    }

    /// `reconcileOldReplicaSets`: `cleanupUnhealthyReplicas` (oldest first: scale away
    /// unavailable pods), then `scaleDownOldReplicaSetsForRollingUpdate`; one write per
    /// ReplicaSet. Returns whether it wrote.
    #[allow(clippy::too_many_arguments)]
    fn reconcile_old_replica_sets(
        &mut self,
        env: &mut Env,
        key: &str,
        dobj: &Arc<Object>,
        d: &Deployment,
        new: &ReplicaSet,
        all: &[&ReplicaSet],
        old: &[(&Arc<Object>, &ReplicaSet)],
    ) -> Result<bool, SyncError> {
        let old_total: i32 = old.iter().map(|(_, r)| du::rs_replicas(r)).sum();
        if old_total <= 0 {
            return Ok(false);
        }
        let replicas = d.spec.as_ref().and_then(|s| s.replicas).unwrap_or(1);
        let all_pods: i32 = all.iter().map(|r| du::rs_replicas(r)).sum();
        let min_available = replicas - du::max_unavailable(d);
        let new_unavailable = du::rs_replicas(new) - du::rs_available(new);
        let mut max_scaled_down = all_pods - min_available - new_unavailable;
        if max_scaled_down <= 0 {
            return Ok(false);
        }
        let mut targets: Vec<i32> = old.iter().map(|(_, r)| du::rs_replicas(r)).collect();
        for (i, (_, r)) in old.iter().enumerate() {
            if max_scaled_down <= 0 {
                break;
            }
            let avail = du::rs_available(r);
            if targets[i] == 0 || targets[i] == avail {
                continue;
            }
            if targets[i] < avail {
                return Err(SyncError::new(
                    "when cleaning up unhealthy replicas, got invalid request to scale down",
                ));
            }
            let down = max_scaled_down.min(targets[i] - avail);
            targets[i] -= down;
            max_scaled_down -= down;
        }
        let available: i32 = all.iter().map(|r| du::rs_available(r)).sum();
        let mut total_down = available - min_available;
        for t in targets.iter_mut() {
            if total_down <= 0 {
                break;
            }
            if *t == 0 {
                continue;
            }
            let down = total_down.min(*t);
            total_down -= down;
            *t -= down;
        }
        let mut sent = false;
        for ((o, r), t) in old.iter().zip(targets) {
            if t != du::rs_replicas(r) {
                sent |= self.scale_rs(env, key, dobj, d, o, t);
            }
        }
        Ok(sent)
    }
}

impl DeploymentController {
    /// `scale`: a scaling event (or a paused Deployment). With one active ReplicaSet (or
    /// none: the newest) that one takes `spec.replicas`; with a saturated new ReplicaSet
    /// the old ones go to zero; otherwise (RollingUpdate) the difference between
    /// `replicas + maxSurge` and the active ReplicaSets' sum is spread proportionally, and
    /// every active ReplicaSet is written with the new desired/max annotations even when
    /// its size does not change (that write is what ends the scaling event). Returns
    /// whether anything was sent.
    fn scale(
        &mut self,
        env: &mut Env,
        key: &str,
        dobj: &Arc<Object>,
        d: &Deployment,
        rs_objs: &[&Arc<Object>],
        new_idx: Option<usize>,
    ) -> bool {
        let replicas = d.spec.as_ref().and_then(|s| s.replicas).unwrap_or(1);
        // rs_objs is sorted oldest first; the new ReplicaSet goes last (upstream appends it).
        let mut order: Vec<usize> = (0..rs_objs.len()).filter(|i| Some(*i) != new_idx).collect();
        order.extend(new_idx);
        let size = |i: usize| as_rs(rs_objs[i]).map_or(0, du::rs_replicas);
        let active: Vec<usize> = order.iter().copied().filter(|i| size(*i) > 0).collect();
        // FindActiveOrLatest.
        let active_or_latest = match active.len() {
            0 => new_idx.or_else(|| rs_objs.len().checked_sub(1)),
            1 => Some(active[0]),
            _ => None,
        };
        if let Some(i) = active_or_latest {
            // Upstream returns here without a write when the size already matches; the
            // annotations are refreshed here too, so a stale desired-replicas annotation
            // cannot keep the Deployment in a scaling event forever.
            return self.scale_rs(env, key, dobj, d, rs_objs[i], replicas);
        }
        // IsSaturated(newRS): old ReplicaSets are scaled to zero.
        if let Some(new) = new_idx.and_then(|i| as_rs(rs_objs[i])) {
            let desired = new
                .metadata
                .annotations
                .as_ref()
                .and_then(|a| a.get(du::DESIRED_REPLICAS))
                .and_then(|v| v.parse::<i32>().ok());
            if du::rs_replicas(new) == replicas
                && desired == Some(replicas)
                && du::rs_available(new) == replicas
            {
                let mut sent = false;
                for &i in active.iter().filter(|i| Some(**i) != new_idx) {
                    sent |= self.scale_rs_if_resized(env, key, dobj, d, rs_objs[i], 0);
                }
                return sent;
            }
        }
        if is_recreate(d) {
            return false;
        }
        let allowed = if replicas > 0 {
            replicas + du::max_surge(d)
        } else {
            0
        };
        let current: i32 = active.iter().map(|i| size(*i)).sum();
        let to_add = allowed - current;
        // Larger ReplicaSets first; among equals newer first when adding
        // (ReplicaSetsBySizeNewer), older first when removing (ReplicaSetsBySizeOlder).
        let mut sorted = active.clone();
        let created = |i: usize| {
            (
                rs_objs[i]
                    .meta()
                    .creation_timestamp
                    .as_ref()
                    .map(from_k8s_time),
                rs_objs[i].name().to_string(),
            )
        };
        if to_add > 0 {
            sorted.sort_by(|a, b| size(*b).cmp(&size(*a)).then(created(*b).cmp(&created(*a))));
        } else if to_add < 0 {
            sorted.sort_by(|a, b| size(*b).cmp(&size(*a)).then(created(*a).cmp(&created(*b))));
        }
        let mut added = 0;
        let mut sizes: Vec<(usize, i32)> = Vec::new();
        for &i in &sorted {
            let r = as_rs(rs_objs[i]).expect("rs");
            if to_add != 0 {
                let p = du::proportion(r, d, to_add, added);
                added += p;
                sizes.push((i, size(i) + p));
            } else {
                sizes.push((i, size(i)));
            }
        }
        if let Some(first) = sizes.first_mut() {
            if to_add != 0 {
                first.1 = (first.1 + to_add - added).max(0);
            }
        }
        let mut sent = false;
        for (i, n) in sizes {
            sent |= self.scale_rs(env, key, dobj, d, rs_objs[i], n);
        }
        sent
    }

    /// `scaleReplicaSetAndRecordEvent`: writes only when the size changes.
    fn scale_rs_if_resized(
        &mut self,
        env: &mut Env,
        key: &str,
        dobj: &Arc<Object>,
        d: &Deployment,
        rs_obj: &Arc<Object>,
        n: i32,
    ) -> bool {
        if as_rs(rs_obj).is_some_and(|r| du::rs_replicas(r) == n) {
            return false;
        }
        self.scale_rs(env, key, dobj, d, rs_obj, n)
    }

    /// `rolloutRecreate`: scale every old ReplicaSet to zero, wait for their pods to be
    /// gone, then create or scale up the new one.
    fn recreate(
        &mut self,
        env: &mut Env,
        key: &str,
        dobj: &Arc<Object>,
        d: &Deployment,
        o: &Owned,
        inf: &Informers,
    ) {
        let old = o.old();
        let mut sent = false;
        for (obj, r) in &old {
            if du::rs_replicas(r) > 0 {
                sent |= self.scale_rs(env, key, dobj, d, obj, 0);
            }
        }
        if sent {
            return;
        }
        let pods = inf.of(Kind::Pod);
        let old_pods_running = old
            .iter()
            .filter_map(|(obj, _)| obj.meta().uid.as_deref())
            .flat_map(|uid| pods.controlled_by(uid))
            .any(|p| matches!(&**p, Object::Pod(x) if is_pod_active(x) || x.metadata.deletion_timestamp.is_some()));
        if old_pods_running {
            self.sync_status(env, key, d, &o.all, o.new_rs());
            return;
        }
        let Some(ni) = o.new_idx else {
            self.create_new_rs(env, key, dobj, d, &o.all);
            return;
        };
        let replicas = d.spec.as_ref().and_then(|s| s.replicas).unwrap_or(1);
        if !self.scale_rs(env, key, dobj, d, o.objs[ni], replicas) {
            let status = calculate_status(d, &o.all, Some(o.all[ni]), env.now());
            if du::deployment_complete(d, &status) {
                let limit = d.spec.as_ref().and_then(|s| s.revision_history_limit);
                self.cleanup(env, key, limit.unwrap_or(10), &old);
            }
            self.sync_status(env, key, d, &o.all, Some(o.all[ni]));
        }
    }

    /// `cleanupDeployment`: of the old ReplicaSets not being deleted, the
    /// `count − revisionHistoryLimit` lowest revisions are deleted, each only if it is
    /// scaled to zero with no pods left and its status is current (otherwise skipped).
    fn cleanup(
        &mut self,
        env: &mut Env,
        key: &str,
        limit: i32,
        old: &[(&Arc<Object>, &ReplicaSet)],
    ) {
        let mut alive: Vec<&(&Arc<Object>, &ReplicaSet)> = old
            .iter()
            .filter(|(o, _)| o.meta().deletion_timestamp.is_none())
            .collect();
        let excess = alive.len() as i32 - limit.max(0);
        if excess <= 0 {
            return;
        }
        alive.sort_by_key(|(_, r)| du::revision_of(r.metadata.annotations.as_ref()));
        for (o, r) in alive.into_iter().take(excess as usize) {
            let status = r.status.as_ref();
            if status.map_or(0, |s| s.replicas) != 0
                || du::rs_replicas(r) != 0
                || r.metadata.generation.unwrap_or(0)
                    > status.and_then(|s| s.observed_generation).unwrap_or(0)
            {
                continue;
            }
            let req = ApiRequest::new(Verb::Delete, Kind::ReplicaSet, o.namespace(), o.name());
            self.send(env, key, req);
        }
    }
}

#[cfg(test)]
#[path = "deployment_tests.rs"]
mod tests;
