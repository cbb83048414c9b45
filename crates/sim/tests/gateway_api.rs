//! Gateway API v1 and the Envoy Gateway add-on through the terminal: the release's CRDs,
//! the controller's status conditions, and `curl` walked envoy → Service → pod by the
//! HTTPRoutes' matches and weights.

mod common;
use common::gateway::{self, EG, PROXY};
use common::Term as T;

const STANDARD: &str =
    "https://github.com/kubernetes-sigs/gateway-api/releases/download/v1.4.0/standard-install.yaml";

const CRD_LINES: &str =
    "customresourcedefinition.apiextensions.k8s.io/gatewayclasses.gateway.networking.k8s.io created
customresourcedefinition.apiextensions.k8s.io/gateways.gateway.networking.k8s.io created
customresourcedefinition.apiextensions.k8s.io/grpcroutes.gateway.networking.k8s.io created
customresourcedefinition.apiextensions.k8s.io/httproutes.gateway.networking.k8s.io created
customresourcedefinition.apiextensions.k8s.io/referencegrants.gateway.networking.k8s.io created
";

#[test]
fn standard_install_creates_the_crds_with_their_names_and_columns() {
    let mut t = T::new();
    assert_eq!(t.ok(&format!("kubectl apply -f {STANDARD}")), CRD_LINES);
    t.settle(2);
    let res = t.ok("kubectl api-resources --api-group=gateway.networking.k8s.io");
    assert!(res.contains("gatewayclasses    gc           gateway.networking.k8s.io/v1        false        GatewayClass"), "{res}");
    assert!(res.contains("gateways          gtw          gateway.networking.k8s.io/v1        true         Gateway"), "{res}");
    t.file(
        "gc.yaml",
        "apiVersion: gateway.networking.k8s.io/v1\nkind: GatewayClass\nmetadata:\n  name: eg\nspec:\n  controllerName: gateway.envoyproxy.io/gatewayclass-controller\n",
    );
    assert_eq!(
        t.ok("kubectl apply -f gc.yaml"),
        "gatewayclass.gateway.networking.k8s.io/eg created\n"
    );
    t.settle(1);
    let gc = t.ok("kubectl get gc");
    assert_eq!(
        gc,
        "NAME   CONTROLLER                                      ACCEPTED   AGE\neg     gateway.envoyproxy.io/gatewayclass-controller   Unknown    1s\n"
    );
}

const APPS: &str = r#"apiVersion: apps/v1
kind: Deployment
metadata:
  name: web-v1
spec:
  replicas: 1
  selector:
    matchLabels: {app: web, version: v1}
  template:
    metadata:
      labels: {app: web, version: v1}
    spec:
      containers:
      - name: agnhost
        image: registry.k8s.io/e2e-test-images/agnhost:2.39
        args: [serve-hostname]
        ports:
        - containerPort: 9376
---
apiVersion: v1
kind: Service
metadata:
  name: web-v1
spec:
  selector: {app: web, version: v1}
  ports:
  - port: 8080
    targetPort: 9376
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web-v2
spec:
  replicas: 1
  selector:
    matchLabels: {app: web, version: v2}
  template:
    metadata:
      labels: {app: web, version: v2}
    spec:
      containers:
      - name: agnhost
        image: registry.k8s.io/e2e-test-images/agnhost:2.39
        args: [serve-hostname]
        ports:
        - containerPort: 9376
---
apiVersion: v1
kind: Service
metadata:
  name: web-v2
spec:
  selector: {app: web, version: v2}
  ports:
  - port: 8080
    targetPort: 9376
---
apiVersion: v1
kind: Pod
metadata:
  name: client
spec:
  containers:
  - name: curl
    image: curlimages/curl:8.11.1
    command: [sleep, "3600"]
"#;

const GATEWAY: &str = r#"apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata:
  name: eg
spec:
  controllerName: gateway.envoyproxy.io/gatewayclass-controller
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata:
  name: eg
spec:
  gatewayClassName: eg
  listeners:
  - name: http
    protocol: HTTP
    port: 80
"#;

fn proxy_url(path: &str) -> String {
    format!("http://{PROXY}.envoy-gateway-system{path}")
}

/// Envoy Gateway installed, the apps and the Gateway `eg` running.
fn cluster() -> T {
    let mut t = T::new();
    let out = t.ok(&format!("kubectl apply --server-side -f {EG}"));
    assert!(out.starts_with("customresourcedefinition.apiextensions.k8s.io/gatewayclasses.gateway.networking.k8s.io serverside-applied\n"), "{out}");
    assert!(
        out.ends_with("deployment.apps/envoy-gateway serverside-applied\n"),
        "{out}"
    );
    t.file("apps.yaml", APPS);
    t.file("gateway.yaml", GATEWAY);
    t.ok("kubectl apply -f apps.yaml");
    t.settle(20);
    t.ok("kubectl apply -f gateway.yaml");
    t.settle(20);
    t
}

fn route(t: &mut T, name: &str, yaml: &str) {
    t.file(&format!("{name}.yaml"), yaml);
    t.ok(&format!("kubectl apply -f {name}.yaml"));
    t.settle(2);
}

fn curl(t: &mut T, args: &str) -> String {
    t.run(&format!("kubectl exec client -- curl -s {args}"))
        .stdout
}

#[test]
fn envoy_gateway_accepts_the_class_and_provisions_the_gateway() {
    let mut t = cluster();
    assert_eq!(
        t.ok("kubectl get gatewayclass"),
        "NAME   CONTROLLER                                      ACCEPTED   AGE\neg     gateway.envoyproxy.io/gatewayclass-controller   True       20s\n"
    );
    let pods = t.ok("kubectl get deploy,svc -n envoy-gateway-system");
    assert!(
        pods.contains(&format!("deployment.apps/{PROXY}   1/1")),
        "{pods}"
    );
    assert!(
        pods.contains(&format!("service/{PROXY}   LoadBalancer")),
        "{pods}"
    );
    // No load-balancer controller on a plain kind cluster: the Gateway has no address.
    assert_eq!(
        t.ok("kubectl get gateway"),
        "NAME   CLASS   ADDRESS   PROGRAMMED   AGE\neg     eg      <none>    False        20s\n"
    );
    let y = t.ok("kubectl get gateway eg -o yaml");
    assert!(y.contains("message: No addresses have been assigned to the Gateway\n    observedGeneration: 1\n    reason: AddressNotAssigned"), "{y}");
    assert!(
        y.contains("reason: Accepted\n    status: \"True\"\n    type: Accepted"),
        "{y}"
    );
    assert!(y.contains("attachedRoutes: 0"), "{y}");
}

const CANARY: &str = r#"apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata:
  name: web
spec:
  parentRefs:
  - name: eg
  hostnames:
  - www.example.com
  rules:
  - backendRefs:
    - name: web-v1
      port: 8080
      weight: 90
    - name: web-v2
      port: 8080
      weight: 10
"#;

#[test]
fn a_weighted_route_splits_requests_and_reports_its_status() {
    let mut t = cluster();
    route(&mut t, "web", CANARY);
    assert_eq!(
        t.ok("kubectl get httproute"),
        "NAME   HOSTNAMES             AGE\nweb    [\"www.example.com\"]   2s\n"
    );
    let y = t.ok("kubectl get httproute web -o yaml");
    assert!(y.contains("    controllerName: gateway.envoyproxy.io/gatewayclass-controller\n    parentRef:\n      group: gateway.networking.k8s.io\n      kind: Gateway\n      name: eg\n"), "{y}");
    assert!(y.contains("message: Route is accepted"), "{y}");
    assert!(
        y.contains("message: Resolved all the Object references for the Route"),
        "{y}"
    );
    let g = t.ok("kubectl get gateway eg -o yaml");
    assert!(g.contains("attachedRoutes: 1"), "{g}");
    let mut v1 = 0;
    let mut v2 = 0;
    for _ in 0..200 {
        let out = curl(
            &mut t,
            &format!("-H 'Host: www.example.com' {}", proxy_url("/hostname")),
        );
        if out.starts_with("web-v1-") {
            v1 += 1;
        } else if out.starts_with("web-v2-") {
            v2 += 1;
        } else {
            panic!("unexpected answer {out:?}");
        }
    }
    assert_eq!(v1 + v2, 200);
    assert!((165..=195).contains(&v1), "v1 {v1} v2 {v2}");
    // Another host matches no route: envoy's own 404.
    let out = t.run(&format!(
        "kubectl exec client -- curl -si -H 'Host: other.example' {}",
        proxy_url("/")
    ));
    assert!(
        out.stdout.starts_with("HTTP/1.1 404 Not Found\r\n"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("server: envoy") || out.stdout.contains("Server: envoy"),
        "{}",
        out.stdout
    );
}

#[test]
fn matches_follow_the_gateway_api_precedence() {
    let mut t = cluster();
    route(
        &mut t,
        "matches",
        r#"apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata:
  name: matches
spec:
  parentRefs:
  - name: eg
  rules:
  - matches:
    - path: {type: PathPrefix, value: /}
    backendRefs:
    - {name: web-v1, port: 8080}
  - matches:
    - path: {type: PathPrefix, value: /api}
      headers:
      - {name: env, value: canary}
    - path: {type: Exact, value: /exact}
    - path: {type: RegularExpression, value: "/v[0-9]+/.*"}
    - path: {type: PathPrefix, value: /q}
      queryParams:
      - {name: version, value: "2"}
    - path: {type: PathPrefix, value: /m}
      method: POST
    backendRefs:
    - {name: web-v2, port: 8080}
"#,
    );
    let to = |t: &mut T, args: &str| {
        let out = curl(t, args);
        out.split('-').take(2).collect::<Vec<_>>().join("-")
    };
    let u = |p: &str| proxy_url(p);
    assert_eq!(to(&mut t, &u("/hostname")), "web-v1");
    assert_eq!(to(&mut t, &u("/api/hostname")), "web-v1");
    assert_eq!(
        to(&mut t, &format!("-H 'env: canary' {}", u("/api/hostname"))),
        "web-v2"
    );
    assert_eq!(to(&mut t, &u("/exact")), "web-v2");
    assert_eq!(to(&mut t, &u("/exact/more")), "web-v1");
    assert_eq!(to(&mut t, &u("/v2/hostname")), "web-v2");
    assert_eq!(to(&mut t, &u("/q?version=2")), "web-v2");
    assert_eq!(to(&mut t, &u("/q?version=1")), "web-v1");
    assert_eq!(to(&mut t, &u("/m")), "web-v1");
    assert_eq!(to(&mut t, &format!("-X POST {}", u("/m"))), "web-v2");
}

#[test]
fn invalid_objects_get_the_apiservers_field_errors() {
    let mut t = T::new();
    t.ok(&format!("kubectl apply -f {STANDARD}"));
    t.settle(2);
    t.file(
        "bad-gw.yaml",
        "apiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\nmetadata:\n  name: bad\nspec:\n  gatewayClassName: eg\n  listeners:\n  - name: http\n    protocol: HTTP\n    port: 70000\n",
    );
    assert!(t.err("kubectl apply -f bad-gw.yaml").contains(
        "The Gateway \"bad\" is invalid: spec.listeners[0].port: Invalid value: 70000: spec.listeners[0].port in body should be less than or equal to 65535"
    ));
    t.file(
        "tls-gw.yaml",
        "apiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\nmetadata:\n  name: tls\nspec:\n  gatewayClassName: eg\n  listeners:\n  - name: http\n    protocol: HTTP\n    port: 80\n    tls: {mode: Terminate}\n",
    );
    let e = t.err("kubectl apply -f tls-gw.yaml");
    assert!(e.contains("spec.listeners: Invalid value: \"array\": tls must not be specified for protocols ['HTTP', 'TCP', 'UDP']"), "{e}");
    t.file(
        "bad-route.yaml",
        "apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata:\n  name: bad\nspec:\n  parentRefs:\n  - name: eg\n  rules:\n  - matches:\n    - path: {type: Prefix, value: /}\n    - path: {type: PathPrefix, value: /}\n      method: FETCH\n    backendRefs:\n    - name: web\n      weight: -1\n",
    );
    let e = t.err("kubectl apply -f bad-route.yaml");
    assert!(e.contains("* spec.rules[0].backendRefs[0].weight: Invalid value: -1: spec.rules[0].backendRefs[0].weight in body should be greater than or equal to 0\n"), "{e}");
    assert!(e.contains("* spec.rules[0].matches[0].path.type: Unsupported value: \"Prefix\": supported values: \"Exact\", \"PathPrefix\", \"RegularExpression\"\n"), "{e}");
    assert!(e.contains("* spec.rules[0].matches[1].method: Unsupported value: \"FETCH\": supported values: \"GET\", \"HEAD\", \"POST\", \"PUT\", \"DELETE\", \"CONNECT\", \"OPTIONS\", \"TRACE\", \"PATCH\""), "{e}");
    t.file(
        "rel.yaml",
        "apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata:\n  name: rel\nspec:\n  rules:\n  - matches:\n    - path: {type: PathPrefix, value: foo}\n    backendRefs:\n    - name: web\n",
    );
    let e = t.err("kubectl apply -f rel.yaml");
    assert!(e.contains("spec.rules[0].matches[0].path: Invalid value: \"object\": value must be an absolute path and start with '/' when type one of ['Exact', 'PathPrefix']"), "{e}");
    assert!(e.contains("spec.rules[0].backendRefs[0]: Invalid value: \"object\": Must have port for Service reference"), "{e}");
    t.file(
        "nolisteners.yaml",
        "apiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\nmetadata:\n  name: none\nspec:\n  gatewayClassName: eg\n",
    );
    assert!(t
        .err("kubectl apply -f nolisteners.yaml")
        .contains("The Gateway \"none\" is invalid: spec.listeners: Required value"));
    t.file(
        "gc.yaml",
        "apiVersion: gateway.networking.k8s.io/v1\nkind: GatewayClass\nmetadata:\n  name: eg\nspec:\n  controllerName: gateway.envoyproxy.io/gatewayclass-controller\n",
    );
    t.ok("kubectl apply -f gc.yaml");
    assert!(t
        .err("kubectl patch gatewayclass eg --type=merge -p '{\"spec\":{\"controllerName\":\"example.com/other\"}}'")
        .contains("The GatewayClass \"eg\" is invalid: spec.controllerName: Invalid value: \"string\": Value is immutable"));
}

#[test]
fn attachment_failures_and_missing_backends_are_reported_and_served_as_the_spec_says() {
    let mut t = cluster();
    t.file(
        "listeners.yaml",
        r#"apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata:
  name: eg
spec:
  gatewayClassName: eg
  listeners:
  - name: http
    protocol: HTTP
    port: 80
    hostname: "*.example.com"
"#,
    );
    t.ok("kubectl apply -f listeners.yaml");
    route(
        &mut t,
        "routes",
        r#"apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata:
  name: wrong-section
spec:
  parentRefs:
  - {name: eg, sectionName: https}
  rules:
  - backendRefs:
    - {name: web-v1, port: 8080}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata:
  name: wrong-host
spec:
  parentRefs:
  - name: eg
  hostnames: [www.example.org]
  rules:
  - backendRefs:
    - {name: web-v1, port: 8080}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata:
  name: missing
spec:
  parentRefs:
  - name: eg
  hostnames: [missing.example.com]
  rules:
  - backendRefs:
    - {name: web-v3, port: 8080}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata:
  name: other-ns
  namespace: kube-system
spec:
  parentRefs:
  - {name: eg, namespace: default}
  rules:
  - backendRefs:
    - {name: web-v1, namespace: default, port: 8080}
"#,
    );
    let cond = |t: &mut T, ns: &str, name: &str, ty: &str| {
        t.ok(&format!(
            "kubectl get httproute {name} -n {ns} -o jsonpath={{.status.parents[0].conditions[?(@.type==\"{ty}\")].reason}}"
        ))
    };
    assert_eq!(
        cond(&mut t, "default", "wrong-section", "Accepted"),
        "NoMatchingParent"
    );
    assert_eq!(
        cond(&mut t, "default", "wrong-host", "Accepted"),
        "NoMatchingListenerHostname"
    );
    assert_eq!(
        cond(&mut t, "kube-system", "other-ns", "Accepted"),
        "NotAllowedByListeners"
    );
    assert_eq!(
        cond(&mut t, "kube-system", "other-ns", "ResolvedRefs"),
        "RefNotPermitted"
    );
    route(
        &mut t,
        "grant",
        "apiVersion: gateway.networking.k8s.io/v1beta1\nkind: ReferenceGrant\nmetadata:\n  name: from-kube-system\nspec:\n  from:\n  - {group: gateway.networking.k8s.io, kind: HTTPRoute, namespace: kube-system}\n  to:\n  - {group: \"\", kind: Service}\n",
    );
    assert_eq!(
        cond(&mut t, "kube-system", "other-ns", "ResolvedRefs"),
        "ResolvedRefs"
    );
    assert_eq!(cond(&mut t, "default", "missing", "Accepted"), "Accepted");
    assert_eq!(
        cond(&mut t, "default", "missing", "ResolvedRefs"),
        "BackendNotFound"
    );
    assert_eq!(
        t.ok(
            "kubectl get httproute missing -o jsonpath={.status.parents[0].conditions[1].message}"
        ),
        "Failed to process route rule 0 backendRef 0: service default/web-v3 not found."
    );
    assert_eq!(
        t.ok("kubectl get gateway eg -o jsonpath={.status.listeners[0].attachedRoutes}"),
        "1"
    );
    // The invalid backendRef's share is answered 500 by envoy itself.
    let out = t.run(&format!(
        "kubectl exec client -- curl -si -H 'Host: missing.example.com' {}",
        proxy_url("/")
    ));
    assert!(
        out.stdout
            .starts_with("HTTP/1.1 500 Internal Server Error\r\n"),
        "{}",
        out.stdout
    );
    // A host outside the listener's wildcard matches nothing.
    let out = t.run(&format!(
        "kubectl exec client -- curl -si -H 'Host: www.example.org' {}",
        proxy_url("/")
    ));
    assert!(
        out.stdout.starts_with("HTTP/1.1 404 Not Found\r\n"),
        "{}",
        out.stdout
    );
    // Scaling the backend to zero leaves envoy without a healthy upstream.
    route(&mut t, "ok", "apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata:\n  name: ok\nspec:\n  parentRefs:\n  - name: eg\n  rules:\n  - backendRefs:\n    - {name: web-v2, port: 8080}\n");
    t.ok("kubectl scale deployment web-v2 --replicas=0");
    t.settle(5);
    let out = t.run(&format!(
        "kubectl exec client -- curl -si -H 'Host: a.example.com' {}",
        proxy_url("/")
    ));
    assert!(
        out.stdout
            .starts_with("HTTP/1.1 503 Service Unavailable\r\n"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.ends_with("no healthy upstream"),
        "{}",
        out.stdout
    );
}

#[test]
fn the_canary_gallery_scenario_splits_ninety_ten_and_is_deterministic() {
    let text = include_str!("../../../public/scenarios/gateway-canary.yaml");
    let sc = kubeloop_sim::scenario::parse_scenario(text).expect("valid");
    let (_, r) = kubeloop_sim::runner::run(&sc, None);
    let out = |needle: &str| {
        r.iter()
            .find(|s| s.command.contains(needle))
            .unwrap_or_else(|| panic!("{needle}"))
            .stdout
            .clone()
    };
    let gw = out("get gatewayclass,gateway");
    assert!(gw.contains("gatewayclass.gateway.networking.k8s.io/eg   gateway.envoyproxy.io/gatewayclass-controller   True       20s"), "{gw}");
    assert!(
        gw.contains("gateway.gateway.networking.k8s.io/eg   eg      <none>    False        20s"),
        "{gw}"
    );
    let infra = out("get pods,svc -n envoy-gateway-system");
    assert!(
        infra.contains("service/envoy-default-eg-e41e7b31   LoadBalancer"),
        "{infra}"
    );
    assert!(out("curl -s -H 'Host: www.example.com'").starts_with("web-v1-"));
    assert_eq!(out("grep -c web-v2"), "10\n");
    let d = out("describe httproute web");
    assert!(
        d.contains("    Controller Name:         gateway.envoyproxy.io/gatewayclass-controller\n"),
        "{d}"
    );
    assert!(
        d.contains("      Message:               Route is accepted\n"),
        "{d}"
    );
    assert!(d.contains("      Weight:  90\n"), "{d}");
    let (_, again) = kubeloop_sim::runner::run(&sc, None);
    let texts = |r: &[kubeloop_sim::runner::StepResult]| {
        r.iter()
            .map(|s| format!("{}{}", s.stdout, s.stderr))
            .collect::<Vec<_>>()
    };
    assert_eq!(texts(&r), texts(&again));
}

#[test]
fn curl_from_the_host_walks_nodeport_envoy_service_pod_hop_by_hop() {
    let mut t = cluster();
    route(&mut t, "web", CANARY);
    let port = t.ok(&format!(
        "kubectl get svc {PROXY} -n envoy-gateway-system -o jsonpath={{.spec.ports[0].nodePort}}"
    ));
    let ip = t.ok("kubectl get node node-1 -o jsonpath={.status.addresses[0].address}");
    let out = t.ok(&format!(
        "curl -s -H 'Host: www.example.com' http://{ip}:{port}/"
    ));
    assert!(out.starts_with("web-v"), "{out}");
    let path = t.w.observe().net().paths.back().cloned().expect("a path");
    let gw = path
        .hops
        .iter()
        .find(|h| h.table == "gateway")
        .expect("a gateway hop");
    assert_eq!(gw.chain, "listener http (:80) of gateway default/eg");
    assert_eq!(
        gw.rule,
        "httproute default/web rule 0 match PathPrefix / (host www.example.com)"
    );
    assert!(gw.note.starts_with("picks default/web-v"), "{}", gw.note);
    assert!(gw.note.contains(":8080 weight "), "{}", gw.note);
    assert!(
        path.endpoint
            .as_deref()
            .is_some_and(|e| e.starts_with("default/web-v")),
        "{path:?}"
    );
    // envoy's access log names the route and the upstream.
    let log = t.ok(&format!(
        "kubectl logs -n envoy-gateway-system deploy/{PROXY} -c envoy"
    ));
    assert!(
        log.contains("\"route_name\":\"httproute/default/web/rule/0/match/0/www_example_com\""),
        "{log}"
    );
    // A default-deny policy on the backends is judged from the envoy pod.
    t.file(
        "deny.yaml",
        "apiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\nmetadata:\n  name: deny\nspec:\n  podSelector: {}\n  policyTypes: [Ingress]\n",
    );
    t.ok("kubectl apply -f deny.yaml");
    t.settle(1);
    let out = t.run(&format!(
        "curl -si -H 'Host: www.example.com' http://{ip}:{port}/"
    ));
    assert!(
        out.stdout
            .starts_with("HTTP/1.1 503 Service Unavailable\r\n"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.ends_with("reset reason: connection timeout"),
        "{}",
        out.stdout
    );
}

#[test]
fn describe_prints_the_custom_objects_and_their_statuses() {
    let mut t = cluster();
    let d = t.ok("kubectl describe gatewayclass eg");
    assert!(
        d.starts_with("Name:         eg\nNamespace:    \nLabels:       <none>\n"),
        "{d}"
    );
    assert!(d.contains("Kind:         GatewayClass\n"), "{d}");
    assert!(
        d.contains("  Controller Name:  gateway.envoyproxy.io/gatewayclass-controller\n"),
        "{d}"
    );
    assert!(
        d.contains("    Message:               Valid GatewayClass\n"),
        "{d}"
    );
    let d = t.ok("kubectl describe gtw eg");
    assert!(d.contains("Kind:         Gateway\n"), "{d}");
    assert!(d.contains("  Gateway Class Name:  eg\n"), "{d}");
    assert!(
        d.contains("      Namespaces:\n        From:  Same\n"),
        "{d}"
    );
    assert!(
        d.contains("    Reason:                AddressNotAssigned\n"),
        "{d}"
    );
    assert!(d.contains("    Attached Routes:  0\n"), "{d}");
    assert!(
        d.ends_with("Events:                <none>\n") || d.contains("Events:"),
        "{d}"
    );
}

#[test]
fn class_parameters_listener_conflicts_and_gateway_deletion() {
    let mut t = cluster();
    t.file(
        "params.yaml",
        "apiVersion: gateway.networking.k8s.io/v1\nkind: GatewayClass\nmetadata:\n  name: custom\nspec:\n  controllerName: gateway.envoyproxy.io/gatewayclass-controller\n  parametersRef:\n    group: gateway.envoyproxy.io\n    kind: EnvoyProxy\n    name: custom\n    namespace: envoy-gateway-system\n",
    );
    t.ok("kubectl apply -f params.yaml");
    t.settle(2);
    assert_eq!(
        t.ok("kubectl get gc custom -o jsonpath={.status.conditions[0].reason}"),
        "InvalidParameters"
    );
    t.file(
        "conflict.yaml",
        "apiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\nmetadata:\n  name: eg\nspec:\n  gatewayClassName: eg\n  listeners:\n  - {name: a, protocol: HTTP, port: 80, hostname: a.example.com}\n  - {name: b, protocol: HTTP, port: 80, hostname: a.example.com}\n  - {name: c, protocol: HTTP, port: 8080}\n",
    );
    t.ok("kubectl apply -f conflict.yaml");
    t.settle(2);
    let y = t.ok("kubectl get gateway eg -o jsonpath={.status.listeners[1].conditions[1].reason}");
    assert_eq!(y, "HostnameConflict");
    assert_eq!(
        t.ok("kubectl get gateway eg -o jsonpath={.status.listeners[2].conditions[0].reason}"),
        "Programmed"
    );
    // The proxy Service follows the listener ports.
    assert_eq!(
        t.ok(&format!(
            "kubectl get svc {PROXY} -n envoy-gateway-system -o jsonpath={{.spec.ports[*].name}}"
        )),
        "http-80 http-8080"
    );
    t.ok("kubectl delete gateway eg");
    t.settle(5);
    for kind in ["deployment", "service", "serviceaccount"] {
        let left = t.run(&format!(
            "kubectl get {kind} {PROXY} -n envoy-gateway-system"
        ));
        assert!(
            left.stderr.contains("NotFound"),
            "{kind}: {} {}",
            left.stdout,
            left.stderr
        );
    }
}

#[test]
fn unknown_release_urls_fail_as_kubectl_does_without_a_network() {
    let mut t = T::new();
    let out = t.run("kubectl apply -f https://github.com/kubernetes-sigs/gateway-api/releases/download/v1.4.0/install.yaml");
    assert_eq!(out.exit_code, 1);
    assert_eq!(
        out.stderr,
        "Unable to connect to the server: dial tcp: lookup github.com: no such host\n"
    );
}

#[test]
fn the_quickstarts_port_forward_reaches_envoy_from_the_terminal() {
    use kubeloop_sim::cmd::{self, Started};
    let mut t = cluster();
    route(&mut t, "web", CANARY);
    let line = format!("kubectl -n envoy-gateway-system port-forward service/{PROXY} 8888:80");
    let pf = match cmd::start(&mut t.w, &line, &std::collections::BTreeMap::new()) {
        Started::Running(id) => id,
        Started::Done(o) => panic!("{o:?}"),
    };
    t.w.run_for(2 * kubeloop_sim::time::SECOND);
    let printed = t.w.terminal(pf).expect("still running").take_unread();
    assert_eq!(
        printed,
        "Forwarding from 127.0.0.1:8888 -> 10080\nForwarding from [::1]:8888 -> 10080\n"
    );
    let out = t.ok("curl -s --header 'Host: www.example.com' http://localhost:8888/");
    assert!(out.starts_with("web-v"), "{out}");
}

#[test]
fn envoy_gateways_quickstart_runs_as_its_docs_show() {
    let mut t = T::new();
    gateway::install(&mut t);
    t.settle(10);
    t.ok("kubectl wait --timeout=5m -n envoy-gateway-system deployment/envoy-gateway --for=condition=Available");
    assert_eq!(
        t.ok("kubectl apply -f https://github.com/envoyproxy/gateway/releases/download/v1.5.0/quickstart.yaml -n default"),
        "gatewayclass.gateway.networking.k8s.io/eg created\ngateway.gateway.networking.k8s.io/eg created\nserviceaccount/backend created\nservice/backend created\ndeployment.apps/backend created\nhttproute.gateway.networking.k8s.io/backend created\n"
    );
    t.settle(30);
    let svc = t.ok("kubectl get svc -n envoy-gateway-system --selector=gateway.envoyproxy.io/owning-gateway-namespace=default,gateway.envoyproxy.io/owning-gateway-name=eg -o jsonpath={.items[0].metadata.name}");
    assert_eq!(svc, PROXY);
    let port = t.ok(&format!(
        "kubectl get svc {PROXY} -n envoy-gateway-system -o jsonpath={{.spec.ports[0].nodePort}}"
    ));
    let ip = t.ok("kubectl get node node-1 -o jsonpath={.status.addresses[0].address}");
    let out = t.run(&format!(
        "curl -si --header 'Host: www.example.com' http://{ip}:{port}/get"
    ));
    assert!(out.stdout.starts_with("HTTP/1.1 200 OK\r\n"), "{out:?}");
}

#[test]
fn with_cloud_provider_kind_the_gateway_gets_an_address_and_serves_the_host() {
    let mut t = cluster();
    route(&mut t, "canary", CANARY);
    t.run("cloud-provider-kind");
    t.settle(20);
    let addr = t.ok("kubectl get gateway eg -o jsonpath={.status.addresses[0].value}");
    let lb = t.ok(&format!(
        "kubectl get svc {PROXY} -n envoy-gateway-system -o jsonpath={{.status.loadBalancer.ingress[0].ip}}"
    ));
    assert!(addr.starts_with("172.18.0."), "{addr}");
    assert_eq!(
        addr, lb,
        "the Gateway's address is its proxy Service's load balancer"
    );
    let table = t.ok("kubectl get gateway eg");
    assert!(
        table.contains(&format!("eg     eg      {addr}   True")),
        "{table}"
    );
    // From the terminal's host, as kind's docs curl it: cloud-provider-kind's envoy →
    // a node's NodePort → the Gateway's envoy → web-v1 or web-v2.
    let out = t.run(&format!(
        "curl -si -H 'Host: www.example.com' http://{addr}/"
    ));
    assert!(out.stdout.starts_with("HTTP/1.1 200 OK\r\n"), "{out:?}");
    let other = t.run(&format!(
        "curl -si -H 'Host: nowhere.example' http://{addr}/"
    ));
    assert!(other.stdout.starts_with("HTTP/1.1 404"), "{other:?}");
}
