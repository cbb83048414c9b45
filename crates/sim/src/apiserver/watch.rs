//! The apiserver's watch cache (fed by its etcd watch) and the client watches it serves.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use crate::api::{ReqId, Status, StatusReason, WatchEvent, WatchEventType};
use crate::etcd::EtcdEvent;
use crate::message::{Actor, Ctx, Payload};
use crate::object::{Kind, Object, ObjectKey};
use crate::selector::{FieldSelector, LabelSelector};
use crate::stored::Stored;

use super::watch_window::Window;
use crate::time::Time;

/// One change seen by the cache.
#[derive(Clone, Debug)]
pub struct CacheEvent {
    /// etcd revision.
    pub revision: u64,
    /// The object after the change (for deletes: the last state).
    pub object: Arc<Object>,
    /// The object before, if it existed.
    pub prev: Option<Arc<Object>>,
    /// Whether this was a delete.
    pub deleted: bool,
}

/// A change in the cache's window: the newest revision of each object shared with the
/// cache, superseded ones encoded ([`Stored`]).
#[derive(Debug)]
struct Kept {
    revision: u64,
    key: ObjectKey,
    object: Stored,
    prev: Option<Stored>,
    deleted: bool,
}

impl Kept {
    fn event(&self) -> CacheEvent {
        CacheEvent {
            revision: self.revision,
            object: self.object.object(),
            prev: self.prev.as_ref().map(Stored::object),
            deleted: self.deleted,
        }
    }
}

/// One change of the cache's window, as the etcd browser lists it.
#[derive(Debug)]
pub struct RecentEvent<'a> {
    /// etcd revision.
    pub revision: u64,
    /// The object changed.
    pub key: &'a ObjectKey,
    /// Whether it was deleted.
    pub deleted: bool,
    /// Whether it existed before.
    pub modified: bool,
}

/// The objects as of `revision`, by kind then (namespace, name), and each kind's
/// window of recent changes for watches that resume from a resourceVersion.
#[derive(Debug, Default)]
pub struct WatchCache {
    objects: BTreeMap<Kind, BTreeMap<(String, String), Arc<Object>>>,
    revision: u64,
    /// The revision of the last full load (`listResourceVersion`).
    loaded: u64,
    history: BTreeMap<Kind, Window<Kept>>,
    /// Pods by `spec.nodeName`, for the kubelets' watches.
    pods_by_node: BTreeMap<String, BTreeSet<(String, String)>>,
}

impl WatchCache {
    /// The revision the cache has caught up to.
    pub fn revision(&self) -> u64 {
        self.revision
    }

    /// One object.
    pub fn get(&self, kind: Kind, namespace: &str, name: &str) -> Option<&Arc<Object>> {
        self.objects
            .get(&kind)?
            .get(&(namespace.to_string(), name.to_string()))
    }

    /// All objects of a kind (optionally one namespace), sorted by namespace and name.
    pub fn list(&self, kind: Kind, namespace: &str) -> Vec<Arc<Object>> {
        let Some(m) = self.objects.get(&kind) else {
            return Vec::new();
        };
        if namespace.is_empty() {
            m.values().cloned().collect()
        } else {
            m.range((namespace.to_string(), String::new())..)
                .take_while(|((ns, _), _)| ns == namespace)
                .map(|(_, o)| o.clone())
                .collect()
        }
    }

    /// Iterates objects of a kind without cloning.
    /// How many objects of a kind the cache holds.
    pub fn count(&self, kind: Kind) -> usize {
        self.objects.get(&kind).map_or(0, |m| m.len())
    }

    /// All objects of a kind, sorted by namespace and name.
    pub fn iter(&self, kind: Kind) -> impl Iterator<Item = &Arc<Object>> {
        self.objects.get(&kind).into_iter().flat_map(|m| m.values())
    }

    /// How many objects the cache holds, of every kind.
    pub fn len(&self) -> usize {
        self.objects.values().map(BTreeMap::len).sum()
    }

    /// Whether the cache holds no object.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// How many changes the cache keeps for watches that resume from a resourceVersion.
    pub fn history_len(&self) -> usize {
        self.history.values().map(Window::len).sum()
    }

    /// Pods bound to a node.
    pub fn pods_on_node(&self, node: &str) -> Vec<Arc<Object>> {
        self.pods_by_node
            .get(node)
            .into_iter()
            .flatten()
            .filter_map(|(ns, n)| self.get(Kind::Pod, ns, n).cloned())
            .collect()
    }

    /// Loads the initial state from an etcd range (at startup).
    pub fn load(&mut self, kvs: Vec<crate::etcd::KeyValue>, revision: u64) {
        self.objects.clear();
        self.pods_by_node.clear();
        self.history.clear();
        self.loaded = revision;
        for kv in kvs {
            let o = with_rv(&kv.value, kv.mod_revision);
            self.index(&o, true);
            self.objects
                .entry(o.kind())
                .or_default()
                .insert(ns_name(&o), o);
        }
        self.revision = revision;
    }

    /// Applies an etcd event seen at `now`; returns the cache event.
    pub fn apply(&mut self, ev: &EtcdEvent, now: Time) -> CacheEvent {
        let object = with_rv(&ev.kv.value, ev.kv.mod_revision);
        let kind = object.kind();
        let key = ns_name(&object);
        let map = self.objects.entry(kind).or_default();
        let prev = if ev.deleted {
            map.remove(&key)
        } else {
            map.insert(key, object.clone())
        };
        if let Some(p) = &prev {
            self.index(p, false);
        }
        if !ev.deleted {
            self.index(&object, true);
        }
        self.revision = self.revision.max(ev.revision);
        // etcd's history encoded the same object a moment ago: share its bytes.
        let from_etcd = ev
            .replaced
            .as_ref()
            .zip(ev.prev.as_ref())
            .filter(|(_, p)| prev.as_ref().is_some_and(|o| Arc::ptr_eq(o, &p.value)))
            .map(|(r, _)| r.clone());
        let kept_prev = prev.as_ref().map(|p| self.supersede(p, from_etcd));
        let kept = Kept {
            revision: ev.revision,
            key: object.key(),
            object: if ev.deleted {
                Stored::encode(&object)
            } else {
                Stored::Live(object.clone())
            },
            prev: kept_prev,
            deleted: ev.deleted,
        };
        self.history.entry(kind).or_default().push(now, kept);
        CacheEvent {
            revision: ev.revision,
            object,
            prev,
            deleted: ev.deleted,
        }
    }

    /// `old` was just replaced: the window's event that wrote it keeps it encoded, and
    /// the replacing event shares that encoding.
    fn supersede(&mut self, old: &Arc<Object>, encoded: Option<Stored>) -> Stored {
        let rv = old.resource_version();
        let encoded = encoded.unwrap_or_else(|| Stored::encode(old));
        let Some(window) = self.history.get_mut(&old.kind()) else {
            return encoded;
        };
        let i = window.partition_point(|e| e.revision < rv);
        if let Some(e) = window.get_mut(i) {
            if e.revision == rv && e.object.is(old) {
                e.object = encoded.clone();
            }
        }
        encoded
    }

    fn index(&mut self, o: &Object, add: bool) {
        if let Object::Pod(p) = o {
            if let Some(node) = p.spec.as_ref().and_then(|s| s.node_name.as_ref()) {
                let set = self.pods_by_node.entry(node.clone()).or_default();
                if add {
                    set.insert(ns_name(o));
                } else {
                    set.remove(&ns_name(o));
                }
            }
        }
    }

    /// The latest `n` events the cache holds, of every kind, newest first, and how
    /// many it holds.
    pub fn recent(&self, n: usize) -> (Vec<RecentEvent<'_>>, usize) {
        let mut events: Vec<&Kept> = self
            .history
            .values()
            .flat_map(|w| w.iter().rev().take(n))
            .collect();
        events.sort_by_key(|e| std::cmp::Reverse(e.revision));
        events.truncate(n);
        let events = events.into_iter().map(|e| RecentEvent {
            revision: e.revision,
            key: &e.key,
            deleted: e.deleted,
            modified: e.prev.is_some(),
        });
        (events.collect(), self.history_len())
    }

    /// The oldest revision a watch of `kind` can resume after (`getAllEventsSinceLocked`):
    /// the last load, until the kind's window dropped a change; then its oldest change.
    pub fn oldest(&self, kind: Kind) -> u64 {
        match self.history.get(&kind) {
            Some(w) if w.removed() => w.front().map_or(self.revision + 1, |e| e.revision),
            _ => self.loaded + 1,
        }
    }

    /// `kind`'s events after `rv`, or None if its window no longer reaches back that far
    /// (the watch ends with `410 Gone: too old resource version`).
    pub fn events_after(&self, kind: Kind, rv: u64) -> Option<Vec<CacheEvent>> {
        if rv + 1 < self.oldest(kind) && rv < self.revision {
            return None;
        }
        let Some(window) = self.history.get(&kind) else {
            return Some(Vec::new());
        };
        let start = window.partition_point(|e| e.revision <= rv);
        Some(window.skip(start).map(Kept::event).collect())
    }
}

fn ns_name(o: &Object) -> (String, String) {
    (o.namespace().to_string(), o.name().to_string())
}

/// `o` carrying `resourceVersion: rv`: the same object when it already does (etcd
/// stamps what it stores), else a copy.
pub fn with_rv(o: &Arc<Object>, rv: u64) -> Arc<Object> {
    if o.meta()
        .resource_version
        .as_deref()
        .is_some_and(|v| v.parse::<u64>() == Ok(rv))
    {
        return o.clone();
    }
    let mut c = (**o).clone();
    c.meta_mut().resource_version = Some(rv.to_string());
    Arc::new(c)
}

/// A client's watch.
#[derive(Debug)]
pub struct Watcher {
    /// Kind watched.
    pub kind: Kind,
    /// Namespace ("" = all).
    pub namespace: String,
    /// Label selector.
    pub labels: Option<LabelSelector>,
    /// Field selector.
    pub fields: Option<FieldSelector>,
}

impl Watcher {
    /// Whether the object is in this watch's scope (namespace and selectors).
    pub fn matches(&self, o: &Object) -> bool {
        o.kind() == self.kind
            && (self.namespace.is_empty() || o.namespace() == self.namespace)
            && self.labels.as_ref().is_none_or(|l| l.matches_object(o))
            && self.fields.as_ref().is_none_or(|f| f.matches(o))
    }

    /// The event this watcher sees for a cache event, if any (a custom object at the
    /// version the watch addressed).
    pub fn translate(&self, ev: &CacheEvent) -> Option<(WatchEventType, Arc<Object>)> {
        let (t, o) = self.translate_stored(ev)?;
        if matches!(self.kind, Kind::Custom(_)) {
            let at = crate::apiserver::crd::admit::at_version(&o, self.kind);
            return Some((t, Arc::new(at)));
        }
        Some((t, o))
    }

    fn translate_stored(&self, ev: &CacheEvent) -> Option<(WatchEventType, Arc<Object>)> {
        let now = !ev.deleted && self.matches(&ev.object);
        let before = match &ev.prev {
            Some(p) => self.matches(p),
            None => false,
        };
        match (before, now) {
            (true, true) => Some((WatchEventType::Modified, ev.object.clone())),
            (false, true) => Some((WatchEventType::Added, ev.object.clone())),
            (true, false) => {
                // A delete, or an object that stopped matching the selector: DELETED with
                // the last state the watcher was entitled to, at the event's revision.
                let last = ev
                    .prev
                    .as_ref()
                    .filter(|_| !ev.deleted)
                    .unwrap_or(&ev.object);
                Some((WatchEventType::Deleted, with_rv(last, ev.revision)))
            }
            (false, false) => None,
        }
    }
}

/// Every open client watch, indexed by kind (and pods by node for kubelets).
#[derive(Debug, Default)]
pub struct Watchers {
    all: BTreeMap<(Actor, ReqId), Watcher>,
    by_kind: BTreeMap<Kind, BTreeSet<(Actor, ReqId)>>,
    pods_by_node: BTreeMap<String, BTreeSet<(Actor, ReqId)>>,
}

impl Watchers {
    /// Registers a watch.
    pub fn add(&mut self, client: Actor, id: ReqId, w: Watcher) {
        let key = (client, id);
        match node_of(&w) {
            Some(node) => {
                self.pods_by_node.entry(node).or_default().insert(key);
            }
            None => {
                self.by_kind.entry(w.kind).or_default().insert(key);
            }
        }
        self.all.insert(key, w);
    }

    /// Drops every watch of a client.
    pub fn remove_client(&mut self, client: Actor) {
        let keys: Vec<(Actor, ReqId)> = self
            .all
            .range((client, 0)..=(client, ReqId::MAX))
            .map(|(k, _)| *k)
            .collect();
        for k in keys {
            self.remove(k);
        }
    }

    fn remove(&mut self, key: (Actor, ReqId)) {
        if let Some(w) = self.all.remove(&key) {
            match node_of(&w) {
                Some(node) => {
                    if let Some(s) = self.pods_by_node.get_mut(&node) {
                        s.remove(&key);
                    }
                }
                None => {
                    if let Some(s) = self.by_kind.get_mut(&w.kind) {
                        s.remove(&key);
                    }
                }
            }
        }
    }

    /// Number of open watches.
    pub fn len(&self) -> usize {
        self.all.len()
    }

    /// Whether no watch is open.
    pub fn is_empty(&self) -> bool {
        self.all.is_empty()
    }

    /// Sends a cache event to every watcher it concerns.
    pub fn fan_out(&self, ctx: &mut Ctx, ev: &CacheEvent) {
        let kind = ev.object.kind();
        let mut targets: Vec<(Actor, ReqId)> = self
            .by_kind
            .get(&kind)
            .into_iter()
            .flatten()
            .copied()
            .collect();
        if kind == Kind::Pod {
            let mut nodes = BTreeSet::new();
            for o in std::iter::once(&ev.object).chain(ev.prev.iter()) {
                if let Object::Pod(p) = &**o {
                    if let Some(n) = p.spec.as_ref().and_then(|s| s.node_name.as_ref()) {
                        nodes.insert(n.clone());
                    }
                }
            }
            for n in nodes {
                targets.extend(self.pods_by_node.get(&n).into_iter().flatten().copied());
            }
        }
        for (client, id) in targets {
            let Some(w) = self.all.get(&(client, id)) else {
                continue;
            };
            if let Some(e) = w.translate(ev) {
                ctx.send(
                    client,
                    Payload::Watch(WatchEvent {
                        watch_id: id,
                        event: Ok(e),
                    }),
                );
            }
        }
    }

    /// Ends every watch with 410 Gone (the cache was rebuilt): clients relist.
    pub fn expire_all(&mut self, ctx: &mut Ctx, rv: u64) {
        let keys: Vec<(Actor, ReqId)> = self.all.keys().copied().collect();
        for (client, id) in keys {
            self.expire(ctx, client, id, rv, rv);
        }
    }

    /// Ends a watch with an error event (e.g. 410 Gone).
    pub fn expire(&mut self, ctx: &mut Ctx, client: Actor, id: ReqId, rv: u64, oldest: u64) {
        let s = Status::new(
            410,
            StatusReason::Gone,
            format!("too old resource version: {rv} ({oldest})"),
        );
        ctx.send(
            client,
            Payload::Watch(WatchEvent {
                watch_id: id,
                event: Err(s),
            }),
        );
        self.remove((client, id));
    }
}

/// The node a pod watch is restricted to by `spec.nodeName=…`, if that is its only filter.
fn node_of(w: &Watcher) -> Option<String> {
    if w.kind != Kind::Pod {
        return None;
    }
    w.fields
        .as_ref()?
        .required_value("spec.nodeName")
        .filter(|n| !n.is_empty())
        .map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::etcd::KeyValue;
    use k8s_openapi::api::core::v1::ConfigMap;

    fn put(c: &mut WatchCache, rev: u64, version: u64, v: &str, deleted: bool) -> Arc<Object> {
        let mut cm = ConfigMap::default();
        cm.metadata.name = Some("a".into());
        cm.metadata.namespace = Some("default".into());
        cm.metadata.resource_version = Some(rev.to_string());
        cm.data = Some([("v".to_string(), v.to_string())].into_iter().collect());
        let value = Arc::new(Object::from(cm));
        let kv = KeyValue {
            key: "/registry/configmaps/default/a".into(),
            create_revision: 1,
            mod_revision: rev,
            version,
            value: value.clone(),
        };
        c.apply(
            &EtcdEvent {
                revision: rev,
                deleted,
                kv,
                prev: None,
                replaced: None,
            },
            rev * 10_000,
        );
        value
    }

    /// Each resource has its own window: a quiet ConfigMap keeps its last 100 changes,
    /// so a watch from before them gets 410, while a resource that has not changed since
    /// the load still reaches back to it.
    #[test]
    fn a_watch_from_before_its_resources_window_is_too_old_and_others_reach_the_load() {
        let mut c = WatchCache::default();
        c.load(Vec::new(), 10);
        for r in 11..=160 {
            // One change every 10 s (`put`): the window never grows past 100.
            put(&mut c, r, r - 10, &r.to_string(), false);
        }
        assert_eq!(c.history_len(), 100);
        assert_eq!(c.oldest(Kind::ConfigMap), 61);
        assert!(c.events_after(Kind::ConfigMap, 10).is_none());
        assert!(c.events_after(Kind::ConfigMap, 59).is_none());
        assert_eq!(
            c.events_after(Kind::ConfigMap, 60).map(|e| e.len()),
            Some(100)
        );
        assert_eq!(
            c.events_after(Kind::ConfigMap, 150).map(|e| e.len()),
            Some(10)
        );
        assert_eq!(c.oldest(Kind::Secret), 11);
        assert_eq!(c.events_after(Kind::Secret, 10).map(|e| e.len()), Some(0));
        assert!(c.events_after(Kind::Secret, 9).is_none());
    }

    /// A watch resuming from an old resourceVersion gets every change as it was written,
    /// though the window keeps superseded revisions encoded.
    #[test]
    fn a_resumed_watch_gets_superseded_revisions_back_as_written() {
        let mut c = WatchCache::default();
        let written: Vec<Arc<Object>> = (1..=3)
            .map(|r| put(&mut c, r, r, &r.to_string(), false))
            .collect();
        let window = &c.history[&Kind::ConfigMap];
        assert!(window.iter().take(2).all(|k| k.object.encoded_len() > 0));
        assert!(window.back().is_some_and(|k| k.object.is(&written[2])));
        let evs = c
            .events_after(Kind::ConfigMap, 0)
            .expect("the window reaches back");
        assert_eq!(evs.len(), 3);
        for (e, w) in evs.iter().zip(&written) {
            assert_eq!(*e.object, **w);
        }
        assert_eq!(evs[2].prev.as_deref(), Some(&*written[1]));
        let (recent, total) = c.recent(2);
        assert_eq!(total, 3);
        assert_eq!((recent[0].revision, recent[0].modified), (3, true));
        assert_eq!(recent[1].key.name, "a");
    }
}
