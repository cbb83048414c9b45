//! Validation of the remaining core and cluster kinds: Namespace, ConfigMap, Secret,
//! ServiceAccount, Node, LimitRange, ResourceQuota, PriorityClass, Lease, Event.

use std::collections::BTreeSet;

use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::{ConfigMap, Event, Namespace, Node, Secret, ServiceAccount};
use k8s_openapi::api::scheduling::v1::PriorityClass;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use super::meta::*;
use super::names::*;
use super::resources::{qty, validate_resource_quantity_value};
use crate::apiserver::field_error::{BadValue, FieldError, GoJson, Path};

const MAX_SECRET_SIZE: usize = 1024 * 1024;

fn validate_finalizer_name(f: &str, path: &Path) -> Vec<FieldError> {
    let mut errs = validate_qualified_name(f, path);
    if !f.contains('/') && !matches!(f, "kubernetes" | "orphan" | "foregroundDeletion") {
        errs.push(FieldError::invalid(
            path,
            f,
            "name is neither a standard finalizer name nor is it fully qualified",
        ));
    }
    errs
}

/// `ValidateNamespace`.
pub fn validate_namespace(ns: &Namespace) -> Vec<FieldError> {
    let mut errs = validate_object_meta(
        &ns.metadata,
        false,
        name_is_dns_label,
        &Path::new("metadata"),
    );
    for f in ns.spec.iter().flat_map(|s| s.finalizers.iter().flatten()) {
        errs.extend(validate_finalizer_name(
            f,
            &Path::new("spec").child("finalizers"),
        ));
    }
    errs
}

/// `ValidateConfigMap`.
pub fn validate_config_map(cm: &ConfigMap) -> Vec<FieldError> {
    let mut errs = validate_object_meta(
        &cm.metadata,
        true,
        name_is_dns_subdomain,
        &Path::new("metadata"),
    );
    let mut total = 0;
    let binary = cm.binary_data.clone().unwrap_or_default();
    for (k, v) in cm.data.iter().flatten() {
        let p = Path::new("data").key(k);
        errs.extend(invalid_each(&p, k, is_config_map_key(k)));
        if binary.contains_key(k) {
            errs.push(FieldError::invalid(
                &p,
                k.as_str(),
                "duplicate of key present in binaryData",
            ));
        }
        total += v.len();
    }
    for (k, v) in &binary {
        errs.extend(invalid_each(
            &Path::new("binaryData").key(k),
            k,
            is_config_map_key(k),
        ));
        total += v.0.len();
    }
    if total > MAX_SECRET_SIZE {
        errs.push(FieldError::too_long(&Path::new(""), MAX_SECRET_SIZE));
    }
    errs
}

/// `ValidateConfigMapUpdate`: data is frozen once `immutable: true`.
pub fn validate_config_map_update(new: &ConfigMap, old: &ConfigMap) -> Vec<FieldError> {
    let mut errs =
        validate_object_meta_update(&new.metadata, &old.metadata, &Path::new("metadata"));
    if old.immutable == Some(true) {
        if new.immutable != Some(true) {
            errs.push(FieldError::forbidden(
                &Path::new("immutable"),
                "field is immutable when `immutable` is set",
            ));
        }
        if new.data.clone().unwrap_or_default() != old.data.clone().unwrap_or_default() {
            errs.push(FieldError::forbidden(
                &Path::new("data"),
                "field is immutable when `immutable` is set",
            ));
        }
        if new.binary_data.clone().unwrap_or_default()
            != old.binary_data.clone().unwrap_or_default()
        {
            errs.push(FieldError::forbidden(
                &Path::new("binaryData"),
                "field is immutable when `immutable` is set",
            ));
        }
    }
    errs.extend(
        validate_config_map(new)
            .into_iter()
            .filter(|e| !e.field.starts_with("metadata.")),
    );
    errs
}

/// Go's `json.Unmarshal` error for a value that must be a JSON object.
fn json_object_error(bytes: &[u8]) -> Option<String> {
    match serde_json::from_slice::<serde_json::Value>(bytes) {
        Ok(serde_json::Value::Object(_)) => None,
        Ok(v) => {
            let kind = match v {
                serde_json::Value::Array(_) => "array",
                serde_json::Value::String(_) => "string",
                serde_json::Value::Number(_) => "number",
                serde_json::Value::Bool(_) => "bool",
                _ => return None,
            };
            Some(format!(
                "json: cannot unmarshal {kind} into Go value of type map[string]interface {{}}"
            ))
        }
        Err(_) => {
            let first = bytes.iter().find(|b| !b.is_ascii_whitespace());
            Some(match first {
                None => "unexpected end of JSON input".to_string(),
                Some(b) if !b"{[\"-0123456789tfn".contains(b) => {
                    format!(
                        "invalid character '{}' looking for beginning of value",
                        *b as char
                    )
                }
                Some(_) => "unexpected end of JSON input".to_string(),
            })
        }
    }
}

/// `ValidateSecret`: keys, size, and the per-type required keys.
pub fn validate_secret(s: &Secret) -> Vec<FieldError> {
    let mut errs = validate_object_meta(
        &s.metadata,
        true,
        name_is_dns_subdomain,
        &Path::new("metadata"),
    );
    let dp = Path::new("data");
    let data = s.data.clone().unwrap_or_default();
    let mut total = 0;
    for (k, v) in &data {
        errs.extend(invalid_each(&dp.key(k), k, is_config_map_key(k)));
        total += v.0.len();
    }
    if total > MAX_SECRET_SIZE {
        errs.push(FieldError::too_long(&dp, MAX_SECRET_SIZE));
    }
    let required = |key: &str, errs: &mut Vec<FieldError>| {
        if !data.contains_key(key) {
            errs.push(FieldError::required(&dp.key(key), ""));
            false
        } else {
            true
        }
    };
    match s.type_.as_deref().unwrap_or("") {
        "kubernetes.io/service-account-token" => {
            let name = s
                .metadata
                .annotations
                .as_ref()
                .and_then(|a| a.get("kubernetes.io/service-account.name"));
            if name.is_none_or(|n| n.is_empty()) {
                errs.push(FieldError::required(
                    &Path::new("metadata")
                        .child("annotations")
                        .key("kubernetes.io/service-account.name"),
                    "",
                ));
            }
        }
        t @ ("kubernetes.io/dockercfg" | "kubernetes.io/dockerconfigjson") => {
            let key = if t == "kubernetes.io/dockercfg" {
                ".dockercfg"
            } else {
                ".dockerconfigjson"
            };
            if required(key, &mut errs) {
                if let Some(msg) = data.get(key).and_then(|v| json_object_error(&v.0)) {
                    errs.push(FieldError::invalid(
                        &dp.key(key),
                        "<secret contents redacted>",
                        &msg,
                    ));
                }
            }
        }
        "kubernetes.io/basic-auth"
            if !data.contains_key("username") && !data.contains_key("password") =>
        {
            errs.push(FieldError::required(&dp.key("username"), ""));
            errs.push(FieldError::required(&dp.key("password"), ""));
        }
        "kubernetes.io/ssh-auth" if data.get("ssh-privatekey").is_none_or(|v| v.0.is_empty()) => {
            errs.push(FieldError::required(&dp.key("ssh-privatekey"), ""));
        }
        "kubernetes.io/tls" => {
            required("tls.crt", &mut errs);
            required("tls.key", &mut errs);
        }
        _ => {}
    }
    errs
}

/// `ValidateSecretUpdate`: type immutable; data frozen once `immutable: true`.
pub fn validate_secret_update(new: &Secret, old: &Secret) -> Vec<FieldError> {
    let mut errs =
        validate_object_meta_update(&new.metadata, &old.metadata, &Path::new("metadata"));
    let (nt, ot) = (
        new.type_.clone().unwrap_or_default(),
        old.type_.clone().unwrap_or_default(),
    );
    if nt != ot {
        errs.push(FieldError::invalid(
            &Path::new("type"),
            BadValue::typed_str(&nt),
            FIELD_IMMUTABLE_MSG,
        ));
    }
    if old.immutable == Some(true) {
        if new.immutable != Some(true) {
            errs.push(FieldError::forbidden(
                &Path::new("immutable"),
                "field is immutable when `immutable` is set",
            ));
        }
        if new.data.clone().unwrap_or_default() != old.data.clone().unwrap_or_default() {
            errs.push(FieldError::forbidden(
                &Path::new("data"),
                "field is immutable when `immutable` is set",
            ));
        }
    }
    errs.extend(validate_secret(new).into_iter().filter(|e| {
        !e.field.starts_with("metadata.") || e.field.starts_with("metadata.annotations[")
    }));
    errs
}

/// `ValidateServiceAccount`.
pub fn validate_service_account(sa: &ServiceAccount) -> Vec<FieldError> {
    validate_object_meta(
        &sa.metadata,
        true,
        name_is_dns_subdomain,
        &Path::new("metadata"),
    )
}

fn validate_taints(node: &Node) -> Vec<FieldError> {
    let mut errs = Vec::new();
    // Upstream validates spec.taints under the metadata path; kept for fidelity.
    let tp = Path::new("metadata").child("taints");
    let mut unique: BTreeSet<(String, String)> = BTreeSet::new();
    for (i, t) in node
        .spec
        .iter()
        .flat_map(|s| s.taints.iter().flatten())
        .enumerate()
    {
        let p = tp.index(i);
        errs.extend(validate_qualified_name(&t.key, &p.child("key")));
        let value = t.value.clone().unwrap_or_default();
        let msgs = is_valid_label_value(&value);
        if !msgs.is_empty() {
            errs.push(FieldError::invalid(
                &p.child("value"),
                value.as_str(),
                &msgs.join(";"),
            ));
        }
        match t.effect.as_str() {
            "" => errs.push(FieldError::required(&p.child("effect"), "")),
            "NoSchedule" | "PreferNoSchedule" | "NoExecute" => {}
            e => errs.push(FieldError::not_supported(
                &p.child("effect"),
                BadValue::typed_str(e),
                &["NoSchedule", "PreferNoSchedule", "NoExecute"],
            )),
        }
        if !unique.insert((t.effect.clone(), t.key.clone())) {
            let value = GoJson::obj(vec![
                ("Key", GoJson::str(&t.key)),
                ("Value", GoJson::str(&value)),
                ("Effect", GoJson::str(&t.effect)),
                ("TimeAdded", GoJson::Null),
            ]);
            let mut e = FieldError::duplicate(&p, value);
            e.detail = "taints must be unique by key and effect pair".into();
            errs.push(e);
        }
    }
    errs
}

fn validate_node_resources(node: &Node) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let status = node.status.clone().unwrap_or_default();
    for (field, list) in [
        ("capacity", &status.capacity),
        ("allocatable", &status.allocatable),
    ] {
        for (k, q) in list.iter().flatten() {
            if let Some(v) = qty(q) {
                errs.extend(validate_resource_quantity_value(
                    k,
                    &v,
                    &Path::new("status").child(field).child(k),
                ));
            }
        }
    }
    errs
}

/// `ValidateNode`.
pub fn validate_node(node: &Node) -> Vec<FieldError> {
    let mut errs = validate_object_meta(
        &node.metadata,
        false,
        name_is_dns_subdomain,
        &Path::new("metadata"),
    );
    errs.extend(validate_taints(node));
    errs.extend(validate_node_resources(node));
    let cidrs = node
        .spec
        .as_ref()
        .and_then(|s| s.pod_cidrs.clone())
        .unwrap_or_default();
    for (i, c) in cidrs.iter().enumerate() {
        if !is_valid_cidr(c) {
            errs.push(FieldError::invalid(
                &Path::new("spec").child("podCIDRs").index(i),
                c.as_str(),
                "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)",
            ));
        }
    }
    errs
}

fn is_valid_cidr(c: &str) -> bool {
    let Some((ip, bits)) = c.split_once('/') else {
        return false;
    };
    let Ok(bits) = bits.parse::<u8>() else {
        return false;
    };
    match ip.parse::<std::net::IpAddr>() {
        Ok(std::net::IpAddr::V4(_)) => bits <= 32,
        Ok(std::net::IpAddr::V6(_)) => bits <= 128,
        Err(_) => false,
    }
}

/// `ValidateNodeUpdate`.
pub fn validate_node_update(new: &Node, old: &Node) -> Vec<FieldError> {
    let mut errs =
        validate_object_meta_update(&new.metadata, &old.metadata, &Path::new("metadata"));
    errs.extend(validate_node_resources(new));
    let (ns, os) = (
        new.spec.clone().unwrap_or_default(),
        old.spec.clone().unwrap_or_default(),
    );
    let (nc, oc) = (
        ns.pod_cidrs.unwrap_or_default(),
        os.pod_cidrs.unwrap_or_default(),
    );
    if !oc.is_empty() && nc != oc {
        errs.push(FieldError::forbidden(
            &Path::new("spec").child("podCIDRs"),
            "node updates may not change podCIDR except from \"\" to valid",
        ));
    }
    let old_provider = os.provider_id.unwrap_or_default();
    if !old_provider.is_empty() && ns.provider_id.unwrap_or_default() != old_provider {
        errs.push(FieldError::forbidden(
            &Path::new("spec").child("providerID"),
            "node updates may not change providerID except from \"\" to valid",
        ));
    }
    errs.extend(validate_taints(new));
    errs
}

const SYSTEM_PRIORITY_CLASSES: &[(&str, i32)] = &[
    ("system-node-critical", 2_000_001_000),
    ("system-cluster-critical", 2_000_000_000),
];

/// `ValidatePriorityClass`.
pub fn validate_priority_class(pc: &PriorityClass) -> Vec<FieldError> {
    let mut errs = validate_object_meta(
        &pc.metadata,
        false,
        name_is_dns_subdomain,
        &Path::new("metadata"),
    );
    let name = pc.metadata.name.clone().unwrap_or_default();
    if name.starts_with("system-") {
        let err = match SYSTEM_PRIORITY_CLASSES.iter().find(|(n, _)| *n == name) {
            None => Some(format!("{name} is not a known system priority class")),
            Some((n, v)) if *v != pc.value => {
                Some(format!("value of {n} PriorityClass must be {v}"))
            }
            Some((n, _)) if pc.global_default == Some(true) => {
                Some(format!("globalDefault of {n} PriorityClass must be false"))
            }
            Some(_) => None,
        };
        if let Some(e) = err {
            errs.push(FieldError::forbidden(
                &Path::new("metadata").child("name"),
                &format!("priority class names with 'system-' prefix are reserved for system use only. error: {e}"),
            ));
        }
    } else if pc.value > 1_000_000_000 {
        errs.push(FieldError::forbidden(
            &Path::new("value"),
            "maximum allowed value of a user defined priority is 1000000000",
        ));
    }
    if let Some(pp) = pc.preemption_policy.as_deref() {
        match pp {
            "PreemptLowerPriority" | "Never" => {}
            "" => errs.push(FieldError::required(&Path::new("preemptionPolicy"), "")),
            other => errs.push(FieldError::not_supported(
                &Path::new("preemptionPolicy"),
                BadValue::typed_str(other),
                &["PreemptLowerPriority", "Never"],
            )),
        }
    }
    errs
}

/// `ValidatePriorityClassUpdate`: value and preemptionPolicy are immutable.
pub fn validate_priority_class_update(new: &PriorityClass, old: &PriorityClass) -> Vec<FieldError> {
    let mut errs =
        validate_object_meta_update(&new.metadata, &old.metadata, &Path::new("metadata"));
    if new.value != old.value {
        errs.push(FieldError::forbidden(
            &Path::new("value"),
            "may not be changed in an update.",
        ));
    }
    if new.preemption_policy != old.preemption_policy {
        errs.push(FieldError::invalid(
            &Path::new("preemptionPolicy"),
            GoJson::opt_str(new.preemption_policy.as_deref()),
            FIELD_IMMUTABLE_MSG,
        ));
    }
    errs
}

/// `ValidateLease`.
/// A namespaced object whose spec has no rules of its own yet: its metadata only.
pub fn validate_meta_only(m: &ObjectMeta) -> Vec<FieldError> {
    validate_object_meta(m, true, name_is_dns_subdomain, &Path::new("metadata"))
}

pub fn validate_lease(l: &Lease) -> Vec<FieldError> {
    let mut errs = validate_object_meta(
        &l.metadata,
        true,
        name_is_dns_subdomain,
        &Path::new("metadata"),
    );
    let spec = l.spec.clone().unwrap_or_default();
    if let Some(d) = spec.lease_duration_seconds.filter(|d| *d <= 0) {
        errs.push(FieldError::invalid(
            &Path::new("spec").child("leaseDurationSeconds"),
            d,
            "must be greater than 0",
        ));
    }
    if let Some(t) = spec.lease_transitions.filter(|t| *t < 0) {
        errs.push(FieldError::invalid(
            &Path::new("spec").child("leaseTransitions"),
            t,
            "must be greater than or equal to 0",
        ));
    }
    errs
}

/// `ValidateEventCreate` (the metadata and namespace-match parts).
pub fn validate_event(e: &Event) -> Vec<FieldError> {
    let mut errs = validate_object_meta(
        &e.metadata,
        true,
        name_is_dns_subdomain,
        &Path::new("metadata"),
    );
    let ns = e.metadata.namespace.clone().unwrap_or_default();
    let ins = e.involved_object.namespace.clone().unwrap_or_default();
    if !ins.is_empty() && ins != ns {
        errs.push(FieldError::invalid(
            &Path::new("involvedObject").child("namespace"),
            ins.as_str(),
            "does not match event.namespace",
        ));
    }
    errs
}
