//! StatefulSet validation: spec rules, claim templates, and the update whitelist.

use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::PodTemplateSpec;

use super::apps::*;
use super::meta::*;
use super::names::*;
use crate::apiserver::field_error::{BadValue, FieldError, GoJson, Path};

/// `ValidateStatefulSet` (StatefulSet names are DNS labels; upstream does not validate the
/// template's pod spec, only its labels and annotations).
pub fn validate_stateful_set(s: &StatefulSet) -> Vec<FieldError> {
    let mut errs =
        validate_object_meta(&s.metadata, true, name_is_dns_label, &Path::new("metadata"));
    errs.extend(validate_stateful_set_spec(s));
    errs
}

fn validate_stateful_set_spec(s: &StatefulSet) -> Vec<FieldError> {
    let spec = s.spec.clone().unwrap_or_default();
    let p = Path::new("spec");
    let mut errs = Vec::new();
    match spec.pod_management_policy.as_deref().unwrap_or("") {
        "" => errs.push(FieldError::required(&p.child("podManagementPolicy"), "")),
        "OrderedReady" | "Parallel" => {}
        other => errs.push(FieldError::invalid(
            &p.child("podManagementPolicy"),
            BadValue::typed_str(other),
            "must be 'OrderedReady' or 'Parallel'",
        )),
    }
    let us = spec.update_strategy.clone().unwrap_or_default();
    let up = p.child("updateStrategy");
    let ru_json = |ru: &k8s_openapi::api::apps::v1::RollingUpdateStatefulSetStrategy| {
        GoJson::obj(vec![
            (
                "Partition",
                GoJson::Int(i64::from(ru.partition.unwrap_or(0))),
            ),
            (
                "MaxUnavailable",
                ru.max_unavailable
                    .as_ref()
                    .map_or(GoJson::Null, int_or_string_json),
            ),
        ])
    };
    match us.type_.as_deref().unwrap_or("") {
        "" => errs.push(FieldError::required(&up, "")),
        "OnDelete" => {
            if let Some(ru) = us.rolling_update.as_ref() {
                errs.push(FieldError::invalid(
                    &up.child("rollingUpdate"),
                    ru_json(ru),
                    "only allowed for updateStrategy 'RollingUpdate'",
                ));
            }
        }
        "RollingUpdate" => {
            if let Some(ru) = us.rolling_update.as_ref() {
                let rp = up.child("rollingUpdate");
                errs.extend(validate_nonnegative(
                    i64::from(ru.partition.unwrap_or(0)),
                    &rp.child("partition"),
                ));
                if let Some(mu) = ru.max_unavailable.as_ref() {
                    let mp = rp.child("maxUnavailable");
                    errs.extend(validate_positive_int_or_percent(mu, &mp));
                    if int_or_percent_value(mu) == 0 {
                        errs.push(FieldError::invalid(
                            &mp,
                            int_or_string_json(mu),
                            "cannot be 0",
                        ));
                    }
                    errs.extend(not_more_than_100_percent(mu, &mp));
                }
            }
        }
        other => {
            let value = GoJson::obj(vec![
                ("Type", GoJson::str(other)),
                (
                    "RollingUpdate",
                    us.rolling_update.as_ref().map_or(GoJson::Null, ru_json),
                ),
            ]);
            errs.push(FieldError::invalid(
                &up,
                value,
                "must be 'RollingUpdate' or 'OnDelete'",
            ));
        }
    }
    if let Some(policy) = spec.persistent_volume_claim_retention_policy.as_ref() {
        let pp = p.child("persistentVolumeClaimRetentionPolicy");
        for (name, v) in [
            ("whenDeleted", &policy.when_deleted),
            ("whenScaled", &policy.when_scaled),
        ] {
            let v = v.as_deref().unwrap_or("");
            if v != "Retain" && v != "Delete" {
                errs.push(FieldError::not_supported(
                    &pp.child(name),
                    BadValue::typed_str(v),
                    &["Retain", "Delete"],
                ));
            }
        }
    }
    errs.extend(validate_nonnegative(
        i64::from(spec.replicas.unwrap_or(0)),
        &p.child("replicas"),
    ));
    errs.extend(validate_nonnegative(
        i64::from(spec.min_ready_seconds.unwrap_or(0)),
        &p.child("minReadySeconds"),
    ));
    if let Some(o) = spec.ordinals.as_ref() {
        errs.extend(validate_nonnegative(
            i64::from(o.start.unwrap_or(0)),
            &p.child("ordinals.start"),
        ));
    }
    let sel = selector_opt(&spec.selector);
    let sp = p.child("selector");
    match sel {
        None => errs.push(FieldError::required(&sp, "")),
        Some(s) => {
            errs.extend(validate_label_selector(Some(s), &sp));
            if is_empty_selector(s) {
                errs.push(FieldError::invalid(
                    &sp,
                    selector_json(s),
                    "empty selector is invalid for statefulset",
                ));
            }
        }
    }
    match Selector::from_label_selector(sel) {
        Err(_) => errs.push(FieldError::invalid(&sp, selector_value(sel), "")),
        Ok(selector) => {
            let tp = p.child("template");
            let meta = spec.template.metadata.clone().unwrap_or_default();
            if !selector.is_empty() && !selector.matches(meta.labels.as_ref()) {
                errs.push(FieldError::invalid(
                    &tp.child("metadata").child("labels"),
                    BadValue::string_map(meta.labels.as_ref()),
                    "`selector` does not match template `labels`",
                ));
            }
            errs.extend(validate_labels(meta.labels.as_ref(), &tp.child("labels")));
            errs.extend(validate_annotations(
                meta.annotations.as_ref(),
                &tp.child("annotations"),
            ));
        }
    }
    errs.extend(restart_always_no_deadline(
        &spec.template,
        "StatefulSet",
        &p.child("template"),
    ));
    errs
}

/// `ValidateStatefulSetUpdate`: only replicas, ordinals, template, updateStrategy,
/// revisionHistoryLimit, persistentVolumeClaimRetentionPolicy and minReadySeconds may
/// change.
pub fn validate_stateful_set_update(new: &StatefulSet, old: &StatefulSet) -> Vec<FieldError> {
    let mut errs =
        validate_object_meta_update(&new.metadata, &old.metadata, &Path::new("metadata"));
    errs.extend(validate_stateful_set_spec(new));
    let mask = |s: &StatefulSet| {
        let mut spec = s.spec.clone().unwrap_or_default();
        spec.replicas = None;
        spec.template = PodTemplateSpec::default();
        spec.update_strategy = None;
        spec.min_ready_seconds = None;
        spec.ordinals = None;
        spec.persistent_volume_claim_retention_policy = None;
        spec.revision_history_limit = None;
        let mut v = serde_json::to_value(spec).unwrap_or_default();
        normalize_empty(&mut v);
        v
    };
    if mask(new) != mask(old) {
        errs.push(FieldError::forbidden(
            &Path::new("spec"),
            "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden",
        ));
    }
    errs
}
