//! The NetworkPolicy table (`printNetworkPolicy`: NAME, POD-SELECTOR, AGE).

use k8s_openapi::api::networking::v1::NetworkPolicy;

use super::{age, col, format_label_selector, Column};
use crate::time::Time;

pub(super) fn columns() -> Vec<Column> {
    vec![col("Name"), col("Pod-Selector"), col("Age")]
}

pub(super) fn row(p: &NetworkPolicy, now: Time) -> Vec<String> {
    let sel = p.spec.as_ref().and_then(|s| s.pod_selector.as_ref());
    vec![
        p.metadata.name.clone().unwrap_or_default(),
        format_label_selector(sel),
        age(p.metadata.creation_timestamp.as_ref(), now),
    ]
}
