//! PodDisruptionBudgets end to end through the terminal: the kind, the disruption
//! controller's status, the eviction subresource with `kubectl drain`, and PDB-aware
//! preemption.

mod common;

use common::Term;

const PDB_MIN2: &str = "apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: nginx
spec:
  minAvailable: 2
  selector:
    matchLabels:
      app: nginx
";

#[test]
fn a_pdb_applies_and_lists_with_upstream_columns() {
    let mut t = Term::new();
    t.file("pdb.yaml", PDB_MIN2);
    assert_eq!(
        t.ok("kubectl apply -f pdb.yaml"),
        "poddisruptionbudget.policy/nginx created\n"
    );
    t.settle(1);
    let out = t.ok("kubectl get pdb");
    assert_eq!(
        out,
        "NAME    MIN AVAILABLE   MAX UNAVAILABLE   ALLOWED DISRUPTIONS   AGE\nnginx   2               N/A               0                     1s\n"
    );
}

#[test]
fn a_pdb_with_both_bounds_is_refused_with_upstreams_message() {
    let mut t = Term::new();
    t.file(
        "pdb.yaml",
        "apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: web
spec:
  minAvailable: 1
  maxUnavailable: 1
  selector:
    matchLabels:
      app: web
",
    );
    let err = t.err("kubectl apply -f pdb.yaml");
    assert_eq!(
        err,
        "The PodDisruptionBudget \"web\" is invalid: spec: Invalid value: {\"MinAvailable\":1,\"Selector\":{\"matchLabels\":{\"app\":\"web\"}},\"MaxUnavailable\":1,\"UnhealthyPodEvictionPolicy\":null}: minAvailable and maxUnavailable cannot be both set\n"
    );
}

const PDB_MAX_PCT: &str = "apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: nginx-max
spec:
  maxUnavailable: 50%
  selector:
    matchLabels:
      app: nginx
";

/// The controller fills the status from the Deployment's three Ready pods: minAvailable 2
/// allows one disruption; maxUnavailable 50% of 3 rounds up to 2, so 1 must stay healthy.
#[test]
fn the_disruption_controller_reports_healthy_and_allowed_pods() {
    let mut t = Term::new();
    t.file("pdb.yaml", PDB_MIN2);
    t.file("pdb-max.yaml", PDB_MAX_PCT);
    t.ok("kubectl apply -f nginx.yaml");
    t.ok("kubectl apply -f pdb.yaml");
    t.ok("kubectl apply -f pdb-max.yaml");
    t.settle(60);
    let out = t.ok("kubectl get pdb");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines[0],
        "NAME        MIN AVAILABLE   MAX UNAVAILABLE   ALLOWED DISRUPTIONS   AGE"
    );
    assert!(
        lines[1].starts_with("nginx       2               N/A               1      "),
        "{out}"
    );
    assert!(
        lines[2].starts_with("nginx-max   N/A             50%               2      "),
        "{out}"
    );
    let status = t.ok("kubectl get pdb nginx-max -o jsonpath={.status}");
    let v: serde_json::Value = serde_json::from_str(&status).unwrap();
    assert_eq!(v["currentHealthy"], 3);
    assert_eq!(v["desiredHealthy"], 1);
    assert_eq!(v["expectedPods"], 3);
    assert_eq!(v["disruptionsAllowed"], 2);
    assert_eq!(v["observedGeneration"], 1);
    let c = &v["conditions"][0];
    assert_eq!(c["type"], "DisruptionAllowed");
    assert_eq!(c["status"], "True");
    assert_eq!(c["reason"], "SufficientPods");
    // Scaling to one replica leaves nothing to disrupt under minAvailable 2.
    t.ok("kubectl scale deployment nginx --replicas=1");
    t.settle(60);
    let status = t.ok("kubectl get pdb nginx -o jsonpath={.status}");
    let v: serde_json::Value = serde_json::from_str(&status).unwrap();
    assert_eq!(v["currentHealthy"], 1);
    assert_eq!(v["desiredHealthy"], 2);
    assert_eq!(v["disruptionsAllowed"], 0);
    assert_eq!(v["conditions"][0]["status"], "False");
    assert_eq!(v["conditions"][0]["reason"], "InsufficientPods");
    let d = t.ok("kubectl describe pdb nginx");
    assert!(d.starts_with("Name:           nginx\nNamespace:      default\nMin available:  2\nSelector:       app=nginx\nStatus:\n    Allowed disruptions:  0\n    Current:              1\n    Desired:              2\n    Total:                1\n"), "{d}");
}

/// The name of the first pod whose line in `kubectl get pods -o wide` names `node`.
fn pods_on(t: &mut Term, node: &str) -> Vec<String> {
    t.ok("kubectl get pods -o wide --no-headers")
        .lines()
        .filter(|l| l.split_whitespace().nth(6) == Some(node))
        .map(|l| l.split_whitespace().next().unwrap_or("").to_string())
        .collect()
}

const RETRY: &str =
    "(will retry after 5s): Cannot evict pod as it would violate the pod's disruption budget.\n";

/// minAvailable 3 of 3: no eviction is allowed, and `kubectl drain` retries every 5 s
/// with kubectl's message, leaving the pod running.
#[test]
fn drain_retries_while_the_budget_allows_no_disruption() {
    let mut t = Term::new();
    t.file(
        "pdb.yaml",
        &PDB_MIN2.replace("minAvailable: 2", "minAvailable: 3"),
    );
    t.ok("kubectl apply -f nginx.yaml");
    t.ok("kubectl apply -f pdb.yaml");
    t.settle(60);
    let pods = pods_on(&mut t, "node-1");
    assert_eq!(pods.len(), 1, "one replica per node");
    let pod = &pods[0];
    let o = kubeloop_sim::cmd::run(
        &mut t.w,
        "kubectl drain node-1 --pod-selector=app=nginx",
        &t.files,
        12_000,
    );
    let line = format!("error when evicting pods/\"{pod}\" -n \"default\" {RETRY}");
    assert_eq!(o.stderr, line.repeat(3), "{o:?}");
    let evicting = format!("evicting pod default/{pod}\n");
    assert_eq!(
        o.stdout,
        format!("node/node-1 cordoned\n{}", evicting.repeat(3))
    );
    assert_eq!(pods_on(&mut t, "node-1"), vec![pod.clone()]);
    // The refusal is a 429 whose cause names the budget's numbers.
    let out = t.ok("kubectl get pdb nginx -o jsonpath={.status.disruptionsAllowed}");
    assert_eq!(out, "0");
}

/// minAvailable 3 of 4 allows one disruption: the first pod goes at once, the second is
/// refused until the first one's replacement is Ready elsewhere, then goes too.
#[test]
fn drain_evicts_within_the_budget_and_waits_for_replacements() {
    let mut t = Term::new();
    t.file(
        "pdb.yaml",
        &PDB_MIN2.replace("minAvailable: 2", "minAvailable: 3"),
    );
    t.ok("kubectl cordon node-3");
    t.ok("kubectl apply -f nginx.yaml");
    t.ok("kubectl scale deployment nginx --replicas=4");
    t.ok("kubectl apply -f pdb.yaml");
    t.settle(60);
    let on_1 = pods_on(&mut t, "node-1");
    assert_eq!(on_1.len(), 2, "two replicas on node-1");
    assert_eq!(
        t.ok("kubectl get pdb nginx -o jsonpath={.status.disruptionsAllowed}"),
        "1"
    );
    // kind's kube-proxy and kindnet pods are DaemonSet-managed, as on a real kind node.
    let o = t.run("kubectl drain node-1 --ignore-daemonsets");
    assert_eq!(o.exit_code, 0, "{o:?}");
    assert!(o.stdout.ends_with("node/node-1 drained\n"), "{o:?}");
    for p in &on_1 {
        assert!(o.stdout.contains(&format!("pod/{p} evicted\n")), "{o:?}");
    }
    assert!(
        o.stderr.contains(RETRY),
        "the second eviction waited: {o:?}"
    );
    assert!(pods_on(&mut t, "node-1").is_empty());
}

/// Two budgets selecting one pod: the eviction subresource refuses with a 500 and drain
/// reports it as kubectl does.
#[test]
fn a_pod_with_two_budgets_cannot_be_evicted() {
    let mut t = Term::new();
    t.file("pdb.yaml", PDB_MIN2);
    t.file(
        "pdb2.yaml",
        &PDB_MIN2.replace("name: nginx\n", "name: nginx-2\n"),
    );
    t.ok("kubectl apply -f nginx.yaml");
    t.ok("kubectl apply -f pdb.yaml");
    t.ok("kubectl apply -f pdb2.yaml");
    t.settle(60);
    let pod = pods_on(&mut t, "node-1").remove(0);
    let o = t.run("kubectl drain node-1 --ignore-daemonsets");
    assert_eq!(o.exit_code, 1, "{o:?}");
    let (warning, rest) = o.stderr.split_once('\n').unwrap();
    assert!(
        warning.starts_with("Warning: ignoring DaemonSet-managed Pods: kube-system/kindnet-"),
        "{warning}"
    );
    let e = format!("error when evicting pods/\"{pod}\" -n \"default\": This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.");
    assert_eq!(
        rest,
        format!("There are pending pods in node \"node-1\" when an error occurred: {e}\npod/{pod}\nerror: unable to drain node \"node-1\" due to error: {e}, continuing command...\nThere are pending nodes to be drained:\n node-1\n{e}\n")
    );
}

/// A bare pod `name` (label `app: <name>`) asking for 3 CPUs, at `priorityClassName` if
/// given, whose container ignores SIGTERM for two minutes (so a victim stays visible).
/// Bare, so that no controller replaces a victim with a pod that preempts in turn.
fn heavy(name: &str, priority_class: &str) -> String {
    let pc = if priority_class.is_empty() {
        String::new()
    } else {
        format!("  priorityClassName: {priority_class}\n")
    };
    format!(
        "apiVersion: v1
kind: Pod
metadata:
  name: {name}
  labels:
    app: {name}
  annotations:
    kubeloop.dev/behavior: ignore-sigterm
spec:
{pc}  terminationGracePeriodSeconds: 120
  containers:
  - name: app
    image: nginx:1.27
    resources:
      requests: {{cpu: \"3\"}}
"
    )
}

const CLASSES: &str = "apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata:
  name: mid
value: 5
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata:
  name: high
value: 1000
";

const HIGH_POD: &str = "apiVersion: v1
kind: Pod
metadata:
  name: urgent
spec:
  priorityClassName: high
  containers:
  - name: app
    image: nginx:1.27
    resources:
      requests: {cpu: \"3\"}
";

/// Preempts for `urgent` on a two-node cluster running `db` (priority 0) and `web`
/// (priority 5), with `pdb` applied first if given; returns the terminal, the node
/// urgent was nominated to, and the nodes of db and web.
fn preemption_with(pdb: Option<&str>) -> (Term, String, String, String) {
    use kubeloop_sim::cluster::{ClusterConfig, NodeConfig};
    let config = ClusterConfig {
        nodes: vec![
            NodeConfig::standard("node-1"),
            NodeConfig::standard("node-2"),
        ],
        ..ClusterConfig::default()
    };
    let mut t = Term::new();
    t.w = kubeloop_sim::World::new(config);
    t.file("classes.yaml", CLASSES);
    t.file("db.yaml", &heavy("db", ""));
    t.file("web.yaml", &heavy("web", "mid"));
    t.file("urgent.yaml", HIGH_POD);
    t.ok("kubectl apply -f classes.yaml");
    t.ok("kubectl apply -f db.yaml");
    t.ok("kubectl apply -f web.yaml");
    if let Some(p) = pdb {
        t.file("pdb.yaml", p);
        t.ok("kubectl apply -f pdb.yaml");
    }
    t.settle(30);
    let node_of = |t: &mut Term, pod: &str| {
        t.ok(&format!(
            "kubectl get pod {pod} -o jsonpath={{.spec.nodeName}}"
        ))
    };
    let (db, web) = (node_of(&mut t, "db"), node_of(&mut t, "web"));
    assert_ne!(db, web, "one heavy pod per node");
    t.ok("kubectl apply -f urgent.yaml");
    t.settle(5);
    let nominated = t.ok("kubectl get pod urgent -o jsonpath={.status.nominatedNodeName}");
    (t, nominated, db, web)
}

/// Without a budget the scheduler evicts the lower-priority db; with db protected by a
/// budget that allows no disruption, it evicts web instead (fewest PDB violations comes
/// first), and web's pod carries the DisruptionTarget condition while it terminates.
#[test]
fn preemption_prefers_victims_that_violate_no_budget() {
    let (_, nominated, db, _) = preemption_with(None);
    assert_eq!(nominated, db);

    let pdb = "apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: db
spec:
  minAvailable: 1
  selector:
    matchLabels:
      app: db
";
    let (mut t, nominated, _, web) = preemption_with(Some(pdb));
    assert_eq!(nominated, web);
    let yaml = t.ok("kubectl get pod web -o yaml");
    assert!(yaml.contains("  - lastTransitionTime:"), "{yaml}");
    assert!(
        yaml.contains("    message: 'default-scheduler: preempting to accommodate a higher priority pod'\n    reason: PreemptionByScheduler\n    status: \"True\"\n    type: DisruptionTarget\n"),
        "{yaml}"
    );
    let db_yaml = t.ok("kubectl get pod db -o yaml");
    assert!(!db_yaml.contains("DisruptionTarget"), "{db_yaml}");
}

/// An evicted pod is marked before it goes, as `addConditionAndDeletePod` does.
#[test]
fn an_evicted_pod_carries_the_eviction_disruption_target() {
    let mut t = Term::new();
    t.file(
        "slow.yaml",
        "apiVersion: v1
kind: Pod
metadata:
  name: slow
  annotations:
    kubeloop.dev/behavior: ignore-sigterm
spec:
  nodeName: node-1
  terminationGracePeriodSeconds: 120
  containers:
  - name: app
    image: nginx:1.27
",
    );
    t.ok("kubectl apply -f slow.yaml");
    t.settle(20);
    let o = kubeloop_sim::cmd::run(
        &mut t.w,
        "kubectl drain node-1 --force --ignore-daemonsets --pod-selector=!app",
        &t.files,
        5_000,
    );
    assert!(o.stdout.contains("evicting pod default/slow\n"), "{o:?}");
    let yaml = t.ok("kubectl get pod slow -o yaml");
    assert!(yaml.contains("  deletionTimestamp:"), "{yaml}");
    assert!(
        yaml.contains("    message: 'Eviction API: evicting'\n    reason: EvictionByEvictionAPI\n    status: \"True\"\n    type: DisruptionTarget\n"),
        "{yaml}"
    );
}

/// A guarded bare pod on `node`; `unready` ones fail their readiness probe for 10 minutes.
fn guarded(name: &str, node: &str, unready: bool) -> String {
    let (ann, probe) = if unready {
        (
            "  annotations:\n    kubeloop.dev/behavior: not-ready-for=10m\n",
            "    readinessProbe:\n      httpGet: {path: /, port: 80}\n",
        )
    } else {
        ("", "")
    };
    format!(
        "apiVersion: v1
kind: Pod
metadata:
  name: {name}
  labels:
    app: guarded
{ann}spec:
  nodeName: {node}
  containers:
  - name: app
    image: nginx:1.27
    ports:
    - containerPort: 80
{probe}"
    )
}

/// eviction.go lets a not-Ready pod go without charging a budget that is healthy
/// (currentHealthy ≥ desiredHealthy > 0), while a Ready pod under the same budget,
/// which allows no disruption, is refused.
#[test]
fn an_unready_pod_goes_while_the_budget_is_healthy() {
    let mut t = Term::new();
    t.file("a.yaml", &guarded("ready-1", "node-2", false));
    t.file("b.yaml", &guarded("ready-2", "node-3", false));
    t.file("c.yaml", &guarded("unready", "node-1", true));
    t.file("pdb.yaml", &PDB_MIN2.replace("app: nginx", "app: guarded"));
    for f in ["a.yaml", "b.yaml", "c.yaml", "pdb.yaml"] {
        t.ok(&format!("kubectl apply -f {f}"));
    }
    t.settle(30);
    let status = t.ok("kubectl get pdb nginx -o jsonpath={.status}");
    let v: serde_json::Value = serde_json::from_str(&status).unwrap();
    assert_eq!(
        (
            &v["currentHealthy"],
            &v["desiredHealthy"],
            &v["disruptionsAllowed"]
        ),
        (&2.into(), &2.into(), &0.into()),
        "{status}"
    );
    let o = t.run("kubectl drain node-1 --force --pod-selector=app=guarded");
    assert_eq!(o.exit_code, 0, "{o:?}");
    assert!(o.stdout.contains("pod/unready evicted\n"), "{o:?}");
    assert!(!o.stderr.contains("Cannot evict"), "{o:?}");
    let o = kubeloop_sim::cmd::run(
        &mut t.w,
        "kubectl drain node-2 --force --pod-selector=app=guarded",
        &t.files,
        3_000,
    );
    assert!(
        o.stderr.contains(&format!(
            "error when evicting pods/\"ready-1\" -n \"default\" {RETRY}"
        )),
        "{o:?}"
    );
}
