//! IPVS mode's ipsets and the iptables rules around them (`writeIptablesRules`).

use super::iptables::{
    comment, KUBE_FIREWALL, KUBE_FORWARD, KUBE_MARK_MASQ, KUBE_POSTROUTING, KUBE_PROXY_FIREWALL,
    KUBE_SERVICES,
};
use super::ipvs::{IpSets, SetEntry};
use super::model::{Protocol, ProxyModel};
use super::net::LOOPBACK;
use super::node::{
    forward_accept_rules, jump_rules, localnet_firewall_rule, masquerade_rules, Jump, NodeTable,
    NodeTables, FILTER_BUILTINS, KUBE_IPTABLES_HINT, KUBE_KUBELET_CANARY, MANGLE_BUILTINS,
    NAT_BUILTINS,
};
use super::rules::{Part, Rule, Table, Target};
use super::ProxyInput;

const KUBE_NODE_PORT: &str = "KUBE-NODE-PORT";
const KUBE_LOAD_BALANCER: &str = "KUBE-LOAD-BALANCER";
const KUBE_SOURCE_RANGES_FIREWALL: &str = "KUBE-SOURCE-RANGES-FIREWALL";
const KUBE_IPVS_FILTER: &str = "KUBE-IPVS-FILTER";
const KUBE_IPVS_OUT_FILTER: &str = "KUBE-IPVS-OUT-FILTER";

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

/// One `ipsetWithIptablesChain` entry: `-A from [-p proto] -m set --match-set set dims -j to`.
struct SetChain(
    &'static str,
    &'static str,
    &'static str,
    &'static str,
    &'static str,
    Option<Protocol>,
);

/// `ipsetWithIptablesChain`, in upstream order.
const SET_CHAINS: &[SetChain] = &[
    SetChain(
        LOOP_BACK,
        "nat",
        KUBE_POSTROUTING,
        "MASQUERADE",
        "dst,dst,src",
        None,
    ),
    SetChain(
        LOAD_BALANCER,
        "nat",
        KUBE_SERVICES,
        KUBE_LOAD_BALANCER,
        "dst,dst",
        None,
    ),
    SetChain(
        LOAD_BALANCER_LOCAL,
        "nat",
        KUBE_LOAD_BALANCER,
        "RETURN",
        "dst,dst",
        None,
    ),
    SetChain(
        NODE_PORT_LOCAL_TCP,
        "nat",
        KUBE_NODE_PORT,
        "RETURN",
        "dst",
        Some(Protocol::Tcp),
    ),
    SetChain(
        NODE_PORT_TCP,
        "nat",
        KUBE_NODE_PORT,
        KUBE_MARK_MASQ,
        "dst",
        Some(Protocol::Tcp),
    ),
    SetChain(
        NODE_PORT_LOCAL_UDP,
        "nat",
        KUBE_NODE_PORT,
        "RETURN",
        "dst",
        Some(Protocol::Udp),
    ),
    SetChain(
        NODE_PORT_UDP,
        "nat",
        KUBE_NODE_PORT,
        KUBE_MARK_MASQ,
        "dst",
        Some(Protocol::Udp),
    ),
    SetChain(
        NODE_PORT_LOCAL_SCTP,
        "nat",
        KUBE_NODE_PORT,
        "RETURN",
        "dst,dst",
        Some(Protocol::Sctp),
    ),
    SetChain(
        NODE_PORT_SCTP,
        "nat",
        KUBE_NODE_PORT,
        KUBE_MARK_MASQ,
        "dst,dst",
        Some(Protocol::Sctp),
    ),
    SetChain(
        LOAD_BALANCER_FW,
        "filter",
        KUBE_PROXY_FIREWALL,
        KUBE_SOURCE_RANGES_FIREWALL,
        "dst,dst",
        None,
    ),
    SetChain(
        LB_SOURCE_CIDR,
        "filter",
        KUBE_SOURCE_RANGES_FIREWALL,
        "RETURN",
        "dst,dst,src",
        None,
    ),
    SetChain(
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
    for SetChain(name, table, from, to, dims, proto) in SET_CHAINS {
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
    filter.rules.extend(forward_accept_rules(mark));
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
    nat.rules.extend(masquerade_rules(opts));
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
