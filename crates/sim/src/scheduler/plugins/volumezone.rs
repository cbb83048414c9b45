//! VolumeZone: a pod using bound PersistentVolumes with zone/region labels fits only nodes
//! in those zones/regions.

use std::collections::BTreeSet;

use crate::scheduler::config::PluginArgs;
use crate::scheduler::framework::*;
use crate::scheduler::nodeinfo::{NodeInfo, Snapshot};
use crate::scheduler::podinfo::PodInfo;

/// The plugin name.
pub const NAME: &str = "VolumeZone";
/// `ErrReasonConflict`.
pub const ERR_REASON_CONFLICT: &str = "node(s) had no available volume zone";
const PRE_FILTER_KEY: &str = "PreFilterVolumeZone";
const TOPOLOGY_LABELS: [&str; 4] = [
    "failure-domain.beta.kubernetes.io/zone",
    "failure-domain.beta.kubernetes.io/region",
    "topology.kubernetes.io/zone",
    "topology.kubernetes.io/region",
];

/// The VolumeZone plugin.
pub struct VolumeZone;

/// Constructor for the registry.
pub fn new(_: Option<&PluginArgs>) -> Result<Box<dyn Plugin>, String> {
    Ok(Box::new(VolumeZone))
}

impl Plugin for VolumeZone {
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
}

#[derive(Clone, Debug)]
struct Topology {
    key: String,
    values: BTreeSet<String>,
}

fn ga_label(key: &str) -> &str {
    match key {
        "failure-domain.beta.kubernetes.io/zone" => "topology.kubernetes.io/zone",
        "failure-domain.beta.kubernetes.io/region" => "topology.kubernetes.io/region",
        k => k,
    }
}

impl PreFilterPlugin for VolumeZone {
    fn pre_filter(
        &self,
        state: &mut CycleState,
        pod: &PodInfo,
        snap: &Snapshot,
    ) -> (Option<PreFilterResult>, Status) {
        if pod.pvc_names.is_empty() {
            return (None, Status::code_only(Code::Skip));
        }
        let unresolvable = |m: String| (None, Status::new(Code::UnschedulableAndUnresolvable, m));
        let mut topologies = Vec::new();
        for claim in &pod.pvc_names {
            let Some(pvc) = snap.pvcs.get(&format!("{}/{claim}", pod.namespace)) else {
                return unresolvable(format!("persistentvolumeclaim {claim:?} not found"));
            };
            let spec = pvc.spec.as_ref();
            let pv_name = spec.and_then(|s| s.volume_name.clone()).unwrap_or_default();
            if pv_name.is_empty() {
                let sc = spec
                    .and_then(|s| s.storage_class_name.clone())
                    .unwrap_or_default();
                if sc.is_empty() {
                    return unresolvable(
                        "PersistentVolumeClaim had no pv name and storageClass name".into(),
                    );
                }
                let Some(class) = snap.storage_classes.get(&sc) else {
                    return unresolvable(format!("storageclass.storage.k8s.io {sc:?} not found"));
                };
                match class.volume_binding_mode.as_deref() {
                    None => {
                        return unresolvable(format!(
                            "VolumeBindingMode not set for StorageClass {sc:?}"
                        ))
                    }
                    Some("WaitForFirstConsumer") => continue,
                    Some(_) => return unresolvable("PersistentVolume had no name".into()),
                }
            }
            let Some(pv) = snap.pvs.get(&pv_name) else {
                return unresolvable(format!("persistentvolume {pv_name:?} not found"));
            };
            for key in TOPOLOGY_LABELS {
                if let Some(v) = pv.metadata.labels.as_ref().and_then(|l| l.get(key)) {
                    topologies.push(Topology {
                        key: key.into(),
                        values: v.split("__").map(String::from).collect(),
                    });
                }
            }
        }
        state.write(PRE_FILTER_KEY, topologies);
        (None, Status::success())
    }
}

impl FilterPlugin for VolumeZone {
    fn filter(&self, state: &CycleState, _: &PodInfo, node: &NodeInfo) -> Status {
        let Some(tops) = state.read::<Vec<Topology>>(PRE_FILTER_KEY) else {
            return Status::success();
        };
        if tops.is_empty() || !TOPOLOGY_LABELS.iter().any(|k| node.labels.contains_key(*k)) {
            return Status::success();
        }
        for t in tops {
            let v = node
                .labels
                .get(&t.key)
                .or_else(|| node.labels.get(ga_label(&t.key)));
            if !v.is_some_and(|v| t.values.contains(v)) {
                return Status::new(Code::UnschedulableAndUnresolvable, ERR_REASON_CONFLICT);
            }
        }
        Status::success()
    }
}
