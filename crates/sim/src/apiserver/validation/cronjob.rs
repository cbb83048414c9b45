//! batch/v1 CronJob validation (`ValidateCronJobCreate`, `ValidateCronJobUpdate`):
//! the schedule as robfig/cron parses it, the time zone, the concurrency policy, the
//! history limits and the job template.

use k8s_openapi::api::batch::v1::{CronJob, CronJobSpec};

use super::meta::*;
use super::names::*;
use super::pod::validate_pod_template;
use crate::apiserver::field_error::{BadValue, FieldError, Path};
use crate::controllers::cron;

/// `validateScheduleFormat`.
fn validate_schedule(
    schedule: &str,
    allow_tz: bool,
    tz: Option<&str>,
    p: &Path,
) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if let Err(e) = cron::parse(schedule) {
        errs.push(FieldError::invalid(p, schedule, &e));
    }
    if allow_tz && schedule.contains("TZ") && tz.is_some() {
        errs.push(FieldError::invalid(
            p,
            schedule,
            "cannot use both timeZone field and TZ or CRON_TZ in schedule",
        ));
    } else if !allow_tz && schedule.contains("TZ") {
        errs.push(FieldError::invalid(
            p,
            schedule,
            "cannot use TZ or CRON_TZ in schedule, use timeZone field instead",
        ));
    }
    errs
}

fn valid_zone_part(part: &str) -> bool {
    (1..=14).contains(&part.len())
        && part != "."
        && part != ".."
        && !part.starts_with('-')
        && part
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_' | '+'))
}

/// `validateTimeZone`: a zone `time.LoadLocation` loads — here, one of kubeloop's table
/// of zone rules (docs/controlplane.md lists it).
fn validate_time_zone(tz: Option<&str>, p: &Path) -> Vec<FieldError> {
    let Some(tz) = tz else { return Vec::new() };
    if tz.is_empty() {
        return vec![FieldError::invalid(
            p,
            tz,
            "timeZone must be nil or non-empty string",
        )];
    }
    if !tz.split('/').all(valid_zone_part) {
        return vec![FieldError::invalid(
            p,
            tz,
            &format!("unknown time zone {tz}"),
        )];
    }
    if tz.eq_ignore_ascii_case("Local") {
        return vec![FieldError::invalid(
            p,
            tz,
            "timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones",
        )];
    }
    // `time.LoadLocation`: the zones of kubeloop's table (controllers/tz.rs).
    if crate::controllers::tz::lookup(tz).is_none() {
        return vec![FieldError::invalid(
            p,
            tz,
            &format!("unknown time zone {tz}"),
        )];
    }
    Vec::new()
}

fn validate_spec(spec: &CronJobSpec, old: Option<&CronJobSpec>, p: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if spec.schedule.is_empty() {
        errs.push(FieldError::required(&p.child("schedule"), ""));
    } else {
        let allow = old.is_some_and(|o| o.schedule.contains("TZ"));
        errs.extend(validate_schedule(
            &spec.schedule,
            allow,
            spec.time_zone.as_deref(),
            &p.child("schedule"),
        ));
    }
    if let Some(s) = spec.starting_deadline_seconds {
        errs.extend(validate_nonnegative(s, &p.child("startingDeadlineSeconds")));
    }
    if old.is_none_or(|o| o.time_zone != spec.time_zone) {
        errs.extend(validate_time_zone(
            spec.time_zone.as_deref(),
            &p.child("timeZone"),
        ));
    }
    match spec.concurrency_policy.as_deref().unwrap_or("") {
        "Allow" | "Forbid" | "Replace" => {}
        "" => errs.push(FieldError::required(&p.child("concurrencyPolicy"), "")),
        other => errs.push(FieldError::not_supported(
            &p.child("concurrencyPolicy"),
            BadValue::typed_str(other),
            &["Allow", "Forbid", "Replace"],
        )),
    }
    errs.extend(validate_job_template(spec, &p.child("jobTemplate")));
    for (name, v) in [
        (
            "successfulJobsHistoryLimit",
            spec.successful_jobs_history_limit,
        ),
        ("failedJobsHistoryLimit", spec.failed_jobs_history_limit),
    ] {
        if let Some(v) = v {
            errs.extend(validate_nonnegative(i64::from(v), &p.child(name)));
        }
    }
    errs
}

/// `ValidateJobTemplateSpec`, for what a template may hold: the selector is generated,
/// the pod template must be valid with restartPolicy OnFailure or Never.
fn validate_job_template(spec: &CronJobSpec, p: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let js = spec.job_template.spec.clone().unwrap_or_default();
    let sp = p.child("spec");
    for (name, v) in [
        ("parallelism", js.parallelism.map(i64::from)),
        ("completions", js.completions.map(i64::from)),
        ("activeDeadlineSeconds", js.active_deadline_seconds),
        ("backoffLimit", js.backoff_limit.map(i64::from)),
    ] {
        if let Some(v) = v {
            errs.extend(validate_nonnegative(v, &sp.child(name)));
        }
    }
    if js.selector.is_some() {
        errs.push(FieldError::invalid(
            &sp.child("selector"),
            BadValue::Json("{}".into()),
            "`selector` will be auto-generated",
        ));
    }
    if js.manual_selector == Some(true) {
        errs.push(FieldError::not_supported(
            &sp.child("manualSelector"),
            true,
            &["nil", "false"],
        ));
    }
    let tp = sp.child("template");
    errs.extend(validate_pod_template(&js.template, &tp));
    let rp = js
        .template
        .spec
        .as_ref()
        .and_then(|s| s.restart_policy.clone())
        .unwrap_or_default();
    if rp != "OnFailure" && rp != "Never" {
        errs.push(FieldError::not_supported(
            &tp.child("spec").child("restartPolicy"),
            BadValue::typed_str(&rp),
            &["OnFailure", "Never"],
        ));
    }
    errs
}

/// `ValidateCronJobCreate`.
pub fn validate_cron_job(c: &CronJob) -> Vec<FieldError> {
    let mut errs = validate_object_meta(
        &c.metadata,
        true,
        name_is_dns_subdomain,
        &Path::new("metadata"),
    );
    errs.extend(validate_spec(
        &c.spec.clone().unwrap_or_default(),
        None,
        &Path::new("spec"),
    ));
    let name = c.metadata.name.as_deref().unwrap_or("");
    if name.len() > 52 {
        errs.push(FieldError::invalid(
            &Path::new("metadata").child("name"),
            name,
            "must be no more than 52 characters",
        ));
    }
    errs
}

/// `ValidateCronJobUpdate`.
pub fn validate_cron_job_update(new: &CronJob, old: &CronJob) -> Vec<FieldError> {
    let mut errs =
        validate_object_meta_update(&new.metadata, &old.metadata, &Path::new("metadata"));
    let os = old.spec.clone().unwrap_or_default();
    errs.extend(validate_spec(
        &new.spec.clone().unwrap_or_default(),
        Some(&os),
        &Path::new("spec"),
    ));
    errs
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cj(schedule: &str) -> CronJob {
        serde_json::from_value(serde_json::json!({
            "metadata": {"name": "hello", "namespace": "default"},
            "spec": {"schedule": schedule, "concurrencyPolicy": "Allow", "jobTemplate": {"spec": {"template": {"spec": {
                "restartPolicy": "OnFailure", "terminationGracePeriodSeconds": 30,
                "containers": [{"name": "hello", "image": "busybox:1.28", "imagePullPolicy": "IfNotPresent",
                                "terminationMessagePolicy": "File"}],
                "dnsPolicy": "ClusterFirst"
            }}}}}
        }))
        .unwrap()
    }

    fn bodies(c: &CronJob) -> Vec<String> {
        validate_cron_job(c)
            .iter()
            .map(|e| format!("{}: {}", e.field, e.body()))
            .collect()
    }

    #[test]
    fn schedules_are_refused_with_robfig_cron_messages() {
        assert_eq!(
            bodies(&cj("* * *")),
            ["spec.schedule: Invalid value: \"* * *\": expected exactly 5 fields, found 3: [* * *]"]
        );
        assert_eq!(
            bodies(&cj("CRON_TZ=UTC * * * * *")),
            ["spec.schedule: Invalid value: \"CRON_TZ=UTC * * * * *\": cannot use TZ or CRON_TZ in schedule, use timeZone field instead"]
        );
        assert_eq!(bodies(&cj("")), ["spec.schedule: Required value"]);
        let mut c = cj("@hourly");
        c.spec.as_mut().unwrap().time_zone = Some("Local".into());
        assert_eq!(
            bodies(&c),
            ["spec.timeZone: Invalid value: \"Local\": timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones"]
        );
    }
}
