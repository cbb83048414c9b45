//! kube-proxy's IPVS mode: virtual servers (`ipvsadm -Ln`), its ipsets, and its iptables rules.
//!
//! Follows `pkg/proxy/ipvs/proxier.go` (`syncProxyRules`, `syncEndpoint`,
//! `writeIptablesRules`). NodePort virtual servers are bound on the node's InternalIP only
//! (a real node also binds them on its other addresses, e.g. the CNI bridge).

use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::net::Ipv4Addr;

use super::model::{
    self, categorize_endpoints, Protocol, ProxyModel, ServicePort, ServicePortName,
};
use super::net::Cidr;
use super::ProxyInput;

pub(crate) use super::ipvs_rules::{ipsets, node_tables, IPVS_IPS};

/// The first line `ipvsadm -Ln` prints.
pub const IPVS_VERSION_LINE: &str = "IP Virtual Server version 1.2.1 (size=4096)";
/// kube-proxy's default `--ipvs-scheduler`.
pub const DEFAULT_SCHEDULER: &str = "rr";

/// A real server (destination) of a virtual server.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RealServer {
    /// Endpoint address.
    pub ip: Ipv4Addr,
    /// Endpoint port.
    pub port: u16,
    /// Weight (kube-proxy always uses 1).
    pub weight: u32,
}

/// An IPVS virtual server kube-proxy programs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VirtualServer {
    /// TCP, UDP or SCTP.
    pub protocol: Protocol,
    /// The VIP (ClusterIP, externalIP, LB IP) or a node address for a NodePort.
    pub addr: Ipv4Addr,
    /// Service port or NodePort.
    pub port: u16,
    /// Scheduler name (`rr`).
    pub scheduler: &'static str,
    /// `persistent <seconds>` for `sessionAffinity: ClientIP`.
    pub persistent_seconds: Option<u32>,
    /// The service port it implements.
    pub service: ServicePortName,
    /// Destinations, in the order `ipvsadm` lists them.
    pub real_servers: Vec<RealServer>,
}

impl VirtualServer {
    /// `TCP  10.96.0.1:443 rr` (plus ` persistent N`), as `ipvsadm -Ln` prints it.
    pub fn line(&self) -> String {
        let mut s = format!(
            "{}  {}:{} {}",
            self.protocol.upper(),
            self.addr,
            self.port,
            self.scheduler
        );
        if let Some(t) = self.persistent_seconds {
            let _ = write!(s, " persistent {t}");
        }
        s
    }

    /// `  -> 10.244.1.5:80                 Masq    1      0          0         `.
    pub fn real_server_line(rs: &RealServer) -> String {
        format!(
            "  -> {:<28} {:<7} {:<6} {:<10} {:<10}",
            format!("{}:{}", rs.ip, rs.port),
            "Masq",
            rs.weight,
            0,
            0
        )
    }
}

/// ipvsadm's `ipvs_cmp_services`/`ipvs_cmp_dests` compare addresses as
/// `(int)(ntohl(a) - ntohl(b))`, so the difference wraps: 172.18.x sorts before 10.96.x.
fn cmp_addr(a: Ipv4Addr, b: Ipv4Addr) -> Ordering {
    (u32::from(a).wrapping_sub(u32::from(b)) as i32).cmp(&0)
}

/// Insertion sort: ipvsadm's comparator is not a total order, and `sort_by` may panic on
/// one; this never does and is deterministic.
fn insertion_sort<T>(v: &mut [T], cmp: impl Fn(&T, &T) -> Ordering) {
    for i in 1..v.len() {
        let mut j = i;
        while j > 0 && cmp(&v[j - 1], &v[j]) == Ordering::Greater {
            v.swap(j - 1, j);
            j -= 1;
        }
    }
}

/// `syncEndpoint`: Local policy uses local endpoints when there are any, else all.
fn destinations(svc: &ServicePort, model: &ProxyModel, only_local: bool) -> Vec<RealServer> {
    let cat = categorize_endpoints(model.endpoints_of(&svc.name), svc);
    let eps = if only_local && !cat.local.is_empty() {
        &cat.local
    } else {
        &cat.cluster
    };
    let mut out: Vec<RealServer> = eps
        .iter()
        .map(|e| RealServer {
            ip: e.ip,
            port: e.port,
            weight: 1,
        })
        .collect();
    out.dedup();
    insertion_sort(&mut out, |a, b| {
        cmp_addr(a.ip, b.ip).then(a.port.cmp(&b.port))
    });
    out
}

pub(crate) fn virtual_servers_of(input: &ProxyInput, model: &ProxyModel) -> Vec<VirtualServer> {
    let mut out = Vec::new();
    for svc in &model.ports {
        let vs = |addr, port, only_local| VirtualServer {
            protocol: svc.name.protocol,
            addr,
            port,
            scheduler: DEFAULT_SCHEDULER,
            persistent_seconds: svc.sticky_max_age_seconds,
            service: svc.name.clone(),
            real_servers: destinations(svc, model, only_local),
        };
        out.push(vs(svc.cluster_ip, svc.port, svc.internal_policy_local));
        for ip in svc.external_ips.iter().chain(&svc.load_balancer_vips) {
            out.push(vs(*ip, svc.port, svc.external_policy_local));
        }
        if svc.node_port != 0 {
            out.push(vs(input.node_ip, svc.node_port, svc.external_policy_local));
        }
    }
    insertion_sort(&mut out, |a, b| {
        a.protocol
            .number()
            .cmp(&b.protocol.number())
            .then(cmp_addr(a.addr, b.addr))
            .then(a.port.cmp(&b.port))
    });
    out
}

/// The virtual servers kube-proxy programs on this node, in `ipvsadm -Ln` order.
pub fn virtual_servers(input: &ProxyInput) -> Vec<VirtualServer> {
    let model = model::build(input.services, input.slices, &input.node_name);
    virtual_servers_of(input, &model)
}

/// What `ipvsadm -Ln` prints on this node in IPVS mode.
pub fn ipvsadm_ln(input: &ProxyInput) -> String {
    let mut out = format!(
        "{IPVS_VERSION_LINE}\nProt LocalAddress:Port Scheduler Flags\n  -> RemoteAddress:Port           Forward Weight ActiveConn InActConn\n"
    );
    for vs in virtual_servers(input) {
        out.push_str(&vs.line());
        out.push('\n');
        for rs in &vs.real_servers {
            out.push_str(&VirtualServer::real_server_line(rs));
            out.push('\n');
        }
    }
    out
}

/// An ipset member.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum SetEntry {
    /// `bitmap:port`.
    Port(u16),
    /// `hash:ip`.
    Ip(Ipv4Addr),
    /// `hash:ip,port`.
    IpPort(Ipv4Addr, Protocol, u16),
    /// `hash:ip,port,ip`.
    IpPortIp(Ipv4Addr, Protocol, u16, Ipv4Addr),
    /// `hash:ip,port,net`.
    IpPortNet(Ipv4Addr, Protocol, u16, Cidr),
}

/// The ipsets IPVS mode keeps, by name.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct IpSets(pub BTreeMap<&'static str, BTreeSet<SetEntry>>);

impl IpSets {
    pub(crate) fn add(&mut self, set: &'static str, e: SetEntry) {
        self.0.entry(set).or_default().insert(e);
    }

    pub(crate) fn non_empty(&self, set: &str) -> bool {
        self.0.get(set).is_some_and(|s| !s.is_empty())
    }

    /// Whether a packet matches `--match-set name dims`.
    pub fn matches(
        &self,
        name: &str,
        dims: &str,
        src: Ipv4Addr,
        dst: Ipv4Addr,
        proto: Protocol,
        dport: u16,
    ) -> bool {
        let Some(set) = self.0.get(name) else {
            return false;
        };
        set.iter().any(|e| match (*e, dims) {
            (SetEntry::Port(p), "dst") => p == dport,
            (SetEntry::Ip(ip), "dst") => ip == dst,
            (SetEntry::IpPort(ip, pr, p), "dst,dst") => ip == dst && pr == proto && p == dport,
            (SetEntry::IpPort(ip, pr, p), "src,dst") => ip == src && pr == proto && p == dport,
            (SetEntry::IpPortIp(ip, pr, p, ip2), "dst,dst,src") => {
                ip == dst && pr == proto && p == dport && ip2 == src
            }
            (SetEntry::IpPortNet(ip, pr, p, net), "dst,dst,src") => {
                ip == dst && pr == proto && p == dport && net.contains(src)
            }
            _ => false,
        })
    }
}
