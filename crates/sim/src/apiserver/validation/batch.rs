//! batch/v1 Job validation (`ValidateJob`, `ValidateJobUpdate`). Run after the Job
//! strategy generated the selector ([`crate::apiserver::defaults::generate_job_selector`]).

use k8s_openapi::api::batch::v1::Job;

use super::apps::normalize_empty;
use super::meta::*;
use super::names::*;
use super::pod::validate_pod_template;
use crate::apiserver::field_error::{BadValue, FieldError, GoJson, Path};

const MAX_PARALLELISM_FOR_INDEXED_JOB: i32 = 100_000;
/// `maxFailedIndexesForIndexedJob`.
const MAX_FAILED_INDEXES_FOR_INDEXED_JOB: i32 = 100_000;
/// `completionsSoftLimit`, and the limits that apply above it with a per-index limit.
const COMPLETIONS_SOFT_LIMIT: i32 = 100_000;
const PARALLELISM_LIMIT_FOR_HIGH_COMPLETIONS: i32 = 10_000;
const MAX_FAILED_INDEXES_LIMIT_FOR_HIGH_COMPLETIONS: i32 = 10_000;
/// `maxSuccessPolicyRule`.
const MAX_SUCCESS_POLICY_RULES: usize = 20;
/// `maxPodFailurePolicyRules`.
const MAX_POD_FAILURE_POLICY_RULES: usize = 20;
/// The actions a pod failure policy rule may take.
const POD_FAILURE_POLICY_ACTIONS: [&str; 4] = ["Count", "FailIndex", "FailJob", "Ignore"];

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
    errs.extend(validate_per_index(&spec, &p));
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
    if let Some(sp) = spec.success_policy.as_ref() {
        errs.extend(validate_success_policy(
            &spec,
            sp,
            &p.child("successPolicy"),
        ));
    }
    if let Some(pfp) = spec.pod_failure_policy.as_ref() {
        errs.extend(validate_pod_failure_policy_actions(
            &spec,
            pfp,
            &p.child("podFailurePolicy"),
        ));
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

/// The per-index back-off fields (`validateJobSpec`): non-negative, `maxFailedIndexes`
/// needs `backoffLimitPerIndex`, both need Indexed mode, and the bounds on large jobs.
fn validate_per_index(spec: &k8s_openapi::api::batch::v1::JobSpec, p: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if let Some(b) = spec.backoff_limit_per_index {
        errs.extend(validate_nonnegative(
            i64::from(b),
            &p.child("backoffLimitPerIndex"),
        ));
    }
    if let Some(m) = spec.max_failed_indexes {
        errs.extend(validate_nonnegative(
            i64::from(m),
            &p.child("maxFailedIndexes"),
        ));
        if spec.backoff_limit_per_index.is_none() {
            errs.push(FieldError::required(
                &p.child("backoffLimitPerIndex"),
                "when maxFailedIndexes is specified",
            ));
        }
    }
    let indexed = spec.completion_mode.as_deref() == Some("Indexed");
    if indexed {
        errs.extend(validate_indexed_limits(spec, p));
    } else {
        for (field, v) in [
            ("backoffLimitPerIndex", spec.backoff_limit_per_index),
            ("maxFailedIndexes", spec.max_failed_indexes),
        ] {
            if let Some(v) = v {
                errs.push(FieldError::invalid(
                    &p.child(field),
                    v,
                    "requires indexed completion mode",
                ));
            }
        }
    }
    errs
}

/// The per-index bounds of an Indexed job (`maxFailedIndexes` against completions, and the
/// limits above 100000 completions).
fn validate_indexed_limits(
    spec: &k8s_openapi::api::batch::v1::JobSpec,
    p: &Path,
) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mfi = p.child("maxFailedIndexes");
    if let (Some(c), Some(m)) = (spec.completions, spec.max_failed_indexes) {
        if m > c {
            errs.push(FieldError::invalid(
                &mfi,
                m,
                "must be less than or equal to completions",
            ));
        }
    }
    if let Some(m) = spec
        .max_failed_indexes
        .filter(|m| *m > MAX_FAILED_INDEXES_FOR_INDEXED_JOB)
    {
        errs.push(FieldError::invalid(
            &mfi,
            m,
            &format!("must be less than or equal to {MAX_FAILED_INDEXES_FOR_INDEXED_JOB}"),
        ));
    }
    let high = spec.completions.is_some_and(|c| c > COMPLETIONS_SOFT_LIMIT);
    if high && spec.backoff_limit_per_index.is_some() {
        let above = format!("when completions are above {COMPLETIONS_SOFT_LIMIT} and used with backoff limit per index");
        if spec.max_failed_indexes.is_none() {
            errs.push(FieldError::required(
                &mfi,
                &format!("must be specified when completions is above {COMPLETIONS_SOFT_LIMIT}"),
            ));
        }
        if let Some(par) = spec
            .parallelism
            .filter(|x| *x > PARALLELISM_LIMIT_FOR_HIGH_COMPLETIONS)
        {
            errs.push(FieldError::invalid(
                &p.child("parallelism"),
                par,
                &format!("must be less than or equal to {PARALLELISM_LIMIT_FOR_HIGH_COMPLETIONS} {above}"),
            ));
        }
        if let Some(m) = spec
            .max_failed_indexes
            .filter(|m| *m > MAX_FAILED_INDEXES_LIMIT_FOR_HIGH_COMPLETIONS)
        {
            errs.push(FieldError::invalid(
                &mfi,
                m,
                &format!("must be less than or equal to {MAX_FAILED_INDEXES_LIMIT_FOR_HIGH_COMPLETIONS} {above}"),
            ));
        }
    }
    errs
}

/// The success policy as Go prints the internal `batch.SuccessPolicy` it refuses
/// (`json.Marshal` of a struct without json tags).
fn success_policy_value(sp: &k8s_openapi::api::batch::v1::SuccessPolicy) -> GoJson {
    let rules = sp
        .rules
        .iter()
        .map(|r| {
            GoJson::obj(vec![
                (
                    "SucceededIndexes",
                    r.succeeded_indexes
                        .as_deref()
                        .map_or(GoJson::Null, GoJson::str),
                ),
                (
                    "SucceededCount",
                    r.succeeded_count
                        .map_or(GoJson::Null, |n| GoJson::Int(i64::from(n))),
                ),
            ])
        })
        .collect();
    GoJson::obj(vec![("Rules", GoJson::Arr(rules))])
}

/// `validateIndexesFormat`: the number of indexes in "1,3-5", or the parse error.
fn indexes_format(s: &str, completions: i32) -> Result<i32, String> {
    if s.is_empty() {
        return Ok(0);
    }
    let mut last: Option<i64> = None;
    let mut total: i64 = 0;
    let parse = |b: &str| {
        b.parse::<i32>()
            .map(i64::from)
            .map_err(|_| format!("cannot convert string to integer for index: {b:?}"))
    };
    for part in s.split(',') {
        let bounds: Vec<&str> = part.split('-').collect();
        if bounds.len() > 2 {
            return Err(format!("the fragment {part:?} violates the requirement that an index interval can have at most two parts separated by '-'"));
        }
        for (i, b) in bounds.iter().enumerate() {
            let x = parse(b)?;
            if x >= i64::from(completions) {
                return Err(format!("too large index: {b:?}"));
            }
            if let Some(prev) = last.filter(|p| *p >= x) {
                return Err(format!(
                    "non-increasing order, previous: {prev}, current: {x}"
                ));
            }
            total += if i == 0 { 1 } else { x - last.unwrap_or(x) };
            last = Some(x);
        }
    }
    Ok(total.min(i64::from(i32::MAX)) as i32)
}

/// `validateSuccessPolicy` and its rules.
fn validate_success_policy(
    spec: &k8s_openapi::api::batch::v1::JobSpec,
    sp: &k8s_openapi::api::batch::v1::SuccessPolicy,
    p: &Path,
) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if spec.completion_mode.as_deref() != Some("Indexed") {
        errs.push(FieldError::invalid(
            p,
            success_policy_value(sp),
            "requires indexed completion mode",
        ));
        return errs;
    }
    let rp = p.child("rules");
    if sp.rules.is_empty() {
        errs.push(FieldError::required(
            &rp,
            "at least one rules must be specified when the successPolicy is specified",
        ));
    }
    if sp.rules.len() > MAX_SUCCESS_POLICY_RULES {
        errs.push(FieldError::too_many(
            &rp,
            sp.rules.len(),
            MAX_SUCCESS_POLICY_RULES,
        ));
    }
    let completions = spec.completions.unwrap_or(0);
    for (i, rule) in sp.rules.iter().enumerate() {
        let path = rp.index(i);
        if rule.succeeded_count.is_none() && rule.succeeded_indexes.is_none() {
            errs.push(FieldError::required(
                &path,
                "at least one of succeededCount or succeededIndexes must be specified",
            ));
        }
        let mut total = 0;
        if let Some(ix) = rule.succeeded_indexes.as_deref() {
            match indexes_format(ix, completions) {
                Ok(n) => total = n,
                Err(e) => errs.push(FieldError::invalid(
                    &path.child("succeededIndexes"),
                    ix,
                    &format!("error parsing succeededIndexes: {e}"),
                )),
            }
        }
        if let Some(n) = rule.succeeded_count {
            let cp = path.child("succeededCount");
            errs.extend(validate_nonnegative(i64::from(n), &cp));
            if n > completions {
                errs.push(FieldError::invalid(&cp, n, &format!("must be less than or equal to {completions} (the number of specified completions)")));
            }
            if rule.succeeded_indexes.is_some() && n > total {
                errs.push(FieldError::invalid(&cp, n, &format!("must be less than or equal to {total} (the number of indexes in the specified succeededIndexes field)")));
            }
        }
    }
    errs
}

/// The pod failure policy's rule actions (`validatePodFailurePolicyRule`): known, and
/// FailIndex only with a per-index limit.
fn validate_pod_failure_policy_actions(
    spec: &k8s_openapi::api::batch::v1::JobSpec,
    pfp: &k8s_openapi::api::batch::v1::PodFailurePolicy,
    p: &Path,
) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let rp = p.child("rules");
    if pfp.rules.len() > MAX_POD_FAILURE_POLICY_RULES {
        errs.push(FieldError::too_many(
            &rp,
            pfp.rules.len(),
            MAX_POD_FAILURE_POLICY_RULES,
        ));
    }
    for (i, rule) in pfp.rules.iter().enumerate() {
        let ap = rp.index(i).child("action");
        let a = rule.action.as_str();
        if a.is_empty() {
            let quoted: Vec<String> = POD_FAILURE_POLICY_ACTIONS
                .iter()
                .map(|x| format!("{x:?}"))
                .collect();
            errs.push(FieldError::required(
                &ap,
                &format!("valid values: [{}]", quoted.join(" ")),
            ));
        } else if a == "FailIndex" {
            if spec.backoff_limit_per_index.is_none() {
                errs.push(FieldError::invalid(
                    &ap,
                    BadValue::typed_str(a),
                    "requires the backoffLimitPerIndex to be set",
                ));
            }
        } else if !POD_FAILURE_POLICY_ACTIONS.contains(&a) {
            errs.push(FieldError::not_supported(
                &ap,
                BadValue::typed_str(a),
                &POD_FAILURE_POLICY_ACTIONS,
            ));
        }
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
    if ns.backoff_limit_per_index != os.backoff_limit_per_index {
        errs.push(FieldError::invalid(
            &p.child("backoffLimitPerIndex"),
            BadValue::opt_int(ns.backoff_limit_per_index.map(i64::from)),
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
