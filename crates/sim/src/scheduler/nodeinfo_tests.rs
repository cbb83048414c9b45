//! Tests of NodeInfo accounting and Snapshot ordering.

use super::*;

pub(crate) fn node(name: &str, zone: Option<&str>) -> Arc<Node> {
    let mut labels = serde_json::Map::new();
    if let Some(z) = zone {
        labels.insert(LABEL_ZONE.into(), z.into());
    }
    Arc::new(
        serde_json::from_value(serde_json::json!({
            "metadata": {"name": name, "labels": labels},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}
        }))
        .unwrap(),
    )
}

fn names(s: &Snapshot) -> Vec<&str> {
    s.nodes().iter().map(|n| n.name.as_str()).collect()
}

#[test]
fn node_tree_interleaves_zones_round_robin() {
    let nodes = vec![
        node("a1", Some("a")),
        node("a2", Some("a")),
        node("a3", Some("a")),
        node("b1", Some("b")),
        node("c1", Some("c")),
        node("b2", Some("b")),
    ];
    let mut s = Snapshot::new(&nodes, &[]);
    assert_eq!(names(&s), ["a1", "b1", "c1", "a2", "b2", "a3"]);
    // Removal swaps the zone's last node into the hole, as nodeTree.removeNode does.
    s.remove_node("a1");
    assert_eq!(names(&s), ["a3", "b1", "c1", "a2", "b2"]);
    s.remove_node("c1");
    assert_eq!(names(&s), ["a3", "b1", "a2", "b2"]);
}

#[test]
fn pods_are_accounted_on_their_nodes() {
    let pod = SharedPod::from(
        serde_json::from_value::<k8s_openapi::api::core::v1::Pod>(serde_json::json!({
            "metadata": {"name": "p", "namespace": "default"},
            "spec": {"nodeName": "n1", "containers": [
                {"name": "c", "resources": {"requests": {"cpu": "250m"}},
                 "ports": [{"containerPort": 80, "hostPort": 8080}]}
            ]}
        }))
        .unwrap(),
    );
    let mut s = Snapshot::new(&[node("n1", None)], &[pod]);
    let n = s.get("n1").unwrap();
    assert_eq!(n.requested.milli_cpu, 250);
    assert_eq!(n.requested.memory, 0);
    assert_eq!(n.non_zero_requested.memory, 200 * 1024 * 1024);
    assert_eq!(n.used_ports.len(), 1);
    assert!(s.remove_pod("default/p").is_some());
    let n = s.get("n1").unwrap();
    assert_eq!(n.requested.milli_cpu, 0);
    assert!(n.used_ports.is_empty());
}

#[test]
fn node_updates_move_zones_and_recount_images() {
    let with = |name: &str, zone: &str, image: Option<&str>| -> Arc<Node> {
        let mut v = serde_json::json!({
            "metadata": {"name": name, "labels": {LABEL_ZONE: zone}},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}
        });
        if let Some(i) = image {
            v["status"]["images"] = serde_json::json!([{"names": [i], "sizeBytes": 10}]);
        }
        Arc::new(serde_json::from_value(v).unwrap())
    };
    let mut s = Snapshot::new(
        &[
            with("a1", "a", Some("nginx:1")),
            with("a2", "a", None),
            with("b1", "b", Some("nginx:1")),
        ],
        &[],
    );
    assert_eq!(names(&s), ["a1", "b1", "a2"]);
    assert_eq!(s.num_nodes_with_image("nginx:1"), 2);
    s.update_node(with("a2", "b", Some("nginx:1")));
    assert_eq!(names(&s), ["a1", "b1", "a2"]);
    assert_eq!(s.get("a2").unwrap().idx, 2);
    assert_eq!(s.num_nodes_with_image("nginx:1"), 3);
    s.update_node(with("a1", "c", None));
    // Zones now: b [b1, a2], c [a1] ("a" emptied and removed).
    assert_eq!(names(&s), ["b1", "a1", "a2"]);
    assert_eq!(s.num_nodes_with_image("nginx:1"), 2);
    assert_eq!(s.num_nodes_with_label_key(LABEL_ZONE), 3);
    assert!(s.nodes().iter().enumerate().all(|(i, n)| n.idx == i));
}

#[test]
fn bound_objects_replace_assumed_pods_and_terminal_pods_leave() {
    let mut s = Snapshot::new(&[node("n1", None)], &[]);
    let mk = |node: &str, phase: &str| -> SharedPod {
        SharedPod::from(
            serde_json::from_value::<k8s_openapi::api::core::v1::Pod>(serde_json::json!({
                "metadata": {"name": "p", "namespace": "default"},
                "spec": {"nodeName": node, "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]},
                "status": {"phase": phase}
            }))
            .unwrap(),
        )
    };
    // Assumed from the unbound object.
    assert!(s.assume_pod(Arc::new(PodInfo::new(mk("", "Pending"))), "n1"));
    // An update of the unbound object leaves the assumption alone.
    s.update_pod(mk("", "Pending"));
    assert_eq!(s.get("n1").unwrap().requested.milli_cpu, 1000);
    // The bound object replaces it (no double counting).
    s.add_pod(mk("n1", "Pending"));
    assert_eq!(s.get("n1").unwrap().requested.milli_cpu, 1000);
    assert_eq!(s.get("n1").unwrap().pods[0].node_name, "n1");
    // Finishing frees the resources.
    s.update_pod(mk("n1", "Succeeded"));
    assert_eq!(s.get("n1").unwrap().requested.milli_cpu, 0);
    assert_eq!(s.node_of_pod("default/p"), None);
}
