//! The service-account controller: every active namespace has a `default`
//! ServiceAccount, created when the namespace appears and again if it is deleted.

use std::collections::BTreeSet;

use serde_json::json;

use crate::api::{ApiRequest, ApiResponse, Body, ReqId, Verb};
use crate::client::{Change, WorkQueue};
use crate::controllers::{Action, Controller, Env, Informers, SyncResult};
use crate::object::{Kind, Object};
use crate::time::Time;

/// The ServiceAccount every namespace gets.
pub const DEFAULT: &str = "default";

/// The service-account controller.
#[derive(Default)]
pub struct ServiceAccountController {
    /// Namespaces whose create is in flight (so each is sent once).
    creating: BTreeSet<String>,
}

impl Controller for ServiceAccountController {
    fn name(&self) -> &'static str {
        "serviceaccount-controller"
    }

    fn watches(&self) -> &'static [Kind] {
        &[Kind::Namespace, Kind::ServiceAccount]
    }

    fn on_change(
        &mut self,
        kind: Kind,
        change: &Change,
        queue: &mut WorkQueue<String>,
        _inf: &Informers,
        _now: Time,
    ) {
        match (kind, change) {
            (Kind::Namespace, Change::Added(o) | Change::Updated(_, o)) => {
                queue.add(o.name().to_string())
            }
            (Kind::ServiceAccount, Change::Deleted(o)) if o.name() == DEFAULT => {
                queue.add(o.namespace().to_string())
            }
            _ => {}
        }
    }

    fn sync(&mut self, ns: &str, env: &mut Env, inf: &Informers) -> SyncResult {
        let active = inf.of(Kind::Namespace).get("", ns).is_some_and(
            |o| matches!(&**o, Object::Namespace(n) if n.metadata.deletion_timestamp.is_none()),
        );
        if !active
            || inf.of(Kind::ServiceAccount).get(ns, DEFAULT).is_some()
            || self.creating.contains(ns)
        {
            return Ok(Action::await_change());
        }
        self.creating.insert(ns.to_string());
        let body =
            json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": DEFAULT}});
        let req =
            ApiRequest::new(Verb::Create, Kind::ServiceAccount, ns, "").with_body(Body::Raw(body));
        env.send(req);
        let _ = ns;
        Ok(Action::await_change())
    }

    fn on_response(&mut self, _id: ReqId, resp: &ApiResponse, env: &mut Env, _inf: &Informers) {
        // Which namespace does not matter: forget them all and let the informer decide.
        let _ = resp;
        self.creating.clear();
        let _ = env;
    }
}
