//! The TTL-after-finished controller (`pkg/controller/ttlafterfinished`): deletes a
//! finished Job (and, through foreground deletion, its pods) `ttlSecondsAfterFinished`
//! after it finished.

use std::collections::BTreeSet;

use k8s_openapi::api::batch::v1::Job;

use crate::api::{ApiRequest, ApiResponse, Propagation, ReqId, Verb};
use crate::client::{Change, Pending, WorkQueue};
use crate::controllers::job_util::true_condition;
use crate::controllers::util::{key_of, split_key};
use crate::controllers::{Action, Controller, Env, Informers, SyncResult};
use crate::object::{Kind, Object};
use crate::time::{from_k8s_time, Time};

/// The TTL-after-finished controller.
#[derive(Default)]
pub struct TtlAfterFinishedController {
    /// Jobs whose delete is in flight.
    deleting: BTreeSet<String>,
    sent: Pending<String>,
}

/// When the job finished: its Complete or Failed condition's transition time
/// (`getFinishAndExpireTime`), if it has finished.
pub fn finish_time(job: &Job) -> Option<Time> {
    let conds = job.status.as_ref()?.conditions.as_deref()?;
    let c = true_condition(conds, "Complete").or_else(|| true_condition(conds, "Failed"))?;
    Some(c.last_transition_time.as_ref().map_or(0, from_k8s_time))
}

/// When a finished job with a TTL expires.
pub fn expire_time(job: &Job) -> Option<Time> {
    let ttl = job.spec.as_ref()?.ttl_seconds_after_finished?;
    if job.metadata.deletion_timestamp.is_some() {
        return None;
    }
    Some(finish_time(job)?.saturating_add(ttl.max(0) as Time * 1000))
}

impl Controller for TtlAfterFinishedController {
    fn name(&self) -> &'static str {
        "ttl-after-finished-controller"
    }

    fn watches(&self) -> &'static [Kind] {
        &[Kind::Job]
    }

    fn on_change(
        &mut self,
        _kind: Kind,
        change: &Change,
        queue: &mut WorkQueue<String>,
        _inf: &Informers,
        _now: Time,
    ) {
        if let Object::Job(j) = &**change.object() {
            if expire_time(j).is_some() {
                queue.add(key_of(change.object()));
            }
        }
    }

    fn sync(&mut self, key: &str, env: &mut Env, inf: &Informers) -> SyncResult {
        let (ns, name) = split_key(key);
        let Some(obj) = inf.of(Kind::Job).get(ns, name) else {
            self.deleting.remove(key);
            return Ok(Action::await_change());
        };
        let Object::Job(job) = &**obj else {
            return Ok(Action::await_change());
        };
        let Some(at) = expire_time(job) else {
            return Ok(Action::await_change());
        };
        let now = env.now();
        if at > now {
            return Ok(Action::requeue(at - now));
        }
        if self.deleting.insert(key.to_string()) {
            let mut req = ApiRequest::new(Verb::Delete, Kind::Job, ns, name);
            req.options.propagation = Some(Propagation::Foreground);
            let id = env.send(req);
            self.sent.insert(id, key.to_string());
        }
        Ok(Action::await_change())
    }

    fn on_response(&mut self, id: ReqId, resp: &ApiResponse, env: &mut Env, _inf: &Informers) {
        if let Some(key) = self.sent.take(id) {
            self.deleting.remove(&key);
            if resp.result.as_ref().is_err_and(|s| !s.is_not_found()) {
                env.retry(key);
            }
        }
    }
}
