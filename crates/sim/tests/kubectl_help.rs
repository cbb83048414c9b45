//! `kubectl --help`, `kubectl CMD --help` and Tab completion through the terminal.

use std::collections::BTreeMap;

use kubeloop_sim::cluster::ClusterConfig;
use kubeloop_sim::cmd;
use kubeloop_sim::time::SECOND;
use kubeloop_sim::World;

#[test]
fn help_prints_kubectls_layout_and_changes_nothing() {
    let mut w = World::new(ClusterConfig::default());
    let files = BTreeMap::new();
    for line in ["kubectl", "kubectl --help", "kubectl -h"] {
        let o = cmd::run(&mut w, line, &files, 10 * SECOND);
        assert_eq!(o.exit_code, 0, "{line}");
        assert!(
            o.stdout.contains("Basic Commands (Beginner):\n  create "),
            "{line}: {o:?}"
        );
        assert!(o.stdout.contains(
            "Use \"kubectl <command> --help\" for more information about a given command.\n"
        ));
    }
    let o = cmd::run(&mut w, "kubectl run --help", &files, 10 * SECOND);
    assert!(
        o.stdout
            .starts_with("Run a particular image on the cluster.\n\nOptions:\n"),
        "{o:?}"
    );
    assert!(
        o.stdout
            .contains("--image='':\n\tThe image for the container to run.\n"),
        "{o:?}"
    );
    // --help never runs the command.
    let o = cmd::run(
        &mut w,
        "kubectl delete pods --all --help",
        &files,
        10 * SECOND,
    );
    assert_eq!(o.exit_code, 0);
    let pods = cmd::run(
        &mut w,
        "kubectl get pods -A --no-headers",
        &files,
        10 * SECOND,
    );
    assert!(!pods.stdout.is_empty());
}

#[test]
fn tab_completes_names_of_objects_just_created() {
    let mut w = World::new(ClusterConfig::default());
    let files = BTreeMap::new();
    let o = cmd::run(&mut w, "kubectl create deployment hello-node --image=registry.k8s.io/e2e-test-images/agnhost:2.53 -- /agnhost netexec --http-port=8080", &files, 30 * SECOND);
    assert_eq!(o.exit_code, 0, "{o:?}");
    let c = cmd::complete::complete(&w, "kubectl rollout status deployment hel", &files);
    assert_eq!(c.line, "kubectl rollout status deployment hello-node ");
    let c = cmd::complete::complete(&w, "kubectl scale deployment h", &files);
    assert_eq!(c.line, "kubectl scale deployment hello-node ");
}
