//! The HorizontalPodAutoscaler table (`printHorizontalPodAutoscaler`, `formatHPAMetrics`).

use k8s_openapi::api::autoscaling::v2::{HorizontalPodAutoscaler, MetricSpec, MetricStatus};

use super::{age, col, Column};
use crate::time::Time;

pub(super) fn columns() -> Vec<Column> {
    vec![
        col("Name"),
        col("Reference"),
        col("Targets"),
        col("MinPods"),
        col("MaxPods"),
        col("Replicas"),
        col("Age"),
    ]
}

/// One metric as `formatHPAMetrics` prints it: `cpu: 23%/50%`.
pub fn format_metric(spec: &MetricSpec, status: Option<&MetricStatus>) -> String {
    match (spec.type_.as_str(), &spec.resource) {
        ("Resource", Some(r)) => {
            let cur = status.and_then(|s| s.resource.as_ref()).map(|s| &s.current);
            if let Some(v) = &r.target.average_value {
                let current = cur
                    .and_then(|c| c.average_value.as_ref())
                    .map_or("<unknown>".to_string(), |q| q.0.clone());
                format!("{}: {current}/{}", r.name, v.0)
            } else {
                let current = cur
                    .and_then(|c| c.average_utilization)
                    .map_or("<unknown>".to_string(), |u| format!("{u}%"));
                let target = r
                    .target
                    .average_utilization
                    .map_or("<auto>".to_string(), |u| format!("{u}%"));
                format!("{}: {current}/{target}", r.name)
            }
        }
        _ => "<unknown type>".to_string(),
    }
}

/// `formatHPAMetrics`: at most two metrics, then `+ N more...`.
pub fn format_metrics(specs: &[MetricSpec], statuses: &[MetricStatus]) -> String {
    if specs.is_empty() {
        return "<none>".into();
    }
    let list: Vec<String> = specs
        .iter()
        .enumerate()
        .take(2)
        .map(|(i, s)| format_metric(s, statuses.get(i)))
        .collect();
    let ret = list.join(", ");
    if specs.len() > 2 {
        format!("{ret} + {} more...", specs.len() - 2)
    } else {
        ret
    }
}

pub(super) fn row(h: &HorizontalPodAutoscaler, now: Time) -> Vec<String> {
    let spec = h.spec.clone().unwrap_or_default();
    let status = h.status.clone().unwrap_or_default();
    let r = &spec.scale_target_ref;
    vec![
        h.metadata.name.clone().unwrap_or_default(),
        format!("{}/{}", r.kind, r.name),
        format_metrics(
            spec.metrics.as_deref().unwrap_or(&[]),
            status.current_metrics.as_deref().unwrap_or(&[]),
        ),
        spec.min_replicas
            .map_or("<unset>".to_string(), |m| m.to_string()),
        spec.max_replicas.to_string(),
        status.current_replicas.unwrap_or(0).to_string(),
        age(h.metadata.creation_timestamp.as_ref(), now),
    ]
}
