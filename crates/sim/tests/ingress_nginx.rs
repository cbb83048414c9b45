//! The ingress-nginx add-on as kind's docs install and use it, through the terminal:
//! `kubectl apply -f <kind's URL>`, the controller's status and events, and `curl`
//! walked controller → Service → pod with nginx's own pages.

mod common;
use common::Term as T;

const KIND_URL: &str = "https://kind.sigs.k8s.io/examples/ingress/deploy-ingress-nginx.yaml";

/// kind's `usage.yaml`.
const USAGE: &str = r#"kind: Pod
apiVersion: v1
metadata:
  name: foo-app
  labels:
    app: foo
spec:
  containers:
  - command:
    - /agnhost
    - netexec
    - --http-port
    - "8080"
    image: registry.k8s.io/e2e-test-images/agnhost:2.39
    name: foo-app
---
kind: Service
apiVersion: v1
metadata:
  name: foo-service
spec:
  selector:
    app: foo
  ports:
  # Default port used by the image
  - port: 8080
---
kind: Pod
apiVersion: v1
metadata:
  name: bar-app
  labels:
    app: bar
spec:
  containers:
  - command:
    - /agnhost
    - netexec
    - --http-port
    - "8080"
    image: registry.k8s.io/e2e-test-images/agnhost:2.39
    name: bar-app
---
kind: Service
apiVersion: v1
metadata:
  name: bar-service
spec:
  selector:
    app: bar
  ports:
  # Default port used by the image
  - port: 8080
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: example-ingress
  annotations:
    nginx.ingress.kubernetes.io/rewrite-target: /$2
spec:
  rules:
  - http:
      paths:
      - pathType: Prefix
        path: /foo(/|$)(.*)
        backend:
          service:
            name: foo-service
            port:
              number: 8080
      - pathType: Prefix
        path: /bar(/|$)(.*)
        backend:
          service:
            name: bar-service
            port:
              number: 8080
"#;

fn installed() -> T {
    let mut t = T::new();
    t.ok(&format!("kubectl apply -f {KIND_URL}"));
    t.ok("kubectl wait --namespace ingress-nginx --for=condition=ready pod --selector=app.kubernetes.io/component=controller --timeout=90s");
    t
}

#[test]
fn explore() {
    let mut t = T::new();
    let o = t.run(&format!("kubectl apply -f {KIND_URL}"));
    println!("{o:?}");
    let o = t.run("kubectl wait --namespace ingress-nginx --for=condition=ready pod --selector=app.kubernetes.io/component=controller --timeout=90s");
    println!("{o:?}");
    t.file("usage.yaml", USAGE);
    for l in [
        "kubectl apply -f usage.yaml",
        "sim advance 20s",
        "kubectl get ingress",
        "sim advance 60s",
        "kubectl get ingress",
        "kubectl describe ingress example-ingress",
        "curl localhost/foo/hostname",
        "curl localhost/bar/hostname",
        "curl -i localhost/nothing",
        "kubectl get pods -n ingress-nginx -o wide",
        "kubectl get svc -n ingress-nginx",
        "kubectl logs -n ingress-nginx deploy/ingress-nginx-controller",
    ] {
        let o = t.run(l);
        println!("$ {l}\n{}{}[{}]", o.stdout, o.stderr, o.exit_code);
    }
}
