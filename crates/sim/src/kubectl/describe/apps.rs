//! `kubectl describe` for statefulsets and daemonsets (`StatefulSetDescriber`,
//! `DaemonSetDescriber`).

use k8s_openapi::api::apps::v1::{DaemonSet, StatefulSet};
use k8s_openapi::api::core::v1::PersistentVolumeClaim;

use super::workloads::describe_pod_template;
use super::{annotations_multiline, labels_multiline, rfc1123z, DescribeContext, Writer};
use crate::kubectl::printers::{format_labels, selector_string};
use crate::object::Object;

/// `getPodStatusForController`: the phases of the pods `kind`/`name` controls.
fn pods_status(
    w: &mut Writer,
    ctx: &DescribeContext,
    kind: &str,
    ns: Option<&String>,
    uid: Option<&String>,
) {
    let (mut running, mut waiting, mut succeeded, mut failed) = (0, 0, 0, 0);
    for p in &ctx.pods {
        let Object::Pod(p) = p.as_ref() else { continue };
        let owned = p
            .metadata
            .owner_references
            .iter()
            .flatten()
            .any(|r| r.controller == Some(true) && r.kind == kind && Some(&r.uid) == uid);
        if !owned || p.metadata.namespace.as_ref() != ns {
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
    w.line(
        0,
        &format!("Pods Status:\t{running} Running / {waiting} Waiting / {succeeded} Succeeded / {failed} Failed"),
    );
}

/// `describeVolumeClaimTemplates`.
fn volume_claim_templates(w: &mut Writer, templates: &[PersistentVolumeClaim]) {
    if templates.is_empty() {
        w.line(0, "Volume Claims:\t<none>");
        return;
    }
    w.line(0, "Volume Claims:");
    for pvc in templates {
        let spec = pvc.spec.clone().unwrap_or_default();
        w.line(
            1,
            &format!("Name:\t{}", pvc.metadata.name.as_deref().unwrap_or("")),
        );
        w.line(
            1,
            &format!(
                "StorageClass:\t{}",
                spec.storage_class_name.as_deref().unwrap_or("")
            ),
        );
        labels_multiline(w, "  ", "Labels", pvc.metadata.labels.as_ref());
        labels_multiline(w, "  ", "Annotations", pvc.metadata.annotations.as_ref());
        let capacity = spec
            .resources
            .as_ref()
            .and_then(|r| r.requests.as_ref())
            .and_then(|r| r.get("storage"))
            .map_or_else(|| "<default>".to_string(), |q| q.0.clone());
        w.line(1, &format!("Capacity:\t{capacity}"));
        let modes = spec.access_modes.clone().unwrap_or_default().join(" ");
        w.line(1, &format!("Access Modes:\t[{modes}]"));
    }
}

pub(super) fn describe_stateful_set(w: &mut Writer, s: &StatefulSet, ctx: &DescribeContext) {
    let m = &s.metadata;
    let spec = s.spec.clone().unwrap_or_default();
    let st = s.status.clone().unwrap_or_default();
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
    w.line(
        0,
        &format!("Selector:\t{}", selector_string(Some(&spec.selector))),
    );
    labels_multiline(w, "", "Labels", m.labels.as_ref());
    annotations_multiline(w, "Annotations", m.annotations.as_ref());
    w.line(
        0,
        &format!(
            "Replicas:\t{} desired | {} total",
            spec.replicas.unwrap_or(0),
            st.replicas
        ),
    );
    let strategy = spec.update_strategy.clone().unwrap_or_default();
    w.line(
        0,
        &format!(
            "Update Strategy:\t{}",
            strategy.type_.as_deref().unwrap_or("")
        ),
    );
    if let Some(ru) = strategy.rolling_update.as_ref() {
        if let Some(p) = ru.partition {
            w.line(1, &format!("Partition:\t{p}"));
            if let Some(mu) = ru.max_unavailable.as_ref() {
                let v = match mu {
                    k8s_openapi::apimachinery::pkg::util::intstr::IntOrString::Int(i) => {
                        i.to_string()
                    }
                    k8s_openapi::apimachinery::pkg::util::intstr::IntOrString::String(s) => {
                        s.clone()
                    }
                };
                w.line(1, &format!("MaxUnavailable:\t{v}"));
            }
        }
    }
    pods_status(w, ctx, "StatefulSet", m.namespace.as_ref(), m.uid.as_ref());
    describe_pod_template(w, &spec.template);
    volume_claim_templates(w, spec.volume_claim_templates.as_deref().unwrap_or(&[]));
}

pub(super) fn describe_daemon_set(w: &mut Writer, d: &DaemonSet, ctx: &DescribeContext) {
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
        &format!("Selector:\t{}", selector_string(Some(&spec.selector))),
    );
    let node_selector = spec
        .template
        .spec
        .as_ref()
        .and_then(|s| s.node_selector.clone())
        .unwrap_or_default();
    w.line(
        0,
        &format!("Node-Selector:\t{}", format_labels(&node_selector)),
    );
    labels_multiline(w, "", "Labels", m.labels.as_ref());
    annotations_multiline(w, "Annotations", m.annotations.as_ref());
    w.line(
        0,
        &format!(
            "Desired Number of Nodes Scheduled: {}",
            st.desired_number_scheduled
        ),
    );
    w.line(
        0,
        &format!(
            "Current Number of Nodes Scheduled: {}",
            st.current_number_scheduled
        ),
    );
    w.line(
        0,
        &format!(
            "Number of Nodes Scheduled with Up-to-date Pods: {}",
            st.updated_number_scheduled.unwrap_or(0)
        ),
    );
    w.line(
        0,
        &format!(
            "Number of Nodes Scheduled with Available Pods: {}",
            st.number_available.unwrap_or(0)
        ),
    );
    w.line(
        0,
        &format!("Number of Nodes Misscheduled: {}", st.number_misscheduled),
    );
    pods_status(w, ctx, "DaemonSet", m.namespace.as_ref(), m.uid.as_ref());
    describe_pod_template(w, &spec.template);
}
