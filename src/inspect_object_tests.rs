//! Tests of the object inspector's shaping: after the default scenario's Deployment is
//! applied, what the learner reads about it, its ReplicaSet and a Pod.

use super::*;
use crate::examples::default_scenario;
use crate::session::Session;
use kubeloop_sim::time::SECOND;
use wasm_bindgen_test::wasm_bindgen_test;

fn applied() -> Session {
    let mut s = Session::new(default_scenario());
    s.run_button("kubectl apply -f nginx-deploy.yaml");
    s.advance(20 * SECOND);
    s
}

fn deployment() -> ObjectKey {
    ObjectKey::new(Kind::Deployment, "default", "nginx")
}

#[wasm_bindgen_test(unsupported = test)]
fn should_show_the_deployment_s_yaml_events_tree_etcd_and_writer() {
    let s = applied();
    let i = inspect_object(s.world(), &deployment()).expect("stored");
    assert!(i
        .yaml
        .starts_with("apiVersion: apps/v1\nkind: Deployment\n"));
    assert!(i.events.iter().any(|e| e.reason == "ScalingReplicaSet"));
    // The Deployment, its ReplicaSet one level down, three Pods under that.
    let depths: Vec<(i32, &str)> = i
        .tree
        .iter()
        .map(|r| (r.depth, r.key.kind.info().kind))
        .collect();
    assert_eq!(
        depths,
        [
            (0, "Deployment"),
            (1, "ReplicaSet"),
            (2, "Pod"),
            (2, "Pod"),
            (2, "Pod")
        ]
    );
    assert_eq!(i.etcd.key, "/registry/deployments/default/nginx");
    assert!(i.etcd.revisions.len() >= 2);
    let w = i.writer.expect("the last write is in the audit log");
    let bars = span_bars(w.received, &w.spans);
    assert_eq!(bars[0].stage, "authentication");
    assert!(bars.iter().any(|b| b.stage == "etcd"));
    assert!(bars
        .iter()
        .all(|b| b.left >= 0.0 && b.left + b.width <= 101.0));
    assert_eq!(
        default_pair(&i.etcd),
        Some((i.etcd.revisions.len() - 2, i.etcd.revisions.len() - 1))
    );
}

#[wasm_bindgen_test(unsupported = test)]
fn should_put_a_pod_s_owners_above_it_topmost_first() {
    let s = applied();
    let d = inspect_object(s.world(), &deployment()).unwrap();
    let pod = d.tree.iter().find(|r| r.key.kind == Kind::Pod).unwrap();
    let p = inspect_object(s.world(), &pod.key).unwrap();
    let rows: Vec<(i32, &str)> = p
        .tree
        .iter()
        .map(|r| (r.depth, r.key.kind.info().kind))
        .collect();
    assert_eq!(rows, [(-2, "Deployment"), (-1, "ReplicaSet"), (0, "Pod")]);
}

#[wasm_bindgen_test(unsupported = test)]
fn should_round_trip_object_ids_and_name_kinds_as_kubectl_does() {
    let k = deployment();
    assert_eq!(object_id(&k), "Deployment/default/nginx");
    assert_eq!(parse_object_id("Deployment/default/nginx", &[]), Some(k));
    let node = ObjectKey::new(Kind::Node, "", "node-1");
    assert_eq!(parse_object_id(&object_id(&node), &[]), Some(node));
    assert_eq!(parse_object_id("Nope/x/y", &[]), None);
    assert_eq!(kubectl_kind(Kind::Deployment), "deployment.apps");
    assert_eq!(kubectl_kind(Kind::Pod), "pod");
}

#[wasm_bindgen_test(unsupported = test)]
fn should_be_none_for_an_object_that_is_gone() {
    let s = applied();
    let gone = ObjectKey::new(Kind::Deployment, "default", "gone");
    assert!(inspect_object(s.world(), &gone).is_none());
}
