//! `ValidatePodStatusUpdate`: what a write to a pod's `status` subresource may change.
//!
//! The status strategy has already put the old spec back (`prepare_for_status_update`), so
//! nothing of the spec is validated again: a kubelet's status write costs what its status
//! holds, not a copy and a comparison of the whole spec.

use k8s_openapi::api::core::v1::{ContainerStatus, Pod, PodSpec, PodStatus};

use super::meta::{validate_object_meta_update, FIELD_IMMUTABLE_MSG};
use super::names::name_is_dns_subdomain;
use crate::apiserver::field_error::{FieldError, Path};

/// `ValidatePodStatusUpdate` (pkg/apis/core/validation): metadata, `nodeName` (changed only
/// by a binding), `nominatedNodeName`, the immutable `qosClass`, and terminated containers
/// that may not run again under the pod's restart policy. Pod and host IPs are not checked
/// (only the simulated kubelet writes them).
pub fn validate_pod_status_update(new: &Pod, old: &Pod) -> Vec<FieldError> {
    let mut errs =
        validate_object_meta_update(&new.metadata, &old.metadata, &Path::new("metadata"));
    let path = Path::new("status");
    let node = |p: &Pod| p.spec.as_ref().and_then(|s| s.node_name.clone());
    if node(new) != node(old) {
        errs.push(FieldError::forbidden(
            &path.child("nodeName"),
            "may not be changed directly",
        ));
    }
    // Borrowed, not cloned: this runs on every kubelet status write.
    let (no_status, no_spec) = (PodStatus::default(), PodSpec::default());
    let (ns, os) = (
        new.status.as_ref().unwrap_or(&no_status),
        old.status.as_ref(),
    );
    let nominated = ns.nominated_node_name.as_deref().unwrap_or("");
    let old_nominated = os.and_then(|s| s.nominated_node_name.as_deref());
    if !nominated.is_empty() && Some(nominated) != old_nominated {
        for msg in name_is_dns_subdomain(nominated, false) {
            errs.push(FieldError::invalid(
                &path.child("nominatedNodeName"),
                nominated,
                &msg,
            ));
        }
    }
    let qos = ns.qos_class.as_deref().unwrap_or("");
    if qos != os.and_then(|s| s.qos_class.as_deref()).unwrap_or("") {
        errs.push(FieldError::invalid(
            &path.child("qosClass"),
            qos,
            FIELD_IMMUTABLE_MSG,
        ));
    }
    let spec = old.spec.as_ref().unwrap_or(&no_spec);
    let none = Vec::new();
    let old_statuses = |f: fn(&PodStatus) -> &Option<Vec<ContainerStatus>>| {
        os.and_then(|s| f(s).as_ref()).unwrap_or(&none)
    };
    errs.extend(terminated_stay_terminated(
        ns.container_statuses.as_deref().unwrap_or(&[]),
        old_statuses(|s| &s.container_statuses),
        spec,
        |_| false,
        &path.child("containerStatuses"),
    ));
    // A restartable init container (a sidecar) may run again.
    let sidecar = |name: &str| {
        spec.init_containers
            .iter()
            .flatten()
            .any(|c| c.name == name && c.restart_policy.as_deref() == Some("Always"))
    };
    errs.extend(terminated_stay_terminated(
        ns.init_container_statuses.as_deref().unwrap_or(&[]),
        old_statuses(|s| &s.init_container_statuses),
        spec,
        sidecar,
        &path.child("initContainerStatuses"),
    ));
    errs
}

/// `ValidateContainerStateTransition`: unless the pod restarts its containers (`Always`,
/// or `OnFailure` after a non-zero exit), a terminated container stays terminated.
fn terminated_stay_terminated(
    new: &[ContainerStatus],
    old: &[ContainerStatus],
    spec: &PodSpec,
    restartable: impl Fn(&str) -> bool,
    path: &Path,
) -> Vec<FieldError> {
    let policy = spec.restart_policy.as_deref().unwrap_or("Always");
    if policy == "Always" {
        return Vec::new();
    }
    let mut errs = Vec::new();
    for (i, o) in old.iter().enumerate() {
        let Some(done) = o.state.as_ref().and_then(|s| s.terminated.as_ref()) else {
            continue;
        };
        if (done.exit_code != 0 && policy == "OnFailure") || restartable(&o.name) {
            continue;
        }
        let running_again = new
            .iter()
            .any(|n| n.name == o.name && n.state.as_ref().is_none_or(|s| s.terminated.is_none()));
        if running_again {
            errs.push(FieldError::forbidden(
                &path.index(i).child("state"),
                "may not be transitioned to non-terminated state",
            ));
        }
    }
    errs
}
