//! `ServiceAccount`: defaults `serviceAccountName`, checks the account exists, and mounts
//! the projected `kube-api-access-<suffix>` token volume into every container.

use k8s_openapi::api::core::v1::{
    ConfigMapProjection, DownwardAPIProjection, DownwardAPIVolumeFile, KeyToPath,
    LocalObjectReference, ObjectFieldSelector, Pod, ProjectedVolumeSource, ServiceAccount,
    ServiceAccountTokenProjection, Volume, VolumeMount, VolumeProjection,
};

use super::{forbidden, AdmissionError};
use crate::apiserver::field_error::go_quote;
use crate::object::Object;

/// The service account pods run as when they name none.
pub const DEFAULT_SERVICE_ACCOUNT: &str = "default";
/// Where the token volume is mounted.
pub const API_TOKEN_MOUNT_PATH: &str = "/var/run/secrets/kubernetes.io/serviceaccount";
/// The token volume's name prefix.
pub const VOLUME_NAME_PREFIX: &str = "kube-api-access-";
/// `WarnOnlyBoundTokenExpirationSeconds`: the projected token's requested lifetime.
pub const TOKEN_EXPIRATION_SECONDS: i64 = 3607;
/// The alphabet upstream's `rand.String` draws generated-name suffixes from.
pub const NAME_ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";

/// The projected volume source upstream builds (`TokenVolumeSource`).
pub fn token_volume_source() -> ProjectedVolumeSource {
    ProjectedVolumeSource {
        default_mode: Some(420),
        sources: Some(vec![
            VolumeProjection {
                service_account_token: Some(ServiceAccountTokenProjection {
                    audience: None,
                    expiration_seconds: Some(TOKEN_EXPIRATION_SECONDS),
                    path: "token".into(),
                }),
                ..Default::default()
            },
            VolumeProjection {
                config_map: Some(ConfigMapProjection {
                    name: "kube-root-ca.crt".into(),
                    items: Some(vec![KeyToPath {
                        key: "ca.crt".into(),
                        path: "ca.crt".into(),
                        mode: None,
                    }]),
                    optional: None,
                }),
                ..Default::default()
            },
            VolumeProjection {
                downward_api: Some(DownwardAPIProjection {
                    items: Some(vec![DownwardAPIVolumeFile {
                        path: "namespace".into(),
                        field_ref: Some(ObjectFieldSelector {
                            api_version: Some("v1".into()),
                            field_path: "metadata.namespace".into(),
                        }),
                        ..Default::default()
                    }]),
                }),
                ..Default::default()
            },
        ]),
    }
}

/// Admits a pod on create. `accounts` are the service accounts of the pod's namespace;
/// `suffix` is the 5-character random suffix for the volume name (draw it from
/// [`NAME_ALPHABET`] with the apiserver's random stream).
pub fn admit(
    pod: &mut Pod,
    accounts: &[ServiceAccount],
    suffix: &str,
) -> Result<(), AdmissionError> {
    let mirror = pod
        .metadata
        .annotations
        .as_ref()
        .is_some_and(|a| a.contains_key("kubernetes.io/config.mirror"));
    if mirror {
        return Ok(());
    }
    let ns = pod.metadata.namespace.clone().unwrap_or_default();
    let spec = pod.spec.get_or_insert_with(Default::default);
    if spec
        .service_account_name
        .as_deref()
        .unwrap_or("")
        .is_empty()
    {
        spec.service_account_name = Some(DEFAULT_SERVICE_ACCOUNT.into());
    }
    let sa_name = spec.service_account_name.clone().unwrap_or_default();
    // v1 conversion keeps the deprecated field equal to the name.
    spec.service_account = Some(sa_name.clone());
    let Some(sa) = accounts
        .iter()
        .find(|a| a.metadata.name.as_deref() == Some(sa_name.as_str()))
    else {
        let reason = format!(
            "error looking up service account {ns}/{sa_name}: serviceaccount {} not found",
            go_quote(&sa_name)
        );
        return Err(forbidden(&Object::from(pod.clone()), &reason));
    };
    let automount = spec
        .automount_service_account_token
        .or(sa.automount_service_account_token)
        .unwrap_or(true);
    if automount {
        mount_token(pod, suffix);
    }
    let spec = pod.spec.get_or_insert_with(Default::default);
    if spec
        .image_pull_secrets
        .as_ref()
        .is_none_or(|s| s.is_empty())
    {
        if let Some(secrets) = sa.image_pull_secrets.as_ref().filter(|s| !s.is_empty()) {
            spec.image_pull_secrets = Some(
                secrets
                    .iter()
                    .map(|s| LocalObjectReference {
                        name: s.name.clone(),
                    })
                    .collect(),
            );
        }
    }
    Ok(())
}

fn mount_token(pod: &mut Pod, suffix: &str) {
    let spec = pod.spec.get_or_insert_with(Default::default);
    let existing = spec
        .volumes
        .iter()
        .flatten()
        .find(|v| v.name.starts_with(VOLUME_NAME_PREFIX))
        .map(|v| v.name.clone());
    let has_volume = existing.is_some();
    let volume_name = existing.unwrap_or_else(|| format!("{VOLUME_NAME_PREFIX}{suffix}"));
    let mount = VolumeMount {
        name: volume_name.clone(),
        read_only: Some(true),
        mount_path: API_TOKEN_MOUNT_PATH.into(),
        ..Default::default()
    };
    let mut needs_volume = false;
    for c in spec
        .init_containers
        .iter_mut()
        .flatten()
        .chain(spec.containers.iter_mut())
    {
        let mounts = c.volume_mounts.get_or_insert_with(Vec::new);
        if !mounts.iter().any(|m| m.mount_path == API_TOKEN_MOUNT_PATH) {
            mounts.push(mount.clone());
            needs_volume = true;
        }
    }
    if !has_volume && needs_volume {
        // A k8s-openapi `Volume` is ~3.2 KB (every source inline): growing the list by
        // doubling would leave the stored pod up to that much per volume it already had.
        let volumes = spec.volumes.get_or_insert_with(Vec::new);
        volumes.reserve_exact(1);
        volumes.push(Volume {
            name: volume_name,
            projected: Some(token_volume_source()),
            ..Default::default()
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::{Container, PodSpec};
    use serde_json::json;

    fn pod() -> Pod {
        let mut p = Pod::default();
        p.metadata.name = Some("web".into());
        p.metadata.namespace = Some("default".into());
        p.spec = Some(PodSpec {
            containers: vec![Container {
                name: "web".into(),
                image: Some("nginx".into()),
                ..Default::default()
            }],
            ..Default::default()
        });
        p
    }

    fn sa(name: &str) -> ServiceAccount {
        let mut s = ServiceAccount::default();
        s.metadata.name = Some(name.into());
        s
    }

    #[test]
    fn defaults_the_account_and_mounts_the_token() {
        let mut p = pod();
        admit(&mut p, &[sa("default")], "x8kq2").unwrap();
        let v = serde_json::to_value(&p.spec).unwrap();
        assert_eq!(v["serviceAccountName"], "default");
        assert_eq!(v["serviceAccount"], "default");
        assert_eq!(
            v["containers"][0]["volumeMounts"],
            json!([{"mountPath": "/var/run/secrets/kubernetes.io/serviceaccount", "name": "kube-api-access-x8kq2", "readOnly": true}])
        );
        assert_eq!(
            v["volumes"][0],
            json!({"name": "kube-api-access-x8kq2", "projected": {"defaultMode": 420, "sources": [
                {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                {"configMap": {"items": [{"key": "ca.crt", "path": "ca.crt"}], "name": "kube-root-ca.crt"}},
                {"downwardAPI": {"items": [{"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}, "path": "namespace"}]}}
            ]}})
        );
    }

    #[test]
    fn missing_account_is_forbidden() {
        let mut p = pod();
        p.spec.as_mut().unwrap().service_account_name = Some("builder".into());
        let err = admit(&mut p, &[sa("default")], "abcde").unwrap_err();
        assert_eq!(
            err.message(),
            "pods \"web\" is forbidden: error looking up service account default/builder: serviceaccount \"builder\" not found"
        );
    }

    #[test]
    fn automount_opt_out_is_honoured() {
        let mut p = pod();
        p.spec.as_mut().unwrap().automount_service_account_token = Some(false);
        admit(&mut p, &[sa("default")], "abcde").unwrap();
        assert!(p.spec.unwrap().volumes.is_none());
    }
}
