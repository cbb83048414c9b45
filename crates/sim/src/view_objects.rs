//! The object browser and the object inspector's read model: every stored object grouped
//! by kind; one object's YAML as `kubectl get KIND NAME -o yaml` prints it, its Events as
//! `kubectl describe` lists them, and its owner tree (owners up, dependents down).
//!
//! The page is omniscient: it reads etcd's store, not a client's cache, so a stopped
//! apiserver does not hide what is stored.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::kubectl::describe::{event_rows, EventRow};
use crate::kubectl::output::object_value;
use crate::kubectl::yaml::to_yaml;
use crate::object::{Kind, Object, ObjectKey};
use crate::world::World;

/// One kind's objects in the browser.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KindGroup {
    /// The kind (`Deployment`, a custom kind's name).
    pub kind: Kind,
    /// The objects that match the filter, at most the cap, in etcd key order.
    pub items: Vec<ObjectKey>,
    /// How many objects of this kind match the filter (the ones not listed are counted).
    pub matching: usize,
}

/// Every stored object whose `namespace/name` contains `filter` (case-insensitive),
/// grouped by kind (in kind-name order), at most `cap` listed per kind.
pub fn object_index(world: &World, filter: &str, cap: usize) -> Vec<KindGroup> {
    let needle = filter.trim().to_lowercase();
    let mut groups: BTreeMap<&'static str, KindGroup> = BTreeMap::new();
    for kv in world.observe().etcd().store.range_prefix("/registry/") {
        let o = &kv.value;
        if !needle.is_empty() && !shown_name(o.namespace(), o.name()).contains(&needle) {
            continue;
        }
        let kind = o.kind();
        let g = groups.entry(kind.info().kind).or_insert_with(|| KindGroup {
            kind,
            items: Vec::new(),
            matching: 0,
        });
        g.matching += 1;
        // A kind's keys share one prefix, so they come in key order: the first `cap`
        // are the ones listed (their keys built), and the rest are only counted.
        if g.items.len() < cap {
            g.items.push(o.key());
        }
    }
    groups.into_values().collect()
}

/// [`display_name`] in lower case, for the filter.
fn shown_name(namespace: &str, name: &str) -> String {
    if namespace.is_empty() {
        name.to_lowercase()
    } else {
        format!("{namespace}/{name}").to_lowercase()
    }
}

/// `namespace/name`, or `name` for a cluster-scoped object.
pub fn display_name(key: &ObjectKey) -> String {
    if key.namespace.is_empty() {
        key.name.clone()
    } else {
        format!("{}/{}", key.namespace, key.name)
    }
}

/// The stored object, if any.
pub fn stored_object(world: &World, key: &ObjectKey) -> Option<Arc<Object>> {
    world
        .observe()
        .etcd()
        .store
        .get(&key.etcd_key())
        .map(|kv| kv.value.clone())
}

/// `kubectl get KIND NAME -o yaml` of an object (kubectl's printer: apiVersion and kind
/// set, keys in order, Secrets' data in base64).
pub fn object_yaml(obj: &Object) -> String {
    to_yaml(&object_value(obj))
}

/// The Events about an object, as `kubectl describe` lists them.
pub fn object_events(world: &World, obj: &Object) -> Vec<EventRow> {
    let ns = obj.namespace();
    let events: Vec<Arc<Object>> = crate::view::stored(world, Kind::Event)
        .into_iter()
        .filter(|e| e.namespace() == ns)
        .collect();
    event_rows(obj, &events, world.now())
}

/// One object in an owner tree, with the objects it owns.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TreeNode {
    /// The object.
    pub key: ObjectKey,
    /// Why it is a dependent: `ownerReference`, or the label or name rule that links it.
    pub via: &'static str,
    /// Its dependents, in (kind, namespace, name) order.
    pub children: Vec<TreeNode>,
}

/// An object's owner tree.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OwnerTree {
    /// Its owners, nearest first (the controller owner's chain upwards).
    pub owners: Vec<ObjectKey>,
    /// Its dependents, recursively.
    pub dependents: Vec<TreeNode>,
    /// Dependents not listed (past the cap).
    pub hidden: usize,
}

/// How deep the dependents go (Deployment → ReplicaSet → Pod is 2).
const DEPTH: usize = 3;

/// The owner tree of `obj`: owners up by ownerReferences, dependents down by
/// ownerReferences, plus EndpointSlices by `kubernetes.io/service-name` and a
/// StatefulSet's PersistentVolumeClaims by name (`<claim>-<pod>`); at most `cap` dependents
/// listed in all.
pub fn owner_tree(world: &World, obj: &Object, cap: usize) -> OwnerTree {
    let all: Vec<Arc<Object>> = world
        .observe()
        .etcd()
        .store
        .range_prefix("/registry/")
        .map(|kv| kv.value.clone())
        .collect();
    let mut owners = Vec::new();
    let mut cur: Option<&Object> = Some(obj);
    while let Some(o) = cur {
        let Some(owner) = owner_of(&all, o) else {
            break;
        };
        if owners.len() >= DEPTH || owners.contains(&owner.key()) {
            break;
        }
        owners.push(owner.key());
        cur = Some(owner);
    }
    let mut budget = cap;
    let mut hidden = 0;
    let dependents = dependents_of(&all, obj, DEPTH, &mut budget, &mut hidden);
    OwnerTree {
        owners,
        dependents,
        hidden,
    }
}

/// The owner an object names first (its controller when it has one).
fn owner_of<'a>(all: &'a [Arc<Object>], o: &Object) -> Option<&'a Object> {
    let refs = o.meta().owner_references.as_ref()?;
    let r = refs
        .iter()
        .find(|r| r.controller == Some(true))
        .or(refs.first())?;
    all.iter()
        .find(|c| c.meta().uid.as_deref() == Some(r.uid.as_str()))
        .map(|c| &**c)
}

fn dependents_of(
    all: &[Arc<Object>],
    obj: &Object,
    depth: usize,
    budget: &mut usize,
    hidden: &mut usize,
) -> Vec<TreeNode> {
    if depth == 0 {
        return Vec::new();
    }
    let mut found: Vec<(ObjectKey, &'static str, &Object)> = all
        .iter()
        .filter_map(|c| link(obj, c).map(|via| (c.key(), via, &**c)))
        .collect();
    found.sort_by(|a, b| a.0.cmp(&b.0));
    found.dedup_by(|a, b| a.0 == b.0);
    let mut out = Vec::new();
    for (key, via, child) in found {
        if *budget == 0 {
            *hidden += 1;
            continue;
        }
        *budget -= 1;
        let children = dependents_of(all, child, depth - 1, budget, hidden);
        out.push(TreeNode { key, via, children });
    }
    out
}

/// Why `child` depends on `parent`, if it does.
fn link(parent: &Object, child: &Object) -> Option<&'static str> {
    let uid = parent.meta().uid.as_deref()?;
    let owned = child
        .meta()
        .owner_references
        .iter()
        .flatten()
        .any(|r| r.uid == uid);
    if owned {
        return Some("ownerReference");
    }
    if child.namespace() != parent.namespace() {
        return None;
    }
    match (parent, child) {
        (Object::Service(_), Object::EndpointSlice(_)) => {
            let label = crate::controllers::endpointslice::SERVICE_NAME_LABEL;
            let labels = child.meta().labels.as_ref()?;
            (labels.get(label).map(String::as_str) == Some(parent.name())).then_some(label)
        }
        (Object::StatefulSet(sts), Object::PersistentVolumeClaim(_)) => {
            let templates = sts.spec.as_ref()?.volume_claim_templates.as_ref()?;
            let pvc = child.name();
            templates
                .iter()
                .filter_map(|t| t.metadata.name.as_deref())
                .any(|t| {
                    pvc.strip_prefix(&format!("{t}-{}-", parent.name()))
                        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
                })
                .then_some("volumeClaimTemplates")
        }
        _ => None,
    }
}
