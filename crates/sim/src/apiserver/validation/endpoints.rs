//! Endpoints and EndpointSlice validation.

use std::collections::BTreeSet;

use k8s_openapi::api::core::v1::Endpoints;
use k8s_openapi::api::discovery::v1::EndpointSlice;

use super::container::validate_protocol;
use super::dns::validate_ip;
use super::meta::*;
use super::names::*;
use super::service::*;
use crate::apiserver::field_error::{BadValue, FieldError, Path};

/// `ValidateEndpoints`.
pub fn validate_endpoints(ep: &Endpoints) -> Vec<FieldError> {
    let mut errs = validate_object_meta(
        &ep.metadata,
        true,
        name_is_dns_subdomain,
        &Path::new("metadata"),
    );
    for (i, ss) in ep.subsets.iter().flatten().enumerate() {
        let p = Path::new("subsets").index(i);
        let (ready, not_ready) = (
            ss.addresses.as_deref().unwrap_or(&[]),
            ss.not_ready_addresses.as_deref().unwrap_or(&[]),
        );
        if ready.is_empty() && not_ready.is_empty() {
            errs.push(FieldError::required(
                &p,
                "must specify `addresses` or `notReadyAddresses`",
            ));
        }
        for (name, list) in [("addresses", ready), ("notReadyAddresses", not_ready)] {
            for (j, a) in list.iter().enumerate() {
                let ap = p.child(name).index(j);
                errs.extend(validate_ip(&a.ip, &ap.child("ip")));
                if let Some(h) = a.hostname.as_deref().filter(|h| !h.is_empty()) {
                    errs.extend(validate_dns1123_label(h, &ap.child("hostname")));
                }
                if let Some(n) = a.node_name.as_deref() {
                    errs.extend(invalid_each(
                        &ap.child("nodeName"),
                        n,
                        name_is_dns_subdomain(n, false),
                    ));
                }
                errs.extend(validate_non_special_ip(&a.ip, &ap.child("ip")));
            }
        }
        let ports = ss.ports.as_deref().unwrap_or(&[]);
        for (j, port) in ports.iter().enumerate() {
            let pp = p.child("ports").index(j);
            let name = port.name.as_deref().unwrap_or("");
            if ports.len() > 1 && name.is_empty() {
                errs.push(FieldError::required(&pp.child("name"), ""));
            } else if !name.is_empty() {
                errs.extend(validate_dns1123_label(name, &pp.child("name")));
            }
            for m in is_valid_port_num(i64::from(port.port)) {
                errs.push(FieldError::invalid(&pp.child("port"), port.port, &m));
            }
            errs.extend(validate_protocol(
                port.protocol.as_deref(),
                &pp.child("protocol"),
            ));
        }
    }
    errs
}

/// `ValidateEndpointSlice` (discovery.k8s.io/v1).
pub fn validate_endpoint_slice(s: &EndpointSlice) -> Vec<FieldError> {
    let mut errs = validate_object_meta(
        &s.metadata,
        true,
        name_is_dns_subdomain,
        &Path::new("metadata"),
    );
    let at = s.address_type.as_str();
    if !matches!(at, "IPv4" | "IPv6" | "FQDN") {
        errs.push(FieldError::not_supported(
            &Path::new("addressType"),
            BadValue::typed_str(at),
            &["FQDN", "IPv4", "IPv6"],
        ));
    }
    if s.endpoints.len() > 1000 {
        errs.push(FieldError::too_many(
            &Path::new("endpoints"),
            s.endpoints.len(),
            1000,
        ));
    }
    for (i, e) in s.endpoints.iter().enumerate() {
        let ap = Path::new("endpoints").index(i).child("addresses");
        if e.addresses.is_empty() {
            errs.push(FieldError::required(&ap, "must contain at least 1 address"));
        } else if e.addresses.len() > 100 {
            errs.push(FieldError::too_many(&ap, e.addresses.len(), 100));
        }
        for (j, a) in e.addresses.iter().enumerate() {
            let p = ap.index(j);
            match at {
                "IPv4" if a.parse::<std::net::Ipv4Addr>().is_err() => errs.push(
                    FieldError::invalid(&p, a.as_str(), "must be an IPv4 address"),
                ),
                "IPv6" if a.parse::<std::net::Ipv6Addr>().is_err() => errs.push(
                    FieldError::invalid(&p, a.as_str(), "must be an IPv6 address"),
                ),
                "FQDN" => errs.extend(validate_dns1123_subdomain(a, &p)),
                _ => {}
            }
        }
    }
    let ports = s.ports.as_deref().unwrap_or(&[]);
    if ports.len() > 20000 {
        errs.push(FieldError::too_many(
            &Path::new("ports"),
            ports.len(),
            20000,
        ));
    }
    let mut names = BTreeSet::new();
    for (i, p) in ports.iter().enumerate() {
        let pp = Path::new("ports").index(i);
        let name = p.name.clone().unwrap_or_default();
        if !name.is_empty() {
            errs.extend(validate_dns1123_label(&name, &pp.child("name")));
        }
        if !names.insert(name.clone()) {
            errs.push(FieldError::duplicate(&pp.child("name"), name.as_str()));
        }
        if let Some(port) = p.port {
            for m in is_valid_port_num(i64::from(port)) {
                errs.push(FieldError::invalid(&pp.child("port"), port, &m));
            }
        }
        errs.extend(validate_protocol(
            p.protocol.as_deref(),
            &pp.child("protocol"),
        ));
    }
    errs
}
