//! The DaemonSet controller (upstream `pkg/controller/daemon`): one pod per eligible node,
//! pinned to it through a required node affinity on `metadata.name` and placed by
//! kube-scheduler; pods leave nodes that no longer qualify or no longer exist; rolling
//! updates with maxUnavailable and maxSurge, or OnDelete; ControllerRevision history and
//! the DaemonSet's status.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use k8s_openapi::api::apps::v1::{ControllerRevision, DaemonSet, DaemonSetStatus};
use k8s_openapi::api::core::v1::{Node, Pod};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use crate::api::{ApiRequest, ApiResponse, ApiResult, Body, ReqId, Subresource, Verb};
use crate::client::recorder::{NORMAL, WARNING};
use crate::client::{Change, Pending, WorkQueue};
use crate::controllers::daemonset_util::*;
use crate::controllers::deployment_util::scaled_value;
use crate::controllers::history::{self, template_patch, REVISION_HASH_LABEL};
use crate::controllers::statefulset_pods::{as_pod, is_terminating};
use crate::controllers::util::{
    controller_of, is_pod_available, is_pod_ready, key_of, pod_from_template, split_key,
};
use crate::controllers::{Action, Controller, Env, Informers, SyncError, SyncResult};
use crate::object::{Kind, Object};
use crate::selector::LabelSelector;
use crate::time::Time;

/// Virtual ms a sync takes per hundred nodes (10 µs a node: the controller checks each
/// node against the template and each of the set's pods). Below a hundred nodes a sync
/// takes no virtual time.
pub const SYNC_MS_PER_100_NODES: Time = 1;

/// `BurstReplicas`: at most this many pod creates, and this many deletes, per sync; the
/// rest wait for the next sync, once the informer has seen these (the expectations).
/// 5,000 new nodes get their daemon pods in twenty syncs, not in one.
pub const BURST_REPLICAS: usize = 250;

/// What a request in flight was for; each names its DaemonSet's key.
#[derive(Debug)]
enum Sent {
    /// A pod create for a node.
    Create(String, String),
    /// A pod delete.
    Delete(String, String),
    /// A revision create or renumbering.
    Revision(String),
    /// Anything else whose failure only retries the set.
    Other(String),
}

/// The DaemonSet controller.
#[derive(Default)]
pub struct DaemonSetController {
    sent: Pending<Sent>,
    /// Creates (by node) and deletes (by pod name) in flight and not yet seen by the pod
    /// informer, per DaemonSet (upstream's expectations).
    expect: BTreeMap<String, BTreeSet<String>>,
    /// Revisions created that the informer may not hold yet, by name.
    created_revisions: BTreeMap<String, ControllerRevision>,
}

/// A node's daemon pods, split by revision.
#[derive(Default)]
struct OnNode<'a> {
    new: Vec<&'a Arc<Object>>,
    old: Vec<&'a Arc<Object>>,
}

fn pod_hash(p: &Pod) -> &str {
    p.metadata
        .labels
        .as_ref()
        .and_then(|l| l.get(REVISION_HASH_LABEL))
        .map_or("", String::as_str)
}

fn available(o: &Object, min_ready: i32, now: Time) -> bool {
    as_pod(o).is_some_and(|p| is_pod_available(p, min_ready, now))
}

impl DaemonSetController {
    fn owner_key(o: &Object, inf: &Informers) -> Option<String> {
        crate::controllers::util::controller_key(o, Kind::DaemonSet, inf)
    }

    fn expect(&mut self, key: &str, what: String) {
        self.expect.entry(key.to_string()).or_default().insert(what);
    }

    fn observed(&mut self, key: &str, what: &str) {
        if let Some(e) = self.expect.get_mut(key) {
            e.remove(what);
            if e.is_empty() {
                self.expect.remove(key);
            }
        }
    }

    /// The update revision (the template's), created or renumbered when needed; `None`
    /// while that write is in flight. Also the set's revisions, oldest first.
    fn revision(
        &mut self,
        key: &str,
        ds_obj: &Arc<Object>,
        ds: &DaemonSet,
        env: &mut Env,
        inf: &Informers,
    ) -> Option<(ControllerRevision, Vec<(Arc<Object>, ControllerRevision)>)> {
        let uid = ds_obj.meta().uid.clone().unwrap_or_default();
        let ns = ds_obj.namespace();
        let mut all = history::owned_revisions(inf, ns, &uid);
        for (name, r) in &self.created_revisions {
            if r.metadata.namespace.as_deref() == Some(ns)
                && controller_of(&r.metadata).is_some_and(|o| o.uid == uid)
                && !all
                    .iter()
                    .any(|(_, x)| x.metadata.name.as_deref() == Some(name))
            {
                all.push((Arc::new(Object::from(r.clone())), r.clone()));
            }
        }
        all.sort_by_key(|(_, r)| r.revision);
        let template = ds
            .spec
            .as_ref()
            .map(|s| s.template.clone())
            .unwrap_or_default();
        let data = template_patch(&template);
        let max = history::max_revision(&all);
        let equal = history::equal_revisions(&all, &data);
        let req = match equal.last() {
            Some(eq) if eq.revision == max => return Some(((*eq).clone(), all)),
            Some(eq) => {
                let mut r = (*eq).clone();
                r.revision = max + 1;
                let name = r.metadata.name.clone().unwrap_or_default();
                ApiRequest::new(Verb::Update, Kind::ControllerRevision, ns, &name)
                    .with_body(Body::Object(r.into()))
            }
            None => {
                let collision = ds.status.as_ref().and_then(|s| s.collision_count);
                let labels = template.metadata.as_ref().and_then(|m| m.labels.as_ref());
                let r = history::new_revision(ds_obj, labels, data, max + 1, collision);
                ApiRequest::new(Verb::Create, Kind::ControllerRevision, ns, "")
                    .with_body(Body::Object(r.into()))
            }
        };
        let id = env.send(req);
        self.sent.insert(id, Sent::Revision(key.to_string()));
        None
    }

    fn create(
        &mut self,
        key: &str,
        ds_obj: &Arc<Object>,
        ds: &DaemonSet,
        hash: &str,
        node: &str,
        env: &mut Env,
    ) {
        let mut template = daemon_template(ds);
        let gen = crate::apiserver::strategy::template_generation(ds).to_string();
        let m = template.metadata.get_or_insert_with(Default::default);
        let labels = m.labels.get_or_insert_with(Default::default);
        labels.insert(REVISION_HASH_LABEL.into(), hash.to_string());
        labels.insert(TEMPLATE_GENERATION_LABEL.into(), gen);
        let mut pod = pod_from_template(&template, ds_obj, &format!("{}-", ds_obj.name()));
        let spec = pod.spec.get_or_insert_with(Default::default);
        spec.affinity = Some(pin_to_node(spec.affinity.take(), node));
        let req = ApiRequest::new(Verb::Create, Kind::Pod, ds_obj.namespace(), "")
            .with_body(Body::Object(pod.into()));
        let id = env.send(req);
        self.sent
            .insert(id, Sent::Create(key.to_string(), node.to_string()));
        self.expect(key, format!("node/{node}"));
    }

    fn delete(&mut self, key: &str, pod: &Arc<Object>, env: &mut Env) {
        let id = env.send(ApiRequest::new(
            Verb::Delete,
            Kind::Pod,
            pod.namespace(),
            pod.name(),
        ));
        self.sent
            .insert(id, Sent::Delete(key.to_string(), pod.name().to_string()));
        self.expect(key, format!("pod/{}", pod.name()));
    }

    /// `manage` and `rollingUpdate`: pods to create per node and pods to delete.
    #[allow(clippy::too_many_arguments)]
    fn manage(
        &mut self,
        key: &str,
        ds_obj: &Arc<Object>,
        ds: &DaemonSet,
        hash: &str,
        nodes: &[(&Node, bool, bool)],
        by_node: &BTreeMap<&str, OnNode>,
        orphans: &[&Arc<Object>],
        env: &mut Env,
    ) {
        let now = env.now();
        let mut creates: Vec<String> = Vec::new();
        let mut deletes: Vec<&Arc<Object>> = orphans.to_vec();
        for (node, run, keep) in nodes {
            let name = node.metadata.name.as_deref().unwrap_or_default();
            let empty = OnNode::default();
            let on = by_node.get(name).unwrap_or(&empty);
            let pods = on.new.iter().chain(on.old.iter()).copied();
            if *run && on.new.is_empty() && on.old.is_empty() {
                creates.push(name.to_string());
            } else if *run {
                // A failed daemon pod is killed (and recreated by a later sync).
                for o in pods {
                    let failed = as_pod(o)
                        .and_then(|p| p.status.as_ref())
                        .and_then(|s| s.phase.as_deref())
                        == Some("Failed");
                    if failed {
                        let msg = format!(
                            "Found failed daemon pod {}/{} on node {name}, will try to kill it",
                            o.namespace(),
                            o.name()
                        );
                        env.event(ds_obj, WARNING, "FailedDaemonPod", &msg);
                        deletes.push(o);
                    }
                }
            } else if !*keep {
                deletes.extend(pods);
            }
        }
        rolling_update(ds, nodes, by_node, now, &mut creates, &mut deletes);
        // syncNodes: createDiff and deleteDiff capped at burstReplicas.
        for node in creates.into_iter().take(BURST_REPLICAS) {
            self.create(key, ds_obj, ds, hash, &node, env);
        }
        let mut seen = BTreeSet::new();
        deletes.retain(|o| seen.insert(o.name()));
        for o in deletes.into_iter().take(BURST_REPLICAS) {
            self.delete(key, o, env);
        }
    }

    fn write_status(
        &mut self,
        key: &str,
        ds: &DaemonSet,
        hash: &str,
        nodes: &[(&Node, bool, bool)],
        by_node: &BTreeMap<&str, OnNode>,
        now: Time,
        env: &mut Env,
    ) {
        let min_ready = ds
            .spec
            .as_ref()
            .and_then(|s| s.min_ready_seconds)
            .unwrap_or(0);
        let old = ds.status.clone().unwrap_or_default();
        let mut st = DaemonSetStatus {
            observed_generation: ds.metadata.generation,
            collision_count: old.collision_count,
            conditions: old.conditions,
            ..DaemonSetStatus::default()
        };
        let (mut ready, mut avail, mut updated) = (0, 0, 0);
        for (node, run, _) in nodes {
            let name = node.metadata.name.as_deref().unwrap_or_default();
            let Some(on) = by_node.get(name) else {
                continue;
            };
            // The oldest of the node's pods (the first of equals, new ones first).
            let oldest = on.new.iter().chain(on.old.iter()).min_by(|a, b| {
                a.meta()
                    .creation_timestamp
                    .cmp(&b.meta().creation_timestamp)
            });
            let Some(oldest) = oldest else {
                continue;
            };
            if *run {
                st.current_number_scheduled += 1;
                let Some(p) = as_pod(oldest) else { continue };
                if is_pod_ready(p) {
                    ready += 1;
                    if is_pod_available(p, min_ready, now) {
                        avail += 1;
                    }
                }
                if on
                    .new
                    .iter()
                    .any(|o| as_pod(o).is_some_and(|p| pod_hash(p) == hash))
                {
                    updated += 1;
                }
            } else {
                st.number_misscheduled += 1;
            }
        }
        st.desired_number_scheduled = nodes.iter().filter(|(_, run, _)| *run).count() as i32;
        st.number_ready = ready;
        st.number_available = Some(avail);
        st.updated_number_scheduled = Some(updated);
        let unavailable = st.desired_number_scheduled - avail;
        st.number_unavailable = (unavailable > 0).then_some(unavailable);
        if ds.status.as_ref() == Some(&st) {
            return;
        }
        let mut d = ds.clone();
        d.status = Some(st);
        let (ns, name) = split_key(key);
        let req = ApiRequest::new(Verb::Update, Kind::DaemonSet, ns, name)
            .with_subresource(Subresource::Status)
            .with_body(Body::Object(d.into()));
        let id = env.send(req);
        self.sent.insert(id, Sent::Other(key.to_string()));
    }
}

#[path = "daemonset_update.rs"]
mod update;
/// Which DaemonSets a Node change wakes, as upstream's `addNode` / `updateNode` decide: a
/// new node wakes the sets that should run on it; an update whose labels and taints did
/// not change wakes none (`shouldIgnoreNodeUpdate`: a status heartbeat, a new image in
/// its list), else the sets whose (should run, should continue running) it changed. A
/// removed node wakes every set (upstream leaves it to the pod garbage collector's
/// deletes; here the status counts follow at once).
fn node_changed(change: &Change, queue: &mut WorkQueue<String>, inf: &Informers) {
    for ds_obj in inf.of(Kind::DaemonSet).iter() {
        let Object::DaemonSet(ds) = &**ds_obj else {
            continue;
        };
        let wake = match change {
            Change::Added(o) => as_node(o).is_some_and(|n| should_run(n, &daemon_template(ds)).0),
            Change::Updated(old, new) => match (as_node(old), as_node(new)) {
                (Some(a), Some(b)) if ignores_node_update(a, b) => false,
                (Some(a), Some(b)) => {
                    let template = daemon_template(ds);
                    should_run(a, &template) != should_run(b, &template)
                }
                _ => true,
            },
            Change::Deleted(_) => true,
        };
        if wake {
            queue.add(key_of(ds_obj));
        }
    }
}

/// `shouldIgnoreNodeUpdate`: the node's labels and taints are what they were.
fn ignores_node_update(old: &Node, new: &Node) -> bool {
    old.metadata.labels == new.metadata.labels && node_taints(old) == node_taints(new)
}

fn node_taints(n: &Node) -> Option<&Vec<k8s_openapi::api::core::v1::Taint>> {
    n.spec.as_ref().and_then(|s| s.taints.as_ref())
}

fn as_node(o: &Object) -> Option<&Node> {
    match o {
        Object::Node(n) => Some(n),
        _ => None,
    }
}

use update::rolling_update;

impl Controller for DaemonSetController {
    fn name(&self) -> &'static str {
        "daemonset-controller"
    }

    /// A sync walks every node and every pod of the set: [`SYNC_MS_PER_100_NODES`] per
    /// hundred nodes, so at a thousand nodes the status changes of a set's pods during
    /// one sync fold into the next instead of each walking the cluster again.
    fn sync_cost(&self, inf: &Informers) -> Time {
        inf.of(Kind::Node).len() as Time * SYNC_MS_PER_100_NODES / 100
    }

    fn watches(&self) -> &'static [Kind] {
        &[
            Kind::DaemonSet,
            Kind::Pod,
            Kind::Node,
            Kind::ControllerRevision,
        ]
    }

    fn on_change(
        &mut self,
        kind: Kind,
        change: &Change,
        queue: &mut WorkQueue<String>,
        inf: &Informers,
        _now: Time,
    ) {
        match kind {
            Kind::DaemonSet => queue.add(key_of(change.object())),
            Kind::Pod => {
                let o = change.object();
                let Some(key) = Self::owner_key(o, inf) else {
                    return;
                };
                match change {
                    Change::Added(_) => {
                        if let Some(n) = as_pod(o).and_then(target_node) {
                            self.observed(&key, &format!("node/{n}"));
                        }
                    }
                    Change::Deleted(_) => self.observed(&key, &format!("pod/{}", o.name())),
                    Change::Updated(old, new) => {
                        if old.meta().deletion_timestamp.is_none()
                            && new.meta().deletion_timestamp.is_some()
                        {
                            self.observed(&key, &format!("pod/{}", o.name()));
                        }
                    }
                }
                queue.add(key);
            }
            Kind::Node => node_changed(change, queue, inf),
            Kind::ControllerRevision => {
                if let Some(key) = Self::owner_key(change.object(), inf) {
                    if matches!(change, Change::Added(_)) {
                        self.created_revisions.remove(change.object().name());
                    }
                    queue.add(key);
                }
            }
            _ => {}
        }
    }

    fn sync(&mut self, key: &str, env: &mut Env, inf: &Informers) -> SyncResult {
        let (ns, name) = split_key(key);
        let Some(ds_obj) = inf.of(Kind::DaemonSet).get(ns, name).cloned() else {
            self.expect.remove(key);
            return Ok(Action::await_change());
        };
        let Object::DaemonSet(ds) = &*ds_obj else {
            return Ok(Action::await_change());
        };
        if ds_obj.meta().deletion_timestamp.is_some() {
            return Ok(Action::await_change());
        }
        let uid = ds_obj.meta().uid.clone().unwrap_or_default();
        let selector = LabelSelector::from_k8s(ds.spec.as_ref().map(|s| &s.selector))
            .map_err(SyncError::new)?;
        let Some((rev, all)) = self.revision(key, &ds_obj, ds, env, inf) else {
            return Ok(Action::await_change());
        };
        let hash = rev
            .metadata
            .labels
            .as_ref()
            .and_then(|l| l.get(REVISION_HASH_LABEL))
            .cloned()
            .unwrap_or_default();
        let template = daemon_template(ds);
        let node_objs: Vec<&Arc<Object>> = inf.of(Kind::Node).iter().collect();
        let nodes: Vec<(&Node, bool, bool)> = node_objs
            .iter()
            .filter_map(|o| match &***o {
                Object::Node(n) => {
                    let (run, keep) = should_run(n, &template);
                    Some((&**n, run, keep))
                }
                _ => None,
            })
            .collect();
        let names: BTreeSet<&str> = nodes
            .iter()
            .filter_map(|(n, _, _)| n.metadata.name.as_deref())
            .collect();
        let mut by_node: BTreeMap<&str, OnNode> = BTreeMap::new();
        let mut orphans = Vec::new();
        let mut live_hashes: Vec<String> = vec![hash.clone()];
        for o in inf.of(Kind::Pod).controlled_by(&uid) {
            if o.namespace() != ns || !selector.matches_object(o) {
                continue;
            }
            let Some(p) = as_pod(o) else { continue };
            live_hashes.push(pod_hash(p).to_string());
            // Terminating pods are not deleted again, nor counted.
            if is_terminating(p) {
                continue;
            }
            let Some(node) = target_node(p) else { continue };
            if !names.contains(node) {
                // The node is gone: its pods go too.
                if !is_terminating(p) {
                    orphans.push(o);
                }
                continue;
            }
            let on = by_node.entry(node).or_default();
            if pod_hash(p) == hash {
                on.new.push(o);
            } else {
                on.old.push(o);
            }
        }
        let now = env.now();
        if !self.expect.contains_key(key) {
            self.manage(key, &ds_obj, ds, &hash, &nodes, &by_node, &orphans, env);
        }
        self.write_status(key, ds, &hash, &nodes, &by_node, now, env);
        self.prune(key, ns, ds, &all, &live_hashes, env);
        let min_ready = ds
            .spec
            .as_ref()
            .and_then(|s| s.min_ready_seconds)
            .unwrap_or(0);
        let waiting = min_ready > 0
            && by_node
                .values()
                .flat_map(|on| on.new.iter().chain(on.old.iter()))
                .any(|o| {
                    as_pod(o)
                        .is_some_and(|p| is_pod_ready(p) && !is_pod_available(p, min_ready, now))
                });
        Ok(if waiting {
            Action::requeue(1000)
        } else {
            Action::await_change()
        })
    }

    fn on_response(&mut self, id: ReqId, resp: &ApiResponse, env: &mut Env, inf: &Informers) {
        self.handle_response(id, resp, env, inf);
    }
}

#[cfg(test)]
#[path = "daemonset_tests.rs"]
mod tests;
