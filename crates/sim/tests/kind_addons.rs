//! kind's kube-proxy and kindnet DaemonSets in kube-system, read through kubectl: one
//! running host-network pod per node from time 0, the DaemonSet controller leaving them
//! alone, and a node added later getting its pods from it.

mod common;

use common::Term;

fn fields(line: &str) -> Vec<String> {
    line.split_whitespace().map(str::to_string).collect()
}

/// `NAME NODE IP` of the running pods whose name starts with `prefix`.
fn daemon_pods(t: &mut Term, prefix: &str) -> Vec<(String, String, String)> {
    let out = t.ok("kubectl get pods -n kube-system -o wide");
    out.lines()
        .skip(1)
        .map(fields)
        .filter(|f| f[0].starts_with(prefix) && f[2] == "Running")
        .map(|f| (f[0].clone(), f[6].clone(), f[5].clone()))
        .collect()
}

#[test]
fn kube_system_shows_kind_s_daemonsets_with_a_pod_per_node() {
    let mut t = Term::new();
    t.settle(5);
    let out = t.ok("kubectl get ds -n kube-system");
    let rows: Vec<Vec<String>> = out.lines().map(fields).collect();
    assert_eq!(
        rows[0],
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
    assert_eq!(
        &rows[1][..7],
        ["kindnet", "3", "3", "3", "3", "3", "kubernetes.io/os=linux"],
        "{out}"
    );
    assert_eq!(
        &rows[2][..7],
        [
            "kube-proxy",
            "3",
            "3",
            "3",
            "3",
            "3",
            "kubernetes.io/os=linux"
        ],
        "{out}"
    );
    for prefix in ["kube-proxy-", "kindnet-"] {
        let pods = daemon_pods(&mut t, prefix);
        let mut nodes: Vec<&str> = pods.iter().map(|p| p.1.as_str()).collect();
        nodes.sort();
        assert_eq!(nodes, ["node-1", "node-2", "node-3"], "{pods:?}");
        for (name, node, ip) in &pods {
            assert_eq!(name.len(), prefix.len() + 5, "{name}");
            // hostNetwork: the pod's IP is its node's InternalIP.
            let node_ip = t.ok(&format!(
                "kubectl get node {node} -o jsonpath={{.status.addresses[0].address}}"
            ));
            assert_eq!(ip, &node_ip);
        }
    }
    let spec = t.ok("kubectl get ds kube-proxy -n kube-system -o jsonpath={.spec.template.spec.priorityClassName},{.spec.template.spec.hostNetwork},{.spec.template.spec.containers[0].image}");
    assert_eq!(
        spec,
        "system-node-critical,true,registry.k8s.io/kube-proxy:v1.35.0"
    );
    let spec = t.ok("kubectl get ds kindnet -n kube-system -o jsonpath={.spec.template.spec.priorityClassName},{.spec.template.spec.tolerations[0].operator},{.spec.template.spec.containers[0].image}");
    assert_eq!(
        spec,
        "system-node-critical,Exists,docker.io/kindest/kindnetd:v20251212-v0.29.0-alpha-105-g20ccfc88"
    );
    // The controller found its pods as it would have made them: nothing was replaced.
    let events = t.ok("kubectl get events -n kube-system");
    assert!(!events.contains("SuccessfulCreate"), "{events}");
    assert!(!events.contains("SuccessfulDelete"), "{events}");
    let revs = t.ok("kubectl get controllerrevisions -n kube-system -o name");
    assert_eq!(revs.lines().count(), 2, "{revs}");
    // The command the issue names lists both kinds, DaemonSets first.
    let both = t.ok("kubectl get ds,pods -n kube-system");
    let ds_at = both.find("daemonset.apps/kindnet").expect("daemonset rows");
    let pod_at = both.find("pod/kube-proxy-").expect("pod rows");
    assert!(ds_at < pod_at, "{both}");
    assert!(both.contains("daemonset.apps/kube-proxy"), "{both}");
    // containerd runs them like any pod.
    let ps = t.ok("ssh node-2 crictl ps");
    assert!(
        ps.contains("kube-proxy") && ps.contains("kindnet-cni"),
        "{ps}"
    );
}

#[test]
fn a_node_added_later_gets_kube_proxy_and_kindnet_from_the_daemonset_controller() {
    let mut t = Term::new();
    t.ok("sim node add node-4");
    t.settle(30);
    for prefix in ["kube-proxy-", "kindnet-"] {
        let pods = daemon_pods(&mut t, prefix);
        let on4: Vec<_> = pods.iter().filter(|p| p.1 == "node-4").collect();
        assert_eq!(on4.len(), 1, "{pods:?}");
        assert_eq!(on4[0].2, "172.18.0.6", "host network: node-4's address");
    }
    let out = t.ok("kubectl get ds kube-proxy -n kube-system");
    assert_eq!(
        &fields(out.lines().nth(1).unwrap())[1..6],
        ["4", "4", "4", "4", "4"],
        "{out}"
    );
    let events =
        t.ok("kubectl get events -n kube-system --field-selector involvedObject.kind=DaemonSet");
    assert!(events.contains("SuccessfulCreate"), "{events}");
    // kind's node image ships the image: no pull.
    let pulled = t.ok("kubectl get events -n kube-system");
    assert!(
        pulled.contains(
            "Container image \"registry.k8s.io/kube-proxy:v1.35.0\" already present on machine"
        ),
        "{pulled}"
    );
}
