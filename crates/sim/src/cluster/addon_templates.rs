//! The add-ons' pod templates as kubeadm and kind install them: CoreDNS and the
//! local-path provisioner.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{
    ConfigMapVolumeSource, Container, ContainerPort, EnvVar, EnvVarSource, HTTPGetAction,
    KeyToPath, ObjectFieldSelector, PodSpec, PodTemplateSpec, Probe, ResourceRequirements,
    Toleration, Volume, VolumeMount,
};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::addons::{COREDNS_IMAGE, LOCAL_PATH_IMAGE};

fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn qty(s: &str) -> Quantity {
    Quantity(s.into())
}

/// CoreDNS as kubeadm installs it.
pub(super) fn coredns_template() -> PodTemplateSpec {
    PodTemplateSpec {
        metadata: Some(ObjectMeta {
            labels: Some(labels(&[("k8s-app", "kube-dns")])),
            ..ObjectMeta::default()
        }),
        spec: Some(PodSpec {
            priority_class_name: Some("system-cluster-critical".into()),
            service_account_name: Some("coredns".into()),
            dns_policy: Some("Default".into()),
            node_selector: Some(labels(&[("kubernetes.io/os", "linux")])),
            tolerations: Some(vec![
                Toleration {
                    key: Some("CriticalAddonsOnly".into()),
                    operator: Some("Exists".into()),
                    ..Toleration::default()
                },
                Toleration {
                    key: Some("node-role.kubernetes.io/control-plane".into()),
                    effect: Some("NoSchedule".into()),
                    ..Toleration::default()
                },
            ]),
            containers: vec![Container {
                name: "coredns".into(),
                image: Some(COREDNS_IMAGE.into()),
                image_pull_policy: Some("IfNotPresent".into()),
                args: Some(vec!["-conf".into(), "/etc/coredns/Corefile".into()]),
                resources: Some(ResourceRequirements {
                    limits: Some([("memory".to_string(), qty("170Mi"))].into_iter().collect()),
                    requests: Some(
                        [
                            ("cpu".to_string(), qty("100m")),
                            ("memory".to_string(), qty("70Mi")),
                        ]
                        .into_iter()
                        .collect(),
                    ),
                    ..ResourceRequirements::default()
                }),
                volume_mounts: Some(vec![VolumeMount {
                    name: "config-volume".into(),
                    mount_path: "/etc/coredns".into(),
                    read_only: Some(true),
                    ..VolumeMount::default()
                }]),
                ports: Some(vec![
                    ContainerPort {
                        container_port: 53,
                        name: Some("dns".into()),
                        protocol: Some("UDP".into()),
                        ..ContainerPort::default()
                    },
                    ContainerPort {
                        container_port: 53,
                        name: Some("dns-tcp".into()),
                        protocol: Some("TCP".into()),
                        ..ContainerPort::default()
                    },
                    ContainerPort {
                        container_port: 9153,
                        name: Some("metrics".into()),
                        protocol: Some("TCP".into()),
                        ..ContainerPort::default()
                    },
                ]),
                liveness_probe: Some(Probe {
                    http_get: Some(HTTPGetAction {
                        path: Some("/health".into()),
                        port: IntOrString::Int(8080),
                        scheme: Some("HTTP".into()),
                        ..HTTPGetAction::default()
                    }),
                    initial_delay_seconds: Some(60),
                    timeout_seconds: Some(5),
                    success_threshold: Some(1),
                    failure_threshold: Some(5),
                    ..Probe::default()
                }),
                readiness_probe: Some(Probe {
                    http_get: Some(HTTPGetAction {
                        path: Some("/ready".into()),
                        port: IntOrString::Int(8181),
                        scheme: Some("HTTP".into()),
                        ..HTTPGetAction::default()
                    }),
                    ..Probe::default()
                }),
                ..Container::default()
            }],
            volumes: Some(vec![Volume {
                name: "config-volume".into(),
                config_map: Some(ConfigMapVolumeSource {
                    name: "coredns".into(),
                    items: Some(vec![KeyToPath {
                        key: "Corefile".into(),
                        path: "Corefile".into(),
                        mode: None,
                    }]),
                    ..ConfigMapVolumeSource::default()
                }),
                ..Volume::default()
            }]),
            ..PodSpec::default()
        }),
    }
}

/// The local-path provisioner as kind installs it.
pub(super) fn local_path_template() -> PodTemplateSpec {
    PodTemplateSpec {
        metadata: Some(ObjectMeta {
            labels: Some(labels(&[("app", "local-path-provisioner")])),
            ..ObjectMeta::default()
        }),
        spec: Some(PodSpec {
            service_account_name: Some("local-path-provisioner-service-account".into()),
            node_selector: Some(labels(&[("kubernetes.io/os", "linux")])),
            tolerations: Some(vec![Toleration {
                key: Some("node-role.kubernetes.io/control-plane".into()),
                operator: Some("Equal".into()),
                effect: Some("NoSchedule".into()),
                ..Toleration::default()
            }]),
            containers: vec![Container {
                name: "local-path-provisioner".into(),
                image: Some(LOCAL_PATH_IMAGE.into()),
                image_pull_policy: Some("IfNotPresent".into()),
                command: Some(vec![
                    "local-path-provisioner".into(),
                    "--debug".into(),
                    "start".into(),
                    "--helper-image".into(),
                    "docker.io/library/busybox:1.37.0".into(),
                    "--config".into(),
                    "/etc/config/config.json".into(),
                ]),
                env: Some(vec![
                    EnvVar {
                        name: "POD_NAMESPACE".into(),
                        value_from: Some(EnvVarSource {
                            field_ref: Some(ObjectFieldSelector {
                                field_path: "metadata.namespace".into(),
                                api_version: Some("v1".into()),
                            }),
                            ..EnvVarSource::default()
                        }),
                        value: None,
                    },
                    EnvVar {
                        name: "CONFIG_MOUNT_PATH".into(),
                        value: Some("/etc/config/".into()),
                        value_from: None,
                    },
                ]),
                volume_mounts: Some(vec![VolumeMount {
                    name: "config-volume".into(),
                    mount_path: "/etc/config/".into(),
                    ..VolumeMount::default()
                }]),
                ..Container::default()
            }],
            volumes: Some(vec![Volume {
                name: "config-volume".into(),
                config_map: Some(ConfigMapVolumeSource {
                    name: "local-path-config".into(),
                    ..ConfigMapVolumeSource::default()
                }),
                ..Volume::default()
            }]),
            ..PodSpec::default()
        }),
    }
}
