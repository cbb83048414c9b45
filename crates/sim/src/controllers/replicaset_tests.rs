//! The ReplicaSet controller driven alone: slow-start creation, expectations, the
//! deletion ranking, the controller index and creation failures.

use k8s_openapi::api::apps::v1::ReplicaSet;
use k8s_openapi::api::core::v1::Pod;
use serde_json::json;

use super::*;
use crate::api::{Status, Verb};
use crate::controllers::testing::Fixture;

fn rs(replicas: i32) -> ReplicaSet {
    serde_json::from_value(json!({
        "metadata": {"name": "web-5d8f", "namespace": "default", "uid": "rs-uid"},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "nginx", "image": "nginx:1.27"}]}
            }
        }
    }))
    .unwrap()
}

/// A pod of the ReplicaSet (`owner` uid), on `node` if given, Running and Ready or Pending.
fn pod(name: &str, owner: &str, node: Option<&str>, ready: bool) -> Pod {
    let status = if ready {
        json!({"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]})
    } else {
        json!({"phase": "Pending"})
    };
    serde_json::from_value(json!({
        "metadata": {
            "name": name, "namespace": "default", "labels": {"app": "web"},
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-5d8f",
                                  "uid": owner, "controller": true}]
        },
        "spec": {"nodeName": node, "containers": [{"name": "nginx", "image": "nginx:1.27"}]},
        "status": status
    }))
    .unwrap()
}

fn creates(sent: &[ApiRequest]) -> Vec<&ApiRequest> {
    sent.iter()
        .filter(|r| r.verb == Verb::Create && r.kind == Kind::Pod)
        .collect()
}

#[test]
fn creates_pods_in_slow_start_batches_of_one_two_four() {
    let mut c = ReplicaSetController::default();
    let mut f = Fixture::new(&c);
    f.add(&mut c, rs(7));
    assert_eq!(
        f.sync(&mut c, "default/web-5d8f"),
        Ok(Action::await_change())
    );
    let mut batches = Vec::new();
    loop {
        let sent = f.take_sent();
        let ids: Vec<ReqId> = creates(&sent).iter().map(|r| r.id).collect();
        if ids.is_empty() {
            break;
        }
        batches.push(ids.len());
        for id in ids {
            f.respond(&mut c, id, Ok(()));
        }
    }
    assert_eq!(batches, [1, 2, 4]);
    assert_eq!(
        f.events
            .iter()
            .filter(|e| e.0 == "SuccessfulCreate")
            .count(),
        7
    );
}

#[test]
fn created_pods_come_from_the_template_with_the_controller_reference() {
    let mut c = ReplicaSetController::default();
    let mut f = Fixture::new(&c);
    f.add(&mut c, rs(1));
    f.sync(&mut c, "default/web-5d8f").unwrap();
    let sent = f.take_sent();
    let Body::Object(Object::Pod(p)) = &creates(&sent)[0].body else {
        panic!("a pod body");
    };
    assert_eq!(p.metadata.generate_name.as_deref(), Some("web-5d8f-"));
    assert_eq!(p.metadata.labels.as_ref().unwrap()["app"], "web");
    let owner = &p.metadata.owner_references.as_ref().unwrap()[0];
    assert_eq!(
        (owner.uid.as_str(), owner.controller),
        ("rs-uid", Some(true))
    );
}

#[test]
fn waits_for_its_expectations_before_creating_more() {
    let mut c = ReplicaSetController::default();
    let mut f = Fixture::new(&c);
    f.add(&mut c, rs(1));
    f.sync(&mut c, "default/web-5d8f").unwrap();
    let first = f.take_sent();
    assert_eq!(creates(&first).len(), 1);
    // The create is answered but its watch event has not arrived: no second pod.
    f.respond(&mut c, creates(&first)[0].id, Ok(()));
    f.sync(&mut c, "default/web-5d8f").unwrap();
    assert!(creates(&f.take_sent()).is_empty());
    // The pod appears in the informer: expectations are met and nothing more is needed.
    f.add(&mut c, pod("web-5d8f-a", "rs-uid", None, false));
    f.sync(&mut c, "default/web-5d8f").unwrap();
    assert!(creates(&f.take_sent()).is_empty());
}

#[test]
fn scales_down_unscheduled_and_not_ready_pods_first() {
    let mut c = ReplicaSetController::default();
    let mut f = Fixture::new(&c);
    f.add(&mut c, rs(2));
    f.add(
        &mut c,
        pod("web-5d8f-ready1", "rs-uid", Some("node-1"), true),
    );
    f.add(&mut c, pod("web-5d8f-pending", "rs-uid", None, false));
    f.add(
        &mut c,
        pod("web-5d8f-ready2", "rs-uid", Some("node-2"), true),
    );
    f.add(
        &mut c,
        pod("web-5d8f-notready", "rs-uid", Some("node-2"), false),
    );
    f.sync(&mut c, "default/web-5d8f").unwrap();
    let mut deleted: Vec<String> = f
        .take_sent()
        .iter()
        .filter(|r| r.verb == Verb::Delete)
        .map(|r| r.name.clone())
        .collect();
    deleted.sort();
    assert_eq!(deleted, ["web-5d8f-notready", "web-5d8f-pending"]);
}

#[test]
fn ignores_matching_pods_another_controller_owns() {
    let mut c = ReplicaSetController::default();
    let mut f = Fixture::new(&c);
    f.add(&mut c, rs(1));
    f.add(&mut c, pod("other-x", "other-uid", Some("node-1"), true));
    f.sync(&mut c, "default/web-5d8f").unwrap();
    let sent = f.take_sent();
    assert_eq!(
        creates(&sent).len(),
        1,
        "the other owner's pod does not count"
    );
    assert!(sent.iter().all(|r| r.verb != Verb::Delete));
}

#[test]
fn a_failed_create_records_failed_create_and_sets_replica_failure() {
    let mut c = ReplicaSetController::default();
    let mut f = Fixture::new(&c);
    f.add(&mut c, rs(1));
    f.sync(&mut c, "default/web-5d8f").unwrap();
    let sent = f.take_sent();
    let id = creates(&sent)[0].id;
    let status_write = sent
        .iter()
        .find(|r| r.subresource.is_some())
        .expect("status");
    f.respond(&mut c, status_write.id, Ok(()));
    let quota = Status::new(
        403,
        crate::api::StatusReason::Forbidden,
        "pods \"web-5d8f-x\" is forbidden: exceeded quota: q",
    );
    f.respond(&mut c, id, Err(quota));
    assert!(f.events.iter().any(|(r, m)| r == "FailedCreate"
        && m == "Error creating: pods \"web-5d8f-x\" is forbidden: exceeded quota: q"));
    // The retry after the backoff writes the ReplicaFailure condition.
    f.sync(&mut c, "default/web-5d8f").unwrap();
    let status = f
        .take_sent()
        .into_iter()
        .find_map(|r| match r.body {
            Body::Object(Object::ReplicaSet(rs)) if r.subresource.is_some() => rs.status,
            _ => None,
        })
        .expect("a status update");
    let cond = &status.conditions.unwrap()[0];
    assert_eq!(
        (cond.type_.as_str(), cond.reason.as_deref()),
        ("ReplicaFailure", Some("FailedCreate"))
    );
}

#[test]
fn min_ready_seconds_requeues_until_pods_are_available() {
    let mut c = ReplicaSetController::default();
    let mut f = Fixture::new(&c);
    let mut r = rs(1);
    r.spec.as_mut().unwrap().min_ready_seconds = Some(10);
    f.add(&mut c, r);
    let mut p = pod("web-5d8f-a", "rs-uid", Some("node-1"), true);
    let conds = p.status.as_mut().unwrap().conditions.as_mut().unwrap();
    conds[0].last_transition_time = Some(crate::time::k8s_time(f.now));
    f.add(&mut c, p);
    assert_eq!(
        f.sync(&mut c, "default/web-5d8f"),
        Ok(Action::requeue(1000))
    );
    f.now += 11_000;
    assert_eq!(
        f.sync(&mut c, "default/web-5d8f"),
        Ok(Action::await_change())
    );
}

#[test]
fn events_during_a_status_write_fold_into_one_sync_after_it() {
    let mut c = ReplicaSetController::default();
    let mut f = Fixture::new(&c);
    f.add(&mut c, rs(2));
    f.add(&mut c, pod("web-5d8f-a", "rs-uid", Some("node-1"), true));
    f.add(&mut c, pod("web-5d8f-b", "rs-uid", Some("node-1"), true));
    while f.queue.pop().is_some() {}
    f.sync(&mut c, "default/web-5d8f").unwrap();
    let sent = f.take_sent();
    let write = sent
        .iter()
        .find(|r| r.subresource.is_some())
        .expect("status");
    // Pod events while the write is in flight: no sync runs, nothing is sent.
    f.sync(&mut c, "default/web-5d8f").unwrap();
    f.sync(&mut c, "default/web-5d8f").unwrap();
    assert!(
        f.take_sent().is_empty(),
        "no second write while one is in flight"
    );
    assert!(f.queue.pop().is_none());
    // The answer brings the key back once.
    f.respond(&mut c, write.id, Ok(()));
    assert_eq!(f.queue.pop().as_deref(), Some("default/web-5d8f"));
    assert!(f.queue.pop().is_none());
}

#[test]
fn a_failed_status_write_is_retried_and_a_quiet_one_is_not() {
    let mut c = ReplicaSetController::default();
    let mut f = Fixture::new(&c);
    f.add(&mut c, rs(0));
    while f.queue.pop().is_some() {}
    f.sync(&mut c, "default/web-5d8f").unwrap();
    let write = f
        .take_sent()
        .into_iter()
        .find(|r| r.subresource.is_some())
        .expect("status");
    let conflict = Status::new(
        409,
        crate::api::StatusReason::Conflict,
        "the object has been modified",
    );
    f.respond(&mut c, write.id, Err(conflict));
    f.now += 1_000;
    f.queue.promote(f.now);
    assert_eq!(
        f.queue.pop().as_deref(),
        Some("default/web-5d8f"),
        "retried after its backoff"
    );
    f.sync(&mut c, "default/web-5d8f").unwrap();
    let again = f
        .take_sent()
        .into_iter()
        .find(|r| r.subresource.is_some())
        .expect("status");
    f.respond(&mut c, again.id, Ok(()));
    f.queue.promote(f.now + 60_000);
    assert!(
        f.queue.pop().is_none(),
        "no events came during the write: no sync"
    );
}
