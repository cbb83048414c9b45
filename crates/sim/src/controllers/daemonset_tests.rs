//! The DaemonSet controller driven alone: one pod per eligible node pinned by node
//! affinity, nodes added and removed, and rolling updates.

use k8s_openapi::api::apps::v1::DaemonSet;
use k8s_openapi::api::core::v1::{Node, Pod};
use serde_json::json;

use super::*;
use crate::controllers::testing::Fixture;

const KEY: &str = "kube-system/fluentd";

fn ds(image: &str, generation: i64) -> DaemonSet {
    serde_json::from_value(json!({
        "metadata": {"name": "fluentd", "namespace": "kube-system", "uid": "ds-uid", "generation": generation},
        "spec": {
            "selector": {"matchLabels": {"name": "fluentd"}},
            "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0}},
            "template": {
                "metadata": {"labels": {"name": "fluentd"}},
                "spec": {"containers": [{"name": "fluentd", "image": image}]}
            }
        }
    }))
    .unwrap()
}

fn node(name: &str, taint: Option<&str>) -> Node {
    let taints = taint.map(|k| json!([{"key": k, "effect": "NoSchedule"}]));
    serde_json::from_value(json!({"metadata": {"name": name}, "spec": {"taints": taints}})).unwrap()
}

fn with_revision(c: &mut DaemonSetController, f: &mut Fixture) {
    f.sync(c, KEY).unwrap();
    let sent = f.take_sent();
    assert_eq!(sent.len(), 1, "{sent:?}");
    assert_eq!(sent[0].kind, Kind::ControllerRevision);
    let Body::Object(rev) = &sent[0].body else {
        panic!()
    };
    f.respond(c, sent[0].id, Ok(()));
    f.add(c, rev.clone());
}

/// The node each pod create is pinned to, and the stored pods (Running and Ready).
fn created(
    f: &mut Fixture,
    c: &mut DaemonSetController,
    sent: &[ApiRequest],
) -> Vec<(String, Pod)> {
    let mut out = Vec::new();
    for (i, r) in sent
        .iter()
        .filter(|r| r.verb == Verb::Create && r.kind == Kind::Pod)
        .enumerate()
    {
        let Body::Object(Object::Pod(p)) = &r.body else {
            panic!()
        };
        let mut p = (**p).clone();
        let node = target_node(&p).unwrap().to_string();
        p.metadata.name = Some(format!("fluentd-{i}{node}"));
        p.spec.as_mut().unwrap().node_name = Some(node.clone());
        p.status = Some(
            serde_json::from_value(json!({"phase": "Running",
            "conditions": [{"type": "Ready", "status": "True"}]}))
            .unwrap(),
        );
        f.add(c, p.clone());
        out.push((node, p));
    }
    out
}

#[test]
fn one_pod_per_untainted_node_pinned_through_match_fields() {
    let mut c = DaemonSetController::default();
    let mut f = Fixture::new(&c);
    f.add(&mut c, node("node-1", None));
    f.add(&mut c, node("node-2", None));
    f.add(
        &mut c,
        node("cp", Some("node-role.kubernetes.io/control-plane")),
    );
    f.add(&mut c, ds("fluentd:v5.0.1", 1));
    with_revision(&mut c, &mut f);
    f.sync(&mut c, KEY).unwrap();
    let sent = f.take_sent();
    let pods = created(&mut f, &mut c, &sent);
    let nodes: Vec<&str> = pods.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(nodes, ["node-1", "node-2"]);
    let p = &pods[0].1;
    let labels = p.metadata.labels.as_ref().unwrap();
    assert!(labels.contains_key("controller-revision-hash"));
    assert_eq!(labels["pod-template-generation"], "1");
    assert_eq!(p.metadata.generate_name.as_deref(), Some("fluentd-"));
    // A node added later gets its pod.
    f.add(&mut c, node("node-3", None));
    f.sync(&mut c, KEY).unwrap();
    let sent = f.take_sent();
    let more = created(&mut f, &mut c, &sent);
    assert_eq!(
        more.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>(),
        ["node-3"]
    );
}

#[test]
fn a_new_template_replaces_one_node_at_a_time() {
    let mut c = DaemonSetController::default();
    let mut f = Fixture::new(&c);
    f.add(&mut c, node("node-1", None));
    f.add(&mut c, node("node-2", None));
    f.add(&mut c, ds("fluentd:v5.0.1", 1));
    with_revision(&mut c, &mut f);
    f.sync(&mut c, KEY).unwrap();
    let sent = f.take_sent();
    created(&mut f, &mut c, &sent);
    f.sync(&mut c, KEY).unwrap();
    f.take_sent();
    f.add(&mut c, ds("fluentd:v5.0.2", 2));
    with_revision(&mut c, &mut f);
    f.sync(&mut c, KEY).unwrap();
    let dels: Vec<String> = f
        .take_sent()
        .iter()
        .filter(|r| r.verb == Verb::Delete && r.kind == Kind::Pod)
        .map(|r| r.name.clone())
        .collect();
    assert_eq!(dels.len(), 1, "{dels:?}");
}

/// Upstream's `updateNode`: a Node update that leaves its labels and taints as they were
/// (a status heartbeat, a new image in its list) wakes no DaemonSet; one that changes
/// whether a set's pod should run there wakes that set. At 100 nodes every heartbeat
/// re-synced every set, a 4–7 ms event natively during a 3,000-pod scale-up.
#[test]
fn a_node_status_update_wakes_no_set_and_a_new_taint_wakes_it() {
    let mut c = DaemonSetController::default();
    let mut f = Fixture::new(&c);
    f.add(&mut c, node("node-1", None));
    f.add(&mut c, ds("fluentd:v5.0.1", 1));
    while f.queue.pop().is_some() {}
    let mut heartbeat = node("node-1", None);
    heartbeat.status =
        Some(serde_json::from_value(json!({"images": [{"names": ["nginx:1.27"]}]})).unwrap());
    f.add(&mut c, heartbeat);
    assert_eq!(f.queue.pop(), None, "status only: no set to sync");
    f.add(&mut c, node("node-1", Some("example.com/maintenance")));
    assert_eq!(
        f.queue.pop().as_deref(),
        Some(KEY),
        "should run: true → false"
    );
    assert_eq!(f.queue.pop(), None);
    let mut labelled = node("node-1", Some("example.com/maintenance"));
    labelled.metadata.labels = Some([("zone".to_string(), "a".to_string())].into());
    f.add(&mut c, labelled);
    assert_eq!(
        f.queue.pop(),
        None,
        "a label no selector reads changes nothing"
    );
    f.add(&mut c, node("node-2", None));
    assert_eq!(
        f.queue.pop().as_deref(),
        Some(KEY),
        "a new node that should run one"
    );
}

/// Upstream's `syncNodes` caps the creates (and the deletes) of one sync at
/// `burstReplicas` (250); the next sync, once the informer has seen them, makes more.
#[test]
fn six_hundred_new_nodes_get_their_pods_two_hundred_and_fifty_at_a_time() {
    let mut c = DaemonSetController::default();
    let mut f = Fixture::new(&c);
    for i in 0..600 {
        f.add(&mut c, node(&format!("node-{i:03}"), None));
    }
    f.add(&mut c, ds("fluentd:v5.0.1", 1));
    with_revision(&mut c, &mut f);
    let mut batches = Vec::new();
    let mut nodes = BTreeSet::new();
    for _ in 0..4 {
        f.sync(&mut c, KEY).unwrap();
        let sent = f.take_sent();
        let pods = created(&mut f, &mut c, &sent);
        batches.push(pods.len());
        nodes.extend(pods.into_iter().map(|(n, _)| n));
    }
    assert_eq!(batches, [250, 250, 100, 0]);
    assert_eq!(nodes.len(), 600, "one pod on every node");
}
