//! The admission chain the apiserver runs on writes: mutating plugins (defaulting,
//! ServiceAccount, DefaultTolerationSeconds, Priority, Service IP/port allocation) then
//! validation and validating plugins.

use std::collections::BTreeSet;
use std::net::Ipv4Addr;

use crate::api::{Status, StatusReason};
use crate::apiserver::field_error::{invalid_message, FieldError};
use crate::apiserver::server::ApiServer;
use crate::apiserver::{defaults, validation};
use crate::object::{Kind, Object};

/// Mutating admission for a create.
pub fn mutate_create(s: &mut ApiServer, o: &mut Object) -> Result<(), Status> {
    defaults::set_defaults(o);
    if let Object::Service(svc) = o {
        allocate_service(s, svc)?;
    }
    Ok(())
}

/// Mutating admission for an update.
pub fn mutate_update(_s: &mut ApiServer, o: &mut Object, old: &Object) -> Result<(), Status> {
    defaults::set_defaults(o);
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

/// Validation and validating admission for a create.
pub fn validate_create(_s: &ApiServer, o: &Object) -> Result<(), Status> {
    let errs = validation::validate_create(o);
    if errs.is_empty() {
        Ok(())
    } else {
        Err(invalid(o, &errs))
    }
}

/// Validation and validating admission for an update.
pub fn validate_update(_s: &ApiServer, new: &Object, old: &Object) -> Result<(), Status> {
    let errs = validation::validate_update(new, old);
    if errs.is_empty() {
        Ok(())
    } else {
        Err(invalid(new, &errs))
    }
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
    let mut used_ports = BTreeSet::new();
    for o in s.cache.iter(Kind::Service) {
        if let Object::Service(x) = &**o {
            if let Some(sp) = &x.spec {
                if let Some(ip) = sp
                    .cluster_ip
                    .as_deref()
                    .and_then(|i| i.parse::<Ipv4Addr>().ok())
                {
                    used_ips.insert(u32::from(ip));
                }
                for p in sp.ports.iter().flatten() {
                    if let Some(np) = p.node_port {
                        used_ports.insert(np);
                    }
                }
            }
        }
    }
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
            Status::new(
                422,
                StatusReason::Invalid,
                format!("Service \"{name}\" is invalid: spec.clusterIPs[0]: Invalid value: \"{requested}\": must be a valid IP address"),
            )
        })?;
        let v = u32::from(ip);
        if !(SERVICE_BASE..SERVICE_BASE + SERVICE_SIZE).contains(&v) {
            return Err(Status::new(
                422,
                StatusReason::Invalid,
                format!("Service \"{name}\" is invalid: spec.clusterIPs: Invalid value: []string{{\"{requested}\"}}: failed to allocate IP {requested}: the provided IP ({requested}) is not in the valid range. The range of valid IPs is 10.96.0.0/12"),
            ));
        }
        if used_ips.contains(&v) {
            return Err(Status::new(
                422,
                StatusReason::Invalid,
                format!("Service \"{name}\" is invalid: spec.clusterIPs: Invalid value: []string{{\"{requested}\"}}: failed to allocate IP {requested}: provided IP is already allocated"),
            ));
        }
        spec.cluster_ips = Some(vec![requested.clone()]);
    }
    if type_ == "NodePort" || type_ == "LoadBalancer" {
        for p in spec.ports.iter_mut().flatten() {
            match p.node_port {
                Some(np) if np != 0 => {
                    if used_ports.contains(&np) {
                        return Err(Status::new(
                            422,
                            StatusReason::Invalid,
                            format!("Service \"{name}\" is invalid: spec.ports[0].nodePort: Invalid value: {np}: provided port is already allocated"),
                        ));
                    }
                    used_ports.insert(np);
                }
                _ => {
                    let np = loop {
                        let c = NODE_PORT_BASE + s.rng.intn(NODE_PORT_SIZE as u64) as i32;
                        if !used_ports.contains(&c) {
                            break c;
                        }
                    };
                    used_ports.insert(np);
                    p.node_port = Some(np);
                }
            }
        }
    }
    Ok(())
}
