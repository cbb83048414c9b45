//! The kube-scheduler actor: informers for pods and nodes, the scheduling queue, one
//! scheduling cycle at a time, assumed pods, and asynchronous binding through the
//! pods/binding subresource (which carries the scheduling-result annotations).

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::sync::Arc;

use k8s_openapi::api::core::v1::{Node, Pod};

use crate::api::{ApiRequest, ApiResponse, Body, PatchType, Subresource, Verb};
use crate::client::recorder::{NORMAL, WARNING};
use crate::client::{Change, Client, Informer, Recorder};
use crate::cluster::ClusterConfig;
use crate::object::{Kind, Object};
use crate::quantity;
use crate::rng::Rng;
use crate::time::{k8s_time, Time, SECOND};
use crate::world::{Actor, Ctx, Payload};

const TIMER_CYCLE: u64 = 1;
const TIMER_PODS: u64 = 2;
const TIMER_NODES: u64 = 3;
const TIMER_BACKOFF: u64 = 4;

/// The outcome of one scheduling decision.
#[derive(Debug)]
pub struct Decision {
    /// Chosen node, or the FitError message.
    pub result: Result<String, String>,
    /// Scheduling-result annotations.
    pub annotations: BTreeMap<String, String>,
}

/// kube-scheduler.
pub struct KubeScheduler {
    client: Client,
    recorder: Recorder,
    rng: Rng,
    pods: Informer,
    nodes: Informer,
    active: VecDeque<String>,
    queued: BTreeSet<String>,
    backoff: BTreeMap<String, (Time, u32)>,
    unschedulable: BTreeSet<String>,
    attempts: BTreeMap<String, u32>,
    assumed: BTreeMap<String, (String, Arc<Object>)>,
    binding: BTreeMap<u64, (String, String, Arc<Object>)>,
    cycle_scheduled: bool,
    annotations: bool,
    /// Scheduling cycles run.
    pub cycles: u64,
}

fn pod_key(o: &Object) -> String {
    format!("{}/{}", o.namespace(), o.name())
}

fn needs_scheduling(o: &Object) -> bool {
    let Object::Pod(p) = o else { return false };
    let spec = p.spec.as_ref();
    spec.and_then(|s| s.node_name.as_deref())
        .unwrap_or("")
        .is_empty()
        && spec
            .and_then(|s| s.scheduler_name.as_deref())
            .unwrap_or("default-scheduler")
            == "default-scheduler"
        && p.metadata.deletion_timestamp.is_none()
        && !matches!(
            p.status.as_ref().and_then(|s| s.phase.as_deref()),
            Some("Succeeded") | Some("Failed")
        )
}

impl KubeScheduler {
    /// A freshly started scheduler.
    pub fn new(config: &ClusterConfig) -> KubeScheduler {
        KubeScheduler {
            client: Client::new("system:kube-scheduler", &[]),
            recorder: Recorder::new("default-scheduler", None),
            rng: Rng::stream(config.seed, "kube-scheduler"),
            pods: Informer::new(Kind::Pod, TIMER_PODS),
            nodes: Informer::new(Kind::Node, TIMER_NODES),
            active: VecDeque::new(),
            queued: BTreeSet::new(),
            backoff: BTreeMap::new(),
            unschedulable: BTreeSet::new(),
            attempts: BTreeMap::new(),
            assumed: BTreeMap::new(),
            binding: BTreeMap::new(),
            cycle_scheduled: false,
            annotations: config.scheduling_annotations,
            cycles: 0,
        }
    }

    /// Starts the informers.
    pub fn start(&mut self, ctx: &mut Ctx) {
        self.pods.start(ctx, &mut self.client);
        self.nodes.start(ctx, &mut self.client);
    }

    /// Pods waiting in the queue (active, backoff, unschedulable).
    pub fn pending(&self) -> (usize, usize, usize) {
        (
            self.active.len(),
            self.backoff.len(),
            self.unschedulable.len(),
        )
    }

    /// Handles a message.
    pub fn handle(&mut self, ctx: &mut Ctx, _from: Actor, payload: Payload) {
        match payload {
            Payload::ApiResp(resp) => {
                if let Some(c) = self.pods.on_response(ctx, &mut self.client, &resp) {
                    self.on_pod_changes(c);
                } else if let Some(c) = self.nodes.on_response(ctx, &mut self.client, &resp) {
                    self.on_node_changes(c, ctx.now);
                } else {
                    self.on_bind_response(ctx, resp);
                }
            }
            Payload::Watch(ev) => {
                if let Some(c) = self.pods.on_watch(ctx, &mut self.client, &ev) {
                    self.on_pod_changes(c);
                } else if let Some(c) = self.nodes.on_watch(ctx, &mut self.client, &ev) {
                    self.on_node_changes(c, ctx.now);
                }
            }
            Payload::ConnectionLost => {
                self.pods.on_connection_lost(ctx);
                self.nodes.on_connection_lost(ctx);
                for (_, (key, _, _)) in std::mem::take(&mut self.binding) {
                    self.assumed.remove(&key);
                    self.enqueue(key);
                }
            }
            Payload::Timer(TIMER_CYCLE) => {
                self.cycle_scheduled = false;
                self.schedule_one(ctx);
            }
            Payload::Timer(TIMER_BACKOFF) => {}
            Payload::Timer(t) => {
                if !self.pods.on_timer(ctx, &mut self.client, t) {
                    self.nodes.on_timer(ctx, &mut self.client, t);
                }
            }
            _ => {}
        }
        self.flush_backoff(ctx);
        self.kick(ctx);
    }

    fn enqueue(&mut self, key: String) {
        if self.queued.insert(key.clone()) {
            self.active.push_back(key);
        }
    }

    fn on_pod_changes(&mut self, changes: Vec<Change>) {
        let mut freed = false;
        for c in changes {
            let o = c.object();
            let key = pod_key(o);
            match &c {
                Change::Deleted(_) => {
                    self.assumed.remove(&key);
                    self.unschedulable.remove(&key);
                    self.backoff.remove(&key);
                    freed = true;
                }
                _ => {
                    if needs_scheduling(o) {
                        if !self.unschedulable.contains(&key)
                            && !self.backoff.contains_key(&key)
                            && !self.assumed.contains_key(&key)
                        {
                            self.enqueue(key);
                        }
                    } else {
                        self.unschedulable.remove(&key);
                        if !o.meta().deletion_timestamp.is_none() {
                            freed = true;
                        }
                        // A bound pod confirms (and replaces) the assumption.
                        self.assumed.remove(&key);
                    }
                }
            }
        }
        if freed {
            self.move_unschedulable();
        }
    }

    fn on_node_changes(&mut self, changes: Vec<Change>, _now: Time) {
        if !changes.is_empty() {
            self.move_unschedulable();
        }
    }

    /// A cluster event that may make unschedulable pods fit: move them to the queue.
    fn move_unschedulable(&mut self) {
        for key in std::mem::take(&mut self.unschedulable) {
            self.enqueue(key);
        }
    }

    fn flush_backoff(&mut self, ctx: &mut Ctx) {
        let due: Vec<String> = self
            .backoff
            .iter()
            .filter(|(_, (t, _))| *t <= ctx.now)
            .map(|(k, _)| k.clone())
            .collect();
        for k in due {
            self.backoff.remove(&k);
            self.enqueue(k);
        }
    }

    fn kick(&mut self, ctx: &mut Ctx) {
        if !self.cycle_scheduled
            && !self.active.is_empty()
            && self.pods.has_synced()
            && self.nodes.has_synced()
        {
            self.cycle_scheduled = true;
            ctx.timer(0, TIMER_CYCLE);
        }
    }

    fn back_off(&mut self, ctx: &mut Ctx, key: String) {
        let n = self.attempts.entry(key.clone()).or_insert(0);
        *n += 1;
        let delay = (SECOND << (*n - 1).min(4)).min(10 * SECOND);
        self.backoff.insert(key, (ctx.now + delay, *n));
        ctx.timer(delay, TIMER_BACKOFF);
    }

    fn schedule_one(&mut self, ctx: &mut Ctx) {
        let Some(key) = self.active.pop_front() else {
            return;
        };
        self.queued.remove(&key);
        let (ns, name) = key.split_once('/').unwrap_or(("", &key));
        let Some(pod_obj) = self.pods.get(ns, name).cloned() else {
            return;
        };
        if !needs_scheduling(&pod_obj) {
            return;
        }
        self.cycles += 1;
        let Object::Pod(pod) = &*pod_obj else { return };
        let decision = self.decide(pod);
        match decision.result {
            Ok(node) => {
                self.assumed
                    .insert(key.clone(), (node.clone(), pod_obj.clone()));
                let annotations = if self.annotations {
                    decision.annotations
                } else {
                    BTreeMap::new()
                };
                let req = ApiRequest::new(Verb::Create, Kind::Pod, ns, name)
                    .with_subresource(Subresource::Binding)
                    .with_body(Body::Binding {
                        node: node.clone(),
                        annotations,
                    });
                let id = self.client.send(ctx, req);
                self.binding.insert(id, (key, node, pod_obj.clone()));
            }
            Err(msg) => {
                self.recorder.event(
                    ctx,
                    &mut self.client,
                    &pod_obj,
                    WARNING,
                    "FailedScheduling",
                    &msg,
                );
                let mut patch = serde_json::json!({"status": {"conditions": [{
                    "type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": msg,
                    "lastTransitionTime": k8s_time(ctx.now), "lastProbeTime": serde_json::Value::Null
                }]}});
                if self.annotations && !decision.annotations.is_empty() {
                    patch["metadata"] = serde_json::json!({"annotations": decision.annotations});
                }
                let req = ApiRequest::new(Verb::Patch, Kind::Pod, ns, name)
                    .with_subresource(Subresource::Status)
                    .with_body(Body::Patch(PatchType::StrategicMerge, patch));
                self.client.send(ctx, req);
                self.unschedulable.insert(key.clone());
                self.attempts
                    .entry(key)
                    .and_modify(|n| *n += 1)
                    .or_insert(1);
            }
        }
    }

    fn on_bind_response(&mut self, ctx: &mut Ctx, resp: ApiResponse) {
        let Some((key, node, pod)) = self.binding.remove(&resp.id) else {
            return;
        };
        match resp.result {
            Ok(_) => {
                self.attempts.remove(&key);
                let msg = format!("Successfully assigned {key} to {node}");
                self.recorder
                    .event(ctx, &mut self.client, &pod, NORMAL, "Scheduled", &msg);
            }
            Err(_) => {
                self.assumed.remove(&key);
                self.back_off(ctx, key);
            }
        }
    }

    /// Filters and scores the nodes for a pod (placeholder until the plugin framework).
    fn decide(&mut self, pod: &Pod) -> Decision {
        let nodes: Vec<&Node> = self
            .nodes
            .iter()
            .filter_map(|o| match &**o {
                Object::Node(n) => Some(n),
                _ => None,
            })
            .collect();
        let mut best: Option<(i64, String)> = None;
        let mut fails: BTreeMap<String, usize> = BTreeMap::new();
        for n in &nodes {
            let name = n.metadata.name.clone().unwrap_or_default();
            if n.spec
                .as_ref()
                .and_then(|s| s.unschedulable)
                .unwrap_or(false)
            {
                *fails
                    .entry("node(s) were unschedulable".into())
                    .or_insert(0) += 1;
                continue;
            }
            let tols = pod
                .spec
                .as_ref()
                .and_then(|s| s.tolerations.clone())
                .unwrap_or_default();
            let untolerated = n
                .spec
                .as_ref()
                .and_then(|s| s.taints.clone())
                .unwrap_or_default()
                .iter()
                .any(|t| {
                    (t.effect == "NoSchedule" || t.effect == "NoExecute")
                        && !tols.iter().any(|tol| {
                            (tol.key.as_deref() == Some(&t.key)
                                || (tol.key.is_none() && tol.operator.as_deref() == Some("Exists")))
                                && tol
                                    .effect
                                    .as_deref()
                                    .is_none_or(|e| e.is_empty() || e == t.effect)
                        })
                });
            if untolerated {
                *fails
                    .entry("node(s) had untolerated taint(s)".into())
                    .or_insert(0) += 1;
                continue;
            }
            let (req_cpu, req_mem) = pod_requests(pod);
            let (used_cpu, used_mem) = self.usage_on(&name);
            let alloc = n
                .status
                .as_ref()
                .and_then(|s| s.allocatable.clone())
                .unwrap_or_default();
            let cap_cpu = alloc
                .get("cpu")
                .and_then(|q| quantity::parse(&q.0).ok())
                .map_or(0, |q| q.milli_value());
            let cap_mem = alloc
                .get("memory")
                .and_then(|q| quantity::parse(&q.0).ok())
                .map_or(0, |q| q.value());
            if used_cpu + req_cpu > cap_cpu {
                *fails.entry("Insufficient cpu".into()).or_insert(0) += 1;
                continue;
            }
            if used_mem + req_mem > cap_mem {
                *fails.entry("Insufficient memory".into()).or_insert(0) += 1;
                continue;
            }
            let score = ((cap_cpu - used_cpu - req_cpu) * 100 / cap_cpu.max(1)
                + (cap_mem - used_mem - req_mem) * 100 / cap_mem.max(1))
                / 2;
            let tie = self.rng.intn(1000) as i64;
            if best.as_ref().is_none_or(|(b, _)| score * 1000 + tie > *b) {
                best = Some((score * 1000 + tie, name));
            }
        }
        match best {
            Some((_, n)) => Decision {
                result: Ok(n),
                annotations: BTreeMap::new(),
            },
            None => {
                let reasons: Vec<String> = fails.iter().map(|(r, c)| format!("{c} {r}")).collect();
                let msg = format!(
                    "0/{} nodes are available: {}. preemption: 0/{} nodes are available: {} Preemption is not helpful for scheduling.",
                    nodes.len(),
                    reasons.join(", "),
                    nodes.len(),
                    nodes.len()
                );
                Decision {
                    result: Err(msg),
                    annotations: BTreeMap::new(),
                }
            }
        }
    }

    fn usage_on(&self, node: &str) -> (i64, i64) {
        let mut cpu = 0;
        let mut mem = 0;
        for o in self.pods.iter() {
            let Object::Pod(p) = &**o else { continue };
            let key = pod_key(o);
            let on = p.spec.as_ref().and_then(|s| s.node_name.as_deref()) == Some(node)
                || self.assumed.get(&key).is_some_and(|(n, _)| n == node);
            if on
                && !matches!(
                    p.status.as_ref().and_then(|s| s.phase.as_deref()),
                    Some("Succeeded") | Some("Failed")
                )
            {
                let (c, m) = pod_requests(p);
                cpu += c;
                mem += m;
            }
        }
        (cpu, mem)
    }
}

fn pod_requests(p: &Pod) -> (i64, i64) {
    let mut cpu = 0;
    let mut mem = 0;
    for c in p.spec.iter().flat_map(|s| s.containers.iter()) {
        let req = c.resources.as_ref().and_then(|r| r.requests.as_ref());
        cpu += req
            .and_then(|r| r.get("cpu"))
            .and_then(|q| quantity::parse(&q.0).ok())
            .map_or(0, |q| q.milli_value());
        mem += req
            .and_then(|r| r.get("memory"))
            .and_then(|q| quantity::parse(&q.0).ok())
            .map_or(0, |q| q.value());
    }
    (cpu, mem)
}
