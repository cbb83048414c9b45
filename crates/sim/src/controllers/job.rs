//! The Job controller (`pkg/controller/job`): runs pods to completion (NonIndexed and
//! Indexed), tracks finished pods through the `batch.kubernetes.io/job-tracking`
//! finalizer and `uncountedTerminatedPods`, backs off after pod failures, applies the
//! backoff limit, the pod failure policy, the active deadline and suspension, and writes
//! the Job's status and conditions.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use k8s_openapi::api::batch::v1::{Job, JobStatus, UncountedTerminatedPods};
use k8s_openapi::api::core::v1::{EnvVar, EnvVarSource, ObjectFieldSelector, Pod};

use crate::api::{ApiRequest, ApiResponse, Body, PatchType, ReqId, Subresource, Verb};
use crate::client::recorder::{NORMAL, WARNING};
use crate::client::{Change, Pending, WorkQueue};
use crate::controllers::job_util::*;
use crate::controllers::util::{
    controller_key, controller_ref, is_pod_ready, key_of, pod_from_template, split_key,
};
use crate::controllers::{Action, Controller, Env, Informers, SyncResult};

mod per_index;
mod sync;
use crate::object::{Kind, Object};
use crate::time::{from_k8s_time, k8s_time, Time, MINUTE};

/// At most this many pods are created or deleted per sync (`MaxPodCreateDeletePerSync`).
const MAX_PER_SYNC: usize = 500;
/// Expectations older than this are considered satisfied (`ExpectationsTimeout`).
const EXPECTATIONS_TIMEOUT: Time = 5 * MINUTE;

/// The key prefix of a pod whose Job is gone.
const ORPHAN: &str = "orphan-pod:";

/// What a request in flight was for (each names its Job's key).
#[derive(Debug)]
enum Sent {
    Create(String),
    Delete(String, String),
    Status(String),
    Finalizer(String, String),
}

/// Per-Job memory: expectations and the pod-failure back-off record.
#[derive(Debug, Default)]
struct JobMemory {
    /// Pod creations sent and not yet seen.
    adds: i64,
    /// Pods (namespace/name) asked to be deleted and not yet seen terminating.
    dels: BTreeSet<String>,
    /// Pod uids whose finalizer removal is in flight.
    finalizers: BTreeSet<String>,
    set_at: Time,
    /// The resourceVersion a status write in flight was based on: until the cache moves
    /// past it, the cached status is stale.
    writing: Option<String>,
    /// Failures since the last success and when the last one was seen (`backoffRecord`).
    failures_after_success: u32,
    last_failure: Time,
}

/// The Job controller.
#[derive(Default)]
pub struct JobController {
    jobs: BTreeMap<String, JobMemory>,
    sent: Pending<Sent>,
}

/// A pod and its object (for events), as the sync sees them.
struct PodRef<'a> {
    obj: &'a Arc<Object>,
    pod: &'a Pod,
}

impl PodRef<'_> {
    fn uid(&self) -> String {
        self.pod.metadata.uid.clone().unwrap_or_default()
    }
    fn terminating(&self) -> bool {
        self.pod.metadata.deletion_timestamp.is_some()
            && !matches!(phase(self.pod), "Succeeded" | "Failed")
    }
    fn active(&self) -> bool {
        self.pod.metadata.deletion_timestamp.is_none()
            && !matches!(phase(self.pod), "Succeeded" | "Failed")
    }
}

fn spec_of(job: &Job) -> k8s_openapi::api::batch::v1::JobSpec {
    job.spec.clone().unwrap_or_default()
}

fn is_indexed(job: &Job) -> bool {
    spec_of(job).completion_mode.as_deref() == Some("Indexed")
}

impl JobController {
    fn satisfied(&self, key: &str, now: Time) -> bool {
        self.jobs.get(key).is_none_or(|m| {
            (m.adds <= 0 && m.dels.is_empty())
                || now.saturating_sub(m.set_at) > EXPECTATIONS_TIMEOUT
        })
    }

    /// Strips the tracking finalizer from `pods` (those not already being stripped).
    fn remove_finalizers(&mut self, key: &str, pods: &[&PodRef], env: &mut Env) {
        let mem = self.jobs.entry(key.to_string()).or_default();
        for p in pods {
            let uid = p.uid();
            if !has_tracking_finalizer(p.pod) || !mem.finalizers.insert(uid.clone()) {
                continue;
            }
            let kept: Vec<String> = p
                .pod
                .metadata
                .finalizers
                .iter()
                .flatten()
                .filter(|f| *f != TRACKING_FINALIZER)
                .cloned()
                .collect();
            let patch = serde_json::json!({"metadata": {"finalizers": if kept.is_empty() { serde_json::Value::Null } else { serde_json::json!(kept) }}});
            let id = env.send(
                ApiRequest::new(Verb::Patch, Kind::Pod, p.obj.namespace(), p.obj.name())
                    .with_body(Body::Patch(PatchType::Merge, patch)),
            );
            self.sent.insert(id, Sent::Finalizer(key.to_string(), uid));
        }
    }

    /// Removes the tracking finalizer of a pod whose Job no longer exists.
    fn release_orphan(&mut self, pod_key: &str, env: &mut Env, inf: &Informers) {
        let (ns, name) = split_key(pod_key);
        let Some(obj) = inf.of(Kind::Pod).get(ns, name) else {
            return;
        };
        let Object::Pod(pod) = &**obj else { return };
        if !has_tracking_finalizer(pod) || controller_key(obj, Kind::Job, inf).is_some() {
            return;
        }
        let key = format!("{ORPHAN}{pod_key}");
        let p = PodRef { obj, pod };
        self.remove_finalizers(&key, &[&p], env);
    }

    fn write_status(
        &mut self,
        key: &str,
        obj: &Object,
        job: &Job,
        status: JobStatus,
        env: &mut Env,
    ) {
        if job.status.as_ref() == Some(&status) {
            return;
        }
        let mut updated = job.clone();
        updated.status = Some(status);
        let (ns, name) = split_key(key);
        let id = env.send(
            ApiRequest::new(Verb::Update, Kind::Job, ns, name)
                .with_subresource(Subresource::Status)
                .with_body(Body::Object(updated.into())),
        );
        self.sent.insert(id, Sent::Status(key.to_string()));
        self.jobs.entry(key.to_string()).or_default().writing = obj.meta().resource_version.clone();
    }

    fn delete_pods(&mut self, key: &str, victims: &[&PodRef], env: &mut Env) {
        let now = env.now();
        let mem = self.jobs.entry(key.to_string()).or_default();
        mem.set_at = now;
        for v in victims.iter().take(MAX_PER_SYNC) {
            mem.dels.insert(key_of(v.obj));
            let id = env.send(ApiRequest::new(
                Verb::Delete,
                Kind::Pod,
                v.obj.namespace(),
                v.obj.name(),
            ));
            self.sent
                .insert(id, Sent::Delete(key.to_string(), v.obj.name().to_string()));
        }
    }

    fn create_pods(
        &mut self,
        key: &str,
        obj: &Arc<Object>,
        job: &Job,
        indexes: &[Option<i32>],
        pods: &[&PodRef],
        env: &mut Env,
    ) {
        let now = env.now();
        let mem = self.jobs.entry(key.to_string()).or_default();
        mem.set_at = now;
        mem.adds += indexes.len() as i64;
        for ix in indexes {
            let mut pod = pod_for(obj, job, *ix);
            if let Some(i) = ix.filter(|_| per_index::per_index(job)) {
                per_index::annotate(&mut pod, job, pods, i, now);
            }
            let id = env.send(
                ApiRequest::new(Verb::Create, Kind::Pod, obj.namespace(), "")
                    .with_body(Body::Object(pod.into())),
            );
            self.sent.insert(id, Sent::Create(key.to_string()));
        }
    }
}

/// A pod for the job (index `ix` for Indexed jobs), as `podControl` gets it from
/// `getPodTemplate`: the tracking finalizer, and for Indexed jobs the index annotation,
/// label, env variable, hostname and name `<job>-<index>-`.
pub fn pod_for(obj: &Object, job: &Job, ix: Option<i32>) -> Pod {
    let spec = spec_of(job);
    let prefix = match ix {
        Some(i) => format!("{}-{i}-", obj.name()),
        None => format!("{}-", obj.name()),
    };
    let mut pod = pod_from_template(&spec.template, obj, &prefix);
    pod.metadata
        .finalizers
        .get_or_insert_with(Vec::new)
        .push(TRACKING_FINALIZER.into());
    if let Some(i) = ix {
        let v = i.to_string();
        pod.metadata
            .annotations
            .get_or_insert_with(Default::default)
            .insert(COMPLETION_INDEX.into(), v.clone());
        pod.metadata
            .labels
            .get_or_insert_with(Default::default)
            .insert(COMPLETION_INDEX.into(), v);
        let ps = pod.spec.get_or_insert_with(Default::default);
        if ps.hostname.as_deref().unwrap_or("").is_empty() {
            ps.hostname = Some(format!("{}-{i}", obj.name()));
        }
        let env = EnvVar {
            name: COMPLETION_INDEX_ENV.into(),
            value: None,
            value_from: Some(EnvVarSource {
                field_ref: Some(ObjectFieldSelector {
                    api_version: None,
                    field_path: format!("metadata.annotations['{COMPLETION_INDEX}']"),
                }),
                ..Default::default()
            }),
        };
        for c in ps
            .containers
            .iter_mut()
            .chain(ps.init_containers.iter_mut().flatten())
        {
            let list = c.env.get_or_insert_with(Vec::new);
            if !list.iter().any(|e| e.name == COMPLETION_INDEX_ENV) {
                list.push(env.clone());
            }
        }
    }
    pod
}

impl Controller for JobController {
    fn name(&self) -> &'static str {
        "job-controller"
    }

    fn watches(&self) -> &'static [Kind] {
        &[Kind::Job, Kind::Pod]
    }

    fn on_change(
        &mut self,
        kind: Kind,
        change: &Change,
        queue: &mut WorkQueue<String>,
        inf: &Informers,
        _now: Time,
    ) {
        match kind {
            Kind::Job => queue.add(key_of(change.object())),
            Kind::Pod => {
                let pod = change.object();
                let Some(key) = controller_key(pod, Kind::Job, inf) else {
                    // A pod whose Job is gone lets go of its finalizer (`cleanupPodFinalizers`).
                    let orphan = matches!(&**pod, Object::Pod(p) if has_tracking_finalizer(p))
                        && controller_ref(pod).is_some_and(|r| r.kind == "Job")
                        && !matches!(change, Change::Deleted(_));
                    if orphan {
                        queue.add(format!("{ORPHAN}{}", key_of(pod)));
                    }
                    return;
                };
                if let Some(m) = self.jobs.get_mut(&key) {
                    match change {
                        Change::Added(_) => m.adds -= 1,
                        Change::Deleted(_) => {
                            m.dels.remove(&key_of(pod));
                            m.finalizers.remove(pod.meta().uid.as_deref().unwrap_or(""));
                        }
                        Change::Updated(_, new) => {
                            if new.meta().deletion_timestamp.is_some() {
                                m.dels.remove(&key_of(pod));
                            }
                            if let Object::Pod(p) = &**new {
                                if !has_tracking_finalizer(p) {
                                    m.finalizers.remove(p.metadata.uid.as_deref().unwrap_or(""));
                                }
                            }
                        }
                    }
                }
                queue.add(key);
            }
            _ => {}
        }
    }

    fn sync(&mut self, key: &str, env: &mut Env, inf: &Informers) -> SyncResult {
        if let Some(pod_key) = key.strip_prefix(ORPHAN) {
            self.release_orphan(pod_key, env, inf);
            return Ok(Action::await_change());
        }
        let (ns, name) = split_key(key);
        let Some(obj) = inf.of(Kind::Job).get(ns, name).cloned() else {
            self.jobs.remove(key);
            return Ok(Action::await_change());
        };
        let Object::Job(job) = &*obj else {
            return Ok(Action::await_change());
        };
        if let Some(m) = self.jobs.get_mut(key) {
            if m.writing.is_some() && m.writing == obj.meta().resource_version {
                return Ok(Action::await_change());
            }
            m.writing = None;
        }
        let uid = obj.meta().uid.clone().unwrap_or_default();
        let pods: Vec<PodRef> = inf
            .of(Kind::Pod)
            .controlled_by(&uid)
            .filter(|p| p.namespace() == ns)
            .filter_map(|o| match &**o {
                Object::Pod(pod) => Some(PodRef { obj: o, pod }),
                _ => None,
            })
            .collect();
        let refs: Vec<&PodRef> = pods.iter().collect();
        if is_finished(job) || obj.meta().deletion_timestamp.is_some() {
            // A finished job, or one being deleted, only lets go of its pods.
            self.remove_finalizers(key, &refs, env);
            return Ok(Action::await_change());
        }
        self.sync_job(key, &obj, job, &refs, env)
    }

    fn on_response(&mut self, id: ReqId, resp: &ApiResponse, env: &mut Env, inf: &Informers) {
        match self.sent.take(id) {
            Some(Sent::Create(key)) => {
                let Some(m) = self.jobs.get_mut(&key) else {
                    return;
                };
                match &resp.result {
                    Ok(crate::api::ApiResult::Object(o)) => {
                        job_event(
                            env,
                            inf,
                            &key,
                            NORMAL,
                            "SuccessfulCreate",
                            &format!("Created pod: {}", o.name()),
                        );
                    }
                    Ok(_) => {}
                    Err(s) => {
                        m.adds -= 1;
                        let msg = format!("Error creating: {}", s.message);
                        job_event(env, inf, &key, WARNING, "FailedCreate", &msg);
                        env.retry(key);
                    }
                }
            }
            Some(Sent::Delete(key, pod)) => {
                let Some(m) = self.jobs.get_mut(&key) else {
                    return;
                };
                match &resp.result {
                    Ok(_) => job_event(
                        env,
                        inf,
                        &key,
                        NORMAL,
                        "SuccessfulDelete",
                        &format!("Deleted pod: {pod}"),
                    ),
                    Err(s) => {
                        m.dels.remove(&format!("{}/{pod}", split_key(&key).0));
                        if !s.is_not_found() {
                            let msg = format!("Error deleting: {}", s.message);
                            job_event(env, inf, &key, WARNING, "FailedDelete", &msg);
                        }
                        env.retry(key);
                    }
                }
            }
            Some(Sent::Status(key)) => {
                if resp.result.is_err() {
                    if let Some(m) = self.jobs.get_mut(&key) {
                        m.writing = None;
                    }
                    env.retry(key);
                }
            }
            Some(Sent::Finalizer(key, uid)) => {
                if key.starts_with(ORPHAN) {
                    self.jobs.remove(&key);
                }
                if let Err(s) = &resp.result {
                    if let Some(m) = self.jobs.get_mut(&key) {
                        m.finalizers.remove(&uid);
                    }
                    if !s.is_not_found() {
                        env.retry(key);
                    }
                }
            }
            None => {}
        }
    }
}

/// Records an event about the Job `key`, if it is still cached.
fn job_event(env: &mut Env, inf: &Informers, key: &str, type_: &str, reason: &str, msg: &str) {
    let (ns, name) = split_key(key);
    if let Some(job) = inf.of(Kind::Job).get(ns, name).cloned() {
        env.event(&job, type_, reason, msg);
    }
}
