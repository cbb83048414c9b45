//! `backoffLimitPerIndex` (upstream `indexed_job_utils.go`, `backoff_utils.go`): which
//! indexes have failed for good, the failure counts a replacement pod carries, and the
//! back-off before an index's next pod.

use super::*;

/// Whether the job counts failures per index.
pub(super) fn per_index(job: &Job) -> bool {
    is_indexed(job) && spec_of(job).backoff_limit_per_index.is_some()
}

/// `isPodFailed`: failed, or being deleted before succeeding (unless only failed pods
/// are replaced).
fn considered_failed(job: &Job, p: &Pod) -> bool {
    let ph = phase(p);
    if ph == "Failed" {
        return true;
    }
    let only_failed = spec_of(job).pod_replacement_policy.as_deref() == Some("Failed");
    !only_failed && p.metadata.deletion_timestamp.is_some() && ph != "Succeeded"
}

/// What the pod failure policy makes of a failed pod: (counts, fails its index).
fn policy_outcome(job: &Job, p: &Pod) -> (bool, bool) {
    match spec_of(job).pod_failure_policy.as_ref() {
        None => (true, false),
        Some(pol) => match match_pod_failure_policy(pol, p) {
            PolicyVerdict::FailIndex => (true, true),
            PolicyVerdict::Ignore => (false, false),
            PolicyVerdict::Count | PolicyVerdict::FailJob(_) => (true, false),
        },
    }
}

/// `isIndexFailed`: a FailIndex rule matched, or the pod's counted failure reaches the
/// per-index limit.
fn is_index_failed(job: &Job, p: &Pod) -> bool {
    if !considered_failed(job, p) {
        return false;
    }
    let (counts, fail_index) = policy_outcome(job, p);
    let limit = spec_of(job).backoff_limit_per_index.unwrap_or(0);
    fail_index || (counts && index_failure_count(p, INDEX_FAILURE_COUNT) >= limit)
}

/// `calculateFailedIndexes`: the indexes in `status.failedIndexes` and those whose
/// uncounted pod just failed for good.
pub(super) fn failed_indexes(job: &Job, pods: &[&PodRef]) -> BTreeSet<i32> {
    let completions = spec_of(job).completions.unwrap_or(0);
    let status = job.status.clone().unwrap_or_default();
    let mut out = parse_indexes_below(status.failed_indexes.as_deref().unwrap_or(""), completions);
    for p in pods {
        let Some(ix) = completion_index(p.pod).filter(|i| *i < completions) else {
            continue;
        };
        if has_tracking_finalizer(p.pod) && is_index_failed(job, p.pod) {
            out.insert(ix);
        }
    }
    out
}

/// When a pod stopped: its containers' last finish, else its deletion, else `now`
/// (`getFinishedTime`).
fn finished_at(p: &Pod, now: Time) -> Time {
    let status = p.status.clone().unwrap_or_default();
    status
        .container_statuses
        .iter()
        .flatten()
        .filter_map(|c| c.state.as_ref()?.terminated.as_ref()?.finished_at.as_ref())
        .map(from_k8s_time)
        .max()
        .or_else(|| p.metadata.deletion_timestamp.as_ref().map(from_k8s_time))
        .unwrap_or(now)
}

/// The index's most recent failed pod (highest absolute failure count, then the latest
/// finish), which its replacement takes its counts from.
fn last_failed<'a>(job: &Job, pods: &[&'a PodRef<'a>], ix: i32, now: Time) -> Option<&'a Pod> {
    pods.iter()
        .map(|p| p.pod)
        .filter(|p| completion_index(p) == Some(ix) && considered_failed(job, p))
        .max_by_key(|p| {
            let abs = index_failure_count(p, INDEX_FAILURE_COUNT)
                + index_failure_count(p, INDEX_IGNORED_FAILURE_COUNT);
            (abs, finished_at(p, now))
        })
}

/// `getNewIndexFailureCounts`: the counts a replacement of `replaced` carries.
fn new_counts(job: &Job, replaced: Option<&Pod>) -> (i32, i32) {
    let Some(p) = replaced else {
        return (0, 0);
    };
    let (failed, ignored) = (
        index_failure_count(p, INDEX_FAILURE_COUNT),
        index_failure_count(p, INDEX_IGNORED_FAILURE_COUNT),
    );
    if policy_outcome(job, p).0 {
        (failed.saturating_add(1), ignored)
    } else {
        (failed, ignored.saturating_add(1))
    }
}

/// Sets the index failure count annotations on a pod about to be created for `ix`.
pub(super) fn annotate(pod: &mut Pod, job: &Job, pods: &[&PodRef], ix: i32, now: Time) {
    let (failed, ignored) = new_counts(job, last_failed(job, pods, ix, now));
    let a = pod
        .metadata
        .annotations
        .get_or_insert_with(Default::default);
    a.insert(INDEX_FAILURE_COUNT.into(), failed.to_string());
    if ignored > 0 {
        a.insert(INDEX_IGNORED_FAILURE_COUNT.into(), ignored.to_string());
    }
}

/// `getRemainingTimePerIndex`: how long index `ix` still waits after its last failure.
pub(super) fn remaining_backoff(job: &Job, pods: &[&PodRef], ix: i32, now: Time) -> Time {
    let Some(p) = last_failed(job, pods, ix, now) else {
        return 0;
    };
    let failures = index_failure_count(p, INDEX_FAILURE_COUNT)
        + index_failure_count(p, INDEX_IGNORED_FAILURE_COUNT)
        + 1;
    let ready_at = finished_at(p, now).saturating_add(failure_backoff(failures.max(1) as u32));
    ready_at.saturating_sub(now)
}
