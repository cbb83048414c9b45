//! `kubectl port-forward` and the terminal's own `curl localhost:PORT` through it.

use std::collections::BTreeMap;

use kubeloop_sim::cluster::ClusterConfig;
use kubeloop_sim::cmd::{self, Started};
use kubeloop_sim::time::SECOND;
use kubeloop_sim::World;

fn run(w: &mut World, line: &str) -> kubeloop_sim::process::Output {
    cmd::run(w, line, &BTreeMap::new(), 120 * SECOND)
}

#[test]
fn port_forward_to_a_service_lets_the_terminals_curl_reach_a_pod() {
    let mut w = World::new(ClusterConfig::default());
    assert_eq!(
        run(
            &mut w,
            "kubectl create deployment web --image=nginx:1.27 --port=80"
        )
        .exit_code,
        0
    );
    assert_eq!(
        run(
            &mut w,
            "kubectl expose deployment web --port=8080 --target-port=80"
        )
        .exit_code,
        0
    );
    run(
        &mut w,
        "kubectl wait --for=condition=available deployment/web --timeout=90s",
    );
    let before = run(&mut w, "curl -s localhost:9000/");
    assert_eq!(before.exit_code, 7);
    assert_eq!(before.stderr, "curl: (7) Failed to connect to localhost port 9000 after 0 ms: Couldn't connect to server\n");
    let pf = match cmd::start(
        &mut w,
        "kubectl port-forward svc/web 9000:8080",
        &BTreeMap::new(),
    ) {
        Started::Running(id) => id,
        Started::Done(o) => panic!("{o:?}"),
    };
    w.run_for(2 * SECOND);
    let printed = w.terminal(pf).expect("still running").take_unread();
    assert_eq!(
        printed,
        "Forwarding from 127.0.0.1:9000 -> 80\nForwarding from [::1]:9000 -> 80\n"
    );
    let page = run(&mut w, "curl -s localhost:9000/");
    assert_eq!(page.exit_code, 0, "{page:?}");
    assert!(
        page.stdout.contains("<title>Welcome to nginx!</title>"),
        "{page:?}"
    );
    // Pod and Service addresses are not routed from the terminal's machine.
    let ip = run(&mut w, "kubectl get svc web -o jsonpath={.spec.clusterIP}").stdout;
    assert_eq!(run(&mut w, &format!("curl -s {ip}:8080")).exit_code, 7);
    assert_eq!(run(&mut w, "curl -s http://web:8080").exit_code, 6);
}

#[test]
fn port_forward_refuses_what_kubectl_refuses() {
    let mut w = World::new(ClusterConfig::default());
    let o = run(&mut w, "kubectl port-forward pod/nope 8080:80");
    assert_eq!(o.exit_code, 1);
    assert_eq!(
        o.stderr,
        "Error from server (NotFound): pods \"nope\" not found\n"
    );
    let o = run(&mut w, "kubectl port-forward pod/nope");
    assert!(
        o.stderr
            .contains("at least 1 PORT is required for port-forward"),
        "{o:?}"
    );
}
