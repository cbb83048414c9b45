//! Where kindnet judges a connection in the packet walk: egress on the source node,
//! ingress on the destination node, each recorded as a hop naming the policy that
//! allowed or dropped the packet.

use std::net::Ipv4Addr;

use crate::node::net::{Network, Source};
use crate::node::netpol::{Direction, Peer, PolicyPod, Verdict};
use crate::proxy::model::Protocol;
use crate::proxy::traffic::Hop;
use crate::proxy::Cidr;

/// A connection dropped by policy: the words the traffic path ends with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dropped(pub String);

/// Judges the connection `src` opens to `dst:port` (after kube-proxy's DNAT), which the
/// destination sees coming from `seen_src`. Appends kindnet's hops to `hops`; Err when a
/// policy drops it (the connection then times out, as the SYN gets no answer).
pub(crate) fn check(
    net: &mut Network,
    src: &Source,
    seen_src: Ipv4Addr,
    dst: Ipv4Addr,
    port: u16,
    proto: Protocol,
    hops: &mut Vec<Hop>,
) -> Result<(), Dropped> {
    let Some(view) = net.policies() else {
        return Ok(());
    };
    let dst_pod = view.pod_at(dst);
    let what = format!("{dst}:{port}/{}", proto.upper());
    if let Some((ns, name)) = &src.pod {
        if let Some(me) = view.pod_named(ns, name) {
            let peer = Peer {
                ip: dst,
                pod: dst_pod,
            };
            let v = view.judge(me, Direction::Egress, peer, port, proto);
            let node = node_name(net, src.node);
            let about = format!("egress from {ns}/{name} to {what}{}", pod_suffix(dst_pod));
            judged(hops, &node, "egress", &about, v)?;
        }
    }
    // Traffic from the pod's own node is always allowed (the kubelet's probes).
    let from_own_node = owner_ip(net, dst).is_some_and(|ip| ip == seen_src);
    if let Some(target) = dst_pod.filter(|_| !from_own_node) {
        let from = view.pod_at(seen_src);
        let peer = Peer {
            ip: seen_src,
            pod: from,
        };
        let v = view.judge(target, Direction::Ingress, peer, port, proto);
        let node = owner_of(net, dst).unwrap_or_default();
        let about = format!(
            "ingress to {}/{} ({what}) from {seen_src}{}",
            target.namespace,
            target.name,
            pod_suffix(from)
        );
        judged(hops, &node, "ingress", &about, v)?;
    }
    Ok(())
}

fn pod_suffix(p: Option<&PolicyPod>) -> String {
    p.map_or(String::new(), |p| format!(" ({}/{})", p.namespace, p.name))
}

/// Records a verdict as a hop; Err for a drop.
fn judged(
    hops: &mut Vec<Hop>,
    node: &str,
    chain: &str,
    about: &str,
    v: Verdict,
) -> Result<(), Dropped> {
    match v {
        Verdict::NotIsolated => Ok(()),
        Verdict::Allowed(policy) => {
            hops.push(Hop {
                node: node.to_string(),
                table: "netpol".into(),
                chain: chain.into(),
                rule: policy.clone(),
                matched: true,
                note: format!("{about}: allowed by NetworkPolicy {policy}"),
            });
            Ok(())
        }
        Verdict::Denied(policies) => {
            let names = policies.join(", ");
            hops.push(Hop {
                node: node.to_string(),
                table: "netpol".into(),
                chain: chain.into(),
                rule: names.clone(),
                matched: true,
                note: format!(
                    "{about}: dropped, isolated by NetworkPolicy {names} and no rule allows it"
                ),
            });
            Err(Dropped(format!(
                "dropped by NetworkPolicy {names} ({about}, on {node})"
            )))
        }
    }
}

fn node_name(net: &Network, n: u32) -> String {
    net.hosts()
        .get(n as usize)
        .map(|h| h.config.name.clone())
        .unwrap_or_default()
}

/// The node whose pod network holds `ip`.
fn owner_of(net: &Network, ip: Ipv4Addr) -> Option<String> {
    net.hosts()
        .iter()
        .find(|h| Cidr::parse(&h.pod_cidr).is_some_and(|c| c.contains(ip)))
        .map(|h| h.config.name.clone())
}

/// The address of the node whose pod network holds `ip`.
fn owner_ip(net: &Network, ip: Ipv4Addr) -> Option<Ipv4Addr> {
    net.hosts()
        .iter()
        .find(|h| Cidr::parse(&h.pod_cidr).is_some_and(|c| c.contains(ip)))
        .and_then(|h| h.ip.parse().ok())
}
