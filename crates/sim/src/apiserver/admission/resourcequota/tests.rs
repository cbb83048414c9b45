//! ResourceQuota admission, with upstream's messages.

use serde_json::json;

use super::*;

fn quota(name: &str, hard: serde_json::Value, used: serde_json::Value) -> ResourceQuota {
    serde_json::from_value(json!({"metadata": {"name": name, "namespace": "default"},
        "spec": {"hard": hard}, "status": {"hard": hard, "used": used}}))
    .unwrap()
}

fn pod(name: &str, resources: serde_json::Value) -> Object {
    Object::Pod(
        serde_json::from_value(
            json!({"metadata": {"generateName": name, "namespace": "default"},
            "spec": {"containers": [{"name": "nginx", "image": "nginx", "resources": resources}]}}),
        )
        .unwrap(),
    )
}

#[test]
fn usage_is_charged_and_returned() {
    let q = quota(
        "compute",
        json!({"requests.cpu": "2", "pods": "10"}),
        json!({"requests.cpu": "500m", "pods": "1"}),
    );
    let out = check(
        Operation::Create,
        &pod("web-", json!({"requests": {"cpu": "500m"}})),
        None,
        &[q],
    )
    .unwrap();
    let used = &out[0].status.as_ref().unwrap().used.as_ref().unwrap();
    assert_eq!(used["requests.cpu"].0, "1");
    assert_eq!(used["pods"].0, "2");
}

#[test]
fn exceeding_a_quota_is_forbidden() {
    let q = quota(
        "compute-resources",
        json!({"requests.cpu": "1", "requests.memory": "1Gi", "pods": "10"}),
        json!({"requests.cpu": "800m", "requests.memory": "512Mi", "pods": "2"}),
    );
    let err = check(
        Operation::Create,
        &pod(
            "web-7c5ddbdf54-",
            json!({"requests": {"cpu": "500m", "memory": "128Mi"}}),
        ),
        None,
        &[q],
    )
    .unwrap_err();
    assert_eq!(
        err.message(),
        "pods \"web-7c5ddbdf54-\" is forbidden: exceeded quota: compute-resources, requested: requests.cpu=500m, used: requests.cpu=800m, limited: requests.cpu=1"
    );
    assert_eq!(err.code(), 403);
}

#[test]
fn quota_on_limits_requires_them() {
    let q = quota(
        "mem-cpu",
        json!({"limits.cpu": "2", "limits.memory": "2Gi"}),
        json!({"limits.cpu": "0", "limits.memory": "0"}),
    );
    let err = check(
        Operation::Create,
        &pod("web", json!({"requests": {"cpu": "100m"}})),
        None,
        &[q],
    )
    .unwrap_err();
    assert_eq!(
        err.message(),
        "pods \"web\" is forbidden: failed quota: mem-cpu: must specify limits.cpu for: nginx; limits.memory for: nginx"
    );
}

#[test]
fn unsynced_quota_status_is_unknown() {
    let q = quota("compute", json!({"pods": "1"}), json!({}));
    let err = check(Operation::Create, &pod("web", json!({})), None, &[q]).unwrap_err();
    assert_eq!(
        err.message(),
        "pods \"web\" is forbidden: status unknown for quota: compute, resources: pods"
    );
}

#[test]
fn object_counts_and_services() {
    let q = quota(
        "objects",
        json!({"count/configmaps": "1", "services.nodeports": "1"}),
        json!({"count/configmaps": "1", "services.nodeports": "0"}),
    );
    let cm: Object = Object::ConfigMap(
        serde_json::from_value(json!({"metadata": {"name": "c", "namespace": "default"}})).unwrap(),
    );
    let err = check(Operation::Create, &cm, None, std::slice::from_ref(&q)).unwrap_err();
    assert_eq!(err.message(), "configmaps \"c\" is forbidden: exceeded quota: objects, requested: count/configmaps=1, used: count/configmaps=1, limited: count/configmaps=1");
    let svc: Object = Object::Service(
        serde_json::from_value(json!({"metadata": {"name": "s", "namespace": "default"},
        "spec": {"type": "NodePort", "ports": [{"port": 80}, {"port": 443}]}}))
        .unwrap(),
    );
    let err = check(Operation::Create, &svc, None, &[q]).unwrap_err();
    assert_eq!(err.message(), "services \"s\" is forbidden: exceeded quota: objects, requested: services.nodeports=2, used: services.nodeports=0, limited: services.nodeports=1");
}

#[test]
fn scopes_select_pods() {
    let mut q = quota("best-effort", json!({"pods": "0"}), json!({"pods": "0"}));
    q.spec.as_mut().unwrap().scopes = Some(vec!["BestEffort".into()]);
    assert!(check(
        Operation::Create,
        &pod("a", json!({"requests": {"cpu": "1"}})),
        None,
        std::slice::from_ref(&q)
    )
    .unwrap()
    .is_empty());
    assert!(check(Operation::Create, &pod("a", json!({})), None, &[q]).is_err());
}

#[test]
fn pod_requests_follow_init_container_rules() {
    let p: Pod = serde_json::from_value(json!({"spec": {
        "initContainers": [{"name": "i", "resources": {"requests": {"cpu": "2"}}}],
        "containers": [{"name": "a", "resources": {"requests": {"cpu": "500m"}}}, {"name": "b", "resources": {"requests": {"cpu": "500m"}}}]}})).unwrap();
    assert_eq!(pod_requests(&p)["cpu"].canonical(), "2");
}

#[test]
fn scope_selectors_match_priority_class_and_cross_namespace_affinity() {
    let mut q = quota("scoped", json!({"pods": "0"}), json!({"pods": "0"}));
    q.spec.as_mut().unwrap().scope_selector = serde_json::from_value(
        json!({"matchExpressions": [{"scopeName": "PriorityClass", "operator": "Exists"}]}),
    )
    .unwrap();
    let plain = pod("a", json!({}));
    assert!(check(Operation::Create, &plain, None, std::slice::from_ref(&q)).is_ok());
    let mut high = plain.clone();
    if let Object::Pod(p) = &mut high {
        p.spec.as_mut().unwrap().priority_class_name = Some("high".into());
    }
    assert!(check(Operation::Create, &high, None, std::slice::from_ref(&q)).is_err());

    q.spec.as_mut().unwrap().scope_selector = serde_json::from_value(
        json!({"matchExpressions": [{"scopeName": "CrossNamespacePodAffinity", "operator": "Exists"}]}),
    )
    .unwrap();
    assert!(check(Operation::Create, &plain, None, std::slice::from_ref(&q)).is_ok());
    let mut cross = plain.clone();
    if let Object::Pod(p) = &mut cross {
        p.spec.as_mut().unwrap().affinity = serde_json::from_value(json!({"podAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [{"topologyKey": "zone", "namespaceSelector": {}}]}}))
        .unwrap();
    }
    assert!(check(Operation::Create, &cross, None, &[q]).is_err());
}
