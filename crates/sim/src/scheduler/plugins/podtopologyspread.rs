//! PodTopologySpread: `DoNotSchedule` constraints filter nodes whose domain would exceed
//! maxSkew; `ScheduleAnyway` constraints (and the system defaults: hostname maxSkew 3, zone
//! maxSkew 5) score nodes with fewer matching pods higher.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::TopologySpreadConstraint;

use super::helper::find_untolerated_no_schedule;
use super::nodeaffinity::Required;
use crate::scheduler::config::PluginArgs;
use crate::scheduler::framework::*;
use crate::scheduler::nodeinfo::{NodeInfo, Snapshot, LABEL_HOSTNAME, LABEL_ZONE};
use crate::scheduler::podinfo::PodInfo;
use crate::scheduler::selector::{Labels, Requirement, Selector};

/// The plugin name.
pub const NAME: &str = "PodTopologySpread";
/// `ErrReasonConstraintsNotMatch`.
pub const ERR_REASON_CONSTRAINTS_NOT_MATCH: &str =
    "node(s) didn't match pod topology spread constraints";
/// `ErrReasonNodeLabelNotMatch`.
pub const ERR_REASON_NODE_LABEL_NOT_MATCH: &str =
    "node(s) didn't match pod topology spread constraints (missing required label)";
const PRE_FILTER_KEY: &str = "PreFilterPodTopologySpread";
const PRE_SCORE_KEY: &str = "PreScorePodTopologySpread";

/// A processed constraint (`topologySpreadConstraint`).
#[derive(Clone, Debug)]
pub struct Constraint {
    max_skew: i64,
    topology_key: String,
    /// `topology_key == kubernetes.io/hostname`, computed once.
    is_hostname: bool,
    selector: Selector,
    min_domains: i64,
    honor_node_affinity: bool,
    honor_node_taints: bool,
}

impl Constraint {
    /// Whether every node carrying the key is counted (no inclusion policy filters any),
    /// so the snapshot's cached per-domain counts can be used as they are.
    fn counts_all_nodes(&self, req: &Required) -> bool {
        !self.honor_node_taints && (!self.honor_node_affinity || req.is_empty())
    }

    fn includes_node(&self, pod: &PodInfo, node: &NodeInfo, req: &Required) -> bool {
        (!self.honor_node_affinity || req.matches(node))
            && (!self.honor_node_taints
                || find_untolerated_no_schedule(&node.taints, pod.tolerations()).is_none())
    }
}

/// The PodTopologySpread plugin.
pub struct PodTopologySpread {
    default_constraints: Vec<TopologySpreadConstraint>,
    system_defaulted: bool,
}

/// Constructor for the registry.
pub fn new(args: Option<&PluginArgs>) -> Result<Box<dyn Plugin>, String> {
    let (dc, system) = match args {
        Some(PluginArgs::PodTopologySpread {
            default_constraints,
            defaulting_type,
        }) => (default_constraints.clone(), defaulting_type != "List"),
        _ => (vec![], true),
    };
    let default_constraints = if system {
        system_default_constraints()
    } else {
        dc
    };
    Ok(Box::new(PodTopologySpread {
        default_constraints,
        system_defaulted: system,
    }))
}

fn system_default_constraints() -> Vec<TopologySpreadConstraint> {
    let c = |key: &str, skew: i32| TopologySpreadConstraint {
        max_skew: skew,
        topology_key: key.into(),
        when_unsatisfiable: "ScheduleAnyway".into(),
        ..Default::default()
    };
    vec![c(LABEL_HOSTNAME, 3), c(LABEL_ZONE, 5)]
}

/// `helper.DefaultSelector`: labels of Services selecting the pod, plus the selector of
/// its controlling ReplicaSet or StatefulSet.
pub fn default_selector(pod: &PodInfo, snap: &Snapshot) -> Selector {
    let mut set = Labels::new();
    for svc in &snap.services {
        if svc.metadata.namespace.as_deref().unwrap_or("") != pod.namespace {
            continue;
        }
        let Some(sel) = svc.spec.as_ref().and_then(|s| s.selector.as_ref()) else {
            continue;
        };
        if !sel.is_empty() && Selector::from_set(sel).matches(&pod.labels) {
            set.extend(sel.iter().map(|(k, v)| (k.clone(), v.clone())));
        }
    }
    let mut reqs = match Selector::from_set(&set) {
        Selector::Reqs(r) => r,
        Selector::Nothing => vec![],
    };
    let owner = pod
        .pod
        .metadata
        .owner_references
        .iter()
        .flatten()
        .find(|o| o.controller == Some(true));
    if let Some(o) = owner {
        let same = |m: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta| {
            m.name.as_deref() == Some(o.name.as_str())
                && m.namespace.as_deref().unwrap_or("") == pod.namespace
        };
        let sel = match (o.api_version.as_str(), o.kind.as_str()) {
            ("apps/v1", "ReplicaSet") => snap
                .replica_sets
                .iter()
                .find(|r| same(&r.metadata))
                .and_then(|r| {
                    r.spec
                        .as_ref()
                        .map(|s| Selector::from_label_selector(Some(&s.selector)))
                }),
            ("apps/v1", "StatefulSet") => snap
                .stateful_sets
                .iter()
                .find(|r| same(&r.metadata))
                .and_then(|r| {
                    r.spec
                        .as_ref()
                        .map(|s| Selector::from_label_selector(Some(&s.selector)))
                }),
            _ => None,
        };
        if let Some(Selector::Reqs(r)) = sel {
            reqs.extend(r);
        }
    }
    Selector::Reqs(reqs)
}

impl PodTopologySpread {
    /// The pod's constraints for an action, or the defaults when it has none.
    fn constraints(&self, pod: &PodInfo, snap: &Snapshot, action: &str) -> Vec<Constraint> {
        if let Some(own) = own_constraints(pod, action) {
            return own;
        }
        let defaults: Vec<&TopologySpreadConstraint> = self
            .default_constraints
            .iter()
            .filter(|c| c.when_unsatisfiable == action)
            .collect();
        if defaults.is_empty() {
            return vec![];
        }
        let sel = default_selector(pod, snap);
        if sel.is_empty() {
            return vec![];
        }
        defaults
            .into_iter()
            .map(|c| build(c, sel.clone()))
            .collect()
    }
}

fn build(c: &TopologySpreadConstraint, selector: Selector) -> Constraint {
    Constraint {
        max_skew: i64::from(c.max_skew),
        topology_key: c.topology_key.clone(),
        is_hostname: c.topology_key == LABEL_HOSTNAME,
        selector,
        min_domains: i64::from(c.min_domains.unwrap_or(1)),
        honor_node_affinity: c.node_affinity_policy.as_deref() != Some("Ignore"),
        honor_node_taints: c.node_taints_policy.as_deref() == Some("Honor"),
    }
}

/// The pod's own constraints for an action (with matchLabelKeys), if it has any.
fn own_constraints(pod: &PodInfo, action: &str) -> Option<Vec<Constraint>> {
    let own = pod
        .pod
        .spec
        .as_ref()
        .and_then(|s| s.topology_spread_constraints.as_ref())
        .filter(|c| !c.is_empty())?;
    Some(
        own.iter()
            .filter(|c| c.when_unsatisfiable == action)
            .map(|c| {
                let mut sel = Selector::from_label_selector(c.label_selector.as_ref());
                if let Selector::Reqs(r) = &mut sel {
                    for k in c.match_label_keys.iter().flatten() {
                        if let Some(v) = pod.labels.get(k) {
                            r.push(Requirement::In(k.clone(), vec![v.clone()]));
                        }
                    }
                }
                build(c, sel)
            })
            .collect(),
    )
}

fn count_matching(node: &NodeInfo, sel: &Selector, ns: &str) -> i64 {
    node.pods
        .iter()
        .filter(|p| {
            p.namespace == ns
                && p.pod.metadata.deletion_timestamp.is_none()
                && sel.matches(&p.labels)
        })
        .count() as i64
}

fn has_all_keys(labels: &Labels, cs: &[Constraint]) -> bool {
    cs.iter().all(|c| labels.contains_key(&c.topology_key))
}

/// Filter state: matching pod counts per constraint and domain.
#[derive(Clone, Debug)]
struct PreFilterState {
    constraints: Vec<Constraint>,
    counts: Vec<BTreeMap<String, i64>>,
    mins: Vec<i64>,
    required: Required,
}

impl PreFilterState {
    fn recompute_mins(&mut self) {
        self.mins = (0..self.constraints.len())
            .map(|i| self.min_match(i))
            .collect();
    }

    /// The global minimum over domains (0 when fewer domains than minDomains).
    fn min_match(&self, i: usize) -> i64 {
        let key = &self.constraints[i].topology_key;
        let domains: usize = self
            .constraints
            .iter()
            .zip(&self.counts)
            .filter(|(c, _)| c.topology_key == *key)
            .map(|(_, m)| m.len())
            .max()
            .unwrap_or(0);
        if (domains as i64) < self.constraints[i].min_domains {
            return 0;
        }
        self.counts[i].values().copied().min().unwrap_or(0)
    }

    fn update(&mut self, pod: &PodInfo, other: &PodInfo, node: &NodeInfo, delta: i64) {
        if other.namespace != pod.namespace || !has_all_keys(&node.labels, &self.constraints) {
            return;
        }
        for (i, c) in self.constraints.iter().enumerate() {
            if !c.includes_node(pod, node, &self.required) || !c.selector.matches(&other.labels) {
                continue;
            }
            if let Some(v) = node
                .labels
                .get(&c.topology_key)
                .and_then(|v| self.counts[i].get_mut(v))
            {
                *v += delta;
            }
        }
        self.recompute_mins();
    }
}

impl Plugin for PodTopologySpread {
    fn name(&self) -> &'static str {
        NAME
    }
    /// `isSchedulableAfterPodChange` / `isSchedulableAfterNodeChange` over the pod's
    /// DoNotSchedule constraints. A pod spread by the cluster defaults queues: its
    /// selector comes from the Services and controllers that select it.
    fn queueing_hint(&self, pod: &PodInfo, event: &EventObjects<'_>) -> QueueingHint {
        let Some(cs) = own_constraints(pod, "DoNotSchedule") else {
            return QueueingHint::Queue;
        };
        let involved = |p: &PodInfo| !p.node_name.is_empty() && p.namespace == pod.namespace;
        let matches_any = |p: &PodInfo| cs.iter().any(|c| c.selector.matches(&p.labels));
        let on_all_keys = |n: &NodeInfo| has_all_keys(&n.labels, &cs);
        match event {
            EventObjects::UpdatedPod { old, new } => {
                if !involved(old) || !involved(new) || old.labels == new.labels {
                    return QueueingHint::QueueSkip;
                }
                if_queue(
                    cs.iter().any(|c| {
                        c.selector.matches(&old.labels) != c.selector.matches(&new.labels)
                    }),
                )
            }
            EventObjects::AddedPod(p) | EventObjects::DeletedPod(p) => {
                if_queue(involved(p) && matches_any(p))
            }
            EventObjects::Node { old: None, new } => if_queue(on_all_keys(new)),
            EventObjects::Node {
                old: Some(old),
                new,
            } => {
                let (was, is) = (on_all_keys(old), on_all_keys(new));
                let keys_changed = cs
                    .iter()
                    .any(|c| old.labels.get(&c.topology_key) != new.labels.get(&c.topology_key));
                if_queue(was != is || (is && (keys_changed || old.taints != new.taints)))
            }
            _ => QueueingHint::Queue,
        }
    }
    fn as_pre_filter(&self) -> Option<&dyn PreFilterPlugin> {
        Some(self)
    }
    fn as_filter(&self) -> Option<&dyn FilterPlugin> {
        Some(self)
    }
    fn as_pre_score(&self) -> Option<&dyn PreScorePlugin> {
        Some(self)
    }
    fn as_score(&self) -> Option<&dyn ScorePlugin> {
        Some(self)
    }
}

impl PreFilterPlugin for PodTopologySpread {
    fn pre_filter(
        &self,
        state: &mut CycleState,
        pod: &PodInfo,
        snap: &Snapshot,
    ) -> (Option<PreFilterResult>, Status) {
        let constraints = self.constraints(pod, snap, "DoNotSchedule");
        if constraints.is_empty() {
            return (None, Status::code_only(Code::Skip));
        }
        let required = Required::of(pod);
        let mut counts = vec![BTreeMap::new(); constraints.len()];
        if constraints.len() == 1 && constraints[0].counts_all_nodes(&required) {
            let c = &constraints[0];
            counts[0] = snap.domain_counts(&pod.namespace, &c.selector, &c.topology_key);
            let mut s = PreFilterState {
                constraints,
                counts,
                mins: vec![],
                required,
            };
            s.recompute_mins();
            state.write(PRE_FILTER_KEY, s);
            return (None, Status::success());
        }
        for node in snap.nodes() {
            if !has_all_keys(&node.labels, &constraints) {
                continue;
            }
            for (i, c) in constraints.iter().enumerate() {
                if !c.includes_node(pod, node, &required) {
                    continue;
                }
                let v = node
                    .labels
                    .get(&c.topology_key)
                    .cloned()
                    .unwrap_or_default();
                *counts[i].entry(v).or_insert(0) +=
                    count_matching(node, &c.selector, &pod.namespace);
            }
        }
        let mut s = PreFilterState {
            constraints,
            counts,
            mins: vec![],
            required,
        };
        s.recompute_mins();
        state.write(PRE_FILTER_KEY, s);
        (None, Status::success())
    }

    fn add_pod(
        &self,
        state: &mut CycleState,
        pod: &PodInfo,
        to_add: &PodInfo,
        node: &NodeInfo,
    ) -> Status {
        if let Some(s) = state.read_mut::<PreFilterState>(PRE_FILTER_KEY) {
            s.update(pod, to_add, node, 1);
        }
        Status::success()
    }

    fn remove_pod(
        &self,
        state: &mut CycleState,
        pod: &PodInfo,
        to_remove: &PodInfo,
        node: &NodeInfo,
    ) -> Status {
        if let Some(s) = state.read_mut::<PreFilterState>(PRE_FILTER_KEY) {
            s.update(pod, to_remove, node, -1);
        }
        Status::success()
    }
}

impl FilterPlugin for PodTopologySpread {
    fn filter(&self, state: &CycleState, pod: &PodInfo, node: &NodeInfo) -> Status {
        let Some(s) = state.read::<PreFilterState>(PRE_FILTER_KEY) else {
            return Status::error(format!(
                "reading {PRE_FILTER_KEY:?} from cycleState: not found"
            ));
        };
        for (i, c) in s.constraints.iter().enumerate() {
            let Some(v) = node.labels.get(&c.topology_key) else {
                return Status::new(
                    Code::UnschedulableAndUnresolvable,
                    ERR_REASON_NODE_LABEL_NOT_MATCH,
                );
            };
            let self_match = i64::from(c.selector.matches(&pod.labels));
            let match_num = s.counts[i].get(v).copied().unwrap_or(0);
            let skew = match_num + self_match - s.mins[i];
            if skew > c.max_skew {
                return Status::new(Code::Unschedulable, ERR_REASON_CONSTRAINTS_NOT_MATCH);
            }
        }
        Status::success()
    }
}

#[path = "podtopologyspread_scoring.rs"]
mod scoring;

#[cfg(test)]
#[path = "podtopologyspread_tests.rs"]
mod tests;
