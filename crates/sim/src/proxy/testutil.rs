//! Builders for Services, EndpointSlices and cluster snapshots used by the proxy tests.

use std::net::Ipv4Addr;
use std::sync::Arc;

use k8s_openapi::api::core::v1::Service;
use k8s_openapi::api::discovery::v1::EndpointSlice;
use serde_json::{json, Value};

use super::{Cidr, NodeAddress, ProxyInput, ProxyMode, ProxyOptions};

/// A Service from its `spec` (and optional `status`) as JSON.
pub fn svc(ns: &str, name: &str, spec: Value) -> Arc<Service> {
    svc_with_status(ns, name, spec, json!({}))
}

pub fn svc_with_status(ns: &str, name: &str, spec: Value, status: Value) -> Arc<Service> {
    let v = json!({
        "apiVersion": "v1", "kind": "Service",
        "metadata": {"namespace": ns, "name": name},
        "spec": spec, "status": status,
    });
    Arc::new(serde_json::from_value(v).expect("valid Service"))
}

/// An endpoint for [`slice`]: address, nodeName, ready, serving, terminating.
pub struct Ep(
    pub &'static str,
    pub Option<&'static str>,
    pub bool,
    pub bool,
    pub bool,
);

/// A ready endpoint on a node.
pub fn ready(ip: &'static str, node: &'static str) -> Ep {
    Ep(ip, Some(node), true, true, false)
}

/// An EndpointSlice of service `service` with the given ports `(name, port, protocol)`.
pub fn slice(
    ns: &str,
    name: &str,
    service: &str,
    ports: &[(&str, i32, &str)],
    eps: &[Ep],
) -> Arc<EndpointSlice> {
    let endpoints: Vec<Value> = eps
        .iter()
        .map(|e| {
            let mut v = json!({
                "addresses": [e.0],
                "conditions": {"ready": e.2, "serving": e.3, "terminating": e.4},
            });
            if let Some(n) = e.1 {
                v["nodeName"] = json!(n);
            }
            v
        })
        .collect();
    let ports: Vec<Value> = ports
        .iter()
        .map(|(n, p, proto)| json!({"name": n, "port": p, "protocol": proto}))
        .collect();
    let v = json!({
        "apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
        "metadata": {"namespace": ns, "name": name,
                     "labels": {"kubernetes.io/service-name": service}},
        "addressType": "IPv4",
        "endpoints": endpoints,
        "ports": ports,
    });
    Arc::new(serde_json::from_value(v).expect("valid EndpointSlice"))
}

/// The kubeloop cluster: `kind-control-plane` (172.18.0.2, 10.244.0.0/24) and `workers`
/// workers `kind-worker`, `kind-worker2`, …; worker N (1-based) has InternalIP
/// `172.18.0.(N+2)` and podCIDR `10.244.N.0/24`.
pub fn nodes(workers: u8) -> Vec<NodeAddress> {
    (0..=workers)
        .map(|i| NodeAddress {
            name: match i {
                0 => "kind-control-plane".to_string(),
                1 => "kind-worker".to_string(),
                _ => format!("kind-worker{i}"),
            },
            ip: Ipv4Addr::new(172, 18, 0, i + 2),
            pod_cidr: Some(Cidr::new(Ipv4Addr::new(10, 244, i, 0), 24)),
        })
        .collect()
}

/// A snapshot as seen from `node` (one of [`nodes`]).
pub fn input<'a>(
    services: &'a [Arc<Service>],
    slices: &'a [Arc<EndpointSlice>],
    nodes: &'a [NodeAddress],
    node: &str,
) -> ProxyInput<'a> {
    let n = nodes.iter().find(|n| n.name == node).expect("known node");
    ProxyInput {
        node_name: n.name.clone(),
        node_ip: n.ip,
        pod_cidr: n.pod_cidr,
        cluster_cidr: Cidr::parse("10.244.0.0/16"),
        services,
        slices,
        nodes,
        mode: ProxyMode::Iptables,
        now: 0,
        options: ProxyOptions::default(),
    }
}

/// `default/nginx` on port 80 → 3 pods, the 10.96.x ClusterIP of the examples.
pub fn nginx_cluster() -> (Vec<Arc<Service>>, Vec<Arc<EndpointSlice>>) {
    let services = vec![svc(
        "default",
        "nginx",
        json!({"type": "ClusterIP", "clusterIP": "10.96.100.10", "clusterIPs": ["10.96.100.10"],
               "ports": [{"port": 80, "protocol": "TCP", "targetPort": 80}]}),
    )];
    let slices = vec![slice(
        "default",
        "nginx-abcde",
        "nginx",
        &[("", 80, "TCP")],
        &[
            ready("10.244.1.5", "kind-worker"),
            ready("10.244.2.7", "kind-worker2"),
            ready("10.244.3.9", "kind-worker3"),
        ],
    )];
    (services, slices)
}

/// Compares `got` with `testdata/<name>`; `KUBELOOP_BLESS=1` rewrites the file instead.
pub fn assert_golden(name: &str, got: &str) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("src/proxy/testdata")
        .join(name);
    if std::env::var_os("KUBELOOP_BLESS").is_some() {
        std::fs::write(&path, got).expect("write golden");
        return;
    }
    let want = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        want == got,
        "golden {name} differs (KUBELOOP_BLESS=1 to accept)\n--- want ---\n{want}\n--- got ---\n{got}"
    );
}
