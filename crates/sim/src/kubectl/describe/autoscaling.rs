//! `describeHorizontalPodAutoscalerV2`.

use k8s_openapi::api::autoscaling::v2::{HPAScalingRules, HorizontalPodAutoscaler};

use super::{annotations_multiline, labels_multiline, rfc1123z, Writer};

fn direction(w: &mut Writer, name: &str, rules: Option<&HPAScalingRules>) {
    let Some(r) = rules else {
        return;
    };
    w.line(1, &format!("{name}:"));
    if let Some(s) = r.stabilization_window_seconds {
        w.line(2, &format!("Stabilization Window: {s} seconds"));
    }
    let policies = r.policies.as_deref().unwrap_or(&[]);
    if !policies.is_empty() {
        w.line(
            2,
            &format!(
                "Select Policy: {}",
                r.select_policy.as_deref().unwrap_or("Max")
            ),
        );
        w.line(2, "Policies:");
        for p in policies {
            w.line(
                3,
                &format!(
                    "- Type: {}\tValue: {}\tPeriod: {} seconds",
                    p.type_, p.value, p.period_seconds
                ),
            );
        }
    }
}

/// `describeHorizontalPodAutoscalerV2`'s lines for Pods, Object, External and
/// ContainerResource metrics (`current / target`, `<unknown>` without a status).
fn other_metric_line(
    m: &k8s_openapi::api::autoscaling::v2::MetricSpec,
    st: Option<&k8s_openapi::api::autoscaling::v2::MetricStatus>,
) -> Option<String> {
    let q = |v: Option<&k8s_openapi::apimachinery::pkg::api::resource::Quantity>| {
        v.map_or("<unknown>".to_string(), |q| q.0.clone())
    };
    let target =
        |t: &k8s_openapi::api::autoscaling::v2::MetricTarget,
         cur: Option<&k8s_openapi::api::autoscaling::v2::MetricValueStatus>| {
            match &t.average_value {
                Some(avg) => format!(
                    "(target average value):\t{} / {}",
                    q(cur.and_then(|c| c.average_value.as_ref())),
                    avg.0
                ),
                None => format!(
                    "(target value):\t{} / {}",
                    q(cur.and_then(|c| c.value.as_ref())),
                    q(t.value.as_ref())
                ),
            }
        };
    match m.type_.as_str() {
        "Pods" => {
            let p = m.pods.as_ref()?;
            let cur = st
                .and_then(|s| s.pods.as_ref())
                .and_then(|p| p.current.average_value.as_ref());
            Some(format!(
                "{:?} on pods:\t{} / {}",
                p.metric.name,
                q(cur),
                q(p.target.average_value.as_ref())
            ))
        }
        "Object" => {
            let o = m.object.as_ref()?;
            let cur = st.and_then(|s| s.object.as_ref()).map(|o| &o.current);
            Some(format!(
                "{:?} on {}/{} {}",
                o.metric.name,
                o.described_object.kind,
                o.described_object.name,
                target(&o.target, cur)
            ))
        }
        "External" => {
            let e = m.external.as_ref()?;
            let cur = st.and_then(|s| s.external.as_ref()).map(|e| &e.current);
            let sel = e.metric.selector.as_ref().map_or(String::new(), |s| {
                format!(
                    "(with selector {:?}) ",
                    crate::controllers::hpa::sources::go_selector(Some(s))
                )
            });
            Some(format!(
                "{:?} {sel}{}",
                e.metric.name,
                target(&e.target, cur)
            ))
        }
        "ContainerResource" => container_metric_line(m.container_resource.as_ref()?, st),
        _ => None,
    }
}

/// A ContainerResource metric's line.
fn container_metric_line(
    c: &k8s_openapi::api::autoscaling::v2::ContainerResourceMetricSource,
    st: Option<&k8s_openapi::api::autoscaling::v2::MetricStatus>,
) -> Option<String> {
    let q = |v: Option<&k8s_openapi::apimachinery::pkg::api::resource::Quantity>| {
        v.map_or("<unknown>".to_string(), |q| q.0.clone())
    };
    let cur = st
        .and_then(|s| s.container_resource.as_ref())
        .map(|c| &c.current);
    let head = format!(
        "resource {} of container \"{}\" on pods",
        c.name, c.container
    );
    Some(match &c.target.average_value {
        Some(v) => format!(
            "{head}:\t{} / {}",
            q(cur.and_then(|c| c.average_value.as_ref())),
            v.0
        ),
        None => {
            let current = cur
                .and_then(|c| Some((c.average_utilization?, c.average_value.as_ref()?)))
                .map_or("<unknown>".to_string(), |(u, v)| format!("{u}% ({})", v.0));
            let t = c
                .target
                .average_utilization
                .map_or("<auto>".to_string(), |u| format!("{u}%"));
            format!("{head}  (as a percentage of request):\t{current} / {t}")
        }
    })
}

pub(super) fn describe_hpa(w: &mut Writer, h: &HorizontalPodAutoscaler) {
    let m = &h.metadata;
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
            "CreationTimestamp:\t{}",
            rfc1123z(m.creation_timestamp.as_ref())
        ),
    );
    let spec = h.spec.clone().unwrap_or_default();
    let status = h.status.clone().unwrap_or_default();
    let r = &spec.scale_target_ref;
    w.line(0, &format!("Reference:\t{}/{}", r.kind, r.name));
    w.line(0, "Metrics:\t( current / target )");
    let current = status.current_metrics.clone().unwrap_or_default();
    for (i, metric) in spec.metrics.iter().flatten().enumerate() {
        let st = crate::kubectl::printers::autoscaling::status_for(metric, &current, i);
        if let Some(line) = other_metric_line(metric, st) {
            w.line(1, &line);
            continue;
        }
        let Some(res) = metric
            .resource
            .as_ref()
            .filter(|_| metric.type_ == "Resource")
        else {
            continue;
        };
        let cur = st.and_then(|s| s.resource.as_ref()).map(|s| &s.current);
        if let Some(v) = &res.target.average_value {
            let c = cur
                .and_then(|c| c.average_value.as_ref())
                .map_or("<unknown>".to_string(), |q| q.0.clone());
            w.line(1, &format!("resource {} on pods:\t{c} / {}", res.name, v.0));
        } else {
            let c = cur
                .and_then(|c| Some((c.average_utilization?, c.average_value.as_ref()?)))
                .map_or("<unknown>".to_string(), |(u, q)| format!("{u}% ({})", q.0));
            let t = res
                .target
                .average_utilization
                .map_or("<auto>".to_string(), |u| format!("{u}%"));
            w.line(
                1,
                &format!(
                    "resource {} on pods  (as a percentage of request):\t{c} / {t}",
                    res.name
                ),
            );
        }
    }
    let min = spec
        .min_replicas
        .map_or("<unset>".to_string(), |m| m.to_string());
    w.line(0, &format!("Min replicas:\t{min}"));
    w.line(0, &format!("Max replicas:\t{}", spec.max_replicas));
    if let Some(b) = &spec.behavior {
        w.line(0, "Behavior:");
        direction(w, "Scale Up", b.scale_up.as_ref());
        direction(w, "Scale Down", b.scale_down.as_ref());
    }
    w.line(
        0,
        &format!(
            "{} pods:\t{} current / {} desired",
            r.kind,
            status.current_replicas.unwrap_or(0),
            status.desired_replicas
        ),
    );
    let conds = status.conditions.unwrap_or_default();
    if !conds.is_empty() {
        w.line(0, "Conditions:");
        w.line(1, "Type\tStatus\tReason\tMessage");
        w.line(1, "----\t------\t------\t-------");
        for c in conds {
            w.line(
                1,
                &format!(
                    "{}\t{}\t{}\t{}",
                    c.type_,
                    c.status,
                    c.reason.unwrap_or_default(),
                    c.message.unwrap_or_default()
                ),
            );
        }
    }
}
