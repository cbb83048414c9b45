//! The HorizontalPodAutoscaler through kubectl: the documentation's php-apache
//! walkthrough (autoscale, load, scale up, scale down after the stabilization window),
//! `get hpa` and `describe hpa` as upstream prints them, validation and a missing target.

mod common;

use common::Term;

/// content/en/examples/application/php-apache.yaml
pub const PHP_APACHE: &str = "apiVersion: apps/v1
kind: Deployment
metadata:
  name: php-apache
spec:
  selector:
    matchLabels:
      run: php-apache
  template:
    metadata:
      labels:
        run: php-apache
    spec:
      containers:
      - name: php-apache
        image: registry.k8s.io/hpa-example
        ports:
        - containerPort: 80
        resources:
          limits:
            cpu: 500m
          requests:
            cpu: 200m
---
apiVersion: v1
kind: Service
metadata:
  name: php-apache
  labels:
    run: php-apache
spec:
  ports:
  - port: 80
  selector:
    run: php-apache
";

/// The walkthrough's `kubectl run load-generator … wget` loop, as a Pod manifest.
pub const LOAD_GENERATOR: &str = "apiVersion: v1
kind: Pod
metadata:
  name: load-generator
spec:
  restartPolicy: Never
  containers:
  - name: load-generator
    image: busybox:1.28
    command: [\"/bin/sh\", \"-c\", \"while sleep 0.01; do wget -q -O- http://php-apache; done\"]
";

fn walkthrough() -> Term {
    let mut t = Term::new();
    t.file("php-apache.yaml", PHP_APACHE);
    t.file("load.yaml", LOAD_GENERATOR);
    t.ok("kubectl apply -f php-apache.yaml");
    t.settle(30);
    let out = t.ok("kubectl autoscale deployment php-apache --cpu-percent=50 --min=1 --max=10");
    assert_eq!(
        out,
        "horizontalpodautoscaler.autoscaling/php-apache autoscaled\n"
    );
    t
}

fn replicas(t: &mut Term) -> String {
    t.ok("kubectl get deploy php-apache -o jsonpath={.spec.replicas}")
}

#[test]
fn a_new_hpa_shows_unknown_targets_then_the_measured_utilization() {
    let mut t = walkthrough();
    let out = t.ok("kubectl get hpa");
    assert_eq!(
        out,
        "NAME         REFERENCE               TARGETS              MINPODS   MAXPODS   REPLICAS   AGE\n\
         php-apache   Deployment/php-apache   cpu: <unknown>/50%   1         10        0          0s\n"
    );
    t.settle(60);
    let out = t.ok("kubectl get hpa");
    let row = out.lines().nth(1).unwrap().to_string();
    assert!(
        row.contains("cpu: 0%/50%") || row.contains("cpu: 1%/50%"),
        "{out}"
    );
    assert!(row.contains("   1          "), "{out}");
    // `kubectl get all` lists autoscalers, after statefulsets and before cronjobs.
    let all = t.ok("kubectl get all");
    let hpa = all
        .find("horizontalpodautoscaler.autoscaling/php-apache")
        .unwrap_or_else(|| panic!("{all}"));
    assert!(
        all.find("replicaset.apps/").is_some_and(|rs| rs < hpa),
        "{all}"
    );
}

#[test]
fn load_scales_the_deployment_up_and_its_end_scales_it_back_down() {
    let mut t = walkthrough();
    t.settle(60);
    t.ok("kubectl apply -f load.yaml");
    t.settle(180);
    let up: i32 = replicas(&mut t).parse().unwrap();
    assert!((5..=8).contains(&up), "replicas under load: {up}");
    let describe = t.ok("kubectl describe hpa php-apache");
    assert!(describe.contains("SuccessfulRescale"), "{describe}");
    assert!(
        describe.contains("reason: cpu resource utilization (percentage of request) above target"),
        "{describe}"
    );
    assert!(describe.contains("Deployment pods:"), "{describe}");
    t.ok("kubectl delete pod load-generator --now");
    // The recommendation drops at once; the 300 s window holds the scale.
    t.settle(240);
    assert_eq!(replicas(&mut t), up.to_string());
    let d = t.ok("kubectl describe hpa php-apache");
    assert!(d.contains("ScaleDownStabilized"), "{d}");
    t.settle(200);
    assert_eq!(replicas(&mut t), "1");
    let d = t.ok("kubectl describe hpa php-apache");
    assert!(
        d.contains("New size: 1; reason: All metrics below target"),
        "{d}"
    );
}

#[test]
fn describe_prints_metrics_conditions_and_pods_as_upstream() {
    let mut t = walkthrough();
    t.settle(60);
    let d = t.ok("kubectl describe hpa php-apache");
    let lines: Vec<&str> = d.lines().collect();
    assert_eq!(
        lines[0],
        "Name:                                                  php-apache"
    );
    assert_eq!(
        lines[5],
        "Reference:                                             Deployment/php-apache"
    );
    assert_eq!(
        lines[6],
        "Metrics:                                               ( current / target )"
    );
    assert!(
        lines[7].starts_with("  resource cpu on pods  (as a percentage of request):  "),
        "{d}"
    );
    assert!(lines[7].ends_with("/ 50%"), "{d}");
    assert_eq!(
        lines[8],
        "Min replicas:                                          1"
    );
    assert_eq!(
        lines[9],
        "Max replicas:                                          10"
    );
    assert_eq!(
        lines[10],
        "Deployment pods:                                       1 current / 1 desired"
    );
    assert_eq!(lines[11], "Conditions:");
    assert_eq!(
        lines[12],
        "  Type            Status  Reason               Message"
    );
    assert_eq!(
        lines[13],
        "  ----            ------  ------               -------"
    );
    // An idle pod proposes 0 replicas; the window keeps the first recommendation (1).
    assert_eq!(lines[14], "  AbleToScale     True    ScaleDownStabilized  recent recommendations were higher than current one, applying the highest recent recommendation");
    assert_eq!(lines[15], "  ScalingActive   True    ValidMetricFound     the HPA was able to successfully calculate a replica count from cpu resource utilization (percentage of request)");
    assert_eq!(lines[16], "  ScalingLimited  False   DesiredWithinRange   the desired count is within the acceptable range");
}

#[test]
fn a_missing_target_fails_to_get_scale_and_blocks_nothing_else() {
    let mut t = Term::new();
    t.file(
        "orphan.yaml",
        "apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: orphan
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: nope}
  maxReplicas: 3
",
    );
    t.ok("kubectl apply -f orphan.yaml");
    t.ok("kubectl apply -f nginx.yaml");
    t.settle(40);
    let d = t.ok("kubectl describe hpa orphan");
    assert!(d.contains("  AbleToScale  False   FailedGetScale  the HPA controller was unable to get the target's current scale: deployments.apps \"nope\" not found"), "{d}");
    assert!(d.contains("Warning  FailedGetScale"), "{d}");
    // The defaulted target: 80% CPU.
    assert!(
        d.contains("(as a percentage of request):  <unknown> / 80%"),
        "{d}"
    );
    let pods = t.ok("kubectl get pods");
    assert_eq!(pods.lines().count(), 4, "{pods}");
    assert!(!pods.contains("Pending"), "{pods}");
}

#[test]
fn validation_and_flag_errors_use_upstream_messages() {
    let mut t = Term::new();
    t.file(
        "bad.yaml",
        "apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: bad
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: nginx}
  minReplicas: 0
  maxReplicas: 0
",
    );
    let e = t.err("kubectl apply -f bad.yaml");
    assert!(
        e.contains("spec.minReplicas: Invalid value: 0: must be greater than or equal to 1"),
        "{e}"
    );
    assert!(
        e.contains("spec.maxReplicas: Invalid value: 0: must be greater than 0"),
        "{e}"
    );
    let e = t.err("kubectl autoscale deployment nginx --min=3 --max=2");
    assert_eq!(
        e,
        "error: --max=MAXPODS must be larger or equal to --min=MINPODS, max: 2, min: 3\n"
    );
    t.ok("kubectl apply -f nginx.yaml");
    t.ok("kubectl autoscale deployment nginx --cpu=70% --max=3");
    let out = t.ok("kubectl get hpa nginx");
    assert!(out.contains("cpu: <unknown>/70%"), "{out}");
    let e = t.err("kubectl autoscale deployment nginx");
    assert_eq!(
        e,
        "error: --max=MAXPODS is required and must be at least 1, max: -1\n"
    );
}

#[test]
fn an_autoscaling_v1_manifest_applies_and_reads_back() {
    let mut t = walkthrough();
    t.ok("kubectl delete hpa php-apache");
    t.file(
        "v1.yaml",
        "apiVersion: autoscaling/v1
kind: HorizontalPodAutoscaler
metadata:
  name: php-apache
spec:
  scaleTargetRef:
    apiVersion: apps/v1
    kind: Deployment
    name: php-apache
  minReplicas: 1
  maxReplicas: 10
  targetCPUUtilizationPercentage: 50
",
    );
    assert_eq!(
        t.ok("kubectl apply -f v1.yaml"),
        "horizontalpodautoscaler.autoscaling/php-apache created\n"
    );
    let y = t.ok("kubectl get hpa php-apache -o yaml");
    assert!(y.starts_with("apiVersion: autoscaling/v2\n"), "{y}");
    assert!(y.contains("averageUtilization: 50"), "{y}");
    let out = t.ok("kubectl get hpa");
    assert!(out.contains("cpu: <unknown>/50%"), "{out}");
}

#[test]
fn the_shipped_walkthrough_scenario_scales_up_and_back_down() {
    use kubeloop_sim::runner;
    use kubeloop_sim::scenario::parse_scenario;
    let path = format!(
        "{}/../../public/scenarios/hpa-php-apache.yaml",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(path).expect("scenario file");
    let sc = parse_scenario(&text).expect("a valid scenario");
    let steps = runner::run(&sc, None).1;
    let at = |s: u64, prefix: &str| {
        steps
            .iter()
            .find(|r| r.at_ms == s * 1000 && r.command.starts_with(prefix))
            .unwrap_or_else(|| panic!("no step {prefix} at {s}s"))
            .stdout
            .clone()
    };
    assert!(at(31, "kubectl get hpa").contains("cpu: <unknown>/50%"));
    let loaded = at(271, "kubectl get deployment");
    let ready = loaded
        .lines()
        .nth(1)
        .unwrap()
        .split_whitespace()
        .nth(1)
        .unwrap()
        .to_string();
    let n: i32 = ready.split('/').next().unwrap().parse().unwrap();
    assert!((5..=8).contains(&n), "{loaded}");
    let after = at(701, "kubectl get deployment");
    assert!(
        after.contains("php-apache   1/1     1            1"),
        "{after}"
    );
    let d = at(702, "kubectl describe hpa");
    assert!(
        d.contains("New size: 1; reason: All metrics below target"),
        "{d}"
    );
}

#[test]
fn an_average_value_target_shows_millicores() {
    let mut t = walkthrough();
    t.ok("kubectl delete hpa php-apache");
    t.ok("kubectl autoscale deployment php-apache --cpu=100m --max=5");
    t.settle(40);
    let out = t.ok("kubectl get hpa");
    let row = out.lines().nth(1).unwrap();
    assert!(row.contains("cpu: ") && row.contains("m/100m"), "{out}");
    let d = t.ok("kubectl describe hpa php-apache");
    assert!(d.contains("  resource cpu on pods:  "), "{d}");
    assert!(
        d.contains(
            "the HPA was able to successfully calculate a replica count from cpu resource\n"
        ) || d.contains("replica count from cpu resource "),
        "{d}"
    );
}
