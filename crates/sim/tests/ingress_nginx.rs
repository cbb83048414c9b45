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

const NGINX_404: &str = "<html>\r\n<head><title>404 Not Found</title></head>\r\n<body>\r\n<center><h1>404 Not Found</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n";
const NGINX_503: &str = "<html>\r\n<head><title>503 Service Temporarily Unavailable</title></head>\r\n<body>\r\n<center><h1>503 Service Temporarily Unavailable</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n";

/// The controller pod's node IP (where its hostPorts 80/443 listen).
fn controller_node_ip(t: &mut T) -> String {
    t.ok("kubectl get pods -n ingress-nginx -o jsonpath={.items[0].status.hostIP}")
}

#[test]
fn kinds_manifest_url_installs_the_controller_and_its_class() {
    let mut t = T::new();
    let out = t.ok(&format!("kubectl apply -f {KIND_URL}"));
    assert_eq!(
        out,
        "namespace/ingress-nginx created
serviceaccount/ingress-nginx created
configmap/ingress-nginx-controller created
service/ingress-nginx-controller created
deployment.apps/ingress-nginx-controller created
ingressclass.networking.k8s.io/nginx created
"
    );
    // kind's docs wait for the controller like this.
    let w = t.ok("kubectl wait --namespace ingress-nginx --for=condition=ready pod --selector=app.kubernetes.io/component=controller --timeout=90s");
    assert!(
        w.starts_with("pod/ingress-nginx-controller-") && w.ends_with(" condition met\n"),
        "{w}"
    );
    let classes = t.ok("kubectl get ingressclass");
    assert!(
        classes.contains("nginx   k8s.io/ingress-nginx   <none>"),
        "{classes}"
    );
    let svc = t.ok("kubectl get svc -n ingress-nginx");
    assert!(
        svc.contains("ingress-nginx-controller   LoadBalancer") && svc.contains("<pending>"),
        "{svc}"
    );
    // Applying it again changes nothing, as with a fetched file.
    let again = t.ok(&format!("kubectl apply -f {KIND_URL}"));
    assert!(
        again.contains("deployment.apps/ingress-nginx-controller unchanged"),
        "{again}"
    );
    // `delete -f URL` reads the same manifest.
    let gone = t.run(&format!("kubectl delete -f {KIND_URL}"));
    assert!(
        gone.stdout
            .starts_with("namespace \"ingress-nginx\" deleted\n")
            && gone
                .stdout
                .ends_with("ingressclass.networking.k8s.io \"nginx\" deleted\n"),
        "{gone:?}"
    );
}

#[test]
fn an_unknown_url_fails_as_kubectl_does_without_network() {
    let mut t = T::new();
    let e = t.err("kubectl apply -f https://example.com/app.yaml");
    assert_eq!(
        e,
        "Unable to connect to the server: dial tcp: lookup example.com: no such host\n"
    );
    assert_eq!(
        t.err("kubectl get ns ingress-nginx"),
        "Error from server (NotFound): namespaces \"ingress-nginx\" not found\n"
    );
}

#[test]
fn kinds_usage_example_routes_foo_and_bar_from_localhost() {
    let mut t = installed();
    t.file("usage.yaml", USAGE);
    t.ok("kubectl apply -f usage.yaml");
    t.ok("kubectl wait --for=condition=ready pod foo-app bar-app --timeout=60s");
    t.settle(65);
    assert_eq!(t.ok("curl -s localhost/foo/hostname"), "foo-app");
    assert_eq!(t.ok("curl -s localhost/bar/hostname"), "bar-app");
    let get = t.ok("kubectl get ingress");
    assert!(
        get.starts_with("NAME              CLASS    HOSTS   ADDRESS     PORTS   AGE\nexample-ingress   <none>   *       localhost   80      "),
        "{get}"
    );
    let d = t.ok("kubectl describe ingress example-ingress");
    assert!(d.contains("Address:          localhost\n"), "{d}");
    assert!(
        d.contains("nginx-ingress-controller  Scheduled for sync"),
        "{d}"
    );
    assert!(d.contains("Normal  Sync"), "{d}");
    // The controller's access log names the upstream and the endpoint it picked.
    let logs = t.ok("kubectl logs -n ingress-nginx deploy/ingress-nginx-controller");
    assert!(
        logs.contains("\"GET /foo/hostname HTTP/1.1\" 200 7 \"-\" \"curl/8.5.0\""),
        "{logs}"
    );
    assert!(logs.contains("[default-foo-service-8080] []"), "{logs}");
}

#[test]
fn hosts_route_by_the_host_header_and_the_rest_gets_nginx_404() {
    let mut t = installed();
    t.file("usage.yaml", USAGE);
    t.file(
        "hosts.yaml",
        "apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: hosts
spec:
  ingressClassName: nginx
  rules:
  - host: foo.example
    http:
      paths:
      - {path: /, pathType: Prefix, backend: {service: {name: foo-service, port: {number: 8080}}}}
  - host: bar.example
    http:
      paths:
      - {path: /hostname, pathType: Exact, backend: {service: {name: bar-service, port: {number: 8080}}}}
",
    );
    t.ok("kubectl apply -f usage.yaml");
    t.ok("kubectl delete ingress example-ingress");
    t.ok("kubectl apply -f hosts.yaml");
    t.ok("kubectl wait --for=condition=ready pod foo-app bar-app --timeout=60s");
    let ip = controller_node_ip(&mut t);
    assert_eq!(
        t.ok(&format!(
            "curl -s -H 'Host: foo.example' http://{ip}/hostname"
        )),
        "foo-app"
    );
    assert_eq!(
        t.ok(&format!(
            "curl -s -H 'Host: bar.example' http://{ip}/hostname"
        )),
        "bar-app"
    );
    // Exact: /hostname/ is not /hostname.
    assert_eq!(
        t.ok(&format!(
            "curl -s -H 'Host: bar.example' http://{ip}/hostname/"
        )),
        NGINX_404
    );
    assert_eq!(t.ok(&format!("curl -s http://{ip}/")), NGINX_404);
    let head = t.ok(&format!("curl -sI -H 'Host: nope.example' http://{ip}/"));
    assert!(
        head.starts_with("HTTP/1.1 404 Not Found\r\nServer: nginx\r\n"),
        "{head}"
    );
    // The walk is recorded hop by hop: hostPort DNAT, the ingress location, the pod.
    let path = t.w.observe().net().paths.back().cloned().expect("a path");
    assert!(path.outcome.contains("default backend 404"), "{path:?}");
    t.ok(&format!("curl -s -H 'Host: foo.example' http://{ip}/x"));
    let path = t.w.observe().net().paths.back().cloned().expect("a path");
    let tables: Vec<&str> = path.hops.iter().map(|h| h.table.as_str()).collect();
    assert!(
        tables.contains(&"nat") && tables.contains(&"ingress"),
        "{tables:?}"
    );
    let ing = path.hops.iter().find(|h| h.table == "ingress").unwrap();
    assert_eq!(ing.chain, "server foo.example");
    assert_eq!(
        ing.rule,
        "location / (Prefix) → default-foo-service-8080 (ingress default/hosts)"
    );
    assert_eq!(path.endpoint.as_deref(), Some("default/foo-app"));
    // The same from a node and from a pod.
    assert_eq!(
        t.ok(&format!(
            "ssh node-1 curl -s -H 'Host: foo.example' http://{ip}/hostname"
        )),
        "foo-app"
    );
    assert_eq!(
        t.ok(&format!(
            "kubectl exec bar-app -- curl -s -H 'Host: bar.example' http://{ip}/hostname"
        )),
        "bar-app"
    );
}

#[test]
fn a_service_without_endpoints_or_missing_gets_503_and_a_controller_warning() {
    let mut t = installed();
    t.file(
        "broken.yaml",
        "apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: broken
spec:
  rules:
  - host: gone.example
    http:
      paths:
      - {path: /, pathType: Prefix, backend: {service: {name: nothing-here, port: {number: 80}}}}
",
    );
    t.ok("kubectl apply -f broken.yaml");
    let ip = controller_node_ip(&mut t);
    let out = t.ok(&format!("curl -si -H 'Host: gone.example' http://{ip}/"));
    assert!(
        out.starts_with("HTTP/1.1 503 Service Temporarily Unavailable\r\nServer: nginx\r\n"),
        "{out}"
    );
    assert!(out.ends_with(NGINX_503), "{out}");
    // The walk marks where it ended: the ingress hop carries the warning and the 503.
    let path = t.w.observe().net().paths.back().cloned().expect("a path");
    assert!(
        path.outcome
            .contains(": 503, Error obtaining Endpoints for Service \"default/nothing-here\""),
        "{path:?}"
    );
    let hop = path
        .hops
        .iter()
        .find(|h| h.table == "ingress")
        .expect("an ingress hop");
    assert_eq!(hop.chain, "server gone.example");
    assert!(hop.note.ends_with("in local store 503"), "{hop:?}");
    // nginx answered: the walk ends at the controller pod, not a backend.
    assert!(
        path.endpoint
            .as_deref()
            .is_some_and(|e| e.starts_with("ingress-nginx/ingress-nginx-controller-")),
        "{path:?}"
    );
    let logs = t.ok("kubectl logs -n ingress-nginx deploy/ingress-nginx-controller");
    assert!(
        logs.contains("] Error obtaining Endpoints for Service \"default/nothing-here\": no object matching key \"default/nothing-here\" in local store"),
        "{logs}"
    );
    t.ok("kubectl create service clusterip nothing-here --tcp=80:80");
    t.settle(2);
    assert_eq!(
        t.ok(&format!("curl -s -H 'Host: gone.example' http://{ip}/")),
        NGINX_503
    );
    let logs = t.ok("kubectl logs -n ingress-nginx deploy/ingress-nginx-controller");
    assert!(
        logs.contains("Service \"default/nothing-here\" does not have any active Endpoint."),
        "{logs}"
    );
}

#[test]
fn a_tls_host_redirects_http_with_308_and_serves_https() {
    let mut t = installed();
    t.file("usage.yaml", USAGE);
    t.file(
        "tls.yaml",
        "apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: secure
spec:
  tls:
  - hosts: [secure.example]
    secretName: secure-tls
  rules:
  - host: secure.example
    http:
      paths:
      - {path: /, pathType: Prefix, backend: {service: {name: foo-service, port: {number: 8080}}}}
",
    );
    t.ok("kubectl apply -f usage.yaml");
    t.ok("kubectl apply -f tls.yaml");
    t.ok("kubectl wait --for=condition=ready pod foo-app --timeout=60s");
    let ip = controller_node_ip(&mut t);
    let out = t.ok(&format!(
        "curl -si -H 'Host: secure.example' http://{ip}/hostname"
    ));
    assert!(
        out.starts_with("HTTP/1.1 308 Permanent Redirect\r\nServer: nginx\r\n"),
        "{out}"
    );
    assert!(
        out.contains("Location: https://secure.example/hostname\r\n"),
        "{out}"
    );
    let o = t.run(&format!(
        "curl -s -H 'Host: secure.example' https://{ip}/hostname"
    ));
    assert_eq!(o.exit_code, 60);
    assert_eq!(
        t.ok(&format!(
            "curl -sk -H 'Host: secure.example' https://{ip}/hostname"
        )),
        "foo-app"
    );
    let plain = t.ok(&format!("curl -s http://{ip}:443/"));
    assert!(
        plain.contains("<center>The plain HTTP request was sent to HTTPS port</center>"),
        "{plain}"
    );
}

#[test]
fn the_scenario_addon_installs_the_controller_at_time_zero() {
    let sc = kubeloop_sim::scenario::parse_scenario(
        "apiVersion: kubeloop.dev/v1alpha1
kind: Scenario
metadata: {name: addon}
spec:
  addons: [ingress-nginx]
  steps:
  - {at: 30s, run: kubectl get deploy -n ingress-nginx}
  - {at: 30s, run: curl -s localhost/}
",
    )
    .expect("valid");
    let (_, results) = kubeloop_sim::runner::run(&sc, None);
    assert!(
        results[0]
            .stdout
            .contains("ingress-nginx-controller   1/1     1            1"),
        "{:?}",
        results[0]
    );
    assert_eq!(results[1].stdout, NGINX_404);
    let bad = kubeloop_sim::scenario::parse_scenario(
        "apiVersion: kubeloop.dev/v1alpha1\nkind: Scenario\nmetadata: {name: a}\nspec:\n  addons: [traefik]\n",
    )
    .unwrap_err();
    assert_eq!(
        bad.iter().map(|e| e.to_string()).collect::<Vec<_>>(),
        ["5:12: spec.addons[0]: Unsupported value: \"traefik\": supported values: \"cloud-provider-kind\", \"envoy-gateway\", \"gateway-api\", \"ingress-nginx\""]
    );
}

#[test]
fn the_two_hosts_gallery_scenario_routes_each_host_and_is_deterministic() {
    let text = include_str!("../../../public/scenarios/ingress-two-hosts.yaml");
    let sc = kubeloop_sim::scenario::parse_scenario(text).expect("valid");
    let (_, r) = kubeloop_sim::runner::run(&sc, None);
    let out = |prefix: &str| {
        r.iter()
            .find(|s| s.command.starts_with(prefix))
            .unwrap_or_else(|| panic!("{prefix}"))
            .stdout
            .clone()
    };
    assert!(out("kubectl get ingress")
        .contains("two-hosts   nginx   web.example,api.example   localhost   80      30s"));
    assert!(out("curl -s -H 'Host: web.example'").contains("<title>Welcome to nginx!</title>"));
    assert!(out("curl -s -H 'Host: api.example'").starts_with("api-"));
    assert_eq!(out("curl -s localhost/"), NGINX_404);
    let unavailable = out("curl -si -H 'Host: api.example'");
    assert!(unavailable.starts_with("HTTP/1.1 503 Service Temporarily Unavailable\r\n"));
    let (_, again) = kubeloop_sim::runner::run(&sc, None);
    let texts = |r: &[kubeloop_sim::runner::StepResult]| {
        r.iter()
            .map(|s| format!("{}{}", s.stdout, s.stderr))
            .collect::<Vec<_>>()
    };
    assert_eq!(texts(&r), texts(&again));
}

#[test]
fn deleting_the_manifest_url_when_not_installed_prints_kubectls_not_found_per_object() {
    let mut t = T::new();
    let o = t.run(&format!("kubectl delete -f {KIND_URL}"));
    assert_eq!(o.exit_code, 1);
    assert_eq!(o.stdout, "");
    let line = |what: &str| {
        format!(
            "Error from server (NotFound): error when deleting \"{KIND_URL}\": {what} not found\n"
        )
    };
    let want: String = [
        "namespaces \"ingress-nginx\"",
        "serviceaccounts \"ingress-nginx\"",
        "configmaps \"ingress-nginx-controller\"",
        "services \"ingress-nginx-controller\"",
        "deployments.apps \"ingress-nginx-controller\"",
        "ingressclasses.networking.k8s.io \"nginx\"",
    ]
    .iter()
    .map(|w| line(w))
    .collect();
    assert_eq!(o.stderr, want);
    // --ignore-not-found says nothing.
    let quiet = t.run(&format!("kubectl delete --ignore-not-found -f {KIND_URL}"));
    assert_eq!(
        (
            quiet.exit_code,
            quiet.stdout.as_str(),
            quiet.stderr.as_str()
        ),
        (0, "", "")
    );
}
