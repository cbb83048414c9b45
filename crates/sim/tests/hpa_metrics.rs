//! HorizontalPodAutoscaler metric sources beyond CPU: Pods, Object and External metrics
//! on a kind cluster that serves no custom or external metrics API (the upstream
//! condition, event and `<unknown>` targets), and ContainerResource from metrics-server.

mod common;

use common::Term;

const DEPLOY: &str = "apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: web
        image: nginx:1.27
        resources:
          requests: {cpu: 100m}
";

fn hpa(metrics: &str) -> String {
    format!(
        "apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: web
spec:
  scaleTargetRef: {{apiVersion: apps/v1, kind: Deployment, name: web}}
  minReplicas: 1
  maxReplicas: 5
  metrics:
{metrics}"
    )
}

const PODS: &str = "  - type: Pods
    pods:
      metric: {name: packets-per-second}
      target: {type: AverageValue, averageValue: 1k}
";
const OBJECT: &str = "  - type: Object
    object:
      metric: {name: requests-per-second}
      describedObject: {apiVersion: networking.k8s.io/v1, kind: Ingress, name: main-route}
      target: {type: Value, value: 10k}
";
const EXTERNAL: &str = "  - type: External
    external:
      metric:
        name: queue_messages_ready
        selector: {matchLabels: {queue: worker_tasks}}
      target: {type: AverageValue, averageValue: \"30\"}
";

fn run(metrics: &str) -> Term {
    let mut t = Term::new();
    t.file("web.yaml", DEPLOY);
    t.file("hpa.yaml", &hpa(metrics));
    t.ok("kubectl apply -f web.yaml");
    t.ok("kubectl apply -f hpa.yaml");
    t.settle(40);
    t
}

fn targets(t: &mut Term) -> String {
    let out = t.ok("kubectl get hpa web");
    let row = out.lines().nth(1).unwrap_or("").to_string();
    let header = out.lines().next().unwrap_or("");
    let start = header.find("TARGETS").unwrap();
    let end = header.find("MINPODS").unwrap();
    row[start..end].trim().to_string()
}

#[test]
fn a_pods_metric_without_a_custom_metrics_api_is_failed_get_pods_metric() {
    let mut t = run(PODS);
    assert_eq!(targets(&mut t), "<unknown>/1k");
    let d = t.ok("kubectl describe hpa web");
    assert!(
        d.contains("  \"packets-per-second\" on pods:  <unknown> / 1k\n"),
        "{d}"
    );
    let msg = "unable to get metric packets-per-second: unable to fetch metrics from custom metrics API: no custom metrics API (custom.metrics.k8s.io) registered";
    assert!(
        d.contains(&format!("ScalingActive  False   FailedGetPodsMetric  the HPA was unable to compute the replica count: {msg}")),
        "{d}"
    );
    assert!(d.contains("Warning  FailedGetPodsMetric  "), "{d}");
    assert!(
        d.contains(&format!("horizontal-pod-autoscaler  {msg}")),
        "{d}"
    );
    assert!(
        d.contains("invalid metrics (1 invalid out of 1), first error is: failed to get pods metric value: unable to get metric packets-per-second"),
        "{d}"
    );
    assert_eq!(
        t.ok("kubectl get deploy web -o jsonpath={.spec.replicas}"),
        "1"
    );
}

#[test]
fn object_and_external_metrics_fail_as_upstream_s_clients_do() {
    let mut t = run(OBJECT);
    assert_eq!(targets(&mut t), "<unknown>/10k");
    let c = t.ok("kubectl get hpa web -o jsonpath={.status.conditions[1].reason}:{.status.conditions[1].message}");
    assert_eq!(
        c,
        "FailedGetObjectMetric:the HPA was unable to compute the replica count: unable to get metric requests-per-second: Ingress on default main-route/unable to fetch metrics from custom metrics API: no custom metrics API (custom.metrics.k8s.io) registered"
    );
    let d = t.ok("kubectl describe hpa web");
    assert!(
        d.contains(
            "\"requests-per-second\" on Ingress/main-route (target value):  <unknown> / 10k\n"
        ),
        "{d}"
    );
    let mut t = run(EXTERNAL);
    assert_eq!(targets(&mut t), "<unknown>/30 (avg)");
    let c = t.ok("kubectl get hpa web -o jsonpath={.status.conditions[1].reason}:{.status.conditions[1].message}");
    assert_eq!(
        c,
        "FailedGetExternalMetric:the HPA was unable to compute the replica count: unable to get external metric default/queue_messages_ready/&LabelSelector{MatchLabels:map[string]string{queue: worker_tasks,},MatchExpressions:[]LabelSelectorRequirement{},}: unable to fetch metrics from external metrics API: the server could not find the requested resource (get queue_messages_ready.external.metrics.k8s.io)"
    );
}

#[test]
fn a_container_resource_metric_reads_that_container_s_cpu() {
    let mut t = run("  - type: ContainerResource
    containerResource:
      name: cpu
      container: web
      target: {type: Utilization, averageUtilization: 60}
");
    t.settle(60);
    let got = targets(&mut t);
    assert!(
        got.starts_with("cpu: ") && got.ends_with("%/60%") && !got.contains("unknown"),
        "{got}"
    );
    let c = t.ok("kubectl get hpa web -o jsonpath={.status.conditions[1].message}");
    assert_eq!(
        c,
        "the HPA was able to successfully calculate a replica count from cpu container resource utilization (percentage of request)"
    );
    let d = t.ok("kubectl describe hpa web");
    assert!(
        d.contains("resource cpu of container \"web\" on pods  (as a percentage of request):  "),
        "{d}"
    );
}

#[test]
fn non_resource_metric_sources_are_validated_as_upstream() {
    let mut t = Term::new();
    for (metrics, want) in [
        (
            "  - type: Pods\n    pods:\n      metric: {name: x}\n      target: {type: Value, value: \"1\"}\n",
            "spec.metrics[0].pods.target.averageValue: Required value: must specify a positive target averageValue",
        ),
        (
            "  - type: External\n    external:\n      metric: {name: \"\"}\n      target: {type: Value, value: \"1\", averageValue: \"1\"}\n",
            "spec.metrics[0].external.metric.name: Required value: must specify a metric name",
        ),
        (
            "  - type: External\n    external:\n      metric: {name: q}\n      target: {type: Value, value: \"1\", averageValue: \"1\"}\n",
            "spec.metrics[0].external.target.value: Forbidden: may not set both a target value for metric and a per-pod target",
        ),
        (
            "  - type: Object\n    object:\n      metric: {name: q}\n      describedObject: {kind: Service, name: s}\n      target: {type: Value, value: \"0\"}\n",
            "spec.metrics[0].object.target.value: Invalid value: \"0\": must be positive",
        ),
        (
            "  - type: ContainerResource\n    containerResource:\n      name: cpu\n      container: \"\"\n      target: {type: Utilization, averageUtilization: 50}\n",
            "spec.metrics[0].containerResource.container: Required value: must specify a container",
        ),
    ] {
        t.file("h.yaml", &hpa(metrics));
        let e = t.err("kubectl apply -f h.yaml");
        assert!(e.contains(want), "{want}\nin\n{e}");
    }
}

/// A failing Pods metric beside a CPU one: each target shows its own metric, and the
/// CPU metric's scale-down is not acted on while the other metric is invalid (upstream's
/// "some are invalid and we would scale down").
#[test]
fn a_failing_metric_beside_cpu_blocks_a_scale_down_and_keeps_targets_aligned() {
    let mut t = Term::new();
    t.file(
        "web.yaml",
        &DEPLOY.replace("spec:\n  selector", "spec:\n  replicas: 3\n  selector"),
    );
    t.file(
        "hpa.yaml",
        &hpa(&format!(
            "{PODS}  - type: Resource\n    resource:\n      name: cpu\n      target: {{type: Utilization, averageUtilization: 50}}\n  behavior:\n    scaleDown:\n      stabilizationWindowSeconds: 0\n"
        )),
    );
    t.ok("kubectl apply -f web.yaml");
    t.ok("kubectl apply -f hpa.yaml");
    t.settle(120);
    let got = targets(&mut t);
    assert!(got.starts_with("<unknown>/1k, cpu: "), "{got}");
    assert!(!got.ends_with("<unknown>/50%"), "{got}");
    assert_eq!(
        t.ok("kubectl get deploy web -o jsonpath={.spec.replicas}"),
        "3"
    );
    let reason = t.ok("kubectl get hpa web -o jsonpath={.status.conditions[1].reason}");
    assert_eq!(reason, "FailedGetPodsMetric");
}
