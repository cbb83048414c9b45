//! The StatefulSet controller (upstream `pkg/controller/statefulset`): pods with stable
//! names and storage, created in order (OrderedReady) or all at once (Parallel), removed
//! from the highest ordinal, rolled from the highest ordinal down to the partition, with
//! ControllerRevision history and the set's status.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use k8s_openapi::api::apps::v1::{ControllerRevision, StatefulSet};
use k8s_openapi::api::core::v1::PodTemplateSpec;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use crate::api::{ApiRequest, ApiResponse, ApiResult, Body, ReqId, Subresource, Verb};
use crate::client::recorder::{NORMAL, WARNING};
use crate::client::{Change, Pending, WorkQueue};
use crate::controllers::deployment_util::scaled_value;
use crate::controllers::history::{self, template_of, template_patch};
use crate::controllers::statefulset_pods::*;
use crate::controllers::util::{key_of, split_key};
use crate::controllers::{Action, Controller, Env, Informers, SyncError, SyncResult};
use crate::object::{Kind, Object};
use crate::selector::LabelSelector;
use crate::time::Time;

/// What a request in flight was for; each names its set's key.
#[derive(Debug)]
enum Sent {
    /// A pod create (its name).
    CreatePod(String, String),
    /// A pod delete (its name).
    DeletePod(String, String),
    /// A claim create (claim name, pod name).
    CreateClaim(String, String, String),
    /// A revision create or renumbering.
    Revision(String),
    /// Anything else whose failure only retries the set.
    Other(String),
}

/// The StatefulSet controller.
#[derive(Default)]
pub struct StatefulSetController {
    sent: Pending<Sent>,
    /// Pods whose create or delete was sent and not yet seen by the pod informer, per
    /// set: the set waits for them, as a StatefulSet never acts on a stale view of a pod.
    expect: BTreeMap<String, BTreeSet<String>>,
    /// Revisions created that the informer may not hold yet, by name.
    created_revisions: BTreeMap<String, ControllerRevision>,
}

/// The revisions a sync works with.
struct Revisions {
    current: ControllerRevision,
    update: ControllerRevision,
    /// Every revision of the set, oldest first.
    all: Vec<(Arc<Object>, ControllerRevision)>,
}

fn rev_name(r: &ControllerRevision) -> &str {
    r.metadata.name.as_deref().unwrap_or("")
}

impl StatefulSetController {
    fn owner_key(o: &Object, inf: &Informers) -> Option<String> {
        crate::controllers::util::controller_key(o, Kind::StatefulSet, inf)
    }

    fn expect(&mut self, key: &str, pod: &str) {
        self.expect
            .entry(key.to_string())
            .or_default()
            .insert(pod.to_string());
    }

    fn observed(&mut self, key: &str, pod: &str) {
        if let Some(e) = self.expect.get_mut(key) {
            e.remove(pod);
            if e.is_empty() {
                self.expect.remove(key);
            }
        }
    }

    /// `getStatefulSetRevisions`: the current and update revisions, creating the update
    /// revision (or renumbering an equal older one, a rollback) when needed. `None`
    /// while a revision write is in flight.
    fn revisions(
        &mut self,
        key: &str,
        set: &Arc<Object>,
        s: &StatefulSet,
        env: &mut Env,
        inf: &Informers,
    ) -> Option<Revisions> {
        let uid = set.meta().uid.clone().unwrap_or_default();
        let mut all = history::owned_revisions(inf, set.namespace(), &uid);
        for (name, r) in &self.created_revisions {
            if r.metadata.namespace.as_deref() == Some(set.namespace())
                && crate::controllers::util::controller_of(&r.metadata)
                    .is_some_and(|o| o.uid == uid)
                && !all.iter().any(|(_, x)| rev_name(x) == name)
            {
                all.push((Arc::new(Object::from(r.clone())), r.clone()));
            }
        }
        all.sort_by_key(|(_, r)| r.revision);
        let spec = s.spec.clone().unwrap_or_default();
        let data = template_patch(&spec.template);
        let max = history::max_revision(&all);
        let collision = s.status.as_ref().and_then(|st| st.collision_count);
        let equal = history::equal_revisions(&all, &data);
        let update = match equal.last() {
            Some(eq) if eq.revision == max => (*eq).clone(),
            Some(eq) => {
                let mut r = (*eq).clone();
                r.revision = max + 1;
                let req = ApiRequest::new(
                    Verb::Update,
                    Kind::ControllerRevision,
                    set.namespace(),
                    rev_name(&r),
                )
                .with_body(Body::Object(r.clone().into()));
                let id = env.send(req);
                self.sent.insert(id, Sent::Revision(key.to_string()));
                return None;
            }
            None => {
                let labels = spec
                    .template
                    .metadata
                    .as_ref()
                    .and_then(|m| m.labels.as_ref());
                let r = history::new_revision(set, labels, data, max + 1, collision);
                let req =
                    ApiRequest::new(Verb::Create, Kind::ControllerRevision, set.namespace(), "")
                        .with_body(Body::Object(r.into()));
                let id = env.send(req);
                self.sent.insert(id, Sent::Revision(key.to_string()));
                return None;
            }
        };
        let current_name = s
            .status
            .as_ref()
            .and_then(|st| st.current_revision.clone())
            .unwrap_or_default();
        let current = all
            .iter()
            .map(|(_, r)| r)
            .find(|r| rev_name(r) == current_name)
            .cloned()
            .unwrap_or_else(|| update.clone());
        Some(Revisions {
            current,
            update,
            all,
        })
    }

    fn create_pod(
        &mut self,
        key: &str,
        set: &Arc<Object>,
        s: &StatefulSet,
        revs: &Revisions,
        ordinal: i32,
        inf: &Informers,
        env: &mut Env,
    ) {
        let spec = s.spec.clone().unwrap_or_default();
        let use_current = match spec
            .update_strategy
            .as_ref()
            .and_then(|u| u.type_.as_deref())
        {
            Some("OnDelete") => false,
            _ => {
                let partition = spec
                    .update_strategy
                    .as_ref()
                    .and_then(|u| u.rolling_update.as_ref())
                    .and_then(|r| r.partition)
                    .unwrap_or(0);
                ordinal - spec.ordinals.as_ref().and_then(|o| o.start).unwrap_or(0) < partition
            }
        };
        let rev = if use_current {
            &revs.current
        } else {
            &revs.update
        };
        let template: PodTemplateSpec = template_of(rev).unwrap_or_else(|| spec.template.clone());
        let pod = new_pod(set, s, &template, rev_name(rev), ordinal);
        let pname = pod.metadata.name.clone().unwrap_or_default();
        // createPersistentVolumeClaims: the claims first, those that do not exist yet.
        for claim in claims_for(set, s, ordinal) {
            let cname = claim.metadata.name.clone().unwrap_or_default();
            if inf
                .of(Kind::PersistentVolumeClaim)
                .get(set.namespace(), &cname)
                .is_some()
            {
                continue;
            }
            let req = ApiRequest::new(
                Verb::Create,
                Kind::PersistentVolumeClaim,
                set.namespace(),
                "",
            )
            .with_body(Body::Object(claim.into()));
            let id = env.send(req);
            self.sent
                .insert(id, Sent::CreateClaim(key.to_string(), cname, pname.clone()));
        }
        let req = ApiRequest::new(Verb::Create, Kind::Pod, set.namespace(), "")
            .with_body(Body::Object(pod.into()));
        let id = env.send(req);
        self.sent
            .insert(id, Sent::CreatePod(key.to_string(), pname.clone()));
        self.expect(key, &pname);
    }

    fn delete_pod(&mut self, key: &str, pod: &Arc<Object>, env: &mut Env) {
        let id = env.send(ApiRequest::new(
            Verb::Delete,
            Kind::Pod,
            pod.namespace(),
            pod.name(),
        ));
        self.sent
            .insert(id, Sent::DeletePod(key.to_string(), pod.name().to_string()));
        self.expect(key, pod.name());
    }

    /// whenScaled=Delete: the condemned pod's claims follow it.
    #[allow(clippy::too_many_arguments)]
    fn claims_follow_pod(
        &mut self,
        key: &str,
        set: &Arc<Object>,
        s: &StatefulSet,
        pod: &Arc<Object>,
        ordinal: i32,
        inf: &Informers,
        env: &mut Env,
    ) {
        for c in claims_owned_by_condemned_pod(set, s, pod, ordinal, inf) {
            let req = ApiRequest::new(
                Verb::Update,
                Kind::PersistentVolumeClaim,
                set.namespace(),
                c.name(),
            );
            let id = env.send(req.with_body(Body::Object(c)));
            self.sent.insert(id, Sent::Other(key.to_string()));
        }
    }

    /// `updateStatefulSet` after the revisions are known: create, recreate, scale down
    /// and roll, one step at a time under OrderedReady.
    fn manage(
        &mut self,
        key: &str,
        set: &Arc<Object>,
        s: &StatefulSet,
        revs: &Revisions,
        pods: &[&Arc<Object>],
        inf: &Informers,
        env: &mut Env,
    ) {
        let spec = s.spec.clone().unwrap_or_default();
        let now = env.now();
        let replicas = spec.replicas.unwrap_or(1).max(0);
        let start = spec.ordinals.as_ref().and_then(|o| o.start).unwrap_or(0);
        let monotonic = spec.pod_management_policy.as_deref() != Some("Parallel");
        let min_ready = spec.min_ready_seconds.unwrap_or(0);
        let c = classify(set.name(), pods, start, replicas);
        // The pods in range: create what is missing, recreate terminal pods.
        for (i, slot) in c.replicas.iter().enumerate() {
            let ordinal = start + i as i32;
            let Some(o) = slot else {
                self.create_pod(key, set, s, revs, ordinal, inf, env);
                if monotonic {
                    return;
                }
                continue;
            };
            let Some(p) = as_pod(o) else { continue };
            if is_terminal(p) && !is_terminating(p) {
                // Failed and Succeeded pods alike (`isFailed || isSucceeded`).
                let msg = format!(
                    "StatefulSet {}/{} is recreating failed Pod {}",
                    set.namespace(),
                    set.name(),
                    o.name()
                );
                env.event(set, WARNING, "RecreatingFailedPod", &msg);
                self.delete_pod(key, o, env);
                if monotonic {
                    return;
                }
                continue;
            }
            if monotonic && (is_terminating(p) || !is_running_and_ready(p)) {
                return;
            }
        }
        // Condemned pods go from the highest ordinal, one at a time under OrderedReady,
        // once every other pod is healthy.
        let first_unhealthy = c
            .replicas
            .iter()
            .flatten()
            .chain(c.condemned.iter())
            .find(|o| as_pod(o).is_some_and(|p| !is_healthy(p, min_ready, now)))
            .map(|o| o.name().to_string());
        for o in &c.condemned {
            let Some(p) = as_pod(o) else { continue };
            if is_terminating(p) {
                if monotonic {
                    return;
                }
                continue;
            }
            if monotonic && !is_running_and_ready(p) && first_unhealthy.as_deref() != Some(o.name())
            {
                return;
            }
            let ordinal = ordinal_of(set.name(), o.name()).unwrap_or(0);
            self.claims_follow_pod(key, set, s, o, ordinal, inf, env);
            self.delete_pod(key, o, env);
            if monotonic {
                return;
            }
        }
        self.roll(key, s, revs, &c, min_ready, now, env);
    }

    /// RollingUpdate: outdated pods from the highest ordinal down to the partition, at
    /// most maxUnavailable unavailable at once. OnDelete waits for the user.
    fn roll(
        &mut self,
        key: &str,
        s: &StatefulSet,
        revs: &Revisions,
        c: &Classified,
        min_ready: i32,
        now: Time,
        env: &mut Env,
    ) {
        let spec = s.spec.clone().unwrap_or_default();
        let strategy = spec.update_strategy.clone().unwrap_or_default();
        if strategy.type_.as_deref() == Some("OnDelete") {
            return;
        }
        let ru = strategy.rolling_update.unwrap_or_default();
        let partition = ru.partition.unwrap_or(0).max(0) as usize;
        let replicas = c.replicas.len();
        let max_unavailable = scaled_value(
            ru.max_unavailable.as_ref().unwrap_or(&IntOrString::Int(1)),
            replicas as i32,
            false,
        )
        .unwrap_or(1)
        .max(1) as usize;
        let unavailable = c
            .replicas
            .iter()
            .filter(|o| {
                !o.and_then(|o| as_pod(o))
                    .is_some_and(|p| is_healthy(p, min_ready, now))
            })
            .count();
        if unavailable >= max_unavailable {
            return;
        }
        let mut budget = max_unavailable - unavailable;
        let update = rev_name(&revs.update).to_string();
        for target in (partition..replicas).rev() {
            let Some(o) = c.replicas[target] else {
                continue;
            };
            let Some(p) = as_pod(o) else { continue };
            if pod_revision(p) != update && !is_terminating(p) {
                self.delete_pod(key, o, env);
                budget -= 1;
                if budget == 0 {
                    return;
                }
            }
        }
    }

    fn write_status(
        &mut self,
        key: &str,
        s: &StatefulSet,
        revs: &Revisions,
        pods: &[&Arc<Object>],
        env: &mut Env,
    ) {
        let mut status = replica_status(
            s,
            pods,
            rev_name(&revs.current),
            rev_name(&revs.update),
            env.now(),
        );
        // completeRollingUpdate.
        let rolling = s
            .spec
            .as_ref()
            .and_then(|s| s.update_strategy.as_ref())
            .and_then(|u| u.type_.as_deref())
            != Some("OnDelete");
        let want = s.spec.as_ref().and_then(|s| s.replicas).unwrap_or(1);
        if rolling
            && status.updated_replicas == Some(status.replicas)
            && status.ready_replicas == Some(status.replicas)
            && status.replicas == want
        {
            status.current_revision = status.update_revision.clone();
            status.current_replicas = status.updated_replicas;
        }
        status.conditions = s.status.as_ref().and_then(|st| st.conditions.clone());
        if s.status.as_ref() == Some(&status) {
            return;
        }
        let mut updated = s.clone();
        updated.status = Some(status);
        let (ns, name) = split_key(key);
        let req = ApiRequest::new(Verb::Update, Kind::StatefulSet, ns, name)
            .with_subresource(Subresource::Status)
            .with_body(Body::Object(updated.into()));
        let id = env.send(req);
        self.sent.insert(id, Sent::Other(key.to_string()));
    }

    /// `truncateHistory`: revisions beyond revisionHistoryLimit that no pod uses.
    fn prune(
        &mut self,
        key: &str,
        s: &StatefulSet,
        revs: &Revisions,
        pods: &[&Arc<Object>],
        env: &mut Env,
    ) {
        let mut live: Vec<&str> = vec![rev_name(&revs.current), rev_name(&revs.update)];
        live.extend(pods.iter().filter_map(|o| as_pod(o)).map(pod_revision));
        let limit = s
            .spec
            .as_ref()
            .and_then(|s| s.revision_history_limit)
            .unwrap_or(10);
        for r in history::revisions_to_prune(&revs.all, &live, limit) {
            let ns = r.metadata.namespace.as_deref().unwrap_or("");
            let id = env.send(ApiRequest::new(
                Verb::Delete,
                Kind::ControllerRevision,
                ns,
                rev_name(r),
            ));
            self.sent.insert(id, Sent::Other(key.to_string()));
        }
    }
}

impl Controller for StatefulSetController {
    fn name(&self) -> &'static str {
        "statefulset-controller"
    }

    fn watches(&self) -> &'static [Kind] {
        &[
            Kind::StatefulSet,
            Kind::Pod,
            Kind::ControllerRevision,
            Kind::PersistentVolumeClaim,
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
            Kind::StatefulSet => queue.add(key_of(change.object())),
            Kind::Pod => {
                let pod = change.object();
                let Some(key) = Self::owner_key(pod, inf) else {
                    return;
                };
                let seen = match change {
                    Change::Added(_) | Change::Deleted(_) => true,
                    Change::Updated(old, new) => {
                        old.meta().deletion_timestamp.is_none()
                            && new.meta().deletion_timestamp.is_some()
                    }
                };
                if seen {
                    self.observed(&key, pod.name());
                }
                queue.add(key);
            }
            Kind::ControllerRevision => {
                if let Some(key) = Self::owner_key(change.object(), inf) {
                    if matches!(change, Change::Added(_)) {
                        self.created_revisions.remove(change.object().name());
                    }
                    queue.add(key);
                }
            }
            _ => {}
        }
    }

    fn sync(&mut self, key: &str, env: &mut Env, inf: &Informers) -> SyncResult {
        let (ns, name) = split_key(key);
        let Some(set) = inf.of(Kind::StatefulSet).get(ns, name).cloned() else {
            self.expect.remove(key);
            return Ok(Action::await_change());
        };
        let Object::StatefulSet(s) = &*set else {
            return Ok(Action::await_change());
        };
        if set.meta().deletion_timestamp.is_some() {
            return Ok(Action::await_change());
        }
        let uid = set.meta().uid.clone().unwrap_or_default();
        let selector = LabelSelector::from_k8s(s.spec.as_ref().map(|s| &s.selector))
            .map_err(SyncError::new)?;
        let pods: Vec<&Arc<Object>> = inf
            .of(Kind::Pod)
            .controlled_by(&uid)
            .filter(|p| p.namespace() == ns && selector.matches_object(p))
            .collect();
        let Some(revs) = self.revisions(key, &set, s, env, inf) else {
            return Ok(Action::await_change());
        };
        if !self.expect.contains_key(key) {
            self.manage(key, &set, s, &revs, &pods, inf, env);
        }
        self.write_status(key, s, &revs, &pods, env);
        self.prune(key, s, &revs, &pods, env);
        let min_ready = s
            .spec
            .as_ref()
            .and_then(|s| s.min_ready_seconds)
            .unwrap_or(0);
        let waiting_available = min_ready > 0
            && pods.iter().filter_map(|o| as_pod(o)).any(|p| {
                is_running_and_ready(p) && !is_running_and_available(p, min_ready, env.now())
            });
        if waiting_available {
            return Ok(Action::requeue(1000));
        }
        Ok(Action::await_change())
    }

    fn on_response(&mut self, id: ReqId, resp: &ApiResponse, env: &mut Env, inf: &Informers) {
        self.handle_response(id, resp, env, inf);
    }
}

#[path = "statefulset_responses.rs"]
mod responses;

#[cfg(test)]
#[path = "statefulset_tests.rs"]
mod tests;
