//! `describeNetworkPolicy`: the spec in words, rule by rule.

use k8s_openapi::api::networking::v1::{NetworkPolicy, NetworkPolicyPeer, NetworkPolicyPort};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time as K8sTime;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::{annotations_multiline, labels_multiline, Writer};
use crate::kubectl::printers::format_label_selector;

/// Go's `time.Time.String()` for a UTC instant (`2026-01-01 00:00:05 +0000 UTC`).
fn go_time(t: Option<&K8sTime>) -> String {
    match t {
        Some(t) => t.0.strftime("%Y-%m-%d %H:%M:%S +0000 UTC").to_string(),
        None => "0001-01-01 00:00:00 +0000 UTC".into(),
    }
}

pub(super) fn describe_network_policy(w: &mut Writer, np: &NetworkPolicy) {
    let m = &np.metadata;
    w.line(0, &format!("Name:\t{}", m.name.as_deref().unwrap_or("")));
    w.line(
        0,
        &format!("Namespace:\t{}", m.namespace.as_deref().unwrap_or("")),
    );
    w.line(
        0,
        &format!("Created on:\t{}", go_time(m.creation_timestamp.as_ref())),
    );
    labels_multiline(w, "", "Labels", m.labels.as_ref());
    annotations_multiline(w, "Annotations", m.annotations.as_ref());
    let spec = np.spec.clone().unwrap_or_default();
    w.line(0, "Spec:");
    w.write(1, "PodSelector: ");
    let sel = spec.pod_selector.clone().unwrap_or_default();
    let empty = sel.match_labels.as_ref().is_none_or(|l| l.is_empty())
        && sel.match_expressions.as_ref().is_none_or(|e| e.is_empty());
    if empty {
        w.line(
            2,
            "<none> (Allowing the specific traffic to all pods in this namespace)",
        );
    } else {
        w.line(2, &format_label_selector(Some(&sel)));
    }
    let types = spec.policy_types.clone().unwrap_or_default();
    let has = |t: &str| types.iter().any(|x| x == t);
    if has("Ingress") {
        w.line(1, "Allowing ingress traffic:");
        let rules: Vec<_> = spec
            .ingress
            .iter()
            .flatten()
            .map(|r| (r.ports.clone(), r.from.clone()))
            .collect();
        rules_text(w, &rules, Direction::Ingress);
    } else {
        w.line(1, "Not affecting ingress traffic");
    }
    if has("Egress") {
        w.line(1, "Allowing egress traffic:");
        let rules: Vec<_> = spec
            .egress
            .iter()
            .flatten()
            .map(|r| (r.ports.clone(), r.to.clone()))
            .collect();
        rules_text(w, &rules, Direction::Egress);
    } else {
        w.line(1, "Not affecting egress traffic");
    }
    w.line(1, &format!("Policy Types: {}", types.join(", ")));
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Direction {
    Ingress,
    Egress,
}

type Rule = (
    Option<Vec<NetworkPolicyPort>>,
    Option<Vec<NetworkPolicyPeer>>,
);

/// `printNetworkPolicySpecIngressFrom` / `…EgressTo` (indent "    ").
fn rules_text(w: &mut Writer, rules: &[Rule], dir: Direction) {
    const IN: &str = "    ";
    let (isolated, peer_word, any_peer) = match dir {
        Direction::Ingress => (
            "<none> (Selected pods are isolated for ingress connectivity)",
            "From",
            "From: <any> (traffic not restricted by source)",
        ),
        Direction::Egress => (
            "<none> (Selected pods are isolated for egress connectivity)",
            "To",
            "To: <any> (traffic not restricted by destination)",
        ),
    };
    if rules.is_empty() {
        w.line(0, &format!("{IN}{isolated}"));
        return;
    }
    for (i, (ports, peers)) in rules.iter().enumerate() {
        let ports = ports.clone().unwrap_or_default();
        if ports.is_empty() {
            w.line(
                0,
                &format!("{IN}To Port: <any> (traffic allowed to all ports)"),
            );
        }
        for p in &ports {
            let proto = p.protocol.as_deref().unwrap_or("TCP");
            let port = match &p.port {
                Some(IntOrString::Int(n)) => n.to_string(),
                Some(IntOrString::String(s)) => s.clone(),
                None => "<nil>".into(),
            };
            match p.end_port {
                None => w.line(0, &format!("{IN}To Port: {port}/{proto}")),
                Some(end) => w.line(0, &format!("{IN}To Port Range: {port}-{end}/{proto}")),
            }
        }
        let peers = peers.clone().unwrap_or_default();
        if peers.is_empty() {
            w.line(0, &format!("{IN}{any_peer}"));
        }
        for peer in &peers {
            w.line(0, &format!("{IN}{peer_word}:"));
            peer_text(w, peer);
        }
        if i != rules.len() - 1 {
            w.line(0, &format!("{IN}----------"));
        }
    }
}

fn peer_text(w: &mut Writer, peer: &NetworkPolicyPeer) {
    const IN: &str = "    ";
    let f = |s| format_label_selector(Some(s));
    match (&peer.pod_selector, &peer.namespace_selector, &peer.ip_block) {
        (Some(p), Some(n), _) => {
            w.line(1, &format!("{IN}NamespaceSelector: {}", f(n)));
            w.line(1, &format!("{IN}PodSelector: {}", f(p)));
        }
        (Some(p), None, _) => w.line(1, &format!("{IN}PodSelector: {}", f(p))),
        (None, Some(n), _) => w.line(1, &format!("{IN}NamespaceSelector: {}", f(n))),
        (None, None, Some(b)) => {
            w.line(1, &format!("{IN}IPBlock:"));
            w.line(2, &format!("{IN}CIDR: {}", b.cidr));
            let except = b.except.clone().unwrap_or_default().join(", ");
            w.line(2, &format!("{IN}Except: {except}"));
        }
        (None, None, None) => {}
    }
}
