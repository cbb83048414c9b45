//! The node's netfilter tables as `iptables-save` lists them: built-in chains, the jump
//! rules kube-proxy and kubelet put there, then user chains sorted by name.

use std::fmt::Write as _;

use super::iptables::{
    cidr_part, comment, kube_proxy_rules, KUBE_EXTERNAL_SERVICES, KUBE_FIREWALL, KUBE_FORWARD,
    KUBE_MARK_MASQ, KUBE_NODEPORTS, KUBE_POSTROUTING, KUBE_PROXY_CANARY, KUBE_PROXY_FIREWALL,
    KUBE_SERVICES,
};
use super::model::ProxyModel;
use super::net::LOOPBACK;
use super::rules::{Part, Rule, Table, Target};
use super::{ProxyInput, ProxyOptions};
use crate::time::{Time, EPOCH_UNIX_MS};

pub(crate) const KUBE_KUBELET_CANARY: &str = "KUBE-KUBELET-CANARY";
pub(crate) const KUBE_IPTABLES_HINT: &str = "KUBE-IPTABLES-HINT";

/// The iptables release the node image ships (`iptables-save v1.8.9 (nf_tables)`).
pub const IPTABLES_VERSION: &str = "v1.8.9 (nf_tables)";

/// One table as the kernel holds it: built-in chains with their rules, then user chains.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct NodeTable {
    pub name: &'static str,
    pub builtins: &'static [&'static str],
    /// User chains, sorted by name (as `iptables-save` lists them).
    pub chains: Vec<String>,
    /// All rules, grouped by chain in print order.
    pub rules: Vec<Rule>,
}

impl NodeTable {
    pub fn rules_of<'a>(&'a self, chain: &'a str) -> impl Iterator<Item = &'a Rule> + 'a {
        self.rules.iter().filter(move |r| r.chain == chain)
    }

    pub(crate) fn from(
        name: &'static str,
        builtins: &'static [&'static str],
        jumps: Vec<Rule>,
        table: &Table,
        extra: &[&str],
    ) -> NodeTable {
        let mut chains: Vec<String> = table.chains.clone();
        for c in extra {
            if !chains.iter().any(|x| x == c) {
                chains.push((*c).to_string());
            }
        }
        chains.sort();
        let mut rules = Vec::new();
        for b in builtins {
            rules.extend(jumps.iter().filter(|r| r.chain == *b).cloned());
        }
        for c in &chains {
            rules.extend(table.rules_of(c).cloned());
        }
        NodeTable {
            name,
            builtins,
            chains,
            rules,
        }
    }
}

/// The node's mangle, filter and nat tables (iptables mode).
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct NodeTables {
    pub mangle: NodeTable,
    pub filter: NodeTable,
    pub nat: NodeTable,
}

/// The route_localnet hole mitigation kube-proxy and kubelet both keep in KUBE-FIREWALL.
pub(crate) fn localnet_firewall_rule() -> Rule {
    Rule::new(
        KUBE_FIREWALL,
        vec![
            comment("block incoming localnet connections".into()),
            cidr_part(LOOPBACK, false, false),
            cidr_part(LOOPBACK, true, true),
            Part::Conntrack {
                not: true,
                states: "RELATED,ESTABLISHED,DNAT",
            },
        ],
        Target::Drop,
    )
}

/// KUBE-POSTROUTING (masquerade marked packets once) and KUBE-MARK-MASQ; both modes.
pub(crate) fn masquerade_rules(opts: &ProxyOptions) -> Vec<Rule> {
    let mark = opts.masquerade_mark();
    vec![
        Rule::new(
            KUBE_POSTROUTING,
            vec![Part::Mark { not: true, mark }],
            Target::Return,
        ),
        Rule::new(KUBE_POSTROUTING, vec![], Target::MarkXor(mark)),
        Rule::new(
            KUBE_POSTROUTING,
            vec![comment("kubernetes service traffic requiring SNAT".into())],
            Target::Masquerade {
                random_fully: opts.random_fully,
            },
        ),
        Rule::new(KUBE_MARK_MASQ, vec![], Target::MarkOr(mark)),
    ]
}

/// KUBE-FORWARD's ACCEPT rules for marked and established traffic; both modes.
pub(crate) fn forward_accept_rules(mark: u32) -> Vec<Rule> {
    let states = "RELATED,ESTABLISHED";
    vec![
        Rule::new(
            KUBE_FORWARD,
            vec![
                comment("kubernetes forwarding rules".into()),
                Part::Mark { not: false, mark },
            ],
            Target::Accept,
        ),
        Rule::new(
            KUBE_FORWARD,
            vec![
                comment("kubernetes forwarding conntrack rule".into()),
                Part::Conntrack { not: false, states },
            ],
            Target::Accept,
        ),
    ]
}

/// One `EnsureRule(Prepend, table, src, [-m conntrack --ctstate NEW] -m comment … -j dst)`.
pub(crate) struct Jump {
    pub table: &'static str,
    pub src: &'static str,
    pub dst: &'static str,
    pub ctstate_new: bool,
    pub comment: &'static str,
}

const fn jump(
    table: &'static str,
    src: &'static str,
    dst: &'static str,
    ctstate_new: bool,
    comment: &'static str,
) -> Jump {
    Jump {
        table,
        src,
        dst,
        ctstate_new,
        comment,
    }
}

/// iptables mode's `iptablesJumpChains`, in upstream order.
const IPTABLES_JUMPS: &[Jump] = &[
    jump(
        "filter",
        "INPUT",
        KUBE_EXTERNAL_SERVICES,
        true,
        "kubernetes externally-visible service portals",
    ),
    jump(
        "filter",
        "FORWARD",
        KUBE_EXTERNAL_SERVICES,
        true,
        "kubernetes externally-visible service portals",
    ),
    jump(
        "filter",
        "INPUT",
        KUBE_NODEPORTS,
        false,
        "kubernetes health check service ports",
    ),
    jump(
        "filter",
        "FORWARD",
        KUBE_SERVICES,
        true,
        "kubernetes service portals",
    ),
    jump(
        "filter",
        "OUTPUT",
        KUBE_SERVICES,
        true,
        "kubernetes service portals",
    ),
    jump(
        "filter",
        "FORWARD",
        KUBE_FORWARD,
        false,
        "kubernetes forwarding rules",
    ),
    jump(
        "filter",
        "INPUT",
        KUBE_PROXY_FIREWALL,
        true,
        "kubernetes load balancer firewall",
    ),
    jump(
        "filter",
        "OUTPUT",
        KUBE_PROXY_FIREWALL,
        true,
        "kubernetes load balancer firewall",
    ),
    jump(
        "filter",
        "FORWARD",
        KUBE_PROXY_FIREWALL,
        true,
        "kubernetes load balancer firewall",
    ),
    jump(
        "nat",
        "OUTPUT",
        KUBE_SERVICES,
        false,
        "kubernetes service portals",
    ),
    jump(
        "nat",
        "PREROUTING",
        KUBE_SERVICES,
        false,
        "kubernetes service portals",
    ),
    jump(
        "nat",
        "POSTROUTING",
        KUBE_POSTROUTING,
        false,
        "kubernetes postrouting rules",
    ),
];

/// The jump rules in one table's built-in chains: kubelet's `-j KUBE-FIREWALL` first
/// (kubelet starts before the kube-proxy pod), then kube-proxy's list, each *prepended*,
/// so later entries end up first.
pub(crate) fn jump_rules(table: &str, jumps: &[Jump], kubelet_firewall: bool) -> Vec<Rule> {
    let mut rules: Vec<Rule> = Vec::new();
    if table == "filter" && kubelet_firewall {
        rules.push(Rule::new(
            "INPUT",
            vec![],
            Target::Jump(KUBE_FIREWALL.into()),
        ));
        rules.push(Rule::new(
            "OUTPUT",
            vec![],
            Target::Jump(KUBE_FIREWALL.into()),
        ));
    }
    for j in jumps.iter().filter(|j| j.table == table) {
        let mut parts = Vec::new();
        if j.ctstate_new {
            parts.push(Part::Conntrack {
                not: false,
                states: "NEW",
            });
        }
        parts.push(comment(j.comment.to_string()));
        rules.insert(0, Rule::new(j.src, parts, Target::Jump(j.dst.into())));
    }
    rules
}

pub(crate) const MANGLE_BUILTINS: &[&str] =
    &["PREROUTING", "INPUT", "FORWARD", "OUTPUT", "POSTROUTING"];
pub(crate) const FILTER_BUILTINS: &[&str] = &["INPUT", "FORWARD", "OUTPUT"];
pub(crate) const NAT_BUILTINS: &[&str] = &["PREROUTING", "INPUT", "OUTPUT", "POSTROUTING"];

/// The node's tables in iptables mode.
pub(crate) fn node_tables(input: &ProxyInput, model: &ProxyModel) -> NodeTables {
    let rs = kube_proxy_rules(input, model);
    let canaries = [KUBE_KUBELET_CANARY, KUBE_PROXY_CANARY];
    let lh = input.options.localhost_nodeports;
    NodeTables {
        mangle: NodeTable::from(
            "mangle",
            MANGLE_BUILTINS,
            vec![],
            &Table::default(),
            &[KUBE_IPTABLES_HINT, KUBE_KUBELET_CANARY, KUBE_PROXY_CANARY],
        ),
        filter: NodeTable::from(
            "filter",
            FILTER_BUILTINS,
            jump_rules("filter", IPTABLES_JUMPS, lh),
            &rs.filter,
            &canaries,
        ),
        nat: NodeTable::from(
            "nat",
            NAT_BUILTINS,
            jump_rules("nat", IPTABLES_JUMPS, lh),
            &rs.nat,
            &canaries,
        ),
    }
}

/// The node's tables in nftables mode: only what kubelet keeps in iptables
/// (`KUBE-FIREWALL`, the canaries and the iptables hint); kube-proxy writes nftables.
pub(crate) fn kubelet_tables() -> NodeTables {
    let mut filter = Table::default();
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
            jump_rules("filter", &[], true),
            &filter,
            &[KUBE_KUBELET_CANARY],
        ),
        nat: NodeTable::from(
            "nat",
            NAT_BUILTINS,
            vec![],
            &Table::default(),
            &[KUBE_KUBELET_CANARY],
        ),
    }
}

/// ctime(3) of a virtual instant: `Thu Jan  1 00:00:00 2026`.
pub(crate) fn ctime(now: Time) -> String {
    let ms = EPOCH_UNIX_MS.saturating_add(i64::try_from(now).unwrap_or(i64::MAX));
    k8s_openapi::jiff::Timestamp::from_millisecond(ms)
        .map(|ts| ts.strftime("%a %b %e %H:%M:%S %Y").to_string())
        .unwrap_or_default()
}

pub(crate) fn render_save(tables: &[&NodeTable], now: Time) -> String {
    let when = ctime(now);
    let mut out = String::new();
    for t in tables {
        let _ = writeln!(
            out,
            "# Generated by iptables-save {IPTABLES_VERSION} on {when}"
        );
        let _ = writeln!(out, "*{}", t.name);
        for b in t.builtins {
            let _ = writeln!(out, ":{b} ACCEPT [0:0]");
        }
        for c in &t.chains {
            let _ = writeln!(out, ":{c} - [0:0]");
        }
        for r in &t.rules {
            let _ = writeln!(out, "{}", r.save_line());
        }
        out.push_str("COMMIT\n");
        let _ = writeln!(out, "# Completed on {when}");
    }
    out
}
