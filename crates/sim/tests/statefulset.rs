//! StatefulSets read through kubectl: the documentation's `web` example (headless
//! Service nginx, two replicas with a `www` claim each), stable identities and storage,
//! ordered creation, scaling, rolling updates and `kubectl rollout` for StatefulSets.

mod common;

use common::Term;

/// content/en/examples/application/web/web.yaml.
pub const WEB: &str = "apiVersion: v1
kind: Service
metadata:
  name: nginx
  labels:
    app: nginx
spec:
  ports:
  - port: 80
    name: web
  clusterIP: None
  selector:
    app: nginx
---
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: web
spec:
  serviceName: \"nginx\"
  replicas: 2
  selector:
    matchLabels:
      app: nginx
  template:
    metadata:
      labels:
        app: nginx
    spec:
      containers:
      - name: nginx
        image: registry.k8s.io/nginx-slim:0.21
        ports:
        - containerPort: 80
          name: web
        volumeMounts:
        - name: www
          mountPath: /usr/share/nginx/html
  volumeClaimTemplates:
  - metadata:
      name: www
    spec:
      accessModes: [ \"ReadWriteOnce\" ]
      resources:
        requests:
          storage: 1Gi
";

fn web() -> Term {
    let mut t = Term::new();
    t.file("web.yaml", WEB);
    let out = t.ok("kubectl apply -f web.yaml");
    assert_eq!(out, "service/nginx created\nstatefulset.apps/web created\n");
    t
}

/// The first column of a table's rows.
fn names(table: &str) -> Vec<String> {
    table
        .lines()
        .skip(1)
        .filter_map(|l| l.split_whitespace().next().map(str::to_string))
        .collect()
}

#[test]
fn the_web_example_runs_as_the_tutorial_describes() {
    let mut t = web();
    t.settle(60);
    let sts = t.ok("kubectl get sts web");
    let mut lines = sts.lines();
    assert_eq!(
        lines.next().unwrap().split_whitespace().collect::<Vec<_>>(),
        ["NAME", "READY", "AGE"]
    );
    let row: Vec<&str> = lines.next().unwrap().split_whitespace().collect();
    assert_eq!(&row[..2], ["web", "2/2"], "{sts}");
    let pods = t.ok("kubectl get pods -l app=nginx");
    assert_eq!(names(&pods), ["web-0", "web-1"], "{pods}");
    assert!(
        pods.lines()
            .skip(1)
            .all(|l| l.contains("1/1") && l.contains("Running")),
        "{pods}"
    );
    let pvc = t.ok("kubectl get pvc -l app=nginx");
    assert_eq!(names(&pvc), ["www-web-0", "www-web-1"], "{pvc}");
    assert!(pvc.lines().skip(1).all(|l| l.contains("Bound")), "{pvc}");
    let hosts = t.ok("kubectl get pods web-0 -o jsonpath={.spec.hostname}.{.spec.subdomain}");
    assert_eq!(hosts, "web-0.nginx");
    let labels = t.ok("kubectl get pod web-1 --show-labels");
    assert!(
        labels.contains("apps.kubernetes.io/pod-index=1"),
        "{labels}"
    );
    assert!(
        labels.contains("statefulset.kubernetes.io/pod-name=web-1"),
        "{labels}"
    );
    assert!(labels.contains("controller-revision-hash=web-"), "{labels}");
    let wide = t.ok("kubectl get sts web -o wide");
    let head: Vec<&str> = wide.lines().next().unwrap().split_whitespace().collect();
    assert_eq!(head, ["NAME", "READY", "AGE", "CONTAINERS", "IMAGES"]);
    let row: Vec<&str> = wide.lines().nth(1).unwrap().split_whitespace().collect();
    assert_eq!(
        &row[3..],
        ["nginx", "registry.k8s.io/nginx-slim:0.21"],
        "{wide}"
    );
}

#[test]
fn ordered_ready_creates_web_1_only_after_web_0_is_ready() {
    let mut t = web();
    t.settle(1);
    let pods = t.ok("kubectl get pods -l app=nginx");
    assert_eq!(names(&pods), ["web-0"], "{pods}");
    t.settle(60);
    let events = t.ok("kubectl get events --field-selector involvedObject.kind=StatefulSet");
    let created: Vec<&str> = events
        .lines()
        .filter(|l| l.contains("SuccessfulCreate"))
        .collect();
    assert_eq!(created.len(), 4, "{events}");
    assert!(
        events.contains("create Claim www-web-0 Pod web-0 in StatefulSet web success"),
        "{events}"
    );
    assert!(
        events.contains("create Pod web-0 in StatefulSet web successful"),
        "{events}"
    );
    let c0 = events.find("create Pod web-0").unwrap();
    let c1 = events.find("create Pod web-1").unwrap();
    assert!(c0 < c1, "{events}");
}

#[test]
fn a_deleted_pod_comes_back_with_its_name_and_claim() {
    let mut t = web();
    t.settle(60);
    let uid = t.ok("kubectl get pod web-0 -o jsonpath={.metadata.uid}");
    t.ok("kubectl delete pod web-0");
    t.settle(60);
    let pods = t.ok("kubectl get pods -l app=nginx");
    assert_eq!(names(&pods), ["web-0", "web-1"], "{pods}");
    assert!(
        pods.lines().skip(1).all(|l| l.contains("Running")),
        "{pods}"
    );
    assert_ne!(
        t.ok("kubectl get pod web-0 -o jsonpath={.metadata.uid}"),
        uid
    );
    let claim = t
        .ok("kubectl get pod web-0 -o jsonpath={.spec.volumes[0].persistentVolumeClaim.claimName}");
    assert_eq!(claim, "www-web-0");
    let pvc = t.ok("kubectl get pvc");
    assert_eq!(names(&pvc), ["www-web-0", "www-web-1"], "{pvc}");
}

#[test]
fn scaling_down_removes_the_highest_ordinal_and_keeps_its_claim() {
    let mut t = web();
    t.settle(60);
    t.ok("kubectl scale sts web --replicas=5");
    t.settle(120);
    let pods = t.ok("kubectl get pods -l app=nginx");
    assert_eq!(
        names(&pods),
        ["web-0", "web-1", "web-2", "web-3", "web-4"],
        "{pods}"
    );
    t.ok("kubectl scale sts web --replicas=3");
    t.settle(120);
    let pods = t.ok("kubectl get pods -l app=nginx");
    assert_eq!(names(&pods), ["web-0", "web-1", "web-2"], "{pods}");
    let pvc = t.ok("kubectl get pvc");
    assert_eq!(names(&pvc).len(), 5, "{pvc}");
    let events = t.ok("kubectl get events --field-selector involvedObject.kind=StatefulSet");
    let d4 = events
        .find("delete Pod web-4 in StatefulSet web successful")
        .unwrap();
    let d3 = events
        .find("delete Pod web-3 in StatefulSet web successful")
        .unwrap();
    assert!(d4 < d3, "{events}");
}

#[test]
fn rollout_status_history_undo_and_restart_speak_statefulset() {
    let mut t = web();
    let out = t.ok("kubectl rollout status sts/web");
    assert!(out.starts_with("Waiting for"), "{out}");
    assert!(
        out.ends_with("partitioned roll out complete: 2 new pods have been updated...\n"),
        "{out}"
    );
    t.ok("kubectl set image sts/web nginx=registry.k8s.io/nginx-slim:0.24");
    let out = t.ok("kubectl rollout status statefulset/web");
    assert!(
        out.ends_with("partitioned roll out complete: 2 new pods have been updated...\n"),
        "{out}"
    );
    let img = t.ok("kubectl get pod web-0 -o jsonpath={.spec.containers[0].image}");
    assert_eq!(img, "registry.k8s.io/nginx-slim:0.24");
    let hist = t.ok("kubectl rollout history sts/web");
    assert_eq!(
        hist,
        "statefulset.apps/web \nREVISION  CHANGE-CAUSE\n1         <none>\n2         <none>\n\n"
    );
    assert_eq!(
        t.ok("kubectl rollout undo sts/web"),
        "statefulset.apps/web rolled back\n"
    );
    t.ok("kubectl rollout status sts/web");
    let img = t.ok("kubectl get pod web-1 -o jsonpath={.spec.containers[0].image}");
    assert_eq!(img, "registry.k8s.io/nginx-slim:0.21");
    let hist = t.ok("kubectl rollout history sts/web");
    assert_eq!(
        hist,
        "statefulset.apps/web \nREVISION  CHANGE-CAUSE\n2         <none>\n3         <none>\n\n"
    );
    assert_eq!(
        t.ok("kubectl rollout restart sts/web"),
        "statefulset.apps/web restarted\n"
    );
    t.ok("kubectl rollout status sts/web");
}

#[test]
fn on_delete_refuses_rollout_status_and_the_spec_keeps_its_immutable_fields() {
    let mut t = web();
    t.settle(30);
    t.ok(r#"kubectl patch sts web -p '{"spec":{"updateStrategy":{"type":"OnDelete","rollingUpdate":null}}}'"#);
    let err = t.err("kubectl rollout status sts/web");
    assert_eq!(
        err,
        "error: rollout status is only available for RollingUpdate strategy type\n"
    );
    let err = t.err(r#"kubectl patch sts web -p '{"spec":{"serviceName":"other"}}'"#);
    assert_eq!(err, "The StatefulSet \"web\" is invalid: spec: Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden\n");
}

#[test]
fn pods_resolve_through_the_headless_service() {
    let mut t = web();
    t.file(
        "dns.yaml",
        "apiVersion: v1
kind: Pod
metadata:
  name: dns-test
spec:
  containers:
  - name: dns-test
    image: busybox:1.28
    command: [\"sleep\", \"3600\"]
",
    );
    t.ok("kubectl apply -f dns.yaml");
    t.settle(60);
    let ip0 = t.ok("kubectl get pod web-0 -o jsonpath={.status.podIP}");
    let ip1 = t.ok("kubectl get pod web-1 -o jsonpath={.status.podIP}");
    let out = t.ok("kubectl exec dns-test -- nslookup web-0.nginx");
    assert!(
        out.contains("web-0.nginx.default.svc.cluster.local"),
        "{out}"
    );
    assert!(out.contains(&ip0), "{out}");
    let out = t.ok("kubectl exec dns-test -- nslookup web-1.nginx.default.svc.cluster.local");
    assert!(out.contains(&ip1), "{out}");
    let out = t.ok("kubectl exec dns-test -- nslookup nginx");
    assert!(out.contains(&ip0) || out.contains(&ip1), "{out}");
    let slice = t.ok("kubectl get endpointslices -l kubernetes.io/service-name=nginx -o jsonpath={.items[0].endpoints[*].hostname}");
    assert_eq!(slice, "web-0 web-1");
}

#[test]
fn a_claim_that_never_binds_leaves_its_pod_pending_and_blocks_nothing_else() {
    let mut t = Term::new();
    let never = WEB.replace(
        "      accessModes: [ \"ReadWriteOnce\" ]",
        "      storageClassName: does-not-exist\n      accessModes: [ \"ReadWriteOnce\" ]",
    );
    t.file("web.yaml", &never);
    t.ok("kubectl apply -f web.yaml");
    t.ok("kubectl apply -f nginx.yaml");
    t.settle(60);
    let pods = t.ok("kubectl get pods -l app=nginx");
    assert_eq!(
        names(&pods)
            .iter()
            .filter(|n| n.starts_with("web-"))
            .count(),
        1,
        "{pods}"
    );
    let web0 = t.ok("kubectl get pod web-0");
    assert!(web0.contains("web-0   0/1     Pending"), "{web0}");
    let events = t.ok("kubectl get events --field-selector involvedObject.name=web-0");
    assert!(events.contains("FailedScheduling"), "{events}");
    assert!(t.ok("kubectl get sts web").contains("0/2"));
    // The nginx Deployment beside it runs.
    let deploy = t.ok("kubectl get deploy nginx");
    assert!(deploy.contains("3/3"), "{deploy}");
}

/// Runs a scenario shipped in public/scenarios/; its steps' results.
fn scenario(name: &str) -> Vec<kubeloop_sim::runner::StepResult> {
    let path = format!(
        "{}/../../public/scenarios/{name}.yaml",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).expect("scenario file");
    let sc = kubeloop_sim::scenario::parse_scenario(&text).unwrap_or_else(|e| panic!("{e:?}"));
    kubeloop_sim::runner::run(&sc, None).1
}

#[test]
fn the_statefulset_web_scenario_brings_web_0_back_with_its_claim() {
    let r = scenario("statefulset-web");
    let at = |s: u64, cmd: &str| {
        r.iter()
            .find(|x| x.at_ms == s * 1000 && x.command == cmd)
            .unwrap_or_else(|| panic!("no {cmd} at {s}s"))
            .stdout
            .clone()
    };
    assert!(at(30, "kubectl get sts web").contains("web    2/2"));
    let before = at(30, "kubectl get pvc -l app=nginx");
    let after = at(60, "kubectl get pvc -l app=nginx");
    let volumes = |t: &str| -> Vec<String> {
        t.lines()
            .skip(1)
            .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
            .collect()
    };
    assert_eq!(volumes(&before), volumes(&after));
    assert_eq!(
        names(&at(60, "kubectl get pods -l app=nginx -o wide")),
        ["web-0", "web-1"]
    );
    assert!(at(61, "kubectl exec dns-test -- nslookup web-0.nginx")
        .contains("Name:\tweb-0.nginx.default.svc.cluster.local"));
}

#[test]
fn describe_statefulset_prints_strategy_pods_and_claim_templates() {
    let mut t = web();
    t.settle(60);
    let out = t.ok("kubectl describe sts web");
    for line in [
        "Name:               web\n",
        "Namespace:          default\n",
        "Selector:           app=nginx\n",
        "Replicas:           2 desired | 2 total\n",
        "Update Strategy:    RollingUpdate\n",
        "  Partition:        0\n",
        "Pods Status:        2 Running / 0 Waiting / 0 Succeeded / 0 Failed\n",
        "Volume Claims:\n",
        "  Name:          www\n",
        "  Capacity:      1Gi\n",
        "  Access Modes:  [ReadWriteOnce]\n",
    ] {
        assert!(out.contains(line), "{line:?} in\n{out}");
    }
    assert!(out.contains("SuccessfulCreate  "), "{out}");
}

#[test]
fn the_claim_retention_policy_deletes_claims_with_the_set_or_the_scale_down() {
    let mut t = Term::new();
    let deleting = WEB.replace(
        "  serviceName: \"nginx\"\n",
        "  serviceName: \"nginx\"\n  persistentVolumeClaimRetentionPolicy:\n    whenDeleted: Delete\n    whenScaled: Delete\n",
    );
    t.file("web.yaml", &deleting);
    t.ok("kubectl apply -f web.yaml");
    t.settle(60);
    t.ok("kubectl scale sts web --replicas=1");
    t.settle(60);
    assert_eq!(names(&t.ok("kubectl get pvc")), ["www-web-0"]);
    t.ok("kubectl delete sts web");
    t.settle(60);
    let out = t.run("kubectl get pvc,pods");
    assert_eq!(
        out.stderr, "No resources found in default namespace.\n",
        "{out:?}"
    );
}

#[test]
fn deleting_the_namespace_removes_the_set_its_pods_and_revisions() {
    let mut t = Term::new();
    t.file("web.yaml", WEB);
    t.ok("kubectl create namespace shop");
    t.ok("kubectl apply -f web.yaml -n shop");
    t.settle(60);
    assert!(!t.ok("kubectl get controllerrevisions -n shop").is_empty());
    t.ok("kubectl delete namespace shop");
    t.settle(120);
    let out = t.run("kubectl get namespace shop");
    assert_eq!(
        out.stderr, "Error from server (NotFound): namespaces \"shop\" not found\n",
        "{out:?}"
    );
}
