//! NodeResourcesBalancedAllocation: prefers nodes whose resource fractions stay balanced
//! once the pod lands, `(1 − std) * 100` (v1.35 formula); best-effort pods are skipped.

use super::resource_allocation::{pod_request_list, score_node, Resources, Scorer};
use crate::scheduler::config::{PluginArgs, ResourceSpec};
use crate::scheduler::framework::*;
use crate::scheduler::nodeinfo::{NodeInfo, Snapshot};
use crate::scheduler::podinfo::PodInfo;
use crate::scheduler::validation::validate_args;

/// The plugin name.
pub const NAME: &str = "NodeResourcesBalancedAllocation";
const PRE_SCORE_KEY: &str = "PreScoreNodeResourcesBalancedAllocation";

/// The NodeResourcesBalancedAllocation plugin.
pub struct BalancedAllocation {
    resources: Resources,
}

/// Constructor for the registry (validates args like `NewBalancedAllocation`).
pub fn new(args: Option<&PluginArgs>) -> Result<Box<dyn Plugin>, String> {
    let resources = match args {
        Some(a @ PluginArgs::NodeResourcesBalancedAllocation { resources }) => {
            let errs = validate_args("", a);
            if !errs.is_empty() {
                return Err(errs.join(", "));
            }
            resources.clone()
        }
        _ => vec![
            ResourceSpec {
                name: "cpu".into(),
                weight: 1,
            },
            ResourceSpec {
                name: "memory".into(),
                weight: 1,
            },
        ],
    };
    Ok(Box::new(BalancedAllocation {
        resources: Resources::new(&resources),
    }))
}

impl Plugin for BalancedAllocation {
    fn name(&self) -> &'static str {
        NAME
    }
    fn as_pre_score(&self) -> Option<&dyn PreScorePlugin> {
        Some(self)
    }
    fn as_score(&self) -> Option<&dyn ScorePlugin> {
        Some(self)
    }
}

#[derive(Clone)]
struct PreScoreState {
    pod_requests: Vec<i64>,
}

impl PreScorePlugin for BalancedAllocation {
    fn pre_score(
        &self,
        state: &mut CycleState,
        pod: &PodInfo,
        _: &[usize],
        _: &Snapshot,
    ) -> Status {
        let pod_requests = pod_request_list(pod, &self.resources, true);
        if pod_requests.iter().all(|r| *r == 0) {
            // Best-effort pod (kubernetes#129138): this plugin would pile them on one node.
            return Status::code_only(Code::Skip);
        }
        state.write(PRE_SCORE_KEY, PreScoreState { pod_requests });
        Status::success()
    }
}

impl ScorePlugin for BalancedAllocation {
    fn score(
        &self,
        state: &CycleState,
        pod: &PodInfo,
        node: &NodeInfo,
        _: &Snapshot,
    ) -> Result<i64, Status> {
        let owned;
        let reqs = match state.read::<PreScoreState>(PRE_SCORE_KEY) {
            Some(s) => &s.pod_requests,
            None => {
                owned = pod_request_list(pod, &self.resources, true);
                &owned
            }
        };
        Ok(score_node(
            &Scorer::Balanced,
            &self.resources,
            reqs,
            node,
            true,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scheduler::plugins::helper::fixtures::*;
    use serde_json::json;

    fn scores(snap: &Snapshot, p: &PodInfo) -> Result<Vec<i64>, Code> {
        let pl = new(None).unwrap();
        let mut st = CycleState::default();
        let s = pl
            .as_pre_score()
            .unwrap()
            .pre_score(&mut st, p, &[0, 1], snap);
        if !s.is_success() {
            return Err(s.code);
        }
        Ok(snap
            .nodes()
            .iter()
            .map(|n| pl.as_score().unwrap().score(&st, p, n, snap).unwrap())
            .collect())
    }

    #[test]
    fn balanced_allocation_matches_upstream_cases() {
        // balanced_allocation_test.go "nothing scheduled, resources requested, differently
        // sized nodes": pod cpu 3000m memory 5000; nodes 4000m/10000 and 6000m/10000.
        let n1 = node(
            "node1",
            json!({"status": {"allocatable": {"cpu": "4000m", "memory": "10000"}}}),
        );
        let n2 = node(
            "node2",
            json!({"status": {"allocatable": {"cpu": "6000m", "memory": "10000"}}}),
        );
        let snap = Snapshot::new(&[n1.clone(), n2.clone()], &[]);
        let p = info(pod(
            "p",
            json!({"spec": {"containers": [
            {"name": "a", "resources": {"requests": {"cpu": "1000m", "memory": "2000"}}},
            {"name": "b", "resources": {"requests": {"cpu": "2000m", "memory": "3000"}}}]}}),
        ));
        // node1: fractions 0.75, 0.5 → std 0.125 → 87.5 → 87. node2: 0.5, 0.5 → 100.
        assert_eq!(scores(&snap, &p), Ok(vec![87, 100]));
        // Existing pods count with their actual requests (no 100m/200Mi defaults): a pod with
        // cpu 1000m only on node2 → node2 fractions 4000/6000 = 0.667, 0.5 → std 0.0833 →
        // 91.67 → 91.
        let snap = Snapshot::new(&[n1, n2], &[req_pod("e", "node2", "1", "")]);
        assert_eq!(scores(&snap, &p), Ok(vec![87, 91]));
        // Upstream "resources requested, pods scheduled with resources": nodes 10000m/20000;
        // node1 runs cpu-only pods (1000m + 2000m), node2 cpu+memory (3000m, 5000).
        // node1: 6000/10000 = 0.6, 5000/20000 = 0.25 → std 0.175 → 82.5 → 82.
        // node2: 0.6, 10000/20000 = 0.5 → std 0.05 → 95.
        let big_nodes = [
            node(
                "node1",
                json!({"status": {"allocatable": {"cpu": "10000m", "memory": "20000"}}}),
            ),
            node(
                "node2",
                json!({"status": {"allocatable": {"cpu": "10000m", "memory": "20000"}}}),
            ),
        ];
        let existing = [
            pod(
                "c1",
                json!({"spec": {"nodeName": "node1", "containers": [
                {"name": "a", "resources": {"requests": {"cpu": "1000m"}}},
                {"name": "b", "resources": {"requests": {"cpu": "2000m"}}}]}}),
            ),
            pod(
                "c2",
                json!({"spec": {"nodeName": "node2", "containers": [
                {"name": "a", "resources": {"requests": {"cpu": "1000m", "memory": "2000"}}},
                {"name": "b", "resources": {"requests": {"cpu": "2000m", "memory": "3000"}}}]}}),
            ),
        ];
        let snap2 = Snapshot::new(&big_nodes, &existing);
        assert_eq!(scores(&snap2, &p), Ok(vec![82, 95]));
        // Fractions are capped at 1: node1 asked for 8000m of 4000m → 1.0 vs 0.5 → 75.
        let big = info(req_pod("b", "", "8", "5000"));
        assert_eq!(scores(&snap, &big).unwrap()[0], 75);
    }

    #[test]
    fn best_effort_pods_are_skipped() {
        let snap = Snapshot::new(&[node("n1", json!({})), node("n2", json!({}))], &[]);
        assert_eq!(
            scores(&snap, &info(req_pod("p", "", "", ""))),
            Err(Code::Skip)
        );
    }
}
