//! The garbage collector: deletes dependents whose owners are gone (background
//! propagation), deletes dependents of owners in foreground deletion then releases the
//! owner, and orphans dependents of owners deleted with propagationPolicy=Orphan.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::api::{ApiRequest, Body, PatchType, Propagation, Verb};
use crate::client::{Change, WorkQueue};
use crate::controllers::{Action, Controller, Env, Informers, SyncResult};
use crate::object::{Kind, Object};
use crate::time::{Time, SECOND};

/// How often the collector re-scans every dependent (catches deletions it missed).
const RESCAN: Time = 30 * SECOND;

/// The garbage collector.
#[derive(Default)]
pub struct GarbageCollector {
    last_scan: Time,
    /// Dependents already asked to be deleted, and when. A request that failed (etcd or
    /// the apiserver down) is asked again after `RESCAN`, as upstream's attemptToDelete
    /// queue retries with backoff.
    asked: BTreeMap<String, Time>,
}

/// The kinds the collector watches: their objects are dependents, and owners whose
/// existence it can check.
const KINDS: &[Kind] = &[
    Kind::Deployment,
    Kind::ReplicaSet,
    Kind::Pod,
    Kind::Service,
    Kind::EndpointSlice,
    Kind::StatefulSet,
    Kind::DaemonSet,
    Kind::ControllerRevision,
    Kind::PersistentVolumeClaim,
];

/// Whether owners of this kind are tracked (an untracked owner is assumed to exist).
fn tracked(kind: &str) -> bool {
    KINDS.iter().any(|k| k.info().kind == kind)
}

fn all_objects(inf: &Informers) -> impl Iterator<Item = &Arc<Object>> {
    KINDS.iter().flat_map(move |&k| inf.of(k).iter())
}

fn id(o: &Object) -> String {
    format!("{}/{}/{}", o.kind(), o.namespace(), o.name())
}

impl GarbageCollector {
    fn recently_asked(&self, key: &str, now: Time) -> bool {
        self.asked.get(key).is_some_and(|t| now < t + RESCAN)
    }

    fn scan(&mut self, env: &mut Env, inf: &Informers) {
        let now = env.now();
        let uids: BTreeMap<String, &Arc<Object>> = all_objects(inf)
            .filter_map(|o| o.meta().uid.clone().map(|u| (u, o)))
            .collect();
        // Owners waiting for foreground deletion: count their remaining dependents.
        let mut dependents_of: BTreeMap<String, usize> = BTreeMap::new();
        for o in all_objects(inf) {
            let refs = o.meta().owner_references.clone().unwrap_or_default();
            if refs.is_empty() {
                continue;
            }
            for r in &refs {
                *dependents_of.entry(r.uid.clone()).or_insert(0) += 1;
            }
            let owners: Vec<Option<&&Arc<Object>>> =
                refs.iter().map(|r| uids.get(&r.uid)).collect();
            // Owners of kinds this collector does not watch are assumed to exist.
            let all_gone = refs
                .iter()
                .all(|r| tracked(&r.kind) && !uids.contains_key(&r.uid));
            let key = id(o);
            if all_gone && o.meta().deletion_timestamp.is_none() && !self.recently_asked(&key, now)
            {
                self.asked.insert(key, now);
                let mut req = ApiRequest::new(Verb::Delete, o.kind(), o.namespace(), o.name());
                req.options.propagation = Some(Propagation::Background);
                env.fire(req);
                continue;
            }
            for (r, owner) in refs.iter().zip(owners) {
                let Some(owner) = owner else { continue };
                let fins = owner.meta().finalizers.clone().unwrap_or_default();
                if owner.meta().deletion_timestamp.is_none() {
                    continue;
                }
                if fins.iter().any(|f| f == "foregroundDeletion")
                    && o.meta().deletion_timestamp.is_none()
                    && !self.recently_asked(&key, now)
                {
                    self.asked.insert(key.clone(), now);
                    let mut req = ApiRequest::new(Verb::Delete, o.kind(), o.namespace(), o.name());
                    req.options.propagation = Some(Propagation::Foreground);
                    env.fire(req);
                } else if fins.iter().any(|f| f == "orphan") {
                    let remaining: Vec<_> =
                        refs.iter().filter(|x| x.uid != r.uid).cloned().collect();
                    let patch = serde_json::json!({"metadata": {"ownerReferences": if remaining.is_empty() { serde_json::Value::Null } else { serde_json::to_value(remaining).unwrap_or_default() }}});
                    env.fire(
                        ApiRequest::new(Verb::Patch, o.kind(), o.namespace(), o.name())
                            .with_body(Body::Patch(PatchType::Merge, patch)),
                    );
                }
            }
        }
        // Release owners whose dependents are all gone (or orphaned).
        for o in all_objects(inf) {
            let m = o.meta();
            if m.deletion_timestamp.is_none() {
                continue;
            }
            let fins = m.finalizers.clone().unwrap_or_default();
            let uid = m.uid.clone().unwrap_or_default();
            let has_dependents = dependents_of.get(&uid).copied().unwrap_or(0) > 0;
            let release: Vec<&str> = ["foregroundDeletion", "orphan"]
                .into_iter()
                .filter(|f| fins.iter().any(|x| x == f) && !has_dependents)
                .collect();
            if release.is_empty() {
                continue;
            }
            let kept: Vec<String> = fins
                .iter()
                .filter(|f| !release.contains(&f.as_str()))
                .cloned()
                .collect();
            let patch = serde_json::json!({"metadata": {"finalizers": if kept.is_empty() { serde_json::Value::Null } else { serde_json::json!(kept) }}});
            env.fire(
                ApiRequest::new(Verb::Patch, o.kind(), o.namespace(), o.name())
                    .with_body(Body::Patch(PatchType::Merge, patch)),
            );
        }
    }
}

impl Controller for GarbageCollector {
    fn name(&self) -> &'static str {
        "garbage-collector-controller"
    }

    fn watches(&self) -> &'static [Kind] {
        KINDS
    }

    fn on_change(
        &mut self,
        _kind: Kind,
        change: &Change,
        queue: &mut WorkQueue<String>,
        _inf: &Informers,
        _now: Time,
    ) {
        match change {
            Change::Deleted(o) => {
                self.asked.remove(&id(o));
                queue.add("scan".into());
            }
            Change::Updated(old, new)
                if old.meta().deletion_timestamp.is_none()
                    && new.meta().deletion_timestamp.is_some() =>
            {
                queue.add("scan".into());
            }
            Change::Updated(old, new)
                if old.meta().owner_references != new.meta().owner_references =>
            {
                queue.add("scan".into());
            }
            _ => {}
        }
    }

    fn sync(&mut self, _key: &str, env: &mut Env, inf: &Informers) -> SyncResult {
        self.last_scan = env.now();
        self.scan(env, inf);
        Ok(Action::await_change())
    }

    fn tick(&mut self, env: &mut Env, inf: &Informers) {
        if env.now() >= self.last_scan + RESCAN {
            self.last_scan = env.now();
            self.scan(env, inf);
        }
    }
}
