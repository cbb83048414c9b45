//! Integer indexes that let spreading avoid string work per node: for a label key, each
//! node's domain as a number; for a (namespace, selector), each node's matching-pod count,
//! kept up to date as pods come and go. Both are rebuilt lazily after nodes change.

use std::sync::Arc;

use super::nodeinfo::NodeInfo;
use super::podinfo::PodInfo;
use super::selector::Selector;

/// Entries kept at most per kind; the oldest is dropped beyond that.
const MAX_ENTRIES: usize = 32;

/// `node_domain` value of a node without the key.
pub const NO_DOMAIN: u32 = u32::MAX;

/// The domains of one label key.
#[derive(Clone, Debug, PartialEq)]
pub struct KeyIndex {
    /// The label key.
    pub key: String,
    /// Distinct values, in order of first appearance in the node list.
    pub values: Vec<String>,
    /// Per node position: index into `values`, or [`NO_DOMAIN`].
    pub node_domain: Vec<u32>,
}

#[derive(Clone, Debug)]
struct SelCounts {
    namespace: String,
    selector: Selector,
    per_node: Arc<Vec<i64>>,
    /// Per cached key: matching pods per domain.
    by_key: Vec<(Arc<KeyIndex>, Arc<Vec<i64>>)>,
}

/// The caches (see the module docs).
#[derive(Clone, Debug, Default)]
pub struct DomainCache {
    keys: Vec<Arc<KeyIndex>>,
    selectors: Vec<SelCounts>,
}

/// Whether a pod counts for spreading with this selector (`countPodsMatchSelector`):
/// same namespace, not terminating, labels match.
pub fn pod_counts(p: &PodInfo, namespace: &str, selector: &Selector) -> bool {
    p.namespace == namespace
        && p.pod.metadata.deletion_timestamp.is_none()
        && selector.matches(&p.labels)
}

impl DomainCache {
    /// The domain index of a label key.
    pub fn key_index(&mut self, nodes: &[NodeInfo], key: &str) -> Arc<KeyIndex> {
        if let Some(k) = self.keys.iter().find(|k| k.key == key) {
            return k.clone();
        }
        let mut values: Vec<String> = Vec::new();
        let mut lookup: std::collections::BTreeMap<&str, u32> = std::collections::BTreeMap::new();
        let node_domain = nodes
            .iter()
            .map(|n| match n.labels.get(key) {
                None => NO_DOMAIN,
                Some(v) => *lookup.entry(v.as_str()).or_insert_with(|| {
                    values.push(v.clone());
                    (values.len() - 1) as u32
                }),
            })
            .collect();
        let k = Arc::new(KeyIndex {
            key: key.to_string(),
            values,
            node_domain,
        });
        if self.keys.len() >= MAX_ENTRIES {
            self.keys.remove(0);
        }
        self.keys.push(k.clone());
        k
    }

    /// Matching pods per node position.
    pub fn node_pod_counts(
        &mut self,
        nodes: &[NodeInfo],
        namespace: &str,
        selector: &Selector,
    ) -> Arc<Vec<i64>> {
        if let Some(e) = self
            .selectors
            .iter()
            .find(|e| e.namespace == namespace && e.selector == *selector)
        {
            return e.per_node.clone();
        }
        let per_node: Vec<i64> = nodes
            .iter()
            .map(|n| {
                n.pods
                    .iter()
                    .filter(|p| pod_counts(p, namespace, selector))
                    .count() as i64
            })
            .collect();
        let per_node = Arc::new(per_node);
        if self.selectors.len() >= MAX_ENTRIES {
            self.selectors.remove(0);
        }
        self.selectors.push(SelCounts {
            namespace: namespace.to_string(),
            selector: selector.clone(),
            per_node: per_node.clone(),
            by_key: Vec::new(),
        });
        per_node
    }

    /// Matching pods per domain of `key` (indexed like [`KeyIndex::values`]).
    pub fn domain_totals(
        &mut self,
        nodes: &[NodeInfo],
        namespace: &str,
        selector: &Selector,
        key: &str,
    ) -> Arc<Vec<i64>> {
        let ki = self.key_index(nodes, key);
        let per_node = self.node_pod_counts(nodes, namespace, selector);
        let Some(e) = self
            .selectors
            .iter_mut()
            .find(|e| e.namespace == namespace && e.selector == *selector)
        else {
            return Arc::new(vec![0; ki.values.len()]);
        };
        if let Some((_, t)) = e.by_key.iter().find(|(k, _)| Arc::ptr_eq(k, &ki)) {
            return t.clone();
        }
        let mut totals = vec![0i64; ki.values.len()];
        for (i, d) in ki.node_domain.iter().enumerate() {
            if *d != NO_DOMAIN {
                totals[*d as usize] += per_node[i];
            }
        }
        let totals = Arc::new(totals);
        e.by_key.push((ki, totals.clone()));
        totals
    }

    /// Accounts a pod added to (`delta` 1) or removed from (−1) the node at `idx`.
    pub fn on_pod(&mut self, idx: usize, pod: &PodInfo, delta: i64) {
        for e in &mut self.selectors {
            if pod_counts(pod, &e.namespace, &e.selector) {
                if let Some(c) = Arc::make_mut(&mut e.per_node).get_mut(idx) {
                    *c += delta;
                }
                for (ki, t) in &mut e.by_key {
                    let d = ki.node_domain.get(idx).copied().unwrap_or(NO_DOMAIN);
                    if d != NO_DOMAIN {
                        Arc::make_mut(t)[d as usize] += delta;
                    }
                }
            }
        }
    }

    /// Forgets everything (nodes changed, positions shifted).
    pub fn clear(&mut self) {
        self.keys.clear();
        self.selectors.clear();
    }
}
