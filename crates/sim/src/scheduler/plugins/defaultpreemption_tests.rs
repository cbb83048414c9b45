//! Tests of DefaultPreemption through whole scheduling cycles.

use super::*;
use crate::rng::Rng;
use crate::scheduler::algorithm::{schedule_one, ScheduleError, SchedulerState};
use crate::scheduler::config::KubeSchedulerConfiguration;
use crate::scheduler::nodeinfo::Snapshot;
use crate::scheduler::plugins::helper::fixtures::*;
use crate::scheduler::plugins::in_tree_registry;
use crate::scheduler::runtime::build_frameworks;
use serde_json::json;

fn fw() -> Framework {
    build_frameworks(&in_tree_registry(), &KubeSchedulerConfiguration::default())
        .unwrap()
        .remove("default-scheduler")
        .unwrap()
}

fn prio_pod(name: &str, node: &str, cpu: &str, prio: i32) -> crate::scheduler::SharedPod {
    let mut spec = json!({"priority": prio, "containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}]});
    if !node.is_empty() {
        spec["nodeName"] = node.into();
    }
    pod(name, json!({"spec": spec}))
}

fn preempt(snap: &Snapshot, p: &PodInfo) -> (Option<PostFilterResult>, String) {
    let f = fw();
    let out = schedule_one(
        &f,
        snap,
        &Nominated::new(),
        p,
        &mut SchedulerState::default(),
        &mut Rng::new(1),
        false,
    );
    match out.result {
        Err(ScheduleError::Fit {
            fit_error,
            post_filter,
        }) => (post_filter, fit_error.to_string()),
        other => panic!("expected a fit error, got {other:?}"),
    }
}

#[test]
fn picks_the_node_with_the_lowest_priority_victims() {
    let nodes = [node("n1", json!({})), node("n2", json!({}))];
    let snap = Snapshot::new(
        &nodes,
        &[prio_pod("low", "n1", "3", 0), prio_pod("mid", "n2", "3", 5)],
    );
    let (r, msg) = preempt(&snap, &info(prio_pod("p", "", "2", 10)));
    let r = r.unwrap();
    assert_eq!(r.nominated_node_name, "n1");
    assert_eq!(r.victims, ["default/low"]);
    // A successful preemption adds no PostFilter message.
    assert_eq!(msg, "0/2 nodes are available: 2 Insufficient cpu.");
}

#[test]
fn victims_are_the_minimal_set_reprieving_important_pods_first() {
    let snap = Snapshot::new(
        &[node("n1", json!({}))],
        &[
            prio_pod("low-a", "n1", "1", 1),
            prio_pod("low-b", "n1", "2", 0),
            prio_pod("high", "n1", "1", 100),
        ],
    );
    // 4 cpu, 4 used; the pod needs 2. Without low-a and low-b: 1 + 2 fits. Reprieve low-a
    // (priority 1) first: 1+1+2 = 4 fits; low-b: 4+2 > 4 → victim.
    let (r, _) = preempt(&snap, &info(prio_pod("p", "", "2", 10)));
    assert_eq!(r.unwrap().victims, ["default/low-b"]);
}

#[test]
fn ineligible_pods_and_unhelpful_preemption_say_why() {
    let snap = Snapshot::new(&[node("n1", json!({}))], &[prio_pod("low", "n1", "3", 0)]);
    let mut p = (*prio_pod("p", "", "2", 10)).clone();
    p.spec.as_mut().unwrap().preemption_policy = Some("Never".into());
    let (_, msg) = preempt(&snap, &info(crate::scheduler::SharedPod::from(p)));
    assert_eq!(msg, "0/1 nodes are available: 1 Insufficient cpu. preemption: not eligible due to preemptionPolicy=Never.");
    let (r, msg) = preempt(&snap, &info(prio_pod("p", "", "5", 10)));
    assert_eq!(r.unwrap().nominated_node_name, "");
    assert_eq!(msg, "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.");
}

#[test]
fn candidate_count_follows_args() {
    let p = DefaultPreemption {
        min_candidate_nodes_percentage: 10,
        min_candidate_nodes_absolute: 100,
    };
    assert_eq!(p.num_candidates(50), 50);
    assert_eq!(p.num_candidates(5000), 500);
    assert_eq!(p.num_candidates(500), 100);
}

/// `prio_pod` with the label `app`.
fn app_pod(name: &str, node: &str, cpu: &str, prio: i32, app: &str) -> crate::scheduler::SharedPod {
    let mut p = (*prio_pod(name, node, cpu, prio)).clone();
    p.metadata.labels = Some([("app".to_string(), app.to_string())].into());
    crate::scheduler::SharedPod::from(p)
}

/// A budget in `default` selecting `app=<app>` with `allowed` disruptions left.
fn pdb(app: &str, allowed: i32, disrupted: &[&str]) -> Arc<PodDisruptionBudget> {
    let disrupted: serde_json::Map<String, serde_json::Value> = disrupted
        .iter()
        .map(|p| (p.to_string(), json!("2026-01-01T00:00:00Z")))
        .collect();
    Arc::new(
        serde_json::from_value(json!({
            "metadata": {"name": app, "namespace": "default"},
            "spec": {"selector": {"matchLabels": {"app": app}}},
            "status": {"disruptionsAllowed": allowed, "currentHealthy": 0, "desiredHealthy": 0,
                       "expectedPods": 0, "disruptedPods": disrupted}
        }))
        .unwrap(),
    )
}

fn names(pods: &[Arc<PodInfo>]) -> Vec<&str> {
    pods.iter().map(|p| p.name.as_str()).collect()
}

#[test]
fn pdb_violations_are_counted_per_budget_in_order() {
    let pods: Vec<Arc<PodInfo>> = [
        app_pod("a1", "n1", "1", 0, "a"),
        app_pod("a2", "n1", "1", 0, "a"),
        app_pod("gone", "n1", "1", 0, "a"),
        app_pod("b1", "n1", "1", 0, "b"),
        prio_pod("bare", "n1", "1", 0),
    ]
    .into_iter()
    .map(|p| Arc::new(PodInfo::new(p)))
    .collect();
    // Budget a allows one more disruption and already counts "gone"; budget b none;
    // an empty selector matches nothing.
    let mut empty = (*pdb("x", 0, &[])).clone();
    empty.spec.as_mut().unwrap().selector = Some(Default::default());
    let pdbs = [pdb("a", 1, &["gone"]), pdb("b", 0, &[]), Arc::new(empty)];
    let (violating, ok) = filter_pods_with_pdb_violation(pods, &pdbs);
    assert_eq!(names(&violating), ["a2", "b1"]);
    assert_eq!(names(&ok), ["a1", "gone", "bare"]);
}

#[test]
fn violating_victims_are_reprieved_first() {
    // 4 cpu, full: a (2 cpu, priority 1), b and c (1 cpu each, priority 0); the pod needs 2.
    let pods = [
        app_pod("a", "n1", "2", 1, "a"),
        app_pod("b", "n1", "1", 0, "b"),
        app_pod("c", "n1", "1", 0, "c"),
    ];
    let mut snap = Snapshot::new(&[node("n1", json!({}))], &pods);
    // Without budgets a, the most important, is reprieved first (2 + 2 = 4); b and c go.
    let (r, _) = preempt(&snap, &info(prio_pod("p", "", "2", 10)));
    assert_eq!(r.unwrap().victims, ["default/b", "default/c"]);
    // A budget allowing nothing protects b: b is reprieved first (1 + 2), then a does
    // not fit back (1 + 2 + 2 > 4) and goes, then c fits back (1 + 1 + 2).
    snap.pdbs = vec![pdb("b", 0, &[])];
    let (r, _) = preempt(&snap, &info(prio_pod("p", "", "2", 10)));
    assert_eq!(r.unwrap().victims, ["default/a"]);
}

#[test]
fn the_node_whose_victims_violate_no_budget_wins() {
    let nodes = [node("n1", json!({})), node("n2", json!({}))];
    let pods = [
        app_pod("low", "n1", "3", 0, "db"),
        app_pod("mid", "n2", "3", 5, "web"),
    ];
    // Without budgets n1 wins: its victim has the lower priority.
    let snap = Snapshot::new(&nodes, &pods);
    let (r, _) = preempt(&snap, &info(prio_pod("p", "", "2", 10)));
    assert_eq!(r.unwrap().nominated_node_name, "n1");
    // A budget protecting low makes n1 a violation; n2 wins on the first criterion.
    let mut snap = Snapshot::new(&nodes, &pods);
    snap.pdbs = vec![pdb("db", 0, &[])];
    let (r, _) = preempt(&snap, &info(prio_pod("p", "", "2", 10)));
    let r = r.unwrap();
    assert_eq!(r.nominated_node_name, "n2");
    assert_eq!(r.victims, ["default/mid"]);
    // When every candidate violates, the budget does not block preemption.
    snap.pdbs.push(pdb("web", 0, &[]));
    let (r, _) = preempt(&snap, &info(prio_pod("p", "", "2", 10)));
    assert_eq!(r.unwrap().nominated_node_name, "n1");
}
