//! Every failure of the control-plane issue, through the terminal and from a scenario
//! file: kubelet down, node powered off, etcd down and back (nothing acknowledged is
//! lost), a watch that falls below etcd's compaction point, and the component and
//! network failures of tests/failures.rs again as scenarios.

use std::sync::Arc;

use kubeloop_sim::cluster::ClusterConfig;
use kubeloop_sim::etcd::{Expect, TxnOp};
use kubeloop_sim::object::{Kind, Object};
use kubeloop_sim::process::Output;
use kubeloop_sim::runner::{self, StepResult};
use kubeloop_sim::scenario::parse_scenario;
use kubeloop_sim::time::SECOND;
use kubeloop_sim::World;

mod common;
use common::nginx_serving;

fn run(w: &mut World, line: &str) -> Output {
    common::run_with(w, &nginx_serving(), line)
}

fn ok(w: &mut World, line: &str) -> String {
    let o = run(w, line);
    assert_eq!(o.exit_code, 0, "{line}: {o:?}");
    o.stdout
}

fn serving_cluster() -> World {
    let mut w = World::new(ClusterConfig::default());
    ok(&mut w, "kubectl apply -f nginx.yaml");
    ok(&mut w, "kubectl expose deployment nginx --port=80");
    w.run_for(20 * SECOND);
    w
}

/// (pod, node) of every pod, from `kubectl get pods -o wide`.
fn placement(w: &mut World) -> Vec<(String, String, String)> {
    ok(w, "kubectl get pods -o wide")
        .lines()
        .skip(1)
        .map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f[0].to_string(), f[2].to_string(), f[6].to_string())
        })
        .collect()
}

/// Ready endpoint addresses of the nginx Service's EndpointSlices.
fn ready_endpoints(w: &mut World) -> Vec<String> {
    let out = ok(
        w,
        "kubectl get endpointslices -l kubernetes.io/service-name=nginx -o json",
    );
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let mut ips = Vec::new();
    for s in v["items"].as_array().into_iter().flatten() {
        for e in s["endpoints"].as_array().into_iter().flatten() {
            if e["conditions"]["ready"] == serde_json::Value::Bool(true) {
                ips.push(e["addresses"][0].as_str().unwrap_or_default().to_string());
            }
        }
    }
    ips
}

fn node_status(w: &mut World, node: &str) -> String {
    ok(w, "kubectl get nodes")
        .lines()
        .find(|l| l.starts_with(node))
        .map(|l| l.split_whitespace().nth(1).unwrap_or("").to_string())
        .unwrap_or_default()
}

#[test]
fn kubelet_down_makes_the_node_not_ready_then_evicts_and_replaces_its_pods() {
    let mut w = serving_cluster();
    let before = placement(&mut w);
    let node = before[0].2.clone();
    let victims: Vec<String> = before
        .iter()
        .filter(|p| p.2 == node)
        .map(|p| p.0.clone())
        .collect();
    assert_eq!(ready_endpoints(&mut w).len(), 3);
    assert_eq!(
        ok(&mut w, &format!("ssh {node} systemctl stop kubelet")),
        ""
    );
    let status = run(&mut w, &format!("ssh {node} systemctl status kubelet"));
    assert!(
        status.stdout.contains("Active: inactive (dead)"),
        "{status:?}"
    );
    w.run_for(40 * SECOND);
    assert_eq!(
        node_status(&mut w, &node),
        "Ready",
        "still inside the 50 s grace period"
    );
    w.run_for(20 * SECOND);
    assert_eq!(node_status(&mut w, &node), "NotReady");
    let taints = ok(
        &mut w,
        &format!("kubectl get node {node} -o jsonpath={{.spec.taints[*].key}}"),
    );
    assert!(
        taints.contains("node.kubernetes.io/unreachable"),
        "{taints}"
    );
    assert_eq!(
        ready_endpoints(&mut w).len(),
        3 - victims.len(),
        "the node's pods left the Service's endpoints"
    );
    // The containers keep running: only the kubelet is gone.
    assert!(ok(&mut w, &format!("ssh {node} crictl ps")).contains("nginx"));
    w.run_for(300 * SECOND);
    let after = placement(&mut w);
    let running_elsewhere = after
        .iter()
        .filter(|p| p.1 == "Running" && p.2 != node)
        .count();
    assert_eq!(running_elsewhere, 3, "{after:?}");
    for v in &victims {
        let p = after
            .iter()
            .find(|p| &p.0 == v)
            .expect("evicted pod still listed");
        assert_eq!(
            p.1, "Terminating",
            "no kubelet confirms the kill: {after:?}"
        );
    }
    assert_eq!(ready_endpoints(&mut w).len(), 3);
    ok(&mut w, &format!("ssh {node} systemctl start kubelet"));
    w.run_for(60 * SECOND);
    assert_eq!(node_status(&mut w, &node), "Ready");
    let end = placement(&mut w);
    assert_eq!(
        end.len(),
        3,
        "the returning kubelet finished the evicted pods: {end:?}"
    );
}

#[test]
fn a_powered_off_node_loses_its_containers_and_its_pods_move() {
    let mut w = serving_cluster();
    let node = placement(&mut w)[0].2.clone();
    assert_eq!(
        ok(&mut w, &format!("sim poweroff {node}")),
        format!("{node} powered off\n")
    );
    let o = run(&mut w, &format!("ssh {node} crictl ps"));
    assert_ne!(o.exit_code, 0, "{o:?}");
    w.run_for(60 * SECOND);
    assert_eq!(node_status(&mut w, &node), "NotReady");
    w.run_for(300 * SECOND);
    let running = placement(&mut w)
        .iter()
        .filter(|p| p.1 == "Running" && p.2 != node)
        .count();
    assert_eq!(running, 3);
    ok(&mut w, &format!("sim poweron {node}"));
    w.run_for(60 * SECOND);
    assert_eq!(node_status(&mut w, &node), "Ready");
    assert_eq!(placement(&mut w).len(), 3);
}

#[test]
fn etcd_down_then_back_loses_nothing_acknowledged_and_converges() {
    let mut w = serving_cluster();
    let mut acked = Vec::new();
    for i in 0..5 {
        let o = run(&mut w, &format!("kubectl create configmap before-{i}"));
        assert_eq!(o.exit_code, 0);
        acked.push(format!("before-{i}"));
    }
    assert_eq!(
        ok(&mut w, "kubectl scale deployment nginx --replicas=5"),
        "deployment.apps/nginx scaled\n"
    );
    assert_eq!(ok(&mut w, "sim stop etcd"), "etcd stopped\n");
    let failed = run(&mut w, "kubectl create configmap during");
    assert_eq!(failed.exit_code, 1);
    assert_eq!(
        failed.stderr,
        "Error from server: etcdserver: request timed out\n"
    );
    let o = run(&mut w, "etcdctl get /registry/configmaps/default/before-0");
    assert_eq!(
        (o.exit_code, o.stderr.as_str()),
        (1, "Error: context deadline exceeded\n")
    );
    w.run_for(30 * SECOND);
    ok(&mut w, "sim start etcd");
    w.run_for(40 * SECOND);
    let cms = ok(&mut w, "kubectl get configmaps -o name");
    for a in &acked {
        assert!(cms.contains(&format!("configmap/{a}\n")), "{a} lost: {cms}");
    }
    assert!(!cms.contains("during"), "a failed write must not appear");
    let keys = ok(
        &mut w,
        "etcdctl get /registry/configmaps/default/ --prefix --keys-only",
    );
    assert_eq!(keys.matches("before-").count(), 5);
    let pods = placement(&mut w);
    assert_eq!(
        pods.iter().filter(|p| p.1 == "Running").count(),
        5,
        "{pods:?}"
    );
    let api = w.observe().apiserver().unwrap();
    assert_eq!(api.relists(), 0, "the watch resumed where it stopped");
}

#[test]
fn a_watch_below_the_compaction_point_relists_and_misses_nothing() {
    let mut w = serving_cluster();
    ok(&mut w, "sim stop etcd");
    w.run_for(200);
    ok(&mut w, "sim start etcd");
    // While kube-apiserver is disconnected another etcd client writes a namespace and
    // compacts past everything the apiserver has seen.
    let mut ns = k8s_openapi::api::core::v1::Namespace::default();
    ns.metadata.name = Some("written-behind".into());
    ns.metadata.uid = Some("00000000-0000-4000-8000-000000000001".into());
    ns.spec = Some(k8s_openapi::api::core::v1::NamespaceSpec {
        finalizers: Some(vec!["kubernetes".into()]),
    });
    ns.status = Some(k8s_openapi::api::core::v1::NamespaceStatus {
        phase: Some("Active".into()),
        ..Default::default()
    });
    let store = w.etcd_store_mut();
    store.txn(
        "/registry/namespaces/written-behind",
        Expect::Absent,
        TxnOp::Put(Arc::new(Object::from(ns))),
    );
    let mut cm = k8s_openapi::api::core::v1::ConfigMap::default();
    cm.metadata.name = Some("also-behind".into());
    cm.metadata.namespace = Some("default".into());
    store.txn(
        "/registry/configmaps/default/also-behind",
        Expect::Absent,
        TxnOp::Put(Arc::new(Object::from(cm))),
    );
    let rev = store.revision();
    store.compact(rev).unwrap();
    w.run_for(10 * SECOND);
    assert_eq!(w.observe().apiserver().unwrap().relists(), 1);
    // The controller manager's informers relisted after 410 Gone: the namespace is in
    // their cache and the service-account controller gave it its default account.
    let cm = w.observe().controller_manager().unwrap();
    assert!(cm
        .informers()
        .of(Kind::Namespace)
        .get("", "written-behind")
        .is_some());
    assert_eq!(
        ok(&mut w, "kubectl get sa -n written-behind -o name"),
        "serviceaccount/default\n"
    );
    assert!(ok(&mut w, "kubectl get ns").contains("written-behind"));
    assert!(ok(&mut w, "kubectl get cm").contains("also-behind"));
    // Everything else kept working through the relist.
    ok(&mut w, "kubectl scale deployment nginx --replicas=4");
    w.run_for(20 * SECOND);
    let running = placement(&mut w)
        .iter()
        .filter(|p| p.1 == "Running")
        .count();
    assert_eq!(running, 4);
}

// ---- the same failures from scenario files -------------------------------------------

fn scenario(steps: &str, until: &str) -> Vec<StepResult> {
    let text = format!(
        "apiVersion: kubeloop.dev/v1alpha1
kind: Scenario
metadata:
  name: failure
spec:
  files:
    nginx.yaml: |
{}
  steps:
  - at: 0s
    run: kubectl apply -f nginx.yaml
  - at: 1s
    run: kubectl expose deployment nginx --port=80
{steps}",
        nginx_serving()
            .lines()
            .map(|l| format!("      {l}"))
            .collect::<Vec<_>>()
            .join("\n")
    );
    let sc = parse_scenario(&text).unwrap_or_else(|e| panic!("{e:?}\n{text}"));
    let until = kubeloop_sim::time::parse_duration(until).unwrap();
    runner::run(&sc, Some(until)).1
}

fn step<'a>(r: &'a [StepResult], cmd: &str, at_s: u64) -> &'a StepResult {
    r.iter()
        .find(|s| s.command == cmd && s.at_ms == at_s * 1000)
        .unwrap_or_else(|| panic!("no step {cmd} at {at_s}s"))
}

fn count_running(s: &StepResult) -> usize {
    s.stdout.lines().filter(|l| l.contains("Running")).count()
}

#[test]
fn scenario_kubelet_down() {
    let r = scenario(
        "  - at: 20s
    run: ssh node-1 systemctl stop kubelet
  - at: 40s
    run: kubectl get nodes
  - at: 80s
    run: kubectl get nodes
  - at: 400s
    run: kubectl get pods -o wide
",
        "400s",
    );
    assert!(step(&r, "kubectl get nodes", 40)
        .stdout
        .contains("node-1   Ready"));
    assert!(step(&r, "kubectl get nodes", 80)
        .stdout
        .contains("node-1   NotReady"));
    let pods = step(&r, "kubectl get pods -o wide", 400);
    let elsewhere = pods
        .stdout
        .lines()
        .filter(|l| l.contains("Running") && !l.contains("node-1"))
        .count();
    assert_eq!(elsewhere, 3, "{}", pods.stdout);
}

/// The kubelet compares the Node the apiserver has with the status it would report
/// (upstream `tryUpdateNodeStatus`): after the node lifecycle controller marked the node
/// Unknown, a kubelet that comes back posts Ready at its next 10 s status update, not
/// at the 5-minute `nodeStatusReportFrequency`. Both ways back: a restarted kubelet
/// and a healed partition.
#[test]
fn scenario_kubelet_back_reports_ready_at_once() {
    let r = scenario(
        "  - at: 20s
    run: ssh node-1 systemctl stop kubelet
  - at: 21s
    run: sim partition node-2
  - at: 90s
    run: kubectl get nodes
  - at: 91s
    run: kubectl get node node-2 -o jsonpath={.status.conditions[?(@.type==\"Ready\")].reason}
  - at: 100s
    run: ssh node-1 systemctl start kubelet
  - at: 101s
    run: sim heal node-2
  - at: 125s
    run: kubectl get nodes
  - at: 126s
    run: kubectl get node node-2 -o jsonpath={.status.conditions[?(@.type==\"Ready\")].lastTransitionTime}
",
        "126s",
    );
    let n = &step(&r, "kubectl get nodes", 90).stdout;
    assert!(
        n.contains("node-1   NotReady") && n.contains("node-2   NotReady"),
        "{n}"
    );
    assert_eq!(
        step(
            &r,
            "kubectl get node node-2 -o jsonpath={.status.conditions[?(@.type==\"Ready\")].reason}",
            91
        )
        .stdout,
        "NodeStatusUnknown"
    );
    let n = &step(&r, "kubectl get nodes", 125).stdout;
    assert!(
        n.contains("node-1   Ready") && n.contains("node-2   Ready"),
        "{n}"
    );
    // The Ready condition changed status, so it carries a new transition time.
    let t = &step(
        &r,
        "kubectl get node node-2 -o jsonpath={.status.conditions[?(@.type==\"Ready\")].lastTransitionTime}",
        126,
    )
    .stdout;
    assert!(
        t.as_str() > "2026-01-01T00:01:41Z" && t.as_str() < "2026-01-01T00:02:05Z",
        "{t}"
    );
}

#[test]
fn scenario_node_poweroff_and_partition() {
    let r = scenario(
        "  - at: 20s
    run: sim poweroff node-2
  - at: 21s
    run: sim partition node-3
  - at: 90s
    run: kubectl get nodes
  - at: 100s
    run: sim poweron node-2
  - at: 101s
    run: sim heal node-3
  - at: 125s
    run: kubectl get nodes
",
        "125s",
    );
    assert_eq!(
        step(&r, "sim poweroff node-2", 20).stdout,
        "node-2 powered off\n"
    );
    assert_eq!(
        step(&r, "sim partition node-3", 21).stdout,
        "node-3 partitioned from the control plane\n"
    );
    let n = &step(&r, "kubectl get nodes", 90).stdout;
    assert!(
        n.contains("node-2   NotReady") && n.contains("node-3   NotReady"),
        "{n}"
    );
    // Back within a heartbeat or two: a rebooted kubelet reports at start, a healed one
    // sees its Node marked Unknown and reports at once (not at the 5-minute report).
    let n = &step(&r, "kubectl get nodes", 125).stdout;
    assert_eq!(n.matches("   Ready ").count(), 3, "{n}");
}

#[test]
fn scenario_etcd_down_and_back() {
    let r = scenario(
        "  - at: 20s
    run: kubectl create configmap kept
  - at: 21s
    run: sim stop etcd
  - at: 22s
    run: kubectl create configmap refused
  - at: 23s
    run: kubectl get pods
  - at: 60s
    run: sim start etcd
  - at: 70s
    run: kubectl get configmaps
  - at: 71s
    run: kubectl get pods
",
        "71s",
    );
    assert_eq!(
        step(&r, "kubectl create configmap kept", 20).stdout,
        "configmap/kept created\n"
    );
    let refused = step(&r, "kubectl create configmap refused", 22);
    assert_eq!(
        refused.stderr,
        "Error from server: etcdserver: request timed out\n"
    );
    assert_eq!(step(&r, "kubectl get pods", 23).exit_code, 1);
    let cms = &step(&r, "kubectl get configmaps", 70).stdout;
    assert!(cms.contains("kept") && !cms.contains("refused"), "{cms}");
    assert_eq!(count_running(step(&r, "kubectl get pods", 71)), 3);
}

#[test]
fn scenario_control_plane_components_down() {
    let r = scenario(
        "  - at: 20s
    run: sim stop kube-apiserver
  - at: 21s
    run: kubectl get pods
  - at: 30s
    run: sim start kube-apiserver
  - at: 31s
    run: sim stop kube-scheduler
  - at: 32s
    run: kubectl scale deployment nginx --replicas=4
  - at: 50s
    run: kubectl get pods
  - at: 51s
    run: sim start kube-scheduler
  - at: 52s
    run: sim stop kube-controller-manager
  - at: 53s
    run: kubectl scale deployment nginx --replicas=5
  - at: 80s
    run: kubectl get deployment nginx
  - at: 81s
    run: sim start kube-controller-manager
  - at: 120s
    run: kubectl get pods
",
        "120s",
    );
    assert_eq!(
        step(&r, "kubectl get pods", 21).stderr,
        "The connection to the server 172.18.0.2:6443 was refused - did you specify the right host or port?\n"
    );
    let p = &step(&r, "kubectl get pods", 50).stdout;
    assert_eq!(
        (
            count_running(step(&r, "kubectl get pods", 50)),
            p.matches("Pending").count()
        ),
        (3, 1),
        "{p}"
    );
    let d = &step(&r, "kubectl get deployment nginx", 80).stdout;
    assert!(d.contains("nginx   4/5"), "no controller to scale up: {d}");
    assert_eq!(count_running(step(&r, "kubectl get pods", 120)), 5);
}
