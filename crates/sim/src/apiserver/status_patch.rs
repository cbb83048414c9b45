//! The kubelet's pod status patch, applied to the status alone.
//!
//! Every kubelet status write is a merge patch `{"metadata": {"uid": U}, "status": S}` on
//! `pods/status` (the status manager's). Applied to the whole Pod it serializes the stored
//! object, merges and strictly decodes it again, spec and all, although the patch touches
//! only the status and the status strategy puts the stored spec and metadata back: at
//! 1,000 nodes and 10,000 pods that was a quarter of the engine. A patch of exactly that
//! shape is applied to the stored status here, with the same merge and the same strict
//! decoding of the status; anything else (another shape, a uid that is not the stored
//! one, a status that does not decode) takes the general path, which gives upstream's
//! errors. In debug builds both paths run and must agree.

use k8s_openapi::api::core::v1::{Pod, PodStatus};
use serde_json::Value;

use crate::api::{ApiRequest, PatchType, Subresource};
use crate::apiserver::patch;
use crate::object::{decode_tracking_unknown, Kind, Object};

/// The Pod `current` would become under `doc`, when `doc` is a status-only merge patch
/// of `pods/status` whose uid is the stored one; `None` for any other request.
pub(crate) fn apply(
    req: &ApiRequest,
    pt: PatchType,
    doc: &Value,
    current: &Object,
) -> Option<Object> {
    if req.kind != Kind::Pod
        || req.subresource != Some(Subresource::Status)
        || pt != PatchType::Merge
    {
        return None;
    }
    let Object::Pod(pod) = current else {
        return None;
    };
    let fields = doc.as_object()?;
    let status_patch = fields.get("status").filter(|s| s.is_object())?;
    let stored_uid = pod.metadata.uid.as_deref()?;
    let only_status_and_uid = fields.iter().all(|(k, v)| match k.as_str() {
        "status" => true,
        "metadata" => v.as_object().is_some_and(|m| {
            m.len() == 1 && m.get("uid").and_then(Value::as_str) == Some(stored_uid)
        }),
        _ => false,
    });
    if !only_status_and_uid {
        return None;
    }
    let stored = serde_json::to_value(&pod.status).ok()?;
    let merged = patch::merge_patch(&stored, status_patch);
    let mut unknown = Vec::new();
    let status: PodStatus = decode_tracking_unknown(&merged, &mut unknown).ok()?;
    if !unknown.is_empty() {
        return None;
    }
    // The stored status is not copied: only the metadata and the spec are kept.
    Some(Object::Pod(Box::new(Pod {
        metadata: pod.metadata.clone(),
        spec: pod.spec.clone(),
        status: Some(status),
    })))
}

/// Debug builds: the general path must give the same Pod (every status patch of the
/// test suite is checked this way).
#[cfg(debug_assertions)]
pub(crate) fn check_against_general_path(
    new: &Object,
    current: &Object,
    pt: PatchType,
    doc: &Value,
) {
    let req = ApiRequest::new(
        crate::api::Verb::Patch,
        Kind::Pod,
        current.namespace(),
        current.name(),
    );
    let general = crate::apiserver::write::patched_object(&req, pt, doc, current)
        .expect("the general path accepts what the status path accepted");
    assert!(
        general == *new,
        "the status path and the general path disagree:\n{:#}\n{:#}",
        general.to_value(),
        new.to_value()
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::{Body, Verb};
    use serde_json::json;

    fn pod() -> Object {
        let v = json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "web", "namespace": "default", "uid": "u1",
                "creationTimestamp": "2026-12-08T00:00:00Z"},
            "spec": {"nodeName": "node-1", "containers": [{"name": "web", "image": "nginx:1.27"}]},
            "status": {"phase": "Pending", "nominatedNodeName": "node-1",
                "conditions": [{"type": "PodScheduled", "status": "True"}]}});
        Object::from_value(Kind::Pod, &v, &mut Vec::new()).expect("pod")
    }

    fn status_req() -> ApiRequest {
        ApiRequest::new(Verb::Patch, Kind::Pod, "default", "web")
            .with_subresource(Subresource::Status)
    }

    fn running() -> Value {
        json!({"metadata": {"uid": "u1"}, "status": {"phase": "Running", "podIP": "10.244.1.5",
            "conditions": [{"type": "Ready", "status": "True"}]}})
    }

    #[test]
    fn a_kubelet_status_patch_merges_into_the_stored_status_only() {
        let current = pod();
        let new =
            apply(&status_req(), PatchType::Merge, &running(), &current).expect("status path");
        let Object::Pod(p) = &new else {
            panic!("a pod")
        };
        let status = p.status.as_ref().expect("status");
        assert_eq!(status.phase.as_deref(), Some("Running"));
        // A merge patch keeps the fields it does not name and replaces lists whole.
        assert_eq!(status.nominated_node_name.as_deref(), Some("node-1"));
        let types: Vec<&str> = status
            .conditions
            .iter()
            .flatten()
            .map(|c| c.type_.as_str())
            .collect();
        assert_eq!(types, ["Ready"]);
        assert_eq!(new.meta(), current.meta());
        let general = crate::apiserver::write::patched_object(
            &status_req(),
            PatchType::Merge,
            &running(),
            &current,
        )
        .expect("general path");
        assert_eq!(general, new);
    }

    #[test]
    fn other_patches_take_the_general_path() {
        let current = pod();
        let mut other_uid = running();
        other_uid["metadata"]["uid"] = json!("u2");
        let mut labels = running();
        labels["metadata"]["labels"] = json!({"a": "b"});
        let mut spec = running();
        spec["spec"] = json!({"nodeName": "node-2"});
        let mut unknown = running();
        unknown["status"]["colour"] = json!("green");
        for doc in [other_uid, labels, spec, unknown, json!({"status": null})] {
            assert!(
                apply(&status_req(), PatchType::Merge, &doc, &current).is_none(),
                "{doc}"
            );
        }
        // Only merge patches of pods/status.
        assert!(apply(
            &status_req(),
            PatchType::StrategicMerge,
            &running(),
            &current
        )
        .is_none());
        let main = ApiRequest::new(Verb::Patch, Kind::Pod, "default", "web")
            .with_body(Body::Patch(PatchType::Merge, running()));
        assert!(apply(&main, PatchType::Merge, &running(), &current).is_none());
    }
}
