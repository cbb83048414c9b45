//! The Deployment controller driven alone: the new ReplicaSet, a rolling update's
//! surge and scale-down, Recreate, and the scaling event.

use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet};
use serde_json::json;

use super::*;
use crate::api::Verb;
use crate::controllers::testing::Fixture;

/// A Deployment as the apiserver stores it (defaults applied), at revision 1.
fn deployment(replicas: i32, image: &str, strategy: &str) -> Deployment {
    let strategy = match strategy {
        "Recreate" => json!({"type": "Recreate"}),
        _ => json!({"type": "RollingUpdate",
                    "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}}),
    };
    serde_json::from_value(json!({
        "metadata": {"name": "web", "namespace": "default", "uid": "d-uid", "generation": 2,
                     "annotations": {"deployment.kubernetes.io/revision": "1"}},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": "web"}},
            "strategy": strategy,
            "revisionHistoryLimit": 10,
            "progressDeadlineSeconds": 600,
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "nginx", "image": image}]}
            }
        }
    }))
    .unwrap()
}

/// A ReplicaSet the Deployment owns, for `image`, with `replicas` all available.
fn owned_rs(name: &str, image: &str, replicas: i32, revision: i32) -> ReplicaSet {
    serde_json::from_value(json!({
        "metadata": {
            "name": name, "namespace": "default", "uid": format!("uid-{name}"),
            "annotations": {
                "deployment.kubernetes.io/revision": revision.to_string(),
                "deployment.kubernetes.io/desired-replicas": "3",
                "deployment.kubernetes.io/max-replicas": "4"
            },
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "web",
                                  "uid": "d-uid", "controller": true}]
        },
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": "web", "pod-template-hash": name}},
            "template": {
                "metadata": {"labels": {"app": "web", "pod-template-hash": name}},
                "spec": {"containers": [{"name": "nginx", "image": image}]}
            }
        },
        "status": {"replicas": replicas, "readyReplicas": replicas,
                   "availableReplicas": replicas, "observedGeneration": 1}
    }))
    .unwrap()
}

/// `(name, spec.replicas)` of every ReplicaSet written (created or updated).
fn rs_writes(sent: &[ApiRequest]) -> Vec<(Verb, String, i32)> {
    sent.iter()
        .filter_map(|r| match &r.body {
            Body::Object(Object::ReplicaSet(rs)) if r.subresource.is_none() => Some((
                r.verb,
                rs.metadata
                    .name
                    .clone()
                    .or_else(|| rs.metadata.generate_name.clone())
                    .unwrap_or_default(),
                du::rs_replicas(rs),
            )),
            _ => None,
        })
        .collect()
}

#[test]
fn a_new_deployment_gets_a_replicaset_named_by_its_template_hash() {
    let mut c = DeploymentController::default();
    let mut f = Fixture::new(&c);
    f.add(&mut c, deployment(3, "nginx:1.27", "RollingUpdate"));
    assert_eq!(f.sync(&mut c, "default/web"), Ok(Action::await_change()));
    let sent = f.take_sent();
    let created: Vec<&ReplicaSet> = sent
        .iter()
        .filter(|r| r.verb == Verb::Create)
        .filter_map(|r| match &r.body {
            Body::Object(Object::ReplicaSet(rs)) => Some(&**rs),
            _ => None,
        })
        .collect();
    assert_eq!(created.len(), 1);
    let rs = created[0];
    let hash = &rs.metadata.labels.as_ref().unwrap()["pod-template-hash"];
    assert_eq!(
        rs.metadata.name.as_deref(),
        Some(format!("web-{hash}").as_str())
    );
    assert_eq!(du::rs_replicas(rs), 3);
    assert_eq!(du::revision_of(rs.metadata.annotations.as_ref()), 1);
    let selector = &rs.spec.as_ref().unwrap().selector;
    assert_eq!(
        &selector.match_labels.as_ref().unwrap()["pod-template-hash"],
        hash
    );
}

#[test]
fn a_rolling_update_surges_the_new_replicaset_then_scales_the_old_one_down() {
    let mut c = DeploymentController::default();
    let mut f = Fixture::new(&c);
    f.add(&mut c, owned_rs("web-old", "nginx:1.26", 3, 1));
    f.add(&mut c, deployment(3, "nginx:1.27", "RollingUpdate"));
    // Step 1: the new ReplicaSet is created at maxSurge (25% of 3, rounded up: 1).
    f.sync(&mut c, "default/web").unwrap();
    let writes = rs_writes(&f.take_sent());
    assert_eq!(writes.len(), 1);
    assert_eq!((writes[0].0, writes[0].2), (Verb::Create, 1));
    // Step 2: with the new pod available, an old pod may go (maxUnavailable 0 → 1 above 3).
    let new_name = writes[0].1.clone();
    let mut new = owned_rs(&new_name, "nginx:1.27", 1, 2);
    new.spec.as_mut().unwrap().template = Some(
        deployment(3, "nginx:1.27", "RollingUpdate")
            .spec
            .unwrap()
            .template,
    );
    f.add(&mut c, new);
    // First the Deployment's revision annotation follows its new ReplicaSet.
    f.sync(&mut c, "default/web").unwrap();
    let sent = f.take_sent();
    assert!(rs_writes(&sent).is_empty());
    let Body::Object(Object::Deployment(d)) = &sent[0].body else {
        panic!("a Deployment update: {sent:?}");
    };
    assert_eq!(du::revision_of(d.metadata.annotations.as_ref()), 2);
    f.add(&mut c, d.clone());
    f.sync(&mut c, "default/web").unwrap();
    assert_eq!(
        rs_writes(&f.take_sent()),
        [(Verb::Update, "web-old".to_string(), 2)]
    );
    assert!(f.events.iter().any(
        |(r, m)| r == "ScalingReplicaSet" && m == "Scaled down replica set web-old from 3 to 2"
    ));
}

#[test]
fn recreate_scales_the_old_replicaset_to_zero_before_creating_the_new_one() {
    let mut c = DeploymentController::default();
    let mut f = Fixture::new(&c);
    f.add(&mut c, owned_rs("web-old", "nginx:1.26", 3, 1));
    f.add(&mut c, deployment(3, "nginx:1.27", "Recreate"));
    f.sync(&mut c, "default/web").unwrap();
    assert_eq!(
        rs_writes(&f.take_sent()),
        [(Verb::Update, "web-old".to_string(), 0)]
    );
    let scaled: Vec<&(String, String)> = f
        .events
        .iter()
        .filter(|(r, _)| r == "ScalingReplicaSet")
        .collect();
    assert_eq!(
        scaled.len(),
        1,
        "one ScalingReplicaSet event per scale: {scaled:?}"
    );
}

#[test]
fn a_replicas_change_is_a_scaling_event_on_the_active_replicaset() {
    let mut c = DeploymentController::default();
    let mut f = Fixture::new(&c);
    let d = deployment(5, "nginx:1.27", "RollingUpdate");
    let mut rs = owned_rs("web-cur", "nginx:1.27", 3, 1);
    rs.spec.as_mut().unwrap().template = Some(d.spec.clone().unwrap().template);
    f.add(&mut c, rs);
    f.add(&mut c, d);
    f.sync(&mut c, "default/web").unwrap();
    assert_eq!(
        rs_writes(&f.take_sent()),
        [(Verb::Update, "web-cur".to_string(), 5)]
    );
    assert!(f
        .events
        .iter()
        .any(|(_, m)| m == "Scaled up replica set web-cur from 3 to 5"));
}

#[test]
fn a_deleted_deployment_is_forgotten() {
    let mut c = DeploymentController::default();
    let mut f = Fixture::new(&c);
    assert_eq!(f.sync(&mut c, "default/gone"), Ok(Action::await_change()));
    assert!(f.take_sent().is_empty());
}
