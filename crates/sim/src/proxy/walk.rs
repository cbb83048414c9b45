//! The netfilter evaluator behind the packet walk: one node's tables, chain traversal
//! like `ipt_do_table`, match semantics (statistic, recent, addrtype, set…) and IPVS scheduling.

use std::collections::{BTreeMap, BTreeSet};
use std::net::Ipv4Addr;

use super::ipvs::{self, IpSets, RealServer, VirtualServer, IPVS_IPS};
use super::model;
use super::model::Protocol;
use super::net::LOOPBACK;
use super::node::{NodeTable, NodeTables};
use super::rules::{kernel_probability, Part, Rule, Target};
use super::traffic::{AffinityTable, Hop};
use super::{ProxyInput, ProxyMode};
use crate::rng::Rng;
use crate::time::{Time, SECOND};

pub(crate) struct State<'r> {
    pub(crate) rng: &'r mut Rng,
    pub(crate) aff: &'r mut AffinityTable,
    pub(crate) now: Time,
    pub(crate) hops: Vec<Hop>,
}

/// The immutable view of one node.
pub(crate) struct Env<'a> {
    pub(crate) node: String,
    pub(crate) node_ip: Ipv4Addr,
    pub(crate) pod_cidr: Option<super::Cidr>,
    pub(crate) tables: NodeTables,
    pub(crate) sets: Option<IpSets>,
    pub(crate) vips: BTreeSet<Ipv4Addr>,
    pub(crate) sep_service: BTreeMap<String, String>,
    pub(crate) virtual_servers: Vec<VirtualServer>,
    pub(crate) nodes: &'a [super::NodeAddress],
    pub(crate) mode: ProxyMode,
    /// `table ip kube-proxy` in nftables mode.
    pub(crate) nft: Option<super::nftables::NftTable>,
}

impl Env<'_> {
    pub(crate) fn node_of_pod_ip(&self, ip: Ipv4Addr) -> Option<&super::NodeAddress> {
        self.nodes
            .iter()
            .find(|n| n.pod_cidr.is_some_and(|c| c.contains(ip)))
    }

    pub(crate) fn is_node_addr(&self, ip: Ipv4Addr) -> bool {
        ip == self.node_ip || LOOPBACK.contains(ip)
    }

    /// `addrtype LOCAL`: the node's own addresses (and, in IPVS mode, kube-ipvs0's VIPs).
    pub(crate) fn is_local(&self, ip: Ipv4Addr) -> bool {
        self.is_node_addr(ip) || self.vips.contains(&ip)
    }

    /// Whether the packet arrived over a bridge port (from a pod on this node).
    fn came_over_bridge(&self, src: Ipv4Addr) -> bool {
        self.pod_cidr.is_some_and(|c| c.contains(src))
    }

    /// The source address MASQUERADE picks toward `dst` (flannel-style addressing: the
    /// bridge `.1` toward local pods, `.0` on the overlay toward other nodes' pods).
    pub(crate) fn masquerade_source(&self, dst: Ipv4Addr) -> Ipv4Addr {
        match self.pod_cidr {
            Some(c) if c.contains(dst) => c.nth(1),
            Some(c) if self.node_of_pod_ip(dst).is_some() => c.nth(0),
            _ => self.node_ip,
        }
    }
}

/// The packet as it travels: addresses may be rewritten, marks set.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Pkt {
    pub(crate) src: Ipv4Addr,
    pub(crate) dst: Ipv4Addr,
    pub(crate) dport: u16,
    pub(crate) proto: Protocol,
    pub(crate) mark: u32,
    pub(crate) dnat: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Verdict {
    Continue,
    Accept,
    Drop,
    Reject,
    Dnat,
    Masquerade,
}

pub(crate) fn build_env<'a>(input: &ProxyInput<'a>) -> Env<'a> {
    let model = model::build(input.services, input.slices, &input.node_name);
    let mut sep_service = BTreeMap::new();
    for svc in &model.ports {
        for ep in model.endpoints_of(&svc.name) {
            sep_service.insert(ep.chain.clone(), svc.name_string());
        }
    }
    let mut nft = None;
    if input.mode == ProxyMode::Nftables {
        sep_service.clear();
        for svc in &model.ports {
            for ep in model.endpoints_of(&svc.name) {
                let chain = super::nftables::endpoint_names(svc, ep).0;
                sep_service.insert(chain, svc.name_string());
            }
        }
        nft = Some(super::nftables::build_table(input, &model));
    }
    let (tables, sets, virtual_servers) = match input.mode {
        ProxyMode::Iptables => (super::node::node_tables(input, &model), None, Vec::new()),
        ProxyMode::Nftables => (super::node::kubelet_tables(), None, Vec::new()),
        ProxyMode::Ipvs => (
            ipvs::node_tables(input, &model),
            Some(ipvs::ipsets(input, &model)),
            ipvs::virtual_servers_of(input, &model),
        ),
    };
    let vips = sets
        .as_ref()
        .and_then(|s| s.0.get(IPVS_IPS))
        .map(|set| {
            set.iter()
                .filter_map(|e| match e {
                    ipvs::SetEntry::Ip(ip) => Some(*ip),
                    _ => None,
                })
                .collect()
        })
        .unwrap_or_default();
    Env {
        node: input.node_name.clone(),
        node_ip: input.node_ip,
        pod_cidr: input.pod_cidr,
        tables,
        sets,
        vips,
        sep_service,
        virtual_servers,
        nodes: input.nodes,
        mode: input.mode,
        nft,
    }
}

/// The comment of the last recorded rule, for outcome reasons.
pub(crate) fn last_comment(st: &State) -> String {
    st.hops
        .last()
        .and_then(|h| {
            let start = h.rule.find("--comment \"")? + "--comment \"".len();
            let end = h.rule[start..].find('"')? + start;
            Some(h.rule[start..end].to_string())
        })
        .unwrap_or_else(|| "no service rule".into())
}

/// Evaluates one chain like ipt_do_table: first matching rule's target decides; user
/// chains return to the caller when they run out; built-in chains fall to policy ACCEPT.
/// In the filter table, only the path to a DROP/REJECT is kept as hops.
pub(crate) fn run_chain(
    env: &Env,
    st: &mut State,
    table: &NodeTable,
    chain: &str,
    p: &mut Pkt,
    depth: usize,
    service: &mut String,
) -> Verdict {
    if depth > 32 {
        return Verdict::Continue;
    }
    let keep_all = table.name != "filter";
    for r in table.rules_of(chain) {
        let mark = st.hops.len();
        let note = match rule_matches(env, st, r, p) {
            Ok(note) => note,
            Err(Some(note)) => {
                push_hop(env, st, table, r, false, note);
                continue;
            }
            Err(None) => continue,
        };
        match &r.target {
            Target::Jump(c) => {
                let note = if note.is_empty() {
                    format!("jump to {c}")
                } else {
                    note
                };
                push_hop(env, st, table, r, true, note);
                match run_chain(env, st, table, c, p, depth + 1, service) {
                    Verdict::Continue => {
                        if !keep_all {
                            st.hops.truncate(mark);
                        }
                    }
                    v => return v,
                }
            }
            Target::Return => {
                if keep_all {
                    push_hop(
                        env,
                        st,
                        table,
                        r,
                        true,
                        "RETURN to the calling chain".into(),
                    );
                }
                return Verdict::Continue;
            }
            Target::Accept => {
                if keep_all {
                    push_hop(env, st, table, r, true, "ACCEPT".into());
                }
                return Verdict::Accept;
            }
            Target::Drop => {
                push_hop(
                    env,
                    st,
                    table,
                    r,
                    true,
                    "DROP: no reply, the client times out".into(),
                );
                return Verdict::Drop;
            }
            Target::Reject => {
                push_hop(
                    env,
                    st,
                    table,
                    r,
                    true,
                    "REJECT with icmp-port-unreachable: connection refused".into(),
                );
                return Verdict::Reject;
            }
            Target::Dnat(d) => {
                if let Some((ip, port)) = d.split_once(':') {
                    if let (Ok(ip), Ok(port)) = (ip.parse(), port.parse()) {
                        p.dst = ip;
                        p.dport = port;
                        p.dnat = true;
                    }
                }
                if let Some(s) = env.sep_service.get(chain) {
                    s.clone_into(service);
                }
                push_hop(env, st, table, r, true, format!("DNAT to {d}"));
                return Verdict::Dnat;
            }
            Target::MarkOr(m) => {
                p.mark |= m;
                push_hop(
                    env,
                    st,
                    table,
                    r,
                    true,
                    format!("mark {m:#x}: masquerade on the way out"),
                );
            }
            Target::MarkXor(m) => {
                p.mark ^= m;
                push_hop(env, st, table, r, true, format!("clear mark {m:#x}"));
            }
            Target::Masquerade { .. } => {
                let src = env.masquerade_source(p.dst);
                push_hop(
                    env,
                    st,
                    table,
                    r,
                    true,
                    format!("MASQUERADE: source becomes {src}"),
                );
                return Verdict::Masquerade;
            }
            Target::None => push_hop(env, st, table, r, true, note),
        }
    }
    Verdict::Continue
}

fn push_hop(env: &Env, st: &mut State, table: &NodeTable, r: &Rule, matched: bool, note: String) {
    st.hops.push(Hop {
        node: env.node.clone(),
        table: table.name.to_string(),
        chain: r.chain.clone(),
        rule: r.save_line(),
        matched,
        note,
    });
}

/// Whether a rule matches: `Ok(note)` if it does, `Err(Some(note))` if a statistic or
/// recent test decided against it (worth showing), `Err(None)` otherwise.
fn rule_matches(env: &Env, st: &mut State, r: &Rule, p: &Pkt) -> Result<String, Option<String>> {
    // ip_packet_match: addresses and protocol first.
    for part in &r.parts {
        let ok = match part {
            Part::Src { not, cidr, .. } => cidr.contains(p.src) != *not,
            Part::Dst { not, cidr, .. } => cidr.contains(p.dst) != *not,
            Part::Proto(pr) | Part::ProtoOnly(pr) => *pr == p.proto,
            _ => true,
        };
        if !ok {
            return Err(None);
        }
    }
    let mut note = String::new();
    for part in &r.parts {
        let ok = match part {
            Part::DPort(n) => *n == p.dport,
            Part::AddrType { src, not } => env.is_local(if *src { p.src } else { p.dst }) != *not,
            Part::Mark { not, mark } => (p.mark & mark == *mark) != *not,
            Part::Conntrack { not, states } => {
                states
                    .split(',')
                    .any(|s| s == "NEW" || (s == "DNAT" && p.dnat))
                    != *not
            }
            Part::Set { name, not, dims } => {
                env.sets
                    .as_ref()
                    .is_some_and(|s| s.matches(name, dims, p.src, p.dst, p.proto, p.dport))
                    != *not
            }
            Part::PhysdevNotIsIn => !env.came_over_bridge(p.src),
            Part::Statistic(prob) => {
                let threshold = kernel_probability(prob);
                let draw = (st.rng.next_u64() >> 33) as u32;
                let shown = f64::from(threshold) / 2_147_483_648.0;
                let drawn = f64::from(draw) / 2_147_483_648.0;
                if draw < threshold {
                    note = format!("random {drawn:.4} < {shown:.11}: taken");
                    true
                } else {
                    return Err(Some(format!("random {drawn:.4} >= {shown:.11}: not taken")));
                }
            }
            Part::RecentCheck { name, seconds } => {
                let window = Time::from(*seconds) * SECOND;
                let now = st.now;
                let list = st.aff.recent.entry(name.clone()).or_default();
                // --reap: forget clients older than the window.
                list.retain(|_, seen| now.saturating_sub(*seen) < window);
                match list.get(&p.src) {
                    Some(seen) => {
                        note = format!(
                            "client {} seen {}s ago in {name}: stick to it",
                            p.src,
                            now.saturating_sub(*seen) / SECOND
                        );
                        true
                    }
                    None => {
                        return Err(Some(format!("client {} not in recent list {name}", p.src)))
                    }
                }
            }
            Part::RecentSet(name) => {
                st.aff
                    .recent
                    .entry(name.clone())
                    .or_default()
                    .insert(p.src, st.now);
                note = format!("remember client {} in recent list {name}", p.src);
                true
            }
            Part::Comment { .. } | Part::Nfacct(_) => true,
            Part::Src { .. } | Part::Dst { .. } | Part::Proto(_) | Part::ProtoOnly(_) => true,
        };
        if !ok {
            return Err(None);
        }
    }
    Ok(note)
}

/// IPVS scheduling: a live persistence template wins, else `rr` takes the real server
/// after the last one chosen.
pub(crate) fn ipvs_schedule(
    env: &Env,
    st: &mut State,
    vs: &VirtualServer,
    client: Ipv4Addr,
) -> Option<RealServer> {
    let vs_key = vs.line();
    let node = env.node.clone();
    let rss = &vs.real_servers;
    let sticky = vs.persistent_seconds.and_then(|_| {
        let (ip, port, expiry) =
            *st.aff
                .persistence
                .get(&(node.clone(), vs_key.clone(), client))?;
        (expiry > st.now)
            .then(|| rss.iter().find(|r| r.ip == ip && r.port == port).copied())
            .flatten()
    });
    let (chosen, how) = match sticky {
        Some(rs) => (
            rs,
            format!("persistent: client {client} stays on this real server"),
        ),
        None => {
            let last = st.aff.rr_last.get(&(node.clone(), vs_key.clone())).copied();
            let next = match last.and_then(|l| rss.iter().position(|r| (r.ip, r.port) == l)) {
                Some(i) => rss.get((i + 1) % rss.len().max(1)),
                None => rss.first(),
            }?;
            st.aff
                .rr_last
                .insert((node.clone(), vs_key.clone()), (next.ip, next.port));
            (
                *next,
                "rr: the real server after the last one chosen".to_string(),
            )
        }
    };
    if let Some(t) = vs.persistent_seconds {
        let expiry = st.now + Time::from(t) * SECOND;
        st.aff.persistence.insert(
            (node.clone(), vs_key.clone(), client),
            (chosen.ip, chosen.port, expiry),
        );
    }
    st.hops.push(Hop {
        node,
        table: "ipvs".into(),
        chain: vs_key,
        rule: VirtualServer::real_server_line(&chosen)
            .trim_end()
            .to_string(),
        matched: true,
        note: format!("{how}; masquerade-forward to {}:{}", chosen.ip, chosen.port),
    });
    Some(chosen)
}
