//! Envoy Gateway's HTTPS listeners through the terminal: `tls.mode: Terminate` with
//! `certificateRefs` to a `kubernetes.io/tls` Secret, the listener conditions Envoy
//! Gateway writes for a missing or unusable Secret, and envoy serving the certificate.

mod common;
use common::gateway::{self, PROXY};
use common::Term as T;

const SAN_CRT: &str = include_str!("testdata/tls/san.crt");
const SAN_KEY: &str = include_str!("testdata/tls/other.key");

const APPS: &str = r#"apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - {name: agnhost, image: registry.k8s.io/e2e-test-images/agnhost:2.39, args: [serve-hostname], ports: [{containerPort: 9376}]}
---
apiVersion: v1
kind: Service
metadata: {name: web}
spec:
  selector: {app: web}
  ports: [{port: 8080, targetPort: 9376}]
---
apiVersion: v1
kind: Pod
metadata: {name: client}
spec:
  containers:
  - {name: curl, image: "curlimages/curl:8.11.1", command: [sleep, "3600"]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: eg}
spec:
  controllerName: gateway.envoyproxy.io/gatewayclass-controller
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: web}
spec:
  parentRefs: [{name: eg}]
  hostnames: [www.example.com]
  rules:
  - backendRefs: [{name: web, port: 8080}]
"#;

/// Envoy Gateway's secure-gateways task: an HTTP and an HTTPS listener.
fn gateway(cert_ref: &str) -> String {
    format!(
        "apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {{name: eg}}
spec:
  gatewayClassName: eg
  listeners:
  - {{name: http, protocol: HTTP, port: 80}}
  - name: https
    protocol: HTTPS
    port: 443
    tls:
      mode: Terminate
      certificateRefs:
      - {cert_ref}
"
    )
}

fn cluster(cert_ref: &str) -> T {
    let mut t = T::new();
    gateway::install(&mut t);
    t.file("apps.yaml", APPS);
    t.ok("kubectl apply -f apps.yaml");
    t.settle(20);
    t.file("gateway.yaml", &gateway(cert_ref));
    t.ok("kubectl apply -f gateway.yaml");
    t.settle(20);
    t
}

fn https_condition(t: &mut T, i: usize) -> String {
    t.ok(&format!("kubectl get gateway eg -o jsonpath='{{.status.listeners[1].conditions[{i}].type}} {{.status.listeners[1].conditions[{i}].status}} {{.status.listeners[1].conditions[{i}].reason}}: {{.status.listeners[1].conditions[{i}].message}}'"))
}

#[test]
fn a_missing_secret_is_an_invalid_certificate_ref_and_the_listener_is_not_served() {
    let mut t = cluster("{kind: Secret, name: eg-https}");
    assert_eq!(
        https_condition(&mut t, 0),
        "ResolvedRefs False InvalidCertificateRef: Secret default/eg-https does not exist."
    );
    assert_eq!(
        https_condition(&mut t, 1),
        "Programmed False Invalid: Listener is invalid, see other Conditions for details."
    );
    let ip = gateway::proxy_ip(&mut t);
    let o = t.run(&format!("kubectl exec client -- curl -sk --resolve www.example.com:443:{ip} https://www.example.com/"));
    assert_eq!(o.exit_code, 7, "{o:?}");
    // The HTTP listener is unaffected.
    let o = t.run(&format!(
        "kubectl exec client -- curl -s -H 'Host: www.example.com' http://{ip}/"
    ));
    assert!(o.stdout.starts_with("web-"), "{o:?}");
    assert_eq!(
        t.ok(&format!(
            "kubectl get svc {PROXY} -n envoy-gateway-system -o jsonpath={{.spec.ports[*].name}}"
        )),
        "http-80 https-443"
    );
}

#[test]
fn a_tls_secret_programs_the_listener_and_envoy_serves_its_certificate() {
    let mut t = cluster("{kind: Secret, name: eg-https}");
    t.file("tls.crt", SAN_CRT);
    t.file("tls.key", SAN_KEY);
    t.ok("kubectl create secret tls eg-https --cert=tls.crt --key=tls.key");
    t.settle(2);
    assert_eq!(
        https_condition(&mut t, 0),
        "Programmed True Programmed: Sending translated listener configuration to the data plane"
    );
    let ip = gateway::proxy_ip(&mut t);
    let url = format!("--resolve www.example.com:443:{ip} https://www.example.com/");
    let o = t.run(&format!("kubectl exec client -- curl -skv {url}"));
    assert!(o.stdout.starts_with("web-"), "{o:?}");
    assert!(
        o.stderr
            .contains("*  subject: O=Example; CN=www.example.com\n"),
        "{}",
        o.stderr
    );
    // Self-signed: curl refuses it without -k.
    let o = t.run(&format!("kubectl exec client -- curl -s {url}"));
    assert_eq!(o.exit_code, 60, "{o:?}");
    // Plain HTTP to the TLS listener: envoy closes the connection.
    let o = t.run(&format!(
        "kubectl exec client -- curl -s -H 'Host: www.example.com' http://{ip}:443/"
    ));
    assert_eq!(o.exit_code, 52, "{o:?}");
    // The walk names the listener.
    let path = t.w.observe().net().paths.back().cloned().expect("a path");
    assert!(
        path.outcome.contains("plain HTTP to TLS listener https"),
        "{path:?}"
    );
}

#[test]
fn unusable_certificate_refs_get_envoy_gateways_reasons() {
    let mut t = cluster("{kind: ConfigMap, name: eg-https}");
    assert_eq!(
        https_condition(&mut t, 0),
        "ResolvedRefs False InvalidCertificateRef: Listener's TLS certificate ref kind must be Secret."
    );
    t.file(
        "gateway.yaml",
        &gateway("{name: eg-https, namespace: certs}"),
    );
    t.ok("kubectl apply -f gateway.yaml");
    t.settle(2);
    assert_eq!(
        https_condition(&mut t, 0),
        "ResolvedRefs False RefNotPermitted: Certificate ref to secret certs/eg-https not permitted by any ReferenceGrant."
    );
    // Dropping the namespace from the ref: apply's JSON merge patch replaces the list.
    t.file("gateway.yaml", &gateway("{name: eg-https}"));
    t.ok("kubectl apply -f gateway.yaml");
    t.ok(
        "kubectl create secret generic eg-https --from-literal=tls.crt=x --from-literal=tls.key=y",
    );
    t.settle(2);
    assert_eq!(
        https_condition(&mut t, 0),
        "ResolvedRefs False InvalidCertificateRef: Secret default/eg-https must be of type kubernetes.io/tls."
    );
    t.ok("kubectl delete secret eg-https");
    t.file(
        "bad.yaml",
        "apiVersion: v1\nkind: Secret\nmetadata: {name: eg-https}\ntype: kubernetes.io/tls\nstringData: {tls.crt: not a certificate, tls.key: not a key}\n",
    );
    t.ok("kubectl apply -f bad.yaml");
    t.settle(2);
    assert_eq!(
        https_condition(&mut t, 0),
        "ResolvedRefs False InvalidCertificateRef: Secret default/eg-https must contain valid tls.crt and tls.key, unable to decode pem data in tls.crt."
    );
    assert_eq!(
        https_condition(&mut t, 1),
        "Programmed False Invalid: Listener is invalid, see other Conditions for details."
    );
    // The Gateway itself stays Accepted; kubectl get shows it.
    let get = t.ok("kubectl get gateway eg");
    assert!(get.starts_with("NAME   CLASS   ADDRESS"), "{get}");
}
