//! `kubectl describe` for deployments, replicasets, services and nodes.

use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet};
use k8s_openapi::api::core::v1::{Node, PodTemplateSpec, Service};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::pod::{describe_containers, describe_volumes};
use super::{
    annotations_multiline, annotations_multiline_indent, controlled_by, labels_multiline, rfc1123z,
    tolerations_multiline, DescribeContext, Writer,
};
use crate::kubectl::printers::{format_label_selector, format_labels, node_roles, selector_string};
use crate::object::Object;
use crate::time::Time;

/// `DescribePodTemplate`.
pub(super) fn describe_pod_template(w: &mut Writer, t: &PodTemplateSpec) {
    w.line(0, "Pod Template:");
    let meta = t.metadata.clone().unwrap_or_default();
    labels_multiline(w, "  ", "Labels", meta.labels.as_ref());
    if meta.annotations.as_ref().is_some_and(|a| !a.is_empty()) {
        annotations_multiline_indent(w, "  ", "Annotations", meta.annotations.as_ref());
    }
    let spec = t.spec.clone().unwrap_or_default();
    if let Some(sa) = spec
        .service_account_name
        .as_deref()
        .filter(|s| !s.is_empty())
    {
        w.line(1, &format!("Service Account:\t{sa}"));
    }
    if let Some(init) = spec.init_containers.as_ref().filter(|c| !c.is_empty()) {
        describe_containers(w, "Init Containers", init, None, "  ");
    }
    describe_containers(w, "Containers", &spec.containers, None, "  ");
    describe_volumes(w, spec.volumes.as_deref().unwrap_or(&[]), "  ");
    if let Some(pc) = spec
        .priority_class_name
        .as_deref()
        .filter(|s| !s.is_empty())
    {
        w.line(1, &format!("Priority Class Name:\t{pc}"));
    }
    labels_multiline(w, "  ", "Node-Selectors", spec.node_selector.as_ref());
    tolerations_multiline(
        w,
        "  ",
        "Tolerations",
        spec.tolerations.as_deref().unwrap_or(&[]),
    );
}

fn replica_sets_by_labels(list: &[&ReplicaSet]) -> String {
    if list.is_empty() {
        return "<none>".into();
    }
    list.iter()
        .map(|rs| {
            format!(
                "{} ({}/{} replicas created)",
                rs.metadata.name.as_deref().unwrap_or(""),
                rs.status.as_ref().map_or(0, |s| s.replicas),
                rs.spec.as_ref().and_then(|s| s.replicas).unwrap_or(0)
            )
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// Whether `rs` runs `d`'s current pod template (ignoring the `pod-template-hash` label).
fn template_matches(d: &Deployment, rs: &ReplicaSet) -> bool {
    let (Some(dt), Some(rt)) = (
        d.spec.as_ref().map(|s| &s.template),
        rs.spec.as_ref().and_then(|s| s.template.as_ref()),
    ) else {
        return false;
    };
    let mut rt = rt.clone();
    if let Some(l) = rt.metadata.as_mut().and_then(|m| m.labels.as_mut()) {
        l.remove("pod-template-hash");
        if l.is_empty() {
            if let Some(m) = rt.metadata.as_mut() {
                m.labels = None;
            }
        }
    }
    let mut dt = dt.clone();
    if let Some(l) = dt.metadata.as_mut().and_then(|m| m.labels.as_mut()) {
        l.remove("pod-template-hash");
        if l.is_empty() {
            if let Some(m) = dt.metadata.as_mut() {
                m.labels = None;
            }
        }
    }
    rt == dt
}

pub(super) fn describe_deployment(w: &mut Writer, d: &Deployment, ctx: &DescribeContext) {
    let m = &d.metadata;
    let spec = d.spec.clone().unwrap_or_default();
    let st = d.status.clone().unwrap_or_default();
    w.line(0, &format!("Name:\t{}", m.name.as_deref().unwrap_or("")));
    w.line(
        0,
        &format!("Namespace:\t{}", m.namespace.as_deref().unwrap_or("")),
    );
    w.line(
        0,
        &format!(
            "CreationTimestamp:\t{}",
            rfc1123z(m.creation_timestamp.as_ref())
        ),
    );
    labels_multiline(w, "", "Labels", m.labels.as_ref());
    annotations_multiline(w, "Annotations", m.annotations.as_ref());
    w.line(
        0,
        &format!("Selector:\t{}", selector_string(Some(&spec.selector))),
    );
    w.line(
        0,
        &format!(
            "Replicas:\t{} desired | {} updated | {} total | {} available | {} unavailable",
            spec.replicas.unwrap_or(0),
            st.updated_replicas.unwrap_or(0),
            st.replicas.unwrap_or(0),
            st.available_replicas.unwrap_or(0),
            st.unavailable_replicas.unwrap_or(0)
        ),
    );
    let strategy = spec.strategy.clone().unwrap_or_default();
    w.line(
        0,
        &format!(
            "StrategyType:\t{}",
            strategy.type_.clone().unwrap_or_default()
        ),
    );
    w.line(
        0,
        &format!("MinReadySeconds:\t{}", spec.min_ready_seconds.unwrap_or(0)),
    );
    if let Some(ru) = &strategy.rolling_update {
        let s = |v: &Option<IntOrString>| match v {
            Some(IntOrString::Int(i)) => i.to_string(),
            Some(IntOrString::String(s)) => s.clone(),
            None => "<nil>".into(),
        };
        w.line(
            0,
            &format!(
                "RollingUpdateStrategy:\t{} max unavailable, {} max surge",
                s(&ru.max_unavailable),
                s(&ru.max_surge)
            ),
        );
    }
    describe_pod_template(w, &spec.template);
    let conditions = st.conditions.clone().unwrap_or_default();
    if !conditions.is_empty() {
        w.line(0, "Conditions:");
        w.line(1, "Type\tStatus\tReason");
        w.line(1, "----\t------\t------");
        for c in &conditions {
            w.line(
                1,
                &format!(
                    "{} \t{}\t{}",
                    c.type_,
                    c.status,
                    c.reason.as_deref().unwrap_or("")
                ),
            );
        }
    }
    // `GetAllReplicaSets`: ReplicaSets this deployment controls; the new one runs the current
    // template (the oldest such), the old ones shown are those still scaled above zero.
    let uid = m.uid.as_deref();
    let mut owned: Vec<&ReplicaSet> = ctx
        .replica_sets
        .iter()
        .filter_map(|o| match o.as_ref() {
            Object::ReplicaSet(rs) => Some(&**rs),
            _ => None,
        })
        .filter(|rs| {
            rs.metadata.namespace == m.namespace
                && rs.metadata.owner_references.iter().flatten().any(|r| {
                    r.controller == Some(true)
                        && r.kind == "Deployment"
                        && (uid.is_none() || Some(r.uid.as_str()) == uid)
                        && Some(&r.name) == m.name.as_ref()
                })
        })
        .collect();
    owned.sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
    let mut by_age = owned.clone();
    by_age.sort_by(|a, b| {
        let ta = a.metadata.creation_timestamp.as_ref().map(|t| t.0);
        let tb = b.metadata.creation_timestamp.as_ref().map(|t| t.0);
        ta.cmp(&tb).then(a.metadata.name.cmp(&b.metadata.name))
    });
    let new_rs = by_age.into_iter().find(|rs| template_matches(d, rs));
    let old: Vec<&ReplicaSet> = owned
        .into_iter()
        .filter(|rs| Some(rs.metadata.name.as_ref()) != new_rs.map(|n| n.metadata.name.as_ref()))
        .filter(|rs| rs.spec.as_ref().and_then(|s| s.replicas).unwrap_or(0) != 0)
        .collect();
    w.line(
        0,
        &format!("OldReplicaSets:\t{}", replica_sets_by_labels(&old)),
    );
    let new: Vec<&ReplicaSet> = new_rs.into_iter().collect();
    w.line(
        0,
        &format!("NewReplicaSet:\t{}", replica_sets_by_labels(&new)),
    );
}

pub(super) fn describe_replica_set(w: &mut Writer, rs: &ReplicaSet, ctx: &DescribeContext) {
    let m = &rs.metadata;
    let spec = rs.spec.clone().unwrap_or_default();
    let st = rs.status.clone().unwrap_or_default();
    w.line(0, &format!("Name:\t{}", m.name.as_deref().unwrap_or("")));
    w.line(
        0,
        &format!("Namespace:\t{}", m.namespace.as_deref().unwrap_or("")),
    );
    w.line(
        0,
        &format!("Selector:\t{}", format_label_selector(Some(&spec.selector))),
    );
    labels_multiline(w, "", "Labels", m.labels.as_ref());
    annotations_multiline(w, "Annotations", m.annotations.as_ref());
    if let Some(c) = controlled_by(m) {
        w.line(0, &format!("Controlled By:\t{c}"));
    }
    w.line(
        0,
        &format!(
            "Replicas:\t{} current / {} desired",
            st.replicas,
            spec.replicas.unwrap_or(0)
        ),
    );
    let (mut running, mut waiting, mut succeeded, mut failed) = (0, 0, 0, 0);
    for p in &ctx.pods {
        let Object::Pod(p) = p.as_ref() else { continue };
        let owned = p.metadata.owner_references.iter().flatten().any(|r| {
            r.controller == Some(true) && r.kind == "ReplicaSet" && Some(&r.name) == m.name.as_ref()
        });
        if !owned || p.metadata.namespace != m.namespace {
            continue;
        }
        match p.status.as_ref().and_then(|s| s.phase.as_deref()) {
            Some("Running") => running += 1,
            Some("Pending") => waiting += 1,
            Some("Succeeded") => succeeded += 1,
            Some("Failed") => failed += 1,
            _ => {}
        }
    }
    w.write(0, "Pods Status:\t");
    w.line(
        0,
        &format!("{running} Running / {waiting} Waiting / {succeeded} Succeeded / {failed} Failed"),
    );
    if let Some(t) = &spec.template {
        describe_pod_template(w, t);
    } else {
        w.line(0, "Pod Template:");
        w.write(1, "<unset>");
    }
    let conditions = st.conditions.clone().unwrap_or_default();
    if !conditions.is_empty() {
        w.line(0, "Conditions:");
        w.line(1, "Type\tStatus\tReason");
        w.line(1, "----\t------\t------");
        for c in &conditions {
            w.line(
                1,
                &format!(
                    "{} \t{}\t{}",
                    c.type_,
                    c.status,
                    c.reason.as_deref().unwrap_or("")
                ),
            );
        }
    }
}

pub(super) fn describe_service(w: &mut Writer, s: &Service, ctx: &DescribeContext) {
    let m = &s.metadata;
    let spec = s.spec.clone().unwrap_or_default();
    w.line(0, &format!("Name:\t{}", m.name.as_deref().unwrap_or("")));
    w.line(
        0,
        &format!("Namespace:\t{}", m.namespace.as_deref().unwrap_or("")),
    );
    labels_multiline(w, "", "Labels", m.labels.as_ref());
    annotations_multiline(w, "Annotations", m.annotations.as_ref());
    w.line(
        0,
        &format!(
            "Selector:\t{}",
            format_labels(&spec.selector.clone().unwrap_or_default())
        ),
    );
    w.line(
        0,
        &format!("Type:\t{}", spec.type_.clone().unwrap_or_default()),
    );
    if let Some(p) = &spec.ip_family_policy {
        w.line(0, &format!("IP Family Policy:\t{p}"));
    }
    let families = spec.ip_families.clone().unwrap_or_default();
    w.line(
        0,
        &format!(
            "IP Families:\t{}",
            if families.is_empty() {
                "<none>".into()
            } else {
                families.join(",")
            }
        ),
    );
    w.line(
        0,
        &format!("IP:\t{}", spec.cluster_ip.clone().unwrap_or_default()),
    );
    let ips = spec.cluster_ips.clone().unwrap_or_default();
    w.line(
        0,
        &format!(
            "IPs:\t{}",
            if ips.is_empty() {
                "<none>".into()
            } else {
                ips.join(",")
            }
        ),
    );
    if let Some(ext) = spec.external_ips.as_ref().filter(|e| !e.is_empty()) {
        w.line(0, &format!("External IPs:\t{}", ext.join(",")));
    }
    if let Some(name) = spec.external_name.as_deref().filter(|e| !e.is_empty()) {
        w.line(0, &format!("External Name:\t{name}"));
    }
    let ingress = s
        .status
        .as_ref()
        .and_then(|st| st.load_balancer.as_ref())
        .and_then(|lb| lb.ingress.clone())
        .unwrap_or_default();
    if !ingress.is_empty() {
        let list: Vec<String> = ingress
            .into_iter()
            .filter_map(|i| i.ip.or(i.hostname))
            .collect();
        w.line(0, &format!("LoadBalancer Ingress:\t{}", list.join(", ")));
    }
    for sp in spec.ports.iter().flatten() {
        let name = sp
            .name
            .clone()
            .filter(|n| !n.is_empty())
            .unwrap_or_else(|| "<unset>".into());
        let proto = sp.protocol.clone().unwrap_or_default();
        w.line(0, &format!("Port:\t{name}\t{}/{proto}", sp.port));
        let target = match &sp.target_port {
            Some(IntOrString::Int(i)) => i.to_string(),
            Some(IntOrString::String(s)) => s.clone(),
            None => "0".into(),
        };
        w.line(0, &format!("TargetPort:\t{target}/{proto}"));
        if let Some(np) = sp.node_port.filter(|&n| n != 0) {
            w.line(0, &format!("NodePort:\t{name}\t{np}/{proto}"));
        }
        w.line(
            0,
            &format!(
                "Endpoints:\t{}",
                format_endpoint_slices(ctx, s, sp.name.as_deref().unwrap_or(""))
            ),
        );
    }
    w.line(
        0,
        &format!(
            "Session Affinity:\t{}",
            spec.session_affinity.clone().unwrap_or_default()
        ),
    );
    if let Some(p) = spec
        .external_traffic_policy
        .as_deref()
        .filter(|p| !p.is_empty())
    {
        w.line(0, &format!("External Traffic Policy:\t{p}"));
    }
    if let Some(p) = &spec.internal_traffic_policy {
        w.line(0, &format!("Internal Traffic Policy:\t{p}"));
    }
    if let Some(hc) = spec.health_check_node_port.filter(|&p| p != 0) {
        w.line(0, &format!("HealthCheck NodePort:\t{hc}"));
    }
}

/// `formatEndpointSlices` over the service's slices (`kubernetes.io/service-name` label).
pub(super) fn format_endpoint_slices(
    ctx: &DescribeContext,
    s: &Service,
    port_name: &str,
) -> String {
    let slices: Vec<_> = ctx
        .endpoints
        .iter()
        .filter_map(|o| match o.as_ref() {
            Object::EndpointSlice(e) => Some(&**e),
            _ => None,
        })
        .filter(|e| {
            e.metadata.namespace == s.metadata.namespace
                && e.metadata
                    .labels
                    .as_ref()
                    .and_then(|l| l.get("kubernetes.io/service-name"))
                    == s.metadata.name.as_ref()
        })
        .collect();
    if slices.is_empty() {
        return "<none>".into();
    }
    let max = 3;
    let (mut list, mut more, mut count) = (Vec::new(), false, 0);
    for e in slices {
        let ports = e.ports.clone().unwrap_or_default();
        if ports.is_empty() {
            for ep in &e.endpoints {
                if list.len() == max {
                    more = true;
                }
                if !more {
                    list.push(ep.addresses.first().cloned().unwrap_or_default());
                }
                count += 1;
            }
            continue;
        }
        for p in ports
            .iter()
            .filter(|p| p.name.as_deref().unwrap_or("") == port_name)
        {
            for ep in &e.endpoints {
                if list.len() == max {
                    more = true;
                }
                if !more {
                    let a = ep.addresses.first().cloned().unwrap_or_default();
                    let host = if a.contains(':') { format!("[{a}]") } else { a };
                    list.push(format!("{host}:{}", p.port.unwrap_or(0)));
                }
                count += 1;
            }
        }
    }
    let s = list.join(",");
    if more {
        format!("{s} + {} more...", count - max)
    } else {
        s
    }
}

/// A subset of the node describer: identity, taints, conditions, addresses, capacity,
/// system info, pod CIDRs and the node's non-terminated pods.
pub(super) fn describe_node(w: &mut Writer, n: &Node, ctx: &DescribeContext, now: Time) {
    let m = &n.metadata;
    let spec = n.spec.clone().unwrap_or_default();
    let st = n.status.clone().unwrap_or_default();
    let name = m.name.clone().unwrap_or_default();
    w.line(0, &format!("Name:\t{name}"));
    let roles = node_roles(n);
    w.line(
        0,
        &format!(
            "Roles:\t{}",
            if roles.is_empty() {
                "<none>".into()
            } else {
                roles.join(",")
            }
        ),
    );
    labels_multiline(w, "", "Labels", m.labels.as_ref());
    annotations_multiline(w, "Annotations", m.annotations.as_ref());
    w.line(
        0,
        &format!(
            "CreationTimestamp:\t{}",
            rfc1123z(m.creation_timestamp.as_ref())
        ),
    );
    let mut taints = spec.taints.clone().unwrap_or_default();
    w.write(0, "Taints:\t");
    if taints.is_empty() {
        w.line(0, "<none>");
    } else {
        taints.sort_by(|a, b| (&a.key, &a.effect).cmp(&(&b.key, &b.effect)));
        for (i, t) in taints.iter().enumerate() {
            if i != 0 {
                w.write(0, "\t");
            }
            let value = t
                .value
                .as_deref()
                .filter(|v| !v.is_empty())
                .map(|v| format!("={v}"))
                .unwrap_or_default();
            w.line(0, &format!("{}{value}:{}", t.key, t.effect));
        }
    }
    w.line(
        0,
        &format!("Unschedulable:\t{}", spec.unschedulable.unwrap_or(false)),
    );
    let conditions = st.conditions.clone().unwrap_or_default();
    if !conditions.is_empty() {
        w.line(0, "Conditions:");
        w.line(
            1,
            "Type\tStatus\tLastHeartbeatTime\tLastTransitionTime\tReason\tMessage",
        );
        w.line(
            1,
            "----\t------\t-----------------\t------------------\t------\t-------",
        );
        for c in &conditions {
            w.line(
                1,
                &format!(
                    "{} \t{} \t{} \t{} \t{} \t{}",
                    c.type_,
                    c.status,
                    rfc1123z(c.last_heartbeat_time.as_ref()),
                    rfc1123z(c.last_transition_time.as_ref()),
                    c.reason.as_deref().unwrap_or(""),
                    c.message.as_deref().unwrap_or("")
                ),
            );
        }
    }
    w.line(0, "Addresses:");
    for a in st.addresses.iter().flatten() {
        w.line(1, &format!("{}:\t{}", a.type_, a.address));
    }
    for (title, list) in [("Capacity", &st.capacity), ("Allocatable", &st.allocatable)] {
        if let Some(list) = list.as_ref().filter(|l| !l.is_empty()) {
            w.line(0, &format!("{title}:"));
            for (k, q) in list {
                w.line(1, &format!("{k}:\t{}", q.0));
            }
        }
    }
    if let Some(i) = &st.node_info {
        w.line(0, "System Info:");
        for (k, v) in [
            ("Machine ID", &i.machine_id),
            ("System UUID", &i.system_uuid),
            ("Boot ID", &i.boot_id),
            ("Kernel Version", &i.kernel_version),
            ("OS Image", &i.os_image),
            ("Operating System", &i.operating_system),
            ("Architecture", &i.architecture),
            ("Container Runtime Version", &i.container_runtime_version),
            ("Kubelet Version", &i.kubelet_version),
        ] {
            w.line(1, &format!("{k}:\t{v}"));
        }
    }
    if let Some(cidr) = spec.pod_cidr.as_deref().filter(|c| !c.is_empty()) {
        w.line(0, &format!("PodCIDR:\t{cidr}"));
        w.line(
            0,
            &format!(
                "PodCIDRs:\t{}",
                spec.pod_cidrs.clone().unwrap_or_default().join(",")
            ),
        );
    }
    let mut pods: Vec<_> = ctx
        .pods
        .iter()
        .filter_map(|o| match o.as_ref() {
            Object::Pod(p) => Some(&**p),
            _ => None,
        })
        .filter(|p| p.spec.as_ref().and_then(|s| s.node_name.as_deref()) == Some(name.as_str()))
        .filter(|p| {
            !matches!(
                p.status.as_ref().and_then(|s| s.phase.as_deref()),
                Some("Succeeded") | Some("Failed")
            )
        })
        .collect();
    pods.sort_by(|a, b| {
        (&a.metadata.namespace, &a.metadata.name).cmp(&(&b.metadata.namespace, &b.metadata.name))
    });
    super::node_pods::write(w, &pods, super::node_pods::allocatable(n), now);
}
