//! Tests of the scheduling queue: ordering, backoff, unschedulable moves and flushes.

use super::*;
use crate::scheduler::config::KubeSchedulerConfiguration;
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

fn pi(name: &str, prio: i32) -> Arc<PodInfo> {
    Arc::new(info(pod(name, json!({"spec": {"priority": prio}}))))
}

#[test]
fn backoff_doubles_from_initial_up_to_max() {
    let q = SchedulingQueue::new(1, 10);
    let d: Vec<Time> = (1..=6).map(|a| q.backoff_duration(a)).collect();
    assert_eq!(d, [1000, 2000, 4000, 8000, 10000, 10000]);
    let q = SchedulingQueue::new(2, 5);
    assert_eq!(q.backoff_duration(1), 2000);
    assert_eq!(q.backoff_duration(2), 4000);
    assert_eq!(q.backoff_duration(3), 5000);
}

#[test]
fn active_q_pops_by_priority_then_arrival() {
    let f = fw();
    let mut q = SchedulingQueue::new(1, 10);
    q.add(&f, pi("low-early", 0), 0);
    q.add(&f, pi("high", 100), 5);
    q.add(&f, pi("low-late", 0), 10);
    let order: Vec<String> = (0..3)
        .map(|_| q.pop(20).unwrap().pod_info.name.clone())
        .collect();
    assert_eq!(order, ["high", "low-early", "low-late"]);
    assert!(q.pop(20).is_none());
}

#[test]
fn gated_pods_wait_until_their_gates_are_removed() {
    let f = fw();
    let mut q = SchedulingQueue::new(1, 10);
    let gated = Arc::new(info(pod(
        "g",
        json!({"spec": {"schedulingGates": [{"name": "x"}]}}),
    )));
    q.add(&f, gated, 0);
    assert!(q.pop(0).is_none());
    assert_eq!(q.pending_pods().2[0].gating_plugin, Some("SchedulingGates"));
    q.update(&f, Arc::new(info(pod("g", json!({})))), 1);
    assert_eq!(q.pop(1).unwrap().pod_info.name, "g");
}

#[test]
fn unschedulable_pods_move_on_relevant_events_and_back_off() {
    let f = fw();
    let mut q = SchedulingQueue::new(1, 10);
    q.add(&f, pi("p", 0), 0);
    let p = q.pop(0).unwrap();
    assert_eq!(p.attempts, 1);
    let st = Status::new(Code::Unschedulable, "Insufficient cpu");
    q.add_unschedulable_if_not_present(p, &st, ["NodeResourcesFit"].into(), 100);
    assert!(q.pop(100).is_none() || !q.pop_from_backoff_q);
    // An irrelevant event (a PVC) leaves it alone.
    q.move_all_to_active_or_backoff(ClusterEvent::PvcChange, 200);
    assert_eq!(q.pending_pods().2.len(), 1);
    // A pod deletion frees cpu: it moves to backoffQ (attempt 1 → 1s from 100ms).
    q.move_all_to_active_or_backoff(ClusterEvent::AssignedPodDelete, 300);
    assert_eq!(q.pending_pods().1.len(), 1);
    assert_eq!(q.next_backoff_expiry(), Some(1100));
    q.flush_backoff_completed(1099);
    assert_eq!(q.pending_pods().0.len(), 0);
    q.flush_backoff_completed(1100);
    assert_eq!(q.pending_pods().0.len(), 1);
    let p = q.pop(1100).unwrap();
    assert_eq!(p.attempts, 2);
}

#[test]
fn unschedulable_leftover_is_flushed_after_five_minutes() {
    let f = fw();
    let mut q = SchedulingQueue::new(1, 10);
    q.add(&f, pi("p", 0), 0);
    let p = q.pop(0).unwrap();
    let st = Status::new(Code::Unschedulable, "x");
    q.add_unschedulable_if_not_present(p, &st, ["NodeResourcesFit"].into(), 0);
    q.flush_unschedulable_leftover(POD_MAX_IN_UNSCHEDULABLE_PODS_DURATION);
    assert_eq!(q.pending_pods().2.len(), 1);
    q.flush_unschedulable_leftover(POD_MAX_IN_UNSCHEDULABLE_PODS_DURATION + 1);
    assert_eq!(q.pending_pods().0.len(), 1);
}

#[test]
fn only_rejected_pods_pop_early_from_backoff_when_active_is_empty() {
    let f = fw();
    let mut q = SchedulingQueue::new(1, 10);
    q.add(&f, pi("p", 0), 0);
    let p = q.pop(0).unwrap();
    q.add_unschedulable_if_not_present(p, &Status::error("boom"), BTreeSet::new(), 50);
    assert_eq!(q.pending_pods().1.len(), 1);
    // An error backoff is waited out (upstream's separate errorBackoffQ)…
    assert!(q.pop(60).is_none());
    q.flush_backoff_completed(50 + 1000);
    assert_eq!(q.pop(1050).unwrap().attempts, 2);
    // …while a rejected pod that a cluster event moved to backoffQ jumps the queue
    // (SchedulerPopFromBackoffQ).
    let p = q.pods.get("default/p").unwrap().0.clone();
    let st = Status::new(Code::Unschedulable, "x");
    q.add_unschedulable_if_not_present(p, &st, ["NodeResourcesFit"].into(), 1100);
    q.move_all_to_active_or_backoff(crate::scheduler::ClusterEvent::NodeAdd, 1100);
    assert_eq!(q.pending_pods().1.len(), 1, "moved into backoff");
    assert_eq!(q.pop(1101).unwrap().attempts, 3);
    q.pop_from_backoff_q = false;
    let p = q.pods.get("default/p").unwrap().0.clone();
    q.add_unschedulable_if_not_present(p, &st, ["NodeResourcesFit"].into(), 1200);
    q.move_all_to_active_or_backoff(crate::scheduler::ClusterEvent::NodeAdd, 1200);
    assert!(q.pop(1201).is_none());
}

#[test]
fn nominated_pods_are_tracked_per_node() {
    let mut q = SchedulingQueue::new(1, 10);
    q.add_nominated_pod(pi("p", 10), "n1");
    assert_eq!(q.nominated()["n1"].len(), 1);
    q.add_nominated_pod(pi("p", 10), "n2");
    assert!(!q.nominated().contains_key("n1"));
    q.delete_nominated_pod_if_exists("default/p");
    assert!(q.nominated().is_empty());
}

#[test]
fn a_pod_deleted_while_in_flight_is_not_requeued() {
    let f = fw();
    let mut q = SchedulingQueue::new(1, 10);
    q.add(&f, pi("p", 0), 0);
    let p = q.pop(0).unwrap();
    q.delete("default/p");
    q.add_unschedulable_if_not_present(p, &Status::error("boom"), BTreeSet::new(), 10);
    let (a, b, u) = q.pending_pods();
    assert!(a.is_empty() && b.is_empty() && u.is_empty());
}

#[test]
fn status_only_updates_do_not_requeue_unschedulable_pods() {
    let f = fw();
    let mut q = SchedulingQueue::new(1, 10);
    q.add(&f, pi("p", 0), 0);
    let p = q.pop(0).unwrap();
    q.add_unschedulable_if_not_present(
        p,
        &Status::new(Code::Unschedulable, "x"),
        ["NodeResourcesFit"].into(),
        0,
    );
    let status_patch = Arc::new(info(pod(
        "p",
        json!({"metadata": {"resourceVersion": "7"}, "spec": {"priority": 0},
        "status": {"conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}]}}),
    )));
    q.update(&f, status_patch, 10);
    assert_eq!(q.pending_pods().2.len(), 1);
    // A real change (new labels) does.
    let relabel = Arc::new(info(pod(
        "p",
        json!({"metadata": {"labels": {"a": "b"}}, "spec": {"priority": 0}}),
    )));
    q.update(&f, relabel, 20);
    assert_eq!(q.pending_pods().2.len(), 0);
}
