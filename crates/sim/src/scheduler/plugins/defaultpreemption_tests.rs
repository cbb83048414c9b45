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
