//! Tables of everything that is not a pod or a workload: nodes, services and endpoints,
//! namespaces, config and secrets, events, leases, storage, scheduling, RBAC and policy.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{Endpoints, Event, Node, Service};
use k8s_openapi::api::discovery::v1::EndpointSlice;
use k8s_openapi::api::rbac::v1::Subject;
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time as K8sTime;

use super::{age, col, format_labels, since, wide, Column};
use crate::object::{Kind, Object};
use crate::time::{human_duration, Time, EPOCH_UNIX_MS};

pub(super) fn columns(kind: Kind) -> Vec<Column> {
    match kind {
        Kind::Node => vec![
            col("Name"),
            col("Status"),
            col("Roles"),
            col("Age"),
            col("Version"),
            wide("Internal-IP"),
            wide("External-IP"),
            wide("OS-Image"),
            wide("Kernel-Version"),
            wide("Container-Runtime"),
        ],
        Kind::Service => vec![
            col("Name"),
            col("Type"),
            col("Cluster-IP"),
            col("External-IP"),
            col("Port(s)"),
            col("Age"),
            wide("Selector"),
        ],
        Kind::Endpoints => vec![col("Name"), col("Endpoints"), col("Age")],
        Kind::EndpointSlice => vec![
            col("Name"),
            col("AddressType"),
            col("Ports"),
            col("Endpoints"),
            col("Age"),
        ],
        Kind::Namespace => vec![col("Name"), col("Status"), col("Age")],
        Kind::ConfigMap => vec![col("Name"), col("Data"), col("Age")],
        Kind::Secret => vec![col("Name"), col("Type"), col("Data"), col("Age")],
        Kind::ServiceAccount => vec![col("Name"), col("Secrets"), col("Age")],
        Kind::Event => vec![
            col("Last Seen"),
            col("Type"),
            col("Reason"),
            col("Object"),
            wide("Subobject"),
            wide("Source"),
            col("Message"),
            wide("First Seen"),
            wide("Count"),
            wide("Name"),
        ],
        Kind::Lease => vec![col("Name"), col("Holder"), col("Age")],
        Kind::PersistentVolume => vec![
            col("Name"),
            col("Capacity"),
            col("Access Modes"),
            col("Reclaim Policy"),
            col("Status"),
            col("Claim"),
            col("StorageClass"),
            col("VolumeAttributesClass"),
            col("Reason"),
            col("Age"),
            wide("VolumeMode"),
        ],
        Kind::PersistentVolumeClaim => vec![
            col("Name"),
            col("Status"),
            col("Volume"),
            col("Capacity"),
            col("Access Modes"),
            col("StorageClass"),
            col("VolumeAttributesClass"),
            col("Age"),
            wide("VolumeMode"),
        ],
        Kind::StorageClass => vec![
            col("Name"),
            col("Provisioner"),
            col("ReclaimPolicy"),
            col("VolumeBindingMode"),
            col("AllowVolumeExpansion"),
            col("Age"),
        ],
        Kind::PriorityClass => vec![
            col("Name"),
            col("Value"),
            col("Global-Default"),
            col("Age"),
            col("PreemptionPolicy"),
        ],
        Kind::Role | Kind::ClusterRole | Kind::LimitRange | Kind::CustomResourceDefinition => {
            vec![col("Name"), col("Created At")]
        }
        Kind::RoleBinding | Kind::ClusterRoleBinding => vec![
            col("Name"),
            col("Role"),
            col("Age"),
            wide("Users"),
            wide("Groups"),
            wide("ServiceAccounts"),
        ],
        Kind::ResourceQuota => vec![col("Name"), col("Age"), col("Request"), col("Limit")],
        _ => vec![col("Name"), col("Age")],
    }
}

fn or(s: Option<&str>, dflt: &str) -> String {
    match s {
        Some(x) if !x.is_empty() => x.to_string(),
        _ => dflt.to_string(),
    }
}

fn qty(q: Option<&Quantity>) -> String {
    q.map(|q| q.0.clone())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "0".into())
}

fn created_at(t: Option<&K8sTime>) -> String {
    match t {
        Some(t) => t.0.strftime("%Y-%m-%dT%H:%M:%SZ").to_string(),
        None => "0001-01-01T00:00:00Z".to_string(),
    }
}

pub(super) fn row(obj: &Object, now: Time) -> Vec<String> {
    let name = obj.name().to_string();
    let created = age(obj.meta().creation_timestamp.as_ref(), now);
    match obj {
        Object::Node(n) => node_row(n, name, created),
        Object::Service(s) => service_row(s, name, created),
        Object::Endpoints(e) => vec![name, format_endpoints(e), created],
        Object::EndpointSlice(e) => endpoint_slice_row(e, name, created),
        Object::Namespace(ns) => {
            let phase = ns
                .status
                .as_ref()
                .and_then(|s| s.phase.clone())
                .unwrap_or_default();
            vec![name, phase, created]
        }
        Object::ConfigMap(cm) => {
            let n = cm.data.as_ref().map_or(0, |d| d.len())
                + cm.binary_data.as_ref().map_or(0, |d| d.len());
            vec![name, n.to_string(), created]
        }
        Object::Secret(s) => vec![
            name,
            s.type_.clone().unwrap_or_default(),
            s.data.as_ref().map_or(0, |d| d.len()).to_string(),
            created,
        ],
        Object::ServiceAccount(sa) => {
            vec![
                name,
                sa.secrets.as_ref().map_or(0, |s| s.len()).to_string(),
                created,
            ]
        }
        Object::Event(e) => event_row(e, name, now),
        Object::Lease(l) => {
            let holder = l
                .spec
                .as_ref()
                .and_then(|s| s.holder_identity.clone())
                .unwrap_or_default();
            vec![name, holder, created]
        }
        Object::PersistentVolume(pv) => {
            let spec = pv.spec.clone().unwrap_or_default();
            let claim = spec
                .claim_ref
                .as_ref()
                .map(|c| {
                    format!(
                        "{}/{}",
                        c.namespace.as_deref().unwrap_or(""),
                        c.name.as_deref().unwrap_or("")
                    )
                })
                .unwrap_or_default();
            let mut phase = pv
                .status
                .as_ref()
                .and_then(|s| s.phase.clone())
                .unwrap_or_default();
            if pv.metadata.deletion_timestamp.is_some() {
                phase = "Terminating".into();
            }
            let class = spec
                .storage_class_name
                .clone()
                .unwrap_or_else(|| beta_class(&pv.metadata.annotations));
            vec![
                name,
                qty(spec.capacity.as_ref().and_then(|c| c.get("storage"))),
                access_modes(spec.access_modes.as_deref().unwrap_or(&[])),
                spec.persistent_volume_reclaim_policy
                    .clone()
                    .unwrap_or_default(),
                phase,
                claim,
                class,
                or(spec.volume_attributes_class_name.as_deref(), "<unset>"),
                pv.status
                    .as_ref()
                    .and_then(|s| s.reason.clone())
                    .unwrap_or_default(),
                created,
                or(spec.volume_mode.as_deref(), "<unset>"),
            ]
        }
        Object::PersistentVolumeClaim(pvc) => {
            let spec = pvc.spec.clone().unwrap_or_default();
            let st = pvc.status.clone().unwrap_or_default();
            let mut phase = st.phase.clone().unwrap_or_default();
            if pvc.metadata.deletion_timestamp.is_some() {
                phase = "Terminating".into();
            }
            let volume = spec.volume_name.clone().unwrap_or_default();
            let (capacity, modes) = if volume.is_empty() {
                (String::new(), String::new())
            } else {
                (
                    qty(st.capacity.as_ref().and_then(|c| c.get("storage"))),
                    access_modes(st.access_modes.as_deref().unwrap_or(&[])),
                )
            };
            let class = spec
                .storage_class_name
                .clone()
                .unwrap_or_else(|| beta_class(&pvc.metadata.annotations));
            vec![
                name,
                phase,
                volume,
                capacity,
                modes,
                class,
                or(spec.volume_attributes_class_name.as_deref(), "<unset>"),
                created,
                or(spec.volume_mode.as_deref(), "<unset>"),
            ]
        }
        Object::StorageClass(sc) => {
            let annotations = sc.metadata.annotations.clone().unwrap_or_default();
            let is_default = [
                "storageclass.kubernetes.io/is-default-class",
                "storageclass.beta.kubernetes.io/is-default-class",
            ]
            .iter()
            .any(|k| annotations.get(*k).map(String::as_str) == Some("true"));
            let display = if is_default {
                format!("{name} (default)")
            } else {
                name
            };
            vec![
                display,
                sc.provisioner.clone(),
                or(sc.reclaim_policy.as_deref(), "Delete"),
                or(sc.volume_binding_mode.as_deref(), "Immediate"),
                sc.allow_volume_expansion.unwrap_or(false).to_string(),
                created,
            ]
        }
        Object::PriorityClass(pc) => vec![
            name,
            pc.value.to_string(),
            pc.global_default.unwrap_or(false).to_string(),
            created,
            pc.preemption_policy.clone().unwrap_or_default(),
        ],
        Object::Role(_)
        | Object::ClusterRole(_)
        | Object::LimitRange(_)
        | Object::CustomResourceDefinition(_) => {
            vec![name, created_at(obj.meta().creation_timestamp.as_ref())]
        }
        Object::RoleBinding(rb) => binding_row(
            name,
            created,
            &rb.role_ref.kind,
            &rb.role_ref.name,
            rb.subjects.as_deref(),
        ),
        Object::ClusterRoleBinding(rb) => binding_row(
            name,
            created,
            &rb.role_ref.kind,
            &rb.role_ref.name,
            rb.subjects.as_deref(),
        ),
        Object::ResourceQuota(rq) => {
            let st = rq.status.clone().unwrap_or_default();
            let hard = st.hard.unwrap_or_default();
            let used = st.used.unwrap_or_default();
            let (mut req, mut lim) = (Vec::new(), Vec::new());
            for (res, h) in &hard {
                let cell = format!("{res}: {}/{}", qty(used.get(res)), qty(Some(h)));
                if res.split('.').next() == Some("limits") && res.contains('.') {
                    lim.push(cell);
                } else {
                    req.push(cell);
                }
            }
            vec![name, created, req.join(", "), lim.join(", ")]
        }
        _ => vec![name, created],
    }
}

fn beta_class(annotations: &Option<BTreeMap<String, String>>) -> String {
    annotations
        .as_ref()
        .and_then(|a| a.get("volume.beta.kubernetes.io/storage-class").cloned())
        .unwrap_or_default()
}

fn access_modes(modes: &[String]) -> String {
    [
        ("ReadWriteOnce", "RWO"),
        ("ReadOnlyMany", "ROX"),
        ("ReadWriteMany", "RWX"),
        ("ReadWriteOncePod", "RWOP"),
    ]
    .iter()
    .filter(|(m, _)| modes.iter().any(|x| x == m))
    .map(|(_, s)| *s)
    .collect::<Vec<_>>()
    .join(",")
}

fn binding_row(
    name: String,
    created: String,
    kind: &str,
    role: &str,
    subjects: Option<&[Subject]>,
) -> Vec<String> {
    let (mut users, mut groups, mut sas) = (Vec::new(), Vec::new(), Vec::new());
    for s in subjects.unwrap_or(&[]) {
        match s.kind.as_str() {
            "ServiceAccount" => sas.push(format!(
                "{}/{}",
                s.namespace.as_deref().unwrap_or(""),
                s.name
            )),
            "User" => users.push(s.name.clone()),
            "Group" => groups.push(s.name.clone()),
            _ => {}
        }
    }
    vec![
        name,
        format!("{kind}/{role}"),
        created,
        users.join(", "),
        groups.join(", "),
        sas.join(", "),
    ]
}

fn node_row(n: &Node, name: String, created: String) -> Vec<String> {
    let st = n.status.clone().unwrap_or_default();
    let mut status: Vec<String> = Vec::new();
    if let Some(c) = st.conditions.iter().flatten().find(|c| c.type_ == "Ready") {
        status.push(if c.status == "True" {
            "Ready".into()
        } else {
            "NotReady".into()
        });
    }
    if status.is_empty() {
        status.push("Unknown".into());
    }
    if n.spec
        .as_ref()
        .and_then(|s| s.unschedulable)
        .unwrap_or(false)
    {
        status.push("SchedulingDisabled".into());
    }
    let roles = node_roles(n);
    let info = st.node_info.clone().unwrap_or_default();
    let address = |t: &str| {
        st.addresses
            .iter()
            .flatten()
            .find(|a| a.type_ == t)
            .map(|a| a.address.clone())
            .unwrap_or_else(|| "<none>".into())
    };
    vec![
        name,
        status.join(","),
        if roles.is_empty() {
            "<none>".into()
        } else {
            roles.join(",")
        },
        created,
        info.kubelet_version.clone(),
        address("InternalIP"),
        address("ExternalIP"),
        or(Some(&info.os_image), "<unknown>"),
        or(Some(&info.kernel_version), "<unknown>"),
        or(Some(&info.container_runtime_version), "<unknown>"),
    ]
}

/// Node roles from `node-role.kubernetes.io/<role>` and `kubernetes.io/role=<role>`, sorted.
pub fn node_roles(n: &Node) -> Vec<String> {
    let mut roles: Vec<String> = Vec::new();
    for (k, v) in n.metadata.labels.iter().flatten() {
        if let Some(role) = k.strip_prefix("node-role.kubernetes.io/") {
            if !role.is_empty() {
                roles.push(role.to_string());
            }
        } else if k == "kubernetes.io/role" && !v.is_empty() {
            roles.push(v.clone());
        }
    }
    roles.sort();
    roles.dedup();
    roles
}

fn service_row(s: &Service, name: String, created: String) -> Vec<String> {
    let spec = s.spec.clone().unwrap_or_default();
    let type_ = spec.type_.clone().unwrap_or_default();
    let cluster_ip = spec
        .cluster_ips
        .as_ref()
        .and_then(|ips| ips.first().cloned())
        .unwrap_or_else(|| "<none>".into());
    let external = service_external_ip(s);
    let ports = service_ports(s);
    vec![
        name,
        type_,
        cluster_ip,
        external,
        ports,
        created,
        format_labels(&spec.selector.clone().unwrap_or_default()),
    ]
}

/// The PORT(S) cell of a service: `port[:nodePort]/protocol`, comma-separated.
pub fn service_ports(s: &Service) -> String {
    let ports: Vec<String> = s
        .spec
        .iter()
        .flat_map(|spec| spec.ports.iter().flatten())
        .map(|p| {
            let proto = p.protocol.as_deref().unwrap_or("");
            match p.node_port {
                Some(np) if np > 0 => format!("{}:{}/{}", p.port, np, proto),
                _ => format!("{}/{}", p.port, proto),
            }
        })
        .collect();
    if ports.is_empty() {
        "<none>".into()
    } else {
        ports.join(",")
    }
}

/// The EXTERNAL-IP cell of a service (the apiserver always renders it unclipped).
pub fn service_external_ip(s: &Service) -> String {
    let spec = s.spec.clone().unwrap_or_default();
    let external_ips = spec.external_ips.clone().unwrap_or_default();
    match spec.type_.as_deref().unwrap_or("") {
        "ClusterIP" | "NodePort" => {
            if external_ips.is_empty() {
                "<none>".into()
            } else {
                external_ips.join(",")
            }
        }
        "LoadBalancer" => {
            let mut lb: Vec<String> = s
                .status
                .as_ref()
                .and_then(|st| st.load_balancer.as_ref())
                .and_then(|lb| lb.ingress.clone())
                .unwrap_or_default()
                .into_iter()
                .filter_map(|i| {
                    i.ip.filter(|x| !x.is_empty())
                        .or(i.hostname.filter(|x| !x.is_empty()))
                })
                .collect();
            lb.sort();
            lb.dedup();
            lb.extend(external_ips);
            if lb.is_empty() {
                "<pending>".into()
            } else {
                lb.join(",")
            }
        }
        "ExternalName" => spec.external_name.clone().unwrap_or_default(),
        _ => "<unknown>".into(),
    }
}

/// `formatEndpoints`: up to three `ip:port`, then `+ N more...`.
pub fn format_endpoints(e: &Endpoints) -> String {
    let subsets = e.subsets.clone().unwrap_or_default();
    if subsets.is_empty() {
        return "<none>".into();
    }
    let max = 3;
    let (mut list, mut more, mut count) = (Vec::new(), false, 0);
    for ss in &subsets {
        let addresses = ss.addresses.clone().unwrap_or_default();
        let ports = ss.ports.clone().unwrap_or_default();
        if ports.is_empty() {
            count += addresses.len();
            for a in &addresses {
                if list.len() == max {
                    more = true;
                    break;
                }
                list.push(a.ip.clone());
            }
            continue;
        }
        for p in &ports {
            count += addresses.len();
            for a in &addresses {
                if list.len() == max {
                    more = true;
                    break;
                }
                let host = if a.ip.contains(':') {
                    format!("[{}]", a.ip)
                } else {
                    a.ip.clone()
                };
                list.push(format!("{host}:{}", p.port));
            }
        }
    }
    let s = list.join(",");
    if more {
        format!("{s} + {} more...", count - max)
    } else {
        s
    }
}

fn list_with_more(list: Vec<String>, more: bool, count: usize, max: usize) -> String {
    let s = list.join(",");
    if more {
        return format!("{s} + {} more...", count - max);
    }
    if s.is_empty() {
        "<unset>".into()
    } else {
        s
    }
}

fn endpoint_slice_row(e: &EndpointSlice, name: String, created: String) -> Vec<String> {
    let max = 3;
    let (mut ports, mut more, mut count) = (Vec::new(), false, 0);
    for p in e.ports.iter().flatten() {
        if ports.len() < max {
            ports.push(match (p.port, &p.name) {
                (Some(n), _) => n.to_string(),
                (None, Some(n)) => n.clone(),
                _ => "*".into(),
            });
        } else if ports.len() == max {
            more = true;
        }
        count += 1;
    }
    let ports = list_with_more(ports, more, count, max);
    let (mut eps, mut more, mut count) = (Vec::new(), false, 0);
    for ep in &e.endpoints {
        for a in &ep.addresses {
            if eps.len() < max {
                eps.push(a.clone());
            } else if eps.len() == max {
                more = true;
            }
            count += 1;
        }
    }
    let eps = list_with_more(eps, more, count, max);
    vec![name, e.address_type.clone(), ports, eps, created]
}

fn event_row(e: &Event, name: String, now: Time) -> Vec<String> {
    let micro_age = |t: &k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime| {
        human_duration(now as i64 - (t.0.as_millisecond() - EPOCH_UNIX_MS))
    };
    let first = match (&e.first_timestamp, &e.event_time) {
        (Some(t), _) => human_duration(since(t, now)),
        (None, Some(t)) => micro_age(t),
        (None, None) => "<unknown>".into(),
    };
    let mut last = match &e.last_timestamp {
        Some(t) => human_duration(since(t, now)),
        None => first.clone(),
    };
    let mut count = e.count.unwrap_or(0);
    if let Some(series) = &e.series {
        last = series
            .last_observed_time
            .as_ref()
            .map_or("<unknown>".into(), micro_age);
        count = series.count.unwrap_or(0);
    } else if count == 0 {
        count = 1;
    }
    let io = &e.involved_object;
    let kind = io.kind.as_deref().unwrap_or("").to_lowercase();
    let target = match io.name.as_deref() {
        Some(n) if !n.is_empty() => format!("{kind}/{n}"),
        _ => kind,
    };
    let source = e.source.clone().unwrap_or_default();
    let component = or(
        source.component.as_deref(),
        e.reporting_component.as_deref().unwrap_or(""),
    );
    let host = or(
        source.host.as_deref(),
        e.reporting_instance.as_deref().unwrap_or(""),
    );
    let source = if host.is_empty() {
        component
    } else {
        format!("{component}, {host}")
    };
    vec![
        last,
        e.type_.clone().unwrap_or_default(),
        e.reason.clone().unwrap_or_default(),
        target,
        io.field_path.clone().unwrap_or_default(),
        source,
        e.message.clone().unwrap_or_default().trim().to_string(),
        first,
        count.to_string(),
        name,
    ]
}
