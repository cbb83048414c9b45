//! Cluster-wide configuration and the objects a freshly booted cluster already has
//! (namespaces, the `kubernetes` Service, RBAC roles, priority classes, registered nodes).

use std::collections::BTreeMap;

use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::api::core::v1::{
    ContainerImage, Namespace, NamespaceStatus, Node, NodeAddress, NodeCondition, NodeSpec,
    NodeStatus, NodeSystemInfo, Service, ServiceAccount, ServicePort, ServiceSpec, Taint,
};
use k8s_openapi::api::discovery::v1::{Endpoint, EndpointConditions, EndpointPort, EndpointSlice};
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding, PolicyRule, RoleRef, Subject};
use k8s_openapi::api::scheduling::v1::PriorityClass;
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use crate::etcd::Store;
use crate::node::host::NodeHost;
use crate::object::Object;
use crate::rng::Rng;
use crate::time::{k8s_micro_time, k8s_time};

mod addon_templates;
pub mod addons;
pub mod controller_roles;
pub mod gateway_api;
pub mod ingress_nginx;
pub mod kind_daemonsets;

/// The Kubernetes version the simulated cluster runs.
pub const KUBERNETES_VERSION: &str = "v1.35.0";
/// The container runtime every node reports.
pub const CONTAINER_RUNTIME_VERSION: &str = "containerd://2.1.4";
/// The control plane's address (kube-apiserver listens on :6443).
pub const CONTROL_PLANE_IP: &str = "172.18.0.2";
/// What kubectl's kubeconfig points at.
pub const APISERVER_HOST: &str = "172.18.0.2:6443";
/// The cluster's pod network (flannel's default).
pub const CLUSTER_CIDR: &str = "10.244.0.0/16";
/// The Service network (kubeadm's default).
pub const SERVICE_CIDR: &str = "10.96.0.0/12";
/// The ClusterIP of `kubernetes.default`.
pub const KUBERNETES_SERVICE_IP: &str = "10.96.0.1";

pub use crate::proxy::ProxyMode;

/// One worker machine.
#[derive(Clone, Debug, PartialEq)]
pub struct NodeConfig {
    /// Node name.
    pub name: String,
    /// Capacity (cpu, memory, pods, …) as quantity strings.
    pub capacity: BTreeMap<String, String>,
    /// Allocatable; defaults to capacity.
    pub allocatable: BTreeMap<String, String>,
    /// Extra labels.
    pub labels: BTreeMap<String, String>,
    /// Taints.
    pub taints: Vec<Taint>,
    /// Images already on the node.
    pub images: Vec<ContainerImage>,
}

impl NodeConfig {
    /// A node with the default shape: 4 CPU, 8Gi, 110 pods.
    pub fn standard(name: &str) -> NodeConfig {
        let capacity: BTreeMap<String, String> = [
            ("cpu", "4"),
            ("memory", "8Gi"),
            ("pods", "110"),
            ("ephemeral-storage", "100Gi"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        NodeConfig {
            name: name.to_string(),
            allocatable: capacity.clone(),
            capacity,
            labels: BTreeMap::new(),
            taints: Vec::new(),
            images: Vec::new(),
        }
    }
}

/// Everything that shapes a world before it starts.
#[derive(Clone, Debug)]
pub struct ClusterConfig {
    /// The seed of every random stream.
    pub seed: u64,
    /// Worker nodes.
    pub nodes: Vec<NodeConfig>,
    /// A KubeSchedulerConfiguration, if the scenario gives one.
    pub scheduler_config: Option<serde_json::Value>,
    /// kube-proxy mode.
    pub proxy_mode: ProxyMode,
    /// Whether the scheduler writes the `kubeloop.dev/*-result` annotations.
    pub scheduling_annotations: bool,
    /// Hollow nodes (scale runs, like scheduler_perf): nodes are registered and Ready but
    /// no kubelet or kube-proxy runs on them.
    pub hollow_nodes: bool,
    /// The most pods this world's apiserver admits (kubeloop's envelope, docs/design.md
    /// §6.7): [`crate::envelope::MAX_PODS`] for every scenario and the page; only the
    /// envelope benchmark (`bench::Envelope`) raises it, to measure what one world can
    /// hold beyond the limit.
    pub max_pods: usize,
}

impl Default for ClusterConfig {
    fn default() -> ClusterConfig {
        ClusterConfig {
            seed: 1,
            nodes: (1..=3)
                .map(|i| NodeConfig::standard(&format!("node-{i}")))
                .collect(),
            scheduler_config: None,
            proxy_mode: ProxyMode::Iptables,
            scheduling_annotations: true,
            hollow_nodes: false,
            max_pods: crate::envelope::MAX_PODS,
        }
    }
}

/// InternalIP of the node at index `i` (control plane is .2).
pub fn node_ip(i: usize) -> String {
    let n = i + 3;
    format!("172.18.{}.{}", n / 256, n % 256)
}

/// The index of the node whose InternalIP is `ip` (the inverse of [`node_ip`]).
pub fn node_index_of_ip(ip: &str) -> Option<u32> {
    let rest = ip.strip_prefix("172.18.")?;
    let (hi, lo) = rest.split_once('.')?;
    let n = hi.parse::<u32>().ok()? * 256 + lo.parse::<u32>().ok()?;
    n.checked_sub(3)
}

/// podCIDR of the node at index `i`: `10.244.(i+1).0/24`.
pub fn pod_cidr(i: usize) -> String {
    let n = i + 1;
    if n < 256 {
        format!("10.244.{n}.0/24")
    } else {
        // Beyond 255 nodes the /16 is exhausted; continue in the next /16 so every node
        // still gets a distinct /24 (a real cluster would need a larger cluster CIDR).
        format!("10.{}.{}.0/24", 244 + n / 256, n % 256)
    }
}

/// A random RFC 4122 version-4 UUID from a seeded stream.
pub fn uuid(rng: &mut Rng) -> String {
    let a = rng.next_u64();
    let b = rng.next_u64();
    let hex = format!("{a:016x}{b:016x}");
    let variant = ["8", "9", "a", "b"][(b >> 60) as usize & 3];
    format!(
        "{}-{}-4{}-{}{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[13..16],
        variant,
        &hex[17..20],
        &hex[20..32]
    )
}

fn meta(name: &str, namespace: Option<&str>, rng: &mut Rng) -> ObjectMeta {
    ObjectMeta {
        name: Some(name.to_string()),
        namespace: namespace.map(str::to_string),
        uid: Some(uuid(rng)),
        creation_timestamp: Some(k8s_time(0)),
        ..ObjectMeta::default()
    }
}

fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn quantities(m: &BTreeMap<String, String>) -> BTreeMap<String, Quantity> {
    m.iter()
        .map(|(k, v)| (k.clone(), Quantity(v.clone())))
        .collect()
}

/// What the apiserver's Node validation says about the Node a kubelet would register for
/// `c` (name, labels, taints, resources): empty when it would register.
pub fn validate_node_config(c: &NodeConfig) -> Vec<crate::apiserver::field_error::FieldError> {
    let node = Node {
        metadata: ObjectMeta {
            name: Some(c.name.clone()),
            labels: Some(c.labels.clone()),
            ..ObjectMeta::default()
        },
        spec: Some(NodeSpec {
            taints: Some(c.taints.clone()),
            ..NodeSpec::default()
        }),
        status: Some(NodeStatus {
            capacity: Some(quantities(&c.capacity)),
            allocatable: Some(quantities(&c.allocatable)),
            ..NodeStatus::default()
        }),
    };
    crate::apiserver::validation::validate_create(&crate::object::Object::from(node))
}

/// The Node object a kubelet registers for `host`.
pub fn node_object(host: &NodeHost, now: crate::time::Time, rng: &mut Rng) -> Node {
    let c = &host.config;
    let mut l = labels(&[
        ("beta.kubernetes.io/arch", "amd64"),
        ("beta.kubernetes.io/os", "linux"),
        ("kubernetes.io/arch", "amd64"),
        ("kubernetes.io/hostname", &c.name),
        ("kubernetes.io/os", "linux"),
    ]);
    l.extend(c.labels.clone());
    let mut m = meta(&c.name, None, rng);
    m.creation_timestamp = Some(k8s_time(now));
    m.labels = Some(l);
    m.annotations = Some(labels(&[
        ("node.alpha.kubernetes.io/ttl", "0"),
        (
            "volumes.kubernetes.io/controller-managed-attach-detach",
            "true",
        ),
    ]));
    Node {
        metadata: m,
        spec: Some(NodeSpec {
            pod_cidr: Some(host.pod_cidr.clone()),
            pod_cidrs: Some(vec![host.pod_cidr.clone()]),
            taints: if c.taints.is_empty() {
                None
            } else {
                Some(c.taints.clone())
            },
            ..NodeSpec::default()
        }),
        status: Some(NodeStatus {
            capacity: Some(quantities(&c.capacity)),
            allocatable: Some(quantities(&c.allocatable)),
            addresses: Some(vec![
                NodeAddress {
                    type_: "InternalIP".into(),
                    address: host.ip.clone(),
                },
                NodeAddress {
                    type_: "Hostname".into(),
                    address: c.name.clone(),
                },
            ]),
            conditions: Some(node_conditions(now, true)),
            node_info: Some(NodeSystemInfo {
                architecture: "amd64".into(),
                boot_id: uuid(rng),
                container_runtime_version: CONTAINER_RUNTIME_VERSION.into(),
                kernel_version: "6.1.0-28-amd64".into(),
                kube_proxy_version: String::new(),
                kubelet_version: KUBERNETES_VERSION.into(),
                machine_id: uuid(rng).replace('-', ""),
                operating_system: "linux".into(),
                os_image: "Debian GNU/Linux 12 (bookworm)".into(),
                system_uuid: uuid(rng),
                ..NodeSystemInfo::default()
            }),
            images: if c.images.is_empty() {
                None
            } else {
                Some(c.images.clone())
            },
            ..NodeStatus::default()
        }),
    }
}

/// The kubelet's node conditions (pressure conditions false, Ready as given).
pub fn node_conditions(now: crate::time::Time, ready: bool) -> Vec<NodeCondition> {
    let cond = |t: &str, status: &str, reason: &str, message: &str| NodeCondition {
        type_: t.to_string(),
        status: status.to_string(),
        reason: Some(reason.to_string()),
        message: Some(message.to_string()),
        last_heartbeat_time: Some(k8s_time(now)),
        last_transition_time: Some(k8s_time(now)),
    };
    vec![
        cond(
            "MemoryPressure",
            "False",
            "KubeletHasSufficientMemory",
            "kubelet has sufficient memory available",
        ),
        cond(
            "DiskPressure",
            "False",
            "KubeletHasNoDiskPressure",
            "kubelet has no disk pressure",
        ),
        cond(
            "PIDPressure",
            "False",
            "KubeletHasSufficientPID",
            "kubelet has sufficient PID available",
        ),
        if ready {
            cond(
                "Ready",
                "True",
                "KubeletReady",
                "kubelet is posting ready status",
            )
        } else {
            cond(
                "Ready",
                "False",
                "KubeletNotReady",
                "container runtime is down",
            )
        },
    ]
}

/// The node's Lease in kube-node-lease.
pub fn node_lease(name: &str, now: crate::time::Time, rng: &mut Rng) -> Lease {
    let mut m = meta(name, Some("kube-node-lease"), rng);
    m.creation_timestamp = Some(k8s_time(now));
    Lease {
        metadata: m,
        spec: Some(LeaseSpec {
            holder_identity: Some(name.to_string()),
            lease_duration_seconds: Some(40),
            renew_time: Some(k8s_micro_time(now)),
            ..LeaseSpec::default()
        }),
    }
}

fn put(store: &mut Store, o: Object) {
    let key = o.key().etcd_key();
    store.bootstrap_put(&key, o);
}

/// A pod that was already running when the cluster finished booting (an add-on), for
/// its node's containerd to start with.
#[derive(Clone, Debug)]
pub struct BootPod {
    /// Index of the node it runs on.
    pub node: usize,
    /// Pod UID.
    pub uid: String,
    /// Pod name.
    pub name: String,
    /// Namespace.
    pub namespace: String,
    /// Its IP.
    pub ip: String,
    /// Its containers.
    pub containers: Vec<crate::node::cri::ContainerConfig>,
}

/// Writes what `kubeadm init` and the apiserver's bootstrap controllers leave in etcd,
/// plus the worker nodes as already registered and Ready, and the add-ons (CoreDNS,
/// the local-path provisioner, the default StorageClass, kind's kube-proxy and kindnet
/// DaemonSets). Returns the add-on pods the
/// nodes' runtimes must already be running.
pub fn bootstrap(store: &mut Store, config: &ClusterConfig, nodes: &[NodeHost]) -> Vec<BootPod> {
    let mut rng = Rng::stream(config.seed, "bootstrap");
    for ns in ["default", "kube-node-lease", "kube-public", "kube-system"] {
        let mut m = meta(ns, None, &mut rng);
        m.labels = Some(labels(&[("kubernetes.io/metadata.name", ns)]));
        let ns_obj = Namespace {
            metadata: m,
            spec: Some(k8s_openapi::api::core::v1::NamespaceSpec {
                finalizers: Some(vec!["kubernetes".into()]),
            }),
            status: Some(NamespaceStatus {
                phase: Some("Active".into()),
                ..NamespaceStatus::default()
            }),
        };
        put(store, ns_obj.into());
        let sa = ServiceAccount {
            metadata: meta("default", Some(ns), &mut rng),
            ..ServiceAccount::default()
        };
        put(store, sa.into());
    }
    put(store, kubernetes_service(&mut rng).into());
    put(store, kubernetes_slice(&mut rng).into());
    for (name, value, desc) in [
        ("system-cluster-critical", 2_000_000_000, "Used for system critical pods that must run in the cluster, but can be moved to another node if necessary."),
        ("system-node-critical", 2_000_001_000, "Used for system critical pods that must not be moved from their current node."),
    ] {
        let pc = PriorityClass {
            metadata: meta(name, None, &mut rng),
            value,
            description: Some(desc.to_string()),
            preemption_policy: Some("PreemptLowerPriority".into()),
            global_default: Some(false),
        };
        put(store, pc.into());
    }
    for o in crate::rbac_bootstrap::objects(&mut rng) {
        put(store, o);
    }
    // Their own stream, so the objects after them keep their uids.
    for o in controller_roles::objects(&mut Rng::stream(config.seed, "controller-roles")) {
        put(store, o);
    }
    for host in nodes {
        put(store, node_object(host, 0, &mut rng).into());
        put(store, node_lease(&host.config.name, 0, &mut rng).into());
    }
    let mut addon_rng = Rng::stream(config.seed, "addons");
    let (mut objects, mut boot) = addons::objects(nodes, &mut addon_rng);
    if !config.hollow_nodes {
        // Hollow nodes run no kube-proxy or CNI agent, so they get no daemon pods.
        let mode = config.proxy_mode.as_str();
        kind_daemonsets::objects(nodes, mode, &mut objects, &mut boot, &mut addon_rng);
    }
    for o in objects {
        put(store, o);
    }
    boot
}

fn kubernetes_service(rng: &mut Rng) -> Service {
    let mut svc = kubernetes_service_object();
    let mut m = meta("kubernetes", Some("default"), rng);
    m.labels = svc.metadata.labels.take();
    svc.metadata = m;
    svc
}

/// The `default/kubernetes` Service as kube-apiserver's `kubernetes` service controller
/// creates it (no uid or timestamps: the create assigns them).
pub fn kubernetes_service_object() -> Service {
    let m = ObjectMeta {
        name: Some("kubernetes".into()),
        namespace: Some("default".into()),
        labels: Some(labels(&[
            ("component", "apiserver"),
            ("provider", "kubernetes"),
        ])),
        ..ObjectMeta::default()
    };
    Service {
        metadata: m,
        spec: Some(ServiceSpec {
            cluster_ip: Some(KUBERNETES_SERVICE_IP.into()),
            cluster_ips: Some(vec![KUBERNETES_SERVICE_IP.into()]),
            internal_traffic_policy: Some("Cluster".into()),
            ip_families: Some(vec!["IPv4".into()]),
            ip_family_policy: Some("SingleStack".into()),
            ports: Some(vec![ServicePort {
                name: Some("https".into()),
                port: 443,
                protocol: Some("TCP".into()),
                target_port: Some(IntOrString::Int(6443)),
                ..ServicePort::default()
            }]),
            session_affinity: Some("None".into()),
            type_: Some("ClusterIP".into()),
            ..ServiceSpec::default()
        }),
        status: Some(Default::default()),
    }
}

fn kubernetes_slice(rng: &mut Rng) -> EndpointSlice {
    let mut m = meta("kubernetes", Some("default"), rng);
    m.labels = Some(labels(&[("kubernetes.io/service-name", "kubernetes")]));
    EndpointSlice {
        metadata: m,
        address_type: "IPv4".into(),
        endpoints: vec![Endpoint {
            addresses: vec![CONTROL_PLANE_IP.into()],
            conditions: Some(EndpointConditions {
                ready: Some(true),
                ..EndpointConditions::default()
            }),
            ..Endpoint::default()
        }],
        ports: Some(vec![EndpointPort {
            name: Some("https".into()),
            port: Some(6443),
            protocol: Some("TCP".into()),
            ..EndpointPort::default()
        }]),
    }
}

/// Helper for bootstrap RBAC objects.
pub(crate) fn cluster_role(name: &str, rules: Vec<PolicyRule>, rng: &mut Rng) -> ClusterRole {
    let mut m = meta(name, None, rng);
    m.labels = Some(labels(&[("kubernetes.io/bootstrapping", "rbac-defaults")]));
    m.annotations = Some(labels(&[(
        "rbac.authorization.kubernetes.io/autoupdate",
        "true",
    )]));
    ClusterRole {
        metadata: m,
        rules: Some(rules),
        aggregation_rule: None,
    }
}

/// Helper for bootstrap RBAC bindings.
pub(crate) fn cluster_role_binding(
    name: &str,
    role: &str,
    subjects: Vec<Subject>,
    rng: &mut Rng,
) -> ClusterRoleBinding {
    let mut m = meta(name, None, rng);
    m.labels = Some(labels(&[("kubernetes.io/bootstrapping", "rbac-defaults")]));
    m.annotations = Some(labels(&[(
        "rbac.authorization.kubernetes.io/autoupdate",
        "true",
    )]));
    ClusterRoleBinding {
        metadata: m,
        role_ref: RoleRef {
            api_group: "rbac.authorization.k8s.io".into(),
            kind: "ClusterRole".into(),
            name: role.into(),
        },
        subjects: Some(subjects),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_addressing_is_stable() {
        assert_eq!(node_ip(0), "172.18.0.3");
        assert_eq!(pod_cidr(0), "10.244.1.0/24");
        assert_eq!(pod_cidr(2), "10.244.3.0/24");
    }

    #[test]
    fn uuids_are_version_4_and_deterministic() {
        let a = uuid(&mut Rng::new(3));
        assert_eq!(a, uuid(&mut Rng::new(3)));
        assert_eq!(a.len(), 36);
        assert_eq!(&a[14..15], "4");
    }
}
