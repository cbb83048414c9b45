//! The admission chain the apiserver runs on writes: mutating plugins (defaulting,
//! ServiceAccount, DefaultTolerationSeconds, Priority, Service IP/port allocation) then
//! validation and validating plugins.

use std::collections::BTreeSet;
use std::net::Ipv4Addr;
use std::sync::Arc;

use k8s_openapi::api::core::v1::{LimitRange, ResourceQuota, ResourceQuotaStatus, ServiceAccount};
use k8s_openapi::api::scheduling::v1::PriorityClass;

use crate::api::{Status, StatusReason};
use crate::apiserver::admission::{
    defaultingressclass, defaulttolerationseconds, limitranger, namespacelifecycle, priority,
    resourcequota, serviceaccount, AdmissionError, Operation,
};
use crate::apiserver::field_error::{invalid_message, FieldError};
use crate::apiserver::server::ApiServer;
use crate::apiserver::watch::WatchCache;
use crate::apiserver::{defaults, validation};
use crate::object::{Kind, Object};
use crate::time::{Time, SECOND};

fn admission_status(e: AdmissionError) -> Status {
    let reason = if e.code() == 404 {
        StatusReason::NotFound
    } else {
        StatusReason::Forbidden
    };
    Status::new(e.code(), reason, e.message().to_string())
}

/// Typed objects of one kind in one namespace, from the watch cache.
fn typed<T: Clone>(
    cache: &WatchCache,
    kind: Kind,
    ns: &str,
    pick: fn(&Object) -> Option<&T>,
) -> Vec<T> {
    cache
        .list(kind, ns)
        .iter()
        .filter_map(|o| pick(o).cloned())
        .collect()
}

fn limit_ranges(cache: &WatchCache, ns: &str) -> Vec<LimitRange> {
    typed(cache, Kind::LimitRange, ns, |o| match o {
        Object::LimitRange(x) => Some(x),
        _ => None,
    })
}

/// `NamespaceLifecycle`: the namespace must exist and not be terminating.
pub fn namespace_lifecycle(cache: &WatchCache, op: Operation, o: &Object) -> Result<(), Status> {
    let ns_obj = cache
        .get(Kind::Namespace, "", o.namespace())
        .and_then(|n| match &**n {
            Object::Namespace(n) => Some(&**n),
            _ => None,
        });
    namespacelifecycle::admit(op, o.kind(), o.name(), o.namespace(), Some(o), ns_obj)
        .map_err(admission_status)
}

/// Mutating admission for a create, in upstream order: LimitRanger, ServiceAccount,
/// Priority, DefaultTolerationSeconds (after defaulting, which decoding does).
pub fn mutate_create(s: &mut ApiServer, o: &mut Object) -> Result<(), Status> {
    defaults::set_defaults(o);
    let ns = o.namespace().to_string();
    match o {
        Object::Pod(pod) => {
            limitranger::mutate_pod(pod, &limit_ranges(&s.cache, &ns));
            let accounts: Vec<ServiceAccount> =
                typed(&s.cache, Kind::ServiceAccount, &ns, |o| match o {
                    Object::ServiceAccount(x) => Some(x),
                    _ => None,
                });
            let suffix = s.random_suffix();
            serviceaccount::admit(pod, &accounts, &suffix).map_err(admission_status)?;
            let classes: Vec<PriorityClass> =
                typed(&s.cache, Kind::PriorityClass, "", |o| match o {
                    Object::PriorityClass(x) => Some(x),
                    _ => None,
                });
            priority::admit_pod(Operation::Create, pod, None, &classes)
                .map_err(admission_status)?;
            defaulttolerationseconds::admit(pod);
        }
        Object::Service(svc) => allocate_service(s, svc)?,
        Object::PriorityClass(pc) => admit_priority_class(s, Operation::Create, pc)?,
        Object::Ingress(ing) => {
            let classes: Vec<k8s_openapi::api::networking::v1::IngressClass> =
                typed(&s.cache, Kind::IngressClass, "", |o| match o {
                    Object::IngressClass(x) => Some(x),
                    _ => None,
                });
            defaultingressclass::admit(ing, &classes);
        }
        _ => {}
    }
    Ok(())
}

/// `Priority` admission of a PriorityClass: at most one global default.
fn admit_priority_class(s: &ApiServer, op: Operation, pc: &PriorityClass) -> Result<(), Status> {
    let classes: Vec<PriorityClass> = typed(&s.cache, Kind::PriorityClass, "", |o| match o {
        Object::PriorityClass(x) => Some(x),
        _ => None,
    });
    priority::admit_priority_class(op, pc, &classes).map_err(admission_status)
}

/// Mutating admission for an update.
pub fn mutate_update(s: &mut ApiServer, o: &mut Object, old: &Object) -> Result<(), Status> {
    defaults::set_defaults(o);
    if let Object::PriorityClass(pc) = &*o {
        admit_priority_class(s, Operation::Update, pc)?;
    }
    if let (Object::Pod(new), Object::Pod(old)) = (&mut *o, old) {
        priority::admit_pod(Operation::Update, new, Some(old), &[]).map_err(admission_status)?;
    }
    if let (Object::Service(new), Object::Service(old)) = (o, old) {
        // An update that leaves clusterIP empty keeps the allocated one.
        let (ns, os) = (
            new.spec.get_or_insert_with(Default::default),
            old.spec.clone().unwrap_or_default(),
        );
        if ns.cluster_ip.as_deref().unwrap_or("").is_empty() {
            ns.cluster_ip = os.cluster_ip.clone();
            ns.cluster_ips = os.cluster_ips.clone();
        }
        reallocate_service(s, new, old)?;
    }
    Ok(())
}

fn invalid(o: &Object, errs: &[FieldError]) -> Status {
    let info = o.kind().info();
    let mut s = Status::new(
        422,
        StatusReason::Invalid,
        invalid_message(info.kind, info.group, o.name(), errs),
    );
    s.causes = errs.iter().map(|e| e.to_string()).collect();
    s.details_kind = info.kind.to_string();
    s.details_name = o.name().to_string();
    s
}

/// Validation and validating admission for a create: LimitRanger, then ResourceQuota.
pub fn validate_create(s: &mut ApiServer, o: &Object, now: Time) -> Result<(), Status> {
    let errs = validation::validate_create(o);
    if !errs.is_empty() {
        return Err(invalid(o, &errs));
    }
    if let Object::Pod(p) = o {
        limitranger::validate_pod(p, &limit_ranges(&s.cache, o.namespace()))
            .map_err(admission_status)?;
    }
    envelope(s, o, Operation::Create)?;
    forget_stored_charges(s, now);
    quota(&s.cache, &s.quota_charges, Operation::Create, o, None)
}

/// How long a charge waits for its object to reach the watch cache: past the request
/// timeout the write has failed or been abandoned.
const CHARGE_TTL: Time = 10 * SECOND;

/// Drops the charges whose objects the cache now holds, or that are too old to land.
fn forget_stored_charges(s: &mut ApiServer, now: Time) {
    let cache = &s.cache;
    s.quota_charges.retain(|(at, o)| {
        now.saturating_sub(*at) < CHARGE_TTL
            && cache
                .get(o.kind(), o.namespace(), o.name())
                .is_none_or(|c| c.meta().uid != o.meta().uid)
    });
}

/// Records an admitted create in a namespace with quotas until the cache sees it.
pub fn charge_quota(s: &mut ApiServer, o: &Arc<Object>, now: Time) {
    let ns = o.namespace();
    if !ns.is_empty() && !s.cache.list(Kind::ResourceQuota, ns).is_empty() {
        s.quota_charges.push((now, o.clone()));
    }
}

/// `ResourceQuota`: charges the object against the namespace's quotas, whose usage is
/// recomputed from the cache (there is no quota controller keeping `status.used`).
fn quota(
    cache: &WatchCache,
    charges: &[(Time, Arc<Object>)],
    op: Operation,
    o: &Object,
    old: Option<&Object>,
) -> Result<(), Status> {
    let ns = o.namespace();
    if ns.is_empty() {
        return Ok(());
    }
    let mut quotas: Vec<ResourceQuota> = typed(cache, Kind::ResourceQuota, ns, |o| match o {
        Object::ResourceQuota(x) => Some(x),
        _ => None,
    });
    if quotas.is_empty() {
        return Ok(());
    }
    for q in &mut quotas {
        let hard = q.spec.as_ref().and_then(|s| s.hard.clone());
        // Usage starts at zero for every constrained resource, then existing objects
        // are charged (there is no quota controller keeping `status.used`).
        let used = hard.as_ref().map(|h| {
            h.keys()
                .map(|k| {
                    (
                        k.clone(),
                        k8s_openapi::apimachinery::pkg::api::resource::Quantity("0".into()),
                    )
                })
                .collect()
        });
        q.status = Some(ResourceQuotaStatus { hard, used });
    }
    let in_flight = charges
        .iter()
        .filter(|(_, c)| c.namespace() == ns)
        .map(|(_, c)| c.clone());
    for kind in [
        Kind::Pod,
        Kind::Service,
        Kind::ConfigMap,
        Kind::Secret,
        Kind::PersistentVolumeClaim,
        Kind::Deployment,
        Kind::ReplicaSet,
    ] {
        let stored = cache.list(kind, ns);
        let pending = in_flight.clone().filter(|c| c.kind() == kind);
        for existing in stored.into_iter().chain(pending) {
            if existing.name() == o.name() && existing.kind() == o.kind() {
                continue;
            }
            let active = !matches!(&*existing, Object::Pod(p) if matches!(p.status.as_ref().and_then(|s| s.phase.as_deref()), Some("Succeeded") | Some("Failed")));
            if !active {
                continue;
            }
            if let Ok(updated) = resourcequota::check(Operation::Create, &existing, None, &quotas) {
                for u in updated {
                    if let Some(q) = quotas
                        .iter_mut()
                        .find(|q| q.metadata.name == u.metadata.name)
                    {
                        *q = u;
                    }
                }
            }
        }
    }
    resourcequota::check(op, o, old, &quotas)
        .map(|_| ())
        .map_err(admission_status)
}

/// Validation and validating admission for an update (of the `status` subresource when
/// `status`).
pub fn validate_update(
    s: &ApiServer,
    new: &Object,
    old: &Object,
    status: bool,
) -> Result<(), Status> {
    let errs = if status {
        validation::validate_status_update(new, old)
    } else {
        validation::validate_update(new, old)
    };
    if errs.is_empty() {
        envelope(s, new, Operation::Update)
    } else {
        Err(invalid(new, &errs))
    }
}

/// kubeloop's envelope (not an upstream plugin): at most [`envelope::MAX_PODS`] pods in
/// the cluster (the world's [`crate::cluster::ClusterConfig::max_pods`]), and no workload that asks for more. Upstream's controllers would create
/// such pods for hours; one browser tab cannot hold them, so the request is refused up
/// front, naming the limit.
fn envelope(s: &ApiServer, o: &Object, op: Operation) -> Result<(), Status> {
    use crate::apiserver::admission::forbidden;
    let max_pods = s.max_pods;
    let asked = match o {
        Object::Deployment(d) => d.spec.as_ref().and_then(|s| s.replicas),
        Object::ReplicaSet(r) => r.spec.as_ref().and_then(|s| s.replicas),
        Object::StatefulSet(x) => x.spec.as_ref().and_then(|s| s.replicas),
        Object::Job(j) => j.spec.as_ref().and_then(|s| s.parallelism),
        _ => None,
    };
    let field = if o.kind() == Kind::Job {
        "spec.parallelism"
    } else {
        "spec.replicas"
    };
    if let Some(n) = asked.filter(|&n| n as i64 > max_pods as i64) {
        let reason = format!(
            "{field}: {n} is more pods than kubeloop simulates (at most {max_pods} in the cluster)"
        );
        return Err(admission_status(forbidden(o, &reason)));
    }
    if op == Operation::Create && o.kind() == Kind::Pod && s.cache.count(Kind::Pod) >= max_pods {
        let reason =
            format!("the cluster already holds {max_pods} pods, the most kubeloop simulates");
        return Err(admission_status(forbidden(o, &reason)));
    }
    Ok(())
}

/// A Service allocation failure as the apiserver reports it: Invalid, one cause.
fn invalid_service(name: &str, cause: String) -> Status {
    let mut s = Status::new(
        422,
        StatusReason::Invalid,
        format!("Service \"{name}\" is invalid: {cause}"),
    );
    s.causes = vec![cause];
    s.details_kind = "Service".into();
    s.details_name = name.to_string();
    s
}

const SERVICE_BASE: u32 = 0x0A60_0000; // 10.96.0.0
const SERVICE_SIZE: u32 = 1 << 20; // /12
const NODE_PORT_BASE: i32 = 30000;
const NODE_PORT_SIZE: i32 = 2768;

fn allocate_service(
    s: &mut ApiServer,
    svc: &mut k8s_openapi::api::core::v1::Service,
) -> Result<(), Status> {
    let name = svc.metadata.name.clone().unwrap_or_default();
    let spec = svc.spec.get_or_insert_with(Default::default);
    let type_ = spec.type_.clone().unwrap_or_else(|| "ClusterIP".into());
    if type_ == "ExternalName" {
        return Ok(());
    }
    let mut used_ips = BTreeSet::new();
    for o in s.cache.iter(Kind::Service) {
        if let Object::Service(x) = &**o {
            if let Some(ip) = x
                .spec
                .as_ref()
                .and_then(|sp| sp.cluster_ip.as_deref())
                .and_then(|i| i.parse::<Ipv4Addr>().ok())
            {
                used_ips.insert(u32::from(ip));
            }
        }
    }
    let mut used_ports = used_node_ports(s, None);
    let requested = spec.cluster_ip.clone().unwrap_or_default();
    if requested.is_empty() {
        let ip = loop {
            // Dynamic allocations take a random free address above the static band.
            let off = 16 + s.rng.intn(u64::from(SERVICE_SIZE - 18)) as u32;
            if !used_ips.contains(&(SERVICE_BASE + off)) {
                break SERVICE_BASE + off;
            }
        };
        let ip = Ipv4Addr::from(ip).to_string();
        spec.cluster_ip = Some(ip.clone());
        spec.cluster_ips = Some(vec![ip]);
    } else if requested != "None" {
        let ip: Ipv4Addr = requested.parse().map_err(|_| {
            invalid_service(&name, format!("spec.clusterIPs[0]: Invalid value: \"{requested}\": must be a valid IP address"))
        })?;
        let v = u32::from(ip);
        if !(SERVICE_BASE..SERVICE_BASE + SERVICE_SIZE).contains(&v) {
            return Err(invalid_service(&name, format!("spec.clusterIPs: Invalid value: []string{{\"{requested}\"}}: failed to allocate IP {requested}: the provided IP ({requested}) is not in the valid range. The range of valid IPs is 10.96.0.0/12")));
        }
        if used_ips.contains(&v) {
            return Err(invalid_service(&name, format!("spec.clusterIPs: Invalid value: []string{{\"{requested}\"}}: failed to allocate IP {requested}: provided IP is already allocated")));
        }
        spec.cluster_ips = Some(vec![requested.clone()]);
    }
    allocate_node_ports(s, spec, &name, &mut used_ports)
}

/// Every nodePort and healthCheckNodePort the stored Services hold, but `except`'s
/// (`namespace/name`, the Service being updated).
fn used_node_ports(s: &ApiServer, except: Option<(&str, &str)>) -> BTreeSet<i32> {
    let mut used = BTreeSet::new();
    for o in s.cache.iter(Kind::Service) {
        let Object::Service(x) = &**o else { continue };
        if except.is_some_and(|(ns, n)| {
            x.metadata.namespace.as_deref() == Some(ns) && x.metadata.name.as_deref() == Some(n)
        }) {
            continue;
        }
        let Some(sp) = &x.spec else { continue };
        used.extend(sp.ports.iter().flatten().filter_map(|p| p.node_port));
        used.extend(sp.health_check_node_port.filter(|p| *p != 0));
    }
    used
}

fn free_node_port(s: &mut ApiServer, used: &mut BTreeSet<i32>) -> i32 {
    let np = loop {
        let c = NODE_PORT_BASE + s.rng.intn(NODE_PORT_SIZE as u64) as i32;
        if !used.contains(&c) {
            break c;
        }
    };
    used.insert(np);
    np
}

/// The node port allocator: a nodePort for every port of a NodePort or LoadBalancer
/// Service that has none, and the healthCheckNodePort of a LoadBalancer with
/// `externalTrafficPolicy: Local` (from the same range, as upstream allocates it).
fn allocate_node_ports(
    s: &mut ApiServer,
    spec: &mut k8s_openapi::api::core::v1::ServiceSpec,
    name: &str,
    used: &mut BTreeSet<i32>,
) -> Result<(), Status> {
    let type_ = spec.type_.clone().unwrap_or_else(|| "ClusterIP".into());
    if type_ == "NodePort" || type_ == "LoadBalancer" {
        for p in spec.ports.iter_mut().flatten() {
            match p.node_port {
                Some(np) if np != 0 => {
                    if used.contains(&np) {
                        return Err(invalid_service(name, format!("spec.ports[0].nodePort: Invalid value: {np}: provided port is already allocated")));
                    }
                    used.insert(np);
                }
                _ => p.node_port = Some(free_node_port(s, used)),
            }
        }
    }
    let local = spec.external_traffic_policy.as_deref() == Some("Local");
    if type_ == "LoadBalancer" && local {
        match spec.health_check_node_port {
            Some(hc) if hc != 0 => {
                if used.contains(&hc) {
                    return Err(invalid_service(name, format!("spec.healthCheckNodePort: Invalid value: {hc}: failed to allocate requested HealthCheck NodePort {hc}: provided port is already allocated")));
                }
                used.insert(hc);
            }
            _ => spec.health_check_node_port = Some(free_node_port(s, used)),
        }
    }
    Ok(())
}

/// An update keeps the node ports the Service already holds (a patch or apply that
/// leaves them out), allocates what a type change now needs, and drops what it no
/// longer needs (upstream's `patchAllocatedValues` and `dropTypeDependentFields`).
fn reallocate_service(
    s: &mut ApiServer,
    new: &mut k8s_openapi::api::core::v1::Service,
    old: &k8s_openapi::api::core::v1::Service,
) -> Result<(), Status> {
    let ns = new.metadata.namespace.clone().unwrap_or_default();
    let name = new.metadata.name.clone().unwrap_or_default();
    let os = old.spec.clone().unwrap_or_default();
    let spec = new.spec.get_or_insert_with(Default::default);
    let type_ = spec.type_.clone().unwrap_or_else(|| "ClusterIP".into());
    let wants_ports = type_ == "NodePort" || type_ == "LoadBalancer";
    let old_ports = os.ports.clone().unwrap_or_default();
    for p in spec.ports.iter_mut().flatten() {
        let before = old_ports
            .iter()
            .find(|o| o.port == p.port && o.protocol == p.protocol)
            .and_then(|o| o.node_port);
        if !wants_ports {
            if p.node_port.is_some() && p.node_port == before {
                p.node_port = None;
            }
        } else if p.node_port.unwrap_or(0) == 0 {
            p.node_port = before;
        }
    }
    if !wants_ports
        && spec.external_traffic_policy.is_some()
        && spec.external_traffic_policy == os.external_traffic_policy
    {
        spec.external_traffic_policy = None;
    }
    if type_ != "LoadBalancer" {
        if spec.allocate_load_balancer_node_ports.is_some()
            && spec.allocate_load_balancer_node_ports == os.allocate_load_balancer_node_ports
        {
            spec.allocate_load_balancer_node_ports = None;
        }
        if spec.load_balancer_class.is_some() && spec.load_balancer_class == os.load_balancer_class
        {
            spec.load_balancer_class = None;
        }
    }
    let local = spec.external_traffic_policy.as_deref() == Some("Local");
    if type_ == "LoadBalancer" && local {
        if spec.health_check_node_port.unwrap_or(0) == 0 {
            spec.health_check_node_port = os.health_check_node_port;
        }
    } else if spec.health_check_node_port.is_some()
        && spec.health_check_node_port == os.health_check_node_port
    {
        spec.health_check_node_port = None;
    }
    if type_ == "ExternalName" {
        return Ok(());
    }
    let mut used = used_node_ports(s, Some((&ns, &name)));
    allocate_node_ports(s, spec, &name, &mut used)
}
