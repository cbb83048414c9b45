//! GRPCRoute with Envoy Gateway through the terminal: attachment and status like an
//! HTTPRoute's, and gRPC calls (`POST /<service>/<method>`) routed by service and method.

mod common;
use common::gateway;
use common::Term as T;

fn app(name: &str) -> String {
    format!(
        "apiVersion: apps/v1
kind: Deployment
metadata: {{name: {name}}}
spec:
  replicas: 1
  selector: {{matchLabels: {{app: {name}}}}}
  template:
    metadata: {{labels: {{app: {name}}}}}
    spec:
      containers:
      - {{name: agnhost, image: registry.k8s.io/e2e-test-images/agnhost:2.39, args: [serve-hostname], ports: [{{containerPort: 9376}}]}}
---
apiVersion: v1
kind: Service
metadata: {{name: {name}}}
spec:
  selector: {{app: {name}}}
  ports: [{{port: 9000, targetPort: 9376}}]
---
"
    )
}

const REST: &str = r#"apiVersion: v1
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
kind: Gateway
metadata: {name: eg}
spec:
  gatewayClassName: eg
  listeners:
  - {name: http, protocol: HTTP, port: 80}
---
apiVersion: gateway.networking.k8s.io/v1
kind: GRPCRoute
metadata: {name: yages}
spec:
  parentRefs: [{name: eg}]
  hostnames: [grpc.example.com]
  rules:
  - matches: [{method: {service: yages.Echo, method: Ping}}]
    backendRefs: [{name: ping, port: 9000}]
  - matches: [{method: {service: yages.Echo}}]
    backendRefs: [{name: echo, port: 9000}]
"#;

fn cluster() -> T {
    let mut t = T::new();
    gateway::install(&mut t);
    t.settle(20);
    t.file("all.yaml", &format!("{}{}{REST}", app("ping"), app("echo")));
    t.ok("kubectl apply -f all.yaml");
    t.settle(20);
    t
}

fn call(t: &mut T, ip: &str, path: &str) -> (String, String) {
    let o = t.run(&format!("kubectl exec client -- curl -s --http2-prior-knowledge -X POST -H 'Host: grpc.example.com' -H 'content-type: application/grpc' -w ' %{{http_code}}' http://{ip}{path}"));
    let (body, code) = o.stdout.rsplit_once(' ').unwrap_or(("", ""));
    (body.to_string(), code.to_string())
}

#[test]
fn grpc_calls_route_by_service_and_method() {
    let mut t = cluster();
    let ip = gateway::proxy_ip(&mut t);
    let (body, code) = call(&mut t, &ip, "/yages.Echo/Ping");
    assert!(body.starts_with("ping-"), "{body} {code}");
    assert_eq!(code, "200");
    let (body, _) = call(&mut t, &ip, "/yages.Echo/Say");
    assert!(body.starts_with("echo-"), "{body}");
    // Another service matches no rule: envoy's 404.
    assert_eq!(
        call(&mut t, &ip, "/other.Svc/Ping"),
        (String::new(), "404".into())
    );
    let path = t.w.observe().net().paths.back().cloned().expect("a path");
    assert!(path.outcome.contains("envoy 404"), "{path:?}");
    call(&mut t, &ip, "/yages.Echo/Ping");
    let path = t.w.observe().net().paths.back().cloned().expect("a path");
    let hop = path
        .hops
        .iter()
        .find(|h| h.table == "gateway")
        .expect("gateway hop");
    assert_eq!(
        hop.rule,
        "grpcroute default/yages rule 0 match Exact /yages.Echo/Ping (host grpc.example.com)"
    );
}

#[test]
fn a_grpcroute_gets_parent_status_and_counts_as_attached() {
    let mut t = cluster();
    assert_eq!(
        t.ok("kubectl get grpcroute yages -o jsonpath={.status.parents[0].conditions[0].reason}"),
        "Accepted"
    );
    assert_eq!(
        t.ok("kubectl get grpcroute yages -o jsonpath={.status.parents[0].conditions[1].reason}"),
        "ResolvedRefs"
    );
    assert_eq!(
        t.ok("kubectl get gateway eg -o jsonpath={.status.listeners[0].attachedRoutes}"),
        "1"
    );
    // A listener that admits only HTTPRoutes refuses it.
    t.file(
        "only-http.yaml",
        "apiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\nmetadata: {name: eg}\nspec:\n  gatewayClassName: eg\n  listeners:\n  - {name: http, protocol: HTTP, port: 80, allowedRoutes: {kinds: [{kind: HTTPRoute}]}}\n",
    );
    t.ok("kubectl replace -f only-http.yaml");
    t.settle(2);
    assert_eq!(
        t.ok("kubectl get grpcroute yages -o jsonpath={.status.parents[0].conditions[0].reason}"),
        "NotAllowedByListeners"
    );
}
