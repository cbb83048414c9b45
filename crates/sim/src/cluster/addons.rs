//! The add-ons a kind cluster has finished installing at time 0: CoreDNS (2 replicas
//! behind `kube-dns` at 10.96.0.10), the local-path provisioner and the default
//! `standard` StorageClass — as stored objects plus the pods the nodes already run.

use std::collections::BTreeMap;

use k8s_openapi::api::apps::v1::{Deployment, DeploymentSpec, ReplicaSet, ReplicaSetSpec};
use k8s_openapi::api::core::v1::{
    ConfigMap, ContainerState, ContainerStateRunning, ContainerStatus, HostIP, Namespace,
    NamespaceSpec, NamespaceStatus, Pod, PodCondition, PodIP, PodTemplateSpec, Service,
    ServiceAccount, ServicePort, ServiceSpec,
};
use k8s_openapi::api::storage::v1::StorageClass;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::{uuid, BootPod};
use crate::apiserver::admission::{defaulttolerationseconds, priority, serviceaccount, Operation};
use crate::apiserver::defaults::set_defaults;
use crate::node::cri::ContainerConfig;
use crate::node::host::NodeHost;
use crate::object::Object;
use crate::rng::Rng;
use crate::time::k8s_time;

/// The CoreDNS image kubeadm installs.
pub const COREDNS_IMAGE: &str = "registry.k8s.io/coredns/coredns:v1.12.1";
/// The local-path provisioner image.
pub const LOCAL_PATH_IMAGE: &str = "docker.io/rancher/local-path-provisioner:v0.0.32";
/// The default StorageClass's provisioner (kind ships rancher's local-path provisioner).
pub const LOCAL_PATH_PROVISIONER: &str = "rancher.io/local-path";
/// The cluster DNS Service IP.
pub const DNS_SERVICE_IP: &str = "10.96.0.10";

const COREFILE: &str = ".:53 {
    errors
    health {
       lameduck 5s
    }
    ready
    kubernetes cluster.local in-addr.arpa ip6.arpa {
       pods insecure
       fallthrough in-addr.arpa ip6.arpa
       ttl 30
    }
    prometheus :9153
    forward . /etc/resolv.conf {
       max_concurrent 1000
    }
    cache 30 {
       disable success cluster.local
       disable denial cluster.local
    }
    loop
    reload
    loadbalance
}
";

pub(super) fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

pub(super) fn meta(name: &str, ns: Option<&str>, rng: &mut Rng) -> ObjectMeta {
    ObjectMeta {
        name: Some(name.into()),
        namespace: ns.map(String::from),
        uid: Some(uuid(rng)),
        creation_timestamp: Some(k8s_time(0)),
        ..ObjectMeta::default()
    }
}

pub(super) fn suffix(rng: &mut Rng) -> String {
    (0..5)
        .map(|_| {
            serviceaccount::NAME_ALPHABET
                [rng.intn(serviceaccount::NAME_ALPHABET.len() as u64) as usize] as char
        })
        .collect()
}

use super::addon_templates::{coredns_template, local_path_template};

/// Nodes an add-on pod may run on (untainted except control-plane, schedulable).
fn schedulable(nodes: &[NodeHost]) -> Vec<usize> {
    nodes
        .iter()
        .enumerate()
        .filter(|(_, h)| {
            h.config.taints.iter().all(|t| {
                t.effect == "PreferNoSchedule" || t.key == "node-role.kubernetes.io/control-plane"
            }) && h
                .config
                .labels
                .get("kubernetes.io/os")
                .is_none_or(|o| o == "linux")
        })
        .map(|(i, _)| i)
        .collect()
}

struct Addon<'a> {
    ns: &'a str,
    name: &'a str,
    sa: &'a str,
    replicas: i32,
    labels: BTreeMap<String, String>,
    template: PodTemplateSpec,
}

/// Writes one add-on's Deployment, ReplicaSet and running pods.
fn addon(
    a: Addon,
    out: &mut Vec<Object>,
    boot: &mut Vec<BootPod>,
    nodes: &[NodeHost],
    places: &[usize],
    ips: &mut BTreeMap<usize, u32>,
    rng: &mut Rng,
) {
    let mut d = Deployment {
        metadata: ObjectMeta {
            labels: Some(a.labels.clone()),
            generation: Some(1),
            ..meta(a.name, Some(a.ns), rng)
        },
        spec: Some(DeploymentSpec {
            replicas: Some(a.replicas),
            selector: LabelSelector {
                match_labels: a.template.metadata.as_ref().and_then(|m| m.labels.clone()),
                match_expressions: None,
            },
            template: a.template,
            ..DeploymentSpec::default()
        }),
        status: None,
    };
    let mut obj = Object::from(d.clone());
    set_defaults(&mut obj);
    if let Object::Deployment(x) = obj {
        d = *x;
    }
    let template = d.spec.clone().unwrap_or_default().template;
    let hash = crate::controllers::util::compute_hash(&template, None);
    let rs_name = format!("{}-{hash}", a.name);
    let mut rs_template = template.clone();
    rs_template
        .metadata
        .get_or_insert_with(Default::default)
        .labels
        .get_or_insert_with(BTreeMap::new)
        .insert("pod-template-hash".into(), hash.clone());
    let dep_obj = Object::from(d.clone());
    let mut rs_meta = meta(&rs_name, Some(a.ns), rng);
    rs_meta.labels = rs_template.metadata.as_ref().and_then(|m| m.labels.clone());
    rs_meta.annotations = Some(labels(&[
        (
            "deployment.kubernetes.io/desired-replicas",
            &a.replicas.to_string(),
        ),
        (
            "deployment.kubernetes.io/max-replicas",
            &(a.replicas + 1).to_string(),
        ),
        ("deployment.kubernetes.io/revision", "1"),
    ]));
    rs_meta.owner_references = Some(vec![crate::controllers::util::owner_ref(&dep_obj)]);
    rs_meta.generation = Some(1);
    let mut selector = d.spec.clone().unwrap_or_default().selector;
    selector
        .match_labels
        .get_or_insert_with(BTreeMap::new)
        .insert("pod-template-hash".into(), hash);
    let rs = ReplicaSet {
        metadata: rs_meta,
        spec: Some(ReplicaSetSpec {
            replicas: Some(a.replicas),
            min_ready_seconds: Some(0),
            selector,
            template: Some(rs_template.clone()),
        }),
        status: None,
    };
    let rs_obj = Object::from(rs.clone());
    out.push(Object::from(d));
    out.push(rs_obj.clone());
    let sa = ServiceAccount {
        metadata: meta(a.sa, Some(a.ns), rng),
        ..ServiceAccount::default()
    };
    out.push(Object::from(sa.clone()));
    for i in 0..a.replicas as usize {
        let mut pod: Pod = crate::controllers::util::pod_from_template(
            &rs_template,
            &rs_obj,
            &format!("{rs_name}-"),
        );
        let name = format!("{rs_name}-{}", suffix(rng));
        pod.metadata.name = Some(name.clone());
        pod.metadata.uid = Some(uuid(rng));
        pod.metadata.creation_timestamp = Some(k8s_time(0));
        pod.metadata.generation = Some(1);
        let sfx = suffix(rng);
        let Some(mut pod) = admit(pod, &sa, &sfx) else {
            continue;
        };
        if let Some(&node) = places.get(i % places.len().max(1)) {
            let host = &nodes[node];
            let n = ips.entry(node).or_insert(1);
            *n += 1;
            let base = host
                .pod_cidr
                .split('/')
                .next()
                .unwrap_or("")
                .trim_end_matches(".0")
                .to_string();
            boot.push(run_on(&mut pod, node, host, &format!("{base}.{n}")));
        }
        out.push(Object::from(pod));
    }
}

/// The apiserver's create path for a pod that was admitted while the cluster booted:
/// defaults, ServiceAccount (`sfx` names its token volume), priority,
/// DefaultTolerationSeconds, then the create strategy.
pub(super) fn admit(pod: Pod, sa: &ServiceAccount, sfx: &str) -> Option<Pod> {
    let mut o = Object::from(pod);
    set_defaults(&mut o);
    let Object::Pod(mut pod) = o else {
        return None;
    };
    let _ = serviceaccount::admit(&mut pod, std::slice::from_ref(sa), sfx);
    let _ = priority::admit_pod(
        Operation::Create,
        &mut pod,
        None,
        &priority::system_priority_classes(),
    );
    defaulttolerationseconds::admit(&mut pod);
    let mut o = Object::from(pod);
    crate::apiserver::strategy::prepare_for_create(&mut o);
    match o {
        Object::Pod(p) => Some(*p),
        _ => None,
    }
}

/// Makes `pod` one that has run on node `node` (`host`) with address `ip` since time 0,
/// and returns what that node's containerd must already be running.
pub(super) fn run_on(pod: &mut Pod, node: usize, host: &NodeHost, ip: &str) -> BootPod {
    let name = pod.metadata.name.clone().unwrap_or_default();
    let namespace = pod.metadata.namespace.clone().unwrap_or_default();
    let spec = pod.spec.get_or_insert_with(Default::default);
    spec.node_name = Some(host.config.name.clone());
    let uid = pod.metadata.uid.clone().unwrap_or_default();
    let containers = spec
        .containers
        .iter()
        .map(|c| {
            let mut cmd = c.command.clone().unwrap_or_default();
            cmd.extend(c.args.clone().unwrap_or_default());
            ContainerConfig {
                name: c.name.clone(),
                image: c.image.clone().unwrap_or_default(),
                command: cmd,
                env: crate::node::volumes::service_links().into_iter().collect(),
                attempt: 0,
                ports: c.ports.iter().flatten().map(|p| p.container_port).collect(),
                mounts: Vec::new(),
                overrides: Default::default(),
                stdin: false,
            }
        })
        .collect();
    let statuses: Vec<ContainerStatus> = spec
        .containers
        .iter()
        .map(|c| ContainerStatus {
            name: c.name.clone(),
            image: c.image.clone().unwrap_or_default(),
            ready: true,
            started: Some(true),
            restart_count: 0,
            state: Some(ContainerState {
                running: Some(ContainerStateRunning {
                    started_at: Some(k8s_time(0)),
                }),
                ..ContainerState::default()
            }),
            ..ContainerStatus::default()
        })
        .collect();
    let status = pod.status.get_or_insert_with(Default::default);
    status.phase = Some("Running".into());
    status.host_ip = Some(host.ip.clone());
    status.host_ips = Some(vec![HostIP {
        ip: host.ip.clone(),
    }]);
    status.pod_ip = Some(ip.to_string());
    status.pod_ips = Some(vec![PodIP { ip: ip.to_string() }]);
    status.start_time = Some(k8s_time(0));
    status.container_statuses = Some(statuses);
    status.conditions = Some(
        [
            "PodReadyToStartContainers",
            "Initialized",
            "Ready",
            "ContainersReady",
            "PodScheduled",
        ]
        .iter()
        .map(|t| PodCondition {
            type_: t.to_string(),
            status: "True".into(),
            last_transition_time: Some(k8s_time(0)),
            ..PodCondition::default()
        })
        .collect(),
    );
    BootPod {
        node,
        uid,
        name,
        namespace,
        ip: ip.to_string(),
        containers,
    }
}

/// Every add-on object, and the pods the nodes already run.
pub fn objects(nodes: &[NodeHost], rng: &mut Rng) -> (Vec<Object>, Vec<BootPod>) {
    let mut out = Vec::new();
    let mut boot = Vec::new();
    let places = schedulable(nodes);
    let mut ips: BTreeMap<usize, u32> = BTreeMap::new();
    let mut cm = ConfigMap {
        metadata: meta("coredns", Some("kube-system"), rng),
        ..ConfigMap::default()
    };
    cm.data = Some(
        [("Corefile".to_string(), COREFILE.to_string())]
            .into_iter()
            .collect(),
    );
    out.push(Object::from(cm));
    let dns_places: Vec<usize> = places.iter().copied().take(2).collect();
    addon(
        Addon {
            ns: "kube-system",
            name: "coredns",
            sa: "coredns",
            replicas: 2,
            labels: labels(&[("k8s-app", "kube-dns")]),
            template: coredns_template(),
        },
        &mut out,
        &mut boot,
        nodes,
        &dns_places,
        &mut ips,
        rng,
    );
    let mut svc_meta = meta("kube-dns", Some("kube-system"), rng);
    svc_meta.labels = Some(labels(&[
        ("k8s-app", "kube-dns"),
        ("kubernetes.io/cluster-service", "true"),
        ("kubernetes.io/name", "CoreDNS"),
    ]));
    svc_meta.annotations = Some(labels(&[
        ("prometheus.io/port", "9153"),
        ("prometheus.io/scrape", "true"),
    ]));
    let port = |name: &str, port: i32, proto: &str| ServicePort {
        name: Some(name.into()),
        port,
        protocol: Some(proto.into()),
        target_port: Some(IntOrString::Int(port)),
        ..ServicePort::default()
    };
    out.push(Object::from(Service {
        metadata: svc_meta,
        spec: Some(ServiceSpec {
            cluster_ip: Some(DNS_SERVICE_IP.into()),
            cluster_ips: Some(vec![DNS_SERVICE_IP.into()]),
            internal_traffic_policy: Some("Cluster".into()),
            ip_families: Some(vec!["IPv4".into()]),
            ip_family_policy: Some("SingleStack".into()),
            ports: Some(vec![
                port("dns", 53, "UDP"),
                port("dns-tcp", 53, "TCP"),
                port("metrics", 9153, "TCP"),
            ]),
            selector: Some(labels(&[("k8s-app", "kube-dns")])),
            session_affinity: Some("None".into()),
            type_: Some("ClusterIP".into()),
            ..ServiceSpec::default()
        }),
        status: Some(Default::default()),
    }));
    let mut ns = meta("local-path-storage", None, rng);
    ns.labels = Some(labels(&[(
        "kubernetes.io/metadata.name",
        "local-path-storage",
    )]));
    out.push(Object::from(Namespace {
        metadata: ns,
        spec: Some(NamespaceSpec {
            finalizers: Some(vec!["kubernetes".into()]),
        }),
        status: Some(NamespaceStatus {
            phase: Some("Active".into()),
            ..NamespaceStatus::default()
        }),
    }));
    out.push(Object::from(ServiceAccount {
        metadata: meta("default", Some("local-path-storage"), rng),
        ..ServiceAccount::default()
    }));
    let mut lp = ConfigMap {
        metadata: meta("local-path-config", Some("local-path-storage"), rng),
        ..ConfigMap::default()
    };
    lp.data = Some([
        ("config.json".to_string(), "{\n        \"nodePathMap\":[\n        {\n                \"node\":\"DEFAULT_PATH_FOR_NON_LISTED_NODES\",\n                \"paths\":[\"/var/local-path-provisioner\"]\n        }\n        ]\n}".to_string()),
        ("setup".to_string(), "#!/bin/sh\nset -eu\nmkdir -m 0777 -p \"$VOL_DIR\"\n".to_string()),
        ("teardown".to_string(), "#!/bin/sh\nset -eu\nrm -rf \"$VOL_DIR\"\n".to_string()),
    ].into_iter().collect());
    out.push(Object::from(lp));
    let lp_places: Vec<usize> = places.iter().copied().take(1).collect();
    addon(
        Addon {
            ns: "local-path-storage",
            name: "local-path-provisioner",
            sa: "local-path-provisioner-service-account",
            replicas: 1,
            labels: BTreeMap::new(),
            template: local_path_template(),
        },
        &mut out,
        &mut boot,
        nodes,
        &lp_places,
        &mut ips,
        rng,
    );
    let mut sc_meta = meta("standard", None, rng);
    sc_meta.annotations = Some(labels(&[(
        "storageclass.kubernetes.io/is-default-class",
        "true",
    )]));
    out.push(Object::from(StorageClass {
        metadata: sc_meta,
        provisioner: LOCAL_PATH_PROVISIONER.into(),
        reclaim_policy: Some("Delete".into()),
        volume_binding_mode: Some("WaitForFirstConsumer".into()),
        ..StorageClass::default()
    }));
    (out, boot)
}

/// The provisioner's identity in events (`rancher.io/local-path_<pod>_<uuid>`).
pub fn provisioner_identity(objects: &[Object]) -> String {
    let pod = objects
        .iter()
        .find(|o| matches!(o, Object::Pod(_)) && o.namespace() == "local-path-storage")
        .map_or("local-path-provisioner".to_string(), |o| {
            o.name().to_string()
        });
    format!("{LOCAL_PATH_PROVISIONER}_{pod}")
}
