//! Pod networking fields: IP syntax and `dnsConfig` / `dnsPolicy: None` rules.

use k8s_openapi::api::core::v1::PodSpec;

use super::names::*;
use crate::apiserver::field_error::{BadValue, FieldError, Path};

/// `IsValidIP`.
pub fn validate_ip(ip: &str, path: &Path) -> Vec<FieldError> {
    if ip.parse::<std::net::IpAddr>().is_ok() {
        Vec::new()
    } else {
        vec![FieldError::invalid(
            path,
            ip,
            "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)",
        )]
    }
}

pub(super) fn validate_dns_config(spec: &PodSpec, path: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let cfg = spec.dns_config.as_ref();
    if spec.dns_policy.as_deref() == Some("None") {
        match cfg {
            None => {
                return vec![FieldError::required(
                    path,
                    "must provide `dnsConfig` when `dnsPolicy` is None",
                )]
            }
            Some(c) if c.nameservers.as_ref().is_none_or(|n| n.is_empty()) => {
                return vec![FieldError::required(
                    &path.child("nameservers"),
                    "must provide at least one DNS nameserver when `dnsPolicy` is None",
                )];
            }
            _ => {}
        }
    }
    let Some(cfg) = cfg else { return errs };
    let ns = cfg.nameservers.as_deref().unwrap_or(&[]);
    if ns.len() > 3 {
        errs.push(FieldError::invalid(
            &path.child("nameservers"),
            BadValue::string_list(Some(ns)),
            "must not have more than 3 nameservers",
        ));
    }
    for (i, n) in ns.iter().enumerate() {
        errs.extend(validate_ip(n, &path.child("nameservers").index(i)));
    }
    let searches = cfg.searches.as_deref().unwrap_or(&[]);
    if searches.len() > 32 {
        errs.push(FieldError::invalid(
            &path.child("searches"),
            BadValue::string_list(Some(searches)),
            "must not have more than 32 search paths",
        ));
    }
    for (i, s) in searches.iter().enumerate() {
        if s != "." {
            let trimmed = s.strip_suffix('.').unwrap_or(s);
            errs.extend(validate_dns1123_subdomain(
                trimmed,
                &path.child("searches").index(i),
            ));
        }
    }
    for (i, o) in cfg.options.iter().flatten().enumerate() {
        if o.name.as_deref().unwrap_or("").is_empty() {
            errs.push(FieldError::required(
                &path.child("options").index(i),
                "must not be empty",
            ));
        }
    }
    errs
}
