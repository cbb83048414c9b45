//! Validation rules, one test per rule, each asserting upstream's exact message.

use serde_json::{json, Value};

use super::*;
use crate::apiserver::defaults::{generate_job_selector, set_defaults};
use crate::apiserver::field_error::invalid_message;
use crate::object::Kind;

fn decode(kind: Kind, v: &Value) -> Object {
    let mut obj = Object::from_value(kind, v, &mut Vec::new()).expect("decodes");
    set_defaults(&mut obj);
    obj
}

fn message(kind: Kind, obj: &Object, errs: &[FieldError]) -> String {
    let info = kind.info();
    invalid_message(info.kind, info.group, obj.name(), errs)
}

/// Decodes, defaults and validates a manifest; returns the apiserver's Invalid message.
pub(super) fn create_message(kind: Kind, v: Value) -> String {
    let obj = decode(kind, &v);
    message(kind, &obj, &validate_create(&obj))
}

/// The Invalid message for updating `old` to `new` (resourceVersion filled in).
fn update_message(kind: Kind, old: Value, mut new: Value) -> String {
    new["metadata"]["resourceVersion"] = json!("7");
    let (o, n) = (decode(kind, &old), decode(kind, &new));
    message(kind, &n, &validate_update(&n, &o))
}

fn pod(spec: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"}, "spec": spec})
}

fn web_pod() -> Value {
    pod(json!({"containers": [{"name": "web", "image": "nginx"}]}))
}

fn deploy(spec: Value) -> Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "default"}, "spec": spec})
}

fn good_deploy() -> Value {
    deploy(json!({"selector": {"matchLabels": {"app": "web"}},
        "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "web", "image": "nginx"}]}}}))
}

fn svc(spec: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web", "namespace": "default"}, "spec": spec})
}

const LABEL_REGEX: &str =
    "(e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";

#[test]
fn valid_objects_pass() {
    assert_eq!(create_message(Kind::Pod, web_pod()), "Pod \"p\" is invalid");
    assert_eq!(
        create_message(Kind::Deployment, good_deploy()),
        "Deployment.apps \"web\" is invalid"
    );
    assert_eq!(
        create_message(
            Kind::Service,
            svc(json!({"selector": {"app": "web"}, "ports": [{"port": 80}]}))
        ),
        "Service \"web\" is invalid"
    );
}

#[test]
fn pod_requires_containers() {
    assert_eq!(
        create_message(Kind::Pod, pod(json!({"containers": []}))),
        "Pod \"p\" is invalid: spec.containers: Required value"
    );
}

#[test]
fn container_name_must_be_dns_label() {
    let m = create_message(
        Kind::Pod,
        pod(json!({"containers": [{"name": "Web", "image": "nginx"}]})),
    );
    assert_eq!(m, format!("Pod \"p\" is invalid: spec.containers[0].name: Invalid value: \"Web\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character {LABEL_REGEX}"));
}

#[test]
fn container_names_are_unique() {
    let m = create_message(
        Kind::Pod,
        pod(json!({"containers": [{"name": "web", "image": "a"}, {"name": "web", "image": "b"}]})),
    );
    assert_eq!(
        m,
        "Pod \"p\" is invalid: spec.containers[1].name: Duplicate value: \"web\""
    );
}

#[test]
fn container_image_is_required() {
    let m = create_message(Kind::Pod, pod(json!({"containers": [{"name": "web"}]})));
    assert_eq!(
        m,
        "Pod \"p\" is invalid: spec.containers[0].image: Required value"
    );
}

#[test]
fn container_port_in_range() {
    let m = create_message(
        Kind::Pod,
        pod(
            json!({"containers": [{"name": "web", "image": "a", "ports": [{"containerPort": 70000}]}]}),
        ),
    );
    assert_eq!(m, "Pod \"p\" is invalid: spec.containers[0].ports[0].containerPort: Invalid value: 70000: must be between 1 and 65535, inclusive");
}

#[test]
fn container_port_protocol_supported() {
    let m = create_message(
        Kind::Pod,
        pod(
            json!({"containers": [{"name": "web", "image": "a", "ports": [{"containerPort": 80, "protocol": "HTTP"}]}]}),
        ),
    );
    assert_eq!(m, "Pod \"p\" is invalid: spec.containers[0].ports[0].protocol: Unsupported value: \"HTTP\": supported values: \"SCTP\", \"TCP\", \"UDP\"");
}

#[test]
fn host_ports_do_not_conflict() {
    let m = create_message(
        Kind::Pod,
        pod(json!({"containers": [
        {"name": "a", "image": "a", "ports": [{"containerPort": 80, "hostPort": 8080}]},
        {"name": "b", "image": "b", "ports": [{"containerPort": 81, "hostPort": 8080}]}]})),
    );
    assert_eq!(m, "Pod \"p\" is invalid: spec.containers[1].ports[0].hostPort: Duplicate value: \"TCP//8080\"");
}

#[test]
fn requests_must_not_exceed_limits() {
    let m = create_message(
        Kind::Pod,
        pod(json!({"containers": [{"name": "web", "image": "a",
        "resources": {"requests": {"cpu": "2"}, "limits": {"cpu": "1"}}}]})),
    );
    assert_eq!(m, "Pod \"p\" is invalid: spec.containers[0].resources.requests: Invalid value: \"2\": must be less than or equal to cpu limit of 1");
    let m = create_message(
        Kind::Pod,
        pod(json!({"containers": [{"name": "web", "image": "a",
        "resources": {"requests": {"memory": "1Gi"}, "limits": {"memory": "512Mi"}}}]})),
    );
    assert_eq!(m, "Pod \"p\" is invalid: spec.containers[0].resources.requests: Invalid value: \"1Gi\": must be less than or equal to memory limit of 512Mi");
}

#[test]
fn resource_names_must_be_standard() {
    let m = create_message(
        Kind::Pod,
        pod(
            json!({"containers": [{"name": "web", "image": "a", "resources": {"limits": {"gpu": "1"}}}]}),
        ),
    );
    assert_eq!(m, "Pod \"p\" is invalid: [spec.containers[0].resources.limits[gpu]: Invalid value: \"gpu\": must be a standard resource type or fully qualified, spec.containers[0].resources.requests[gpu]: Invalid value: \"gpu\": must be a standard resource type or fully qualified]");
}

#[test]
fn quantities_must_not_be_negative() {
    let m = create_message(
        Kind::Pod,
        pod(
            json!({"containers": [{"name": "web", "image": "a", "resources": {"requests": {"cpu": "-1"}}}]}),
        ),
    );
    assert_eq!(m, "Pod \"p\" is invalid: spec.containers[0].resources.requests[cpu]: Invalid value: \"-1\": must be greater than or equal to 0");
}

#[test]
fn extended_resources_need_equal_limits() {
    let m = create_message(
        Kind::Pod,
        pod(
            json!({"containers": [{"name": "web", "image": "a", "resources": {"requests": {"example.com/gpu": "1"}}}]}),
        ),
    );
    assert_eq!(m, "Pod \"p\" is invalid: spec.containers[0].resources.limits: Required value: Limit must be set for non overcommitable resources");
}

#[test]
fn restart_policy_supported_values() {
    let m = create_message(
        Kind::Pod,
        pod(json!({"restartPolicy": "Sometimes", "containers": [{"name": "web", "image": "a"}]})),
    );
    assert_eq!(m, "Pod \"p\" is invalid: spec.restartPolicy: Unsupported value: \"Sometimes\": supported values: \"Always\", \"OnFailure\", \"Never\"");
}

#[test]
fn dns_policy_supported_values() {
    let m = create_message(
        Kind::Pod,
        pod(json!({"dnsPolicy": "Cluster", "containers": [{"name": "web", "image": "a"}]})),
    );
    assert_eq!(m, "Pod \"p\" is invalid: spec.dnsPolicy: Unsupported value: \"Cluster\": supported values: \"ClusterFirstWithHostNet\", \"ClusterFirst\", \"Default\", \"None\"");
}

#[test]
fn liveness_success_threshold_must_be_one() {
    let m = create_message(
        Kind::Pod,
        pod(json!({"containers": [{"name": "web", "image": "a",
        "livenessProbe": {"tcpSocket": {"port": 80}, "successThreshold": 2}}]})),
    );
    assert_eq!(m, "Pod \"p\" is invalid: spec.containers[0].livenessProbe.successThreshold: Invalid value: 2: must be 1");
}

#[test]
fn probes_need_a_handler() {
    let m = create_message(
        Kind::Pod,
        pod(
            json!({"containers": [{"name": "web", "image": "a", "readinessProbe": {"periodSeconds": 5}}]}),
        ),
    );
    assert_eq!(m, "Pod \"p\" is invalid: spec.containers[0].readinessProbe: Required value: must specify a handler type");
}

#[test]
fn probe_port_names_are_valid() {
    let m = create_message(
        Kind::Pod,
        pod(
            json!({"containers": [{"name": "web", "image": "a", "readinessProbe": {"httpGet": {"port": "HTTP"}}}]}),
        ),
    );
    assert_eq!(m, "Pod \"p\" is invalid: [spec.containers[0].readinessProbe.httpGet.port: Invalid value: \"HTTP\": must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-), spec.containers[0].readinessProbe.httpGet.port: Invalid value: \"HTTP\": must contain at least one letter (a-z)]");
}

#[test]
fn volume_mounts_reference_declared_volumes() {
    let m = create_message(
        Kind::Pod,
        pod(
            json!({"containers": [{"name": "web", "image": "a", "volumeMounts": [{"name": "data", "mountPath": "/data"}]}]}),
        ),
    );
    assert_eq!(
        m,
        "Pod \"p\" is invalid: spec.containers[0].volumeMounts[0].name: Not found: \"data\""
    );
}

#[test]
fn volume_names_are_unique() {
    let m = create_message(
        Kind::Pod,
        pod(
            json!({"containers": [{"name": "web", "image": "a"}], "volumes": [{"name": "v"}, {"name": "v"}]}),
        ),
    );
    assert_eq!(
        m,
        "Pod \"p\" is invalid: spec.volumes[1].name: Duplicate value: \"v\""
    );
}

#[test]
fn volumes_have_one_source() {
    let m = create_message(
        Kind::Pod,
        pod(json!({"containers": [{"name": "web", "image": "a"}],
        "volumes": [{"name": "v", "emptyDir": {}, "configMap": {"name": "c"}}]})),
    );
    assert_eq!(m, "Pod \"p\" is invalid: spec.volumes[0].configMap: Forbidden: may not specify more than 1 volume type");
}

#[test]
fn env_value_from_needs_a_source() {
    let m = create_message(
        Kind::Pod,
        pod(
            json!({"containers": [{"name": "web", "image": "a", "env": [{"name": "X", "valueFrom": {}}]}]}),
        ),
    );
    assert_eq!(m, "Pod \"p\" is invalid: spec.containers[0].env[0].valueFrom: Invalid value: \"\": must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef` or `secretKeyRef`");
}

#[test]
fn toleration_empty_key_needs_exists() {
    let m = create_message(
        Kind::Pod,
        pod(
            json!({"containers": [{"name": "web", "image": "a"}], "tolerations": [{"operator": "Equal", "value": "x"}]}),
        ),
    );
    assert_eq!(m, "Pod \"p\" is invalid: spec.tolerations[0].operator: Invalid value: \"Equal\": operator must be Exists when `key` is empty, which means \"match all values and all keys\"");
}

#[test]
fn toleration_seconds_need_no_execute() {
    let m = create_message(
        Kind::Pod,
        pod(json!({"containers": [{"name": "web", "image": "a"}],
        "tolerations": [{"key": "k", "operator": "Exists", "effect": "NoSchedule", "tolerationSeconds": 5}]})),
    );
    assert_eq!(m, "Pod \"p\" is invalid: spec.tolerations[0].effect: Invalid value: \"NoSchedule\": effect must be 'NoExecute' when `tolerationSeconds` is set");
}

#[test]
fn pod_updates_are_restricted() {
    let mut new = web_pod();
    new["spec"]["containers"][0]["command"] = json!(["sh"]);
    let m = update_message(Kind::Pod, web_pod(), new);
    assert!(m.starts_with("Pod \"p\" is invalid: spec: Forbidden: pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)\n"), "{m}");
    // As `kubectl set image` patches the stored (defaulted) pod.
    let mut new = decode(Kind::Pod, &web_pod()).to_value();
    new["spec"]["containers"][0]["image"] = json!("nginx:1.27");
    assert_eq!(
        update_message(Kind::Pod, web_pod(), new),
        "Pod \"p\" is invalid"
    );
}

/// The Invalid message for a write of `new`'s status over `old` (the status strategy has
/// put `old`'s spec back, as the apiserver does before validating).
fn status_update_message(old: Value, new_status: Value) -> String {
    let mut new = old.clone();
    new["metadata"]["resourceVersion"] = json!("7");
    new["status"] = new_status;
    let (o, n) = (decode(Kind::Pod, &old), decode(Kind::Pod, &new));
    message(Kind::Pod, &n, &validate_status_update(&n, &o))
}

fn terminated(name: &str, code: i32) -> Value {
    json!({"name": name, "image": "busybox", "imageID": "", "ready": false, "restartCount": 0,
        "state": {"terminated": {"exitCode": code}}})
}

fn running(name: &str) -> Value {
    json!({"name": name, "image": "busybox", "imageID": "", "ready": true, "restartCount": 1,
        "state": {"running": {}}})
}

#[test]
fn a_terminated_container_of_a_pod_that_never_restarts_stays_terminated() {
    let mut old = web_pod();
    old["spec"]["restartPolicy"] = json!("Never");
    old["status"] = json!({"qosClass": "BestEffort", "containerStatuses": [terminated("web", 0)]});
    assert_eq!(
        status_update_message(old.clone(), json!({"qosClass": "BestEffort", "containerStatuses": [running("web")]})),
        "Pod \"p\" is invalid: status.containerStatuses[0].state: Forbidden: may not be transitioned to non-terminated state"
    );
    // OnFailure restarts a container that failed, not one that succeeded.
    old["spec"]["restartPolicy"] = json!("OnFailure");
    old["status"]["containerStatuses"] = json!([terminated("web", 1)]);
    let back = json!({"qosClass": "BestEffort", "containerStatuses": [running("web")]});
    assert_eq!(
        status_update_message(old.clone(), back.clone()),
        "Pod \"p\" is invalid"
    );
    // Always restarts anything.
    old["spec"]["restartPolicy"] = json!("Always");
    old["status"]["containerStatuses"] = json!([terminated("web", 0)]);
    assert_eq!(status_update_message(old, back), "Pod \"p\" is invalid");
}

#[test]
fn a_pods_qos_class_and_node_cannot_change_through_status() {
    let mut old = web_pod();
    old["status"] = json!({"qosClass": "BestEffort"});
    assert_eq!(
        status_update_message(old.clone(), json!({"qosClass": "Guaranteed", "nominatedNodeName": "Node_1"})),
        "Pod \"p\" is invalid: [status.nominatedNodeName: Invalid value: \"Node_1\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*'), status.qosClass: Invalid value: \"Guaranteed\": field is immutable]"
    );
    let mut new = old.clone();
    new["metadata"]["resourceVersion"] = json!("7");
    new["spec"]["nodeName"] = json!("node-1");
    let (o, n) = (decode(Kind::Pod, &old), decode(Kind::Pod, &new));
    assert_eq!(
        message(Kind::Pod, &n, &validate_status_update(&n, &o)),
        "Pod \"p\" is invalid: status.nodeName: Forbidden: may not be changed directly"
    );
}

#[test]
fn pod_active_deadline_may_only_shrink() {
    let mut old = web_pod();
    old["spec"]["activeDeadlineSeconds"] = json!(10);
    let mut new = old.clone();
    new["spec"]["activeDeadlineSeconds"] = json!(20);
    assert_eq!(update_message(Kind::Pod, old, new), "Pod \"p\" is invalid: spec.activeDeadlineSeconds: Invalid value: 20: must be less than or equal to previous value");
}

#[test]
fn pod_containers_cannot_be_added() {
    let mut new = web_pod();
    new["spec"]["containers"] =
        json!([{"name": "web", "image": "nginx"}, {"name": "b", "image": "b"}]);
    assert_eq!(update_message(Kind::Pod, web_pod(), new), "Pod \"p\" is invalid: spec.containers: Forbidden: pod updates may not add or remove containers");
}

mod objects;
