//! autoscaling validation: HorizontalPodAutoscaler (`pkg/apis/autoscaling/validation`).

use k8s_openapi::api::autoscaling::v2::{
    HPAScalingRules, HorizontalPodAutoscaler, MetricSpec, MetricTarget,
};

use super::meta::*;
use super::names::*;
use crate::apiserver::field_error::{BadValue, FieldError, Path};

/// The metric source types, as upstream lists them in a NotSupported error.
const SOURCE_TYPES: &[&str] = &[
    "ContainerResource",
    "External",
    "Object",
    "Pods",
    "Resource",
];
/// `MaxPeriodSeconds` of a scaling policy.
const MAX_PERIOD_SECONDS: i32 = 1800;
/// `MaxStabilizationWindowSeconds`.
const MAX_STABILIZATION_WINDOW_SECONDS: i32 = 3600;

/// `ValidateHorizontalPodAutoscaler` plus the object metadata.
pub fn validate_hpa(hpa: &HorizontalPodAutoscaler) -> Vec<FieldError> {
    let mut errs = validate_object_meta(
        &hpa.metadata,
        true,
        name_is_dns_subdomain,
        &Path::new("metadata"),
    );
    let spec = hpa.spec.clone().unwrap_or_default();
    let path = Path::new("spec");
    if let Some(min) = spec.min_replicas.filter(|&m| m < 1) {
        errs.push(FieldError::invalid(
            &path.child("minReplicas"),
            min,
            "must be greater than or equal to 1",
        ));
    }
    if spec.max_replicas < 1 {
        errs.push(FieldError::invalid(
            &path.child("maxReplicas"),
            spec.max_replicas,
            "must be greater than 0",
        ));
    }
    if spec.min_replicas.is_some_and(|m| spec.max_replicas < m) {
        errs.push(FieldError::invalid(
            &path.child("maxReplicas"),
            spec.max_replicas,
            "must be greater than or equal to `minReplicas`",
        ));
    }
    let r = &spec.scale_target_ref;
    let rp = path.child("scaleTargetRef");
    let mut ref_errs = Vec::new();
    for (field, v) in [("kind", &r.kind), ("name", &r.name)] {
        if v.is_empty() {
            ref_errs.push(FieldError::required(&rp.child(field), ""));
        } else {
            for msg in name_is_path_segment(v, false) {
                ref_errs.push(FieldError::invalid(&rp.child(field), v, &msg));
            }
        }
    }
    if ref_errs.is_empty() {
        let mp = path.child("metrics");
        for (i, m) in spec.metrics.iter().flatten().enumerate() {
            errs.extend(validate_metric_spec(m, &mp.index(i)));
        }
    } else {
        errs.extend(ref_errs);
    }
    if let Some(b) = &spec.behavior {
        let bp = path.child("behavior");
        for (name, rules) in [("scaleUp", &b.scale_up), ("scaleDown", &b.scale_down)] {
            if let Some(rules) = rules {
                errs.extend(validate_rules(rules, &bp.child(name)));
            }
        }
    }
    errs
}

fn validate_metric_spec(m: &MetricSpec, p: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if m.type_.is_empty() {
        errs.push(FieldError::required(
            &p.child("type"),
            "must specify a metric source type",
        ));
    }
    if !SOURCE_TYPES.contains(&m.type_.as_str()) {
        errs.push(FieldError::not_supported(
            &p.child("type"),
            BadValue::typed_str(&m.type_),
            SOURCE_TYPES,
        ));
    }
    let present = [
        ("object", "Object", m.object.is_some()),
        ("pods", "Pods", m.pods.is_some()),
        ("resource", "Resource", m.resource.is_some()),
        (
            "containerResource",
            "ContainerResource",
            m.container_resource.is_some(),
        ),
        ("external", "External", m.external.is_some()),
    ];
    for (field, t, set) in present {
        if set && m.type_ != t {
            errs.push(FieldError::forbidden(
                &p.child(field),
                "must populate the given metric source only",
            ));
        }
    }
    if let Some((field, _, set)) = present.iter().find(|(_, t, _)| *t == m.type_) {
        if !set {
            errs.push(FieldError::required(
                &p.child(field),
                "must populate information for the given metric source",
            ));
        }
    }
    if let (true, Some(r)) = (m.type_ == "Resource", &m.resource) {
        let rp = p.child("resource");
        if r.name.is_empty() {
            errs.push(FieldError::required(
                &rp.child("name"),
                "must specify a resource name",
            ));
        }
        let t = &r.target;
        if t.average_utilization.is_none() && t.average_value.is_none() {
            errs.push(FieldError::required(
                &rp.child("target").child("averageUtilization"),
                "must set either a target raw value or a target utilization",
            ));
        }
        if t.average_utilization.is_some() && t.average_value.is_some() {
            errs.push(FieldError::forbidden(
                &rp.child("target").child("averageValue"),
                "may not set both a target raw value and a target utilization",
            ));
        }
        errs.extend(validate_target(t, &rp.child("target")));
    }
    errs.extend(validate_other_sources(m, p));
    errs
}

/// The Pods, Object, External and ContainerResource sources (`validatePodsSource`,
/// `validateObjectSource`, `validateExternalSource`, `validateContainerResourceSource`).
fn validate_other_sources(m: &MetricSpec, p: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if m.type_ == "ContainerResource" {
        if let Some(c) = &m.container_resource {
            errs.extend(validate_container_resource(
                c,
                &p.child("containerResource"),
            ));
        }
    }
    if let (true, Some(s)) = (m.type_ == "Pods", &m.pods) {
        let sp = p.child("pods");
        errs.extend(validate_metric_identifier(&s.metric, &sp.child("metric")));
        errs.extend(validate_target(&s.target, &sp.child("target")));
        if s.target.average_value.is_none() {
            errs.push(FieldError::required(
                &sp.child("target").child("averageValue"),
                "must specify a positive target averageValue",
            ));
        }
    }
    if let (true, Some(o)) = (m.type_ == "Object", &m.object) {
        let op = p.child("object");
        let dp = op.child("describedObject");
        for (field, v) in [
            ("kind", &o.described_object.kind),
            ("name", &o.described_object.name),
        ] {
            if v.is_empty() {
                errs.push(FieldError::required(&dp.child(field), ""));
            } else {
                for msg in path_segment_errors(v) {
                    errs.push(FieldError::invalid(&dp.child(field), v.as_str(), &msg));
                }
            }
        }
        errs.extend(validate_metric_identifier(&o.metric, &op.child("metric")));
        errs.extend(validate_target(&o.target, &op.child("target")));
        if o.target.value.is_none() && o.target.average_value.is_none() {
            errs.push(FieldError::required(
                &op.child("target").child("averageValue"),
                "must set either a target value or averageValue",
            ));
        }
    }
    if let (true, Some(e)) = (m.type_ == "External", &m.external) {
        let ep = p.child("external");
        errs.extend(validate_metric_identifier(&e.metric, &ep.child("metric")));
        errs.extend(validate_target(&e.target, &ep.child("target")));
        if e.target.value.is_none() && e.target.average_value.is_none() {
            errs.push(FieldError::required(
                &ep.child("target").child("averageValue"),
                "must set either a target value for metric or a per-pod target",
            ));
        }
        if e.target.value.is_some() && e.target.average_value.is_some() {
            errs.push(FieldError::forbidden(
                &ep.child("target").child("value"),
                "may not set both a target value for metric and a per-pod target",
            ));
        }
    }
    errs
}

/// `IsValidPathSegmentName`.
fn path_segment_errors(name: &str) -> Vec<String> {
    if name == "." || name == ".." {
        return vec![format!("may not be '{name}'")];
    }
    ["/", "%"]
        .iter()
        .filter(|c| name.contains(*c))
        .map(|c| format!("may not contain '{c}'"))
        .collect()
}

/// `validateMetricIdentifier`.
fn validate_metric_identifier(
    id: &k8s_openapi::api::autoscaling::v2::MetricIdentifier,
    p: &Path,
) -> Vec<FieldError> {
    if id.name.is_empty() {
        return vec![FieldError::required(
            &p.child("name"),
            "must specify a metric name",
        )];
    }
    path_segment_errors(&id.name)
        .into_iter()
        .map(|m| FieldError::invalid(&p.child("name"), id.name.as_str(), &m))
        .collect()
}

/// `validateContainerResourceSource`.
fn validate_container_resource(
    c: &k8s_openapi::api::autoscaling::v2::ContainerResourceMetricSource,
    p: &Path,
) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if c.name.is_empty() {
        errs.push(FieldError::required(
            &p.child("name"),
            "must specify a resource name",
        ));
    }
    if c.container.is_empty() {
        errs.push(FieldError::required(
            &p.child("container"),
            "must specify a container",
        ));
    } else {
        errs.extend(super::names::validate_dns1123_label(
            &c.container,
            &p.child("container"),
        ));
    }
    let t = &c.target;
    if t.average_utilization.is_none() && t.average_value.is_none() {
        errs.push(FieldError::required(
            &p.child("target").child("averageUtilization"),
            "must set either a target raw value or a target utilization",
        ));
    }
    if t.average_utilization.is_some() && t.average_value.is_some() {
        errs.push(FieldError::forbidden(
            &p.child("target").child("averageValue"),
            "may not set both a target raw value and a target utilization",
        ));
    }
    errs.extend(validate_target(t, &p.child("target")));
    errs
}

fn validate_target(t: &MetricTarget, p: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if t.type_.is_empty() {
        errs.push(FieldError::required(
            &p.child("type"),
            "must specify a metric target type",
        ));
    }
    if !["Utilization", "Value", "AverageValue"].contains(&t.type_.as_str()) {
        errs.push(FieldError::invalid(
            &p.child("type"),
            BadValue::typed_str(&t.type_),
            "must be either Utilization, Value, or AverageValue",
        ));
    }
    for (field, q) in [("value", &t.value), ("averageValue", &t.average_value)] {
        let positive = q
            .as_ref()
            .map(|q| crate::quantity::parse(&q.0).is_ok_and(|v| v.milli_value() > 0));
        if positive == Some(false) {
            let v = q.as_ref().map(|q| q.0.clone()).unwrap_or_default();
            errs.push(FieldError::invalid(&p.child(field), v, "must be positive"));
        }
    }
    if let Some(u) = t.average_utilization.filter(|&u| u < 1) {
        errs.push(FieldError::invalid(
            &p.child("averageUtilization"),
            u,
            "must be greater than 0",
        ));
    }
    errs
}

fn validate_rules(r: &HPAScalingRules, p: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if let Some(w) = r.stabilization_window_seconds {
        if w < 0 {
            errs.push(FieldError::invalid(
                &p.child("stabilizationWindowSeconds"),
                w,
                "must be greater than or equal to zero",
            ));
        } else if w > MAX_STABILIZATION_WINDOW_SECONDS {
            errs.push(FieldError::invalid(
                &p.child("stabilizationWindowSeconds"),
                w,
                &format!("must be less than or equal to {MAX_STABILIZATION_WINDOW_SECONDS}"),
            ));
        }
    }
    if let Some(s) = r.select_policy.as_deref() {
        if !["Disabled", "Max", "Min"].contains(&s) {
            errs.push(FieldError::not_supported(
                &p.child("selectPolicy"),
                BadValue::typed_str(s),
                &["Disabled", "Max", "Min"],
            ));
        }
    }
    let pp = p.child("policies");
    let policies = r.policies.as_deref().unwrap_or(&[]);
    if policies.is_empty() && r.select_policy.as_deref() != Some("Disabled") {
        errs.push(FieldError::required(
            &pp,
            "must specify at least one Policy",
        ));
    }
    for (i, pol) in policies.iter().enumerate() {
        let ip = pp.index(i);
        if !["Pods", "Percent"].contains(&pol.type_.as_str()) {
            errs.push(FieldError::not_supported(
                &ip.child("type"),
                BadValue::typed_str(&pol.type_),
                &["Percent", "Pods"],
            ));
        }
        if pol.value <= 0 {
            errs.push(FieldError::invalid(
                &ip.child("value"),
                pol.value,
                "must be greater than zero",
            ));
        }
        if pol.period_seconds <= 0 {
            errs.push(FieldError::invalid(
                &ip.child("periodSeconds"),
                pol.period_seconds,
                "must be greater than zero",
            ));
        } else if pol.period_seconds > MAX_PERIOD_SECONDS {
            errs.push(FieldError::invalid(
                &ip.child("periodSeconds"),
                pol.period_seconds,
                &format!("must be less than or equal to {MAX_PERIOD_SECONDS}"),
            ));
        }
    }
    errs
}
