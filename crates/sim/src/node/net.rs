//! The data plane: a connection from a node or a pod walked hop by hop through the
//! source node's kube-proxy rules (`proxy::traffic`) to a container, cluster DNS through
//! the `kube-dns` Service to a CoreDNS pod, and what the server answers. Endpoint picks
//! come from the world's seeded stream; every walk is recorded for the page.

use std::collections::VecDeque;
use std::net::Ipv4Addr;
use std::sync::Arc;

use crate::etcd::Store;
use crate::node::behavior::Proto;
use crate::node::host::{reachable, NodeHost};
use crate::node::http::{self, Request, Response};
use crate::node::kubelet_api::SCRAPE;
use crate::node::logs;
use crate::node::netpol::PolicyView;
use crate::node::netpol_walk;
use crate::proxy::model::Protocol;
use crate::proxy::traffic::{self, AffinityTable, Hop, Outcome, Packet};
use crate::proxy::{Cidr, ProxyInput, ProxyOptions};
use crate::rng::Rng;
use crate::time::{Time, SECOND};

/// The cluster DNS Service address (`kube-dns`).
pub const CLUSTER_DNS: &str = "10.96.0.10";
/// How many walks the world keeps for the page.
const PATHS_KEPT: usize = 64;
/// How long the kernel retries a SYN before giving up (tcp_syn_retries = 6).
pub const SYN_TIMEOUT: Time = 127 * SECOND;
/// glibc/musl resolver: 5 s per attempt, 2 attempts.
pub const DNS_TIMEOUT: Time = 10 * SECOND;

/// What the world keeps of the network between connections.
#[derive(Debug)]
pub struct NetState {
    /// Picks endpoints (`-m statistic`) and IPVS choices.
    pub rng: Rng,
    /// `-m recent` lists and IPVS persistence.
    pub affinity: AffinityTable,
    /// The last walks, newest last.
    pub paths: VecDeque<TrafficPath>,
    /// Requests answered per (`namespace/pod`, metrics window start): see
    /// [`crate::node::load`].
    pub served: std::collections::BTreeMap<(String, Time), u64>,
    /// The window `served` was last pruned for.
    pub served_window: Time,
    /// How many requests the walk being made stands for (a load loop's batch).
    pub weight: u64,
    /// kindnet's view of the NetworkPolicies, as of a store revision.
    pub policies: Option<(u64, Option<Arc<PolicyView>>)>,
    /// ingress-nginx's round-robin position per upstream.
    pub ingress_rr: std::collections::BTreeMap<String, usize>,
    /// The host's docker containers on the kind network (cloud-provider-kind's envoys).
    pub docker: crate::cloud::docker::DockerHost,
    /// Envoy's weighted backendRef choices (a stream of its own, so routing through a
    /// Gateway leaves kube-proxy's draws as they were).
    pub envoy_rng: Rng,
    /// The method and headers of the HTTP request being walked (set by `curl` for the
    /// walk it starts; proxies match on them).
    pub request: RequestExtras,
}

/// What an HTTP request carries besides its Host and path.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RequestExtras {
    /// The method (`GET` when empty).
    pub method: String,
    /// Headers other than Host, as sent.
    pub headers: Vec<(String, String)>,
}

impl NetState {
    /// Counts a request answered by `pod` (`namespace/name`) at `now`, in its metrics
    /// window (see [`crate::node::load`]).
    pub fn count(&mut self, now: Time, pod: &str) {
        let window = now / SCRAPE * SCRAPE;
        if window > self.served_window {
            self.served.retain(|(_, w), _| *w + SCRAPE >= window);
            self.served_window = window;
        }
        *self.served.entry((pod.to_string(), window)).or_insert(0) += self.weight;
    }

    /// CPU (millicores) the requests `pod` answered in the window before `at` cost a
    /// container with this per-request cost.
    pub fn cpu_m(&self, pod: &str, at: Time, cost_us: u64) -> u64 {
        if cost_us == 0 || at < SCRAPE {
            return 0;
        }
        let n = self
            .served
            .get(&(pod.to_string(), at - SCRAPE))
            .copied()
            .unwrap_or(0);
        n * cost_us / SCRAPE
    }

    /// A fresh network for a world seeded with `seed`.
    pub fn new(seed: u64) -> NetState {
        NetState {
            rng: Rng::stream(seed, "network"),
            affinity: AffinityTable::new(),
            paths: VecDeque::new(),
            served: Default::default(),
            served_window: 0,
            weight: 1,
            policies: None,
            ingress_rr: Default::default(),
            docker: Default::default(),
            envoy_rng: Rng::stream(seed, "envoy"),
            request: RequestExtras::default(),
        }
    }
}

/// The network as programs on the machines use it: every machine's addresses, rules and
/// listening containers, and the state kept between connections. Built for one call by
/// whoever owns the machines; it knows nothing else of the cluster.
pub struct Network<'a> {
    /// Current virtual time.
    pub now: Time,
    hosts: &'a mut [NodeHost],
    state: &'a mut NetState,
    store: Option<&'a Store>,
}

impl<'a> Network<'a> {
    /// The network over `hosts` at `now`.
    pub fn new(now: Time, hosts: &'a mut [NodeHost], state: &'a mut NetState) -> Network<'a> {
        Network {
            now,
            hosts,
            state,
            store: None,
        }
    }

    /// The same network with the cluster's NetworkPolicies enforced as kindnet programs
    /// them from `store` (see [`crate::node::netpol`]).
    pub fn with_policies(self, store: &'a Store) -> Network<'a> {
        Network {
            store: Some(store),
            ..self
        }
    }

    /// The cluster's objects, when the network was built with them (what the ingress
    /// controller's informers hold; see docs/design.md §6.16).
    pub(crate) fn store(&self) -> Option<&'a Store> {
        self.store
    }

    /// kindnet's current view of the policies (None: no policy exists).
    pub(crate) fn policies(&mut self) -> Option<Arc<PolicyView>> {
        let store = self.store?;
        let rev = store.revision();
        match &self.state.policies {
            Some((r, v)) if *r == rev => v.clone(),
            _ => {
                let v = PolicyView::from_store(store).map(Arc::new);
                self.state.policies = Some((rev, v.clone()));
                v
            }
        }
    }

    /// The machines, read-only (a program may look at a machine's own state through
    /// [`crate::node::machine::Machine`]; the network reads addresses and servers).
    pub(crate) fn hosts(&self) -> &[NodeHost] {
        self.hosts
    }

    /// Machine `n`, to change its own state.
    pub(crate) fn host_mut(&mut self, n: u32) -> Option<&mut NodeHost> {
        self.hosts.get_mut(n as usize)
    }

    /// The state kept between connections, read-only.
    pub(crate) fn state_ref(&self) -> &NetState {
        self.state
    }

    /// The state kept between connections.
    pub(crate) fn state(&mut self) -> &mut NetState {
        self.state
    }

    /// Every node's address and podCIDR.
    pub fn node_addresses(&self) -> Vec<crate::proxy::NodeAddress> {
        node_addresses(self.hosts)
    }

    /// Counts a request answered by `pod` (`namespace/name`), for the metrics.
    pub fn count(&mut self, pod: &str) {
        self.state.count(self.now, pod);
    }
}

/// Every node's address and podCIDR.
pub fn node_addresses(hosts: &[NodeHost]) -> Vec<crate::proxy::NodeAddress> {
    hosts
        .iter()
        .map(|h| crate::proxy::NodeAddress {
            name: h.config.name.clone(),
            ip: h.ip.parse().unwrap_or(Ipv4Addr::UNSPECIFIED),
            pod_cidr: Cidr::parse(&h.pod_cidr),
        })
        .collect()
}

/// One request's journey, for the page to draw.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TrafficPath {
    /// When.
    pub at: Time,
    /// Who sent it (`node-1` or `default/client-5d8f…`).
    pub from: String,
    /// The node whose rules it met first.
    pub node: String,
    /// `http://web/` as typed.
    pub url: String,
    /// The name lookup, if any.
    pub dns: Option<DnsAnswer>,
    /// Rules that decided something.
    pub hops: Vec<Hop>,
    /// Where it ended: `10.244.2.3:80 (default/web-7c5d…) on node-2`, or the failure.
    pub outcome: String,
    /// The pod that answered, if any (`namespace/name`).
    pub endpoint: Option<String>,
}

/// A name lookup's answer: (name asked, answer, CoreDNS pod that answered).
pub type DnsAnswer = (String, String, String);

/// Who opens the connection.
#[derive(Clone, Debug)]
pub struct Source {
    /// The node it runs on.
    pub node: u32,
    /// Its address (a pod IP, or the node's IP).
    pub ip: Ipv4Addr,
    /// The pod's namespace and name, if a pod.
    pub pod: Option<(String, String)>,
    /// `curl/7.88.1`, `Wget`.
    pub agent: String,
}

/// The result of opening a connection and sending one HTTP GET.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Fetch {
    /// The server answered.
    Answered {
        /// The response.
        response: Response,
        /// The pod that answered (`namespace/name`), if a pod.
        pod: Option<String>,
    },
    /// Connection refused (REJECT rule, or nothing listening): curl (7).
    Refused,
    /// No answer at all (partitioned or powered-off target, dropped): curl (28).
    Timeout,
    /// The address does not exist on its network: curl (7) No route to host.
    NoRoute,
    /// The name does not resolve: curl (6).
    Unresolved,
    /// The port speaks something other than HTTP (redis, mysql).
    NotHttp,
    /// A proxy accepted the connection and closed it without an answer (envoy with no
    /// healthy upstream): curl (52).
    EmptyReply,
}

fn input<'a>(
    net: &'a Network,
    n: u32,
    nodes: &'a [crate::proxy::NodeAddress],
    state: &'a crate::node::kube_proxy::RulesState,
) -> ProxyInput<'a> {
    let host = &net.hosts[n as usize];
    ProxyInput {
        node_name: host.config.name.clone(),
        node_ip: host.ip.parse().unwrap_or(Ipv4Addr::UNSPECIFIED),
        pod_cidr: Cidr::parse(&host.pod_cidr),
        cluster_cidr: Cidr::parse(crate::cluster::CLUSTER_CIDR),
        services: &state.services,
        slices: &state.slices,
        nodes,
        mode: state.mode,
        now: net.now,
        options: ProxyOptions::default(),
    }
}

/// Where a connection from `src` to `dst:port` is delivered (a program's own connection,
/// not recorded as a traffic path), after NetworkPolicy has judged it.
pub(crate) fn route(
    net: &mut Network,
    src: &Source,
    dst: Ipv4Addr,
    port: u16,
    proto: Protocol,
) -> Outcome {
    let (mut hops, outcome) = walk(net, src, dst, port, proto);
    let (ip, p, seen) = match &outcome {
        Outcome::Delivered {
            pod_ip,
            port,
            source_seen,
            ..
        } => (*pod_ip, *port, *source_seen),
        Outcome::NotAService { dst_ip, dst_port } => (*dst_ip, *dst_port, src.ip),
        _ => return outcome,
    };
    match netpol_walk::check(net, src, seen, ip, p, proto, &mut hops) {
        Ok(()) => outcome,
        Err(d) => Outcome::Dropped { reason: d.0 },
    }
}

/// Where a packet from `src` to `dst:port` ends up after the source node's rules.
pub(crate) fn walk(
    net: &mut Network,
    src: &Source,
    dst: Ipv4Addr,
    port: u16,
    proto: Protocol,
) -> (Vec<Hop>, Outcome) {
    walk_from(net, src.node, src.ip, dst, port, proto)
}

/// [`walk`] of a packet from `src_ip` that first meets the rules of machine `n` (a pod's
/// or the node's own packet, or one arriving from outside the cluster).
pub(crate) fn walk_from(
    net: &mut Network,
    n: u32,
    src_ip: Ipv4Addr,
    dst: Ipv4Addr,
    port: u16,
    proto: Protocol,
) -> (Vec<Hop>, Outcome) {
    let nodes = net.node_addresses();
    let Some(host) = net.hosts.get(n as usize) else {
        return (
            Vec::new(),
            Outcome::NotAService {
                dst_ip: dst,
                dst_port: port,
            },
        );
    };
    let state = host.rules.clone().unwrap_or_default();
    let packet = Packet {
        src_ip,
        dst_ip: dst,
        dst_port: port,
        protocol: proto,
    };
    let mut rng = std::mem::replace(&mut net.state.rng, Rng::new(0));
    let mut aff = std::mem::take(&mut net.state.affinity);
    let r = {
        let inp = input(net, n, &nodes, &state);
        traffic::route(&inp, &packet, &mut rng, &mut aff)
    };
    net.state.rng = rng;
    net.state.affinity = aff;
    (r.hops, r.outcome)
}

/// A reachable machine index holding `ip` (pod network or node address), from `from`.
pub(crate) fn locate(net: &Network, from: u32, ip: Ipv4Addr) -> Result<Option<u32>, Fetch> {
    let owner = net.hosts.iter().position(|h| {
        Cidr::parse(&h.pod_cidr).is_some_and(|c| c.contains(ip)) || h.ip == ip.to_string()
    });
    match owner.map(|i| i as u32) {
        Some(i) if reachable(net.hosts, from, i) => Ok(Some(i)),
        Some(_) => Err(Fetch::Timeout),
        None => Ok(None),
    }
}

pub use crate::node::resolver::resolve;

#[path = "net_deliver.rs"]
mod deliver;
pub(crate) use deliver::{deliver, Conn};

/// Opens a TCP connection from `src` to `dst:port` and sends `GET path`, recording the walk.
#[allow(clippy::too_many_arguments)]
pub fn get(
    net: &mut Network,
    src: &Source,
    host: &str,
    dst: Ipv4Addr,
    port: u16,
    path: &str,
    url: &str,
    dns: Option<DnsAnswer>,
) -> Fetch {
    if net.state.docker.by_ip(dst).is_some() {
        let req = crate::node::envoy::Request {
            host,
            path,
            url,
            dns,
        };
        return crate::node::envoy::proxy(net, src, dst, port, req);
    }
    let (mut hops, outcome) = walk(net, src, dst, port, Protocol::Tcp);
    let (final_ip, final_port, seen_src) = match &outcome {
        Outcome::Delivered {
            pod_ip,
            port,
            source_seen,
            ..
        } => (*pod_ip, *port, *source_seen),
        Outcome::NotAService { dst_ip, dst_port } => (*dst_ip, *dst_port, src.ip),
        Outcome::Rejected { .. } => {
            return record(
                net,
                src,
                url,
                dns,
                hops,
                "rejected: no ready endpoints",
                None,
                Fetch::Refused,
            )
        }
        Outcome::Dropped { .. } => {
            return record(net, src, url, dns, hops, "dropped", None, Fetch::Timeout)
        }
    };
    let verdict = netpol_walk::check(
        net,
        src,
        seen_src,
        final_ip,
        final_port,
        Protocol::Tcp,
        &mut hops,
    );
    if let Err(d) = verdict {
        return record(net, src, url, dns, hops, &d.0, None, Fetch::Timeout);
    }
    deliver(
        net,
        Conn {
            src,
            from_node: src.node,
            host,
            path,
            url,
            dns,
            hops,
            ip: final_ip,
            port: final_port,
            client: seen_src,
            agent: &src.agent,
            depth: 0,
        },
    )
}

#[allow(clippy::too_many_arguments)]
pub(crate) fn record(
    net: &mut Network,
    src: &Source,
    url: &str,
    dns: Option<DnsAnswer>,
    hops: Vec<Hop>,
    outcome: &str,
    endpoint: Option<String>,
    f: Fetch,
) -> Fetch {
    let from = match &src.pod {
        Some((ns, n)) => format!("{ns}/{n}"),
        None => net.hosts[src.node as usize].config.name.clone(),
    };
    let node = net.hosts[src.node as usize].config.name.clone();
    if let (Fetch::Answered { .. }, Some(pod)) = (&f, &endpoint) {
        net.count(pod);
    }
    let p = TrafficPath {
        at: net.now,
        from,
        node,
        url: url.to_string(),
        dns,
        hops,
        outcome: outcome.to_string(),
        endpoint,
    };
    net.state.paths.push_back(p);
    while net.state.paths.len() > PATHS_KEPT {
        net.state.paths.pop_front();
    }
    f
}
