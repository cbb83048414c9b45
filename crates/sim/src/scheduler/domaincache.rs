//! A cache of matching-pod counts per topology domain, keyed by (namespace, selector,
//! topology key) and kept up to date as pods are added and removed, so spreading does not
//! rescan every pod of the cluster for each pod it schedules.

use std::collections::BTreeMap;

use super::nodeinfo::NodeInfo;
use super::podinfo::PodInfo;
use super::selector::Selector;

/// Entries kept at most; the oldest is dropped beyond that.
const MAX_ENTRIES: usize = 32;

#[derive(Clone, Debug)]
struct Entry {
    namespace: String,
    selector: Selector,
    key: String,
    by_value: BTreeMap<String, i64>,
}

/// Matching-pod counts per domain (see the module docs).
#[derive(Clone, Debug, Default)]
pub struct DomainCache {
    entries: Vec<Entry>,
}

/// Whether a pod counts for spreading with this selector (`countPodsMatchSelector`):
/// same namespace, not terminating, labels match.
pub fn pod_counts(p: &PodInfo, namespace: &str, selector: &Selector) -> bool {
    p.namespace == namespace
        && p.pod.metadata.deletion_timestamp.is_none()
        && selector.matches(&p.labels)
}

impl DomainCache {
    /// Counts per value of `key` over every node carrying it (domains without matching
    /// pods are present with 0).
    pub fn get(
        &mut self,
        nodes: &[NodeInfo],
        namespace: &str,
        selector: &Selector,
        key: &str,
    ) -> &BTreeMap<String, i64> {
        let pos = self
            .entries
            .iter()
            .position(|e| e.key == key && e.namespace == namespace && e.selector == *selector);
        let pos = match pos {
            Some(p) => p,
            None => {
                let mut by_value = BTreeMap::new();
                for n in nodes {
                    if let Some(v) = n.labels.get(key) {
                        let c = n
                            .pods
                            .iter()
                            .filter(|p| pod_counts(p, namespace, selector))
                            .count() as i64;
                        *by_value.entry(v.clone()).or_insert(0) += c;
                    }
                }
                if self.entries.len() >= MAX_ENTRIES {
                    self.entries.remove(0);
                }
                self.entries.push(Entry {
                    namespace: namespace.to_string(),
                    selector: selector.clone(),
                    key: key.to_string(),
                    by_value,
                });
                self.entries.len() - 1
            }
        };
        &self.entries[pos].by_value
    }

    /// Accounts a pod added to (`delta` 1) or removed from (−1) a node.
    pub fn on_pod(&mut self, node: &NodeInfo, pod: &PodInfo, delta: i64) {
        for e in &mut self.entries {
            if let Some(v) = node.labels.get(&e.key) {
                if pod_counts(pod, &e.namespace, &e.selector) {
                    *e.by_value.entry(v.clone()).or_insert(0) += delta;
                }
            }
        }
    }

    /// Forgets everything (nodes changed).
    pub fn clear(&mut self) {
        self.entries.clear();
    }
}
