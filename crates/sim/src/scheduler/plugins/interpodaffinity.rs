//! InterPodAffinity: required pod (anti-)affinity of the incoming pod and required
//! anti-affinity of existing pods as a filter; preferred terms (both ways) and existing
//! pods' required affinity (hardPodAffinityWeight) as a score.

use std::collections::BTreeMap;

use crate::scheduler::config::PluginArgs;
use crate::scheduler::framework::*;
use crate::scheduler::nodeinfo::{NodeInfo, Snapshot};
use crate::scheduler::podinfo::{AffinityTerm, PodInfo, WeightedAffinityTerm};
use crate::scheduler::selector::{Labels, Selector};

/// The plugin name.
pub const NAME: &str = "InterPodAffinity";
/// `ErrReasonExistingAntiAffinityRulesNotMatch`.
pub const ERR_REASON_EXISTING_ANTI_AFFINITY: &str =
    "node(s) didn't satisfy existing pods anti-affinity rules";
/// `ErrReasonAffinityRulesNotMatch`.
pub const ERR_REASON_AFFINITY: &str = "node(s) didn't match pod affinity rules";
/// `ErrReasonAntiAffinityRulesNotMatch`.
pub const ERR_REASON_ANTI_AFFINITY: &str = "node(s) didn't match pod anti-affinity rules";
const PRE_FILTER_KEY: &str = "PreFilterInterPodAffinity";
const PRE_SCORE_KEY: &str = "PreScoreInterPodAffinity";

/// The InterPodAffinity plugin.
pub struct InterPodAffinity {
    hard_pod_affinity_weight: i64,
    ignore_preferred_terms_of_existing_pods: bool,
}

/// Constructor for the registry.
pub fn new(args: Option<&PluginArgs>) -> Result<Box<dyn Plugin>, String> {
    let (w, ignore) = match args {
        Some(PluginArgs::InterPodAffinity {
            hard_pod_affinity_weight,
            ignore_preferred_terms_of_existing_pods,
        }) => (
            i64::from(*hard_pod_affinity_weight),
            *ignore_preferred_terms_of_existing_pods,
        ),
        _ => (1, false),
    };
    Ok(Box::new(InterPodAffinity {
        hard_pod_affinity_weight: w,
        ignore_preferred_terms_of_existing_pods: ignore,
    }))
}

impl Plugin for InterPodAffinity {
    fn name(&self) -> &'static str {
        NAME
    }
    /// `isSchedulableAfterPodChange` / `isSchedulableAfterNodeChange`.
    fn queueing_hint(&self, pod: &PodInfo, event: &EventObjects<'_>) -> QueueingHint {
        // Terms with a namespaceSelector need the namespaces' labels: queue.
        let uses_ns_selector = pod
            .pod
            .spec
            .as_ref()
            .and_then(|s| s.affinity.as_ref())
            .is_some_and(|a| {
                let aff = a.pod_affinity.as_ref().and_then(|x| {
                    x.required_during_scheduling_ignored_during_execution
                        .as_ref()
                });
                let anti = a.pod_anti_affinity.as_ref().and_then(|x| {
                    x.required_during_scheduling_ignored_during_execution
                        .as_ref()
                });
                aff.into_iter()
                    .chain(anti)
                    .flatten()
                    .any(|t| t.namespace_selector.is_some())
            });
        if uses_ns_selector {
            return QueueingHint::Queue;
        }
        let (terms, anti) = (&pod.required_affinity, &pod.required_anti_affinity);
        // `podMatchesAllAffinityTerms`: no terms match nothing.
        let all = |ts: &[AffinityTerm], p: &PodInfo| {
            !ts.is_empty() && ts.iter().all(|t| t.matches(p, None))
        };
        match event {
            EventObjects::UpdatedPod { old, new } => {
                if old.node_name.is_empty() || new.node_name.is_empty() {
                    return QueueingHint::QueueSkip;
                }
                if_queue(
                    (!all(terms, old) && all(terms, new)) || (all(anti, old) && !all(anti, new)),
                )
            }
            EventObjects::AddedPod(p) => if_queue(!p.node_name.is_empty() && all(terms, p)),
            EventObjects::DeletedPod(p) => if_queue(!p.node_name.is_empty() && all(anti, p)),
            EventObjects::Node { new, .. } => if_queue(
                terms
                    .iter()
                    .chain(anti.iter())
                    .any(|t| new.labels.contains_key(&t.topology_key)),
            ),
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

type Counts = BTreeMap<(String, String), i64>;

/// `mergeAffinityTermNamespacesIfNotEmpty`: namespaces selected by the namespaceSelector
/// are folded into the namespace list.
fn merge_namespaces(terms: &[AffinityTerm], snap: &Snapshot) -> Vec<AffinityTerm> {
    terms
        .iter()
        .map(|t| {
            let mut t = t.clone();
            if !matches!(t.namespace_selector, Selector::Nothing) {
                for (ns, l) in &snap.namespace_labels {
                    if t.namespace_selector.matches(l) && !t.namespaces.contains(ns) {
                        t.namespaces.push(ns.clone());
                    }
                }
                t.namespace_selector = Selector::Nothing;
            }
            t
        })
        .collect()
}

fn ns_labels<'a>(snap: &'a Snapshot, ns: &str) -> Option<&'a Labels> {
    snap.namespace_labels.get(ns)
}

#[derive(Clone, Debug)]
struct PreFilterState {
    affinity: Vec<AffinityTerm>,
    anti_affinity: Vec<AffinityTerm>,
    existing_anti_affinity_counts: Counts,
    affinity_counts: Counts,
    anti_affinity_counts: Counts,
    ns_labels: Option<Labels>,
}

impl PreFilterState {
    fn update(&mut self, existing: &PodInfo, node: &NodeInfo, pod: &PodInfo, delta: i64) {
        for t in &existing.required_anti_affinity {
            if t.matches(pod, self.ns_labels.as_ref()) {
                if let Some(v) = node.labels.get(&t.topology_key) {
                    *self
                        .existing_anti_affinity_counts
                        .entry((t.topology_key.clone(), v.clone()))
                        .or_insert(0) += delta;
                }
            }
        }
        for (terms, counts) in [
            (&self.affinity, &mut self.affinity_counts),
            (&self.anti_affinity, &mut self.anti_affinity_counts),
        ] {
            for t in terms {
                if t.matches(existing, None) {
                    if let Some(v) = node.labels.get(&t.topology_key) {
                        *counts
                            .entry((t.topology_key.clone(), v.clone()))
                            .or_insert(0) += delta;
                    }
                }
            }
        }
        for c in [
            &mut self.existing_anti_affinity_counts,
            &mut self.affinity_counts,
            &mut self.anti_affinity_counts,
        ] {
            c.retain(|_, v| *v != 0);
        }
    }
}

impl PreFilterPlugin for InterPodAffinity {
    fn pre_filter(
        &self,
        state: &mut CycleState,
        pod: &PodInfo,
        snap: &Snapshot,
    ) -> (Option<PreFilterResult>, Status) {
        let mut s = PreFilterState {
            affinity: merge_namespaces(&pod.required_affinity, snap),
            anti_affinity: merge_namespaces(&pod.required_anti_affinity, snap),
            existing_anti_affinity_counts: Counts::new(),
            affinity_counts: Counts::new(),
            anti_affinity_counts: Counts::new(),
            ns_labels: ns_labels(snap, &pod.namespace).cloned(),
        };
        let incoming = !s.affinity.is_empty() || !s.anti_affinity.is_empty();
        if !incoming && snap.num_pods_with_required_anti_affinity() == 0 {
            return (None, Status::code_only(Code::Skip));
        }
        for node in snap.nodes() {
            if node.pods_with_required_anti_affinity == 0 && !incoming {
                continue;
            }
            for existing in &node.pods {
                if node.pods_with_required_anti_affinity > 0 || incoming {
                    s.update(existing, node, pod, 1);
                }
            }
        }
        if s.existing_anti_affinity_counts.is_empty() && !incoming {
            return (None, Status::code_only(Code::Skip));
        }
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
            s.update(to_add, node, pod, 1);
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
            s.update(to_remove, node, pod, -1);
        }
        Status::success()
    }
}

impl FilterPlugin for InterPodAffinity {
    fn filter(&self, state: &CycleState, pod: &PodInfo, node: &NodeInfo) -> Status {
        let Some(s) = state.read::<PreFilterState>(PRE_FILTER_KEY) else {
            return Status::error(format!(
                "reading {PRE_FILTER_KEY:?} from cycleState: not found"
            ));
        };
        // satisfyPodAffinity.
        let mut pods_exist = true;
        for t in &s.affinity {
            let Some(v) = node.labels.get(&t.topology_key) else {
                return Status::new(Code::UnschedulableAndUnresolvable, ERR_REASON_AFFINITY);
            };
            if s.affinity_counts
                .get(&(t.topology_key.clone(), v.clone()))
                .copied()
                .unwrap_or(0)
                <= 0
            {
                pods_exist = false;
            }
        }
        if !pods_exist {
            // The first pod of a group with affinity to itself may go anywhere the
            // topology keys exist, if no pod matches yet.
            let empty = Labels::new();
            let self_match = s.affinity.iter().all(|t| t.matches(pod, Some(&empty)));
            if !(s.affinity_counts.is_empty() && self_match) {
                return Status::new(Code::UnschedulableAndUnresolvable, ERR_REASON_AFFINITY);
            }
        }
        if !s.anti_affinity_counts.is_empty() {
            for t in &s.anti_affinity {
                if let Some(v) = node.labels.get(&t.topology_key) {
                    if s.anti_affinity_counts
                        .get(&(t.topology_key.clone(), v.clone()))
                        .copied()
                        .unwrap_or(0)
                        > 0
                    {
                        return Status::new(Code::Unschedulable, ERR_REASON_ANTI_AFFINITY);
                    }
                }
            }
        }
        if !s.existing_anti_affinity_counts.is_empty() {
            for (k, v) in &node.labels {
                if s.existing_anti_affinity_counts
                    .get(&(k.clone(), v.clone()))
                    .copied()
                    .unwrap_or(0)
                    > 0
                {
                    return Status::new(Code::Unschedulable, ERR_REASON_EXISTING_ANTI_AFFINITY);
                }
            }
        }
        Status::success()
    }
}

#[derive(Clone, Debug, Default)]
struct PreScoreState {
    /// topology key → value → score.
    topology_score: BTreeMap<String, BTreeMap<String, i64>>,
}

impl PreScoreState {
    fn process_term(
        &mut self,
        t: &AffinityTerm,
        weight: i64,
        pod: &PodInfo,
        ns: Option<&Labels>,
        node: &NodeInfo,
        mult: i64,
    ) {
        if t.matches(pod, ns) {
            if let Some(v) = node.labels.get(&t.topology_key) {
                *self
                    .topology_score
                    .entry(t.topology_key.clone())
                    .or_default()
                    .entry(v.clone())
                    .or_insert(0) += weight * mult;
            }
        }
    }

    fn process_terms(
        &mut self,
        terms: &[WeightedAffinityTerm],
        pod: &PodInfo,
        ns: Option<&Labels>,
        node: &NodeInfo,
        mult: i64,
    ) {
        for w in terms {
            self.process_term(&w.term, i64::from(w.weight), pod, ns, node, mult);
        }
    }
}

impl PreScorePlugin for InterPodAffinity {
    fn pre_score(
        &self,
        state: &mut CycleState,
        pod: &PodInfo,
        _: &[usize],
        snap: &Snapshot,
    ) -> Status {
        let has_constraints =
            !pod.preferred_affinity.is_empty() || !pod.preferred_anti_affinity.is_empty();
        if (self.ignore_preferred_terms_of_existing_pods || snap.num_pods_with_affinity() == 0)
            && !has_constraints
        {
            return Status::code_only(Code::Skip);
        }
        let merge = |ts: &[WeightedAffinityTerm]| -> Vec<WeightedAffinityTerm> {
            let terms: Vec<AffinityTerm> = ts.iter().map(|w| w.term.clone()).collect();
            merge_namespaces(&terms, snap)
                .into_iter()
                .zip(ts)
                .map(|(term, w)| WeightedAffinityTerm {
                    term,
                    weight: w.weight,
                })
                .collect()
        };
        let pref = merge(&pod.preferred_affinity);
        let pref_anti = merge(&pod.preferred_anti_affinity);
        let ns = ns_labels(snap, &pod.namespace);
        let mut s = PreScoreState::default();
        for node in snap.nodes() {
            if (!has_constraints && node.pods_with_affinity == 0) || node.labels.is_empty() {
                continue;
            }
            for existing in &node.pods {
                if !has_constraints && !existing.has_affinity() {
                    continue;
                }
                s.process_terms(&pref, existing, None, node, 1);
                s.process_terms(&pref_anti, existing, None, node, -1);
                if self.hard_pod_affinity_weight > 0 {
                    for t in &existing.required_affinity {
                        s.process_term(t, self.hard_pod_affinity_weight, pod, ns, node, 1);
                    }
                }
                if !self.ignore_preferred_terms_of_existing_pods {
                    s.process_terms(&existing.preferred_affinity, pod, ns, node, 1);
                    s.process_terms(&existing.preferred_anti_affinity, pod, ns, node, -1);
                }
            }
        }
        if s.topology_score.is_empty() {
            return Status::code_only(Code::Skip);
        }
        state.write(PRE_SCORE_KEY, s);
        Status::success()
    }
}

impl ScorePlugin for InterPodAffinity {
    fn score(
        &self,
        state: &CycleState,
        _: &PodInfo,
        node: &NodeInfo,
        _: &Snapshot,
    ) -> Result<i64, Status> {
        let Some(s) = state.read::<PreScoreState>(PRE_SCORE_KEY) else {
            return Err(Status::error(format!(
                "reading {PRE_SCORE_KEY:?} from cycleState: not found"
            )));
        };
        Ok(s.topology_score
            .iter()
            .filter_map(|(k, vals)| node.labels.get(k).and_then(|v| vals.get(v)))
            .sum())
    }

    fn has_normalize(&self) -> bool {
        true
    }

    fn normalize_score(&self, state: &CycleState, _: &PodInfo, scores: &mut [i64]) -> Status {
        if state
            .read::<PreScoreState>(PRE_SCORE_KEY)
            .is_none_or(|s| s.topology_score.is_empty())
        {
            return Status::success();
        }
        let min = scores.iter().copied().min().unwrap_or(0);
        let max = scores.iter().copied().max().unwrap_or(0);
        let diff = max - min;
        for s in scores.iter_mut() {
            let f = if diff > 0 {
                MAX_NODE_SCORE as f64 * ((*s - min) as f64 / diff as f64)
            } else {
                0.0
            };
            *s = f as i64;
        }
        Status::success()
    }
}

#[cfg(test)]
#[path = "interpodaffinity_tests.rs"]
mod tests;
