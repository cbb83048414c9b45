//! Tests of the scheduling cycle: adaptive node counts, round-robin start, tie-breaks,
//! FitError text and annotations.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::*;
use crate::scheduler::config::{parse, KubeSchedulerConfiguration};
use crate::scheduler::plugins::helper::fixtures::*;
use crate::scheduler::plugins::in_tree_registry;
use crate::scheduler::runtime::build_frameworks;
use crate::scheduler::SharedPod;
use serde_json::json;

pub(crate) fn default_fw() -> Framework {
    build_frameworks(&in_tree_registry(), &KubeSchedulerConfiguration::default())
        .unwrap()
        .remove("default-scheduler")
        .unwrap()
}

fn nodes(n: usize) -> Vec<Arc<k8s_openapi::api::core::v1::Node>> {
    (1..=n)
        .map(|i| node(&format!("node-{i}"), json!({})))
        .collect()
}

fn run(
    fw: &Framework,
    snap: &Snapshot,
    p: &PodInfo,
    st: &mut SchedulerState,
    rng: &mut Rng,
) -> ScheduleOutcome {
    schedule_one(fw, snap, &Nominated::new(), p, st, rng, true)
}

#[test]
fn num_feasible_nodes_follows_the_adaptive_percentage() {
    let cases = [
        (None, 0, 50, 50), // < 100 nodes: all
        (None, 0, 99, 99),
        (None, 0, 100, 100),         // 50 − 100/125 = 50% → 50, floored at 100
        (None, 0, 150, 100),         // 49% → 73 → 100
        (None, 0, 250, 120),         // 50 − 2 = 48% → 120
        (None, 0, 1000, 420),        // 50 − 8 = 42% → 420
        (None, 0, 5000, 500),        // 50 − 40 = 10% → 500
        (None, 0, 6000, 300),        // 50 − 48 = 2% → floored to 5% → 300
        (None, 0, 10000, 500),       // negative → 5% → 500
        (None, 30, 1000, 300),       // configured 30%
        (Some(100), 30, 1000, 1000), // the profile's setting wins
        (None, 1, 1000, 100),        // 1% → 10 → floored at 100
    ];
    for (profile, global, n, want) in cases {
        assert_eq!(
            num_feasible_nodes_to_find(profile, global, n),
            want,
            "{profile:?} {global} {n}"
        );
    }
}

#[test]
fn default_profile_scores_and_annotations_match_hand_computation() {
    let fw = default_fw();
    let snap = Snapshot::new(&nodes(2), &[req_pod("busy", "node-2", "2", "4Gi")]);
    let p = info(req_pod("p", "", "1", "1Gi"));
    let mut st = SchedulerState::default();
    let out = run(&fw, &snap, &p, &mut st, &mut Rng::new(1));
    assert_eq!(out.result.unwrap().suggested_host, "node-1");
    let a = out.annotations.unwrap();
    // NodeResourcesFit (LeastAllocated): node-1 cpu (4000−1000)*100/4000 = 75, memory
    // (8−1)*100/8 = 87 → 81; node-2 cpu (4000−3000)*100/4000 = 25, memory 3*100/8 = 37 → 31.
    // BalancedAllocation: node-1 |0.25 − 0.125|/2 = 0.0625 → 93; node-2 |0.75 − 0.625|/2 → 93.
    // TaintToleration: raw 0 everywhere → reversed normalize 100 → ×3 = 300.
    // Skipped by PreScore (no preferences, no spreading selector): not present.
    let raw = json!(a.score);
    assert_eq!(
        raw,
        json!({
            "node-1": {"ImageLocality": 0, "NodeResourcesBalancedAllocation": 93, "NodeResourcesFit": 81, "TaintToleration": 0},
            "node-2": {"ImageLocality": 0, "NodeResourcesBalancedAllocation": 93, "NodeResourcesFit": 31, "TaintToleration": 0}
        })
    );
    assert_eq!(
        json!(a.final_score),
        json!({
            "node-1": {"ImageLocality": 0, "NodeResourcesBalancedAllocation": 93, "NodeResourcesFit": 81, "TaintToleration": 300},
            "node-2": {"ImageLocality": 0, "NodeResourcesBalancedAllocation": 93, "NodeResourcesFit": 31, "TaintToleration": 300}
        })
    );
    assert_eq!(
        json!(a.filter["node-1"]),
        json!({
            "NodeName": "passed", "NodeResourcesFit": "passed", "NodeUnschedulable": "passed", "TaintToleration": "passed"
        })
    );
    let ann = a.to_pod_annotations();
    assert_eq!(ann["kubeloop.dev/selected-node"], "node-1");
    assert!(ann["kubeloop.dev/score-result"].starts_with("{\"node-1\":{\"ImageLocality\":0,"));
}

#[test]
fn one_feasible_node_is_chosen_without_scoring() {
    let fw = default_fw();
    let tainted = node(
        "node-2",
        json!({"spec": {"taints": [{"key": "k", "value": "v", "effect": "NoSchedule"}]}}),
    );
    let snap = Snapshot::new(&[node("node-1", json!({})), tainted], &[]);
    let out = run(
        &fw,
        &snap,
        &info(req_pod("p", "", "1", "")),
        &mut SchedulerState::default(),
        &mut Rng::new(1),
    );
    let r = out.result.unwrap();
    assert_eq!(
        (
            r.suggested_host.as_str(),
            r.evaluated_nodes,
            r.feasible_nodes
        ),
        ("node-1", 2, 1)
    );
    let a = out.annotations.unwrap();
    assert!(a.score.is_empty() && a.final_score.is_empty());
    assert_eq!(
        a.filter["node-2"]["TaintToleration"],
        "node(s) had untolerated taint(s)"
    );
    assert!(
        !a.filter["node-2"].contains_key("NodeResourcesFit"),
        "filters stop at the first failure"
    );
}

#[test]
fn fit_error_message_has_sorted_histogram_and_preemption_clause() {
    let fw = default_fw();
    let taint =
        json!({"spec": {"taints": [{"key": "dedicated", "value": "db", "effect": "NoSchedule"}]}});
    let snap = Snapshot::new(
        &[
            node("node-1", json!({})),
            node("node-2", taint.clone()),
            node("node-3", taint),
        ],
        &[],
    );
    // 5 cpu > 4 allocatable: unresolvable, so preemption can't help anywhere.
    let out = run(
        &fw,
        &snap,
        &info(req_pod("p", "", "5", "")),
        &mut SchedulerState::default(),
        &mut Rng::new(1),
    );
    let err = out.result.unwrap_err();
    assert_eq!(
        err.message(),
        "0/3 nodes are available: 1 Insufficient cpu, 2 node(s) had untolerated taint(s). \
         preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."
    );
    assert_eq!(err.status().code, Code::Unschedulable);
    assert_eq!(
        err.unschedulable_plugins(),
        ["NodeResourcesFit", "TaintToleration"].into()
    );
    // A resolvable shortage with nothing of lower priority to evict.
    let snap = Snapshot::new(&nodes(1), &[req_pod("busy", "node-1", "3", "")]);
    let err = run(
        &fw,
        &snap,
        &info(req_pod("p", "", "2", "")),
        &mut SchedulerState::default(),
        &mut Rng::new(1),
    )
    .result
    .unwrap_err();
    assert_eq!(
        err.message(),
        "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod."
    );
}

#[test]
fn histogram_sorts_formatted_strings_like_go() {
    let mut d = Diagnosis::default();
    for i in 0..10 {
        d.node_to_status.nodes.push((
            i,
            Status::new(Code::Unschedulable, "node(s) were unschedulable"),
        ));
    }
    for i in 10..12 {
        d.node_to_status
            .nodes
            .push((i, Status::new(Code::Unschedulable, "Insufficient cpu")));
    }
    let fe = FitError {
        num_all_nodes: 12,
        diagnosis: d,
    };
    // "10 …" sorts before "2 …" (string order, as upstream's sort.Strings).
    assert_eq!(
        fe.to_string(),
        "0/12 nodes are available: 10 node(s) were unschedulable, 2 Insufficient cpu."
    );
}

#[test]
fn prefilter_rejection_reports_its_message_once() {
    let fw = default_fw();
    let snap = Snapshot::new(&nodes(3), &[]);
    let p = info(pod(
        "p",
        json!({"spec": {"volumes": [{"name": "v", "persistentVolumeClaim": {"claimName": "data"}}]}}),
    ));
    let err = run(
        &fw,
        &snap,
        &p,
        &mut SchedulerState::default(),
        &mut Rng::new(1),
    )
    .result
    .unwrap_err();
    assert_eq!(
        err.message(),
        "0/3 nodes are available: persistentvolumeclaim \"data\" not found. \
         preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."
    );
    let err = run(
        &fw,
        &Snapshot::default(),
        &p,
        &mut SchedulerState::default(),
        &mut Rng::new(1),
    )
    .result
    .unwrap_err();
    assert_eq!(err.message(), "no nodes available to schedule pods");
    // A rejection (reason Unschedulable), not an internal error.
    assert_eq!(err.status().code, Code::UnschedulableAndUnresolvable);
}

#[test]
fn start_index_rotates_by_processed_nodes() {
    let fw = default_fw();
    let snap = Snapshot::new(&nodes(200), &[]);
    let p = info(req_pod("p", "", "100m", ""));
    let mut st = SchedulerState::default();
    let mut rng = Rng::new(3);
    // 200 nodes: 50 − 1 = 49% → 98 → at least 100 feasible nodes are searched.
    let out = schedule_one(&fw, &snap, &Nominated::new(), &p, &mut st, &mut rng, false);
    assert_eq!(out.result.unwrap().evaluated_nodes, 100);
    assert!(out.annotations.is_none());
    assert_eq!(st.next_start_node_index, 100);
    schedule_one(&fw, &snap, &Nominated::new(), &p, &mut st, &mut rng, false);
    assert_eq!(st.next_start_node_index, 0);
}

#[test]
fn ties_are_broken_reproducibly_and_uniformly() {
    let fw = default_fw();
    let snap = Snapshot::new(&nodes(4), &[]);
    let p = info(req_pod("p", "", "100m", "100Mi"));
    let pick = |seed: u64, n: usize| -> Vec<String> {
        let mut rng = Rng::new(seed);
        let mut st = SchedulerState::default();
        (0..n)
            .map(|_| {
                schedule_one(&fw, &snap, &Nominated::new(), &p, &mut st, &mut rng, false)
                    .result
                    .unwrap()
                    .suggested_host
            })
            .collect()
    };
    assert_eq!(pick(7, 20), pick(7, 20));
    assert_ne!(pick(7, 20), pick(8, 20));
    let mut counts = std::collections::BTreeMap::new();
    for h in pick(11, 2000) {
        *counts.entry(h).or_insert(0) += 1;
    }
    assert_eq!(counts.len(), 4);
    assert!(
        counts.values().all(|c| (400..600).contains(c)),
        "{counts:?}"
    );
}

#[test]
fn select_host_prefers_the_highest_total() {
    let mut rng = Rng::new(1);
    assert_eq!(select_host(&[10, 11, 12], &[5, 9, 7], &mut rng), 11);
    assert_eq!(select_host(&[4], &[0], &mut rng), 4);
}

#[test]
fn percentage_of_nodes_to_score_from_config_is_respected() {
    let cfg = parse(&json!({"profiles": [{"schedulerName": "default-scheduler", "percentageOfNodesToScore": 100}]})).unwrap();
    let fw = build_frameworks(&in_tree_registry(), &cfg)
        .unwrap()
        .remove("default-scheduler")
        .unwrap();
    let snap = Snapshot::new(&nodes(200), &[]);
    let out = schedule_one(
        &fw,
        &snap,
        &Nominated::new(),
        &info(req_pod("p", "", "", "")),
        &mut SchedulerState::default(),
        &mut Rng::new(1),
        false,
    );
    assert_eq!(out.result.unwrap().evaluated_nodes, 200);
}

/// Scale smoke test: `cargo test --release -p kubeloop-sim scale -- --ignored --nocapture`.
#[test]
#[ignore]
fn scale_10k_pods_on_5k_nodes() {
    let fw = default_fw();
    let nodes: Vec<_> = (0..5000)
        .map(|i| node(&format!("node-{i}"), json!({"metadata": {"labels": {"topology.kubernetes.io/zone": format!("zone-{}", i % 3)}}})))
        .collect();
    let mut snap = Snapshot::new(&nodes, &[]);
    let rs: k8s_openapi::api::apps::v1::ReplicaSet = serde_json::from_value(json!({
        "metadata": {"name": "web-1", "namespace": "default"},
        "spec": {"selector": {"matchLabels": {"app": "web"}}, "template": {}}}))
    .unwrap();
    if std::env::var("SCALE_BARE").is_err() {
        snap.replica_sets.push(Arc::new(rs));
    }
    let mut st = SchedulerState::default();
    let mut rng = Rng::new(1);
    let n: usize = std::env::var("SCALE_PODS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10_000);
    let template = pod(
        "web",
        json!({
        "metadata": {"labels": {"app": "web"}, "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet",
            "name": "web-1", "uid": "u1", "controller": true}]},
        "spec": {"containers": [{"name": "c", "image": "nginx", "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}}}]}}),
    );
    let pods: Vec<Arc<PodInfo>> = (0..n)
        .map(|i| {
            let mut p = (*template).clone();
            p.metadata.name = Some(format!("web-{i}"));
            Arc::new(PodInfo::new(SharedPod::from(p)))
        })
        .collect();
    let start = std::time::Instant::now();
    for pi in pods {
        let out = schedule_one(&fw, &snap, &Nominated::new(), &pi, &mut st, &mut rng, false);
        let host = out.result.unwrap().suggested_host;
        assert!(snap.assume_pod(pi, &host));
    }
    let secs = start.elapsed().as_secs_f64();
    eprintln!(
        "{n} pods on 5000 nodes: {secs:.2}s = {:.0} pods/s",
        n as f64 / secs
    );
}

#[test]
fn long_messages_are_truncated_like_upstream() {
    let long = "x".repeat(2000);
    let t = truncate_message(&long);
    assert_eq!(t.len(), 1024);
    assert!(t.ends_with(" ..."));
    assert_eq!(truncate_message("short"), "short");
    assert_eq!(
        scheduled_message("default", "web", "node-1"),
        "Successfully assigned default/web to node-1"
    );
}

#[test]
fn nominated_pods_of_equal_or_higher_priority_reserve_room() {
    let fw = default_fw();
    let snap = Snapshot::new(&nodes(1), &[]);
    let mut nominated = Nominated::new();
    let big = |name: &str, cpu: &str, prio: i32| {
        info(pod(
            name,
            json!({"spec": {"priority": prio, "containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}]}}),
        ))
    };
    nominated.insert("node-1".into(), vec![Arc::new(big("waiting", "3", 100))]);
    let mut st = SchedulerState::default();
    let low = big("low", "2", 0);
    let out = schedule_one(
        &fw,
        &snap,
        &nominated,
        &low,
        &mut st,
        &mut Rng::new(1),
        true,
    );
    // 3 (nominated) + 2 > 4: the lower-priority pod must not take the nominated pod's room.
    assert!(out.result.is_err());
    assert_eq!(
        out.annotations.unwrap().filter["node-1"]["NodeResourcesFit"],
        "Insufficient cpu"
    );
    let high = big("high", "2", 200);
    let out = schedule_one(
        &fw,
        &snap,
        &nominated,
        &high,
        &mut st,
        &mut Rng::new(1),
        false,
    );
    assert_eq!(out.result.unwrap().suggested_host, "node-1");
}

#[test]
fn same_seed_same_decisions_and_annotations() {
    let run_all = |seed: u64| -> Vec<(String, BTreeMap<String, String>)> {
        let fw = default_fw();
        let ns: Vec<_> = (0..30)
            .map(|i| node(&format!("n{i}"), json!({"metadata": {"labels": {"topology.kubernetes.io/zone": format!("z{}", i % 3)}}})))
            .collect();
        let mut snap = Snapshot::new(&ns, &[]);
        snap.services.push(Arc::new(serde_json::from_value(json!({
            "metadata": {"name": "web", "namespace": "default"}, "spec": {"selector": {"app": "web"}}})).unwrap()));
        let mut st = SchedulerState::default();
        let mut rng = Rng::stream(seed, "kube-scheduler");
        (0..50)
            .map(|i| {
                let p = Arc::new(info(pod(&format!("w{i}"), json!({"metadata": {"labels": {"app": "web"}},
                    "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "100m"}}}]}}))));
                let out = schedule_one(&fw, &snap, &Nominated::new(), &p, &mut st, &mut rng, true);
                let host = out.result.unwrap().suggested_host;
                snap.assume_pod(p, &host);
                (host, out.annotations.unwrap().to_pod_annotations())
            })
            .collect()
    };
    let a = run_all(9);
    assert_eq!(a, run_all(9));
    // Spreading keeps zones within one pod of each other for a Service's pods.
    let mut per_zone = BTreeMap::new();
    for (h, _) in &a {
        let i: usize = h[1..].parse().unwrap();
        *per_zone.entry(i % 3).or_insert(0) += 1;
    }
    let (min, max) = (
        per_zone.values().min().unwrap(),
        per_zone.values().max().unwrap(),
    );
    assert!(max - min <= 1, "{per_zone:?}");
}
