//! Tests of the Services the diagram draws, driven through the terminal as a learner would.

use super::*;
use crate::cluster::ClusterConfig;
use crate::time::SECOND;

const WEB: &str = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 3\n  selector:\n    matchLabels: {app: web}\n  template:\n    metadata:\n      labels: {app: web}\n    spec:\n      containers:\n      - name: nginx\n        image: nginx:1.27\n        ports:\n        - containerPort: 80\n";

fn run(w: &mut World, line: &str) -> crate::process::Output {
    let files = [("web.yaml".to_string(), WEB.to_string())]
        .into_iter()
        .collect();
    crate::cmd::run(w, line, &files, 60 * SECOND)
}

fn web(w: &World) -> ServiceView {
    services(w)
        .into_iter()
        .find(|s| s.name == "web")
        .expect("the web Service is drawn")
}

#[test]
fn a_fresh_cluster_draws_no_service_of_its_own() {
    let w = World::new(ClusterConfig::default());
    assert_eq!(
        services(&w),
        vec![],
        "kubernetes and kube-dns are the cluster's own"
    );
}

#[test]
fn an_exposed_deployment_draws_its_service_with_what_kubectl_prints_and_its_ready_pods() {
    let mut w = World::new(ClusterConfig::default());
    run(&mut w, "kubectl apply -f web.yaml");
    w.run_for(20 * SECOND);
    run(
        &mut w,
        "kubectl expose deployment web --port=80 --type=NodePort",
    );
    w.run_for(5 * SECOND);
    let s = web(&w);
    let table = run(&mut w, "kubectl get svc web --no-headers").stdout;
    let cells: Vec<&str> = table.split_whitespace().collect();
    assert_eq!(
        [
            s.name.as_str(),
            &s.type_,
            &s.cluster_ip,
            &s.external_ip,
            &s.ports
        ],
        cells[..5],
        "the chip says what kubectl get svc says"
    );
    assert!(s.selects);
    assert_eq!((s.endpoints.len(), s.ready()), (3, 3), "{:?}", s.endpoints);
    let pods = run(&mut w, "kubectl get pods -l app=web -o wide --no-headers").stdout;
    for e in &s.endpoints {
        let pod = e.pod.as_deref().expect("a targetRef");
        let name = pod.strip_prefix("default/").expect("in default");
        let row = pods
            .lines()
            .find(|l| l.starts_with(name))
            .unwrap_or_else(|| panic!("{name} in {pods}"));
        assert!(
            row.contains(&e.ip) && row.contains(&e.node),
            "{row} vs {e:?}"
        );
    }
    let marked = endpoint_pods(&services(&w), "default/web");
    assert_eq!(marked.len(), 3);
    assert!(endpoint_pods(&services(&w), "default/other").is_empty());
}

#[test]
fn scaling_down_removes_endpoints_and_a_stopped_pod_turns_not_ready() {
    let mut w = World::new(ClusterConfig::default());
    run(&mut w, "kubectl apply -f web.yaml");
    w.run_for(20 * SECOND);
    run(&mut w, "kubectl expose deployment web --port=80");
    w.run_for(5 * SECOND);
    run(&mut w, "kubectl scale deployment web --replicas=1");
    w.run_for(60 * SECOND);
    let s = web(&w);
    assert_eq!((s.endpoints.len(), s.ready()), (1, 1), "{:?}", s.endpoints);
    // The last pod's node stops its kubelet: the node controller marks the pod not ready
    // (NodeNotReady after the grace period) and the slice follows.
    let node = s.endpoints[0].node.clone();
    run(&mut w, &format!("ssh {node} systemctl stop kubelet"));
    w.run_for(90 * SECOND);
    let s = web(&w);
    assert_eq!(s.ready(), 0, "{:?}", s.endpoints);
    assert!(
        !s.endpoints.is_empty(),
        "a not-ready endpoint is still listed"
    );
}

#[test]
fn a_headless_service_without_a_selector_has_no_cluster_ip_and_no_endpoints() {
    let mut w = World::new(ClusterConfig::default());
    run(
        &mut w,
        "kubectl create service clusterip db --clusterip=None",
    );
    w.run_for(5 * SECOND);
    let s = services(&w)
        .into_iter()
        .find(|s| s.name == "db")
        .expect("db");
    assert_eq!(s.cluster_ip, "None");
    assert!(s.endpoints.is_empty());
}

#[test]
fn services_in_namespaces_with_the_reserved_kube_prefix_are_the_clusters_own() {
    // The same rule as the diagram's pods and the flow's default pod.
    let mut w = World::new(ClusterConfig::default());
    for ns in ["kube-demo", "demo"] {
        run(&mut w, &format!("kubectl create namespace {ns}"));
        run(
            &mut w,
            &format!("kubectl create service clusterip web -n {ns} --tcp=80"),
        );
    }
    w.run_for(2 * SECOND);
    let drawn: Vec<(String, String)> = services(&w)
        .into_iter()
        .map(|s| (s.namespace, s.name))
        .collect();
    assert_eq!(drawn, vec![("demo".to_string(), "web".to_string())]);
}
