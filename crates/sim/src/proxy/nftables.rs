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

use super::model::{self, Protocol, ProxyModel};
use super::net::Cidr;
use super::ProxyInput;

pub use super::nftables_list::{nft_list_ruleset, nft_list_table};
pub(crate) use super::nftables_service::endpoint_names;

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
            None => declare_set(self, name),
        }
    }

    pub(crate) fn ensure_chain(&mut self, name: &str) -> &mut NftChain {
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

    pub(crate) fn rule(
        &mut self,
        chain: &str,
        matches: Vec<Match>,
        stmt: Stmt,
        comment: Option<&str>,
    ) {
        self.ensure_chain(chain).rules.push(NftRule {
            matches,
            stmt,
            comment: comment.map(str::to_string),
        });
    }

    pub(crate) fn elem(
        &mut self,
        set: &str,
        key: Key,
        value: Option<Stmt>,
        comment: Option<String>,
    ) {
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

/// Declares a plain address set `name` (every set kube-proxy fills is declared in `setup`).
fn declare_set<'a>(t: &'a mut NftTable, name: &str) -> &'a mut NftSet {
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

/// The sets and maps `setupNFTables` declares: name, key (`addr` / `addr . proto . port`
/// / `proto . port`), comment.
const SETS: [(&str, &str, &str); 7] = [
    (CLUSTER_IPS, "addr", "Active ClusterIPs"),
    (NODEPORT_IPS, "addr", "IPs that accept NodePort traffic"),
    (
        NO_ENDPOINT_SERVICES,
        "addr-port",
        "vmap to drop or reject packets to services with no endpoints",
    ),
    (
        NO_ENDPOINT_NODEPORTS,
        "port",
        "vmap to drop or reject packets to service nodeports with no endpoints",
    ),
    (
        FIREWALL_IPS,
        "addr-port",
        "destinations that are subject to LoadBalancerSourceRanges",
    ),
    (
        SERVICE_IPS,
        "addr-port",
        "ClusterIP, ExternalIP and LoadBalancer IP traffic",
    ),
    (SERVICE_NODEPORTS, "port", "NodePort traffic"),
];

/// `setupNFTables`: the table skeleton (nodePortAddresses `primary`, the nftables default).
fn setup(family: Family, node_ip: Option<Ipv4Addr>, mark: u32) -> NftTable {
    let a = family.addr_type();
    let sets = SETS
        .iter()
        .map(|(name, key, comment)| {
            let (type_, is_map) = match *key {
                "addr" => (a.to_string(), false),
                "addr-port" => (format!("{a} . inet_proto . inet_service : verdict"), true),
                _ => ("inet_proto . inet_service : verdict".to_string(), true),
            };
            NftSet {
                name: name.to_string(),
                type_,
                is_map,
                timeout: None,
                comment: Some(comment),
                elements: Vec::new(),
            }
        })
        .collect();
    let mut t = NftTable {
        family,
        sets,
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
    setup_rules(&mut t, node_ip, mark);
    t
}

/// The fixed rules of the skeleton: masquerading, the checks, the dispatch rules.
fn setup_rules(t: &mut NftTable, node_ip: Option<Ipv4Addr>, mark: u32) {
    let family = t.family;
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
        super::nftables_service::write_service(&mut t, input, svc, model.endpoints_of(&svc.name));
    }
    t
}
