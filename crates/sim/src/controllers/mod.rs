//! kube-controller-manager: shared informers feeding the Deployment, ReplicaSet,
//! EndpointSlice, node lifecycle, garbage-collector, namespace, service-account, PV binder
//! and disruption controllers.

pub mod deployment;
pub mod deployment_util;
pub mod disruption;
pub mod disruption_status;
pub mod endpointslice;
pub mod gc;
pub mod namespace;
pub mod nodelifecycle;
pub mod ranking;
pub mod replicaset;
pub mod serviceaccount;
pub mod util;
pub mod volume;

use std::collections::BTreeMap;

use crate::api::{ApiRequest, ApiResponse, ReqId};
use crate::client::{Change, Client, Informer, Recorder, WorkQueue};
use crate::cluster::ClusterConfig;
use crate::object::Kind;
use crate::rng::Rng;
use crate::time::Time;
use crate::world::{Ctx, Payload};

/// The informers every controller shares.
#[derive(Debug)]
pub struct Informers {
    /// Pods.
    pub pods: Informer,
    /// ReplicaSets.
    pub replicasets: Informer,
    /// Deployments.
    pub deployments: Informer,
    /// Nodes.
    pub nodes: Informer,
    /// Services.
    pub services: Informer,
    /// EndpointSlices.
    pub endpointslices: Informer,
    /// Node leases (kube-node-lease).
    pub leases: Informer,
    /// Namespaces.
    pub namespaces: Informer,
    /// ServiceAccounts.
    pub serviceaccounts: Informer,
    /// PersistentVolumeClaims.
    pub pvcs: Informer,
    /// PersistentVolumes.
    pub pvs: Informer,
    /// StorageClasses.
    pub storageclasses: Informer,
    /// PodDisruptionBudgets.
    pub pdbs: Informer,
    /// StatefulSets (for a PodDisruptionBudget's expected pods).
    pub statefulsets: Informer,
}

impl Informers {
    fn new() -> Informers {
        Informers {
            pods: Informer::new(Kind::Pod, 101),
            replicasets: Informer::new(Kind::ReplicaSet, 102),
            deployments: Informer::new(Kind::Deployment, 103),
            nodes: Informer::new(Kind::Node, 104),
            services: Informer::new(Kind::Service, 105),
            endpointslices: Informer::new(Kind::EndpointSlice, 106),
            leases: Informer::new(Kind::Lease, 107).in_namespace("kube-node-lease"),
            namespaces: Informer::new(Kind::Namespace, 108),
            serviceaccounts: Informer::new(Kind::ServiceAccount, 109),
            pvcs: Informer::new(Kind::PersistentVolumeClaim, 110),
            pvs: Informer::new(Kind::PersistentVolume, 111),
            storageclasses: Informer::new(Kind::StorageClass, 112),
            pdbs: Informer::new(Kind::PodDisruptionBudget, 113),
            statefulsets: Informer::new(Kind::StatefulSet, 114),
        }
    }

    fn all_mut(&mut self) -> [&mut Informer; 14] {
        [
            &mut self.pods,
            &mut self.replicasets,
            &mut self.deployments,
            &mut self.nodes,
            &mut self.services,
            &mut self.endpointslices,
            &mut self.leases,
            &mut self.namespaces,
            &mut self.serviceaccounts,
            &mut self.pvcs,
            &mut self.pvs,
            &mut self.storageclasses,
            &mut self.pdbs,
            &mut self.statefulsets,
        ]
    }

    /// Whether every informer has listed once.
    pub fn synced(&self) -> bool {
        [
            &self.pods,
            &self.replicasets,
            &self.deployments,
            &self.nodes,
            &self.services,
            &self.endpointslices,
            &self.leases,
            &self.namespaces,
            &self.serviceaccounts,
            &self.pvcs,
            &self.pvs,
            &self.storageclasses,
            &self.pdbs,
            &self.statefulsets,
        ]
        .iter()
        .all(|i| i.has_synced())
    }
}

/// What a controller may do during a sync: send requests (tagged, so responses come
/// back to it), record events, draw randomness, read the clock.
pub struct Env<'a, 'b> {
    /// The actor context.
    pub ctx: &'a mut Ctx<'b>,
    client: &'a mut Client,
    inflight: &'a mut BTreeMap<ReqId, (usize, u64)>,
    /// The controller's random stream.
    pub rng: &'a mut Rng,
    ctrl: usize,
}

impl Env<'_, '_> {
    /// Current virtual time.
    pub fn now(&self) -> Time {
        self.ctx.now
    }

    /// Sends a request; its response reaches the controller's `on_response` with `tag`.
    pub fn send(&mut self, req: ApiRequest, tag: u64) -> ReqId {
        let id = self.client.send(self.ctx, req);
        self.inflight.insert(id, (self.ctrl, tag));
        id
    }

    /// Sends a request whose response the controller does not need.
    pub fn fire(&mut self, req: ApiRequest) {
        self.client.send(self.ctx, req);
    }

    /// Records an event.
    pub fn event(
        &mut self,
        rec: &mut Recorder,
        obj: &crate::object::Object,
        type_: &str,
        reason: &str,
        msg: &str,
    ) {
        rec.event(self.ctx, self.client, obj, type_, reason, msg);
    }
}

/// One controller loop.
pub trait Controller {
    /// Name (for logs and events).
    fn name(&self) -> &'static str;
    /// Maps an informer change to the keys to sync.
    fn on_change(&mut self, kind: Kind, change: &Change, inf: &Informers, now: Time);
    /// Reconciles one key. Err ⇒ requeue with backoff.
    fn sync(&mut self, key: &str, env: &mut Env, inf: &Informers) -> Result<(), ()>;
    /// A response to a request sent with `tag`.
    fn on_response(&mut self, tag: u64, resp: &ApiResponse, env: &mut Env, inf: &Informers);
    /// Periodic work (e.g. node monitoring); called on every wake-up.
    fn tick(&mut self, _env: &mut Env, _inf: &Informers) {}
    /// The work queue.
    fn queue(&mut self) -> &mut WorkQueue<String>;
}

const TIMER_WAKE: u64 = 1;

/// kube-controller-manager.
pub struct ControllerManager {
    client: Client,
    informers: Informers,
    controllers: Vec<Box<dyn Controller>>,
    inflight: BTreeMap<ReqId, (usize, u64)>,
    rng: Rng,
    wake_at: Option<Time>,
}

impl ControllerManager {
    /// A freshly started controller manager.
    pub fn new(config: &ClusterConfig) -> ControllerManager {
        let controllers: Vec<Box<dyn Controller>> = vec![
            Box::new(deployment::DeploymentController::default()),
            Box::new(replicaset::ReplicaSetController::default()),
            Box::new(endpointslice::EndpointSliceController::default()),
            Box::new(nodelifecycle::NodeLifecycleController::default()),
            Box::new(gc::GarbageCollector::default()),
            Box::new(namespace::NamespaceController::default()),
            Box::new(serviceaccount::ServiceAccountController::default()),
            Box::new(volume::VolumeController::default()),
            Box::new(disruption::DisruptionController::default()),
        ];
        ControllerManager {
            client: Client::new("system:kube-controller-manager", &[]),
            informers: Informers::new(),
            controllers,
            inflight: BTreeMap::new(),
            rng: Rng::stream(config.seed, "kube-controller-manager"),
            wake_at: None,
        }
    }

    /// Starts every informer.
    pub fn start(&mut self, ctx: &mut Ctx) {
        for inf in self.informers.all_mut() {
            inf.start(ctx, &mut self.client);
        }
        ctx.timer(nodelifecycle::MONITOR_PERIOD, TIMER_WAKE);
    }

    /// The shared informers (for inspection).
    pub fn informers(&self) -> &Informers {
        &self.informers
    }

    /// Handles a message.
    pub fn handle(&mut self, ctx: &mut Ctx, _from: crate::world::Actor, payload: Payload) {
        match payload {
            Payload::ApiResp(resp) => {
                let mut changes = None;
                let mut kind = Kind::Pod;
                for inf in self.informers.all_mut() {
                    if let Some(c) = inf.on_response(ctx, &mut self.client, &resp) {
                        kind = inf.kind;
                        changes = Some(c);
                        break;
                    }
                }
                match changes {
                    Some(c) => self.dispatch(kind, &c, ctx.now),
                    None => self.route_response(ctx, &resp),
                }
            }
            Payload::Watch(ev) => {
                let mut found = None;
                for inf in self.informers.all_mut() {
                    if let Some(c) = inf.on_watch(ctx, &mut self.client, &ev) {
                        found = Some((inf.kind, c));
                        break;
                    }
                }
                if let Some((kind, c)) = found {
                    self.dispatch(kind, &c, ctx.now);
                }
            }
            Payload::ConnectionLost => {
                for inf in self.informers.all_mut() {
                    inf.on_connection_lost(ctx);
                }
                let lost: Vec<ReqId> = self.inflight.keys().copied().collect();
                for id in lost {
                    let s = crate::api::Status::transport(
                        crate::api::Transport::Reset,
                        "connection lost",
                    );
                    self.route_response(ctx, &ApiResponse { id, result: Err(s) });
                }
            }
            Payload::Timer(TIMER_WAKE) => {
                self.wake_at = None;
                if self.informers.synced() {
                    self.tick(ctx);
                }
                ctx.timer(nodelifecycle::MONITOR_PERIOD, TIMER_WAKE + 1);
            }
            Payload::Timer(t) if t == TIMER_WAKE + 1 => {
                if self.informers.synced() {
                    self.tick(ctx);
                }
                ctx.timer(nodelifecycle::MONITOR_PERIOD, TIMER_WAKE + 1);
            }
            Payload::Timer(t) => {
                for inf in self.informers.all_mut() {
                    if inf.on_timer(ctx, &mut self.client, t) {
                        break;
                    }
                }
            }
            _ => {}
        }
        self.process(ctx);
    }

    fn dispatch(&mut self, kind: Kind, changes: &[Change], now: Time) {
        for c in changes {
            for ctrl in &mut self.controllers {
                ctrl.on_change(kind, c, &self.informers, now);
            }
        }
    }

    fn route_response(&mut self, ctx: &mut Ctx, resp: &ApiResponse) {
        let Some((ci, tag)) = self.inflight.remove(&resp.id) else {
            return;
        };
        let mut env = Env {
            ctx,
            client: &mut self.client,
            inflight: &mut self.inflight,
            rng: &mut self.rng,
            ctrl: ci,
        };
        self.controllers[ci].on_response(tag, resp, &mut env, &self.informers);
    }

    fn tick(&mut self, ctx: &mut Ctx) {
        for ci in 0..self.controllers.len() {
            let mut env = Env {
                ctx,
                client: &mut self.client,
                inflight: &mut self.inflight,
                rng: &mut self.rng,
                ctrl: ci,
            };
            self.controllers[ci].tick(&mut env, &self.informers);
        }
    }

    /// Runs every controller's ready keys; sets a timer for the earliest delayed key.
    fn process(&mut self, ctx: &mut Ctx) {
        if !self.informers.synced() {
            return;
        }
        let now = ctx.now;
        let mut next_due: Option<Time> = None;
        for ci in 0..self.controllers.len() {
            self.controllers[ci].queue().promote(now);
            while let Some(key) = self.controllers[ci].queue().pop() {
                let mut env = Env {
                    ctx,
                    client: &mut self.client,
                    inflight: &mut self.inflight,
                    rng: &mut self.rng,
                    ctrl: ci,
                };
                match self.controllers[ci].sync(&key, &mut env, &self.informers) {
                    Ok(()) => self.controllers[ci].queue().forget(&key),
                    Err(()) => {
                        self.controllers[ci].queue().add_rate_limited(key, now);
                    }
                }
            }
            if let Some(d) = self.controllers[ci].queue().next_due() {
                next_due = Some(next_due.map_or(d, |n: Time| n.min(d)));
            }
        }
        if let Some(d) = next_due {
            if self.wake_at.is_none_or(|w| d < w || w <= now) {
                self.wake_at = Some(d);
                ctx.timer(d.saturating_sub(now), TIMER_WAKE + 2);
            }
        }
    }
}
