//! A read model of the world for the page: components, nodes with their pods and
//! containers, messages in flight, and the seven stages of the pod creation flow with
//! their virtual times. Plain data, built from engine state, tested natively.

use std::sync::Arc;

use k8s_openapi::api::core::v1::Pod;

use crate::api::Verb;
use crate::object::{Kind, Object};
use crate::time::Time;
use crate::world::{Actor, World};

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
}

/// A worker node as the diagram draws it.
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
    /// Machine powered on.
    pub powered: bool,
    /// Cut off from the control plane.
    pub partitioned: bool,
    /// kubelet running.
    pub kubelet: bool,
    /// containerd running.
    pub runtime: bool,
    /// kube-proxy running.
    pub proxy: bool,
    /// Pods bound to it.
    pub pods: Vec<PodView>,
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
    /// Worker nodes.
    pub nodes: Vec<NodeView>,
    /// Pods not bound to any node.
    pub pending: Vec<PodView>,
    /// Messages in flight.
    pub flights: Vec<FlightView>,
    /// The seven stages.
    pub stages: Vec<Stage>,
}

fn pod_view(p: &Pod) -> PodView {
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
    PodView {
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

/// The objects of a kind as etcd holds them (the page is omniscient).
pub fn stored(world: &World, kind: Kind) -> Vec<Arc<Object>> {
    let prefix = format!("/registry/{}/", kind.info().etcd_prefix);
    world
        .etcd
        .store
        .range_prefix(&prefix)
        .map(|kv| kv.value.clone())
        .collect()
}

const STAGES: [(&str, &str); 7] = [
    ("kubectl → kube-apiserver", "kubectl喊"),
    ("kube-apiserver writes etcd", "apiserver写"),
    ("Deployment controller → ReplicaSet", "Deployment催"),
    ("ReplicaSet controller → Pods", "ReplicaSet补"),
    ("kube-scheduler binds", "Scheduler选"),
    ("kubelet starts containers", "Kubelet建"),
    ("kube-proxy writes rules", "Proxy通"),
];

/// The latest time each of the seven stages happened, from the apiserver's audit log and
/// the nodes' proxy syncs.
pub fn stages(world: &World) -> Vec<Stage> {
    let mut out: Vec<Stage> = STAGES
        .iter()
        .enumerate()
        .map(|(i, (t, m))| Stage {
            number: i as u8 + 1,
            title: t,
            mnemonic: m,
            at: None,
            detail: String::new(),
        })
        .collect();
    if let Some(api) = &world.apiserver {
        for e in api.audit() {
            let path = &e.path;
            let write = e.verb.is_write() && e.code < 300;
            let stage = match (e.client, e.verb) {
                (Actor::Terminal(_), v) if v.is_write() => Some(0),
                (Actor::ControllerManager, Verb::Create) if path.contains("/replicasets") => {
                    Some(2)
                }
                (Actor::ControllerManager, Verb::Create) if path.ends_with("/pods") => Some(3),
                (Actor::Scheduler, Verb::Create) if path.ends_with("/binding") => Some(4),
                (Actor::Kubelet(_), Verb::Patch)
                    if path.ends_with("/status") && path.contains("/pods/") =>
                {
                    Some(5)
                }
                _ => None,
            };
            if let Some(i) = stage {
                out[i].at = Some(e.received);
                out[i].detail = format!("{} {} {}", e.verb.http_method(), path, e.code);
                if i == 0 && write {
                    let etcd_end = e
                        .spans
                        .iter()
                        .find(|s| s.stage == "etcd")
                        .map_or(e.received, |s| s.end);
                    out[1].at = Some(etcd_end);
                    out[1].detail = format!("etcd write for {path}");
                }
            }
        }
    }
    let last_sync = world
        .nodes
        .iter()
        .filter_map(|h| h.rules.as_ref().map(|r| r.synced_at))
        .max();
    if let Some(t) = last_sync {
        if t > 0 {
            out[6].at = Some(t);
            out[6].detail = "iptables rules resynced".into();
        }
    }
    out
}

/// Builds the frame's view.
pub fn cluster_view(world: &World) -> ClusterView {
    let now = world.now();
    let components = [
        Actor::Etcd,
        Actor::ApiServer,
        Actor::ControllerManager,
        Actor::Scheduler,
    ]
    .into_iter()
    .map(|a| ComponentView {
        name: a.component_name(),
        running: world.is_running(a),
    })
    .collect();
    let pods: Vec<PodView> = stored(world, Kind::Pod)
        .iter()
        .filter_map(|o| match &**o {
            Object::Pod(p) => Some(pod_view(p)),
            _ => None,
        })
        .collect();
    let node_objs = stored(world, Kind::Node);
    let nodes = world
        .nodes
        .iter()
        .enumerate()
        .map(|(i, h)| {
            let status = node_objs
                .iter()
                .find(|o| o.name() == h.config.name)
                .and_then(|o| match &**o {
                    Object::Node(n) => n
                        .status
                        .as_ref()?
                        .conditions
                        .as_ref()?
                        .iter()
                        .find(|c| c.type_ == "Ready")
                        .map(|c| match c.status.as_str() {
                            "True" => "Ready".to_string(),
                            "False" => "NotReady".to_string(),
                            _ => "Unknown".to_string(),
                        }),
                    _ => None,
                })
                .unwrap_or_else(|| "Unknown".into());
            NodeView {
                name: h.config.name.clone(),
                ip: h.ip.clone(),
                pod_cidr: h.pod_cidr.clone(),
                status,
                powered: h.powered,
                partitioned: h.partitioned,
                kubelet: world.is_running(Actor::Kubelet(i as u32)),
                runtime: world.is_running(Actor::Runtime(i as u32)),
                proxy: world.is_running(Actor::KubeProxy(i as u32)),
                pods: pods
                    .iter()
                    .filter(|p| p.node == h.config.name)
                    .cloned()
                    .collect(),
            }
        })
        .collect();
    let pending = pods.iter().filter(|p| p.node.is_empty()).cloned().collect();
    let flights = world
        .in_flight()
        .filter(|e| e.from != e.to && e.at > e.sent)
        .map(|e| FlightView {
            from: e.from,
            to: e.to,
            label: e.payload.label(),
            progress: ((now.saturating_sub(e.sent)) as f64 / (e.at - e.sent) as f64)
                .clamp(0.0, 1.0),
        })
        .collect();
    ClusterView {
        now,
        components,
        nodes,
        pending,
        flights,
        stages: stages(world),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::ClusterConfig;
    use crate::time::SECOND;

    #[test]
    fn the_view_shows_nodes_pods_and_the_seven_stages() {
        let mut w = World::new(ClusterConfig::default());
        let files = [("d.yaml".to_string(), "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 2\n  selector:\n    matchLabels: {app: web}\n  template:\n    metadata:\n      labels: {app: web}\n    spec:\n      containers:\n      - name: web\n        image: nginx:1.27\n".to_string())]
            .into_iter()
            .collect();
        let before = cluster_view(&w);
        assert_eq!(before.nodes.len(), 3);
        assert!(before
            .stages
            .iter()
            .all(|s| s.at.is_none() || s.number == 7));
        crate::cmd::run(&mut w, "kubectl apply -f d.yaml", &files, 10 * SECOND);
        w.run_for(20 * SECOND);
        let v = cluster_view(&w);
        // The cluster's add-ons (CoreDNS, local-path provisioner) run too.
        let pods: usize = v
            .nodes
            .iter()
            .flat_map(|n| &n.pods)
            .filter(|p| p.namespace == "default")
            .count();
        assert_eq!(pods, 2);
        assert!(v
            .nodes
            .iter()
            .flat_map(|n| &n.pods)
            .all(|p| p.status == "Running" && p.ready));
        for s in &v.stages[..6] {
            assert!(s.at.is_some(), "stage {} happened: {s:?}", s.number);
        }
        let times: Vec<Time> = v.stages[..6].iter().map(|s| s.at.unwrap_or(0)).collect();
        assert!(
            times.windows(2).all(|w| w[0] <= w[1]),
            "stages in causal order: {times:?}"
        );
        assert!(v.components.iter().all(|c| c.running));
    }
}
