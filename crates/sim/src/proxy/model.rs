//! kube-proxy's internal view: Services → ServicePorts, EndpointSlices → Endpoints.
//!
//! Follows `pkg/proxy/serviceport.go` (`newBaseServiceInfo`), `servicechangetracker.go`,
//! `endpointslicecache.go` and `topology.go` (`CategorizeEndpoints`). IPv4 only, as the
//! kubeloop cluster is single-stack. Topology hints are ignored (no zones in kubeloop).

use std::collections::BTreeMap;
use std::fmt;
use std::net::Ipv4Addr;
use std::sync::Arc;

use k8s_openapi::api::core::v1::Service;
use k8s_openapi::api::discovery::v1::EndpointSlice;

use super::hash;
use super::net::{parse_ipv4, Cidr};

/// Label linking an EndpointSlice to its Service.
pub const LABEL_SERVICE_NAME: &str = "kubernetes.io/service-name";
/// Objects with this label belong to another proxy; kube-proxy's informers filter them out.
pub const LABEL_SERVICE_PROXY_NAME: &str = "service.kubernetes.io/service-proxy-name";
/// EndpointSlices of headless Services carry this label; kube-proxy filters them out.
pub const LABEL_HEADLESS: &str = "service.kubernetes.io/headless";
/// `sessionAffinityConfig.clientIP.timeoutSeconds` when unset.
pub const DEFAULT_CLIENT_IP_TIMEOUT_SECONDS: u32 = 10800;

/// A service port's protocol.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub enum Protocol {
    /// TCP (the default).
    #[default]
    Tcp,
    /// UDP.
    Udp,
    /// SCTP.
    Sctp,
}

impl Protocol {
    /// Parses `TCP`/`UDP`/`SCTP` (any case); unset means TCP, unknown gives `None`.
    pub fn parse(s: Option<&str>) -> Option<Protocol> {
        match s.map(str::to_ascii_uppercase).as_deref() {
            None | Some("") | Some("TCP") => Some(Protocol::Tcp),
            Some("UDP") => Some(Protocol::Udp),
            Some("SCTP") => Some(Protocol::Sctp),
            Some(_) => None,
        }
    }

    /// `tcp`, as iptables and the chain hashes spell it.
    pub fn lower(self) -> &'static str {
        match self {
            Protocol::Tcp => "tcp",
            Protocol::Udp => "udp",
            Protocol::Sctp => "sctp",
        }
    }

    /// `TCP`, as the API and ipvsadm spell it.
    pub fn upper(self) -> &'static str {
        match self {
            Protocol::Tcp => "TCP",
            Protocol::Udp => "UDP",
            Protocol::Sctp => "SCTP",
        }
    }

    /// The IP protocol number (ipvsadm sorts virtual services by it).
    pub fn number(self) -> u8 {
        match self {
            Protocol::Tcp => 6,
            Protocol::Udp => 17,
            Protocol::Sctp => 132,
        }
    }
}

/// `proxy.ServicePortName`: namespace, name, port name and protocol.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ServicePortName {
    /// Service namespace.
    pub namespace: String,
    /// Service name.
    pub name: String,
    /// The port's name, empty for a single unnamed port.
    pub port: String,
    /// The port's protocol.
    pub protocol: Protocol,
}

impl fmt::Display for ServicePortName {
    /// `ns/name:port`, or `ns/name` when the port is unnamed (upstream `String()`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.namespace, self.name)?;
        if !self.port.is_empty() {
            write!(f, ":{}", self.port)?;
        }
        Ok(())
    }
}

/// One port of a proxied Service (`BaseServicePortInfo`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServicePort {
    /// Identity.
    pub name: ServicePortName,
    /// The IPv4 ClusterIP.
    pub cluster_ip: Ipv4Addr,
    /// `port`.
    pub port: u16,
    /// `nodePort`, 0 if none.
    pub node_port: u16,
    /// `spec.externalIPs` (IPv4 only).
    pub external_ips: Vec<Ipv4Addr>,
    /// `status.loadBalancer.ingress[].ip` with ipMode VIP (or unset).
    pub load_balancer_vips: Vec<Ipv4Addr>,
    /// `spec.loadBalancerSourceRanges`, parsed; invalid entries are dropped.
    pub load_balancer_source_ranges: Vec<Cidr>,
    /// `Some(timeoutSeconds)` for `sessionAffinity: ClientIP`.
    pub sticky_max_age_seconds: Option<u32>,
    /// `externalTrafficPolicy: Local` on an externally accessible Service.
    pub external_policy_local: bool,
    /// `internalTrafficPolicy: Local`.
    pub internal_policy_local: bool,
    /// `healthCheckNodePort` of a LoadBalancer with Local policy, 0 if none.
    pub health_check_node_port: u16,
}

impl ServicePort {
    /// The `ns/name:port` string used in comments and hashes.
    pub fn name_string(&self) -> String {
        self.name.to_string()
    }

    /// Whether the port can be reached from outside: NodePort, LB VIP or externalIP.
    pub fn externally_accessible(&self) -> bool {
        self.node_port != 0 || !self.load_balancer_vips.is_empty() || !self.external_ips.is_empty()
    }

    /// Whether cluster-wide endpoints are needed (internal policy Cluster, or any external
    /// access, which needs them for short-circuiting).
    pub fn uses_cluster_endpoints(&self) -> bool {
        !self.internal_policy_local || self.externally_accessible()
    }

    /// Whether node-local endpoints are needed.
    pub fn uses_local_endpoints(&self) -> bool {
        self.internal_policy_local || (self.external_policy_local && self.externally_accessible())
    }

    /// `KUBE-SVC-…`.
    pub fn cluster_chain(&self) -> String {
        hash::service_port_policy_cluster_chain(&self.name_string(), self.name.protocol.lower())
    }

    /// `KUBE-SVL-…`.
    pub fn local_chain(&self) -> String {
        hash::service_port_policy_local_chain(&self.name_string(), self.name.protocol.lower())
    }

    /// `KUBE-EXT-…`.
    pub fn external_chain(&self) -> String {
        hash::service_external_chain(&self.name_string(), self.name.protocol.lower())
    }

    /// `KUBE-FW-…`.
    pub fn firewall_chain(&self) -> String {
        hash::service_firewall_chain(&self.name_string(), self.name.protocol.lower())
    }
}

/// One endpoint of a service port (`BaseEndpointInfo`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Endpoint {
    /// Address.
    pub ip: Ipv4Addr,
    /// Target port.
    pub port: u16,
    /// `conditions.ready` (unset = true).
    pub ready: bool,
    /// `conditions.serving` (unset = true).
    pub serving: bool,
    /// `conditions.terminating` (unset = false).
    pub terminating: bool,
    /// `nodeName` equals this node.
    pub is_local: bool,
    /// `nodeName`, if set.
    pub node_name: Option<String>,
    /// `KUBE-SEP-…` for this endpoint of its service port.
    pub chain: String,
}

impl fmt::Display for Endpoint {
    /// `ip:port`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.ip, self.port)
    }
}

/// kube-proxy's `svcPortMap` + `endpointsMap`, in a deterministic order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ProxyModel {
    /// Proxied service ports, sorted by `ns/name:port` (upstream iterates a Go map; we
    /// use the order upstream's tests sort into).
    pub ports: Vec<ServicePort>,
    /// Endpoints per service port, sorted by `ip:port` string as upstream sorts them.
    pub endpoints: BTreeMap<ServicePortName, Vec<Endpoint>>,
}

impl ProxyModel {
    /// The endpoints of a service port (empty if none).
    pub fn endpoints_of(&self, name: &ServicePortName) -> &[Endpoint] {
        self.endpoints.get(name).map(Vec::as_slice).unwrap_or(&[])
    }
}

/// Builds the model kube-proxy on `node_name` holds for these objects.
pub fn build(
    services: &[Arc<Service>],
    slices: &[Arc<EndpointSlice>],
    node_name: &str,
) -> ProxyModel {
    let mut ports: Vec<ServicePort> = services.iter().flat_map(|s| service_ports(s)).collect();
    ports.sort_by_key(|p| p.name_string());
    ports.dedup_by(|a, b| a.name == b.name);
    ProxyModel {
        ports,
        endpoints: endpoints_map(slices, node_name),
    }
}

fn has_label(meta: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta, key: &str) -> bool {
    meta.labels.as_ref().is_some_and(|l| l.contains_key(key))
}

/// The proxied ports of one Service; empty for headless, ExternalName, IPv6-only or
/// otherwise unproxyable Services (`ShouldSkipService`).
pub fn service_ports(svc: &Service) -> Vec<ServicePort> {
    let Some(spec) = svc.spec.as_ref() else {
        return Vec::new();
    };
    if has_label(&svc.metadata, LABEL_SERVICE_PROXY_NAME) {
        return Vec::new();
    }
    let svc_type = spec.type_.as_deref().unwrap_or("ClusterIP");
    if svc_type == "ExternalName" {
        return Vec::new();
    }
    // IsServiceIPSet: "" and "None" are skipped; then GetClusterIPByFamily(IPv4).
    let primary = spec.cluster_ip.as_deref().unwrap_or("");
    if primary.is_empty() || primary == "None" {
        return Vec::new();
    }
    let cluster_ip = match parse_ipv4(primary) {
        Some(ip) => ip,
        None => match spec
            .cluster_ips
            .iter()
            .flatten()
            .find_map(|s| parse_ipv4(s))
        {
            Some(ip) => ip,
            None => return Vec::new(),
        },
    };
    let namespace = svc.metadata.namespace.clone().unwrap_or_default();
    let name = svc.metadata.name.clone().unwrap_or_default();

    let externally_accessible_type = svc_type == "LoadBalancer"
        || svc_type == "NodePort"
        || spec.external_ips.as_ref().is_some_and(|v| !v.is_empty());
    let external_policy_local =
        externally_accessible_type && spec.external_traffic_policy.as_deref() == Some("Local");
    let internal_policy_local = spec.internal_traffic_policy.as_deref() == Some("Local");
    let sticky = (spec.session_affinity.as_deref() == Some("ClientIP")).then(|| {
        spec.session_affinity_config
            .as_ref()
            .and_then(|c| c.client_ip.as_ref())
            .and_then(|c| c.timeout_seconds)
            .and_then(|t| u32::try_from(t).ok())
            .unwrap_or(DEFAULT_CLIENT_IP_TIMEOUT_SECONDS)
    });
    let external_ips: Vec<Ipv4Addr> = spec
        .external_ips
        .iter()
        .flatten()
        .filter_map(|s| parse_ipv4(s))
        .collect();
    let load_balancer_vips: Vec<Ipv4Addr> = svc
        .status
        .as_ref()
        .and_then(|s| s.load_balancer.as_ref())
        .and_then(|lb| lb.ingress.as_ref())
        .into_iter()
        .flatten()
        .filter(|ing| ing.ip_mode.as_deref().is_none_or(|m| m == "VIP"))
        .filter_map(|ing| ing.ip.as_deref().and_then(parse_ipv4))
        .collect();
    let source_ranges: Vec<Cidr> = spec
        .load_balancer_source_ranges
        .iter()
        .flatten()
        .filter_map(|s| Cidr::parse(s))
        .collect();
    let health_check_node_port = if svc_type == "LoadBalancer" && external_policy_local {
        spec.health_check_node_port
            .and_then(|p| u16::try_from(p).ok())
            .unwrap_or(0)
    } else {
        0
    };

    let mut out = Vec::new();
    for p in spec.ports.iter().flatten() {
        let (Some(protocol), Ok(port)) = (
            Protocol::parse(p.protocol.as_deref()),
            u16::try_from(p.port),
        ) else {
            continue;
        };
        out.push(ServicePort {
            name: ServicePortName {
                namespace: namespace.clone(),
                name: name.clone(),
                port: p.name.clone().unwrap_or_default(),
                protocol,
            },
            cluster_ip,
            port,
            node_port: p.node_port.and_then(|n| u16::try_from(n).ok()).unwrap_or(0),
            external_ips: external_ips.clone(),
            load_balancer_vips: load_balancer_vips.clone(),
            load_balancer_source_ranges: source_ranges.clone(),
            sticky_max_age_seconds: sticky,
            external_policy_local,
            internal_policy_local,
            health_check_node_port,
        });
    }
    out
}

/// `EndpointSliceCache.getEndpointsMap`: all slices labelled with a service name, merged
/// per (service, port name, protocol), deduplicated by `ip:port` (a local copy wins) and
/// sorted by the `ip:port` string.
pub fn endpoints_map(
    slices: &[Arc<EndpointSlice>],
    node_name: &str,
) -> BTreeMap<ServicePortName, Vec<Endpoint>> {
    // Upstream keys slices by name within a service; iterate in name order.
    let mut ordered: Vec<&EndpointSlice> = slices.iter().map(|s| s.as_ref()).collect();
    ordered.sort_by(|a, b| {
        (&a.metadata.namespace, &a.metadata.name).cmp(&(&b.metadata.namespace, &b.metadata.name))
    });
    let mut sets: BTreeMap<ServicePortName, BTreeMap<String, Endpoint>> = BTreeMap::new();
    for slice in ordered {
        if slice.address_type != "IPv4"
            || has_label(&slice.metadata, LABEL_SERVICE_PROXY_NAME)
            || has_label(&slice.metadata, LABEL_HEADLESS)
        {
            continue;
        }
        let Some(service) = slice
            .metadata
            .labels
            .as_ref()
            .and_then(|l| l.get(LABEL_SERVICE_NAME))
            .filter(|s| !s.is_empty())
        else {
            continue;
        };
        let namespace = slice.metadata.namespace.clone().unwrap_or_default();
        for port in slice.ports.iter().flatten() {
            let Some(port_name) = port.name.clone() else {
                continue;
            };
            let Some(num) = port
                .port
                .and_then(|p| u16::try_from(p).ok())
                .filter(|p| *p != 0)
            else {
                continue;
            };
            let Some(protocol) = Protocol::parse(port.protocol.as_deref()) else {
                continue;
            };
            let spn = ServicePortName {
                namespace: namespace.clone(),
                name: service.clone(),
                port: port_name,
                protocol,
            };
            let spn_string = spn.to_string();
            let set = sets.entry(spn.clone()).or_default();
            for ep in &slice.endpoints {
                let Some(ip) = ep.addresses.first().and_then(|a| parse_ipv4(a)) else {
                    continue;
                };
                let cond = ep.conditions.as_ref();
                let is_local = ep.node_name.as_deref() == Some(node_name);
                let key = format!("{ip}:{num}");
                if set.contains_key(&key) && !is_local {
                    continue;
                }
                let chain = hash::service_port_endpoint_chain(&spn_string, protocol.lower(), &key);
                set.insert(
                    key,
                    Endpoint {
                        ip,
                        port: num,
                        ready: cond.and_then(|c| c.ready).unwrap_or(true),
                        serving: cond.and_then(|c| c.serving).unwrap_or(true),
                        terminating: cond.and_then(|c| c.terminating).unwrap_or(false),
                        is_local,
                        node_name: ep.node_name.clone(),
                        chain,
                    },
                );
            }
        }
    }
    // BTreeMap<String, _> iterates in `ip:port` string order, as upstream's byEndpoint sort.
    sets.into_iter()
        .map(|(k, v)| (k, v.into_values().collect()))
        .filter(|(_, v): &(ServicePortName, Vec<Endpoint>)| !v.is_empty())
        .collect()
}

/// The result of `CategorizeEndpoints` for one service port on this node.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Categorized {
    /// Endpoints for `Cluster` policy (ready, or serving-terminating if none are ready).
    pub cluster: Vec<Endpoint>,
    /// Endpoints for `Local` policy (local ready, or local serving-terminating).
    pub local: Vec<Endpoint>,
    /// Every endpoint some rule on this node can reach (gets a `KUBE-SEP-` chain).
    pub all_reachable: Vec<Endpoint>,
    /// Whether the service has usable endpoints anywhere in the cluster.
    pub has_any: bool,
}

/// `CategorizeEndpoints` (topology hints ignored).
pub fn categorize_endpoints(endpoints: &[Endpoint], svc: &ServicePort) -> Categorized {
    let mut out = Categorized::default();
    if svc.uses_cluster_endpoints() {
        out.cluster = endpoints.iter().filter(|e| e.ready).cloned().collect();
        if out.cluster.is_empty() {
            // Fall back to terminating endpoints that still serve (graceful shutdown).
            out.cluster = endpoints
                .iter()
                .filter(|e| e.serving && e.terminating)
                .cloned()
                .collect();
        }
        out.has_any = !out.cluster.is_empty();
    }
    if !svc.uses_local_endpoints() {
        out.all_reachable = out.cluster.clone();
        return out;
    }
    let (mut local_ready, mut local_serving_terminating) = (false, false);
    for e in endpoints {
        if e.ready {
            out.has_any = true;
            local_ready |= e.is_local;
        } else if e.serving && e.terminating {
            out.has_any = true;
            local_serving_terminating |= e.is_local;
        }
    }
    if local_ready {
        out.local = endpoints
            .iter()
            .filter(|e| e.is_local && e.ready)
            .cloned()
            .collect();
    } else if local_serving_terminating {
        out.local = endpoints
            .iter()
            .filter(|e| e.is_local && e.serving && e.terminating)
            .cloned()
            .collect();
    }
    if !svc.uses_cluster_endpoints() {
        out.all_reachable = out.local.clone();
        return out;
    }
    // Union of both lists (upstream: a map, so order is unspecified; keep it sorted).
    let mut all = out.cluster.clone();
    for e in &out.local {
        if !all.iter().any(|a| a.ip == e.ip && a.port == e.port) {
            all.push(e.clone());
        }
    }
    all.sort_by_key(|e| e.to_string());
    out.all_reachable = all;
    out
}
