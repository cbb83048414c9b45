//! The kubelet: watches the pods bound to its node, runs a worker per pod against
//! containerd, reports pod status, node status and Lease heartbeats, and records events.

use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_openapi::api::core::v1::Pod;

use crate::api::{ApiRequest, ApiResponse, ApiResult, Body, PatchType, Subresource, Verb};
use crate::client::recorder::{NORMAL, WARNING};
use crate::client::{Change, Client, Informer, Recorder};
use crate::cluster::{ClusterConfig, NodeConfig};
use crate::node::podstatus;
use crate::node::podworker::{pod_ref, Action, Backoff, PodWorker, Waiting};
use crate::node::runtime::{CriOp, CriRequest, CriResponse, CriResult, PAUSE_IMAGE};
use crate::object::{Kind, Object};
use crate::selector::FieldSelector;
use crate::time::{format_duration, k8s_micro_time, k8s_time, Time, MINUTE, SECOND};
use crate::world::{Actor, Ctx, Payload};

/// `nodeStatusUpdateFrequency` and the Lease renew interval (¼ of 40 s).
pub const HEARTBEAT: Time = 10 * SECOND;
/// `nodeStatusReportFrequency`.
const STATUS_REPORT: Time = 5 * MINUTE;
/// Periodic resync of every pod worker (`syncFrequency`).
const RESYNC: Time = MINUTE;

const TIMER_HEARTBEAT: u64 = 1;
const TIMER_RESYNC: u64 = 2;
const TIMER_INFORMER: u64 = 3;
const TIMER_POD_BASE: u64 = 1 << 32;

#[derive(Debug)]
enum Inflight {
    Cri(String),
    Health,
}

#[derive(Debug)]
enum ApiPurpose {
    Status(String),
    FinalDelete(String),
    NodeStatus,
    Lease,
    Register,
    LeaseCreate,
}

/// The kubelet of one node.
pub struct Kubelet {
    node: u32,
    name: String,
    ip: String,
    config: NodeConfig,
    client: Client,
    recorder: Recorder,
    pods: Informer,
    workers: BTreeMap<String, PodWorker>,
    cri_next: u64,
    cri_inflight: BTreeMap<u64, Inflight>,
    api_inflight: BTreeMap<u64, ApiPurpose>,
    timers: BTreeMap<u64, String>,
    next_timer: u64,
    last_status: BTreeMap<String, serde_json::Value>,
    runtime_ok: bool,
    last_node_report: Option<(Time, bool)>,
    probe_ready: BTreeMap<String, BTreeMap<String, bool>>,
}

impl Kubelet {
    /// A freshly started kubelet for node `n`.
    pub fn new(
        n: u32,
        config: &NodeConfig,
        ip: &str,
        _pod_cidr: &str,
        _cluster: &ClusterConfig,
    ) -> Kubelet {
        let name = config.name.clone();
        Kubelet {
            node: n,
            ip: ip.to_string(),
            config: config.clone(),
            client: Client::new(&format!("system:node:{name}"), &["system:nodes"]),
            recorder: Recorder::new("kubelet", Some(&name)),
            pods: Informer::new(Kind::Pod, TIMER_INFORMER)
                .with_fields(FieldSelector::eq("spec.nodeName", &name)),
            name,
            workers: BTreeMap::new(),
            cri_next: 1,
            cri_inflight: BTreeMap::new(),
            api_inflight: BTreeMap::new(),
            timers: BTreeMap::new(),
            next_timer: 0,
            last_status: BTreeMap::new(),
            runtime_ok: true,
            last_node_report: None,
            probe_ready: BTreeMap::new(),
        }
    }

    /// Starts: watch pods, report node status and renew the Lease.
    pub fn start(&mut self, ctx: &mut Ctx) {
        self.pods.start(ctx, &mut self.client);
        self.heartbeat(ctx);
        ctx.timer(RESYNC, TIMER_RESYNC);
    }

    /// Pod workers by UID (for inspection).
    pub fn workers(&self) -> &BTreeMap<String, PodWorker> {
        &self.workers
    }

    /// The node name.
    pub fn node_name(&self) -> &str {
        &self.name
    }

    fn api(&mut self, ctx: &mut Ctx, req: ApiRequest, p: ApiPurpose) {
        let id = self.client.send(ctx, req);
        self.api_inflight.insert(id, p);
    }

    fn cri(&mut self, ctx: &mut Ctx, op: CriOp, purpose: Inflight) -> u64 {
        let id = self.cri_next;
        self.cri_next += 1;
        self.cri_inflight.insert(id, purpose);
        ctx.send(
            Actor::Runtime(self.node),
            Payload::Cri(CriRequest { id, op }),
        );
        id
    }

    fn pod_timer(&mut self, ctx: &mut Ctx, delay: Time, uid: &str) {
        self.next_timer += 1;
        let t = TIMER_POD_BASE + self.next_timer;
        self.timers.insert(t, uid.to_string());
        ctx.timer(delay, t);
    }

    /// Handles a message.
    pub fn handle(&mut self, ctx: &mut Ctx, _from: Actor, payload: Payload) {
        match payload {
            Payload::ApiResp(resp) => {
                if let Some(changes) = self.pods.on_response(ctx, &mut self.client, &resp) {
                    self.on_changes(ctx, changes);
                } else {
                    self.on_api_response(ctx, resp);
                }
            }
            Payload::Watch(ev) => {
                if let Some(changes) = self.pods.on_watch(ctx, &mut self.client, &ev) {
                    self.on_changes(ctx, changes);
                }
            }
            Payload::ConnectionLost => {
                self.pods.on_connection_lost(ctx);
                self.api_inflight.clear();
            }
            Payload::CriResp(resp) => self.on_cri(ctx, resp),
            Payload::Timer(TIMER_HEARTBEAT) => self.heartbeat(ctx),
            Payload::Timer(TIMER_RESYNC) => {
                let uids: Vec<String> = self.workers.keys().cloned().collect();
                for uid in uids {
                    self.sync(ctx, &uid);
                }
                ctx.timer(RESYNC, TIMER_RESYNC);
            }
            Payload::Timer(TIMER_INFORMER) => {
                self.pods.on_timer(ctx, &mut self.client, TIMER_INFORMER);
            }
            Payload::Timer(t) if t >= TIMER_POD_BASE => {
                if let Some(uid) = self.timers.remove(&t) {
                    self.sync(ctx, &uid);
                }
            }
            _ => {}
        }
    }

    fn on_changes(&mut self, ctx: &mut Ctx, changes: Vec<Change>) {
        for c in changes {
            let o = c.object().clone();
            let uid = o.meta().uid.clone().unwrap_or_default();
            match c {
                Change::Added(_) | Change::Updated(..) => {
                    let w = self
                        .workers
                        .entry(uid.clone())
                        .or_insert_with(|| PodWorker::new(&uid, o.clone(), ctx.now));
                    w.pod = Some(o);
                }
                Change::Deleted(_) => {
                    if let Some(w) = self.workers.get_mut(&uid) {
                        w.pod = None;
                    }
                }
            }
            self.sync(ctx, &uid);
        }
    }

    /// Starts a sync of one pod (or marks it to run again after the current one).
    fn sync(&mut self, ctx: &mut Ctx, uid: &str) {
        let Some(w) = self.workers.get_mut(uid) else {
            return;
        };
        if w.busy {
            w.again = true;
            return;
        }
        if w.terminated && w.pod.is_none() {
            self.workers.remove(uid);
            self.probe_ready.remove(uid);
            return;
        }
        w.busy = true;
        w.actions = [Action::Inspect].into_iter().collect();
        self.next_action(ctx, uid);
    }

    /// Runs the worker's next action, or finishes the sync.
    fn next_action(&mut self, ctx: &mut Ctx, uid: &str) {
        loop {
            let Some(w) = self.workers.get_mut(uid) else {
                return;
            };
            let Some(action) = w.actions.pop_front() else {
                w.busy = false;
                self.report_status(ctx, uid);
                let again = self
                    .workers
                    .get_mut(uid)
                    .is_some_and(|w| std::mem::take(&mut w.again));
                if again {
                    self.sync(ctx, uid);
                }
                return;
            };
            if action == Action::FinalDelete {
                self.final_delete(ctx, uid);
                continue;
            }
            if let Action::EnsureImage { container } = &action {
                // Image pull back-off: don't even look while backing off.
                let image = w
                    .container_spec(container)
                    .and_then(|c| c.image.clone())
                    .unwrap_or_default();
                if let Some(b) = w.pull_backoff.get(&image).copied() {
                    if ctx.now < b.until {
                        w.waiting.insert(
                            container.clone(),
                            Waiting {
                                reason: "ImagePullBackOff".into(),
                                message: Some(format!("Back-off pulling image \"{image}\"")),
                            },
                        );
                        self.container_event(
                            ctx,
                            uid,
                            container,
                            WARNING,
                            "BackOff",
                            &format!("Back-off pulling image \"{image}\""),
                        );
                        self.container_event(
                            ctx,
                            uid,
                            container,
                            WARNING,
                            "Failed",
                            "Error: ImagePullBackOff",
                        );
                        self.skip_container(uid, container);
                        let wait = b.until - ctx.now;
                        self.pod_timer(ctx, wait, uid);
                        continue;
                    }
                }
            }
            let Some(op) = w.cri_op(&action) else {
                continue;
            };
            let pull_image = match &action {
                Action::Pull { container } => {
                    w.container_spec(container).and_then(|c| c.image.clone())
                }
                _ => None,
            };
            if let Action::Kill { name, .. } = &action {
                let msg = format!("Stopping container {name}");
                let name = name.clone();
                self.container_event(ctx, uid, &name, NORMAL, "Killing", &msg);
            }
            if let (Action::Pull { container }, Some(image)) = (&action, pull_image) {
                let container = container.clone();
                self.container_event(
                    ctx,
                    uid,
                    &container,
                    NORMAL,
                    "Pulling",
                    &format!("Pulling image \"{image}\""),
                );
            }
            let w = self.workers.get_mut(uid).expect("worker");
            w.actions.push_front(action);
            let id = self.cri(ctx, op, Inflight::Cri(uid.to_string()));
            if let Some(w) = self.workers.get_mut(uid) {
                w.waiting_on = Some(id);
            }
            return;
        }
    }

    /// Drops the remaining actions for one container (it cannot start in this sync).
    fn skip_container(&mut self, uid: &str, container: &str) {
        if let Some(w) = self.workers.get_mut(uid) {
            w.actions.retain(|a| !matches!(a, Action::Create { container: c, .. } | Action::Start { container: c } | Action::Pull { container: c } if c == container));
        }
    }

    fn on_cri(&mut self, ctx: &mut Ctx, resp: CriResponse) {
        if resp.id == 0 {
            // Evented PLEG: a container changed state.
            if let Ok(CriResult::ContainerEvent { pod_uid }) = &resp.result {
                self.sync(ctx, &pod_uid.clone());
            }
            return;
        }
        match self.cri_inflight.remove(&resp.id) {
            Some(Inflight::Health) => {
                self.runtime_ok = resp.result.is_ok();
                self.report_node_status(ctx);
            }
            Some(Inflight::Cri(uid)) => self.on_action_result(ctx, &uid, resp.result),
            None => {}
        }
    }

    fn on_action_result(&mut self, ctx: &mut Ctx, uid: &str, result: Result<CriResult, String>) {
        let now = ctx.now;
        let Some(w) = self.workers.get_mut(uid) else {
            return;
        };
        w.waiting_on = None;
        let Some(action) = w.actions.pop_front() else {
            return;
        };
        match (action, result) {
            (
                Action::Inspect,
                Ok(CriResult::PodStatus {
                    sandboxes,
                    containers,
                }),
            ) => {
                // Exits we had not noticed yet feed the crash back-off.
                for c in &containers {
                    let known = w
                        .containers
                        .iter()
                        .any(|k| k.id == c.id && k.state == c.state);
                    if !known && c.state == crate::node::runtime::ContainerState::Exited {
                        if let Some(f) = c.finished {
                            if !w.terminating {
                                w.note_exit(&c.name, c.started, f);
                            }
                        }
                    }
                }
                w.sandboxes = sandboxes;
                w.containers = containers;
                w.sandbox = w.ready_sandbox().map(|s| (s.id.clone(), s.ip.clone()));
                w.waiting.retain(|_, v| v.reason != "CrashLoopBackOff");
                let actions = w.compute_actions(now);
                let backoff_wake = w
                    .crash_backoff
                    .values()
                    .map(|b| b.until)
                    .filter(|u| *u > now)
                    .min();
                let crashloops: Vec<String> = w
                    .waiting
                    .iter()
                    .filter(|(_, v)| v.reason == "CrashLoopBackOff")
                    .map(|(k, _)| k.clone())
                    .collect();
                w.actions = actions;
                let pod = w.pod().map(pod_ref).unwrap_or_default();
                for name in crashloops {
                    self.container_event(
                        ctx,
                        uid,
                        &name,
                        WARNING,
                        "BackOff",
                        &format!("Back-off restarting failed container {name} in pod {pod}"),
                    );
                }
                if let Some(t) = backoff_wake {
                    self.pod_timer(ctx, t - now, uid);
                }
            }
            (Action::RunSandbox, Ok(CriResult::Sandbox { id, ip })) => {
                w.sandbox = Some((id.clone(), ip.clone()));
                w.sandboxes.insert(
                    0,
                    crate::node::runtime::Sandbox {
                        id,
                        pod_uid: uid.to_string(),
                        name: String::new(),
                        namespace: String::new(),
                        ip,
                        ready: true,
                        created: now,
                    },
                );
                w.containers.clear();
            }
            (Action::RunSandbox, Err(e)) => {
                w.actions.clear();
                let msg = format!("Failed to create pod sandbox: {e}");
                self.pod_event(ctx, uid, WARNING, "FailedCreatePodSandBox", &msg);
                self.pod_timer(ctx, 10 * SECOND, uid);
            }
            (Action::EnsureImage { container }, Ok(CriResult::Image(present))) => {
                let spec = w.container_spec(&container).cloned().unwrap_or_default();
                let image = spec.image.clone().unwrap_or_default();
                let policy = spec
                    .image_pull_policy
                    .clone()
                    .unwrap_or_else(|| default_pull_policy(&image));
                let need = match policy.as_str() {
                    "Always" => true,
                    "Never" => false,
                    _ => present.is_none(),
                };
                if need {
                    w.actions.push_front(Action::Pull { container });
                } else if present.is_none() {
                    w.waiting.insert(container.clone(), Waiting { reason: "ErrImageNeverPull".into(), message: Some(format!("Container image \"{image}\" is not present with pull policy of Never")) });
                    self.skip_container(uid, &container);
                    self.container_event(
                        ctx,
                        uid,
                        &container,
                        WARNING,
                        "ErrImageNeverPull",
                        &format!(
                            "Container image \"{image}\" is not present with pull policy of Never"
                        ),
                    );
                } else {
                    self.container_event(ctx, uid, &container, NORMAL, "Pulled", &format!("Container image \"{image}\" already present on machine and can be accessed by the pod"));
                }
            }
            (
                Action::Pull { container },
                Ok(CriResult::Pulled {
                    size, took, waited, ..
                }),
            ) => {
                let image = w
                    .container_spec(&container)
                    .and_then(|c| c.image.clone())
                    .unwrap_or_default();
                w.pull_backoff.remove(&image);
                let msg = format!(
                    "Successfully pulled image \"{image}\" in {} ({} including waiting). Image size: {size} bytes.",
                    format_duration(took),
                    format_duration(waited)
                );
                self.container_event(ctx, uid, &container, NORMAL, "Pulled", &msg);
            }
            (Action::Pull { container }, Err(e)) => {
                let image = w
                    .container_spec(&container)
                    .and_then(|c| c.image.clone())
                    .unwrap_or_default();
                let prev = w.pull_backoff.get(&image).copied();
                w.pull_backoff
                    .insert(image.clone(), Backoff::next(prev, now));
                let msg = format!("Failed to pull image \"{image}\": {e}");
                w.waiting.insert(
                    container.clone(),
                    Waiting {
                        reason: "ErrImagePull".into(),
                        message: Some(msg.clone()),
                    },
                );
                self.skip_container(uid, &container);
                self.container_event(ctx, uid, &container, WARNING, "Failed", &msg);
                self.container_event(
                    ctx,
                    uid,
                    &container,
                    WARNING,
                    "Failed",
                    "Error: ErrImagePull",
                );
                let until = self
                    .workers
                    .get(uid)
                    .and_then(|w| w.pull_backoff.get(&image))
                    .map_or(now, |b| b.until);
                self.pod_timer(ctx, until.saturating_sub(now), uid);
            }
            (Action::Create { container, .. }, Ok(CriResult::Container(id))) => {
                w.created.insert(container.clone(), id);
                self.container_event(
                    ctx,
                    uid,
                    &container,
                    NORMAL,
                    "Created",
                    &format!("Created container: {container}"),
                );
            }
            (Action::Start { container }, Ok(_)) => {
                w.waiting.remove(&container);
                self.container_event(
                    ctx,
                    uid,
                    &container,
                    NORMAL,
                    "Started",
                    &format!("Started container {container}"),
                );
                // Re-inspect so the status shows the running container.
                if let Some(w) = self.workers.get_mut(uid) {
                    if !w.actions.contains(&Action::Inspect) {
                        w.again = true;
                    }
                }
            }
            (Action::Create { container, .. } | Action::Start { container }, Err(e)) => {
                w.waiting.insert(
                    container.clone(),
                    Waiting {
                        reason: "CreateContainerError".into(),
                        message: Some(e.clone()),
                    },
                );
                self.skip_container(uid, &container);
                self.container_event(
                    ctx,
                    uid,
                    &container,
                    WARNING,
                    "Failed",
                    &format!("Error: {e}"),
                );
            }
            (Action::Kill { .. } | Action::StopSandbox | Action::RemoveSandbox, _) => {}
            (_, Err(_)) => {
                // containerd unreachable: retry later.
                w.actions.clear();
                self.pod_timer(ctx, 2 * SECOND, uid);
            }
            _ => {}
        }
        self.next_action(ctx, uid);
    }

    fn pod_object(&self, uid: &str) -> Option<Arc<Object>> {
        self.workers.get(uid)?.pod.clone()
    }

    fn pod_event(&mut self, ctx: &mut Ctx, uid: &str, type_: &str, reason: &str, msg: &str) {
        if let Some(p) = self.pod_object(uid) {
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
        self.recorder
            .container_event(ctx, &mut self.client, &p, &path, type_, reason, msg);
    }

    /// The status manager: send the pod's status if it changed.
    fn report_status(&mut self, ctx: &mut Ctx, uid: &str) {
        let empty = BTreeMap::new();
        let probes = self.probe_ready.get(uid).unwrap_or(&empty);
        let Some(w) = self.workers.get(uid) else {
            return;
        };
        if w.terminated {
            return;
        }
        let Some(pod_obj) = w.pod.clone() else { return };
        let Some(status) = podstatus::generate(w, &self.ip, ctx.now, probes) else {
            return;
        };
        let value = serde_json::to_value(&status).unwrap_or_default();
        let current = match &*pod_obj {
            Object::Pod(p) => serde_json::to_value(&p.status).unwrap_or_default(),
            _ => serde_json::Value::Null,
        };
        if current == value || self.last_status.get(uid) == Some(&value) {
            return;
        }
        self.last_status.insert(uid.to_string(), value.clone());
        let patch = serde_json::json!({"metadata": {"uid": uid}, "status": value});
        let req = ApiRequest::new(Verb::Patch, Kind::Pod, pod_obj.namespace(), pod_obj.name())
            .with_subresource(Subresource::Status)
            .with_body(Body::Patch(PatchType::Merge, patch));
        self.api(ctx, req, ApiPurpose::Status(uid.to_string()));
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
            (ApiPurpose::NodeStatus, Err(s)) if s.is_not_found() => self.register(ctx),
            (ApiPurpose::NodeStatus, Err(_)) => self.last_node_report = None,
            (ApiPurpose::Lease, Err(s)) if s.is_not_found() => {
                let mut rng = crate::rng::Rng::stream(u64::from(self.node), "kubelet-lease");
                let lease = crate::cluster::node_lease(&self.name, ctx.now, &mut rng);
                let req = ApiRequest::new(Verb::Create, Kind::Lease, "kube-node-lease", "")
                    .with_body(Body::Object(lease.into()));
                self.api(ctx, req, ApiPurpose::LeaseCreate);
            }
            (ApiPurpose::Register, Ok(ApiResult::Object(_))) => {
                self.last_node_report = None;
                self.report_node_status(ctx);
            }
            _ => {}
        }
    }

    fn register(&mut self, ctx: &mut Ctx) {
        let host = crate::world::NodeHost {
            config: self.config.clone(),
            ip: self.ip.clone(),
            pod_cidr: crate::cluster::pod_cidr(self.node as usize),
            powered: true,
            partitioned: false,
            kubelet: None,
            runtime: crate::node::runtime::Runtime::new(self.node, &self.config),
            runtime_running: true,
            proxy: None,
            rules: None,
        };
        let mut rng = crate::rng::Rng::stream(u64::from(self.node), "kubelet-register");
        let node = crate::cluster::node_object(&host, ctx.now, &mut rng);
        let req =
            ApiRequest::new(Verb::Create, Kind::Node, "", "").with_body(Body::Object(node.into()));
        self.api(ctx, req, ApiPurpose::Register);
    }

    /// Every 10 s: renew the Lease, check containerd, post node status when it changed.
    fn heartbeat(&mut self, ctx: &mut Ctx) {
        let patch = serde_json::json!({"spec": {"renewTime": k8s_micro_time(ctx.now), "holderIdentity": self.name}});
        let req = ApiRequest::new(Verb::Patch, Kind::Lease, "kube-node-lease", &self.name)
            .with_body(Body::Patch(PatchType::Merge, patch));
        self.api(ctx, req, ApiPurpose::Lease);
        self.cri(
            ctx,
            CriOp::ImageStatus {
                image: PAUSE_IMAGE.into(),
            },
            Inflight::Health,
        );
        ctx.timer(HEARTBEAT, TIMER_HEARTBEAT);
    }

    fn report_node_status(&mut self, ctx: &mut Ctx) {
        let ready = self.runtime_ok;
        let due = match self.last_node_report {
            None => true,
            Some((t, r)) => r != ready || ctx.now >= t + STATUS_REPORT,
        };
        if !due {
            return;
        }
        self.last_node_report = Some((ctx.now, ready));
        let mut conditions = crate::cluster::node_conditions(ctx.now, ready);
        for c in &mut conditions {
            c.last_transition_time = None;
        }
        let conditions: Vec<serde_json::Value> = conditions
            .into_iter()
            .map(|c| {
                let mut v = serde_json::to_value(&c).unwrap_or_default();
                if let Some(m) = v.as_object_mut() {
                    m.remove("lastTransitionTime");
                }
                v
            })
            .collect();
        let patch = serde_json::json!({"status": {"conditions": conditions}});
        let req = ApiRequest::new(Verb::Patch, Kind::Node, "", &self.name)
            .with_subresource(Subresource::Status)
            .with_body(Body::Patch(PatchType::StrategicMerge, patch));
        self.api(ctx, req, ApiPurpose::NodeStatus);
        let _ = k8s_time(ctx.now);
    }

    /// The pods this kubelet knows (for `crictl pods` and the diagram).
    pub fn known_pods(&self) -> Vec<&Pod> {
        self.workers.values().filter_map(|w| w.pod()).collect()
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
