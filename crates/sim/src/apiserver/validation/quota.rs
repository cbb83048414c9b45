//! LimitRange and ResourceQuota validation: resource names, min ≤ default ≤ max rules,
//! quota scopes and scope selectors.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::core::v1::{LimitRange, ResourceQuota};

use super::meta::*;
use super::names::*;
use super::resources::{
    is_extended_resource, is_native_resource, is_overcommit_allowed, is_standard_resource_name,
    qty, validate_resource_quantity_value,
};
use crate::apiserver::field_error::{go_json_quote, BadValue, FieldError, Path};
use crate::apiserver::quantity::Quantity;

/// A quantity as Go renders a `resource.Quantity` bad value (its JSON string).
fn qjson(q: &Quantity) -> BadValue {
    BadValue::Json(go_json_quote(&q.canonical()))
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
