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
    let n = src.node;
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
        src_ip: src.ip,
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

/// A TCP connection that got through the rules and the policies, about to reach the
/// machine that holds its destination.
pub(crate) struct Conn<'s> {
    /// Who the walk is recorded for (the original client).
    pub src: &'s Source,
    /// The machine the connection leaves (the client's, or the ingress controller's).
    pub from_node: u32,
    /// The `Host` header.
    pub host: &'s str,
    /// The request URI.
    pub path: &'s str,
    /// The URL as typed.
    pub url: &'s str,
    /// The client's name lookup.
    pub dns: Option<DnsAnswer>,
    /// The hops so far.
    pub hops: Vec<Hop>,
    /// Destination address after the rules.
    pub ip: Ipv4Addr,
    /// Destination port after the rules.
    pub port: u16,
    /// The source address the server sees.
    pub client: Ipv4Addr,
    /// `User-Agent`.
    pub agent: &'s str,
    /// Proxies passed (the ingress controller proxies once).
    pub depth: u8,
}

/// Delivers `c` to the container listening at its destination and records the walk.
pub(crate) fn deliver(net: &mut Network, c: Conn) -> Fetch {
    let Conn {
        src,
        from_node,
        host,
        path,
        url,
        dns,
        mut hops,
        ip: mut final_ip,
        port: mut final_port,
        client: seen_src,
        agent,
        depth,
    } = c;
    let now = net.now;
    let fin = format!("{final_ip}:{final_port}");
    if final_ip.to_string() == crate::cluster::CONTROL_PLANE_IP && final_port == 6443 {
        let response = Response {
            status: 403,
            body: "{\n  \"kind\": \"Status\",\n  \"apiVersion\": \"v1\",\n  \"metadata\": {},\n  \"status\": \"Failure\",\n  \"message\": \"forbidden: User \\\"system:anonymous\\\" cannot get path \\\"/\\\"\",\n  \"reason\": \"Forbidden\",\n  \"details\": {},\n  \"code\": 403\n}".into(),
            ..Response::default()
        };
        return record(
            net,
            src,
            url,
            dns,
            hops,
            &format!("{fin} (kube-apiserver)"),
            None,
            Fetch::Answered {
                response,
                pod: None,
            },
        );
    }
    if final_ip == Ipv4Addr::LOCALHOST {
        return record(
            net,
            src,
            url,
            dns,
            hops,
            &format!("{fin}: nothing listening"),
            None,
            Fetch::Refused,
        );
    }
    let idx = match locate(net, from_node, final_ip) {
        Err(f) => {
            return record(
                net,
                src,
                url,
                dns,
                hops,
                &format!("{fin}: host unreachable (no answer)"),
                None,
                f,
            )
        }
        Ok(None) => {
            return record(
                net,
                src,
                url,
                dns,
                hops,
                &format!("{fin}: no route outside the cluster network"),
                None,
                Fetch::Timeout,
            )
        }
        Ok(Some(i)) => i,
    };
    let node_name = net.hosts[idx as usize].config.name.clone();
    if net.hosts[idx as usize].ip == final_ip.to_string() {
        if let Some((ip, port, hop)) = host_port(net, idx, final_port) {
            hops.push(hop);
            final_ip = ip;
            final_port = port;
        }
    }
    if net.hosts[idx as usize].ip == final_ip.to_string() {
        return record(
            net,
            src,
            url,
            dns,
            hops,
            &format!("{fin} on {node_name}: nothing listening"),
            None,
            Fetch::Refused,
        );
    }
    let ip_s = final_ip.to_string();
    let rt = &net.hosts[idx as usize].runtime;
    let Some(sb) = rt.sandbox_by_ip(&ip_s).cloned() else {
        return record(
            net,
            src,
            url,
            dns,
            hops,
            &format!("{fin}: no pod has this address"),
            None,
            Fetch::NoRoute,
        );
    };
    let pod = format!("{}/{}", sb.namespace, sb.name);
    let target = rt
        .running_in(&sb.id)
        .find(|c| c.accepts(i32::from(final_port), now))
        .cloned();
    let Some(c) = target else {
        return record(
            net,
            src,
            url,
            dns,
            hops,
            &format!("{fin} ({pod}) on {node_name}: connection refused"),
            Some(pod),
            Fetch::Refused,
        );
    };
    let proto = c
        .behaviour
        .listening(&c.declared_ports)
        .into_iter()
        .find(|(p, _)| *p == i32::from(final_port))
        .map(|(_, s)| s);
    let where_ = format!("{fin} ({pod}) on {node_name}");
    let Some(Proto::Http(server)) = proto else {
        return record(net, src, url, dns, hops, &where_, Some(pod), Fetch::NotHttp);
    };
    let client = seen_src.to_string();
    if server == crate::node::behavior::Server::IngressNginx && depth == 0 {
        let at = crate::node::ingress_nginx::Arrival {
            node: idx,
            sandbox: sb,
            container: c,
            port: final_port,
        };
        let conn = Conn {
            src,
            from_node: idx,
            host,
            path,
            url,
            dns,
            hops,
            ip: final_ip,
            port: final_port,
            client: seen_src,
            agent,
            depth: 1,
        };
        return crate::node::ingress_nginx::serve(net, conn, at);
    }
    let req = Request {
        host,
        path,
        client: &client,
        agent,
        pod_name: &sb.name,
        pod_ip: &ip_s,
        port: i32::from(final_port),
        now,
    };
    if server == crate::node::behavior::Server::Guestbook
        && path.starts_with("/guestbook.php")
        && !c.unready(now)
    {
        let from = Source {
            node: idx,
            ip: final_ip,
            pod: Some((sb.namespace.clone(), sb.name.clone())),
            agent: "Predis".into(),
        };
        let query = path.split_once('?').map_or("", |(_, q)| q);
        let (status, body) = crate::node::redis::guestbook(net, &from, query);
        let f = Fetch::Answered {
            response: Response {
                status,
                body,
                ..Response::default()
            },
            pod: Some(pod.clone()),
        };
        return record(net, src, url, dns, hops, &where_, Some(pod), f);
    }
    let os = &net.hosts[idx as usize].os;
    let response = http::respond_from(server, &c, &req, |root, p| {
        crate::node::container_fs::served(os, &c, &sb, root, p)
    });
    if let Some(line) = logs::access(
        &c,
        now,
        &client,
        path,
        response.status,
        response.body.len(),
        agent,
    ) {
        net.hosts[idx as usize]
            .runtime
            .append_logs(&c.id, vec![line]);
    }
    let f = Fetch::Answered {
        response,
        pod: Some(pod.clone()),
    };
    record(net, src, url, dns, hops, &where_, Some(pod), f)
}

/// CNI portmap on machine `idx`: the sandbox whose PortMappings hold `port`, as the
/// `CNI-HOSTPORT-DNAT` rule rewrites the destination.
fn host_port(net: &Network, idx: u32, port: u16) -> Option<(Ipv4Addr, u16, Hop)> {
    let h = &net.hosts[idx as usize];
    let rt = &h.runtime;
    let (sb, to) = rt.sandboxes.values().filter(|s| s.ready).find_map(|s| {
        s.port_mappings
            .iter()
            .find(|(hp, _)| *hp == port)
            .map(|(_, cp)| (s, *cp))
    })?;
    let ip: Ipv4Addr = sb.ip.parse().ok()?;
    let chain = format!("CNI-DN-{}", &sb.id[..sb.id.len().min(24)]);
    let hop = Hop {
        node: h.config.name.clone(),
        table: "nat".into(),
        chain: "CNI-HOSTPORT-DNAT".into(),
        rule: format!("-A {chain} -p tcp -m tcp --dport {port} -j DNAT --to-destination {ip}:{to}"),
        matched: true,
        note: format!(
            "hostPort {port} of {}/{}: DNAT to {ip}:{to}",
            sb.namespace, sb.name
        ),
    };
    Some((ip, to, hop))
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
