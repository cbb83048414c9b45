//! An object from a cluster made ready to apply again: what the apiserver and controllers
//! wrote (status, uid, resourceVersion, managedFields, timestamps, owner references,
//! kubectl's last-applied annotation) removed, and the few fields that would not survive
//! a new cluster adjusted.

use serde_json::Value;

/// Metadata the apiserver sets on every write.
const SERVER_METADATA: &[&str] = &[
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "managedFields",
    "selfLink",
    "ownerReferences",
    "finalizers",
];

/// Annotations written by kubectl and controllers, not by the object's author.
const SERVER_ANNOTATIONS: &[&str] = &[
    "kubectl.kubernetes.io/last-applied-configuration",
    "deployment.kubernetes.io/revision",
    "deployment.kubernetes.io/desired-replicas",
    "deployment.kubernetes.io/max-replicas",
];

/// The service CIDR kubeloop's cluster (like kind's) allocates from: 10.96.0.0/12.
fn in_service_cidr(ip: &str) -> bool {
    let parts: Vec<u8> = ip.split('.').filter_map(|p| p.parse().ok()).collect();
    parts.len() == 4 && parts[0] == 10 && (96..112).contains(&parts[1])
}

/// Cleans `obj` in place; returns notices about what changed beyond server-set fields.
pub fn clean(obj: &mut Value, what: &str) -> Vec<String> {
    let mut notices = Vec::new();
    if let Some(o) = obj.as_object_mut() {
        o.remove("status");
    }
    // `pointer_mut`, not `obj["a"]`: indexing a missing key mutably would insert a null.
    if let Some(m) = obj.pointer_mut("/metadata") {
        clean_metadata(m);
    }
    let kind = obj["kind"].as_str().unwrap_or_default().to_string();
    match kind.as_str() {
        "Pod" => {
            if let Some(spec) = obj.pointer_mut("/spec") {
                clean_pod_spec(spec);
            }
        }
        "Deployment" | "ReplicaSet" | "StatefulSet" | "DaemonSet" => {
            if let Some(m) = obj
                .pointer_mut("/spec/template/metadata")
                .and_then(Value::as_object_mut)
            {
                m.remove("creationTimestamp");
            }
            if let Some(spec) = obj.pointer_mut("/spec/template/spec") {
                clean_pod_spec(spec);
            }
            // A StatefulSet's claim templates are printed with a status and a null
            // creationTimestamp, like objects.
            let templates = obj
                .pointer_mut("/spec/volumeClaimTemplates")
                .and_then(Value::as_array_mut);
            for t in templates
                .into_iter()
                .flatten()
                .filter_map(Value::as_object_mut)
            {
                t.remove("status");
                if let Some(m) = t.get_mut("metadata").and_then(Value::as_object_mut) {
                    m.remove("creationTimestamp");
                }
            }
        }
        "Service" => {
            if let Some(spec) = obj.pointer_mut("/spec") {
                notices.extend(clean_service(spec, what));
            }
        }
        "PersistentVolume" => {
            // A claimRef's uid names the old claim: kept, the new claim would be taken for
            // a deleted one and the volume released.
            if let Some(c) = obj
                .pointer_mut("/spec/claimRef")
                .and_then(Value::as_object_mut)
            {
                c.remove("uid");
                c.remove("resourceVersion");
            }
        }
        "Secret" => notices.extend(clean_secret(obj, what)),
        _ => {}
    }
    notices
}

fn clean_metadata(m: &mut Value) {
    let Some(m) = m.as_object_mut() else {
        return;
    };
    for k in SERVER_METADATA {
        m.remove(*k);
    }
    if let Some(a) = m.get_mut("annotations").and_then(Value::as_object_mut) {
        a.retain(|k, _| {
            !SERVER_ANNOTATIONS.contains(&k.as_str()) && !k.starts_with("pv.kubernetes.io/")
        });
        if a.is_empty() {
            m.remove("annotations");
        }
    }
}

/// The service-account token volume (`kube-api-access-…`) is the apiserver's: dropped with
/// its mounts so admission injects a fresh one.
fn clean_pod_spec(spec: &mut Value) {
    let injected = |v: &Value| {
        v["name"]
            .as_str()
            .is_some_and(|n| n.starts_with("kube-api-access-"))
    };
    let Some(spec) = spec.as_object_mut() else {
        return;
    };
    if let Some(v) = spec.get_mut("volumes").and_then(Value::as_array_mut) {
        v.retain(|vol| !injected(vol));
        if v.is_empty() {
            spec.remove("volumes");
        }
    }
    for list in ["containers", "initContainers"] {
        let containers = spec.get_mut(list).and_then(Value::as_array_mut);
        for c in containers
            .into_iter()
            .flatten()
            .filter_map(Value::as_object_mut)
        {
            if let Some(m) = c.get_mut("volumeMounts").and_then(Value::as_array_mut) {
                m.retain(|vm| !injected(vm));
                if m.is_empty() {
                    c.remove("volumeMounts");
                }
            }
        }
    }
}

/// A cluster IP outside kubeloop's service CIDR could not be allocated: dropped, so the
/// Service gets a new one (headless `None` and in-range IPs are kept).
fn clean_service(spec: &mut Value, what: &str) -> Option<String> {
    let ip = spec["clusterIP"].as_str()?.to_string();
    if ip == "None" || in_service_cidr(&ip) {
        return None;
    }
    let s = spec.as_object_mut()?;
    s.remove("clusterIP");
    s.remove("clusterIPs");
    Some(format!(
        "{what}: clusterIP {ip} is outside kubeloop's service range 10.96.0.0/12; it gets a new one"
    ))
}

/// A Secret keeps its keys (so references to them resolve) with empty values.
fn clean_secret(obj: &mut Value, what: &str) -> Option<String> {
    let o = obj.as_object_mut()?;
    let mut keys: Vec<String> = Vec::new();
    for field in ["data", "stringData"] {
        if let Some(d) = o.remove(field) {
            keys.extend(d.as_object().into_iter().flatten().map(|(k, _)| k.clone()));
        }
    }
    keys.sort();
    keys.dedup();
    if keys.is_empty() {
        return None;
    }
    let data: serde_json::Map<String, Value> = keys
        .iter()
        .map(|k| (k.clone(), Value::String(String::new())))
        .collect();
    o.insert("data".into(), Value::Object(data));
    Some(format!(
        "{what}: data dropped (the keys {} are kept with empty values)",
        keys.join(", ")
    ))
}
