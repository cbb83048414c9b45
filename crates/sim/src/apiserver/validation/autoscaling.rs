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
