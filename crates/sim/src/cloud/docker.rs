//! The docker daemon of the terminal's host, as far as kind's network goes: the
//! containers cloud-provider-kind starts there (one envoy per LoadBalancer Service), each
//! with its address on the `kind` network (172.18.0.0/16), the listeners and the node
//! backends of its envoy configuration. The kind nodes are containers on the same
//! network; their addresses are the world's and are never handed out again.

use std::collections::BTreeMap;
use std::net::Ipv4Addr;

use crate::time::Time;

/// One listener of an envoy: the Service port and the NodePort it forwards to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Listener {
    /// `IPv4_<port>_<protocol>`, the key cloud-provider-kind names listener and cluster by.
    pub key: String,
    /// The Service port envoy listens on (on 0.0.0.0).
    pub port: u16,
    /// TCP or UDP.
    pub protocol: String,
    /// The port on each node (the Service's nodePort).
    pub node_port: u16,
}

/// A node in envoy's cluster: its InternalIP.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Backend {
    /// Node name.
    pub node: String,
    /// Its InternalIP.
    pub ip: Ipv4Addr,
}

/// The envoy configuration cloud-provider-kind writes (`lds.yaml`/`cds.yaml`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EnvoyConfig {
    /// One per Service port (TCP and UDP only).
    pub listeners: Vec<Listener>,
    /// The nodes the service controller passed in.
    pub backends: Vec<Backend>,
    /// Health-check port on every backend: kube-proxy's 10256, or the Service's
    /// healthCheckNodePort with `externalTrafficPolicy: Local`.
    pub health_check_port: u16,
    /// `ClientIP` hashes the source address (RING_HASH), anything else is RANDOM.
    pub session_affinity: String,
    /// `loadBalancerSourceRanges` as a filter-chain match, parsed.
    pub source_ranges: Vec<crate::proxy::Cidr>,
}

/// A load-balancer container (`kindccm-…`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LbContainer {
    /// `kindccm-<12 hex>`: sha256 of `<cluster>/<namespace>/<name>`, first 6 bytes.
    pub name: String,
    /// `<cluster>/<namespace>/<name>` (label `io.x-k8s.cloud-provider-kind.loadbalancer.name`).
    pub simple_name: String,
    /// Its address on the kind network: the Service's load-balancer IP.
    pub ip: Ipv4Addr,
    /// The envoy configuration.
    pub config: EnvoyConfig,
    /// When envoy answers `/ready` with `LIVE` (it forwards nothing before).
    pub ready_at: Time,
}

/// The host's containers on the kind network, by name.
#[derive(Clone, Debug, Default)]
pub struct DockerHost {
    containers: BTreeMap<String, LbContainer>,
    /// The kind nodes' addresses (containers docker does not hand out again).
    pub(crate) node_ips: Vec<Ipv4Addr>,
}

/// The kind network's gateway: the host's own address on it.
pub const HOST_IP: Ipv4Addr = Ipv4Addr::new(172, 18, 0, 1);
/// The image cloud-provider-kind runs (`constants.DefaultProxyImageName`).
pub const ENVOY_IMAGE: &str = "docker.io/envoyproxy/envoy:v1.33.2";

impl DockerHost {
    /// The container named `name`.
    pub fn get(&self, name: &str) -> Option<&LbContainer> {
        self.containers.get(name)
    }

    /// The container holding `ip` on the kind network.
    pub fn by_ip(&self, ip: Ipv4Addr) -> Option<&LbContainer> {
        self.containers.values().find(|c| c.ip == ip)
    }

    /// Every container, by name.
    pub fn containers(&self) -> impl Iterator<Item = &LbContainer> {
        self.containers.values()
    }

    /// `docker run --net kind [--ip IP]`: the lowest free address after the nodes
    /// (docker's IPAM hands out the lowest free one; the gateway, the control plane and
    /// the nodes hold the first), or the requested one. `Err` says why docker refused.
    pub fn create(
        &mut self,
        name: &str,
        simple_name: &str,
        requested: Option<Ipv4Addr>,
        ready_at: Time,
    ) -> Result<Ipv4Addr, String> {
        if let Some(c) = self.containers.get(name) {
            return Ok(c.ip);
        }
        let taken = |ip: Ipv4Addr, me: &DockerHost| {
            ip == HOST_IP
                || ip.to_string() == crate::cluster::CONTROL_PLANE_IP
                || me.node_ips.contains(&ip)
                || me.containers.values().any(|c| c.ip == ip)
        };
        let ip = match requested {
            Some(ip) => {
                let net = crate::proxy::Cidr::parse(KIND_SUBNET);
                if !net.is_some_and(|n| n.contains(ip)) {
                    return Err(format!("Error response from daemon: invalid config for network kind: invalid endpoint settings:\nno configured subnet or ip-range contain the IP address {ip}"));
                }
                if taken(ip, self) {
                    return Err("Error response from daemon: Address already in use".into());
                }
                ip
            }
            None => {
                let floor = self
                    .node_ips
                    .iter()
                    .map(|ip| u32::from(*ip))
                    .max()
                    .unwrap_or(u32::from(HOST_IP) + 1)
                    + 1;
                let mut n = floor;
                while taken(Ipv4Addr::from(n), self) {
                    n += 1;
                }
                if n >= u32::from(Ipv4Addr::new(172, 18, 255, 255)) {
                    return Err("Error response from daemon: no available IPv4 addresses on this network's address pools: kind".into());
                }
                Ipv4Addr::from(n)
            }
        };
        self.containers.insert(
            name.to_string(),
            LbContainer {
                name: name.to_string(),
                simple_name: simple_name.to_string(),
                ip,
                config: EnvoyConfig::default(),
                ready_at,
            },
        );
        Ok(ip)
    }

    /// Writes a container's envoy configuration (`proxyUpdateLoadBalancer`).
    pub fn configure(&mut self, name: &str, config: EnvoyConfig) -> bool {
        match self.containers.get_mut(name) {
            Some(c) => {
                c.config = config;
                true
            }
            None => false,
        }
    }

    /// `docker rm -f NAME`; whether it existed.
    pub fn remove(&mut self, name: &str) -> bool {
        self.containers.remove(name).is_some()
    }

    /// Removes every load-balancer container (cloud-provider-kind's cleanup on exit).
    pub fn remove_all(&mut self) -> usize {
        let n = self.containers.len();
        self.containers.clear();
        n
    }
}

/// kind's docker network.
pub const KIND_SUBNET: &str = "172.18.0.0/16";

/// `loadBalancerName`: `kindccm-` and the first 6 bytes of sha256(`cluster/ns/name`) in hex.
pub fn load_balancer_name(cluster: &str, namespace: &str, name: &str) -> String {
    use sha2::{Digest, Sha256};
    let simple = format!("{cluster}/{namespace}/{name}");
    let sum = Sha256::digest(simple.as_bytes());
    let hex: String = sum[..6].iter().map(|b| format!("{b:02x}")).collect();
    format!("kindccm-{hex}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn host() -> DockerHost {
        DockerHost {
            node_ips: (3..6).map(|n| Ipv4Addr::new(172, 18, 0, n)).collect(),
            ..DockerHost::default()
        }
    }

    #[test]
    fn addresses_come_after_the_nodes_and_are_reused_once_freed() {
        let mut d = host();
        assert_eq!(
            d.create("a", "kind/default/a", None, 0),
            Ok(Ipv4Addr::new(172, 18, 0, 6))
        );
        assert_eq!(
            d.create("b", "kind/default/b", None, 0),
            Ok(Ipv4Addr::new(172, 18, 0, 7))
        );
        assert!(d.remove("a"));
        assert_eq!(
            d.create("c", "kind/default/c", None, 0),
            Ok(Ipv4Addr::new(172, 18, 0, 6))
        );
        assert_eq!(
            d.by_ip(Ipv4Addr::new(172, 18, 0, 7))
                .map(|c| c.name.as_str()),
            Some("b")
        );
    }

    #[test]
    fn a_requested_address_must_be_free_and_on_the_network() {
        let mut d = host();
        assert!(d
            .create("a", "x", Some(Ipv4Addr::new(172, 18, 0, 4)), 0)
            .is_err());
        assert!(d
            .create("a", "x", Some(Ipv4Addr::new(10, 0, 0, 4)), 0)
            .is_err());
        assert_eq!(
            d.create("a", "x", Some(Ipv4Addr::new(172, 18, 0, 200)), 0),
            Ok(Ipv4Addr::new(172, 18, 0, 200))
        );
    }

    #[test]
    fn the_container_name_is_the_hash_cloud_provider_kind_uses() {
        let n = load_balancer_name("kind", "default", "web");
        assert!(
            n.starts_with("kindccm-") && n.len() == "kindccm-".len() + 12,
            "{n}"
        );
        assert_ne!(n, load_balancer_name("kind", "default", "web2"));
    }
}
