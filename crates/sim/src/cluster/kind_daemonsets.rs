//! kind's two node agents as the DaemonSets kind installs in kube-system: `kube-proxy`
//! (kubeadm's manifest) and `kindnet` (kind v0.31's CNI manifest), each with its
//! ControllerRevision and one running pod per node, exactly as the DaemonSet controller
//! would have made them — so the controller finds nothing to do at time 0 and a node
//! added later gets its pods from it.

use std::collections::BTreeMap;

use k8s_openapi::api::apps::v1::{DaemonSet, DaemonSetSpec};
use k8s_openapi::api::core::v1::{
    Capabilities, ConfigMap, ConfigMapVolumeSource, Container, EnvVar, EnvVarSource,
    HostPathVolumeSource, ObjectFieldSelector, PodSpec, PodTemplateSpec, ResourceRequirements,
    SecurityContext, ServiceAccount, Toleration, Volume, VolumeMount,
};
use k8s_openapi::api::rbac::v1::{PolicyRule, Subject};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};

use super::addons::{admit, labels, meta, run_on, suffix};
use super::{uuid, BootPod};
use crate::apiserver::defaults::set_defaults;
use crate::controllers::daemonset_util::{
    daemon_template, pin_to_node, should_run, TEMPLATE_GENERATION_LABEL,
};
use crate::controllers::history::{new_revision, template_patch, REVISION_HASH_LABEL};
use crate::node::host::NodeHost;
use crate::object::Object;
use crate::rng::Rng;
use crate::time::k8s_time;

/// kube-proxy's image (the cluster's Kubernetes version).
pub const KUBE_PROXY_IMAGE: &str = "registry.k8s.io/kube-proxy:v1.35.0";
/// kindnetd's image as kind v0.31.0 (the release whose default node is v1.35.0) ships it.
pub const KINDNETD_IMAGE: &str = "docker.io/kindest/kindnetd:v20251212-v0.29.0-alpha-105-g20ccfc88";
/// Images kind's node image ships for these DaemonSets (pre-pulled on every node).
pub const IMAGES: [&str; 2] = [KUBE_PROXY_IMAGE, KINDNETD_IMAGE];

fn env_field(name: &str, path: &str) -> EnvVar {
    EnvVar {
        name: name.into(),
        value: None,
        value_from: Some(EnvVarSource {
            field_ref: Some(ObjectFieldSelector {
                field_path: path.into(),
                api_version: None,
            }),
            ..EnvVarSource::default()
        }),
    }
}

fn mount(name: &str, path: &str, read_only: Option<bool>) -> VolumeMount {
    VolumeMount {
        name: name.into(),
        mount_path: path.into(),
        read_only,
        ..VolumeMount::default()
    }
}

fn host_path(name: &str, path: &str, type_: Option<&str>) -> Volume {
    Volume {
        name: name.into(),
        host_path: Some(HostPathVolumeSource {
            path: path.into(),
            type_: type_.map(String::from),
        }),
        ..Volume::default()
    }
}

fn capabilities(add: &[&str]) -> Option<SecurityContext> {
    Some(SecurityContext {
        capabilities: Some(Capabilities {
            add: Some(add.iter().map(|c| c.to_string()).collect()),
            drop: None,
        }),
        ..SecurityContext::default()
    })
}

fn exists(key: Option<&str>) -> Toleration {
    Toleration {
        key: key.map(String::from),
        operator: Some("Exists".into()),
        ..Toleration::default()
    }
}

/// kubeadm's kube-proxy DaemonSet template (`KubeProxyDaemonSet19`).
fn kube_proxy_template() -> PodTemplateSpec {
    PodTemplateSpec {
        metadata: Some(ObjectMeta {
            labels: Some(labels(&[("k8s-app", "kube-proxy")])),
            ..ObjectMeta::default()
        }),
        spec: Some(PodSpec {
            priority_class_name: Some("system-node-critical".into()),
            containers: vec![Container {
                name: "kube-proxy".into(),
                image: Some(KUBE_PROXY_IMAGE.into()),
                image_pull_policy: Some("IfNotPresent".into()),
                command: Some(vec![
                    "/usr/local/bin/kube-proxy".into(),
                    "--config=/var/lib/kube-proxy/config.conf".into(),
                    "--hostname-override=$(NODE_NAME)".into(),
                ]),
                security_context: capabilities(&["NET_ADMIN", "SYS_MODULE"]),
                volume_mounts: Some(vec![
                    mount("kube-proxy", "/var/lib/kube-proxy", None),
                    mount("xtables-lock", "/run/xtables.lock", Some(false)),
                    mount("lib-modules", "/lib/modules", Some(true)),
                ]),
                env: Some(vec![env_field("NODE_NAME", "spec.nodeName")]),
                ..Container::default()
            }],
            host_network: Some(true),
            service_account_name: Some("kube-proxy".into()),
            volumes: Some(vec![
                Volume {
                    name: "kube-proxy".into(),
                    config_map: Some(ConfigMapVolumeSource {
                        name: "kube-proxy".into(),
                        ..ConfigMapVolumeSource::default()
                    }),
                    ..Volume::default()
                },
                host_path("xtables-lock", "/run/xtables.lock", Some("FileOrCreate")),
                host_path("lib-modules", "/lib/modules", None),
            ]),
            tolerations: Some(vec![exists(Some("CriticalAddonsOnly")), exists(None)]),
            node_selector: Some(labels(&[("kubernetes.io/os", "linux")])),
            ..PodSpec::default()
        }),
    }
}

/// kind's kindnet DaemonSet template (`pkg/build/nodeimage/const_cni.go`, v0.31.0).
fn kindnet_template() -> PodTemplateSpec {
    let q = |s: &str| Quantity(s.into());
    let cpu_mem: BTreeMap<String, Quantity> = [
        ("cpu".to_string(), q("100m")),
        ("memory".to_string(), q("50Mi")),
    ]
    .into_iter()
    .collect();
    PodTemplateSpec {
        metadata: Some(ObjectMeta {
            labels: Some(labels(&[
                ("app", "kindnet"),
                ("k8s-app", "kindnet"),
                ("tier", "node"),
            ])),
            ..ObjectMeta::default()
        }),
        spec: Some(PodSpec {
            host_network: Some(true),
            node_selector: Some(labels(&[("kubernetes.io/os", "linux")])),
            tolerations: Some(vec![exists(None)]),
            priority_class_name: Some("system-node-critical".into()),
            service_account_name: Some("kindnet".into()),
            containers: vec![Container {
                name: "kindnet-cni".into(),
                image: Some(KINDNETD_IMAGE.into()),
                env: Some(vec![
                    env_field("HOST_IP", "status.hostIP"),
                    env_field("POD_IP", "status.podIP"),
                    EnvVar {
                        name: "POD_SUBNET".into(),
                        value: Some(super::CLUSTER_CIDR.into()),
                        value_from: None,
                    },
                ]),
                volume_mounts: Some(vec![
                    mount("cni-cfg", "/etc/cni/net.d", None),
                    mount("xtables-lock", "/run/xtables.lock", Some(false)),
                    mount("lib-modules", "/lib/modules", Some(true)),
                    mount("nri-plugin", "/var/run/nri", None),
                ]),
                resources: Some(ResourceRequirements {
                    requests: Some(cpu_mem.clone()),
                    limits: Some(cpu_mem),
                    ..ResourceRequirements::default()
                }),
                security_context: Some(SecurityContext {
                    privileged: Some(false),
                    ..capabilities(&["NET_RAW", "NET_ADMIN"]).unwrap_or_default()
                }),
                ..Container::default()
            }],
            volumes: Some(vec![
                host_path("cni-cfg", "/etc/cni/net.d", None),
                host_path("xtables-lock", "/run/xtables.lock", Some("FileOrCreate")),
                host_path("lib-modules", "/lib/modules", None),
                host_path("nri-plugin", "/var/run/nri", None),
            ]),
            ..PodSpec::default()
        }),
    }
}

/// kubeadm's `kube-proxy` ConfigMap: the KubeProxyConfiguration (with kind's settings:
/// the pod subnet, `conntrack.maxPerCore: 0`, `iptables.minSyncPeriod: 1s`, the mode)
/// and the kubeconfig that uses the pod's ServiceAccount token.
fn kube_proxy_config(mode: &str, rng: &mut Rng) -> ConfigMap {
    let mut m = meta("kube-proxy", Some("kube-system"), rng);
    m.labels = Some(labels(&[("app", "kube-proxy")]));
    let config = format!(
        "apiVersion: kubeproxy.config.k8s.io/v1alpha1\nbindAddress: 0.0.0.0\nbindAddressHardFail: false\nclientConnection:\n  acceptContentTypes: \"\"\n  burst: 0\n  contentType: \"\"\n  kubeconfig: /var/lib/kube-proxy/kubeconfig.conf\n  qps: 0\nclusterCIDR: {cidr}\nconfigSyncPeriod: 0s\nconntrack:\n  maxPerCore: 0\n  min: null\n  tcpBeLiberal: false\n  tcpCloseWaitTimeout: null\n  tcpEstablishedTimeout: null\n  udpStreamTimeout: 0s\n  udpTimeout: 0s\ndetectLocal:\n  bridgeInterface: \"\"\n  interfaceNamePrefix: \"\"\ndetectLocalMode: \"\"\nenableProfiling: false\nhealthzBindAddress: \"\"\nhostnameOverride: \"\"\niptables:\n  localhostNodePorts: null\n  masqueradeAll: false\n  masqueradeBit: null\n  minSyncPeriod: 1s\n  syncPeriod: 0s\nipvs:\n  excludeCIDRs: null\n  minSyncPeriod: 0s\n  scheduler: \"\"\n  strictARP: false\n  syncPeriod: 0s\n  tcpFinTimeout: 0s\n  tcpTimeout: 0s\n  udpTimeout: 0s\nkind: KubeProxyConfiguration\nlogging:\n  flushFrequency: 0\n  options:\n    json:\n      infoBufferSize: \"0\"\n    text:\n      infoBufferSize: \"0\"\n  verbosity: 0\nmetricsBindAddress: \"\"\nmode: {mode}\nnftables:\n  masqueradeAll: false\n  masqueradeBit: null\n  minSyncPeriod: 0s\n  syncPeriod: 0s\nnodePortAddresses: null\noomScoreAdj: null\nportRange: \"\"\nshowHiddenMetricsForVersion: \"\"\nwinkernel:\n  enableDSR: false\n  forwardHealthCheckVip: false\n  networkName: \"\"\n  rootHnsEndpointName: \"\"\n  sourceVip: \"\"",
        cidr = super::CLUSTER_CIDR,
    );
    let kubeconfig = format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- cluster:\n    certificate-authority: /var/run/secrets/kubernetes.io/serviceaccount/ca.crt\n    server: https://{}\n  name: default\ncontexts:\n- context:\n    cluster: default\n    namespace: default\n    user: default\n  name: default\ncurrent-context: default\nusers:\n- name: default\n  user:\n    tokenFile: /var/run/secrets/kubernetes.io/serviceaccount/token",
        super::APISERVER_HOST
    );
    ConfigMap {
        metadata: m,
        data: Some(
            [
                ("config.conf".to_string(), config),
                ("kubeconfig.conf".to_string(), kubeconfig),
            ]
            .into_iter()
            .collect(),
        ),
        ..ConfigMap::default()
    }
}

fn rbac(out: &mut Vec<Object>, rng: &mut Rng) {
    let rule = |groups: &[&str], resources: &[&str], verbs: &[&str], names: &[&str]| PolicyRule {
        api_groups: Some(groups.iter().map(|s| s.to_string()).collect()),
        resources: Some(resources.iter().map(|s| s.to_string()).collect()),
        verbs: verbs.iter().map(|s| s.to_string()).collect(),
        resource_names: (!names.is_empty()).then(|| names.iter().map(|s| s.to_string()).collect()),
        non_resource_urls: None,
    };
    let sa = |name: &str| Subject {
        kind: "ServiceAccount".into(),
        name: name.into(),
        namespace: Some("kube-system".into()),
        api_group: None,
    };
    let mut kindnet = super::cluster_role(
        "kindnet",
        vec![
            rule(
                &["policy"],
                &["podsecuritypolicies"],
                &["use"],
                &["kindnet"],
            ),
            rule(
                &[""],
                &["nodes", "pods", "namespaces"],
                &["list", "watch"],
                &[],
            ),
            rule(
                &["networking.k8s.io"],
                &["networkpolicies"],
                &["list", "watch"],
                &[],
            ),
        ],
        rng,
    );
    // Not a bootstrap role: kind applies it from its manifest.
    kindnet.metadata.labels = None;
    kindnet.metadata.annotations = None;
    out.push(kindnet.into());
    let mut b = super::cluster_role_binding("kindnet", "kindnet", vec![sa("kindnet")], rng);
    b.metadata.labels = None;
    b.metadata.annotations = None;
    out.push(b.into());
    let mut b = super::cluster_role_binding(
        "kubeadm:node-proxier",
        "system:node-proxier",
        vec![sa("kube-proxy")],
        rng,
    );
    b.metadata.labels = None;
    b.metadata.annotations = None;
    out.push(b.into());
}

/// The stored DaemonSet (defaulted, as the apiserver created it).
fn daemonset(
    name: &str,
    ds_labels: &[(&str, &str)],
    selector: &[(&str, &str)],
    template: PodTemplateSpec,
    rng: &mut Rng,
) -> DaemonSet {
    let mut o = Object::from(DaemonSet {
        metadata: ObjectMeta {
            labels: Some(labels(ds_labels)),
            ..meta(name, Some("kube-system"), rng)
        },
        spec: Some(DaemonSetSpec {
            selector: LabelSelector {
                match_labels: Some(labels(selector)),
                match_expressions: None,
            },
            template,
            ..DaemonSetSpec::default()
        }),
        status: None,
    });
    set_defaults(&mut o);
    crate::apiserver::strategy::prepare_for_create(&mut o);
    match o {
        Object::DaemonSet(d) => *d,
        _ => DaemonSet::default(),
    }
}

/// One DaemonSet, its revision and its pods on the nodes it should run on.
fn install(
    ds: DaemonSet,
    nodes: &[NodeHost],
    out: &mut Vec<Object>,
    boot: &mut Vec<BootPod>,
    rng: &mut Rng,
) {
    let name = ds.metadata.name.clone().unwrap_or_default();
    let ds_obj = Object::from(ds.clone());
    let template = ds.spec.clone().unwrap_or_default().template;
    let tl = template.metadata.as_ref().and_then(|m| m.labels.as_ref());
    let mut rev = new_revision(&ds_obj, tl, template_patch(&template), 1, None);
    rev.metadata.uid = Some(uuid(rng));
    rev.metadata.creation_timestamp = Some(k8s_time(0));
    let hash = rev
        .metadata
        .labels
        .as_ref()
        .and_then(|l| l.get(REVISION_HASH_LABEL).cloned())
        .unwrap_or_default();
    let sa = ServiceAccount {
        metadata: meta(
            template
                .spec
                .as_ref()
                .and_then(|s| s.service_account_name.as_deref())
                .unwrap_or("default"),
            Some("kube-system"),
            rng,
        ),
        ..ServiceAccount::default()
    };
    out.push(ds_obj.clone());
    out.push(Object::from(rev));
    out.push(Object::from(sa.clone()));
    let mut pod_template = daemon_template(&ds);
    let pl = pod_template
        .metadata
        .get_or_insert_with(Default::default)
        .labels
        .get_or_insert_with(BTreeMap::new);
    pl.insert(REVISION_HASH_LABEL.into(), hash);
    pl.insert(TEMPLATE_GENERATION_LABEL.into(), "1".into());
    for (i, host) in nodes.iter().enumerate() {
        let node = super::node_object(host, 0, &mut Rng::new(0));
        if !should_run(&node, &pod_template).0 {
            continue;
        }
        let mut pod = crate::controllers::util::pod_from_template(
            &pod_template,
            &ds_obj,
            &format!("{name}-"),
        );
        pod.metadata.name = Some(format!("{name}-{}", suffix(rng)));
        pod.metadata.uid = Some(uuid(rng));
        pod.metadata.creation_timestamp = Some(k8s_time(0));
        pod.metadata.generation = Some(1);
        let spec = pod.spec.get_or_insert_with(Default::default);
        spec.affinity = Some(pin_to_node(spec.affinity.take(), &host.config.name));
        let sfx = suffix(rng);
        let Some(mut pod) = admit(pod, &sa, &sfx) else {
            continue;
        };
        boot.push(run_on(&mut pod, i, host, &host.ip));
        out.push(Object::from(pod));
    }
}

/// kind's kube-proxy and kindnet: their ConfigMap, ServiceAccounts, RBAC, DaemonSets,
/// revisions and running pods.
pub fn objects(
    nodes: &[NodeHost],
    proxy_mode: &str,
    out: &mut Vec<Object>,
    boot: &mut Vec<BootPod>,
    rng: &mut Rng,
) {
    out.push(kube_proxy_config(proxy_mode, rng).into());
    let kp = daemonset(
        "kube-proxy",
        &[("k8s-app", "kube-proxy")],
        &[("k8s-app", "kube-proxy")],
        kube_proxy_template(),
        rng,
    );
    install(kp, nodes, out, boot, rng);
    rbac(out, rng);
    let kn = daemonset(
        "kindnet",
        &[("app", "kindnet"), ("k8s-app", "kindnet"), ("tier", "node")],
        &[("app", "kindnet")],
        kindnet_template(),
        rng,
    );
    install(kn, nodes, out, boot, rng);
}
