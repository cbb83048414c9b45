//! kube-proxy's nftables mode: `syncProxyRules` as a pure function, and `nft list ruleset`.
//!
//! Follows upstream v1.35 `pkg/proxy/nftables/proxier.go`: one `kube-proxy` table per IP
//! family, base chains `filter-prerouting-pre-dnat`/`filter-output-pre-dnat` (priority
//! dstnat - 10), `filter-input`/`filter-forward`/`filter-output` (priority filter),
//! `nat-prerouting`/`nat-output` (dstnat) and `nat-postrouting` (srcnat); service dispatch
//! through the `service-ips` / `service-nodeports` verdict maps, `numgen random mod N`
//! to pick an endpoint, `@no-endpoint-*` maps to reject, `@cluster-ips` to reject unknown
//! ports. Rules are kept as structured values ([`Match`], [`Stmt`]) so the packet walk
//! evaluates exactly what [`nft_list_ruleset`] prints.

use std::net::Ipv4Addr;

use super::hash;
use super::model::{self, categorize_endpoints, Endpoint, Protocol, ProxyModel, ServicePort};
use super::net::Cidr;
use super::ProxyInput;

pub use super::nftables_list::{nft_list_ruleset, nft_list_table};

/// The table's name in both families.
pub const TABLE: &str = "kube-proxy";
pub(crate) const SERVICES: &str = "services";
pub(crate) const SERVICE_IPS: &str = "service-ips";
pub(crate) const SERVICE_NODEPORTS: &str = "service-nodeports";
pub(crate) const NODEPORT_IPS: &str = "nodeport-ips";
pub(crate) const CLUSTER_IPS: &str = "cluster-ips";
pub(crate) const SERVICE_ENDPOINTS_CHECK: &str = "service-endpoints-check";
pub(crate) const NODEPORT_ENDPOINTS_CHECK: &str = "nodeport-endpoints-check";
pub(crate) const NO_ENDPOINT_SERVICES: &str = "no-endpoint-services";
pub(crate) const NO_ENDPOINT_NODEPORTS: &str = "no-endpoint-nodeports";
pub(crate) const REJECT_CHAIN: &str = "reject-chain";
pub(crate) const CLUSTER_IPS_CHECK: &str = "cluster-ips-check";
pub(crate) const FIREWALL_IPS: &str = "firewall-ips";
pub(crate) const FIREWALL_CHECK: &str = "firewall-check";
pub(crate) const MARK_MASQ: &str = "mark-for-masquerade";
pub(crate) const MASQUERADING: &str = "masquerading";

/// The table's address family.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Family {
    /// `table ip kube-proxy`.
    Ip,
    /// `table ip6 kube-proxy`.
    Ip6,
}

impl Family {
    /// `ip` / `ip6`, as nft spells the family and the address match.
    pub fn as_str(self) -> &'static str {
        match self {
            Family::Ip => "ip",
            Family::Ip6 => "ip6",
        }
    }

    pub(crate) fn addr_type(self) -> &'static str {
        match self {
            Family::Ip => "ipv4_addr",
            Family::Ip6 => "ipv6_addr",
        }
    }
}

/// One key of a set or map element.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Key {
    /// `10.96.0.10`
    Ip(Ipv4Addr),
    /// `10.96.0.10 . tcp . 53`
    IpProtoPort(Ipv4Addr, Protocol, u16),
    /// `tcp . 30080`
    ProtoPort(Protocol, u16),
}

/// A verdict stored in a verdict map, or a rule's final statement.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Stmt {
    /// `jump CHAIN`
    Jump(String),
    /// `goto CHAIN`
    Goto(String),
    /// `drop`
    Drop,
    /// `reject`
    Reject,
    /// `return`
    Return,
    /// `ip daddr . meta l4proto . th dport vmap @MAP`
    VmapAddr(String),
    /// `meta l4proto . th dport vmap @MAP`
    VmapPort(String),
    /// `numgen random mod N vmap { 0 : goto A, 1 : goto B }`
    Numgen(Vec<String>),
    /// `meta l4proto tcp dnat to IP:PORT`
    Dnat(Protocol, Ipv4Addr, u16),
    /// `meta mark set meta mark | MARK`
    MarkOr(u32),
    /// `meta mark set meta mark ^ MARK`
    MarkXor(u32),
    /// `masquerade fully-random`
    Masquerade,
    /// `update @SET { ip saddr }`
    Update(String),
}

/// A rule's matches, all of which must hold.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Match {
    /// `ct state new`
    CtStateNew,
    /// `ip daddr IP`
    Daddr(Ipv4Addr),
    /// `ip saddr IP`
    Saddr(Ipv4Addr),
    /// `ip saddr CIDR` (the local-traffic detector's "is local")
    SaddrIn(Cidr),
    /// `ip saddr != CIDR` (the detector's "is not local")
    SaddrNotIn(Cidr),
    /// `ip saddr != { CIDR, … }` (loadBalancerSourceRanges)
    SaddrNotInAny(Vec<Cidr>),
    /// `ip daddr CIDR` (the service CIDRs)
    DaddrIn(Cidr),
    /// `ip daddr @SET`
    DaddrSet(String),
    /// `ip saddr @SET` (an affinity set)
    SaddrSet(String),
    /// `fib saddr type local`
    FibSaddrLocal,
    /// `meta mark & MARK == 0x00000000`
    MarkClear(u32),
}

/// One rule: matches, then a statement, then an optional comment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct NftRule {
    pub matches: Vec<Match>,
    pub stmt: Stmt,
    pub comment: Option<String>,
}

/// A base chain's hook: `type filter hook input priority filter; policy accept;`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Hook {
    pub kind: &'static str,
    pub hook: &'static str,
    pub priority: i32,
}

/// A chain and its rules.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct NftChain {
    pub name: String,
    pub hook: Option<Hook>,
    pub comment: Option<&'static str>,
    pub rules: Vec<NftRule>,
}

/// One element: a key, a verdict (maps only) and kube-proxy's comment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Elem {
    pub key: Key,
    pub value: Option<Stmt>,
    pub comment: Option<String>,
}

/// A named set or verdict map.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct NftSet {
    pub name: String,
    /// `ipv4_addr . inet_proto . inet_service : verdict` for maps.
    pub type_: String,
    pub is_map: bool,
    /// `Some(seconds)` for the affinity sets (`flags dynamic,timeout`).
    pub timeout: Option<u32>,
    pub comment: Option<&'static str>,
    pub elements: Vec<Elem>,
}

/// One `table <family> kube-proxy`, in the order nft lists it (creation order).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NftTable {
    pub(crate) family: Family,
    pub(crate) sets: Vec<NftSet>,
    pub(crate) chains: Vec<NftChain>,
}

impl NftTable {
    pub(crate) fn chain(&self, name: &str) -> Option<&NftChain> {
        self.chains.iter().find(|c| c.name == name)
    }

    pub(crate) fn set(&self, name: &str) -> Option<&NftSet> {
        self.sets.iter().find(|s| s.name == name)
    }

    fn set_mut(&mut self, name: &str) -> &mut NftSet {
        let i = self.sets.iter().position(|s| s.name == name);
        match i {
            Some(i) => &mut self.sets[i],
            None => unreachable_set(self, name),
        }
    }

    fn ensure_chain(&mut self, name: &str) -> &mut NftChain {
        let i = match self.chains.iter().position(|c| c.name == name) {
            Some(i) => i,
            None => {
                self.chains.push(NftChain {
                    name: name.to_string(),
                    hook: None,
                    comment: None,
                    rules: Vec::new(),
                });
                self.chains.len() - 1
            }
        };
        &mut self.chains[i]
    }

    fn rule(&mut self, chain: &str, matches: Vec<Match>, stmt: Stmt, comment: Option<&str>) {
        self.ensure_chain(chain).rules.push(NftRule {
            matches,
            stmt,
            comment: comment.map(str::to_string),
        });
    }

    fn elem(&mut self, set: &str, key: Key, value: Option<Stmt>, comment: Option<String>) {
        let s = self.set_mut(set);
        if !s.elements.iter().any(|e| e.key == key) {
            s.elements.push(Elem {
                key,
                value,
                comment,
            });
        }
    }
}

/// Every set this module adds is declared in `setup`; asking for another is a bug here.
fn unreachable_set<'a>(t: &'a mut NftTable, name: &str) -> &'a mut NftSet {
    t.sets.push(NftSet {
        name: name.to_string(),
        type_: t.family.addr_type().to_string(),
        is_map: false,
        timeout: None,
        comment: None,
        elements: Vec::new(),
    });
    let last = t.sets.len() - 1;
    &mut t.sets[last]
}

/// `priority dstnat - 10`, `filter`, `dstnat`, `srcnat`.
const PRE_DNAT: i32 = -110;
const BASE_CHAINS: [(&str, Hook); 8] = [
    (
        "filter-prerouting-pre-dnat",
        hook("filter", "prerouting", PRE_DNAT),
    ),
    ("filter-output-pre-dnat", hook("filter", "output", PRE_DNAT)),
    ("filter-input", hook("filter", "input", 0)),
    ("filter-forward", hook("filter", "forward", 0)),
    ("filter-output", hook("filter", "output", 0)),
    ("nat-prerouting", hook("nat", "prerouting", -100)),
    ("nat-output", hook("nat", "output", -100)),
    ("nat-postrouting", hook("nat", "postrouting", 100)),
];

const fn hook(kind: &'static str, hook: &'static str, priority: i32) -> Hook {
    Hook {
        kind,
        hook,
        priority,
    }
}

/// `nftablesJumpChains`: (destination, source, `ct state new`?).
const JUMP_CHAINS: [(&str, &str, bool); 11] = [
    (NODEPORT_ENDPOINTS_CHECK, "filter-input", true),
    (SERVICE_ENDPOINTS_CHECK, "filter-input", true),
    (SERVICE_ENDPOINTS_CHECK, "filter-forward", true),
    (SERVICE_ENDPOINTS_CHECK, "filter-output", true),
    (FIREWALL_CHECK, "filter-prerouting-pre-dnat", true),
    (FIREWALL_CHECK, "filter-output-pre-dnat", true),
    (SERVICES, "nat-output", false),
    (SERVICES, "nat-prerouting", false),
    (MASQUERADING, "nat-postrouting", false),
    (CLUSTER_IPS_CHECK, "filter-forward", true),
    (CLUSTER_IPS_CHECK, "filter-output", true),
];

/// The service CIDRs of the cluster's default ServiceCIDR (the `cluster-ips-check` drop).
fn service_cidr() -> Option<Cidr> {
    Cidr::parse(crate::cluster::SERVICE_CIDR)
}

fn set(name: &str, type_: String, is_map: bool, comment: &'static str) -> NftSet {
    NftSet {
        name: name.to_string(),
        type_,
        is_map,
        timeout: None,
        comment: Some(comment),
        elements: Vec::new(),
    }
}

/// `setupNFTables`: the table skeleton (nodePortAddresses `primary`, the nftables default).
fn setup(family: Family, node_ip: Option<Ipv4Addr>, mark: u32) -> NftTable {
    let a = family.addr_type();
    let mut t = NftTable {
        family,
        sets: vec![
            set(CLUSTER_IPS, a.into(), false, "Active ClusterIPs"),
            set(
                NODEPORT_IPS,
                a.into(),
                false,
                "IPs that accept NodePort traffic",
            ),
            set(
                NO_ENDPOINT_SERVICES,
                format!("{a} . inet_proto . inet_service : verdict"),
                true,
                "vmap to drop or reject packets to services with no endpoints",
            ),
            set(
                NO_ENDPOINT_NODEPORTS,
                "inet_proto . inet_service : verdict".into(),
                true,
                "vmap to drop or reject packets to service nodeports with no endpoints",
            ),
            set(
                FIREWALL_IPS,
                format!("{a} . inet_proto . inet_service : verdict"),
                true,
                "destinations that are subject to LoadBalancerSourceRanges",
            ),
            set(
                SERVICE_IPS,
                format!("{a} . inet_proto . inet_service : verdict"),
                true,
                "ClusterIP, ExternalIP and LoadBalancer IP traffic",
            ),
            set(
                SERVICE_NODEPORTS,
                "inet_proto . inet_service : verdict".into(),
                true,
                "NodePort traffic",
            ),
        ],
        chains: Vec::new(),
    };
    for (name, h) in BASE_CHAINS {
        t.ensure_chain(name).hook = Some(h);
    }
    for (dst, src, new) in JUMP_CHAINS {
        t.ensure_chain(dst);
        let m = if new { vec![Match::CtStateNew] } else { vec![] };
        t.rule(src, m, Stmt::Jump(dst.into()), None);
    }
    t.ensure_chain(MARK_MASQ);
    t.rule(MARK_MASQ, vec![], Stmt::MarkOr(mark), None);
    t.rule(
        MASQUERADING,
        vec![Match::MarkClear(mark)],
        Stmt::Return,
        None,
    );
    t.rule(MASQUERADING, vec![], Stmt::MarkXor(mark), None);
    t.rule(MASQUERADING, vec![], Stmt::Masquerade, None);
    t.rule(
        CLUSTER_IPS_CHECK,
        vec![Match::DaddrSet(CLUSTER_IPS.into())],
        Stmt::Reject,
        Some("Reject traffic to invalid ports of ClusterIPs"),
    );
    if let (Family::Ip, Some(cidr)) = (family, service_cidr()) {
        t.rule(
            CLUSTER_IPS_CHECK,
            vec![Match::DaddrIn(cidr)],
            Stmt::Drop,
            Some("Drop traffic to unallocated ClusterIPs"),
        );
    }
    if let Some(ip) = node_ip {
        t.elem(NODEPORT_IPS, Key::Ip(ip), None, None);
    }
    t.ensure_chain(REJECT_CHAIN).comment =
        Some("helper for @no-endpoint-services / @no-endpoint-nodeports");
    t.rule(REJECT_CHAIN, vec![], Stmt::Reject, None);
    t.rule(
        SERVICE_ENDPOINTS_CHECK,
        vec![],
        Stmt::VmapAddr(NO_ENDPOINT_SERVICES.into()),
        None,
    );
    t.rule(
        NODEPORT_ENDPOINTS_CHECK,
        vec![Match::DaddrSet(NODEPORT_IPS.into())],
        Stmt::VmapPort(NO_ENDPOINT_NODEPORTS.into()),
        None,
    );
    t.rule(
        FIREWALL_CHECK,
        vec![],
        Stmt::VmapAddr(FIREWALL_IPS.into()),
        None,
    );
    t.rule(SERVICES, vec![], Stmt::VmapAddr(SERVICE_IPS.into()), None);
    t.rule(
        SERVICES,
        vec![Match::DaddrSet(NODEPORT_IPS.into())],
        Stmt::VmapPort(SERVICE_NODEPORTS.into()),
        None,
    );
    t
}

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

/// The `table ip kube-proxy` kube-proxy on this node writes.
pub fn kube_proxy_table(input: &ProxyInput) -> NftTable {
    let model = model::build(input.services, input.slices, &input.node_name);
    build_table(input, &model)
}

/// The `table ip6 kube-proxy` of a single-stack IPv4 cluster: the skeleton, no services.
pub fn kube_proxy_table_v6(input: &ProxyInput) -> NftTable {
    setup(Family::Ip6, None, input.options.masquerade_mark())
}

pub(crate) fn build_table(input: &ProxyInput, model: &ProxyModel) -> NftTable {
    let mark = input.options.masquerade_mark();
    let mut t = setup(Family::Ip, Some(input.node_ip), mark);
    for svc in &model.ports {
        write_service(&mut t, input, svc, model.endpoints_of(&svc.name));
    }
    t
}

/// Verdicts for traffic the service cannot take (`internalTrafficFilterVerdict` …).
fn filter_verdict(has_endpoints: bool) -> Stmt {
    if has_endpoints {
        Stmt::Drop
    } else {
        Stmt::Goto(REJECT_CHAIN.into())
    }
}

fn write_service(t: &mut NftTable, input: &ProxyInput, svc: &ServicePort, eps: &[Endpoint]) {
    let cat = categorize_endpoints(eps, svc);
    let names = port_chains(svc);
    let proto = svc.name.protocol;
    let comment = Some(svc.name_string());
    let sticky = svc.sticky_max_age_seconds;
    for ep in &cat.all_reachable {
        t.ensure_chain(&endpoint_names(svc, ep).0);
    }
    let uses_cluster = !cat.cluster.is_empty() && svc.uses_cluster_endpoints();
    let uses_local = !cat.local.is_empty() && svc.uses_local_endpoints();
    if uses_cluster {
        t.ensure_chain(&names.cluster);
    }
    if uses_local {
        t.ensure_chain(&names.local);
    }
    let has = cat.has_any;
    let (internal_chain, has_internal) = if svc.internal_policy_local {
        (&names.local, has && !cat.local.is_empty())
    } else {
        (&names.cluster, has)
    };
    let (external_policy_chain, has_external) = if svc.external_policy_local {
        (&names.local, has && !cat.local.is_empty())
    } else {
        (&names.cluster, has)
    };
    let uses_external = has && svc.externally_accessible();
    if uses_external {
        t.ensure_chain(&names.external);
    }
    let ext_goto = || Some(Stmt::Goto(names.external.clone()));

    t.elem(CLUSTER_IPS, Key::Ip(svc.cluster_ip), None, None);
    let vip = |ip| Key::IpProtoPort(ip, proto, svc.port);
    if has_internal {
        t.elem(
            SERVICE_IPS,
            vip(svc.cluster_ip),
            Some(Stmt::Goto(internal_chain.clone())),
            None,
        );
    } else {
        t.elem(
            NO_ENDPOINT_SERVICES,
            vip(svc.cluster_ip),
            Some(filter_verdict(has)),
            comment.clone(),
        );
    }
    for ip in &svc.external_ips {
        if has {
            t.elem(SERVICE_IPS, vip(*ip), ext_goto(), None);
        }
        if !has_external {
            t.elem(
                NO_ENDPOINT_SERVICES,
                vip(*ip),
                Some(filter_verdict(has)),
                comment.clone(),
            );
        }
    }
    let uses_fw = !svc.load_balancer_vips.is_empty() && !svc.load_balancer_source_ranges.is_empty();
    if uses_fw {
        t.ensure_chain(&names.firewall);
    }
    for ip in &svc.load_balancer_vips {
        if has {
            t.elem(SERVICE_IPS, vip(*ip), ext_goto(), None);
        }
        if uses_fw {
            t.elem(
                FIREWALL_IPS,
                vip(*ip),
                Some(Stmt::Goto(names.firewall.clone())),
                None,
            );
        }
    }
    if !has_external {
        for ip in &svc.load_balancer_vips {
            t.elem(
                NO_ENDPOINT_SERVICES,
                vip(*ip),
                Some(filter_verdict(has)),
                comment.clone(),
            );
        }
    }
    if svc.node_port != 0 {
        let key = Key::ProtoPort(proto, svc.node_port);
        if has {
            t.elem(SERVICE_NODEPORTS, key.clone(), ext_goto(), None);
        }
        if !has_external {
            t.elem(
                NO_ENDPOINT_NODEPORTS,
                key,
                Some(filter_verdict(has)),
                comment.clone(),
            );
        }
    }

    if has_internal {
        let m = |extra: Vec<Match>| {
            let mut v = vec![Match::Daddr(svc.cluster_ip)];
            v.extend(extra);
            v
        };
        if input.options.masquerade_all {
            t.rule(
                internal_chain,
                m(vec![]),
                Stmt::Jump(MARK_MASQ.into()),
                None,
            );
        } else if let Some(c) = input.cluster_cidr {
            t.rule(
                internal_chain,
                m(vec![Match::SaddrNotIn(c)]),
                Stmt::Jump(MARK_MASQ.into()),
                None,
            );
        }
    }
    if uses_external {
        write_external(t, input, svc, &names, external_policy_chain, has_external);
    }
    if uses_fw {
        write_firewall(t, input, svc, &names.firewall);
    }
    if let Some(secs) = sticky {
        for ep in &cat.all_reachable {
            let (_, aff) = endpoint_names(svc, ep);
            t.sets.push(NftSet {
                name: aff,
                type_: t.family.addr_type().into(),
                is_map: false,
                timeout: Some(secs),
                comment: None,
                elements: Vec::new(),
            });
        }
    }
    if uses_cluster {
        write_dispatch(t, svc, &names.cluster, &cat.cluster);
    }
    if uses_local {
        write_dispatch(t, svc, &names.local, &cat.local);
    }
    for ep in &cat.all_reachable {
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

fn write_external(
    t: &mut NftTable,
    input: &ProxyInput,
    svc: &ServicePort,
    names: &PortChains,
    policy_chain: &str,
    has_external: bool,
) {
    let ext = &names.external;
    if !svc.external_policy_local {
        t.rule(ext, vec![], Stmt::Jump(MARK_MASQ.into()), None);
    } else {
        if let Some(c) = input.cluster_cidr {
            t.rule(
                ext,
                vec![Match::SaddrIn(c)],
                Stmt::Goto(names.cluster.clone()),
                Some("short-circuit pod traffic"),
            );
        }
        t.rule(
            ext,
            vec![Match::FibSaddrLocal],
            Stmt::Jump(MARK_MASQ.into()),
            Some("masquerade local traffic"),
        );
        t.rule(
            ext,
            vec![Match::FibSaddrLocal],
            Stmt::Goto(names.cluster.clone()),
            Some("short-circuit local traffic"),
        );
    }
    if has_external {
        t.rule(ext, vec![], Stmt::Goto(policy_chain.to_string()), None);
    }
}

fn write_firewall(t: &mut NftTable, input: &ProxyInput, svc: &ServicePort, chain: &str) {
    let mut sources = svc.load_balancer_source_ranges.clone();
    if sources.iter().any(|c| c.contains(input.node_ip)) {
        sources.extend(svc.load_balancer_vips.iter().map(|ip| Cidr::host(*ip)));
    }
    t.rule(chain, vec![Match::SaddrNotInAny(sources)], Stmt::Drop, None);
}

/// `writeServiceToEndpointRules`: affinity gotos, then the numgen vmap.
fn write_dispatch(t: &mut NftTable, svc: &ServicePort, chain: &str, eps: &[Endpoint]) {
    let names: Vec<(String, String)> = eps.iter().map(|e| endpoint_names(svc, e)).collect();
    if svc.sticky_max_age_seconds.is_some() {
        for (ep_chain, aff) in &names {
            t.rule(
                chain,
                vec![Match::SaddrSet(aff.clone())],
                Stmt::Goto(ep_chain.clone()),
                None,
            );
        }
    }
    let targets = names.into_iter().map(|(c, _)| c).collect();
    t.rule(chain, vec![], Stmt::Numgen(targets), None);
}
