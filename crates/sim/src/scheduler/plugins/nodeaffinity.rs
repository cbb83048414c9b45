//! NodeAffinity: required node affinity and nodeSelector as a filter, preferred node
//! affinity terms as a score (plus scheduler-enforced `addedAffinity`).

use std::collections::BTreeSet;

use k8s_openapi::api::core::v1::{NodeAffinity as ApiNodeAffinity, PreferredSchedulingTerm};

use super::helper::{default_normalize_score, MAX};
use crate::scheduler::config::PluginArgs;
use crate::scheduler::framework::*;
use crate::scheduler::nodeinfo::{NodeInfo, Snapshot};
use crate::scheduler::podinfo::PodInfo;
use crate::scheduler::selector::{CompiledNodeSelector, CompiledTerm, Selector};

/// The plugin name.
pub const NAME: &str = "NodeAffinity";
/// `ErrReasonPod`.
pub const ERR_REASON_POD: &str = "node(s) didn't match Pod's node affinity/selector";
/// `errReasonEnforced`.
pub const ERR_REASON_ENFORCED: &str = "node(s) didn't match scheduler-enforced node affinity";
/// `errReasonConflict`.
pub const ERR_REASON_CONFLICT: &str = "pod affinity terms conflict";
const PRE_FILTER_KEY: &str = "PreFilterNodeAffinity";
const PRE_SCORE_KEY: &str = "PreScoreNodeAffinity";

/// The NodeAffinity plugin.
pub struct NodeAffinity {
    added_selector: Option<CompiledNodeSelector>,
    added_preferred: Vec<(i32, CompiledTerm)>,
}

/// Constructor for the registry.
pub fn new(args: Option<&PluginArgs>) -> Result<Box<dyn Plugin>, String> {
    let added: Option<&ApiNodeAffinity> = match args {
        Some(PluginArgs::NodeAffinity { added_affinity }) => added_affinity.as_ref(),
        _ => None,
    };
    Ok(Box::new(NodeAffinity {
        added_selector: added
            .and_then(|a| {
                a.required_during_scheduling_ignored_during_execution
                    .as_ref()
            })
            .map(CompiledNodeSelector::new),
        added_preferred: preferred_terms(added.and_then(|a| {
            a.preferred_during_scheduling_ignored_during_execution
                .as_ref()
        })),
    }))
}

fn preferred_terms(terms: Option<&Vec<PreferredSchedulingTerm>>) -> Vec<(i32, CompiledTerm)> {
    terms
        .into_iter()
        .flatten()
        .filter(|t| {
            let p = &t.preference;
            t.weight != 0
                && !(p.match_expressions.as_ref().is_none_or(|v| v.is_empty())
                    && p.match_fields.as_ref().is_none_or(|v| v.is_empty()))
        })
        .map(|t| (t.weight, CompiledTerm::new(&t.preference)))
        .collect()
}

/// `RequiredNodeAffinity`: the pod's nodeSelector and required node affinity, compiled.
#[derive(Clone, Debug)]
pub struct Required {
    node_selector: Option<Selector>,
    affinity: Option<CompiledNodeSelector>,
}

impl Required {
    /// Compiles the pod's nodeSelector and required node affinity.
    pub fn of(pod: &PodInfo) -> Required {
        let spec = pod.pod.spec.as_ref();
        Required {
            node_selector: spec
                .and_then(|s| s.node_selector.as_ref())
                .map(Selector::from_set),
            affinity: spec
                .and_then(|s| s.affinity.as_ref())
                .and_then(|a| a.node_affinity.as_ref())
                .and_then(|n| {
                    n.required_during_scheduling_ignored_during_execution
                        .as_ref()
                })
                .map(CompiledNodeSelector::new),
        }
    }

    /// Whether the pod has neither a nodeSelector nor required node affinity.
    pub fn is_empty(&self) -> bool {
        self.node_selector.is_none() && self.affinity.is_none()
    }

    /// Whether the node satisfies both.
    pub fn matches(&self, node: &NodeInfo) -> bool {
        self.node_selector
            .as_ref()
            .is_none_or(|s| s.matches(&node.labels))
            && self
                .affinity
                .as_ref()
                .is_none_or(|a| a.matches(&node.labels, &node.name))
    }
}

impl Plugin for NodeAffinity {
    fn name(&self) -> &'static str {
        NAME
    }
    fn queueing_hint(&self, pod: &PodInfo, event: &EventObjects<'_>) -> QueueingHint {
        super::helper::node_now_passes(self, pod, event)
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

impl PreFilterPlugin for NodeAffinity {
    fn pre_filter(
        &self,
        state: &mut CycleState,
        pod: &PodInfo,
        _: &Snapshot,
    ) -> (Option<PreFilterResult>, Status) {
        let req = Required::of(pod);
        if req.affinity.is_none() && req.node_selector.is_none() && self.added_selector.is_none() {
            return (None, Status::code_only(Code::Skip));
        }
        let terms = req
            .affinity
            .as_ref()
            .map(|a| a.terms.clone())
            .unwrap_or_default();
        state.write(PRE_FILTER_KEY, req);
        if terms.is_empty() {
            return (None, Status::success());
        }
        let mut names: Option<BTreeSet<String>> = None;
        for t in &terms {
            let Some(pinned) = t.pinned_node_names() else {
                return (None, Status::success());
            };
            names.get_or_insert_with(BTreeSet::new).extend(pinned);
        }
        match names {
            Some(n) if n.is_empty() => (
                None,
                Status::new(Code::UnschedulableAndUnresolvable, ERR_REASON_CONFLICT),
            ),
            Some(n) => (
                Some(PreFilterResult {
                    node_names: Some(n),
                }),
                Status::success(),
            ),
            None => (None, Status::success()),
        }
    }
}

impl FilterPlugin for NodeAffinity {
    fn filter(&self, state: &CycleState, pod: &PodInfo, node: &NodeInfo) -> Status {
        if let Some(a) = &self.added_selector {
            if !a.matches(&node.labels, &node.name) {
                return Status::new(Code::UnschedulableAndUnresolvable, ERR_REASON_ENFORCED);
            }
        }
        let ok = match state.read::<Required>(PRE_FILTER_KEY) {
            Some(r) => r.matches(node),
            None => Required::of(pod).matches(node),
        };
        if ok {
            Status::success()
        } else {
            Status::new(Code::UnschedulableAndUnresolvable, ERR_REASON_POD)
        }
    }
}

#[derive(Clone)]
struct PreScoreState {
    preferred: Vec<(i32, CompiledTerm)>,
}

impl PreScorePlugin for NodeAffinity {
    fn pre_score(
        &self,
        state: &mut CycleState,
        pod: &PodInfo,
        _: &[usize],
        _: &Snapshot,
    ) -> Status {
        let mut preferred = preferred_terms(
            pod.pod
                .spec
                .as_ref()
                .and_then(|s| s.affinity.as_ref())
                .and_then(|a| a.node_affinity.as_ref())
                .and_then(|n| {
                    n.preferred_during_scheduling_ignored_during_execution
                        .as_ref()
                }),
        );
        if preferred.is_empty() && self.added_preferred.is_empty() {
            return Status::code_only(Code::Skip);
        }
        preferred.extend(self.added_preferred.iter().cloned());
        state.write(PRE_SCORE_KEY, PreScoreState { preferred });
        Status::success()
    }
}

impl ScorePlugin for NodeAffinity {
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
        Ok(s.preferred
            .iter()
            .filter(|(_, t)| t.matches(&node.labels, &node.name))
            .map(|(w, _)| i64::from(*w))
            .sum())
    }
    fn has_normalize(&self) -> bool {
        true
    }
    fn normalize_score(&self, _: &CycleState, _: &PodInfo, scores: &mut [i64]) -> Status {
        default_normalize_score(MAX, false, scores)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scheduler::plugins::helper::fixtures::*;
    use serde_json::{json, Value};

    fn plugin() -> NodeAffinity {
        NodeAffinity {
            added_selector: None,
            added_preferred: vec![],
        }
    }

    fn filter(pod_spec: Value, labels: Value, name: &str) -> Status {
        let snap = Snapshot::new(&[node(name, json!({"metadata": {"labels": labels}}))], &[]);
        let p = info(pod("p", json!({"spec": pod_spec})));
        let mut st = CycleState::default();
        let (r, s) = plugin().pre_filter(&mut st, &p, &snap);
        if s.code == Code::Skip {
            return Status::success();
        }
        if !s.is_success() {
            return s;
        }
        if r.and_then(|r| r.node_names)
            .is_some_and(|n| !n.contains(name))
        {
            return Status::new(
                Code::UnschedulableAndUnresolvable,
                "not in prefilter result",
            );
        }
        plugin().filter(&st, &p, snap.get(name).unwrap())
    }

    #[test]
    fn required_affinity_and_node_selector_filter() {
        let na = |terms: Value| {
            json!({"affinity": {"nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}}}})
        };
        // nodeSelector.
        assert!(filter(
            json!({"nodeSelector": {"foo": "bar"}}),
            json!({"foo": "bar"}),
            "n"
        )
        .is_success());
        let s = filter(
            json!({"nodeSelector": {"foo": "bar"}}),
            json!({"foo": "baz"}),
            "n",
        );
        assert_eq!(s.message(), ERR_REASON_POD);
        assert_eq!(s.code, Code::UnschedulableAndUnresolvable);
        // In / NotIn / Exists / Gt.
        let t = na(
            json!([{"matchExpressions": [{"key": "kernel-version", "operator": "Gt", "values": ["0204"]}]}]),
        );
        assert!(filter(t.clone(), json!({"kernel-version": "0206"}), "n").is_success());
        assert!(!filter(t, json!({"kernel-version": "0200"}), "n").is_success());
        let t = na(
            json!([{"matchExpressions": [{"key": "foo", "operator": "NotIn", "values": ["value1", "value2"]}]}]),
        );
        assert!(filter(t.clone(), json!({"foo": "bar"}), "n").is_success());
        assert!(!filter(t, json!({"foo": "value1"}), "n").is_success());
        // An empty nodeSelectorTerms list matches nothing.
        assert!(!filter(na(json!([])), json!({"foo": "bar"}), "n").is_success());
        // Both nodeSelector and affinity must match.
        let mut both = na(json!([{"matchExpressions": [{"key": "foo", "operator": "Exists"}]}]));
        both["nodeSelector"] = json!({"foo": "bar"});
        assert!(filter(both.clone(), json!({"foo": "bar"}), "n").is_success());
        assert!(!filter(both, json!({"foo": "baz"}), "n").is_success());
        // matchFields pins the node through the PreFilter result.
        let t = na(
            json!([{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["node1"]}]}]),
        );
        assert!(filter(t.clone(), json!({}), "node1").is_success());
        assert!(!filter(t, json!({}), "node2").is_success());
    }

    #[test]
    fn preferred_terms_score_by_weight_then_normalize() {
        // TestNodeAffinityPriority "all nodes matches the preferred scheduling requirements
        // of pod but with different priorities": weights 2 (foo=bar), 4 (key=value),
        // 5 (foo=bar & key=value & az=az1).
        let pref = json!({"affinity": {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 2, "preference": {"matchExpressions": [{"key": "foo", "operator": "In", "values": ["bar"]}]}},
            {"weight": 4, "preference": {"matchExpressions": [{"key": "key", "operator": "In", "values": ["value"]}]}},
            {"weight": 5, "preference": {"matchExpressions": [
                {"key": "foo", "operator": "In", "values": ["bar"]},
                {"key": "key", "operator": "In", "values": ["value"]},
                {"key": "az", "operator": "In", "values": ["az1"]}]}}
        ]}}});
        let nodes = vec![
            node("node1", json!({"metadata": {"labels": {"foo": "bar"}}})),
            node(
                "node2",
                json!({"metadata": {"labels": {"foo": "bar", "key": "value", "az": "az1"}}}),
            ),
            node(
                "node3",
                json!({"metadata": {"labels": {"foo": "bar", "key": "value"}}}),
            ),
        ];
        let snap = Snapshot::new(&nodes, &[]);
        let p = info(pod("p", json!({"spec": pref})));
        let mut st = CycleState::default();
        assert!(plugin()
            .pre_score(&mut st, &p, &[0, 1, 2], &snap)
            .is_success());
        let mut s: Vec<i64> = snap
            .nodes()
            .iter()
            .map(|n| plugin().score(&st, &p, n, &snap).unwrap())
            .collect();
        // Raw: node1 2, node2 2+4+5 = 11, node3 2+4 = 6.
        assert_eq!(s, [2, 11, 6]);
        plugin().normalize_score(&st, &p, &mut s);
        // 100*2/11 = 18, 100, 100*6/11 = 54.
        assert_eq!(s, [18, 100, 54]);
        // No preferred terms: PreScore skips.
        let q = info(pod("q", json!({})));
        assert_eq!(
            plugin().pre_score(&mut st, &q, &[0], &snap).code,
            Code::Skip
        );
    }
}
