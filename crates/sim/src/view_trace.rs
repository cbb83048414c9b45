//! The causal trace of an object: for a pod, the eight stages from `kubectl` to Ready, each
//! with the exact request behind it (from the apiserver's audit log), the watch event that
//! woke the component that sent it (from the [`Timeline`]), its time, the time since the
//! stage before and how long the apiserver took; for a Deployment, which ReplicaSet
//! scaled when and why (its `ScalingReplicaSet` Events, each with the request that did it
//! and what caused it).

use k8s_openapi::api::core::v1::Event;

use crate::api::Verb;
use crate::apiserver::AuditEntry;
use crate::message::Actor;
use crate::object::{Kind, Object};
use crate::time::{from_k8s_time, Time, SECOND};
use crate::world::World;

use super::timeline::{object_name, EntryKind, Timeline};

/// The eight stages of a pod's trace.
pub const POD_STAGES: usize = 8;

/// One stage.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TraceStep {
    /// 1…8: kubectl, apiserver/etcd, Deployment, ReplicaSet, scheduler, kubelet,
    /// EndpointSlice/kube-proxy, Running/Ready.
    pub number: u8,
    /// When it happened (virtual ms), if it has.
    pub at: Option<Time>,
    /// Who did it (`kubectl`, `kube-scheduler`, `kubelet node-2`).
    pub by: String,
    /// What it was: `POST /api/v1/namespaces/default/pods/web-1/binding 201`.
    pub what: String,
    /// The watch event that woke the component, with when it arrived.
    pub cause: Option<(Time, String)>,
    /// Time since the stage before that happened.
    pub since_previous: Option<Time>,
    /// How long the apiserver (or etcd) took to serve it.
    pub took: Option<Time>,
    /// The timeline entry of the request (for a jump into the list).
    pub seq: Option<u64>,
    /// The steps inside it (the kubelet's CRI calls): when, what, how long.
    pub inner: Vec<(Time, String, Option<Time>)>,
}

/// A pod's trace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PodTrace {
    /// `namespace/name`.
    pub pod: String,
    /// The eight stages.
    pub steps: Vec<TraceStep>,
    /// The Service that selects the pod, if any.
    pub service: Option<String>,
    /// The Deployment that owns it, if any.
    pub deployment: Option<String>,
}

fn actor(a: Actor, world: &World) -> String {
    super::timeline::actor_name(a, &world.observe().node_names())
}

fn audit(world: &World) -> Vec<&AuditEntry> {
    world
        .observe()
        .apiserver()
        .map(|a| a.audit().collect())
        .unwrap_or_default()
}

fn line(e: &AuditEntry) -> String {
    format!("{} {} {}", e.verb.http_method(), e.path, e.code)
}

/// How long the apiserver spent on a request (its first span's start to its last's end).
fn took(e: &AuditEntry) -> Option<Time> {
    let start = e.spans.iter().map(|s| s.start).min()?;
    let end = e.spans.iter().map(|s| s.end).max()?;
    Some(end.saturating_sub(start))
}

/// The request entry in the timeline for an audit entry.
fn request_seq(tl: &Timeline, e: &AuditEntry) -> Option<u64> {
    let label = format!("{} {}", e.verb.http_method(), e.path);
    tl.entries()
        .rfind(|t| {
            t.kind == EntryKind::Request
                && t.from == e.client
                && t.arrives == e.received
                && t.label == label
        })
        .map(|t| t.seq)
}

/// The last watch event about `object` that reached `to` by `by`.
fn woke(tl: &Timeline, to: Actor, object: &str, by: Time) -> Option<(Time, String)> {
    tl.entries()
        .rfind(|t| {
            t.kind == EntryKind::Watch && t.to == to && t.object == object && t.arrives <= by
        })
        .map(|t| (t.arrives, t.label.clone()))
}

/// Fills a step from the audit entry behind it.
fn from_audit(
    step: &mut TraceStep,
    e: &AuditEntry,
    world: &World,
    tl: &Timeline,
    woken_by: Option<&str>,
) {
    step.at = Some(e.received);
    step.by = actor(e.client, world);
    step.what = line(e);
    step.took = took(e);
    step.seq = request_seq(tl, e);
    step.cause = woken_by.and_then(|o| woke(tl, e.client, o, e.received));
}

/// The trace of the pod `ns/name`, or `None` when there is no such pod.
pub fn pod_trace(world: &World, tl: &Timeline, ns: &str, name: &str) -> Option<PodTrace> {
    let flow = super::pod_flow(world, ns, name)?;
    let audit = audit(world);
    let mut steps: Vec<TraceStep> = (1..=POD_STAGES as u8)
        .map(|number| TraceStep {
            number,
            ..TraceStep::default()
        })
        .collect();
    let pod_obj = object_name("Pod", ns, name);
    let rs = owner_rs(world, ns, name);
    // Stages 1, 3, 4, 5, 6, 7 of the flow are requests; stage 2 is the etcd write of 1.
    let wakers: [Option<String>; 7] = [
        None,
        None,
        flow.deployment
            .as_ref()
            .map(|d| object_name("Deployment", ns, d)),
        rs.as_ref().map(|r| object_name("ReplicaSet", ns, r)),
        Some(pod_obj.clone()),
        Some(pod_obj.clone()),
        Some(pod_obj.clone()),
    ];
    for (i, stage) in flow.stages.iter().enumerate() {
        let Some(at) = stage.at else { continue };
        let step = &mut steps[i];
        step.at = Some(at);
        step.what = stage.detail.clone();
        if i == 1 {
            continue;
        }
        let found = audit.iter().find(|e| {
            e.received == at
                && (stage.detail.starts_with(&line(e))
                    || stage.detail.starts_with(&format!("{} → ", e.path)))
        });
        if let Some(e) = found {
            from_audit(step, e, world, tl, wakers[i].as_deref());
            if let Some((_, rules)) = stage.detail.split_once(" → ") {
                step.what = format!("{} → {rules}", step.what);
            }
            if i == 6 {
                // A create names its slice only in the answer (the timeline's object).
                let object = step.seq.and_then(|q| tl.get(q)).map(|t| t.object.clone());
                step.inner = proxies_told(world, tl, e, object);
            }
        }
    }
    etcd_step(&mut steps, &audit, tl);
    if steps[5].at.is_some() {
        steps[5].inner = tl
            .entries()
            .filter(|t| t.kind == EntryKind::Cri && t.object == pod_obj)
            .map(|t| (t.sent, t.label.clone(), t.latency()))
            .collect();
    }
    if let Some(ready) = flow.ready_at {
        let step = &mut steps[7];
        step.at = Some(ready);
        let report = audit.iter().find(|e| {
            e.received == ready
                && matches!(e.client, Actor::Kubelet(_))
                && e.path
                    .ends_with(&format!("/namespaces/{ns}/pods/{name}/status"))
        });
        match report {
            Some(e) => from_audit(step, e, world, tl, None),
            None => step.what = format!("Ready {name}"),
        }
    }
    // Each stage's latency is from the latest earlier stage that happened before it (Ready
    // is reported before the endpoints are written, yet is the chain's last word).
    for i in 0..steps.len() {
        let Some(at) = steps[i].at else { continue };
        let before = steps[..i]
            .iter()
            .filter_map(|s| s.at)
            .filter(|t| *t <= at)
            .max();
        steps[i].since_previous = before.map(|b| at - b);
    }
    Some(PodTrace {
        pod: flow.pod,
        steps,
        service: flow.service,
        deployment: flow.deployment,
    })
}

/// The kube-proxies the EndpointSlice write reached (each then rewrote its rules): when
/// the watch event arrived, on which node, what it said.
fn proxies_told(
    world: &World,
    tl: &Timeline,
    e: &AuditEntry,
    object: Option<String>,
) -> Vec<(Time, String, Option<Time>)> {
    let ns = e
        .path
        .split("/namespaces/")
        .nth(1)
        .and_then(|r| r.split('/').next())
        .unwrap_or_default();
    let named = e.path.rsplit('/').next().filter(|s| *s != "endpointslices");
    let Some(object) = object
        .filter(|o| !o.is_empty())
        .or_else(|| named.map(|n| object_name("EndpointSlice", ns, n)))
    else {
        return Vec::new();
    };
    service::proxies_after(tl, &object, e.received, &world.observe().node_names())
}

/// Stage 2: the etcd transaction kube-apiserver made for kubectl's request.
fn etcd_step(steps: &mut [TraceStep], audit: &[&AuditEntry], tl: &Timeline) {
    let Some(at1) = steps[0].at else { return };
    let Some(e) = audit
        .iter()
        .find(|e| e.received == at1 && steps[0].what == line(e))
    else {
        return;
    };
    let Some(span) = e.spans.iter().find(|s| s.stage == "etcd") else {
        return;
    };
    let step = &mut steps[1];
    step.by = "kube-apiserver → etcd".into();
    step.at = Some(span.end);
    step.took = Some(span.end.saturating_sub(span.start));
    if let Some(txn) = tl.entries().find(|t| {
        t.kind == EntryKind::Etcd
            && t.from == Actor::ApiServer
            && t.sent >= span.start
            && t.sent <= span.end
            && t.label.starts_with("Txn")
    }) {
        step.what = format!("{} {}", txn.label, txn.answer.as_deref().unwrap_or(""))
            .trim_end()
            .to_string();
        step.seq = Some(txn.seq);
    }
}

fn owner_rs(world: &World, ns: &str, name: &str) -> Option<String> {
    let key = format!("/registry/{}/{ns}/{name}", Kind::Pod.info().etcd_prefix);
    let kv = world.observe().etcd().store.get(&key)?;
    crate::controllers::util::controller_of(kv.value.meta())
        .filter(|o| o.kind == "ReplicaSet")
        .map(|o| o.name.clone())
}

/// One scaling of a Deployment's rollout.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RolloutStep {
    /// When the Deployment controller decided it (the Event's time).
    pub at: Time,
    /// The ReplicaSet scaled.
    pub replica_set: String,
    /// The Event's message: `Scaled up replica set web-5d4f from 0 to 3`.
    pub message: String,
    /// The request that did it, with its timeline entry.
    pub request: Option<(String, Option<u64>)>,
    /// Why: the last kubectl write to the Deployment, or the ReplicaSet change the
    /// controller saw (its pods' readiness), before it — when, and what.
    pub why: Option<(Time, String)>,
}

/// A Deployment's rollout.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RolloutTrace {
    /// `namespace/name`.
    pub deployment: String,
    /// Every scaling, oldest first.
    pub steps: Vec<RolloutStep>,
}

/// Whether the ReplicaSet `ns/rs` was created when `at` was received (its etcd create
/// revision's time is not kept: its creationTimestamp's second, to the millisecond's
/// second).
fn created(world: &World, ns: &str, rs: &str, at: Time) -> bool {
    let key = format!(
        "/registry/{}/{ns}/{rs}",
        Kind::ReplicaSet.info().etcd_prefix
    );
    world.observe().etcd().store.get(&key).is_none_or(|kv| {
        kv.value
            .meta()
            .creation_timestamp
            .as_ref()
            .is_none_or(|t| from_k8s_time(t) / SECOND == at / SECOND)
    })
}

fn scaling_events(world: &World, ns: &str, name: &str) -> Vec<(Time, String)> {
    // An Event is named after the object it is about (`<name>.<suffix>`, as upstream's
    // recorder names them): only the Deployment's own are read, not every pod's.
    let prefix = format!("/registry/{}/{ns}/{name}.", Kind::Event.info().etcd_prefix);
    let mut out: Vec<(Time, String)> = world
        .observe()
        .etcd()
        .store
        .range_prefix(&prefix)
        .filter_map(|kv| match &*kv.value {
            Object::Event(e) => Some(&**e),
            _ => None,
        })
        .filter(|e: &&Event| {
            let io = &e.involved_object;
            e.reason.as_deref() == Some("ScalingReplicaSet")
                && io.kind.as_deref() == Some("Deployment")
                && io.name.as_deref() == Some(name)
                && io.namespace.as_deref().unwrap_or("") == ns
        })
        .map(|e| {
            let at = e.first_timestamp.as_ref().map_or(0, from_k8s_time);
            (at, e.message.clone().unwrap_or_default())
        })
        .collect();
    out.sort();
    out
}

/// The rollout of the Deployment `ns/name`, or `None` when there is no such Deployment.
pub fn rollout_trace(world: &World, tl: &Timeline, ns: &str, name: &str) -> Option<RolloutTrace> {
    let key = format!(
        "/registry/{}/{ns}/{name}",
        Kind::Deployment.info().etcd_prefix
    );
    world.observe().etcd().store.get(&key)?;
    let audit = audit(world);
    let rs_path = format!("/apis/apps/v1/namespaces/{ns}/replicasets");
    let deploy_path = format!("/apis/apps/v1/namespaces/{ns}/deployments");
    let steps = scaling_events(world, ns, name)
        .into_iter()
        .map(|(second, message)| {
            let rs = message
                .split_whitespace()
                .nth(4)
                .unwrap_or_default()
                .to_string();
            // Events carry whole seconds: the request that did it (received within the
            // next two) gives the millisecond.
            let request = audit
                .iter()
                .filter(|e| e.client == Actor::ControllerManager && e.code < 300)
                .find(|e| {
                    e.received >= second
                        && e.received <= second + 2 * SECOND
                        && ((e.verb == Verb::Create
                            && e.path == rs_path
                            && created(world, ns, &rs, e.received))
                            || (e.verb.is_write() && e.path == format!("{rs_path}/{rs}")))
                });
            let at = request.map_or(second, |e| e.received);
            let request = request.map(|e| (line(e), request_seq(tl, e)));
            let kubectl = audit
                .iter()
                .filter(|e| {
                    matches!(e.client, Actor::Terminal(_))
                        && e.verb.is_write()
                        && e.code < 300
                        && e.received <= at
                        && (e.path == deploy_path
                            || e.path.starts_with(&format!("{deploy_path}/{name}")))
                })
                .map(|e| (e.received, format!("kubectl {}", line(e))))
                .next_back();
            let seen = tl
                .entries()
                .rfind(|t| {
                    t.kind == EntryKind::Watch
                        && t.to == Actor::ControllerManager
                        && t.object.starts_with(&format!("ReplicaSet {ns}/{name}-"))
                        && t.label.starts_with("MODIFIED")
                        && t.arrives <= at
                })
                .map(|t| (t.arrives, format!("{} ({})", t.label, t.object)));
            let why = match (kubectl, seen) {
                (Some(k), Some(s)) => Some(if s.0 > k.0 { s } else { k }),
                (k, s) => k.or(s),
            };
            RolloutStep {
                at,
                replica_set: rs,
                message,
                request,
                why,
            }
        })
        .collect();
    Some(RolloutTrace {
        deployment: format!("{ns}/{name}"),
        steps,
    })
}

#[path = "view_trace_service.rs"]
mod service;
pub use service::{service_trace, RuleChange, ServiceChange, ServiceTrace, MAX_CHANGES};

#[cfg(test)]
#[path = "view_trace_tests.rs"]
mod tests;
