//! What the Job controller decides from a Job and its pods, as pure functions: the
//! completion-index sets (`completedIndexes`), the pod-failure back-off, the pod failure
//! policy's rule matching, the restart-count backoff for `OnFailure`, and conditions.

use std::collections::BTreeSet;

use k8s_openapi::api::batch::v1::{Job, JobCondition, PodFailurePolicy};
use k8s_openapi::api::core::v1::Pod;

use crate::time::{k8s_time, Time, MINUTE, SECOND};

/// The finalizer the Job controller puts on its pods until it has counted them.
pub const TRACKING_FINALIZER: &str = "batch.kubernetes.io/job-tracking";
/// The annotation and label carrying an Indexed Job pod's index.
pub const COMPLETION_INDEX: &str = "batch.kubernetes.io/job-completion-index";
/// The environment variable an Indexed Job's containers read their index from.
pub const COMPLETION_INDEX_ENV: &str = "JOB_COMPLETION_INDEX";
/// `DefaultJobPodFailureBackOff`.
pub const POD_FAILURE_BACKOFF: Time = 10 * SECOND;
/// `MaxJobPodFailureBackOff`.
pub const MAX_POD_FAILURE_BACKOFF: Time = 6 * MINUTE;

/// `BackoffLimitExceeded` and its message.
pub const BACKOFF_LIMIT: (&str, &str) = (
    "BackoffLimitExceeded",
    "Job has reached the specified backoff limit",
);
/// `DeadlineExceeded` and its message.
pub const DEADLINE: (&str, &str) = (
    "DeadlineExceeded",
    "Job was active longer than specified deadline",
);
/// `MaxFailedIndexesExceeded` and its message.
pub const MAX_FAILED_INDEXES: (&str, &str) = (
    "MaxFailedIndexesExceeded",
    "Job has exceeded the specified maximal number of failed indexes",
);
/// `FailedIndexes` and its message.
pub const FAILED_INDEXES: (&str, &str) = ("FailedIndexes", "Job has failed indexes");
/// The reason of a SuccessCriteriaMet (and Complete) condition a success policy gave.
pub const SUCCESS_POLICY: &str = "SuccessPolicy";
/// How many of an index's pods failed (and counted) before this one
/// (`JobIndexFailureCountAnnotation`).
pub const INDEX_FAILURE_COUNT: &str = "batch.kubernetes.io/job-index-failure-count";
/// How many of an index's failures a pod failure policy ignored
/// (`JobIndexIgnoredFailureCountAnnotation`).
pub const INDEX_IGNORED_FAILURE_COUNT: &str = "batch.kubernetes.io/job-index-ignored-failure-count";
/// `CompletionsReached` and its message.
pub const COMPLETIONS_REACHED: (&str, &str) = (
    "CompletionsReached",
    "Reached expected number of succeeded pods",
);

/// The pod's phase ("" when unset).
pub fn phase(p: &Pod) -> &str {
    p.status
        .as_ref()
        .and_then(|s| s.phase.as_deref())
        .unwrap_or("")
}

/// Whether the pod carries the job-tracking finalizer.
pub fn has_tracking_finalizer(p: &Pod) -> bool {
    p.metadata
        .finalizers
        .iter()
        .flatten()
        .any(|f| f == TRACKING_FINALIZER)
}

/// The pod's completion index, if it has a valid one (`getCompletionIndex`).
pub fn completion_index(p: &Pod) -> Option<i32> {
    p.metadata
        .annotations
        .as_ref()?
        .get(COMPLETION_INDEX)?
        .parse()
        .ok()
        .filter(|i: &i32| *i >= 0)
}

/// `parseIndexesFromString`: the indexes below `completions` in "1,3-5,7" (malformed
/// parts skipped, ranges cut at `completions`, so a hostile range costs nothing).
pub fn parse_indexes_below(s: &str, completions: i32) -> BTreeSet<i32> {
    let mut out = BTreeSet::new();
    for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (a, b) = match part.split_once('-') {
            Some((a, b)) => (a.parse::<i32>(), b.parse::<i32>()),
            None => (part.parse::<i32>(), part.parse::<i32>()),
        };
        if let (Ok(a), Ok(b)) = (a, b) {
            if a >= 0 && a < completions {
                out.extend(a..=b.min(completions - 1));
            }
        }
    }
    out
}

/// Parses `completedIndexes` ("1,3-5,7"); malformed parts are skipped.
pub fn parse_indexes(s: &str) -> BTreeSet<i32> {
    let mut out = BTreeSet::new();
    for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => {
                if let (Ok(a), Ok(b)) = (a.parse::<i32>(), b.parse::<i32>()) {
                    out.extend(a..=b);
                }
            }
            None => {
                if let Ok(i) = part.parse() {
                    out.insert(i);
                }
            }
        }
    }
    out
}

/// Formats an index set as `completedIndexes` does (`orderedIntervals.String`): runs of
/// three or more consecutive indexes as `a-b`, two as `a,b`, single ones alone.
pub fn format_indexes(set: &BTreeSet<i32>) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut it = set.iter().copied().peekable();
    while let Some(first) = it.next() {
        let mut last = first;
        while it.peek() == Some(&(last + 1)) {
            last = it.next().unwrap_or(last);
        }
        parts.push(match last - first {
            0 => first.to_string(),
            1 => format!("{first},{last}"),
            _ => format!("{first}-{last}"),
        });
    }
    parts.join(",")
}

/// A pod's index failure count annotation (0 when missing or not a valid int32, as
/// `parseInt32`).
pub fn index_failure_count(p: &Pod, key: &str) -> i32 {
    p.metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(key))
        .and_then(|v| v.parse::<i64>().ok())
        .filter(|v| (0..=i64::from(i32::MAX)).contains(v))
        .map_or(0, |v| v as i32)
}

/// `matchSuccessPolicy`: the message of the first rule the succeeded indexes meet.
pub fn match_success_policy(
    policy: Option<&k8s_openapi::api::batch::v1::SuccessPolicy>,
    completions: i32,
    succeeded: &BTreeSet<i32>,
) -> Option<String> {
    let policy = policy?;
    if succeeded.is_empty() {
        return None;
    }
    for (index, rule) in policy.rules.iter().enumerate() {
        let met = match &rule.succeeded_indexes {
            Some(ix) => {
                let required = parse_indexes_below(ix, completions);
                if required.is_empty() {
                    continue;
                }
                let contains = required.intersection(succeeded).count();
                contains == required.len()
                    || rule
                        .succeeded_count
                        .is_some_and(|n| contains >= n.max(0) as usize)
            }
            None => rule
                .succeeded_count
                .is_some_and(|n| succeeded.len() >= n.max(0) as usize),
        };
        if met {
            return Some(format!("Matched rules at index {index}"));
        }
    }
    None
}

/// The delay before the next pod may be created after `failures` failures since the
/// last success: 10 s doubling, at most 6 minutes (`getRemainingTime`).
pub fn failure_backoff(failures: u32) -> Time {
    if failures == 0 {
        return 0;
    }
    let shift = (failures - 1).min(16);
    POD_FAILURE_BACKOFF
        .saturating_mul(1 << shift)
        .min(MAX_POD_FAILURE_BACKOFF)
}

/// `pastBackoffLimitOnFailure`: with `restartPolicy: OnFailure` the restarts of the
/// running and pending pods' containers count against the backoff limit.
pub fn past_backoff_limit_on_failure(job: &Job, pods: &[&Pod]) -> bool {
    let spec = job.spec.clone().unwrap_or_default();
    let rp = spec
        .template
        .spec
        .as_ref()
        .and_then(|s| s.restart_policy.as_deref())
        .unwrap_or("");
    if rp != "OnFailure" {
        return false;
    }
    let restarts: i32 = pods
        .iter()
        .filter(|p| matches!(phase(p), "Running" | "Pending"))
        .filter_map(|p| p.status.as_ref())
        .flat_map(|s| {
            s.init_container_statuses
                .iter()
                .flatten()
                .chain(s.container_statuses.iter().flatten())
        })
        .map(|c| c.restart_count)
        .sum();
    let limit = spec.backoff_limit.unwrap_or(6);
    if limit == 0 {
        restarts > 0
    } else {
        restarts >= limit
    }
}

/// What the pod failure policy says of a failed pod (`matchPodFailurePolicy`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PolicyVerdict {
    /// No rule matched, or a `Count` rule: the failure counts.
    Count,
    /// An `Ignore` rule: the failure does not count.
    Ignore,
    /// A `FailJob` rule: the job fails with this message.
    FailJob(String),
    /// A `FailIndex` rule (counts, and fails the index).
    FailIndex,
}

fn verdict(action: &str, msg: impl FnOnce() -> String) -> PolicyVerdict {
    match action {
        "Ignore" => PolicyVerdict::Ignore,
        "FailJob" => PolicyVerdict::FailJob(msg()),
        "FailIndex" => PolicyVerdict::FailIndex,
        _ => PolicyVerdict::Count,
    }
}

/// Matches a failed pod against the rules in order; the first match decides.
pub fn match_pod_failure_policy(policy: &PodFailurePolicy, pod: &Pod) -> PolicyVerdict {
    let ns = pod.metadata.namespace.as_deref().unwrap_or("");
    let name = pod.metadata.name.as_deref().unwrap_or("");
    let status = pod.status.clone().unwrap_or_default();
    for (index, rule) in policy.rules.iter().enumerate() {
        if let Some(req) = &rule.on_exit_codes {
            let statuses = status
                .container_statuses
                .iter()
                .flatten()
                .chain(status.init_container_statuses.iter().flatten());
            for cs in statuses {
                let Some(t) = cs.state.as_ref().and_then(|s| s.terminated.as_ref()) else {
                    continue;
                };
                if t.exit_code == 0 {
                    continue;
                }
                if req.container_name.as_ref().is_some_and(|n| *n != cs.name) {
                    continue;
                }
                let listed = req.values.contains(&t.exit_code);
                let hit = match req.operator.as_str() {
                    "In" => listed,
                    "NotIn" => !listed,
                    _ => false,
                };
                if hit {
                    return verdict(&rule.action, || {
                        format!(
                            "Container {} for pod {ns}/{name} failed with exit code {} matching {} rule at index {index}",
                            cs.name, t.exit_code, rule.action
                        )
                    });
                }
            }
        }
        for pattern in rule.on_pod_conditions.iter().flatten() {
            let want = pattern.status.as_deref().unwrap_or("True");
            let hit = status
                .conditions
                .iter()
                .flatten()
                .find(|c| c.type_ == pattern.type_ && c.status == want);
            if let Some(c) = hit {
                return verdict(&rule.action, || {
                    format!(
                        "Pod {ns}/{name} has condition {} matching {} rule at index {index}",
                        c.type_, rule.action
                    )
                });
            }
        }
    }
    PolicyVerdict::Count
}

/// A condition as `newCondition` builds it (probe and transition time now).
pub fn condition(
    type_: &str,
    status: &str,
    reason: &str,
    message: &str,
    now: Time,
) -> JobCondition {
    JobCondition {
        type_: type_.into(),
        status: status.into(),
        reason: Some(reason.into()),
        message: Some(message.into()),
        last_probe_time: Some(k8s_time(now)),
        last_transition_time: Some(k8s_time(now)),
    }
}

/// The condition of `type_` if it is True.
pub fn true_condition<'a>(conds: &'a [JobCondition], type_: &str) -> Option<&'a JobCondition> {
    conds
        .iter()
        .find(|c| c.type_ == type_ && c.status == "True")
}

/// Whether the job has finished (Complete or Failed True), as `IsJobFinished`.
pub fn is_finished(job: &Job) -> bool {
    let conds = job
        .status
        .as_ref()
        .and_then(|s| s.conditions.as_deref())
        .unwrap_or(&[]);
    true_condition(conds, "Complete").is_some() || true_condition(conds, "Failed").is_some()
}

/// Sets a condition (`ensureJobConditionStatus`): a new type is appended; an existing
/// one moves (and gets new times) only if its status changes.
pub fn ensure_condition(
    conds: &mut Vec<JobCondition>,
    type_: &str,
    status: &str,
    reason: &str,
    message: &str,
    now: Time,
) {
    match conds.iter_mut().find(|c| c.type_ == type_) {
        Some(c) if c.status == status => {}
        Some(c) => *c = condition(type_, status, reason, message, now),
        None => conds.push(condition(type_, status, reason, message, now)),
    }
}
