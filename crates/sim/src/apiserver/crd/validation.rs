//! Validation of a CustomResourceDefinition itself, with apiextensions' messages
//! (`pkg/apis/apiextensions/validation/validation.go`, and the structural-schema checks
//! of `pkg/apiserver/schema`).

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    CustomResourceColumnDefinition, CustomResourceDefinition, CustomResourceDefinitionNames,
    CustomResourceDefinitionVersion, JSONSchemaProps,
};

use crate::apiserver::crd::schema::{additional, items};
use crate::apiserver::field_error::{BadValue, FieldError, Path};
use crate::apiserver::validation::meta::{validate_object_meta, validate_object_meta_update};
use crate::apiserver::validation::names::{
    is_dns1035_label, is_dns1123_subdomain, name_is_dns_subdomain,
};

const TYPES: &[&str] = &["array", "boolean", "integer", "number", "object", "string"];
const COLUMN_TYPES: &[&str] = &["boolean", "date", "integer", "number", "string"];

fn dns1035(value: &str, path: &Path, prefix: &str, errs: &mut Vec<FieldError>) {
    let msgs = is_dns1035_label(value);
    if !msgs.is_empty() {
        errs.push(FieldError::invalid(
            path,
            value,
            &format!("{prefix}{}", msgs.join(",")),
        ));
    }
}

/// Core's rule that unqualified finalizers be standard ones: apiextensions' generic
/// metadata validation does not apply it.
pub fn without_core_finalizer_rule(errs: Vec<FieldError>) -> Vec<FieldError> {
    errs.into_iter()
        .filter(|e| {
            e.detail != "name is neither a standard finalizer name nor is it fully qualified"
        })
        .collect()
}

/// `ValidateCustomResourceDefinition`.
pub fn validate_crd(crd: &CustomResourceDefinition) -> Vec<FieldError> {
    let meta = Path::new("metadata");
    let mut errs = without_core_finalizer_rule(validate_object_meta(
        &crd.metadata,
        false,
        name_is_dns_subdomain,
        &meta,
    ));
    let name = crd.metadata.name.as_deref().unwrap_or("");
    let want = format!("{}.{}", crd.spec.names.plural, crd.spec.group);
    if !name.is_empty() && name != want {
        errs.push(FieldError::invalid(
            &meta.child("name"),
            name,
            "must be spec.names.plural+\".\"+spec.group",
        ));
    }
    errs.extend(validate_spec(crd, &Path::new("spec")));
    errs
}

/// `ValidateCustomResourceDefinitionUpdate`: the create rules plus what may not change.
pub fn validate_crd_update(
    new: &CustomResourceDefinition,
    old: &CustomResourceDefinition,
) -> Vec<FieldError> {
    let meta = Path::new("metadata");
    let mut errs = without_core_finalizer_rule(validate_object_meta_update(
        &new.metadata,
        &old.metadata,
        &meta,
    ));
    errs.extend(validate_spec(new, &Path::new("spec")));
    let spec = Path::new("spec");
    let immutable = |errs: &mut Vec<FieldError>, path: Path, a: &str, b: &str| {
        if a != b {
            errs.push(FieldError::invalid(&path, a, "field is immutable"));
        }
    };
    if super::condition_true(old, "Established") {
        immutable(
            &mut errs,
            spec.child("scope"),
            &new.spec.scope,
            &old.spec.scope,
        );
        let names = spec.child("names");
        immutable(
            &mut errs,
            names.child("kind"),
            &new.spec.names.kind,
            &old.spec.names.kind,
        );
    }
    immutable(
        &mut errs,
        spec.child("group"),
        &new.spec.group,
        &old.spec.group,
    );
    let plural = spec.child("names").child("plural");
    immutable(
        &mut errs,
        plural,
        &new.spec.names.plural,
        &old.spec.names.plural,
    );
    errs
}

fn validate_spec(crd: &CustomResourceDefinition, path: &Path) -> Vec<FieldError> {
    let spec = &crd.spec;
    let mut errs = Vec::new();
    let group = path.child("group");
    if spec.group.is_empty() {
        errs.push(FieldError::required(&group, ""));
    } else if !is_dns1123_subdomain(&spec.group).is_empty() {
        let msgs = is_dns1123_subdomain(&spec.group).join(",");
        errs.push(FieldError::invalid(&group, spec.group.as_str(), &msgs));
    } else if !spec.group.contains('.') {
        errs.push(FieldError::invalid(
            &group,
            spec.group.as_str(),
            "should be a domain with at least one dot",
        ));
    }
    match spec.scope.as_str() {
        "" => errs.push(FieldError::required(&path.child("scope"), "")),
        "Cluster" | "Namespaced" => {}
        other => errs.push(FieldError::not_supported(
            &path.child("scope"),
            BadValue::typed_str(other),
            &["Cluster", "Namespaced"],
        )),
    }
    errs.extend(validate_versions(&spec.versions, &path.child("versions")));
    errs.extend(validate_names(&spec.names, &path.child("names")));
    errs
}

fn versions_value(versions: &[CustomResourceDefinitionVersion]) -> BadValue {
    BadValue::Json(serde_json::to_string(versions).unwrap_or_else(|_| "null".into()))
}

fn validate_versions(versions: &[CustomResourceDefinitionVersion], path: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if versions.is_empty() {
        errs.push(FieldError::required(path, "must have at least one version"));
        return errs;
    }
    let mut seen: Vec<&str> = Vec::new();
    let mut unique = true;
    for (i, v) in versions.iter().enumerate() {
        let p = path.index(i);
        if seen.contains(&v.name.as_str()) {
            unique = false;
        }
        seen.push(&v.name);
        dns1035(&v.name, &p.child("name"), "", &mut errs);
        errs.extend(validate_version(v, &p));
    }
    if !unique {
        errs.push(FieldError::invalid(
            path,
            versions_value(versions),
            "must contain unique version names",
        ));
    }
    if versions.iter().filter(|v| v.storage).count() != 1 {
        errs.push(FieldError::invalid(
            path,
            versions_value(versions),
            "must have exactly one version marked as storage version",
        ));
    }
    errs
}

fn validate_version(v: &CustomResourceDefinitionVersion, path: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let schema_path = path.child("schema").child("openAPIV3Schema");
    match v
        .schema
        .as_ref()
        .and_then(|s| s.open_api_v3_schema.as_ref())
    {
        None => errs.push(FieldError::required(&schema_path, "schemas are required")),
        Some(s) => {
            match s.type_.as_deref().unwrap_or("") {
                "" => errs.push(FieldError::required(
                    &schema_path.child("type"),
                    "must not be empty at the root",
                )),
                "object" => {}
                other => errs.push(FieldError::invalid(
                    &schema_path.child("type"),
                    other,
                    "must be object at the root",
                )),
            }
            structural(s, &schema_path, true, &mut errs);
        }
    }
    if let Some(scale) = v.subresources.as_ref().and_then(|s| s.scale.as_ref()) {
        let p = path.child("subresources").child("scale");
        for (name, value, under) in [
            ("specReplicasPath", &scale.spec_replicas_path, ".spec."),
            (
                "statusReplicasPath",
                &scale.status_replicas_path,
                ".status.",
            ),
        ] {
            if value.is_empty() {
                errs.push(FieldError::required(&p.child(name), ""));
            } else if !value.starts_with(under) {
                let what = under.trim_matches('.');
                errs.push(FieldError::invalid(
                    &p.child(name),
                    value.as_str(),
                    &format!("should be a json path under .{what}"),
                ));
            }
        }
    }
    for (i, c) in v.additional_printer_columns.iter().flatten().enumerate() {
        errs.extend(validate_column(
            c,
            &path.child("additionalPrinterColumns").index(i),
        ));
    }
    errs
}

fn validate_column(c: &CustomResourceColumnDefinition, path: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if c.name.is_empty() {
        errs.push(FieldError::required(&path.child("name"), ""));
    }
    let must = format!("must be one of {}", COLUMN_TYPES.join(","));
    if c.type_.is_empty() {
        errs.push(FieldError::required(&path.child("type"), &must));
    } else if !COLUMN_TYPES.contains(&c.type_.as_str()) {
        errs.push(FieldError::invalid(
            &path.child("type"),
            c.type_.as_str(),
            &must,
        ));
    }
    if c.json_path.is_empty() {
        errs.push(FieldError::required(&path.child("jsonPath"), ""));
    } else if !c.json_path.starts_with('.') {
        errs.push(FieldError::invalid(
            &path.child("jsonPath"),
            c.json_path.as_str(),
            "must be a simple json path starting with .",
        ));
    }
    errs
}

/// The structural-schema rules kubeloop checks: every specified field has a type (unless
/// it preserves unknown fields or is int-or-string), types are known, arrays have items,
/// patterns compile.
fn structural(s: &JSONSchemaProps, path: &Path, root: bool, errs: &mut Vec<FieldError>) {
    let loose = s.x_kubernetes_preserve_unknown_fields == Some(true)
        || s.x_kubernetes_int_or_string == Some(true);
    match s.type_.as_deref().unwrap_or("") {
        "" if !root && !loose => errs.push(FieldError::required(
            &path.child("type"),
            "must not be empty for specified object fields",
        )),
        "" => {}
        t if !TYPES.contains(&t) => {
            errs.push(FieldError::not_supported(&path.child("type"), t, TYPES))
        }
        "array" if s.items.is_none() => errs.push(FieldError::required(
            &path.child("items"),
            "must be specified",
        )),
        _ => {}
    }
    if let Some(p) = &s.pattern {
        if let Some(first) = crate::pattern::compile_error(p) {
            errs.push(FieldError::invalid(
                &path.child("pattern"),
                p.as_str(),
                &format!("must be a valid regular expression, but isn't: {first}"),
            ));
        }
    }
    if s.properties.is_some() && additional(s).is_some() {
        errs.push(FieldError::forbidden(
            &path.child("additionalProperties"),
            "additionalProperties and properties are mutual exclusive",
        ));
    }
    for (k, p) in s.properties.iter().flatten() {
        structural(p, &path.child("properties").key(k), false, errs);
    }
    if let Some(a) = additional(s) {
        structural(a, &path.child("additionalProperties"), false, errs);
    }
    if let Some(i) = items(s) {
        structural(i, &path.child("items"), false, errs);
    }
}

fn validate_names(n: &CustomResourceDefinitionNames, path: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let singular = n.singular.as_deref().unwrap_or("");
    let list_kind = n.list_kind.as_deref().unwrap_or("");
    for (field, value) in [
        ("plural", n.plural.as_str()),
        ("singular", singular),
        ("kind", n.kind.as_str()),
        ("listKind", list_kind),
    ] {
        if value.is_empty() {
            errs.push(FieldError::required(&path.child(field), ""));
        }
    }
    if !n.plural.is_empty() {
        dns1035(&n.plural, &path.child("plural"), "", &mut errs);
    }
    if !singular.is_empty() {
        dns1035(singular, &path.child("singular"), "", &mut errs);
    }
    let mixed = "may have mixed case, but should otherwise match: ";
    for (field, value) in [("kind", n.kind.as_str()), ("listKind", list_kind)] {
        let msgs = is_dns1035_label(&value.to_ascii_lowercase());
        if !value.is_empty() && !msgs.is_empty() {
            errs.push(FieldError::invalid(
                &path.child(field),
                value,
                &format!("{mixed}{}", msgs.join(",")),
            ));
        }
    }
    for (i, s) in n.short_names.iter().flatten().enumerate() {
        dns1035(s, &path.child("shortNames").index(i), "", &mut errs);
    }
    if !n.kind.is_empty() && n.kind == list_kind {
        errs.push(FieldError::invalid(
            &path.child("listKind"),
            list_kind,
            "kind and listKind may not be the same",
        ));
    }
    for (i, c) in n.categories.iter().flatten().enumerate() {
        dns1035(c, &path.child("categories").index(i), "", &mut errs);
    }
    errs
}

/// Every `x-kubernetes-validations` rule outside kubeloop's CEL subset, with where it is
/// and why: the apiserver stores such a CRD but does not evaluate these rules.
pub fn unevaluated_rules(crd: &CustomResourceDefinition) -> Vec<(String, String, String)> {
    fn walk(s: &JSONSchemaProps, path: &Path, out: &mut Vec<(String, String, String)>) {
        for r in s.x_kubernetes_validations.iter().flatten() {
            if let Err(e) = super::cel::parse(&r.rule) {
                out.push((path.to_string(), r.rule.clone(), e));
            }
        }
        for (k, p) in s.properties.iter().flatten() {
            walk(p, &path.child("properties").key(k), out);
        }
        if let Some(a) = additional(s) {
            walk(a, &path.child("additionalProperties"), out);
        }
        if let Some(i) = items(s) {
            walk(i, &path.child("items"), out);
        }
    }
    let mut out = Vec::new();
    for (i, v) in crd.spec.versions.iter().enumerate() {
        if let Some(s) = v
            .schema
            .as_ref()
            .and_then(|s| s.open_api_v3_schema.as_ref())
        {
            let p = Path::new("spec")
                .child("versions")
                .index(i)
                .child("schema")
                .child("openAPIV3Schema");
            walk(s, &p, &mut out);
        }
    }
    out
}
