//! The machinery a real cluster keeps around the workload controllers covers them:
//! the controllers' bootstrap RBAC roles, `kubectl get all`, the garbage collector,
//! namespace deletion, and the page's read model (pods on nodes, the flow view).

mod common;

use common::Term;

const WORKLOADS: &str = "apiVersion: apps/v1
kind: StatefulSet
metadata: {name: web, namespace: shop}
spec:
  serviceName: web
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - {name: nginx, image: nginx:1.27}
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent, namespace: shop}
spec:
  selector: {matchLabels: {app: agent}}
  template:
    metadata: {labels: {app: agent}}
    spec:
      containers:
      - {name: agent, image: busybox:1.37, command: [sleep, \"3600\"]}
---
apiVersion: batch/v1
kind: Job
metadata: {name: once, namespace: shop}
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - {name: main, image: busybox:1.37, command: [sleep, \"3600\"]}
---
apiVersion: batch/v1
kind: CronJob
metadata: {name: tick, namespace: shop}
spec:
  schedule: \"* * * * *\"
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: Never
          containers:
          - {name: main, image: busybox:1.37, command: [sleep, \"3600\"]}
---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: web, namespace: shop}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: StatefulSet, name: web}
  maxReplicas: 3
";

fn shop() -> Term {
    let mut t = Term::new();
    t.ok("kubectl create namespace shop");
    t.file("w.yaml", WORKLOADS);
    t.ok("kubectl apply -f w.yaml");
    t.settle(90);
    t
}

#[test]
fn each_workload_controller_has_its_bootstrap_role_and_binding() {
    let mut t = Term::new();
    for name in [
        "job-controller",
        "cronjob-controller",
        "daemon-set-controller",
        "statefulset-controller",
        "horizontal-pod-autoscaler",
        "ttl-after-finished-controller",
    ] {
        let role = format!("system:controller:{name}");
        let out = t.ok(&format!("kubectl get clusterrolebinding {role} -o jsonpath={{.roleRef.name}}:{{.subjects[0].name}}"));
        assert_eq!(out, format!("{role}:{name}"));
        let labels = t.ok(&format!(
            "kubectl get clusterrole {role} -o jsonpath={{.metadata.labels}}"
        ));
        assert_eq!(
            labels,
            "{\"kubernetes.io/bootstrapping\":\"rbac-defaults\"}"
        );
    }
    let can = |t: &mut Term, verb: &str, res: &str, sa: &str| {
        t.run(&format!(
            "kubectl auth can-i {verb} {res} --as=system:serviceaccount:kube-system:{sa}"
        ))
        .stdout
    };
    assert_eq!(can(&mut t, "create", "pods", "job-controller"), "yes\n");
    assert_eq!(
        can(
            &mut t,
            "update",
            "jobs.batch --subresource=status",
            "job-controller"
        ),
        "yes\n"
    );
    assert_eq!(
        can(&mut t, "delete", "statefulsets.apps", "job-controller"),
        "no\n"
    );
    assert_eq!(
        can(
            &mut t,
            "create",
            "controllerrevisions.apps",
            "daemon-set-controller"
        ),
        "yes\n"
    );
    assert_eq!(
        can(
            &mut t,
            "create",
            "persistentvolumeclaims",
            "statefulset-controller"
        ),
        "yes\n"
    );
    assert_eq!(
        can(
            &mut t,
            "update",
            "deployments.apps --subresource=scale",
            "horizontal-pod-autoscaler"
        ),
        "yes\n"
    );
    assert_eq!(
        can(
            &mut t,
            "update",
            "deployments.apps",
            "horizontal-pod-autoscaler"
        ),
        "no\n"
    );
    assert_eq!(
        can(&mut t, "create", "jobs.batch", "cronjob-controller"),
        "yes\n"
    );
}

#[test]
fn get_all_lists_every_workload_kind() {
    let mut t = shop();
    let all = t.ok("kubectl get all -n shop");
    for kind in [
        "pod/web-0",
        "daemonset.apps/agent",
        "statefulset.apps/web",
        "horizontalpodautoscaler.autoscaling/web",
        "cronjob.batch/tick",
        "job.batch/once",
    ] {
        assert!(all.contains(kind), "{kind} in\n{all}");
    }
}

#[test]
fn the_garbage_collector_and_namespace_deletion_take_the_workloads_pods() {
    let mut t = shop();
    let pods = |t: &mut Term| {
        t.run("kubectl get pods -n shop --no-headers")
            .stdout
            .lines()
            .count()
    };
    // web-0, one agent per node, the Job's pod, the CronJob's job pods.
    assert!(pods(&mut t) >= 6, "{}", t.ok("kubectl get pods -n shop"));
    t.ok("kubectl delete ds agent -n shop");
    t.ok("kubectl delete job once -n shop");
    t.settle(40);
    let left = t.ok("kubectl get pods -n shop");
    assert!(
        !left.contains("agent-") && !left.contains("once-"),
        "{left}"
    );
    assert!(left.contains("web-0"), "{left}");
    t.ok("kubectl delete namespace shop");
    t.settle(90);
    let o = t.run("kubectl get all -n shop");
    assert_eq!(o.stderr, "No resources found in shop namespace.\n", "{o:?}");
    assert_eq!(
        t.run("kubectl get controllerrevisions -n shop").stderr,
        "No resources found in shop namespace.\n"
    );
}

#[test]
fn the_read_model_draws_their_pods_on_their_nodes_and_follows_them() {
    let mut t = shop();
    let v = kubeloop_sim::view::cluster_view(&t.w);
    let shop_pods: Vec<&kubeloop_sim::view::PodView> = v
        .nodes
        .iter()
        .flat_map(|n| &n.pods)
        .filter(|p| p.namespace == "shop")
        .map(|p| &**p)
        .collect();
    for prefix in ["web-0", "agent-", "once-", "tick-"] {
        assert!(
            shop_pods.iter().any(|p| p.name.starts_with(prefix)),
            "{prefix}: {shop_pods:?}"
        );
    }
    // Each pod is drawn with its controller, as `kubectl describe` says "Controlled By".
    let owner_of = |prefix: &str| {
        shop_pods
            .iter()
            .find(|p| p.name.starts_with(prefix))
            .map(|p| p.owner.clone())
    };
    assert_eq!(owner_of("web-0").as_deref(), Some("StatefulSet/web"));
    assert_eq!(owner_of("agent-").as_deref(), Some("DaemonSet/agent"));
    assert!(
        owner_of("once-").is_some_and(|o| o == "Job/once"),
        "{:?}",
        owner_of("once-")
    );
    assert!(
        owner_of("tick-").is_some_and(|o| o.starts_with("Job/tick-")),
        "{:?}",
        owner_of("tick-")
    );
    let agents = shop_pods
        .iter()
        .filter(|p| p.name.starts_with("agent-"))
        .count();
    assert_eq!(agents, v.nodes.len(), "one daemon pod per node");
    let f = kubeloop_sim::view::pod_flow(&t.w, "shop", "web-0").expect("a flow for web-0");
    // The StatefulSet controller's create (stage 4), the binding (5), the kubelet (6).
    for s in &f.stages[3..6] {
        assert!(s.at.is_some(), "stage {} for web-0: {s:?}", s.number);
    }
    assert_eq!(f.deployment, None);
    let owner = t.ok("kubectl get pod web-0 -n shop -o jsonpath={.metadata.ownerReferences[0].kind}/{.metadata.ownerReferences[0].name}");
    assert_eq!(owner, "StatefulSet/web");
}
