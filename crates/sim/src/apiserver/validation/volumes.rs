//! Pod volume validation (core `ValidateVolumes` and `validateVolumeSource`).

use std::collections::BTreeSet;

use k8s_openapi::api::core::v1::{KeyToPath, Volume};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use super::container::Volumes;
use super::env::validate_field_ref;
use super::mounts::{validate_local_descending_path, validate_no_backsteps};
use super::names::*;
use crate::apiserver::field_error::{BadValue, FieldError, Path};

const FILE_MODE_MSG: &str = "must be a number between 0 and 0777 (octal), both inclusive";
const VOLUME_FIELD_PATHS: &[&str] = &[
    "metadata.annotations",
    "metadata.labels",
    "metadata.name",
    "metadata.namespace",
    "metadata.uid",
];

/// `ValidateVolumes`: returns the volumes that validated (by name) and the errors.
pub fn validate_volumes<'a>(
    vols: &'a [Volume],
    pod_meta: Option<&ObjectMeta>,
    path: &Path,
) -> (Volumes<'a>, Vec<FieldError>) {
    let mut errs = Vec::new();
    let mut ok = Volumes::new();
    let pod_name = pod_meta.and_then(|m| m.name.as_deref()).unwrap_or("");
    let created_pvcs: BTreeSet<String> = if pod_name.is_empty() {
        BTreeSet::new()
    } else {
        vols.iter()
            .filter(|v| v.ephemeral.is_some())
            .map(|v| format!("{pod_name}-{}", v.name))
            .collect()
    };
    for (i, v) in vols.iter().enumerate() {
        let p = path.index(i);
        let name_path = p.child("name");
        let mut el = validate_volume_source(v, &p, pod_name);
        if v.name.is_empty() {
            el.push(FieldError::required(&name_path, ""));
        } else {
            el.extend(validate_dns1123_label(&v.name, &name_path));
        }
        if ok.contains_key(&v.name) {
            el.push(FieldError::duplicate(&name_path, v.name.as_str()));
        }
        if el.is_empty() {
            ok.insert(v.name.clone(), v);
        } else {
            errs.extend(el);
        }
        if let Some(c) = v.persistent_volume_claim.as_ref() {
            if created_pvcs.contains(&c.claim_name) {
                errs.push(FieldError::invalid(
                    &p.child("persistentVolumeClaim").child("claimName"),
                    c.claim_name.as_str(),
                    "must not reference a PVC that gets created for an ephemeral volume",
                ));
            }
        }
    }
    (ok, errs)
}

fn validate_mode(mode: Option<i32>, path: &Path) -> Vec<FieldError> {
    match mode {
        Some(m) if !(0..=0o777).contains(&m) => vec![FieldError::invalid(path, m, FILE_MODE_MSG)],
        _ => Vec::new(),
    }
}

/// `ValidateLocalNonReservedPath`.
fn validate_local_non_reserved_path(target: &str, path: &Path) -> Vec<FieldError> {
    let mut errs = validate_local_descending_path(target, path);
    if target.starts_with("..") && !target.starts_with("../") {
        errs.push(FieldError::invalid(
            path,
            target,
            "must not start with '..'",
        ));
    }
    errs
}

fn validate_key_to_path(kp: &KeyToPath, path: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if kp.key.is_empty() {
        errs.push(FieldError::required(&path.child("key"), ""));
    }
    if kp.path.is_empty() {
        errs.push(FieldError::required(&path.child("path"), ""));
    }
    errs.extend(validate_local_non_reserved_path(
        &kp.path,
        &path.child("path"),
    ));
    errs.extend(validate_mode(kp.mode, &path.child("mode")));
    errs
}

fn validate_downward_file(
    file: &k8s_openapi::api::core::v1::DownwardAPIVolumeFile,
    path: &Path,
) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if file.path.is_empty() {
        errs.push(FieldError::required(&path.child("path"), ""));
    }
    errs.extend(validate_local_non_reserved_path(
        &file.path,
        &path.child("path"),
    ));
    match (&file.field_ref, &file.resource_field_ref) {
        (Some(f), r) => {
            errs.extend(validate_field_ref(
                f.api_version.as_deref(),
                &f.field_path,
                VOLUME_FIELD_PATHS,
                &path.child("fieldRef"),
            ));
            if r.is_some() {
                errs.push(FieldError::invalid(
                    path,
                    "resource",
                    "fieldRef and resourceFieldRef can not be specified simultaneously",
                ));
            }
        }
        (None, Some(r)) => {
            if r.container_name.as_deref().unwrap_or("").is_empty() {
                errs.push(FieldError::required(
                    &path.child("resourceFieldRef").child("containerName"),
                    "",
                ));
            }
        }
        (None, None) => errs.push(FieldError::required(
            path,
            "one of fieldRef and resourceFieldRef is required",
        )),
    }
    errs.extend(validate_mode(file.mode, &path.child("mode")));
    errs
}

/// The volume sources in upstream's order, with the child name used for the
/// "more than 1 volume type" error (including upstream's `downwarAPI` typo).
fn sources(v: &Volume) -> Vec<&'static str> {
    let mut s = Vec::new();
    let mut add = |set: bool, name: &'static str| {
        if set {
            s.push(name);
        }
    };
    add(v.empty_dir.is_some(), "emptyDir");
    add(v.host_path.is_some(), "hostPath");
    add(v.git_repo.is_some(), "gitRepo");
    add(v.gce_persistent_disk.is_some(), "gcePersistentDisk");
    add(v.aws_elastic_block_store.is_some(), "awsElasticBlockStore");
    add(v.secret.is_some(), "secret");
    add(v.nfs.is_some(), "nfs");
    add(v.iscsi.is_some(), "iscsi");
    add(v.glusterfs.is_some(), "glusterfs");
    add(v.flocker.is_some(), "flocker");
    add(v.persistent_volume_claim.is_some(), "persistentVolumeClaim");
    add(v.rbd.is_some(), "rbd");
    add(v.cinder.is_some(), "cinder");
    add(v.cephfs.is_some(), "cephFS");
    add(v.quobyte.is_some(), "quobyte");
    add(v.downward_api.is_some(), "downwarAPI");
    add(v.fc.is_some(), "fc");
    add(v.flex_volume.is_some(), "flexVolume");
    add(v.config_map.is_some(), "configMap");
    add(v.azure_file.is_some(), "azureFile");
    add(v.vsphere_volume.is_some(), "vsphereVolume");
    add(v.photon_persistent_disk.is_some(), "photonPersistentDisk");
    add(v.portworx_volume.is_some(), "portworxVolume");
    add(v.azure_disk.is_some(), "azureDisk");
    add(v.storageos.is_some(), "storageos");
    add(v.projected.is_some(), "projected");
    add(v.scale_io.is_some(), "scaleIO");
    add(v.csi.is_some(), "csi");
    add(v.ephemeral.is_some(), "ephemeral");
    add(v.image.is_some(), "image");
    s
}

fn validate_volume_source(v: &Volume, path: &Path, pod_name: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let srcs = sources(v);
    if srcs.is_empty() {
        return vec![FieldError::required(path, "must specify a volume type")];
    }
    for extra in &srcs[1..] {
        errs.push(FieldError::forbidden(
            &path.child(extra),
            "may not specify more than 1 volume type",
        ));
    }
    match srcs[0] {
        "emptyDir" => {
            let neg = v
                .empty_dir
                .as_ref()
                .and_then(|e| e.size_limit.as_ref())
                .and_then(super::resources::qty)
                .is_some_and(|q| q.sign() < 0);
            if neg {
                errs.push(FieldError::forbidden(
                    &path.child("emptyDir").child("sizeLimit"),
                    "SizeLimit field must be a valid resource quantity",
                ));
            }
        }
        "hostPath" => {
            let h = v.host_path.as_ref().expect("source present");
            let hp = path.child("hostPath");
            if h.path.is_empty() {
                errs.push(FieldError::required(&hp.child("path"), ""));
            } else {
                errs.extend(validate_no_backsteps(&h.path, &hp.child("path")));
                const TYPES: &[&str] = &[
                    "",
                    "BlockDevice",
                    "CharDevice",
                    "Directory",
                    "DirectoryOrCreate",
                    "File",
                    "FileOrCreate",
                    "Socket",
                ];
                if let Some(t) = h.type_.as_deref().filter(|t| !TYPES.contains(t)) {
                    errs.push(FieldError::not_supported(
                        &hp.child("type"),
                        BadValue::typed_str(t),
                        TYPES,
                    ));
                }
            }
        }
        "secret" => {
            let s = v.secret.as_ref().expect("source present");
            let sp = path.child("secret");
            if s.secret_name.as_deref().unwrap_or("").is_empty() {
                errs.push(FieldError::required(&sp.child("secretName"), ""));
            }
            errs.extend(validate_mode(s.default_mode, &sp.child("defaultMode")));
            for (i, kp) in s.items.iter().flatten().enumerate() {
                errs.extend(validate_key_to_path(kp, &sp.child("items").index(i)));
            }
        }
        "configMap" => {
            let c = v.config_map.as_ref().expect("source present");
            let cp = path.child("configMap");
            if c.name.is_empty() {
                errs.push(FieldError::required(&cp.child("name"), ""));
            }
            errs.extend(validate_mode(c.default_mode, &cp.child("defaultMode")));
            for (i, kp) in c.items.iter().flatten().enumerate() {
                errs.extend(validate_key_to_path(kp, &cp.child("items").index(i)));
            }
        }
        "persistentVolumeClaim" => {
            let c = v.persistent_volume_claim.as_ref().expect("source present");
            if c.claim_name.is_empty() {
                errs.push(FieldError::required(
                    &path.child("persistentVolumeClaim").child("claimName"),
                    "",
                ));
            }
        }
        "downwarAPI" => {
            let d = v.downward_api.as_ref().expect("source present");
            let dp = path.child("downwardAPI");
            errs.extend(validate_mode(d.default_mode, &dp.child("defaultMode")));
            for file in d.items.iter().flatten() {
                errs.extend(validate_downward_file(file, &dp));
            }
        }
        "projected" => errs.extend(validate_projected(v, &path.child("projected"))),
        "nfs" => {
            let n = v.nfs.as_ref().expect("source present");
            let np = path.child("nfs");
            if n.server.is_empty() {
                errs.push(FieldError::required(&np.child("server"), ""));
            }
            if n.path.is_empty() {
                errs.push(FieldError::required(&np.child("path"), ""));
            }
            if !n.path.starts_with('/') {
                errs.push(FieldError::invalid(
                    &np.child("path"),
                    n.path.as_str(),
                    "must be an absolute path",
                ));
            }
        }
        "csi" => {
            let c = v.csi.as_ref().expect("source present");
            let dp = path.child("csi").child("driver");
            if c.driver.is_empty() {
                errs.push(FieldError::required(&dp, ""));
            }
            if c.driver.len() > 63 {
                errs.push(FieldError::too_long(&dp, 63));
            }
            errs.extend(invalid_each(
                &dp,
                &c.driver,
                is_dns1123_subdomain(&c.driver.to_lowercase()),
            ));
        }
        "ephemeral" => {
            let e = v.ephemeral.as_ref().expect("source present");
            let ep = path.child("ephemeral");
            match e.volume_claim_template.as_ref() {
                None => errs.push(FieldError::required(&ep.child("volumeClaimTemplate"), "")),
                Some(t) => {
                    let tp = ep.child("volumeClaimTemplate");
                    if let Some(m) = t.metadata.as_ref() {
                        errs.extend(super::meta::validate_annotations(
                            m.annotations.as_ref(),
                            &tp.child("metadata").child("annotations"),
                        ));
                        errs.extend(super::meta::validate_labels(
                            m.labels.as_ref(),
                            &tp.child("metadata").child("labels"),
                        ));
                    }
                    errs.extend(super::storage::validate_pvc_spec(
                        &t.spec,
                        &tp.child("spec"),
                    ));
                }
            }
            if !pod_name.is_empty() && !v.name.is_empty() {
                let pvc = format!("{pod_name}-{}", v.name);
                for m in name_is_dns_subdomain(&pvc, false) {
                    errs.push(FieldError::invalid(
                        &path.child("name"),
                        v.name.as_str(),
                        &format!(
                            "PVC name {}: {m}",
                            crate::apiserver::field_error::go_quote(&pvc)
                        ),
                    ));
                }
            }
        }
        "image" => {
            let i = v.image.as_ref().expect("source present");
            if i.reference.as_deref().unwrap_or("").is_empty() {
                errs.push(FieldError::required(
                    &path.child("image").child("reference"),
                    "",
                ));
            }
        }
        _ => {}
    }
    errs
}

fn validate_projected(v: &Volume, path: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let Some(p) = v.projected.as_ref() else {
        return errs;
    };
    errs.extend(validate_mode(p.default_mode, &path.child("defaultMode")));
    let mut all_paths = BTreeSet::new();
    for (i, src) in p.sources.iter().flatten().enumerate() {
        let sp = path.child("sources").index(i);
        let mut n = 0;
        for (kind, name, items) in [
            (
                "secret",
                src.secret.as_ref().map(|s| s.name.as_str()),
                src.secret.as_ref().and_then(|s| s.items.as_ref()),
            ),
            (
                "configMap",
                src.config_map.as_ref().map(|s| s.name.as_str()),
                src.config_map.as_ref().and_then(|s| s.items.as_ref()),
            ),
        ] {
            let Some(name) = name else { continue };
            n += 1;
            let kp = sp.child(kind);
            if name.is_empty() {
                errs.push(FieldError::required(&kp.child("name"), ""));
            }
            for (j, item) in items.into_iter().flatten().enumerate() {
                errs.extend(validate_key_to_path(item, &kp.child("items").index(j)));
                if !item.path.is_empty() && !all_paths.insert(item.path.clone()) {
                    errs.push(FieldError::invalid(
                        path,
                        name,
                        "conflicting duplicate paths",
                    ));
                }
            }
        }
        if let Some(d) = src.downward_api.as_ref() {
            n += 1;
            for file in d.items.iter().flatten() {
                errs.extend(validate_downward_file(file, &sp.child("downwardAPI")));
                if !file.path.is_empty() && !all_paths.insert(file.path.clone()) {
                    errs.push(FieldError::invalid(
                        path,
                        file.path.as_str(),
                        "conflicting duplicate paths",
                    ));
                }
            }
        }
        if let Some(t) = src.service_account_token.as_ref() {
            n += 1;
            let tp = sp.child("serviceAccountToken");
            let exp = t.expiration_seconds.unwrap_or(0);
            if exp < 600 {
                errs.push(FieldError::invalid(
                    &tp.child("expirationSeconds"),
                    exp,
                    "may not specify a duration less than 10 minutes",
                ));
            }
            if exp > 1 << 32 {
                errs.push(FieldError::invalid(
                    &tp.child("expirationSeconds"),
                    exp,
                    "may not specify a duration larger than 2^32 seconds",
                ));
            }
            if t.path.is_empty() {
                errs.push(FieldError::required(&path.child("path"), ""));
            } else {
                errs.extend(validate_local_non_reserved_path(
                    &t.path,
                    &path.child("path"),
                ));
            }
        }
        if src.cluster_trust_bundle.is_some() {
            n += 1;
        }
        if src.pod_certificate.is_some() {
            n += 1;
        }
        if n > 1 {
            errs.push(FieldError::forbidden(
                &sp,
                "may not specify more than 1 volume type per source",
            ));
        }
    }
    errs
}
