//! The classic example end to end: an nginx Deployment with 3 replicas rolls out.

use std::collections::BTreeMap;

use kubeloop_sim::cluster::ClusterConfig;
use kubeloop_sim::cmd;
use kubeloop_sim::time::SECOND;
use kubeloop_sim::World;

const NGINX: &str = "apiVersion: apps/v1
kind: Deployment
metadata:
  name: nginx
  labels:
    app: nginx
spec:
  replicas: 3
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
        image: nginx:1.27
        ports:
        - containerPort: 80
";

fn files() -> BTreeMap<String, String> {
    [("nginx-deploy.yaml".to_string(), NGINX.to_string())]
        .into_iter()
        .collect()
}

fn run(w: &mut World, line: &str) -> kubeloop_sim::process::Output {
    cmd::run(w, line, &files(), 60 * SECOND)
}

#[test]
fn nginx_deployment_reaches_three_running_pods() {
    let mut w = World::new(ClusterConfig::default());
    let out = run(&mut w, "kubectl apply -f nginx-deploy.yaml");
    assert_eq!(out.stdout, "deployment.apps/nginx created\n", "{out:?}");
    w.run_for(30 * SECOND);
    let out = run(&mut w, "kubectl get pods -o wide");
    println!("{}", out.stdout);
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert_eq!(lines.len(), 4, "{}", out.stdout);
    assert!(lines[0].starts_with("NAME"));
    for l in &lines[1..] {
        assert!(l.contains("1/1") && l.contains("Running"), "{l}");
    }
    println!("{}", run(&mut w, "kubectl get deploy,rs").stdout);
}

#[test]
fn debug_node_view() {
    let mut w = World::new(ClusterConfig::default());
    run(&mut w, "kubectl apply -f nginx-deploy.yaml");
    w.run_for(30 * SECOND);
    for n in ["node-1", "node-2", "node-3"] {
        println!("{}", run(&mut w, &format!("ssh {n} crictl pods")).stdout);
        println!("{}", run(&mut w, &format!("ssh {n} crictl ps -a")).stdout);
    }
    println!("{}", run(&mut w, "kubectl get events").stdout);
    println!("{}", run(&mut w, "kubectl describe pod").stdout);
}

#[test]
fn exposed_deployment_gets_proxy_rules_on_every_node() {
    let mut w = World::new(ClusterConfig::default());
    run(&mut w, "kubectl apply -f nginx-deploy.yaml");
    w.run_for(20 * SECOND);
    let out = run(&mut w, "kubectl expose deployment nginx --port=80");
    assert_eq!(out.stdout, "service/nginx exposed\n", "{out:?}");
    w.run_for(5 * SECOND);
    let svc = run(&mut w, "kubectl get svc nginx");
    println!("{}", svc.stdout);
    println!("{}", run(&mut w, "kubectl get endpointslices").stdout);
    let rules = run(&mut w, "ssh node-1 iptables-save").stdout;
    println!("{rules}");
    assert!(rules.contains("default/nginx cluster IP"), "{rules}");
    assert_eq!(rules.matches("-j KUBE-SEP-").count() >= 3, true);
}

#[test]
fn a_deleted_pod_is_replaced() {
    let mut w = World::new(ClusterConfig::default());
    run(&mut w, "kubectl apply -f nginx-deploy.yaml");
    w.run_for(20 * SECOND);
    let names = run(&mut w, "kubectl get pods -o name").stdout;
    let victim = names
        .lines()
        .next()
        .expect("a pod")
        .trim_start_matches("pod/")
        .to_string();
    let out = run(&mut w, &format!("kubectl delete pod {victim}"));
    assert_eq!(
        out.stdout,
        format!("pod \"{victim}\" deleted from default namespace\n"),
        "{out:?}"
    );
    w.run_for(20 * SECOND);
    let pods = run(&mut w, "kubectl get pods").stdout;
    assert!(!pods.contains(&victim), "{pods}");
    assert_eq!(
        pods.lines()
            .filter(|l| l.contains("1/1") && l.contains("Running"))
            .count(),
        3,
        "{pods}"
    );
}
