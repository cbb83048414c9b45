//! RBAC validation: Role, ClusterRole, RoleBinding, ClusterRoleBinding.

use k8s_openapi::api::rbac::v1::{
    ClusterRole, ClusterRoleBinding, PolicyRule, Role, RoleBinding, RoleRef, Subject,
};

use super::meta::*;
use super::names::*;
use crate::apiserver::field_error::{BadValue, FieldError, GoJson, Path};

const RBAC_GROUP: &str = "rbac.authorization.k8s.io";

fn validate_policy_rule(rule: &PolicyRule, namespaced: bool, path: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if rule.verbs.is_empty() {
        errs.push(FieldError::required(
            &path.child("verbs"),
            "verbs must contain at least one value",
        ));
    }
    let urls = rule.non_resource_urls.as_deref().unwrap_or(&[]);
    let nonempty = |v: &Option<Vec<String>>| v.as_ref().is_some_and(|v| !v.is_empty());
    if !urls.is_empty() {
        let up = path.child("nonResourceURLs");
        if namespaced {
            errs.push(FieldError::invalid(
                &up,
                BadValue::string_list(Some(urls)),
                "namespaced rules cannot apply to non-resource URLs",
            ));
        }
        if nonempty(&rule.api_groups) || nonempty(&rule.resources) || nonempty(&rule.resource_names)
        {
            errs.push(FieldError::invalid(
                &up,
                BadValue::string_list(Some(urls)),
                "rules cannot apply to both regular resources and non-resource URLs",
            ));
        }
        return errs;
    }
    if !nonempty(&rule.api_groups) {
        errs.push(FieldError::required(
            &path.child("apiGroups"),
            "resource rules must supply at least one api group",
        ));
    }
    if !nonempty(&rule.resources) {
        errs.push(FieldError::required(
            &path.child("resources"),
            "resource rules must supply at least one resource",
        ));
    }
    errs
}

/// `ValidateRole`.
pub fn validate_role(r: &Role) -> Vec<FieldError> {
    let mut errs = validate_object_meta(
        &r.metadata,
        true,
        name_is_path_segment,
        &Path::new("metadata"),
    );
    for (i, rule) in r.rules.iter().flatten().enumerate() {
        errs.extend(validate_policy_rule(
            rule,
            true,
            &Path::new("rules").index(i),
        ));
    }
    errs
}

/// `ValidateClusterRole`.
pub fn validate_cluster_role(r: &ClusterRole) -> Vec<FieldError> {
    let mut errs = validate_object_meta(
        &r.metadata,
        false,
        name_is_path_segment,
        &Path::new("metadata"),
    );
    for (i, rule) in r.rules.iter().flatten().enumerate() {
        errs.extend(validate_policy_rule(
            rule,
            false,
            &Path::new("rules").index(i),
        ));
    }
    if let Some(agg) = r.aggregation_rule.as_ref() {
        let sp = Path::new("aggregationRule").child("clusterRoleSelectors");
        let sels = agg.cluster_role_selectors.as_deref().unwrap_or(&[]);
        if sels.is_empty() {
            errs.push(FieldError::required(
                &sp,
                "at least one clusterRoleSelector required if aggregationRule is non-nil",
            ));
        }
        for (i, s) in sels.iter().enumerate() {
            errs.extend(validate_label_selector(Some(s), &sp.index(i)));
        }
    }
    errs
}

fn validate_subject(s: &Subject, namespaced: bool, path: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if s.name.is_empty() {
        errs.push(FieldError::required(&path.child("name"), ""));
    }
    let group = s.api_group.as_deref().unwrap_or("");
    match s.kind.as_str() {
        "ServiceAccount" => {
            if !s.name.is_empty() {
                errs.extend(invalid_each(
                    &path.child("name"),
                    &s.name,
                    name_is_dns_subdomain(&s.name, false),
                ));
            }
            if !group.is_empty() {
                errs.push(FieldError::not_supported(
                    &path.child("apiGroup"),
                    group,
                    &[""],
                ));
            }
            if !namespaced && s.namespace.as_deref().unwrap_or("").is_empty() {
                errs.push(FieldError::required(&path.child("namespace"), ""));
            }
        }
        "User" | "Group" => {
            if group != RBAC_GROUP {
                errs.push(FieldError::not_supported(
                    &path.child("apiGroup"),
                    group,
                    &[RBAC_GROUP],
                ));
            }
        }
        other => errs.push(FieldError::not_supported(
            &path.child("kind"),
            other,
            &["ServiceAccount", "User", "Group"],
        )),
    }
    errs
}

fn validate_role_ref(r: &RoleRef, kinds: &[&str]) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let p = Path::new("roleRef");
    if r.api_group != RBAC_GROUP {
        errs.push(FieldError::not_supported(
            &p.child("apiGroup"),
            r.api_group.as_str(),
            &[RBAC_GROUP],
        ));
    }
    if !kinds.contains(&r.kind.as_str()) {
        errs.push(FieldError::not_supported(
            &p.child("kind"),
            r.kind.as_str(),
            kinds,
        ));
    }
    if r.name.is_empty() {
        errs.push(FieldError::required(&p.child("name"), ""));
    } else {
        errs.extend(invalid_each(
            &p.child("name"),
            &r.name,
            name_is_path_segment(&r.name, false),
        ));
    }
    errs
}

/// `ValidateRoleBinding`.
pub fn validate_role_binding(b: &RoleBinding) -> Vec<FieldError> {
    let mut errs = validate_object_meta(
        &b.metadata,
        true,
        name_is_path_segment,
        &Path::new("metadata"),
    );
    errs.extend(validate_role_ref(&b.role_ref, &["Role", "ClusterRole"]));
    for (i, s) in b.subjects.iter().flatten().enumerate() {
        errs.extend(validate_subject(s, true, &Path::new("subjects").index(i)));
    }
    errs
}

/// `ValidateClusterRoleBinding`.
pub fn validate_cluster_role_binding(b: &ClusterRoleBinding) -> Vec<FieldError> {
    let mut errs = validate_object_meta(
        &b.metadata,
        false,
        name_is_path_segment,
        &Path::new("metadata"),
    );
    errs.extend(validate_role_ref(&b.role_ref, &["ClusterRole"]));
    for (i, s) in b.subjects.iter().flatten().enumerate() {
        errs.extend(validate_subject(s, false, &Path::new("subjects").index(i)));
    }
    errs
}

fn role_ref_immutable(new: &RoleRef, old: &RoleRef) -> Vec<FieldError> {
    if new == old {
        return Vec::new();
    }
    let value = GoJson::obj(vec![
        ("APIGroup", GoJson::str(&new.api_group)),
        ("Kind", GoJson::str(&new.kind)),
        ("Name", GoJson::str(&new.name)),
    ]);
    vec![FieldError::invalid(
        &Path::new("roleRef"),
        value,
        "cannot change roleRef",
    )]
}

/// `ValidateRoleBindingUpdate`: roleRef cannot change.
pub fn validate_role_binding_update(new: &RoleBinding, old: &RoleBinding) -> Vec<FieldError> {
    let mut errs = validate_role_binding(new);
    errs.extend(validate_object_meta_update(
        &new.metadata,
        &old.metadata,
        &Path::new("metadata"),
    ));
    errs.extend(role_ref_immutable(&new.role_ref, &old.role_ref));
    errs
}

/// `ValidateClusterRoleBindingUpdate`: roleRef cannot change.
pub fn validate_cluster_role_binding_update(
    new: &ClusterRoleBinding,
    old: &ClusterRoleBinding,
) -> Vec<FieldError> {
    let mut errs = validate_cluster_role_binding(new);
    errs.extend(validate_object_meta_update(
        &new.metadata,
        &old.metadata,
        &Path::new("metadata"),
    ));
    errs.extend(role_ref_immutable(&new.role_ref, &old.role_ref));
    errs
}
