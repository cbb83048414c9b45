//! A fixture that drives one controller by hand: fake informers seeded with objects,
//! a virtual clock, and a record of every request the controller sends.

use std::sync::Arc;

use crate::api::{ApiRequest, ApiResponse, ApiResult, Body, ReqId, Status};
use crate::client::{Change, Client, Informers, Pending, Recorder, WorkQueue};
use crate::controllers::{Controller, Env, SyncResult};
use crate::message::{Actor, Ctx, Outgoing, Payload};
use crate::object::{Kind, Object};
use crate::rng::Rng;
use crate::time::{k8s_time, Time};

/// One controller's world: its informers, its queue and what it sent.
pub struct Fixture {
    /// The fake informers.
    pub informers: Informers,
    /// Virtual time of the next call.
    pub now: Time,
    /// The keys the controller queued from changes and syncs.
    pub queue: WorkQueue<String>,
    client: Client,
    routes: Pending<usize>,
    recorder: Recorder,
    rng: Rng,
    rv: u64,
    /// Requests sent (events excluded), oldest first.
    pub sent: Vec<ApiRequest>,
    /// Every request ever sent, by id, to answer it later.
    all: std::collections::BTreeMap<ReqId, ApiRequest>,
    /// Events recorded, as `(reason, message)`.
    pub events: Vec<(String, String)>,
}

impl Fixture {
    /// A fixture with an informer for every kind `ctrl` watches, all synced and empty.
    pub fn new(ctrl: &dyn Controller) -> Fixture {
        let mut informers = Informers::default();
        for (i, &k) in ctrl.watches().iter().enumerate() {
            informers.register(k, || 1_000 + i as u64);
        }
        Fixture {
            informers,
            now: 1_000_000,
            queue: WorkQueue::default(),
            client: Client::new("system:kube-controller-manager", &[]),
            routes: Pending::default(),
            recorder: Recorder::new(ctrl.component(), None),
            rng: Rng::stream(1, "fixture"),
            rv: 100,
            sent: Vec::new(),
            all: Default::default(),
            events: Vec::new(),
        }
    }

    /// Stores `obj` as the apiserver would have (uid, resourceVersion, creation time
    /// when missing) and tells the controller, as a watch event would.
    pub fn add(&mut self, ctrl: &mut dyn Controller, obj: impl Into<Object>) -> Arc<Object> {
        let mut obj: Object = obj.into();
        self.rv += 1;
        let m = obj.meta_mut();
        m.resource_version = Some(self.rv.to_string());
        m.uid
            .get_or_insert_with(|| format!("uid-{}", m.name.as_deref().unwrap_or("")));
        m.creation_timestamp
            .get_or_insert_with(|| k8s_time(self.now));
        if obj.kind().info().namespaced {
            obj.meta_mut()
                .namespace
                .get_or_insert_with(|| "default".into());
        }
        let obj = Arc::new(obj);
        let kind = obj.kind();
        let old = self
            .informers
            .of(kind)
            .get(obj.namespace(), obj.name())
            .cloned();
        self.informers
            .of_mut(kind)
            .unwrap_or_else(|| panic!("the controller does not watch {kind:?}"))
            .seed(obj.clone());
        let change = match old {
            Some(o) => Change::Updated(o, obj.clone()),
            None => Change::Added(obj.clone()),
        };
        ctrl.on_change(kind, &change, &mut self.queue, &self.informers, self.now);
        obj
    }

    fn with_env<R>(
        &mut self,
        ctrl: &mut dyn Controller,
        f: impl FnOnce(&mut dyn Controller, &mut Env, &Informers) -> R,
    ) -> R {
        let mut out: Vec<Outgoing> = Vec::new();
        let r = {
            let mut ctx = Ctx::new(self.now, Actor::ControllerManager, &mut out);
            let mut env = Env {
                ctx: &mut ctx,
                client: &mut self.client,
                routes: &mut self.routes,
                recorder: &mut self.recorder,
                queue: &mut self.queue,
                rng: &mut self.rng,
                ctrl: 0,
                docker: None,
            };
            f(ctrl, &mut env, &self.informers)
        };
        for o in out {
            let Payload::Api(req) = o.payload else {
                continue;
            };
            if req.kind == Kind::Event {
                self.events.push(event_of(&req));
            } else {
                self.all.insert(req.id, (*req).clone());
                self.sent.push(*req);
            }
        }
        r
    }

    /// Runs one sync of `key`.
    pub fn sync(&mut self, ctrl: &mut dyn Controller, key: &str) -> SyncResult {
        self.with_env(ctrl, |c, env, inf| c.sync(key, env, inf))
    }

    /// Answers request `id` with `result` (the object echoed back for `Ok(None)`).
    pub fn respond(&mut self, ctrl: &mut dyn Controller, id: ReqId, result: Result<(), Status>) {
        let req = self.all.get(&id).expect("a sent request");
        let echoed = match &req.body {
            Body::Object(o) => {
                let mut o = o.clone();
                let m = o.meta_mut();
                if m.name.as_deref().unwrap_or("").is_empty() {
                    m.name = Some(format!("{}{id}", m.generate_name.as_deref().unwrap_or("")));
                }
                o
            }
            _ => Object::from_value(
                req.kind,
                &serde_json::json!({"metadata": {"name": req.name, "namespace": req.namespace}}),
                &mut Vec::new(),
            )
            .expect("an empty object of the kind"),
        };
        let result = result.map(|()| ApiResult::Object(Arc::new(echoed)));
        let resp = ApiResponse { id, result };
        self.with_env(ctrl, |c, env, inf| c.on_response(id, &resp, env, inf));
    }

    /// Runs the controller's periodic `tick`.
    pub fn tick(&mut self, ctrl: &mut dyn Controller) {
        self.with_env(ctrl, |c, env, inf| c.tick(env, inf));
    }

    /// Hands the controller an answer from a kubelet's API.
    pub fn kubelet(
        &mut self,
        ctrl: &mut dyn Controller,
        resp: crate::node::kubelet_api::KubeletResponse,
    ) {
        self.with_env(ctrl, |c, env, inf| c.on_kubelet(&resp, env, inf));
    }

    /// The requests sent since the last call.
    pub fn take_sent(&mut self) -> Vec<ApiRequest> {
        std::mem::take(&mut self.sent)
    }
}

/// `(reason, message)` of an Event create or of the patch that counts a repeat.
fn event_of(req: &ApiRequest) -> (String, String) {
    match &req.body {
        Body::Object(Object::Event(e)) => (
            e.reason.clone().unwrap_or_default(),
            e.message.clone().unwrap_or_default(),
        ),
        _ => ("(repeat)".into(), String::new()),
    }
}
