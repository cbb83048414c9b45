//! The garbage collector's dependency graph, as upstream's `GraphBuilder` keeps it: every
//! object the collector knows, by uid, and for every uid named as an owner the uids of the
//! objects that name it. It is kept from informer changes and list results, never rebuilt.
//!
//! A change that can alter a verdict (an object added or gone, its owner references,
//! deletion timestamp or finalizers changed) marks the object, its owners and its
//! dependents dirty: a verdict reads only the object, its owners and its dependents, so
//! those are the only ones to look at again. A status update marks nothing.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use crate::object::Object;

/// Objects by uid, who depends on whom, and what to look at again.
#[derive(Default)]
pub struct Graph {
    nodes: BTreeMap<String, Arc<Object>>,
    /// Owner uid → the uids of the present objects naming it (the owner itself may be
    /// absent: upstream's virtual nodes).
    dependents: BTreeMap<String, BTreeSet<String>>,
    dirty: BTreeSet<String>,
}

fn uid(o: &Object) -> Option<&str> {
    o.meta().uid.as_deref().filter(|u| !u.is_empty())
}

fn owner_uids(o: &Object) -> impl Iterator<Item = &str> {
    o.meta()
        .owner_references
        .iter()
        .flatten()
        .map(|r| r.uid.as_str())
}

/// Whether `old` → `new` changes anything the collector decides on.
fn changed_for_gc(old: &Object, new: &Object) -> bool {
    let (a, b) = (old.meta(), new.meta());
    a.owner_references != b.owner_references
        || a.deletion_timestamp != b.deletion_timestamp
        || a.finalizers != b.finalizers
}

impl Graph {
    /// The object with this uid.
    pub fn get(&self, uid: &str) -> Option<&Arc<Object>> {
        self.nodes.get(uid)
    }

    /// The present objects naming `uid` as an owner.
    pub fn dependents<'a>(&'a self, uid: &str) -> impl Iterator<Item = &'a Arc<Object>> + 'a {
        self.dependents
            .get(uid)
            .into_iter()
            .flatten()
            .filter_map(|d| self.nodes.get(d))
    }

    /// Whether any present object names `uid` as an owner.
    pub fn has_dependents(&self, uid: &str) -> bool {
        self.dependents.get(uid).is_some_and(|d| !d.is_empty())
    }

    /// How many objects the graph holds.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Whether the graph holds no object.
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// Marks `uid` to be looked at again.
    pub fn mark(&mut self, uid: &str) {
        if !self.dirty.contains(uid) {
            self.dirty.insert(uid.to_string());
        }
    }

    /// Whether anything waits to be looked at.
    pub fn has_dirty(&self) -> bool {
        !self.dirty.is_empty()
    }

    /// The uids to look at again (in uid order), emptying the set.
    pub fn take_dirty(&mut self) -> BTreeSet<String> {
        std::mem::take(&mut self.dirty)
    }

    fn mark_dependents(&mut self, uid: &str) {
        let deps: Vec<String> = self
            .dependents
            .get(uid)
            .into_iter()
            .flatten()
            .cloned()
            .collect();
        for d in deps {
            self.mark(&d);
        }
    }

    /// An object seen (added, changed or listed).
    pub fn upsert(&mut self, o: &Arc<Object>) {
        let Some(id) = uid(o) else {
            return;
        };
        // Most changes are to objects already known (status updates, lists): no new key.
        let old = match self.nodes.get_mut(id) {
            Some(slot) => Some(std::mem::replace(slot, o.clone())),
            None => self.nodes.insert(id.to_string(), o.clone()),
        };
        if old.as_deref().is_some_and(|old| !changed_for_gc(old, o)) {
            return;
        }
        if let Some(old) = &old {
            for owner in owner_uids(old) {
                self.unlink(owner, id);
                self.mark(owner);
            }
        }
        for owner in owner_uids(o) {
            self.dependents
                .entry(owner.to_string())
                .or_default()
                .insert(id.to_string());
            self.mark(owner);
        }
        self.mark(id);
        self.mark_dependents(id);
    }

    /// An object gone: its owners and dependents are looked at again.
    pub fn remove(&mut self, o: &Object) {
        let Some(id) = uid(o) else {
            return;
        };
        let Some(last) = self.nodes.remove(id) else {
            return;
        };
        for owner in owner_uids(&last) {
            self.unlink(owner, id);
            self.mark(owner);
        }
        self.mark_dependents(id);
    }

    fn unlink(&mut self, owner: &str, dependent: &str) {
        if let Some(set) = self.dependents.get_mut(owner) {
            set.remove(dependent);
            if set.is_empty() {
                self.dependents.remove(owner);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::object::Kind;
    use serde_json::json;

    fn cm(name: &str, uid: &str, owner: Option<&str>, labels: bool) -> Arc<Object> {
        let mut v = json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": "default", "uid": uid}});
        if let Some(o) = owner {
            v["metadata"]["ownerReferences"] =
                json!([{"apiVersion": "v1", "kind": "ConfigMap", "name": "o", "uid": o}]);
        }
        if labels {
            v["metadata"]["labels"] = json!({"a": "b"});
        }
        Arc::new(Object::from_value(Kind::ConfigMap, &v, &mut Vec::new()).expect("ConfigMap"))
    }

    fn set(uids: &[&str]) -> BTreeSet<String> {
        uids.iter().map(|u| u.to_string()).collect()
    }

    #[test]
    fn a_change_marks_the_object_its_owners_and_its_dependents() {
        let mut g = Graph::default();
        g.upsert(&cm("owner", "u-owner", None, false));
        g.upsert(&cm("dep", "u-dep", Some("u-owner"), false));
        g.take_dirty();
        assert_eq!(g.dependents("u-owner").count(), 1);

        g.remove(&cm("owner", "u-owner", None, false));
        assert_eq!(g.take_dirty(), set(&["u-dep"]));
        assert!(g.get("u-owner").is_none());
        // The dependent still names the gone owner.
        assert!(g.has_dependents("u-owner"));

        g.remove(&cm("dep", "u-dep", Some("u-owner"), false));
        assert_eq!(g.take_dirty(), set(&["u-owner"]));
        assert!(!g.has_dependents("u-owner"));
        assert!(g.is_empty());
    }

    #[test]
    fn an_update_that_leaves_owners_deletion_and_finalizers_alone_marks_nothing() {
        let mut g = Graph::default();
        g.upsert(&cm("dep", "u-dep", Some("u-owner"), false));
        g.take_dirty();
        g.upsert(&cm("dep", "u-dep", Some("u-owner"), true));
        assert!(!g.has_dirty());
        // The graph keeps the newest copy all the same.
        assert!(g.get("u-dep").unwrap().meta().labels.is_some());

        // Moving it to another owner marks both owners and the object.
        g.upsert(&cm("dep", "u-dep", Some("u-other"), true));
        assert_eq!(g.take_dirty(), set(&["u-dep", "u-other", "u-owner"]));
        assert!(!g.has_dependents("u-owner"));
        assert!(g.has_dependents("u-other"));
        assert_eq!(g.len(), 1);
    }
}
