//! A pod's resolver on the network: the first nameserver of its `/etc/resolv.conf`, asked
//! for each name of the search path in turn. The query is a UDP packet walked through
//! the source node's rules (10.96.0.10 → a CoreDNS pod), judged by NetworkPolicy, and
//! answered by the CoreDNS it reaches from the Services its node knows.

use std::net::Ipv4Addr;

use crate::node::dns::{DnsConfig, QType, Record, Zone, HOST_DNS};
use crate::node::net::{locate, record, walk, DnsAnswer, Fetch, Network, Source};
use crate::node::netpol_walk;
use crate::proxy::model::Protocol;
use crate::proxy::traffic::Outcome;

/// How a lookup ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Lookup {
    /// The server answered `fqdn` with `records`.
    Answer {
        /// The name that had records (after the search path).
        fqdn: String,
        /// The records (a CNAME first, then what it leads to).
        records: Vec<Record>,
        /// The CoreDNS pod that answered (`kube-system/coredns-…`).
        by: String,
    },
    /// No name of the search path exists.
    NxDomain {
        /// Who said so.
        by: String,
    },
    /// No server answered (unreachable, dropped by a policy): after two 5 s attempts.
    Timeout,
    /// The server's address refused the query (kube-dns without endpoints).
    Refused,
}

/// The first nameserver `src` asks (what nslookup prints as `Server:`).
pub fn server_of(net: &Network, src: &Source) -> String {
    config_of(net, src)
        .servers
        .first()
        .cloned()
        .unwrap_or_else(|| "127.0.0.1".into())
}

/// The resolver configuration of `src`: its sandbox's, or the node's own.
fn config_of(net: &Network, src: &Source) -> DnsConfig {
    let Some((ns, name)) = &src.pod else {
        return DnsConfig::host();
    };
    net.hosts()
        .get(src.node as usize)
        .and_then(|h| {
            h.runtime
                .sandboxes
                .values()
                .find(|s| s.ready && &s.namespace == ns && &s.name == name)
        })
        .map(|s| s.dns.clone())
        .unwrap_or_else(DnsConfig::host)
}

/// Looks `name` up as `src`'s resolver does (search path, ndots).
pub fn lookup(net: &mut Network, src: &Source, name: &str, qtype: QType) -> Lookup {
    let cfg = config_of(net, src);
    let Some(server) = cfg.servers.first().cloned() else {
        return Lookup::Refused;
    };
    let Ok(server_ip) = server.parse::<Ipv4Addr>() else {
        return Lookup::Timeout;
    };
    if server == HOST_DNS || src.pod.is_none() {
        // The node's resolver (Docker's on kind) knows no cluster names, and kubeloop
        // has no Internet behind it.
        return Lookup::NxDomain { by: server };
    }
    let (services, slices, by) = match reach(net, src, server_ip, name) {
        Ok(z) => z,
        Err(l) => return l,
    };
    let zone = Zone {
        services: &services,
        slices: &slices,
    };
    for fqdn in cfg.candidates(name) {
        let Some(mut records) = zone.answer(&fqdn, qtype) else {
            continue;
        };
        if let Some(Record::Cname { target, .. }) = records.first().cloned() {
            records.extend(zone.answer(&target, QType::A).unwrap_or_default());
        }
        return Lookup::Answer { fqdn, records, by };
    }
    Lookup::NxDomain { by }
}

type ZoneData = (
    Vec<std::sync::Arc<k8s_openapi::api::core::v1::Service>>,
    Vec<std::sync::Arc<k8s_openapi::api::discovery::v1::EndpointSlice>>,
    String,
);

/// Sends the query to `server:53` and finds the CoreDNS that gets it: its node's
/// Services and EndpointSlices, and its name.
fn reach(
    net: &mut Network,
    src: &Source,
    server: Ipv4Addr,
    name: &str,
) -> Result<ZoneData, Lookup> {
    let (mut hops, outcome) = walk(net, src, server, 53, Protocol::Udp);
    let (ip, seen) = match outcome {
        Outcome::Delivered {
            pod_ip,
            source_seen,
            ..
        } => (pod_ip, source_seen),
        Outcome::NotAService { dst_ip, .. } => (dst_ip, src.ip),
        Outcome::Rejected { .. } => return Err(Lookup::Refused),
        Outcome::Dropped { .. } => return Err(Lookup::Timeout),
    };
    let verdict = netpol_walk::check(net, src, seen, ip, 53, Protocol::Udp, &mut hops);
    if let Err(d) = verdict {
        let url = format!("dns:{name}");
        record(net, src, &url, None, hops, &d.0, None, Fetch::Timeout);
        return Err(Lookup::Timeout);
    }
    let Ok(Some(idx)) = locate(net, src.node, ip) else {
        return Err(Lookup::Timeout);
    };
    let host = &net.hosts()[idx as usize];
    let Some(sb) = host.runtime.sandbox_by_ip(&ip.to_string()) else {
        return Err(Lookup::Timeout);
    };
    let now = net.now;
    if !host.runtime.running_in(&sb.id).any(|c| c.accepts(53, now)) {
        return Err(Lookup::Refused);
    }
    let by = format!("{}/{}", sb.namespace, sb.name);
    let rules = host.rules.clone().unwrap_or_default();
    Ok((rules.services, rules.slices, by))
}

/// Resolves `name` to one address for a client (curl, wget): an IP literal as is, the
/// node's own name on a node, else the first A record [`lookup`] finds.
pub fn resolve(
    net: &mut Network,
    src: &Source,
    name: &str,
) -> (Result<Ipv4Addr, Fetch>, Option<DnsAnswer>) {
    if let Ok(ip) = name.parse::<Ipv4Addr>() {
        return (Ok(ip), None);
    }
    if name == "localhost" {
        return (Ok(Ipv4Addr::LOCALHOST), None);
    }
    if src.pod.is_none() {
        let host = &net.hosts()[src.node as usize];
        if name == host.config.name {
            return (host.ip.parse().map_err(|_| Fetch::Unresolved), None);
        }
        return (Err(Fetch::Unresolved), None);
    }
    match lookup(net, src, name, QType::A) {
        Lookup::Answer { fqdn, records, by } => {
            let ip = records.iter().find_map(|r| match r {
                Record::A { ip, .. } => Some(*ip),
                _ => None,
            });
            match ip {
                Some(ip) => (Ok(ip), Some((fqdn, ip.to_string(), by))),
                None => (Err(Fetch::Unresolved), Some((fqdn, "NXDOMAIN".into(), by))),
            }
        }
        Lookup::NxDomain { by } => (
            Err(Fetch::Unresolved),
            Some((name.to_string(), "NXDOMAIN".into(), by)),
        ),
        Lookup::Timeout => (Err(Fetch::Timeout), None),
        Lookup::Refused => (Err(Fetch::Unresolved), None),
    }
}
