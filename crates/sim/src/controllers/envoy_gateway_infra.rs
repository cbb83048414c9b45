//! The objects Envoy Gateway's infrastructure manager creates per Gateway in
//! `envoy-gateway-system`: a ServiceAccount, a `LoadBalancer` Service and the envoy
//! Deployment, all named `envoy-<namespace>-<name>-<hash>` and labelled with the owning
//! Gateway (docs/design.md §6.18).

use serde_json::{json, Value};

use crate::node::envoy_proxy::{OWNING_NAME, OWNING_NAMESPACE};
use crate::node::gateway_model::{container_port, proxy_name, Gateway};
use crate::object::Object;

/// Where Envoy Gateway runs and puts its proxies.
pub const NAMESPACE: &str = "envoy-gateway-system";
/// The envoy image Envoy Gateway v1.5.0 runs.
pub const ENVOY_IMAGE: &str = "docker.io/envoyproxy/envoy:distroless-v1.35.0";
/// Envoy Gateway's own image (also the shutdown manager's).
pub const GATEWAY_IMAGE: &str = "docker.io/envoyproxy/gateway:v1.5.0";

/// The proxy objects' labels (also the Service's selector).
pub fn labels(gw: &Gateway) -> Value {
    json!({
        "app.kubernetes.io/component": "proxy",
        "app.kubernetes.io/managed-by": "envoy-gateway",
        "app.kubernetes.io/name": "envoy",
        OWNING_NAME: gw.name,
        OWNING_NAMESPACE: gw.namespace,
    })
}

fn meta(gw: &Gateway) -> Value {
    json!({
        "name": proxy_name(&gw.namespace, &gw.name),
        "namespace": NAMESPACE,
        "labels": labels(gw),
    })
}

/// The distinct listener ports.
fn ports(gw: &Gateway) -> Vec<u16> {
    let mut v: Vec<u16> = gw.listeners.iter().map(|l| l.port).collect();
    v.sort();
    v.dedup();
    v
}

/// A port's name prefix: the protocol of its first listener, lower-cased (`https-443`).
fn scheme(gw: &Gateway, port: u16) -> String {
    gw.listeners
        .iter()
        .find(|l| l.port == port)
        .map_or("http".into(), |l| l.protocol.to_ascii_lowercase())
}

/// The Service's ports.
pub fn service_ports(gw: &Gateway) -> Value {
    Value::Array(
        ports(gw)
            .into_iter()
            .map(|p| {
                json!({
                    "name": format!("{}-{p}", scheme(gw, p)),
                    "port": p,
                    "protocol": "TCP",
                    "targetPort": container_port(p),
                })
            })
            .collect(),
    )
}

/// The envoy container's ports.
pub fn container_ports(gw: &Gateway) -> Value {
    let mut v: Vec<Value> = ports(gw)
        .into_iter()
        .map(|p| {
            let c = container_port(p);
            json!({"containerPort": c, "name": format!("{}-{c}", scheme(gw, p)), "protocol": "TCP"})
        })
        .collect();
    v.push(json!({"containerPort": 19001, "name": "metrics", "protocol": "TCP"}));
    Value::Array(v)
}

fn decode(kind: &str, v: Value) -> Option<Object> {
    let k = crate::object::Kind::from_api_version_kind(
        v.get("apiVersion").and_then(Value::as_str).unwrap_or(""),
        kind,
    )?;
    Object::from_value(k, &v, &mut Vec::new()).ok()
}

/// The ServiceAccount.
pub fn service_account(gw: &Gateway) -> Option<Object> {
    decode(
        "ServiceAccount",
        json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": meta(gw)}),
    )
}

/// The Service (type LoadBalancer, as Envoy Gateway's default EnvoyProxy asks).
pub fn service(gw: &Gateway) -> Option<Object> {
    decode(
        "Service",
        json!({
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": meta(gw),
            "spec": {
                "type": "LoadBalancer",
                // As Envoy Gateway's proxy Services: only nodes with an envoy pod
                // take load-balancer traffic, and the client address is kept.
                "externalTrafficPolicy": "Local",
                "sessionAffinity": "None",
                "selector": labels(gw),
                "ports": service_ports(gw),
            }
        }),
    )
}

/// The envoy Deployment.
pub fn deployment(gw: &Gateway) -> Option<Object> {
    let name = proxy_name(&gw.namespace, &gw.name);
    decode(
        "Deployment",
        json!({
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": meta(gw),
            "spec": {
                "replicas": 1,
                "revisionHistoryLimit": 10,
                "selector": {"matchLabels": labels(gw)},
                "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}},
                "template": {
                    "metadata": {
                        "labels": labels(gw),
                        "annotations": {
                            "prometheus.io/path": "/stats/prometheus",
                            "prometheus.io/port": "19001",
                            "prometheus.io/scrape": "true",
                        }
                    },
                    "spec": {
                        "containers": [
                            {
                                "name": "envoy",
                                "image": ENVOY_IMAGE,
                                "imagePullPolicy": "IfNotPresent",
                                "command": ["envoy"],
                                "args": [
                                    "--service-cluster", name,
                                    "--service-node", "$(ENVOY_POD_NAME)",
                                    "--config-yaml", "$(ENVOY_BOOTSTRAP)",
                                    "--log-level", "warn",
                                    "--cpuset-threads",
                                    "--drain-strategy", "immediate",
                                ],
                                "env": [
                                    {"name": "ENVOY_GATEWAY_NAMESPACE", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}},
                                    {"name": "ENVOY_POD_NAME", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.name"}}},
                                ],
                                "ports": container_ports(gw),
                                "readinessProbe": {
                                    "httpGet": {"path": "/ready", "port": 19003, "scheme": "HTTP"},
                                    "periodSeconds": 5,
                                    "timeoutSeconds": 1,
                                    "successThreshold": 1,
                                    "failureThreshold": 1,
                                },
                                "resources": {"requests": {"cpu": "100m", "memory": "512Mi"}},
                            },
                            {
                                "name": "shutdown-manager",
                                "image": GATEWAY_IMAGE,
                                "imagePullPolicy": "IfNotPresent",
                                "command": ["envoy-gateway"],
                                "args": ["envoy", "shutdown-manager"],
                                "readinessProbe": {
                                    "httpGet": {"path": "/healthz", "port": 19002, "scheme": "HTTP"},
                                    "periodSeconds": 5,
                                },
                                "resources": {"requests": {"cpu": "10m", "memory": "32Mi"}},
                            }
                        ],
                        "serviceAccountName": name,
                        "terminationGracePeriodSeconds": 360,
                    }
                }
            }
        }),
    )
}
