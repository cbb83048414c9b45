//! Table-driven tests of ingress-nginx's host and path matching.

use super::*;

fn ingress(yaml: &str) -> Ingress {
    serde_yaml::from_str(yaml).expect("ingress yaml")
}

const PATHS: &str = r#"
metadata: {name: paths, namespace: default, creationTimestamp: "2026-01-01T00:00:00Z"}
spec:
  rules:
  - host: foo.example
    http:
      paths:
      - {path: /exact, pathType: Exact, backend: {service: {name: exact, port: {number: 80}}}}
      - {path: /app, pathType: Prefix, backend: {service: {name: app, port: {number: 80}}}}
      - {path: /app/v2, pathType: Prefix, backend: {service: {name: v2, port: {number: 80}}}}
      - {path: /impl, pathType: ImplementationSpecific, backend: {service: {name: impl, port: {name: http}}}}
      - {path: /, pathType: Prefix, backend: {service: {name: root, port: {number: 80}}}}
  - host: "*.wild.example"
    http:
      paths:
      - {path: /, pathType: Prefix, backend: {service: {name: wild, port: {number: 80}}}}
"#;

fn service_of(d: &Decision) -> String {
    match d {
        Decision::Proxy { backend, .. } => backend.service.clone(),
        Decision::Redirect { location } => format!("308 {location}"),
        Decision::NotFound { server } => format!("404 in {server}"),
    }
}

#[test]
fn paths_match_by_type_and_longest_prefix_first() {
    let ing = ingress(PATHS);
    let cfg = build(&[&ing]);
    let table = [
        ("foo.example", "/exact", "exact"),
        ("foo.example", "/exact/", "root"),
        ("foo.example", "/app", "app"),
        ("foo.example", "/app/", "app"),
        ("foo.example", "/app/x", "app"),
        ("foo.example", "/apple", "root"),
        ("foo.example", "/app/v2", "v2"),
        ("foo.example", "/app/v2/x?q=1", "v2"),
        ("foo.example", "/app/v22", "app"),
        ("foo.example", "/impl", "impl"),
        ("foo.example", "/implementation", "impl"),
        ("FOO.example:80", "/", "root"),
        ("a.wild.example", "/x", "wild"),
        ("a.b.wild.example", "/x", "404 in _"),
        ("other.example", "/app", "404 in _"),
    ];
    for (host, uri, want) in table {
        assert_eq!(
            service_of(&decide(&cfg, host, uri, false)),
            want,
            "{host}{uri}"
        );
    }
}

#[test]
fn rules_without_host_and_default_backend_fill_the_default_server() {
    let ing = ingress(
        r#"
metadata: {name: d, namespace: web}
spec:
  defaultBackend: {service: {name: fallback, port: {number: 8080}}}
  rules:
  - http:
      paths:
      - {path: /foo, pathType: Prefix, backend: {service: {name: foo, port: {number: 8080}}}}
"#,
    );
    let cfg = build(&[&ing]);
    assert_eq!(
        service_of(&decide(&cfg, "10.0.0.1", "/foo/bar", false)),
        "foo"
    );
    match decide(&cfg, "localhost", "/nothing", false) {
        Decision::Proxy {
            backend, location, ..
        } => {
            assert_eq!(backend.namespace, "web");
            assert_eq!(backend.service, "fallback");
            assert_eq!(location, "location / (defaultBackend)");
        }
        d => panic!("{d:?}"),
    }
}

#[test]
fn rewrite_target_makes_the_host_regex_and_fills_captures() {
    // kind's usage.yaml
    let ing = ingress(
        r#"
metadata:
  name: example-ingress
  namespace: default
  annotations: {nginx.ingress.kubernetes.io/rewrite-target: /$2}
spec:
  rules:
  - http:
      paths:
      - {pathType: Prefix, path: /foo(/|$)(.*), backend: {service: {name: foo-service, port: {number: 8080}}}}
      - {pathType: Prefix, path: /bar(/|$)(.*), backend: {service: {name: bar-service, port: {number: 8080}}}}
"#,
    );
    let cfg = build(&[&ing]);
    let uri = |u: &str| match decide(&cfg, "localhost", u, false) {
        Decision::Proxy { backend, uri, .. } => format!("{} {uri}", backend.service),
        d => format!("{d:?}"),
    };
    assert_eq!(uri("/foo/hostname"), "foo-service /hostname");
    assert_eq!(uri("/FOO/hostname"), "foo-service /hostname");
    assert_eq!(uri("/bar"), "bar-service /");
    assert_eq!(uri("/bar/echo?msg=hi"), "bar-service /echo?msg=hi");
    assert_eq!(uri("/foobar"), "NotFound { server: \"_\" }");
}

#[test]
fn tls_hosts_redirect_plain_http_with_308() {
    let ing = ingress(
        r#"
metadata: {name: t, namespace: default}
spec:
  tls: [{hosts: [secure.example], secretName: secure-tls}]
  rules:
  - host: secure.example
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: s, port: {number: 80}}}}]}
  - host: plain.example
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: p, port: {number: 80}}}}]}
"#,
    );
    let cfg = build(&[&ing]);
    assert_eq!(
        service_of(&decide(&cfg, "secure.example", "/a?b=c", false)),
        "308 https://secure.example/a?b=c"
    );
    assert_eq!(service_of(&decide(&cfg, "secure.example", "/a", true)), "s");
    assert_eq!(service_of(&decide(&cfg, "plain.example", "/a", false)), "p");
}

#[test]
fn the_oldest_ingress_keeps_a_duplicated_path() {
    let old = ingress(
        r#"
metadata: {name: old, namespace: default, creationTimestamp: "2026-01-01T00:00:00Z"}
spec: {rules: [{host: a.example, http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: old, port: {number: 80}}}}]}}]}
"#,
    );
    let new = ingress(
        r#"
metadata: {name: new, namespace: default, creationTimestamp: "2026-01-01T00:01:00Z"}
spec: {rules: [{host: a.example, http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: new, port: {number: 80}}}}]}}]}
"#,
    );
    let cfg = build(&[&new, &old]);
    assert_eq!(service_of(&decide(&cfg, "a.example", "/", false)), "old");
}

#[test]
fn class_selection_follows_the_controller_flags() {
    let class: IngressClass =
        serde_yaml::from_str("metadata: {name: nginx}\nspec: {controller: k8s.io/ingress-nginx}")
            .unwrap();
    let with = |class_name: &str| {
        ingress(&format!(
            "metadata: {{name: x}}\nspec: {{ingressClassName: {class_name}}}"
        ))
    };
    assert!(serves(&with("nginx"), std::slice::from_ref(&class)));
    assert!(!serves(&with("nginx"), &[]));
    assert!(!serves(&with("traefik"), std::slice::from_ref(&class)));
    assert!(serves(&ingress("metadata: {name: x}\nspec: {}"), &[]));
    let legacy = ingress(
        "metadata: {name: x, annotations: {kubernetes.io/ingress.class: traefik}}\nspec: {}",
    );
    assert!(!serves(&legacy, &[]));
}
