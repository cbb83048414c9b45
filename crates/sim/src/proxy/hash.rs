//! kube-proxy's chain names: base32 of a SHA-256, cut to 16 characters.
//!
//! Upstream (`pkg/proxy/iptables/proxier.go`): `portProtoHash(servicePortName, protocol)`
//! is `base32.StdEncoding(sha256(servicePortName + protocol))[:16]`; endpoint chains hash
//! `servicePortName + protocol + "ip:port"`. Chain names must fit in 28 characters.

use sha2::{Digest, Sha256};

/// RFC 4648 base32 with the standard alphabet and `=` padding (Go's `base32.StdEncoding`).
pub fn base32_std(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 32] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
    let mut out = String::with_capacity(bytes.len().div_ceil(5) * 8);
    for chunk in bytes.chunks(5) {
        let mut block = [0u8; 5];
        block[..chunk.len()].copy_from_slice(chunk);
        let bits = block.iter().fold(0u64, |acc, b| (acc << 8) | u64::from(*b));
        // Characters that carry at least one input bit; the rest of the 8 are padding.
        let used = (chunk.len() * 8).div_ceil(5);
        for i in 0..8 {
            if i < used {
                let idx = ((bits >> (35 - 5 * i)) & 0x1f) as usize;
                out.push(char::from(ALPHABET[idx]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// `portProtoHash`: the 16-character hash shared by a service port's SVC/SVL/EXT/FW chains.
/// `service_port_name` is `ns/name:port` (or `ns/name`), `protocol` lowercase (`tcp`).
pub fn port_proto_hash(service_port_name: &str, protocol: &str) -> String {
    hash16(&[service_port_name, protocol])
}

fn hash16(parts: &[&str]) -> String {
    let mut h = Sha256::new();
    for p in parts {
        h.update(p.as_bytes());
    }
    let mut s = base32_std(&h.finalize());
    s.truncate(16);
    s
}

/// `KUBE-SVC-<hash>`: dispatch to endpoints under the `Cluster` traffic policy.
pub fn service_port_policy_cluster_chain(service_port_name: &str, protocol: &str) -> String {
    format!("KUBE-SVC-{}", port_proto_hash(service_port_name, protocol))
}

/// `KUBE-SVL-<hash>`: dispatch to node-local endpoints under the `Local` traffic policy.
pub fn service_port_policy_local_chain(service_port_name: &str, protocol: &str) -> String {
    format!("KUBE-SVL-{}", port_proto_hash(service_port_name, protocol))
}

/// `KUBE-FW-<hash>`: `loadBalancerSourceRanges` filtering.
pub fn service_firewall_chain(service_port_name: &str, protocol: &str) -> String {
    format!("KUBE-FW-{}", port_proto_hash(service_port_name, protocol))
}

/// `KUBE-EXT-<hash>`: traffic to external destinations (NodePort, LB IP, externalIPs).
pub fn service_external_chain(service_port_name: &str, protocol: &str) -> String {
    format!("KUBE-EXT-{}", port_proto_hash(service_port_name, protocol))
}

/// `KUBE-SEP-<hash>`: one endpoint (`ip:port`) of a service port.
pub fn service_port_endpoint_chain(
    service_port_name: &str,
    protocol: &str,
    endpoint: &str,
) -> String {
    format!(
        "KUBE-SEP-{}",
        hash16(&[service_port_name, protocol, endpoint])
    )
}

/// knftables' `NameLengthMax` less the longest chain prefix (`chainNameBaseLengthMax`).
const NFT_CHAIN_NAME_BASE_MAX: usize = 256 - 16;

/// nftables mode's `hashAndTruncate`: `base32(sha256(name))[:8] + "-" + name`, cut to
/// 240 characters (ending in `...`) if longer.
pub fn hash_and_truncate(name: &str) -> String {
    let mut h = Sha256::new();
    h.update(name.as_bytes());
    let encoded = base32_std(&h.finalize());
    let mut out = format!("{}-{name}", &encoded[..8]);
    if out.len() > NFT_CHAIN_NAME_BASE_MAX {
        let mut cut = NFT_CHAIN_NAME_BASE_MAX - 3;
        while !out.is_char_boundary(cut) {
            cut -= 1;
        }
        out.truncate(cut);
        out.push_str("...");
    }
    out
}

/// nftables mode's `servicePortChainNameBase`: `HASH-namespace/name/protocol/portName`.
pub fn nft_service_port_base(namespace: &str, name: &str, protocol: &str, port: &str) -> String {
    hash_and_truncate(&format!("{namespace}/{name}/{protocol}/{port}"))
}

/// nftables mode's `servicePortEndpointChainNameBase`:
/// `HASH-namespace/name/protocol/portName__ip/port`.
pub fn nft_endpoint_base(
    namespace: &str,
    name: &str,
    protocol: &str,
    port: &str,
    endpoint: &str,
) -> String {
    let (ip, ep_port) = endpoint.rsplit_once(':').unwrap_or((endpoint, ""));
    let ip = ip
        .trim_start_matches('[')
        .trim_end_matches(']')
        .replace(':', ".");
    hash_and_truncate(&format!(
        "{namespace}/{name}/{protocol}/{port}__{ip}/{ep_port}"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base32_matches_rfc4648_vectors() {
        assert_eq!(base32_std(b""), "");
        assert_eq!(base32_std(b"f"), "MY======");
        assert_eq!(base32_std(b"fo"), "MZXQ====");
        assert_eq!(base32_std(b"foo"), "MZXW6===");
        assert_eq!(base32_std(b"foob"), "MZXW6YQ=");
        assert_eq!(base32_std(b"fooba"), "MZXW6YTB");
        assert_eq!(base32_std(b"foobar"), "MZXW6YTBOI======");
    }

    #[test]
    fn hashes_match_upstream_vectors() {
        // kubernetes-behaviour.md §7.2 and proxier_test.go TestOverallIPTablesRules.
        assert_eq!(port_proto_hash("ns1/svc1:p80", "tcp"), "XPGD46QRK7WJZT7O");
        assert_eq!(
            service_port_endpoint_chain("ns1/svc1:p80", "tcp", "10.0.1.1:80"),
            "KUBE-SEP-SNQ3ZNILQDEJNDQO"
        );
        assert_eq!(
            service_port_endpoint_chain("ns1/svc1:p80", "tcp", "10.180.0.1:80"),
            "KUBE-SEP-SXIVWICOYRO3J4NJ"
        );
        assert_eq!(
            service_port_policy_cluster_chain("ns2/svc2:p80", "tcp"),
            "KUBE-SVC-GNZBNJ2PO5MGZ6GT"
        );
        assert_eq!(
            service_external_chain("ns5/svc5:p80", "tcp"),
            "KUBE-EXT-NUKIZ6OKUXPJNT4C"
        );
        assert_eq!(
            service_firewall_chain("ns5/svc5:p80", "tcp"),
            "KUBE-FW-NUKIZ6OKUXPJNT4C"
        );
        assert_eq!(
            service_port_policy_local_chain("ns2/svc2:p80", "tcp"),
            "KUBE-SVL-GNZBNJ2PO5MGZ6GT"
        );
        // The `kubernetes` Service seen on every real cluster.
        assert_eq!(
            service_port_policy_cluster_chain("default/kubernetes:https", "tcp"),
            "KUBE-SVC-NPX46M4PTMTKRN6Y"
        );
        assert_eq!(
            service_port_policy_cluster_chain("kube-system/kube-dns:dns", "udp"),
            "KUBE-SVC-TCOU7JCQXEZGVUNU"
        );
    }

    #[test]
    fn nft_names_match_upstream_vectors() {
        // pkg/proxy/nftables/proxier_test.go TestOverallNFTablesRules.
        assert_eq!(
            nft_service_port_base("ns1", "svc1", "tcp", "p80"),
            "ULMVA6XW-ns1/svc1/tcp/p80"
        );
        assert_eq!(
            nft_endpoint_base("ns1", "svc1", "tcp", "p80", "10.180.0.1:80"),
            "5OJB2KTY-ns1/svc1/tcp/p80__10.180.0.1/80"
        );
        assert_eq!(
            nft_service_port_base("ns5", "svc5", "tcp", "p80"),
            "HVFWP5L3-ns5/svc5/tcp/p80"
        );
        assert_eq!(
            nft_endpoint_base("ns5", "svc5", "tcp", "p80", "10.180.0.3:80"),
            "GTK6MW7G-ns5/svc5/tcp/p80__10.180.0.3/80"
        );
        let long = "x".repeat(300);
        let cut = hash_and_truncate(&long);
        assert_eq!(cut.len(), 240);
        assert!(cut.ends_with("..."));
    }
}
