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
        Finish {
            interim: "SuccessCriteriaMet",
            reason: COMPLETIONS_REACHED.0.into(),
            message: COMPLETIONS_REACHED.1.into(),
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
        let mut finish = ["FailureTarget", "SuccessCriteriaMet"]
            .iter()
            .find_map(|t| true_condition(&conds, t))
            .map(|c| Finish {
                interim: if c.type_ == "FailureTarget" {
                    "FailureTarget"
                } else {
                    "SuccessCriteriaMet"
                },
                reason: c.reason.clone().unwrap_or_default(),
                message: c.message.clone().unwrap_or_default(),
            });
        let mut counted = self.count_finished(key, job, pods, finish.is_some());
        {
            let mem = self.jobs.entry(key.to_string()).or_default();
            if counted.new_success {
                mem.failures_after_success = 0;
            }
            if counted.new_failures > 0 {
                mem.failures_after_success += counted.new_failures;
                mem.last_failure = now;
            }
        }
        // Uncounted pods whose finalizer is gone move to the counters.
        let still_tracked: BTreeSet<String> = pods
            .iter()
            .filter(|p| has_tracking_finalizer(p.pod))
            .map(|p| p.uid())
            .collect();
        if !counted.new_pods {
            let moved_s: Vec<String> = counted
                .succ
                .iter()
                .filter(|u| !still_tracked.contains(*u))
                .cloned()
                .collect();
            let moved_f: Vec<String> = counted
                .fail
                .iter()
                .filter(|u| !still_tracked.contains(*u))
                .cloned()
                .collect();
            status.succeeded = Some(status.succeeded.unwrap_or(0) + moved_s.len() as i32);
            status.failed = Some(status.failed.unwrap_or(0) + moved_f.len() as i32);
            for u in moved_s {
                counted.succ.remove(&u);
            }
            for u in moved_f {
                counted.fail.remove(&u);
            }
        }
        let total_succeeded = if indexed {
            counted.completed.len() as i32
        } else {
            status.succeeded.unwrap_or(0) + counted.succ.len() as i32
        };
        let total_failed = status.failed.unwrap_or(0) + counted.fail.len() as i32;
        let active: Vec<&PodRef> = pods.iter().copied().filter(|p| p.active()).collect();
        let active_pods: Vec<&Pod> = active.iter().map(|p| p.pod).collect();
        let mut requeue: Option<Time> = None;
        if !suspended {
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
        let start = status.start_time.as_ref().map(from_k8s_time);
        if finish.is_none() {
            let deadline = spec
                .active_deadline_seconds
                .zip(start)
                .filter(|_| !suspended)
                .map(|(s, t0)| t0.saturating_add(s.max(0) as Time * 1000));
            if let Some(msg) = counted.fail_job.take() {
                finish = Some(Finish::failure("PodFailurePolicy", &msg));
            } else if total_failed > spec.backoff_limit.unwrap_or(6)
                || past_backoff_limit_on_failure(job, &active_pods)
            {
                finish = Some(Finish::failure(BACKOFF_LIMIT.0, BACKOFF_LIMIT.1));
            } else if deadline.is_some_and(|d| now >= d) {
                finish = Some(Finish::failure(DEADLINE.0, DEADLINE.1));
            } else if let Some(d) = deadline {
                requeue = Some(d - now);
            }
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
                let was = true_condition(&conds, "Suspended").is_some();
                ensure_condition(
                    &mut conds,
                    "Suspended",
                    "True",
                    "JobSuspended",
                    "Job suspended",
                    now,
                );
                if !was {
                    env.event(obj, NORMAL, "Suspended", "Job suspended");
                }
            }
        } else if self.satisfied(key, now) {
            let want = want_active(&spec, indexed, total_succeeded, active.len() as i32);
            let have = active.len() as i32;
            if have > want {
                let mut ranked = deletable.clone();
                ranked.sort_by_key(|p| deletion_rank(p));
                ranked.truncate((have - want) as usize);
                active_after -= ranked.len() as i32;
                self.delete_pods(key, &ranked, env);
            } else if have < want {
                let mem = self.jobs.entry(key.to_string()).or_default();
                let ready_at = mem
                    .last_failure
                    .saturating_add(failure_backoff(mem.failures_after_success));
                if mem.failures_after_success > 0 && ready_at > now {
                    requeue = Some(requeue.map_or(ready_at - now, |r: Time| r.min(ready_at - now)));
                } else {
                    let n = ((want - have) as usize).min(MAX_PER_SYNC);
                    let ix: Vec<Option<i32>> = if indexed {
                        free_indexes(&spec, &counted.completed, &active, n)
                            .into_iter()
                            .map(Some)
                            .collect()
                    } else {
                        vec![None; n]
                    };
                    active_after += ix.len() as i32;
                    self.create_pods(key, obj, job, &ix, env);
                }
            }
            let complete = match spec.completions {
                _ if indexed => spec
                    .completions
                    .is_some_and(|n| total_succeeded >= n && active_after == 0),
                None => total_succeeded > 0 && active_after == 0,
                Some(n) => total_succeeded >= n && active_after == 0,
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
        let ready = active.iter().filter(|p| is_pod_ready(p.pod)).count() as i32;
        if let Some(f) = &finish {
            let all_let_go =
                still_tracked.is_empty() && counted.succ.is_empty() && counted.fail.is_empty();
            if all_let_go && terminating == 0 && active_after == 0 {
                let terminal = f.terminal();
                ensure_condition(&mut conds, terminal, "True", &f.reason, &f.message, now);
                if terminal == "Complete" {
                    status.completion_time = Some(k8s_time(now));
                    if spec.completions.is_some_and(|n| total_succeeded > n) {
                        env.event(
                            obj,
                            WARNING,
                            "TooManySucceededPods",
                            "Too many succeeded pods running after completion count reached",
                        );
                    }
                    env.event(obj, NORMAL, "Completed", "Job completed");
                } else {
                    env.event(obj, WARNING, &f.reason, &f.message);
                }
            }
        }
        status.active = (active_after > 0).then_some(active_after);
        status.ready = Some(ready);
        status.terminating = Some(terminating);
        if indexed {
            status.succeeded = Some(total_succeeded);
            let s = format_indexes(&counted.completed);
            status.completed_indexes = (!s.is_empty()).then_some(s);
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

/// The lowest indexes neither completed nor held by an active pod (`firstPendingIndexes`).
fn free_indexes(
    spec: &k8s_openapi::api::batch::v1::JobSpec,
    completed: &BTreeSet<i32>,
    active: &[&PodRef],
    n: usize,
) -> Vec<i32> {
    let held: BTreeSet<i32> = active
        .iter()
        .filter_map(|p| completion_index(p.pod))
        .collect();
    (0..spec.completions.unwrap_or(0))
        .filter(|i| !completed.contains(i) && !held.contains(i))
        .take(n)
        .collect()
}
