//! TaintToleration: filters out nodes with untolerated NoSchedule/NoExecute taints and
//! prefers nodes with fewer untolerated PreferNoSchedule taints.

use k8s_openapi::api::core::v1::Toleration;

use super::helper::{
    default_normalize_score, find_untolerated_no_schedule, tolerations_tolerate, MAX,
};
use crate::scheduler::config::PluginArgs;
use crate::scheduler::framework::*;
use crate::scheduler::nodeinfo::{NodeInfo, Snapshot};
use crate::scheduler::podinfo::PodInfo;

/// The plugin name.
pub const NAME: &str = "TaintToleration";
/// The Filter failure reason (v1.35 wording).
pub const ERR_REASON_NOT_MATCH: &str = "node(s) had untolerated taint(s)";
const PRE_SCORE_KEY: &str = "PreScoreTaintToleration";

/// The TaintToleration plugin.
pub struct TaintToleration;

/// Constructor for the registry.
pub fn new(_: Option<&PluginArgs>) -> Result<Box<dyn Plugin>, String> {
    Ok(Box::new(TaintToleration))
}

impl Plugin for TaintToleration {
    fn name(&self) -> &'static str {
        NAME
    }
    fn queueing_hint(&self, pod: &PodInfo, event: &EventObjects<'_>) -> QueueingHint {
        super::helper::node_now_passes(self, pod, event)
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

impl FilterPlugin for TaintToleration {
    fn filter(&self, _: &CycleState, pod: &PodInfo, node: &NodeInfo) -> Status {
        if node.taints.is_empty() {
            return Status::success();
        }
        match find_untolerated_no_schedule(&node.taints, pod.tolerations()) {
            None => Status::success(),
            Some(_) => Status::new(Code::UnschedulableAndUnresolvable, ERR_REASON_NOT_MATCH),
        }
    }
}

#[derive(Clone)]
struct PreScoreState {
    tolerations_prefer_no_schedule: Vec<Toleration>,
}

impl PreScorePlugin for TaintToleration {
    fn pre_score(
        &self,
        state: &mut CycleState,
        pod: &PodInfo,
        _: &[usize],
        _: &Snapshot,
    ) -> Status {
        let t = pod
            .tolerations()
            .iter()
            .filter(|t| {
                matches!(
                    t.effect.as_deref(),
                    None | Some("") | Some("PreferNoSchedule")
                )
            })
            .cloned()
            .collect();
        state.write(
            PRE_SCORE_KEY,
            PreScoreState {
                tolerations_prefer_no_schedule: t,
            },
        );
        Status::success()
    }
}

impl ScorePlugin for TaintToleration {
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
        Ok(node
            .taints
            .iter()
            .filter(|t| t.effect == "PreferNoSchedule")
            .filter(|t| !tolerations_tolerate(&s.tolerations_prefer_no_schedule, t))
            .count() as i64)
    }
    fn has_normalize(&self) -> bool {
        true
    }
    fn normalize_score(&self, _: &CycleState, _: &PodInfo, scores: &mut [i64]) -> Status {
        default_normalize_score(MAX, true, scores)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scheduler::plugins::helper::fixtures::*;
    use serde_json::{json, Value};

    fn tnode(name: &str, taints: Value) -> std::sync::Arc<k8s_openapi::api::core::v1::Node> {
        node(name, json!({"spec": {"taints": taints}}))
    }

    fn run(
        pod_tol: Value,
        nodes: Vec<std::sync::Arc<k8s_openapi::api::core::v1::Node>>,
    ) -> Vec<i64> {
        let snap = Snapshot::new(&nodes, &[]);
        let p = info(pod("p", json!({"spec": {"tolerations": pod_tol}})));
        let mut st = CycleState::default();
        let idx: Vec<usize> = (0..nodes.len()).collect();
        assert!(TaintToleration
            .pre_score(&mut st, &p, &idx, &snap)
            .is_success());
        let mut scores: Vec<i64> = snap
            .nodes()
            .iter()
            .map(|n| TaintToleration.score(&st, &p, n, &snap).unwrap())
            .collect();
        TaintToleration.normalize_score(&st, &p, &mut scores);
        scores
    }

    #[test]
    fn score_prefers_fewer_intolerable_prefer_no_schedule_taints() {
        // TestTaintTolerationScore "node with taints tolerated by the pod gets a higher score".
        let scores = run(
            json!([{"key": "foo", "operator": "Equal", "value": "bar", "effect": "PreferNoSchedule"}]),
            vec![
                tnode(
                    "nodeA",
                    json!([{"key": "foo", "value": "bar", "effect": "PreferNoSchedule"}]),
                ),
                tnode(
                    "nodeB",
                    json!([{"key": "foo", "value": "blah", "effect": "PreferNoSchedule"}]),
                ),
            ],
        );
        // raw [0, 1] → max 1 → reverse: 100 − 0 = 100, 100 − 100 = 0.
        assert_eq!(scores, [100, 0]);
        // "the more intolerable taints a node has, the lower score it gets": raw 0, 1, 2.
        let scores = run(
            json!([{"key": "foo", "operator": "Equal", "value": "bar", "effect": "PreferNoSchedule"}]),
            vec![
                tnode("nodeA", json!([])),
                tnode(
                    "nodeB",
                    json!([{"key": "cpu-type", "value": "arm64", "effect": "PreferNoSchedule"}]),
                ),
                tnode(
                    "nodeC",
                    json!([
                    {"key": "cpu-type", "value": "arm64", "effect": "PreferNoSchedule"},
                    {"key": "disk-type", "value": "ssd", "effect": "PreferNoSchedule"}]),
                ),
            ],
        );
        // 100*1/2 = 50 → 100 − 50 = 50; 100*2/2 = 100 → 0.
        assert_eq!(scores, [100, 50, 0]);
        // NoSchedule taints and tolerations don't affect the score.
        let scores = run(
            json!([{"key": "cpu-type", "operator": "Equal", "value": "arm64", "effect": "NoSchedule"}]),
            vec![
                tnode("nodeA", json!([])),
                tnode(
                    "nodeB",
                    json!([{"key": "cpu-type", "value": "arm64", "effect": "NoSchedule"}]),
                ),
                tnode(
                    "nodeC",
                    json!([{"key": "cpu-type", "value": "arm64", "effect": "PreferNoSchedule"}]),
                ),
            ],
        );
        assert_eq!(scores, [100, 100, 0]);
    }

    #[test]
    fn filter_rejects_untolerated_no_schedule_and_no_execute() {
        let st = CycleState::default();
        let cases = [
            (
                json!([]),
                json!([{"key": "dedicated", "value": "user1", "effect": "NoSchedule"}]),
                false,
            ),
            (
                json!([{"key": "dedicated", "value": "user1", "effect": "NoSchedule"}]),
                json!([{"key": "dedicated", "value": "user1", "effect": "NoSchedule"}]),
                true,
            ),
            (
                json!([{"key": "dedicated", "operator": "Equal", "value": "user2", "effect": "NoSchedule"}]),
                json!([{"key": "dedicated", "value": "user1", "effect": "NoSchedule"}]),
                false,
            ),
            (
                json!([{"key": "foo", "operator": "Exists", "effect": "NoSchedule"}]),
                json!([{"key": "foo", "value": "bar", "effect": "NoSchedule"}]),
                true,
            ),
            (
                json!([]),
                json!([{"key": "foo", "value": "bar", "effect": "PreferNoSchedule"}]),
                true,
            ),
            (
                json!([]),
                json!([{"key": "foo", "value": "bar", "effect": "NoExecute"}]),
                false,
            ),
        ];
        for (tol, taints, fits) in cases {
            let n = NodeInfo::new(tnode("n", taints.clone()));
            let p = info(pod("p", json!({"spec": {"tolerations": tol}})));
            let s = TaintToleration.filter(&st, &p, &n);
            assert_eq!(s.is_success(), fits, "{taints}");
            if !fits {
                assert_eq!(s.code, Code::UnschedulableAndUnresolvable);
                assert_eq!(s.message(), "node(s) had untolerated taint(s)");
            }
        }
    }
}
