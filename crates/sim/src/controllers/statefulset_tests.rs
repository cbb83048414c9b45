//! The StatefulSet controller driven alone: ordered creation with identities and claims,
//! Parallel, scale down from the highest ordinal, and rolling updates.

use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::Pod;
use serde_json::json;

use super::*;
use crate::controllers::testing::Fixture;

const KEY: &str = "default/web";

fn sts(replicas: i32, policy: &str) -> StatefulSet {
    serde_json::from_value(json!({
        "metadata": {"name": "web", "namespace": "default", "uid": "sts-uid", "generation": 1},
        "spec": {
            "replicas": replicas,
            "serviceName": "nginx",
            "podManagementPolicy": policy,
            "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}},
            "selector": {"matchLabels": {"app": "nginx"}},
            "template": {
                "metadata": {"labels": {"app": "nginx"}},
                "spec": {"containers": [{"name": "nginx", "image": "registry.k8s.io/nginx-slim:0.24"}]}
            },
            "volumeClaimTemplates": [{
                "metadata": {"name": "www"},
                "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}
            }]
        }
    }))
    .unwrap()
}

/// Makes the controller's pod create `req` a stored pod, Running and Ready or Pending.
fn stored_pod(req: &ApiRequest, ready: bool) -> Pod {
    let Body::Object(Object::Pod(p)) = &req.body else {
        panic!("not a pod create: {req:?}")
    };
    let mut p = (**p).clone();
    let status = if ready {
        json!({"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]})
    } else {
        json!({"phase": "Pending"})
    };
    p.status = Some(serde_json::from_value(status).unwrap());
    p
}

/// Syncs until the revision exists; returns its name.
fn with_revision(c: &mut StatefulSetController, f: &mut Fixture) -> String {
    f.sync(c, KEY).unwrap();
    let sent = f.take_sent();
    assert_eq!(sent.len(), 1, "{sent:?}");
    assert_eq!(sent[0].kind, Kind::ControllerRevision);
    let Body::Object(rev) = &sent[0].body else {
        panic!()
    };
    let name = rev.name().to_string();
    assert!(name.starts_with("web-"), "{name}");
    f.respond(c, sent[0].id, Ok(()));
    f.add(c, rev.clone());
    name
}

fn pod_creates(sent: &[ApiRequest]) -> Vec<&ApiRequest> {
    sent.iter()
        .filter(|r| r.verb == Verb::Create && r.kind == Kind::Pod)
        .collect()
}

#[test]
fn ordered_ready_creates_web_0_with_identity_and_claim_then_waits_for_it() {
    let mut c = StatefulSetController::default();
    let mut f = Fixture::new(&c);
    f.add(&mut c, sts(2, "OrderedReady"));
    let rev = with_revision(&mut c, &mut f);
    f.sync(&mut c, KEY).unwrap();
    let sent = f.take_sent();
    let claims: Vec<&str> = sent
        .iter()
        .filter(|r| r.kind == Kind::PersistentVolumeClaim)
        .filter_map(|r| match &r.body {
            Body::Object(o) => Some(o.name()),
            _ => None,
        })
        .collect();
    assert_eq!(claims, vec!["www-web-0"]);
    let pods = pod_creates(&sent);
    assert_eq!(pods.len(), 1);
    let p = stored_pod(pods[0], false);
    assert_eq!(p.metadata.name.as_deref(), Some("web-0"));
    let labels = p.metadata.labels.clone().unwrap();
    assert_eq!(labels["statefulset.kubernetes.io/pod-name"], "web-0");
    assert_eq!(labels["apps.kubernetes.io/pod-index"], "0");
    assert_eq!(labels["controller-revision-hash"], rev);
    let spec = p.spec.clone().unwrap();
    assert_eq!(spec.hostname.as_deref(), Some("web-0"));
    assert_eq!(spec.subdomain.as_deref(), Some("nginx"));
    let vol = &spec.volumes.unwrap()[0];
    assert_eq!(
        vol.persistent_volume_claim.as_ref().unwrap().claim_name,
        "www-web-0"
    );
    // web-0 Pending: nothing more.
    f.add(&mut c, p);
    f.sync(&mut c, KEY).unwrap();
    assert!(pod_creates(&f.take_sent()).is_empty());
    // web-0 Running and Ready: web-1 follows.
    let ready = stored_pod(pods[0], true);
    f.add(&mut c, ready);
    f.sync(&mut c, KEY).unwrap();
    let sent = f.take_sent();
    let names: Vec<&str> = pod_creates(&sent)
        .iter()
        .filter_map(|r| match &r.body {
            Body::Object(o) => Some(o.name()),
            _ => None,
        })
        .collect();
    assert_eq!(names, vec!["web-1"]);
}

#[test]
fn parallel_creates_every_pod_at_once() {
    let mut c = StatefulSetController::default();
    let mut f = Fixture::new(&c);
    f.add(&mut c, sts(3, "Parallel"));
    with_revision(&mut c, &mut f);
    f.sync(&mut c, KEY).unwrap();
    assert_eq!(pod_creates(&f.take_sent()).len(), 3);
}

/// Runs the set to `n` Ready pods; returns the stored pods.
fn running(c: &mut StatefulSetController, f: &mut Fixture, n: usize) -> Vec<Pod> {
    let mut pods = Vec::new();
    for _ in 0..n {
        f.sync(c, KEY).unwrap();
        let sent = f.take_sent();
        let creates = pod_creates(&sent);
        assert_eq!(creates.len(), 1, "{sent:?}");
        let p = stored_pod(creates[0], true);
        f.add(c, p.clone());
        pods.push(p);
    }
    pods
}

#[test]
fn scale_down_deletes_the_highest_ordinal_first() {
    let mut c = StatefulSetController::default();
    let mut f = Fixture::new(&c);
    f.add(&mut c, sts(3, "OrderedReady"));
    with_revision(&mut c, &mut f);
    running(&mut c, &mut f, 3);
    f.add(&mut c, sts(1, "OrderedReady"));
    f.sync(&mut c, KEY).unwrap();
    let dels: Vec<String> = f
        .take_sent()
        .iter()
        .filter(|r| r.verb == Verb::Delete && r.kind == Kind::Pod)
        .map(|r| r.name.clone())
        .collect();
    assert_eq!(dels, vec!["web-2".to_string()]);
    // Claims stay (whenScaled Retain): no claim was touched.
}

#[test]
fn a_new_template_rolls_from_the_highest_ordinal() {
    let mut c = StatefulSetController::default();
    let mut f = Fixture::new(&c);
    f.add(&mut c, sts(2, "OrderedReady"));
    let old = with_revision(&mut c, &mut f);
    running(&mut c, &mut f, 2);
    let mut s = sts(2, "OrderedReady");
    s.metadata.generation = Some(2);
    s.spec
        .as_mut()
        .unwrap()
        .template
        .spec
        .as_mut()
        .unwrap()
        .containers[0]
        .image = Some("registry.k8s.io/nginx-slim:0.21".into());
    f.add(&mut c, s);
    let new = with_revision(&mut c, &mut f);
    assert_ne!(old, new);
    f.sync(&mut c, KEY).unwrap();
    let dels: Vec<String> = f
        .take_sent()
        .iter()
        .filter(|r| r.verb == Verb::Delete && r.kind == Kind::Pod)
        .map(|r| r.name.clone())
        .collect();
    assert_eq!(dels, vec!["web-1".to_string()]);
}

#[test]
fn a_failed_pod_is_deleted_to_be_recreated_with_a_warning() {
    let mut c = StatefulSetController::default();
    let mut f = Fixture::new(&c);
    f.add(&mut c, sts(1, "OrderedReady"));
    with_revision(&mut c, &mut f);
    let mut p = running(&mut c, &mut f, 1).remove(0);
    p.status = Some(serde_json::from_value(json!({"phase": "Failed"})).unwrap());
    f.add(&mut c, p);
    f.sync(&mut c, KEY).unwrap();
    let dels: Vec<String> = f
        .take_sent()
        .iter()
        .filter(|r| r.verb == Verb::Delete && r.kind == Kind::Pod)
        .map(|r| r.name.clone())
        .collect();
    assert_eq!(dels, ["web-0"]);
    assert!(f.events.contains(&(
        "RecreatingFailedPod".into(),
        "StatefulSet default/web is recreating failed Pod web-0".into()
    )));
}
