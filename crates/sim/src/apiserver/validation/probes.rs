//! Probes and lifecycle hooks: handlers (exec, httpGet, tcpSocket, grpc, sleep), ports
//! and thresholds.

use k8s_openapi::api::core::v1::{HTTPGetAction, LifecycleHandler, Probe};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::names::*;
use crate::apiserver::field_error::{BadValue, FieldError, Path};

/// `ValidatePortNumOrName` for probe and service target ports.
pub fn validate_port_num_or_name(port: &IntOrString, path: &Path) -> Vec<FieldError> {
    match port {
        IntOrString::Int(n) => is_valid_port_num(i64::from(*n))
            .into_iter()
            .map(|m| FieldError::invalid(path, *n, &m))
            .collect(),
        IntOrString::String(s) => invalid_each(path, s, is_valid_port_name(s)),
    }
}

fn validate_http_get(h: &HTTPGetAction, path: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if h.path.as_deref().unwrap_or("").is_empty() {
        errs.push(FieldError::required(&path.child("path"), ""));
    }
    errs.extend(validate_port_num_or_name(&h.port, &path.child("port")));
    let scheme = h.scheme.as_deref().unwrap_or("");
    if scheme != "HTTP" && scheme != "HTTPS" {
        errs.push(FieldError::not_supported(
            &path.child("scheme"),
            BadValue::typed_str(scheme),
            &["HTTP", "HTTPS"],
        ));
    }
    for header in h.http_headers.iter().flatten() {
        let ok = !header.name.is_empty()
            && header
                .name
                .bytes()
                .all(|c| c.is_ascii_alphanumeric() || c == b'-');
        if !ok {
            let msg = regex_error(
                "a valid HTTP header must consist of alphanumeric characters or '-'",
                "[-A-Za-z0-9]+",
                &["X-Header-Name"],
            );
            errs.push(FieldError::invalid(
                &path.child("httpHeaders"),
                header.name.as_str(),
                &msg,
            ));
        }
    }
    errs
}

/// The handler parts probes and lifecycle hooks share (`validateHandler`).
struct Handler<'a> {
    exec: Option<Option<&'a Vec<String>>>,
    http_get: Option<&'a HTTPGetAction>,
    tcp_port: Option<&'a IntOrString>,
    grpc_port: Option<i32>,
    sleep: Option<i64>,
}

fn validate_handler(h: Handler<'_>, grace: Option<i64>, path: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut n = 0;
    let mut take = |name: &str, errs: &mut Vec<FieldError>| {
        n += 1;
        if n > 1 {
            errs.push(FieldError::forbidden(
                &path.child(name),
                "may not specify more than 1 handler type",
            ));
            false
        } else {
            true
        }
    };
    if let Some(cmd) = h.exec {
        if take("exec", &mut errs) && cmd.is_none_or(|c| c.is_empty()) {
            errs.push(FieldError::required(
                &path.child("exec").child("command"),
                "",
            ));
        }
    }
    if let Some(g) = h.http_get {
        if take("httpGet", &mut errs) {
            errs.extend(validate_http_get(g, &path.child("httpGet")));
        }
    }
    if let Some(port) = h.tcp_port {
        if take("tcpSocket", &mut errs) {
            errs.extend(validate_port_num_or_name(
                port,
                &path.child("tcpSocket").child("port"),
            ));
        }
    }
    if let Some(port) = h.grpc_port {
        if take("grpc", &mut errs) {
            errs.extend(validate_port_num_or_name(
                &IntOrString::Int(port),
                &path.child("grpc").child("port"),
            ));
        }
    }
    if let Some(secs) = h.sleep {
        if take("sleep", &mut errs) {
            if let Some(g) = grace.filter(|g| secs < 0 || secs > *g) {
                errs.push(FieldError::invalid(
                    &path.child("sleep"),
                    secs,
                    &format!(
                        "must be non-negative and less than terminationGracePeriodSeconds ({g})"
                    ),
                ));
            }
        }
    }
    if n == 0 {
        errs.push(FieldError::required(path, "must specify a handler type"));
    }
    errs
}

pub(super) fn validate_lifecycle_handler(
    h: &LifecycleHandler,
    grace: Option<i64>,
    path: &Path,
) -> Vec<FieldError> {
    validate_handler(
        Handler {
            exec: h.exec.as_ref().map(|e| e.command.as_ref()),
            http_get: h.http_get.as_ref(),
            tcp_port: h.tcp_socket.as_ref().map(|t| &t.port),
            grpc_port: None,
            sleep: h.sleep.as_ref().map(|s| s.seconds),
        },
        grace,
        path,
    )
}

pub(super) fn validate_probe(p: &Probe, grace: Option<i64>, path: &Path) -> Vec<FieldError> {
    let mut errs = validate_handler(
        Handler {
            exec: p.exec.as_ref().map(|e| e.command.as_ref()),
            http_get: p.http_get.as_ref(),
            tcp_port: p.tcp_socket.as_ref().map(|t| &t.port),
            grpc_port: p.grpc.as_ref().map(|g| g.port),
            sleep: None,
        },
        grace,
        path,
    );
    for (name, v) in [
        ("initialDelaySeconds", p.initial_delay_seconds),
        ("timeoutSeconds", p.timeout_seconds),
        ("periodSeconds", p.period_seconds),
        ("successThreshold", p.success_threshold),
        ("failureThreshold", p.failure_threshold),
    ] {
        errs.extend(validate_nonnegative(
            i64::from(v.unwrap_or(0)),
            &path.child(name),
        ));
    }
    if let Some(t) = p.termination_grace_period_seconds.filter(|t| *t <= 0) {
        errs.push(FieldError::invalid(
            &path.child("terminationGracePeriodSeconds"),
            t,
            "must be greater than 0",
        ));
    }
    errs
}

fn validate_nonnegative(v: i64, path: &Path) -> Vec<FieldError> {
    super::meta::validate_nonnegative(v, path)
}
