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
