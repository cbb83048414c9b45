//! The resource quota controller: keeps each ResourceQuota's `status.hard` and
//! `status.used` equal to what the namespace's objects use, so usage falls again when
//! objects go (admission only charges new ones), as pkg/controller/resourcequota does.

use std::sync::Arc;

use k8s_openapi::api::core::v1::ResourceQuotaStatus;

use crate::api::{ApiRequest, ApiResponse, Body, ReqId, Subresource, Verb};
use crate::apiserver::admission::resourcequota::calculate_usage;
use crate::client::{Change, Pending, WorkQueue};
use crate::controllers::util::{key_of, split_key};
use crate::controllers::{Action, Controller, Env, Informers, SyncResult};
use crate::object::{Kind, Object};
use crate::time::{Time, MINUTE};

/// `--resource-quota-sync-period`: a full recalculation this often even without changes.
const RESYNC: Time = 5 * MINUTE;

/// The kinds whose objects quotas charge (the evaluators the controller registers).
const CHARGED: &[Kind] = &[
    Kind::Pod,
    Kind::Service,
    Kind::PersistentVolumeClaim,
    Kind::ConfigMap,
    Kind::Secret,
    Kind::Deployment,
    Kind::ReplicaSet,
    Kind::ResourceQuota,
];

/// The resource quota controller.
#[derive(Default)]
pub struct ResourceQuotaController {
    /// Status writes in flight, with their quota's key.
    sent: Pending<String>,
}

impl Controller for ResourceQuotaController {
    fn name(&self) -> &'static str {
        "resourcequota-controller"
    }

    fn watches(&self) -> &'static [Kind] {
        CHARGED
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
        if kind == Kind::ResourceQuota {
            queue.add(key_of(o));
            return;
        }
        // An object that appeared, changed or went: every quota of its namespace may
        // have to count it again.
        for q in inf.of(Kind::ResourceQuota).iter_ns(o.namespace()) {
            queue.add(key_of(q));
        }
    }

    fn sync(&mut self, key: &str, env: &mut Env, inf: &Informers) -> SyncResult {
        let (ns, name) = split_key(key);
        let Some(obj) = inf.of(Kind::ResourceQuota).get(ns, name).cloned() else {
            return Ok(Action::await_change());
        };
        let Object::ResourceQuota(q) = &*obj else {
            return Ok(Action::await_change());
        };
        if obj.meta().deletion_timestamp.is_some() {
            return Ok(Action::await_change());
        }
        let objects: Vec<&Arc<Object>> = CHARGED
            .iter()
            .flat_map(|k| inf.of(*k).iter_ns(ns))
            .collect();
        let status = ResourceQuotaStatus {
            hard: q.spec.as_ref().and_then(|s| s.hard.clone()),
            used: Some(calculate_usage(q, objects.iter().map(|o| &***o))),
        };
        if q.status.as_ref() != Some(&status) {
            let mut updated = q.clone();
            updated.status = Some(status);
            let req = ApiRequest::new(Verb::Update, Kind::ResourceQuota, ns, name)
                .with_subresource(Subresource::Status)
                .with_body(Body::Object(updated.into()));
            let id = env.send(req);
            self.sent.insert(id, key.to_string());
        }
        Ok(Action::requeue(RESYNC))
    }

    fn on_response(&mut self, id: ReqId, resp: &ApiResponse, env: &mut Env, _inf: &Informers) {
        if let (Some(key), Err(s)) = (self.sent.take(id), &resp.result) {
            if !s.is_not_found() {
                env.retry(key);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::{Pod, ResourceQuota};
    use serde_json::json;

    use super::*;
    use crate::controllers::testing::Fixture;

    fn quota() -> ResourceQuota {
        serde_json::from_value(json!({
            "metadata": {"name": "q", "namespace": "default"},
            "spec": {"hard": {"pods": "2", "requests.cpu": "1", "configmaps": "5"}}
        }))
        .unwrap()
    }

    fn pod(name: &str, cpu: &str, phase: &str) -> Pod {
        serde_json::from_value(json!({
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"containers": [{"name": "c", "image": "nginx",
                                      "resources": {"requests": {"cpu": cpu}}}]},
            "status": {"phase": phase}
        }))
        .unwrap()
    }

    fn used(f: &mut Fixture) -> Vec<(String, String)> {
        let req = f.take_sent().pop().expect("a status write");
        let Body::Object(Object::ResourceQuota(q)) = req.body else {
            panic!("a quota body");
        };
        let s = q.status.unwrap();
        assert_eq!(s.hard, quota().spec.unwrap().hard);
        s.used.unwrap().into_iter().map(|(k, v)| (k, v.0)).collect()
    }

    #[test]
    fn used_counts_what_the_namespace_holds_and_falls_when_objects_go() {
        let mut c = ResourceQuotaController::default();
        let mut f = Fixture::new(&c);
        f.add(&mut c, quota());
        f.add(&mut c, pod("a", "250m", "Running"));
        f.add(&mut c, pod("b", "500m", "Pending"));
        // A finished pod uses no cpu and no pod slot.
        f.add(&mut c, pod("done", "1", "Succeeded"));
        assert_eq!(f.sync(&mut c, "default/q"), Ok(Action::requeue(RESYNC)));
        let want = |cm: &str, cpu: &str, pods: &str| {
            vec![
                ("configmaps".to_string(), cm.to_string()),
                ("pods".to_string(), pods.to_string()),
                ("requests.cpu".to_string(), cpu.to_string()),
            ]
        };
        assert_eq!(used(&mut f), want("0", "750m", "2"));
    }

    #[test]
    fn a_change_in_the_namespace_requeues_its_quotas() {
        let mut c = ResourceQuotaController::default();
        let mut f = Fixture::new(&c);
        f.add(&mut c, quota());
        while f.queue.pop().is_some() {}
        f.add(&mut c, pod("a", "250m", "Running"));
        assert_eq!(f.queue.pop().as_deref(), Some("default/q"));
    }
}
