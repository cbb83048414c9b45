//! What the object inspector shows for any stored object: its YAML as `kubectl get -o yaml`
//! prints it, its Events, its owner tree flattened into rows, its etcd key with the
//! revisions etcd still holds, and the request that wrote the current revision with its
//! pipeline spans laid out as bars. The engine's read models (`kubeloop_sim::view::objects`
//! and `::etcd`) do the reading; this shapes them for the view.

use kubeloop_sim::apiserver::Span;
use kubeloop_sim::kubectl::describe::EventRow;
use kubeloop_sim::object::{Kind, ObjectKey};
use kubeloop_sim::view::etcd::{key_history, writer_of, KeyHistory, WriteRequest};
use kubeloop_sim::view::objects::{
    object_events, object_yaml, owner_tree, stored_object, OwnerTree, TreeNode,
};
use kubeloop_sim::World;

/// At most this many dependents in the owner tree (a 100-replica Deployment lists 40
/// Pods and counts the rest).
pub const TREE_CAP: usize = 40;
/// At most this many revisions of a key (a Node's status writes are many).
pub const REVISION_CAP: usize = 20;

/// Everything the inspector shows about one object.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Inspected {
    /// The object.
    pub key: ObjectKey,
    /// `kubectl get KIND NAME -o yaml`.
    pub yaml: String,
    /// Its Events, as `kubectl describe` lists them.
    pub events: Vec<EventRow>,
    /// Owners up, dependents down, as rows.
    pub tree: Vec<TreeRow>,
    /// Dependents not listed.
    pub tree_hidden: usize,
    /// Its etcd key and revisions.
    pub etcd: KeyHistory,
    /// The request that wrote the current revision, if the audit log still has it.
    pub writer: Option<WriteRequest>,
}

/// Reads one object, or `None` when etcd no longer holds it.
pub fn inspect_object(world: &World, key: &ObjectKey) -> Option<Inspected> {
    let obj = stored_object(world, key)?;
    let tree = owner_tree(world, &obj, TREE_CAP);
    let etcd = key_history(world, key, REVISION_CAP);
    Some(Inspected {
        key: key.clone(),
        yaml: object_yaml(&obj),
        events: object_events(world, &obj),
        tree_hidden: tree.hidden,
        tree: tree_rows(key, &tree),
        writer: writer_of(world, etcd.mod_revision),
        etcd,
    })
}

/// One row of the owner tree.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TreeRow {
    /// Indentation: owners above the object have negative depths (the topmost owner
    /// first), the object is 0, dependents are 1, 2, …
    pub depth: i32,
    /// The object of the row.
    pub key: ObjectKey,
    /// How it is linked to the row it hangs from (`ownerReference`, a label).
    pub via: &'static str,
}

/// The tree as rows, top to bottom: the topmost owner, …, the object, its dependents
/// depth-first.
pub fn tree_rows(me: &ObjectKey, tree: &OwnerTree) -> Vec<TreeRow> {
    let n = tree.owners.len() as i32;
    let mut rows: Vec<TreeRow> = tree
        .owners
        .iter()
        .rev()
        .enumerate()
        .map(|(i, k)| TreeRow {
            depth: i as i32 - n,
            key: k.clone(),
            via: "ownerReference",
        })
        .collect();
    rows.push(TreeRow {
        depth: 0,
        key: me.clone(),
        via: "",
    });
    fn walk(nodes: &[TreeNode], depth: i32, rows: &mut Vec<TreeRow>) {
        for n in nodes {
            rows.push(TreeRow {
                depth,
                key: n.key.clone(),
                via: n.via,
            });
            walk(&n.children, depth + 1, rows);
        }
    }
    walk(&tree.dependents, 1, &mut rows);
    rows
}

/// The two revisions compared by default: the last two held (older, newer), by index.
pub fn default_pair(h: &KeyHistory) -> Option<(usize, usize)> {
    let n = h.revisions.len();
    (n >= 2).then(|| (n - 2, n - 1))
}

/// One pipeline span as a bar: its stage, start offset and duration (ms from the
/// request's arrival), and its left and width in percent of the whole request.
#[derive(Clone, Debug, PartialEq)]
pub struct SpanBar {
    /// `authentication`, …, `etcd`, `response`.
    pub stage: &'static str,
    /// Start, ms after the request arrived.
    pub offset: u64,
    /// Duration, ms.
    pub duration: u64,
    /// Left edge, % of the request's duration.
    pub left: f64,
    /// Width, % (at least 1, so an instant stage is still seen).
    pub width: f64,
}

/// The spans of a request as bars on one time axis.
pub fn span_bars(received: u64, spans: &[Span]) -> Vec<SpanBar> {
    let end = spans.iter().map(|s| s.end).max().unwrap_or(received);
    let total = end.saturating_sub(received).max(1) as f64;
    spans
        .iter()
        .map(|s| {
            let offset = s.start.saturating_sub(received);
            let duration = s.end.saturating_sub(s.start);
            SpanBar {
                stage: s.stage,
                offset,
                duration,
                left: offset as f64 / total * 100.0,
                width: (duration as f64 / total * 100.0).max(1.0),
            }
        })
        .collect()
}

/// The `data-object` id of an object: `Deployment/default/nginx`, `Node//node-1`.
pub fn object_id(k: &ObjectKey) -> String {
    format!("{}/{}/{}", k.kind.info().kind, k.namespace, k.name)
}

/// The object an id names, among `kinds` (built-in and the custom kinds served).
pub fn parse_object_id(id: &str, custom: &[Kind]) -> Option<ObjectKey> {
    let mut parts = id.splitn(3, '/');
    let (kind, ns, name) = (parts.next()?, parts.next()?, parts.next()?);
    let kind = Kind::ALL
        .iter()
        .chain(custom)
        .find(|k| k.info().kind == kind)
        .copied()?;
    Some(ObjectKey::new(kind, ns, name))
}

/// The `kubectl get` argument for a kind: `deployment.apps`, `pod`.
pub fn kubectl_kind(kind: Kind) -> String {
    kubeloop_sim::kubectl::output::kind_prefix(kind)
}

#[cfg(test)]
#[path = "inspect_object_tests.rs"]
mod tests;
