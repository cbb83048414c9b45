//! `describeIngressV1` and `describeIngressClassV1`.

use k8s_openapi::api::networking::v1::{Ingress, IngressBackend, IngressClass};

use super::workloads::format_endpoint_slices;
use super::{annotations_multiline, labels_multiline, DescribeContext, Writer};
use crate::kubectl::printers::ingress::load_balancer_address;
use crate::object::Object;

pub(super) fn describe_ingress(w: &mut Writer, ing: &Ingress, ctx: &DescribeContext) {
    let m = &ing.metadata;
    let ns = m.namespace.as_deref().unwrap_or("");
    w.line(0, &format!("Name:\t{}", m.name.as_deref().unwrap_or("")));
    labels_multiline(w, "", "Labels", m.labels.as_ref());
    w.line(0, &format!("Namespace:\t{ns}"));
    let status = ing.status.as_ref().and_then(|s| s.load_balancer.as_ref());
    w.line(0, &format!("Address:\t{}", load_balancer_address(status)));
    let spec = ing.spec.clone().unwrap_or_default();
    let class = spec.ingress_class_name.as_deref().unwrap_or("<none>");
    w.line(0, &format!("Ingress Class:\t{class}"));
    match &spec.default_backend {
        None => w.line(0, "Default backend:\t<default>"),
        Some(b) => w.line(0, &format!("Default backend:\t{}", backend(ctx, ns, b))),
    }
    if let Some(tls) = spec.tls.as_ref().filter(|t| !t.is_empty()) {
        w.line(0, "TLS:");
        for t in tls {
            let hosts = t.hosts.clone().unwrap_or_default().join(",");
            match t.secret_name.as_deref().filter(|s| !s.is_empty()) {
                None => w.line(1, &format!("SNI routes {hosts}")),
                Some(s) => w.line(1, &format!("{s} terminates {hosts}")),
            }
        }
    }
    w.line(0, "Rules:");
    w.line(1, "Host\tPath\tBackends");
    w.line(1, "----\t----\t--------");
    let mut count = 0;
    for rule in spec.rules.iter().flatten() {
        let Some(http) = &rule.http else {
            continue;
        };
        count += 1;
        let host = rule
            .host
            .as_deref()
            .filter(|h| !h.is_empty())
            .unwrap_or("*");
        w.line(1, &format!("{host}\t"));
        for p in &http.paths {
            let path = p.path.as_deref().unwrap_or("");
            w.line(2, &format!("\t{path} \t{}", backend(ctx, ns, &p.backend)));
        }
    }
    if count == 0 {
        let def = spec
            .default_backend
            .as_ref()
            .map(|b| backend(ctx, ns, b))
            .unwrap_or_default();
        w.line(1, &format!("*\t*\t{def}"));
    }
    annotations_multiline(w, "Annotations", m.annotations.as_ref());
}

/// `describeBackendV1`: `svc:port (endpoints)`, the error when the Service is missing, or
/// the resource reference.
fn backend(ctx: &DescribeContext, ns: &str, b: &IngressBackend) -> String {
    if let Some(s) = &b.service {
        let port = s.port.clone().unwrap_or_default();
        let port_text = match port.name.as_deref().filter(|n| !n.is_empty()) {
            Some(n) => n.to_string(),
            None => port.number.unwrap_or(0).to_string(),
        };
        let sb = format!("{}:{port_text}", s.name);
        let service = ctx.services.iter().find_map(|o| match o.as_ref() {
            Object::Service(svc)
                if svc.metadata.name.as_deref() == Some(s.name.as_str())
                    && svc.metadata.namespace.as_deref() == Some(ns) =>
            {
                Some(svc)
            }
            _ => None,
        });
        let Some(service) = service else {
            return format!("{sb} (<error: services \"{}\" not found>)", s.name);
        };
        let ports = service
            .spec
            .as_ref()
            .and_then(|sp| sp.ports.clone())
            .unwrap_or_default();
        let mut port_name = String::new();
        for sp in &ports {
            let by_number = port.number.is_some_and(|n| n != 0 && n == sp.port);
            let by_name = port
                .name
                .as_deref()
                .is_some_and(|n| !n.is_empty() && Some(n) == sp.name.as_deref());
            if by_number || by_name {
                port_name = sp.name.clone().unwrap_or_default();
            }
        }
        return format!(
            "{sb} ({})",
            format_endpoint_slices(ctx, service, &port_name)
        );
    }
    if let Some(r) = &b.resource {
        let group = r.api_group.as_deref().unwrap_or("<none>");
        return format!("APIGroup: {group}, Kind: {}, Name: {}", r.kind, r.name);
    }
    String::new()
}

pub(super) fn describe_ingress_class(w: &mut Writer, ic: &IngressClass) {
    let m = &ic.metadata;
    w.line(0, &format!("Name:\t{}", m.name.as_deref().unwrap_or("")));
    labels_multiline(w, "", "Labels", m.labels.as_ref());
    annotations_multiline(w, "Annotations", m.annotations.as_ref());
    let spec = ic.spec.clone().unwrap_or_default();
    w.line(
        0,
        &format!("Controller:\t{}", spec.controller.unwrap_or_default()),
    );
    if let Some(p) = &spec.parameters {
        w.line(0, "Parameters:");
        if let Some(g) = &p.api_group {
            w.line(1, &format!("APIGroup:\t{g}"));
        }
        w.line(1, &format!("Kind:\t{}", p.kind));
        w.line(1, &format!("Name:\t{}", p.name));
    }
}
