//! Tests of the page's read model.

use super::*;
use crate::cluster::ClusterConfig;
use crate::time::SECOND;

#[test]
fn the_view_shows_nodes_pods_and_the_seven_stages() {
    let mut w = World::new(ClusterConfig::default());
    let files = [("d.yaml".to_string(), "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 2\n  selector:\n    matchLabels: {app: web}\n  template:\n    metadata:\n      labels: {app: web}\n    spec:\n      containers:\n      - name: web\n        image: nginx:1.27\n".to_string())]
        .into_iter()
        .collect();
    let before = cluster_view(&w);
    assert_eq!(before.nodes.len(), 3);
    assert!(before
        .stages
        .iter()
        .all(|s| s.at.is_none() || s.number == 7));
    crate::cmd::run(&mut w, "kubectl apply -f d.yaml", &files, 10 * SECOND);
    w.run_for(20 * SECOND);
    let v = cluster_view(&w);
    // The add-ons (CoreDNS, the local-path provisioner) run in their own namespaces.
    let mine: Vec<&PodView> = v
        .nodes
        .iter()
        .flat_map(|n| &n.pods)
        .filter(|p| p.namespace == "default")
        .map(|p| &**p)
        .collect();
    assert_eq!(mine.len(), 2);
    assert!(v
        .nodes
        .iter()
        .flat_map(|n| &n.pods)
        .any(|p| p.namespace == "kube-system"));
    assert!(v
        .nodes
        .iter()
        .flat_map(|n| &n.pods)
        .all(|p| p.status == "Running" && p.ready));
    for s in &v.stages[..6] {
        assert!(s.at.is_some(), "stage {} happened: {s:?}", s.number);
    }
    let times: Vec<Time> = v.stages[..6].iter().map(|s| s.at.unwrap_or(0)).collect();
    assert!(
        times.windows(2).all(|w| w[0] <= w[1]),
        "stages in causal order: {times:?}"
    );
    assert!(v.components.iter().all(|c| c.running));
}

fn pod(status: &str, phase: &str, node: &str, ready: bool) -> PodView {
    PodView {
        owner: String::new(),
        namespace: "default".into(),
        name: "p".into(),
        status: status.into(),
        phase: phase.into(),
        ready,
        ip: String::new(),
        node: node.into(),
        containers: Vec::new(),
        terminating: false,
    }
}

#[test]
fn pods_are_classed_by_what_kubectl_shows() {
    let cases = [
        (pod("Pending", "Pending", "", false), PodClass::Unscheduled),
        (
            pod("ContainerCreating", "Pending", "node-1", false),
            PodClass::Creating,
        ),
        (pod("Running", "Running", "node-1", true), PodClass::Ready),
        (
            pod("Running", "Running", "node-1", false),
            PodClass::NotReady,
        ),
        (
            pod("CrashLoopBackOff", "Running", "node-1", false),
            PodClass::Failed,
        ),
        (
            pod("ErrImagePull", "Pending", "node-1", false),
            PodClass::Failed,
        ),
        (
            pod("Init:CrashLoopBackOff", "Pending", "node-1", false),
            PodClass::Failed,
        ),
        (
            pod("Completed", "Succeeded", "node-1", false),
            PodClass::Succeeded,
        ),
        (
            pod("Terminating", "Running", "node-1", true),
            PodClass::Terminating,
        ),
    ];
    for (p, want) in cases {
        assert_eq!(pod_class(&p), want, "{} {}", p.status, p.phase);
    }
    let mut restarting = pod("Running", "Running", "node-1", false);
    restarting.containers.push(ContainerView {
        name: "c".into(),
        state: "waiting",
        reason: "CrashLoopBackOff".into(),
        ready: false,
        restarts: 3,
    });
    assert_eq!(pod_class(&restarting), PodClass::Failed);
    let mut deleting = pod("Running", "Running", "node-1", true);
    deleting.terminating = true;
    assert_eq!(pod_class(&deleting), PodClass::Terminating);
}

#[test]
fn stages_keep_their_newest_known_time() {
    let stage = |n: u8, at: Option<Time>| Stage {
        number: n,
        title: "t",
        mnemonic: "m",
        at,
        detail: String::new(),
    };
    let mut seen = vec![stage(1, Some(10)), stage(2, Some(12)), stage(3, None)];
    latch_stages(
        &mut seen,
        vec![stage(1, None), stage(2, Some(50)), stage(3, Some(7))],
    );
    let times: Vec<Option<Time>> = seen.iter().map(|s| s.at).collect();
    assert_eq!(times, [Some(10), Some(50), Some(7)]);
}

const DEPLOY: &str = "apiVersion: apps/v1
kind: Deployment
metadata:
  name: nginx
spec:
  replica: 3
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
        imagee: x
";

#[test]
fn unknown_fields_are_placed_at_their_keys() {
    let stderr = "Error from server (BadRequest): error when creating \"d.yaml\": Deployment in version \"v1\" cannot be handled as a Deployment: strict decoding error: unknown field \"spec.replica\", unknown field \"spec.template.spec.containers[0].imagee\"\n";
    let got = locate_apply_errors(DEPLOY, "d.yaml", stderr);
    let at: Vec<(usize, usize)> = got.iter().map(|l| (l.line, l.column)).collect();
    assert_eq!(at, [(6, 3), (18, 9)]);
    assert_eq!(got[0].message, "unknown field \"spec.replica\"");
    assert!(
        locate_apply_errors(DEPLOY, "other.yaml", stderr).is_empty(),
        "errors about another file"
    );
}

#[test]
fn validation_causes_are_placed_at_their_fields() {
    let one = "The Deployment \"nginx\" is invalid: spec.template.spec.containers[0].image: Invalid value: \"nginx:1.27\": bad\n";
    let got = locate_apply_errors(DEPLOY, "d.yaml", one);
    assert_eq!((got[0].line, got[0].column), (17, 16));
    let many = "The Deployment \"nginx\" is invalid: \n* metadata.name: Invalid value: \"nginx\": x\n* spec.template.spec.containers[0].ports: Required value\n";
    let got = locate_apply_errors(DEPLOY, "d.yaml", many);
    assert_eq!(got.len(), 2);
    assert_eq!((got[0].line, got[0].column), (4, 9));
    assert_eq!(
        got[1].line, 16,
        "a missing field points at its parent: {got:?}"
    );
    let other = "The Deployment \"web\" is invalid: spec.replicas: Invalid value: -1: x\n";
    assert!(
        locate_apply_errors(DEPLOY, "d.yaml", other).is_empty(),
        "another object"
    );
}

#[test]
fn decode_errors_without_a_path_point_at_the_object() {
    let stderr = "Error from server (BadRequest): error when creating \"d.yaml\": Deployment in version \"v1\" cannot be handled as a Deployment: invalid type: string \"three\", expected i32\n";
    let got = locate_apply_errors(DEPLOY, "d.yaml", stderr);
    assert_eq!((got[0].line, got[0].column), (1, 1));
    assert_eq!(
        got[0].message,
        "invalid type: string \"three\", expected i32"
    );
    let go = "Error from server (BadRequest): error when creating \"d.yaml\": Deployment in version \"v1\" cannot be handled as a Deployment: json: cannot unmarshal string into Go struct field DeploymentSpec.spec.selector of type v1.LabelSelector\n";
    let got = locate_apply_errors(DEPLOY, "d.yaml", go);
    assert_eq!((got[0].line, got[0].column), (8, 5));
}

#[test]
fn hostile_stderr_never_panics() {
    for s in [
        "",
        "\"",
        " is invalid: ",
        "x\" is invalid: \n* ",
        "cannot be handled as a : : ",
        " cannot be handled as a Deployment: strict decoding error: unknown field \"\"",
        "a \"b\" is invalid: [: ]",
    ] {
        let _ = locate_apply_errors(DEPLOY, "d.yaml", s);
        let _ = locate_apply_errors("", "d.yaml", s);
        let _ = locate_apply_errors("{", "d.yaml", s);
    }
}

#[test]
fn flights_carry_their_send_and_arrival_times() {
    let mut w = World::new(ClusterConfig::default());
    w.run_for(1);
    let f = flights(&w);
    assert!(f.iter().all(|f| f.arrives > f.sent && f.from != f.to));
}

#[test]
fn scaling_lights_the_deployment_stage_again() {
    let mut w = World::new(ClusterConfig::default());
    let files = [("d.yaml".to_string(), "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 1\n  selector:\n    matchLabels: {app: web}\n  template:\n    metadata:\n      labels: {app: web}\n    spec:\n      containers:\n      - name: web\n        image: nginx:1.27\n".to_string())]
        .into_iter()
        .collect();
    crate::cmd::run(&mut w, "kubectl apply -f d.yaml", &files, 10 * SECOND);
    w.run_for(10 * SECOND);
    crate::cmd::run(
        &mut w,
        "kubectl scale deployment web --replicas=2",
        &files,
        10 * SECOND,
    );
    w.run_for(SECOND);
    let st = stages(&w);
    let scale = st[0].at.expect("kubectl scale");
    assert!(
        st[2].at.is_some_and(|t| t >= scale),
        "the Deployment controller scaled the ReplicaSet: {st:?}"
    );
    assert!(
        st[3].at.is_some_and(|t| t >= scale),
        "the ReplicaSet controller made a pod: {st:?}"
    );
}

#[test]
fn proxy_stage_needs_new_endpoints_not_a_periodic_resync() {
    let mut w = World::new(ClusterConfig::default());
    let files = [("d.yaml".to_string(), "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 1\n  selector:\n    matchLabels: {app: web}\n  template:\n    metadata:\n      labels: {app: web}\n    spec:\n      containers:\n      - name: web\n        image: nginx:1.27\n        ports:\n        - containerPort: 80\n".to_string())]
        .into_iter()
        .collect();
    crate::cmd::run(&mut w, "kubectl apply -f d.yaml", &files, 10 * SECOND);
    w.run_for(40 * SECOND);
    assert_eq!(
        stages(&w)[6].at,
        None,
        "no Service yet: kube-proxy's resyncs are not Proxy通"
    );
    crate::cmd::run(
        &mut w,
        "kubectl expose deployment web --port=80",
        &files,
        10 * SECOND,
    );
    w.run_for(5 * SECOND);
    let st = stages(&w);
    let expose = st[0].at.expect("kubectl expose");
    assert!(
        st[6].at.is_some_and(|t| t >= expose),
        "endpoints published and synced: {:?}",
        st[6]
    );
}

#[test]
fn the_cached_view_equals_a_fresh_one_as_pods_change() {
    let mut w = World::new(ClusterConfig::default());
    let files = [("d.yaml".to_string(), "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 4\n  selector:\n    matchLabels: {app: web}\n  template:\n    metadata:\n      labels: {app: web}\n    spec:\n      containers:\n      - name: web\n        image: nginx:1.27\n".to_string())]
        .into_iter()
        .collect();
    let mut cache = ViewCache::new();
    crate::cmd::run(&mut w, "kubectl apply -f d.yaml", &files, 10 * SECOND);
    // Every few hundred ms through the rollout, the scale-down and the deletions.
    for (i, cmd) in [
        "",
        "kubectl scale deployment web --replicas=1",
        "kubectl delete deployment web",
    ]
    .iter()
    .enumerate()
    {
        if !cmd.is_empty() {
            crate::cmd::run(&mut w, cmd, &files, 5 * SECOND);
        }
        for _ in 0..40 {
            w.run_for(250);
            let cached = cluster_view_cached(&w, &mut cache);
            assert_eq!(cached, cluster_view(&w), "phase {i} at t={}", w.now());
        }
    }
}

#[test]
fn flights_since_sees_each_new_message_once() {
    let mut w = World::new(ClusterConfig::default());
    let mut seq = 0;
    let mut seen = 0;
    for _ in 0..200 {
        w.step();
        let new = flights_since(&w, &mut seq);
        assert!(new.iter().all(|f| f.from != f.to && f.arrives > f.sent));
        seen += new.len();
        assert!(flights_since(&w, &mut seq).is_empty(), "nothing twice");
    }
    assert!(seen > 50, "the cluster booting sends messages: {seen}");
}

#[test]
fn a_powered_off_node_is_drawn_as_the_cluster_sees_it_then_tainted_with_an_eviction_time() {
    let mut w = World::new(ClusterConfig::default());
    let files = [("d.yaml".to_string(), "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 6\n  selector:\n    matchLabels: {app: web}\n  template:\n    metadata:\n      labels: {app: web}\n    spec:\n      containers:\n      - name: web\n        image: nginx:1.27\n".to_string())]
        .into_iter()
        .collect();
    crate::cmd::run(&mut w, "kubectl apply -f d.yaml", &files, 30 * SECOND);
    crate::cmd::run(&mut w, "sim poweroff node-2", &files, SECOND);
    let off = |v: &ClusterView| {
        v.nodes
            .iter()
            .find(|n| n.name == "node-2")
            .cloned()
            .unwrap()
    };
    let v = cluster_view(&w);
    let n = off(&v);
    assert!(!n.powered, "the simulator knows at once");
    assert_eq!(n.status, "Ready", "the cluster does not yet");
    assert!(n.taints.is_empty() && n.eviction_at.is_none());
    assert!(n
        .pods
        .iter()
        .filter(|p| p.namespace == "default")
        .all(|p| p.status == "Running"));
    w.run_for(60 * SECOND);
    let v = cluster_view(&w);
    let n = off(&v);
    assert_eq!(n.status, "Unknown", "{n:?}");
    assert_eq!(n.reason, "NodeStatusUnknown");
    let no_execute = n
        .taints
        .iter()
        .find(|t| t.text() == "node.kubernetes.io/unreachable:NoExecute")
        .expect("the unreachable NoExecute taint");
    let added = no_execute.added.expect("timeAdded");
    assert_eq!(
        n.eviction_at,
        Some(added + 300 * SECOND),
        "DefaultTolerationSeconds: 300 s"
    );
    assert!(n.eviction_at > Some(v.now));
    assert!(
        n.pods
            .iter()
            .filter(|p| p.namespace == "default")
            .all(|p| !p.ready),
        "the node lifecycle controller marked them not Ready: {:?}",
        n.pods
    );
}

#[test]
fn the_followed_pods_flow_lights_each_stage_when_it_happened_for_that_pod() {
    let mut w = World::new(ClusterConfig::default());
    let files = [("d.yaml".to_string(), "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 2\n  selector:\n    matchLabels: {app: web}\n  template:\n    metadata:\n      labels: {app: web}\n    spec:\n      containers:\n      - name: web\n        image: nginx:1.27\n".to_string())]
        .into_iter()
        .collect();
    assert_eq!(newest_user_pod(&w), None);
    w.run_for(3 * SECOND);
    crate::cmd::run(&mut w, "kubectl apply -f d.yaml", &files, 100);
    for _ in 0..40 {
        if newest_user_pod(&w).is_some() {
            break;
        }
        w.run_for(50);
    }
    w.run_for(100);
    let pod = newest_user_pod(&w).expect("a web pod within 2 s");
    let (ns, name) = pod.split_once('/').unwrap();
    assert!(name.starts_with("web-"));
    let early = pod_flow(&w, ns, name).expect("flow");
    assert!(
        early.stages[..5].iter().all(|s| s.at.is_some()),
        "{early:?}"
    );
    assert_eq!(early.stages[5].at, None, "containers not started yet");
    assert_eq!(early.ready_at, None, "not Ready: Pod活 stays dark");
    assert_eq!(early.deployment.as_deref(), Some("web"));
    w.run_for(30 * SECOND);
    let f = pod_flow(&w, ns, name).expect("flow");
    let times: Vec<Time> = f.stages[..6]
        .iter()
        .map(|s| s.at.expect("happened"))
        .collect();
    assert!(
        times.windows(2).all(|p| p[0] <= p[1]),
        "causal order: {times:?}"
    );
    assert!(f.ready_at >= f.stages[5].at && f.ready_at.is_some());
    assert!(f.stages[4]
        .detail
        .contains(&format!("/pods/{name}/binding")));
    assert_eq!(f.service, None);
    assert_eq!(f.stages[6].at, None, "no Service, no rules for it");
    assert_eq!(deployment_to_expose(&w, Some(&f)).as_deref(), Some("web"));
    crate::cmd::run(
        &mut w,
        "kubectl expose deployment web --port=80",
        &files,
        5 * SECOND,
    );
    w.run_for(5 * SECOND);
    let f = pod_flow(&w, ns, name).expect("flow");
    assert_eq!(f.service.as_deref(), Some("web"));
    assert!(
        f.stages[6].at.is_some(),
        "the Service's endpoints reached kube-proxy: {f:?}"
    );
}

#[test]
fn a_node_keeps_its_view_until_its_object_machine_or_pods_change() {
    let mut w = World::new(ClusterConfig::default());
    let mut cache = ViewCache::new();
    w.run_for(60 * SECOND);
    let before = cluster_view_cached(&w, &mut cache);
    w.run_for(100);
    let quiet = cluster_view_cached(&w, &mut cache);
    let shared = |a: &ClusterView, b: &ClusterView, i: usize| Arc::ptr_eq(&a.nodes[i], &b.nodes[i]);
    assert!(
        (0..3).all(|i| shared(&before, &quiet, i)),
        "nothing changed"
    );
    w.poweroff(1);
    let off = cluster_view_cached(&w, &mut cache);
    assert!(!off.nodes[1].powered && !shared(&quiet, &off, 1));
    assert!(shared(&quiet, &off, 0) && shared(&quiet, &off, 2));
    // Through NotReady, the taints and the eviction countdown, the cached view is the
    // one built from scratch.
    for _ in 0..120 {
        w.run_for(SECOND);
        assert_eq!(
            cluster_view_cached(&w, &mut cache),
            cluster_view(&w),
            "t={}",
            w.now()
        );
    }
    let seen = cluster_view(&w);
    assert_eq!(seen.nodes[1].status, "Unknown");
    assert!(seen.nodes[1]
        .taints
        .iter()
        .any(|t| t.key == "node.kubernetes.io/unreachable" && t.effect == "NoExecute"));
}

#[test]
fn the_pod_followed_by_default_is_the_newest_outside_the_system_namespaces() {
    // Namespaces sorting before, between and after the system ones (`kube-node-lease`,
    // `kube-public`, `kube-system`, `local-path-storage`), which are skipped.
    let mut w = World::new(ClusterConfig::default());
    let files = std::collections::BTreeMap::new();
    w.run_for(3 * SECOND);
    for ns in ["a", "kube-q", "m", "zz"] {
        crate::cmd::run(
            &mut w,
            &format!("kubectl create namespace {ns}"),
            &files,
            SECOND,
        );
    }
    let newest = |w: &mut World, ns: &str| {
        let line = format!("kubectl run p-{ns} --image=nginx:1.27 -n {ns}");
        crate::cmd::run(w, &line, &files, SECOND);
        w.run_for(SECOND);
        newest_user_pod(w)
    };
    assert_eq!(newest(&mut w, "m").as_deref(), Some("m/p-m"));
    assert_eq!(newest(&mut w, "a").as_deref(), Some("a/p-a"));
    assert_eq!(newest(&mut w, "zz").as_deref(), Some("zz/p-zz"));
    // A user's namespace named like a system one is skipped as the page always did.
    assert_eq!(newest(&mut w, "kube-q").as_deref(), Some("zz/p-zz"));
}
