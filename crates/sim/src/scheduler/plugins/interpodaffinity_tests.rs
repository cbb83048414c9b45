//! Tests of InterPodAffinity filtering and scoring.

use super::*;
use crate::scheduler::plugins::helper::fixtures::*;
use serde_json::{json, Value};
use std::sync::Arc;

fn nodes() -> Vec<Arc<k8s_openapi::api::core::v1::Node>> {
    let z = |n: &str, zone: &str| {
        node(
            n,
            json!({"metadata": {"labels": {"topology.kubernetes.io/zone": zone}}}),
        )
    };
    vec![z("n1", "z1"), z("n2", "z1"), z("n3", "z2")]
}

fn term(key: &str, app: &str) -> Value {
    json!({"topologyKey": key, "labelSelector": {"matchLabels": {"app": app}}})
}

// Node tree order interleaves zones: n1 (z1), n3 (z2), n2 (z1).
fn run(snap: &Snapshot, p: &PodInfo) -> Vec<String> {
    let pl = new(None).unwrap();
    let mut st = CycleState::default();
    let (_, s) = pl.as_pre_filter().unwrap().pre_filter(&mut st, p, snap);
    if s.code == Code::Skip {
        return vec!["ok".into(); snap.num_nodes()];
    }
    snap.nodes()
        .iter()
        .map(|n| {
            let s = pl.as_filter().unwrap().filter(&st, p, n);
            if s.is_success() {
                "ok".into()
            } else {
                s.message()
            }
        })
        .collect()
}

#[test]
fn required_affinity_and_anti_affinity_filter() {
    let db = pod(
        "db",
        json!({"metadata": {"labels": {"app": "db"}}, "spec": {"nodeName": "n1"}}),
    );
    let snap = Snapshot::new(&nodes(), &[db]);
    let zone = "topology.kubernetes.io/zone";
    let aff = info(pod(
        "p",
        json!({"spec": {"affinity": {"podAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": [term(zone, "db")]}}}}),
    ));
    assert_eq!(run(&snap, &aff), ["ok", ERR_REASON_AFFINITY, "ok"]);
    let anti = info(pod(
        "p",
        json!({"spec": {"affinity": {"podAntiAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": [term("kubernetes.io/hostname", "db")]}}}}),
    ));
    assert_eq!(run(&snap, &anti), [ERR_REASON_ANTI_AFFINITY, "ok", "ok"]);
    // An existing pod's anti-affinity keeps matching pods out of its zone.
    let guard = pod(
        "guard",
        json!({"spec": {"nodeName": "n3", "affinity": {"podAntiAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": [term(zone, "web")]}}}}),
    );
    let snap2 = Snapshot::new(&nodes(), &[guard]);
    let web = info(pod("w", json!({"metadata": {"labels": {"app": "web"}}})));
    assert_eq!(
        run(&snap2, &web),
        ["ok", ERR_REASON_EXISTING_ANTI_AFFINITY, "ok"]
    );
    // The first pod of a self-affine group may go anywhere the key exists.
    let first = info(pod(
        "f",
        json!({"metadata": {"labels": {"app": "cache"}}, "spec": {"affinity": {"podAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": [term(zone, "cache")]}}}}),
    ));
    assert_eq!(run(&snap, &first), ["ok", "ok", "ok"]);
}

#[test]
fn preferred_terms_score_by_topology() {
    let db = pod(
        "db",
        json!({"metadata": {"labels": {"app": "db"}}, "spec": {"nodeName": "n1"}}),
    );
    let snap = Snapshot::new(&nodes(), &[db]);
    let p = info(pod(
        "p",
        json!({"spec": {"affinity": {"podAffinity": {
        "preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 5, "podAffinityTerm": term("topology.kubernetes.io/zone", "db")}]}}}}),
    ));
    let pl = new(None).unwrap();
    let mut st = CycleState::default();
    assert!(pl
        .as_pre_score()
        .unwrap()
        .pre_score(&mut st, &p, &[0, 1, 2], &snap)
        .is_success());
    let sp = pl.as_score().unwrap();
    let mut s: Vec<i64> = snap
        .nodes()
        .iter()
        .map(|n| sp.score(&st, &p, n, &snap).unwrap())
        .collect();
    // z1 (n1, n2) gets +5 (db runs there); z2 (n3) 0. Order: n1, n3, n2.
    assert_eq!(s, [5, 0, 5]);
    sp.normalize_score(&st, &p, &mut s);
    // (s − 0) / 5 * 100.
    assert_eq!(s, [100, 0, 100]);
    // Nobody has affinity: PreScore skips.
    let q = info(pod("q", json!({})));
    assert_eq!(
        pl.as_pre_score()
            .unwrap()
            .pre_score(&mut st, &q, &[0, 1, 2], &snap)
            .code,
        Code::Skip
    );
}
