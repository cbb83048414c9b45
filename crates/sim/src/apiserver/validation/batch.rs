//! batch/v1 Job validation (`ValidateJob`, `ValidateJobUpdate`). Run after the Job
//! strategy generated the selector ([`crate::apiserver::defaults::generate_job_selector`]).

use k8s_openapi::api::batch::v1::Job;

use super::apps::normalize_empty;
use super::meta::*;
use super::names::*;
use super::pod::validate_pod_template;
use crate::apiserver::field_error::{BadValue, FieldError, GoJson, Path};

const MAX_PARALLELISM_FOR_INDEXED_JOB: i32 = 100_000;

fn validate_has_label(job: &Job, key: &str, expected: &str, errs: &mut Vec<FieldError>) {
    let mp = Path::new("spec").child("template").child("metadata");
    let labels = job
        .spec
        .as_ref()
        .and_then(|s| s.template.metadata.as_ref())
        .and_then(|m| m.labels.as_ref());
    match labels.and_then(|l| l.get(key)) {
        None => errs.push(FieldError::required(
            &mp.child("labels").key(key),
            &format!("must be '{expected}'"),
        )),
        Some(v) if v != expected => errs.push(FieldError::invalid(
            &mp.child("labels").key(key),
            BadValue::string_map(labels),
            &format!("must be '{expected}'"),
        )),
        Some(_) => {}
    }
}

/// `validateGeneratedSelector`: unless `manualSelector`, the template carries the job's
/// name and UID labels.
fn validate_generated_selector(job: &Job) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let Some(spec) = job.spec.as_ref() else {
        return errs;
    };
    if spec.manual_selector == Some(true) {
        return errs;
    }
    if spec
        .template
        .metadata
        .as_ref()
        .and_then(|m| m.labels.as_ref())
        .is_none()
    {
        errs.push(FieldError::required(
            &Path::new("spec")
                .child("template")
                .child("metadata")
                .child("labels"),
            "Template labels are required when manualSelector is not set",
        ));
        return errs;
    }
    if spec.selector.is_none() {
        return errs;
    }
    let uid = job.metadata.uid.clone().unwrap_or_default();
    let name = job.metadata.name.clone().unwrap_or_default();
    if uid.is_empty() {
        errs.push(FieldError::required(
            &Path::new("metadata").child("uid"),
            "",
        ));
    }
    validate_has_label(job, "controller-uid", &uid, &mut errs);
    validate_has_label(job, "job-name", &name, &mut errs);
    validate_has_label(job, "batch.kubernetes.io/controller-uid", &uid, &mut errs);
    validate_has_label(job, "batch.kubernetes.io/job-name", &name, &mut errs);
    errs
}

/// `ValidateJob`.
pub fn validate_job(job: &Job) -> Vec<FieldError> {
    let mut errs = validate_object_meta(
        &job.metadata,
        true,
        name_is_dns_subdomain,
        &Path::new("metadata"),
    );
    errs.extend(validate_generated_selector(job));
    errs.extend(validate_job_spec(job));
    errs
}

fn validate_job_spec(job: &Job) -> Vec<FieldError> {
    let spec = job.spec.clone().unwrap_or_default();
    let p = Path::new("spec");
    let mut errs = Vec::new();
    for (name, v) in [
        ("parallelism", spec.parallelism.map(i64::from)),
        ("completions", spec.completions.map(i64::from)),
        ("activeDeadlineSeconds", spec.active_deadline_seconds),
        ("backoffLimit", spec.backoff_limit.map(i64::from)),
        (
            "ttlSecondsAfterFinished",
            spec.ttl_seconds_after_finished.map(i64::from),
        ),
    ] {
        if let Some(v) = v {
            errs.extend(validate_nonnegative(v, &p.child(name)));
        }
    }
    if let Some(mode) = spec.completion_mode.as_deref() {
        if mode != "NonIndexed" && mode != "Indexed" {
            errs.push(FieldError::not_supported(
                &p.child("completionMode"),
                BadValue::typed_str(mode),
                &["NonIndexed", "Indexed"],
            ));
        }
        if mode == "Indexed" {
            if spec.completions.is_none() {
                errs.push(FieldError::required(
                    &p.child("completions"),
                    "when completion mode is Indexed",
                ));
            }
            if let Some(par) = spec
                .parallelism
                .filter(|x| *x > MAX_PARALLELISM_FOR_INDEXED_JOB)
            {
                errs.push(FieldError::invalid(
                    &p.child("parallelism"),
                    par,
                    &format!("must be less than or equal to {MAX_PARALLELISM_FOR_INDEXED_JOB} when completion mode is Indexed"),
                ));
            }
        }
    }
    if let Some(pr) = spec.pod_replacement_policy.as_deref() {
        let allowed: &[&str] = if spec.pod_failure_policy.is_some() {
            &["Failed"]
        } else {
            &["Failed", "TerminatingOrFailed"]
        };
        if !allowed.contains(&pr) {
            errs.push(FieldError::not_supported(
                &p.child("podReplacementPolicy"),
                BadValue::typed_str(pr),
                allowed,
            ));
        }
    }
    match spec.selector.as_ref() {
        None => errs.push(FieldError::required(&p.child("selector"), "")),
        Some(s) => errs.extend(validate_label_selector(Some(s), &p.child("selector"))),
    }
    if let Ok(sel) = Selector::from_label_selector(spec.selector.as_ref()) {
        let labels = spec
            .template
            .metadata
            .as_ref()
            .and_then(|m| m.labels.as_ref());
        if spec.selector.is_some() && !sel.matches(labels) {
            errs.push(FieldError::invalid(
                &p.child("template").child("metadata").child("labels"),
                BadValue::string_map(labels),
                "`selector` does not match template `labels`",
            ));
        }
    }
    let tp = p.child("template");
    errs.extend(validate_pod_template(&spec.template, &tp));
    let t_spec = spec.template.spec.clone().unwrap_or_default();
    let rp = t_spec.restart_policy.unwrap_or_default();
    if rp != "OnFailure" && rp != "Never" {
        errs.push(FieldError::not_supported(
            &tp.child("spec").child("restartPolicy"),
            BadValue::typed_str(&rp),
            &["OnFailure", "Never"],
        ));
    } else if rp == "OnFailure" && spec.pod_failure_policy.is_some() {
        errs.push(FieldError::invalid(
            &tp.child("spec").child("restartPolicy"),
            BadValue::typed_str(&rp),
            "only \"Never\" is supported when podFailurePolicy is specified",
        ));
    }
    errs
}

/// `ValidateJobUpdate`: the selector, completion mode and (for running jobs) the template
/// are immutable.
pub fn validate_job_update(new: &Job, old: &Job) -> Vec<FieldError> {
    let mut errs =
        validate_object_meta_update(&new.metadata, &old.metadata, &Path::new("metadata"));
    errs.extend(validate_generated_selector(new));
    errs.extend(validate_job_spec(new));
    let (ns, os) = (
        new.spec.clone().unwrap_or_default(),
        old.spec.clone().unwrap_or_default(),
    );
    let p = Path::new("spec");
    if ns.completions != os.completions && ns.completion_mode.as_deref() != Some("Indexed") {
        errs.push(FieldError::invalid(
            &p.child("completions"),
            BadValue::opt_int(ns.completions.map(i64::from)),
            FIELD_IMMUTABLE_MSG,
        ));
    }
    let sel_json = |s: &Option<k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector>| {
        s.as_ref().map(|s| selector_json(s).render())
    };
    if sel_json(&ns.selector) != sel_json(&os.selector) {
        let value = ns
            .selector
            .as_ref()
            .map_or(BadValue::Json("null".into()), |s| selector_json(s).into());
        errs.push(FieldError::invalid(
            &p.child("selector"),
            value,
            FIELD_IMMUTABLE_MSG,
        ));
    }
    let suspended = os.suspend == Some(true);
    let (mut nt, mut ot) = (
        serde_json::to_value(&ns.template).unwrap_or_default(),
        serde_json::to_value(&os.template).unwrap_or_default(),
    );
    normalize_empty(&mut nt);
    normalize_empty(&mut ot);
    if !suspended && nt != ot {
        errs.push(FieldError::invalid(
            &p.child("template"),
            GoJson::from_value(&nt),
            FIELD_IMMUTABLE_MSG,
        ));
    }
    if ns.completion_mode != os.completion_mode {
        errs.push(FieldError::invalid(
            &p.child("completionMode"),
            GoJson::opt_str(ns.completion_mode.as_deref()),
            FIELD_IMMUTABLE_MSG,
        ));
    }
    errs
}
