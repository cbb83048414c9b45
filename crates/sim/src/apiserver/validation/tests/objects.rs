//! Validation rules of workloads, services and the other kinds, one test per rule.

use super::*;

#[test]
fn deployment_replicas_non_negative() {
    let mut d = good_deploy();
    d["spec"]["replicas"] = json!(-1);
    assert_eq!(create_message(Kind::Deployment, d), "Deployment.apps \"web\" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0");
}

#[test]
fn deployment_selector_required() {
    let d = deploy(
        json!({"template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "web", "image": "nginx"}]}}}),
    );
    assert_eq!(create_message(Kind::Deployment, d), "Deployment.apps \"web\" is invalid: [spec.selector: Required value, spec.template.metadata.labels: Invalid value: {\"app\":\"web\"}: `selector` does not match template `labels`]");
}

#[test]
fn deployment_selector_matches_template() {
    let mut d = good_deploy();
    d["spec"]["selector"] = json!({"matchLabels": {"app": "api"}});
    assert_eq!(create_message(Kind::Deployment, d), "Deployment.apps \"web\" is invalid: spec.template.metadata.labels: Invalid value: {\"app\":\"web\"}: `selector` does not match template `labels`");
}

#[test]
fn deployment_selector_not_empty() {
    let mut d = good_deploy();
    d["spec"]["selector"] = json!({"matchLabels": {}});
    assert_eq!(create_message(Kind::Deployment, d), "Deployment.apps \"web\" is invalid: spec.selector: Invalid value: {}: empty selector is invalid for deployment");
}

#[test]
fn deployment_surge_and_unavailable_not_both_zero() {
    let mut d = good_deploy();
    d["spec"]["strategy"] = json!({"rollingUpdate": {"maxSurge": 0, "maxUnavailable": 0}});
    assert_eq!(create_message(Kind::Deployment, d), "Deployment.apps \"web\" is invalid: spec.strategy.rollingUpdate.maxUnavailable: Invalid value: 0: may not be 0 when `maxSurge` is 0");
}

#[test]
fn deployment_max_unavailable_at_most_100_percent() {
    let mut d = good_deploy();
    d["spec"]["strategy"] = json!({"rollingUpdate": {"maxUnavailable": "101%"}});
    assert_eq!(create_message(Kind::Deployment, d), "Deployment.apps \"web\" is invalid: spec.strategy.rollingUpdate.maxUnavailable: Invalid value: \"101%\": must not be greater than 100%");
}

#[test]
fn deployment_percent_format() {
    let mut d = good_deploy();
    d["spec"]["strategy"] = json!({"rollingUpdate": {"maxSurge": "abc"}});
    assert_eq!(create_message(Kind::Deployment, d), "Deployment.apps \"web\" is invalid: spec.strategy.rollingUpdate.maxSurge: Invalid value: \"abc\": a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')");
}

#[test]
fn deployment_recreate_has_no_rolling_update() {
    let mut d = good_deploy();
    d["spec"]["strategy"] = json!({"type": "Recreate", "rollingUpdate": {"maxSurge": 1}});
    assert_eq!(create_message(Kind::Deployment, d), "Deployment.apps \"web\" is invalid: spec.strategy.rollingUpdate: Forbidden: may not be specified when strategy `type` is 'Recreate'");
}

#[test]
fn deployment_strategy_type_supported() {
    let mut d = good_deploy();
    d["spec"]["strategy"] = json!({"type": "BlueGreen"});
    assert_eq!(create_message(Kind::Deployment, d), "Deployment.apps \"web\" is invalid: spec.strategy: Unsupported value: {\"Type\":\"BlueGreen\",\"RollingUpdate\":null}: supported values: \"Recreate\", \"RollingUpdate\"");
}

#[test]
fn deployment_progress_deadline_after_min_ready() {
    let mut d = good_deploy();
    d["spec"]["minReadySeconds"] = json!(10);
    d["spec"]["progressDeadlineSeconds"] = json!(10);
    assert_eq!(create_message(Kind::Deployment, d), "Deployment.apps \"web\" is invalid: spec.progressDeadlineSeconds: Invalid value: 10: must be greater than minReadySeconds");
}

#[test]
fn deployment_revision_history_limit_non_negative() {
    let mut d = good_deploy();
    d["spec"]["revisionHistoryLimit"] = json!(-2);
    assert_eq!(create_message(Kind::Deployment, d), "Deployment.apps \"web\" is invalid: spec.revisionHistoryLimit: Invalid value: -2: must be greater than or equal to 0");
}

#[test]
fn deployment_template_restart_policy_always() {
    let mut d = good_deploy();
    d["spec"]["template"]["spec"]["restartPolicy"] = json!("Never");
    assert_eq!(create_message(Kind::Deployment, d), "Deployment.apps \"web\" is invalid: spec.template.spec.restartPolicy: Unsupported value: \"Never\": supported values: \"Always\"");
}

#[test]
fn deployment_name_is_dns_subdomain() {
    let mut d = good_deploy();
    d["metadata"]["name"] = json!("Web");
    assert_eq!(create_message(Kind::Deployment, d), "Deployment.apps \"Web\" is invalid: metadata.name: Invalid value: \"Web\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')");
}

#[test]
fn deployment_selector_is_immutable() {
    let mut new = good_deploy();
    new["spec"]["selector"] = json!({"matchLabels": {"app": "web", "tier": "fe"}});
    new["spec"]["template"]["metadata"]["labels"] = json!({"app": "web", "tier": "fe"});
    assert_eq!(update_message(Kind::Deployment, good_deploy(), new), "Deployment.apps \"web\" is invalid: spec.selector: Invalid value: {\"matchLabels\":{\"app\":\"web\",\"tier\":\"fe\"}}: field is immutable");
}

#[test]
fn replica_set_selector_matches_template() {
    let rs = json!({"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "rs", "namespace": "default"},
        "spec": {"selector": {"matchLabels": {"app": "x"}}, "template": {"metadata": {"labels": {"app": "y"}}, "spec": {"containers": [{"name": "c", "image": "i"}]}}}});
    assert_eq!(create_message(Kind::ReplicaSet, rs), "ReplicaSet.apps \"rs\" is invalid: spec.template.metadata.labels: Invalid value: {\"app\":\"y\"}: `selector` does not match template `labels`");
}

fn sts(name: &str) -> Value {
    json!({"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": name, "namespace": "default"},
        "spec": {"serviceName": "db", "selector": {"matchLabels": {"app": "db"}}, "template": {"metadata": {"labels": {"app": "db"}}, "spec": {"containers": [{"name": "c", "image": "i"}]}}}})
}

#[test]
fn stateful_set_name_is_dns_label() {
    assert_eq!(create_message(Kind::StatefulSet, sts("db.v1")), "StatefulSet.apps \"db.v1\" is invalid: metadata.name: Invalid value: \"db.v1\": must not contain dots");
}

#[test]
fn stateful_set_spec_mostly_immutable() {
    let mut new = sts("db");
    new["spec"]["serviceName"] = json!("other");
    assert_eq!(update_message(Kind::StatefulSet, sts("db"), new), "StatefulSet.apps \"db\" is invalid: spec: Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden");
}

#[test]
fn daemon_set_surge_and_unavailable_exclusive() {
    let ds = json!({"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "ds", "namespace": "default"},
        "spec": {"selector": {"matchLabels": {"a": "b"}}, "updateStrategy": {"rollingUpdate": {"maxSurge": 1, "maxUnavailable": 1}},
            "template": {"metadata": {"labels": {"a": "b"}}, "spec": {"containers": [{"name": "c", "image": "i"}]}}}});
    assert_eq!(create_message(Kind::DaemonSet, ds), "DaemonSet.apps \"ds\" is invalid: spec.updateStrategy.rollingUpdate.maxSurge: Invalid value: 1: may not be set when maxUnavailable is non-zero");
}

#[test]
fn job_restart_policy_never_or_on_failure() {
    let v = json!({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "pi", "namespace": "default", "uid": "u1"},
        "spec": {"template": {"spec": {"containers": [{"name": "pi", "image": "perl"}]}}}});
    let mut obj = decode(Kind::Job, &v);
    if let Object::Job(j) = &mut obj {
        generate_job_selector(j, "u1");
    }
    assert_eq!(message(Kind::Job, &obj, &validate_create(&obj)), "Job.batch \"pi\" is invalid: spec.template.spec.restartPolicy: Unsupported value: \"Always\": supported values: \"OnFailure\", \"Never\"");
}

#[test]
fn service_ports_required() {
    assert_eq!(
        create_message(Kind::Service, svc(json!({"selector": {"app": "web"}}))),
        "Service \"web\" is invalid: spec.ports: Required value"
    );
}

#[test]
fn service_node_port_in_range() {
    let m = create_message(
        Kind::Service,
        svc(json!({"type": "NodePort", "ports": [{"port": 80, "nodePort": 80}]})),
    );
    assert_eq!(m, "Service \"web\" is invalid: spec.ports[0].nodePort: Invalid value: 80: provided port is not in the valid range. The range of valid ports is 30000-32767");
}

#[test]
fn service_port_in_range() {
    let m = create_message(Kind::Service, svc(json!({"ports": [{"port": 70000}]})));
    assert_eq!(m, "Service \"web\" is invalid: [spec.ports[0].port: Invalid value: 70000: must be between 1 and 65535, inclusive, spec.ports[0].targetPort: Invalid value: 70000: must be between 1 and 65535, inclusive]");
}

#[test]
fn service_ports_need_names_when_several() {
    let m = create_message(
        Kind::Service,
        svc(json!({"ports": [{"port": 80}, {"port": 443}]})),
    );
    assert_eq!(m, "Service \"web\" is invalid: [spec.ports[0].name: Required value, spec.ports[1].name: Required value]");
}

#[test]
fn service_ports_are_unique() {
    let m = create_message(
        Kind::Service,
        svc(
            json!({"ports": [{"name": "a", "port": 80}, {"name": "b", "port": 80, "targetPort": 8080}]}),
        ),
    );
    assert_eq!(m, "Service \"web\" is invalid: spec.ports[1]: Duplicate value: {\"Name\":\"\",\"Protocol\":\"TCP\",\"AppProtocol\":null,\"Port\":80,\"TargetPort\":0,\"NodePort\":0}");
}

#[test]
fn service_type_supported() {
    let m = create_message(
        Kind::Service,
        svc(json!({"type": "Internal", "ports": [{"port": 80}]})),
    );
    assert_eq!(m, "Service \"web\" is invalid: spec.type: Unsupported value: \"Internal\": supported values: \"ClusterIP\", \"ExternalName\", \"LoadBalancer\", \"NodePort\"");
}

#[test]
fn cluster_ip_services_have_no_node_port() {
    let m = create_message(
        Kind::Service,
        svc(json!({"ports": [{"port": 80, "nodePort": 30080}]})),
    );
    assert_eq!(m, "Service \"web\" is invalid: spec.ports[0].nodePort: Forbidden: may not be used when `type` is 'ClusterIP'");
}

#[test]
fn service_name_is_dns1035() {
    let mut s = svc(json!({"ports": [{"port": 80}]}));
    s["metadata"]["name"] = json!("1web");
    assert_eq!(create_message(Kind::Service, s), "Service \"1web\" is invalid: metadata.name: Invalid value: \"1web\": a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')");
}

#[test]
fn service_cluster_ip_is_immutable() {
    let old = svc(json!({"clusterIP": "10.96.0.10", "ports": [{"port": 80}]}));
    let new = svc(json!({"clusterIP": "10.96.0.11", "ports": [{"port": 80}]}));
    assert_eq!(update_message(Kind::Service, old, new), "Service \"web\" is invalid: spec.clusterIPs[0]: Invalid value: [\"10.96.0.11\"]: may not change once set");
}

#[test]
fn namespace_name_is_dns_label() {
    let m = create_message(
        Kind::Namespace,
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "Dev"}}),
    );
    assert_eq!(m, format!("Namespace \"Dev\" is invalid: metadata.name: Invalid value: \"Dev\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character {LABEL_REGEX}"));
}

#[test]
fn config_map_keys_are_valid() {
    let m = create_message(
        Kind::ConfigMap,
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "default"}, "data": {"a b": "x"}}),
    );
    assert_eq!(m, "ConfigMap \"c\" is invalid: data[a b]: Invalid value: \"a b\": a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')");
}

#[test]
fn immutable_config_map_data_is_frozen() {
    let old = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "default"}, "immutable": true, "data": {"a": "1"}});
    let mut new = old.clone();
    new["data"]["a"] = json!("2");
    assert_eq!(
        update_message(Kind::ConfigMap, old, new),
        "ConfigMap \"c\" is invalid: data: Forbidden: field is immutable when `immutable` is set"
    );
}

#[test]
fn tls_secrets_need_cert_and_key() {
    let m = create_message(
        Kind::Secret,
        json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s", "namespace": "default"}, "type": "kubernetes.io/tls"}),
    );
    assert_eq!(
        m,
        "Secret \"s\" is invalid: [data[tls.crt]: Required value, data[tls.key]: Required value]"
    );
}

#[test]
fn secret_type_is_immutable() {
    let old = json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s", "namespace": "default"}});
    let mut new = old.clone();
    new["type"] = json!("example.com/custom");
    assert_eq!(
        update_message(Kind::Secret, old, new),
        "Secret \"s\" is invalid: type: Invalid value: \"example.com/custom\": field is immutable"
    );
}

fn pvc(spec: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "data", "namespace": "default"}, "spec": spec})
}

#[test]
fn pvc_needs_access_modes_and_storage() {
    assert_eq!(create_message(Kind::PersistentVolumeClaim, pvc(json!({}))), "PersistentVolumeClaim \"data\" is invalid: [spec.accessModes: Required value: at least 1 access mode is required, spec.resources[storage]: Required value]");
}

#[test]
fn pvc_access_modes_supported() {
    let m = create_message(
        Kind::PersistentVolumeClaim,
        pvc(
            json!({"accessModes": ["ReadWriteAlways"], "resources": {"requests": {"storage": "1Gi"}}}),
        ),
    );
    assert_eq!(m, "PersistentVolumeClaim \"data\" is invalid: spec.accessModes: Unsupported value: \"ReadWriteAlways\": supported values: \"ReadOnlyMany\", \"ReadWriteMany\", \"ReadWriteOnce\", \"ReadWriteOncePod\"");
}

#[test]
fn pvc_spec_is_immutable() {
    let old = pvc(
        json!({"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}),
    );
    let new = pvc(
        json!({"accessModes": ["ReadWriteMany"], "resources": {"requests": {"storage": "1Gi"}}}),
    );
    let m = update_message(Kind::PersistentVolumeClaim, old, new);
    assert!(m.starts_with("PersistentVolumeClaim \"data\" is invalid: spec: Forbidden: spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims\n"), "{m}");
}

fn priority_class(name: &str, value: i64) -> Value {
    json!({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name}, "value": value})
}

#[test]
fn priority_class_value_limited() {
    assert_eq!(create_message(Kind::PriorityClass, priority_class("high", 2_000_000_000)), "PriorityClass.scheduling.k8s.io \"high\" is invalid: value: Forbidden: maximum allowed value of a user defined priority is 1000000000");
}

#[test]
fn priority_class_system_prefix_reserved() {
    assert_eq!(create_message(Kind::PriorityClass, priority_class("system-high", 10)), "PriorityClass.scheduling.k8s.io \"system-high\" is invalid: metadata.name: Forbidden: priority class names with 'system-' prefix are reserved for system use only. error: system-high is not a known system priority class");
}

#[test]
fn priority_class_value_immutable() {
    assert_eq!(update_message(Kind::PriorityClass, priority_class("p", 1), priority_class("p", 2)), "PriorityClass.scheduling.k8s.io \"p\" is invalid: value: Forbidden: may not be changed in an update.");
}

#[test]
fn role_rules_need_verbs() {
    let r = json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": {"name": "r", "namespace": "default"},
        "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": []}]});
    assert_eq!(create_message(Kind::Role, r), "Role.rbac.authorization.k8s.io \"r\" is invalid: rules[0].verbs: Required value: verbs must contain at least one value");
}

fn role_binding(kind: &str) -> Value {
    json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding", "metadata": {"name": "rb", "namespace": "default"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": kind, "name": "r"}, "subjects": [{"kind": "User", "name": "alice"}]})
}

#[test]
fn role_binding_role_ref_kind_supported() {
    assert_eq!(create_message(Kind::RoleBinding, role_binding("Pod")), "RoleBinding.rbac.authorization.k8s.io \"rb\" is invalid: roleRef.kind: Unsupported value: \"Pod\": supported values: \"Role\", \"ClusterRole\"");
}

#[test]
fn role_binding_role_ref_immutable() {
    assert_eq!(update_message(Kind::RoleBinding, role_binding("Role"), role_binding("ClusterRole")), "RoleBinding.rbac.authorization.k8s.io \"rb\" is invalid: roleRef: Invalid value: {\"APIGroup\":\"rbac.authorization.k8s.io\",\"Kind\":\"ClusterRole\",\"Name\":\"r\"}: cannot change roleRef");
}

#[test]
fn node_taint_effects_supported() {
    let n = json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-1"}, "spec": {"taints": [{"key": "k", "effect": "NoRun"}]}});
    assert_eq!(create_message(Kind::Node, n), "Node \"node-1\" is invalid: metadata.taints[0].effect: Unsupported value: \"NoRun\": supported values: \"NoSchedule\", \"PreferNoSchedule\", \"NoExecute\"");
}

#[test]
fn limit_range_min_not_above_max() {
    let lr = json!({"apiVersion": "v1", "kind": "LimitRange", "metadata": {"name": "l", "namespace": "default"},
        "spec": {"limits": [{"type": "Pod", "min": {"cpu": "2"}, "max": {"cpu": "1"}}]}});
    assert_eq!(create_message(Kind::LimitRange, lr), "LimitRange \"l\" is invalid: spec.limits[0].min[cpu]: Invalid value: \"2\": min value 2 is greater than max value 1");
}

#[test]
fn resource_quota_resource_names() {
    let q = json!({"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "q", "namespace": "default"}, "spec": {"hard": {"foo": "1", "storage": "1Gi"}}});
    assert_eq!(create_message(Kind::ResourceQuota, q), "ResourceQuota \"q\" is invalid: [spec.hard[foo]: Invalid value: \"foo\": must be a standard resource type or fully qualified, spec.hard[storage]: Invalid value: \"storage\": must be a standard resource for quota]");
}

#[test]
fn storage_class_needs_provisioner_and_freezes_parameters() {
    let sc = json!({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "fast"}});
    assert_eq!(
        create_message(Kind::StorageClass, sc),
        "StorageClass.storage.k8s.io \"fast\" is invalid: provisioner: Required value"
    );
    let old = json!({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "fast"}, "provisioner": "example.com/p", "parameters": {"a": "1"}});
    let mut new = old.clone();
    new["parameters"]["a"] = json!("2");
    assert_eq!(update_message(Kind::StorageClass, old, new), "StorageClass.storage.k8s.io \"fast\" is invalid: parameters: Forbidden: updates to parameters are forbidden.");
}

#[test]
fn malformed_quantities_are_a_decode_error() {
    let obj = decode(
        Kind::Pod,
        &pod(
            json!({"containers": [{"name": "web", "image": "a", "resources": {"limits": {"cpu": "one"}}}]}),
        ),
    );
    assert_eq!(
        decode_quantity_error(&obj).as_deref(),
        Some("quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'")
    );
    assert_eq!(decode_quantity_error(&decode(Kind::Pod, &web_pod())), None);
}
