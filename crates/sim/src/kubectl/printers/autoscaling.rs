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
        ("ContainerResource", _) if spec.container_resource.is_some() => {
            let c = spec.container_resource.clone().unwrap_or_default();
            let cur = status
                .and_then(|s| s.container_resource.as_ref())
                .map(|s| &s.current);
            if let Some(v) = &c.target.average_value {
                let current = cur
                    .and_then(|c| c.average_value.as_ref())
                    .map_or("<unknown>".to_string(), |q| q.0.clone());
                format!("{}: {current}/{}", c.name, v.0)
            } else {
                let current = cur
                    .and_then(|c| c.average_utilization)
                    .map_or("<unknown>".to_string(), |u| format!("{u}%"));
                let target = c
                    .target
                    .average_utilization
                    .map_or("<auto>".to_string(), |u| format!("{u}%"));
                format!("{}: {current}/{target}", c.name)
            }
        }
        ("Pods", _) if spec.pods.is_some() => {
            let target = spec
                .pods
                .as_ref()
                .and_then(|p| p.target.average_value.as_ref());
            let current = status
                .and_then(|s| s.pods.as_ref())
                .and_then(|p| p.current.average_value.as_ref())
                .map_or("<unknown>".to_string(), |q| q.0.clone());
            format!("{current}/{}", target.map_or("<nil>", |q| q.0.as_str()))
        }
        ("Object", _) if spec.object.is_some() => {
            let t = spec.object.as_ref().map(|o| &o.target);
            let cur = status.and_then(|s| s.object.as_ref()).map(|o| &o.current);
            value_or_average(t, cur)
        }
        ("External", _) if spec.external.is_some() => {
            let t = spec.external.as_ref().map(|e| &e.target);
            let cur = status.and_then(|s| s.external.as_ref()).map(|e| &e.current);
            value_or_average(t, cur)
        }
        _ => "<unknown type>".to_string(),
    }
}

/// Object and External metrics: `current/target (avg)` for an average-value target,
/// `current/target` for a value target.
fn value_or_average(
    t: Option<&k8s_openapi::api::autoscaling::v2::MetricTarget>,
    cur: Option<&k8s_openapi::api::autoscaling::v2::MetricValueStatus>,
) -> String {
    let q = |v: Option<&k8s_openapi::apimachinery::pkg::api::resource::Quantity>| {
        v.map_or("<unknown>".to_string(), |q| q.0.clone())
    };
    match t.and_then(|t| t.average_value.as_ref()) {
        Some(avg) => format!(
            "{}/{} (avg)",
            q(cur.and_then(|c| c.average_value.as_ref())),
            avg.0
        ),
        None => format!(
            "{}/{}",
            q(cur.and_then(|c| c.value.as_ref())),
            t.and_then(|t| t.value.as_ref())
                .map_or("<nil>", |v| v.0.as_str())
        ),
    }
}

/// Whether `st` reports the metric `spec` asks for (same type and name).
fn reports(spec: &MetricSpec, st: &MetricStatus) -> bool {
    if spec.type_ != st.type_ {
        return false;
    }
    match spec.type_.as_str() {
        "Resource" => {
            spec.resource.as_ref().map(|r| &r.name) == st.resource.as_ref().map(|r| &r.name)
        }
        "ContainerResource" => {
            spec.container_resource
                .as_ref()
                .map(|c| (&c.name, &c.container))
                == st
                    .container_resource
                    .as_ref()
                    .map(|c| (&c.name, &c.container))
        }
        "Pods" => {
            spec.pods.as_ref().map(|p| &p.metric.name) == st.pods.as_ref().map(|p| &p.metric.name)
        }
        "Object" => {
            spec.object.as_ref().map(|o| &o.metric.name)
                == st.object.as_ref().map(|o| &o.metric.name)
        }
        "External" => {
            spec.external.as_ref().map(|e| &e.metric.name)
                == st.external.as_ref().map(|e| &e.metric.name)
        }
        _ => false,
    }
}

/// The status of the `i`-th metric: `statuses[i]` as upstream reads it, or, since the
/// controller leaves failed metrics out of `currentMetrics`, the one reporting it.
pub fn status_for<'a>(
    spec: &MetricSpec,
    statuses: &'a [MetricStatus],
    i: usize,
) -> Option<&'a MetricStatus> {
    statuses
        .get(i)
        .filter(|s| reports(spec, s))
        .or_else(|| statuses.iter().find(|s| reports(spec, s)))
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
        .map(|(i, s)| format_metric(s, status_for(s, statuses, i)))
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
