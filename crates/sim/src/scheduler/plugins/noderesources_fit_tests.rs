//! Table-driven tests of NodeResourcesFit (filter and scoring strategies).

use super::*;
use crate::scheduler::config::{
    RequestedToCapacityRatioParam, ResourceSpec, ScoringStrategy, UtilizationShapePoint,
};
use crate::scheduler::plugins::helper::fixtures::*;
use serde_json::json;

fn fit(type_: &str, res: &[(&str, i64)]) -> Box<dyn Plugin> {
    let args = NodeResourcesFitArgs {
        scoring_strategy: Some(ScoringStrategy {
            type_: type_.into(),
            resources: res
                .iter()
                .map(|(n, w)| ResourceSpec {
                    name: n.to_string(),
                    weight: *w,
                })
                .collect(),
            requested_to_capacity_ratio: (type_ == "RequestedToCapacityRatio").then(|| {
                RequestedToCapacityRatioParam {
                    shape: vec![
                        UtilizationShapePoint {
                            utilization: 0,
                            score: 10,
                        },
                        UtilizationShapePoint {
                            utilization: 100,
                            score: 0,
                        },
                    ],
                }
            }),
        }),
        ..Default::default()
    };
    new(Some(&PluginArgs::NodeResourcesFit(args))).unwrap()
}

fn scores(p: &dyn Plugin, snap: &Snapshot, pod: &PodInfo) -> Vec<i64> {
    let mut st = CycleState::default();
    let idx: Vec<usize> = (0..snap.num_nodes()).collect();
    assert!(p
        .as_pre_score()
        .unwrap()
        .pre_score(&mut st, pod, &idx, snap)
        .is_success());
    snap.nodes()
        .iter()
        .map(|n| p.as_score().unwrap().score(&st, pod, n, snap).unwrap())
        .collect()
}

fn two_nodes_with_load() -> Snapshot {
    let n1 = node("n1", json!({}));
    let n2 = node(
        "n2",
        json!({"status": {"allocatable": {"cpu": "8", "memory": "16Gi"}}}),
    );
    Snapshot::new(&[n1, n2], &[req_pod("existing", "n1", "1", "1Gi")])
}

#[test]
fn least_allocated_matches_upstream_cases() {
    // least_allocated_test.go "nothing scheduled, resources requested, differently sized
    // nodes": pod cpu 1000m+2000m, memory 2000+3000; nodes 4000m/10000 and 6000m/10000.
    let n1 = node(
        "node1",
        json!({"status": {"allocatable": {"cpu": "4000m", "memory": "10000"}}}),
    );
    let n2 = node(
        "node2",
        json!({"status": {"allocatable": {"cpu": "6000m", "memory": "10000"}}}),
    );
    let snap = Snapshot::new(&[n1, n2], &[]);
    let p = info(pod(
        "p",
        json!({"spec": {"containers": [
        {"name": "a", "resources": {"requests": {"cpu": "1000m", "memory": "2000"}}},
        {"name": "b", "resources": {"requests": {"cpu": "2000m", "memory": "3000"}}}]}}),
    ));
    // node1: cpu (4000−3000)*100/4000 = 25, memory (10000−5000)*100/10000 = 50 → 75/2 = 37.
    // node2: cpu (6000−3000)*100/6000 = 50, memory 50 → 50.
    assert_eq!(
        scores(
            fit("LeastAllocated", &[("cpu", 1), ("memory", 1)]).as_ref(),
            &snap,
            &p
        ),
        [37, 50]
    );
    // MostAllocated: node1 cpu 3000*100/4000 = 75, memory 50 → 62; node2 50, 50 → 50.
    assert_eq!(
        scores(
            fit("MostAllocated", &[("cpu", 1), ("memory", 1)]).as_ref(),
            &snap,
            &p
        ),
        [62, 50]
    );
}

#[test]
fn strategies_count_existing_pods_and_non_zero_defaults() {
    let snap = two_nodes_with_load();
    let p = info(req_pod("p", "", "500m", "1Gi"));
    // Least n1: cpu (4000−1500)*100/4000 = 62, mem (8−2)*100/8 = 75 → 137/2 = 68.
    // Least n2: cpu (8000−500)*100/8000 = 93, mem (16−1)*100/16 = 93 → 93.
    assert_eq!(
        scores(
            fit("LeastAllocated", &[("cpu", 1), ("memory", 1)]).as_ref(),
            &snap,
            &p
        ),
        [68, 93]
    );
    // Weights cpu 2, memory 1: n1 (62*2 + 75)/3 = 199/3 = 66; n2 (93*2 + 93)/3 = 93.
    assert_eq!(
        scores(
            fit("LeastAllocated", &[("cpu", 2), ("memory", 1)]).as_ref(),
            &snap,
            &p
        ),
        [66, 93]
    );
    // Most n1: 1500*100/4000 = 37, 2*100/8 = 25 → 31; n2: 500*100/8000 = 6, 100/16 = 6 → 6.
    assert_eq!(
        scores(
            fit("MostAllocated", &[("cpu", 1), ("memory", 1)]).as_ref(),
            &snap,
            &p
        ),
        [31, 6]
    );
    // RequestedToCapacityRatio with shape (0,10),(100,0) behaves like least allocated:
    // n1 cpu util 1500*100/4000 = 37 → 100 + (0−100)*37/100 = 63; mem util 25 → 75;
    // round((63+75)/2) = 69. n2: util 6 → 94, 6 → 94 → 94.
    assert_eq!(
        scores(
            fit("RequestedToCapacityRatio", &[("cpu", 1), ("memory", 1)]).as_ref(),
            &snap,
            &p
        ),
        [69, 94]
    );
    // A pod without requests counts 100m / 200Mi: n1 cpu (4000−1100)*100/4000 = 72,
    // memory (8192Mi−1224Mi)*100/8192Mi = 85 → 157/2 = 78.
    let empty = info(req_pod("e", "", "", ""));
    assert_eq!(
        scores(
            fit("LeastAllocated", &[("cpu", 1), ("memory", 1)]).as_ref(),
            &snap,
            &empty
        )[0],
        78
    );
    // An extended resource the pod doesn't request is skipped entirely.
    assert_eq!(
        scores(
            fit(
                "LeastAllocated",
                &[("cpu", 1), ("memory", 1), ("example.com/gpu", 5)]
            )
            .as_ref(),
            &snap,
            &p
        ),
        [68, 93]
    );
}

#[test]
fn filter_reports_every_insufficient_resource() {
    let snap = two_nodes_with_load();
    let f = fit("LeastAllocated", &[("cpu", 1), ("memory", 1)]);
    let filter = |p: &PodInfo, n: &str| {
        f.as_filter()
            .unwrap()
            .filter(&CycleState::default(), p, snap.get(n).unwrap())
    };
    assert!(filter(&info(req_pod("p", "", "3", "7Gi")), "n1").is_success());
    let s = filter(&info(req_pod("p", "", "3500m", "8Gi")), "n1");
    assert_eq!(s.code, Code::Unschedulable);
    assert_eq!(s.message(), "Insufficient cpu, Insufficient memory");
    // Asking for more than the node's whole allocatable cannot be solved by preemption.
    let s = filter(&info(req_pod("p", "", "5", "")), "n1");
    assert_eq!(s.code, Code::UnschedulableAndUnresolvable);
    assert_eq!(s.message(), "Insufficient cpu");
    let gpu = info(pod(
        "g",
        json!({"spec": {"containers": [{"name": "c", "resources": {"requests": {"example.com/gpu": "1"}}}]}}),
    ));
    assert_eq!(filter(&gpu, "n2").message(), "Insufficient example.com/gpu");
    let full = node("full", json!({"status": {"allocatable": {"pods": "1"}}}));
    let snap = Snapshot::new(&[full], &[req_pod("x", "full", "", "")]);
    let s = f.as_filter().unwrap().filter(
        &CycleState::default(),
        &info(req_pod("p", "", "", "")),
        snap.get("full").unwrap(),
    );
    assert_eq!(s.message(), "Too many pods");
}

#[test]
fn invalid_resource_weights_fail_construction_with_upstream_wording() {
    let args = |w: i64| NodeResourcesFitArgs {
        scoring_strategy: Some(ScoringStrategy {
            type_: "LeastAllocated".into(),
            resources: vec![ResourceSpec {
                name: "cpu".into(),
                weight: w,
            }],
            requested_to_capacity_ratio: None,
        }),
        ..Default::default()
    };
    let err = new(Some(&PluginArgs::NodeResourcesFit(args(101))))
        .err()
        .unwrap();
    assert_eq!(
        err,
        "scoringStrategy.resources[0].weight: Invalid value: 101: resource weight of cpu not in valid range (0, 100]"
    );
    assert!(new(Some(&PluginArgs::NodeResourcesFit(args(-1)))).is_err());
    assert!(new(Some(&PluginArgs::NodeResourcesFit(args(100)))).is_ok());
}
