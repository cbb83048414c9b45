//! networking.k8s.io/v1 validation: Ingress and IngressClass
//! (`pkg/apis/networking/validation/validation.go`).

use k8s_openapi::api::networking::v1::{
    HTTPIngressPath, Ingress, IngressBackend, IngressClass, IngressRule, IngressSpec,
};

use super::meta::*;
use super::names::*;
use crate::apiserver::field_error::{BadValue, FieldError, Path};

/// The `pathType` values, sorted as upstream's set lists them.
const PATH_TYPES: &[&str] = &["Exact", "ImplementationSpecific", "Prefix"];
/// `invalidPathSequences` and `invalidPathSuffixes`.
const BAD_SEQUENCES: &[&str] = &["//", "/./", "/../", "%2f", "%2F"];
const BAD_SUFFIXES: &[&str] = &["/..", "/."];
/// The annotation older Ingresses name their class with.
pub const CLASS_ANNOTATION: &str = "kubernetes.io/ingress.class";

/// `ValidateIngressCreate`: metadata, spec, and the class annotation agreeing with
/// `ingressClassName`.
pub fn validate_ingress(ing: &Ingress) -> Vec<FieldError> {
    let mut errs = validate_object_meta(
        &ing.metadata,
        true,
        name_is_dns_subdomain,
        &Path::new("metadata"),
    );
    let spec = ing.spec.clone().unwrap_or_default();
    errs.extend(validate_ingress_spec(&spec, &Path::new("spec")));
    let annotation = ing
        .metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(CLASS_ANNOTATION));
    if let (Some(a), Some(class)) = (annotation, spec.ingress_class_name.as_ref()) {
        if a != class {
            errs.push(FieldError::invalid(
                &Path::new("annotations").child(CLASS_ANNOTATION),
                a.as_str(),
                "must match `ingressClassName` when both are specified",
            ));
        }
    }
    errs
}

/// `ValidateIngressSpec`.
fn validate_ingress_spec(spec: &IngressSpec, path: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let rules = spec.rules.as_deref().unwrap_or(&[]);
    if rules.is_empty() && spec.default_backend.is_none() {
        errs.push(FieldError::invalid(
            path,
            BadValue::Json("null".into()),
            "either `defaultBackend` or `rules` must be specified",
        ));
    }
    if let Some(b) = &spec.default_backend {
        errs.extend(validate_backend(b, &path.child("defaultBackend")));
    }
    for (i, rule) in rules.iter().enumerate() {
        errs.extend(validate_rule(rule, &path.child("rules").index(i)));
    }
    for (i, tls) in spec.tls.iter().flatten().enumerate() {
        let p = path.child("tls").index(i).child("hosts");
        for (j, host) in tls.hosts.iter().flatten().enumerate() {
            errs.extend(validate_host(host, &p.index(j)));
        }
    }
    if let Some(class) = &spec.ingress_class_name {
        errs.extend(invalid_each(
            &path.child("ingressClassName"),
            class,
            name_is_dns_subdomain(class, false),
        ));
    }
    errs
}

/// A rule's or a TLS entry's host: a DNS subdomain, or a wildcard one (`*.example.com`).
fn validate_host(host: &str, path: &Path) -> Vec<FieldError> {
    if host.contains('*') {
        invalid_each(path, host, is_wildcard_dns1123_subdomain(host))
    } else {
        invalid_each(path, host, is_dns1123_subdomain(host))
    }
}

/// `IsWildcardDNS1123Subdomain`.
fn is_wildcard_dns1123_subdomain(v: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if v.len() > 253 {
        errs.push(max_len_error(253));
    }
    let ok = v
        .strip_prefix("*.")
        .is_some_and(|rest| is_dns1123_subdomain(rest).is_empty());
    if !ok {
        errs.push(regex_error(
            "a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS subdomain, which must consist of lower case alphanumeric characters, '-' or '.' and end with an alphanumeric character",
            "\\*\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*",
            &["*.example.com"],
        ));
    }
    errs
}

/// `validateIngressRules` for one rule.
fn validate_rule(rule: &IngressRule, path: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if let Some(host) = rule.host.as_deref().filter(|h| !h.is_empty()) {
        if host.parse::<std::net::IpAddr>().is_ok() {
            errs.push(FieldError::invalid(
                &path.child("host"),
                host,
                "must be a DNS name, not an IP address",
            ));
        }
        errs.extend(validate_host(host, &path.child("host")));
    }
    if let Some(http) = &rule.http {
        let p = path.child("http").child("paths");
        if http.paths.is_empty() {
            errs.push(FieldError::required(&p, ""));
        }
        for (i, hp) in http.paths.iter().enumerate() {
            errs.extend(validate_path(hp, &p.index(i)));
        }
    }
    errs
}

/// `validateHTTPIngressPath`.
fn validate_path(hp: &HTTPIngressPath, path: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let value = hp.path.as_deref().unwrap_or("");
    let p = path.child("path");
    match hp.path_type.as_str() {
        "" => {
            return vec![FieldError::required(
                &path.child("pathType"),
                "pathType must be specified",
            )]
        }
        "Exact" | "Prefix" => {
            if !value.starts_with('/') {
                errs.push(FieldError::invalid(&p, value, "must be an absolute path"));
            }
            for seq in BAD_SEQUENCES.iter().filter(|s| value.contains(*s)) {
                errs.push(FieldError::invalid(
                    &p,
                    value,
                    &format!("must not contain '{seq}'"),
                ));
            }
            for suffix in BAD_SUFFIXES.iter().filter(|s| value.ends_with(*s)) {
                errs.push(FieldError::invalid(
                    &p,
                    value,
                    &format!("cannot end with '{suffix}'"),
                ));
            }
        }
        "ImplementationSpecific" => {
            if !value.is_empty() && !value.starts_with('/') {
                errs.push(FieldError::invalid(&p, value, "must be an absolute path"));
            }
        }
        other => errs.push(FieldError::not_supported(
            &path.child("pathType"),
            BadValue::typed_str(other),
            PATH_TYPES,
        )),
    }
    errs.extend(validate_backend(&hp.backend, &path.child("backend")));
    errs
}

/// `validateIngressBackend`: a Service (name, and a port name or number) or a resource.
fn validate_backend(b: &IngressBackend, path: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    match (&b.service, &b.resource) {
        (Some(_), Some(_)) => errs.push(FieldError::invalid(
            path,
            "",
            "cannot set both resource and service backends",
        )),
        (None, Some(r)) => {
            let p = path.child("resource");
            if r.kind.is_empty() {
                errs.push(FieldError::required(&p.child("kind"), ""));
            }
            if r.name.is_empty() {
                errs.push(FieldError::required(&p.child("name"), ""));
            }
        }
        (Some(s), None) => {
            let p = path.child("service");
            if s.name.is_empty() {
                errs.push(FieldError::required(&p.child("name"), ""));
            } else {
                errs.extend(invalid_each(
                    &p.child("name"),
                    &s.name,
                    name_is_dns1035_label(&s.name, false),
                ));
            }
            let port = s.port.clone().unwrap_or_default();
            let name = port.name.as_deref().filter(|n| !n.is_empty());
            let number = port.number.filter(|n| *n != 0);
            match (name, number) {
                (Some(_), Some(_)) => errs.push(FieldError::invalid(
                    path,
                    "",
                    "cannot set both port name & port number",
                )),
                (Some(n), None) => errs.extend(invalid_each(
                    &p.child("port").child("name"),
                    n,
                    is_valid_port_name(n),
                )),
                (None, Some(n)) => {
                    for msg in is_valid_port_num(i64::from(n)) {
                        errs.push(FieldError::invalid(
                            &p.child("port").child("number"),
                            BadValue::Int(i64::from(n)),
                            &msg,
                        ));
                    }
                }
                (None, None) => errs.push(FieldError::required(
                    path,
                    "port name or number is required",
                )),
            }
        }
        (None, None) => errs.push(FieldError::invalid(
            path,
            "",
            "resource or service backend is required",
        )),
    }
    errs
}

/// `ValidateIngressClass`: a controller name that is a domain-prefixed path.
pub fn validate_ingress_class(ic: &IngressClass) -> Vec<FieldError> {
    let mut errs = validate_object_meta(
        &ic.metadata,
        false,
        name_is_dns_subdomain,
        &Path::new("metadata"),
    );
    let spec = ic.spec.clone().unwrap_or_default();
    let p = Path::new("spec").child("controller");
    let controller = spec.controller.as_deref().unwrap_or("");
    if controller.is_empty() {
        errs.push(FieldError::required(&p, ""));
    } else if controller.len() > 250 {
        errs.push(FieldError::too_long(&p, 250));
    } else {
        errs.extend(validate_domain_prefixed_path(controller, &p));
    }
    errs
}

/// `ValidateIngressClassUpdate`: the controller is immutable.
pub fn validate_ingress_class_update(new: &IngressClass, old: &IngressClass) -> Vec<FieldError> {
    let mut errs =
        validate_object_meta_update(&new.metadata, &old.metadata, &Path::new("metadata"));
    let controller = |ic: &IngressClass| ic.spec.as_ref().and_then(|s| s.controller.clone());
    if controller(new) != controller(old) {
        errs.push(FieldError::invalid(
            &Path::new("spec").child("controller"),
            controller(new).unwrap_or_default().as_str(),
            "field is immutable",
        ));
    }
    errs.extend(validate_ingress_class(new));
    errs
}

/// `ValidateDomainPrefixedPath` (`k8s.io/ingress-nginx`, `example.com/controller`).
fn validate_domain_prefixed_path(v: &str, path: &Path) -> Vec<FieldError> {
    let Some((domain, rest)) = v.split_once('/') else {
        return vec![FieldError::invalid(
            path,
            v,
            "must be a domain-prefixed path (such as \"acme.io/foo\")",
        )];
    };
    let mut errs = invalid_each(path, domain, is_dns1123_subdomain(domain));
    let ok = |c: char| c.is_ascii_alphanumeric() || "/-._~%!$&'()*+,;=:".contains(c);
    if !rest.chars().all(ok) {
        errs.push(FieldError::invalid(
            path,
            rest,
            "must be a valid path (segments of ASCII letters, digits and -._~%!$&'()*+,;=:)",
        ));
    }
    errs
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apiserver::field_error::invalid_message;
    use serde_json::json;

    fn ingress(spec: serde_json::Value) -> Ingress {
        serde_json::from_value(
            json!({"metadata": {"name": "web", "namespace": "default"}, "spec": spec}),
        )
        .expect("ingress")
    }

    fn message(spec: serde_json::Value) -> String {
        invalid_message(
            "Ingress",
            "networking.k8s.io",
            "web",
            &validate_ingress(&ingress(spec)),
        )
    }

    #[test]
    fn an_ingress_needs_rules_or_a_default_backend() {
        assert_eq!(
            message(json!({})),
            "Ingress.networking.k8s.io \"web\" is invalid: spec: Invalid value: null: either `defaultBackend` or `rules` must be specified"
        );
        assert!(validate_ingress(&ingress(json!({"defaultBackend": {
            "service": {"name": "web", "port": {"number": 80}}}})))
        .is_empty());
    }

    #[test]
    fn paths_need_a_type_and_an_absolute_path_and_backends_a_port() {
        let m = message(
            json!({"rules": [{"host": "foo.example.com", "http": {"paths": [
                {"path": "/api", "backend": {"service": {"name": "api", "port": {"number": 80}}}},
                {"path": "docs", "pathType": "Prefix",
                 "backend": {"service": {"name": "docs", "port": {}}}},
                {"path": "/a//b", "pathType": "Regex",
                 "backend": {"service": {"name": "x", "port": {"number": 80}}}}
            ]}}]}),
        );
        assert!(
            m.contains(
                "spec.rules[0].http.paths[0].pathType: Required value: pathType must be specified"
            ),
            "{m}"
        );
        assert!(
            m.contains("spec.rules[0].http.paths[1].path: Invalid value: \"docs\": must be an absolute path"),
            "{m}"
        );
        assert!(
            m.contains("spec.rules[0].http.paths[1].backend: Required value: port name or number is required"),
            "{m}"
        );
        assert!(
            m.contains("spec.rules[0].http.paths[2].pathType: Unsupported value: \"Regex\": supported values: \"Exact\", \"ImplementationSpecific\", \"Prefix\""),
            "{m}"
        );
    }

    #[test]
    fn hosts_are_dns_names_and_wildcards_only_lead() {
        let m = message(json!({"rules": [
            {"host": "10.0.0.1"},
            {"host": "foo.*.example.com"},
            {"host": "*.example.com"}
        ]}));
        assert!(
            m.contains("spec.rules[0].host: Invalid value: \"10.0.0.1\": must be a DNS name, not an IP address"),
            "{m}"
        );
        assert!(m.contains("spec.rules[1].host: Invalid value: \"foo.*.example.com\": a wildcard DNS-1123 subdomain must start with '*.'"), "{m}");
        assert!(!m.contains("spec.rules[2]"), "{m}");
    }

    #[test]
    fn an_ingress_class_names_its_controller() {
        let ic: IngressClass =
            serde_json::from_value(json!({"metadata": {"name": "nginx"}, "spec": {}})).unwrap();
        let errs = validate_ingress_class(&ic);
        assert_eq!(
            invalid_message("IngressClass", "networking.k8s.io", "nginx", &errs),
            "IngressClass.networking.k8s.io \"nginx\" is invalid: spec.controller: Required value"
        );
        let ok: IngressClass = serde_json::from_value(
            json!({"metadata": {"name": "nginx"}, "spec": {"controller": "k8s.io/ingress-nginx"}}),
        )
        .unwrap();
        assert!(validate_ingress_class(&ok).is_empty());
    }
}
