//! The CRD finalizer (apiextensions-apiserver's `finalizer` controller): a CRD being
//! deleted first loses every object of its kind, then its
//! `customresourcecleanup.apiextensions.k8s.io` finalizer, and with it the CRD goes.

use crate::api::{ApiRequest, ApiResponse, ApiResult, Body, ReqId, Verb};
use crate::apiserver::crd::{storage_kind, CLEANUP_FINALIZER};
use crate::client::{Change, Pending, WorkQueue};
use crate::controllers::{Action, Controller, Env, Informers, SyncResult};
use crate::object::{Kind, Object};
use crate::time::{Time, SECOND};

/// What a request in flight was for.
enum Sent {
    /// Listing the CRD's objects.
    List(String),
    /// Deleting one object, or removing the finalizer.
    Write(String),
}

/// The CRD finalizer.
#[derive(Default)]
pub struct CrdCleanupController {
    sent: Pending<Sent>,
}

fn terminating(o: &Object) -> bool {
    let m = o.meta();
    m.deletion_timestamp.is_some()
        && m.finalizers
            .iter()
            .flatten()
            .any(|f| f == CLEANUP_FINALIZER)
}

impl Controller for CrdCleanupController {
    fn name(&self) -> &'static str {
        "crd-finalizer"
    }

    fn watches(&self) -> &'static [Kind] {
        &[Kind::CustomResourceDefinition]
    }

    fn on_change(
        &mut self,
        _kind: Kind,
        change: &Change,
        queue: &mut WorkQueue<String>,
        _inf: &Informers,
        _now: Time,
    ) {
        if terminating(change.object()) {
            queue.add(change.object().name().to_string());
        }
    }

    fn sync(&mut self, name: &str, env: &mut Env, inf: &Informers) -> SyncResult {
        let Some(obj) = inf.of(Kind::CustomResourceDefinition).get("", name) else {
            return Ok(Action::await_change());
        };
        let Object::CustomResourceDefinition(crd) = &**obj else {
            return Ok(Action::await_change());
        };
        if !terminating(obj) {
            return Ok(Action::await_change());
        }
        let Some(kind) = storage_kind(crd) else {
            return Ok(Action::await_change());
        };
        let id = env.send(ApiRequest::new(Verb::List, kind, "", ""));
        self.sent.insert(id, Sent::List(name.to_string()));
        Ok(Action::await_change())
    }

    fn on_response(&mut self, id: ReqId, resp: &ApiResponse, env: &mut Env, inf: &Informers) {
        match self.sent.take(id) {
            Some(Sent::List(name)) => match &resp.result {
                Ok(ApiResult::List { items, .. }) if items.is_empty() => {
                    let Some(obj) = inf.of(Kind::CustomResourceDefinition).get("", &name) else {
                        return;
                    };
                    let mut crd = (**obj).clone();
                    let m = crd.meta_mut();
                    let left: Vec<String> = m
                        .finalizers
                        .iter()
                        .flatten()
                        .filter(|f| *f != CLEANUP_FINALIZER)
                        .cloned()
                        .collect();
                    m.finalizers = Some(left).filter(|l| !l.is_empty());
                    let req =
                        ApiRequest::new(Verb::Update, Kind::CustomResourceDefinition, "", &name)
                            .with_body(Body::Object(crd));
                    let id = env.send(req);
                    self.sent.insert(id, Sent::Write(name));
                }
                Ok(ApiResult::List { items, .. }) => {
                    for o in items {
                        let req = ApiRequest::new(Verb::Delete, o.kind(), o.namespace(), o.name());
                        let id = env.send(req);
                        self.sent.insert(id, Sent::Write(name.clone()));
                    }
                    env.enqueue_after(name, SECOND);
                }
                _ => env.retry(name),
            },
            Some(Sent::Write(name)) if resp.result.as_ref().is_err_and(|s| !s.is_not_found()) => {
                env.retry(name)
            }
            Some(Sent::Write(_)) => {}
            None => {}
        }
    }
}
