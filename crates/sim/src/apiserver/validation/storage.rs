//! Storage validation: PersistentVolumeClaim, PersistentVolume, StorageClass.

use k8s_openapi::api::core::v1::{
    PersistentVolume, PersistentVolumeClaim, PersistentVolumeClaimSpec,
};
use k8s_openapi::api::storage::v1::StorageClass;

use super::meta::{validate_label_selector, validate_object_meta, validate_object_meta_update};
use super::names::*;
use super::resources::{qty, validate_resource_quantity_value};
use crate::apiserver::field_error::{BadValue, FieldError, GoJson, Path};

const ACCESS_MODES: &[&str] = &[
    "ReadOnlyMany",
    "ReadWriteMany",
    "ReadWriteOnce",
    "ReadWriteOncePod",
];
const VOLUME_MODES: &[&str] = &["Block", "Filesystem"];

fn validate_access_modes(modes: &[String], path: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let (mut rwop, mut other) = (false, false);
    for m in modes {
        if !ACCESS_MODES.contains(&m.as_str()) {
            errs.push(FieldError::not_supported(
                path,
                BadValue::typed_str(m),
                ACCESS_MODES,
            ));
        }
        if m == "ReadWriteOncePod" {
            rwop = true;
        } else if ACCESS_MODES.contains(&m.as_str()) {
            other = true;
        }
    }
    if rwop && other {
        errs.push(FieldError::forbidden(
            path,
            "may not use ReadWriteOncePod with other access modes",
        ));
    }
    errs
}

/// `ValidatePersistentVolumeClaimSpec`.
pub fn validate_pvc_spec(spec: &PersistentVolumeClaimSpec, path: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let modes = spec.access_modes.as_deref().unwrap_or(&[]);
    if modes.is_empty() {
        errs.push(FieldError::required(
            &path.child("accessModes"),
            "at least 1 access mode is required",
        ));
    }
    errs.extend(validate_label_selector(
        spec.selector.as_ref(),
        &path.child("selector"),
    ));
    errs.extend(validate_access_modes(modes, &path.child("accessModes")));
    let storage_path = path.child("resources").key("storage");
    match spec
        .resources
        .as_ref()
        .and_then(|r| r.requests.as_ref())
        .and_then(|r| r.get("storage"))
    {
        None => errs.push(FieldError::required(&storage_path, "")),
        Some(q) => {
            if let Some(v) = qty(q) {
                if v.sign() <= 0 {
                    errs.push(FieldError::invalid(
                        &storage_path,
                        v.canonical(),
                        "must be greater than zero",
                    ));
                } else {
                    errs.extend(validate_resource_quantity_value(
                        "storage",
                        &v,
                        &storage_path,
                    ));
                }
            }
        }
    }
    if let Some(sc) = spec.storage_class_name.as_deref().filter(|s| !s.is_empty()) {
        errs.extend(invalid_each(
            &path.child("storageClassName"),
            sc,
            name_is_dns_subdomain(sc, false),
        ));
    }
    if let Some(vm) = spec
        .volume_mode
        .as_deref()
        .filter(|m| !VOLUME_MODES.contains(m))
    {
        errs.push(FieldError::not_supported(
            &path.child("volumeMode"),
            BadValue::typed_str(vm),
            VOLUME_MODES,
        ));
    }
    if let Some(ds) = spec.data_source.as_ref() {
        let dp = path.child("dataSource");
        if ds.name.is_empty() {
            errs.push(FieldError::required(&dp.child("name"), ""));
        }
        if ds.kind.is_empty() {
            errs.push(FieldError::required(&dp.child("kind"), ""));
        }
        if ds.api_group.as_deref().unwrap_or("").is_empty() && ds.kind != "PersistentVolumeClaim" {
            errs.push(FieldError::invalid(
                &dp,
                ds.kind.as_str(),
                "must be 'PersistentVolumeClaim' when referencing the default apiGroup",
            ));
        }
    }
    errs
}

/// `ValidatePersistentVolumeClaim`.
pub fn validate_pvc(pvc: &PersistentVolumeClaim) -> Vec<FieldError> {
    let mut errs = validate_object_meta(
        &pvc.metadata,
        true,
        name_is_dns_subdomain,
        &Path::new("metadata"),
    );
    errs.extend(validate_pvc_spec(
        &pvc.spec.clone().unwrap_or_default(),
        &Path::new("spec"),
    ));
    errs
}

/// `ValidatePersistentVolumeClaimUpdate`: the spec is immutable except `resources.requests`
/// growth and binding `volumeName` once.
pub fn validate_pvc_update(
    new: &PersistentVolumeClaim,
    old: &PersistentVolumeClaim,
) -> Vec<FieldError> {
    let mut errs =
        validate_object_meta_update(&new.metadata, &old.metadata, &Path::new("metadata"));
    errs.extend(validate_pvc(new));
    let mut new_spec = new.spec.clone().unwrap_or_default();
    let mut old_spec = old.spec.clone().unwrap_or_default();
    if old_spec.volume_name.as_deref().unwrap_or("").is_empty() {
        old_spec.volume_name = new_spec.volume_name.clone();
    }
    if old_spec.storage_class_name.is_none() && new_spec.storage_class_name.is_some() {
        old_spec.storage_class_name = new_spec.storage_class_name.clone();
    }
    let bound = new.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Bound");
    let storage = |s: &PersistentVolumeClaimSpec| {
        s.resources
            .as_ref()
            .and_then(|r| r.requests.as_ref())
            .and_then(|r| r.get("storage"))
            .and_then(qty)
    };
    let (new_size, old_size) = (storage(&new_spec), storage(&old_spec));
    if bound {
        if let (Some(r), Some(o)) = (
            new_spec
                .resources
                .as_mut()
                .and_then(|r| r.requests.as_mut()),
            old_spec
                .resources
                .as_ref()
                .and_then(|r| r.requests.as_ref())
                .and_then(|r| r.get("storage")),
        ) {
            r.insert("storage".into(), o.clone());
        }
    }
    if new_spec != old_spec {
        let diff = spec_diff(&old_spec, &new_spec);
        errs.push(FieldError::forbidden(
            &Path::new("spec"),
            &format!("spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims\n{diff}"),
        ));
    }
    let status_size = old
        .status
        .as_ref()
        .and_then(|s| s.capacity.as_ref())
        .and_then(|c| c.get("storage"))
        .and_then(qty)
        .unwrap_or_else(crate::apiserver::quantity::Quantity::zero);
    if let (Some(n), Some(o)) = (new_size, old_size) {
        // RecoverVolumeExpansionFailure is GA: shrinking is allowed down to status.capacity.
        if n < o && n <= status_size {
            errs.push(FieldError::forbidden(
                &Path::new("spec")
                    .child("resources")
                    .child("requests")
                    .child("storage"),
                "field can not be less than status.capacity",
            ));
        }
    }
    if new.spec.as_ref().and_then(|s| s.volume_mode.clone())
        != old.spec.as_ref().and_then(|s| s.volume_mode.clone())
    {
        let v = new.spec.as_ref().and_then(|s| s.volume_mode.as_deref());
        errs.push(FieldError::invalid(
            &Path::new("volumeMode"),
            GoJson::opt_str(v),
            super::meta::FIELD_IMMUTABLE_MSG,
        ));
    }
    errs
}

/// A readable stand-in for upstream's `cmp.Diff` of two specs: the changed JSON fields.
pub fn spec_diff<T: serde::Serialize>(old: &T, new: &T) -> String {
    let (o, n) = (
        serde_json::to_value(old).unwrap_or_default(),
        serde_json::to_value(new).unwrap_or_default(),
    );
    let mut lines = Vec::new();
    diff_values("", &o, &n, &mut lines);
    lines.join("\n")
}

fn diff_values(prefix: &str, o: &serde_json::Value, n: &serde_json::Value, out: &mut Vec<String>) {
    use serde_json::Value;
    match (o, n) {
        (Value::Object(a), Value::Object(b)) => {
            let keys: std::collections::BTreeSet<&String> = a.keys().chain(b.keys()).collect();
            for k in keys {
                let p = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                diff_values(
                    &p,
                    a.get(k).unwrap_or(&Value::Null),
                    b.get(k).unwrap_or(&Value::Null),
                    out,
                );
            }
        }
        (a, b) if a != b => {
            out.push(format!("- {prefix}: {a}"));
            out.push(format!("+ {prefix}: {b}"));
        }
        _ => {}
    }
}

/// `ValidatePersistentVolume` (common sources only).
pub fn validate_pv(pv: &PersistentVolume) -> Vec<FieldError> {
    let mut errs = validate_object_meta(
        &pv.metadata,
        false,
        name_is_dns_subdomain,
        &Path::new("metadata"),
    );
    let spec = pv.spec.clone().unwrap_or_default();
    let p = Path::new("spec");
    let modes = spec.access_modes.as_deref().unwrap_or(&[]);
    if modes.is_empty() {
        errs.push(FieldError::required(&p.child("accessModes"), ""));
    }
    errs.extend(validate_access_modes(modes, &p.child("accessModes")));
    let cap = spec.capacity.clone().unwrap_or_default();
    if cap.is_empty() {
        errs.push(FieldError::required(&p.child("capacity"), ""));
    }
    if !cap.contains_key("storage") || cap.len() > 1 {
        let value = GoJson::Obj(
            cap.iter()
                .map(|(k, v)| (k.clone(), GoJson::Str(v.0.clone())))
                .collect(),
        );
        errs.push(FieldError::not_supported(
            &p.child("capacity"),
            value,
            &["storage"],
        ));
    }
    for (k, q) in &cap {
        if let Some(v) = qty(q) {
            let kp = p.child("capacity").key(k);
            if v.value() < 0 {
                errs.push(FieldError::invalid(
                    &kp,
                    v.value(),
                    "must be a valid resource quantity",
                ));
            }
            if v.sign() <= 0 {
                errs.push(FieldError::invalid(
                    &kp,
                    v.canonical(),
                    "must be greater than zero",
                ));
            }
        }
    }
    if let Some(rp) = spec
        .persistent_volume_reclaim_policy
        .as_deref()
        .filter(|r| !r.is_empty())
    {
        if !matches!(rp, "Delete" | "Recycle" | "Retain") {
            errs.push(FieldError::not_supported(
                &p.child("persistentVolumeReclaimPolicy"),
                BadValue::typed_str(rp),
                &["Delete", "Recycle", "Retain"],
            ));
        }
    }
    let sources = [
        spec.host_path.is_some(),
        spec.gce_persistent_disk.is_some(),
        spec.aws_elastic_block_store.is_some(),
        spec.glusterfs.is_some(),
        spec.flocker.is_some(),
        spec.nfs.is_some(),
        spec.rbd.is_some(),
        spec.quobyte.is_some(),
        spec.cephfs.is_some(),
        spec.iscsi.is_some(),
        spec.cinder.is_some(),
        spec.fc.is_some(),
        spec.flex_volume.is_some(),
        spec.azure_file.is_some(),
        spec.vsphere_volume.is_some(),
        spec.photon_persistent_disk.is_some(),
        spec.portworx_volume.is_some(),
        spec.azure_disk.is_some(),
        spec.scale_io.is_some(),
        spec.local.is_some(),
        spec.storageos.is_some(),
        spec.csi.is_some(),
    ];
    if !sources.iter().any(|s| *s) {
        errs.push(FieldError::required(&p, "must specify a volume type"));
    }
    if let Some(h) = spec.host_path.as_ref() {
        if h.path.is_empty() {
            errs.push(FieldError::required(&p.child("hostPath").child("path"), ""));
        }
    }
    if let Some(l) = spec.local.as_ref() {
        if l.path.is_empty() {
            errs.push(FieldError::required(&p.child("local").child("path"), ""));
        }
        if spec.node_affinity.is_none() {
            errs.push(FieldError::required(
                &p.child("nodeAffinity"),
                "Local volume requires node affinity",
            ));
        }
    }
    if let Some(sc) = spec.storage_class_name.as_deref().filter(|s| !s.is_empty()) {
        errs.extend(invalid_each(
            &p.child("storageClassName"),
            sc,
            name_is_dns_subdomain(sc, false),
        ));
    }
    if let Some(vm) = spec
        .volume_mode
        .as_deref()
        .filter(|m| !VOLUME_MODES.contains(m))
    {
        errs.push(FieldError::not_supported(
            &p.child("volumeMode"),
            BadValue::typed_str(vm),
            VOLUME_MODES,
        ));
    }
    errs
}

/// `ValidatePersistentVolumeUpdate`: the volume source and mode are immutable.
pub fn validate_pv_update(new: &PersistentVolume, old: &PersistentVolume) -> Vec<FieldError> {
    let mut errs = validate_pv(new);
    errs.extend(validate_object_meta_update(
        &new.metadata,
        &old.metadata,
        &Path::new("metadata"),
    ));
    let source = |pv: &PersistentVolume| {
        let mut s = pv.spec.clone().unwrap_or_default();
        s.access_modes = None;
        s.capacity = None;
        s.claim_ref = None;
        s.mount_options = None;
        s.node_affinity = None;
        s.persistent_volume_reclaim_policy = None;
        s.storage_class_name = None;
        s.volume_mode = None;
        s.volume_attributes_class_name = None;
        s
    };
    let (n, o) = (source(new), source(old));
    if n != o {
        errs.push(FieldError::forbidden(
            &Path::new("spec").child("persistentvolumesource"),
            &format!(
                "spec.persistentvolumesource is immutable after creation\n{}",
                spec_diff(&o, &n)
            ),
        ));
    }
    let (nm, om) = (
        new.spec.as_ref().and_then(|s| s.volume_mode.clone()),
        old.spec.as_ref().and_then(|s| s.volume_mode.clone()),
    );
    if nm != om {
        errs.push(FieldError::invalid(
            &Path::new("volumeMode"),
            GoJson::opt_str(nm.as_deref()),
            super::meta::FIELD_IMMUTABLE_MSG,
        ));
    }
    errs
}

/// `ValidateStorageClass`.
pub fn validate_storage_class(sc: &StorageClass) -> Vec<FieldError> {
    let mut errs = validate_object_meta(
        &sc.metadata,
        false,
        name_is_dns_subdomain,
        &Path::new("metadata"),
    );
    let pp = Path::new("provisioner");
    if sc.provisioner.is_empty() {
        errs.push(FieldError::required(&pp, ""));
    } else {
        errs.extend(invalid_each(
            &pp,
            &sc.provisioner.to_lowercase(),
            is_qualified_name(&sc.provisioner.to_lowercase()),
        ));
    }
    let params = sc.parameters.clone().unwrap_or_default();
    if params.len() > 512 {
        errs.push(FieldError::too_long(&Path::new("parameters"), 512));
    }
    let total: usize = params.iter().map(|(k, v)| k.len() + v.len()).sum();
    if total > 256 * 1024 {
        errs.push(FieldError::too_long(&Path::new("parameters"), 256 * 1024));
    }
    for (k, _) in params.iter().filter(|(k, _)| k.is_empty()) {
        errs.push(FieldError::invalid(
            &Path::new("parameters"),
            k.as_str(),
            "field can not be empty.",
        ));
    }
    if let Some(rp) = sc
        .reclaim_policy
        .as_deref()
        .filter(|r| !matches!(*r, "Delete" | "Retain"))
    {
        errs.push(FieldError::not_supported(
            &Path::new("reclaimPolicy"),
            BadValue::typed_str(rp),
            &["Delete", "Retain"],
        ));
    }
    match sc.volume_binding_mode.as_deref() {
        None => errs.push(FieldError::required(&Path::new("volumeBindingMode"), "")),
        Some("Immediate" | "WaitForFirstConsumer") => {}
        Some(m) => errs.push(FieldError::not_supported(
            &Path::new("volumeBindingMode"),
            BadValue::typed_str(m),
            &["Immediate", "WaitForFirstConsumer"],
        )),
    }
    errs
}

/// `ValidateStorageClassUpdate`: provisioner, parameters, reclaim policy and binding mode
/// are immutable.
pub fn validate_storage_class_update(new: &StorageClass, old: &StorageClass) -> Vec<FieldError> {
    let mut errs =
        validate_object_meta_update(&new.metadata, &old.metadata, &Path::new("metadata"));
    if new.parameters.clone().unwrap_or_default() != old.parameters.clone().unwrap_or_default() {
        errs.push(FieldError::forbidden(
            &Path::new("parameters"),
            "updates to parameters are forbidden.",
        ));
    }
    if new.provisioner != old.provisioner {
        errs.push(FieldError::forbidden(
            &Path::new("provisioner"),
            "updates to provisioner are forbidden.",
        ));
    }
    if new.reclaim_policy != old.reclaim_policy {
        errs.push(FieldError::forbidden(
            &Path::new("reclaimPolicy"),
            "updates to reclaimPolicy are forbidden.",
        ));
    }
    if new.volume_binding_mode != old.volume_binding_mode {
        errs.push(FieldError::invalid(
            &Path::new("volumeBindingMode"),
            GoJson::opt_str(new.volume_binding_mode.as_deref()),
            super::meta::FIELD_IMMUTABLE_MSG,
        ));
    }
    errs
}
