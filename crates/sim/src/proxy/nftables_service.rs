//! One service port's part of `syncProxyRules` in nftables mode: its map elements, its
//! `service-`/`local-`/`external-`/`firewall-` chains and its `endpoint-` chains.

use super::hash;
use super::model::{categorize_endpoints, Categorized, Endpoint, ServicePort};
use super::net::Cidr;
use super::nftables::{
    Key, Match, NftSet, NftTable, Stmt, CLUSTER_IPS, FIREWALL_IPS, MARK_MASQ,
    NO_ENDPOINT_NODEPORTS, NO_ENDPOINT_SERVICES, REJECT_CHAIN, SERVICE_IPS, SERVICE_NODEPORTS,
};
use super::ProxyInput;

/// The chain names of one service port (`service-`, `local-`, `external-`, `firewall-`).
pub(crate) struct PortChains {
    pub cluster: String,
    pub local: String,
    pub external: String,
    pub firewall: String,
}

pub(crate) fn port_chains(svc: &ServicePort) -> PortChains {
    let n = &svc.name;
    let base = hash::nft_service_port_base(&n.namespace, &n.name, n.protocol.lower(), &n.port);
    PortChains {
        cluster: format!("service-{base}"),
        local: format!("local-{base}"),
        external: format!("external-{base}"),
        firewall: format!("firewall-{base}"),
    }
}

/// `endpoint-…` and `affinity-…` of one endpoint of a service port.
pub(crate) fn endpoint_names(svc: &ServicePort, ep: &Endpoint) -> (String, String) {
    let n = &svc.name;
    let base = hash::nft_endpoint_base(
        &n.namespace,
        &n.name,
        n.protocol.lower(),
        &n.port,
        &ep.to_string(),
    );
    (format!("endpoint-{base}"), format!("affinity-{base}"))
}

/// What upstream's sync loop decides for one service port before writing anything.
struct Plan {
    cat: Categorized,
    names: PortChains,
    uses_cluster: bool,
    uses_local: bool,
    uses_external: bool,
    uses_fw: bool,
    has: bool,
    internal_chain: String,
    has_internal: bool,
    external_policy_chain: String,
    has_external: bool,
}

fn plan(svc: &ServicePort, eps: &[Endpoint]) -> Plan {
    let cat = categorize_endpoints(eps, svc);
    let names = port_chains(svc);
    let has = cat.has_any;
    let local_ok = has && !cat.local.is_empty();
    let (internal_chain, has_internal) = if svc.internal_policy_local {
        (names.local.clone(), local_ok)
    } else {
        (names.cluster.clone(), has)
    };
    let (external_policy_chain, has_external) = if svc.external_policy_local {
        (names.local.clone(), local_ok)
    } else {
        (names.cluster.clone(), has)
    };
    Plan {
        uses_cluster: !cat.cluster.is_empty() && svc.uses_cluster_endpoints(),
        uses_local: !cat.local.is_empty() && svc.uses_local_endpoints(),
        uses_external: has && svc.externally_accessible(),
        uses_fw: !svc.load_balancer_vips.is_empty() && !svc.load_balancer_source_ranges.is_empty(),
        cat,
        names,
        has,
        internal_chain,
        has_internal,
        external_policy_chain,
        has_external,
    }
}

/// Verdicts for traffic the service cannot take (`internalTrafficFilterVerdict` …).
fn filter_verdict(has_endpoints: bool) -> Stmt {
    if has_endpoints {
        Stmt::Drop
    } else {
        Stmt::Goto(REJECT_CHAIN.into())
    }
}

/// Writes one service port into `t`, in upstream's order.
pub(crate) fn write_service(
    t: &mut NftTable,
    input: &ProxyInput,
    svc: &ServicePort,
    eps: &[Endpoint],
) {
    let p = plan(svc, eps);
    for ep in &p.cat.all_reachable {
        t.ensure_chain(&endpoint_names(svc, ep).0);
    }
    for (used, chain) in [
        (p.uses_cluster, &p.names.cluster),
        (p.uses_local, &p.names.local),
        (p.uses_external, &p.names.external),
    ] {
        if used {
            t.ensure_chain(chain);
        }
    }
    write_elements(t, svc, &p);
    if p.has_internal {
        let mut m = vec![Match::Daddr(svc.cluster_ip)];
        if !input.options.masquerade_all {
            match input.cluster_cidr {
                Some(c) => m.push(Match::SaddrNotIn(c)),
                None => m.clear(),
            }
        }
        if !m.is_empty() {
            t.rule(&p.internal_chain, m, Stmt::Jump(MARK_MASQ.into()), None);
        }
    }
    if p.uses_external {
        write_external(t, input, svc, &p);
    }
    if p.uses_fw {
        write_firewall(t, input, svc, &p.names.firewall);
    }
    write_endpoints(t, svc, &p);
}

fn write_elements(t: &mut NftTable, svc: &ServicePort, p: &Plan) {
    let proto = svc.name.protocol;
    let comment = Some(svc.name_string());
    let vip = |ip| Key::IpProtoPort(ip, proto, svc.port);
    let ext = || Some(Stmt::Goto(p.names.external.clone()));
    let refuse = || Some(filter_verdict(p.has));
    t.elem(CLUSTER_IPS, Key::Ip(svc.cluster_ip), None, None);
    if p.has_internal {
        let to = Some(Stmt::Goto(p.internal_chain.clone()));
        t.elem(SERVICE_IPS, vip(svc.cluster_ip), to, None);
    } else {
        t.elem(
            NO_ENDPOINT_SERVICES,
            vip(svc.cluster_ip),
            refuse(),
            comment.clone(),
        );
    }
    for ip in &svc.external_ips {
        if p.has {
            t.elem(SERVICE_IPS, vip(*ip), ext(), None);
        }
        if !p.has_external {
            t.elem(NO_ENDPOINT_SERVICES, vip(*ip), refuse(), comment.clone());
        }
    }
    if p.uses_fw {
        t.ensure_chain(&p.names.firewall);
    }
    for ip in &svc.load_balancer_vips {
        if p.has {
            t.elem(SERVICE_IPS, vip(*ip), ext(), None);
        }
        if p.uses_fw {
            let to = Some(Stmt::Goto(p.names.firewall.clone()));
            t.elem(FIREWALL_IPS, vip(*ip), to, None);
        }
    }
    if !p.has_external {
        for ip in &svc.load_balancer_vips {
            t.elem(NO_ENDPOINT_SERVICES, vip(*ip), refuse(), comment.clone());
        }
    }
    if svc.node_port != 0 {
        let key = Key::ProtoPort(proto, svc.node_port);
        if p.has {
            t.elem(SERVICE_NODEPORTS, key.clone(), ext(), None);
        }
        if !p.has_external {
            t.elem(NO_ENDPOINT_NODEPORTS, key, refuse(), comment);
        }
    }
}

fn write_external(t: &mut NftTable, input: &ProxyInput, svc: &ServicePort, p: &Plan) {
    let ext = &p.names.external;
    let cluster = &p.names.cluster;
    if !svc.external_policy_local {
        t.rule(ext, vec![], Stmt::Jump(MARK_MASQ.into()), None);
    } else {
        if let Some(c) = input.cluster_cidr {
            let m = vec![Match::SaddrIn(c)];
            t.rule(
                ext,
                m,
                Stmt::Goto(cluster.clone()),
                Some("short-circuit pod traffic"),
            );
        }
        let local = || vec![Match::FibSaddrLocal];
        let masq = Stmt::Jump(MARK_MASQ.into());
        t.rule(ext, local(), masq, Some("masquerade local traffic"));
        let to = Stmt::Goto(cluster.clone());
        t.rule(ext, local(), to, Some("short-circuit local traffic"));
    }
    if p.has_external {
        let to = Stmt::Goto(p.external_policy_chain.clone());
        t.rule(ext, vec![], to, None);
    }
}

fn write_firewall(t: &mut NftTable, input: &ProxyInput, svc: &ServicePort, chain: &str) {
    let mut sources = svc.load_balancer_source_ranges.clone();
    if sources.iter().any(|c| c.contains(input.node_ip)) {
        sources.extend(svc.load_balancer_vips.iter().map(|ip| Cidr::host(*ip)));
    }
    t.rule(chain, vec![Match::SaddrNotInAny(sources)], Stmt::Drop, None);
}

/// Affinity sets, the policy chains' dispatch rules, then each endpoint's chain.
fn write_endpoints(t: &mut NftTable, svc: &ServicePort, p: &Plan) {
    let sticky = svc.sticky_max_age_seconds;
    if let Some(secs) = sticky {
        for ep in &p.cat.all_reachable {
            t.sets.push(NftSet {
                name: endpoint_names(svc, ep).1,
                type_: t.family.addr_type().into(),
                is_map: false,
                timeout: Some(secs),
                comment: None,
                elements: Vec::new(),
            });
        }
    }
    if p.uses_cluster {
        write_dispatch(t, svc, &p.names.cluster, &p.cat.cluster);
    }
    if p.uses_local {
        write_dispatch(t, svc, &p.names.local, &p.cat.local);
    }
    let proto = svc.name.protocol;
    for ep in &p.cat.all_reachable {
        let (chain, aff) = endpoint_names(svc, ep);
        t.rule(
            &chain,
            vec![Match::Saddr(ep.ip)],
            Stmt::Jump(MARK_MASQ.into()),
            None,
        );
        if sticky.is_some() {
            t.rule(&chain, vec![], Stmt::Update(aff), None);
        }
        t.rule(&chain, vec![], Stmt::Dnat(proto, ep.ip, ep.port), None);
    }
}

/// `writeServiceToEndpointRules`: affinity gotos, then the numgen vmap.
fn write_dispatch(t: &mut NftTable, svc: &ServicePort, chain: &str, eps: &[Endpoint]) {
    let names: Vec<(String, String)> = eps.iter().map(|e| endpoint_names(svc, e)).collect();
    if svc.sticky_max_age_seconds.is_some() {
        for (ep_chain, aff) in &names {
            let m = vec![Match::SaddrSet(aff.clone())];
            t.rule(chain, m, Stmt::Goto(ep_chain.clone()), None);
        }
    }
    let targets = names.into_iter().map(|(c, _)| c).collect();
    t.rule(chain, vec![], Stmt::Numgen(targets), None);
}
