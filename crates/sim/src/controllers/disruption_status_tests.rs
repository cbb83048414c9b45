//! Table-driven checks of the disruption controller's formulas, numbers worked by hand.

use super::*;

/// A pod named `name`, Ready or not, controlled by `owner` (kind, uid) if given.
fn pod(name: &str, ready: bool, owner: Option<(&str, &str)>) -> Pod {
    serde_json::from_value(serde_json::json!({
        "metadata": {
            "name": name, "namespace": "default",
            "ownerReferences": owner.map(|(kind, uid)| vec![serde_json::json!({
                "apiVersion": "apps/v1", "kind": kind, "name": uid, "uid": uid, "controller": true
            })]),
        },
        "status": {"conditions": [{"type": "Ready", "status": if ready {"True"} else {"False"}}]}
    }))
    .unwrap()
}

fn spec(min: Option<IntOrString>, max: Option<IntOrString>) -> PodDisruptionBudgetSpec {
    PodDisruptionBudgetSpec {
        min_available: min,
        max_unavailable: max,
        ..Default::default()
    }
}

fn int(i: i32) -> Option<IntOrString> {
    Some(IntOrString::Int(i))
}

fn pct(s: &str) -> Option<IntOrString> {
    Some(IntOrString::String(s.into()))
}

/// ReplicaSets `rs-a`/`rs-b` belong to Deployment `dep` of `replicas`; `rs-solo` has 4;
/// anything else (a DaemonSet) has no scale.
fn scales(replicas: i32) -> impl Fn(&OwnerReference, &str) -> Option<Scale> {
    move |r: &OwnerReference, _ns: &str| match r.uid.as_str() {
        "rs-a" | "rs-b" => Some(("dep".into(), replicas)),
        "rs-solo" => Some(("rs-solo".into(), 4)),
        _ => None,
    }
}

#[test]
fn expected_and_desired_follow_get_expected_pod_count() {
    let rs = Some(("ReplicaSet", "rs-a"));
    // (spec, number of pods, deployment replicas, expected, desiredHealthy)
    let cases: Vec<(PodDisruptionBudgetSpec, usize, i32, i32, i32)> = vec![
        // integer minAvailable: expected is the number of selected pods
        (spec(int(2), None), 3, 10, 3, 2),
        (spec(int(5), None), 3, 10, 3, 5),
        // percentages use the controller's scale, rounded up
        (spec(pct("50%"), None), 3, 3, 3, 2),
        (spec(pct("50%"), None), 3, 5, 5, 3),
        (spec(pct("100%"), None), 2, 4, 4, 4),
        (spec(pct("0%"), None), 2, 4, 4, 0),
        // maxUnavailable: scale minus the (rounded-up) budget, never below 0
        (spec(None, int(1)), 3, 3, 3, 2),
        (spec(None, pct("30%")), 3, 10, 10, 7),
        (spec(None, pct("30%")), 3, 5, 5, 3),
        (spec(None, pct("100%")), 3, 4, 4, 0),
        (spec(None, int(5)), 3, 3, 3, 0),
        // neither set: nothing is required
        (spec(None, None), 3, 3, 0, 0),
    ];
    for (i, (s, n, replicas, expected, desired)) in cases.into_iter().enumerate() {
        let pods: Vec<Pod> = (0..n).map(|j| pod(&format!("p{j}"), true, rs)).collect();
        let refs: Vec<&Pod> = pods.iter().collect();
        let got = expected_pod_count(&s, &refs, &scales(replicas)).unwrap();
        assert_eq!(
            (got.expected, got.desired_healthy),
            (expected, desired),
            "case {i}: {s:?} with {n} pods, replicas {replicas}"
        );
    }
}

#[test]
fn each_controller_counts_once_and_bare_pods_are_unmanaged() {
    let pods = [
        pod("a", true, Some(("ReplicaSet", "rs-a"))),
        pod("b", true, Some(("ReplicaSet", "rs-b"))),
        pod("c", true, Some(("ReplicaSet", "rs-solo"))),
        pod("bare", true, None),
    ];
    let refs: Vec<&Pod> = pods.iter().collect();
    let got = expected_pod_count(&spec(pct("50%"), None), &refs, &scales(3)).unwrap();
    // Deployment dep (3, through both of its ReplicaSets) + rs-solo (4).
    assert_eq!(got.expected, 7);
    assert_eq!(got.desired_healthy, 4);
    assert_eq!(got.unmanaged, vec!["bare".to_string()]);
}

#[test]
fn a_controller_without_scale_is_an_error() {
    let pods = [pod("ds-1", true, Some(("DaemonSet", "ds")))];
    let refs: Vec<&Pod> = pods.iter().collect();
    let err = expected_pod_count(&spec(None, int(1)), &refs, &scales(3)).unwrap_err();
    assert_eq!(err, "found no controllers for pod \"ds-1\"");
    // An integer minAvailable never looks at controllers.
    assert!(expected_pod_count(&spec(int(1), None), &refs, &scales(3)).is_ok());
}

#[test]
fn disruptions_allowed_is_healthy_minus_desired_and_never_negative() {
    // (current, desired, expected, allowed, condition status, reason)
    let cases = [
        (3, 2, 3, 1, "True", SUFFICIENT_PODS),
        (3, 0, 3, 3, "True", SUFFICIENT_PODS),
        (2, 2, 3, 0, "False", INSUFFICIENT_PODS),
        (1, 2, 3, 0, "False", INSUFFICIENT_PODS),
        // no expected pods: no disruptions, whatever the arithmetic says
        (2, 0, 0, 0, "False", INSUFFICIENT_PODS),
    ];
    for (current, desired, expected, allowed, status, reason) in cases {
        let c = Computed {
            current_healthy: current,
            desired_healthy: desired,
            expected,
            disrupted: BTreeMap::new(),
        };
        let s = next_status(&Default::default(), 4, &c, 10_000).unwrap();
        assert_eq!(s.disruptions_allowed, allowed, "{c:?}");
        assert_eq!(s.observed_generation, Some(4));
        let cond = &s.conditions.as_ref().unwrap()[0];
        assert_eq!(
            (
                cond.type_.as_str(),
                cond.status.as_str(),
                cond.reason.as_str()
            ),
            (DISRUPTION_ALLOWED, status, reason)
        );
        // The same numbers again write nothing.
        assert_eq!(next_status(&s, 4, &c, 20_000), None);
    }
}

#[test]
fn recently_disrupted_pods_are_not_healthy_until_two_minutes_pass() {
    let pods = [
        pod("a", true, None),
        pod("b", true, None),
        pod("c", false, None),
    ];
    let refs: Vec<&Pod> = pods.iter().collect();
    let mut recorded = BTreeMap::new();
    recorded.insert("a".to_string(), k8s_time(100_000));
    recorded.insert("gone".to_string(), k8s_time(100_000));
    // 60 s later: a is still expected to go; gone is not selected any more.
    let (kept, recheck, expired) = build_disrupted_pod_map(&refs, Some(&recorded), 160_000);
    assert_eq!(kept.keys().collect::<Vec<_>>(), vec!["a"]);
    assert_eq!(recheck, Some(220_000));
    assert!(expired.is_empty());
    assert_eq!(count_healthy(&refs, &kept, 160_000), 1);
    // Past 2 minutes the entry expires and a counts again.
    let (kept, recheck, expired) = build_disrupted_pod_map(&refs, Some(&recorded), 220_001);
    assert!(kept.is_empty());
    assert_eq!(recheck, None);
    assert_eq!(expired, vec!["a".to_string()]);
    assert_eq!(count_healthy(&refs, &kept, 220_001), 2);
}

#[test]
fn scaled_values_round_like_intstr() {
    assert_eq!(
        scaled_value(&IntOrString::String("50%".into()), 3, true),
        Ok(2)
    );
    assert_eq!(
        scaled_value(&IntOrString::String("50%".into()), 3, false),
        Ok(1)
    );
    assert_eq!(scaled_value(&IntOrString::Int(7), 3, true), Ok(7));
    assert!(scaled_value(&IntOrString::String("5".into()), 3, true).is_err());
}
