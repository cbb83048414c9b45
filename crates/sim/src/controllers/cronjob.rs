//! The CronJob controller (`pkg/controller/cronjob`, controllerv2): creates a Job
//! `<cronjob>-<scheduled minute>` at each scheduled time, as concurrencyPolicy,
//! startingDeadlineSeconds and suspend allow, keeps `status.active`,
//! `lastScheduleTime` and `lastSuccessfulTime`, and deletes finished Jobs beyond the
//! history limits.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use k8s_openapi::api::batch::v1::{CronJob, CronJobStatus, Job};
use k8s_openapi::api::core::v1::ObjectReference;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use crate::api::{ApiRequest, ApiResponse, ApiResult, Body, Propagation, ReqId, Subresource, Verb};
use crate::client::recorder::{NORMAL, WARNING};
use crate::client::{Change, Pending, WorkQueue};
use crate::controllers::cron::{self, Schedule, UnixMs};
use crate::controllers::job_util::{is_finished, true_condition};
use crate::controllers::util::{controller_ref, key_of, owner_ref, split_key};
use crate::controllers::{Action, Controller, Env, Informers, SyncResult};
use crate::object::{Kind, Object};
use crate::time::{from_k8s_time, k8s_time, Time};

/// The annotation carrying a Job's scheduled time.
pub const SCHEDULED_TIMESTAMP: &str = "batch.kubernetes.io/cronjob-scheduled-timestamp";
/// Added to the time until the next schedule (`nextScheduleDelta`).
const NEXT_SCHEDULE_DELTA: Time = 100;

#[derive(Debug)]
enum Sent {
    Create(String, Time),
    Delete(String, String),
    Status(String),
}

#[derive(Debug, Default)]
struct Memory {
    writing: Option<String>,
    /// Jobs created and not yet in the cached status: their reference and scheduled time.
    created: Vec<(ObjectReference, Time)>,
    /// Names of Jobs whose create or delete is in flight.
    in_flight: BTreeSet<String>,
}

/// The CronJob controller.
#[derive(Default)]
pub struct CronJobController {
    mem: BTreeMap<String, Memory>,
    sent: Pending<Sent>,
}

fn job_of(o: &Object) -> Option<&Job> {
    match o {
        Object::Job(j) => Some(j),
        _ => None,
    }
}

/// `getJobFromTemplate2`'s name: the scheduled time in minutes since the Unix epoch.
pub fn job_name(cj: &str, scheduled: Time) -> String {
    format!("{cj}-{}", cron::to_unix(scheduled).div_euclid(60_000))
}

/// RFC 3339 in a fixed zone (`Z` for UTC), as `time.Format(time.RFC3339)`.
fn rfc3339(t: Time, offset_s: i64) -> String {
    let local = cron::to_unix(t) / 1000 + offset_s;
    let ts = k8s_openapi::jiff::Timestamp::from_second(local).unwrap_or_default();
    let base = ts.strftime("%Y-%m-%dT%H:%M:%S").to_string();
    if offset_s == 0 {
        return format!("{base}Z");
    }
    let sign = if offset_s < 0 { '-' } else { '+' };
    let a = offset_s.abs();
    format!("{base}{sign}{:02}:{:02}", a / 3600, (a % 3600) / 60)
}

/// The Job a CronJob creates for `scheduled` (`getJobFromTemplate2`).
pub fn job_from_template(obj: &Object, cj: &CronJob, scheduled: Time, offset_s: i64) -> Job {
    let spec = cj.spec.clone().unwrap_or_default();
    let tm = spec.job_template.metadata.clone().unwrap_or_default();
    let mut annotations = tm.annotations.clone().unwrap_or_default();
    annotations.insert(SCHEDULED_TIMESTAMP.into(), rfc3339(scheduled, offset_s));
    Job {
        metadata: ObjectMeta {
            name: Some(job_name(obj.name(), scheduled)),
            namespace: Some(obj.namespace().to_string()),
            labels: tm.labels.clone(),
            annotations: Some(annotations),
            owner_references: Some(vec![owner_ref(obj)]),
            ..ObjectMeta::default()
        },
        spec: spec.job_template.spec.clone(),
        status: None,
    }
}

/// `mostRecentScheduleTime`: the latest activation in (earliest, now], and how many
/// were missed (upstream's approximation).
fn most_recent(
    earliest: UnixMs,
    now: UnixMs,
    s: &Schedule,
) -> Result<(Option<UnixMs>, i64), String> {
    let Some(t1) = s.next(earliest) else {
        return Ok((None, 0));
    };
    if now < t1 {
        return Ok((None, 0));
    }
    let Some(t2) = s.next(t1) else {
        return Ok((Some(t1), 1));
    };
    if now < t2 {
        return Ok((Some(t1), 1));
    }
    let between = (t2 - t1 + 500) / 1000;
    if between < 1 {
        return Err("time difference between two schedules is less than 1 second".into());
    }
    let missed = (now - t1) / 1000 / between + 1;
    let mut t = s.next(t1 + (missed - 2) * between * 1000);
    let mut recent = None;
    while let Some(x) = t.filter(|x| *x <= now) {
        recent = Some(x);
        t = s.next(x);
    }
    Ok((recent, missed))
}

impl CronJobController {
    fn delete_job(&mut self, key: &str, job: &Arc<Object>, env: &mut Env) {
        let mem = self.mem.entry(key.to_string()).or_default();
        if !mem.in_flight.insert(job.name().to_string()) {
            return;
        }
        let mut req = ApiRequest::new(Verb::Delete, Kind::Job, job.namespace(), job.name());
        req.options.propagation = Some(Propagation::Background);
        let id = env.send(req);
        self.sent
            .insert(id, Sent::Delete(key.to_string(), job.name().to_string()));
    }

    /// `cleanupFinishedJobs`: finished Jobs beyond the history limits go, oldest first.
    fn cleanup(&mut self, key: &str, cj: &CronJob, jobs: &[&Arc<Object>], env: &mut Env) {
        let spec = cj.spec.clone().unwrap_or_default();
        for (limit, want) in [
            (spec.successful_jobs_history_limit, "Complete"),
            (spec.failed_jobs_history_limit, "Failed"),
        ] {
            let Some(limit) = limit else { continue };
            let mut done: Vec<&Arc<Object>> = jobs
                .iter()
                .copied()
                .filter(|o| {
                    job_of(o).is_some_and(|j| {
                        let conds = j.status.as_ref().and_then(|s| s.conditions.as_deref());
                        true_condition(conds.unwrap_or(&[]), want).is_some()
                    })
                })
                .collect();
            let n = done.len() as i64 - i64::from(limit.max(0));
            if n <= 0 {
                continue;
            }
            done.sort_by_key(|o| {
                let st = job_of(o)
                    .and_then(|j| j.status.as_ref())
                    .and_then(|s| s.start_time.clone());
                (
                    st.is_none(),
                    st.as_ref().map_or(0, from_k8s_time),
                    o.name().to_string(),
                )
            });
            for o in done.into_iter().take(n as usize) {
                self.delete_job(key, o, env);
            }
        }
    }

    /// Brings `status.active` and `lastSuccessfulTime` up to date with the owned Jobs.
    fn reconcile_active(
        &mut self,
        key: &str,
        obj: &Object,
        status: &mut CronJobStatus,
        jobs: &[&Arc<Object>],
        env: &mut Env,
    ) {
        let mem = self.mem.entry(key.to_string()).or_default();
        let cached: BTreeSet<String> = status
            .active
            .iter()
            .flatten()
            .filter_map(|r| r.uid.clone())
            .collect();
        mem.created
            .retain(|(r, _)| !cached.contains(r.uid.as_deref().unwrap_or("")));
        let mut active = status.active.clone().unwrap_or_default();
        for (r, t) in &mem.created {
            active.push(r.clone());
            let last = status.last_schedule_time.as_ref().map(from_k8s_time);
            if last.is_none_or(|l| l < *t) {
                status.last_schedule_time = Some(k8s_time(*t));
            }
        }
        let by_uid: BTreeMap<String, &Arc<Object>> = jobs
            .iter()
            .filter_map(|o| o.meta().uid.clone().map(|u| (u, *o)))
            .collect();
        let mut events = Vec::new();
        active.retain(|r| {
            let uid = r.uid.clone().unwrap_or_default();
            let name = r.name.clone().unwrap_or_default();
            match by_uid.get(&uid).and_then(|o| job_of(o)) {
                None => {
                    events.push((
                        NORMAL,
                        "MissingJob",
                        format!("Active job went missing: {name}"),
                    ));
                    false
                }
                Some(j) if is_finished(j) => {
                    let conds = j
                        .status
                        .as_ref()
                        .and_then(|s| s.conditions.as_deref())
                        .unwrap_or(&[]);
                    let c = if true_condition(conds, "Complete").is_some() {
                        "Complete"
                    } else {
                        "Failed"
                    };
                    events.push((
                        NORMAL,
                        "SawCompletedJob",
                        format!("Saw completed job: {name}, condition: {c}"),
                    ));
                    false
                }
                Some(_) => true,
            }
        });
        let listed: BTreeSet<String> = active.iter().filter_map(|r| r.uid.clone()).collect();
        for o in jobs {
            let Some(j) = job_of(o) else { continue };
            let uid = o.meta().uid.clone().unwrap_or_default();
            if !listed.contains(&uid)
                && !is_finished(j)
                && !mem.in_flight.contains(o.name())
                && !cached.contains(&uid)
            {
                events.push((
                    WARNING,
                    "UnexpectedJob",
                    format!(
                        "Saw a job that the controller did not create or forgot: {}",
                        o.name()
                    ),
                ));
            }
            let complete = j
                .status
                .as_ref()
                .and_then(|s| s.conditions.as_deref())
                .is_some_and(|c| true_condition(c, "Complete").is_some());
            if let Some(ct) = j
                .status
                .as_ref()
                .and_then(|s| s.completion_time.clone())
                .filter(|_| complete)
            {
                let last = status.last_successful_time.as_ref().map(from_k8s_time);
                if last.is_none_or(|l| l < from_k8s_time(&ct)) {
                    status.last_successful_time = Some(ct);
                }
            }
        }
        status.active = (!active.is_empty()).then_some(active);
        for (t, reason, msg) in events {
            env.event(obj, t, reason, &msg);
        }
    }

    fn write_status(
        &mut self,
        key: &str,
        obj: &Object,
        cj: &CronJob,
        status: CronJobStatus,
        env: &mut Env,
    ) {
        if cj.status.clone().unwrap_or_default() == status {
            return;
        }
        let mut updated = cj.clone();
        updated.status = Some(status);
        let (ns, name) = split_key(key);
        let id = env.send(
            ApiRequest::new(Verb::Update, Kind::CronJob, ns, name)
                .with_subresource(Subresource::Status)
                .with_body(Body::Object(updated.into())),
        );
        self.sent.insert(id, Sent::Status(key.to_string()));
        self.mem.entry(key.to_string()).or_default().writing = obj.meta().resource_version.clone();
    }
}

impl Controller for CronJobController {
    fn name(&self) -> &'static str {
        "cronjob-controller"
    }

    fn watches(&self) -> &'static [Kind] {
        &[Kind::CronJob, Kind::Job]
    }

    fn on_change(
        &mut self,
        kind: Kind,
        change: &Change,
        queue: &mut WorkQueue<String>,
        inf: &Informers,
        _now: Time,
    ) {
        let o = change.object();
        match kind {
            Kind::CronJob => queue.add(key_of(o)),
            Kind::Job => {
                if let Some(r) = controller_ref(o).filter(|r| r.kind == "CronJob") {
                    if let Some(cj) = inf.of(Kind::CronJob).get(o.namespace(), &r.name) {
                        if cj.meta().uid.as_deref() == Some(r.uid.as_str()) {
                            queue.add(key_of(cj));
                        }
                    }
                }
            }
            _ => {}
        }
    }

    fn sync(&mut self, key: &str, env: &mut Env, inf: &Informers) -> SyncResult {
        let (ns, name) = split_key(key);
        let Some(obj) = inf.of(Kind::CronJob).get(ns, name).cloned() else {
            self.mem.remove(key);
            return Ok(Action::await_change());
        };
        let Object::CronJob(cj) = &*obj else {
            return Ok(Action::await_change());
        };
        if let Some(m) = self.mem.get_mut(key) {
            if m.writing.is_some() && m.writing == obj.meta().resource_version {
                return Ok(Action::await_change());
            }
            m.writing = None;
        }
        let uid = obj.meta().uid.clone().unwrap_or_default();
        let jobs: Vec<&Arc<Object>> = inf
            .of(Kind::Job)
            .controlled_by(&uid)
            .filter(|j| j.namespace() == ns)
            .collect();
        let mut status = cj.status.clone().unwrap_or_default();
        self.reconcile_active(key, &obj, &mut status, &jobs, env);
        let result = self.schedule(key, &obj, cj, &mut status, env);
        self.cleanup(key, cj, &jobs, env);
        self.write_status(key, &obj, cj, status, env);
        result
    }

    fn on_response(&mut self, id: ReqId, resp: &ApiResponse, env: &mut Env, inf: &Informers) {
        let Some(sent) = self.sent.take(id) else {
            return;
        };
        let event = |env: &mut Env, key: &str, t: &str, reason: &str, msg: &str| {
            let (ns, name) = split_key(key);
            if let Some(o) = inf.of(Kind::CronJob).get(ns, name).cloned() {
                env.event(&o, t, reason, msg);
            }
        };
        match sent {
            Sent::Create(key, scheduled) => {
                let m = self.mem.entry(key.clone()).or_default();
                match &resp.result {
                    Ok(ApiResult::Object(o)) => {
                        m.in_flight.remove(o.name());
                        m.created.push((
                            ObjectReference {
                                api_version: Some("batch/v1".into()),
                                kind: Some("Job".into()),
                                name: Some(o.name().to_string()),
                                namespace: Some(o.namespace().to_string()),
                                resource_version: o.meta().resource_version.clone(),
                                uid: o.meta().uid.clone(),
                                field_path: None,
                            },
                            scheduled,
                        ));
                        event(
                            env,
                            &key,
                            NORMAL,
                            "SuccessfulCreate",
                            &format!("Created job {}", o.name()),
                        );
                        env.enqueue(key);
                    }
                    Ok(_) => {}
                    Err(s) => {
                        let (_, cj) = split_key(&key);
                        m.in_flight.remove(&job_name(cj, scheduled));
                        if !s.is_already_exists() {
                            event(
                                env,
                                &key,
                                WARNING,
                                "FailedCreate",
                                &format!("Error creating job: {}", s.message),
                            );
                            env.retry(key);
                        }
                    }
                }
            }
            Sent::Delete(key, job) => {
                if let Some(m) = self.mem.get_mut(&key) {
                    m.in_flight.remove(&job);
                }
                match &resp.result {
                    Ok(_) => event(
                        env,
                        &key,
                        NORMAL,
                        "SuccessfulDelete",
                        &format!("Deleted job {job}"),
                    ),
                    Err(s) if !s.is_not_found() => {
                        event(
                            env,
                            &key,
                            WARNING,
                            "FailedDelete",
                            &format!("Deleted job: {}", s.message),
                        );
                    }
                    Err(_) => {}
                }
            }
            Sent::Status(key) => {
                if resp.result.is_err() {
                    if let Some(m) = self.mem.get_mut(&key) {
                        m.writing = None;
                    }
                    env.retry(key);
                }
            }
        }
    }
}

mod schedule;
