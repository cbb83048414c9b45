//! networking.k8s.io/v1 validation: NetworkPolicy (`pkg/apis/networking/validation`).

use k8s_openapi::api::networking::v1::{
    IPBlock, NetworkPolicy, NetworkPolicyPeer, NetworkPolicyPort,
};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::meta::*;
use super::names::*;
use crate::apiserver::field_error::{BadValue, FieldError, Path};

/// The protocols a policy port may name.
const PROTOCOLS: &[&str] = &["TCP", "UDP", "SCTP"];
/// The policy types.
const POLICY_TYPES: &[&str] = &["Ingress", "Egress"];

/// `ValidateNetworkPolicy`: metadata, then the spec.
pub fn validate_network_policy(np: &NetworkPolicy) -> Vec<FieldError> {
    let mut errs = validate_object_meta(
        &np.metadata,
        true,
        name_is_dns_subdomain,
        &Path::new("metadata"),
    );
    let spec = np.spec.clone().unwrap_or_default();
    let path = Path::new("spec");
    let all = spec.pod_selector.clone().unwrap_or_default();
    errs.extend(validate_label_selector(
        Some(&all),
        &path.child("podSelector"),
    ));
    for (i, rule) in spec.ingress.iter().flatten().enumerate() {
        let p = path.child("ingress").index(i);
        errs.extend(rule_errors(&p, "from", &rule.ports, &rule.from));
    }
    for (i, rule) in spec.egress.iter().flatten().enumerate() {
        let p = path.child("egress").index(i);
        errs.extend(rule_errors(&p, "to", &rule.ports, &rule.to));
    }
    let types = spec.policy_types.clone().unwrap_or_default();
    if types.len() > POLICY_TYPES.len() {
        errs.push(FieldError::invalid(
            &path.child("policyTypes"),
            BadValue::string_list(Some(&types)),
            "may not specify more than two policyTypes",
        ));
        return errs;
    }
    for (i, t) in types.iter().enumerate() {
        if !POLICY_TYPES.contains(&t.as_str()) {
            errs.push(FieldError::not_supported(
                &path.child("policyTypes").index(i),
                BadValue::typed_str(t),
                POLICY_TYPES,
            ));
        }
    }
    errs
}

fn rule_errors(
    path: &Path,
    peers_field: &str,
    ports: &Option<Vec<NetworkPolicyPort>>,
    peers: &Option<Vec<NetworkPolicyPeer>>,
) -> Vec<FieldError> {
    let mut errs = Vec::new();
    for (i, port) in ports.iter().flatten().enumerate() {
        errs.extend(validate_port(port, &path.child("ports").index(i)));
    }
    for (i, peer) in peers.iter().flatten().enumerate() {
        errs.extend(validate_peer(peer, &path.child(peers_field).index(i)));
    }
    errs
}

/// `ValidateNetworkPolicyPort`.
fn validate_port(port: &NetworkPolicyPort, path: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if let Some(proto) = port.protocol.as_deref() {
        if !PROTOCOLS.contains(&proto) {
            errs.push(FieldError::not_supported(
                &path.child("protocol"),
                BadValue::typed_str(proto),
                PROTOCOLS,
            ));
        }
    }
    match (&port.port, port.end_port) {
        (Some(IntOrString::Int(p)), end) => {
            for msg in is_valid_port_num(i64::from(*p)) {
                errs.push(FieldError::invalid(&path.child("port"), *p, &msg));
            }
            if let Some(end) = end {
                if end < *p {
                    errs.push(FieldError::invalid(
                        &path.child("endPort"),
                        end,
                        "must be greater than or equal to `port`",
                    ));
                }
                for msg in is_valid_port_num(i64::from(end)) {
                    errs.push(FieldError::invalid(&path.child("endPort"), end, &msg));
                }
            }
        }
        (Some(IntOrString::String(name)), end) => {
            if let Some(end) = end {
                errs.push(FieldError::invalid(
                    &path.child("endPort"),
                    end,
                    "may not be specified when `port` is non-numeric",
                ));
            }
            errs.extend(invalid_each(
                &path.child("port"),
                name,
                is_valid_port_name(name),
            ));
        }
        (None, Some(end)) => errs.push(FieldError::invalid(
            &path.child("endPort"),
            end,
            "may not be specified when `port` is not specified",
        )),
        (None, None) => {}
    }
    errs
}

/// `ValidateNetworkPolicyPeer`: at least one selector or block; an ipBlock alone.
fn validate_peer(peer: &NetworkPolicyPeer, path: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut n = 0;
    if let Some(s) = &peer.pod_selector {
        n += 1;
        errs.extend(validate_label_selector(Some(s), &path.child("podSelector")));
    }
    if let Some(s) = &peer.namespace_selector {
        n += 1;
        errs.extend(validate_label_selector(
            Some(s),
            &path.child("namespaceSelector"),
        ));
    }
    if let Some(b) = &peer.ip_block {
        n += 1;
        errs.extend(validate_ip_block(b, &path.child("ipBlock")));
    }
    if n == 0 {
        errs.push(FieldError::required(path, "must specify a peer"));
    } else if n > 1 && peer.ip_block.is_some() {
        errs.push(FieldError::forbidden(
            path,
            "may not specify both ipBlock and another peer",
        ));
    }
    errs
}

const CIDR_MSG: &str = "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)";

/// `ValidateIPBlock`: a valid cidr, and every `except` a strict subset of it.
fn validate_ip_block(b: &IPBlock, path: &Path) -> Vec<FieldError> {
    if b.cidr.is_empty() {
        return vec![FieldError::required(&path.child("cidr"), "")];
    }
    let Some(outer) = Cidr::parse(&b.cidr) else {
        return vec![FieldError::invalid(
            &path.child("cidr"),
            b.cidr.as_str(),
            CIDR_MSG,
        )];
    };
    let mut errs = Vec::new();
    for (i, e) in b.except.iter().flatten().enumerate() {
        let p = path.child("except").index(i);
        let Some(inner) = Cidr::parse(e) else {
            errs.push(FieldError::invalid(&p, e.as_str(), CIDR_MSG));
            continue;
        };
        if !outer.contains(&inner.net) || outer.bits >= inner.bits {
            errs.push(FieldError::invalid(
                &p,
                e.as_str(),
                "must be a strict subset of `cidr`",
            ));
        }
    }
    errs
}

/// A parsed CIDR of either family (the network address masked, as `ParseCIDR` returns).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cidr {
    /// The masked network address, as 128 bits (IPv4 mapped into the low 32).
    pub net: std::net::IpAddr,
    /// The prefix length.
    pub bits: u8,
}

impl Cidr {
    /// Parses `a.b.c.d/n` or `x::/n`; None if malformed.
    pub fn parse(s: &str) -> Option<Cidr> {
        let (ip, bits) = s.split_once('/')?;
        if bits.is_empty() || !bits.bytes().all(|c| c.is_ascii_digit()) {
            return None;
        }
        let bits: u8 = bits.parse().ok()?;
        let ip: std::net::IpAddr = ip.parse().ok()?;
        let max = if ip.is_ipv4() { 32 } else { 128 };
        if bits > max {
            return None;
        }
        let net = match ip {
            std::net::IpAddr::V4(a) => {
                let m = if bits == 0 {
                    0
                } else {
                    u32::MAX << (32 - bits)
                };
                std::net::IpAddr::V4((u32::from(a) & m).into())
            }
            std::net::IpAddr::V6(a) => {
                let m = if bits == 0 {
                    0
                } else {
                    u128::MAX << (128 - bits)
                };
                std::net::IpAddr::V6((u128::from(a) & m).into())
            }
        };
        Some(Cidr { net, bits })
    }

    /// Whether `ip` is inside this network (families must match).
    pub fn contains(&self, ip: &std::net::IpAddr) -> bool {
        match (self.net, ip) {
            (std::net::IpAddr::V4(n), std::net::IpAddr::V4(a)) => {
                let m = if self.bits == 0 {
                    0
                } else {
                    u32::MAX << (32 - self.bits)
                };
                u32::from(*a) & m == u32::from(n)
            }
            (std::net::IpAddr::V6(n), std::net::IpAddr::V6(a)) => {
                let m = if self.bits == 0 {
                    0
                } else {
                    u128::MAX << (128 - self.bits)
                };
                u128::from(*a) & m == u128::from(n)
            }
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apiserver::field_error::invalid_message;

    fn errors(yaml: &str) -> String {
        let np: NetworkPolicy = serde_yaml::from_str(yaml).unwrap();
        let errs = validate_network_policy(&np);
        invalid_message("NetworkPolicy", "networking.k8s.io", "p", &errs)
    }

    const HEAD: &str = "metadata: {name: p, namespace: default}\n";

    #[test]
    fn ports_and_peers_get_upstreams_field_errors() {
        let m = errors(&format!("{HEAD}spec:\n  podSelector: {{}}\n  ingress:\n  - ports:\n    - {{port: 80, endPort: 70}}\n    - {{port: http, endPort: 90, protocol: ICMP}}\n    from:\n    - {{}}\n    - ipBlock: {{cidr: 10.0.0.0/8, except: [10.0.0.0/8, 192.168.0.0/16, nope]}}\n      podSelector: {{}}\n"));
        assert_eq!(
            m,
            "NetworkPolicy.networking.k8s.io \"p\" is invalid: [spec.ingress[0].ports[0].endPort: Invalid value: 70: must be greater than or equal to `port`, spec.ingress[0].ports[1].protocol: Unsupported value: \"ICMP\": supported values: \"TCP\", \"UDP\", \"SCTP\", spec.ingress[0].ports[1].endPort: Invalid value: 90: may not be specified when `port` is non-numeric, spec.ingress[0].from[0]: Required value: must specify a peer, spec.ingress[0].from[1].ipBlock.except[0]: Invalid value: \"10.0.0.0/8\": must be a strict subset of `cidr`, spec.ingress[0].from[1].ipBlock.except[1]: Invalid value: \"192.168.0.0/16\": must be a strict subset of `cidr`, spec.ingress[0].from[1].ipBlock.except[2]: Invalid value: \"nope\": must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64), spec.ingress[0].from[1]: Forbidden: may not specify both ipBlock and another peer]"
        );
    }

    #[test]
    fn policy_types_are_ingress_or_egress() {
        let m = errors(&format!(
            "{HEAD}spec:\n  podSelector: {{}}\n  policyTypes: [Ingress, Sideways]\n"
        ));
        assert_eq!(m, "NetworkPolicy.networking.k8s.io \"p\" is invalid: spec.policyTypes[1]: Unsupported value: \"Sideways\": supported values: \"Ingress\", \"Egress\"");
        let m = errors(&format!(
            "{HEAD}spec:\n  podSelector: {{}}\n  policyTypes: [Ingress, Egress, Ingress]\n"
        ));
        assert_eq!(m, "NetworkPolicy.networking.k8s.io \"p\" is invalid: spec.policyTypes: Invalid value: [\"Ingress\",\"Egress\",\"Ingress\"]: may not specify more than two policyTypes");
    }

    #[test]
    fn a_valid_policy_has_no_errors() {
        let m = errors(&format!("{HEAD}spec:\n  podSelector: {{matchLabels: {{app: web}}}}\n  egress:\n  - to:\n    - namespaceSelector: {{}}\n      podSelector: {{matchLabels: {{k8s-app: kube-dns}}}}\n    ports:\n    - {{port: 53, protocol: UDP}}\n    - {{port: 32000, endPort: 32768}}\n"));
        assert_eq!(m, "NetworkPolicy.networking.k8s.io \"p\" is invalid");
    }
}
