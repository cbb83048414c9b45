//! kube-controller-manager: shared informers feeding the Deployment, ReplicaSet,
//! EndpointSlice, node lifecycle, garbage-collector, namespace, service-account, PV binder,
//! disruption and horizontal-pod-autoscaler controllers.

pub mod crd_cleanup;
pub mod cron;
pub mod cronjob;
pub mod daemonset;
pub mod daemonset_util;
pub mod deployment;
pub mod deployment_util;
pub mod disruption;
pub mod disruption_status;
pub mod endpoints;
pub mod endpointslice;
pub mod envoy_gateway;
pub mod envoy_gateway_infra;
pub mod gateway_status;
pub mod gc;
pub mod gc_graph;
pub mod history;
pub mod hpa;
pub mod hpa_calc;
pub mod hpa_scale;
#[cfg(test)]
mod hpa_tests;
pub mod ingress_nginx;
pub mod job;
#[cfg(test)]
mod job_tests;
pub mod job_util;
pub mod namespace;
pub mod nodelifecycle;
pub mod nodelifecycle_taints;
pub mod ranking;
pub mod replicaset;
pub mod resourcequota;
pub mod rootcacertpublisher;
pub mod runtime;
pub mod serviceaccount;
pub mod statefulset;
pub mod statefulset_pods;
#[cfg(test)]
pub mod testing;
pub mod ttl_after_finished;
pub mod tz;
pub mod util;
pub mod volume;

use crate::api::ApiResponse;
use crate::client::{Change, Client, Pending, Recorder, Timers, WorkQueue};
use crate::cluster::ClusterConfig;
use crate::message::{Ctx, Payload};
use crate::object::Kind;
use crate::rng::Rng;
use crate::time::Time;

pub use crate::client::Informers;
pub use runtime::{Action, Controller, Env, SyncError, SyncResult};

/// What a controller manager's timer means.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Timer {
    /// The node-monitor period: every controller's `tick`.
    Monitor,
    /// A queued key became due.
    Due,
    /// An informer's list/watch backoff ended.
    Informer(Kind),
}

/// One controller with the machinery the runtime keeps for it.
struct Slot {
    ctrl: Box<dyn Controller>,
    /// The custom kinds it asked for last ([`Controller::custom_watches`]).
    extra: Vec<Kind>,
    queue: WorkQueue<String>,
    recorder: Recorder,
}

/// kube-controller-manager: shared informers, one work queue per controller, request
/// routing, and the loop that runs every controller's ready keys.
pub struct ControllerManager {
    client: Client,
    informers: Informers,
    slots: Vec<Slot>,
    routes: Pending<usize>,
    timers: Timers<Timer>,
    rng: Rng,
    wake_at: Option<Time>,
    /// The host's docker daemon, lent by the world while cloud-provider-kind (which runs
    /// on this machinery) handles a message; `None` in kube-controller-manager.
    pub(crate) docker: Option<crate::cloud::docker::DockerHost>,
}

/// The controllers kube-controller-manager runs, in the order they sync.
fn controllers() -> Vec<Box<dyn Controller>> {
    vec![
        Box::new(deployment::DeploymentController::default()),
        Box::new(replicaset::ReplicaSetController::default()),
        Box::new(endpointslice::EndpointSliceController::default()),
        Box::new(endpoints::EndpointsController::default()),
        Box::new(nodelifecycle::NodeLifecycleController::default()),
        Box::new(gc::GarbageCollector::default()),
        Box::new(namespace::NamespaceController::default()),
        Box::new(serviceaccount::ServiceAccountController::default()),
        Box::new(volume::VolumeController::default()),
        Box::new(disruption::DisruptionController::default()),
        Box::new(resourcequota::ResourceQuotaController::default()),
        Box::new(rootcacertpublisher::RootCaCertPublisher::default()),
        Box::new(hpa::HorizontalController::default()),
        Box::new(job::JobController::default()),
        Box::new(cronjob::CronJobController::default()),
        Box::new(ttl_after_finished::TtlAfterFinishedController::default()),
        Box::new(statefulset::StatefulSetController::default()),
        Box::new(daemonset::DaemonSetController::default()),
        Box::new(crd_cleanup::CrdCleanupController::default()),
        Box::new(ingress_nginx::IngressNginxController::default()),
        Box::new(envoy_gateway::EnvoyGatewayController::default()),
    ]
}

impl ControllerManager {
    /// A freshly started controller manager.
    pub fn new(config: &ClusterConfig) -> ControllerManager {
        ControllerManager::with(controllers(), config.seed)
    }

    /// A controller manager running `ctrls`; its informers exist once it starts.
    fn with(ctrls: Vec<Box<dyn Controller>>, seed: u64) -> ControllerManager {
        ControllerManager::with_identity(
            ctrls,
            Client::new("system:kube-controller-manager", &[]),
            Rng::stream(seed, "kube-controller-manager"),
        )
    }

    /// Another controller process on the same machinery (cloud-provider-kind): its own
    /// controllers, identity and random stream.
    pub(crate) fn with_identity(
        ctrls: Vec<Box<dyn Controller>>,
        client: Client,
        rng: Rng,
    ) -> ControllerManager {
        let slots = ctrls
            .into_iter()
            .map(|ctrl| Slot {
                extra: Vec::new(),
                recorder: Recorder::new(ctrl.component(), None),
                queue: WorkQueue::default(),
                ctrl,
            })
            .collect();
        ControllerManager {
            client,
            informers: Informers::default(),
            slots,
            routes: Pending::default(),
            timers: Timers::new(0),
            rng,
            wake_at: None,
            docker: None,
        }
    }

    /// Registers the informers every controller watches, with timers of this instance.
    fn register_informers(&mut self, now: Time) {
        self.timers = Timers::new(now);
        self.informers = Informers::default();
        for slot in &mut self.slots {
            slot.extra.clear();
        }
        for slot in &self.slots {
            for &k in slot.ctrl.watches() {
                let timers = &mut self.timers;
                self.informers
                    .register(k, || timers.standing(Timer::Informer(k)));
            }
        }
    }

    /// Starts every informer.
    pub fn start(&mut self, ctx: &mut Ctx) {
        self.register_informers(ctx.now);
        self.informers.start(ctx, &mut self.client);
        self.timers
            .set(ctx, nodelifecycle::MONITOR_PERIOD, Timer::Monitor);
    }

    /// The shared informers (for inspection).
    pub fn informers(&self) -> &Informers {
        &self.informers
    }

    /// Handles a message.
    pub fn handle(&mut self, ctx: &mut Ctx, _from: crate::world::Actor, payload: Payload) {
        match payload {
            Payload::ApiResp(resp) if self.client.on_event_response(ctx, &resp) => {}
            Payload::ApiResp(resp) => {
                match self.informers.on_response(ctx, &mut self.client, &resp) {
                    Some((kind, changes)) => {
                        self.dispatch(kind, &changes, ctx.now);
                        self.sync_custom_informers(ctx);
                    }
                    None => self.route_response(ctx, &resp),
                }
            }
            Payload::Watch(ev) => {
                if let Some((kind, changes)) = self.informers.on_watch(ctx, &mut self.client, &ev) {
                    self.dispatch(kind, &changes, ctx.now);
                    self.sync_custom_informers(ctx);
                }
            }
            Payload::KubeletApiResp(resp) => {
                for ci in 0..self.slots.len() {
                    self.with_env(ctx, ci, |c, env, inf| c.on_kubelet(&resp, env, inf));
                }
            }
            Payload::ConnectionLost => {
                self.informers.on_connection_lost(ctx);
                for (id, ci) in self.routes.drain() {
                    let s = crate::api::Status::transport(
                        crate::api::Transport::Reset,
                        "connection lost",
                    );
                    let resp = ApiResponse { id, result: Err(s) };
                    self.with_env(ctx, ci, |c, env, inf| c.on_response(id, &resp, env, inf));
                }
            }
            Payload::Timer(token) => match self.timers.fired(token) {
                Some(Timer::Monitor) => {
                    if self.informers.synced() {
                        self.tick(ctx);
                    }
                    self.timers
                        .set(ctx, nodelifecycle::MONITOR_PERIOD, Timer::Monitor);
                }
                Some(Timer::Due) => self.wake_at = None,
                Some(Timer::Informer(kind)) => {
                    self.informers.on_timer(ctx, &mut self.client, kind, token)
                }
                None => {}
            },
            _ => {}
        }
        self.process(ctx);
    }

    /// Starts the informers of custom kinds a controller now wants, drops the unwanted.
    fn sync_custom_informers(&mut self, ctx: &mut Ctx) {
        let mut all = Vec::new();
        for slot in &mut self.slots {
            slot.extra = slot.ctrl.custom_watches(&self.informers);
            all.extend(slot.extra.iter().copied());
        }
        self.informers.retain_dynamic(&all);
        for k in all {
            let timers = &mut self.timers;
            self.informers.add_dynamic(ctx, &mut self.client, k, || {
                timers.standing(Timer::Informer(k))
            });
        }
    }

    fn dispatch(&mut self, kind: Kind, changes: &[Change], now: Time) {
        for c in changes {
            for slot in &mut self.slots {
                if slot.ctrl.watches().contains(&kind) || slot.extra.contains(&kind) {
                    slot.ctrl
                        .on_change(kind, c, &mut slot.queue, &self.informers, now);
                }
            }
        }
    }

    /// Runs `f` on controller `ci` with its environment.
    fn with_env<R>(
        &mut self,
        ctx: &mut Ctx,
        ci: usize,
        f: impl FnOnce(&mut dyn Controller, &mut Env, &Informers) -> R,
    ) -> R {
        let slot = &mut self.slots[ci];
        let mut env = Env {
            ctx,
            client: &mut self.client,
            routes: &mut self.routes,
            recorder: &mut slot.recorder,
            queue: &mut slot.queue,
            rng: &mut self.rng,
            ctrl: ci,
            docker: self.docker.as_mut(),
        };
        f(slot.ctrl.as_mut(), &mut env, &self.informers)
    }

    fn route_response(&mut self, ctx: &mut Ctx, resp: &ApiResponse) {
        let Some(ci) = self.routes.take(resp.id) else {
            return;
        };
        self.with_env(ctx, ci, |c, env, inf| {
            c.on_response(resp.id, resp, env, inf)
        });
    }

    fn tick(&mut self, ctx: &mut Ctx) {
        for ci in 0..self.slots.len() {
            self.with_env(ctx, ci, |c, env, inf| c.tick(env, inf));
        }
    }

    /// Runs every controller's ready keys; sets a timer for the earliest delayed key.
    fn process(&mut self, ctx: &mut Ctx) {
        if !self.informers.synced() {
            return;
        }
        let now = ctx.now;
        let mut next_due: Option<Time> = None;
        for ci in 0..self.slots.len() {
            self.slots[ci].queue.promote(now);
            while let Some(key) = self.slots[ci].queue.pop_ready(now) {
                let result = self.with_env(ctx, ci, |c, env, inf| c.sync(&key, env, inf));
                let cost = self.slots[ci].ctrl.sync_cost(&self.informers);
                let queue = &mut self.slots[ci].queue;
                if cost > 0 {
                    queue.hold(key.clone(), now.saturating_add(cost));
                }
                match result {
                    Ok(Action::AwaitChange) => queue.forget(&key),
                    Ok(Action::Requeue(delay)) => {
                        queue.forget(&key);
                        queue.add_after(key, now.saturating_add(delay));
                    }
                    Err(_) => {
                        queue.add_rate_limited(key, now);
                    }
                }
            }
            if let Some(d) = self.slots[ci].queue.next_due() {
                next_due = Some(next_due.map_or(d, |n: Time| n.min(d)));
            }
        }
        if let Some(d) = next_due {
            if self.wake_at.is_none_or(|w| d < w || w <= now) {
                // One wake-up, as client-go's delaying queue keeps one timer: the
                // superseded one would clear `wake_at` when it fired and set another,
                // so each supersession would leave a timer going round for ever.
                self.timers.cancel(|t| *t == Timer::Due);
                self.wake_at = Some(d);
                self.timers.set(ctx, d.saturating_sub(now), Timer::Due);
            }
        }
    }
}
