//! DaemonSets read through kubectl: the documentation's fluentd-elasticsearch example,
//! a node added later getting its pod, a node removed losing it, and rollouts.

mod common;

use common::Term;

/// content/en/examples/controllers/daemonset.yaml.
pub const FLUENTD: &str = "apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: fluentd-elasticsearch
  namespace: kube-system
  labels:
    k8s-app: fluentd-logging
spec:
  selector:
    matchLabels:
      name: fluentd-elasticsearch
  template:
    metadata:
      labels:
        name: fluentd-elasticsearch
    spec:
      tolerations:
      # these tolerations are to have the daemonset runnable on control plane nodes
      # remove them if your control plane nodes should not run pods
      - key: node-role.kubernetes.io/control-plane
        operator: Exists
        effect: NoSchedule
      - key: node-role.kubernetes.io/master
        operator: Exists
        effect: NoSchedule
      containers:
      - name: fluentd-elasticsearch
        image: quay.io/fluentd_elasticsearch/fluentd:v5.0.1
        resources:
          limits:
            memory: 200Mi
          requests:
            cpu: 100m
            memory: 200Mi
        volumeMounts:
        - name: varlog
          mountPath: /var/log
      # it may be desirable to set a high enough priority class to ensure that a DaemonSet Pod
      # preempts running Pods
      # priorityClassName: important
      terminationGracePeriodSeconds: 30
      volumes:
      - name: varlog
        hostPath:
          path: /var/log
";

fn fluentd() -> Term {
    let mut t = Term::new();
    t.file("daemonset.yaml", FLUENTD);
    assert_eq!(
        t.ok("kubectl apply -f daemonset.yaml"),
        "daemonset.apps/fluentd-elasticsearch created\n"
    );
    t
}

fn fields(line: &str) -> Vec<String> {
    line.split_whitespace().map(str::to_string).collect()
}

/// The node column of each daemon pod, sorted.
fn pod_nodes(t: &mut Term) -> Vec<String> {
    let out = t.ok("kubectl get pods -n kube-system -l name=fluentd-elasticsearch -o wide");
    let mut nodes: Vec<String> = out
        .lines()
        .skip(1)
        .filter(|l| l.contains("Running"))
        .map(|l| fields(l)[6].clone())
        .collect();
    nodes.sort();
    nodes
}

#[test]
fn the_fluentd_example_runs_one_pod_per_node() {
    let mut t = fluentd();
    t.settle(60);
    let nodes = t.ok("kubectl get nodes -o name");
    let n = nodes.lines().count();
    let out = t.ok("kubectl get ds -n kube-system fluentd-elasticsearch");
    let mut lines = out.lines();
    assert_eq!(
        fields(lines.next().unwrap()),
        [
            "NAME",
            "DESIRED",
            "CURRENT",
            "READY",
            "UP-TO-DATE",
            "AVAILABLE",
            "NODE",
            "SELECTOR",
            "AGE"
        ]
    );
    let row = fields(lines.next().unwrap());
    let k = n.to_string();
    assert_eq!(
        &row[..7],
        ["fluentd-elasticsearch", &k, &k, &k, &k, &k, "<none>"],
        "{out}"
    );
    assert_eq!(pod_nodes(&mut t).len(), n);
    let aff = t.ok("kubectl get pods -n kube-system -l name=fluentd-elasticsearch -o jsonpath={.items[0].spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchFields[0].key}");
    assert_eq!(aff, "metadata.name");
    let tols = t.ok("kubectl get pods -n kube-system -l name=fluentd-elasticsearch -o jsonpath={.items[0].spec.tolerations[*].key}");
    assert!(tols.contains("node.kubernetes.io/unschedulable"), "{tols}");
    assert!(tols.contains("node.kubernetes.io/not-ready"), "{tols}");
}

#[test]
fn a_node_added_later_gets_its_pod_and_a_deleted_node_loses_it() {
    let mut t = fluentd();
    t.settle(60);
    let before = pod_nodes(&mut t);
    t.ok("sim node add node-4");
    t.settle(60);
    let after = pod_nodes(&mut t);
    assert_eq!(after.len(), before.len() + 1, "{after:?}");
    assert!(after.contains(&"node-4".to_string()), "{after:?}");
    // A node that is gone for good: powered off, then its Node object deleted (a
    // running kubelet would register it again).
    t.ok("sim poweroff node-4");
    t.ok("kubectl delete node node-4");
    t.settle(60);
    assert_eq!(pod_nodes(&mut t), before);
}

#[test]
fn rollout_status_history_and_undo_speak_daemon_set() {
    let mut t = fluentd();
    let out = t.ok("kubectl rollout status ds/fluentd-elasticsearch -n kube-system");
    assert!(
        out.ends_with("daemon set \"fluentd-elasticsearch\" successfully rolled out\n"),
        "{out}"
    );
    t.ok("kubectl set image ds/fluentd-elasticsearch -n kube-system fluentd-elasticsearch=quay.io/fluentd_elasticsearch/fluentd:v5.0.2");
    let out = t.ok("kubectl rollout status ds/fluentd-elasticsearch -n kube-system");
    assert!(
        out.contains("Waiting for daemon set \"fluentd-elasticsearch\" rollout to finish: "),
        "{out}"
    );
    assert!(
        out.ends_with("daemon set \"fluentd-elasticsearch\" successfully rolled out\n"),
        "{out}"
    );
    t.settle(40); // the old pods finish terminating
    let imgs = t.ok("kubectl get pods -n kube-system -l name=fluentd-elasticsearch -o jsonpath={.items[*].spec.containers[0].image}");
    assert!(imgs.split(' ').all(|i| i.ends_with(":v5.0.2")), "{imgs}");
    let hist = t.ok("kubectl rollout history ds/fluentd-elasticsearch -n kube-system");
    assert_eq!(hist, "daemonset.apps/fluentd-elasticsearch \nREVISION  CHANGE-CAUSE\n1         <none>\n2         <none>\n\n");
    assert_eq!(
        t.ok("kubectl rollout undo ds/fluentd-elasticsearch -n kube-system"),
        "daemonset.apps/fluentd-elasticsearch rolled back\n"
    );
    t.ok("kubectl rollout status ds/fluentd-elasticsearch -n kube-system");
    t.settle(40); // the old pods finish terminating
    let imgs = t.ok("kubectl get pods -n kube-system -l name=fluentd-elasticsearch -o jsonpath={.items[*].spec.containers[0].image}");
    assert!(imgs.split(' ').all(|i| i.ends_with(":v5.0.1")), "{imgs}");
}

#[test]
fn the_daemonset_node_added_scenario_gives_the_new_node_its_pod() {
    let path = format!(
        "{}/../../public/scenarios/daemonset-node-added.yaml",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).expect("scenario file");
    let sc = kubeloop_sim::scenario::parse_scenario(&text).unwrap_or_else(|e| panic!("{e:?}"));
    let r = kubeloop_sim::runner::run(&sc, None).1;
    let at = |s: u64, prefix: &str| {
        r.iter()
            .find(|x| x.at_ms == s * 1000 && x.command.starts_with(prefix))
            .unwrap_or_else(|| panic!("no {prefix} at {s}s"))
            .stdout
            .clone()
    };
    let row = |t: String| fields(t.lines().nth(1).unwrap());
    assert_eq!(
        &row(at(30, "kubectl get ds"))[1..6],
        ["3", "3", "3", "3", "3"]
    );
    assert_eq!(
        &row(at(60, "kubectl get ds"))[1..6],
        ["4", "4", "4", "4", "4"]
    );
    assert!(at(60, "kubectl get pods").contains("node-4"));
    assert!(at(62, "kubectl rollout status")
        .ends_with("daemon set \"fluentd-elasticsearch\" successfully rolled out\n"));
}

#[test]
fn describe_daemonset_counts_nodes_and_the_template_generation_moves_with_the_template() {
    let mut t = fluentd();
    t.settle(60);
    let out = t.ok("kubectl describe ds fluentd-elasticsearch -n kube-system");
    for line in [
        "Name:           fluentd-elasticsearch\n",
        "Selector:       name=fluentd-elasticsearch\n",
        "Node-Selector:  <none>\n",
        "Labels:         k8s-app=fluentd-logging\n",
        "Annotations:    deprecated.daemonset.template.generation: 1\n",
        "Desired Number of Nodes Scheduled: 3\n",
        "Current Number of Nodes Scheduled: 3\n",
        "Number of Nodes Scheduled with Up-to-date Pods: 3\n",
        "Number of Nodes Scheduled with Available Pods: 3\n",
        "Number of Nodes Misscheduled: 0\n",
        "Pods Status:  3 Running / 0 Waiting / 0 Succeeded / 0 Failed\n",
    ] {
        assert!(out.contains(line), "{line:?} in\n{out}");
    }
    t.ok("kubectl set image ds/fluentd-elasticsearch -n kube-system fluentd-elasticsearch=quay.io/fluentd_elasticsearch/fluentd:v5.0.2");
    t.ok("kubectl rollout status ds/fluentd-elasticsearch -n kube-system");
    let yaml = t.ok("kubectl get ds fluentd-elasticsearch -n kube-system -o yaml");
    assert!(
        yaml.contains("    deprecated.daemonset.template.generation: \"2\"\n"),
        "{yaml}"
    );
    let gens = t.ok("kubectl get pods -n kube-system -l name=fluentd-elasticsearch,pod-template-generation=2 -o name");
    assert_eq!(gens.lines().count(), 3, "{gens}");
}

/// A cluster of 300 nodes starts with kind's kube-proxy and kindnet pods on every node.
/// A DaemonSet sync there takes virtual time (it walks every node) and the changes that
/// arrive during one wait for it to end: both sets still reach every node, and a node
/// added afterwards gets its pods (a set held once and never synced again would not).
#[test]
fn a_large_clusters_daemonsets_converge_with_their_syncs_folded() {
    use kubeloop_sim::cluster::{ClusterConfig, NodeConfig};
    let mut t = Term::new();
    t.w = kubeloop_sim::World::new(ClusterConfig {
        nodes: (1..=300)
            .map(|i| NodeConfig::standard(&format!("node-{i}")))
            .collect(),
        ..ClusterConfig::default()
    });
    t.settle(30);
    let counts = |t: &mut Term| -> Vec<Vec<String>> {
        let out = t.ok("kubectl get ds -n kube-system --no-headers");
        out.lines()
            .map(|l| {
                l.split_whitespace()
                    .skip(1)
                    .take(5)
                    .map(String::from)
                    .collect()
            })
            .collect()
    };
    assert_eq!(counts(&mut t), vec![vec!["300".to_string(); 5]; 2]);
    t.ok("sim node add node-301");
    t.settle(60);
    assert_eq!(counts(&mut t), vec![vec!["301".to_string(); 5]; 2]);
}
