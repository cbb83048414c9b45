//! Shared informers, like client-go's SharedInformerFactory: one list+watch cache per
//! kind for a whole component, created for the kinds its loops ask for, with one
//! dispatch path for responses, watch events and backoff timers.

use crate::api::{ApiResponse, WatchEvent};
use crate::client::{Change, Client, Informer};
use crate::message::Ctx;
use crate::object::Kind;

/// One informer per kind, shared by every loop of a component, in registration order
/// (the order their lists are sent in).
#[derive(Debug, Default)]
pub struct Informers {
    by_kind: Vec<Informer>,
    /// Kinds added while running (custom kinds whose CRD appeared): not waited for by
    /// [`Informers::synced`], removed when no loop wants them any more.
    dynamic: Vec<Kind>,
}

/// Node leases live in one namespace; every other kind is watched cluster-wide.
fn namespace_of(kind: Kind) -> Option<&'static str> {
    (kind == Kind::Lease).then_some("kube-node-lease")
}

impl Informers {
    /// Adds an informer for `kind` (once) whose backoff timer uses `timer_token`.
    pub fn register(&mut self, kind: Kind, timer_token: impl FnOnce() -> u64) {
        if self.by_kind.iter().any(|i| i.kind == kind) {
            return;
        }
        let mut inf = Informer::new(kind, timer_token());
        if let Some(ns) = namespace_of(kind) {
            inf = inf.in_namespace(ns);
        }
        self.by_kind.push(inf);
    }

    /// Adds a configured informer (a field selector, a namespace) for its kind.
    pub fn insert(&mut self, inf: Informer) {
        self.by_kind.retain(|i| i.kind != inf.kind);
        self.by_kind.push(inf);
    }

    /// The cache of `kind`. Asking for a kind no loop registered is a bug in that loop.
    pub fn of(&self, kind: Kind) -> &Informer {
        self.by_kind
            .iter()
            .find(|i| i.kind == kind)
            .unwrap_or_else(|| panic!("no informer for {kind:?}: add it to the loop's watches"))
    }

    /// The cache of `kind`, if an informer for it exists (custom kinds come and go).
    pub fn find(&self, kind: Kind) -> Option<&Informer> {
        self.by_kind.iter().find(|i| i.kind == kind)
    }

    /// Adds and starts an informer for a kind that became served while running (once).
    pub fn add_dynamic(
        &mut self,
        ctx: &mut Ctx,
        client: &mut Client,
        kind: Kind,
        timer_token: impl FnOnce() -> u64,
    ) {
        if self.by_kind.iter().any(|i| i.kind == kind) {
            return;
        }
        let mut inf = Informer::new(kind, timer_token());
        inf.start(ctx, client);
        self.by_kind.push(inf);
        self.dynamic.push(kind);
    }

    /// Drops the running-time informers of kinds not in `keep`.
    pub fn retain_dynamic(&mut self, keep: &[Kind]) {
        let gone: Vec<Kind> = self
            .dynamic
            .iter()
            .filter(|k| !keep.contains(k))
            .copied()
            .collect();
        self.by_kind.retain(|i| !gone.contains(&i.kind));
        self.dynamic.retain(|k| keep.contains(k));
    }

    /// The cache of `kind`, mutably (tests seed fake informers through it).
    pub fn of_mut(&mut self, kind: Kind) -> Option<&mut Informer> {
        self.by_kind.iter_mut().find(|i| i.kind == kind)
    }

    /// Every registered kind.
    pub fn kinds(&self) -> impl Iterator<Item = Kind> + '_ {
        self.by_kind.iter().map(|i| i.kind)
    }

    /// Starts every informer with a list.
    pub fn start(&mut self, ctx: &mut Ctx, client: &mut Client) {
        for inf in self.by_kind.iter_mut() {
            inf.start(ctx, client);
        }
    }

    /// Whether every informer has listed once.
    pub fn synced(&self) -> bool {
        self.by_kind
            .iter()
            .filter(|i| !self.dynamic.contains(&i.kind))
            .all(Informer::has_synced)
    }

    /// Handles a response if it belongs to an informer: the kind and the changes it
    /// implies (empty for a watch that was merely acknowledged or failed).
    pub fn on_response(
        &mut self,
        ctx: &mut Ctx,
        client: &mut Client,
        resp: &ApiResponse,
    ) -> Option<(Kind, Vec<Change>)> {
        self.by_kind
            .iter_mut()
            .find_map(|inf| inf.on_response(ctx, client, resp).map(|c| (inf.kind, c)))
    }

    /// Handles a watch event if it belongs to an informer.
    pub fn on_watch(
        &mut self,
        ctx: &mut Ctx,
        client: &mut Client,
        ev: &WatchEvent,
    ) -> Option<(Kind, Vec<Change>)> {
        self.by_kind
            .iter_mut()
            .find_map(|inf| inf.on_watch(ctx, client, ev).map(|c| (inf.kind, c)))
    }

    /// The connection broke: every informer retries after its backoff.
    pub fn on_connection_lost(&mut self, ctx: &mut Ctx) {
        for inf in self.by_kind.iter_mut() {
            inf.on_connection_lost(ctx);
        }
    }

    /// Handles the backoff timer of `kind`'s informer.
    pub fn on_timer(&mut self, ctx: &mut Ctx, client: &mut Client, kind: Kind, token: u64) {
        if let Some(inf) = self.of_mut(kind) {
            inf.on_timer(ctx, client, token);
        }
    }
}
