//! `describePodDisruptionBudgetV1`.

use k8s_openapi::api::policy::v1::PodDisruptionBudget;

use super::pod::int_or_string;
use super::Writer;
use crate::kubectl::printers::format_label_selector;

pub(super) fn describe_pod_disruption_budget(w: &mut Writer, p: &PodDisruptionBudget) {
    let m = &p.metadata;
    w.line(0, &format!("Name:\t{}", m.name.as_deref().unwrap_or("")));
    w.line(
        0,
        &format!("Namespace:\t{}", m.namespace.as_deref().unwrap_or("")),
    );
    let spec = p.spec.clone().unwrap_or_default();
    if let Some(v) = &spec.min_available {
        w.line(0, &format!("Min available:\t{}", int_or_string(v)));
    } else if let Some(v) = &spec.max_unavailable {
        w.line(0, &format!("Max unavailable:\t{}", int_or_string(v)));
    }
    match &spec.selector {
        Some(s) => w.line(0, &format!("Selector:\t{}", format_label_selector(Some(s)))),
        None => w.line(0, "Selector:\t<unset>"),
    }
    let status = p.status.clone().unwrap_or_default();
    w.line(0, "Status:");
    w.line(
        2,
        &format!("Allowed disruptions:\t{}", status.disruptions_allowed),
    );
    w.line(2, &format!("Current:\t{}", status.current_healthy));
    w.line(2, &format!("Desired:\t{}", status.desired_healthy));
    w.line(2, &format!("Total:\t{}", status.expected_pods));
}
