//! Tests of `kubectl describe`: each asserts the exact text a user sees.

use std::sync::Arc;

use serde_json::json;

use super::*;
use crate::object::{Kind, Object};

fn obj(kind: Kind, v: serde_json::Value) -> Arc<Object> {
    let mut unknown = Vec::new();
    let o = Object::from_value(kind, &v, &mut unknown).unwrap();
    assert!(unknown.is_empty(), "{unknown:?}");
    Arc::new(o)
}

fn ts(s: u64) -> String {
    serde_json::to_value(crate::time::k8s_time(s * 1000))
        .unwrap()
        .as_str()
        .unwrap()
        .to_string()
}

fn event(
    name: &str,
    kind: &str,
    obj_name: &str,
    typ: &str,
    reason: &str,
    from: &str,
    at: u64,
    count: i32,
    msg: &str,
) -> Arc<Object> {
    obj(
        Kind::Event,
        json!({"metadata": {"name": name, "namespace": "default", "creationTimestamp": ts(at)},
            "involvedObject": {"kind": kind, "name": obj_name, "namespace": "default"},
            "type": typ, "reason": reason, "message": msg, "count": count,
            "firstTimestamp": ts(at), "lastTimestamp": ts(at + 30 * (count as u64 - 1)),
            "source": {"component": from}}),
    )
}

fn pod() -> Arc<Object> {
    obj(
        Kind::Pod,
        json!({
            "metadata": {"name": "nginx-7c5ddbdf54-2xkqv", "namespace": "default", "creationTimestamp": ts(0),
                "labels": {"app": "nginx", "pod-template-hash": "7c5ddbdf54"},
                "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "nginx-7c5ddbdf54",
                    "uid": "u1", "controller": true, "blockOwnerDeletion": true}]},
            "spec": {
                "nodeName": "node-1", "priority": 0, "serviceAccountName": "default",
                "containers": [{"name": "nginx", "image": "nginx:1.25",
                    "ports": [{"containerPort": 80, "protocol": "TCP"}],
                    "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}},
                    "volumeMounts": [{"name": "kube-api-access-9xk2p", "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount", "readOnly": true}]}],
                "volumes": [{"name": "kube-api-access-9xk2p", "projected": {"defaultMode": 420, "sources": [
                    {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                    {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
                    {"downwardAPI": {"items": [{"path": "namespace", "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}]}}]}}],
                "tolerations": [
                    {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
                    {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}]
            },
            "status": {
                "phase": "Running", "hostIP": "172.18.0.2", "podIP": "10.244.1.2", "podIPs": [{"ip": "10.244.1.2"}],
                "startTime": ts(1), "qosClass": "Burstable",
                "conditions": [
                    {"type": "PodReadyToStartContainers", "status": "True"}, {"type": "Initialized", "status": "True"},
                    {"type": "Ready", "status": "True"}, {"type": "ContainersReady", "status": "True"},
                    {"type": "PodScheduled", "status": "True"}],
                "containerStatuses": [{"name": "nginx", "image": "docker.io/library/nginx:1.25",
                    "imageID": "docker.io/library/nginx@sha256:0d17b565", "containerID": "containerd://3f4e1c",
                    "ready": true, "restartCount": 1, "started": true,
                    "state": {"running": {"startedAt": ts(40)}},
                    "lastState": {"terminated": {"exitCode": 137, "reason": "OOMKilled", "startedAt": ts(5), "finishedAt": ts(39)}}}]
            }
        }),
    )
}

#[test]
fn describe_pod_matches_kubectl_layout() {
    let ctx = DescribeContext {
        events: vec![
            event(
                "e2",
                "Pod",
                "nginx-7c5ddbdf54-2xkqv",
                "Normal",
                "Pulled",
                "kubelet",
                3,
                2,
                "Container image \"nginx:1.25\" already present on machine",
            ),
            event(
                "e1",
                "Pod",
                "nginx-7c5ddbdf54-2xkqv",
                "Normal",
                "Scheduled",
                "default-scheduler",
                1,
                1,
                "Successfully assigned default/nginx-7c5ddbdf54-2xkqv to node-1",
            ),
            event(
                "e3",
                "Pod",
                "other",
                "Normal",
                "Scheduled",
                "default-scheduler",
                1,
                1,
                "not mine",
            ),
        ],
        ..Default::default()
    };
    assert_eq!(
        describe(&pod(), &ctx, 120_000),
        include_str!("testdata/describe-pod.txt")
    );
}

fn rs(name: &str, replicas: i32, image: &str, created: u64) -> Arc<Object> {
    obj(
        Kind::ReplicaSet,
        json!({"metadata": {"name": name, "namespace": "default", "creationTimestamp": ts(created),
                "labels": {"app": "nginx", "pod-template-hash": &name[6..]},
                "annotations": {"deployment.kubernetes.io/revision": "1"},
                "ownerReferences": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "nginx", "uid": "d1", "controller": true}]},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": "nginx", "pod-template-hash": &name[6..]}},
                "template": {"metadata": {"labels": {"app": "nginx", "pod-template-hash": &name[6..]}},
                    "spec": {"containers": [{"name": "nginx", "image": image, "ports": [{"containerPort": 80, "protocol": "TCP"}]}]}}},
            "status": {"replicas": replicas, "readyReplicas": replicas}}),
    )
}

#[test]
fn describe_deployment_mid_rollout() {
    let d = obj(
        Kind::Deployment,
        json!({"metadata": {"name": "nginx", "namespace": "default", "uid": "d1", "creationTimestamp": ts(0),
                "labels": {"app": "nginx"}, "annotations": {"deployment.kubernetes.io/revision": "2"}},
            "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "nginx"}},
                "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}},
                "template": {"metadata": {"labels": {"app": "nginx"}},
                    "spec": {"containers": [{"name": "nginx", "image": "nginx:1.26", "ports": [{"containerPort": 80, "protocol": "TCP"}]}]}}},
            "status": {"replicas": 4, "updatedReplicas": 2, "readyReplicas": 3, "availableReplicas": 3, "unavailableReplicas": 1,
                "conditions": [
                    {"type": "Available", "status": "True", "reason": "MinimumReplicasAvailable"},
                    {"type": "Progressing", "status": "True", "reason": "ReplicaSetUpdated"}]}}),
    );
    let ctx = DescribeContext {
        replica_sets: vec![
            rs("nginx-66b6c48dd5", 2, "nginx:1.25", 0),
            rs("nginx-7c5ddbdf54", 2, "nginx:1.26", 60),
        ],
        events: vec![
            event(
                "d1",
                "Deployment",
                "nginx",
                "Normal",
                "ScalingReplicaSet",
                "deployment-controller",
                0,
                1,
                "Scaled up replica set nginx-66b6c48dd5 from 0 to 3",
            ),
            event(
                "d2",
                "Deployment",
                "nginx",
                "Normal",
                "ScalingReplicaSet",
                "deployment-controller",
                60,
                1,
                "Scaled up replica set nginx-7c5ddbdf54 from 0 to 1",
            ),
        ],
        ..Default::default()
    };
    assert_eq!(
        describe(&d, &ctx, 90_000),
        include_str!("testdata/describe-deployment.txt")
    );
}

#[test]
fn describe_service_with_endpoints() {
    let svc = obj(
        Kind::Service,
        json!({"metadata": {"name": "web", "namespace": "default", "creationTimestamp": ts(0), "labels": {"app": "web"}},
            "spec": {"type": "NodePort", "selector": {"app": "web"}, "clusterIP": "10.96.12.34", "clusterIPs": ["10.96.12.34"],
                "ipFamilies": ["IPv4"], "ipFamilyPolicy": "SingleStack", "sessionAffinity": "None",
                "externalTrafficPolicy": "Cluster", "internalTrafficPolicy": "Cluster",
                "ports": [{"port": 80, "protocol": "TCP", "targetPort": 8080, "nodePort": 30080}]}}),
    );
    let slice = obj(
        Kind::EndpointSlice,
        json!({"metadata": {"name": "web-abc", "namespace": "default", "labels": {"kubernetes.io/service-name": "web"}},
            "addressType": "IPv4", "ports": [{"name": "", "port": 8080, "protocol": "TCP"}],
            "endpoints": [{"addresses": ["10.244.1.2"]}, {"addresses": ["10.244.2.2"]}]}),
    );
    let ctx = DescribeContext {
        endpoints: vec![slice],
        ..Default::default()
    };
    assert_eq!(
        describe(&svc, &ctx, 90_000),
        include_str!("testdata/describe-service.txt")
    );
}
