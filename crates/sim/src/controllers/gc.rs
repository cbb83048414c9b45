//! The garbage collector: deletes dependents whose owners are gone (background
//! propagation), deletes dependents of owners in foreground deletion then releases the
//! owner, and orphans dependents of owners deleted with propagationPolicy=Orphan.
//!
//! As upstream's, it is driven by a dependency graph ([`Graph`], upstream's
//! `GraphBuilder`) kept from what it sees change: a change looks again at the object, its
//! owners and its dependents, never at the whole cluster. Upstream watches every resource
//! through metadata informers; here the kinds the controller manager's shared informers
//! hold are seen at once, and every other kind (Roles, Leases, custom objects, …) is
//! listed every [`RESCAN`] and after a deletion, the lists' differences feeding the graph
//! as watch events would. An owner missing from a list is only trusted to be gone for
//! dependents created before that list was asked for (upstream checks with a live GET
//! instead).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;

use crate::api::{ApiRequest, ApiResponse, ApiResult, Body, PatchType, Propagation, ReqId, Verb};
use crate::client::{Change, Pending, WorkQueue};
use crate::controllers::gc_graph::Graph;
use crate::controllers::{Action, Controller, Env, Informers, SyncResult};
use crate::object::{CustomKinds, Kind, Object};
use crate::time::{Time, SECOND};

/// How often the kinds without a shared informer are listed, and how long before a
/// request the collector sent is checked again (it may have failed).
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

/// Whether an owner reference points at an object that exists.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Owner {
    Present,
    Gone,
    /// Not known yet: absent from lists too old to tell, or of a kind not listed yet.
    Unknown,
}

/// The garbage collector.
#[derive(Default)]
pub struct GarbageCollector {
    /// When the periodic lists were last asked for.
    last_lists: Time,
    /// Every object seen, with who depends on whom ([`Graph`]).
    graph: Graph,
    /// Dependents with an owner of unknown fate: looked at again after the next lists.
    unresolved: BTreeSet<String>,
    /// The lists in flight, by the kind each asks for.
    sent: Pending<Kind>,
    /// Dependents already asked to be deleted (or patched), and when. A request that
    /// failed (etcd or the apiserver down) is asked again after `RESCAN`, as upstream's
    /// attemptToDelete queue retries with backoff.
    asked: BTreeMap<String, Time>,
    /// The uids of the objects of each listed kind in the graph (from the last lists).
    listed: BTreeMap<Kind, BTreeSet<String>>,
    /// The custom kinds the CRDs of the last lists serve (discovery, as upstream's
    /// collector resyncs its monitors from it).
    custom: CustomKinds,
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

fn has_finalizer(o: &Object, f: &str) -> bool {
    o.meta().finalizers.iter().flatten().any(|x| x == f)
}

fn waits_for_dependents(o: &Object) -> bool {
    o.meta().deletion_timestamp.is_some() && has_finalizer(o, FOREGROUND)
}

/// A merge patch of `metadata.ownerReferences` (null when none is left).
fn owner_references_patch(o: &Object, refs: Vec<OwnerReference>) -> ApiRequest {
    let refs = if refs.is_empty() {
        serde_json::Value::Null
    } else {
        serde_json::to_value(refs).unwrap_or_default()
    };
    let patch = serde_json::json!({"metadata": {"ownerReferences": refs}});
    ApiRequest::new(Verb::Patch, o.kind(), o.namespace(), o.name())
        .with_body(Body::Patch(PatchType::Merge, patch))
}

impl GarbageCollector {
    fn recently_asked(&self, key: &str, now: Time) -> bool {
        self.asked.get(key).is_some_and(|t| now < t + RESCAN)
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
        kinds.extend(self.custom.preferred());
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

    /// Puts a complete set of lists into the graph: what is new or changed is upserted,
    /// what the lists no longer hold is removed.
    fn take_lists(&mut self, done: Listing) {
        let before = std::mem::take(&mut self.listed);
        for (kind, items) in &done.objects {
            let mut uids = BTreeSet::new();
            for o in items {
                self.graph.upsert(o);
                if let Some(u) = o.meta().uid.as_deref() {
                    uids.insert(u.to_string());
                }
            }
            self.listed.insert(*kind, uids);
        }
        for (kind, uids) in before {
            let still = self.listed.get(&kind);
            let gone: Vec<Arc<Object>> = uids
                .iter()
                .filter(|u| !still.is_some_and(|n| n.contains(*u)))
                .filter_map(|u| self.graph.get(u).cloned())
                .collect();
            for o in gone {
                self.forget(&o);
            }
        }
        let crds = done.objects.get(&Kind::CustomResourceDefinition);
        self.custom = crate::apiserver::crd::discovery(crds.into_iter().flatten().map(|o| &**o));
        self.listed_at = Some(done.asked_at);
        for u in std::mem::take(&mut self.unresolved) {
            self.graph.mark(&u);
        }
    }

    /// An object gone from the cluster.
    fn forget(&mut self, o: &Object) {
        self.graph.remove(o);
        let key = id(o);
        self.asked.remove(&format!("unblock {key}"));
        self.asked.remove(&key);
    }

    /// Whether the owner `r` of `dependent` exists.
    fn owner(&self, r: &OwnerReference, dependent: &Object) -> Owner {
        if self.graph.get(&r.uid).is_some() {
            return Owner::Present;
        }
        match owner_kind(r, &self.custom) {
            Some(k) if INFORMED.contains(&k) => Owner::Gone,
            // A custom kind not in the last set of lists (its CRD was new then).
            Some(k @ Kind::Custom(_)) if !self.listed.contains_key(&k) => Owner::Unknown,
            // Owners of listed kinds: absent from a list asked for after the dependent
            // was created (an owner is created before its dependents).
            Some(_) => {
                let created = dependent
                    .meta()
                    .creation_timestamp
                    .as_ref()
                    .map_or(0, crate::time::from_k8s_time);
                if self.listed_at.is_some_and(|at| created + 2 * SECOND < at) {
                    Owner::Gone
                } else {
                    Owner::Unknown
                }
            }
            // A kind the apiserver does not serve (yet) cannot be looked up: assumed to
            // exist, and asked about again after the next lists.
            None => Owner::Unknown,
        }
    }

    /// Sends `req` about `o`; `o` is looked at again after `RESCAN` in case it failed.
    fn fire(&mut self, env: &mut Env, o: &Object, req: ApiRequest) -> bool {
        env.fire(req);
        if let Some(u) = o.meta().uid.as_deref() {
            env.enqueue_after(format!("check {u}"), RESCAN);
        }
        !INFORMED.contains(&o.kind())
    }

    /// Looks at every object a change marked (upstream's attemptToDelete and
    /// attemptToOrphan workers, and the release of owners whose dependents are done).
    fn scan(&mut self, env: &mut Env) {
        let mut touched_listed = false;
        for uid in self.graph.take_dirty() {
            let Some(o) = self.graph.get(&uid).cloned() else {
                continue;
            };
            touched_listed |= self.attempt_to_delete(env, &uid, &o);
            touched_listed |= self.release_owner(env, &uid, &o);
        }
        // Objects of listed kinds are seen again only in the next lists: ask for them
        // soon, so a foreground deletion or a chain of dependents goes on.
        if touched_listed {
            env.enqueue_after("list", LIST_INTERVAL);
        }
    }

    /// `o` as a dependent: deleted when its owners are gone, deleted in the foreground
    /// when an owner waits for its dependents, orphaned when an owner is orphaning.
    fn attempt_to_delete(&mut self, env: &mut Env, uid: &str, o: &Arc<Object>) -> bool {
        let now = env.now();
        let Some(refs) = o
            .meta()
            .owner_references
            .as_deref()
            .filter(|r| !r.is_empty())
        else {
            return false;
        };
        let owners: Vec<Owner> = refs.iter().map(|r| self.owner(r, o)).collect();
        if owners.contains(&Owner::Unknown) {
            self.unresolved.insert(uid.to_string());
        }
        let key = id(o);
        if owners.iter().all(|s| *s == Owner::Gone)
            && o.meta().deletion_timestamp.is_none()
            && !self.recently_asked(&key, now)
        {
            self.asked.insert(key, now);
            let mut req = ApiRequest::new(Verb::Delete, o.kind(), o.namespace(), o.name());
            req.options.propagation = Some(Propagation::Background);
            return self.fire(env, o, req);
        }
        let mut touched = false;
        for r in refs {
            let Some(owner) = self.graph.get(&r.uid).cloned() else {
                continue;
            };
            if owner.meta().deletion_timestamp.is_none() {
                continue;
            }
            if has_finalizer(&owner, FOREGROUND) {
                if o.meta().deletion_timestamp.is_none() {
                    if !self.recently_asked(&key, now) {
                        self.asked.insert(key.clone(), now);
                        let mut req =
                            ApiRequest::new(Verb::Delete, o.kind(), o.namespace(), o.name());
                        req.options.propagation = Some(Propagation::Foreground);
                        touched |= self.fire(env, o, req);
                    }
                } else if waits_for_dependents(o)
                    && self.graph.dependents(uid).any(|d| waits_for_dependents(d))
                    && refs.iter().any(|r| r.block_owner_deletion == Some(true))
                    && !self.recently_asked(&format!("unblock {key}"), now)
                {
                    // An owner cycle in foreground deletion (upstream's
                    // attemptToDeleteItem): this dependent waits for its own dependents,
                    // one of which waits too. Its owner references stop blocking, so the
                    // owners can go and the cycle unwinds.
                    self.asked.insert(format!("unblock {key}"), now);
                    let unblocked: Vec<OwnerReference> = refs
                        .iter()
                        .cloned()
                        .map(|mut r| {
                            r.block_owner_deletion = Some(false);
                            r
                        })
                        .collect();
                    touched |= self.fire(env, o, owner_references_patch(o, unblocked));
                }
            } else if has_finalizer(&owner, ORPHAN) {
                let remaining: Vec<_> = refs.iter().filter(|x| x.uid != r.uid).cloned().collect();
                touched |= self.fire(env, o, owner_references_patch(o, remaining));
            }
        }
        touched
    }

    /// `o` as an owner being deleted: its `foregroundDeletion` finalizer goes when no
    /// dependent blocks it, its `orphan` finalizer when no dependent names it.
    fn release_owner(&mut self, env: &mut Env, uid: &str, o: &Arc<Object>) -> bool {
        let m = o.meta();
        if m.deletion_timestamp.is_none() {
            return false;
        }
        let fins = m.finalizers.clone().unwrap_or_default();
        let blocked = self.graph.dependents(uid).any(|d| {
            d.meta()
                .owner_references
                .iter()
                .flatten()
                .any(|r| r.uid == uid && r.block_owner_deletion == Some(true))
        });
        // Orphaning waits for every dependent's reference to be removed.
        let referenced = self.graph.has_dependents(uid);
        let release: Vec<&str> = [(FOREGROUND, blocked), (ORPHAN, referenced)]
            .into_iter()
            .filter(|(f, waiting)| fins.iter().any(|x| x == f) && !waiting)
            .map(|(f, _)| f)
            .collect();
        if release.is_empty() {
            return false;
        }
        let kept: Vec<String> = fins
            .iter()
            .filter(|f| !release.contains(&f.as_str()))
            .cloned()
            .collect();
        let patch = serde_json::json!({"metadata": {"finalizers": if kept.is_empty() { serde_json::Value::Null } else { serde_json::json!(kept) }}});
        let req = ApiRequest::new(Verb::Patch, o.kind(), o.namespace(), o.name())
            .with_body(Body::Patch(PatchType::Merge, patch));
        self.fire(env, o, req)
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
            Change::Added(o) | Change::Updated(_, o) => self.graph.upsert(o),
            Change::Deleted(o) => {
                self.forget(o);
                // A dependent of a listed kind may be waiting for this owner.
                queue.add("list".into());
            }
        }
        if self.graph.has_dirty() {
            queue.add("scan".into());
        }
    }

    fn sync(&mut self, key: &str, env: &mut Env, _inf: &Informers) -> SyncResult {
        if key == "list" {
            self.list_others(env);
            return Ok(Action::await_change());
        }
        if let Some(uid) = key.strip_prefix("check ") {
            self.graph.mark(uid);
        }
        self.scan(env);
        Ok(Action::await_change())
    }

    fn on_response(&mut self, id: ReqId, resp: &ApiResponse, env: &mut Env, _inf: &Informers) {
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
            self.take_lists(done);
            self.scan(env);
        }
    }

    fn tick(&mut self, env: &mut Env, _inf: &Informers) {
        if env.now() >= self.last_lists + RESCAN {
            self.last_lists = env.now();
            self.list_others(env);
        }
    }
}
