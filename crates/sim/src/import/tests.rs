use super::*;
use crate::cmd;

const LIST: &str = include_str!("testdata/cluster-list.yaml");

fn imported() -> ImportResult {
    from_cluster(LIST).expect("the list reads")
}

#[test]
fn nodes_match_the_cluster() {
    let sc = imported().scenario;
    let names: Vec<String> = sc.nodes().into_iter().map(|n| n.name).collect();
    assert_eq!(names, ["kind-control-plane", "kind-worker", "kind-worker2"]);
    let nodes = sc.nodes();
    assert_eq!(nodes[0].capacity["cpu"], "8");
    assert_eq!(nodes[0].capacity["memory"], "32817388Ki");
    assert_eq!(nodes[0].taints.len(), 1);
    assert_eq!(
        nodes[0].taints[0].key,
        "node-role.kubernetes.io/control-plane"
    );
    assert_eq!(nodes[1].capacity["memory"], "8004236Ki");
    assert_eq!(
        nodes[1].allocatable["memory"], "7901836Ki",
        "allocatable apart from capacity"
    );
    assert_eq!(nodes[1].allocatable["cpu"], "4");
    assert_eq!(nodes[1].labels["topology.kubernetes.io/zone"], "zone-a");
    assert_eq!(nodes[1].images[0].size_bytes, 72099501);
    assert_eq!(nodes[2].capacity["pods"], "20");
    assert_eq!(nodes[2].labels["disktype"], "ssd");
    let taints: Vec<String> = nodes[2]
        .taints
        .iter()
        .map(|t| format!("{}={}:{}", t.key, t.value, t.effect.as_str()))
        .collect();
    assert_eq!(
        taints,
        ["dedicated=db:NoSchedule"],
        "the disk-pressure taint is the node's condition"
    );
}

#[test]
fn skipped_notices_and_errors_say_what_was_not_imported() {
    let r = imported();
    assert_eq!(
        r.skipped,
        [
            "EndpointSlice default/web-abcde (discovery.k8s.io/v1)",
            "Widget default/w-1 (example.com/v1)",
        ]
    );
    assert_eq!(
        r.errors,
        ["Deployment default/broken: The Deployment \"broken\" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0"]
    );
    let has = |s: &str| r.notices.iter().any(|n| n.contains(s));
    assert!(has("Secret default/db-credentials: data dropped (the keys password, username are kept with empty values)"), "{:#?}", r.notices);
    assert!(has(
        "Service default/legacy: clusterIP 34.118.230.17 is outside"
    ));
    assert!(has("4 object(s) owned by a controller in the list"));
    assert!(has(
        "1 object(s) owned by DaemonSet kube-proxy, which the list does not include"
    ));
    assert!(has("static pod(s) of Node kind-control-plane"));
    assert!(has("already has these, so they are not applied again: PriorityClass system-node-critical, StorageClass standard, Service default/kubernetes"));
    assert!(has(
        "taint node.kubernetes.io/disk-pressure:NoSchedule left out"
    ));
}

#[test]
fn files_recreate_the_workloads_without_what_the_cluster_wrote() {
    let sc = imported().scenario;
    let files: Vec<&str> = sc.spec.files.keys().map(String::as_str).collect();
    assert_eq!(
        files,
        ["cluster.yaml", "config.yaml", "pods.yaml", "workloads.yaml"]
    );
    let runs: Vec<&str> = sc.spec.steps.iter().map(|s| s.run.as_str()).collect();
    assert_eq!(
        &runs[..4],
        [
            "kubectl apply -f cluster.yaml",
            "kubectl apply -f config.yaml",
            "kubectl apply -f pods.yaml",
            "kubectl apply -f workloads.yaml",
        ]
    );
    let all: String = sc.spec.files.values().cloned().collect();
    for gone in [
        "status:",
        "uid:",
        "resourceVersion",
        "managedFields",
        "creationTimestamp",
        "ownerReferences",
        "last-applied-configuration",
        "kube-api-access",
        "deployment.kubernetes.io/revision",
        "c2VjcmV0",
        "YWRtaW4",
        "web-7c5ddbdf54",
        "etcd-kind-control-plane",
        "kube-proxy-5k2lq",
        "broken",
        "null",
    ] {
        assert!(!all.contains(gone), "{gone:?} is in the files:\n{all}");
    }
    let pods = &sc.spec.files["pods.yaml"];
    assert!(pods.contains("name: db-debug\n") && pods.contains("nodeName: kind-worker2\n"));
    assert!(sc.spec.files["cluster.yaml"]
        .starts_with("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: shop\n"));
    assert!(sc.spec.files["workloads.yaml"].contains("kind: Deployment\n"));
    assert!(!sc.spec.files["workloads.yaml"].contains("kind: ReplicaSet"));
    assert!(
        sc.spec.files["config.yaml"].contains("clusterIP: 10.96.12.34\n"),
        "in-range cluster IPs are kept"
    );
}

#[test]
fn imported_scenario_reads_back_through_the_scenario_parser() {
    let sc = imported().scenario;
    let back = crate::scenario::parse_scenario(&sc.to_yaml()).expect("parses");
    assert_eq!(back, sc);
}

fn run_in(world: &mut crate::World, line: &str) -> String {
    let o = cmd::run(world, line, &Default::default(), 30_000);
    assert_eq!(o.exit_code, 0, "{line}: {}", o.stderr);
    o.stdout
}

#[test]
fn imported_scenario_runs_with_the_bound_pod_on_its_node() {
    let sc = imported().scenario;
    let (mut world, results) = crate::runner::run(&sc, None);
    for r in &results[..4] {
        assert_eq!(r.exit_code, 0, "{}: {}", r.command, r.stderr);
    }
    let bare = run_in(
        &mut world,
        "kubectl get pod db-debug -o jsonpath={.spec.nodeName}/{.status.phase}",
    );
    assert_eq!(bare, "kind-worker2/Running");
    // The Deployment's pods are scheduled again: the only untainted node is kind-worker.
    let web = run_in(&mut world, "kubectl get pods -l app=web -o 'jsonpath={range .items[*]}{.spec.nodeName}/{.status.phase} {end}'");
    assert_eq!(web.trim(), "kind-worker/Running kind-worker/Running");
    // The StatefulSet tolerates kind-worker2's taint and selects its label; its claim is provisioned.
    let db = run_in(
        &mut world,
        "kubectl get pod db-0 -o jsonpath={.spec.nodeName}/{.status.phase}",
    );
    assert_eq!(db, "kind-worker2/Running");
    let report = run_in(
        &mut world,
        "kubectl get pod report -n shop -o jsonpath={.spec.priority}/{.status.phase}",
    );
    assert_eq!(report, "1000/Running");
    // The claim binds again to the volume it had, which stays on its node.
    let pvc = run_in(
        &mut world,
        "kubectl get pvc data -o jsonpath={.status.phase}/{.spec.volumeName}",
    );
    assert_eq!(pvc, "Bound/pvc-5d1e0c7a-3f0e-4c1b-9d7e-2b8f6c4a1e11");
    let nodes = run_in(&mut world, "kubectl get nodes -o name");
    assert_eq!(
        nodes,
        "node/kind-control-plane\nnode/kind-worker\nnode/kind-worker2\n"
    );
}

#[test]
fn import_is_deterministic() {
    assert_eq!(imported(), imported());
}

#[test]
fn input_that_is_not_a_list_of_objects_is_a_located_error() {
    let e = from_cluster("apiVersion: v1\nitems: [\n").unwrap_err();
    assert!(e.line >= 2, "{e}");
    assert!(e
        .to_string()
        .starts_with(&format!("{}:{}: ", e.line, e.column)));
    let e = from_cluster("- 1\n- 2\n").unwrap_err();
    assert_eq!(
        e.to_string(),
        "expected a List of objects (kubectl get … -o yaml)"
    );
    let e = from_cluster("kind: List\nitems: 3\n").unwrap_err();
    assert_eq!(e.message, "items: must be a list of objects");
}

#[test]
fn odd_items_are_reported_not_panicked_on() {
    let r = from_cluster(
        "kind: List\nitems:\n- 1\n- {kind: Pod}\n- {kind: Node, metadata: {name: UPPER}}\n- {kind: Node}\n- {kind: Node, metadata: {name: n1}, spec: {taints: [{key: k, effect: Sometimes}]}}\n",
    )
    .expect("a list");
    assert_eq!(r.skipped, ["<no kind> <no name> (?)"]);
    assert!(
        r.errors
            .iter()
            .any(|e| e.starts_with("Node UPPER: ") && e.contains("Invalid value: \"UPPER\"")),
        "{:#?}",
        r.errors
    );
    assert!(r
        .errors
        .contains(&"a Node without metadata.name".to_string()));
    assert!(r
        .errors
        .contains(&"Node n1: taint k has effect Some(\"Sometimes\")".to_string()));
    assert!(
        r.errors.iter().any(|e| e.starts_with("Pod <no name>: ")),
        "{:#?}",
        r.errors
    );
    assert!(r.scenario.spec.nodes.is_empty());
    assert!(r.notices.iter().any(|n| n.contains("three default nodes")));
    let r = from_cluster("kind: Pod\nmetadata: {name: lost}\nspec: {nodeName: gone, containers: [{name: c, image: busybox}]}\n").unwrap();
    assert_eq!(
        r.notices[1],
        "Pod lost is bound to node gone, which is not among the imported nodes: it stays Pending"
    );
    assert!(crate::scenario::parse_scenario(&r.scenario.to_yaml()).is_ok());
}

#[test]
fn json_output_imports_as_the_yaml_does() {
    // `kubectl get … -o json` is YAML too.
    let v: serde_json::Value = serde_yaml::from_str(LIST).unwrap();
    let json = serde_json::to_string_pretty(&v).unwrap();
    assert_eq!(from_cluster(&json).unwrap(), imported());
}
