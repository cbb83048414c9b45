//! kube-proxy's iptables mode: `syncProxyRules` as a pure function, and the node's `iptables-save`.
//!
//! [`iptables_restore`] is exactly what kube-proxy feeds `iptables-restore` (upstream
//! `pkg/proxy/iptables/proxier.go`), laid out in the canonical order upstream's
//! `proxier_test.go` sorts into (Go map order is random; this order is stable).
//! [`iptables_save`] is what `iptables-save` prints on the node afterwards: kube-proxy's
//! chains plus the jump rules it (and kubelet) put in the built-in chains, normalized the
//! way the kernel stores and iptables prints rules.

use std::fmt::Write as _;

use super::model::{self, categorize_endpoints, Endpoint, ProxyModel, ServicePort};
use super::net::{Cidr, LOOPBACK};
use super::node::{forward_accept_rules, localnet_firewall_rule, masquerade_rules};
use super::rules::{probability, Part, Rule, Table, Target};
use super::{node, ProxyInput, ProxyMode};

pub(crate) const KUBE_SERVICES: &str = "KUBE-SERVICES";
pub(crate) const KUBE_EXTERNAL_SERVICES: &str = "KUBE-EXTERNAL-SERVICES";
pub(crate) const KUBE_NODEPORTS: &str = "KUBE-NODEPORTS";
pub(crate) const KUBE_POSTROUTING: &str = "KUBE-POSTROUTING";
pub(crate) const KUBE_MARK_MASQ: &str = "KUBE-MARK-MASQ";
pub(crate) const KUBE_FORWARD: &str = "KUBE-FORWARD";
pub(crate) const KUBE_PROXY_FIREWALL: &str = "KUBE-PROXY-FIREWALL";
pub(crate) const KUBE_PROXY_CANARY: &str = "KUBE-PROXY-CANARY";
pub(crate) const KUBE_FIREWALL: &str = "KUBE-FIREWALL";

/// `largeClusterEndpointsThreshold`: above this many endpoints, SEP comments are dropped.
pub const LARGE_CLUSTER_ENDPOINTS_THRESHOLD: usize = 1000;

const NFACCT_CT_INVALID: &str = "ct_state_invalid_dropped_pkts";
const NFACCT_LOCALHOST_NP: &str = "localhost_nps_accepted_pkts";
const NODEPORTS_COMMENT: &str =
    "kubernetes service nodeports; NOTE: this must be the last rule in this chain";

/// kube-proxy's restore input: the filter and nat tables it owns.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Ruleset {
    pub filter: Table,
    pub nat: Table,
}

pub(crate) fn comment(text: String) -> Part {
    Part::Comment { text, quoted: true }
}

fn bare_comment(text: String) -> Part {
    Part::Comment {
        text,
        quoted: false,
    }
}

fn dst_ip(ip: std::net::Ipv4Addr) -> Part {
    Part::Dst {
        not: false,
        text: ip.to_string(),
        cidr: Cidr::host(ip),
    }
}

pub(crate) fn cidr_part(c: Cidr, src: bool, not: bool) -> Part {
    let text = c.to_string();
    if src {
        Part::Src { not, text, cidr: c }
    } else {
        Part::Dst { not, text, cidr: c }
    }
}

/// `syncProxyRules` for iptables mode: the rules kube-proxy restores on this node.
pub(crate) fn kube_proxy_rules(input: &ProxyInput, model: &ProxyModel) -> Ruleset {
    let opts = &input.options;
    let mark = opts.masquerade_mark();
    let mut filter = Table::default();
    let mut nat = Table::default();
    for c in [
        KUBE_SERVICES,
        KUBE_EXTERNAL_SERVICES,
        KUBE_FORWARD,
        KUBE_NODEPORTS,
        KUBE_PROXY_FIREWALL,
    ] {
        filter.chain(c);
    }
    for c in [
        KUBE_SERVICES,
        KUBE_NODEPORTS,
        KUBE_POSTROUTING,
        KUBE_MARK_MASQ,
    ] {
        nat.chain(c);
    }
    let rule = |chain: &str, parts: Vec<Part>, target: Target| Rule::new(chain, parts, target);

    nat.rules.extend(masquerade_rules(opts));

    if opts.localhost_nodeports {
        // The route_localnet hole mitigation (kubelet keeps an identical copy).
        filter.chain(KUBE_FIREWALL);
        filter.rules.push(localnet_firewall_rule());
    }

    let total_endpoints: usize = model
        .ports
        .iter()
        .map(|p| model.endpoints_of(&p.name).len())
        .sum();
    let large_cluster = total_endpoints > LARGE_CLUSTER_ENDPOINTS_THRESHOLD;
    let local_detector = input.cluster_cidr;

    for svc in &model.ports {
        write_service(
            input,
            svc,
            model.endpoints_of(&svc.name),
            large_cluster,
            local_detector,
            &mut filter,
            &mut nat,
        );
    }

    // The tail call to KUBE-NODEPORTS (nodePortAddresses unset: every local address).
    let mut parts = vec![
        comment(NODEPORTS_COMMENT.into()),
        Part::AddrType {
            src: false,
            not: false,
        },
    ];
    if !opts.localhost_nodeports {
        parts.push(cidr_part(LOOPBACK, false, true));
    }
    nat.rules.push(rule(
        KUBE_SERVICES,
        parts,
        Target::Jump(KUBE_NODEPORTS.into()),
    ));

    if !opts.conntrack_tcp_be_liberal {
        let mut parts = vec![Part::Conntrack {
            not: false,
            states: "INVALID",
        }];
        if opts.nfacct {
            parts.push(Part::Nfacct(NFACCT_CT_INVALID));
        }
        filter.rules.push(rule(KUBE_FORWARD, parts, Target::Drop));
    }
    filter.rules.extend(forward_accept_rules(mark));
    Ruleset { filter, nat }
}

/// The per-service-port body of `syncProxyRules`.
#[allow(clippy::too_many_arguments)]
fn write_service(
    input: &ProxyInput,
    svc: &ServicePort,
    endpoints: &[Endpoint],
    large_cluster: bool,
    local_detector: Option<Cidr>,
    filter: &mut Table,
    nat: &mut Table,
) {
    let opts = &input.options;
    let proto = svc.name.protocol;
    let name = svc.name_string();
    let cat = categorize_endpoints(endpoints, svc);

    let cluster_chain = svc.cluster_chain();
    let uses_cluster_chain = !cat.cluster.is_empty() && svc.uses_cluster_endpoints();
    let local_chain = svc.local_chain();
    let uses_local_chain = !cat.local.is_empty() && svc.uses_local_endpoints();

    let has_endpoints = cat.has_any;
    let (internal_chain, has_internal) = if svc.internal_policy_local {
        (local_chain.clone(), has_endpoints && !cat.local.is_empty())
    } else {
        (cluster_chain.clone(), has_endpoints)
    };
    let (external_policy_chain, has_external) = if svc.external_policy_local {
        (local_chain.clone(), has_endpoints && !cat.local.is_empty())
    } else {
        (cluster_chain.clone(), has_endpoints)
    };
    let ext_chain = svc.external_chain();
    let uses_ext_chain = has_endpoints && svc.externally_accessible();
    let fw_chain = svc.firewall_chain();
    let uses_fw_chain = has_endpoints
        && !svc.load_balancer_vips.is_empty()
        && !svc.load_balancer_source_ranges.is_empty();
    let lb_chain = if uses_fw_chain {
        fw_chain.clone()
    } else {
        ext_chain.clone()
    };

    let (internal_filter, external_filter) = if !has_endpoints {
        let c = format!("{name} has no endpoints");
        ((Target::Reject, c.clone()), (Target::Reject, c))
    } else {
        let c = format!("{name} has no local endpoints");
        ((Target::Drop, c.clone()), (Target::Drop, c))
    };

    let vip_parts = |text: String, ip, port: u16| {
        vec![
            comment(text),
            Part::Proto(proto),
            dst_ip(ip),
            Part::DPort(port),
        ]
    };

    // Capture the clusterIP.
    if has_internal {
        nat.rules.push(Rule::new(
            KUBE_SERVICES,
            vip_parts(format!("{name} cluster IP"), svc.cluster_ip, svc.port),
            Target::Jump(internal_chain.clone()),
        ));
    } else {
        filter.rules.push(Rule::new(
            KUBE_SERVICES,
            vip_parts(internal_filter.1.clone(), svc.cluster_ip, svc.port),
            internal_filter.0.clone(),
        ));
    }
    // Capture externalIPs.
    for ip in &svc.external_ips {
        if has_endpoints {
            nat.rules.push(Rule::new(
                KUBE_SERVICES,
                vip_parts(format!("{name} external IP"), *ip, svc.port),
                Target::Jump(ext_chain.clone()),
            ));
        }
        if !has_external {
            filter.rules.push(Rule::new(
                KUBE_EXTERNAL_SERVICES,
                vip_parts(external_filter.1.clone(), *ip, svc.port),
                external_filter.0.clone(),
            ));
        }
    }
    // Capture load-balancer ingress.
    for ip in &svc.load_balancer_vips {
        if has_endpoints {
            nat.rules.push(Rule::new(
                KUBE_SERVICES,
                vip_parts(format!("{name} loadbalancer IP"), *ip, svc.port),
                Target::Jump(lb_chain.clone()),
            ));
        }
        if uses_fw_chain {
            filter.rules.push(Rule::new(
                KUBE_PROXY_FIREWALL,
                vip_parts(
                    format!("{name} traffic not accepted by {fw_chain}"),
                    *ip,
                    svc.port,
                ),
                Target::Drop,
            ));
        }
    }
    if !has_external {
        for ip in &svc.load_balancer_vips {
            filter.rules.push(Rule::new(
                KUBE_EXTERNAL_SERVICES,
                vip_parts(external_filter.1.clone(), *ip, svc.port),
                external_filter.0.clone(),
            ));
        }
    }
    // Capture nodeports.
    if svc.node_port != 0 {
        if has_endpoints {
            if opts.localhost_nodeports && opts.nfacct {
                nat.rules.push(Rule::new(
                    KUBE_NODEPORTS,
                    vec![
                        bare_comment(name.clone()),
                        Part::Proto(proto),
                        cidr_part(LOOPBACK, false, false),
                        Part::DPort(svc.node_port),
                        Part::Nfacct(NFACCT_LOCALHOST_NP),
                    ],
                    Target::Jump(ext_chain.clone()),
                ));
            }
            nat.rules.push(Rule::new(
                KUBE_NODEPORTS,
                vec![
                    bare_comment(name.clone()),
                    Part::Proto(proto),
                    Part::DPort(svc.node_port),
                ],
                Target::Jump(ext_chain.clone()),
            ));
        }
        if !has_external {
            filter.rules.push(Rule::new(
                KUBE_EXTERNAL_SERVICES,
                vec![
                    comment(external_filter.1.clone()),
                    Part::AddrType {
                        src: false,
                        not: false,
                    },
                    Part::Proto(proto),
                    Part::DPort(svc.node_port),
                ],
                external_filter.0.clone(),
            ));
        }
    }
    // Capture healthCheckNodePorts.
    if svc.health_check_node_port != 0 {
        filter.rules.push(Rule::new(
            KUBE_NODEPORTS,
            vec![
                comment(format!("{name} health check node port")),
                Part::Proto(model::Protocol::Tcp),
                Part::DPort(svc.health_check_node_port),
            ],
            Target::Accept,
        ));
    }

    // Internal traffic handling: masquerade off-cluster sources.
    if has_internal {
        let mut parts = vip_parts(format!("{name} cluster IP"), svc.cluster_ip, svc.port);
        if opts.masquerade_all {
            nat.rules.push(Rule::new(
                &internal_chain,
                parts,
                Target::Jump(KUBE_MARK_MASQ.into()),
            ));
        } else if let Some(cidr) = local_detector {
            parts.push(cidr_part(cidr, true, true));
            nat.rules.push(Rule::new(
                &internal_chain,
                parts,
                Target::Jump(KUBE_MARK_MASQ.into()),
            ));
        }
    }

    // External traffic handling.
    if uses_ext_chain {
        nat.chain(&ext_chain);
        if !svc.external_policy_local {
            nat.rules.push(Rule::new(
                &ext_chain,
                vec![comment(format!(
                    "masquerade traffic for {name} external destinations"
                ))],
                Target::Jump(KUBE_MARK_MASQ.into()),
            ));
        } else {
            if let Some(cidr) = local_detector {
                nat.rules.push(Rule::new(
                    &ext_chain,
                    vec![
                        comment(format!("pod traffic for {name} external destinations")),
                        cidr_part(cidr, true, false),
                    ],
                    Target::Jump(cluster_chain.clone()),
                ));
            }
            nat.rules.push(Rule::new(
                &ext_chain,
                vec![
                    comment(format!(
                        "masquerade LOCAL traffic for {name} external destinations"
                    )),
                    Part::AddrType {
                        src: true,
                        not: false,
                    },
                ],
                Target::Jump(KUBE_MARK_MASQ.into()),
            ));
            nat.rules.push(Rule::new(
                &ext_chain,
                vec![
                    comment(format!(
                        "route LOCAL traffic for {name} external destinations"
                    )),
                    Part::AddrType {
                        src: true,
                        not: false,
                    },
                ],
                Target::Jump(cluster_chain.clone()),
            ));
        }
        if has_external {
            nat.rules.push(Rule::new(
                &ext_chain,
                vec![],
                Target::Jump(external_policy_chain.clone()),
            ));
        }
    }

    // Firewall chain for loadBalancerSourceRanges.
    if uses_fw_chain {
        nat.chain(&fw_chain);
        let head = || comment(format!("{name} loadbalancer IP"));
        let mut allow_from_node = false;
        for cidr in &svc.load_balancer_source_ranges {
            nat.rules.push(Rule::new(
                &fw_chain,
                vec![head(), cidr_part(*cidr, true, false)],
                Target::Jump(ext_chain.clone()),
            ));
            allow_from_node |= cidr.contains(input.node_ip);
        }
        if allow_from_node {
            for ip in &svc.load_balancer_vips {
                nat.rules.push(Rule::new(
                    &fw_chain,
                    vec![
                        head(),
                        Part::Src {
                            not: false,
                            text: ip.to_string(),
                            cidr: Cidr::host(*ip),
                        },
                    ],
                    Target::Jump(ext_chain.clone()),
                ));
            }
        }
        nat.rules.push(Rule::new(
            &fw_chain,
            vec![comment(format!(
                "other traffic to {name} will be dropped by KUBE-PROXY-FIREWALL"
            ))],
            Target::None,
        ));
    }

    if uses_cluster_chain {
        nat.chain(&cluster_chain);
        write_service_to_endpoint_rules(
            nat,
            &name,
            svc,
            &cluster_chain,
            &cat.cluster,
            large_cluster,
        );
    }
    if uses_local_chain {
        nat.chain(&local_chain);
        write_service_to_endpoint_rules(nat, &name, svc, &local_chain, &cat.local, large_cluster);
    }

    // Per-endpoint chains.
    for ep in &cat.all_reachable {
        nat.chain(&ep.chain);
        let head = || {
            if large_cluster {
                vec![]
            } else {
                vec![bare_comment(name.clone())]
            }
        };
        let mut parts = head();
        parts.push(Part::Src {
            not: false,
            text: ep.ip.to_string(),
            cidr: Cidr::host(ep.ip),
        });
        nat.rules.push(Rule::new(
            &ep.chain,
            parts,
            Target::Jump(KUBE_MARK_MASQ.into()),
        ));
        let mut parts = head();
        if svc.sticky_max_age_seconds.is_some() {
            parts.push(Part::RecentSet(ep.chain.clone()));
        }
        parts.push(Part::Proto(proto));
        nat.rules
            .push(Rule::new(&ep.chain, parts, Target::Dnat(ep.to_string())));
    }
}

/// `writeServiceToEndpointRules`: affinity checks first, then one probabilistic rule per
/// endpoint (`1/(n-i)`), the last without a probability.
fn write_service_to_endpoint_rules(
    nat: &mut Table,
    name: &str,
    svc: &ServicePort,
    chain: &str,
    endpoints: &[Endpoint],
    large_cluster: bool,
) {
    let head = |ep: &Endpoint| {
        if large_cluster {
            vec![]
        } else {
            vec![comment(format!("{name} -> {ep}"))]
        }
    };
    if let Some(seconds) = svc.sticky_max_age_seconds {
        for ep in endpoints {
            let mut parts = head(ep);
            parts.push(Part::RecentCheck {
                name: ep.chain.clone(),
                seconds,
            });
            nat.rules
                .push(Rule::new(chain, parts, Target::Jump(ep.chain.clone())));
        }
    }
    let n = endpoints.len();
    for (i, ep) in endpoints.iter().enumerate() {
        let mut parts = head(ep);
        if i + 1 < n {
            parts.push(Part::Statistic(probability(n - i)));
        }
        nat.rules
            .push(Rule::new(chain, parts, Target::Jump(ep.chain.clone())));
    }
}

/// Orders a table as upstream's `sortIPTablesRules` does: KUBE-NODEPORTS, KUBE-SERVICES,
/// then the other chains by name; rules grouped by chain, keeping their relative order.
fn canonical(table: &Table) -> Table {
    let mut chains = table.chains.clone();
    let rank = |c: &str| match c {
        KUBE_NODEPORTS => 0,
        KUBE_SERVICES => 1,
        _ => 2,
    };
    chains.sort_by(|a, b| (rank(a), a).cmp(&(rank(b), b)));
    let rules = chains
        .iter()
        .flat_map(|c| table.rules_of(c).cloned().collect::<Vec<_>>())
        .collect();
    Table { chains, rules }
}

/// kube-proxy's `iptables-restore` input for this node (iptables mode), with the masquerade
/// mark spelled as kube-proxy spells it (`%#08x`: `0x00004000`).
pub fn iptables_restore(input: &ProxyInput) -> String {
    let model = model::build(input.services, input.slices, &input.node_name);
    let rs = kube_proxy_rules(input, &model);
    let mut out = String::new();
    for (name, table) in [
        ("filter", canonical(&rs.filter)),
        ("nat", canonical(&rs.nat)),
    ] {
        let _ = writeln!(out, "*{name}");
        for c in &table.chains {
            let _ = writeln!(out, ":{c} - [0:0]");
        }
        for r in &table.rules {
            let _ = writeln!(out, "{}", r.restore_line());
        }
        out.push_str("COMMIT\n");
    }
    let mark = input.options.masquerade_mark();
    out.replace(&format!("{mark:#x}"), &format!("0x{mark:08x}"))
}

/// What `iptables-save` prints on this node: mangle, filter and nat, each between its
/// `# Generated by` / `# Completed on` lines. In IPVS mode, the IPVS proxier's rules; in
/// nftables mode only kubelet's (kube-proxy's rules are in `nft list ruleset`).
pub fn iptables_save(input: &ProxyInput) -> String {
    let model = model::build(input.services, input.slices, &input.node_name);
    match input.mode {
        ProxyMode::Iptables => {
            let t = node::node_tables(input, &model);
            node::render_save(&[&t.mangle, &t.filter, &t.nat], input.now)
        }
        ProxyMode::Ipvs => {
            let t = super::ipvs::node_tables(input, &model);
            node::render_save(&[&t.mangle, &t.filter, &t.nat], input.now)
        }
        ProxyMode::Nftables => {
            let t = node::kubelet_tables();
            node::render_save(&[&t.mangle, &t.filter, &t.nat], input.now)
        }
    }
}
