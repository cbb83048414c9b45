//! kube-proxy's IPVS mode: virtual servers (`ipvsadm -Ln`), its ipsets, and its iptables rules.
//!
//! Follows `pkg/proxy/ipvs/proxier.go` (`syncProxyRules`, `syncEndpoint`,
//! `writeIptablesRules`). NodePort virtual servers are bound on the node's InternalIP only
//! (a real node also binds them on its other addresses, e.g. the CNI bridge).

use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::net::Ipv4Addr;

use super::iptables::{
    comment, localnet_firewall_rule, KUBE_FIREWALL, KUBE_FORWARD, KUBE_MARK_MASQ, KUBE_POSTROUTING,
    KUBE_PROXY_FIREWALL, KUBE_SERVICES,
};
use super::model::{
    self, categorize_endpoints, Protocol, ProxyModel, ServicePort, ServicePortName,
};
use super::net::{Cidr, LOOPBACK};
use super::node::{
    jump_rules, Jump, NodeTable, NodeTables, FILTER_BUILTINS, KUBE_IPTABLES_HINT,
    KUBE_KUBELET_CANARY, MANGLE_BUILTINS, NAT_BUILTINS,
};
use super::rules::{Part, Rule, Table, Target};
use super::ProxyInput;

/// The first line `ipvsadm -Ln` prints.
pub const IPVS_VERSION_LINE: &str = "IP Virtual Server version 1.2.1 (size=4096)";
/// kube-proxy's default `--ipvs-scheduler`.
pub const DEFAULT_SCHEDULER: &str = "rr";

const KUBE_NODE_PORT: &str = "KUBE-NODE-PORT";
const KUBE_LOAD_BALANCER: &str = "KUBE-LOAD-BALANCER";
const KUBE_SOURCE_RANGES_FIREWALL: &str = "KUBE-SOURCE-RANGES-FIREWALL";
const KUBE_IPVS_FILTER: &str = "KUBE-IPVS-FILTER";
const KUBE_IPVS_OUT_FILTER: &str = "KUBE-IPVS-OUT-FILTER";

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
    fn add(&mut self, set: &'static str, e: SetEntry) {
        self.0.entry(set).or_default().insert(e);
    }

    fn non_empty(&self, set: &str) -> bool {
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

const LOOP_BACK: &str = "KUBE-LOOP-BACK";
const CLUSTER_IP: &str = "KUBE-CLUSTER-IP";
const EXTERNAL_IP: &str = "KUBE-EXTERNAL-IP";
const EXTERNAL_IP_LOCAL: &str = "KUBE-EXTERNAL-IP-LOCAL";
const LOAD_BALANCER: &str = "KUBE-LOAD-BALANCER";
const LOAD_BALANCER_LOCAL: &str = "KUBE-LOAD-BALANCER-LOCAL";
const LOAD_BALANCER_FW: &str = "KUBE-LOAD-BALANCER-FW";
const LB_SOURCE_IP: &str = "KUBE-LOAD-BALANCER-SOURCE-IP";
const LB_SOURCE_CIDR: &str = "KUBE-LOAD-BALANCER-SOURCE-CIDR";
const NODE_PORT_TCP: &str = "KUBE-NODE-PORT-TCP";
const NODE_PORT_LOCAL_TCP: &str = "KUBE-NODE-PORT-LOCAL-TCP";
const NODE_PORT_UDP: &str = "KUBE-NODE-PORT-UDP";
const NODE_PORT_LOCAL_UDP: &str = "KUBE-NODE-PORT-LOCAL-UDP";
const NODE_PORT_SCTP: &str = "KUBE-NODE-PORT-SCTP-HASH";
const NODE_PORT_LOCAL_SCTP: &str = "KUBE-NODE-PORT-LOCAL-SCTP-HASH";
const HEALTH_CHECK_NODE_PORT: &str = "KUBE-HEALTH-CHECK-NODE-PORT";
pub(crate) const IPVS_IPS: &str = "KUBE-IPVS-IPS";

/// The comment kube-proxy attaches to rules matching a set.
fn set_comment(set: &str) -> &'static str {
    match set {
        LOOP_BACK => "Kubernetes endpoints dst ip:port, source ip for solving hairpin purpose",
        CLUSTER_IP => "Kubernetes service cluster ip + port for masquerade purpose",
        EXTERNAL_IP => "Kubernetes service external ip + port for masquerade and filter purpose",
        EXTERNAL_IP_LOCAL => "Kubernetes service external ip + port with externalTrafficPolicy=local",
        LOAD_BALANCER => "Kubernetes service lb portal",
        LOAD_BALANCER_LOCAL => "Kubernetes service load balancer ip + port with externalTrafficPolicy=local",
        LOAD_BALANCER_FW => "Kubernetes service load balancer ip + port for load balancer with sourceRange",
        LB_SOURCE_IP => "Kubernetes service load balancer ip + port + source IP for packet filter purpose",
        LB_SOURCE_CIDR => "Kubernetes service load balancer ip + port + source cidr for packet filter purpose",
        NODE_PORT_TCP => "Kubernetes nodeport TCP port for masquerade purpose",
        NODE_PORT_LOCAL_TCP => "Kubernetes nodeport TCP port with externalTrafficPolicy=local",
        NODE_PORT_UDP => "Kubernetes nodeport UDP port for masquerade purpose",
        NODE_PORT_LOCAL_UDP => "Kubernetes nodeport UDP port with externalTrafficPolicy=local",
        NODE_PORT_SCTP => "Kubernetes nodeport SCTP port for masquerade purpose with type 'hash ip:port'",
        NODE_PORT_LOCAL_SCTP => {
            "Kubernetes nodeport SCTP port with externalTrafficPolicy=local with type 'hash ip:port'"
        }
        HEALTH_CHECK_NODE_PORT => "Kubernetes health check node port",
        _ => "Addresses on the ipvs interface",
    }
}

/// The set contents kube-proxy syncs on this node.
pub(crate) fn ipsets(input: &ProxyInput, model: &ProxyModel) -> IpSets {
    let mut sets = IpSets::default();
    for svc in &model.ports {
        let (proto, port) = (svc.name.protocol, svc.port);
        for ep in model.endpoints_of(&svc.name).iter().filter(|e| e.is_local) {
            sets.add(LOOP_BACK, SetEntry::IpPortIp(ep.ip, proto, ep.port, ep.ip));
        }
        sets.add(CLUSTER_IP, SetEntry::IpPort(svc.cluster_ip, proto, port));
        sets.add(IPVS_IPS, SetEntry::Ip(svc.cluster_ip));
        for ip in &svc.external_ips {
            let set = if svc.external_policy_local {
                EXTERNAL_IP_LOCAL
            } else {
                EXTERNAL_IP
            };
            sets.add(set, SetEntry::IpPort(*ip, proto, port));
            if *ip != input.node_ip {
                sets.add(IPVS_IPS, SetEntry::Ip(*ip));
            }
        }
        for ip in &svc.load_balancer_vips {
            let e = SetEntry::IpPort(*ip, proto, port);
            sets.add(LOAD_BALANCER, e);
            if svc.external_policy_local {
                sets.add(LOAD_BALANCER_LOCAL, e);
            }
            if !svc.load_balancer_source_ranges.is_empty() {
                sets.add(LOAD_BALANCER_FW, e);
                let mut allow_from_node = false;
                for cidr in &svc.load_balancer_source_ranges {
                    sets.add(LB_SOURCE_CIDR, SetEntry::IpPortNet(*ip, proto, port, *cidr));
                    allow_from_node |= cidr.contains(input.node_ip);
                }
                if allow_from_node {
                    sets.add(LB_SOURCE_IP, SetEntry::IpPortIp(*ip, proto, port, *ip));
                }
            }
            if *ip != input.node_ip {
                sets.add(IPVS_IPS, SetEntry::Ip(*ip));
            }
        }
        if svc.node_port != 0 {
            let (set, local, e) = match proto {
                Protocol::Tcp => (
                    NODE_PORT_TCP,
                    NODE_PORT_LOCAL_TCP,
                    SetEntry::Port(svc.node_port),
                ),
                Protocol::Udp => (
                    NODE_PORT_UDP,
                    NODE_PORT_LOCAL_UDP,
                    SetEntry::Port(svc.node_port),
                ),
                Protocol::Sctp => (
                    NODE_PORT_SCTP,
                    NODE_PORT_LOCAL_SCTP,
                    SetEntry::IpPort(input.node_ip, proto, svc.node_port),
                ),
            };
            sets.add(set, e);
            if svc.external_policy_local {
                sets.add(local, e);
            }
        }
        if svc.health_check_node_port != 0 {
            sets.add(
                HEALTH_CHECK_NODE_PORT,
                SetEntry::Port(svc.health_check_node_port),
            );
        }
    }
    sets
}

/// `ipsetWithIptablesChain`: (set, table, from chain, target, dims, `-p` protocol).
const SET_CHAINS: &[(&str, &str, &str, &str, &str, Option<Protocol>)] = &[
    (
        LOOP_BACK,
        "nat",
        KUBE_POSTROUTING,
        "MASQUERADE",
        "dst,dst,src",
        None,
    ),
    (
        LOAD_BALANCER,
        "nat",
        KUBE_SERVICES,
        KUBE_LOAD_BALANCER,
        "dst,dst",
        None,
    ),
    (
        LOAD_BALANCER_LOCAL,
        "nat",
        KUBE_LOAD_BALANCER,
        "RETURN",
        "dst,dst",
        None,
    ),
    (
        NODE_PORT_LOCAL_TCP,
        "nat",
        KUBE_NODE_PORT,
        "RETURN",
        "dst",
        Some(Protocol::Tcp),
    ),
    (
        NODE_PORT_TCP,
        "nat",
        KUBE_NODE_PORT,
        KUBE_MARK_MASQ,
        "dst",
        Some(Protocol::Tcp),
    ),
    (
        NODE_PORT_LOCAL_UDP,
        "nat",
        KUBE_NODE_PORT,
        "RETURN",
        "dst",
        Some(Protocol::Udp),
    ),
    (
        NODE_PORT_UDP,
        "nat",
        KUBE_NODE_PORT,
        KUBE_MARK_MASQ,
        "dst",
        Some(Protocol::Udp),
    ),
    (
        NODE_PORT_LOCAL_SCTP,
        "nat",
        KUBE_NODE_PORT,
        "RETURN",
        "dst,dst",
        Some(Protocol::Sctp),
    ),
    (
        NODE_PORT_SCTP,
        "nat",
        KUBE_NODE_PORT,
        KUBE_MARK_MASQ,
        "dst,dst",
        Some(Protocol::Sctp),
    ),
    (
        LOAD_BALANCER_FW,
        "filter",
        KUBE_PROXY_FIREWALL,
        KUBE_SOURCE_RANGES_FIREWALL,
        "dst,dst",
        None,
    ),
    (
        LB_SOURCE_CIDR,
        "filter",
        KUBE_SOURCE_RANGES_FIREWALL,
        "RETURN",
        "dst,dst,src",
        None,
    ),
    (
        LB_SOURCE_IP,
        "filter",
        KUBE_SOURCE_RANGES_FIREWALL,
        "RETURN",
        "dst,dst,src",
        None,
    ),
];

fn target(t: &str) -> Target {
    match t {
        "RETURN" => Target::Return,
        "MASQUERADE" => Target::Masquerade {
            random_fully: false,
        },
        c => Target::Jump(c.to_string()),
    }
}

fn set(name: &'static str, dims: &'static str) -> Part {
    Part::Set {
        name,
        not: false,
        dims,
    }
}

/// `writeIptablesRules`: the filter and nat rules of IPVS mode.
fn ipvs_rules(input: &ProxyInput, sets: &IpSets) -> (Table, Table) {
    let opts = &input.options;
    let mark = opts.masquerade_mark();
    let (mut nat, mut filter) = (Table::default(), Table::default());
    for c in [
        KUBE_SERVICES,
        KUBE_POSTROUTING,
        KUBE_NODE_PORT,
        KUBE_LOAD_BALANCER,
        KUBE_MARK_MASQ,
    ] {
        nat.chain(c);
    }
    for c in [
        KUBE_FORWARD,
        KUBE_NODE_PORT,
        KUBE_PROXY_FIREWALL,
        KUBE_SOURCE_RANGES_FIREWALL,
        KUBE_IPVS_FILTER,
        KUBE_IPVS_OUT_FILTER,
    ] {
        filter.chain(c);
    }
    let lo = Part::Src {
        not: false,
        text: LOOPBACK.to_string(),
        cidr: LOOPBACK,
    };
    nat.rules
        .push(Rule::new(KUBE_SERVICES, vec![lo], Target::Return));
    for (name, table, from, to, dims, proto) in SET_CHAINS {
        if !sets.non_empty(name) {
            continue;
        }
        let mut parts: Vec<Part> = proto.iter().map(|p| Part::ProtoOnly(*p)).collect();
        parts.push(comment(set_comment(name).into()));
        parts.push(set(name, dims));
        let t = if *table == "nat" {
            &mut nat
        } else {
            &mut filter
        };
        t.rules.push(Rule::new(from, parts, target(to)));
    }
    if sets.non_empty(CLUSTER_IP) {
        let mut parts = vec![comment(set_comment(CLUSTER_IP).into())];
        if opts.masquerade_all {
            parts.push(set(CLUSTER_IP, "dst,dst"));
        } else if let Some(c) = input.cluster_cidr {
            parts.push(set(CLUSTER_IP, "dst,dst"));
            parts.push(Part::Src {
                not: true,
                text: c.to_string(),
                cidr: c,
            });
        } else {
            parts.push(set(CLUSTER_IP, "src,dst"));
        }
        nat.rules.push(Rule::new(
            KUBE_SERVICES,
            parts,
            Target::Jump(KUBE_MARK_MASQ.into()),
        ));
    }
    for (name, masq) in [(EXTERNAL_IP, true), (EXTERNAL_IP_LOCAL, false)] {
        if !sets.non_empty(name) {
            continue;
        }
        let base = vec![comment(set_comment(name).into()), set(name, "dst,dst")];
        if masq {
            nat.rules.push(Rule::new(
                KUBE_SERVICES,
                base.clone(),
                Target::Jump(KUBE_MARK_MASQ.into()),
            ));
        }
        let mut ext = base.clone();
        ext.push(Part::PhysdevNotIsIn);
        ext.push(Part::AddrType {
            src: true,
            not: true,
        });
        nat.rules
            .push(Rule::new(KUBE_SERVICES, ext, Target::Accept));
        let mut local = base;
        local.push(Part::AddrType {
            src: false,
            not: false,
        });
        nat.rules
            .push(Rule::new(KUBE_SERVICES, local, Target::Accept));
    }
    nat.rules.push(Rule::new(
        KUBE_SERVICES,
        vec![Part::AddrType {
            src: false,
            not: false,
        }],
        Target::Jump(KUBE_NODE_PORT.into()),
    ));
    nat.rules.push(Rule::new(
        KUBE_LOAD_BALANCER,
        vec![],
        Target::Jump(KUBE_MARK_MASQ.into()),
    ));
    filter
        .rules
        .push(Rule::new(KUBE_SOURCE_RANGES_FIREWALL, vec![], Target::Drop));
    // acceptIPVSTraffic: must stay at the end of KUBE-SERVICES.
    for name in [CLUSTER_IP, LOAD_BALANCER] {
        if sets.non_empty(name) {
            nat.rules.push(Rule::new(
                KUBE_SERVICES,
                vec![set(name, "dst,dst")],
                Target::Accept,
            ));
        }
    }
    filter.rules.push(Rule::new(
        KUBE_FORWARD,
        vec![
            comment("kubernetes forwarding rules".into()),
            Part::Mark { not: false, mark },
        ],
        Target::Accept,
    ));
    filter.rules.push(Rule::new(
        KUBE_FORWARD,
        vec![
            comment("kubernetes forwarding conntrack rule".into()),
            Part::Conntrack {
                not: false,
                states: "RELATED,ESTABLISHED",
            },
        ],
        Target::Accept,
    ));
    filter.rules.push(Rule::new(
        KUBE_NODE_PORT,
        vec![
            comment(set_comment(HEALTH_CHECK_NODE_PORT).into()),
            set(HEALTH_CHECK_NODE_PORT, "dst"),
        ],
        Target::Accept,
    ));
    for (name, dims) in [
        (LOAD_BALANCER, "dst,dst"),
        (CLUSTER_IP, "dst,dst"),
        (EXTERNAL_IP, "dst,dst"),
        (EXTERNAL_IP_LOCAL, "dst,dst"),
        (HEALTH_CHECK_NODE_PORT, "dst"),
    ] {
        filter.rules.push(Rule::new(
            KUBE_IPVS_FILTER,
            vec![set(name, dims)],
            Target::Return,
        ));
    }
    filter.rules.push(Rule::new(
        KUBE_IPVS_FILTER,
        vec![
            Part::Conntrack {
                not: false,
                states: "NEW",
            },
            set(IPVS_IPS, "dst"),
        ],
        Target::Reject,
    ));
    nat.rules.push(Rule::new(
        KUBE_POSTROUTING,
        vec![Part::Mark { not: true, mark }],
        Target::Return,
    ));
    nat.rules
        .push(Rule::new(KUBE_POSTROUTING, vec![], Target::MarkXor(mark)));
    nat.rules.push(Rule::new(
        KUBE_POSTROUTING,
        vec![comment("kubernetes service traffic requiring SNAT".into())],
        Target::Masquerade {
            random_fully: opts.random_fully,
        },
    ));
    nat.rules
        .push(Rule::new(KUBE_MARK_MASQ, vec![], Target::MarkOr(mark)));
    (filter, nat)
}

/// The IPVS proxier's `iptablesJumpChain`, in upstream order.
const IPVS_JUMPS: &[Jump] = &[
    Jump {
        table: "nat",
        src: "OUTPUT",
        dst: KUBE_SERVICES,
        ctstate_new: false,
        comment: "kubernetes service portals",
    },
    Jump {
        table: "nat",
        src: "PREROUTING",
        dst: KUBE_SERVICES,
        ctstate_new: false,
        comment: "kubernetes service portals",
    },
    Jump {
        table: "nat",
        src: "POSTROUTING",
        dst: KUBE_POSTROUTING,
        ctstate_new: false,
        comment: "kubernetes postrouting rules",
    },
    Jump {
        table: "filter",
        src: "FORWARD",
        dst: KUBE_FORWARD,
        ctstate_new: false,
        comment: "kubernetes forwarding rules",
    },
    Jump {
        table: "filter",
        src: "INPUT",
        dst: KUBE_NODE_PORT,
        ctstate_new: false,
        comment: "kubernetes health check rules",
    },
    Jump {
        table: "filter",
        src: "INPUT",
        dst: KUBE_PROXY_FIREWALL,
        ctstate_new: false,
        comment: "kube-proxy firewall rules",
    },
    Jump {
        table: "filter",
        src: "FORWARD",
        dst: KUBE_PROXY_FIREWALL,
        ctstate_new: false,
        comment: "kube-proxy firewall rules",
    },
    Jump {
        table: "filter",
        src: "INPUT",
        dst: KUBE_IPVS_FILTER,
        ctstate_new: false,
        comment: "kubernetes ipvs access filter",
    },
    Jump {
        table: "filter",
        src: "OUTPUT",
        dst: KUBE_IPVS_OUT_FILTER,
        ctstate_new: false,
        comment: "kubernetes ipvs access filter",
    },
];

/// The node's tables in IPVS mode (kubelet's KUBE-FIREWALL included; no proxy canary).
pub(crate) fn node_tables(input: &ProxyInput, model: &ProxyModel) -> NodeTables {
    let sets = ipsets(input, model);
    let (mut filter, nat) = ipvs_rules(input, &sets);
    filter.chain(KUBE_FIREWALL);
    filter.rules.push(localnet_firewall_rule());
    NodeTables {
        mangle: NodeTable::from(
            "mangle",
            MANGLE_BUILTINS,
            vec![],
            &Table::default(),
            &[KUBE_IPTABLES_HINT, KUBE_KUBELET_CANARY],
        ),
        filter: NodeTable::from(
            "filter",
            FILTER_BUILTINS,
            jump_rules("filter", IPVS_JUMPS, true),
            &filter,
            &[KUBE_KUBELET_CANARY],
        ),
        nat: NodeTable::from(
            "nat",
            NAT_BUILTINS,
            jump_rules("nat", IPVS_JUMPS, true),
            &nat,
            &[KUBE_KUBELET_CANARY],
        ),
    }
}
