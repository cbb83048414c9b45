//! NodeInfo (a node with the pods on it and their aggregated requests, ports and images) and
//! Snapshot (all NodeInfos in upstream nodeTree order plus the objects plugins read).

use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_openapi::api::apps::v1::{ReplicaSet, StatefulSet};
use k8s_openapi::api::core::v1::{Node, PersistentVolume, PersistentVolumeClaim, Service, Taint};
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use k8s_openapi::api::storage::v1::StorageClass;

use super::domaincache::{DomainCache, KeyIndex};
use super::podinfo::{HostPort, PodInfo, SharedPod};
use super::resource::Resource;
use super::selector::Labels;
use super::selector::Selector;

/// `topology.kubernetes.io/zone`.
pub const LABEL_ZONE: &str = "topology.kubernetes.io/zone";
/// `topology.kubernetes.io/region`.
pub const LABEL_REGION: &str = "topology.kubernetes.io/region";
/// `kubernetes.io/hostname`.
pub const LABEL_HOSTNAME: &str = "kubernetes.io/hostname";
const LABEL_ZONE_BETA: &str = "failure-domain.beta.kubernetes.io/zone";
const LABEL_REGION_BETA: &str = "failure-domain.beta.kubernetes.io/region";

/// A node and the pods assigned (or assumed) to it.
#[derive(Clone, Debug)]
pub struct NodeInfo {
    /// Position in the snapshot's node list (lets plugins index per-node arrays).
    pub idx: usize,
    /// The node object.
    pub node: Arc<Node>,
    /// The node name.
    pub name: String,
    /// Node labels.
    pub labels: Labels,
    /// Node taints.
    pub taints: Vec<Taint>,
    /// `spec.unschedulable`.
    pub unschedulable: bool,
    /// Allocatable resources (status.allocatable, else status.capacity).
    pub allocatable: Resource,
    /// Sum of the pods' requests.
    pub requested: Resource,
    /// Sum of the pods' requests with 100m/200Mi for containers missing cpu/memory.
    pub non_zero_requested: Resource,
    /// Pods on the node.
    pub pods: Vec<Arc<PodInfo>>,
    /// How many pods on the node have any pod (anti-)affinity.
    pub pods_with_affinity: usize,
    /// How many pods on the node have required anti-affinity.
    pub pods_with_required_anti_affinity: usize,
    /// Host ports in use.
    pub used_ports: Vec<HostPort>,
    /// Image name (as the node reports it) → size in bytes.
    pub images: BTreeMap<String, i64>,
    /// `namespace/claim` → number of pods on this node using it.
    pub pvc_ref_counts: BTreeMap<String, usize>,
}

impl NodeInfo {
    /// A NodeInfo for a node with no pods.
    pub fn new(node: Arc<Node>) -> NodeInfo {
        let name = node.metadata.name.clone().unwrap_or_default();
        let labels = node.metadata.labels.clone().unwrap_or_default();
        let spec = node.spec.as_ref();
        let taints = spec.and_then(|s| s.taints.clone()).unwrap_or_default();
        let unschedulable = spec.and_then(|s| s.unschedulable).unwrap_or(false);
        let status = node.status.as_ref();
        let alloc = status.and_then(|s| s.allocatable.as_ref().or(s.capacity.as_ref()));
        let allocatable = Resource::from_list(alloc);
        let mut images = BTreeMap::new();
        for img in status.and_then(|s| s.images.as_ref()).into_iter().flatten() {
            for n in img.names.iter().flatten() {
                images.insert(n.clone(), img.size_bytes.unwrap_or(0));
            }
        }
        NodeInfo {
            idx: 0,
            node,
            name,
            labels,
            taints,
            unschedulable,
            allocatable,
            requested: Resource::default(),
            non_zero_requested: Resource::default(),
            pods: Vec::new(),
            pods_with_affinity: 0,
            pods_with_required_anti_affinity: 0,
            used_ports: Vec::new(),
            images,
            pvc_ref_counts: BTreeMap::new(),
        }
    }

    /// Accounts a pod on this node (`NodeInfo.AddPod`).
    pub fn add_pod(&mut self, p: Arc<PodInfo>) {
        self.requested.add(&p.requests);
        self.non_zero_requested.milli_cpu += p.non0_cpu;
        self.non_zero_requested.memory += p.non0_mem;
        if p.has_affinity() {
            self.pods_with_affinity += 1;
        }
        if !p.required_anti_affinity.is_empty() {
            self.pods_with_required_anti_affinity += 1;
        }
        self.used_ports.extend(p.host_ports.iter().cloned());
        for c in &p.pvc_names {
            *self
                .pvc_ref_counts
                .entry(format!("{}/{c}", p.namespace))
                .or_insert(0) += 1;
        }
        self.pods.push(p);
    }

    /// Removes a pod by key; returns it if it was here (`NodeInfo.RemovePod`).
    pub fn remove_pod(&mut self, key: &str) -> Option<Arc<PodInfo>> {
        let i = self.pods.iter().position(|p| p.key == key)?;
        let p = self.pods.remove(i);
        self.requested.sub(&p.requests);
        self.non_zero_requested.milli_cpu -= p.non0_cpu;
        self.non_zero_requested.memory -= p.non0_mem;
        if p.has_affinity() {
            self.pods_with_affinity -= 1;
        }
        if !p.required_anti_affinity.is_empty() {
            self.pods_with_required_anti_affinity -= 1;
        }
        for hp in &p.host_ports {
            if let Some(j) = self.used_ports.iter().position(|u| u == hp) {
                self.used_ports.remove(j);
            }
        }
        for c in &p.pvc_names {
            let k = format!("{}/{c}", p.namespace);
            if let Some(n) = self.pvc_ref_counts.get_mut(&k) {
                *n -= 1;
                if *n == 0 {
                    self.pvc_ref_counts.remove(&k);
                }
            }
        }
        Some(p)
    }

    /// Replaces the node object, keeping the pods.
    pub fn set_node(&mut self, node: Arc<Node>) {
        let pods = std::mem::take(&mut self.pods);
        let mut fresh = NodeInfo::new(node);
        fresh.idx = self.idx;
        for p in pods {
            fresh.add_pod(p);
        }
        *self = fresh;
    }
}

/// `utilnode.GetZoneKey`: region and zone joined, or "" when the node has neither.
pub fn zone_key(labels: &Labels) -> String {
    let get = |a: &str, b: &str| {
        labels
            .get(a)
            .or_else(|| labels.get(b))
            .cloned()
            .unwrap_or_default()
    };
    let region = get(LABEL_REGION, LABEL_REGION_BETA);
    let zone = get(LABEL_ZONE, LABEL_ZONE_BETA);
    if region.is_empty() && zone.is_empty() {
        return String::new();
    }
    format!("{region}:\x00:{zone}")
}

/// The cluster as the scheduler sees it in one cycle: NodeInfos in nodeTree order and the
/// objects plugins read. Kept up to date incrementally by the caller (like the scheduler
/// cache), so building one per pod is never needed.
#[derive(Clone, Debug, Default)]
pub struct Snapshot {
    nodes: Vec<NodeInfo>,
    index: BTreeMap<String, usize>,
    /// Zone key → node names, zones in order of first appearance (upstream nodeTree).
    zones: Vec<(String, Vec<String>)>,
    pod_node: BTreeMap<String, String>,
    image_nodes: BTreeMap<String, usize>,
    label_keys: BTreeMap<String, usize>,
    pods_with_affinity: usize,
    pods_with_required_anti_affinity: usize,
    domain_cache: std::cell::RefCell<DomainCache>,
    /// PVCs by `namespace/name`.
    pub pvcs: BTreeMap<String, Arc<PersistentVolumeClaim>>,
    /// PVs by name.
    pub pvs: BTreeMap<String, Arc<PersistentVolume>>,
    /// StorageClasses by name.
    pub storage_classes: BTreeMap<String, Arc<StorageClass>>,
    /// Services (for PodTopologySpread's system default selector).
    pub services: Vec<Arc<Service>>,
    /// ReplicaSets (for the system default selector).
    pub replica_sets: Vec<Arc<ReplicaSet>>,
    /// StatefulSets (for the system default selector).
    pub stateful_sets: Vec<Arc<StatefulSet>>,
    /// Namespace labels by name (for namespaceSelector in pod affinity).
    pub namespace_labels: BTreeMap<String, Labels>,
    /// PodDisruptionBudgets (for DefaultPreemption's victim selection).
    pub pdbs: Vec<Arc<PodDisruptionBudget>>,
}

impl Snapshot {
    /// Builds a snapshot from nodes (in the order they were added to the cluster) and pods;
    /// pods that are unassigned or finished are ignored, as the scheduler cache does.
    pub fn new(nodes: &[Arc<Node>], pods: &[SharedPod]) -> Snapshot {
        let mut s = Snapshot::default();
        for n in nodes {
            s.insert_node_no_reorder(n.clone());
        }
        s.reorder();
        for p in pods {
            s.add_pod(p.clone());
        }
        s
    }

    /// Number of nodes.
    pub fn num_nodes(&self) -> usize {
        self.nodes.len()
    }

    /// All NodeInfos in nodeTree order (zones interleaved round-robin).
    pub fn nodes(&self) -> &[NodeInfo] {
        &self.nodes
    }

    /// A node by name.
    pub fn get(&self, name: &str) -> Option<&NodeInfo> {
        self.index.get(name).map(|i| &self.nodes[*i])
    }

    /// The position of a node in [`Snapshot::nodes`].
    pub fn position(&self, name: &str) -> Option<usize> {
        self.index.get(name).copied()
    }

    /// How many nodes report an image under this exact name.
    pub fn num_nodes_with_image(&self, image: &str) -> usize {
        self.image_nodes.get(image).copied().unwrap_or(0)
    }

    /// Pods in the cluster with any pod (anti-)affinity (0 lets InterPodAffinity skip).
    pub fn num_pods_with_affinity(&self) -> usize {
        self.pods_with_affinity
    }

    /// Pods in the cluster with required pod anti-affinity.
    pub fn num_pods_with_required_anti_affinity(&self) -> usize {
        self.pods_with_required_anti_affinity
    }

    /// Each node's domain for a label key, as integers (cached; see [`DomainCache`]).
    pub fn key_index(&self, key: &str) -> Arc<KeyIndex> {
        self.domain_cache.borrow_mut().key_index(&self.nodes, key)
    }

    /// Pods in `namespace` matching `selector` per node position (cached, kept current).
    pub fn node_pod_counts(&self, namespace: &str, selector: &Selector) -> Arc<Vec<i64>> {
        self.domain_cache
            .borrow_mut()
            .node_pod_counts(&self.nodes, namespace, selector)
    }

    /// Pods in `namespace` matching `selector` per domain of `key` (indexed like
    /// [`KeyIndex::values`]; cached, kept current).
    pub fn domain_totals(&self, namespace: &str, selector: &Selector, key: &str) -> Arc<Vec<i64>> {
        self.domain_cache
            .borrow_mut()
            .domain_totals(&self.nodes, namespace, selector, key)
    }

    /// Pods in `namespace` matching `selector` per value of node label `key`, over all
    /// nodes carrying the key (domains without matching pods are present with 0).
    pub fn domain_counts(
        &self,
        namespace: &str,
        selector: &Selector,
        key: &str,
    ) -> BTreeMap<String, i64> {
        let ki = self.key_index(key);
        let totals = self.domain_totals(namespace, selector, key);
        ki.values
            .iter()
            .cloned()
            .zip(totals.iter().copied())
            .collect()
    }

    fn account(&mut self, i: usize, p: &PodInfo, delta: i64) {
        let d = |c: &mut usize| *c = (*c as i64 + delta).max(0) as usize;
        if p.has_affinity() {
            d(&mut self.pods_with_affinity);
        }
        if !p.required_anti_affinity.is_empty() {
            d(&mut self.pods_with_required_anti_affinity);
        }
        self.domain_cache.get_mut().on_pod(i, p, delta);
    }

    /// How many nodes carry a label key (lets spreading skip keys no node has).
    pub fn num_nodes_with_label_key(&self, key: &str) -> usize {
        self.label_keys.get(key).copied().unwrap_or(0)
    }

    fn count_labels(&mut self, labels: &Labels, add: bool) {
        for k in labels.keys() {
            let c = self.label_keys.entry(k.clone()).or_insert(0);
            if add {
                *c += 1;
            } else {
                *c = c.saturating_sub(1);
            }
        }
        self.label_keys.retain(|_, c| *c > 0);
    }

    /// The node a pod (by `namespace/name`) is on, if any.
    pub fn node_of_pod(&self, key: &str) -> Option<&str> {
        self.pod_node.get(key).map(|s| s.as_str())
    }

    /// The cached PodInfo of an assigned (or assumed) pod.
    pub fn pod_info(&self, key: &str) -> Option<Arc<PodInfo>> {
        let node = self.get(self.node_of_pod(key)?)?;
        node.pods.iter().find(|p| p.key == key).cloned()
    }

    fn insert_node_no_reorder(&mut self, node: Arc<Node>) {
        let ni = NodeInfo::new(node);
        if self.index.contains_key(&ni.name) {
            return;
        }
        for img in ni.images.keys() {
            *self.image_nodes.entry(img.clone()).or_insert(0) += 1;
        }
        let labels = ni.labels.clone();
        self.count_labels(&labels, true);
        let zk = zone_key(&ni.labels);
        match self.zones.iter_mut().find(|(z, _)| *z == zk) {
            Some((_, names)) => names.push(ni.name.clone()),
            None => self.zones.push((zk, vec![ni.name.clone()])),
        }
        self.index.insert(ni.name.clone(), self.nodes.len());
        self.nodes.push(ni);
    }

    /// Re-sorts `nodes` into nodeTree order: round-robin over zones.
    fn reorder(&mut self) {
        self.domain_cache.get_mut().clear();
        let mut by_name: BTreeMap<String, NodeInfo> = std::mem::take(&mut self.nodes)
            .into_iter()
            .map(|n| (n.name.clone(), n))
            .collect();
        let longest = self.zones.iter().map(|(_, v)| v.len()).max().unwrap_or(0);
        for i in 0..longest {
            for (_, names) in &self.zones {
                if let Some(n) = names.get(i).and_then(|name| by_name.remove(name)) {
                    self.nodes.push(n);
                }
            }
        }
        for (i, n) in self.nodes.iter_mut().enumerate() {
            n.idx = i;
        }
        self.index = self
            .nodes
            .iter()
            .enumerate()
            .map(|(i, n)| (n.name.clone(), i))
            .collect();
    }

    /// Adds a node (no-op if it exists).
    pub fn add_node(&mut self, node: Arc<Node>) {
        self.insert_node_no_reorder(node);
        self.reorder();
    }

    /// Updates a node object, keeping its pods (adds it if new).
    pub fn update_node(&mut self, node: Arc<Node>) {
        let name = node.metadata.name.clone().unwrap_or_default();
        let Some(&i) = self.index.get(&name) else {
            return self.add_node(node);
        };
        let old_zone = zone_key(&self.nodes[i].labels);
        let new_zone = zone_key(node.metadata.labels.as_ref().unwrap_or(&Labels::new()));
        for img in self.nodes[i].images.keys() {
            if let Some(c) = self.image_nodes.get_mut(img) {
                *c -= 1;
            }
        }
        let old_labels = self.nodes[i].labels.clone();
        self.count_labels(&old_labels, false);
        self.domain_cache.get_mut().clear();
        self.nodes[i].set_node(node);
        let new_labels = self.nodes[i].labels.clone();
        self.count_labels(&new_labels, true);
        for img in self.nodes[i].images.keys() {
            *self.image_nodes.entry(img.clone()).or_insert(0) += 1;
        }
        self.image_nodes.retain(|_, c| *c > 0);
        if old_zone != new_zone {
            self.remove_from_zone(&old_zone, &name);
            match self.zones.iter_mut().find(|(z, _)| *z == new_zone) {
                Some((_, names)) => names.push(name),
                None => self.zones.push((new_zone, vec![name])),
            }
            self.reorder();
        }
    }

    fn remove_from_zone(&mut self, zone: &str, name: &str) {
        if let Some(zi) = self.zones.iter().position(|(z, _)| z == zone) {
            let names = &mut self.zones[zi].1;
            if let Some(j) = names.iter().position(|n| n == name) {
                // nodeTree.removeNode swaps the last node into the hole.
                names.swap_remove(j);
            }
            if names.is_empty() {
                self.zones.remove(zi);
            }
        }
    }

    /// Removes a node and the pods on it.
    pub fn remove_node(&mut self, name: &str) {
        let Some(&i) = self.index.get(name) else {
            return;
        };
        let zk = zone_key(&self.nodes[i].labels);
        for img in self.nodes[i].images.keys() {
            if let Some(c) = self.image_nodes.get_mut(img) {
                *c -= 1;
            }
        }
        self.image_nodes.retain(|_, c| *c > 0);
        let old_labels = self.nodes[i].labels.clone();
        self.count_labels(&old_labels, false);
        self.pod_node.retain(|_, n| n != name);
        let gone = self.nodes.remove(i);
        for p in &gone.pods {
            if p.has_affinity() {
                self.pods_with_affinity -= 1;
            }
            if !p.required_anti_affinity.is_empty() {
                self.pods_with_required_anti_affinity -= 1;
            }
        }
        self.remove_from_zone(&zk, name);
        self.reorder();
    }

    /// Adds an assigned pod (by `spec.nodeName`), replacing an assumed entry of the same
    /// pod (the bound object confirms the assumption). Unassigned, Succeeded or Failed pods
    /// and pods on unknown nodes are ignored.
    pub fn add_pod(&mut self, pod: SharedPod) {
        let phase = pod.status.as_ref().and_then(|s| s.phase.as_deref());
        if matches!(phase, Some("Succeeded") | Some("Failed")) {
            return;
        }
        let info = PodInfo::new(pod);
        if info.node_name.is_empty() || !self.index.contains_key(&info.node_name) {
            return;
        }
        self.remove_pod(&info.key);
        let node = info.node_name.clone();
        self.assume_pod(Arc::new(info), &node);
    }

    /// Places a pod on a node (the scheduler's `assume` after a successful cycle).
    /// Returns false if the node is unknown or the pod is already placed.
    pub fn assume_pod(&mut self, info: Arc<PodInfo>, node: &str) -> bool {
        if self.pod_node.contains_key(&info.key) {
            return false;
        }
        let Some(&i) = self.index.get(node) else {
            return false;
        };
        self.pod_node.insert(info.key.clone(), node.to_string());
        self.account(i, &info, 1);
        self.nodes[i].add_pod(info);
        true
    }

    /// Removes a pod by `namespace/name` (deleted, finished, or a binding that failed).
    pub fn remove_pod(&mut self, key: &str) -> Option<Arc<PodInfo>> {
        let node = self.pod_node.remove(key)?;
        let i = *self.index.get(&node)?;
        let p = self.nodes[i].remove_pod(key)?;
        self.account(i, &p, -1);
        Some(p)
    }

    /// Replaces a pod's object (e.g. its labels changed); a pod that moved to a terminal
    /// phase is removed.
    pub fn update_pod(&mut self, pod: SharedPod) {
        // Unassigned objects are not the cache's business (an assumed pod stays assumed
        // until its bound object arrives).
        let assigned = pod
            .spec
            .as_ref()
            .and_then(|s| s.node_name.as_deref())
            .is_some_and(|n| !n.is_empty());
        if !assigned {
            return;
        }
        let key = format!(
            "{}/{}",
            pod.metadata.namespace.as_deref().unwrap_or(""),
            pod.metadata.name.as_deref().unwrap_or("")
        );
        self.remove_pod(&key);
        self.add_pod(pod);
    }

    /// Adds or replaces a PVC.
    pub fn set_pvc(&mut self, pvc: Arc<PersistentVolumeClaim>) {
        let k = format!(
            "{}/{}",
            pvc.metadata.namespace.as_deref().unwrap_or(""),
            pvc.metadata.name.as_deref().unwrap_or("")
        );
        self.pvcs.insert(k, pvc);
    }

    /// Adds or replaces a PV.
    pub fn set_pv(&mut self, pv: Arc<PersistentVolume>) {
        self.pvs
            .insert(pv.metadata.name.clone().unwrap_or_default(), pv);
    }

    /// Adds or replaces a StorageClass.
    pub fn set_storage_class(&mut self, sc: Arc<StorageClass>) {
        self.storage_classes
            .insert(sc.metadata.name.clone().unwrap_or_default(), sc);
    }
}

#[cfg(test)]
#[path = "nodeinfo_tests.rs"]
mod tests;
