//! networking.k8s.io/v1 Ingress and IngressClass through the terminal: `kubectl create
//! ingress`, validation, `kubectl get` and `kubectl describe` as upstream prints them.

mod common;
use common::Term as T;

const INGRESS: &str = "apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: example-ingress
spec:
  ingressClassName: nginx
  rules:
  - host: hello-world.example
    http:
      paths:
      - path: /
        pathType: Prefix
        backend:
          service:
            name: web
            port:
              number: 8080
      - path: /v2
        pathType: Prefix
        backend:
          service:
            name: web2
            port:
              number: 8080
";

const CLASS: &str = "apiVersion: networking.k8s.io/v1
kind: IngressClass
metadata:
  name: nginx
spec:
  controller: k8s.io/ingress-nginx
";

#[test]
fn create_ingress_builds_rules_paths_and_tls_as_kubectl_does() {
    let mut t = T::new();
    let y = t.ok(
        "kubectl create ingress simple --rule=foo.com/bar=svc1:8080,tls=my-cert --rule=foo.com/api*=api:http --class=nginx --dry-run=client -o yaml",
    );
    assert_eq!(
        y,
        "apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: simple
spec:
  ingressClassName: nginx
  rules:
  - host: foo.com
    http:
      paths:
      - backend:
          service:
            name: svc1
            port:
              number: 8080
        path: /bar
        pathType: Exact
      - backend:
          service:
            name: api
            port:
              name: http
        path: /api
        pathType: Prefix
  tls:
  - hosts:
    - foo.com
    secretName: my-cert
status:
  loadBalancer: {}
"
    );
    assert_eq!(
        t.ok("kubectl create ingress catch-all --default-backend=web:80"),
        "ingress.networking.k8s.io/catch-all created\n"
    );
    assert_eq!(
        t.err("kubectl create ingress bad --rule=foo.com=svc:80"),
        "error: rule foo.com=svc:80 is invalid and should be in format host/path=svcname:svcport[,tls[=secret]]\n"
    );
    assert_eq!(
        t.err("kubectl create ingress none"),
        "error: not enough information provided: every ingress has to either specify a default-backend (which catches all traffic) or a list of rules (which catch specific paths)\n"
    );
}

#[test]
fn get_lists_class_hosts_address_and_ports() {
    let mut t = T::new();
    t.file("ing.yaml", INGRESS);
    t.file("class.yaml", CLASS);
    assert_eq!(
        t.ok("kubectl apply -f class.yaml"),
        "ingressclass.networking.k8s.io/nginx created\n"
    );
    assert_eq!(
        t.ok("kubectl apply -f ing.yaml"),
        "ingress.networking.k8s.io/example-ingress created\n"
    );
    t.ok("kubectl create ingress tls --rule=a.example/=web:80,tls=cert --rule=b.example/=web:80 --rule=c.example/=web:80 --rule=d.example/=web:80");
    let get = t.ok("kubectl get ing");
    let lines: Vec<&str> = get.lines().collect();
    assert_eq!(
        lines[0].split_whitespace().collect::<Vec<_>>(),
        ["NAME", "CLASS", "HOSTS", "ADDRESS", "PORTS", "AGE"]
    );
    assert!(
        lines[1].starts_with("example-ingress   nginx    hello-world.example "),
        "{get}"
    );
    assert!(lines[1].contains(" 80 "), "{get}");
    assert!(
        lines[2].contains("a.example,b.example,c.example + 1 more...")
            && lines[2].contains("80, 443"),
        "{get}"
    );
    let classes = t.ok("kubectl get ingressclass");
    assert!(
        classes.starts_with("NAME    CONTROLLER             PARAMETERS   AGE\nnginx   k8s.io/ingress-nginx   <none>       "),
        "{classes}"
    );
}

#[test]
fn describe_shows_rules_with_each_backends_endpoints() {
    let mut t = T::new();
    t.file("ing.yaml", INGRESS);
    t.file(
        "web.yaml",
        &common::nginx_serving().replace("name: nginx\nspec", "name: web\nspec"),
    );
    t.ok("kubectl apply -f web.yaml");
    t.ok("kubectl expose deployment web --port=8080 --target-port=80");
    t.ok("kubectl apply -f ing.yaml");
    t.w.run_for(30 * kubeloop_sim::time::SECOND);
    let d = t.ok("kubectl describe ingress example-ingress");
    let lines: Vec<&str> = d.lines().collect();
    assert_eq!(lines[0], "Name:             example-ingress");
    assert_eq!(lines[1], "Labels:           <none>");
    assert_eq!(lines[2], "Namespace:        default");
    assert_eq!(lines[3], "Address:          ");
    assert_eq!(lines[4], "Ingress Class:    nginx");
    assert_eq!(lines[5], "Default backend:  <default>");
    assert_eq!(lines[6], "Rules:");
    assert_eq!(lines[7], "  Host                 Path  Backends");
    assert_eq!(lines[8], "  ----                 ----  --------");
    assert_eq!(lines[9], "  hello-world.example  ");
    assert!(
        lines[10].starts_with("                       /     web:8080 (10.244."),
        "{d}"
    );
    assert!(lines[10].ends_with(":80)"), "{d}");
    assert_eq!(
        lines[11],
        "                       /v2   web2:8080 (<error: services \"web2\" not found>)"
    );
    assert_eq!(lines[12], "Annotations:           <none>");
    assert_eq!(lines[13], "Events:                <none>");
}

#[test]
fn invalid_ingresses_get_the_apiservers_field_errors() {
    let mut t = T::new();
    t.file(
        "bad.yaml",
        &INGRESS
            .replace(
                "pathType: Prefix\n        backend:\n          service:\n            name: web\n",
                "pathType: Prefix\n        backend:\n          service:\n            name: web\n",
            )
            .replace(
                "- path: /v2\n        pathType: Prefix",
                "- path: v2\n        pathType: Exact",
            ),
    );
    let e = t.err("kubectl apply -f bad.yaml");
    assert_eq!(
        e,
        "The Ingress \"example-ingress\" is invalid: spec.rules[0].http.paths[1].path: Invalid value: \"v2\": must be an absolute path\n"
    );
    t.file(
        "class.yaml",
        &CLASS.replace("k8s.io/ingress-nginx", "nginx"),
    );
    let e = t.err("kubectl apply -f class.yaml");
    assert!(
        e.starts_with("The IngressClass \"nginx\" is invalid: spec.controller: Invalid value: \"nginx\": must be a domain-prefixed path"),
        "{e}"
    );
}

/// An IngressClass marked as the cluster's default.
fn default_class(name: &str) -> String {
    format!(
        "apiVersion: networking.k8s.io/v1
kind: IngressClass
metadata:
  name: {name}
  annotations:
    ingressclass.kubernetes.io/is-default-class: \"true\"
spec:
  controller: example.com/{name}
"
    )
}

#[test]
fn default_ingress_class_admission_fills_in_the_newest_default() {
    let mut t = T::new();
    t.file("class.yaml", CLASS);
    t.ok("kubectl apply -f class.yaml");
    // No default class: the Ingress keeps no class.
    t.ok("kubectl create ingress plain --rule=a.example/=web:80");
    let class = "-o jsonpath={.spec.ingressClassName}";
    assert_eq!(t.ok(&format!("kubectl get ingress plain {class}")), "");
    t.file("first.yaml", &default_class("first"));
    t.ok("kubectl apply -f first.yaml");
    t.settle(2);
    t.ok("kubectl create ingress one --rule=a.example/=web:80");
    assert_eq!(t.ok(&format!("kubectl get ingress one {class}")), "first");
    // Two defaults: upstream v1.35 picks the newest by creationTimestamp.
    t.file("second.yaml", &default_class("second"));
    t.ok("kubectl apply -f second.yaml");
    t.settle(2);
    t.ok("kubectl create ingress two --rule=a.example/=web:80");
    assert_eq!(t.ok(&format!("kubectl get ingress two {class}")), "second");
    // A class given by name or by the old annotation is left alone; updates are not admitted.
    t.ok("kubectl create ingress named --class=nginx --rule=a.example/=web:80");
    assert_eq!(t.ok(&format!("kubectl get ingress named {class}")), "nginx");
    t.ok("kubectl annotate ingress plain x=y");
    assert_eq!(t.ok(&format!("kubectl get ingress plain {class}")), "");
    t.file(
        "annotated.yaml",
        "apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata:\n  name: annotated\n  annotations:\n    kubernetes.io/ingress.class: nginx\nspec:\n  defaultBackend:\n    service:\n      name: web\n      port:\n        number: 80\n",
    );
    t.ok("kubectl apply -f annotated.yaml");
    assert_eq!(t.ok(&format!("kubectl get ingress annotated {class}")), "");
    let get = t.ok("kubectl get ingress two");
    assert!(
        get.lines()
            .nth(1)
            .unwrap()
            .starts_with("two    second   a.example"),
        "{get}"
    );
}
