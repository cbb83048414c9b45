//! StatefulSet pod identity and storage (upstream's `stateful_set_utils.go`): pod names
//! `<set>-<ordinal>`, identity labels, hostname and subdomain, claims
//! `<template>-<set>-<ordinal>`, pod health, and the set's replica status.

use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_openapi::api::apps::v1::{StatefulSet, StatefulSetStatus};
use k8s_openapi::api::core::v1::{
    PersistentVolumeClaim, PersistentVolumeClaimVolumeSource, Pod, PodTemplateSpec, Volume,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};

use crate::controllers::history::REVISION_HASH_LABEL;
use crate::controllers::util::{is_pod_available, is_pod_ready, owner_ref};
use crate::object::Object;
use crate::time::Time;

/// `apps.kubernetes.io/pod-index`.
pub const POD_INDEX_LABEL: &str = "apps.kubernetes.io/pod-index";
/// `statefulset.kubernetes.io/pod-name`.
pub const POD_NAME_LABEL: &str = "statefulset.kubernetes.io/pod-name";

/// `getParentNameAndOrdinal`: the ordinal of a pod named `<set>-<n>`.
pub fn ordinal_of(set: &str, pod: &str) -> Option<i32> {
    let rest = pod.strip_prefix(set)?.strip_prefix('-')?;
    if rest.is_empty() || !rest.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    rest.parse().ok()
}

/// `getPodName`.
pub fn pod_name(set: &str, ordinal: i32) -> String {
    format!("{set}-{ordinal}")
}

/// `getPersistentVolumeClaimName`.
pub fn claim_name(template: &str, set: &str, ordinal: i32) -> String {
    format!("{template}-{set}-{ordinal}")
}

/// The revision a pod was made from (its `controller-revision-hash` label).
pub fn pod_revision(p: &Pod) -> &str {
    p.metadata
        .labels
        .as_ref()
        .and_then(|l| l.get(REVISION_HASH_LABEL))
        .map_or("", String::as_str)
}

/// `isCreated`: the pod has a phase.
pub fn is_created(p: &Pod) -> bool {
    p.status.as_ref().and_then(|s| s.phase.as_deref()).is_some()
}

/// `isTerminating`.
pub fn is_terminating(p: &Pod) -> bool {
    p.metadata.deletion_timestamp.is_some()
}

fn phase(p: &Pod) -> &str {
    p.status
        .as_ref()
        .and_then(|s| s.phase.as_deref())
        .unwrap_or("")
}

/// `isFailed` / `isSucceeded`: a terminal pod to recreate.
pub fn is_terminal(p: &Pod) -> bool {
    matches!(phase(p), "Failed" | "Succeeded")
}

/// `isRunningAndReady`.
pub fn is_running_and_ready(p: &Pod) -> bool {
    phase(p) == "Running" && is_pod_ready(p)
}

/// `isRunningAndAvailable`.
pub fn is_running_and_available(p: &Pod, min_ready: i32, now: Time) -> bool {
    phase(p) == "Running" && is_pod_available(p, min_ready, now)
}

/// `isHealthy`: running, available and not terminating.
pub fn is_healthy(p: &Pod, min_ready: i32, now: Time) -> bool {
    is_running_and_available(p, min_ready, now) && !is_terminating(p)
}

/// The claims a pod of `set` at `ordinal` mounts, from the volumeClaimTemplates
/// (`getPersistentVolumeClaims`): the templates' labels plus the selector's.
pub fn claims_for(set: &Object, s: &StatefulSet, ordinal: i32) -> Vec<PersistentVolumeClaim> {
    let spec = s.spec.clone().unwrap_or_default();
    let selector_labels = spec.selector.match_labels.clone().unwrap_or_default();
    let whendel = spec
        .persistent_volume_claim_retention_policy
        .as_ref()
        .and_then(|p| p.when_deleted.clone())
        .unwrap_or_else(|| "Retain".into());
    spec.volume_claim_templates
        .iter()
        .flatten()
        .map(|t| {
            let tname = t.metadata.name.clone().unwrap_or_default();
            let mut labels = t.metadata.labels.clone().unwrap_or_default();
            labels.extend(selector_labels.clone());
            let mut owners = Vec::new();
            if whendel == "Delete" {
                owners.push(OwnerReference {
                    controller: Some(true),
                    block_owner_deletion: Some(true),
                    ..owner_ref(set)
                });
            }
            PersistentVolumeClaim {
                metadata: ObjectMeta {
                    name: Some(claim_name(&tname, set.name(), ordinal)),
                    namespace: Some(set.namespace().to_string()),
                    labels: Some(labels),
                    annotations: t.metadata.annotations.clone(),
                    owner_references: (!owners.is_empty()).then_some(owners),
                    ..ObjectMeta::default()
                },
                spec: t.spec.clone(),
                status: None,
            }
        })
        .collect()
}

/// whenScaled=Delete (`updateClaimOwnerRefForSetAndPod`): the claims of a condemned pod,
/// owned by that pod instead of the set, so they go with it. Only claims that change.
pub fn claims_owned_by_condemned_pod(
    set: &Object,
    s: &StatefulSet,
    pod: &Object,
    ordinal: i32,
    inf: &crate::controllers::Informers,
) -> Vec<Object> {
    let scaled = s
        .spec
        .as_ref()
        .and_then(|s| s.persistent_volume_claim_retention_policy.as_ref())
        .and_then(|p| p.when_scaled.as_deref())
        == Some("Delete");
    if !scaled {
        return Vec::new();
    }
    let set_uid = set.meta().uid.clone().unwrap_or_default();
    let pod_uid = pod.meta().uid.clone().unwrap_or_default();
    let claims = inf.of(crate::object::Kind::PersistentVolumeClaim);
    claims_for(set, s, ordinal)
        .iter()
        .filter_map(|c| claims.get(set.namespace(), c.metadata.name.as_deref().unwrap_or("")))
        .filter_map(|existing| {
            let refs = existing.meta().owner_references.clone().unwrap_or_default();
            let has_pod = refs.iter().any(|r| r.uid == pod_uid);
            let has_set = refs.iter().any(|r| r.uid == set_uid);
            if has_pod && !has_set {
                return None;
            }
            let mut refs: Vec<OwnerReference> = refs
                .into_iter()
                .filter(|r| r.uid != set_uid && r.uid != pod_uid)
                .collect();
            refs.push(OwnerReference {
                controller: None,
                block_owner_deletion: None,
                ..owner_ref(pod)
            });
            let mut c = (**existing).clone();
            c.meta_mut().owner_references = Some(refs);
            Some(c)
        })
        .collect()
}

/// `newVersionedStatefulSetPod`: the pod at `ordinal` from `template` of revision `rev`,
/// with its identity (name, labels, hostname, subdomain) and its claims as volumes.
pub fn new_pod(
    set: &Object,
    s: &StatefulSet,
    template: &PodTemplateSpec,
    rev: &str,
    ordinal: i32,
) -> Pod {
    let name = pod_name(set.name(), ordinal);
    let tm = template.metadata.clone().unwrap_or_default();
    let mut labels: BTreeMap<String, String> = tm.labels.clone().unwrap_or_default();
    labels.insert(POD_NAME_LABEL.into(), name.clone());
    labels.insert(POD_INDEX_LABEL.into(), ordinal.to_string());
    labels.insert(REVISION_HASH_LABEL.into(), rev.to_string());
    let mut spec = template.spec.clone().unwrap_or_default();
    spec.hostname = Some(name.clone());
    let service = s.spec.as_ref().and_then(|s| s.service_name.clone());
    spec.subdomain = service.filter(|s| !s.is_empty());
    let mut volumes: Vec<Volume> = spec.volumes.take().unwrap_or_default();
    for t in s
        .spec
        .iter()
        .flat_map(|s| s.volume_claim_templates.iter().flatten())
    {
        let tname = t.metadata.name.clone().unwrap_or_default();
        volumes.retain(|v| v.name != tname);
        volumes.push(Volume {
            name: tname.clone(),
            persistent_volume_claim: Some(PersistentVolumeClaimVolumeSource {
                claim_name: claim_name(&tname, set.name(), ordinal),
                read_only: None,
            }),
            ..Volume::default()
        });
    }
    spec.volumes = (!volumes.is_empty()).then_some(volumes);
    Pod {
        metadata: ObjectMeta {
            name: Some(name),
            namespace: Some(set.namespace().to_string()),
            labels: Some(labels),
            annotations: tm.annotations.clone(),
            finalizers: tm.finalizers.clone(),
            owner_references: Some(vec![owner_ref(set)]),
            ..ObjectMeta::default()
        },
        spec: Some(spec),
        status: None,
    }
}

/// The pods of a set by role: `replicas[i]` is ordinal `start + i` (if it exists),
/// `condemned` the pods past the range, highest ordinal first.
pub struct Classified<'a> {
    /// The pods in the range, by position.
    pub replicas: Vec<Option<&'a Arc<Object>>>,
    /// The pods outside the range, highest ordinal first.
    pub condemned: Vec<&'a Arc<Object>>,
}

/// Sorts `pods` into the range `[start, start + replicas)` and the condemned rest.
pub fn classify<'a>(
    set: &str,
    pods: &[&'a Arc<Object>],
    start: i32,
    replicas: i32,
) -> Classified<'a> {
    let mut out = Classified {
        replicas: vec![None; replicas.max(0) as usize],
        condemned: Vec::new(),
    };
    let mut condemned: Vec<(i32, &'a Arc<Object>)> = Vec::new();
    for p in pods {
        let Some(ord) = ordinal_of(set, p.name()) else {
            continue;
        };
        if ord >= start && ord < start + replicas {
            out.replicas[(ord - start) as usize] = Some(p);
        } else {
            condemned.push((ord, p));
        }
    }
    condemned.sort_by(|a, b| b.0.cmp(&a.0));
    out.condemned = condemned.into_iter().map(|(_, p)| p).collect();
    out
}

/// The pod inside an informer object.
pub fn as_pod(o: &Object) -> Option<&Pod> {
    match o {
        Object::Pod(p) => Some(p),
        _ => None,
    }
}

/// The replica counts of `updateStatefulSet` over every pod of the set.
pub fn replica_status(
    s: &StatefulSet,
    pods: &[&Arc<Object>],
    current: &str,
    update: &str,
    now: Time,
) -> StatefulSetStatus {
    let min_ready = s
        .spec
        .as_ref()
        .and_then(|s| s.min_ready_seconds)
        .unwrap_or(0);
    let mut st = StatefulSetStatus {
        observed_generation: s.metadata.generation,
        current_revision: Some(current.to_string()),
        update_revision: Some(update.to_string()),
        collision_count: Some(
            s.status
                .as_ref()
                .and_then(|st| st.collision_count)
                .unwrap_or(0),
        ),
        ..StatefulSetStatus::default()
    };
    let (mut ready, mut available, mut cur, mut upd) = (0, 0, 0, 0);
    for p in pods.iter().filter_map(|o| as_pod(o)) {
        if is_created(p) {
            st.replicas += 1;
        }
        if is_running_and_ready(p) {
            ready += 1;
            if is_running_and_available(p, min_ready, now) {
                available += 1;
            }
        }
        if is_created(p) && !is_terminating(p) {
            if pod_revision(p) == current {
                cur += 1;
            }
            if pod_revision(p) == update {
                upd += 1;
            }
        }
    }
    st.ready_replicas = Some(ready);
    st.available_replicas = Some(available);
    st.current_replicas = Some(cur);
    st.updated_replicas = Some(upd);
    st
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ordinals_come_from_the_name_suffix_only() {
        assert_eq!(ordinal_of("web", "web-0"), Some(0));
        assert_eq!(ordinal_of("web", "web-12"), Some(12));
        assert_eq!(ordinal_of("web", "web-x"), None);
        assert_eq!(ordinal_of("web", "webby-1"), None);
        assert_eq!(ordinal_of("web", "web-"), None);
        assert_eq!(claim_name("www", "web", 1), "www-web-1");
    }
}
