//! apps/v1 validation: Deployment, ReplicaSet, StatefulSet, DaemonSet, including the
//! registry strategies' selector immutability on update.

use k8s_openapi::api::apps::v1::{DaemonSet, Deployment, ReplicaSet};
use k8s_openapi::api::core::v1::PodTemplateSpec;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::meta::*;
use super::names::*;
use super::pod::validate_pod_template;
use crate::apiserver::field_error::{BadValue, FieldError, GoJson, Path};

/// k8s-openapi decodes an absent selector as an empty one; an empty selector without any
/// maps set is treated as Go's nil (`spec.selector: Required value`), the common mistake.
pub fn selector_opt(sel: &LabelSelector) -> Option<&LabelSelector> {
    (sel.match_labels.is_some() || sel.match_expressions.is_some()).then_some(sel)
}

pub(super) fn selector_value(sel: Option<&LabelSelector>) -> BadValue {
    sel.map_or(BadValue::Json("null".into()), |s| selector_json(s).into())
}

pub(super) fn is_empty_selector(sel: &LabelSelector) -> bool {
    sel.match_labels.as_ref().is_none_or(|m| m.is_empty())
        && sel.match_expressions.as_ref().is_none_or(|e| e.is_empty())
}

pub(super) fn int_or_string_json(v: &IntOrString) -> GoJson {
    match v {
        IntOrString::Int(i) => GoJson::Int(i64::from(*i)),
        IntOrString::String(s) => GoJson::str(s),
    }
}

fn percent(v: &IntOrString) -> Option<i64> {
    match v {
        IntOrString::String(s) => {
            let n = s.strip_suffix('%')?;
            (!n.is_empty() && n.bytes().all(|c| c.is_ascii_digit()))
                .then(|| n.parse().unwrap_or(i64::MAX))
        }
        IntOrString::Int(_) => None,
    }
}

pub(super) fn int_or_percent_value(v: &IntOrString) -> i64 {
    match (percent(v), v) {
        (Some(p), _) => p,
        (None, IntOrString::Int(i)) => i64::from(*i),
        (None, IntOrString::String(s)) => s.parse().unwrap_or(0),
    }
}

/// `ValidatePositiveIntOrPercent`.
pub(super) fn validate_positive_int_or_percent(v: &IntOrString, path: &Path) -> Vec<FieldError> {
    match v {
        IntOrString::String(s) if percent(v).is_none() || s.is_empty() => {
            let msg = regex_error(
                "a valid percent string must be a numeric string followed by an ending '%'",
                "[0-9]+%",
                &["1%", "93%"],
            );
            vec![FieldError::invalid(path, int_or_string_json(v), &msg)]
        }
        IntOrString::String(_) => Vec::new(),
        IntOrString::Int(i) => validate_nonnegative(i64::from(*i), path),
    }
}

/// `IsNotMoreThan100Percent`.
pub(super) fn not_more_than_100_percent(v: &IntOrString, path: &Path) -> Vec<FieldError> {
    match percent(v) {
        Some(p) if p > 100 => vec![FieldError::invalid(
            path,
            int_or_string_json(v),
            "must not be greater than 100%",
        )],
        _ => Vec::new(),
    }
}

/// `ValidatePodTemplateSpecForReplicaSet`: selector matches labels, template valid,
/// `restartPolicy: Always`, no `activeDeadlineSeconds`.
fn validate_template_for_controller(
    t: &PodTemplateSpec,
    selector: Option<&LabelSelector>,
    kind: &str,
    path: &Path,
) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let labels = t.metadata.as_ref().and_then(|m| m.labels.as_ref());
    if let Ok(sel) = Selector::from_label_selector(selector) {
        if !sel.is_empty() && !sel.matches(labels) {
            errs.push(FieldError::invalid(
                &path.child("metadata").child("labels"),
                BadValue::string_map(labels),
                "`selector` does not match template `labels`",
            ));
        }
    }
    errs.extend(validate_pod_template(t, path));
    errs.extend(restart_always_no_deadline(t, kind, path));
    errs
}

pub(super) fn restart_always_no_deadline(
    t: &PodTemplateSpec,
    kind: &str,
    path: &Path,
) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let spec = t.spec.clone().unwrap_or_default();
    let rp = spec.restart_policy.unwrap_or_default();
    if rp != "Always" {
        errs.push(FieldError::not_supported(
            &path.child("spec").child("restartPolicy"),
            BadValue::typed_str(&rp),
            &["Always"],
        ));
    }
    if spec.active_deadline_seconds.is_some() {
        errs.push(FieldError::forbidden(
            &path.child("spec").child("activeDeadlineSeconds"),
            &format!("activeDeadlineSeconds in {kind} is not Supported"),
        ));
    }
    errs
}

fn validate_selector_field(
    sel: Option<&LabelSelector>,
    kind: &str,
    path: &Path,
) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let sp = path.child("selector");
    match sel {
        None => errs.push(FieldError::required(&sp, "")),
        Some(s) => {
            errs.extend(validate_label_selector(Some(s), &sp));
            if is_empty_selector(s) {
                errs.push(FieldError::invalid(
                    &sp,
                    selector_json(s),
                    &format!("empty selector is invalid for {kind}"),
                ));
            }
        }
    }
    errs
}

/// `ValidateReplicaSetSpec` (and the shared part of Deployments).
fn validate_replica_set_like(
    replicas: i32,
    min_ready: i32,
    sel: Option<&LabelSelector>,
    t: &PodTemplateSpec,
    path: &Path,
) -> Vec<FieldError> {
    let mut errs = validate_nonnegative(i64::from(replicas), &path.child("replicas"));
    errs.extend(validate_nonnegative(
        i64::from(min_ready),
        &path.child("minReadySeconds"),
    ));
    errs.extend(validate_selector_field(sel, "deployment", path));
    match Selector::from_label_selector(sel) {
        Err(_) => errs.push(FieldError::invalid(
            &path.child("selector"),
            selector_value(sel),
            "invalid label selector",
        )),
        Ok(_) => errs.extend(validate_template_for_controller(
            t,
            sel,
            "ReplicaSet",
            &path.child("template"),
        )),
    }
    errs
}

/// `ValidateDeployment`.
pub fn validate_deployment(d: &Deployment) -> Vec<FieldError> {
    let mut errs = validate_object_meta(
        &d.metadata,
        true,
        name_is_dns_subdomain,
        &Path::new("metadata"),
    );
    let spec = d.spec.clone().unwrap_or_default();
    let p = Path::new("spec");
    let sel = selector_opt(&spec.selector);
    errs.extend(validate_nonnegative(
        i64::from(spec.replicas.unwrap_or(0)),
        &p.child("replicas"),
    ));
    errs.extend(validate_selector_field(sel, "deployment", &p));
    match Selector::from_label_selector(sel) {
        Err(_) => errs.push(FieldError::invalid(
            &p.child("selector"),
            selector_value(sel),
            "invalid label selector",
        )),
        Ok(_) => errs.extend(validate_template_for_controller(
            &spec.template,
            sel,
            "ReplicaSet",
            &p.child("template"),
        )),
    }
    let strategy = spec.strategy.clone().unwrap_or_default();
    let st_path = p.child("strategy");
    match strategy.type_.as_deref().unwrap_or("") {
        "Recreate" => {
            if strategy.rolling_update.is_some() {
                errs.push(FieldError::forbidden(
                    &st_path.child("rollingUpdate"),
                    "may not be specified when strategy `type` is 'Recreate'",
                ));
            }
        }
        "RollingUpdate" => match strategy.rolling_update.as_ref() {
            None => errs.push(FieldError::required(
                &st_path.child("rollingUpdate"),
                "this should be defaulted and never be nil",
            )),
            Some(ru) => {
                let rp = st_path.child("rollingUpdate");
                let mu = ru.max_unavailable.clone().unwrap_or_default();
                let ms = ru.max_surge.clone().unwrap_or_default();
                errs.extend(validate_positive_int_or_percent(
                    &mu,
                    &rp.child("maxUnavailable"),
                ));
                errs.extend(validate_positive_int_or_percent(&ms, &rp.child("maxSurge")));
                if int_or_percent_value(&mu) == 0 && int_or_percent_value(&ms) == 0 {
                    errs.push(FieldError::invalid(
                        &rp.child("maxUnavailable"),
                        int_or_string_json(&mu),
                        "may not be 0 when `maxSurge` is 0",
                    ));
                }
                errs.extend(not_more_than_100_percent(&mu, &rp.child("maxUnavailable")));
            }
        },
        other => {
            let ru = strategy.rolling_update.as_ref().map_or(GoJson::Null, |ru| {
                GoJson::obj(vec![
                    (
                        "MaxUnavailable",
                        int_or_string_json(&ru.max_unavailable.clone().unwrap_or_default()),
                    ),
                    (
                        "MaxSurge",
                        int_or_string_json(&ru.max_surge.clone().unwrap_or_default()),
                    ),
                ])
            });
            let value = GoJson::obj(vec![("Type", GoJson::str(other)), ("RollingUpdate", ru)]);
            errs.push(FieldError::not_supported(
                &st_path,
                value,
                &["Recreate", "RollingUpdate"],
            ));
        }
    }
    let min_ready = spec.min_ready_seconds.unwrap_or(0);
    errs.extend(validate_nonnegative(
        i64::from(min_ready),
        &p.child("minReadySeconds"),
    ));
    if let Some(r) = spec.revision_history_limit {
        errs.extend(validate_nonnegative(
            i64::from(r),
            &p.child("revisionHistoryLimit"),
        ));
    }
    if let Some(pd) = spec.progress_deadline_seconds {
        errs.extend(validate_nonnegative(
            i64::from(pd),
            &p.child("progressDeadlineSeconds"),
        ));
        if pd <= min_ready {
            errs.push(FieldError::invalid(
                &p.child("progressDeadlineSeconds"),
                pd,
                "must be greater than minReadySeconds",
            ));
        }
    }
    errs
}

fn selector_immutable(new: &LabelSelector, old: &LabelSelector) -> Vec<FieldError> {
    let (n, o) = (selector_opt(new), selector_opt(old));
    let render = |s: Option<&LabelSelector>| s.map(|s| selector_json(s).render());
    if render(n) != render(o) {
        vec![FieldError::invalid(
            &Path::new("spec").child("selector"),
            selector_value(n),
            FIELD_IMMUTABLE_MSG,
        )]
    } else {
        Vec::new()
    }
}

/// `ValidateDeploymentUpdate` plus the strategy's selector immutability.
pub fn validate_deployment_update(new: &Deployment, old: &Deployment) -> Vec<FieldError> {
    let mut errs =
        validate_object_meta_update(&new.metadata, &old.metadata, &Path::new("metadata"));
    let mut spec_errs = validate_deployment(new);
    spec_errs.retain(|e| !e.field.starts_with("metadata."));
    errs.extend(spec_errs);
    let (ns, os) = (
        new.spec.clone().unwrap_or_default(),
        old.spec.clone().unwrap_or_default(),
    );
    errs.extend(selector_immutable(&ns.selector, &os.selector));
    errs
}

/// `ValidateReplicaSet`.
pub fn validate_replica_set(rs: &ReplicaSet) -> Vec<FieldError> {
    let mut errs = validate_object_meta(
        &rs.metadata,
        true,
        name_is_dns_subdomain,
        &Path::new("metadata"),
    );
    let spec = rs.spec.clone().unwrap_or_default();
    let t = spec.template.clone().unwrap_or_default();
    errs.extend(validate_replica_set_like(
        spec.replicas.unwrap_or(0),
        spec.min_ready_seconds.unwrap_or(0),
        selector_opt(&spec.selector),
        &t,
        &Path::new("spec"),
    ));
    errs
}

/// `ValidateReplicaSetUpdate` plus the strategy's selector immutability.
pub fn validate_replica_set_update(new: &ReplicaSet, old: &ReplicaSet) -> Vec<FieldError> {
    let mut errs =
        validate_object_meta_update(&new.metadata, &old.metadata, &Path::new("metadata"));
    let mut spec_errs = validate_replica_set(new);
    spec_errs.retain(|e| !e.field.starts_with("metadata."));
    errs.extend(spec_errs);
    let (ns, os) = (
        new.spec.clone().unwrap_or_default(),
        old.spec.clone().unwrap_or_default(),
    );
    errs.extend(selector_immutable(&ns.selector, &os.selector));
    errs
}

/// `ValidateDaemonSet`.
pub fn validate_daemon_set(ds: &DaemonSet) -> Vec<FieldError> {
    let mut errs = validate_object_meta(
        &ds.metadata,
        true,
        name_is_dns_subdomain,
        &Path::new("metadata"),
    );
    errs.extend(validate_daemon_set_spec(ds));
    errs
}

fn validate_daemon_set_spec(ds: &DaemonSet) -> Vec<FieldError> {
    let spec = ds.spec.clone().unwrap_or_default();
    let p = Path::new("spec");
    let sel = selector_opt(&spec.selector);
    let mut errs = validate_label_selector(sel, &p.child("selector"));
    let labels = spec
        .template
        .metadata
        .as_ref()
        .and_then(|m| m.labels.as_ref());
    if let Ok(s) = Selector::from_label_selector(sel) {
        if !s.matches(labels) && !s.is_empty() {
            errs.push(FieldError::invalid(
                &p.child("template").child("metadata").child("labels"),
                BadValue::string_map(labels),
                "`selector` does not match template `labels`",
            ));
        }
    }
    if let Some(s) = sel.filter(|s| is_empty_selector(s)) {
        errs.push(FieldError::invalid(
            &p.child("selector"),
            selector_json(s),
            "empty selector is invalid for daemonset",
        ));
    }
    errs.extend(validate_pod_template(&spec.template, &p.child("template")));
    errs.extend(restart_always_no_deadline(
        &spec.template,
        "DaemonSet",
        &p.child("template"),
    ));
    errs.extend(validate_nonnegative(
        i64::from(spec.min_ready_seconds.unwrap_or(0)),
        &p.child("minReadySeconds"),
    ));
    let us = spec.update_strategy.clone().unwrap_or_default();
    let up = p.child("updateStrategy");
    match us.type_.as_deref().unwrap_or("") {
        "OnDelete" => {}
        "RollingUpdate" => match us.rolling_update.as_ref() {
            None => errs.push(FieldError::required(&up.child("rollingUpdate"), "")),
            Some(ru) => {
                let rp = up.child("rollingUpdate");
                let mu = ru.max_unavailable.clone().unwrap_or_default();
                let ms = ru.max_surge.clone().unwrap_or_default();
                errs.extend(validate_positive_int_or_percent(
                    &mu,
                    &rp.child("maxUnavailable"),
                ));
                errs.extend(validate_positive_int_or_percent(&ms, &rp.child("maxSurge")));
                errs.extend(not_more_than_100_percent(&mu, &rp.child("maxUnavailable")));
                errs.extend(not_more_than_100_percent(&ms, &rp.child("maxSurge")));
                let (hu, hs) = (
                    int_or_percent_value(&mu) != 0,
                    int_or_percent_value(&ms) != 0,
                );
                if hu && hs {
                    errs.push(FieldError::invalid(
                        &rp.child("maxSurge"),
                        int_or_string_json(&ms),
                        "may not be set when maxUnavailable is non-zero",
                    ));
                } else if !hu && !hs {
                    errs.push(FieldError::required(
                        &rp.child("maxUnavailable"),
                        "cannot be 0 when maxSurge is 0",
                    ));
                }
            }
        },
        other => {
            let value = GoJson::obj(vec![
                ("Type", GoJson::str(other)),
                ("RollingUpdate", GoJson::Null),
            ]);
            errs.push(FieldError::not_supported(
                &up,
                value,
                &["RollingUpdate", "OnDelete"],
            ));
        }
    }
    if let Some(r) = spec.revision_history_limit {
        errs.extend(validate_nonnegative(
            i64::from(r),
            &p.child("revisionHistoryLimit"),
        ));
    }
    errs
}

/// `ValidateDaemonSetUpdate` plus the strategy's selector immutability.
pub fn validate_daemon_set_update(new: &DaemonSet, old: &DaemonSet) -> Vec<FieldError> {
    let mut errs =
        validate_object_meta_update(&new.metadata, &old.metadata, &Path::new("metadata"));
    errs.extend(validate_daemon_set_spec(new));
    let (ns, os) = (
        new.spec.clone().unwrap_or_default(),
        old.spec.clone().unwrap_or_default(),
    );
    errs.extend(selector_immutable(&ns.selector, &os.selector));
    errs
}

/// Drops empty maps and arrays so nil and empty compare equal, as apimachinery's
/// semantic equality does.
pub fn normalize_empty(v: &mut serde_json::Value) {
    if let serde_json::Value::Object(m) = v {
        m.retain(|_, x| {
            normalize_empty(x);
            !matches!(x, serde_json::Value::Object(o) if o.is_empty())
                && !matches!(x, serde_json::Value::Array(a) if a.is_empty())
        });
    } else if let serde_json::Value::Array(a) = v {
        a.iter_mut().for_each(normalize_empty);
    }
}
