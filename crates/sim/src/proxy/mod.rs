//! kube-proxy as pure functions: Services + EndpointSlices → the node's rules, and a packet walk.
//!
//! - [`model`]: the ServicePort / Endpoint view kube-proxy builds from API objects.
//! - [`iptables`]: `iptables-save` (and kube-proxy's `iptables-restore` input) for a node.
//! - [`ipvs`]: `ipvsadm -Ln` for a node in IPVS mode.
//! - [`nftables`]: `nft list ruleset` for a node in nftables mode.
//! - [`traffic`]: walks one packet through those rules to an endpoint, hop by hop.
//!
//! Everything here is a function of a [`ProxyInput`] snapshot; the kube-proxy actor owns
//! the informers and decides when to re-render.

#![warn(missing_docs)]

use std::net::Ipv4Addr;
use std::sync::Arc;

use k8s_openapi::api::core::v1::Service;
use k8s_openapi::api::discovery::v1::EndpointSlice;

use crate::time::Time;

pub mod graph;
pub mod hash;
pub mod iptables;
pub mod ipvs;
mod ipvs_rules;
pub mod model;
pub mod net;
pub mod nftables;
mod nftables_list;
mod nftables_service;
mod nftables_walk;
mod node;
mod rules;
pub mod traffic;
mod walk;

#[cfg(test)]
mod iptables_tests;
#[cfg(test)]
mod model_tests;
#[cfg(test)]
mod nftables_tests;
#[cfg(test)]
mod testutil;
#[cfg(test)]
mod traffic_tests;

pub use net::Cidr;
pub use node::IPTABLES_VERSION;

/// kube-proxy's `--proxy-mode`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub enum ProxyMode {
    /// The default on Linux: `KUBE-SVC-*` / `KUBE-SEP-*` chains in the nat table.
    #[default]
    Iptables,
    /// IPVS virtual servers (scheduler `rr`), with iptables only for masquerading.
    Ipvs,
    /// The `kube-proxy` nftables tables (`nft list ruleset`); upstream's GA mode.
    Nftables,
}

impl ProxyMode {
    /// `iptables`, `ipvs` or `nftables`, as `--proxy-mode` spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            ProxyMode::Iptables => "iptables",
            ProxyMode::Ipvs => "ipvs",
            ProxyMode::Nftables => "nftables",
        }
    }
}

/// A node as other nodes' rules and the packet walk see it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeAddress {
    /// `metadata.name`.
    pub name: String,
    /// The InternalIP (`172.18.0.(N+2)`).
    pub ip: Ipv4Addr,
    /// `spec.podCIDR` (`10.244.N.0/24`), if allocated.
    pub pod_cidr: Option<Cidr>,
}

/// kube-proxy flags that change the rendered rules. The defaults are upstream's
/// defaults on a kubeadm/kind node.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProxyOptions {
    /// `--iptables-masquerade-bit` (default 14 → mark `0x4000`).
    pub masquerade_bit: u8,
    /// `--masquerade-all` (default false).
    pub masquerade_all: bool,
    /// `--iptables-localhost-nodeports` (default true): NodePorts answer on 127.0.0.1.
    pub localhost_nodeports: bool,
    /// Whether the node's iptables supports `MASQUERADE --random-fully` (any modern one).
    pub random_fully: bool,
    /// Whether the kernel's nfacct counters could be created: adds the
    /// `-m nfacct --nfacct-name …` metric rules (off: kind nodes usually lack the module).
    pub nfacct: bool,
    /// Whether `net.netfilter.nf_conntrack_tcp_be_liberal` is set (drops the INVALID rule).
    pub conntrack_tcp_be_liberal: bool,
}

impl Default for ProxyOptions {
    fn default() -> Self {
        ProxyOptions {
            masquerade_bit: 14,
            masquerade_all: false,
            localhost_nodeports: true,
            random_fully: true,
            nfacct: false,
            conntrack_tcp_be_liberal: false,
        }
    }
}

impl ProxyOptions {
    /// The masquerade mark, `1 << masquerade_bit`.
    pub fn masquerade_mark(&self) -> u32 {
        1u32 << u32::from(self.masquerade_bit.min(31))
    }
}

/// Everything kube-proxy on one node knows when it syncs.
#[derive(Clone, Debug)]
pub struct ProxyInput<'a> {
    /// This node's name (`--hostname-override`): endpoints with this `nodeName` are local.
    pub node_name: String,
    /// This node's InternalIP.
    pub node_ip: Ipv4Addr,
    /// This node's podCIDR.
    pub pod_cidr: Option<Cidr>,
    /// `--cluster-cidr` (`10.244.0.0/16`): the local-traffic detector (`! -s <cidr>`).
    pub cluster_cidr: Option<Cidr>,
    /// All Services the informer holds.
    pub services: &'a [Arc<Service>],
    /// All EndpointSlices the informer holds.
    pub slices: &'a [Arc<EndpointSlice>],
    /// Every node (this one included), so NodePort traffic to another node can be followed.
    pub nodes: &'a [NodeAddress],
    /// iptables, IPVS or nftables.
    pub mode: ProxyMode,
    /// The virtual instant of the snapshot (the `iptables-save` header, `-m recent` ages).
    pub now: Time,
    /// Flags.
    pub options: ProxyOptions,
}

impl<'a> ProxyInput<'a> {
    /// The same cluster seen from another node, or `None` if `name` is unknown.
    pub fn for_node(&self, name: &str) -> Option<ProxyInput<'a>> {
        let n = self.nodes.iter().find(|n| n.name == name)?;
        let mut other = self.clone();
        other.node_name = n.name.clone();
        other.node_ip = n.ip;
        other.pod_cidr = n.pod_cidr;
        Some(other)
    }

    /// The node whose podCIDR holds `ip`, if any.
    pub fn node_of_pod_ip(&self, ip: Ipv4Addr) -> Option<&'a NodeAddress> {
        self.nodes
            .iter()
            .find(|n| n.pod_cidr.is_some_and(|c| c.contains(ip)))
    }
}
