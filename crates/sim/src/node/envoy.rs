//! A connection to a cloud-provider-kind load balancer: the envoy container on the kind
//! network takes it on the Service port (a `tcp_proxy` listener), picks a healthy node
//! of its cluster (RANDOM, or RING_HASH on the source address with ClientIP affinity;
//! health is kube-proxy's answer on the health-check port) and opens its own connection
//! to that node's NodePort, which the node's kube-proxy rules take to a pod. The pod sees
//! envoy's address, or the node's after the masquerade of `externalTrafficPolicy: Cluster`.

use super::net::*;
use crate::cloud::docker::{LbContainer, HOST_IP};
use crate::cloud::service_controller::KUBE_PROXY_HEALTHZ;
use crate::node::netpol_walk;
use crate::proxy::model::Protocol;
use crate::proxy::traffic::{Hop, Outcome};
use crate::rng::fnv1a;
use std::net::Ipv4Addr;

/// What the client asked for.
pub(crate) struct Request<'a> {
    /// The `Host` header.
    pub host: &'a str,
    /// The request URI.
    pub path: &'a str,
    /// The URL as typed.
    pub url: &'a str,
    /// The client's name lookup.
    pub dns: Option<DnsAnswer>,
}

/// Whether kube-proxy on machine `n` answers envoy's health check on `port` with 200:
/// its healthz (10256) while it runs, or a Service's healthCheckNodePort while the node
/// has a ready endpoint of that Service.
fn healthy(net: &Network, n: usize, lb: &LbContainer, port: u16) -> bool {
    let h = &net.hosts()[n];
    if h.cut() || h.proxy.is_none() {
        return false;
    }
    if port == KUBE_PROXY_HEALTHZ {
        return true;
    }
    let mut parts = lb.simple_name.splitn(3, '/').skip(1);
    let (Some(ns), Some(name)) = (parts.next(), parts.next()) else {
        return false;
    };
    let Some(rules) = &h.rules else { return false };
    rules.slices.iter().any(|s| {
        s.metadata.namespace.as_deref() == Some(ns)
            && s.metadata
                .labels
                .as_ref()
                .and_then(|l| l.get("kubernetes.io/service-name"))
                .is_some_and(|v| v == name)
            && s.endpoints.iter().any(|e| {
                e.node_name.as_deref() == Some(h.config.name.as_str())
                    && e.conditions.as_ref().and_then(|c| c.ready).unwrap_or(true)
            })
    })
}

/// Records a walk that ended at envoy.
fn ended(
    net: &mut Network,
    src: &Source,
    req: Request,
    hops: Vec<Hop>,
    outcome: &str,
    f: Fetch,
    node: &str,
) -> Fetch {
    let f = record(net, src, req.url, req.dns, hops, outcome, None, f);
    name_path(net, src, node);
    f
}

/// The walk just recorded met the rules of `node` first (envoy's pick; none when envoy
/// did not forward), and the terminal's host, not a machine of the cluster, sent it.
fn name_path(net: &mut Network, src: &Source, node: &str) {
    let host = src.pod.is_none() && src.ip == HOST_IP;
    if let Some(p) = net.state().paths.back_mut() {
        p.node = node.to_string();
        if host {
            p.from = format!("host ({HOST_IP})");
        }
    }
}

/// A connection from `src` to the load balancer at `ip:port`.
pub(crate) fn proxy(
    net: &mut Network,
    src: &Source,
    ip: Ipv4Addr,
    port: u16,
    req: Request,
) -> Fetch {
    let Some(lb) = net.state_ref().docker.by_ip(ip).cloned() else {
        return Fetch::NoRoute;
    };
    let fin = format!("{ip}:{port}");
    let listener = lb
        .config
        .listeners
        .iter()
        .find(|l| l.port == port && l.protocol == "TCP")
        .cloned();
    let Some(listener) = listener.filter(|_| net.now >= lb.ready_at) else {
        let why = format!("{fin} ({}): no envoy listener on this port", lb.name);
        return ended(net, src, req, Vec::new(), &why, Fetch::Refused, "");
    };
    let mut hop = Hop {
        node: lb.name.clone(),
        table: "envoy".into(),
        chain: format!("listener_{}", listener.key),
        rule: String::new(),
        matched: true,
        note: String::new(),
    };
    if !lb.config.source_ranges.is_empty()
        && !lb.config.source_ranges.iter().any(|c| c.contains(src.ip))
    {
        hop.matched = false;
        hop.note = format!(
            "source {} matches no filter chain (loadBalancerSourceRanges): connection closed",
            src.ip
        );
        let why = format!("{fin} ({}): closed by envoy", lb.name);
        return ended(net, src, req, vec![hop], &why, Fetch::EmptyReply, "");
    }
    let hc = lb.config.health_check_port;
    let backends: Vec<(usize, Ipv4Addr, String)> = lb
        .config
        .backends
        .iter()
        .filter_map(|b| {
            let n = net.hosts().iter().position(|h| h.ip == b.ip.to_string())?;
            Some((n, b.ip, b.node.clone()))
        })
        .filter(|(n, _, _)| healthy(net, *n, &lb, hc))
        .collect();
    let total = lb.config.backends.len();
    if backends.is_empty() {
        hop.matched = false;
        hop.note = format!("cluster_{}: no healthy host (0 of {total} pass the health check on :{hc}/healthz): connection closed", listener.key);
        let why = format!("{fin} ({}): no healthy upstream", lb.name);
        return ended(net, src, req, vec![hop], &why, Fetch::EmptyReply, "");
    }
    let (pick, policy) = if lb.config.session_affinity == "ClientIP" {
        let h = fnv1a(&src.ip.octets());
        (
            (h % backends.len() as u64) as usize,
            "RING_HASH on the source address",
        )
    } else {
        (
            net.state().rng.intn(backends.len() as u64) as usize,
            "RANDOM",
        )
    };
    let (n, node_ip, node) = backends[pick].clone();
    hop.rule = format!(
        "tcp_proxy → cluster_{}: {node_ip}:{} ({node})",
        listener.key, listener.node_port
    );
    hop.note = format!(
        "{policy} among {} of {total} healthy nodes (health check :{hc}/healthz); envoy connects from {}",
        backends.len(),
        lb.ip
    );
    let mut hops = vec![hop];
    let (more, outcome) = walk_from(
        net,
        n as u32,
        lb.ip,
        node_ip,
        listener.node_port,
        Protocol::Tcp,
    );
    hops.extend(more);
    let (final_ip, final_port, seen) = match &outcome {
        Outcome::Delivered {
            pod_ip,
            port,
            source_seen,
            ..
        } => (*pod_ip, *port, *source_seen),
        Outcome::NotAService { dst_ip, dst_port } => (*dst_ip, *dst_port, lb.ip),
        Outcome::Rejected { .. } | Outcome::Dropped { .. } => {
            let why = format!(
                "{fin} ({}): the upstream connection failed, closed",
                lb.name
            );
            return ended(net, src, req, hops, &why, Fetch::EmptyReply, &node);
        }
    };
    let envoy = Source {
        node: n as u32,
        ip: lb.ip,
        pod: None,
        agent: src.agent.clone(),
    };
    if let Err(d) = netpol_walk::check(
        net,
        &envoy,
        seen,
        final_ip,
        final_port,
        Protocol::Tcp,
        &mut hops,
    ) {
        return ended(net, src, req, hops, &d.0, Fetch::EmptyReply, &node);
    }
    let f = deliver(
        net,
        Conn {
            src,
            from_node: n as u32,
            host: req.host,
            path: req.path,
            url: req.url,
            dns: req.dns,
            hops,
            ip: final_ip,
            port: final_port,
            client: seen,
            agent: &src.agent,
            depth: 0,
        },
    );
    name_path(net, src, &node);
    match f {
        // envoy answers a failed upstream by closing the client's connection.
        Fetch::Refused | Fetch::Timeout | Fetch::NoRoute => Fetch::EmptyReply,
        other => other,
    }
}
