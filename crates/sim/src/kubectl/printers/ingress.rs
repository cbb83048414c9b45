//! The Ingress and IngressClass tables (`printIngress`, `printIngressClass`).

use k8s_openapi::api::networking::v1::{Ingress, IngressClass, IngressLoadBalancerStatus};

use super::{age, col, Column};
use crate::object::Kind;
use crate::time::Time;

pub(super) fn columns(kind: Kind) -> Vec<Column> {
    match kind {
        Kind::IngressClass => vec![
            col("Name"),
            col("Controller"),
            col("Parameters"),
            col("Age"),
        ],
        _ => vec![
            col("Name"),
            col("Class"),
            col("Hosts"),
            col("Address"),
            col("Ports"),
            col("Age"),
        ],
    }
}

/// `formatHosts`: up to three hosts, `*` when no rule names one.
pub(crate) fn format_hosts(ing: &Ingress) -> String {
    let rules = ing
        .spec
        .as_ref()
        .and_then(|s| s.rules.clone())
        .unwrap_or_default();
    let max = 3;
    let (mut list, mut more) = (Vec::new(), false);
    for r in &rules {
        if list.len() == max {
            more = true;
        }
        match r.host.as_deref() {
            Some(h) if !more && !h.is_empty() => list.push(h.to_string()),
            _ => {}
        }
    }
    if list.is_empty() {
        return "*".into();
    }
    let joined = list.join(",");
    if more {
        format!("{joined} + {} more...", rules.len() - max)
    } else {
        joined
    }
}

/// `ingressLoadBalancerStatusStringer` (the server prints wide, so nothing is cut).
pub(crate) fn load_balancer_address(status: Option<&IngressLoadBalancerStatus>) -> String {
    status
        .and_then(|s| s.ingress.as_ref())
        .into_iter()
        .flatten()
        .filter_map(|i| {
            i.ip.clone()
                .filter(|ip| !ip.is_empty())
                .or_else(|| i.hostname.clone().filter(|h| !h.is_empty()))
        })
        .collect::<Vec<_>>()
        .join(",")
}

pub(super) fn ingress_row(ing: &Ingress, now: Time) -> Vec<String> {
    let spec = ing.spec.clone().unwrap_or_default();
    let ports = if spec.tls.as_ref().is_some_and(|t| !t.is_empty()) {
        "80, 443"
    } else {
        "80"
    };
    vec![
        ing.metadata.name.clone().unwrap_or_default(),
        spec.ingress_class_name
            .clone()
            .unwrap_or_else(|| "<none>".into()),
        format_hosts(ing),
        load_balancer_address(ing.status.as_ref().and_then(|s| s.load_balancer.as_ref())),
        ports.into(),
        age(ing.metadata.creation_timestamp.as_ref(), now),
    ]
}

pub(super) fn ingress_class_row(ic: &IngressClass, now: Time) -> Vec<String> {
    let spec = ic.spec.clone().unwrap_or_default();
    let parameters = match &spec.parameters {
        None => "<none>".to_string(),
        Some(p) => match &p.api_group {
            Some(g) => format!("{}.{g}/{}", p.kind, p.name),
            None => format!("{}/{}", p.kind, p.name),
        },
    };
    vec![
        ic.metadata.name.clone().unwrap_or_default(),
        spec.controller.unwrap_or_default(),
        parameters,
        age(ic.metadata.creation_timestamp.as_ref(), now),
    ]
}
