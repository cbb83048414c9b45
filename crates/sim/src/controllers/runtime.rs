//! The controller runtime: the `Controller` trait every kube-controller-manager loop
//! implements, what a sync may do (`Env`) and what it says happens next (`Action`), as
//! kube-rs's reconcilers do.

use crate::api::{ApiRequest, ApiResponse, ReqId};
use crate::client::{Change, Client, Informers, Pending, Recorder, WorkQueue};
use crate::message::Ctx;
use crate::object::{Kind, Object};
use crate::rng::Rng;
use crate::time::Time;

/// What a successful sync asks for next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    /// Nothing until an informer reports a change that maps to this key.
    AwaitChange,
    /// Sync the key again after this long (e.g. minReadySeconds, a deadline), even if
    /// nothing changes.
    Requeue(Time),
}

impl Action {
    /// Wait for the next change.
    pub fn await_change() -> Action {
        Action::AwaitChange
    }

    /// Sync again after `delay` virtual milliseconds.
    pub fn requeue(delay: Time) -> Action {
        Action::Requeue(delay)
    }
}

/// A sync that failed: the key is retried with the work queue's per-item exponential
/// backoff (5 ms doubling to 1000 s), as `AddRateLimited` does.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SyncError(pub String);

impl SyncError {
    /// A failure described by `msg`.
    pub fn new(msg: impl Into<String>) -> SyncError {
        SyncError(msg.into())
    }
}

/// What a sync returns.
pub type SyncResult = Result<Action, SyncError>;

/// What a controller may do while it runs: send requests (their responses come back
/// to it), record events, queue keys, draw randomness and read the clock.
pub struct Env<'a, 'b> {
    pub(crate) ctx: &'a mut Ctx<'b>,
    pub(crate) client: &'a mut Client,
    pub(crate) routes: &'a mut Pending<usize>,
    pub(crate) recorder: &'a mut Recorder,
    pub(crate) queue: &'a mut WorkQueue<String>,
    /// The controller's random stream.
    pub rng: &'a mut Rng,
    pub(crate) ctrl: usize,
    pub(crate) docker: Option<&'a mut crate::cloud::docker::DockerHost>,
}

impl Env<'_, '_> {
    /// Current virtual time.
    pub fn now(&self) -> Time {
        self.ctx.now
    }

    /// Sends a request; its response reaches the controller's `on_response` with the
    /// returned id.
    pub fn send(&mut self, req: ApiRequest) -> ReqId {
        let id = self.client.send(self.ctx, req);
        self.routes.insert(id, self.ctrl);
        id
    }

    /// Sends a request whose response the controller does not need.
    pub fn fire(&mut self, req: ApiRequest) {
        self.client.send(self.ctx, req);
    }

    /// Records an event about `obj`, from this controller.
    pub fn event(&mut self, obj: &Object, type_: &str, reason: &str, msg: &str) {
        self.recorder
            .event(self.ctx, self.client, obj, type_, reason, msg);
    }

    /// Records an event through a recorder of another component name (a controller
    /// whose events come from two sources, as the node lifecycle controller's do).
    pub fn event_from(
        &mut self,
        rec: &mut Recorder,
        obj: &Object,
        type_: &str,
        reason: &str,
        msg: &str,
    ) {
        rec.event(self.ctx, self.client, obj, type_, reason, msg);
    }

    /// The host's docker daemon (cloud-provider-kind only).
    pub fn docker(&mut self) -> Option<&mut crate::cloud::docker::DockerHost> {
        self.docker.as_deref_mut()
    }

    /// Queues `key` for a sync now.
    pub fn enqueue(&mut self, key: impl Into<String>) {
        self.queue.add(key.into());
    }

    /// Queues `key` for a sync after `delay`.
    pub fn enqueue_after(&mut self, key: impl Into<String>, delay: Time) {
        let at = self.ctx.now.saturating_add(delay);
        self.queue.add_after(key.into(), at);
    }

    /// Queues `key` after its per-item backoff (a write it sent failed).
    pub fn retry(&mut self, key: impl Into<String>) {
        let now = self.ctx.now;
        self.queue.add_rate_limited(key.into(), now);
    }
}

/// One controller loop of kube-controller-manager.
pub trait Controller {
    /// Name (for logs).
    fn name(&self) -> &'static str;
    /// The `source.component` of the events `Env::event` records.
    fn component(&self) -> &'static str {
        self.name()
    }
    /// The kinds whose shared informers the controller reads; their changes reach
    /// `on_change`.
    fn watches(&self) -> &'static [Kind];
    /// Kinds served only while their CRD exists that the controller also reads (checked
    /// after every informer change); their informers start and stop with the CRDs.
    fn custom_watches(&self, _inf: &Informers) -> Vec<Kind> {
        Vec::new()
    }
    /// Maps an informer change to the keys to sync (added to `queue`).
    fn on_change(
        &mut self,
        kind: Kind,
        change: &Change,
        queue: &mut WorkQueue<String>,
        inf: &Informers,
        now: Time,
    );
    /// Reconciles one key.
    fn sync(&mut self, key: &str, env: &mut Env, inf: &Informers) -> SyncResult;
    /// How long a sync takes, in virtual ms: the changes that arrive meanwhile fold into
    /// one more sync after it, as client-go's queue folds them while a worker is busy.
    /// Zero (the default) for the controllers whose sync is cheap at any size.
    fn sync_cost(&self, _inf: &Informers) -> Time {
        0
    }
    /// The response to a request the controller sent with `Env::send`.
    fn on_response(&mut self, _id: ReqId, _resp: &ApiResponse, _env: &mut Env, _inf: &Informers) {}
    /// An answer from a node's kubelet API (the metrics scrapes the HPA controller sends).
    fn on_kubelet(
        &mut self,
        _resp: &crate::node::kubelet_api::KubeletResponse,
        _env: &mut Env,
        _inf: &Informers,
    ) {
    }
    /// Periodic work (node monitoring, expiries), every node-monitor period.
    fn tick(&mut self, _env: &mut Env, _inf: &Informers) {}
}
