//! The kubelet: watches the pods bound to its node, runs a worker per pod against
//! containerd, mounts volumes, probes containers, reports pod status, node status and
//! Lease heartbeats, records events, and writes its journal.

mod containers;
mod node_status;
mod prepare;
mod probes;
mod sync;

use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_openapi::api::core::v1::Pod;

use crate::api::{ApiRequest, ApiResponse, Body, PatchType, Subresource, Verb};
use crate::client::{Change, Client, Informer, Informers, Recorder, Timers};
use crate::cluster::{ClusterConfig, NodeConfig};
use crate::message::{Actor, Ctx, Payload};
use crate::node::journal::{q, Level, LogLine, Mount};
use crate::node::logs::LogEntry;
use crate::node::podstatus;
use crate::node::podworker::{pod_key, PodWorker};
use crate::node::prober::{ProbeKind, ProbeWorker};
use crate::node::runtime::{CriOp, CriRequest, CriResponse};
use crate::object::{Kind, Object};
use crate::rng::Rng;
use crate::selector::FieldSelector;
use crate::time::{Time, MINUTE, SECOND};

pub use node_status::HEARTBEAT;
pub use probes::ProbeView;

/// Periodic resync of every pod worker (`syncFrequency`).
const RESYNC: Time = MINUTE;

/// What a kubelet timer means.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Timer {
    /// Renew the Lease, check containerd, report node status.
    Heartbeat,
    /// `syncFrequency`: every pod worker syncs.
    Resync,
    /// An informer's list/watch backoff ended.
    Informer(Kind),
    /// A pod worker asked to be synced again (a backoff, a grace period).
    Pod(String),
    /// A probe of one container is due.
    Probe(String, String, ProbeKind),
}

#[derive(Debug)]
enum Inflight {
    Cri(String),
    Health,
    /// A kubelet API call handed to containerd: the request's id and who asked.
    Api(u64, Actor),
}

#[derive(Debug)]
enum ApiPurpose {
    Status(String),
    FinalDelete(String),
    NodeStatus,
    NodeGet,
    /// A Lease renewal (an update).
    Lease,
    /// Reading the Lease before renewing it.
    LeaseGet,
    Register,
    LeaseCreate,
    Fetch(String, String),
}

/// A change to the machine's mount table or directories, applied by the world.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OsOp {
    /// A mount was made.
    Mount(Mount),
    /// A directory was created.
    Mkdir(String),
    /// A file was written (a ConfigMap or Secret key in its volume's directory).
    WriteFile {
        /// Absolute path on the machine.
        path: String,
        /// Contents.
        content: String,
    },
    /// A file was removed (a key no longer in the volume's ConfigMap or Secret).
    RemoveFile(String),
    /// Everything of a pod was torn down (mounts and directories).
    RemovePod(String),
}

/// The kubelet of one node.
pub struct Kubelet {
    node: u32,
    name: String,
    ip: String,
    gateway: String,
    config: NodeConfig,
    client: Client,
    recorder: Recorder,
    /// Pods bound to this node, and Services (for the containers' Service links).
    informers: Informers,
    workers: BTreeMap<String, PodWorker>,
    cri_next: u64,
    cri_inflight: BTreeMap<u64, Inflight>,
    api_inflight: BTreeMap<u64, ApiPurpose>,
    timers: Timers<Timer>,
    /// A hash of the status last sent for each pod (the status manager's cache: an
    /// unchanged status is not sent again).
    last_status: BTreeMap<String, u64>,
    runtime_ok: bool,
    last_node_report: Option<(Time, bool)>,
    probes: BTreeMap<(String, String, ProbeKind), ProbeWorker>,
    started_at: Time,
    rng: Rng,
    images: serde_json::Value,
    images_dirty: bool,
    /// The Lease as the last renewal (or its creation) returned it.
    latest_lease: Option<k8s_openapi::api::coordination::v1::Lease>,
    /// Lines for the kubelet's journal, taken by the world after each message.
    pub journal: Vec<LogLine>,
    /// Mount-table changes, applied by the world.
    pub os_ops: Vec<OsOp>,
    /// Lines servers wrote while being probed (container id → line), applied by the world.
    pub container_logs: Vec<(String, LogEntry)>,
}

impl Kubelet {
    /// A freshly started kubelet for node `n`.
    pub fn new(
        n: u32,
        config: &NodeConfig,
        ip: &str,
        pod_cidr: &str,
        cluster: &ClusterConfig,
    ) -> Kubelet {
        let name = config.name.clone();
        let gateway = pod_cidr
            .split('/')
            .next()
            .unwrap_or("")
            .trim_end_matches(".0")
            .to_string()
            + ".1";
        Kubelet {
            node: n,
            ip: ip.to_string(),
            gateway,
            config: config.clone(),
            client: Client::new(&format!("system:node:{name}"), &["system:nodes"]),
            recorder: Recorder::new("kubelet", Some(&name)),
            informers: Informers::default(),
            name,
            workers: BTreeMap::new(),
            cri_next: 1,
            cri_inflight: BTreeMap::new(),
            api_inflight: BTreeMap::new(),
            timers: Timers::new(0),
            last_status: BTreeMap::new(),
            runtime_ok: true,
            last_node_report: None,
            probes: BTreeMap::new(),
            started_at: 0,
            images: serde_json::Value::Null,
            images_dirty: false,
            latest_lease: None,
            rng: Rng::stream(cluster.seed ^ u64::from(n), "kubelet-prober"),
            journal: Vec::new(),
            os_ops: Vec::new(),
            container_logs: Vec::new(),
        }
    }

    /// Starts: watch pods, report node status and renew the Lease.
    pub fn start(&mut self, ctx: &mut Ctx) {
        self.started_at = ctx.now;
        self.klog(
            ctx.now,
            Level::Info,
            "server.go:1263",
            "\"Started kubelet\"".into(),
        );
        self.timers = Timers::new(ctx.now);
        self.informers = Informers::default();
        let pods = self.timers.standing(Timer::Informer(Kind::Pod));
        self.informers.insert(
            Informer::new(Kind::Pod, pods)
                .with_fields(FieldSelector::eq("spec.nodeName", &self.name)),
        );
        let services = self.timers.standing(Timer::Informer(Kind::Service));
        self.informers
            .insert(Informer::new(Kind::Service, services));
        self.informers.start(ctx, &mut self.client);
        self.heartbeat(ctx);
        self.timers.set(ctx, RESYNC, Timer::Resync);
    }

    /// Pod workers by UID (for inspection).
    pub fn workers(&self) -> &BTreeMap<String, PodWorker> {
        &self.workers
    }

    /// The node name.
    pub fn node_name(&self) -> &str {
        &self.name
    }

    /// Whether a container's readiness probe (if any) currently passes.
    pub fn probe_result(&self, uid: &str, container: &str, kind: ProbeKind) -> Option<bool> {
        self.probes
            .get(&(uid.to_string(), container.to_string(), kind))
            .and_then(|w| w.result)
    }

    fn klog(&mut self, at: Time, level: Level, source: &'static str, msg: String) {
        self.journal.push(LogLine::klog(at, level, source, msg));
    }

    fn api(&mut self, ctx: &mut Ctx, req: ApiRequest, p: ApiPurpose) {
        let id = self.client.send(ctx, req);
        self.api_inflight.insert(id, p);
    }

    fn cri(&mut self, ctx: &mut Ctx, op: CriOp, purpose: Inflight) -> u64 {
        self.cri_after(ctx, 0, op, purpose)
    }

    fn cri_after(&mut self, ctx: &mut Ctx, delay: Time, op: CriOp, purpose: Inflight) -> u64 {
        let id = self.cri_next;
        self.cri_next += 1;
        self.cri_inflight.insert(id, purpose);
        ctx.send_after(
            delay,
            Actor::Runtime(self.node),
            Payload::Cri(CriRequest { id, op }),
        );
        id
    }

    fn pod_timer(&mut self, ctx: &mut Ctx, delay: Time, uid: &str) {
        self.timers.set(ctx, delay, Timer::Pod(uid.to_string()));
    }

    /// Handles a message.
    pub fn handle(&mut self, ctx: &mut Ctx, from: Actor, payload: Payload) {
        match payload {
            Payload::ApiResp(resp) if self.client.on_event_response(ctx, &resp) => {}
            Payload::ApiResp(resp) => {
                match self.informers.on_response(ctx, &mut self.client, &resp) {
                    Some((Kind::Pod, changes)) => self.on_changes(ctx, changes),
                    Some(_) => {}
                    None => self.on_api_response(ctx, resp),
                }
            }
            Payload::Watch(ev) => {
                if let Some((Kind::Pod, changes)) =
                    self.informers.on_watch(ctx, &mut self.client, &ev)
                {
                    self.on_changes(ctx, changes);
                }
            }
            Payload::ConnectionLost => {
                self.informers.on_connection_lost(ctx);
                let lost: Vec<(u64, ApiPurpose)> =
                    std::mem::take(&mut self.api_inflight).into_iter().collect();
                for (id, p) in lost {
                    match p {
                        ApiPurpose::Fetch(uid, key) => {
                            self.on_fetched(ctx, &uid, &key, Err("connection refused".into()));
                        }
                        // A final delete or a status update cut off with the connection
                        // failed like any other: retried, not forgotten (a lost final
                        // delete left the pod Terminating for ever).
                        p @ (ApiPurpose::FinalDelete(_) | ApiPurpose::Status(_)) => {
                            self.api_inflight.insert(id, p);
                            let s = crate::api::Status::transport(
                                crate::api::Transport::Reset,
                                "connection refused",
                            );
                            self.on_api_response(ctx, ApiResponse { id, result: Err(s) });
                        }
                        _ => {}
                    }
                }
            }
            Payload::CriResp(resp) => self.on_cri(ctx, resp),
            Payload::KubeletApi(req) => {
                let client = req.client.unwrap_or(from);
                self.cri(ctx, CriOp::Node(req.call), Inflight::Api(req.id, client));
            }
            Payload::Timer(token) => match self.timers.fired(token) {
                Some(Timer::Heartbeat) => self.heartbeat(ctx),
                Some(Timer::Resync) => {
                    let uids: Vec<String> = self.workers.keys().cloned().collect();
                    for w in self.workers.values_mut() {
                        w.volumes.remount = true;
                    }
                    for uid in uids {
                        self.sync(ctx, &uid);
                    }
                    self.timers.set(ctx, RESYNC, Timer::Resync);
                }
                Some(Timer::Informer(kind)) => {
                    self.informers.on_timer(ctx, &mut self.client, kind, token)
                }
                Some(Timer::Probe(uid, container, kind)) => {
                    self.on_probe_timer(ctx, uid, container, kind)
                }
                Some(Timer::Pod(uid)) => self.sync(ctx, &uid),
                None => {}
            },
            _ => {}
        }
    }

    fn on_changes(&mut self, ctx: &mut Ctx, changes: Vec<Change>) {
        for c in changes {
            let o = c.object().clone();
            let uid = o.meta().uid.clone().unwrap_or_default();
            let key = match &*o {
                Object::Pod(p) => pod_key(p),
                _ => String::new(),
            };
            match c {
                Change::Added(_) | Change::Updated(..) => {
                    let is_new = !self.workers.contains_key(&uid);
                    let deleting = o.meta().deletion_timestamp.is_some();
                    let was_deleting = c
                        .old()
                        .is_some_and(|x| x.meta().deletion_timestamp.is_some());
                    let verb = if is_new {
                        "ADD"
                    } else if deleting && !was_deleting {
                        "DELETE"
                    } else {
                        "UPDATE"
                    };
                    if is_new
                        || verb == "DELETE"
                        || matches!(c, Change::Updated(..)) && spec_changed(&c)
                    {
                        self.klog(
                            ctx.now,
                            Level::Info,
                            "kubelet.go:2477",
                            format!("\"SyncLoop {verb}\" source=\"api\" pods=[{}]", q(&key)),
                        );
                    }
                    let w = self
                        .workers
                        .entry(uid.clone())
                        .or_insert_with(|| PodWorker::new(&uid, o.clone(), ctx.now));
                    w.pod = Some(o);
                    // The pod config source ignores status-only updates.
                    if !is_new && verb == "UPDATE" && !spec_changed(&c) {
                        continue;
                    }
                }
                Change::Deleted(_) => {
                    self.klog(
                        ctx.now,
                        Level::Info,
                        "kubelet.go:2480",
                        format!("\"SyncLoop REMOVE\" source=\"api\" pods=[{}]", q(&key)),
                    );
                    if let Some(w) = self.workers.get_mut(&uid) {
                        w.pod = None;
                    }
                }
            }
            self.sync(ctx, &uid);
        }
    }

    fn pod_object(&self, uid: &str) -> Option<Arc<Object>> {
        self.workers.get(uid)?.pod.clone()
    }

    fn event_log(
        &mut self,
        at: Time,
        p: &Object,
        field: &str,
        type_: &str,
        reason: &str,
        msg: &str,
    ) {
        let field = if field.is_empty() {
            String::new()
        } else {
            format!(" fieldPath={}", q(field))
        };
        self.klog(
            at,
            Level::Info,
            "event.go:389",
            format!(
                "\"Event occurred\" object={}{field} kind=\"Pod\" apiVersion=\"v1\" type={} reason={} message={}",
                q(&format!("{}/{}", p.namespace(), p.name())),
                q(type_),
                q(reason),
                q(msg)
            ),
        );
    }

    fn pod_event(&mut self, ctx: &mut Ctx, uid: &str, type_: &str, reason: &str, msg: &str) {
        if let Some(p) = self.pod_object(uid) {
            self.event_log(ctx.now, &p, "", type_, reason, msg);
            self.recorder
                .event(ctx, &mut self.client, &p, type_, reason, msg);
        }
    }

    fn container_event(
        &mut self,
        ctx: &mut Ctx,
        uid: &str,
        container: &str,
        type_: &str,
        reason: &str,
        msg: &str,
    ) {
        let Some(p) = self.pod_object(uid) else {
            return;
        };
        let init = match &*p {
            Object::Pod(pod) => pod
                .spec
                .as_ref()
                .and_then(|s| s.init_containers.as_ref())
                .is_some_and(|ic| ic.iter().any(|c| c.name == container)),
            _ => false,
        };
        let path = if init {
            format!("spec.initContainers{{{container}}}")
        } else {
            format!("spec.containers{{{container}}}")
        };
        self.event_log(ctx.now, &p, &path, type_, reason, msg);
        self.recorder
            .container_event(ctx, &mut self.client, &p, &path, type_, reason, msg);
    }

    /// The status manager: send the pod's status if it changed.
    fn report_status(&mut self, ctx: &mut Ctx, uid: &str) {
        let view = self.probe_view(uid);
        let Some(w) = self.workers.get(uid) else {
            return;
        };
        if w.terminated {
            return;
        }
        let Some(pod_obj) = w.pod.clone() else { return };
        let Some(status) = podstatus::generate(w, &self.ip, ctx.now, &view) else {
            return;
        };
        let value = serde_json::to_value(&status).unwrap_or_default();
        let sent = crate::rng::fnv1a_json(&value);
        if self.last_status.get(uid) == Some(&sent) {
            return;
        }
        let current = match &*pod_obj {
            Object::Pod(p) => p.status.as_ref() == Some(&status),
            _ => false,
        };
        if current {
            return;
        }
        let was_running = match &*pod_obj {
            Object::Pod(p) => p.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Running"),
            _ => false,
        };
        if !was_running && status.phase.as_deref() == Some("Running") {
            if let Object::Pod(p) = &*pod_obj {
                self.observe_startup(ctx.now, p);
            }
        }
        self.last_status.insert(uid.to_string(), sent);
        let patch = serde_json::json!({"metadata": {"uid": uid}, "status": value});
        let req = ApiRequest::new(Verb::Patch, Kind::Pod, pod_obj.namespace(), pod_obj.name())
            .with_subresource(Subresource::Status)
            .with_body(Body::Patch(PatchType::Merge, patch));
        self.api(ctx, req, ApiPurpose::Status(uid.to_string()));
    }

    fn observe_startup(&mut self, now: Time, p: &Pod) {
        let created = p
            .metadata
            .creation_timestamp
            .as_ref()
            .map_or(0, crate::time::from_k8s_time);
        let e2e = now.saturating_sub(created);
        self.klog(
            now,
            Level::Info,
            "pod_startup_latency_tracker.go:104",
            format!(
                "\"Observed pod startup duration\" pod={} podStartSLOduration={:.3} podStartE2EDuration={}",
                q(&pod_key(p)),
                e2e as f64 / SECOND as f64,
                q(&crate::time::format_duration(e2e))
            ),
        );
    }

    fn final_delete(&mut self, ctx: &mut Ctx, uid: &str) {
        let Some(w) = self.workers.get_mut(uid) else {
            return;
        };
        w.terminated = true;
        let Some(p) = w.pod.clone() else { return };
        let mut req = ApiRequest::new(Verb::Delete, Kind::Pod, p.namespace(), p.name());
        req.options.grace_period_seconds = Some(0);
        self.api(ctx, req, ApiPurpose::FinalDelete(uid.to_string()));
    }

    fn on_api_response(&mut self, ctx: &mut Ctx, resp: ApiResponse) {
        let Some(p) = self.api_inflight.remove(&resp.id) else {
            return;
        };
        match (p, &resp.result) {
            (ApiPurpose::Fetch(uid, key), r) => {
                let r = match r {
                    Ok(crate::api::ApiResult::Object(o)) => Ok(o.clone()),
                    Ok(_) => Err("unexpected response".to_string()),
                    Err(s) => Err(s.message.clone()),
                };
                self.on_fetched(ctx, &uid, &key, r);
            }
            (ApiPurpose::Status(uid), Err(_)) => {
                self.last_status.remove(&uid);
                self.pod_timer(ctx, SECOND, &uid);
            }
            (ApiPurpose::FinalDelete(uid), Err(s)) if !s.is_not_found() => {
                if let Some(w) = self.workers.get_mut(&uid) {
                    w.terminated = false;
                }
                self.pod_timer(ctx, SECOND, &uid);
            }
            (
                p @ (ApiPurpose::NodeStatus
                | ApiPurpose::NodeGet
                | ApiPurpose::Lease
                | ApiPurpose::LeaseGet
                | ApiPurpose::LeaseCreate
                | ApiPurpose::Register),
                r,
            ) => {
                self.on_node_response(ctx, p, r);
            }
            _ => {}
        }
    }

    /// The pods this kubelet knows (for `crictl pods` and the diagram).
    pub fn known_pods(&self) -> Vec<&Pod> {
        self.workers.values().filter_map(|w| w.pod()).collect()
    }
}

fn spec_changed(c: &Change) -> bool {
    match c {
        Change::Updated(old, new) => match (&**old, &**new) {
            (Object::Pod(a), Object::Pod(b)) => {
                a.spec != b.spec || a.metadata.labels != b.metadata.labels
            }
            _ => false,
        },
        _ => false,
    }
}

/// imagePullPolicy defaulting: `Always` for `:latest` or untagged, else `IfNotPresent`.
pub fn default_pull_policy(image: &str) -> String {
    let r = crate::node::images::parse(image);
    if r.tag == "latest" {
        "Always".into()
    } else {
        "IfNotPresent".into()
    }
}

impl std::fmt::Debug for Kubelet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Kubelet").finish_non_exhaustive()
    }
}

impl Kubelet {
    fn on_cri(&mut self, ctx: &mut Ctx, resp: CriResponse) {
        if resp.id == 0 {
            // Evented PLEG: a container changed state.
            if let Ok(crate::node::runtime::CriResult::ContainerEvent { pod_uid }) = &resp.result {
                self.sync(ctx, &pod_uid.clone());
            }
            return;
        }
        match self.cri_inflight.remove(&resp.id) {
            Some(Inflight::Health) => {
                self.runtime_ok = resp.result.is_ok();
                if let Ok(crate::node::runtime::CriResult::Images(list)) = resp.result {
                    self.set_images(list);
                }
                self.report_node_status(ctx);
            }
            Some(Inflight::Cri(uid)) => self.on_action_result(ctx, &uid, resp.result),
            Some(Inflight::Api(id, client)) => {
                let result = match resp.result {
                    Ok(crate::node::runtime::CriResult::Node(reply)) => Ok(reply),
                    Ok(_) => Err("unexpected runtime answer".to_string()),
                    Err(e) => Err(e),
                };
                let resp = crate::node::kubelet_api::KubeletResponse { id, client, result };
                ctx.send(Actor::ApiServer, Payload::KubeletApiResp(resp));
            }
            None => {}
        }
    }
}
