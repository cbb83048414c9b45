//! The garbage collector: deletes dependents whose owners are gone (background
//! propagation), deletes dependents of owners in foreground deletion then releases the
//! owner, and orphans dependents of owners deleted with propagationPolicy=Orphan.
//!
//! Upstream's collector watches every resource through metadata informers. Here the kinds
//! the controller manager's shared informers hold are seen at once; every other kind
//! (ConfigMaps, Secrets, Jobs, RBAC objects, …) is listed every [`RESCAN`] and after a
//! deletion, so a dependent of any kind is collected and an owner of any kind released.
//! An owner missing from a list is only trusted to be gone for dependents created before
//! that list was asked for (upstream checks with a live GET instead).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;

use crate::api::{ApiRequest, ApiResponse, ApiResult, Body, PatchType, Propagation, ReqId, Verb};
use crate::client::{Change, Pending, WorkQueue};
use crate::controllers::{Action, Controller, Env, Informers, SyncResult};
use crate::object::{CustomKinds, Kind, Object};
use crate::time::{Time, SECOND};

/// How often the collector re-scans every dependent (catches deletions it missed).
const RESCAN: Time = 30 * SECOND;

/// The shortest time between two sets of lists.
const LIST_INTERVAL: Time = 5 * SECOND;

const FOREGROUND: &str = "foregroundDeletion";
const ORPHAN: &str = "orphan";

/// The kinds the shared informers hold (seen as they change).
const INFORMED: &[Kind] = &[
    Kind::Pod,
    Kind::ReplicaSet,
    Kind::Deployment,
    Kind::Node,
    Kind::Service,
    Kind::EndpointSlice,
    Kind::Namespace,
    Kind::ServiceAccount,
    Kind::PersistentVolumeClaim,
    Kind::PersistentVolume,
    Kind::StorageClass,
    Kind::PodDisruptionBudget,
    Kind::StatefulSet,
    Kind::Job,
    Kind::CronJob,
    Kind::ConfigMap,
    Kind::Secret,
    Kind::Endpoints,
    Kind::HorizontalPodAutoscaler,
    Kind::DaemonSet,
    Kind::ControllerRevision,
];

/// Every other stored kind: listed by the collector itself. Events are left out (they
/// are many and own nothing); node Leases are listed here too, in every namespace.
fn listed_kinds() -> Vec<Kind> {
    Kind::ALL
        .iter()
        .copied()
        .filter(|k| {
            !INFORMED.contains(k) && !matches!(k, Kind::Event | Kind::SelfSubjectAccessReview)
        })
        .collect()
}

/// Lists asked for together, filled in as their responses arrive.
struct Listing {
    asked_at: Time,
    pending: usize,
    failed: bool,
    objects: BTreeMap<Kind, Vec<Arc<Object>>>,
}

/// The garbage collector.
#[derive(Default)]
pub struct GarbageCollector {
    last_scan: Time,
    /// The lists in flight, by the kind each asks for.
    sent: Pending<Kind>,
    /// Dependents already asked to be deleted (or patched), and when. A request that
    /// failed (etcd or the apiserver down) is asked again after `RESCAN`, as upstream's
    /// attemptToDelete queue retries with backoff.
    asked: BTreeMap<String, Time>,
    /// The objects of [`listed_kinds`] from the last complete set of lists.
    listed: BTreeMap<Kind, Vec<Arc<Object>>>,
    /// When that set of lists was asked for.
    listed_at: Option<Time>,
    /// Lists in flight.
    listing: Option<Listing>,
    /// When lists were last asked for.
    last_list: Option<Time>,
}

fn id(o: &Object) -> String {
    format!("{}/{}/{}", o.kind(), o.namespace(), o.name())
}

fn owner_kind(r: &OwnerReference, custom: &CustomKinds) -> Option<Kind> {
    Kind::from_api_version_kind(&r.api_version, &r.kind)
        .or_else(|| custom.api_version_kind(&r.api_version, &r.kind))
}

fn waits_for_dependents(o: &Object) -> bool {
    let m = o.meta();
    m.deletion_timestamp.is_some()
        && m.finalizers
            .as_ref()
            .is_some_and(|f| f.iter().any(|x| x == FOREGROUND))
}

impl GarbageCollector {
    /// The custom kinds the CRDs of the last lists serve (discovery, as upstream's
    /// collector resyncs its monitors from it).
    fn custom_kinds(&self) -> CustomKinds {
        let crds = self.listed.get(&Kind::CustomResourceDefinition);
        crate::apiserver::crd::discovery(crds.into_iter().flatten().map(|o| &**o))
    }

    fn recently_asked(&self, key: &str, now: Time) -> bool {
        self.asked.get(key).is_some_and(|t| now < t + RESCAN)
    }

    fn all_objects<'a>(&'a self, inf: &'a Informers) -> impl Iterator<Item = &'a Arc<Object>> {
        INFORMED
            .iter()
            .flat_map(|k| inf.of(*k).iter())
            .chain(self.listed.values().flatten())
    }

    /// Asks for the lists of every kind the informers do not hold.
    fn list_others(&mut self, env: &mut Env) {
        let now = env.now();
        let in_flight = self
            .listing
            .as_ref()
            .is_some_and(|l| now < l.asked_at + RESCAN);
        // At most one set of lists per LIST_INTERVAL, however many deletions ask.
        if in_flight {
            return;
        }
        if let Some(t) = self.last_list.filter(|t| now < t + LIST_INTERVAL) {
            env.enqueue_after("list", (t + LIST_INTERVAL).saturating_sub(now));
            return;
        }
        self.last_list = Some(now);
        let mut kinds = listed_kinds();
        kinds.extend(self.custom_kinds().preferred());
        for k in &kinds {
            let id = env.send(ApiRequest::new(Verb::List, *k, "", ""));
            self.sent.insert(id, *k);
        }
        self.listing = Some(Listing {
            asked_at: now,
            pending: kinds.len(),
            failed: false,
            objects: BTreeMap::new(),
        });
    }

    /// Whether the owner `r` of `dependent` is known to be gone.
    fn owner_gone(
        &self,
        r: &OwnerReference,
        dependent: &Object,
        uids: &BTreeMap<&str, &Arc<Object>>,
    ) -> bool {
        if uids.contains_key(r.uid.as_str()) {
            return false;
        }
        match owner_kind(r, &self.custom_kinds()) {
            Some(k) if INFORMED.contains(&k) => true,
            // A custom kind not in the last set of lists (its CRD was new then).
            Some(k @ Kind::Custom(_)) if !self.listed.contains_key(&k) => false,
            // Owners of listed kinds: absent from a list asked for after the dependent
            // was created (an owner is created before its dependents).
            Some(_) => {
                let created = dependent
                    .meta()
                    .creation_timestamp
                    .as_ref()
                    .map_or(0, crate::time::from_k8s_time);
                self.listed_at.is_some_and(|at| created + 2 * SECOND < at)
            }
            // A kind the apiserver does not serve cannot be looked up: assumed to exist.
            None => false,
        }
    }

    fn scan(&mut self, env: &mut Env, inf: &Informers) {
        let now = env.now();
        let mut touched_listed = false;
        let objects: Vec<Arc<Object>> = self.all_objects(inf).cloned().collect();
        // Borrowed from `objects`: a scan walks every object of the cluster every 30 s.
        let uids: BTreeMap<&str, &Arc<Object>> = objects
            .iter()
            .filter_map(|o| o.meta().uid.as_deref().map(|u| (u, o)))
            .collect();
        // Dependents per owner: the blocking ones (`blockOwnerDeletion`) keep an owner in
        // foreground deletion waiting; any one being deleted the same way is a cycle.
        let mut blocking: BTreeMap<&str, usize> = BTreeMap::new();
        let mut deleting_dependents: BTreeSet<&str> = BTreeSet::new();
        for o in &objects {
            for r in o.meta().owner_references.iter().flatten() {
                if r.block_owner_deletion == Some(true) {
                    *blocking.entry(r.uid.as_str()).or_insert(0) += 1;
                }
                if waits_for_dependents(o) {
                    deleting_dependents.insert(r.uid.as_str());
                }
            }
        }
        for o in &objects {
            let Some(refs) = o
                .meta()
                .owner_references
                .as_deref()
                .filter(|r| !r.is_empty())
            else {
                continue;
            };
            let all_gone = refs.iter().all(|r| self.owner_gone(r, o, &uids));
            if all_gone && o.meta().deletion_timestamp.is_none() {
                let key = id(o);
                if !self.recently_asked(&key, now) {
                    self.asked.insert(key, now);
                    let mut req = ApiRequest::new(Verb::Delete, o.kind(), o.namespace(), o.name());
                    req.options.propagation = Some(Propagation::Background);
                    touched_listed |= !INFORMED.contains(&o.kind());
                    env.fire(req);
                    continue;
                }
            }
            let uid = o.meta().uid.as_deref().unwrap_or_default();
            for r in refs {
                let Some(owner) = uids.get(r.uid.as_str()) else {
                    continue;
                };
                if owner.meta().deletion_timestamp.is_none() {
                    continue;
                }
                let key = id(o);
                let fins = owner.meta().finalizers.clone().unwrap_or_default();
                if fins.iter().any(|f| f == FOREGROUND) {
                    if o.meta().deletion_timestamp.is_none() {
                        if !self.recently_asked(&key, now) {
                            self.asked.insert(key.clone(), now);
                            let mut req =
                                ApiRequest::new(Verb::Delete, o.kind(), o.namespace(), o.name());
                            req.options.propagation = Some(Propagation::Foreground);
                            touched_listed |= !INFORMED.contains(&o.kind());
                            env.fire(req);
                        }
                    } else if waits_for_dependents(o)
                        && deleting_dependents.contains(uid)
                        && refs.iter().any(|r| r.block_owner_deletion == Some(true))
                        && !self.recently_asked(&format!("unblock {key}"), now)
                    {
                        // An owner cycle in foreground deletion (upstream's
                        // attemptToDeleteItem): this dependent waits for its own
                        // dependents, one of which waits too. Its owner references stop
                        // blocking, so the owners can go and the cycle unwinds.
                        self.asked.insert(format!("unblock {key}"), now);
                        let unblocked: Vec<OwnerReference> = refs
                            .iter()
                            .cloned()
                            .map(|mut r| {
                                r.block_owner_deletion = Some(false);
                                r
                            })
                            .collect();
                        let patch = serde_json::json!({"metadata": {"ownerReferences": unblocked}});
                        touched_listed |= !INFORMED.contains(&o.kind());
                        env.fire(
                            ApiRequest::new(Verb::Patch, o.kind(), o.namespace(), o.name())
                                .with_body(Body::Patch(PatchType::Merge, patch)),
                        );
                    }
                } else if fins.iter().any(|f| f == ORPHAN) {
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
        // Release owners whose blocking dependents are all gone (or orphaned).
        for o in &objects {
            let m = o.meta();
            if m.deletion_timestamp.is_none() {
                continue;
            }
            let fins = m.finalizers.clone().unwrap_or_default();
            let uid = m.uid.clone().unwrap_or_default();
            let blocked = blocking.get(uid.as_str()).copied().unwrap_or(0) > 0;
            // Orphaning waits for every dependent's reference to be removed.
            let referenced = objects.iter().any(|d| {
                d.meta()
                    .owner_references
                    .iter()
                    .flatten()
                    .any(|r| r.uid == uid)
            });
            let release: Vec<&str> = [(FOREGROUND, blocked), (ORPHAN, referenced)]
                .into_iter()
                .filter(|(f, waiting)| fins.iter().any(|x| x == f) && !waiting)
                .map(|(f, _)| f)
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
            touched_listed |= !INFORMED.contains(&o.kind());
            env.fire(
                ApiRequest::new(Verb::Patch, o.kind(), o.namespace(), o.name())
                    .with_body(Body::Patch(PatchType::Merge, patch)),
            );
        }
        // Objects of listed kinds are seen again only in the next lists: ask for them
        // soon, so a foreground deletion or a chain of dependents goes on.
        if touched_listed {
            env.enqueue_after("list", LIST_INTERVAL);
        }
    }
}

impl Controller for GarbageCollector {
    fn name(&self) -> &'static str {
        "garbage-collector-controller"
    }

    fn watches(&self) -> &'static [Kind] {
        INFORMED
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
                queue.add("list".into());
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

    fn sync(&mut self, key: &str, env: &mut Env, inf: &Informers) -> SyncResult {
        if key == "list" {
            self.list_others(env);
            return Ok(Action::await_change());
        }
        self.last_scan = env.now();
        self.scan(env, inf);
        Ok(Action::await_change())
    }

    fn on_response(&mut self, id: ReqId, resp: &ApiResponse, env: &mut Env, inf: &Informers) {
        let Some(kind) = self.sent.take(id) else {
            return;
        };
        let Some(l) = self.listing.as_mut() else {
            return;
        };
        match &resp.result {
            Ok(ApiResult::List { items, .. }) => {
                l.objects.insert(kind, items.clone());
            }
            // A custom kind whose CRD went away meanwhile has no objects left.
            Err(s) if s.is_not_found() && matches!(kind, Kind::Custom(_)) => {
                l.objects.insert(kind, Vec::new());
            }
            _ => l.failed = true,
        }
        l.pending = l.pending.saturating_sub(1);
        if l.pending > 0 {
            return;
        }
        let Some(done) = self.listing.take() else {
            return;
        };
        // A set with a failed list is dropped: a kind missing from it would read as
        // every owner of that kind gone.
        if !done.failed {
            self.listed = done.objects;
            self.listed_at = Some(done.asked_at);
            self.scan(env, inf);
        }
    }

    fn tick(&mut self, env: &mut Env, inf: &Informers) {
        if env.now() >= self.last_scan + RESCAN {
            self.last_scan = env.now();
            self.list_others(env);
            self.scan(env, inf);
        }
    }
}
