//! `kubectl api-resources`, `api-versions` and `cluster-info` through the terminal: every
//! kind the simulated apiserver serves, in upstream's table and order.

mod common;
use common::Term as T;

#[test]
fn api_resources_lists_every_served_kind_as_kubectl_does() {
    let mut t = T::new();
    let out = t.ok("kubectl api-resources");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines[0],
        "NAME                        SHORTNAMES   APIVERSION                     NAMESPACED   KIND"
    );
    assert_eq!(
        lines[1],
        "configmaps                  cm           v1                             true         ConfigMap"
    );
    for row in [
        "pods                        po           v1                             true         Pod",
        "deployments                 deploy       apps/v1                        true         Deployment",
        "horizontalpodautoscalers    hpa          autoscaling/v2                 true         HorizontalPodAutoscaler",
        "storageclasses              sc           storage.k8s.io/v1              false        StorageClass",
    ] {
        assert!(lines.contains(&row), "{row}\n{out}");
    }
    // One row per served kind, core group first, then groups and names in order.
    assert_eq!(lines.len() - 1, kubeloop_sim::object::Kind::ALL.len());
    let apps = lines
        .iter()
        .position(|l| l.starts_with("controllerrevisions"))
        .unwrap();
    let core_last = lines
        .iter()
        .position(|l| l.starts_with("services "))
        .unwrap();
    assert!(core_last < apps);
    assert_eq!(
        t.ok("kubectl api-resources --namespaced=false -o name")
            .lines()
            .take(3)
            .collect::<Vec<_>>(),
        ["namespaces", "nodes", "persistentvolumes"]
    );
    assert_eq!(
        t.ok("kubectl api-resources --api-group=apps --no-headers -o wide").lines().next().unwrap(),
        "controllerrevisions            apps/v1   true   ControllerRevision   [create delete deletecollection get list patch update watch]   "
    );
}

#[test]
fn api_versions_and_cluster_info() {
    let mut t = T::new();
    let v = t.ok("kubectl api-versions");
    assert!(
        v.starts_with(
            "apiextensions.k8s.io/v1\napps/v1\nauthorization.k8s.io/v1\nautoscaling/v1\nautoscaling/v2\nbatch/v1\n"
        ),
        "{v}"
    );
    assert!(v.ends_with("storage.k8s.io/v1\nv1\n"), "{v}");
    assert_eq!(
        t.ok("kubectl cluster-info"),
        "Kubernetes control plane is running at https://172.18.0.2:6443\nCoreDNS is running at https://172.18.0.2:6443/api/v1/namespaces/kube-system/services/kube-dns:dns/proxy\n\nTo further debug and diagnose cluster problems, use 'kubectl cluster-info dump'.\n"
    );
    t.ok("sim stop kube-apiserver");
    let refused = "The connection to the server 172.18.0.2:6443 was refused - did you specify the right host or port?\n";
    assert_eq!(t.err("kubectl cluster-info"), refused);
    assert_eq!(t.err("kubectl api-resources"), refused);
    assert_eq!(t.err("kubectl api-versions"), refused);
}

#[test]
fn unknown_and_unavailable_commands_say_so_and_change_nothing() {
    let mut t = T::new();
    assert_eq!(
        t.err("kubectl foo"),
        "error: unknown command \"foo\" for \"kubectl\"\nRun 'kubectl --help' for usage.\n"
    );
    assert_eq!(
        t.err("kubectl attach web"),
        "error: \"kubectl attach\" is not available in kubeloop yet\n"
    );
    assert_eq!(
        t.err("kubectl debug web"),
        "error: \"kubectl debug\" is not available in kubeloop yet\n"
    );
    assert_eq!(
        t.err("kubectl get pods --foo"),
        "error: unknown flag: --foo\nSee 'kubectl get --help' for usage.\n"
    );
    assert_eq!(
        t.run("kubectl get pods").stderr,
        "No resources found in default namespace.\n"
    );
}

#[test]
fn version_prints_client_and_server() {
    let mut t = T::new();
    assert_eq!(
        t.ok("kubectl version"),
        "Client Version: v1.35.0\nKustomize Version: v5.7.1\nServer Version: v1.35.0\n"
    );
    assert_eq!(
        t.err("kubectl version -o xml"),
        "error: --output must be 'yaml' or 'json'\n"
    );
    assert!(t
        .err("kubectl version -o json")
        .contains("not available in kubeloop"));
}

#[test]
fn cluster_info_dump_prints_the_lists_then_every_containers_log() {
    let mut t = T::new();
    t.ok("kubectl run hello --image=busybox:1.36 -- sh -c 'echo hi from hello; sleep 3600'");
    t.w.run_for(30 * kubeloop_sim::time::SECOND);
    let dump = t.ok("kubectl cluster-info dump");
    // Lists in upstream's order: nodes, then per namespace (kube-system, then default).
    let kinds: Vec<&str> = dump
        .lines()
        .filter_map(|l| l.strip_prefix("    \"kind\": \""))
        .filter(|k| k.ends_with("List\","))
        .collect();
    let per_ns = [
        "EventList\",",
        "ReplicationControllerList\",",
        "ServiceList\",",
        "DaemonSetList\",",
        "DeploymentList\",",
        "ReplicaSetList\",",
        "PodList\",",
    ];
    let mut want = vec!["NodeList\","];
    want.extend(per_ns);
    want.extend(per_ns);
    assert_eq!(kinds, want);
    assert!(
        dump.starts_with("{\n    \"apiVersion\": \"v1\",\n    \"items\": ["),
        "{}",
        &dump[..200]
    );
    assert!(
        dump.contains("==== START logs for container hello of pod default/hello ====\nhi from hello\n==== END logs for container hello of pod default/hello ====\n"),
        "{}",
        &dump[dump.len().saturating_sub(600)..]
    );
    assert!(dump.contains("==== START logs for container coredns of pod kube-system/coredns-"));
    // Only the namespaces asked for.
    let only = t.ok("kubectl cluster-info dump --namespaces=default");
    assert!(!only.contains("of pod kube-system/"));
    assert!(only.contains("of pod default/hello"));
}
