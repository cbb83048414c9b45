//! The frame's view, built from what changed since the last frame.
//!
//! The page asks for a [`ClusterView`] on every frame in which a message was delivered,
//! which at 5,000 nodes is every frame. A [`ViewCache`] keeps each pod's view with the
//! etcd revision it was built from, and each node's view with what it was built from
//! (the Node object's revision, the machine's facts and its pods): a frame then walks
//! the pods and the nodes once, side by side with the cache, and rebuilds only what
//! moved. Unchanged views are the same `Arc`s as in the last frame, so the page compares
//! and copies them by pointer.

use std::collections::HashMap;
use std::sync::Arc;

use k8s_openapi::api::core::v1::{Node, Taint};

use super::{pod_view, stages, ClusterView, ComponentView, NodeView, PodView, TaintView};
use crate::controllers::nodelifecycle::eviction_deadline;
use crate::message::Actor;
use crate::node::host::NodeHost;
use crate::object::{Kind, Object};
use crate::time::Time;
use crate::world::World;

/// What [`cluster_view_cached`] keeps between frames.
#[derive(Debug, Default)]
pub struct ViewCache {
    /// The pods' views, in etcd key order.
    pods: Vec<CachedPod>,
    /// The nodes' views, in the machines' order.
    nodes: Vec<CachedNode>,
    /// Each machine's place in that order, by name (rebuilt when the machines change).
    hosts: HashMap<String, usize>,
}

#[derive(Debug)]
struct CachedPod {
    key: String,
    mod_revision: u64,
    view: Arc<PodView>,
}

#[derive(Debug)]
struct CachedNode {
    /// The Node object's mod revision (0 while it has none).
    mod_revision: u64,
    machine: Machine,
    view: Arc<NodeView>,
}

/// The simulator's own facts about a machine that its node's view shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Machine {
    powered: bool,
    partitioned: bool,
    kubelet: bool,
    runtime: bool,
    proxy: bool,
}

impl Machine {
    fn of(world: &World, i: usize, h: &NodeHost) -> Machine {
        Machine {
            powered: h.powered,
            partitioned: h.partitioned,
            kubelet: world.is_running(Actor::Kubelet(i as u32)),
            runtime: world.is_running(Actor::Runtime(i as u32)),
            proxy: world.is_running(Actor::KubeProxy(i as u32)),
        }
    }
}

impl ViewCache {
    /// An empty cache.
    pub fn new() -> ViewCache {
        ViewCache::default()
    }

    /// The pods as etcd holds them, reusing the views of unchanged ones (shared, not
    /// copied). Both lists are in key order, so they are walked side by side.
    fn pods(&mut self, world: &World) -> Vec<Arc<PodView>> {
        let prefix = format!("/registry/{}/", Kind::Pod.info().etcd_prefix);
        let mut old = std::mem::take(&mut self.pods).into_iter().peekable();
        for kv in world.observe().etcd().store.range_prefix(&prefix) {
            let Object::Pod(p) = &*kv.value else { continue };
            // Cached keys before this one are pods deleted since.
            while old.next_if(|c| c.key < kv.key).is_some() {}
            let cached = match old.next_if(|c| c.key == kv.key) {
                Some(c) if c.mod_revision == kv.mod_revision => c,
                Some(c) => CachedPod {
                    mod_revision: kv.mod_revision,
                    view: Arc::new(pod_view(p)),
                    ..c
                },
                None => CachedPod {
                    key: kv.key.clone(),
                    mod_revision: kv.mod_revision,
                    view: Arc::new(pod_view(p)),
                },
            };
            self.pods.push(cached);
        }
        self.pods.iter().map(|c| c.view.clone()).collect()
    }
}

/// Builds the frame's view, rebuilding only the pods whose etcd revision moved and the
/// nodes whose object, machine or pods changed since `cache` last saw them (a frame at
/// 5,000 nodes then costs a walk, not 5,000 rebuilds).
pub fn cluster_view_cached(world: &World, cache: &mut ViewCache) -> ClusterView {
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
    let hosts = world.observe().nodes();
    cache.index_hosts(hosts);
    let mut on_node: Vec<Vec<Arc<PodView>>> = vec![Vec::new(); hosts.len()];
    let mut pending = Vec::new();
    for p in cache.pods(world) {
        if p.node.is_empty() {
            pending.push(p);
        } else if let Some(&i) = cache.hosts.get(p.node.as_str()) {
            on_node[i].push(p);
        }
    }
    ClusterView {
        now: world.now(),
        components,
        nodes: cache.nodes(world, hosts, on_node),
        pending,
        stages: stages(world),
    }
}

impl ViewCache {
    /// Maps the machines' names to their places, unless they are the ones the cached
    /// node views were built for.
    fn index_hosts(&mut self, hosts: &[NodeHost]) {
        let same = self.nodes.len() == hosts.len()
            && self
                .nodes
                .iter()
                .zip(hosts)
                .all(|(c, h)| c.view.name == h.config.name);
        if !same {
            self.hosts = hosts
                .iter()
                .enumerate()
                .map(|(i, h)| (h.config.name.clone(), i))
                .collect();
        }
    }

    /// The nodes' views, reusing each one whose Node object, machine and pods (by
    /// pointer) are those it was built from.
    fn nodes(
        &mut self,
        world: &World,
        hosts: &[NodeHost],
        on_node: Vec<Vec<Arc<PodView>>>,
    ) -> Vec<Arc<NodeView>> {
        // The Node objects by machine (a lookup per object in a map that is only read,
        // so its order never shows).
        let mut objects: Vec<Option<(u64, &Node)>> = vec![None; hosts.len()];
        let prefix = format!("/registry/{}/", Kind::Node.info().etcd_prefix);
        for kv in world.observe().etcd().store.range_prefix(&prefix) {
            if let Object::Node(n) = &*kv.value {
                let name = n.metadata.name.as_deref().unwrap_or("");
                if let Some(&i) = self.hosts.get(name) {
                    objects[i] = Some((kv.mod_revision, &**n));
                }
            }
        }
        let deadlines = eviction_deadlines(world, &objects);
        let mut old = std::mem::take(&mut self.nodes).into_iter();
        for (i, (h, pods)) in hosts.iter().zip(on_node).enumerate() {
            let mod_revision = objects[i].map_or(0, |(r, _)| r);
            let machine = Machine::of(world, i, h);
            let view = match old.next() {
                Some(c)
                    if c.mod_revision == mod_revision
                        && c.machine == machine
                        && holds(&c.view, h, &pods) =>
                {
                    c.view
                }
                _ => {
                    let facts = objects[i].map(|(_, n)| node_facts(n, deadlines[i]));
                    Arc::new(node_view(h, machine, facts.unwrap_or_default(), pods))
                }
            };
            self.nodes.push(CachedNode {
                mod_revision,
                machine,
                view,
            });
        }
        self.nodes.iter().map(|c| c.view.clone()).collect()
    }
}

/// Whether a cached node view still holds for the machine `h` with these pods: the same
/// machine and the same pods (by pointer), and no NoExecute taint (the eviction countdown
/// then depends on the pods' own revisions, so such a node is rebuilt every frame).
fn holds(cached: &NodeView, h: &NodeHost, pods: &[Arc<PodView>]) -> bool {
    cached.name == h.config.name
        && cached.ip == h.ip
        && cached.pod_cidr == h.pod_cidr
        && cached.pods.len() == pods.len()
        && cached.pods.iter().zip(pods).all(|(a, b)| Arc::ptr_eq(a, b))
        && !cached.taints.iter().any(|t| t.effect == "NoExecute")
}

/// When the node lifecycle controller is due to evict the first pod of each node with a
/// NoExecute taint (by the machines' order), from one walk over the pods, and only when
/// some node has such a taint.
fn eviction_deadlines(world: &World, objects: &[Option<(u64, &Node)>]) -> Vec<Option<Time>> {
    let no_execute: Vec<Vec<Taint>> = objects
        .iter()
        .map(|o| {
            let taints = o.and_then(|(_, n)| n.spec.as_ref()?.taints.as_ref());
            taints
                .into_iter()
                .flatten()
                .filter(|t| t.effect == "NoExecute")
                .cloned()
                .collect()
        })
        .collect();
    let mut out = vec![None; objects.len()];
    if no_execute.iter().all(Vec::is_empty) {
        return out;
    }
    let tainted: HashMap<&str, usize> = objects
        .iter()
        .enumerate()
        .filter(|(i, _)| !no_execute[*i].is_empty())
        .filter_map(|(i, o)| Some((o.as_ref()?.1.metadata.name.as_deref()?, i)))
        .collect();
    let prefix = format!("/registry/{}/", Kind::Pod.info().etcd_prefix);
    for kv in world.observe().etcd().store.range_prefix(&prefix) {
        let Object::Pod(p) = &*kv.value else { continue };
        let node = p.spec.as_ref().and_then(|s| s.node_name.as_deref());
        let Some(&i) = node.and_then(|n| tainted.get(n)) else {
            continue;
        };
        if p.metadata.deletion_timestamp.is_none() {
            if let Some(d) = eviction_deadline(p, &no_execute[i]) {
                out[i] = Some(out[i].map_or(d, |x: Time| x.min(d)));
            }
        }
    }
    out
}

/// A node's view from its machine, what its Node object says and its pods.
fn node_view(h: &NodeHost, m: Machine, f: NodeFacts, pods: Vec<Arc<PodView>>) -> NodeView {
    NodeView {
        name: h.config.name.clone(),
        ip: h.ip.clone(),
        pod_cidr: h.pod_cidr.clone(),
        status: f.status,
        reason: f.reason,
        taints: f.taints,
        unschedulable: f.unschedulable,
        eviction_at: f.eviction_at,
        powered: m.powered,
        partitioned: m.partitioned,
        kubelet: m.kubelet,
        runtime: m.runtime,
        proxy: m.proxy,
        pods,
    }
}

/// What the Node object says, as kubectl would show it.
#[derive(Clone, Debug)]
struct NodeFacts {
    status: String,
    reason: String,
    taints: Vec<TaintView>,
    unschedulable: bool,
    eviction_at: Option<Time>,
}

impl Default for NodeFacts {
    fn default() -> NodeFacts {
        NodeFacts {
            status: "Unknown".into(),
            reason: String::new(),
            taints: Vec::new(),
            unschedulable: false,
            eviction_at: None,
        }
    }
}

/// What the Node object says; `eviction_at` from [`eviction_deadlines`].
fn node_facts(n: &Node, eviction_at: Option<Time>) -> NodeFacts {
    let ready = n
        .status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .and_then(|cs| cs.iter().find(|c| c.type_ == "Ready"));
    let status = match ready.map(|c| c.status.as_str()) {
        Some("True") => "Ready",
        Some("False") => "NotReady",
        _ => "Unknown",
    };
    let spec = n.spec.as_ref();
    let taints_raw = spec.and_then(|s| s.taints.as_deref()).unwrap_or_default();
    NodeFacts {
        status: status.to_string(),
        reason: ready.and_then(|c| c.reason.clone()).unwrap_or_default(),
        taints: taints_raw
            .iter()
            .map(|t| TaintView {
                key: t.key.clone(),
                effect: t.effect.clone(),
                added: t.time_added.as_ref().map(crate::time::from_k8s_time),
            })
            .collect(),
        unschedulable: spec.and_then(|s| s.unschedulable).unwrap_or(false),
        eviction_at,
    }
}
