//! The Job controller driven alone: pods from the template with the tracking
//! finalizer, the uncounted → finalizer → counted sequence, the back-off limit, Indexed
//! pods, and the pod failure policy.

use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::Pod;
use serde_json::json;

use super::job::JobController;
use super::job_util::*;
use crate::api::{ApiRequest, Body, Verb};
use crate::controllers::testing::Fixture;
use crate::controllers::{Action, Controller};
use crate::object::{Kind, Object};

fn job(extra: serde_json::Value) -> Job {
    let mut v = json!({
        "metadata": {"name": "pi", "namespace": "default", "uid": "job-uid"},
        "spec": {
            "completions": 1, "parallelism": 1, "backoffLimit": 1,
            "completionMode": "NonIndexed", "suspend": false,
            "selector": {"matchLabels": {"batch.kubernetes.io/controller-uid": "job-uid"}},
            "template": {
                "metadata": {"labels": {"batch.kubernetes.io/controller-uid": "job-uid"}},
                "spec": {"restartPolicy": "Never", "containers": [{"name": "main", "image": "busybox:1.37"}]}
            }
        }
    });
    if let (Some(s), Some(e)) = (v["spec"].as_object_mut(), extra.as_object()) {
        for (k, x) in e {
            s.insert(k.clone(), x.clone());
        }
    }
    serde_json::from_value(v).unwrap()
}

fn pod(name: &str, phase: &str, finalizer: bool, exit: i32) -> Pod {
    let fins: Vec<&str> = if finalizer {
        vec![TRACKING_FINALIZER]
    } else {
        vec![]
    };
    serde_json::from_value(json!({
        "metadata": {
            "name": name, "namespace": "default", "uid": format!("uid-{name}"), "finalizers": fins,
            "labels": {"batch.kubernetes.io/controller-uid": "job-uid"},
            "ownerReferences": [{"apiVersion": "batch/v1", "kind": "Job", "name": "pi",
                                  "uid": "job-uid", "controller": true}]
        },
        "spec": {"containers": [{"name": "main", "image": "busybox:1.37"}]},
        "status": {"phase": phase, "containerStatuses": [{"name": "main", "image": "busybox:1.37", "imageID": "",
            "ready": false, "restartCount": 0,
            "state": {"terminated": {"exitCode": exit}}}]}
    }))
    .unwrap()
}

fn status_of(req: &ApiRequest) -> k8s_openapi::api::batch::v1::JobStatus {
    match &req.body {
        Body::Object(Object::Job(j)) => j.status.clone().unwrap_or_default(),
        _ => panic!("a Job status write: {req:?}"),
    }
}

fn of(sent: &[ApiRequest], verb: Verb, kind: Kind) -> Vec<ApiRequest> {
    sent.iter()
        .filter(|r| r.verb == verb && r.kind == kind)
        .cloned()
        .collect()
}

#[test]
fn a_new_job_creates_its_pod_with_the_tracking_finalizer_and_starts() {
    let mut c = JobController::default();
    let mut f = Fixture::new(&c);
    f.add(&mut c, job(json!({})));
    assert_eq!(f.sync(&mut c, "default/pi"), Ok(Action::await_change()));
    let sent = f.take_sent();
    let creates = of(&sent, Verb::Create, Kind::Pod);
    assert_eq!(creates.len(), 1);
    let Body::Object(Object::Pod(p)) = &creates[0].body else {
        panic!()
    };
    assert_eq!(p.metadata.generate_name.as_deref(), Some("pi-"));
    assert_eq!(
        p.metadata.finalizers.as_deref(),
        Some(&[TRACKING_FINALIZER.to_string()][..])
    );
    let st = status_of(&of(&sent, Verb::Update, Kind::Job)[0]);
    assert_eq!(
        (st.active, st.ready, st.terminating),
        (Some(1), Some(0), Some(0))
    );
    assert!(st.start_time.is_some());
}

#[test]
fn a_succeeded_pod_is_uncounted_then_released_then_counted_and_the_job_completes() {
    let mut c = JobController::default();
    let mut f = Fixture::new(&c);
    f.add(&mut c, job(json!({})));
    f.add(&mut c, pod("pi-a", "Succeeded", true, 0));
    f.sync(&mut c, "default/pi").unwrap();
    let st = status_of(&of(&f.take_sent(), Verb::Update, Kind::Job)[0]);
    let unc = st.uncounted_terminated_pods.clone().unwrap();
    assert_eq!(unc.succeeded, Some(vec!["uid-pi-a".to_string()]));
    assert_eq!(st.succeeded, None);
    // The controller sees its own write, then lets the pod go.
    let mut j = job(json!({}));
    j.status = Some(st);
    f.add(&mut c, j);
    f.sync(&mut c, "default/pi").unwrap();
    let patches = of(&f.take_sent(), Verb::Patch, Kind::Pod);
    assert_eq!(patches.len(), 1);
    assert_eq!(patches[0].name, "pi-a");
    // The pod without its finalizer: counted, and the job is complete.
    f.add(&mut c, pod("pi-a", "Succeeded", false, 0));
    f.sync(&mut c, "default/pi").unwrap();
    let st = status_of(&of(&f.take_sent(), Verb::Update, Kind::Job)[0]);
    assert_eq!(st.succeeded, Some(1));
    let types: Vec<String> = st
        .conditions
        .unwrap()
        .iter()
        .map(|c| c.type_.clone())
        .collect();
    assert_eq!(types, ["SuccessCriteriaMet", "Complete"]);
    assert!(st.completion_time.is_some());
    assert!(f
        .events
        .contains(&("Completed".into(), "Job completed".into())));
}

#[test]
fn failures_past_the_backoff_limit_set_failure_target_with_upstreams_reason() {
    let mut c = JobController::default();
    let mut f = Fixture::new(&c);
    f.add(&mut c, job(json!({})));
    f.add(&mut c, pod("pi-a", "Failed", true, 1));
    f.add(&mut c, pod("pi-b", "Failed", true, 1));
    f.sync(&mut c, "default/pi").unwrap();
    let st = status_of(&of(&f.take_sent(), Verb::Update, Kind::Job)[0]);
    let c0 = &st.conditions.unwrap()[0];
    assert_eq!(c0.type_, "FailureTarget");
    assert_eq!(c0.reason.as_deref(), Some(BACKOFF_LIMIT.0));
    assert_eq!(
        c0.message.as_deref(),
        Some("Job has reached the specified backoff limit")
    );
}

#[test]
fn a_fail_job_rule_of_the_pod_failure_policy_names_the_container_and_rule() {
    let mut c = JobController::default();
    let mut f = Fixture::new(&c);
    f.add(
        &mut c,
        job(json!({"backoffLimit": 6, "podFailurePolicy": {"rules": [
            {"action": "FailJob", "onExitCodes": {"operator": "In", "values": [42]}}
        ]}})),
    );
    f.add(&mut c, pod("pi-a", "Failed", true, 42));
    f.sync(&mut c, "default/pi").unwrap();
    let st = status_of(&of(&f.take_sent(), Verb::Update, Kind::Job)[0]);
    let c0 = &st.conditions.unwrap()[0];
    assert_eq!(c0.reason.as_deref(), Some("PodFailurePolicy"));
    assert_eq!(
        c0.message.as_deref(),
        Some("Container main for pod default/pi-a failed with exit code 42 matching FailJob rule at index 0")
    );
}

#[test]
fn an_indexed_job_creates_the_lowest_free_indexes() {
    let mut c = JobController::default();
    let mut f = Fixture::new(&c);
    f.add(
        &mut c,
        job(json!({"completionMode": "Indexed", "completions": 4, "parallelism": 2})),
    );
    f.sync(&mut c, "default/pi").unwrap();
    let names: Vec<String> = of(&f.take_sent(), Verb::Create, Kind::Pod)
        .iter()
        .map(|r| match &r.body {
            Body::Object(Object::Pod(p)) => p.metadata.generate_name.clone().unwrap(),
            _ => String::new(),
        })
        .collect();
    assert_eq!(names, ["pi-0-", "pi-1-"]);
}

#[test]
fn index_sets_print_as_upstream_intervals() {
    let s = parse_indexes("0-2,5,7-8");
    assert_eq!(s.len(), 6);
    // Two consecutive indexes print as "7,8" (`orderedIntervals.String`).
    assert_eq!(format_indexes(&s), "0-2,5,7,8");
    assert_eq!(parse_indexes_below("1,3-9,2147483647", 5).len(), 3);
    assert_eq!(failure_backoff(1), 10_000);
    assert_eq!(failure_backoff(3), 40_000);
    assert_eq!(failure_backoff(10), 360_000);
    let _ = JobController::default().watches();
}

#[test]
fn a_job_being_deleted_creates_no_pods_and_lets_its_pods_go() {
    let mut c = JobController::default();
    let mut f = Fixture::new(&c);
    let mut j = job(json!({}));
    j.metadata.deletion_timestamp = Some(crate::time::k8s_time(0));
    j.metadata.finalizers = Some(vec!["foregroundDeletion".into()]);
    f.add(&mut c, j);
    f.add(&mut c, pod("pi-a", "Running", true, 0));
    f.sync(&mut c, "default/pi").unwrap();
    let sent = f.take_sent();
    assert!(of(&sent, Verb::Create, Kind::Pod).is_empty());
    assert_eq!(of(&sent, Verb::Patch, Kind::Pod).len(), 1);
}
