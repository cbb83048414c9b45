//! CustomResourceDefinitions (apiextensions.k8s.io/v1): what a CRD serves, its status
//! (NamesAccepted, Established), and how custom objects are decoded, pruned, defaulted
//! and validated against their version's schema.

pub mod admit;
pub mod cel;
pub mod cel_eval;
pub mod prune;
pub mod rules;
pub mod scale;
pub mod schema;
pub mod validation;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    CustomResourceDefinition, CustomResourceDefinitionCondition, CustomResourceDefinitionStatus,
    CustomResourceDefinitionVersion,
};

use crate::apiserver::watch::WatchCache;
use crate::object::{CustomKind, CustomKinds, Kind, Object};
use crate::object_custom::{CustomKindSpec, PrinterColumn};
use crate::time::{k8s_time, Time};

/// The finalizer that makes the apiserver delete a CRD's objects before the CRD.
pub const CLEANUP_FINALIZER: &str = "customresourcecleanup.apiextensions.k8s.io";

/// The CRD's name for a custom kind: `crontabs.stable.example.com`.
pub fn crd_name(kind: Kind) -> String {
    let i = kind.info();
    format!("{}.{}", i.plural, i.group)
}

/// The CRD that defines `kind`, if stored.
pub fn find(cache: &WatchCache, kind: Kind) -> Option<CustomResourceDefinition> {
    match cache
        .get(Kind::CustomResourceDefinition, "", &crd_name(kind))
        .map(|o| &**o)
    {
        Some(Object::CustomResourceDefinition(c)) => Some((**c).clone()),
        _ => None,
    }
}

/// Whether a condition of the CRD is True.
pub fn condition_true(crd: &CustomResourceDefinition, type_: &str) -> bool {
    crd.status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .is_some_and(|cs| cs.iter().any(|c| c.type_ == type_ && c.status == "True"))
}

/// The CRD's version named `name`.
pub fn version<'a>(
    crd: &'a CustomResourceDefinition,
    name: &str,
) -> Option<&'a CustomResourceDefinitionVersion> {
    crd.spec.versions.iter().find(|v| v.name == name)
}

/// The CRD and the served version a request for `kind` addresses, when the CRD is
/// established and the version served.
pub fn served(
    cache: &WatchCache,
    kind: Kind,
) -> Option<(CustomResourceDefinition, CustomResourceDefinitionVersion)> {
    let crd = find(cache, kind)?;
    if !condition_true(&crd, "Established") {
        return None;
    }
    let v = version(&crd, kind.info().version)
        .filter(|v| v.served)?
        .clone();
    Some((crd, v))
}

/// The handle for one version of the CRD's kind.
pub fn kind_for(crd: &CustomResourceDefinition, version_name: &str) -> Kind {
    let names = &crd.spec.names;
    Kind::Custom(CustomKind::intern(&CustomKindSpec {
        group: crd.spec.group.clone(),
        version: version_name.to_string(),
        kind: names.kind.clone(),
        plural: names.plural.clone(),
        singular: names
            .singular
            .clone()
            .unwrap_or_else(|| names.kind.to_ascii_lowercase()),
        short_names: names.short_names.clone().unwrap_or_default(),
        categories: names.categories.clone().unwrap_or_default(),
        namespaced: crd.spec.scope == "Namespaced",
        printer_columns: version(crd, version_name)
            .and_then(|v| v.additional_printer_columns.clone())
            .unwrap_or_default()
            .into_iter()
            .map(|c| PrinterColumn {
                name: c.name,
                type_: c.type_,
                json_path: c.json_path,
                priority: c.priority.unwrap_or(0),
            })
            .collect(),
    }))
}

/// The storage version's handle.
pub fn storage_kind(crd: &CustomResourceDefinition) -> Option<Kind> {
    let v = crd.spec.versions.iter().find(|v| v.storage)?;
    Some(kind_for(crd, &v.name))
}

/// Upstream's version priority (`version.CompareKubeAwareVersionStrings`): GA before
/// beta before alpha, higher numbers first, other names last in alphabetical order.
fn version_rank(v: &str) -> (u8, i64, i64, String) {
    let parse = || -> Option<(u8, i64, i64)> {
        let rest = v.strip_prefix('v')?;
        let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
        let major: i64 = digits.parse().ok()?;
        let tail = &rest[digits.len()..];
        if tail.is_empty() {
            return Some((0, -major, 0));
        }
        for (class, word) in [(1, "beta"), (2, "alpha")] {
            if let Some(n) = tail.strip_prefix(word) {
                let minor: i64 = n.parse().ok()?;
                return Some((class, -major, -minor));
            }
        }
        None
    };
    match parse() {
        Some((c, a, b)) => (c, a, b, String::new()),
        None => (3, 0, 0, v.to_string()),
    }
}

/// The served versions' handles, preferred (highest priority) first.
pub fn served_kinds(crd: &CustomResourceDefinition) -> Vec<Kind> {
    let mut versions: Vec<&str> = crd
        .spec
        .versions
        .iter()
        .filter(|v| v.served)
        .map(|v| v.name.as_str())
        .collect();
    versions.sort_by_key(|v| version_rank(v));
    versions.into_iter().map(|v| kind_for(crd, v)).collect()
}

/// What discovery shows: every established CRD's served kinds.
pub fn discovery<'a>(crds: impl Iterator<Item = &'a Object>) -> CustomKinds {
    let mut resources: Vec<Vec<Kind>> = crds
        .filter_map(|o| match o {
            Object::CustomResourceDefinition(c)
                if condition_true(c, "Established") && c.metadata.deletion_timestamp.is_none() =>
            {
                Some(served_kinds(c))
            }
            _ => None,
        })
        .collect();
    resources.sort();
    CustomKinds::new(resources)
}

/// `spec.names.singular`, `listKind` and `conversion` defaults (SetDefaults_CustomResourceDefinitionSpec).
pub fn set_defaults(crd: &mut CustomResourceDefinition) {
    let names = &mut crd.spec.names;
    if names.singular.as_deref().unwrap_or("").is_empty() {
        names.singular = Some(names.kind.to_ascii_lowercase());
    }
    if names.list_kind.as_deref().unwrap_or("").is_empty() && !names.kind.is_empty() {
        names.list_kind = Some(format!("{}List", names.kind));
    }
    let conv = crd.spec.conversion.get_or_insert_with(Default::default);
    if conv.strategy.is_empty() {
        conv.strategy = "None".into();
    }
}

fn condition(
    type_: &str,
    ok: bool,
    reason: &str,
    message: &str,
    now: Time,
) -> CustomResourceDefinitionCondition {
    CustomResourceDefinitionCondition {
        type_: type_.into(),
        status: if ok { "True" } else { "False" }.into(),
        reason: Some(reason.into()),
        message: Some(message.into()),
        last_transition_time: Some(k8s_time(now)),
        observed_generation: None,
    }
}

/// A name another CRD of the group already serves (the naming controller's check).
fn name_conflict(cache: &WatchCache, crd: &CustomResourceDefinition) -> Option<String> {
    let mine = &crd.spec.names;
    let my_name = crd.metadata.name.as_deref().unwrap_or("");
    for o in cache.iter(Kind::CustomResourceDefinition) {
        let Object::CustomResourceDefinition(other) = &**o else {
            continue;
        };
        if other.metadata.name.as_deref() == Some(my_name) || other.spec.group != crd.spec.group {
            continue;
        }
        let theirs = other
            .status
            .as_ref()
            .and_then(|s| s.accepted_names.as_ref())
            .unwrap_or(&other.spec.names);
        let mut taken = vec![theirs.plural.clone()];
        taken.extend(theirs.singular.clone());
        taken.extend(theirs.short_names.clone().unwrap_or_default());
        if taken.contains(&mine.plural) {
            return Some(format!("\"{}\" is already in use", mine.plural));
        }
        if mine.singular.as_ref().is_some_and(|s| taken.contains(s)) {
            return Some(format!(
                "\"{}\" is already in use",
                mine.singular.clone().unwrap_or_default()
            ));
        }
        if let Some(s) = mine
            .short_names
            .iter()
            .flatten()
            .find(|s| taken.contains(s))
        {
            return Some(format!("\"{s}\" is already in use"));
        }
        if theirs.kind == mine.kind {
            return Some(format!("\"{}\" is already in use", mine.kind));
        }
    }
    None
}

/// The status the naming and establishing controllers converge to, written with the CRD
/// (upstream writes it a moment later, in two status updates).
pub fn set_status(
    cache: &WatchCache,
    crd: &mut CustomResourceDefinition,
    old: Option<&CustomResourceDefinition>,
    now: Time,
) {
    let conflict = name_conflict(cache, crd);
    let mut status = old.and_then(|o| o.status.clone()).unwrap_or_default();
    let keep = |type_: &str, c: CustomResourceDefinitionCondition| {
        let prev = old
            .and_then(|o| o.status.as_ref())
            .and_then(|s| s.conditions.as_ref())
            .and_then(|cs| cs.iter().find(|x| x.type_ == type_).cloned());
        match prev {
            Some(p) if p.status == c.status && p.reason == c.reason => p,
            _ => c,
        }
    };
    let conditions = match &conflict {
        None => {
            status.accepted_names = Some(crd.spec.names.clone());
            vec![
                keep(
                    "NamesAccepted",
                    condition(
                        "NamesAccepted",
                        true,
                        "NoConflicts",
                        "no conflicts found",
                        now,
                    ),
                ),
                keep(
                    "Established",
                    condition(
                        "Established",
                        true,
                        "InitialNamesAccepted",
                        "the initial names have been accepted",
                        now,
                    ),
                ),
            ]
        }
        Some(msg) => {
            if status.accepted_names.is_none() {
                status.accepted_names = Some(Default::default());
            }
            vec![
                keep(
                    "NamesAccepted",
                    condition("NamesAccepted", false, "NameConflict", msg, now),
                ),
                keep(
                    "Established",
                    condition(
                        "Established",
                        false,
                        "NotAccepted",
                        "not all names are accepted",
                        now,
                    ),
                ),
            ]
        }
    };
    status.conditions = Some(conditions);
    let mut stored = status.stored_versions.clone().unwrap_or_default();
    if let Some(v) = crd.spec.versions.iter().find(|v| v.storage) {
        if !stored.contains(&v.name) {
            stored.push(v.name.clone());
        }
    }
    status.stored_versions = Some(stored);
    crd.status = Some(status);
}

/// The CRD side of a write: a CRD gets its defaults' status and the cleanup finalizer, a
/// custom object goes through [`admit::admit`].
pub fn on_write(
    cache: &WatchCache,
    req: &crate::api::ApiRequest,
    obj: &mut Object,
    old: Option<&Object>,
    write: admit::Write,
    now: Time,
) -> Result<(), crate::api::Status> {
    match obj {
        Object::CustomResourceDefinition(c) => {
            let prev = match old {
                Some(Object::CustomResourceDefinition(p)) => Some(&**p),
                _ => None,
            };
            if write == admit::Write::Create {
                let f = c.metadata.finalizers.get_or_insert_with(Vec::new);
                if !f.iter().any(|x| x == CLEANUP_FINALIZER) {
                    f.push(CLEANUP_FINALIZER.into());
                }
            }
            if c.metadata.deletion_timestamp.is_none() {
                set_status(cache, c, prev, now);
            }
            Ok(())
        }
        Object::Custom(o) => {
            let terminating = find(cache, Kind::Custom(o.kind))
                .is_some_and(|c| c.metadata.deletion_timestamp.is_some());
            if terminating && write == admit::Write::Create {
                return Err(crate::api::Status::new(
                    405,
                    crate::api::StatusReason::MethodNotAllowed,
                    "create not allowed while custom resource definition is terminating",
                ));
            }
            let strict = matches!(
                req.body,
                crate::api::Body::Raw(_) | crate::api::Body::Patch(..)
            ) && !req.options.ignore_unknown_fields;
            admit::admit(cache, obj, old, write, strict)
        }
        _ => Ok(()),
    }
}

/// Adds the Terminating condition once the CRD is being deleted.
pub fn set_terminating(status: &mut CustomResourceDefinitionStatus, now: Time) {
    let cs = status.conditions.get_or_insert_with(Vec::new);
    if !cs.iter().any(|c| c.type_ == "Terminating") {
        cs.push(condition(
            "Terminating",
            true,
            "InstanceDeletionInProgress",
            "CustomResource deletion is in progress",
            now,
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_rank_like_kube_aware_sorting() {
        let mut v = vec!["v1alpha1", "foo", "v1beta2", "v2", "v1", "v1beta1", "v10"];
        v.sort_by_key(|x| version_rank(x));
        assert_eq!(
            v,
            ["v10", "v2", "v1", "v1beta2", "v1beta1", "v1alpha1", "foo"]
        );
    }
}
