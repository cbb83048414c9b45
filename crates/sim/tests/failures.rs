//! Each component failure from the seed notes' failure table, through the terminal:
//! what a user sees, and how the cluster recovers.

use kubeloop_sim::cluster::ClusterConfig;
use kubeloop_sim::process::Output;
use kubeloop_sim::time::SECOND;
use kubeloop_sim::World;

mod common;
use common::NGINX;

fn run(w: &mut World, line: &str) -> Output {
    common::run_with(w, NGINX, line)
}

fn running_cluster() -> World {
    let mut w = World::new(ClusterConfig::default());
    assert_eq!(run(&mut w, "kubectl apply -f nginx.yaml").exit_code, 0);
    w.run_for(20 * SECOND);
    w
}

fn count(out: &Output, needle: &str) -> usize {
    out.stdout.lines().filter(|l| l.contains(needle)).count()
}

#[test]
fn apiserver_down_refuses_kubectl_and_pods_keep_running() {
    let mut w = running_cluster();
    assert_eq!(
        run(&mut w, "sim stop kube-apiserver").stdout,
        "kube-apiserver stopped\n"
    );
    let out = run(&mut w, "kubectl get pods");
    assert_eq!(out.exit_code, 1);
    assert_eq!(out.stderr, "The connection to the server 172.18.0.2:6443 was refused - did you specify the right host or port?\n");
    w.run_for(60 * SECOND);
    // Containers never stopped: the node still runs them.
    let ps = run(&mut w, "ssh node-1 crictl ps").stdout
        + &run(&mut w, "ssh node-2 crictl ps").stdout
        + &run(&mut w, "ssh node-3 crictl ps").stdout;
    // Only the default namespace: the add-ons (CoreDNS, local-path) run on the nodes too.
    let running = ps
        .lines()
        .filter(|l| l.contains("Running") && l.trim_end().ends_with("default"))
        .count();
    assert_eq!(running, 3, "{ps}");
    run(&mut w, "sim start kube-apiserver");
    w.run_for(5 * SECOND);
    let pods = run(&mut w, "kubectl get pods");
    assert_eq!(count(&pods, "Running"), 3, "{pods:?}");
}

#[test]
fn etcd_down_fails_requests_and_nothing_acknowledged_is_lost() {
    let mut w = running_cluster();
    run(&mut w, "sim stop etcd");
    let out = run(&mut w, "kubectl get pods");
    assert_eq!(
        out.stderr, "Error from server: etcdserver: request timed out\n",
        "{out:?}"
    );
    let out = run(&mut w, "kubectl scale deployment nginx --replicas=4");
    assert_eq!(out.exit_code, 1);
    run(&mut w, "sim start etcd");
    w.run_for(10 * SECOND);
    assert_eq!(count(&run(&mut w, "kubectl get pods"), "Running"), 3);
    assert_eq!(
        run(&mut w, "kubectl scale deployment nginx --replicas=4").stdout,
        "deployment.apps/nginx scaled\n"
    );
    w.run_for(20 * SECOND);
    assert_eq!(count(&run(&mut w, "kubectl get pods"), "Running"), 4);
}

#[test]
fn scheduler_down_leaves_new_pods_pending_until_it_returns() {
    let mut w = running_cluster();
    run(&mut w, "sim stop kube-scheduler");
    run(&mut w, "kubectl scale deployment nginx --replicas=5");
    w.run_for(30 * SECOND);
    let pods = run(&mut w, "kubectl get pods");
    assert_eq!(count(&pods, "Pending"), 2, "{}", pods.stdout);
    assert_eq!(count(&pods, "Running"), 3);
    run(&mut w, "sim start kube-scheduler");
    w.run_for(30 * SECOND);
    assert_eq!(count(&run(&mut w, "kubectl get pods"), "Running"), 5);
}

#[test]
fn controller_manager_down_means_no_replacement_until_it_returns() {
    let mut w = running_cluster();
    run(&mut w, "sim stop kube-controller-manager");
    let victim = run(&mut w, "kubectl get pods -o name")
        .stdout
        .lines()
        .next()
        .unwrap()
        .trim_start_matches("pod/")
        .to_string();
    run(&mut w, &format!("kubectl delete pod {victim}"));
    w.run_for(30 * SECOND);
    assert_eq!(count(&run(&mut w, "kubectl get pods"), "Running"), 2);
    run(&mut w, "sim start kube-controller-manager");
    w.run_for(30 * SECOND);
    assert_eq!(count(&run(&mut w, "kubectl get pods"), "Running"), 3);
}

#[test]
fn partitioned_node_goes_unknown_and_its_pods_are_replaced_after_tolerations() {
    let mut w = running_cluster();
    let node = run(&mut w, "kubectl get pods -o wide")
        .stdout
        .lines()
        .nth(1)
        .unwrap()
        .split_whitespace()
        .nth(6)
        .unwrap()
        .to_string();
    run(&mut w, &format!("sim partition {node}"));
    w.run_for(70 * SECOND);
    let nodes = run(&mut w, "kubectl get nodes");
    let line = nodes
        .stdout
        .lines()
        .find(|l| l.starts_with(&node))
        .unwrap()
        .to_string();
    assert!(line.contains("NotReady"), "{}", nodes.stdout);
    let taints = run(
        &mut w,
        &format!("kubectl get node {node} -o jsonpath={{.spec.taints[*].key}}"),
    );
    assert!(
        taints.stdout.contains("node.kubernetes.io/unreachable"),
        "{taints:?}"
    );
    w.run_for(300 * SECOND);
    let pods = run(&mut w, "kubectl get pods -o wide");
    let running_elsewhere = pods
        .stdout
        .lines()
        .filter(|l| l.contains("Running") && !l.contains(&node))
        .count();
    assert_eq!(running_elsewhere, 3, "{}", pods.stdout);
    run(&mut w, &format!("sim heal {node}"));
    w.run_for(60 * SECOND);
    let nodes = run(&mut w, "kubectl get nodes").stdout;
    assert!(
        nodes
            .lines()
            .find(|l| l.starts_with(&node))
            .unwrap()
            .contains(" Ready"),
        "{nodes}"
    );
}
