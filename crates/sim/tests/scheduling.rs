//! Scheduling through the real path: pods spread by the default profile, the §3.4
//! annotations, FitErrors in events, taints honoured, and a single feasible node.

use std::collections::BTreeMap;

mod common;

use kubeloop_sim::cluster::{ClusterConfig, NodeConfig};
use kubeloop_sim::cmd;
use kubeloop_sim::process::Output;
use kubeloop_sim::time::SECOND;
use kubeloop_sim::World;

fn deployment(name: &str, replicas: u32, cpu: &str) -> String {
    format!(
        "apiVersion: apps/v1
kind: Deployment
metadata:
  name: {name}
spec:
  replicas: {replicas}
  selector:
    matchLabels: {{app: {name}}}
  template:
    metadata:
      labels: {{app: {name}}}
    spec:
      containers:
      - name: c
        image: nginx:1.27
        resources:
          requests: {{cpu: \"{cpu}\", memory: 128Mi}}
"
    )
}

fn run(w: &mut World, files: &BTreeMap<String, String>, line: &str) -> Output {
    cmd::run(w, line, files, 60 * SECOND)
}

fn annotations(w: &mut World, pod: &str) -> serde_json::Map<String, serde_json::Value> {
    let out = run(
        w,
        &BTreeMap::new(),
        &format!("kubectl get pod {pod} -o json"),
    );
    let v: serde_json::Value = serde_json::from_str(&out.stdout).expect("json");
    v["metadata"]["annotations"]
        .as_object()
        .cloned()
        .unwrap_or_default()
}

#[test]
fn default_profile_spreads_replicas_and_records_results() {
    let files: BTreeMap<String, String> = [("d.yaml".to_string(), deployment("web", 3, "100m"))]
        .into_iter()
        .collect();
    let mut w = World::new(ClusterConfig::default());
    run(&mut w, &files, "kubectl apply -f d.yaml");
    w.run_for(20 * SECOND);
    let wide = run(&mut w, &files, "kubectl get pods -o wide");
    let nodes: std::collections::BTreeSet<&str> = wide
        .stdout
        .lines()
        .skip(1)
        .filter_map(|l| l.split_whitespace().nth(6))
        .collect();
    assert_eq!(nodes.len(), 3, "one replica per node: {}", wide.stdout);
    let pod = wide
        .stdout
        .lines()
        .nth(1)
        .unwrap()
        .split_whitespace()
        .next()
        .unwrap()
        .to_string();
    let node = wide
        .stdout
        .lines()
        .nth(1)
        .unwrap()
        .split_whitespace()
        .nth(6)
        .unwrap()
        .to_string();
    let a = annotations(&mut w, &pod);
    assert_eq!(a["kubeloop.dev/selected-node"], node.as_str());
    let filter: serde_json::Value =
        serde_json::from_str(a["kubeloop.dev/filter-result"].as_str().unwrap()).unwrap();
    for n in ["node-1", "node-2", "node-3"] {
        assert_eq!(filter[n]["NodeResourcesFit"], "passed", "{filter}");
        assert_eq!(filter[n]["TaintToleration"], "passed");
    }
    let score: serde_json::Value =
        serde_json::from_str(a["kubeloop.dev/score-result"].as_str().unwrap()).unwrap();
    let fin: serde_json::Value =
        serde_json::from_str(a["kubeloop.dev/finalscore-result"].as_str().unwrap()).unwrap();
    for plugin in [
        "NodeResourcesFit",
        "NodeResourcesBalancedAllocation",
        "TaintToleration",
        "ImageLocality",
        "PodTopologySpread",
    ] {
        assert!(score[&node][plugin].is_i64(), "{plugin} raw score: {score}");
        assert!(fin[&node][plugin].is_i64(), "{plugin} final score: {fin}");
    }
    // TaintToleration's weight is 3: a node without taints normalizes to 100 → 300.
    assert_eq!(fin[&node]["TaintToleration"], 300);
}

#[test]
fn an_unschedulable_pod_gets_a_fit_error_and_no_node() {
    // 10 CPUs exceed every node's allocatable: UnschedulableAndUnresolvable, so preemption
    // cannot help either.
    let files: BTreeMap<String, String> = [("d.yaml".to_string(), deployment("big", 1, "10"))]
        .into_iter()
        .collect();
    let mut w = World::new(ClusterConfig::default());
    run(&mut w, &files, "kubectl apply -f d.yaml");
    w.run_for(10 * SECOND);
    let pods = run(&mut w, &files, "kubectl get pods");
    assert!(pods.stdout.contains("Pending"), "{}", pods.stdout);
    let events = run(
        &mut w,
        &files,
        "kubectl get events --field-selector reason=FailedScheduling",
    );
    assert!(
        events.stdout.contains("0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."),
        "{}",
        events.stdout
    );
}

#[test]
fn tainted_nodes_are_avoided_and_one_feasible_node_skips_scoring() {
    let mut config = ClusterConfig::default();
    for n in &mut config.nodes[1..] {
        n.taints.push(k8s_openapi::api::core::v1::Taint {
            key: "dedicated".into(),
            value: Some("db".into()),
            effect: "NoSchedule".into(),
            time_added: None,
        });
    }
    let files: BTreeMap<String, String> = [("d.yaml".to_string(), deployment("web", 2, "100m"))]
        .into_iter()
        .collect();
    let mut w = World::new(config);
    run(&mut w, &files, "kubectl apply -f d.yaml");
    w.run_for(20 * SECOND);
    let wide = run(&mut w, &files, "kubectl get pods -o wide");
    assert_eq!(
        wide.stdout.lines().filter(|l| l.contains("node-1")).count(),
        2,
        "{}",
        wide.stdout
    );
    let pod = wide
        .stdout
        .lines()
        .nth(1)
        .unwrap()
        .split_whitespace()
        .next()
        .unwrap()
        .to_string();
    let a = annotations(&mut w, &pod);
    let filter: serde_json::Value =
        serde_json::from_str(a["kubeloop.dev/filter-result"].as_str().unwrap()).unwrap();
    assert_eq!(
        filter["node-2"]["TaintToleration"],
        "node(s) had untolerated taint(s)"
    );
    assert_eq!(
        a["kubeloop.dev/score-result"], "{}",
        "one feasible node: scoring skipped"
    );
    assert_eq!(a["kubeloop.dev/finalscore-result"], "{}");
}

#[test]
fn a_node_added_later_takes_pending_pods() {
    let mut config = ClusterConfig::default();
    config.nodes = vec![NodeConfig::standard("node-1")];
    let files: BTreeMap<String, String> = [("d.yaml".to_string(), deployment("web", 5, "1"))]
        .into_iter()
        .collect();
    let mut w = World::new(config);
    run(&mut w, &files, "kubectl apply -f d.yaml");
    w.run_for(20 * SECOND);
    let pods = run(&mut w, &files, "kubectl get pods");
    // CoreDNS's two replicas request 100m each on the only node, so the 3.8 CPUs left
    // hold three 1-CPU pods.
    assert_eq!(
        pods.stdout.matches("Pending").count(),
        2,
        "3.8 free CPUs hold 3 pods: {}",
        pods.stdout
    );
    assert_eq!(
        run(&mut w, &files, "sim node add node-2").stdout,
        "node node-2 added\n"
    );
    w.run_for(20 * SECOND);
    let pods = run(&mut w, &files, "kubectl get pods");
    assert_eq!(pods.stdout.matches("Running").count(), 5, "{}", pods.stdout);
}

/// Nodes a PreFilter plugin left out (NodeAffinity's matchFields on metadata.name) are
/// counted under that plugin's name in the FitError, as upstream does.
#[test]
fn nodes_left_out_by_a_prefilter_name_the_plugin() {
    let pinned = "apiVersion: v1
kind: Pod
metadata:
  name: pinned
spec:
  affinity:
    nodeAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
        nodeSelectorTerms:
        - matchFields:
          - {key: metadata.name, operator: In, values: [node-1]}
  containers:
  - name: app
    image: nginx:1.27
";
    let files: BTreeMap<String, String> = [("p.yaml".to_string(), pinned.to_string())]
        .into_iter()
        .collect();
    let mut w = World::new(ClusterConfig::default());
    run(&mut w, &files, "kubectl cordon node-1");
    run(&mut w, &files, "kubectl apply -f p.yaml");
    w.run_for(5 * SECOND);
    let ev = run(
        &mut w,
        &files,
        "kubectl get events --field-selector reason=FailedScheduling",
    )
    .stdout;
    assert!(
        ev.contains("0/3 nodes are available: 1 node(s) were unschedulable, 2 node(s) didn't satisfy plugin(s) [NodeAffinity]. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."),
        "{ev}"
    );
}

/// `kubectl get pod high -o jsonpath={.status.nominatedNodeName}`.
const NOMINATED: &str = "kubectl get pod high -o jsonpath={.status.nominatedNodeName}";

/// A one-node cluster where `high` (from `high.yaml`) has preempted the slow-to-stop `low`
/// (`low.yaml`): `low` is terminating and `high` is nominated to node-1.
fn preempting_on_one_node(files: &BTreeMap<String, String>) -> World {
    let mut config = ClusterConfig::default();
    config.nodes = vec![NodeConfig::standard("node-1")];
    let mut w = World::new(config);
    run(&mut w, files, "kubectl apply -f low.yaml");
    w.run_for(10 * SECOND);
    run(&mut w, files, "kubectl apply -f high.yaml");
    w.run_for(5 * SECOND);
    assert_eq!(run(&mut w, files, NOMINATED).stdout, "node-1");
    w
}

/// A pod nominated by preemption loses its nominatedNodeName when a later preemption
/// finds no candidate (DefaultPreemption returns an empty nomination, which updatePod
/// writes), here because its node was cordoned while the victim was still terminating.
#[test]
fn a_preemption_without_candidates_clears_the_nomination() {
    let (low, high) = (common::slow_victim("low"), common::preemptor("high"));
    let files: BTreeMap<String, String> = [
        ("low.yaml".to_string(), low),
        ("high.yaml".to_string(), high),
    ]
    .into_iter()
    .collect();
    let mut w = preempting_on_one_node(&files);
    let nnn = NOMINATED;
    run(&mut w, &files, "kubectl cordon node-1");
    // The cordon cannot make room (NodeResourcesFit's QueueingHint skips it), so `high`
    // is tried again when its victim is finally gone, after its 120 s grace period.
    w.run_for(14 * SECOND);
    assert_eq!(run(&mut w, &files, nnn).stdout, "node-1");
    w.run_for(110 * SECOND);
    assert_eq!(run(&mut w, &files, nnn).stdout, "");
    let ev = run(
        &mut w,
        &files,
        "kubectl get events --field-selector involvedObject.name=high",
    )
    .stdout;
    assert!(
        ev.contains("0/1 nodes are available: 1 node(s) were unschedulable. preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."),
        "{ev}"
    );
}

/// How many FailedScheduling attempts the pod has had (the event's count).
fn failed_attempts(w: &mut World, pod: &str) -> i64 {
    let out = run(
        w,
        &BTreeMap::new(),
        &format!("kubectl get events --field-selector involvedObject.name={pod},reason=FailedScheduling -o json"),
    );
    let v: serde_json::Value = serde_json::from_str(&out.stdout).expect("json");
    v["items"]
        .as_array()
        .map(|items| items.iter().map(|e| e["count"].as_i64().unwrap_or(1)).sum())
        .unwrap_or(0)
}

#[test]
fn queueing_hints_keep_a_pod_waiting_until_an_event_can_help() {
    let big = "apiVersion: v1
kind: Pod
metadata:
  name: big
spec:
  containers:
  - name: app
    image: nginx:1.27
    resources:
      requests: {cpu: \"6\"}
";
    let files: BTreeMap<String, String> = [
        ("big.yaml".to_string(), big.to_string()),
        ("web.yaml".to_string(), deployment("web", 3, "100m")),
    ]
    .into_iter()
    .collect();
    let mut w = World::new(ClusterConfig::default());
    run(&mut w, &files, "kubectl apply -f big.yaml");
    w.run_for(5 * SECOND);
    assert_eq!(failed_attempts(&mut w, "big"), 1);
    // Pods starting elsewhere (adds, status updates) and node heartbeats and label changes
    // cannot give a 4-CPU node 6 CPUs: NodeResourcesFit's hints skip them all.
    run(&mut w, &files, "kubectl apply -f web.yaml");
    run(&mut w, &files, "kubectl label node node-1 disk=ssd");
    w.run_for(60 * SECOND);
    assert_eq!(failed_attempts(&mut w, "big"), 1);
    // A node with room is worth a try at once.
    run(&mut w, &files, "sim node add node-4 --cpu 8");
    w.run_for(20 * SECOND);
    let node = run(
        &mut w,
        &files,
        "kubectl get pod big -o jsonpath={.spec.nodeName}",
    );
    assert_eq!(node.stdout, "node-4");
    assert_eq!(failed_attempts(&mut w, "big"), 1);
}

#[test]
fn a_restarted_scheduler_keeps_the_room_a_preemption_made() {
    // node-1: 4 CPUs, of which CoreDNS asks for a little.
    let whole_node = common::preemptor("high").replace("cpu: \"3\"", "cpu: 3500m");
    let filler = deployment("filler", 1, "500m");
    let files: BTreeMap<String, String> = [
        ("low.yaml".to_string(), common::slow_victim("low")),
        ("high.yaml".to_string(), whole_node),
        ("filler.yaml".to_string(), filler),
    ]
    .into_iter()
    .collect();
    let mut w = preempting_on_one_node(&files);
    let nnn = NOMINATED;
    // A new scheduler learns the nomination from the pod's status: while `low` terminates,
    // the CPU it frees belongs to `high`, so a small pod that would fit beside `low` waits.
    assert_eq!(run(&mut w, &files, "sim stop kube-scheduler").exit_code, 0);
    assert_eq!(run(&mut w, &files, "sim start kube-scheduler").exit_code, 0);
    run(&mut w, &files, "kubectl apply -f filler.yaml");
    w.run_for(20 * SECOND);
    let pods = run(&mut w, &files, "kubectl get pods -o wide").stdout;
    let filler_line = pods.lines().find(|l| l.starts_with("filler-")).unwrap();
    assert!(filler_line.contains("Pending"), "{pods}");
    assert_eq!(run(&mut w, &files, nnn).stdout, "node-1");
    // Once `low` is gone, `high` gets the node.
    w.run_for(120 * SECOND);
    let node = "kubectl get pod high -o jsonpath={.spec.nodeName}";
    assert_eq!(run(&mut w, &files, node).stdout, "node-1");
}
