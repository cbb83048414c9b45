//! A read model of the world for the page: components, nodes with their pods and
//! containers, messages in flight, and the seven stages of the pod creation flow with
//! their virtual times. Plain data, built from engine state, tested natively.

use std::sync::Arc;

use k8s_openapi::api::core::v1::Pod;

use crate::message::Actor;
use crate::object::{Kind, Object};
use crate::time::Time;
use crate::world::World;

/// A control-plane component.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ComponentView {
    /// `etcd`, `kube-apiserver`, …
    pub name: &'static str,
    /// Whether its process runs.
    pub running: bool,
}

/// A container in a pod.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ContainerView {
    /// Name.
    pub name: String,
    /// `running`, `waiting`, `terminated`.
    pub state: &'static str,
    /// Waiting/terminated reason.
    pub reason: String,
    /// Ready.
    pub ready: bool,
    /// Restarts.
    pub restarts: i32,
}

/// A pod as the diagram draws it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PodView {
    /// Namespace.
    pub namespace: String,
    /// Name.
    pub name: String,
    /// What `kubectl get pods` shows in STATUS.
    pub status: String,
    /// The phase (`Pending`, `Running`, …).
    pub phase: String,
    /// Ready.
    pub ready: bool,
    /// Pod IP.
    pub ip: String,
    /// Node, if bound.
    pub node: String,
    /// Containers.
    pub containers: Vec<ContainerView>,
    /// Being deleted.
    pub terminating: bool,
    /// Its controller, as `kubectl describe` names it in "Controlled By"
    /// (`StatefulSet/web`, `DaemonSet/kube-proxy`, `Job/pi`); empty when none.
    pub owner: String,
}

/// A taint on a node.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TaintView {
    /// `node.kubernetes.io/unreachable`.
    pub key: String,
    /// `NoSchedule`, `PreferNoSchedule`, `NoExecute`.
    pub effect: String,
    /// When a NoExecute taint was added (virtual ms).
    pub added: Option<Time>,
}

impl TaintView {
    /// How `kubectl describe node` shows it: `node.kubernetes.io/unreachable:NoExecute`.
    pub fn text(&self) -> String {
        format!("{}:{}", self.key, self.effect)
    }
}

/// A worker node as the diagram draws it. `status`, `reason`, `taints`, `unschedulable`
/// and `eviction_at` are the cluster's view (the Node object, as kubectl shows it);
/// `powered`, `partitioned` and the component flags are the simulator's own facts, which
/// the cluster learns only through missed heartbeats.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeView {
    /// Name.
    pub name: String,
    /// InternalIP.
    pub ip: String,
    /// podCIDR.
    pub pod_cidr: String,
    /// `Ready`, `NotReady`, `Unknown` (from the Node object).
    pub status: String,
    /// The Ready condition's reason (`KubeletReady`, `NodeStatusUnknown`).
    pub reason: String,
    /// The node's taints (`node.kubernetes.io/unreachable:NoExecute`, …).
    pub taints: Vec<TaintView>,
    /// Cordoned (`spec.unschedulable`).
    pub unschedulable: bool,
    /// When the node lifecycle controller is due to evict the first of its pods (NoExecute
    /// taints' timeAdded + the pods' tolerationSeconds), while some are still on it.
    pub eviction_at: Option<Time>,
    /// Simulator: the machine is powered on.
    pub powered: bool,
    /// Simulator: cut off from the control plane.
    pub partitioned: bool,
    /// kubelet running.
    pub kubelet: bool,
    /// containerd running.
    pub runtime: bool,
    /// kube-proxy running.
    pub proxy: bool,
    /// Pods bound to it.
    pub pods: Vec<Arc<PodView>>,
}

/// A message on its way.
#[derive(Clone, Debug, PartialEq)]
pub struct FlightView {
    /// Sender.
    pub from: Actor,
    /// Receiver.
    pub to: Actor,
    /// What it is.
    pub label: String,
    /// 0.0 when sent … 1.0 on arrival.
    pub progress: f64,
    /// When it was sent (virtual ms).
    pub sent: Time,
    /// When it arrives (virtual ms).
    pub arrives: Time,
}

/// One of the seven stages of the pod creation flow (the seed notes' mnemonic chain).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stage {
    /// 1…7.
    pub number: u8,
    /// Short English title.
    pub title: &'static str,
    /// The mnemonic (简体中文).
    pub mnemonic: &'static str,
    /// When it last happened (virtual ms), if it has.
    pub at: Option<Time>,
    /// What happened (`POST /apis/apps/v1/namespaces/default/deployments 201`).
    pub detail: String,
}

/// Everything the page draws for one frame.
#[derive(Clone, Debug, PartialEq)]
pub struct ClusterView {
    /// Virtual time.
    pub now: Time,
    /// Control-plane components.
    pub components: Vec<ComponentView>,
    /// Worker nodes (shared: a node whose view did not change since the last frame is
    /// the same `Arc`, so comparing two frames' nodes costs a pointer each).
    pub nodes: Vec<Arc<NodeView>>,
    /// Pods not bound to any node.
    pub pending: Vec<Arc<PodView>>,
    /// The seven stages.
    pub stages: Vec<Stage>,
}

pub(crate) fn pod_view(p: &Pod) -> PodView {
    let status = p.status.clone().unwrap_or_default();
    let containers = status
        .container_statuses
        .iter()
        .flatten()
        .map(|c| {
            let st = c.state.clone().unwrap_or_default();
            let (state, reason) = if st.running.is_some() {
                ("running", String::new())
            } else if let Some(t) = st.terminated {
                ("terminated", t.reason.unwrap_or_default())
            } else {
                (
                    "waiting",
                    st.waiting.and_then(|w| w.reason).unwrap_or_default(),
                )
            };
            ContainerView {
                name: c.name.clone(),
                state,
                reason,
                ready: c.ready,
                restarts: c.restart_count,
            }
        })
        .collect();
    let owner = p
        .metadata
        .owner_references
        .iter()
        .flatten()
        .find(|r| r.controller == Some(true))
        .map(|r| format!("{}/{}", r.kind, r.name))
        .unwrap_or_default();
    PodView {
        owner,
        namespace: p.metadata.namespace.clone().unwrap_or_default(),
        name: p.metadata.name.clone().unwrap_or_default(),
        status: crate::kubectl::printers::pod_status(p),
        phase: status.phase.clone().unwrap_or_default(),
        ready: crate::controllers::util::is_pod_ready(p),
        ip: status.pod_ip.clone().unwrap_or_default(),
        node: p
            .spec
            .as_ref()
            .and_then(|s| s.node_name.clone())
            .unwrap_or_default(),
        containers,
        terminating: p.metadata.deletion_timestamp.is_some(),
    }
}

/// The cluster's own namespaces: `kube-*` (the prefix the Kubernetes docs reserve for
/// system namespaces: kube-system, kube-public, kube-node-lease) and kind's
/// `local-path-storage`. The views leave what is in them out of the user's workload and
/// draw their pods quieter.
pub fn is_system_namespace(ns: &str) -> bool {
    ns.starts_with("kube-") || ns == "local-path-storage"
}

/// The objects of a kind as etcd holds them (the page is omniscient).
pub fn stored(world: &World, kind: Kind) -> Vec<Arc<Object>> {
    let prefix = format!("/registry/{}/", kind.info().etcd_prefix);
    world
        .observe()
        .etcd()
        .store
        .range_prefix(&prefix)
        .map(|kv| kv.value.clone())
        .collect()
}

/// Builds the frame's view.
pub fn cluster_view(world: &World) -> ClusterView {
    cluster_view_cached(world, &mut ViewCache::new())
}

fn flight_view(now: Time, e: &crate::world::Envelope) -> FlightView {
    FlightView {
        from: e.from,
        to: e.to,
        label: e.payload.label(),
        progress: ((now.saturating_sub(e.sent)) as f64 / (e.at - e.sent).max(1) as f64)
            .clamp(0.0, 1.0),
        sent: e.sent,
        arrives: e.at,
    }
}

/// The messages between two different actors sent since `*seq` (a
/// [`World::next_seq`] remembered by the caller, which moves on), in the order they were
/// sent: each message is seen once, at a cost that grows with the new messages only.
pub fn flights_since(world: &World, seq: &mut u64) -> Vec<FlightView> {
    let now = world.now();
    let out = world
        .in_flight_since(*seq)
        .filter(|(_, e)| e.from != e.to && e.at > e.sent)
        .map(|(_, e)| flight_view(now, e))
        .collect();
    *seq = world.next_seq();
    out
}

/// The messages on their way between two different actors, in arrival order.
pub fn flights(world: &World) -> Vec<FlightView> {
    let now = world.now();
    world
        .in_flight()
        .filter(|e| e.from != e.to && e.at > e.sent)
        .map(|e| FlightView {
            from: e.from,
            to: e.to,
            label: e.payload.label(),
            progress: ((now.saturating_sub(e.sent)) as f64 / (e.at - e.sent) as f64)
                .clamp(0.0, 1.0),
            sent: e.sent,
            arrives: e.at,
        })
        .collect()
}

/// How the diagram colors a pod.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum PodClass {
    /// Not bound to a node yet (waiting for the scheduler).
    Unscheduled,
    /// Bound, containers not running yet (`ContainerCreating`, `PodInitializing`).
    Creating,
    /// Running and Ready.
    Ready,
    /// Running, not Ready (probes failing, a container restarting).
    NotReady,
    /// Failing: `CrashLoopBackOff`, `ErrImagePull`, `Error`, phase Failed.
    Failed,
    /// Finished successfully (`Completed`).
    Succeeded,
    /// Being deleted.
    Terminating,
}

impl PodClass {
    /// The CSS class suffix (`ready`, `crash`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            PodClass::Unscheduled => "unscheduled",
            PodClass::Creating => "creating",
            PodClass::Ready => "ready",
            PodClass::NotReady => "notready",
            PodClass::Failed => "failed",
            PodClass::Succeeded => "succeeded",
            PodClass::Terminating => "terminating",
        }
    }

    /// Every class, in legend order.
    pub const ALL: [PodClass; 7] = [
        PodClass::Unscheduled,
        PodClass::Creating,
        PodClass::Ready,
        PodClass::NotReady,
        PodClass::Failed,
        PodClass::Succeeded,
        PodClass::Terminating,
    ];
}

/// Waiting/terminated reasons (and pod STATUS values) that mean something is wrong.
const ERROR_REASONS: &[&str] = &[
    "CrashLoopBackOff",
    "Error",
    "ErrImagePull",
    "ImagePullBackOff",
    "ErrImageNeverPull",
    "InvalidImageName",
    "CreateContainerConfigError",
    "CreateContainerError",
    "RunContainerError",
    "ContainerCannotRun",
    "StartError",
    "OOMKilled",
    "Evicted",
    "NodeLost",
];

fn is_error_reason(s: &str) -> bool {
    let s = s.strip_prefix("Init:").unwrap_or(s);
    ERROR_REASONS.contains(&s) || s.starts_with("Signal:") || s.starts_with("ExitCode:")
}

/// The color class of a pod, from what `kubectl get pods` would show.
pub fn pod_class(p: &PodView) -> PodClass {
    if p.terminating || p.status == "Terminating" {
        return PodClass::Terminating;
    }
    if p.phase == "Failed"
        || is_error_reason(&p.status)
        || p.containers
            .iter()
            .any(|c| is_error_reason(&c.reason) && c.state == "waiting")
    {
        return PodClass::Failed;
    }
    if p.phase == "Succeeded" || p.status == "Completed" {
        return PodClass::Succeeded;
    }
    if p.node.is_empty() {
        return PodClass::Unscheduled;
    }
    match (p.phase.as_str(), p.ready) {
        ("Running", true) => PodClass::Ready,
        ("Running", false) => PodClass::NotReady,
        _ => PodClass::Creating,
    }
}

#[path = "view_cache.rs"]
mod cache;
pub use cache::{cluster_view_cached, ViewCache};

#[path = "view_stages.rs"]
mod stages;
pub use stages::{latch_stages, stages};

#[path = "view_apply_errors.rs"]
mod apply_errors;
pub use apply_errors::locate_apply_errors;

#[path = "view_flow.rs"]
mod flow;
pub use flow::{deployment_to_expose, newest_user_pod, pod_flow, PodFlow};

/// The timeline: every message between components, with its times, object and answer.
#[path = "view_timeline.rs"]
pub mod timeline;

/// The causal traces of a pod and a Deployment's rollout.
#[path = "view_trace.rs"]
pub mod trace;

/// The proxy view: a node's kube-proxy rules as a graph, its `iptables-save` text and
/// the last request's path.
#[path = "view_proxy.rs"]
pub mod proxy;

/// The object browser and inspector: every stored object by kind, an object's YAML,
/// Events and owner tree.
#[path = "view_objects.rs"]
pub mod objects;

/// The etcd browser and an object's etcd key: revisions, diffs, the writing request, the
/// keyspace and the watch stream.
#[path = "view_etcd.rs"]
pub mod etcd;

/// The Services the diagram draws, with their endpoints.
#[path = "view_services.rs"]
pub mod services;

#[cfg(test)]
#[path = "view_tests.rs"]
mod tests;
