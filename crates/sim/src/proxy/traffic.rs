//! Walks a packet through a node's kube-proxy rules to an endpoint, hop by hop.
//!
//! The walk evaluates the very rules [`super::iptables::iptables_save`] prints, in the
//! order the kernel does: nat PREROUTING (or OUTPUT for the node's own traffic), the
//! routing decision, filter INPUT/FORWARD/OUTPUT, then nat POSTROUTING. `-m statistic`
//! draws `random & 0x7fffffff` and compares it with the stored probability, exactly like
//! xt_statistic, so endpoints are picked uniformly; `-m recent` and IPVS persistence read
//! and write an [`AffinityTable`] the caller keeps between packets.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::net::Ipv4Addr;
use std::rc::Rc;

use super::model::Protocol;
use super::nftables_walk;
use super::walk::{build_env, ipvs_schedule, last_comment, run_chain, Env, Pkt, State, Verdict};
use super::{ProxyInput, ProxyMode};
use crate::rng::Rng;
use crate::time::Time;

/// A packet opening a connection (the first packet decides the endpoint).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Packet {
    /// Source address: a pod, a node, or an outside client.
    pub src_ip: Ipv4Addr,
    /// Destination: a ClusterIP, a node IP (NodePort), an external/LB IP, a pod…
    pub dst_ip: Ipv4Addr,
    /// Destination port.
    pub dst_port: u16,
    /// Protocol.
    pub protocol: Protocol,
}

/// One step of the walk: a rule that matched (or a random/affinity test that did not).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hop {
    /// The node whose rules these are.
    pub node: String,
    /// `nat`, `filter`, `ipvs` or `route`.
    pub table: String,
    /// The chain (or the IPVS virtual server line).
    pub chain: String,
    /// The rule as `iptables-save` (or `ipvsadm -Ln`) prints it.
    pub rule: String,
    /// False for a statistic/recent rule that was evaluated and not taken.
    pub matched: bool,
    /// What happened, in words (`random 0.1817 < 0.33333333349: taken`).
    pub note: String,
}

/// Where the packet ended up.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// DNATed to an endpoint.
    Delivered {
        /// The endpoint address (a pod IP, or a node IP for host-network endpoints).
        pod_ip: Ipv4Addr,
        /// The endpoint port.
        port: u16,
        /// The node the endpoint lives on, if known.
        node: Option<String>,
        /// `ns/name:port` of the service port that was hit.
        service: String,
        /// Whether the source was masqueraded (SNAT) on the way.
        masqueraded: bool,
        /// The source address the endpoint sees.
        source_seen: Ipv4Addr,
    },
    /// Refused: a REJECT rule (no endpoints), or an IPVS service without real servers.
    Rejected {
        /// Why (`connection refused: default/web has no endpoints`).
        reason: String,
    },
    /// Silently dropped (e.g. `externalTrafficPolicy: Local` without local endpoints).
    Dropped {
        /// Why.
        reason: String,
    },
    /// No service rule touched it: it travels on unchanged.
    NotAService {
        /// Destination, unchanged.
        dst_ip: Ipv4Addr,
        /// Destination port, unchanged.
        dst_port: u16,
    },
}

/// The walk's hops and its outcome.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Route {
    /// Every rule that decided something, in order.
    pub hops: Vec<Hop>,
    /// The result.
    pub outcome: Outcome,
}

/// What the kernel remembers between connections: `-m recent` lists (iptables
/// ClientIP affinity), IPVS persistence templates and IPVS round-robin positions.
/// The caller keeps one per node (or one for the cluster) and passes it to every [`route`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AffinityTable {
    /// xt_recent list (named after a KUBE-SEP chain) → client IP → last seen.
    pub(crate) recent: BTreeMap<String, BTreeMap<Ipv4Addr, Time>>,
    /// (node, virtual server, client) → (real server, expiry).
    pub(crate) persistence: BTreeMap<(String, String, Ipv4Addr), (Ipv4Addr, u16, Time)>,
    /// (node, virtual server) → last real server chosen by `rr`.
    pub(crate) rr_last: BTreeMap<(String, String), (Ipv4Addr, u16)>,
}

impl AffinityTable {
    /// An empty table (a freshly booted node).
    pub fn new() -> AffinityTable {
        AffinityTable::default()
    }

    /// The clients an xt_recent list holds, with when each was last seen
    /// (what `/proc/net/xt_recent/<list>` shows).
    pub fn recent(&self, list: &str) -> Vec<(Ipv4Addr, Time)> {
        self.recent
            .get(list)
            .map(|m| m.iter().map(|(ip, t)| (*ip, *t)).collect())
            .unwrap_or_default()
    }

    /// Forgets everything (node reboot).
    pub fn clear(&mut self) {
        *self = AffinityTable::default();
    }
}

/// Walks `packet` through the rules of `input.node_name` (in `input.mode`), following it
/// to another node when it is addressed to that node's IP (NodePort). `input` is the node
/// where the packet first meets netfilter: the client's node for pods and host processes,
/// the addressed node for clients outside the cluster.
pub fn route(
    input: &ProxyInput,
    packet: &Packet,
    rng: &mut Rng,
    affinity: &mut AffinityTable,
) -> Route {
    Router::new(input).route(packet, rng, affinity)
}

/// A reusable walker: renders each node's rules once, then routes many packets.
/// Build a new one whenever the snapshot (Services, EndpointSlices, time) changes.
pub struct Router<'a> {
    input: ProxyInput<'a>,
    envs: RefCell<BTreeMap<String, Rc<Env<'a>>>>,
}

impl<'a> Router<'a> {
    /// A router over `input` (cloned; the objects stay borrowed).
    pub fn new(input: &ProxyInput<'a>) -> Router<'a> {
        Router {
            input: input.clone(),
            envs: RefCell::new(BTreeMap::new()),
        }
    }

    /// Like [`route`], reusing the rules already rendered.
    pub fn route(&self, packet: &Packet, rng: &mut Rng, affinity: &mut AffinityTable) -> Route {
        self.route_at(self.input.now, packet, rng, affinity)
    }

    /// Like [`Router::route`] at another virtual instant (ages `-m recent` entries and
    /// IPVS persistence against `now`) without re-rendering the rules.
    pub fn route_at(
        &self,
        now: Time,
        packet: &Packet,
        rng: &mut Rng,
        affinity: &mut AffinityTable,
    ) -> Route {
        let mut st = State {
            rng,
            aff: affinity,
            now,
            hops: Vec::new(),
        };
        let outcome = self.walk_node(&self.input.node_name, packet, &mut st, 0);
        Route {
            hops: st.hops,
            outcome,
        }
    }

    fn env(&self, node: &str) -> Option<Rc<Env<'a>>> {
        if let Some(e) = self.envs.borrow().get(node) {
            return Some(e.clone());
        }
        let input = if node == self.input.node_name {
            self.input.clone()
        } else {
            self.input.for_node(node)?
        };
        let env = Rc::new(build_env(&input));
        self.envs.borrow_mut().insert(node.to_string(), env.clone());
        Some(env)
    }

    fn walk_node(&self, node: &str, packet: &Packet, st: &mut State, depth: usize) -> Outcome {
        let Some(env) = self.env(node) else {
            return Outcome::NotAService {
                dst_ip: packet.dst_ip,
                dst_port: packet.dst_port,
            };
        };
        let env = &*env;
        let mut p = Pkt {
            src: packet.src_ip,
            dst: packet.dst_ip,
            dport: packet.dst_port,
            proto: packet.protocol,
            mark: 0,
            dnat: false,
        };
        let local_origin = env.is_node_addr(p.src);
        let hook = if local_origin { "OUTPUT" } else { "PREROUTING" };
        let mut service = String::new();
        let mut done_nat = false;
        if env.nft.is_some() {
            match nft_dnat(env, st, local_origin, &mut p, &mut service) {
                Ok(dnat) => done_nat = dnat,
                Err(outcome) => return outcome,
            }
        }
        let verdict = run_chain(env, st, &env.tables.nat, hook, &mut p, 0, &mut service);
        done_nat |= verdict == Verdict::Dnat;

        // Routing decision, then the filter table.
        let filter_chain = if local_origin {
            "OUTPUT"
        } else if env.is_local(p.dst) {
            "INPUT"
        } else {
            "FORWARD"
        };
        let mark = st.hops.len();
        match run_chain(
            env,
            st,
            &env.tables.filter,
            filter_chain,
            &mut p,
            0,
            &mut service,
        ) {
            Verdict::Reject => {
                return Outcome::Rejected {
                    reason: format!("connection refused ({})", last_comment(st)),
                }
            }
            Verdict::Drop => {
                return Outcome::Dropped {
                    reason: format!(
                        "packet dropped, connection times out ({})",
                        last_comment(st)
                    ),
                }
            }
            // Accepted: the filter table did not change the story.
            _ => st.hops.truncate(mark),
        }
        if env.nft.is_some() {
            let chain = format!("filter-{}", filter_chain.to_ascii_lowercase());
            if let Some(outcome) = nft_filter(env, st, &chain, &mut p) {
                return outcome;
            }
        }

        // IPVS forwards what reaches a virtual server (LOCAL_IN / LOCAL_OUT).
        if env.mode == ProxyMode::Ipvs && !done_nat {
            if let Some(vs) = env
                .virtual_servers
                .iter()
                .find(|v| v.protocol == p.proto && v.addr == p.dst && v.port == p.dport)
            {
                let Some(rs) = ipvs_schedule(env, st, vs, p.src) else {
                    return Outcome::Rejected {
                    reason: format!(
                        "connection refused ({} has no real servers; the VIP is local and nothing listens)",
                        vs.service
                    ),
                };
                };
                p.dst = rs.ip;
                p.dport = rs.port;
                p.dnat = true;
                service = vs.service.to_string();
                done_nat = true;
            }
        }

        if !done_nat {
            if depth == 0 && !env.is_local(p.dst) {
                if let Some(other) = env
                    .nodes
                    .iter()
                    .find(|n| n.ip == p.dst && n.name != env.node)
                {
                    {
                        st.hops.push(Hop {
                            node: env.node.clone(),
                            table: "route".into(),
                            chain: String::new(),
                            rule: format!("{} via {}", p.dst, other.name),
                            matched: true,
                            note: format!(
                                "not local: forwarded to node {} ({})",
                                other.name, other.ip
                            ),
                        });
                        return self.walk_node(&other.name, packet, st, depth + 1);
                    }
                }
            }
            return Outcome::NotAService {
                dst_ip: packet.dst_ip,
                dst_port: packet.dst_port,
            };
        }

        // POSTROUTING only matters to the story when it masquerades.
        let mark = st.hops.len();
        let masqueraded = if env.nft.is_some() {
            nftables_walk::run_hook(env, st, "nat-postrouting", &mut p, &mut service)
                == Verdict::Masquerade
        } else {
            run_chain(
                env,
                st,
                &env.tables.nat,
                "POSTROUTING",
                &mut p,
                0,
                &mut service,
            ) == Verdict::Masquerade
        };
        if !masqueraded {
            st.hops.truncate(mark);
        }
        let node = env
            .node_of_pod_ip(p.dst)
            .or_else(|| env.nodes.iter().find(|n| n.ip == p.dst))
            .map(|n| n.name.clone());
        Outcome::Delivered {
            pod_ip: p.dst,
            port: p.dport,
            node,
            service,
            masqueraded,
            source_seen: if masqueraded {
                env.masquerade_source(p.dst)
            } else {
                p.src
            },
        }
    }
}

/// nftables mode before routing: the pre-DNAT filter chain (LoadBalancerSourceRanges),
/// then the nat chain (service dispatch). `Ok(true)` when the packet was DNATed.
fn nft_dnat(
    env: &Env,
    st: &mut State,
    local_origin: bool,
    p: &mut Pkt,
    service: &mut String,
) -> Result<bool, Outcome> {
    let (pre, nat) = if local_origin {
        ("filter-output-pre-dnat", "nat-output")
    } else {
        ("filter-prerouting-pre-dnat", "nat-prerouting")
    };
    let mark = st.hops.len();
    if nftables_walk::run_hook(env, st, pre, p, service) == Verdict::Drop {
        return Err(Outcome::Dropped {
            reason: format!(
                "packet dropped, connection times out ({})",
                nftables_walk::reason(st, "")
            ),
        });
    }
    st.hops.truncate(mark);
    Ok(nftables_walk::run_hook(env, st, nat, p, service) == Verdict::Dnat)
}

/// nftables mode after routing: `filter-input` / `filter-forward` / `filter-output`
/// (no-endpoint and invalid-ClusterIP checks). `Some` when the packet is refused.
fn nft_filter(env: &Env, st: &mut State, chain: &str, p: &mut Pkt) -> Option<Outcome> {
    let mark = st.hops.len();
    let mut refused_service = String::new();
    let verdict = nftables_walk::run_hook(env, st, chain, p, &mut refused_service);
    match verdict {
        Verdict::Reject => Some(Outcome::Rejected {
            reason: format!(
                "connection refused ({})",
                nftables_walk::reason(st, &refused_service)
            ),
        }),
        Verdict::Drop => Some(Outcome::Dropped {
            reason: format!(
                "packet dropped, connection times out ({})",
                nftables_walk::reason(st, &refused_service)
            ),
        }),
        _ => {
            st.hops.truncate(mark);
            None
        }
    }
}
