//! Validation of the remaining core and cluster kinds: Namespace, ConfigMap, Secret,
//! ServiceAccount, Node, LimitRange, ResourceQuota, PriorityClass, Lease, Event.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::{
    ConfigMap, Event, LimitRange, Namespace, Node, ResourceQuota, Secret, ServiceAccount,
};
use k8s_openapi::api::scheduling::v1::PriorityClass;

use super::container::{
    is_extended_resource, is_native_resource, is_overcommit_allowed, is_standard_resource_name,
    qty, validate_resource_quantity_value,
};
use super::meta::*;
use super::names::*;
use crate::apiserver::field_error::{go_json_quote, BadValue, FieldError, GoJson, Path};
use crate::apiserver::quantity::Quantity;

const MAX_SECRET_SIZE: usize = 1024 * 1024;

fn qjson(q: &Quantity) -> BadValue {
    BadValue::Json(go_json_quote(&q.canonical()))
}

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

fn validate_limit_range_resource_name(
    limit_type: &str,
    name: &str,
    path: &Path,
) -> Vec<FieldError> {
    let msgs = is_qualified_name(name);
    if !msgs.is_empty() {
        return msgs
            .iter()
            .map(|m| FieldError::invalid(path, BadValue::typed_str(name), m))
            .collect();
    }
    if !name.contains('/') && !is_standard_resource_name(name) {
        return vec![FieldError::invalid(
            path,
            BadValue::typed_str(name),
            "must be a standard resource type or fully qualified",
        )];
    }
    if limit_type == "Pod" || limit_type == "Container" {
        if !name.contains('/') {
            if !matches!(name, "cpu" | "memory" | "ephemeral-storage")
                && !name.starts_with("hugepages-")
            {
                return vec![FieldError::invalid(
                    path,
                    BadValue::typed_str(name),
                    "must be a standard resource for containers",
                )];
            }
        } else if !is_native_resource(name) && !is_extended_resource(name) {
            return vec![FieldError::invalid(
                path,
                BadValue::typed_str(name),
                "doesn't follow extended resource name standard",
            )];
        }
    }
    Vec::new()
}

/// `ValidateLimitRange`.
pub fn validate_limit_range(lr: &LimitRange) -> Vec<FieldError> {
    let mut errs = validate_object_meta(
        &lr.metadata,
        true,
        name_is_dns_subdomain,
        &Path::new("metadata"),
    );
    let mut types = BTreeSet::new();
    for (i, item) in lr.spec.iter().flat_map(|s| s.limits.iter()).enumerate() {
        let p = Path::new("spec").child("limits").index(i);
        let ty = item.type_.as_str();
        let msgs = is_qualified_name(ty);
        if !msgs.is_empty() {
            errs.extend(
                msgs.iter()
                    .map(|m| FieldError::invalid(&p.child("type"), BadValue::typed_str(ty), m)),
            );
        } else if !ty.contains('/') && !matches!(ty, "Pod" | "Container" | "PersistentVolumeClaim")
        {
            errs.push(FieldError::invalid(
                &p.child("type"),
                BadValue::typed_str(ty),
                "must be a standard limit type or fully qualified",
            ));
        }
        if !types.insert(ty.to_string()) {
            errs.push(FieldError::duplicate(
                &p.child("type"),
                BadValue::typed_str(ty),
            ));
        }
        let mut parsed: BTreeMap<&str, BTreeMap<String, Quantity>> = BTreeMap::new();
        let mut lists = vec![("max", &item.max), ("min", &item.min)];
        if ty == "Pod" {
            if item.default.as_ref().is_some_and(|d| !d.is_empty()) {
                errs.push(FieldError::forbidden(
                    &p.child("default"),
                    "may not be specified when `type` is 'Pod'",
                ));
            }
            if item.default_request.as_ref().is_some_and(|d| !d.is_empty()) {
                errs.push(FieldError::forbidden(
                    &p.child("defaultRequest"),
                    "may not be specified when `type` is 'Pod'",
                ));
            }
        } else {
            lists.push(("default", &item.default));
            lists.push(("defaultRequest", &item.default_request));
        }
        lists.push(("maxLimitRequestRatio", &item.max_limit_request_ratio));
        if ty == "PersistentVolumeClaim" {
            let has = |l: &Option<BTreeMap<String, _>>| {
                l.as_ref().is_some_and(|m| m.contains_key("storage"))
            };
            if !has(&item.min) && !has(&item.max) {
                errs.push(FieldError::required(
                    &p.child("limits"),
                    "either minimum or maximum storage value is required, but neither was provided",
                ));
            }
        }
        for (field, list) in lists {
            for (k, q) in list.iter().flatten() {
                errs.extend(validate_limit_range_resource_name(
                    ty,
                    k,
                    &p.child(field).key(k),
                ));
                if let Some(v) = qty(q) {
                    parsed.entry(field).or_default().insert(k.clone(), v);
                }
            }
        }
        let keys: BTreeSet<String> = parsed.values().flat_map(|m| m.keys().cloned()).collect();
        let get = |f: &str, k: &str| parsed.get(f).and_then(|m| m.get(k)).copied();
        for k in keys {
            let (min, max, def, def_req, ratio) = (
                get("min", &k),
                get("max", &k),
                get("default", &k),
                get("defaultRequest", &k),
                get("maxLimitRequestRatio", &k),
            );
            if let (Some(mn), Some(mx)) = (min, max) {
                if mn > mx {
                    errs.push(FieldError::invalid(
                        &p.child("min").key(&k),
                        qjson(&mn),
                        &format!("min value {mn} is greater than max value {mx}"),
                    ));
                }
            }
            if let (Some(dr), Some(mn)) = (def_req, min) {
                if mn > dr {
                    errs.push(FieldError::invalid(
                        &p.child("defaultRequest").key(&k),
                        qjson(&dr),
                        &format!("min value {mn} is greater than default request value {dr}"),
                    ));
                }
            }
            if let (Some(dr), Some(mx)) = (def_req, max) {
                if dr > mx {
                    errs.push(FieldError::invalid(
                        &p.child("defaultRequest").key(&k),
                        qjson(&dr),
                        &format!("default request value {dr} is greater than max value {mx}"),
                    ));
                }
            }
            if let (Some(dr), Some(d)) = (def_req, def) {
                if dr > d {
                    errs.push(FieldError::invalid(
                        &p.child("defaultRequest").key(&k),
                        qjson(&dr),
                        &format!(
                            "default request value {dr} is greater than default limit value {d}"
                        ),
                    ));
                }
            }
            if let (Some(d), Some(mn)) = (def, min) {
                if mn > d {
                    errs.push(FieldError::invalid(
                        &p.child("default").key(&k),
                        qjson(&mn),
                        &format!("min value {mn} is greater than default value {d}"),
                    ));
                }
            }
            if let (Some(d), Some(mx)) = (def, max) {
                if d > mx {
                    errs.push(FieldError::invalid(
                        &p.child("default").key(&k),
                        qjson(&mx),
                        &format!("default value {d} is greater than max value {mx}"),
                    ));
                }
            }
            if let Some(r) = ratio {
                if r < Quantity::new(1, crate::apiserver::quantity::Format::DecimalSI) {
                    errs.push(FieldError::invalid(
                        &p.child("maxLimitRequestRatio").key(&k),
                        qjson(&r),
                        &format!("ratio {r} is less than 1"),
                    ));
                }
                if let (Some(mn), Some(mx)) = (min, max) {
                    let limit = mx.milli_value() as f64 / mn.milli_value() as f64;
                    if r.milli_value() as f64 / 1000.0 > limit {
                        errs.push(FieldError::invalid(
                            &p.child("maxLimitRequestRatio").key(&k),
                            qjson(&r),
                            &format!("ratio {r} is greater than max/min = {limit:.6}"),
                        ));
                    }
                }
            }
            if let (Some(d), Some(dr)) = (def, def_req) {
                if !is_overcommit_allowed(&k) && d != dr {
                    errs.push(FieldError::invalid(
                        &p.child("defaultRequest").key(&k),
                        qjson(&dr),
                        &format!(
                            "default value {d} must equal to defaultRequest value {dr} in {k}"
                        ),
                    ));
                }
            }
        }
    }
    errs
}

const QUOTA_RESOURCES: &[&str] = &[
    "cpu",
    "memory",
    "ephemeral-storage",
    "requests.cpu",
    "requests.memory",
    "requests.storage",
    "requests.ephemeral-storage",
    "limits.cpu",
    "limits.memory",
    "limits.ephemeral-storage",
    "pods",
    "services",
    "replicationcontrollers",
    "resourcequotas",
    "secrets",
    "persistentvolumeclaims",
    "configmaps",
    "services.nodeports",
    "services.loadbalancers",
];

fn validate_quota_resource_name(name: &str, path: &Path) -> Vec<FieldError> {
    let msgs = is_qualified_name(name);
    if !msgs.is_empty() {
        return msgs
            .iter()
            .map(|m| FieldError::invalid(path, BadValue::typed_str(name), m))
            .collect();
    }
    let mut errs = Vec::new();
    if !name.contains('/') {
        if !is_standard_resource_name(name) {
            return vec![FieldError::invalid(
                path,
                BadValue::typed_str(name),
                "must be a standard resource type or fully qualified",
            )];
        }
        let huge = name.starts_with("hugepages-") || name.starts_with("requests.hugepages-");
        if !QUOTA_RESOURCES.contains(&name) && !huge {
            errs.push(FieldError::invalid(
                path,
                BadValue::typed_str(name),
                "must be a standard resource for quota",
            ));
        }
    }
    errs
}

fn validate_quota_list(
    list: &Option<BTreeMap<String, k8s_openapi::apimachinery::pkg::api::resource::Quantity>>,
    path: &Path,
) -> Vec<FieldError> {
    let mut errs = Vec::new();
    for (k, q) in list.iter().flatten() {
        let p = path.key(k);
        errs.extend(validate_quota_resource_name(k, &p));
        if let Some(v) = qty(q) {
            errs.extend(validate_resource_quantity_value(k, &v, &p));
        }
    }
    errs
}

/// Resources a quota scope may restrict (`IsResourceQuotaScopeValidForResource`).
fn scope_valid_for_resource(scope: &str, resource: &str) -> bool {
    const POD: &[&str] = &[
        "pods",
        "count/pods",
        "cpu",
        "memory",
        "requests.cpu",
        "requests.memory",
        "limits.cpu",
        "limits.memory",
        "ephemeral-storage",
        "requests.ephemeral-storage",
        "limits.ephemeral-storage",
    ];
    match scope {
        "BestEffort" | "CrossNamespacePodAffinity" => {
            resource == "pods" || resource == "count/pods"
        }
        "Terminating" | "NotTerminating" | "NotBestEffort" | "PriorityClass" => {
            POD.contains(&resource)
                || resource.starts_with("requests.hugepages-")
                || resource.starts_with("hugepages-")
        }
        "VolumeAttributesClass" => matches!(
            resource,
            "persistentvolumeclaims" | "count/persistentvolumeclaims" | "requests.storage"
        ),
        _ => true,
    }
}

/// `ValidateResourceQuota`.
pub fn validate_resource_quota(q: &ResourceQuota) -> Vec<FieldError> {
    let mut errs = validate_object_meta(
        &q.metadata,
        true,
        name_is_dns_subdomain,
        &Path::new("metadata"),
    );
    let spec = q.spec.clone().unwrap_or_default();
    errs.extend(validate_quota_list(
        &spec.hard,
        &Path::new("spec").child("hard"),
    ));
    let scopes = spec.scopes.clone().unwrap_or_default();
    let sp = Path::new("spec").child("scopes");
    const STANDARD_SCOPES: &[&str] = &[
        "Terminating",
        "NotTerminating",
        "BestEffort",
        "NotBestEffort",
        "PriorityClass",
        "CrossNamespacePodAffinity",
        "VolumeAttributesClass",
    ];
    let scopes_value = || BadValue::string_list(spec.scopes.as_deref());
    for s in &scopes {
        if !STANDARD_SCOPES.contains(&s.as_str()) {
            errs.push(FieldError::invalid(
                &sp,
                scopes_value(),
                "unsupported scope",
            ));
        }
        for k in spec.hard.iter().flatten().map(|(k, _)| k) {
            let standard =
                QUOTA_RESOURCES.contains(&k.as_str()) || k.starts_with("requests.hugepages-");
            if standard && !scope_valid_for_resource(s, k) {
                errs.push(FieldError::invalid(
                    &sp,
                    scopes_value(),
                    "unsupported scope applied to resource",
                ));
            }
        }
    }
    let has = |s: &str| scopes.iter().any(|x| x == s);
    if (has("BestEffort") && has("NotBestEffort")) || (has("Terminating") && has("NotTerminating"))
    {
        errs.push(FieldError::invalid(
            &sp,
            scopes_value(),
            "conflicting scopes",
        ));
    }
    if let Some(status) = q.status.as_ref() {
        errs.extend(validate_quota_list(
            &status.hard,
            &Path::new("status").child("hard"),
        ));
        errs.extend(validate_quota_list(
            &status.used,
            &Path::new("status").child("used"),
        ));
    }
    errs
}

/// `ValidateResourceQuotaUpdate`: scopes are immutable.
pub fn validate_resource_quota_update(new: &ResourceQuota, old: &ResourceQuota) -> Vec<FieldError> {
    let mut errs =
        validate_object_meta_update(&new.metadata, &old.metadata, &Path::new("metadata"));
    let spec = new.spec.clone().unwrap_or_default();
    errs.extend(validate_quota_list(
        &spec.hard,
        &Path::new("spec").child("hard"),
    ));
    let set = |q: &ResourceQuota| -> BTreeSet<String> {
        q.spec
            .iter()
            .flat_map(|s| s.scopes.iter().flatten().cloned())
            .collect()
    };
    if set(new) != set(old) {
        errs.push(FieldError::invalid(
            &Path::new("spec").child("scopes"),
            BadValue::string_list(spec.scopes.as_deref()),
            FIELD_IMMUTABLE_MSG,
        ));
    }
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
