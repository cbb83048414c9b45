//! VolumeBinding: bound PVCs must have their PV reachable from the node (PV node affinity);
//! unbound WaitForFirstConsumer PVCs need a matching available PV or a provisioner whose
//! allowedTopologies include the node. Reserve assumes the chosen PVs and provisioning
//! requests in the scheduler's cache; PreBind writes them and waits until every claim is
//! bound (`BindPodVolumes`), for at most bindTimeoutSeconds.

use std::collections::BTreeSet;
use std::sync::Arc;

use k8s_openapi::api::core::v1::{ObjectReference, PersistentVolume, PersistentVolumeClaim};
use k8s_openapi::api::storage::v1::StorageClass;

use crate::api::{ApiRequest, Body, PatchType, Verb};
use crate::object::Kind;
use crate::scheduler::config::PluginArgs;
use crate::scheduler::framework::*;
use crate::scheduler::nodeinfo::{NodeInfo, Snapshot};
use crate::scheduler::podinfo::PodInfo;
use crate::scheduler::resource::quantity_value;
use crate::scheduler::selector::{CompiledNodeSelector, Labels, Selector};
use crate::time::{Time, SECOND};

/// The plugin name.
pub const NAME: &str = "VolumeBinding";
/// `ErrReasonBindConflict`.
pub const ERR_REASON_BIND_CONFLICT: &str =
    "node(s) didn't find available persistent volumes to bind";
/// `ErrReasonNodeConflict`.
pub const ERR_REASON_NODE_CONFLICT: &str = "node(s) had volume node affinity conflict";
/// `ErrReasonNotEnoughSpace`.
pub const ERR_REASON_NOT_ENOUGH_SPACE: &str = "node(s) did not have enough free storage";
/// `ErrReasonPVNotExist`.
pub const ERR_REASON_PV_NOT_EXIST: &str =
    "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)";
const STATE_KEY: &str = "VolumeBinding";
const NO_PROVISIONER: &str = "kubernetes.io/no-provisioner";

/// `volume.kubernetes.io/selected-node`: where a WaitForFirstConsumer claim is provisioned.
pub const ANN_SELECTED_NODE: &str = "volume.kubernetes.io/selected-node";

/// The VolumeBinding plugin.
pub struct VolumeBinding {
    bind_timeout: Time,
}

/// Constructor for the registry.
pub fn new(args: Option<&PluginArgs>) -> Result<Box<dyn Plugin>, String> {
    let secs = match args {
        Some(PluginArgs::VolumeBinding {
            bind_timeout_seconds,
            ..
        }) => *bind_timeout_seconds,
        _ => 600,
    };
    Ok(Box::new(VolumeBinding {
        bind_timeout: (secs.max(0) as u64).saturating_mul(SECOND),
    }))
}

impl Plugin for VolumeBinding {
    fn name(&self) -> &'static str {
        NAME
    }
    fn queueing_hint(&self, pod: &PodInfo, event: &EventObjects<'_>) -> QueueingHint {
        claim_hint(pod, event)
    }
    fn as_pre_filter(&self) -> Option<&dyn PreFilterPlugin> {
        Some(self)
    }
    fn as_filter(&self) -> Option<&dyn FilterPlugin> {
        Some(self)
    }
    fn as_pre_score(&self) -> Option<&dyn PreScorePlugin> {
        Some(self)
    }
    fn as_score(&self) -> Option<&dyn ScorePlugin> {
        Some(self)
    }
    fn as_reserve(&self) -> Option<&dyn ReservePlugin> {
        Some(self)
    }
    fn as_pre_bind(&self) -> Option<&dyn PreBindPlugin> {
        Some(self)
    }
}

/// What binding the pod's volumes on a node takes: the actor performs it at PreBind.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PodVolumes {
    /// `namespace/claim` → PV to bind it to.
    pub static_bindings: Vec<(String, String)>,
    /// `namespace/claim` to provision on the node (selected-node annotation).
    pub dynamic_provisions: Vec<String>,
}

#[derive(Clone, Debug, Default)]
struct State {
    /// Bound claims and their PV (None when the PV doesn't exist).
    bound: Vec<Option<Arc<PersistentVolume>>>,
    /// Unbound WaitForFirstConsumer claims with their class and candidate PVs.
    to_bind: Vec<Claim>,
    /// What Reserve assumed on the chosen node.
    assumed: Option<Assumed>,
    /// When PreBind gives up waiting for the claims.
    deadline: Time,
}

/// `AssumePodVolumes`: the decisions, and each cache entry before and after.
#[derive(Clone, Debug, Default)]
struct Assumed {
    decisions: PodVolumes,
    pvs: Vec<(Arc<PersistentVolume>, Arc<PersistentVolume>)>,
    pvcs: Vec<(Arc<PersistentVolumeClaim>, Arc<PersistentVolumeClaim>)>,
}

#[derive(Clone, Debug)]
struct Claim {
    key: String,
    class: Option<Arc<StorageClass>>,
    candidates: Vec<(String, Arc<PersistentVolume>)>,
}

fn class_of(pvc: &PersistentVolumeClaim) -> String {
    pvc.spec
        .as_ref()
        .and_then(|s| s.storage_class_name.clone())
        .unwrap_or_default()
}

fn pv_matches_node(pv: &PersistentVolume, node: &NodeInfo) -> bool {
    match pv
        .spec
        .as_ref()
        .and_then(|s| s.node_affinity.as_ref())
        .and_then(|a| a.required.as_ref())
    {
        None => true,
        Some(ns) => CompiledNodeSelector::new(ns).matches(&node.labels, &node.name),
    }
}

fn topology_allows(class: &StorageClass, labels: &Labels) -> bool {
    let Some(terms) = class.allowed_topologies.as_ref().filter(|t| !t.is_empty()) else {
        return true;
    };
    terms.iter().any(|t| {
        t.match_label_expressions
            .iter()
            .flatten()
            .all(|e| labels.get(&e.key).is_some_and(|v| e.values.contains(v)))
    })
}

/// PVs that could satisfy the claim anywhere (class, mode, access modes, size, selector,
/// not claimed by another PVC), with the pre-bound one first if any.
fn candidate_pvs(
    key: &str,
    pvc: &PersistentVolumeClaim,
    snap: &Snapshot,
) -> Vec<(String, Arc<PersistentVolume>)> {
    let Some(spec) = pvc.spec.as_ref() else {
        return vec![];
    };
    let want = spec
        .resources
        .as_ref()
        .and_then(|r| r.requests.as_ref())
        .and_then(|r| r.get("storage"))
        .map(quantity_value)
        .unwrap_or(0);
    let modes = spec.access_modes.clone().unwrap_or_default();
    let mode = spec
        .volume_mode
        .clone()
        .unwrap_or_else(|| "Filesystem".into());
    let class = class_of(pvc);
    let selector = spec
        .selector
        .as_ref()
        .map(|s| Selector::from_label_selector(Some(s)));
    let (ns, name) = key.split_once('/').unwrap_or(("", key));
    let mut prebound = Vec::new();
    let mut out: Vec<(i64, String, Arc<PersistentVolume>)> = Vec::new();
    for (pv_name, pv) in &snap.pvs {
        let Some(ps) = pv.spec.as_ref() else { continue };
        if pv.metadata.deletion_timestamp.is_some() {
            continue;
        }
        let is_prebound = match &ps.claim_ref {
            Some(r) if r.name.as_deref() == Some(name) && r.namespace.as_deref() == Some(ns) => {
                true
            }
            Some(_) => continue,
            None => false,
        };
        let cap = ps
            .capacity
            .as_ref()
            .and_then(|c| c.get("storage"))
            .map(quantity_value)
            .unwrap_or(0);
        let pv_modes = ps.access_modes.clone().unwrap_or_default();
        let ok = ps.storage_class_name.clone().unwrap_or_default() == class
            && ps
                .volume_mode
                .clone()
                .unwrap_or_else(|| "Filesystem".into())
                == mode
            && modes.iter().all(|m| pv_modes.contains(m))
            && cap >= want
            && selector
                .as_ref()
                .is_none_or(|s| s.matches(pv.metadata.labels.as_ref().unwrap_or(&Labels::new())));
        if !ok {
            continue;
        }
        if is_prebound {
            prebound.push((pv_name.clone(), pv.clone()));
        } else {
            out.push((cap, pv_name.clone(), pv.clone()));
        }
    }
    // Smallest first (FindMatchingVolume picks the smallest that fits).
    out.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.cmp(&b.1)));
    prebound.extend(out.into_iter().map(|(_, n, pv)| (n, pv)));
    prebound
}

impl State {
    /// `FindPodVolumes` for one node: the decisions, or the failure reasons.
    fn find(&self, node: &NodeInfo) -> Result<PodVolumes, Status> {
        let mut reasons: Vec<std::borrow::Cow<'static, str>> = Vec::new();
        for pv in &self.bound {
            match pv {
                None => {
                    return Err(Status::new(
                        Code::UnschedulableAndUnresolvable,
                        ERR_REASON_PV_NOT_EXIST,
                    ))
                }
                Some(pv) if !pv_matches_node(pv, node) => {
                    reasons.push(ERR_REASON_NODE_CONFLICT.into());
                    break;
                }
                Some(_) => {}
            }
        }
        let mut taken: BTreeSet<&str> = BTreeSet::new();
        let mut out = PodVolumes::default();
        let mut unbound_ok = true;
        for c in &self.to_bind {
            let found = c
                .candidates
                .iter()
                .find(|(n, pv)| !taken.contains(n.as_str()) && pv_matches_node(pv, node));
            if let Some((n, _)) = found {
                taken.insert(n);
                out.static_bindings.push((c.key.clone(), n.clone()));
                continue;
            }
            let can_provision = c.class.as_ref().is_some_and(|cl| {
                cl.provisioner != NO_PROVISIONER && topology_allows(cl, &node.labels)
            });
            if can_provision {
                out.dynamic_provisions.push(c.key.clone());
            } else {
                unbound_ok = false;
            }
        }
        if !unbound_ok {
            reasons.push(ERR_REASON_BIND_CONFLICT.into());
        }
        if reasons.is_empty() {
            Ok(out)
        } else {
            Err(Status::with_reasons(
                Code::UnschedulableAndUnresolvable,
                reasons,
            ))
        }
    }
}

impl PreFilterPlugin for VolumeBinding {
    fn pre_filter(
        &self,
        state: &mut CycleState,
        pod: &PodInfo,
        snap: &Snapshot,
    ) -> (Option<PreFilterResult>, Status) {
        if pod.pvc_names.is_empty() {
            state.write(STATE_KEY, State::default());
            return (None, Status::code_only(Code::Skip));
        }
        let unresolvable = |m: String| (None, Status::new(Code::UnschedulableAndUnresolvable, m));
        let mut s = State::default();
        let mut immediate_unbound = false;
        for claim in &pod.pvc_names {
            let key = format!("{}/{claim}", pod.namespace);
            let Some(pvc) = snap.pvcs.get(&key) else {
                return unresolvable(format!("persistentvolumeclaim {claim:?} not found"));
            };
            if pvc.metadata.deletion_timestamp.is_some() {
                return unresolvable(format!("persistentvolumeclaim {claim:?} is being deleted"));
            }
            let volume = pvc
                .spec
                .as_ref()
                .and_then(|s| s.volume_name.clone())
                .unwrap_or_default();
            if !volume.is_empty() {
                s.bound.push(snap.pvs.get(&volume).cloned());
                continue;
            }
            let class_name = class_of(pvc);
            let class = snap.storage_classes.get(&class_name).cloned();
            let delayed = class
                .as_ref()
                .and_then(|c| c.volume_binding_mode.as_deref())
                == Some("WaitForFirstConsumer");
            if delayed {
                let candidates = candidate_pvs(&key, pvc, snap);
                s.to_bind.push(Claim {
                    key,
                    class,
                    candidates,
                });
            } else {
                immediate_unbound = true;
            }
        }
        if immediate_unbound {
            return unresolvable("pod has unbound immediate PersistentVolumeClaims".into());
        }
        state.write(STATE_KEY, s);
        (None, Status::success())
    }
}

impl FilterPlugin for VolumeBinding {
    fn filter(&self, state: &CycleState, _: &PodInfo, node: &NodeInfo) -> Status {
        match state.read::<State>(STATE_KEY) {
            None => Status::success(),
            Some(s) => match s.find(node) {
                Ok(_) => Status::success(),
                Err(st) => st,
            },
        }
    }
}

impl PreScorePlugin for VolumeBinding {
    fn pre_score(&self, _: &mut CycleState, _: &PodInfo, _: &[usize], _: &Snapshot) -> Status {
        // Scoring needs StorageCapacityScoring (off by default in v1.35).
        Status::code_only(Code::Skip)
    }
}

impl ScorePlugin for VolumeBinding {
    fn score(
        &self,
        _: &CycleState,
        _: &PodInfo,
        _: &NodeInfo,
        _: &Snapshot,
    ) -> Result<i64, Status> {
        Ok(0)
    }
}

impl ReservePlugin for VolumeBinding {
    /// `AssumePodVolumes`: the chosen PVs get the claim's claimRef and the claims to
    /// provision get the selected-node annotation, in the cache, so that the next pod
    /// cannot take the same PV before the writes come back through the informers.
    fn reserve(
        &self,
        state: &mut CycleState,
        _: &PodInfo,
        node: &str,
        cache: &mut Snapshot,
    ) -> Status {
        let Some(s) = state.read_mut::<State>(STATE_KEY) else {
            return Status::success();
        };
        if s.to_bind.is_empty() {
            return Status::success();
        }
        let Some(ni) = cache.get(node) else {
            return Status::error(format!("node {node:?} not found"));
        };
        let decisions = match s.find(ni) {
            Ok(d) => d,
            Err(st) => return st,
        };
        let mut assumed = Assumed::default();
        for (claim, pv_name) in &decisions.static_bindings {
            let Some(pv) = cache.pvs.get(pv_name).cloned() else {
                continue;
            };
            let (ns, name) = claim.split_once('/').unwrap_or(("", claim));
            let uid = cache.pvcs.get(claim).and_then(|c| c.metadata.uid.clone());
            let mut new = (*pv).clone();
            if let Some(spec) = new.spec.as_mut() {
                spec.claim_ref = Some(ObjectReference {
                    uid,
                    ..claim_ref(ns, name)
                });
            }
            let new = Arc::new(new);
            cache.set_pv(new.clone());
            assumed.pvs.push((pv, new));
        }
        for claim in &decisions.dynamic_provisions {
            let Some(pvc) = cache.pvcs.get(claim).cloned() else {
                continue;
            };
            let mut new = (*pvc).clone();
            new.metadata
                .annotations
                .get_or_insert_with(Default::default)
                .insert(ANN_SELECTED_NODE.into(), node.to_string());
            let new = Arc::new(new);
            cache.set_pvc(new.clone());
            assumed.pvcs.push((pvc, new));
        }
        assumed.decisions = decisions;
        s.assumed = Some(assumed);
        Status::success()
    }

    /// Restores what is still the assumed version; a newer informer copy stays.
    fn unreserve(&self, state: &mut CycleState, _: &PodInfo, _: &str, cache: &mut Snapshot) {
        let Some(a) = state
            .read_mut::<State>(STATE_KEY)
            .and_then(|s| s.assumed.take())
        else {
            return;
        };
        for (old, new) in a.pvs {
            let name = old.metadata.name.clone().unwrap_or_default();
            if cache
                .pvs
                .get(&name)
                .is_some_and(|cur| Arc::ptr_eq(cur, &new))
            {
                cache.set_pv(old);
            }
        }
        for (old, new) in a.pvcs {
            let key = format!(
                "{}/{}",
                old.metadata.namespace.as_deref().unwrap_or(""),
                old.metadata.name.as_deref().unwrap_or("")
            );
            if cache
                .pvcs
                .get(&key)
                .is_some_and(|cur| Arc::ptr_eq(cur, &new))
            {
                cache.set_pvc(old);
            }
        }
    }
}

fn claim_ref(ns: &str, name: &str) -> ObjectReference {
    ObjectReference {
        kind: Some("PersistentVolumeClaim".into()),
        api_version: Some("v1".into()),
        namespace: Some(ns.into()),
        name: Some(name.into()),
        ..Default::default()
    }
}

impl PreBindPlugin for VolumeBinding {
    /// `BindPodVolumes`: pre-bind the chosen PVs (claimRef, as the PV controller would)
    /// and ask for provisioning on the node (selected-node), then wait.
    fn pre_bind(
        &self,
        state: &mut CycleState,
        _: &PodInfo,
        node: &str,
        now: Time,
        writes: &mut BindingWrites,
    ) -> Status {
        let Some(s) = state.read_mut::<State>(STATE_KEY) else {
            return Status::success();
        };
        let Some(a) = s.assumed.as_ref() else {
            return Status::success();
        };
        for (_, pv) in &a.pvs {
            let claim_ref = pv.spec.as_ref().and_then(|s| s.claim_ref.as_ref());
            let patch = serde_json::json!({"spec": {"claimRef": claim_ref}});
            let name = pv.metadata.name.as_deref().unwrap_or("");
            let req = ApiRequest::new(Verb::Patch, Kind::PersistentVolume, "", name)
                .with_body(Body::Patch(PatchType::Merge, patch));
            writes.push(NAME, "binding volumes", req);
        }
        for claim in &a.decisions.dynamic_provisions {
            let (ns, name) = claim.split_once('/').unwrap_or(("", claim));
            let patch = serde_json::json!({"metadata": {"annotations": {ANN_SELECTED_NODE: node}}});
            let req = ApiRequest::new(Verb::Patch, Kind::PersistentVolumeClaim, ns, name)
                .with_body(Body::Patch(PatchType::Merge, patch));
            writes.push(NAME, "binding volumes", req);
        }
        s.deadline = now.saturating_add(self.bind_timeout);
        Status::code_only(Code::Pending)
    }

    /// `checkBindings`: done when every claim is bound; a provisioning request whose
    /// selected-node was reset fails; so does waiting past bindTimeoutSeconds.
    fn pre_bind_poll(
        &self,
        state: &CycleState,
        _: &PodInfo,
        _: &str,
        cache: &Snapshot,
        now: Time,
    ) -> Status {
        let Some(s) = state.read::<State>(STATE_KEY) else {
            return Status::success();
        };
        let Some(a) = s.assumed.as_ref() else {
            return Status::success();
        };
        let fail = |m: String| Status::error(format!("binding volumes: {m}"));
        let claims = a
            .decisions
            .static_bindings
            .iter()
            .map(|(c, _)| (c, false))
            .chain(a.decisions.dynamic_provisions.iter().map(|c| (c, true)));
        let mut all_bound = true;
        for (key, provisioning) in claims {
            let name = key.split_once('/').map(|(_, n)| n).unwrap_or(key);
            let Some(pvc) = cache.pvcs.get(key) else {
                return fail(format!(
                    "failed to get pvc {key:?} from cache: persistentvolumeclaim {name:?} not found"
                ));
            };
            let bound = pvc.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Bound")
                && pvc
                    .spec
                    .as_ref()
                    .and_then(|s| s.volume_name.as_deref())
                    .is_some_and(|v| !v.is_empty());
            if bound {
                continue;
            }
            let selected = pvc
                .metadata
                .annotations
                .as_ref()
                .is_some_and(|m| m.contains_key(ANN_SELECTED_NODE));
            if provisioning && !selected {
                return fail(format!("selectedNode annotation reset for PVC {name:?}"));
            }
            all_bound = false;
        }
        if all_bound {
            Status::success()
        } else if now >= s.deadline {
            fail("context deadline exceeded".into())
        } else {
            Status::code_only(Code::Pending)
        }
    }
}

#[cfg(test)]
#[path = "volumebinding_tests.rs"]
mod tests;
