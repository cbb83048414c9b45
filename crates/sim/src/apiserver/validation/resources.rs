//! Resource names and quantities: requests, limits and the requests ≤ limits rule.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::ResourceRequirements;
use k8s_openapi::apimachinery::pkg::api::resource::Quantity as ApiQuantity;

use super::names::*;
use crate::apiserver::field_error::{BadValue, FieldError, Path};
use crate::apiserver::quantity::{parse_quantity, Quantity};

/// Which resource names a resource list accepts.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum ResourceNames {
    /// Container requests/limits: cpu, memory, ephemeral-storage, hugepages, extended.
    Container,
    /// Pod-level resources: cpu, memory, hugepages.
    Pod,
}

fn is_hugepages(name: &str) -> bool {
    name.starts_with("hugepages-")
}

/// Native resources are unprefixed or in the `kubernetes.io/` namespace.
pub fn is_native_resource(name: &str) -> bool {
    !name.contains('/') || name.contains("kubernetes.io/")
}

/// `IsExtendedResourceName`.
pub fn is_extended_resource(name: &str) -> bool {
    if is_native_resource(name) || name.starts_with("requests.") {
        return false;
    }
    is_qualified_name(&format!("requests.{name}")).is_empty()
}

/// `IsOvercommitAllowed`: native, non-hugepage resources.
pub fn is_overcommit_allowed(name: &str) -> bool {
    is_native_resource(name) && !is_hugepages(name)
}

/// `IsStandardResourceName`.
pub fn is_standard_resource_name(name: &str) -> bool {
    const STANDARD: &[&str] = &[
        "cpu",
        "memory",
        "ephemeral-storage",
        "requests.cpu",
        "requests.memory",
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
        "storage",
        "requests.storage",
        "services.nodeports",
        "services.loadbalancers",
        "configmaps",
    ];
    STANDARD.contains(&name) || is_hugepages(name) || name.starts_with("requests.hugepages-")
}

fn validate_resource_name(name: &str, path: &Path, kind: ResourceNames) -> Vec<FieldError> {
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
    match kind {
        ResourceNames::Container => {
            if !name.contains('/') {
                if !matches!(name, "cpu" | "memory" | "ephemeral-storage") && !is_hugepages(name) {
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
        ResourceNames::Pod => {
            if !matches!(name, "cpu" | "memory") && !is_hugepages(name) {
                return vec![FieldError::not_supported(
                    path,
                    BadValue::typed_str(name),
                    &["cpu", "memory"],
                )];
            }
        }
    }
    Vec::new()
}

/// A quantity as the validator sees it (unparseable ones are a decode error upstream).
pub fn qty(q: &ApiQuantity) -> Option<Quantity> {
    parse_quantity(q.0.trim()).ok()
}

/// `ValidateResourceQuantityValue`: non-negative, and whole for integer resources.
pub fn validate_resource_quantity_value(name: &str, q: &Quantity, path: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if q.sign() < 0 {
        errs.push(FieldError::invalid(
            path,
            q.canonical(),
            super::meta::IS_NEGATIVE_MSG,
        ));
    }
    const INTEGER: &[&str] = &[
        "pods",
        "services",
        "replicationcontrollers",
        "resourcequotas",
        "secrets",
        "configmaps",
        "persistentvolumeclaims",
        "services.nodeports",
        "services.loadbalancers",
    ];
    let integer =
        INTEGER.contains(&name) || name.starts_with("count/") || is_extended_resource(name);
    if integer && q.milli_value() % 1000 != 0 {
        errs.push(FieldError::invalid(
            path,
            BadValue::Json(crate::apiserver::field_error::go_json_quote(&q.canonical())),
            "must be an integer",
        ));
    }
    errs
}

/// `validateResourceRequirements`: names, quantities, requests ≤ limits.
pub fn validate_resource_requirements(
    r: &ResourceRequirements,
    path: &Path,
    kind: ResourceNames,
) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let (lim_path, req_path) = (path.child("limits"), path.child("requests"));
    let empty = BTreeMap::new();
    let limits = r.limits.as_ref().unwrap_or(&empty);
    let requests = r.requests.as_ref().unwrap_or(&empty);
    let (mut cpu_mem, mut huge) = (false, false);
    for (name, q) in limits {
        let p = lim_path.key(name);
        errs.extend(validate_resource_name(name, &p, kind));
        if let Some(v) = qty(q) {
            errs.extend(validate_resource_quantity_value(name, &v, &p));
        }
        huge |= is_hugepages(name);
        cpu_mem |= name == "cpu" || name == "memory";
    }
    for (name, q) in requests {
        let p = req_path.key(name);
        errs.extend(validate_resource_name(name, &p, kind));
        let Some(v) = qty(q) else { continue };
        errs.extend(validate_resource_quantity_value(name, &v, &p));
        match limits.get(name).and_then(qty) {
            Some(limit) => {
                if v != limit && !is_overcommit_allowed(name) {
                    errs.push(FieldError::invalid(
                        &req_path,
                        v.canonical(),
                        &format!("must be equal to {name} limit of {limit}"),
                    ));
                } else if v > limit {
                    errs.push(FieldError::invalid(
                        &req_path,
                        v.canonical(),
                        &format!("must be less than or equal to {name} limit of {limit}"),
                    ));
                }
            }
            None if !limits.contains_key(name) && !is_overcommit_allowed(name) => {
                errs.push(FieldError::required(
                    &lim_path,
                    "Limit must be set for non overcommitable resources",
                ));
            }
            None => {}
        }
        huge |= is_hugepages(name);
        cpu_mem |= name == "cpu" || name == "memory";
    }
    if huge && !cpu_mem {
        errs.push(FieldError::forbidden(
            path,
            "HugePages require cpu or memory",
        ));
    }
    errs
}
