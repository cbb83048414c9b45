//! The PodDisruptionBudget table (`printPodDisruptionBudget`).

use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::{age, col, Column};
use crate::time::Time;

pub(super) fn columns() -> Vec<Column> {
    vec![
        col("Name"),
        col("Min Available"),
        col("Max Unavailable"),
        col("Allowed Disruptions"),
        col("Age"),
    ]
}

/// `IntOrString.String()`, or `N/A` when the field is unset.
fn int_or_na(v: Option<&IntOrString>) -> String {
    match v {
        Some(IntOrString::Int(i)) => i.to_string(),
        Some(IntOrString::String(s)) => s.clone(),
        None => "N/A".into(),
    }
}

pub(super) fn row(p: &PodDisruptionBudget, now: Time) -> Vec<String> {
    let spec = p.spec.clone().unwrap_or_default();
    let allowed = p.status.as_ref().map_or(0, |s| s.disruptions_allowed);
    vec![
        p.metadata.name.clone().unwrap_or_default(),
        int_or_na(spec.min_available.as_ref()),
        int_or_na(spec.max_unavailable.as_ref()),
        allowed.to_string(),
        age(p.metadata.creation_timestamp.as_ref(), now),
    ]
}
