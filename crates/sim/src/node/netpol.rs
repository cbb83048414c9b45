//! NetworkPolicy as kindnet enforces it: which policies isolate a pod for ingress or
//! egress, and whether one of their rules lets a connection through. Policies are
//! additive (any rule of any selecting policy allows); a pod no policy selects is not
//! isolated. Only the first packet of a connection is judged: replies pass (conntrack).

use std::collections::BTreeMap;
use std::net::{IpAddr, Ipv4Addr};
use std::sync::Arc;

use k8s_openapi::api::networking::v1::{NetworkPolicy, NetworkPolicyPeer, NetworkPolicyPort};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use crate::apiserver::validation::meta::Selector;
use crate::apiserver::validation::networking::Cidr;
use crate::etcd::Store;
use crate::object::Object;
use crate::proxy::model::Protocol;

/// Labels by key.
type Labels = BTreeMap<String, String>;

/// A pod as the policy engine sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PolicyPod {
    /// Namespace.
    pub namespace: String,
    /// Name.
    pub name: String,
    /// Labels.
    pub labels: Labels,
    /// Pod IP.
    pub ip: Ipv4Addr,
    /// Named container ports: (name, port, protocol).
    pub ports: Vec<(String, i32, String)>,
}

/// What kindnet's policy controller knows: every policy, the pods with an address on the
/// pod network (host-network pods are never selected), the namespaces' labels.
#[derive(Clone, Debug, Default)]
pub struct PolicyView {
    policies: Vec<Arc<Object>>,
    pods: BTreeMap<Ipv4Addr, PolicyPod>,
    by_name: BTreeMap<(String, String), Ipv4Addr>,
    namespaces: BTreeMap<String, Labels>,
}

/// Which way a connection crosses the selected pod.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// Into the pod (judged on the destination node).
    Ingress,
    /// Out of the pod (judged on the source node).
    Egress,
}

impl Direction {
    /// `Ingress` / `Egress`, as policyTypes spells it.
    pub fn policy_type(self) -> &'static str {
        match self {
            Direction::Ingress => "Ingress",
            Direction::Egress => "Egress",
        }
    }
}

/// The verdict on one connection for one pod and direction.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// No policy selects the pod for this direction: everything passes.
    NotIsolated,
    /// A rule of this policy (`namespace/name`) allows it.
    Allowed(String),
    /// The pod is isolated by these policies and none of their rules allows it.
    Denied(Vec<String>),
}

/// The far end of a connection as seen by the selected pod.
#[derive(Clone, Copy, Debug)]
pub struct Peer<'a> {
    /// The address the selected pod sees (the source for ingress, the destination for
    /// egress).
    pub ip: Ipv4Addr,
    /// The pod holding that address, if any.
    pub pod: Option<&'a PolicyPod>,
}

impl PolicyView {
    /// The view of the cluster's state in `store`, or None when no NetworkPolicy exists
    /// (nothing is isolated, so nothing needs judging).
    pub fn from_store(store: &Store) -> Option<PolicyView> {
        let policies: Vec<Arc<Object>> = store
            .range_prefix("/registry/networkpolicies/")
            .map(|kv| kv.value.clone())
            .collect();
        if policies.is_empty() {
            return None;
        }
        let mut view = PolicyView {
            policies,
            ..PolicyView::default()
        };
        for kv in store.range_prefix("/registry/namespaces/") {
            if let Object::Namespace(ns) = &*kv.value {
                let name = ns.metadata.name.clone().unwrap_or_default();
                let labels = ns.metadata.labels.clone().unwrap_or_default();
                view.namespaces.insert(name, labels);
            }
        }
        for kv in store.range_prefix("/registry/pods/") {
            if let Object::Pod(p) = &*kv.value {
                if let Some(pp) = policy_pod(p) {
                    view.by_name
                        .insert((pp.namespace.clone(), pp.name.clone()), pp.ip);
                    view.pods.insert(pp.ip, pp);
                }
            }
        }
        Some(view)
    }

    /// The pod at `ip` on the pod network.
    pub fn pod_at(&self, ip: Ipv4Addr) -> Option<&PolicyPod> {
        self.pods.get(&ip)
    }

    /// The pod named `namespace/name`, if it has a pod-network address.
    pub fn pod_named(&self, namespace: &str, name: &str) -> Option<&PolicyPod> {
        let ip = self
            .by_name
            .get(&(namespace.to_string(), name.to_string()))?;
        self.pods.get(ip)
    }

    /// Judges a connection of `pod` in `dir` with `peer`, to `port`/`proto` (the
    /// destination port after kube-proxy's DNAT). Named ports are looked up on the
    /// destination pod: `pod` for ingress, the peer for egress.
    pub fn judge(
        &self,
        pod: &PolicyPod,
        dir: Direction,
        peer: Peer,
        port: u16,
        proto: Protocol,
    ) -> Verdict {
        let mut isolating = Vec::new();
        for obj in &self.policies {
            let Object::NetworkPolicy(np) = &**obj else {
                continue;
            };
            if !selects(np, pod, dir) {
                continue;
            }
            let name = format!(
                "{}/{}",
                np.metadata.namespace.as_deref().unwrap_or(""),
                np.metadata.name.as_deref().unwrap_or("")
            );
            let target = match dir {
                Direction::Ingress => Some(pod),
                Direction::Egress => peer.pod,
            };
            if self.any_rule_allows(np, dir, pod, peer, target, port, proto) {
                return Verdict::Allowed(name);
            }
            isolating.push(name);
        }
        if isolating.is_empty() {
            Verdict::NotIsolated
        } else {
            Verdict::Denied(isolating)
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn any_rule_allows(
        &self,
        np: &NetworkPolicy,
        dir: Direction,
        pod: &PolicyPod,
        peer: Peer,
        target: Option<&PolicyPod>,
        port: u16,
        proto: Protocol,
    ) -> bool {
        let spec = np.spec.clone().unwrap_or_default();
        let rules: Vec<(Vec<NetworkPolicyPort>, Vec<NetworkPolicyPeer>)> = match dir {
            Direction::Ingress => spec
                .ingress
                .unwrap_or_default()
                .into_iter()
                .map(|r| (r.ports.unwrap_or_default(), r.from.unwrap_or_default()))
                .collect(),
            Direction::Egress => spec
                .egress
                .unwrap_or_default()
                .into_iter()
                .map(|r| (r.ports.unwrap_or_default(), r.to.unwrap_or_default()))
                .collect(),
        };
        rules.iter().any(|(ports, peers)| {
            let port_ok =
                ports.is_empty() || ports.iter().any(|p| port_matches(p, target, port, proto));
            let peer_ok = peers.is_empty()
                || peers
                    .iter()
                    .any(|p| self.peer_matches(p, &pod.namespace, peer));
            port_ok && peer_ok
        })
    }

    /// Whether `peer` is what a policy peer in namespace `ns` describes.
    fn peer_matches(&self, p: &NetworkPolicyPeer, ns: &str, peer: Peer) -> bool {
        if let Some(b) = &p.ip_block {
            return ip_block_contains(b, peer.ip);
        }
        let Some(other) = peer.pod else {
            return false;
        };
        let ns_ok = match &p.namespace_selector {
            Some(sel) => matches(sel, self.namespaces.get(&other.namespace)),
            None => other.namespace == ns,
        };
        let pod_ok = p
            .pod_selector
            .as_ref()
            .is_none_or(|sel| matches(sel, Some(&other.labels)));
        ns_ok && pod_ok && (p.namespace_selector.is_some() || p.pod_selector.is_some())
    }
}

/// Whether `np` selects `pod` and isolates it in `dir`.
fn selects(np: &NetworkPolicy, pod: &PolicyPod, dir: Direction) -> bool {
    if np.metadata.namespace.as_deref() != Some(pod.namespace.as_str()) {
        return false;
    }
    let spec = np.spec.clone().unwrap_or_default();
    let types = spec.policy_types.clone().unwrap_or_default();
    if !types.iter().any(|t| t == dir.policy_type()) {
        return false;
    }
    let sel = spec.pod_selector.unwrap_or_default();
    matches(&sel, Some(&pod.labels))
}

fn matches(sel: &LabelSelector, labels: Option<&Labels>) -> bool {
    Selector::from_label_selector(Some(sel)).is_ok_and(|s| s.matches(labels))
}

fn ip_block_contains(b: &k8s_openapi::api::networking::v1::IPBlock, ip: Ipv4Addr) -> bool {
    let ip = IpAddr::V4(ip);
    let inside = |c: &str| Cidr::parse(c).is_some_and(|c| c.contains(&ip));
    inside(&b.cidr) && !b.except.iter().flatten().any(|e| inside(e))
}

/// Whether a policy port matches `port`/`proto`; a named port is the destination pod's
/// container port of that name (no destination pod: no match).
fn port_matches(
    p: &NetworkPolicyPort,
    target: Option<&PolicyPod>,
    port: u16,
    proto: Protocol,
) -> bool {
    let want = p.protocol.as_deref().unwrap_or("TCP");
    if want != proto.upper() {
        return false;
    }
    let port = i32::from(port);
    match &p.port {
        None => true,
        Some(IntOrString::Int(n)) => (*n..=p.end_port.unwrap_or(*n)).contains(&port),
        Some(IntOrString::String(name)) => target.is_some_and(|t| {
            t.ports
                .iter()
                .any(|(n, num, pr)| n == name && *num == port && pr == want)
        }),
    }
}

/// The pod as a policy sees it: only running pods with a pod-network address.
fn policy_pod(p: &k8s_openapi::api::core::v1::Pod) -> Option<PolicyPod> {
    let spec = p.spec.as_ref()?;
    if spec.host_network == Some(true) {
        return None;
    }
    let status = p.status.as_ref()?;
    if matches!(status.phase.as_deref(), Some("Succeeded" | "Failed")) {
        return None;
    }
    let ip: Ipv4Addr = status.pod_ip.as_deref()?.parse().ok()?;
    let ports = spec
        .containers
        .iter()
        .flat_map(|c| c.ports.iter().flatten())
        .filter_map(|cp| {
            let name = cp.name.clone()?;
            let proto = cp.protocol.clone().unwrap_or_else(|| "TCP".into());
            Some((name, cp.container_port, proto))
        })
        .collect();
    Some(PolicyPod {
        namespace: p.metadata.namespace.clone().unwrap_or_default(),
        name: p.metadata.name.clone().unwrap_or_default(),
        labels: p.metadata.labels.clone().unwrap_or_default(),
        ip,
        ports,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(ns: &str, name: &str, labels: &[(&str, &str)], ip: &str) -> PolicyPod {
        PolicyPod {
            namespace: ns.into(),
            name: name.into(),
            labels: labels
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            ip: ip.parse().unwrap(),
            ports: vec![("http".into(), 8080, "TCP".into())],
        }
    }

    fn view(policy: &str, pods: &[PolicyPod]) -> PolicyView {
        let np: NetworkPolicy = serde_yaml::from_str(policy).unwrap();
        let mut v = PolicyView {
            policies: vec![Arc::new(Object::from(np))],
            ..PolicyView::default()
        };
        v.namespaces.insert("default".into(), Labels::new());
        let team = [("team".to_string(), "a".to_string())]
            .into_iter()
            .collect();
        v.namespaces.insert("team-a".into(), team);
        v.namespaces.insert("team-b".into(), Labels::new());
        for p in pods {
            v.pods.insert(p.ip, p.clone());
        }
        v
    }

    const HEAD: &str = "metadata: {name: p, namespace: default}\nspec:\n  podSelector: {matchLabels: {app: db}}\n  policyTypes: [Ingress]\n  ingress:\n";

    /// Who of (team-a client, team-a other, team-b client, default client) gets in.
    fn admitted(rules: &str) -> Vec<bool> {
        let db = pod("default", "db", &[("app", "db")], "10.244.1.2");
        let peers = [
            pod("team-a", "c", &[("role", "client")], "10.244.1.3"),
            pod("team-a", "o", &[("role", "other")], "10.244.1.4"),
            pod("team-b", "c", &[("role", "client")], "10.244.1.5"),
            pod("default", "c", &[("role", "client")], "10.244.1.6"),
        ];
        let mut all = peers.to_vec();
        all.push(db.clone());
        let v = view(&format!("{HEAD}{rules}"), &all);
        peers
            .iter()
            .map(|p| {
                let peer = Peer {
                    ip: p.ip,
                    pod: v.pod_at(p.ip),
                };
                !matches!(
                    v.judge(&db, Direction::Ingress, peer, 8080, Protocol::Tcp),
                    Verdict::Denied(_)
                )
            })
            .collect()
    }

    #[test]
    fn selectors_in_one_peer_are_anded_and_separate_peers_ored() {
        let both = "  - from:\n    - namespaceSelector: {matchLabels: {team: a}}\n      podSelector: {matchLabels: {role: client}}\n";
        assert_eq!(admitted(both), [true, false, false, false]);
        let either = "  - from:\n    - namespaceSelector: {matchLabels: {team: a}}\n    - podSelector: {matchLabels: {role: client}}\n";
        assert_eq!(admitted(either), [true, true, false, true]);
        let any_ns = "  - from:\n    - namespaceSelector: {}\n      podSelector: {matchLabels: {role: client}}\n";
        assert_eq!(admitted(any_ns), [true, false, true, true]);
        let block = "  - from:\n    - ipBlock: {cidr: 10.244.1.4/30, except: [10.244.1.5/32]}\n";
        assert_eq!(admitted(block), [false, true, false, true]);
    }

    #[test]
    fn ports_match_by_number_range_and_name() {
        let rule = |port: &str| format!("  - ports:\n    - {port}\n");
        assert_eq!(admitted(&rule("{port: 8080}")), [true; 4]);
        assert_eq!(admitted(&rule("{port: 8000, endPort: 8079}")), [false; 4]);
        assert_eq!(admitted(&rule("{port: http}")), [true; 4]);
        assert_eq!(admitted(&rule("{port: http, protocol: UDP}")), [false; 4]);
        // An Ingress policy without rules isolates: nothing is admitted.
        assert_eq!(admitted("    []\n"), [false; 4]);
    }
}
