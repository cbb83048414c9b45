//! `kubectl describe node`: the non-terminated pods with their requests and limits, and
//! the allocated totals, as the node describer prints them.

use std::collections::BTreeMap;

use kubeloop_sim::{cluster::ClusterConfig, cmd, time::SECOND, World};

#[test]
fn describe_node_lists_pod_requests_and_allocated_resources() {
    let mut w = World::new(ClusterConfig::default());
    let files = BTreeMap::new();
    w.run_for(30 * SECOND);
    let run = |w: &mut World, l: &str| cmd::run(w, l, &files, 300 * SECOND).stdout;
    let node = run(
        &mut w,
        "kubectl get pods -n kube-system -l k8s-app=kube-dns -o jsonpath={.items[0].spec.nodeName}",
    );
    let d = run(&mut w, &format!("kubectl describe node {node}"));
    let coredns = d
        .lines()
        .find(|l| l.trim_start().starts_with("kube-system") && l.contains("coredns-"))
        .expect("a coredns row");
    let cols: Vec<&str> = coredns
        .split("  ")
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .collect();
    assert_eq!(
        &cols[2..6],
        ["100m (2%)", "0 (0%)", "70Mi (0%)", "170Mi (2%)"],
        "{coredns}"
    );
    assert!(d.contains("Allocated resources:\n  (Total limits may be over 100 percent, i.e., overcommitted.)\n  Resource           Requests    Limits\n  --------           --------    ------\n"), "{d}");
    assert!(
        d.contains("\n  hugepages-2Mi      0 (0%)      0 (0%)\nEvents:"),
        "{d}"
    );
}
