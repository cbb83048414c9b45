//! Service, Endpoints and EndpointSlice validation.

use std::collections::BTreeSet;
use std::net::IpAddr;

use k8s_openapi::api::core::v1::{Service, ServicePort};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::container::validate_protocol;
use super::dns::validate_ip;
use super::meta::*;
use super::names::*;
use super::probes::validate_port_num_or_name;
use crate::apiserver::field_error::{BadValue, FieldError, GoJson, Path};

/// The default `--service-node-port-range`.
pub const NODE_PORT_RANGE: (i32, i32) = (30000, 32767);

/// The node-port allocator's range check, which runs before validation on create: when it
/// fails, the apiserver returns only these errors.
pub fn validate_node_port_range(svc: &Service, lo: i32, hi: i32) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let spec = svc.spec.clone().unwrap_or_default();
    for (i, p) in spec.ports.iter().flatten().enumerate() {
        let np = p.node_port.unwrap_or(0);
        if np != 0 && !(lo..=hi).contains(&np) {
            errs.push(FieldError::invalid(
                &Path::new("spec").child("ports").index(i).child("nodePort"),
                np,
                &format!(
                    "provided port is not in the valid range. The range of valid ports is {lo}-{}",
                    hi
                ),
            ));
        }
    }
    errs
}

fn is_headless(cluster_ips: &[String]) -> bool {
    cluster_ips.len() == 1 && cluster_ips[0] == "None"
}

fn service_port_key(p: &ServicePort) -> GoJson {
    // Upstream reports the internal core.ServicePort used as the map key (Go field names).
    GoJson::obj(vec![
        ("Name", GoJson::str("")),
        ("Protocol", GoJson::str(p.protocol.as_deref().unwrap_or(""))),
        ("AppProtocol", GoJson::Null),
        ("Port", GoJson::Int(i64::from(p.port))),
        ("TargetPort", GoJson::Int(0)),
        ("NodePort", GoJson::Int(0)),
    ])
}

/// `ValidateService`.
pub fn validate_service(svc: &Service) -> Vec<FieldError> {
    let mut errs = validate_object_meta(
        &svc.metadata,
        true,
        name_is_dns1035_label,
        &Path::new("metadata"),
    );
    let spec = svc.spec.clone().unwrap_or_default();
    let sp = Path::new("spec");
    let ty = spec.type_.clone().unwrap_or_default();
    let cluster_ips = spec.cluster_ips.clone().unwrap_or_default();
    let headless = is_headless(&cluster_ips);
    let ports = spec.ports.clone().unwrap_or_default();
    if ports.is_empty() && !headless && ty != "ExternalName" {
        errs.push(FieldError::required(&sp.child("ports"), ""));
    }
    match ty.as_str() {
        "LoadBalancer" | "NodePort" if headless => {
            errs.push(FieldError::invalid(
                &sp.child("clusterIPs").index(0),
                "None",
                &format!("may not be set to 'None' for {ty} services"),
            ));
        }
        "ExternalName" => {
            if !cluster_ips.is_empty() {
                errs.push(FieldError::forbidden(
                    &sp.child("clusterIPs"),
                    "may not be set for ExternalName services",
                ));
            }
            if spec.ip_families.as_ref().is_some_and(|f| !f.is_empty()) {
                errs.push(FieldError::forbidden(
                    &sp.child("ipFamilies"),
                    "may not be set for ExternalName services",
                ));
            }
            if spec.ip_family_policy.is_some() {
                errs.push(FieldError::forbidden(
                    &sp.child("ipFamilyPolicy"),
                    "may not be set for ExternalName services",
                ));
            }
            let name = spec.external_name.clone().unwrap_or_default();
            let cname = name.strip_suffix('.').unwrap_or(&name);
            if cname.is_empty() {
                errs.push(FieldError::required(&sp.child("externalName"), ""));
            } else {
                errs.extend(validate_dns1123_subdomain(cname, &sp.child("externalName")));
            }
        }
        _ => {}
    }
    let mut names = BTreeSet::new();
    for (i, p) in ports.iter().enumerate() {
        let pp = sp.child("ports").index(i);
        let name = p.name.as_deref().unwrap_or("");
        if ports.len() > 1 && name.is_empty() {
            errs.push(FieldError::required(&pp.child("name"), ""));
        } else if !name.is_empty() {
            errs.extend(validate_dns1123_label(name, &pp.child("name")));
            if !names.insert(name.to_string()) {
                errs.push(FieldError::duplicate(&pp.child("name"), name));
            }
        }
        for m in is_valid_port_num(i64::from(p.port)) {
            errs.push(FieldError::invalid(&pp.child("port"), p.port, &m));
        }
        errs.extend(validate_protocol(
            p.protocol.as_deref(),
            &pp.child("protocol"),
        ));
        errs.extend(validate_port_num_or_name(
            p.target_port.as_ref().unwrap_or(&IntOrString::Int(0)),
            &pp.child("targetPort"),
        ));
        if let Some(ap) = p.app_protocol.as_deref() {
            errs.extend(validate_qualified_name(ap, &pp.child("appProtocol")));
        }
    }
    errs.extend(validate_labels(
        spec.selector.as_ref(),
        &sp.child("selector"),
    ));
    match spec.session_affinity.as_deref().unwrap_or("") {
        "" => errs.push(FieldError::required(&sp.child("sessionAffinity"), "")),
        "ClientIP" => {
            let cp = sp.child("sessionAffinityConfig");
            match spec
                .session_affinity_config
                .as_ref()
                .map(|c| c.client_ip.as_ref())
            {
                None => errs.push(FieldError::required(
                    &cp,
                    "when session affinity type is ClientIP",
                )),
                Some(None) => errs.push(FieldError::required(
                    &cp.child("clientIP"),
                    "when session affinity type is ClientIP",
                )),
                Some(Some(c)) => match c.timeout_seconds {
                    None => errs.push(FieldError::required(
                        &cp.child("clientIP").child("timeoutSeconds"),
                        "when session affinity type is ClientIP",
                    )),
                    Some(t) if t <= 0 || t > 86400 => errs.push(FieldError::invalid(
                        &cp.child("clientIP").child("timeoutSeconds"),
                        t,
                        "must be greater than 0 and less than 86400",
                    )),
                    Some(_) => {}
                },
            }
        }
        "None" => {
            if spec.session_affinity_config.is_some() {
                errs.push(FieldError::forbidden(
                    &sp.child("sessionAffinityConfig"),
                    "must not be set when session affinity is None",
                ));
            }
        }
        other => errs.push(FieldError::not_supported(
            &sp.child("sessionAffinity"),
            BadValue::typed_str(other),
            &["ClientIP", "None"],
        )),
    }
    errs.extend(validate_cluster_ips(&spec, &ty, &sp));
    for (i, ip) in spec.external_ips.iter().flatten().enumerate() {
        let ipp = sp.child("externalIPs").index(i);
        let e = validate_ip(ip, &ipp);
        if e.is_empty() {
            errs.extend(validate_non_special_ip(ip, &ipp));
        } else {
            errs.extend(e);
        }
    }
    match ty.as_str() {
        "" => errs.push(FieldError::required(&sp.child("type"), "")),
        "ClusterIP" | "NodePort" | "LoadBalancer" | "ExternalName" => {}
        other => errs.push(FieldError::not_supported(
            &sp.child("type"),
            BadValue::typed_str(other),
            &["ClusterIP", "ExternalName", "LoadBalancer", "NodePort"],
        )),
    }
    if ty == "ClusterIP" {
        for (i, p) in ports.iter().enumerate() {
            if p.node_port.unwrap_or(0) != 0 {
                errs.push(FieldError::forbidden(
                    &sp.child("ports").index(i).child("nodePort"),
                    "may not be used when `type` is 'ClusterIP'",
                ));
            }
        }
    }
    let mut node_ports = BTreeSet::new();
    for (i, p) in ports.iter().enumerate() {
        let np = p.node_port.unwrap_or(0);
        if np != 0 && !node_ports.insert((p.protocol.clone(), np)) {
            errs.push(FieldError::duplicate(
                &sp.child("ports").index(i).child("nodePort"),
                np,
            ));
        }
    }
    let mut seen = BTreeSet::new();
    for (i, p) in ports.iter().enumerate() {
        if !seen.insert((p.protocol.clone(), p.port)) {
            errs.push(FieldError::duplicate(
                &sp.child("ports").index(i),
                service_port_key(p),
            ));
        }
    }
    if spec
        .load_balancer_source_ranges
        .as_ref()
        .is_some_and(|r| !r.is_empty())
        && ty != "LoadBalancer"
    {
        errs.push(FieldError::forbidden(
            &sp.child("LoadBalancerSourceRanges"),
            "may only be used when `type` is 'LoadBalancer'",
        ));
    }
    if spec.allocate_load_balancer_node_ports.is_some() && ty != "LoadBalancer" {
        errs.push(FieldError::forbidden(
            &sp.child("allocateLoadBalancerNodePorts"),
            "may only be used when `type` is 'LoadBalancer'",
        ));
    }
    if ty == "LoadBalancer" && spec.allocate_load_balancer_node_ports.is_none() {
        errs.push(FieldError::required(
            &Path::new("allocateLoadBalancerNodePorts"),
            "",
        ));
    }
    if ty == "LoadBalancer" {
        if let Some(c) = spec.load_balancer_class.as_deref() {
            errs.extend(validate_qualified_name(c, &sp.child("loadBalancerClass")));
        }
    } else if spec.load_balancer_class.is_some() {
        errs.push(FieldError::forbidden(
            &sp.child("loadBalancerClass"),
            "may only be used when `type` is 'LoadBalancer'",
        ));
    }
    let accessible = ty == "LoadBalancer"
        || ty == "NodePort"
        || (ty == "ClusterIP" && spec.external_ips.as_ref().is_some_and(|e| !e.is_empty()));
    let etp = spec.external_traffic_policy.clone().unwrap_or_default();
    if !accessible {
        if !etp.is_empty() {
            errs.push(FieldError::invalid(
                &sp.child("externalTrafficPolicy"),
                BadValue::typed_str(&etp),
                "may only be set for externally-accessible services",
            ));
        }
    } else if etp.is_empty() {
        errs.push(FieldError::required(&sp.child("externalTrafficPolicy"), ""));
    } else if etp != "Cluster" && etp != "Local" {
        errs.push(FieldError::not_supported(
            &sp.child("externalTrafficPolicy"),
            BadValue::typed_str(&etp),
            &["Cluster", "Local"],
        ));
    }
    let hc = spec.health_check_node_port.unwrap_or(0);
    if ty == "LoadBalancer" && etp == "Local" {
        if hc == 0 {
            errs.push(FieldError::required(&sp.child("healthCheckNodePort"), ""));
        } else {
            for m in is_valid_port_num(i64::from(hc)) {
                errs.push(FieldError::invalid(
                    &sp.child("healthCheckNodePort"),
                    hc,
                    &m,
                ));
            }
        }
    } else if hc != 0 {
        errs.push(FieldError::invalid(
            &sp.child("healthCheckNodePort"),
            hc,
            "may only be set when `type` is 'LoadBalancer' and `externalTrafficPolicy` is 'Local'",
        ));
    }
    match spec.internal_traffic_policy.as_deref() {
        None if matches!(ty.as_str(), "NodePort" | "LoadBalancer" | "ClusterIP") => {
            errs.push(FieldError::required(&sp.child("internalTrafficPolicy"), ""));
        }
        Some(p) if p != "Cluster" && p != "Local" => {
            errs.push(FieldError::not_supported(
                &sp.child("internalTrafficPolicy"),
                BadValue::typed_str(p),
                &["Cluster", "Local"],
            ));
        }
        _ => {}
    }
    if let Some(td) = spec
        .traffic_distribution
        .as_deref()
        .filter(|t| !matches!(*t, "PreferClose" | "PreferSameZone" | "PreferSameNode"))
    {
        errs.push(FieldError::not_supported(
            &sp.child("trafficDistribution"),
            td,
            &["PreferClose", "PreferSameZone", "PreferSameNode"],
        ));
    }
    errs
}

/// `ValidateNonSpecialIP` (external IPs and endpoints).
pub fn validate_non_special_ip(ip: &str, path: &Path) -> Vec<FieldError> {
    let Ok(addr) = ip.parse::<IpAddr>() else {
        return vec![FieldError::invalid(path, ip, "must be a valid IP address")];
    };
    let mut errs = Vec::new();
    if addr.is_unspecified() {
        errs.push(FieldError::invalid(
            path,
            ip,
            &format!("may not be unspecified ({ip})"),
        ));
    }
    if addr.is_loopback() {
        errs.push(FieldError::invalid(
            path,
            ip,
            "may not be in the loopback range (127.0.0.0/8, ::1/128)",
        ));
    }
    let link_local = match addr {
        IpAddr::V4(v4) => v4.is_link_local(),
        IpAddr::V6(v6) => (v6.segments()[0] & 0xffc0) == 0xfe80,
    };
    if link_local {
        errs.push(FieldError::invalid(
            path,
            ip,
            "may not be in the link-local range (169.254.0.0/16, fe80::/10)",
        ));
    }
    let ll_multicast = match addr {
        IpAddr::V4(v4) => v4.octets()[0] == 224 && v4.octets()[1] == 0 && v4.octets()[2] == 0,
        IpAddr::V6(v6) => (v6.segments()[0] & 0xff0f) == 0xff02,
    };
    if ll_multicast {
        errs.push(FieldError::invalid(
            path,
            ip,
            "may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)",
        ));
    }
    errs
}

/// `ValidateServiceClusterIPsRelatedFields`.
fn validate_cluster_ips(
    spec: &k8s_openapi::api::core::v1::ServiceSpec,
    ty: &str,
    sp: &Path,
) -> Vec<FieldError> {
    if ty == "ExternalName" {
        return Vec::new();
    }
    let mut errs = Vec::new();
    let cp = sp.child("clusterIPs");
    let ips = spec.cluster_ips.clone().unwrap_or_default();
    let ips_value = || BadValue::string_list(spec.cluster_ips.as_deref());
    let cip = spec.cluster_ip.clone().unwrap_or_default();
    if !cip.is_empty() {
        if ips.is_empty() {
            errs.push(FieldError::required(&cp, ""));
        } else if ips[0] != cip {
            errs.push(FieldError::invalid(
                &cp,
                ips_value(),
                "first value must match `clusterIP`",
            ));
        }
    } else if !ips.is_empty() {
        errs.push(FieldError::invalid(
            &cp,
            ips_value(),
            "must be empty when `clusterIP` is not specified",
        ));
    }
    let mut seen = BTreeSet::new();
    for (i, f) in spec.ip_families.iter().flatten().enumerate() {
        let fp = sp.child("ipFamilies").index(i);
        if f != "IPv4" && f != "IPv6" {
            errs.push(FieldError::not_supported(
                &fp,
                BadValue::typed_str(f),
                &["IPv4", "IPv6"],
            ));
        }
        if !seen.insert(f.clone()) {
            errs.push(FieldError::duplicate(&fp, BadValue::typed_str(f)));
        }
    }
    if let Some(p) = spec
        .ip_family_policy
        .as_deref()
        .filter(|p| !matches!(*p, "SingleStack" | "PreferDualStack" | "RequireDualStack"))
    {
        errs.push(FieldError::not_supported(
            &sp.child("ipFamilyPolicy"),
            BadValue::typed_str(p),
            &["PreferDualStack", "RequireDualStack", "SingleStack"],
        ));
    }
    let mut invalid = false;
    for (i, ip) in ips.iter().enumerate() {
        if i == 0 && ip == "None" {
            if ips.len() > 1 {
                invalid = true;
                errs.push(FieldError::invalid(
                    &cp,
                    ips_value(),
                    "'None' must be the first and only value",
                ));
            }
            continue;
        }
        let e = validate_ip(ip, &cp.index(i));
        invalid |= !e.is_empty();
        errs.extend(e);
    }
    if ips.len() > 2 {
        errs.push(FieldError::invalid(
            &cp,
            ips_value(),
            "may only hold up to 2 values",
        ));
    }
    if invalid {
        return errs;
    }
    if ips.len() > 1 {
        let v6: Vec<bool> = ips.iter().map(|ip| ip.contains(':')).collect();
        if v6.iter().all(|x| *x) || v6.iter().all(|x| !*x) {
            errs.push(FieldError::invalid(
                &cp,
                ips_value(),
                "may specify no more than one IP for each IP family",
            ));
        }
    }
    if !is_headless(&ips) {
        for (i, (ip, fam)) in ips
            .iter()
            .zip(spec.ip_families.iter().flatten())
            .enumerate()
        {
            let is_v6 = ip.contains(':');
            if fam == "IPv4" && is_v6 {
                errs.push(FieldError::invalid(
                    &cp.index(i),
                    ip.as_str(),
                    &format!("expected an IPv4 value as indicated by `ipFamilies[{i}]`"),
                ));
            }
            if fam == "IPv6" && !is_v6 {
                errs.push(FieldError::invalid(
                    &cp.index(i),
                    ip.as_str(),
                    &format!("expected an IPv6 value as indicated by `ipFamilies[{i}]`"),
                ));
            }
        }
    }
    errs
}

/// `ValidateServiceUpdate`: allocated cluster IPs and IP families may not change.
pub fn validate_service_update(new: &Service, old: &Service) -> Vec<FieldError> {
    let mut errs =
        validate_object_meta_update(&new.metadata, &old.metadata, &Path::new("metadata"));
    let (ns, os) = (
        new.spec.clone().unwrap_or_default(),
        old.spec.clone().unwrap_or_default(),
    );
    let (nt, ot) = (
        ns.type_.clone().unwrap_or_default(),
        os.type_.clone().unwrap_or_default(),
    );
    let (nips, oips) = (
        ns.cluster_ips.clone().unwrap_or_default(),
        os.cluster_ips.clone().unwrap_or_default(),
    );
    let cp = Path::new("spec").child("clusterIPs");
    let value = BadValue::string_list(ns.cluster_ips.as_deref());
    if nt != "ExternalName" && ot != "ExternalName" && !(is_headless(&nips) && is_headless(&oips)) {
        if nips.len() == oips.len() {
            for (i, ip) in oips.iter().enumerate() {
                if *ip != nips[i] {
                    errs.push(FieldError::invalid(
                        &cp.index(i),
                        value.clone(),
                        "may not change once set",
                    ));
                }
            }
        } else if oips.len() > nips.len() {
            if nips.is_empty() {
                errs.push(FieldError::invalid(
                    &cp.index(0),
                    value.clone(),
                    "primary clusterIP can not be unset",
                ));
            } else if nips[0] != oips[0] {
                errs.push(FieldError::invalid(
                    &cp.index(0),
                    value.clone(),
                    "may not change once set",
                ));
            }
        } else if !oips.is_empty() && nips[0] != oips[0] {
            errs.push(FieldError::invalid(
                &cp.index(0),
                value.clone(),
                "may not change once set",
            ));
        }
    }
    if nt == "LoadBalancer"
        && ot == "LoadBalancer"
        && ns.load_balancer_class != os.load_balancer_class
    {
        errs.push(FieldError::invalid(
            &Path::new("spec").child("loadBalancerClass"),
            GoJson::opt_str(ns.load_balancer_class.as_deref()),
            "may not change once set",
        ));
    }
    errs.extend(
        validate_service(new)
            .into_iter()
            .filter(|e| !e.field.starts_with("metadata.")),
    );
    errs
}
