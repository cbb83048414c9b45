//! Container environment validation: variable names, `valueFrom` sources (field, resource,
//! ConfigMap and Secret refs) and `envFrom`.

use k8s_openapi::api::core::v1::{EnvFromSource, EnvVar};

use super::names::*;
use crate::apiserver::field_error::{FieldError, Path};

/// `IsRelaxedEnvVarName` (RelaxedEnvironmentVariableValidation is GA).
fn is_relaxed_env_var_name(v: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if v.is_empty() {
        errs.push("environment variable name must be non-empty".to_string());
    }
    if v.chars()
        .any(|c| !c.is_ascii() || c.is_ascii_control() || c == '=')
    {
        errs.push("a valid environment variable name must consist only of printable ASCII characters other than '='".to_string());
    }
    errs
}

const ENV_FIELD_PATHS: &[&str] = &[
    "metadata.name",
    "metadata.namespace",
    "metadata.uid",
    "spec.nodeName",
    "spec.serviceAccountName",
    "status.hostIP",
    "status.hostIPs",
    "status.podIP",
    "status.podIPs",
];
const CONVERTIBLE_FIELD_PATHS: &[&str] = &[
    "metadata.name",
    "metadata.namespace",
    "metadata.uid",
    "metadata.labels",
    "metadata.annotations",
    "spec.nodeName",
    "spec.restartPolicy",
    "spec.serviceAccountName",
    "spec.schedulerName",
    "status.phase",
    "status.hostIP",
    "status.hostIPs",
    "status.podIP",
    "status.podIPs",
];

/// `validateObjectFieldSelector` for env or volume downward API items.
pub fn validate_field_ref(
    api_version: Option<&str>,
    field_path: &str,
    allowed: &[&str],
    path: &Path,
) -> Vec<FieldError> {
    if api_version.unwrap_or("").is_empty() {
        return vec![FieldError::required(&path.child("apiVersion"), "")];
    }
    if field_path.is_empty() {
        return vec![FieldError::required(&path.child("fieldPath"), "")];
    }
    let (base, subscript) = match field_path.split_once('[') {
        Some((b, rest)) if rest.ends_with(']') => (b, Some(&rest[..rest.len() - 1])),
        _ => (field_path, None),
    };
    if !CONVERTIBLE_FIELD_PATHS.contains(&base)
        || (subscript.is_some() && !matches!(base, "metadata.labels" | "metadata.annotations"))
    {
        return vec![FieldError::invalid(
            &path.child("fieldPath"),
            field_path,
            &format!("error converting fieldPath: field label not supported: {field_path}"),
        )];
    }
    if let Some(sub) = subscript {
        let key = sub.trim_matches('\'');
        let key = if base == "metadata.annotations" {
            key.to_lowercase()
        } else {
            key.to_string()
        };
        return validate_qualified_name(&key, path);
    }
    if !allowed.contains(&base) {
        let mut sorted: Vec<&str> = allowed.to_vec();
        sorted.sort();
        return vec![FieldError::not_supported(
            &path.child("fieldPath"),
            base,
            &sorted,
        )];
    }
    Vec::new()
}

pub(super) fn validate_env(vars: &[EnvVar], path: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    for (i, ev) in vars.iter().enumerate() {
        let p = path.index(i);
        if ev.name.is_empty() {
            errs.push(FieldError::required(&p.child("name"), ""));
        } else {
            errs.extend(invalid_each(
                &p.child("name"),
                &ev.name,
                is_relaxed_env_var_name(&ev.name),
            ));
        }
        let Some(from) = ev.value_from.as_ref() else {
            continue;
        };
        let vp = p.child("valueFrom");
        let mut n = 0;
        if let Some(f) = from.field_ref.as_ref() {
            n += 1;
            errs.extend(validate_field_ref(
                f.api_version.as_deref(),
                &f.field_path,
                ENV_FIELD_PATHS,
                &vp.child("fieldRef"),
            ));
        }
        if let Some(r) = from.resource_field_ref.as_ref() {
            n += 1;
            let rp = vp.child("resourceFieldRef");
            if r.resource.is_empty() {
                errs.push(FieldError::required(&rp.child("resource"), ""));
            } else if !RESOURCE_FIELD_PATHS.contains(&r.resource.as_str())
                && !r.resource.starts_with("requests.hugepages-")
                && !r.resource.starts_with("limits.hugepages-")
            {
                errs.push(FieldError::not_supported(
                    &rp.child("resource"),
                    r.resource.as_str(),
                    RESOURCE_FIELD_PATHS,
                ));
            }
        }
        for (kind, sel) in [
            (
                "configMapKeyRef",
                from.config_map_key_ref.as_ref().map(|s| (&s.name, &s.key)),
            ),
            (
                "secretKeyRef",
                from.secret_key_ref.as_ref().map(|s| (&s.name, &s.key)),
            ),
        ] {
            let Some((name, key)) = sel else { continue };
            n += 1;
            let kp = vp.child(kind);
            errs.extend(invalid_each(
                &kp.child("name"),
                name,
                name_is_dns_subdomain(name, false),
            ));
            if key.is_empty() {
                errs.push(FieldError::required(&kp.child("key"), ""));
            } else {
                errs.extend(invalid_each(&kp.child("key"), key, is_config_map_key(key)));
            }
        }
        if n == 0 {
            errs.push(FieldError::invalid(&vp, "", "must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef` or `secretKeyRef`"));
        } else if ev.value.as_deref().is_some_and(|v| !v.is_empty()) {
            errs.push(FieldError::invalid(
                &vp,
                "",
                "may not be specified when `value` is not empty",
            ));
        } else if n > 1 {
            errs.push(FieldError::invalid(
                &vp,
                "",
                "may not have more than one field specified at a time",
            ));
        }
    }
    errs
}

const RESOURCE_FIELD_PATHS: &[&str] = &[
    "limits.cpu",
    "limits.ephemeral-storage",
    "limits.memory",
    "requests.cpu",
    "requests.ephemeral-storage",
    "requests.memory",
];

pub(super) fn validate_env_from(sources: &[EnvFromSource], path: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    for (i, s) in sources.iter().enumerate() {
        let p = path.index(i);
        if let Some(prefix) = s.prefix.as_deref().filter(|x| !x.is_empty()) {
            errs.extend(invalid_each(
                &p.child("prefix"),
                prefix,
                is_relaxed_env_var_name(prefix),
            ));
        }
        let mut n = 0;
        for (kind, name) in [
            ("configMapRef", s.config_map_ref.as_ref().map(|r| &r.name)),
            ("secretRef", s.secret_ref.as_ref().map(|r| &r.name)),
        ] {
            let Some(name) = name else { continue };
            n += 1;
            let np = p.child(kind).child("name");
            if name.is_empty() {
                errs.push(FieldError::required(&np, ""));
            } else {
                errs.extend(invalid_each(&np, name, name_is_dns_subdomain(name, true)));
            }
        }
        if n == 0 {
            errs.push(FieldError::invalid(
                path,
                "",
                "must specify one of: `configMapRef` or `secretRef`",
            ));
        } else if n > 1 {
            errs.push(FieldError::invalid(
                path,
                "",
                "may not have more than one field specified at a time",
            ));
        }
    }
    errs
}
