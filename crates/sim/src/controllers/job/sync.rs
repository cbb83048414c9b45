//! One sync of a Job (`syncJob`): count the pods that finished (through
//! `uncountedTerminatedPods` and the tracking finalizer), decide success or failure,
//! keep the right number of pods active (`manageJob`), and write the status.

use super::*;

/// The finishing condition a job carries or reached in this sync.
#[derive(Clone, Debug)]
struct Finish {
    /// `FailureTarget` or `SuccessCriteriaMet`.
    interim: &'static str,
    reason: String,
    message: String,
}

impl Finish {
    fn failure(reason: &str, message: &str) -> Finish {
        Finish {
            interim: "FailureTarget",
            reason: reason.into(),
            message: message.into(),
        }
    }
    fn success() -> Finish {
        Finish::succeeded(COMPLETIONS_REACHED.0, COMPLETIONS_REACHED.1)
    }
    fn succeeded(reason: &str, message: &str) -> Finish {
        Finish {
            interim: "SuccessCriteriaMet",
            reason: reason.into(),
            message: message.into(),
        }
    }
    /// The terminal condition this one leads to.
    fn terminal(&self) -> &'static str {
        if self.interim == "FailureTarget" {
            "Failed"
        } else {
            "Complete"
        }
    }
}

/// The finished pods of one sync.
#[derive(Default)]
struct Counted<'a> {
    succ: BTreeSet<String>,
    fail: BTreeSet<String>,
    completed: BTreeSet<i32>,
    new_pods: bool,
    new_failures: u32,
    new_success: bool,
    fail_job: Option<String>,
    strip: Vec<&'a PodRef<'a>>,
}

/// The ranking of pods to delete first: unscheduled, then pending, then not ready,
/// then the newest (a short form of `controller.ActivePods`).
fn deletion_rank(p: &PodRef) -> (u8, u8, u8, std::cmp::Reverse<Time>) {
    let unscheduled = p
        .pod
        .spec
        .as_ref()
        .and_then(|s| s.node_name.as_deref())
        .unwrap_or("")
        .is_empty();
    let created = p
        .pod
        .metadata
        .creation_timestamp
        .as_ref()
        .map_or(0, from_k8s_time);
    (
        u8::from(!unscheduled),
        u8::from(phase(p.pod) != "Pending"),
        u8::from(is_pod_ready(p.pod)),
        std::cmp::Reverse(created),
    )
}

impl JobController {
    /// Sorts the finished pods into uncounted succeeded/failed, pods whose finalizer can
    /// go, and a pod failure policy's FailJob verdict.
    fn count_finished<'a>(
        &self,
        key: &str,
        job: &Job,
        pods: &[&'a PodRef<'a>],
        finishing: bool,
    ) -> Counted<'a> {
        let spec = spec_of(job);
        let status = job.status.clone().unwrap_or_default();
        let unc = status.uncounted_terminated_pods.clone().unwrap_or_default();
        let mut c = Counted {
            succ: unc.succeeded.iter().flatten().cloned().collect(),
            fail: unc.failed.iter().flatten().cloned().collect(),
            completed: parse_indexes(status.completed_indexes.as_deref().unwrap_or("")),
            ..Counted::default()
        };
        let in_flight = self
            .jobs
            .get(key)
            .map(|m| m.finalizers.clone())
            .unwrap_or_default();
        let suspended = spec.suspend == Some(true);
        let only_failed = spec.pod_replacement_policy.as_deref() == Some("Failed");
        for &p in pods {
            let uid = p.uid();
            if !has_tracking_finalizer(p.pod) || in_flight.contains(&uid) {
                continue;
            }
            if c.succ.contains(&uid) || c.fail.contains(&uid) {
                c.strip.push(p);
                continue;
            }
            let ph = phase(p.pod);
            if ph == "Succeeded" {
                let valid =
                    completion_index(p.pod).filter(|i| spec.completions.is_some_and(|n| *i < n));
                if is_indexed(job) {
                    match valid {
                        Some(i) => {
                            c.completed.insert(i);
                        }
                        None => {
                            c.strip.push(p);
                            continue;
                        }
                    }
                }
                c.succ.insert(uid);
                c.new_pods = true;
                c.new_success = true;
                continue;
            }
            let failed = ph == "Failed" || (p.terminating() && (finishing || !only_failed));
            if !failed {
                continue;
            }
            if suspended && ph != "Failed" {
                // Pods the suspension removed are not failures.
                c.strip.push(p);
                continue;
            }
            let verdict = spec
                .pod_failure_policy
                .as_ref()
                .filter(|_| ph == "Failed")
                .map_or(PolicyVerdict::Count, |pol| {
                    match_pod_failure_policy(pol, p.pod)
                });
            match verdict {
                PolicyVerdict::Ignore => {
                    c.strip.push(p);
                    continue;
                }
                PolicyVerdict::FailJob(msg) => {
                    c.fail_job.get_or_insert(msg);
                }
                PolicyVerdict::Count | PolicyVerdict::FailIndex => {}
            }
            c.fail.insert(uid);
            c.new_pods = true;
            c.new_failures += 1;
        }
        c
    }

    pub(super) fn sync_job(
        &mut self,
        key: &str,
        obj: &Arc<Object>,
        job: &Job,
        pods: &[&PodRef],
        env: &mut Env,
    ) -> SyncResult {
        let now = env.now();
        let spec = spec_of(job);
        let indexed = is_indexed(job);
        let suspended = spec.suspend == Some(true);
        let mut status = job.status.clone().unwrap_or_default();
        let mut conds = status.conditions.clone().unwrap_or_default();
        let mut finish = existing_finish(&conds);
        // Once the job is failing, every pod that has not finished counts as failed.
        let failing = finish
            .as_ref()
            .is_some_and(|f| f.interim == "FailureTarget");
        let mut counted = self.count_finished(key, job, pods, failing);
        self.record_backoff(key, &counted, now);
        let still_tracked: BTreeSet<String> = pods
            .iter()
            .filter(|p| has_tracking_finalizer(p.pod))
            .map(|p| p.uid())
            .collect();
        if !counted.new_pods {
            move_released(&mut status, &mut counted, &still_tracked);
        }
        let total_succeeded = if indexed {
            counted.completed.len() as i32
        } else {
            status.succeeded.unwrap_or(0) + counted.succ.len() as i32
        };
        let active: Vec<&PodRef> = pods.iter().copied().filter(|p| p.active()).collect();
        if !suspended {
            resume(&mut conds, &mut status, obj, env);
        }
        let mut requeue = None;
        if finish.is_none() {
            let (f, deadline_in) = failure(job, &status, &mut counted, &active, now);
            requeue = deadline_in;
            if let Some(f) = &f {
                ensure_condition(&mut conds, f.interim, "True", &f.reason, &f.message, now);
            }
            finish = f;
        }
        let failed_ix = per_index::per_index(job).then(|| per_index::failed_indexes(job, pods));
        if finish.is_none() {
            finish = indexes_finish(&spec, failed_ix.as_ref(), &counted.completed);
            if let Some(f) = &finish {
                ensure_condition(&mut conds, f.interim, "True", &f.reason, &f.message, now);
            }
        }
        let dels = self
            .jobs
            .get(key)
            .map(|m| m.dels.clone())
            .unwrap_or_default();
        let deletable: Vec<&PodRef> = active
            .iter()
            .copied()
            .filter(|p| !dels.contains(&key_of(p.obj)))
            .collect();
        let mut active_after = active.len() as i32;
        if finish.is_some() || suspended {
            active_after -= deletable.len() as i32;
            self.delete_pods(key, &deletable, env);
            if suspended && finish.is_none() {
                suspend(&mut conds, obj, env);
            }
        } else if self.satisfied(key, now) {
            let (after, wait) = self.manage(
                key,
                obj,
                job,
                Pods {
                    all: pods,
                    active: &active,
                    deletable: &deletable,
                },
                &counted.completed,
                failed_ix.as_ref(),
                total_succeeded,
                env,
            );
            active_after = after;
            requeue = match (requeue, wait) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
            let complete = if indexed || spec.completions.is_some() {
                spec.completions
                    .is_some_and(|n| total_succeeded >= n && active_after == 0)
            } else {
                total_succeeded > 0 && active_after == 0
            };
            if complete {
                let f = Finish::success();
                ensure_condition(&mut conds, f.interim, "True", &f.reason, &f.message, now);
                finish = Some(f);
            }
        }
        // The pods whose counting is recorded let go of their finalizer.
        if !counted.new_pods {
            let strip = std::mem::take(&mut counted.strip);
            self.remove_finalizers(key, &strip, env);
        }
        let terminating = pods.iter().filter(|p| p.terminating()).count() as i32;
        let all_let_go =
            still_tracked.is_empty() && counted.succ.is_empty() && counted.fail.is_empty();
        if let Some(f) = finish.filter(|_| all_let_go && terminating == 0 && active_after == 0) {
            finished(
                &f,
                &mut conds,
                &mut status,
                &spec,
                total_succeeded,
                obj,
                env,
            );
        }
        status.active = (active_after > 0).then_some(active_after);
        status.ready = Some(active.iter().filter(|p| is_pod_ready(p.pod)).count() as i32);
        status.terminating = Some(terminating);
        if indexed {
            status.succeeded = Some(total_succeeded);
            let s = format_indexes(&counted.completed);
            status.completed_indexes = (!s.is_empty()).then_some(s);
            status.failed_indexes = failed_ix.as_ref().map(format_indexes);
        }
        status.succeeded = status.succeeded.filter(|n| *n > 0);
        status.failed = status.failed.filter(|n| *n > 0);
        status.uncounted_terminated_pods = Some(UncountedTerminatedPods {
            succeeded: (!counted.succ.is_empty()).then(|| counted.succ.iter().cloned().collect()),
            failed: (!counted.fail.is_empty()).then(|| counted.fail.iter().cloned().collect()),
        });
        status.conditions = (!conds.is_empty()).then_some(conds);
        self.write_status(key, obj, job, status, env);
        Ok(requeue.map_or(Action::await_change(), Action::requeue))
    }

    /// The back-off record: a success resets it, failures add to it.
    fn record_backoff(&mut self, key: &str, counted: &Counted, now: Time) {
        let mem = self.jobs.entry(key.to_string()).or_default();
        if counted.new_success {
            mem.failures_after_success = 0;
        }
        if counted.new_failures > 0 {
            mem.failures_after_success += counted.new_failures;
            mem.last_failure = now;
        }
    }

    /// `manageJob`: deletes extra active pods or creates missing ones (after the pod
    /// failure back-off, per index with `backoffLimitPerIndex`). The active count
    /// afterwards, and when to look again.
    #[allow(clippy::too_many_arguments)]
    fn manage(
        &mut self,
        key: &str,
        obj: &Arc<Object>,
        job: &Job,
        pods: Pods,
        completed: &BTreeSet<i32>,
        failed: Option<&BTreeSet<i32>>,
        succeeded: i32,
        env: &mut Env,
    ) -> (i32, Option<Time>) {
        let now = env.now();
        let spec = spec_of(job);
        let indexed = is_indexed(job);
        let (active, deletable) = (pods.active, pods.deletable);
        let have = active.len() as i32;
        let want = want_active(&spec, indexed, succeeded, have);
        if have > want {
            let mut ranked = deletable.to_vec();
            ranked.sort_by_key(|p| deletion_rank(p));
            ranked.truncate((have - want) as usize);
            self.delete_pods(key, &ranked, env);
            return (have - ranked.len() as i32, None);
        }
        if have == want {
            return (have, None);
        }
        let n = ((want - have) as usize).min(MAX_PER_SYNC);
        if let Some(failed) = failed {
            // Each index waits for its own back-off.
            let mut wait: Option<Time> = None;
            let mut ix: Vec<Option<i32>> = Vec::new();
            for i in free_indexes(&spec, completed, failed, active, usize::MAX) {
                if ix.len() >= n {
                    break;
                }
                match per_index::remaining_backoff(job, pods.all, i, now) {
                    0 => ix.push(Some(i)),
                    r => wait = Some(wait.map_or(r, |w| w.min(r))),
                }
            }
            self.create_pods(key, obj, job, &ix, pods.all, env);
            return (have + ix.len() as i32, wait);
        }
        let mem = self.jobs.entry(key.to_string()).or_default();
        let ready_at = mem
            .last_failure
            .saturating_add(failure_backoff(mem.failures_after_success));
        if mem.failures_after_success > 0 && ready_at > now {
            return (have, Some(ready_at - now));
        }
        let ix: Vec<Option<i32>> = if indexed {
            free_indexes(&spec, completed, &BTreeSet::new(), active, n)
                .into_iter()
                .map(Some)
                .collect()
        } else {
            vec![None; n]
        };
        self.create_pods(key, obj, job, &ix, pods.all, env);
        (have + ix.len() as i32, None)
    }
}

/// The interim condition a job already carries, if any.
fn existing_finish(conds: &[k8s_openapi::api::batch::v1::JobCondition]) -> Option<Finish> {
    ["FailureTarget", "SuccessCriteriaMet"]
        .iter()
        .find_map(|t| true_condition(conds, t))
        .map(|c| Finish {
            interim: if c.type_ == "FailureTarget" {
                "FailureTarget"
            } else {
                "SuccessCriteriaMet"
            },
            reason: c.reason.clone().unwrap_or_default(),
            message: c.message.clone().unwrap_or_default(),
        })
}

/// Uncounted pods whose finalizer is gone move to the counters.
fn move_released(status: &mut JobStatus, counted: &mut Counted, still_tracked: &BTreeSet<String>) {
    let take = |set: &mut BTreeSet<String>| {
        let moved: Vec<String> = set
            .iter()
            .filter(|u| !still_tracked.contains(*u))
            .cloned()
            .collect();
        for u in &moved {
            set.remove(u);
        }
        moved.len() as i32
    };
    status.succeeded = Some(status.succeeded.unwrap_or(0) + take(&mut counted.succ));
    status.failed = Some(status.failed.unwrap_or(0) + take(&mut counted.fail));
}

/// A resumed job's Suspended condition turns False and its start time restarts; an
/// unsuspended job has a start time.
fn resume(
    conds: &mut [k8s_openapi::api::batch::v1::JobCondition],
    status: &mut JobStatus,
    obj: &Object,
    env: &mut Env,
) {
    let now = env.now();
    if let Some(c) = conds
        .iter_mut()
        .find(|c| c.type_ == "Suspended" && c.status == "True")
    {
        *c = condition("Suspended", "False", "JobResumed", "Job resumed", now);
        env.event(obj, NORMAL, "Resumed", "Job resumed");
        status.start_time = Some(k8s_time(now));
    }
    status.start_time.get_or_insert_with(|| k8s_time(now));
}

/// The Suspended condition, and its event the first time.
fn suspend(
    conds: &mut Vec<k8s_openapi::api::batch::v1::JobCondition>,
    obj: &Object,
    env: &mut Env,
) {
    let was = true_condition(conds, "Suspended").is_some();
    ensure_condition(
        conds,
        "Suspended",
        "True",
        "JobSuspended",
        "Job suspended",
        env.now(),
    );
    if !was {
        env.event(obj, NORMAL, "Suspended", "Job suspended");
    }
}

/// Whether the job fails now (a FailJob rule, the backoff limit, the active deadline),
/// and otherwise how long until its deadline.
fn failure(
    job: &Job,
    status: &JobStatus,
    counted: &mut Counted,
    active: &[&PodRef],
    now: Time,
) -> (Option<Finish>, Option<Time>) {
    let spec = spec_of(job);
    let suspended = spec.suspend == Some(true);
    let total_failed = status.failed.unwrap_or(0) + counted.fail.len() as i32;
    let active_pods: Vec<&Pod> = active.iter().map(|p| p.pod).collect();
    let deadline = spec
        .active_deadline_seconds
        .zip(status.start_time.as_ref().map(from_k8s_time))
        .filter(|_| !suspended)
        .map(|(s, t0)| t0.saturating_add(s.max(0) as Time * 1000));
    if let Some(msg) = counted.fail_job.take() {
        (Some(Finish::failure("PodFailurePolicy", &msg)), None)
    } else if total_failed > spec.backoff_limit.unwrap_or(6)
        || past_backoff_limit_on_failure(job, &active_pods)
    {
        (
            Some(Finish::failure(BACKOFF_LIMIT.0, BACKOFF_LIMIT.1)),
            None,
        )
    } else if deadline.is_some_and(|d| now >= d) {
        (Some(Finish::failure(DEADLINE.0, DEADLINE.1)), None)
    } else {
        (None, deadline.map(|d| d - now))
    }
}

/// Every pod let go: the terminal condition, the completion time and the event.
fn finished(
    f: &Finish,
    conds: &mut Vec<k8s_openapi::api::batch::v1::JobCondition>,
    status: &mut JobStatus,
    spec: &k8s_openapi::api::batch::v1::JobSpec,
    succeeded: i32,
    obj: &Object,
    env: &mut Env,
) {
    let now = env.now();
    let terminal = f.terminal();
    ensure_condition(conds, terminal, "True", &f.reason, &f.message, now);
    if terminal != "Complete" {
        env.event(obj, WARNING, &f.reason, &f.message);
        return;
    }
    status.completion_time = Some(k8s_time(now));
    if spec.completions.is_some_and(|n| succeeded > n) {
        env.event(
            obj,
            WARNING,
            "TooManySucceededPods",
            "Too many succeeded pods running after completion count reached",
        );
    }
    env.event(obj, NORMAL, "Completed", "Job completed");
}

/// How many pods should be running (`manageJob`'s wantActive).
fn want_active(
    spec: &k8s_openapi::api::batch::v1::JobSpec,
    indexed: bool,
    succeeded: i32,
    active: i32,
) -> i32 {
    let parallelism = spec.parallelism.unwrap_or(1).max(0);
    match spec.completions {
        None if !indexed => {
            if succeeded > 0 {
                active
            } else {
                parallelism
            }
        }
        None => 0,
        Some(n) => (n - succeeded).clamp(0, parallelism),
    }
}

/// The lowest indexes neither completed, failed nor held by an active pod
/// (`firstPendingIndexes`).
fn free_indexes(
    spec: &k8s_openapi::api::batch::v1::JobSpec,
    completed: &BTreeSet<i32>,
    failed: &BTreeSet<i32>,
    active: &[&PodRef],
    n: usize,
) -> Vec<i32> {
    let held: BTreeSet<i32> = active
        .iter()
        .filter_map(|p| completion_index(p.pod))
        .collect();
    (0..spec.completions.unwrap_or(0))
        .filter(|i| !completed.contains(i) && !held.contains(i) && !failed.contains(i))
        .take(n)
        .collect()
}

/// An Indexed job's finish from its indexes: too many failed indexes, every index
/// succeeded or failed with some failed (`backoffLimitPerIndex`), or a success policy
/// rule met.
fn indexes_finish(
    spec: &k8s_openapi::api::batch::v1::JobSpec,
    failed: Option<&BTreeSet<i32>>,
    succeeded: &BTreeSet<i32>,
) -> Option<Finish> {
    if spec.completion_mode.as_deref() != Some("Indexed") {
        return None;
    }
    let completions = spec.completions.unwrap_or(0);
    if let Some(failed) = failed {
        let n = failed.len() as i64;
        if spec.max_failed_indexes.is_some_and(|m| n > i64::from(m)) {
            return Some(Finish::failure(MAX_FAILED_INDEXES.0, MAX_FAILED_INDEXES.1));
        }
        if n > 0 && n + succeeded.len() as i64 >= i64::from(completions) {
            return Some(Finish::failure(FAILED_INDEXES.0, FAILED_INDEXES.1));
        }
    }
    match_success_policy(spec.success_policy.as_ref(), completions, succeeded)
        .map(|msg| Finish::succeeded(SUCCESS_POLICY, &msg))
}

/// A job's pods as `manageJob` sees them.
pub(super) struct Pods<'a, 'b> {
    all: &'b [&'a PodRef<'a>],
    active: &'b [&'a PodRef<'a>],
    deletable: &'b [&'a PodRef<'a>],
}
