//! Rolling updates read through kubectl: set image, rollout status, history, undo,
//! pause/resume, and the surge/unavailability bounds along the way.

use std::collections::BTreeMap;

use kubeloop_sim::cluster::ClusterConfig;
use kubeloop_sim::cmd;
use kubeloop_sim::object::{Kind, Object};
use kubeloop_sim::process::Output;
use kubeloop_sim::time::SECOND;
use kubeloop_sim::view::stored;
use kubeloop_sim::World;

fn deployment(replicas: u32, surge: &str, unavailable: &str) -> String {
    format!(
        "apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: {replicas}
  strategy:
    rollingUpdate:
      maxSurge: {surge}
      maxUnavailable: {unavailable}
  selector:
    matchLabels:
      app: web
  template:
    metadata:
      labels:
        app: web
    spec:
      containers:
      - name: web
        image: nginx:1.27
"
    )
}

fn run(w: &mut World, files: &BTreeMap<String, String>, line: &str) -> Output {
    cmd::run(w, line, files, 300 * SECOND)
}

/// (active pods, available pods) as etcd holds them.
fn counts(w: &World) -> (usize, usize) {
    let mut active = 0;
    let mut ready = 0;
    for o in stored(w, Kind::Pod) {
        if let Object::Pod(p) = &*o {
            // The cluster's add-ons (CoreDNS, local-path) are not this deployment's.
            if p.metadata.deletion_timestamp.is_some()
                || p.metadata.namespace.as_deref() != Some("default")
            {
                continue;
            }
            active += 1;
            if kubeloop_sim::controllers::util::is_pod_ready(p) {
                ready += 1;
            }
        }
    }
    (active, ready)
}

#[test]
fn set_image_rolls_within_surge_and_unavailability_bounds() {
    let files: BTreeMap<String, String> = [("web.yaml".to_string(), deployment(4, "1", "1"))]
        .into_iter()
        .collect();
    let mut w = World::new(ClusterConfig::default());
    run(&mut w, &files, "kubectl apply -f web.yaml");
    w.run_for(30 * SECOND);
    assert_eq!(counts(&w), (4, 4));
    let out = run(
        &mut w,
        &files,
        "kubectl set image deployment/web web=nginx:1.28",
    );
    assert_eq!(out.stdout, "deployment.apps/web image updated\n");
    let mut max_active = 0;
    let mut min_ready = usize::MAX;
    for _ in 0..600 {
        w.run_for(100);
        let (a, r) = counts(&w);
        max_active = max_active.max(a);
        min_ready = min_ready.min(r);
    }
    assert!(
        max_active <= 5,
        "never more than replicas + maxSurge pods: {max_active}"
    );
    assert!(
        min_ready >= 3,
        "never fewer than replicas - maxUnavailable ready: {min_ready}"
    );
    let status = run(&mut w, &files, "kubectl rollout status deployment/web");
    assert_eq!(
        status.stdout,
        "deployment \"web\" successfully rolled out\n"
    );
    let images = run(
        &mut w,
        &files,
        "kubectl get pods -o jsonpath={.items[*].spec.containers[0].image}",
    );
    assert_eq!(
        images
            .stdout
            .split_whitespace()
            .filter(|i| *i == "nginx:1.28")
            .count(),
        4,
        "{images:?}"
    );
    let history = run(&mut w, &files, "kubectl rollout history deployment/web");
    assert_eq!(
        history.stdout,
        "deployment.apps/web \nREVISION  CHANGE-CAUSE\n1         <none>\n2         <none>\n\n"
    );
}

#[test]
fn rollout_status_prints_upstream_progress_lines_and_undo_goes_back() {
    let files: BTreeMap<String, String> = [("web.yaml".to_string(), deployment(3, "25%", "25%"))]
        .into_iter()
        .collect();
    let mut w = World::new(ClusterConfig::default());
    run(&mut w, &files, "kubectl apply -f web.yaml");
    let status = run(&mut w, &files, "kubectl rollout status deployment/web");
    let lines: Vec<&str> = status.stdout.lines().collect();
    assert_eq!(
        lines.last(),
        Some(&"deployment \"web\" successfully rolled out"),
        "{}",
        status.stdout
    );
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("Waiting for deployment \"web\" rollout to finish: ")),
        "{}",
        status.stdout
    );
    run(
        &mut w,
        &files,
        "kubectl set image deployment/web web=nginx:1.28",
    );
    run(&mut w, &files, "kubectl rollout status deployment/web");
    let undo = run(&mut w, &files, "kubectl rollout undo deployment/web");
    assert_eq!(undo.stdout, "deployment.apps/web rolled back\n");
    run(&mut w, &files, "kubectl rollout status deployment/web");
    let images = run(
        &mut w,
        &files,
        "kubectl get deploy web -o jsonpath={.spec.template.spec.containers[0].image}",
    );
    assert_eq!(images.stdout, "nginx:1.27");
    let rs = run(&mut w, &files, "kubectl get rs");
    assert_eq!(
        rs.stdout.lines().count(),
        3,
        "two ReplicaSets kept: {}",
        rs.stdout
    );
    let history = run(&mut w, &files, "kubectl rollout history deployment/web");
    assert!(
        history
            .stdout
            .contains("\n2         <none>\n3         <none>\n"),
        "{}",
        history.stdout
    );
}

#[test]
fn paused_deployment_does_not_roll_until_resumed() {
    let files: BTreeMap<String, String> = [("web.yaml".to_string(), deployment(2, "1", "0"))]
        .into_iter()
        .collect();
    let mut w = World::new(ClusterConfig::default());
    run(&mut w, &files, "kubectl apply -f web.yaml");
    w.run_for(20 * SECOND);
    assert_eq!(
        run(&mut w, &files, "kubectl rollout pause deployment/web").stdout,
        "deployment.apps/web paused\n"
    );
    assert_eq!(
        run(&mut w, &files, "kubectl rollout pause deployment/web").stderr,
        "error: deployments.apps \"web\" is already paused\n"
    );
    run(
        &mut w,
        &files,
        "kubectl set image deployment/web web=nginx:1.28",
    );
    w.run_for(20 * SECOND);
    assert_eq!(
        run(&mut w, &files, "kubectl get rs").stdout.lines().count(),
        2,
        "no new ReplicaSet while paused"
    );
    assert_eq!(
        run(&mut w, &files, "kubectl rollout resume deployment/web").stdout,
        "deployment.apps/web resumed\n"
    );
    let status = run(&mut w, &files, "kubectl rollout status deployment/web");
    assert!(
        status
            .stdout
            .ends_with("deployment \"web\" successfully rolled out\n"),
        "{status:?}"
    );
}
