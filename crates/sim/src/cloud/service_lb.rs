//! What cloud-provider-kind's service controller reads off objects: the predicates of
//! k8s.io/cloud-provider's service controller (`wantsLoadBalancer`, `needsCleanup`,
//! `needsUpdate`, the stable node set), envoy's configuration (`generateConfig`), the
//! status `GetLoadBalancer` reports, and the patches that write them.

use std::net::Ipv4Addr;
use std::sync::Arc;

use k8s_openapi::api::core::v1::{Node, Service};

use super::docker::{self, Backend, EnvoyConfig, Listener};
use super::service_controller::{
    CLUSTER_NAME, EXCLUDE_LABEL, FINALIZER, KUBE_PROXY_HEALTHZ, TO_BE_DELETED_TAINT,
};
use crate::api::{ApiRequest, Body, PatchType, Subresource, Verb};
use crate::controllers::Informers;
use crate::object::{Kind, Object};

pub(super) fn service(o: &Object) -> Option<&Service> {
    match o {
        Object::Service(s) => Some(s),
        _ => None,
    }
}

/// `wantsLoadBalancer`: type LoadBalancer and no `loadBalancerClass`.
pub fn wants_load_balancer(s: &Service) -> bool {
    s.spec.as_ref().is_some_and(|sp| {
        sp.type_.as_deref() == Some("LoadBalancer") && sp.load_balancer_class.is_none()
    })
}

pub(super) fn has_finalizer(s: &Service) -> bool {
    s.metadata
        .finalizers
        .as_ref()
        .is_some_and(|f| f.iter().any(|x| x == FINALIZER))
}

/// `needsCleanup`: the finalizer is there and the Service is going or no longer a
/// LoadBalancer.
pub(super) fn needs_cleanup(s: &Service) -> bool {
    has_finalizer(s)
        && (s.metadata.deletion_timestamp.is_some()
            || s.spec.as_ref().and_then(|sp| sp.type_.as_deref()) != Some("LoadBalancer"))
}

/// `needsUpdate`: a change that the load balancer has to follow.
pub(super) fn needs_update(old: &Service, new: &Service) -> bool {
    if !wants_load_balancer(old) && !wants_load_balancer(new) {
        return false;
    }
    if wants_load_balancer(old) != wants_load_balancer(new) {
        return true;
    }
    let (o, n) = (
        old.spec.clone().unwrap_or_default(),
        new.spec.clone().unwrap_or_default(),
    );
    let ports = |s: &k8s_openapi::api::core::v1::ServiceSpec| {
        s.ports
            .iter()
            .flatten()
            .map(|p| (p.port, p.protocol.clone(), p.node_port))
            .collect::<Vec<_>>()
    };
    o.load_balancer_source_ranges != n.load_balancer_source_ranges
        || ports(&o) != ports(&n)
        || o.session_affinity != n.session_affinity
        || o.session_affinity_config != n.session_affinity_config
        || o.load_balancer_ip != n.load_balancer_ip
        || o.external_ips != n.external_ips
        || old.metadata.annotations != new.metadata.annotations
        || old.metadata.uid != new.metadata.uid
        || o.external_traffic_policy != n.external_traffic_policy
        || o.health_check_node_port != n.health_check_node_port
        || o.ip_families.as_ref().map(Vec::len) != n.ip_families.as_ref().map(Vec::len)
}

/// `stableNodeSetPredicates`: not being deleted, not excluded by label, not tainted for
/// deletion by the autoscaler. Readiness does not count (StableLoadBalancerNodeSet).
pub(super) fn node_included(n: &Node) -> bool {
    let excluded = n
        .metadata
        .labels
        .as_ref()
        .and_then(|l| l.get(EXCLUDE_LABEL))
        .is_some_and(|v| parse_bool(v) != Some(false));
    let tainted = n
        .spec
        .as_ref()
        .and_then(|s| s.taints.as_ref())
        .is_some_and(|t| t.iter().any(|t| t.key == TO_BE_DELETED_TAINT));
    n.metadata.deletion_timestamp.is_none() && !excluded && !tainted
}

/// Go's `strconv.ParseBool`.
pub(super) fn parse_bool(v: &str) -> Option<bool> {
    match v {
        "1" | "t" | "T" | "TRUE" | "true" | "True" => Some(true),
        "0" | "f" | "F" | "FALSE" | "false" | "False" => Some(false),
        _ => None,
    }
}

/// The nodes a load balancer sends to, with their InternalIPs, in name order.
pub(super) fn backends(inf: &Informers) -> Vec<Backend> {
    let mut out: Vec<Backend> = inf
        .of(Kind::Node)
        .iter()
        .filter_map(|o| match &**o {
            Object::Node(n) if node_included(n) => Some(n),
            _ => None,
        })
        .filter_map(|n| {
            let ip = n
                .status
                .as_ref()?
                .addresses
                .as_ref()?
                .iter()
                .find(|a| a.type_ == "InternalIP")?
                .address
                .parse::<Ipv4Addr>()
                .ok()?;
            Some(Backend {
                node: n.metadata.name.clone().unwrap_or_default(),
                ip,
            })
        })
        .collect();
    out.sort_by(|a, b| a.node.cmp(&b.node));
    out
}

/// `generateConfig`: one listener per TCP/UDP port, every node as a backend.
pub(super) fn envoy_config(s: &Service, nodes: Vec<Backend>) -> EnvoyConfig {
    let spec = s.spec.clone().unwrap_or_default();
    let local = spec.external_traffic_policy.as_deref() == Some("Local");
    let hc = if local {
        spec.health_check_node_port.unwrap_or(0) as u16
    } else {
        KUBE_PROXY_HEALTHZ
    };
    let listeners = spec
        .ports
        .iter()
        .flatten()
        .filter_map(|p| {
            let proto = p.protocol.clone().unwrap_or_else(|| "TCP".into());
            if proto != "TCP" && proto != "UDP" {
                return None;
            }
            Some(Listener {
                key: format!("IPv4_{}_{proto}", p.port),
                port: p.port as u16,
                protocol: proto,
                node_port: p.node_port.unwrap_or(0) as u16,
            })
        })
        .collect();
    EnvoyConfig {
        listeners,
        backends: nodes,
        health_check_port: hc,
        session_affinity: spec.session_affinity.unwrap_or_default(),
        source_ranges: spec
            .load_balancer_source_ranges
            .iter()
            .flatten()
            .filter_map(|r| crate::proxy::Cidr::parse(r.trim()))
            .collect(),
    }
}

/// `GetLoadBalancer`'s status: the container's IPv4 with ipMode Proxy and the ports.
pub(super) fn status_json(s: &Service, ip: Ipv4Addr) -> serde_json::Value {
    let ports: Vec<serde_json::Value> = s
        .spec
        .as_ref()
        .and_then(|sp| sp.ports.clone())
        .unwrap_or_default()
        .iter()
        .map(|p| {
            serde_json::json!({"port": p.port, "protocol": p.protocol.clone().unwrap_or_else(|| "TCP".into())})
        })
        .collect();
    serde_json::json!({"ingress": [{"ip": ip.to_string(), "ipMode": "Proxy", "ports": ports}]})
}

pub(super) fn container_name(s: &Service) -> String {
    docker::load_balancer_name(
        CLUSTER_NAME,
        s.metadata.namespace.as_deref().unwrap_or(""),
        s.metadata.name.as_deref().unwrap_or(""),
    )
}

pub(super) fn patch(s: &Service, sub: Option<Subresource>, body: serde_json::Value) -> ApiRequest {
    let ns = s.metadata.namespace.as_deref().unwrap_or("");
    let name = s.metadata.name.as_deref().unwrap_or("");
    let r = ApiRequest::new(Verb::Patch, Kind::Service, ns, name)
        .with_body(Body::Patch(PatchType::Merge, body));
    match sub {
        Some(x) => r.with_subresource(x),
        None => r,
    }
}

pub(super) fn finalizers_patch(s: &Service, add: bool) -> ApiRequest {
    let mut f: Vec<String> = s.metadata.finalizers.clone().unwrap_or_default();
    f.retain(|x| x != FINALIZER);
    if add {
        f.push(FINALIZER.to_string());
    }
    // `removeString` leaves nil, which the patch deletes rather than storing `[]`.
    let value = if f.is_empty() {
        serde_json::Value::Null
    } else {
        serde_json::json!(f)
    };
    patch(
        s,
        None,
        serde_json::json!({"metadata": {"finalizers": value}}),
    )
}

pub(super) fn current_status(s: &Service) -> serde_json::Value {
    let ingress = s
        .status
        .as_ref()
        .and_then(|st| st.load_balancer.as_ref())
        .and_then(|lb| lb.ingress.clone())
        .unwrap_or_default();
    if ingress.is_empty() {
        return serde_json::json!({});
    }
    let mut v = serde_json::to_value(s.status.clone().unwrap_or_default().load_balancer)
        .unwrap_or_default();
    if let Some(m) = v.as_object_mut() {
        m.retain(|k, _| k == "ingress");
    }
    v
}

pub(super) fn node_ip(o: &Arc<Object>) -> Option<String> {
    match &**o {
        Object::Node(n) => n
            .status
            .as_ref()?
            .addresses
            .as_ref()?
            .iter()
            .find(|a| a.type_ == "InternalIP")
            .map(|a| a.address.clone()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::{ServicePort, ServiceSpec, Taint};

    fn lb(port: i32) -> Service {
        Service {
            spec: Some(ServiceSpec {
                type_: Some("LoadBalancer".into()),
                ports: Some(vec![ServicePort {
                    port,
                    ..Default::default()
                }]),
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    #[test]
    fn needs_update_follows_what_the_load_balancer_is_built_from() {
        assert!(!needs_update(&lb(80), &lb(80)));
        assert!(needs_update(&lb(80), &lb(81)));
        let mut cluster_ip = lb(80);
        cluster_ip.spec.as_mut().unwrap().type_ = Some("ClusterIP".into());
        assert!(needs_update(&lb(80), &cluster_ip));
        assert!(!needs_update(&cluster_ip, &cluster_ip));
        let mut classed = lb(80);
        classed.spec.as_mut().unwrap().load_balancer_class = Some("example.com/lb".into());
        assert!(!wants_load_balancer(&classed));
        let mut local = lb(80);
        local.spec.as_mut().unwrap().external_traffic_policy = Some("Local".into());
        assert!(needs_update(&lb(80), &local));
    }

    #[test]
    fn the_stable_node_set_ignores_readiness_but_not_exclusion_or_deletion() {
        let node = |labels: &[(&str, &str)], taint: Option<&str>| {
            let mut n = Node::default();
            n.metadata.labels = Some(
                labels
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect(),
            );
            if let Some(t) = taint {
                n.spec = Some(k8s_openapi::api::core::v1::NodeSpec {
                    taints: Some(vec![Taint {
                        key: t.into(),
                        effect: "NoSchedule".into(),
                        ..Default::default()
                    }]),
                    ..Default::default()
                });
            }
            n
        };
        assert!(node_included(&node(&[], None)));
        assert!(!node_included(&node(&[(EXCLUDE_LABEL, "true")], None)));
        assert!(
            !node_included(&node(&[(EXCLUDE_LABEL, "")], None)),
            "unparsable excludes"
        );
        assert!(node_included(&node(&[(EXCLUDE_LABEL, "false")], None)));
        assert!(!node_included(&node(&[], Some(TO_BE_DELETED_TAINT))));
    }
}
