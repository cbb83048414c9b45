//! Object metadata, name, label and selector validation shared by every kind
//! (apimachinery's `api/validation`, `apis/meta/v1/validation` and `util/validation`).

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};

use crate::apiserver::field_error::{BadValue, FieldError, GoJson, Path};

use super::names::*;

/// `must be greater than or equal to 0`.
pub const IS_NEGATIVE_MSG: &str = "must be greater than or equal to 0";
/// `field is immutable`.
pub const FIELD_IMMUTABLE_MSG: &str = "field is immutable";
/// The total annotation size limit (256 KiB).
pub const TOTAL_ANNOTATION_SIZE_LIMIT: usize = 256 * 1024;

/// `ValidateNonnegativeField`.
pub fn validate_nonnegative(value: i64, path: &Path) -> Vec<FieldError> {
    if value < 0 {
        vec![FieldError::invalid(path, value, IS_NEGATIVE_MSG)]
    } else {
        Vec::new()
    }
}

/// `ValidateLabels` (keys in sorted order; upstream iterates a Go map).
pub fn validate_labels(labels: Option<&BTreeMap<String, String>>, path: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    for (k, v) in labels.into_iter().flatten() {
        errs.extend(validate_qualified_name(k, path));
        errs.extend(invalid_each(path, v, is_valid_label_value(v)));
    }
    errs
}

/// `ValidateAnnotations`: keys are qualified names (case-insensitive), total size ≤ 256 KiB.
pub fn validate_annotations(
    annotations: Option<&BTreeMap<String, String>>,
    path: &Path,
) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut total = 0usize;
    for (k, v) in annotations.into_iter().flatten() {
        errs.extend(invalid_each(path, k, is_qualified_name(&k.to_lowercase())));
        total += k.len() + v.len();
    }
    if total > TOTAL_ANNOTATION_SIZE_LIMIT {
        errs.push(FieldError::too_long(path, TOTAL_ANNOTATION_SIZE_LIMIT));
    }
    errs
}

fn is_standard_finalizer(f: &str) -> bool {
    matches!(f, "kubernetes" | "orphan" | "foregroundDeletion")
}

fn validate_finalizers(finalizers: Option<&Vec<String>>, path: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let list = finalizers.map(|f| f.as_slice()).unwrap_or(&[]);
    for f in list {
        errs.extend(validate_qualified_name(f, path));
    }
    if list.iter().any(|f| f == "orphan") && list.iter().any(|f| f == "foregroundDeletion") {
        errs.push(FieldError::invalid(
            path,
            BadValue::string_list(Some(list)),
            "finalizer orphan and foregroundDeletion cannot be both set",
        ));
    }
    errs
}

/// Core's extra finalizer rule: unqualified names must be standard ones.
fn validate_kube_finalizers(finalizers: Option<&Vec<String>>, path: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    for (i, f) in finalizers.into_iter().flatten().enumerate() {
        if !f.contains('/') && !is_standard_finalizer(f) {
            errs.push(FieldError::invalid(
                &path.index(i),
                f.as_str(),
                "name is neither a standard finalizer name nor is it fully qualified",
            ));
        }
    }
    errs
}

fn validate_owner_references(meta: &ObjectMeta, path: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut first_controller = String::new();
    let refs = meta.owner_references.as_deref().unwrap_or(&[]);
    for r in refs {
        let version = r.api_version.rsplit('/').next().unwrap_or("");
        if version.is_empty() {
            errs.push(FieldError::invalid(
                &path.child("apiVersion"),
                r.api_version.as_str(),
                "version must not be empty",
            ));
        }
        if r.kind.is_empty() {
            errs.push(FieldError::invalid(
                &path.child("kind"),
                r.kind.as_str(),
                "must not be empty",
            ));
        }
        if r.name.is_empty() {
            errs.push(FieldError::invalid(
                &path.child("name"),
                r.name.as_str(),
                "must not be empty",
            ));
        }
        if r.uid.is_empty() {
            errs.push(FieldError::invalid(
                &path.child("uid"),
                r.uid.as_str(),
                "must not be empty",
            ));
        }
        if r.controller == Some(true) {
            let cur = format!("{}/{}", r.kind, r.name);
            if first_controller.is_empty() {
                first_controller = cur;
            } else {
                let value = GoJson::from_value(&serde_json::to_value(refs).unwrap_or_default());
                errs.push(FieldError::invalid(
                    path,
                    value,
                    &format!("Only one reference can have Controller set to true. Found \"true\" in references for {first_controller} and {cur}"),
                ));
            }
        }
    }
    errs
}

/// `ValidateObjectMeta` on create (name generation already done), including core's
/// finalizer-name rule.
pub fn validate_object_meta(
    meta: &ObjectMeta,
    requires_namespace: bool,
    name_fn: NameFn,
    path: &Path,
) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if let Some(g) = meta.generate_name.as_deref().filter(|g| !g.is_empty()) {
        errs.extend(invalid_each(
            &path.child("generateName"),
            g,
            name_fn(g, true),
        ));
    }
    match meta.name.as_deref().unwrap_or("") {
        "" => errs.push(FieldError::required(
            &path.child("name"),
            "name or generateName is required",
        )),
        name => errs.extend(invalid_each(
            &path.child("name"),
            name,
            name_fn(name, false),
        )),
    }
    errs.extend(validate_meta_common(meta, requires_namespace, path));
    errs
}

fn validate_meta_common(
    meta: &ObjectMeta,
    requires_namespace: bool,
    path: &Path,
) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let ns = meta.namespace.as_deref().unwrap_or("");
    if requires_namespace {
        if ns.is_empty() {
            errs.push(FieldError::required(&path.child("namespace"), ""));
        } else {
            errs.extend(invalid_each(
                &path.child("namespace"),
                ns,
                name_is_dns_label(ns, false),
            ));
        }
    } else if !ns.is_empty() {
        errs.push(FieldError::forbidden(
            &path.child("namespace"),
            "not allowed on this type",
        ));
    }
    errs.extend(validate_nonnegative(
        meta.generation.unwrap_or(0),
        &path.child("generation"),
    ));
    errs.extend(validate_labels(meta.labels.as_ref(), &path.child("labels")));
    errs.extend(validate_annotations(
        meta.annotations.as_ref(),
        &path.child("annotations"),
    ));
    errs.extend(validate_owner_references(
        meta,
        &path.child("ownerReferences"),
    ));
    errs.extend(validate_finalizers(
        meta.finalizers.as_ref(),
        &path.child("finalizers"),
    ));
    errs.extend(validate_kube_finalizers(
        meta.finalizers.as_ref(),
        &path.child("finalizers"),
    ));
    errs
}

fn time_json(t: Option<&k8s_openapi::apimachinery::pkg::apis::meta::v1::Time>) -> BadValue {
    match t.and_then(|t| serde_json::to_value(t).ok()) {
        Some(serde_json::Value::String(s)) => {
            BadValue::Json(crate::apiserver::field_error::go_json_quote(&s))
        }
        _ => BadValue::Json("null".into()),
    }
}

/// `ValidateObjectMetaUpdate`, including core's finalizer-name rule.
pub fn validate_object_meta_update(
    new: &ObjectMeta,
    old: &ObjectMeta,
    path: &Path,
) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if old.deletion_timestamp.is_some() {
        let old_f = old.finalizers.as_deref().unwrap_or(&[]);
        let mut extra: Vec<&String> = new
            .finalizers
            .iter()
            .flatten()
            .filter(|f| !old_f.contains(f))
            .collect();
        extra.sort();
        extra.dedup();
        if !extra.is_empty() {
            let list: Vec<String> = extra
                .iter()
                .map(|f| crate::apiserver::field_error::go_quote(f))
                .collect();
            errs.push(FieldError::forbidden(
                &path.child("finalizers"),
                &format!("no new finalizers can be added if the object is being deleted, found new finalizers []string{{{}}}", list.join(", ")),
            ));
        }
    }
    if new.resource_version.as_deref().unwrap_or("").is_empty() {
        errs.push(FieldError::invalid(
            &path.child("resourceVersion"),
            "",
            "must be specified for an update",
        ));
    }
    let (ng, og) = (new.generation.unwrap_or(0), old.generation.unwrap_or(0));
    if ng < og {
        errs.push(FieldError::invalid(
            &path.child("generation"),
            ng,
            "must not be decremented",
        ));
    }
    let immutable_str = |n: &Option<String>, o: &Option<String>, f: &str| {
        let (n, o) = (n.as_deref().unwrap_or(""), o.as_deref().unwrap_or(""));
        (n != o).then(|| FieldError::invalid(&path.child(f), n, FIELD_IMMUTABLE_MSG))
    };
    errs.extend(immutable_str(&new.name, &old.name, "name"));
    errs.extend(immutable_str(&new.namespace, &old.namespace, "namespace"));
    errs.extend(immutable_str(&new.uid, &old.uid, "uid"));
    if new.creation_timestamp != old.creation_timestamp {
        errs.push(FieldError::invalid(
            &path.child("creationTimestamp"),
            time_json(new.creation_timestamp.as_ref()),
            FIELD_IMMUTABLE_MSG,
        ));
    }
    if new.deletion_timestamp != old.deletion_timestamp {
        errs.push(FieldError::invalid(
            &path.child("deletionTimestamp"),
            time_json(new.deletion_timestamp.as_ref()),
            FIELD_IMMUTABLE_MSG,
        ));
    }
    if new.deletion_grace_period_seconds != old.deletion_grace_period_seconds {
        errs.push(FieldError::invalid(
            &path.child("deletionGracePeriodSeconds"),
            BadValue::opt_int(new.deletion_grace_period_seconds),
            FIELD_IMMUTABLE_MSG,
        ));
    }
    errs.extend(validate_labels(new.labels.as_ref(), &path.child("labels")));
    errs.extend(validate_annotations(
        new.annotations.as_ref(),
        &path.child("annotations"),
    ));
    errs.extend(validate_owner_references(
        new,
        &path.child("ownerReferences"),
    ));
    errs.extend(validate_finalizers(
        new.finalizers.as_ref(),
        &path.child("finalizers"),
    ));
    errs.extend(validate_kube_finalizers(
        new.finalizers.as_ref(),
        &path.child("finalizers"),
    ));
    errs
}

/// A label selector as Go JSON (`metav1.LabelSelector` has JSON tags, fields in
/// declaration order, empty ones omitted).
pub fn selector_json(sel: &LabelSelector) -> GoJson {
    let mut fields = Vec::new();
    if let Some(m) = sel.match_labels.as_ref().filter(|m| !m.is_empty()) {
        fields.push(("matchLabels", GoJson::opt_string_map(Some(m))));
    }
    if let Some(exprs) = sel.match_expressions.as_ref().filter(|e| !e.is_empty()) {
        let items = exprs
            .iter()
            .map(|e| {
                let mut f = vec![
                    ("key", GoJson::str(&e.key)),
                    ("operator", GoJson::str(&e.operator)),
                ];
                if let Some(v) = e.values.as_ref().filter(|v| !v.is_empty()) {
                    f.push(("values", GoJson::opt_string_list(Some(v))));
                }
                GoJson::obj(f)
            })
            .collect();
        fields.push(("matchExpressions", GoJson::Arr(items)));
    }
    GoJson::obj(fields)
}

/// `ValidateLabelSelector` with invalid label values rejected.
pub fn validate_label_selector(sel: Option<&LabelSelector>, path: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let Some(sel) = sel else { return errs };
    errs.extend(validate_labels(
        sel.match_labels.as_ref(),
        &path.child("matchLabels"),
    ));
    for (i, e) in sel.match_expressions.iter().flatten().enumerate() {
        let p = path.child("matchExpressions").index(i);
        let nvalues = e.values.as_ref().map_or(0, |v| v.len());
        match e.operator.as_str() {
            "In" | "NotIn" => {
                if nvalues == 0 {
                    errs.push(FieldError::required(
                        &p.child("values"),
                        "must be specified when `operator` is 'In' or 'NotIn'",
                    ));
                }
            }
            "Exists" | "DoesNotExist" => {
                if nvalues > 0 {
                    errs.push(FieldError::forbidden(
                        &p.child("values"),
                        "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
                    ));
                }
            }
            op => errs.push(FieldError::invalid(
                &p.child("operator"),
                BadValue::typed_str(op),
                "not a valid selector operator",
            )),
        }
        errs.extend(validate_qualified_name(&e.key, &p.child("key")));
        for (j, v) in e.values.iter().flatten().enumerate() {
            errs.extend(invalid_each(
                &p.child("values").index(j),
                v,
                is_valid_label_value(v),
            ));
        }
    }
    errs
}

/// A label selector converted for matching (`LabelSelectorAsSelector`).
#[derive(Clone, Debug, PartialEq)]
pub enum Selector {
    /// A nil selector: matches nothing.
    Nothing,
    /// Requirements ANDed together; empty matches everything.
    Requirements(Vec<(String, String, Vec<String>)>),
}

impl Selector {
    /// Converts a selector; `None` means nil. Errors mirror `NewRequirement` failures.
    pub fn from_label_selector(sel: Option<&LabelSelector>) -> Result<Selector, String> {
        let Some(sel) = sel else {
            return Ok(Selector::Nothing);
        };
        let mut reqs = Vec::new();
        for (k, v) in sel.match_labels.iter().flatten() {
            if !is_qualified_name(k).is_empty() || !is_valid_label_value(v).is_empty() {
                return Err(format!("invalid label {k}={v}"));
            }
            reqs.push((k.clone(), "In".to_string(), vec![v.clone()]));
        }
        for e in sel.match_expressions.iter().flatten() {
            let values = e.values.clone().unwrap_or_default();
            let ok = match e.operator.as_str() {
                "In" | "NotIn" => !values.is_empty(),
                "Exists" | "DoesNotExist" => values.is_empty(),
                _ => false,
            };
            if !ok || !is_qualified_name(&e.key).is_empty() {
                return Err(format!("invalid requirement for key {}", e.key));
            }
            reqs.push((e.key.clone(), e.operator.clone(), values));
        }
        Ok(Selector::Requirements(reqs))
    }

    /// True for a selector with no requirements (matches everything).
    pub fn is_empty(&self) -> bool {
        matches!(self, Selector::Requirements(r) if r.is_empty())
    }

    /// Whether the labels satisfy every requirement.
    pub fn matches(&self, labels: Option<&BTreeMap<String, String>>) -> bool {
        let Selector::Requirements(reqs) = self else {
            return false;
        };
        reqs.iter().all(|(k, op, values)| {
            let got = labels.and_then(|l| l.get(k));
            match op.as_str() {
                "In" => got.is_some_and(|g| values.contains(g)),
                "NotIn" => got.is_none_or(|g| !values.contains(g)),
                "Exists" => got.is_some(),
                "DoesNotExist" => got.is_none(),
                _ => false,
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(name: &str, ns: &str) -> ObjectMeta {
        ObjectMeta {
            name: (!name.is_empty()).then(|| name.to_string()),
            namespace: (!ns.is_empty()).then(|| ns.to_string()),
            ..Default::default()
        }
    }

    fn msgs(errs: Vec<FieldError>) -> Vec<String> {
        errs.iter().map(|e| e.to_string()).collect()
    }

    #[test]
    fn name_must_be_dns_subdomain() {
        let errs = validate_object_meta(
            &meta("My_App", "default"),
            true,
            name_is_dns_subdomain,
            &Path::new("metadata"),
        );
        assert_eq!(msgs(errs), vec![
            "metadata.name: Invalid value: \"My_App\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
        ]);
    }

    #[test]
    fn name_or_generate_name_is_required() {
        let errs = validate_object_meta(
            &meta("", "default"),
            true,
            name_is_dns_subdomain,
            &Path::new("metadata"),
        );
        assert_eq!(
            msgs(errs),
            vec!["metadata.name: Required value: name or generateName is required"]
        );
    }

    #[test]
    fn namespace_required_for_namespaced_and_forbidden_otherwise() {
        let errs = validate_object_meta(
            &meta("a", ""),
            true,
            name_is_dns_subdomain,
            &Path::new("metadata"),
        );
        assert_eq!(msgs(errs), vec!["metadata.namespace: Required value"]);
        let errs = validate_object_meta(
            &meta("a", "x"),
            false,
            name_is_dns_subdomain,
            &Path::new("metadata"),
        );
        assert_eq!(
            msgs(errs),
            vec!["metadata.namespace: Forbidden: not allowed on this type"]
        );
    }

    #[test]
    fn dns1035_service_names() {
        assert_eq!(is_dns1035_label("1web"), vec![
            "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')".to_string()
        ]);
    }

    #[test]
    fn labels_keys_and_values() {
        let mut l = BTreeMap::new();
        l.insert("app".to_string(), "bad value".to_string());
        let errs = validate_labels(Some(&l), &Path::new("metadata").child("labels"));
        assert_eq!(msgs(errs), vec![
            "metadata.labels: Invalid value: \"bad value\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
        ]);
        let mut l = BTreeMap::new();
        l.insert("-x".to_string(), "ok".to_string());
        let errs = validate_labels(Some(&l), &Path::new("metadata").child("labels"));
        assert_eq!(msgs(errs), vec![
            "metadata.labels: Invalid value: \"-x\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
        ]);
        let long = "a".repeat(64);
        assert_eq!(
            is_valid_label_value(&long),
            vec!["must be no more than 63 bytes"]
        );
    }

    #[test]
    fn generate_name_trailing_dash_is_masked() {
        assert!(name_is_dns_subdomain("web-", true).is_empty());
        assert!(!name_is_dns_subdomain("web-", false).is_empty());
    }

    #[test]
    fn update_rejects_name_change_and_missing_resource_version() {
        let old = meta("a", "default");
        let mut new = meta("b", "default");
        let errs = validate_object_meta_update(&new, &old, &Path::new("metadata"));
        assert_eq!(
            msgs(errs),
            vec![
                "metadata.resourceVersion: Invalid value: \"\": must be specified for an update",
                "metadata.name: Invalid value: \"b\": field is immutable",
            ]
        );
        new.name = old.name.clone();
        new.resource_version = Some("5".into());
        assert!(validate_object_meta_update(&new, &old, &Path::new("metadata")).is_empty());
    }

    #[test]
    fn selector_semantics() {
        let mut sel = LabelSelector::default();
        assert!(Selector::from_label_selector(Some(&sel))
            .unwrap()
            .is_empty());
        assert!(!Selector::from_label_selector(None).unwrap().matches(None));
        sel.match_labels = Some(BTreeMap::from([("app".to_string(), "web".to_string())]));
        let s = Selector::from_label_selector(Some(&sel)).unwrap();
        assert!(s.matches(Some(&BTreeMap::from([(
            "app".to_string(),
            "web".to_string()
        )]))));
        assert!(!s.matches(None));
        assert_eq!(
            selector_json(&sel).render(),
            "{\"matchLabels\":{\"app\":\"web\"}}"
        );
    }
}
