//! The HPA controller driven alone, and its arithmetic table-driven: the replica
//! calculator, the scale limits, the stabilization window, conditions and events.

use std::collections::BTreeMap;

use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet};
use k8s_openapi::api::autoscaling::v2::HorizontalPodAutoscaler;
use k8s_openapi::api::core::v1::{Node, Pod};
use serde_json::json;

use super::hpa::HorizontalController;
use super::hpa_calc::{resource_replicas, stabilize, with_rules, PodMetric, Stamped};
use crate::api::{Body, Subresource, Verb};
use crate::controllers::testing::Fixture;
use crate::controllers::Action;
use crate::message::Actor;
use crate::node::kubelet_api::{ContainerUsage, KubeletReply, KubeletResponse, PodUsage, Summary};
use crate::object::{Kind, Object};
use crate::time::{k8s_time, MINUTE, SECOND};

const NOW: u64 = 1_000_000;

/// A Running pod requesting 200m, started and Ready long ago (or Ready `ready_for` ago).
fn pod(name: &str, phase: &str, ready: &str, started_ago: u64) -> Pod {
    serde_json::from_value(json!({
        "metadata": {"name": name, "namespace": "default", "labels": {"run": "php-apache"},
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "php-apache-5d8f",
                "uid": "rs-uid", "controller": true}]},
        "spec": {"containers": [{"name": "php", "image": "registry.k8s.io/hpa-example",
            "resources": {"requests": {"cpu": "200m"}}}]},
        "status": {"phase": phase, "startTime": k8s_time(NOW - started_ago),
            "conditions": [{"type": "Ready", "status": ready,
                "lastTransitionTime": k8s_time(NOW - started_ago + 5 * SECOND)}]}
    }))
    .unwrap()
}

fn metric(value: i64) -> PodMetric {
    PodMetric {
        value,
        timestamp: NOW - 5 * SECOND,
        window: 15 * SECOND,
    }
}

fn metrics(v: &[(&str, i64)]) -> BTreeMap<String, PodMetric> {
    v.iter().map(|(n, m)| (n.to_string(), metric(*m))).collect()
}

#[test]
fn replica_calculator_follows_upstream() {
    let old = 10 * MINUTE;
    let a = pod("a", "Running", "True", old);
    let b = pod("b", "Running", "True", old);
    let c = pod("c", "Running", "True", old);
    let young_unready = pod("u", "Running", "False", MINUTE);
    let pending = pod("p", "Pending", "False", MINUTE);
    // (pods, metrics, current, expected replicas, expected utilization)
    type Case<'a> = (Vec<&'a Pod>, Vec<(&'a str, i64)>, i32, i32, i32);
    let cases: Vec<Case> = vec![
        // 500m of 200m at a 50% target: ceil(1 × 250 / 50).
        (vec![&a], vec![("a", 500)], 1, 5, 250),
        // Within the 0.1 tolerance: no change.
        (vec![&a, &b], vec![("a", 105), ("b", 105)], 2, 2, 52),
        // All idle: ceil(0) = 0 (min replicas apply later).
        (vec![&a, &b], vec![("a", 0), ("b", 0)], 2, 0, 0),
        // A pod without metrics counts as 100% on a scale-down: (20+200)/400 = 55% → 2.
        (vec![&a, &b], vec![("a", 20)], 2, 2, 10),
        // ... and as 0% on a scale-up: (400+0)/400 = 100% → ceil(2 × 2) = 4.
        (vec![&a, &b], vec![("a", 400)], 2, 4, 200),
        // An unready pod within the initialization period is ignored, then counted at 0%
        // on a scale-up: (400+0)/400 → 4.
        (
            vec![&a, &young_unready],
            vec![("a", 400), ("u", 400)],
            2,
            4,
            200,
        ),
        // A pending pod is ignored, then counted at 0% on a scale-up: 600/800 of a 50%
        // target over 4 pods → 6.
        (
            vec![&a, &b, &c, &pending],
            vec![("a", 200), ("b", 200), ("c", 200)],
            4,
            6,
            100,
        ),
    ];
    for (i, (pods, m, current, want, util)) in cases.into_iter().enumerate() {
        let p = resource_replicas(current, 50, &pods, &metrics(&m), NOW).unwrap();
        assert_eq!(p.replicas, want, "case {i}");
        assert_eq!(p.utilization, util, "case {i}");
    }
    let err = resource_replicas(1, 50, &[&a], &BTreeMap::new(), NOW).unwrap_err();
    assert_eq!(
        err,
        "unable to get metrics for resource cpu: no metrics returned from resource metrics API"
    );
}

#[test]
fn an_average_value_target_compares_millicores() {
    use super::hpa_calc::raw_resource_replicas;
    let old = 10 * MINUTE;
    let a = pod("a", "Running", "True", old);
    let b = pod("b", "Running", "True", old);
    // 300m and 100m average 200m against 100m: ceil(2 × 2) = 4.
    let p =
        raw_resource_replicas(2, 100, &[&a, &b], &metrics(&[("a", 300), ("b", 100)]), NOW).unwrap();
    assert_eq!((p.replicas, p.raw), (4, 200));
    // 105m: within the tolerance.
    let p =
        raw_resource_replicas(2, 100, &[&a, &b], &metrics(&[("a", 105), ("b", 105)]), NOW).unwrap();
    assert_eq!(p.replicas, 2);
}

#[test]
fn rules_limit_scale_up_to_double_or_four_and_respect_min_and_max() {
    assert_eq!(with_rules(1, 5, 1, 10).0, 4);
    assert_eq!(with_rules(1, 5, 1, 10).1 .0, "ScaleUpLimit");
    assert_eq!(
        with_rules(4, 12, 1, 10),
        (
            8,
            (
                "ScaleUpLimit",
                "the desired replica count is increasing faster than the maximum scale rate".into()
            )
        )
    );
    assert_eq!(with_rules(8, 12, 1, 10).1 .0, "TooManyReplicas");
    assert_eq!(with_rules(8, 12, 1, 10).0, 10);
    assert_eq!(
        with_rules(2, 0, 1, 10),
        (
            1,
            (
                "TooFewReplicas",
                "the desired replica count is less than the minimum replica count".into()
            )
        )
    );
    assert_eq!(with_rules(2, 3, 1, 10).1 .0, "DesiredWithinRange");
}

#[test]
fn stabilization_keeps_the_highest_recommendation_of_five_minutes() {
    let mut recs = vec![Stamped { value: 6, at: 0 }];
    assert_eq!(stabilize(&mut recs, 1, 4 * MINUTE, 5 * MINUTE), 6);
    // Past the window the 6 is replaced; only the 1 of 4 minutes ago remains.
    assert_eq!(stabilize(&mut recs, 1, 6 * MINUTE, 5 * MINUTE), 1);
}

fn deployment() -> Deployment {
    serde_json::from_value(json!({
        "metadata": {"name": "php-apache", "namespace": "default", "uid": "dep-uid"},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"run": "php-apache"}},
            "template": {"metadata": {"labels": {"run": "php-apache"}}, "spec": {"containers": []}}}
    }))
    .unwrap()
}

fn replica_set() -> ReplicaSet {
    serde_json::from_value(json!({
        "metadata": {"name": "php-apache-5d8f", "namespace": "default", "uid": "rs-uid",
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "php-apache",
                "uid": "dep-uid", "controller": true}]},
        "spec": {"selector": {"matchLabels": {"run": "php-apache"}}}
    }))
    .unwrap()
}

fn hpa(target: &str) -> HorizontalPodAutoscaler {
    serde_json::from_value(json!({
        "metadata": {"name": "php-apache", "namespace": "default"},
        "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": target},
            "minReplicas": 1, "maxReplicas": 10,
            "metrics": [{"type": "Resource", "resource": {"name": "cpu",
                "target": {"type": "Utilization", "averageUtilization": 50}}}]}
    }))
    .unwrap()
}

fn node() -> Node {
    serde_json::from_value(json!({"metadata": {"name": "node-1"}})).unwrap()
}

fn stats(pod: &str, cpu: u64) -> KubeletResponse {
    KubeletResponse {
        id: (1 << 40),
        client: Actor::ControllerManager,
        result: Ok(KubeletReply::Stats(Summary {
            at: NOW - 5 * SECOND,
            cpu_m: 0,
            mem_bytes: 0,
            pods: vec![PodUsage {
                namespace: "default".into(),
                name: pod.into(),
                containers: vec![ContainerUsage {
                    name: "php".into(),
                    cpu_m: cpu,
                    mem_bytes: 0,
                }],
            }],
        })),
    }
}

fn status(f: &Fixture) -> k8s_openapi::api::autoscaling::v2::HorizontalPodAutoscalerStatus {
    let req = f
        .sent
        .iter()
        .rev()
        .find(|r| r.subresource == Some(Subresource::Status))
        .expect("a status update");
    match &req.body {
        Body::Object(Object::HorizontalPodAutoscaler(h)) => h.status.clone().unwrap(),
        b => panic!("{b:?}"),
    }
}

fn condition(
    st: &k8s_openapi::api::autoscaling::v2::HorizontalPodAutoscalerStatus,
    t: &str,
) -> (String, String, String) {
    let c = st
        .conditions
        .iter()
        .flatten()
        .find(|c| c.type_ == t)
        .unwrap();
    (
        c.status.clone(),
        c.reason.clone().unwrap(),
        c.message.clone().unwrap(),
    )
}

#[test]
fn a_missing_target_sets_failed_get_scale() {
    let mut c = HorizontalController::default();
    let mut f = Fixture::new(&c);
    f.now = NOW - 15 * SECOND;
    f.add(&mut c, hpa("nope"));
    // Upstream's queue holds a new HPA for the resync period.
    assert_eq!(
        f.sync(&mut c, "default/php-apache"),
        Ok(Action::await_change())
    );
    f.now = NOW;
    assert_eq!(
        f.sync(&mut c, "default/php-apache"),
        Ok(Action::requeue(15 * SECOND))
    );
    assert_eq!(
        f.events,
        vec![(
            "FailedGetScale".into(),
            "deployments.apps \"nope\" not found".into()
        )]
    );
    let st = status(&f);
    assert_eq!(
        condition(&st, "AbleToScale"),
        ("False".into(), "FailedGetScale".into(), "the HPA controller was unable to get the target's current scale: deployments.apps \"nope\" not found".into())
    );
}

#[test]
fn without_metrics_scaling_is_not_active() {
    let mut c = HorizontalController::default();
    let mut f = Fixture::new(&c);
    f.now = NOW - 15 * SECOND;
    f.add(&mut c, deployment());
    f.add(&mut c, replica_set());
    f.add(
        &mut c,
        pod("php-apache-5d8f-a", "Running", "True", 10 * MINUTE),
    );
    f.add(&mut c, hpa("php-apache"));
    f.now = NOW;
    f.sync(&mut c, "default/php-apache").unwrap();
    let reasons: Vec<&str> = f.events.iter().map(|(r, _)| r.as_str()).collect();
    assert_eq!(
        reasons,
        vec!["FailedGetResourceMetric", "FailedComputeMetricsReplicas"]
    );
    assert_eq!(f.events[1].1, "invalid metrics (1 invalid out of 1), first error is: failed to get cpu resource metric value: failed to get cpu utilization: unable to get metrics for resource cpu: no metrics returned from resource metrics API");
    let st = status(&f);
    assert_eq!(condition(&st, "ScalingActive").1, "FailedGetResourceMetric");
    assert_eq!(st.current_replicas, Some(1));
}

#[test]
fn load_rescales_through_the_scale_subresource() {
    let mut c = HorizontalController::default();
    let mut f = Fixture::new(&c);
    f.now = NOW - 15 * SECOND;
    f.add(&mut c, node());
    f.add(&mut c, deployment());
    f.add(&mut c, replica_set());
    f.add(
        &mut c,
        pod("php-apache-5d8f-a", "Running", "True", 10 * MINUTE),
    );
    f.add(&mut c, hpa("php-apache"));
    f.now = NOW;
    f.tick(&mut c);
    c.on_kubelet_for_test(&mut f, stats("php-apache-5d8f-a", 500));
    f.sync(&mut c, "default/php-apache").unwrap();
    let sent = f.take_sent();
    let scale = sent
        .iter()
        .find(|r| r.subresource == Some(Subresource::Scale))
        .unwrap();
    assert_eq!(
        (scale.verb, scale.kind, scale.name.as_str()),
        (Verb::Patch, Kind::Deployment, "php-apache")
    );
    assert!(matches!(scale.body, Body::Scale(4)), "{:?}", scale.body);
    f.respond(&mut c, scale.id, Ok(()));
    assert_eq!(
        f.events.last().unwrap(),
        &(
            "SuccessfulRescale".to_string(),
            "New size: 4; reason: cpu resource utilization (percentage of request) above target"
                .to_string()
        )
    );
    let st = status(&f);
    assert_eq!((st.current_replicas, st.desired_replicas), (Some(1), 4));
    assert_eq!(condition(&st, "AbleToScale").1, "SucceededRescale");
    assert_eq!(condition(&st, "ScalingLimited").1, "ScaleUpLimit");
    let m = st.current_metrics.unwrap();
    let cur = &m[0].resource.as_ref().unwrap().current;
    assert_eq!(
        (
            cur.average_utilization,
            cur.average_value.as_ref().map(|q| q.0.as_str())
        ),
        (Some(250), Some("500m"))
    );
    assert!(st.last_scale_time.is_some());
}

impl HorizontalController {
    /// Delivers a scrape answer through the fixture.
    fn on_kubelet_for_test(&mut self, f: &mut Fixture, resp: KubeletResponse) {
        f.kubelet(self, resp);
    }
}
