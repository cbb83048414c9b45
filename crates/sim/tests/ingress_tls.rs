//! ingress-nginx's TLS through the terminal: `kubectl create secret tls`, an Ingress
//! `tls` section, the certificate nginx presents (`curl -v`, `--resolve`, `-k`), the fake
//! certificate it falls back to and the controller's warnings, and `kubectl describe`.

mod common;
use common::Term as T;

const KIND_URL: &str = "https://kind.sigs.k8s.io/examples/ingress/deploy-ingress-nginx.yaml";
const FOO_CRT: &str = include_str!("testdata/tls/foo.bar.com.crt");
const FOO_KEY: &str = include_str!("testdata/tls/foo.bar.com.key");
const OTHER_KEY: &str = include_str!("testdata/tls/other.key");
const FAKE_SUBJECT: &str =
    "*  subject: O=Acme Co; CN=Kubernetes Ingress Controller Fake Certificate\n";

/// ingress-nginx's TLS example (`foo.bar.com`, `secretName: SECRET`) before one agnhost.
fn app(secret: &str) -> String {
    format!(
        "kind: Pod
apiVersion: v1
metadata: {{name: foo-app, labels: {{app: foo}}}}
spec:
  containers:
  - {{name: foo-app, image: registry.k8s.io/e2e-test-images/agnhost:2.39, command: [/agnhost, netexec, --http-port, \"8080\"]}}
---
kind: Service
apiVersion: v1
metadata: {{name: foo-service}}
spec:
  selector: {{app: foo}}
  ports: [{{port: 8080}}]
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: tls-example-ingress
spec:
  tls:
  - hosts:
      - foo.bar.com
    secretName: {secret}
  rules:
  - host: foo.bar.com
    http:
      paths:
      - {{path: /, pathType: Prefix, backend: {{service: {{name: foo-service, port: {{number: 8080}}}}}}}}
"
    )
}

fn cluster(secret: &str) -> T {
    let mut t = T::new();
    t.ok(&format!("kubectl apply -f {KIND_URL}"));
    t.ok("kubectl wait --namespace ingress-nginx --for=condition=ready pod --selector=app.kubernetes.io/component=controller --timeout=90s");
    t.file("app.yaml", &app(secret));
    t.ok("kubectl apply -f app.yaml");
    t.ok("kubectl wait --for=condition=ready pod foo-app --timeout=60s");
    t
}

fn controller_log(t: &mut T) -> String {
    t.ok("kubectl logs -n ingress-nginx deploy/ingress-nginx-controller")
}

#[test]
fn create_secret_tls_stores_the_pair_and_refuses_what_go_refuses() {
    let mut t = T::new();
    t.file("tls.crt", FOO_CRT);
    t.file("tls.key", FOO_KEY);
    t.file("other.key", OTHER_KEY);
    assert_eq!(
        t.ok("kubectl create secret tls foo-tls --cert=tls.crt --key=tls.key"),
        "secret/foo-tls created\n"
    );
    let get = t.ok("kubectl get secret foo-tls");
    assert!(get.contains("kubernetes.io/tls   2 "), "{get}");
    let crt = t.ok("kubectl get secret foo-tls -o jsonpath='{.data.tls\\.crt}'");
    assert!(
        crt.starts_with("LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0t"),
        "{crt}"
    );
    assert!(t
        .err("kubectl create secret tls bad --cert=tls.crt --key=other.key")
        .contains("error: tls: private key does not match public key"));
    assert!(t
        .err("kubectl create secret tls bad --cert=tls.crt")
        .contains("error: key and cert must be specified"));
    assert!(t
        .err("kubectl create secret tls bad --cert=nope.crt --key=tls.key")
        .contains("error: open nope.crt: no such file or directory"));
    assert!(t
        .err("kubectl create secret tls bad --cert=tls.key --key=tls.key")
        .contains("error: tls: failed to find any PEM data in certificate input"));
    assert!(t.err("kubectl get secret bad").contains("NotFound"));
}

#[test]
fn a_tls_secret_is_served_for_its_host_by_sni_and_the_fake_one_without_sni() {
    let mut t = cluster("foo-tls");
    t.file("tls.crt", FOO_CRT);
    t.file("tls.key", FOO_KEY);
    t.ok("kubectl create secret tls foo-tls --cert=tls.crt --key=tls.key");
    let resolve = "--resolve foo.bar.com:443:127.0.0.1 https://foo.bar.com/hostname";
    assert_eq!(t.ok(&format!("curl -sk {resolve}")), "foo-app");
    let v = t.run(&format!("curl -skv {resolve}"));
    assert!(
        v.stderr.contains("* Added foo.bar.com:443:127.0.0.1 to DNS cache\n* Hostname foo.bar.com was found in DNS cache\n"),
        "{}",
        v.stderr
    );
    assert!(
        v.stderr
            .contains("*  subject: CN=foo.bar.com; O=foo.bar.com\n"),
        "{}",
        v.stderr
    );
    assert!(v.stderr.contains(
        "*  SSL certificate verify result: self-signed certificate (18), continuing anyway.\n"
    ));
    // Without -k curl refuses the self-signed certificate.
    let o = t.run(&format!("curl -s {resolve}"));
    assert_eq!(o.exit_code, 60);
    // An IP literal sends no SNI: nginx's default server answers the handshake with the
    // fake certificate, and the Host header still routes.
    let v = t.run("curl -skv -H 'Host: foo.bar.com' https://127.0.0.1/hostname");
    assert_eq!(v.stdout, "foo-app");
    assert!(v.stderr.contains(FAKE_SUBJECT), "{}", v.stderr);
    // The certificate has only a common name: Go refuses it, ingress-nginx's fallback
    // accepts it, and says so.
    let log = controller_log(&mut t);
    assert!(log.contains("] Unexpected error validating SSL certificate \"default/foo-tls\" for server \"foo.bar.com\": x509: certificate relies on legacy Common Name field, use SANs instead\n"), "{log}");
    assert!(log.contains("] Validating certificate against DNS names. This will be deprecated in a future version.\n"));
    assert!(!log.contains("Using default certificate"), "{log}");
    // Plain HTTP to the TLS host is redirected.
    let r = t.ok("curl -si -H 'Host: foo.bar.com' http://localhost/x");
    assert!(r.starts_with("HTTP/1.1 308 Permanent Redirect\r\n"), "{r}");
    assert!(r.contains("Location: https://foo.bar.com/x\r\n"), "{r}");
}

#[test]
fn a_missing_or_invalid_secret_falls_back_to_the_fake_certificate_with_warnings() {
    let mut t = cluster("missing-tls");
    let resolve = "--resolve foo.bar.com:443:127.0.0.1 https://foo.bar.com/hostname";
    let v = t.run(&format!("curl -skv {resolve}"));
    assert_eq!(v.stdout, "foo-app");
    assert!(v.stderr.contains(FAKE_SUBJECT), "{}", v.stderr);
    assert!(v
        .stderr
        .contains("*  issuer: O=Acme Co; CN=Kubernetes Ingress Controller Fake Certificate\n"));
    let log = controller_log(&mut t);
    assert!(log.contains("] Error obtaining X.509 certificate: no object matching key \"default/missing-tls\" in local store\n"), "{log}");
    assert!(log.contains("] Error getting SSL certificate \"default/missing-tls\": local SSL certificate default/missing-tls was not found. Using default certificate\n"), "{log}");
    // The walk names the certificate presented.
    let path = t.w.observe().net().paths.back().cloned().expect("a path");
    let hs = path
        .hops
        .iter()
        .find(|h| h.rule.starts_with("TLS handshake"))
        .expect("a handshake hop");
    assert_eq!(hs.rule, "TLS handshake, SNI foo.bar.com");
    assert!(
        hs.note
            .starts_with("presents the default (fake) certificate: O=Acme Co"),
        "{hs:?}"
    );
    // An Opaque Secret without tls.crt/tls.key is no keypair.
    t.ok("kubectl create secret generic missing-tls --from-literal=user=admin");
    t.ok(&format!("curl -sk {resolve}"));
    let log = controller_log(&mut t);
    assert!(log.contains("] Error obtaining X.509 certificate: secret \"default/missing-tls\" contains no keypair or CA certificate\n"), "{log}");
}

#[test]
fn a_certificate_for_another_host_is_not_used() {
    let mut t = cluster("foo-tls");
    t.file("san.crt", include_str!("testdata/tls/san.crt"));
    t.file("san.key", OTHER_KEY);
    t.ok("kubectl create secret tls foo-tls --cert=san.crt --key=san.key");
    let v = t.run("curl -skv --resolve foo.bar.com:443:127.0.0.1 https://foo.bar.com/hostname");
    assert!(v.stderr.contains(FAKE_SUBJECT), "{}", v.stderr);
    let log = controller_log(&mut t);
    assert!(log.contains("] SSL certificate \"default/foo-tls\" does not contain a Common Name or Subject Alternative Name for server \"foo.bar.com\": x509: certificate is valid for www.example.com, *.example.com, not foo.bar.com\n"), "{log}");
    assert!(log.contains("] Using default certificate\n"), "{log}");
}

#[test]
fn describe_prints_the_tls_section_as_kubectl_does() {
    let mut t = cluster("foo-tls");
    t.file(
        "sni.yaml",
        "apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: sni}
spec:
  tls:
  - hosts: [a.example, b.example]
  - hosts: [c.example]
    secretName: c-tls
  rules:
  - host: a.example
    http:
      paths:
      - {path: /, pathType: Prefix, backend: {service: {name: foo-service, port: {number: 8080}}}}
",
    );
    t.ok("kubectl apply -f sni.yaml");
    let d = t.ok("kubectl describe ingress sni");
    assert!(
        d.contains("Default backend:  <default>\nTLS:\n  SNI routes a.example,b.example\n  c-tls terminates c.example\nRules:\n"),
        "{d}"
    );
    let d = t.ok("kubectl describe ingress tls-example-ingress");
    assert!(
        d.contains("TLS:\n  foo-tls terminates foo.bar.com\n"),
        "{d}"
    );
}

#[test]
fn a_malformed_resolve_entry_is_curls_setopt_error_not_a_panic() {
    let mut t = cluster("foo-tls");
    for bad in [
        "foo",
        "foo.bar.com:x:127.0.0.1",
        "foo.bar.com:443:not-an-ip",
        ":::",
    ] {
        let o = t.run(&format!("curl -sk --resolve {bad} https://foo.bar.com/"));
        assert_eq!(o.exit_code, 49, "{bad}: {o:?}");
        assert_eq!(
            o.stderr,
            format!("curl: (49) Couldn't parse CURLOPT_RESOLVE entry '{bad}'\n")
        );
    }
    // An entry for another host or port leaves name resolution alone.
    let o = t.run("curl -s --resolve other.example:443:127.0.0.1 https://foo.bar.com/");
    assert_eq!(o.exit_code, 6, "{o:?}");
}
