//! Tests of PodTopologySpread filtering and scoring, with the arithmetic worked by hand.

use super::*;
use crate::scheduler::plugins::helper::fixtures::*;
use serde_json::{json, Value};
use std::sync::Arc;

fn znode(name: &str, zone: Option<&str>) -> Arc<k8s_openapi::api::core::v1::Node> {
    match zone {
        Some(z) => node(
            name,
            json!({"metadata": {"labels": {"topology.kubernetes.io/zone": z}}}),
        ),
        None => node(name, json!({})),
    }
}

fn lpod(name: &str, node: &str, labels: Value) -> crate::scheduler::SharedPod {
    pod(
        name,
        json!({"metadata": {"labels": labels}, "spec": {"nodeName": node}}),
    )
}

fn spread(key: &str, skew: i32, when: &str) -> Value {
    json!({"topologySpreadConstraints": [{"maxSkew": skew, "topologyKey": key, "whenUnsatisfiable": when,
        "labelSelector": {"matchExpressions": [{"key": "foo", "operator": "Exists"}]}}]})
}

fn plugin() -> Box<dyn Plugin> {
    new(None).unwrap()
}

fn filter_all(snap: &Snapshot, p: &PodInfo) -> Vec<String> {
    let pl = plugin();
    let mut st = CycleState::default();
    let (_, s) = pl.as_pre_filter().unwrap().pre_filter(&mut st, p, snap);
    assert!(s.is_success(), "{s:?}");
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
fn do_not_schedule_constraints_filter_by_skew() {
    // zone1: node-a (a1, a2), node-b (b1); zone2: node-x (x1), node-y.
    let nodes = vec![
        znode("node-a", Some("zone1")),
        znode("node-b", Some("zone1")),
        znode("node-x", Some("zone2")),
        znode("node-y", Some("zone2")),
    ];
    let pods = vec![
        lpod("a1", "node-a", json!({"foo": ""})),
        lpod("a2", "node-a", json!({"foo": ""})),
        lpod("b1", "node-b", json!({"foo": ""})),
        lpod("x1", "node-x", json!({"foo": ""})),
    ];
    let snap = Snapshot::new(&nodes, &pods);
    let by_name = |v: Vec<String>| -> BTreeMap<String, String> {
        snap.nodes().iter().map(|n| n.name.clone()).zip(v).collect()
    };
    // Zone: zone1 3, zone2 1, min 1. zone1: 3+1−1 = 3 > 1 ✗; zone2: 1+1−1 = 1 ✓.
    let p = info(pod(
        "p",
        json!({"metadata": {"labels": {"foo": ""}}, "spec": spread("topology.kubernetes.io/zone", 1, "DoNotSchedule")}),
    ));
    let r = by_name(filter_all(&snap, &p));
    assert_eq!(r["node-a"], ERR_REASON_CONSTRAINTS_NOT_MATCH);
    assert_eq!(r["node-b"], ERR_REASON_CONSTRAINTS_NOT_MATCH);
    assert_eq!(r["node-x"], "ok");
    assert_eq!(r["node-y"], "ok");
    // Hostname: a 2, b 1, x 1, y 0, min 0: only node-y (0+1−0 = 1) fits.
    let p = info(pod(
        "p",
        json!({"metadata": {"labels": {"foo": ""}}, "spec": spread("kubernetes.io/hostname", 1, "DoNotSchedule")}),
    ));
    let r = by_name(filter_all(&snap, &p));
    assert_eq!(r.values().filter(|v| *v == "ok").count(), 1);
    assert_eq!(r["node-y"], "ok");
    // A node missing the key is unresolvable.
    let snap = Snapshot::new(&[znode("bare", None)], &[]);
    let p = info(pod(
        "p",
        json!({"spec": spread("topology.kubernetes.io/zone", 1, "DoNotSchedule")}),
    ));
    assert_eq!(filter_all(&snap, &p), [ERR_REASON_NODE_LABEL_NOT_MATCH]);
}

fn score_all(snap: &Snapshot, p: &PodInfo) -> Vec<i64> {
    let pl = plugin();
    let mut st = CycleState::default();
    let feasible: Vec<usize> = (0..snap.num_nodes()).collect();
    assert!(pl
        .as_pre_score()
        .unwrap()
        .pre_score(&mut st, p, &feasible, snap)
        .is_success());
    let sp = pl.as_score().unwrap();
    let mut s: Vec<i64> = snap
        .nodes()
        .iter()
        .map(|n| sp.score(&st, p, n, snap).unwrap())
        .collect();
    sp.normalize_score(&st, p, &mut s);
    s
}

#[test]
fn system_default_constraints_spread_service_pods_across_hosts() {
    let nodes = vec![znode("n1", None), znode("n2", None), znode("n3", None)];
    let web = json!({"app": "web"});
    let pods = vec![
        lpod("w1", "n1", web.clone()),
        lpod("w2", "n1", web.clone()),
        lpod("w3", "n2", web.clone()),
    ];
    let mut snap = Snapshot::new(&nodes, &pods);
    snap.services.push(Arc::new(
        serde_json::from_value(json!({
        "metadata": {"name": "web", "namespace": "default"}, "spec": {"selector": {"app": "web"}}}))
        .unwrap(),
    ));
    let p = info(pod("p", json!({"metadata": {"labels": web}})));
    // Hostname maxSkew 3, weight ln(3+2) = 1.609: n1 2*1.609+2 = 5.22 → 5; n2 1.609+2 = 3.61
    // → 4; n3 0+2 → 2. The zone default is unused (no node has a zone label).
    // Normalize (min 2, max 5): 100*(7−5)/5 = 40, 100*(7−4)/5 = 60, 100*(7−2)/5 = 100.
    assert_eq!(score_all(&snap, &p), [40, 60, 100]);
    // Without a Service (or controller) selecting it, a pod gets no default constraints.
    let bare = info(pod("q", json!({"metadata": {"labels": {"app": "other"}}})));
    let mut st = CycleState::default();
    assert_eq!(
        plugin()
            .as_pre_score()
            .unwrap()
            .pre_score(&mut st, &bare, &[0, 1, 2], &snap)
            .code,
        Code::Skip
    );
}

#[test]
fn schedule_anyway_zone_constraint_scores_and_ignores_unlabelled_nodes() {
    let nodes = vec![
        znode("n1", Some("z1")),
        znode("n2", Some("z1")),
        znode("n3", Some("z2")),
        znode("n4", None),
    ];
    let pods = vec![
        lpod("a", "n1", json!({"foo": "1"})),
        lpod("b", "n1", json!({"foo": "1"})),
        lpod("c", "n3", json!({"foo": "1"})),
    ];
    let snap = Snapshot::new(&nodes, &pods);
    let p = info(pod(
        "p",
        json!({"metadata": {"labels": {"foo": "1"}}, "spec": spread("topology.kubernetes.io/zone", 1, "ScheduleAnyway")}),
    ));
    // z1 = 2, z2 = 1; 2 domains → weight ln 4 = 1.386; maxSkew−1 = 0.
    // n1, n2: 2*1.386 = 2.77 → 3; n3: 1.386 → 1; n4 ignored (no zone label) → 0.
    // Normalize over n1..n3 (min 1, max 3): 100*(4−3)/3 = 33, 33, 100*(4−1)/3 = 100; n4 0.
    // Node tree order: n1 (z1), n3 (z2), n4 (no zone), n2 (z1).
    assert_eq!(score_all(&snap, &p), [33, 100, 0, 33]);
}

fn spread2(policy: &str) -> Value {
    let sel = json!({"matchLabels": {"app": "a"}});
    json!({"topologySpreadConstraints": [
        {"maxSkew": 2, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "ScheduleAnyway",
         "labelSelector": sel, "nodeTaintsPolicy": policy},
        {"maxSkew": 1, "topologyKey": "kubernetes.io/hostname", "whenUnsatisfiable": "ScheduleAnyway",
         "labelSelector": sel, "nodeTaintsPolicy": policy}]})
}

/// The integer-index path (no inclusion policy) and the direct scan (nodeTaintsPolicy
/// Honor, no taints anywhere) must agree, also after pods are assumed incrementally.
#[test]
fn indexed_and_scanned_counting_agree() {
    let mut rng = crate::rng::Rng::new(5);
    let nodes: Vec<_> = (0..60)
        .map(|i| {
            if i % 7 == 0 {
                znode(&format!("n{i}"), None)
            } else {
                znode(&format!("n{i}"), Some(&format!("z{}", i % 3)))
            }
        })
        .collect();
    let mk = |i: usize, rng: &mut crate::rng::Rng| {
        let app = if rng.intn(2) == 0 { "a" } else { "b" };
        let ns = if rng.intn(5) == 0 { "other" } else { "default" };
        let n = format!("n{}", rng.intn(60));
        pod(
            &format!("p{i}"),
            json!({"metadata": {"namespace": ns, "labels": {"app": app}}, "spec": {"nodeName": n}}),
        )
    };
    let first: Vec<_> = (0..150).map(|i| mk(i, &mut rng)).collect();
    let more: Vec<_> = (150..300).map(|i| mk(i, &mut rng)).collect();
    let incoming = |policy: &str| {
        info(pod(
            "in",
            json!({"metadata": {"labels": {"app": "a"}}, "spec": spread2(policy)}),
        ))
    };
    let mut snap = Snapshot::new(&nodes, &first);
    assert_eq!(
        score_all(&snap, &incoming("Ignore")),
        score_all(&snap, &incoming("Honor"))
    );
    // Assume more pods after the caches were built; compare with a fresh snapshot.
    for p in &more {
        let pi = Arc::new(info(p.clone()));
        let node = pi.node_name.clone();
        snap.assume_pod(pi, &node);
    }
    snap.remove_pod("default/p3");
    let all: Vec<_> = first
        .iter()
        .chain(&more)
        .filter(|p| p.metadata.name.as_deref() != Some("p3"))
        .cloned()
        .collect();
    let fresh = Snapshot::new(&nodes, &all);
    let want = score_all(&fresh, &incoming("Honor"));
    assert_eq!(score_all(&snap, &incoming("Ignore")), want);
    assert_eq!(score_all(&fresh, &incoming("Ignore")), want);
    let sel = Selector::from_set(&[("app".to_string(), "a".to_string())].into());
    assert_eq!(
        snap.domain_counts("default", &sel, "topology.kubernetes.io/zone"),
        fresh.domain_counts("default", &sel, "topology.kubernetes.io/zone")
    );
}
