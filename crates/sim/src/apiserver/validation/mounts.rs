//! Container volume mounts and devices, and the relative-path rules volumes share.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::core::v1::Container;

use super::container::*;
use crate::apiserver::field_error::{BadValue, FieldError, Path};

/// `validateLocalDescendingPath`: relative and without `..` elements.
pub fn validate_local_descending_path(target: &str, path: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if target.starts_with('/') {
        errs.push(FieldError::invalid(path, target, "must be a relative path"));
    }
    errs.extend(validate_no_backsteps(target, path));
    errs
}

/// `validatePathNoBacksteps`.
pub fn validate_no_backsteps(target: &str, path: &Path) -> Vec<FieldError> {
    if target.split('/').any(|s| s == "..") {
        vec![FieldError::invalid(path, target, "must not contain '..'")]
    } else {
        Vec::new()
    }
}

pub(super) fn validate_volume_mounts(
    c: &Container,
    vols: &Volumes<'_>,
    path: &Path,
) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let devices: BTreeMap<&str, &str> = c
        .volume_devices
        .iter()
        .flatten()
        .map(|d| (d.name.as_str(), d.device_path.as_str()))
        .collect();
    let mut mountpoints = BTreeSet::new();
    let privileged = c.security_context.as_ref().and_then(|s| s.privileged) == Some(true);
    for (i, m) in c.volume_mounts.iter().flatten().enumerate() {
        let p = path.index(i);
        if m.name.is_empty() {
            errs.push(FieldError::required(&p.child("name"), ""));
        }
        if !vols.contains_key(&m.name) {
            errs.push(FieldError::not_found(&p.child("name"), m.name.as_str()));
        }
        if m.mount_path.is_empty() {
            errs.push(FieldError::required(&p.child("mountPath"), ""));
        }
        if !mountpoints.insert(m.mount_path.clone()) {
            errs.push(FieldError::invalid(
                &p.child("mountPath"),
                m.mount_path.as_str(),
                "must be unique",
            ));
        }
        if devices.contains_key(m.name.as_str()) {
            errs.push(FieldError::invalid(
                &p.child("name"),
                m.name.as_str(),
                "must not already exist in volumeDevices",
            ));
        }
        if devices.values().any(|d| *d == m.mount_path) {
            errs.push(FieldError::invalid(
                &p.child("mountPath"),
                m.mount_path.as_str(),
                "must not already exist as a path in volumeDevices",
            ));
        }
        let sub_path = m.sub_path.as_deref().unwrap_or("");
        let sub_expr = m.sub_path_expr.as_deref().unwrap_or("");
        if vols.get(&m.name).is_some_and(|v| v.image.is_some()) {
            if !sub_path.is_empty() {
                errs.push(FieldError::invalid(
                    &p.child("subPath"),
                    sub_path,
                    "not allowed in image volume sources",
                ));
            }
            if !sub_expr.is_empty() {
                errs.push(FieldError::invalid(
                    &p.child("subPathExpr"),
                    sub_expr,
                    "not allowed in image volume sources",
                ));
            }
        }
        if !sub_path.is_empty() {
            errs.extend(validate_local_descending_path(
                sub_path,
                &path.child("subPath"),
            ));
        }
        if !sub_expr.is_empty() {
            if !sub_path.is_empty() {
                errs.push(FieldError::invalid(
                    &p.child("subPathExpr"),
                    sub_expr,
                    "subPathExpr and subPath are mutually exclusive",
                ));
            }
            errs.extend(validate_local_descending_path(
                sub_expr,
                &path.child("subPathExpr"),
            ));
        }
        if let Some(mp) = m.mount_propagation.as_deref() {
            let mpp = path.child("mountPropagation");
            if !matches!(mp, "Bidirectional" | "HostToContainer" | "None") {
                errs.push(FieldError::not_supported(
                    &mpp,
                    BadValue::typed_str(mp),
                    &["Bidirectional", "HostToContainer", "None"],
                ));
            }
            if mp == "Bidirectional" && !privileged {
                errs.push(FieldError::forbidden(
                    &mpp,
                    "Bidirectional mount propagation is available only to privileged containers",
                ));
            }
        }
        if let Some(rro) = m.recursive_read_only.as_deref() {
            let rp = path.child("recursiveReadOnly");
            match rro {
                "Disabled" => {}
                "Enabled" | "IfPossible" => {
                    if m.read_only != Some(true) {
                        errs.push(FieldError::forbidden(
                            &rp,
                            "may only be specified when readOnly is true",
                        ));
                    }
                    if m.mount_propagation.as_deref().is_some_and(|x| x != "None") {
                        errs.push(FieldError::forbidden(
                            &rp,
                            "may only be specified when mountPropagation is None or not specified",
                        ));
                    }
                }
                other => errs.push(FieldError::not_supported(
                    &rp,
                    BadValue::typed_str(other),
                    &["Disabled", "Enabled", "IfPossible"],
                )),
            }
        }
    }
    errs
}

pub(super) fn validate_volume_devices(
    c: &Container,
    vols: &Volumes<'_>,
    path: &Path,
) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mounts: BTreeMap<&str, &str> = c
        .volume_mounts
        .iter()
        .flatten()
        .map(|m| (m.name.as_str(), m.mount_path.as_str()))
        .collect();
    let (mut paths, mut names) = (BTreeSet::new(), BTreeSet::new());
    for (i, d) in c.volume_devices.iter().flatten().enumerate() {
        let p = path.index(i);
        let vol = vols.get(&d.name);
        if d.name.is_empty() {
            errs.push(FieldError::required(&p.child("name"), ""));
        }
        if names.contains(&d.name) {
            errs.push(FieldError::invalid(
                &p.child("name"),
                d.name.as_str(),
                "must be unique",
            ));
        }
        match vol {
            Some(v) if v.persistent_volume_claim.is_none() && v.ephemeral.is_none() => errs.push(FieldError::invalid(
                &p.child("name"),
                d.name.as_str(),
                "can only use volume source type of PersistentVolumeClaim or Ephemeral for block mode",
            )),
            Some(_) => {}
            None => errs.push(FieldError::not_found(&p.child("name"), d.name.as_str())),
        }
        if d.device_path.is_empty() {
            errs.push(FieldError::required(&p.child("devicePath"), ""));
        }
        if paths.contains(&d.device_path) {
            errs.push(FieldError::invalid(
                &p.child("devicePath"),
                d.device_path.as_str(),
                "must be unique",
            ));
        }
        if !d.device_path.is_empty() && d.device_path.split('/').any(|s| s == "..") {
            errs.push(FieldError::invalid(
                &p.child("devicePath"),
                d.device_path.as_str(),
                "can not contain backsteps ('..')",
            ));
        } else {
            paths.insert(d.device_path.clone());
        }
        if mounts.contains_key(d.name.as_str()) {
            errs.push(FieldError::invalid(
                &p.child("name"),
                d.name.as_str(),
                "must not already exist in volumeMounts",
            ));
        }
        if mounts.values().any(|m| *m == d.device_path) {
            errs.push(FieldError::invalid(
                &p.child("devicePath"),
                d.device_path.as_str(),
                "must not already exist as a path in volumeMounts",
            ));
        }
        if !d.name.is_empty() {
            names.insert(d.name.clone());
        }
    }
    errs
}
