//! A container's environment as the kubelet builds it: `env` values, ConfigMap and Secret
//! keys, the downward API, `envFrom`, and the Service links every container gets.

use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_openapi::api::core::v1::{Container, Pod};

use crate::object::Object;

fn singular(kind: &str) -> &'static str {
    match kind {
        "configmaps" => "configmap",
        _ => "secret",
    }
}

/// What the environment of a container resolves to, or the `CreateContainerConfigError`
/// message (`configmap "x" not found`, `couldn't find key k in ConfigMap ns/x`).
pub fn env(
    pod: &Pod,
    c: &Container,
    objects: &BTreeMap<String, Result<Arc<Object>, String>>,
    pod_ip: &str,
    host_ip: &str,
) -> Result<Vec<(String, String)>, String> {
    let ns = pod.metadata.namespace.as_deref().unwrap_or("default");
    let mut out: Vec<(String, String)> = Vec::new();
    let mut set = |k: String, v: String| {
        if let Some(e) = out.iter_mut().find(|(x, _)| *x == k) {
            e.1 = v;
        } else {
            out.push((k, v));
        }
    };
    let data = |kind: &str, name: &str| -> Result<Option<BTreeMap<String, String>>, String> {
        match objects.get(&format!("{kind}/{name}")) {
            Some(Ok(o)) => Ok(Some(match &**o {
                Object::ConfigMap(cm) => cm.data.clone().unwrap_or_default(),
                Object::Secret(s) => {
                    let mut m: BTreeMap<String, String> = s
                        .data
                        .iter()
                        .flatten()
                        .map(|(k, v)| (k.clone(), String::from_utf8_lossy(&v.0).into_owned()))
                        .collect();
                    m.extend(s.string_data.clone().unwrap_or_default());
                    m
                }
                _ => BTreeMap::new(),
            })),
            Some(Err(e)) if e.contains("not found") => Ok(None),
            Some(Err(e)) => Err(e.clone()),
            None => Ok(None),
        }
    };
    for e in c.env_from.iter().flatten() {
        let prefix = e.prefix.clone().unwrap_or_default();
        let (kind, name, optional) = if let Some(r) = &e.config_map_ref {
            ("configmaps", r.name.clone(), r.optional.unwrap_or(false))
        } else if let Some(r) = &e.secret_ref {
            ("secrets", r.name.clone(), r.optional.unwrap_or(false))
        } else {
            continue;
        };
        match data(kind, &name)? {
            Some(d) => d
                .into_iter()
                .for_each(|(k, v)| set(format!("{prefix}{k}"), v)),
            None if optional => {}
            None => return Err(format!("{} \"{name}\" not found", singular(kind))),
        }
    }
    for e in c.env.iter().flatten() {
        let Some(vf) = &e.value_from else {
            set(e.name.clone(), e.value.clone().unwrap_or_default());
            continue;
        };
        let (kind, cls, r_name, key, optional) = if let Some(r) = &vf.config_map_key_ref {
            (
                "configmaps",
                "ConfigMap",
                r.name.clone(),
                r.key.clone(),
                r.optional.unwrap_or(false),
            )
        } else if let Some(r) = &vf.secret_key_ref {
            (
                "secrets",
                "Secret",
                r.name.clone(),
                r.key.clone(),
                r.optional.unwrap_or(false),
            )
        } else if let Some(f) = &vf.field_ref {
            let v = match f.field_path.as_str() {
                "metadata.name" => pod.metadata.name.clone().unwrap_or_default(),
                "metadata.namespace" => ns.to_string(),
                "metadata.uid" => pod.metadata.uid.clone().unwrap_or_default(),
                "spec.nodeName" => pod
                    .spec
                    .as_ref()
                    .and_then(|s| s.node_name.clone())
                    .unwrap_or_default(),
                "spec.serviceAccountName" => pod
                    .spec
                    .as_ref()
                    .and_then(|s| s.service_account_name.clone())
                    .unwrap_or_default(),
                "status.podIP" | "status.podIPs" => pod_ip.to_string(),
                "status.hostIP" | "status.hostIPs" => host_ip.to_string(),
                p => {
                    let k = p
                        .trim_start_matches("metadata.labels['")
                        .trim_start_matches("metadata.annotations['")
                        .trim_end_matches("']");
                    let labels = pod.metadata.labels.clone().unwrap_or_default();
                    let ann = pod.metadata.annotations.clone().unwrap_or_default();
                    labels.get(k).or(ann.get(k)).cloned().unwrap_or_default()
                }
            };
            set(e.name.clone(), v);
            continue;
        } else {
            set(e.name.clone(), String::new());
            continue;
        };
        match data(kind, &r_name)? {
            Some(d) => match d.get(&key) {
                Some(v) => set(e.name.clone(), v.clone()),
                None if optional => {}
                None => return Err(format!("couldn't find key {key} in {cls} {ns}/{r_name}")),
            },
            None if optional => {}
            None => return Err(format!("{} \"{r_name}\" not found", singular(kind))),
        }
    }
    Ok(out)
}

/// The Service links every container gets (`enableServiceLinks`): the `kubernetes`
/// Service's variables.
pub fn service_links() -> Vec<(String, String)> {
    let ip = crate::cluster::KUBERNETES_SERVICE_IP;
    [
        ("KUBERNETES_SERVICE_PORT_HTTPS", "443".to_string()),
        ("KUBERNETES_SERVICE_PORT", "443".to_string()),
        ("KUBERNETES_PORT_443_TCP", format!("tcp://{ip}:443")),
        ("KUBERNETES_PORT_443_TCP_PROTO", "tcp".to_string()),
        ("KUBERNETES_PORT_443_TCP_ADDR", ip.to_string()),
        ("KUBERNETES_SERVICE_HOST", ip.to_string()),
        ("KUBERNETES_PORT", format!("tcp://{ip}:443")),
        ("KUBERNETES_PORT_443_TCP_PORT", "443".to_string()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect()
}
