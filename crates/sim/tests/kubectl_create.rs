//! `kubectl create TYPE` generators through the terminal, compared with kubectl v1.35's
//! `--dry-run=client -o yaml` output (no `creationTimestamp: null` since v1.34, the
//! empty `status` kept), `-- COMMAND`, and what is created on the server.

mod common;
use common::Term as T;

#[test]
fn create_deployment_takes_a_command_after_the_dash() {
    let mut t = T::new();
    assert_eq!(
        t.ok("kubectl create deployment hello-node --image=registry.k8s.io/e2e-test-images/agnhost:2.53 --port=8080 -- /agnhost netexec --http-port=8080"),
        "deployment.apps/hello-node created\n"
    );
    assert_eq!(
        t.ok(
            "kubectl get deploy hello-node -o jsonpath={.spec.template.spec.containers[0].command}"
        ),
        "[\"/agnhost\",\"netexec\",\"--http-port=8080\"]"
    );
    assert_eq!(
        t.ok("kubectl get deploy hello-node -o jsonpath={.spec.template.spec.containers[0].ports[0].containerPort}"),
        "8080"
    );
    assert_eq!(
        t.err("kubectl create deployment a b --image=nginx"),
        "error: exactly one NAME is required, got 2\nSee 'kubectl create deployment -h' for help and examples\n"
    );
    assert_eq!(
        t.err("kubectl create deployment a --image=nginx --image=redis -- sleep 1"),
        "error: cannot specify multiple --image options and command\n"
    );
}

#[test]
fn dry_run_client_yaml_is_kubectls_manifest() {
    let mut t = T::new();
    assert_eq!(
        t.ok("kubectl create deployment x --image=nginx --replicas=3 --dry-run=client -o yaml"),
        "apiVersion: apps/v1
kind: Deployment
metadata:
  labels:
    app: x
  name: x
spec:
  replicas: 3
  selector:
    matchLabels:
      app: x
  strategy: {}
  template:
    metadata:
      labels:
        app: x
    spec:
      containers:
      - image: nginx
        name: nginx
        resources: {}
status: {}
"
    );
    assert_eq!(
        t.ok("kubectl create namespace foo --dry-run=client -o yaml"),
        "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: foo\nspec: {}\nstatus: {}\n"
    );
    assert_eq!(
        t.ok("kubectl create service clusterip my --tcp=80:8080 --dry-run=client -o yaml"),
        "apiVersion: v1
kind: Service
metadata:
  labels:
    app: my
  name: my
spec:
  ports:
  - name: 80-8080
    port: 80
    protocol: TCP
    targetPort: 8080
  selector:
    app: my
  type: ClusterIP
status:
  loadBalancer: {}
"
    );
    assert_eq!(
        t.ok("kubectl create job pi --image=perl:5.34.0 --dry-run=client -o yaml -- perl -Mbignum=bpi -wle 'print bpi(2000)'"),
        "apiVersion: batch/v1
kind: Job
metadata:
  name: pi
spec:
  template:
    metadata: {}
    spec:
      containers:
      - command:
        - perl
        - -Mbignum=bpi
        - -wle
        - print bpi(2000)
        image: perl:5.34.0
        name: pi
        resources: {}
      restartPolicy: Never
status: {}
"
    );
    assert_eq!(
        t.ok("kubectl create configmap c --from-literal=a=b --dry-run=client -o yaml"),
        "apiVersion: v1\ndata:\n  a: b\nkind: ConfigMap\nmetadata:\n  name: c\n"
    );
    assert_eq!(
        t.ok("kubectl create deployment x --image=nginx --dry-run=client -o name"),
        "deployment.apps/x\n"
    );
    assert_eq!(
        t.run("kubectl get deploy").stderr,
        "No resources found in default namespace.\n"
    );
}

#[test]
fn create_cronjob_builds_the_job_template() {
    let mut t = T::new();
    assert_eq!(
        t.ok("kubectl create cronjob hello --image=busybox:1.28 --schedule='*/1 * * * *' --dry-run=client -o yaml -- date"),
        "apiVersion: batch/v1
kind: CronJob
metadata:
  name: hello
spec:
  jobTemplate:
    metadata:
      name: hello
    spec:
      template:
        metadata: {}
        spec:
          containers:
          - command:
            - date
            image: busybox:1.28
            name: hello
            resources: {}
          restartPolicy: OnFailure
  schedule: '*/1 * * * *'
status: {}
"
    );
    assert_eq!(
        t.ok("kubectl create cronjob hello --image=busybox:1.28 --schedule='*/1 * * * *' -- date"),
        "cronjob.batch/hello created\n"
    );
    assert!(t.ok("kubectl get cronjobs").contains("hello   */1 * * * *"));
    for (line, err) in [
        (
            "kubectl create cronjob c",
            "error: required flag(s) \"image\", \"schedule\" not set\n",
        ),
        (
            "kubectl create cronjob c --image=busybox",
            "error: required flag(s) \"schedule\" not set\n",
        ),
        (
            "kubectl create cronjob c --image=busybox --schedule='* * * * *' --restart=Always",
            "error: invalid restart policy: Always\n",
        ),
    ] {
        assert_eq!(t.err(line), err, "{line}");
    }
}

#[test]
fn create_quota_and_pdb() {
    let mut t = T::new();
    assert_eq!(
        t.ok("kubectl create quota q --hard=cpu=1,memory=1024Mi,pods=2 --dry-run=client -o yaml"),
        "apiVersion: v1\nkind: ResourceQuota\nmetadata:\n  name: q\nspec:\n  hard:\n    cpu: \"1\"\n    memory: 1Gi\n    pods: \"2\"\nstatus: {}\n"
    );
    assert_eq!(
        t.ok("kubectl create quota q --hard=cpu=1,pods=2"),
        "resourcequota/q created\n"
    );
    assert_eq!(
        t.err("kubectl create quota r --hard=cpu"),
        "error: Invalid argument syntax cpu, expected <resource>=<value>\n"
    );
    assert_eq!(
        t.ok("kubectl create pdb p --selector=app=x --min-available=1 --dry-run=client -o yaml"),
        "apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: p
spec:
  minAvailable: 1
  selector:
    matchLabels:
      app: x
status:
  currentHealthy: 0
  desiredHealthy: 0
  disruptionsAllowed: 0
  expectedPods: 0
"
    );
    assert_eq!(
        t.ok("kubectl create pdb p --selector=app=x --max-unavailable=50%"),
        "poddisruptionbudget.policy/p created\n"
    );
    assert_eq!(
        t.err("kubectl create pdb p2 --selector=app=x"),
        "error: one of min-available or max-unavailable must be specified\n"
    );
}

#[test]
fn server_dry_run_is_validated_but_not_stored() {
    let mut t = T::new();
    let y = t.ok("kubectl create deployment x --image=nginx --dry-run=server -o yaml");
    // The server's defaults are there, as in a real create.
    assert!(y.contains("  progressDeadlineSeconds: 600\n"), "{y}");
    assert!(y.contains("  creationTimestamp: "), "{y}");
    assert_eq!(
        t.run("kubectl get deploy").stderr,
        "No resources found in default namespace.\n"
    );
    let e = t.err("kubectl create deployment Bad --image=nginx --dry-run=server");
    assert!(e.starts_with("The Deployment \"Bad\" is invalid"), "{e}");
}

#[test]
fn configmap_from_a_directory_keys_each_file() {
    // The docs' "Create ConfigMaps from directories" (configure-pod-configmap).
    let mut t = T::new();
    t.file(
        "configure-pod-container/configmap/game.properties",
        "enemies=aliens\nlives=3\n",
    );
    t.file(
        "configure-pod-container/configmap/ui.properties",
        "color.good=purple\n",
    );
    assert_eq!(
        t.ok("kubectl create configmap game-config --from-file=configure-pod-container/configmap/"),
        "configmap/game-config created\n"
    );
    assert_eq!(
        t.ok("kubectl get configmap game-config -o jsonpath={.data}"),
        "{\"game.properties\":\"enemies=aliens\\nlives=3\\n\",\"ui.properties\":\"color.good=purple\\n\"}"
    );
    assert_eq!(
        t.err("kubectl create configmap x --from-file=nothing/"),
        "error: error reading nothing/: no such file or directory\n"
    );
}

#[test]
fn configmap_from_an_env_file() {
    let mut t = T::new();
    t.file(
        "game-env-file.properties",
        "enemies=aliens\nlives=3\n# a comment\n\nallowed=\"true\"\n",
    );
    t.ok("kubectl create configmap game-config-env-file --from-env-file=game-env-file.properties");
    assert_eq!(
        t.ok("kubectl get configmap game-config-env-file -o jsonpath={.data}"),
        "{\"allowed\":\"\\\"true\\\"\",\"enemies\":\"aliens\",\"lives\":\"3\"}"
    );
}
