//! ControllerRevision history shared by the StatefulSet and DaemonSet controllers, as
//! upstream's `pkg/controller/history`: a revision holds a patch that replaces the pod
//! template, is named `<owner>-<hash>`, numbered, and pruned past revisionHistoryLimit.

use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_openapi::api::apps::v1::ControllerRevision;
use k8s_openapi::api::core::v1::PodTemplateSpec;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use k8s_openapi::apimachinery::pkg::runtime::RawExtension;

use crate::controllers::util::{owner_ref, safe_encode};
use crate::controllers::Informers;
use crate::object::{Kind, Object};
use crate::rng::fnv1a;

/// The label a controller puts on its pods and revisions (`ControllerRevisionHashLabel`).
pub const REVISION_HASH_LABEL: &str = "controller-revision-hash";

/// The revision data of a template: the strategic patch
/// `{"spec":{"template":{…,"$patch":"replace"}}}` upstream's `getPatch` stores.
pub fn template_patch(template: &PodTemplateSpec) -> serde_json::Value {
    let mut t = serde_json::to_value(template).unwrap_or_default();
    if let Some(m) = t.as_object_mut() {
        m.insert("$patch".into(), serde_json::Value::String("replace".into()));
    }
    serde_json::json!({ "spec": { "template": t } })
}

/// The template a revision's data holds.
pub fn template_of(rev: &ControllerRevision) -> Option<PodTemplateSpec> {
    let mut t = rev.data.as_ref()?.0.get("spec")?.get("template")?.clone();
    if let Some(m) = t.as_object_mut() {
        m.remove("$patch");
    }
    crate::object::decode(&t).ok()
}

/// `HashControllerRevision`: fnv32a of the data (and the collision count), safe-encoded.
pub fn hash_revision(data: &serde_json::Value, collision_count: Option<i32>) -> String {
    let json = serde_json::to_string(data).unwrap_or_default();
    let h = fnv1a(json.as_bytes());
    let mut h = (h as u32) ^ ((h >> 32) as u32);
    if let Some(c) = collision_count {
        h = h.wrapping_add(fnv1a(&c.to_le_bytes()) as u32);
    }
    safe_encode(&h.to_string())
}

/// `ControllerRevisionName`: `<prefix>-<hash>` with the prefix cut to 223 characters.
pub fn revision_name(prefix: &str, hash: &str) -> String {
    let prefix = if prefix.len() > 223 {
        &prefix[..223]
    } else {
        prefix
    };
    format!("{prefix}-{hash}")
}

/// `NewControllerRevision`: a revision of `owner` with `labels`, `data` and number
/// `revision`, its hash label set and the owner's annotations copied (`newRevision`).
pub fn new_revision(
    owner: &Object,
    labels: Option<&BTreeMap<String, String>>,
    data: serde_json::Value,
    revision: i64,
    collision_count: Option<i32>,
) -> ControllerRevision {
    let hash = hash_revision(&data, collision_count);
    let mut labels = labels.cloned().unwrap_or_default();
    labels.insert(REVISION_HASH_LABEL.into(), hash.clone());
    ControllerRevision {
        metadata: ObjectMeta {
            name: Some(revision_name(owner.name(), &hash)),
            namespace: Some(owner.namespace().to_string()),
            labels: Some(labels),
            annotations: owner.meta().annotations.clone(),
            owner_references: Some(vec![owner_ref(owner)]),
            ..ObjectMeta::default()
        },
        data: Some(RawExtension(data)),
        revision,
    }
}

/// The revisions `uid` controls, oldest first (`SortControllerRevisions`: by number,
/// then creation, then name).
pub fn owned_revisions(
    inf: &Informers,
    ns: &str,
    uid: &str,
) -> Vec<(Arc<Object>, ControllerRevision)> {
    let mut revs: Vec<(Arc<Object>, ControllerRevision)> = inf
        .of(Kind::ControllerRevision)
        .controlled_by(uid)
        .filter(|o| o.namespace() == ns)
        .filter_map(|o| match &**o {
            Object::ControllerRevision(r) => Some((o.clone(), (**r).clone())),
            _ => None,
        })
        .collect();
    revs.sort_by(|(_, a), (_, b)| {
        a.revision
            .cmp(&b.revision)
            .then_with(|| {
                a.metadata
                    .creation_timestamp
                    .cmp(&b.metadata.creation_timestamp)
            })
            .then_with(|| a.metadata.name.cmp(&b.metadata.name))
    });
    revs
}

/// `MaxRevision`: the highest revision number (0 without revisions).
pub fn max_revision(revs: &[(Arc<Object>, ControllerRevision)]) -> i64 {
    revs.iter().map(|(_, r)| r.revision).max().unwrap_or(0)
}

/// `FindEqualRevisions`: the revisions whose data equals `data`.
pub fn equal_revisions<'a>(
    revs: &'a [(Arc<Object>, ControllerRevision)],
    data: &serde_json::Value,
) -> Vec<&'a ControllerRevision> {
    revs.iter()
        .filter(|(_, r)| r.data.as_ref().map(|d| &d.0) == Some(data))
        .map(|(_, r)| r)
        .collect()
}

/// The revisions to delete to keep at most `limit` besides the `live` ones, oldest
/// first (`truncateHistory`).
pub fn revisions_to_prune<'a>(
    revs: &'a [(Arc<Object>, ControllerRevision)],
    live: &[&str],
    limit: i32,
) -> Vec<&'a ControllerRevision> {
    let history: Vec<&ControllerRevision> = revs
        .iter()
        .map(|(_, r)| r)
        .filter(|r| !live.contains(&r.metadata.name.as_deref().unwrap_or("")))
        .collect();
    let limit = limit.max(0) as usize;
    if history.len() <= limit {
        return Vec::new();
    }
    history[..history.len() - limit].to_vec()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_revision_holds_a_replacing_template_patch_and_round_trips() {
        let t: PodTemplateSpec = serde_json::from_value(serde_json::json!({
            "metadata": {"labels": {"app": "nginx"}},
            "spec": {"containers": [{"name": "nginx", "image": "nginx:1.27"}]}
        }))
        .unwrap();
        let data = template_patch(&t);
        assert_eq!(data["spec"]["template"]["$patch"], "replace");
        let rev = ControllerRevision {
            data: Some(RawExtension(data.clone())),
            ..Default::default()
        };
        assert_eq!(template_of(&rev), Some(t));
        let h = hash_revision(&data, None);
        assert_ne!(h, hash_revision(&data, Some(1)));
        assert!(h.chars().all(|c| "bcdfghjklmnpqrstvwxz2456789".contains(c)));
    }

    #[test]
    fn pruning_keeps_the_live_revisions_and_the_newest_history() {
        let revs: Vec<(Arc<Object>, ControllerRevision)> = (1..=5)
            .map(|i| {
                let r = ControllerRevision {
                    metadata: ObjectMeta {
                        name: Some(format!("r{i}")),
                        ..Default::default()
                    },
                    data: None,
                    revision: i,
                };
                (Arc::new(Object::from(r.clone())), r)
            })
            .collect();
        let gone: Vec<String> = revisions_to_prune(&revs, &["r5", "r1"], 2)
            .iter()
            .filter_map(|r| r.metadata.name.clone())
            .collect();
        assert_eq!(gone, vec!["r2".to_string()]);
    }
}
