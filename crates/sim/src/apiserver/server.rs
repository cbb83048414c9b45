//! The kube-apiserver actor: the request pipeline (authn → authz → admission → validation
//! → etcd), consistent reads, watches from its cache, and its own etcd watch.

use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;

use crate::api::{ApiRequest, ApiResponse, ApiResult, Status, Verb};
use crate::apiserver::authz::{self, Attributes, UserInfo};
use crate::apiserver::watch::{with_rv, WatchCache, Watchers};
use crate::apiserver::write::{self, WriteOp};
use crate::cluster::ClusterConfig;
use crate::etcd::{EtcdOp, EtcdRequest, EtcdResponse, EtcdResult, EtcdWatchBatch, KeyValue, TxnOp};
use crate::message::{Actor, Ctx, Payload};
use crate::object::{Kind, Object};
use crate::rng::Rng;
use crate::time::{Time, MINUTE, SECOND};

/// How many requests the audit log keeps for the UI.
const AUDIT_CAPACITY: usize = 2000;
/// How often the apiserver compacts etcd (`--etcd-compaction-interval`).
const COMPACTION_INTERVAL: Time = 5 * MINUTE;
/// How many times a write is retried after losing an optimistic-concurrency race.
const MAX_WRITE_ATTEMPTS: u32 = 8;

mod reads;

const TIMER_RESYNC: u64 = 1;
const TIMER_COMPACT: u64 = 2;
const TIMER_KUBERNETES_SERVICE: u64 = 3;

/// `--request-timeout`: how long a request may take before the apiserver gives up on it.
const REQUEST_TIMEOUT: Time = MINUTE;

/// How often the `kubernetes` service controller checks its Service
/// (`--endpoint-reconciler` interval: 10 s).
const KUBERNETES_SERVICE_INTERVAL: Time = 10 * SECOND;

/// One pipeline stage of a request, with virtual timestamps.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Span {
    /// Stage name (`authentication`, `authorization`, `admission`, `validation`, `etcd`).
    pub stage: &'static str,
    /// Start (ms).
    pub start: Time,
    /// End (ms).
    pub end: Time,
}

/// One served request (the apiserver's audit log).
#[derive(Clone, Debug)]
pub struct AuditEntry {
    /// When it arrived.
    pub received: Time,
    /// Who sent it.
    pub client: Actor,
    /// User name ("" if anonymous).
    pub user: String,
    /// Verb.
    pub verb: Verb,
    /// Request path.
    pub path: String,
    /// HTTP status code.
    pub code: u16,
    /// Pipeline spans.
    pub spans: Vec<Span>,
    /// The etcd revision a successful write stored (the object's new resourceVersion),
    /// so the inspector can tell which request wrote a revision.
    pub revision: Option<u64>,
}

#[derive(Debug)]
enum Pending {
    /// Initial (or re-) list of everything, to fill the cache.
    Load,
    /// The etcd watch request.
    Watch,
    /// A consistent read waiting for etcd's current revision.
    ReadRevision(Request),
    /// A GET served from etcd.
    Get(Request),
    /// A write in flight.
    Write(Request, WriteOp),
    /// A compaction.
    Compact,
}

/// A request being served, with what the pipeline learned so far.
#[derive(Debug)]
pub(crate) struct Request {
    pub client: Actor,
    pub req: ApiRequest,
    pub user: UserInfo,
    pub received: Time,
    pub attempt: u32,
    pub spans: Vec<Span>,
    /// An eviction whose PodDisruptionBudget has been charged: delete the pod now.
    pub pdb_charged: bool,
    /// An eviction that lost the race on its PDB: the budget as etcd returned it.
    pub fresh_pdb: Option<Arc<Object>>,
}

/// kube-apiserver.
pub struct ApiServer {
    pub(crate) rng: Rng,
    pub(crate) cache: WatchCache,
    ready: bool,
    watchers: Watchers,
    next_etcd: u64,
    etcd_watch: Option<u64>,
    /// Boxed: a `Pending` holds a whole request (~1 KB), and a map node has room for
    /// eleven, allocated at once whether used or not.
    pending: BTreeMap<u64, Box<Pending>>,
    waiting_for_cache: Vec<(u64, Request)>,
    not_ready_queue: Vec<(Actor, ApiRequest, Time)>,
    audit: VecDeque<AuditEntry>,
    served: u64,
    compact_candidate: u64,
    relists: u64,
    /// Creates that ResourceQuota admission charged and the watch cache has not seen yet
    /// (upstream charges `status.used` before the object is stored, so parallel creates
    /// cannot both take the last unit of a quota).
    pub(crate) quota_charges: Vec<(Time, Arc<Object>)>,
    /// The most pods admitted ([`ClusterConfig::max_pods`]).
    pub(crate) max_pods: usize,
    /// The etcd leases Events are written with (`--event-ttl`).
    event_leases: super::event_ttl::LeaseManager,
}

impl ApiServer {
    /// A freshly started apiserver (empty cache until it has listed etcd).
    pub fn new(config: &ClusterConfig) -> ApiServer {
        ApiServer {
            rng: Rng::stream(config.seed, "kube-apiserver"),
            cache: WatchCache::default(),
            ready: false,
            watchers: Watchers::default(),
            next_etcd: 1,
            etcd_watch: None,
            pending: BTreeMap::new(),
            waiting_for_cache: Vec::new(),
            not_ready_queue: Vec::new(),
            audit: VecDeque::new(),
            served: 0,
            compact_candidate: 0,
            relists: 0,
            quota_charges: Vec::new(),
            max_pods: config.max_pods,
            event_leases: Default::default(),
        }
    }

    /// Starts: list etcd to fill the watch cache, then watch it.
    pub fn start(&mut self, ctx: &mut Ctx) {
        self.load(ctx);
        ctx.timer(COMPACTION_INTERVAL, TIMER_COMPACT);
        ctx.timer(KUBERNETES_SERVICE_INTERVAL, TIMER_KUBERNETES_SERVICE);
    }

    /// Requests waiting for a cache that cannot load (etcd down since the apiserver
    /// started) are answered after `--request-timeout` (60 s) with upstream's 504, and
    /// dropped: a request reported as failed is never applied later.
    fn expire_not_ready(&mut self, ctx: &mut Ctx) {
        let now = ctx.now;
        let (expired, waiting): (Vec<_>, Vec<_>) = std::mem::take(&mut self.not_ready_queue)
            .into_iter()
            .partition(|(_, _, at)| now >= at + REQUEST_TIMEOUT);
        self.not_ready_queue = waiting;
        for (client, req, _) in expired {
            let s = Status::new(
                504,
                crate::api::StatusReason::Timeout,
                "Timeout: request did not complete within requested timeout - context deadline exceeded",
            );
            ctx.send(
                client,
                Payload::ApiResp(ApiResponse {
                    id: req.id,
                    result: Err(s),
                }),
            );
        }
    }

    /// kube-apiserver's `kubernetes` service controller: the `default/kubernetes`
    /// Service is created again when it is missing, through the apiserver's own
    /// loopback client (as `system:apiserver`, in `system:masters`).
    fn ensure_kubernetes_service(&mut self, ctx: &mut Ctx) {
        let missing = self
            .cache
            .get(Kind::Service, "default", "kubernetes")
            .is_none();
        let namespace_active = self
            .cache
            .get(Kind::Namespace, "", "default")
            .is_some_and(|n| n.meta().deletion_timestamp.is_none());
        if !self.ready || !missing || !namespace_active {
            return;
        }
        let svc = crate::cluster::kubernetes_service_object();
        let mut req = ApiRequest::new(Verb::Create, Kind::Service, "default", "")
            .with_body(crate::api::Body::Object(Object::from(svc)));
        req.user = Some("system:apiserver".into());
        req.groups = vec!["system:masters".into(), "system:authenticated".into()];
        self.serve(ctx, Actor::ApiServer, req);
    }

    /// Whether the cache is filled and requests are served.
    pub fn is_ready(&self) -> bool {
        self.ready
    }

    /// The watch cache (what the apiserver believes is in etcd).
    pub fn cache(&self) -> &WatchCache {
        &self.cache
    }

    /// The most recent requests, oldest first.
    pub fn audit(&self) -> impl Iterator<Item = &AuditEntry> {
        self.audit.iter()
    }

    /// Number of requests answered so far.
    pub fn served(&self) -> u64 {
        self.served
    }

    /// How many times the watch cache was rebuilt from a full list because its etcd
    /// watch fell below the compaction point.
    pub fn relists(&self) -> u64 {
        self.relists
    }

    /// Number of open client watches.
    pub fn watch_count(&self) -> usize {
        self.watchers.len()
    }

    fn etcd(&mut self, ctx: &mut Ctx, op: EtcdOp, p: Pending) -> u64 {
        let id = self.next_etcd;
        self.next_etcd += 1;
        self.pending.insert(id, Box::new(p));
        ctx.send(Actor::Etcd, Payload::Etcd(EtcdRequest { id, op }));
        id
    }

    fn load(&mut self, ctx: &mut Ctx) {
        self.etcd(
            ctx,
            EtcdOp::Range {
                key: "/registry/".into(),
                prefix: true,
                limit: 0,
                revision: 0,
            },
            Pending::Load,
        );
    }

    fn watch_etcd(&mut self, ctx: &mut Ctx, start_revision: u64) {
        let id = self.etcd(
            ctx,
            EtcdOp::Watch {
                prefix: "/registry/".into(),
                start_revision,
            },
            Pending::Watch,
        );
        self.etcd_watch = Some(id);
    }

    /// Handles a message.
    pub fn handle(&mut self, ctx: &mut Ctx, from: Actor, payload: Payload) {
        match payload {
            Payload::Api(req) => {
                if self.ready {
                    self.serve(ctx, from, *req);
                } else {
                    self.not_ready_queue.push((from, *req, ctx.now));
                }
            }
            Payload::EtcdResp(resp) => self.on_etcd(ctx, resp),
            Payload::EtcdWatch(batch) => self.on_etcd_watch(ctx, batch),
            Payload::ClientGone(client) => self.watchers.remove_client(client),
            Payload::KubeletApi(req) => self.proxy_to_kubelet(ctx, from, req),
            Payload::KubeletApiResp(resp) => self.proxy_response(ctx, resp),
            Payload::ConnectionLost => {
                // etcd went away: the watch is gone; in-flight etcd requests fail.
                self.etcd_watch = None;
                let ids: Vec<u64> = self.pending.keys().copied().collect();
                for id in ids {
                    self.on_etcd(
                        ctx,
                        EtcdResponse {
                            id,
                            result: Err("connection refused".into()),
                        },
                    );
                }
                ctx.timer(SECOND, TIMER_RESYNC);
            }
            Payload::Timer(TIMER_RESYNC) => {
                self.expire_not_ready(ctx);
                if self.etcd_watch.is_none()
                    && !self
                        .pending
                        .values()
                        .any(|p| matches!(**p, Pending::Load | Pending::Watch))
                {
                    if self.ready {
                        // Like the cacher's reflector: resume the watch where the cache
                        // stopped; only a compacted revision forces a relist.
                        self.watch_etcd(ctx, self.cache.revision() + 1);
                    } else {
                        self.load(ctx);
                    }
                }
            }
            Payload::Timer(TIMER_KUBERNETES_SERVICE) => {
                self.ensure_kubernetes_service(ctx);
                ctx.timer(KUBERNETES_SERVICE_INTERVAL, TIMER_KUBERNETES_SERVICE);
            }
            Payload::Timer(TIMER_COMPACT) => {
                if self.compact_candidate > 0 {
                    self.etcd(
                        ctx,
                        EtcdOp::Compact {
                            revision: self.compact_candidate,
                        },
                        Pending::Compact,
                    );
                }
                self.compact_candidate = self.cache.revision();
                ctx.timer(COMPACTION_INTERVAL, TIMER_COMPACT);
            }
            _ => {}
        }
    }

    fn respond(&mut self, ctx: &mut Ctx, r: Request, result: Result<ApiResult, Status>) {
        let result = match r.req.kind {
            Kind::Custom(_) => result.map(|res| at_version(res, r.req.kind)),
            _ => result,
        };
        let code = match &result {
            Ok(_) if r.req.verb == Verb::Create => 201,
            Ok(_) => 200,
            Err(s) => s.code,
        };
        let revision = match &result {
            Ok(ApiResult::Object(o))
                if !matches!(r.req.verb, Verb::Get | Verb::List | Verb::Watch) =>
            {
                Some(o.resource_version()).filter(|rv| *rv > 0)
            }
            _ => None,
        };
        let mut spans = r.spans;
        if let Some(last) = spans.last() {
            if last.end < ctx.now {
                spans.push(Span {
                    stage: "response",
                    start: last.end,
                    end: ctx.now,
                });
            }
        }
        self.served += 1;
        self.audit.push_back(AuditEntry {
            received: r.received,
            client: r.client,
            user: r.user.name.clone(),
            verb: r.req.verb,
            path: r.req.path(),
            code,
            spans,
            revision,
        });
        if self.audit.len() > AUDIT_CAPACITY {
            self.audit.pop_front();
        }
        ctx.send(
            r.client,
            Payload::ApiResp(ApiResponse {
                id: r.req.id,
                result,
            }),
        );
    }

    fn serve(&mut self, ctx: &mut Ctx, client: Actor, req: ApiRequest) {
        let now = ctx.now;
        let user = match authz::authenticate(&req, &self.cache) {
            Ok(u) => u,
            Err(s) => {
                let user = UserInfo {
                    name: String::new(),
                    groups: Vec::new(),
                };
                let r = Request {
                    client,
                    req,
                    user,
                    received: now,
                    attempt: 0,
                    spans: vec![span("authentication", now)],
                    pdb_charged: false,
                    fresh_pdb: None,
                };
                return self.respond(ctx, r, Err(s));
            }
        };
        let mut r = Request {
            client,
            req,
            user,
            received: now,
            attempt: 0,
            spans: vec![span("authentication", now)],
            pdb_charged: false,
            fresh_pdb: None,
        };
        let attrs = Attributes::of(&r.req);
        r.spans.push(span("authorization", now));
        if !authz::authorize(&r.user, &attrs, &self.cache) {
            let s = authz::forbidden(&r.user, &attrs);
            return self.respond(ctx, r, Err(s));
        }
        if r.req.kind == Kind::SelfSubjectAccessReview {
            return self.access_review(ctx, r);
        }
        if matches!(r.req.kind, Kind::Custom(_))
            && crate::apiserver::crd::served(&self.cache, r.req.kind).is_none()
        {
            let s = crate::api::Status::new(
                404,
                crate::api::StatusReason::NotFound,
                "the server could not find the requested resource",
            );
            return self.respond(ctx, r, Err(s));
        }
        match r.req.verb {
            Verb::Get => {
                let key = crate::object::ObjectKey::new(r.req.kind, &r.req.namespace, &r.req.name)
                    .etcd_key();
                r.spans.push(Span {
                    stage: "etcd",
                    start: now,
                    end: now,
                });
                self.etcd(
                    ctx,
                    EtcdOp::Range {
                        key,
                        prefix: false,
                        limit: 0,
                        revision: 0,
                    },
                    Pending::Get(r),
                );
            }
            Verb::List => {
                // Consistent read from cache: learn etcd's revision, wait for the cache.
                r.spans.push(Span {
                    stage: "etcd",
                    start: now,
                    end: now,
                });
                let key = format!("/registry/{}/", r.req.kind.info().etcd_prefix);
                self.etcd(
                    ctx,
                    EtcdOp::Range {
                        key,
                        prefix: true,
                        limit: 1,
                        revision: 0,
                    },
                    Pending::ReadRevision(r),
                );
            }
            Verb::Watch => self.start_watch(ctx, r),
            _ => self.write(ctx, r, None),
        }
    }

    /// Computes a write against `current` (the cache's copy, or etcd's after a lost race)
    /// and sends its transaction.
    fn write(&mut self, ctx: &mut Ctx, mut r: Request, fresh: Option<Arc<Object>>) {
        let now = ctx.now;
        let current = match fresh {
            Some(o) => Some(o),
            None => self
                .cache
                .get(r.req.kind, &r.req.namespace, &r.req.name)
                .cloned(),
        };
        r.spans.push(span("admission", now));
        let dry_current = current.clone().filter(|_| r.req.options.dry_run);
        let computed = write::compute(self, &r, current, now);
        r.spans.push(span("validation", now));
        match computed {
            Err(s) => self.respond(ctx, r, Err(s)),
            Ok(WriteOp::Respond(result)) => self.respond(ctx, r, Ok(result)),
            // `dryRun=All`: admitted, defaulted and validated, never stored.
            Ok(WriteOp::Create { obj, .. })
            | Ok(WriteOp::Update {
                obj,
                status_only: false,
                ..
            }) if r.req.options.dry_run => self.respond(ctx, r, Ok(ApiResult::Object(obj))),
            Ok(WriteOp::Delete { .. }) if dry_current.is_some() => {
                if let Some(obj) = dry_current {
                    self.respond(ctx, r, Ok(ApiResult::Object(obj)))
                }
            }
            Ok(mut op) => {
                let (key, expect, mut txn) = op.txn();
                if r.req.kind == Kind::Event {
                    if let TxnOp::Put(obj) = txn {
                        let lease = self.event_leases.lease(now, super::event_ttl::EVENT_TTL);
                        txn = TxnOp::PutLeased(obj, lease);
                    }
                }
                r.spans.push(Span {
                    stage: "etcd",
                    start: now,
                    end: now,
                });
                self.etcd(
                    ctx,
                    EtcdOp::Txn {
                        key,
                        expect,
                        op: txn,
                    },
                    Pending::Write(r, op),
                );
            }
        }
    }

    fn on_etcd(&mut self, ctx: &mut Ctx, resp: EtcdResponse) {
        let Some(p) = self.pending.remove(&resp.id) else {
            return;
        };
        match *p {
            Pending::Load => match resp.result {
                Ok(EtcdResult::Range { kvs, revision, .. }) => {
                    let was_ready = self.ready;
                    self.cache.load(kvs, revision);
                    if was_ready {
                        self.expire_all_watches(ctx);
                    }
                    self.watch_etcd(ctx, revision + 1);
                    self.ready = true;
                    for (client, req, _) in std::mem::take(&mut self.not_ready_queue) {
                        self.serve(ctx, client, req);
                    }
                }
                _ => ctx.timer(SECOND, TIMER_RESYNC),
            },
            Pending::Watch => {
                if resp.result.is_err() {
                    self.etcd_watch = None;
                    ctx.timer(SECOND, TIMER_RESYNC);
                }
            }
            Pending::Compact => {}
            Pending::ReadRevision(mut r) => match resp.result {
                Ok(EtcdResult::Range { revision, .. }) => {
                    close_span(&mut r, ctx.now);
                    if self.cache.revision() >= revision {
                        self.finish_list(ctx, r);
                    } else {
                        self.waiting_for_cache.push((revision, r));
                    }
                }
                Ok(_) => self.respond(ctx, r, Err(Status::internal("unexpected etcd response"))),
                Err(e) => {
                    let s = etcd_error(&e);
                    self.respond(ctx, r, Err(s));
                }
            },
            Pending::Get(mut r) => {
                close_span(&mut r, ctx.now);
                match resp.result {
                    Ok(EtcdResult::Range { kvs, .. }) => match kvs.into_iter().next() {
                        Some(kv) => {
                            let o = with_rv(&kv.value, kv.mod_revision);
                            self.respond(ctx, r, Ok(ApiResult::Object(o)));
                        }
                        None => {
                            let s = Status::not_found(r.req.kind, &r.req.name);
                            self.respond(ctx, r, Err(s));
                        }
                    },
                    Ok(_) => {
                        self.respond(ctx, r, Err(Status::internal("unexpected etcd response")))
                    }
                    Err(e) => {
                        let s = etcd_error(&e);
                        self.respond(ctx, r, Err(s));
                    }
                }
            }
            Pending::Write(mut r, op) => {
                close_span(&mut r, ctx.now);
                match resp.result {
                    Ok(EtcdResult::Txn {
                        succeeded: true, ..
                    }) if matches!(op, WriteOp::PdbDecrement { .. }) => {
                        // The budget is charged; now the eviction deletes the pod.
                        r.pdb_charged = true;
                        self.write(ctx, r, None);
                    }
                    Ok(EtcdResult::Txn {
                        succeeded: true,
                        revision,
                        kv,
                        prev,
                    }) => {
                        let result = op.success(revision, kv, prev);
                        self.respond(ctx, r, Ok(result));
                    }
                    Ok(EtcdResult::Txn {
                        succeeded: false,
                        kv,
                        ..
                    }) => self.lost_race(ctx, r, op, kv),
                    Ok(_) => {
                        self.respond(ctx, r, Err(Status::internal("unexpected etcd response")))
                    }
                    Err(e) => {
                        let s = etcd_error(&e);
                        self.respond(ctx, r, Err(s));
                    }
                }
            }
        }
    }

    /// A transaction's compare failed: report the conflict, or retry on the fresh value.
    fn lost_race(&mut self, ctx: &mut Ctx, mut r: Request, op: WriteOp, current: Option<KeyValue>) {
        if let WriteOp::PdbDecrement { key, .. } = &op {
            // eviction.go retries checkAndDecrement on a fresh copy of the budget.
            r.attempt += 1;
            let name = key.rsplit('/').next().unwrap_or_default().to_string();
            if r.attempt >= MAX_WRITE_ATTEMPTS {
                let msg = format!(
                    "Timeout: couldn't update PodDisruptionBudget \"{name}\" due to conflicts"
                );
                let s = Status::new(504, crate::api::StatusReason::Timeout, msg);
                return self.respond(ctx, r, Err(s));
            }
            r.fresh_pdb = current.map(|kv| with_rv(&kv.value, kv.mod_revision));
            return self.write(ctx, r, None);
        }
        if let Some(s) = op.conflict_status(&r.req, current.is_some()) {
            return self.respond(ctx, r, Err(s));
        }
        r.attempt += 1;
        if r.attempt >= MAX_WRITE_ATTEMPTS {
            let s = Status::conflict(r.req.kind, &r.req.name);
            return self.respond(ctx, r, Err(s));
        }
        let fresh = current.map(|kv| with_rv(&kv.value, kv.mod_revision));
        match fresh {
            Some(o) => self.write(ctx, r, Some(o)),
            None => {
                let s = Status::not_found(r.req.kind, &r.req.name);
                self.respond(ctx, r, Err(s));
            }
        }
    }

    fn on_etcd_watch(&mut self, ctx: &mut Ctx, batch: EtcdWatchBatch) {
        if Some(batch.watch_id) != self.etcd_watch {
            return;
        }
        match batch.events {
            Ok(events) => {
                for ev in &events {
                    let ce = self.cache.apply(ev, ctx.now);
                    self.watchers.fan_out(ctx, &ce);
                }
                self.release_waiting(ctx);
            }
            Err(_) => {
                // `mvcc: required revision has been compacted`: what happened in between
                // is gone from etcd's history, so list everything again; client watches
                // end with 410 Gone and their informers relist too.
                self.etcd_watch = None;
                self.relists += 1;
                self.load(ctx);
            }
        }
    }

    fn release_waiting(&mut self, ctx: &mut Ctx) {
        if self.waiting_for_cache.is_empty() {
            return;
        }
        let rev = self.cache.revision();
        let (ready, wait): (Vec<_>, Vec<_>) = std::mem::take(&mut self.waiting_for_cache)
            .into_iter()
            .partition(|(r, _)| *r <= rev);
        self.waiting_for_cache = wait;
        for (_, r) in ready {
            self.finish_list(ctx, r);
        }
    }

    /// Draws the 5-character suffix `names.SimpleNameGenerator` appends to generateName.
    pub(crate) fn random_suffix(&mut self) -> String {
        const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
        (0..5)
            .map(|_| ALPHABET[self.rng.intn(ALPHABET.len() as u64) as usize] as char)
            .collect()
    }
}

/// A custom resource result at the version the request addressed.
fn at_version(res: ApiResult, kind: Kind) -> ApiResult {
    let conv = |o: Arc<Object>| Arc::new(crate::apiserver::crd::admit::at_version(&o, kind));
    match res {
        ApiResult::Object(o) => ApiResult::Object(conv(o)),
        ApiResult::List {
            items,
            resource_version,
        } => ApiResult::List {
            items: items.into_iter().map(conv).collect(),
            resource_version,
        },
        other => other,
    }
}

fn span(stage: &'static str, now: Time) -> Span {
    Span {
        stage,
        start: now,
        end: now,
    }
}

fn close_span(r: &mut Request, now: Time) {
    if let Some(s) = r.spans.iter_mut().rev().find(|s| s.stage == "etcd") {
        s.end = now;
    }
}

/// How the apiserver reports an etcd failure to its client.
fn etcd_error(e: &str) -> Status {
    if e.contains("connection refused") || e.contains("deadline") {
        Status::new(
            500,
            crate::api::StatusReason::Unknown,
            "etcdserver: request timed out",
        )
    } else {
        Status::internal(format!("Internal error occurred: {e}"))
    }
}
