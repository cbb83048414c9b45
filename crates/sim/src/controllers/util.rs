//! Helpers shared by controllers: owner references, pod readiness and availability,
//! the pod-template hash, and building pods from templates.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{Pod, PodTemplateSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};

use crate::object::Object;
use crate::rng::fnv1a;
use crate::time::{from_k8s_time, Time};

/// The controller owner reference of an object, if any.
pub fn controller_ref(o: &Object) -> Option<&OwnerReference> {
    controller_of(o.meta())
}

/// `metav1.GetControllerOf`: the owner reference with `controller: true`, if any.
pub fn controller_of(m: &ObjectMeta) -> Option<&OwnerReference> {
    m.owner_references
        .iter()
        .flatten()
        .find(|r| r.controller == Some(true))
}

/// Whether `o` is controlled by the object with `uid`.
pub fn controlled_by(o: &Object, uid: &str) -> bool {
    controller_ref(o).is_some_and(|r| r.uid == uid)
}

/// An owner reference making `owner` the controller.
pub fn owner_ref(owner: &Object) -> OwnerReference {
    let info = owner.kind().info();
    OwnerReference {
        api_version: info.api_version(),
        kind: info.kind.to_string(),
        name: owner.name().to_string(),
        uid: owner.meta().uid.clone().unwrap_or_default(),
        controller: Some(true),
        block_owner_deletion: Some(true),
    }
}

/// `IsPodActive`: not terminal and not being deleted.
pub fn is_pod_active(p: &Pod) -> bool {
    let phase = p
        .status
        .as_ref()
        .and_then(|s| s.phase.as_deref())
        .unwrap_or("");
    phase != "Succeeded" && phase != "Failed" && p.metadata.deletion_timestamp.is_none()
}

/// The PodReady condition, if true: since when.
pub fn ready_since(p: &Pod) -> Option<Time> {
    let c = p
        .status
        .as_ref()?
        .conditions
        .as_ref()?
        .iter()
        .find(|c| c.type_ == "Ready")?;
    if c.status != "True" {
        return None;
    }
    Some(c.last_transition_time.as_ref().map_or(0, from_k8s_time))
}

/// Whether the pod is Ready.
pub fn is_pod_ready(p: &Pod) -> bool {
    ready_since(p).is_some()
}

/// `IsPodAvailable`: ready for at least `min_ready_seconds`.
pub fn is_pod_available(p: &Pod, min_ready_seconds: i32, now: Time) -> bool {
    match ready_since(p) {
        None => false,
        Some(_) if min_ready_seconds <= 0 => true,
        Some(t) => t + (min_ready_seconds as u64) * 1000 <= now,
    }
}

/// `rand.SafeEncodeString`: maps each character to the consonant/digit alphabet
/// upstream uses so generated names never spell words.
pub fn safe_encode(s: &str) -> String {
    const ALPHANUMS: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    s.bytes()
        .map(|b| ALPHANUMS[b as usize % ALPHANUMS.len()] as char)
        .collect()
}

/// The pod-template-hash of a template (fnv32a of the template, like upstream's
/// `ComputeHash`, over our canonical JSON instead of Go's spew dump; see docs).
pub fn compute_hash(template: &PodTemplateSpec, collision_count: Option<i32>) -> String {
    let t = without_hash(template);
    let json = serde_json::to_string(&t).unwrap_or_default();
    let mut h = fnv1a(json.as_bytes()) as u32 ^ ((fnv1a(json.as_bytes()) >> 32) as u32);
    if let Some(c) = collision_count {
        h = h.wrapping_add(fnv1a(&c.to_le_bytes()) as u32);
    }
    safe_encode(&h.to_string())
}

/// Whether two templates are equal ignoring the pod-template-hash label (`EqualIgnoreHash`).
pub fn equal_ignore_hash(a: &PodTemplateSpec, b: &PodTemplateSpec) -> bool {
    without_hash(a) == without_hash(b)
}

/// The template without its pod-template-hash label (and without empty label maps).
fn without_hash(t: &PodTemplateSpec) -> PodTemplateSpec {
    let mut t = t.clone();
    let m = t.metadata.get_or_insert_with(ObjectMeta::default);
    if let Some(l) = m.labels.as_mut() {
        l.remove("pod-template-hash");
        if l.is_empty() {
            m.labels = None;
        }
    }
    t
}

/// A pod for a controller to create from its template.
pub fn pod_from_template(template: &PodTemplateSpec, owner: &Object, generate_name: &str) -> Pod {
    let tm = template.metadata.clone().unwrap_or_default();
    Pod {
        metadata: ObjectMeta {
            generate_name: Some(generate_name.to_string()),
            namespace: Some(owner.namespace().to_string()),
            labels: tm.labels.clone(),
            annotations: tm.annotations.clone(),
            finalizers: tm.finalizers.clone(),
            owner_references: Some(vec![owner_ref(owner)]),
            ..ObjectMeta::default()
        },
        spec: template.spec.clone(),
        status: None,
    }
}

/// Copies labels, adding one.
pub fn with_label(
    labels: Option<&BTreeMap<String, String>>,
    k: &str,
    v: &str,
) -> BTreeMap<String, String> {
    let mut l = labels.cloned().unwrap_or_default();
    l.insert(k.to_string(), v.to_string());
    l
}

/// The `namespace/name` key of `o`'s controller of kind `kind`, if the informer holds
/// that controller with the referenced uid (`resolveControllerRef`).
pub fn controller_key(
    o: &Object,
    kind: crate::object::Kind,
    inf: &crate::client::Informers,
) -> Option<String> {
    let r = controller_ref(o)?;
    if r.kind != kind.info().kind {
        return None;
    }
    let owner = inf.of(kind).get(o.namespace(), &r.name)?;
    (owner.meta().uid.as_deref() == Some(r.uid.as_str())).then(|| key_of(owner))
}

/// `namespace/name` of an object.
pub fn key_of(o: &Object) -> String {
    format!("{}/{}", o.namespace(), o.name())
}

/// Splits `namespace/name`.
pub fn split_key(key: &str) -> (&str, &str) {
    key.split_once('/').unwrap_or(("", key))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashes_use_the_safe_alphabet_and_ignore_the_hash_label() {
        let mut t = PodTemplateSpec::default();
        let h = compute_hash(&t, None);
        assert!(h.chars().all(|c| "bcdfghjklmnpqrstvwxz2456789".contains(c)));
        assert!(h.len() >= 8 && h.len() <= 10);
        t.metadata = Some(ObjectMeta {
            labels: Some(
                [("pod-template-hash".to_string(), h.clone())]
                    .into_iter()
                    .collect(),
            ),
            ..ObjectMeta::default()
        });
        assert_eq!(compute_hash(&t, None), h);
        assert_ne!(compute_hash(&t, Some(1)), h);
    }
}
