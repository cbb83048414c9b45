//! VolumeRestrictions: rejects nodes where a pod's GCE PD / AWS EBS / RBD / iSCSI volume is
//! already in use in a conflicting way, and pods whose ReadWriteOncePod claim is in use.

use k8s_openapi::api::core::v1::Volume;

use crate::scheduler::config::PluginArgs;
use crate::scheduler::framework::*;
use crate::scheduler::nodeinfo::{NodeInfo, Snapshot};
use crate::scheduler::podinfo::PodInfo;

/// The plugin name.
pub const NAME: &str = "VolumeRestrictions";
/// `ErrReasonDiskConflict`.
pub const ERR_REASON_DISK_CONFLICT: &str = "node(s) had no available disk";
/// `ErrReasonReadWriteOncePodConflict`.
pub const ERR_REASON_RWOP_CONFLICT: &str =
    "node has pod using PersistentVolumeClaim with the same name and ReadWriteOncePod access mode";

/// The VolumeRestrictions plugin.
pub struct VolumeRestrictions;

/// Constructor for the registry.
pub fn new(_: Option<&PluginArgs>) -> Result<Box<dyn Plugin>, String> {
    Ok(Box::new(VolumeRestrictions))
}

impl Plugin for VolumeRestrictions {
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

fn volumes(pod: &PodInfo) -> &[Volume] {
    pod.pod
        .spec
        .as_ref()
        .and_then(|s| s.volumes.as_deref())
        .unwrap_or(&[])
}

fn needs_conflict_check(v: &Volume) -> bool {
    v.gce_persistent_disk.is_some()
        || v.aws_elastic_block_store.is_some()
        || v.rbd.is_some()
        || v.iscsi.is_some()
}

/// `isVolumeConflict`.
fn conflicts(v: &Volume, pod: &PodInfo) -> bool {
    for ev in volumes(pod) {
        if let (Some(a), Some(b)) = (&v.gce_persistent_disk, &ev.gce_persistent_disk) {
            if a.pd_name == b.pd_name
                && !(a.read_only.unwrap_or(false) && b.read_only.unwrap_or(false))
            {
                return true;
            }
        }
        if let (Some(a), Some(b)) = (&v.aws_elastic_block_store, &ev.aws_elastic_block_store) {
            if a.volume_id == b.volume_id {
                return true;
            }
        }
        if let (Some(a), Some(b)) = (&v.iscsi, &ev.iscsi) {
            if a.iqn == b.iqn && !(a.read_only.unwrap_or(false) && b.read_only.unwrap_or(false)) {
                return true;
            }
        }
        if let (Some(a), Some(b)) = (&v.rbd, &ev.rbd) {
            let shared = a.monitors.iter().any(|m| b.monitors.contains(m));
            if shared
                && a.pool == b.pool
                && a.image == b.image
                && !(a.read_only.unwrap_or(false) && b.read_only.unwrap_or(false))
            {
                return true;
            }
        }
    }
    false
}

impl PreFilterPlugin for VolumeRestrictions {
    fn pre_filter(
        &self,
        _: &mut CycleState,
        pod: &PodInfo,
        snap: &Snapshot,
    ) -> (Option<PreFilterResult>, Status) {
        let has_conflict_vols = volumes(pod).iter().any(needs_conflict_check);
        let mut rwop = Vec::new();
        for claim in &pod.pvc_names {
            let key = format!("{}/{claim}", pod.namespace);
            let Some(pvc) = snap.pvcs.get(&key) else {
                return (
                    None,
                    Status::new(
                        Code::UnschedulableAndUnresolvable,
                        format!("persistentvolumeclaim {claim:?} not found"),
                    ),
                );
            };
            let modes = pvc.spec.as_ref().and_then(|s| s.access_modes.as_ref());
            if modes.is_some_and(|m| m.iter().any(|x| x == "ReadWriteOncePod")) {
                rwop.push(key);
            }
        }
        if !has_conflict_vols && rwop.is_empty() {
            return (None, Status::code_only(Code::Skip));
        }
        let in_use = rwop.iter().any(|k| {
            snap.nodes()
                .iter()
                .any(|n| n.pvc_ref_counts.contains_key(k))
        });
        if in_use {
            return (
                None,
                Status::new(Code::Unschedulable, ERR_REASON_RWOP_CONFLICT),
            );
        }
        (None, Status::success())
    }
}

impl FilterPlugin for VolumeRestrictions {
    fn filter(&self, _: &CycleState, pod: &PodInfo, node: &NodeInfo) -> Status {
        for v in volumes(pod).iter().filter(|v| needs_conflict_check(v)) {
            if node.pods.iter().any(|p| conflicts(v, p)) {
                return Status::new(Code::Unschedulable, ERR_REASON_DISK_CONFLICT);
            }
        }
        Status::success()
    }
}
