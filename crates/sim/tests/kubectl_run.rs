//! `kubectl run` through the terminal: the Pod it generates (compared with kubectl
//! v1.35's `--dry-run=client -o yaml|json`), `-i --rm` printing the command's output then
//! deleting the pod, exit codes, and kubectl's errors for bad flags.

mod common;
use common::Term as T;

#[test]
fn run_creates_a_pod_labelled_run_name() {
    let mut t = T::new();
    assert_eq!(
        t.ok("kubectl run nginx --image=nginx"),
        "pod/nginx created\n"
    );
    assert_eq!(
        t.ok("kubectl get pod nginx -o jsonpath={.metadata.labels}"),
        "{\"run\":\"nginx\"}"
    );
    assert_eq!(
        t.ok("kubectl get pod nginx -o jsonpath={.spec.containers[0].name}:{.spec.restartPolicy}"),
        "nginx:Always"
    );
    t.settle(30);
    let pods = t.ok("kubectl get pods");
    assert!(pods.contains("nginx   1/1     Running"), "{pods}");
    let e = t.err("kubectl run nginx --image=nginx");
    assert_eq!(
        e,
        "Error from server (AlreadyExists): pods \"nginx\" already exists\n"
    );
}

#[test]
fn dry_run_client_prints_the_generated_pod_as_kubectl_does() {
    let mut t = T::new();
    let yaml = t.ok("kubectl run x --image=busybox:1.28 --restart=Never --env=A=b --port=80 --labels=app=x,tier=web --dry-run=client -o yaml -- sh -c 'echo hi'");
    assert_eq!(
        yaml,
        "apiVersion: v1
kind: Pod
metadata:
  labels:
    app: x
    tier: web
  name: x
spec:
  containers:
  - args:
    - sh
    - -c
    - echo hi
    env:
    - name: A
      value: b
    image: busybox:1.28
    name: x
    ports:
    - containerPort: 80
    resources: {}
  dnsPolicy: ClusterFirst
  restartPolicy: Never
status: {}
"
    );
    // Typed objects marshal to JSON in struct field order.
    let json =
        t.ok("kubectl run x --image=busybox --dry-run=client -o json --command -- sleep 3600");
    assert_eq!(
        json,
        r#"{
    "kind": "Pod",
    "apiVersion": "v1",
    "metadata": {
        "name": "x",
        "labels": {
            "run": "x"
        }
    },
    "spec": {
        "containers": [
            {
                "name": "x",
                "image": "busybox",
                "command": [
                    "sleep",
                    "3600"
                ],
                "resources": {}
            }
        ],
        "restartPolicy": "Always",
        "dnsPolicy": "ClusterFirst"
    },
    "status": {}
}
"#
    );
    assert_eq!(
        t.ok("kubectl run x --image=nginx --dry-run=client"),
        "pod/x created (dry run)\n"
    );
    assert_eq!(
        t.ok("kubectl run x --image=nginx --dry-run=server"),
        "pod/x created (server dry run)\n"
    );
    // Neither dry run stored anything.
    assert_eq!(
        t.err("kubectl get pod x"),
        "Error from server (NotFound): pods \"x\" not found\n"
    );
    // With -n the namespace is part of the generated object.
    let y = t.ok("kubectl run x --image=nginx -n kube-system --dry-run=client -o yaml");
    assert!(y.contains("  name: x\n  namespace: kube-system\n"), "{y}");
}

#[test]
fn run_i_rm_prints_the_output_then_deletes_the_pod() {
    let mut t = T::new();
    let o = t.run("kubectl run -i --rm --restart=Never bb --image=busybox:1.28 -- sh -c 'echo hello; echo world'");
    assert_eq!(o.exit_code, 0, "{o:?}");
    assert_eq!(
        o.stdout,
        "hello\nworld\npod \"bb\" deleted from default namespace\n"
    );
    assert_eq!(o.stderr, "");
    assert_eq!(
        t.run("kubectl get pods").stderr,
        "No resources found in default namespace.\n"
    );
    // The container's exit code is kubectl's, after the deletion.
    let o =
        t.run("kubectl run -i --rm --restart=Never fail --image=busybox:1.28 -- sh -c 'exit 3'");
    assert_eq!(o.exit_code, 3, "{o:?}");
    assert_eq!(o.stdout, "pod \"fail\" deleted from default namespace\n");
    assert_eq!(o.stderr, "pod default/fail terminated (Error)\n");
    // -i without --rm keeps the pod and prints no "created" line.
    let o = t.run("kubectl run -i --restart=Never keep --image=busybox:1.28 -- echo kept");
    assert_eq!((o.exit_code, o.stdout.as_str()), (0, "kept\n"));
    assert!(t.ok("kubectl get pods").contains("keep "));
}

#[test]
fn bad_run_flags_fail_as_kubectl_does_and_create_nothing() {
    let mut t = T::new();
    for (line, err) in [
        ("kubectl run", "error: required flag(s) \"image\" not set\n"),
        ("kubectl run --image=nginx", "error: NAME is required for run\n"),
        ("kubectl run x --image=Nginx", "error: Invalid image name \"Nginx\": invalid reference format\n"),
        ("kubectl run x --image=nginx --rm", "error: --rm should only be used for attached containers\n"),
        ("kubectl run x --image=nginx --restart=Sometimes", "error: invalid restart policy: Sometimes\n"),
        ("kubectl run x --image=nginx -t", "error: -i/--stdin is required for containers with -t/--tty=true\n"),
        ("kubectl run x --image=nginx --env=1A=b", "error: invalid env: 1A=b\n"),
        ("kubectl run x --image=nginx --image-pull-policy=Sometimes", "error: invalid image pull policy: Sometimes\n"),
        ("kubectl run x --image=nginx -i --dry-run=client", "error: --dry-run=[server|client] can't be used with attached containers options (--attach, --stdin, or --tty)\n"),
        ("kubectl run x --image=nginx --dry-run=maybe", "error: Invalid dry-run value (maybe). Must be \"none\", \"server\", or \"client\".\n"),
        ("kubectl run x --image=nginx -i --pod-running-timeout=soon", "error: invalid argument \"soon\" for \"--pod-running-timeout\" flag: time: invalid duration \"soon\"\n"),
        ("kubectl run x --image=nginx --expose-everything", "error: unknown flag: --expose-everything\nSee 'kubectl run --help' for usage.\n"),
    ] {
        assert_eq!(t.err(line), err, "{line}");
    }
    assert_eq!(
        t.run("kubectl get pods").stderr,
        "No resources found in default namespace.\n"
    );
}

#[test]
fn run_i_gives_up_after_the_pod_running_timeout() {
    let mut t = T::new();
    // Without a scheduler the pod stays Pending.
    t.ok("sim stop kube-scheduler");
    let before = t.w.now();
    let o = t.run("kubectl run -i --rm --restart=Never stuck --image=busybox --pod-running-timeout=20s -- true");
    assert_eq!(o.exit_code, 1, "{o:?}");
    assert_eq!(o.stdout, "pod \"stuck\" deleted from default namespace\n");
    assert_eq!(o.stderr, "error: timed out waiting for the condition\n");
    let took = t.w.now() - before;
    assert!(
        (20 * kubeloop_sim::time::SECOND..22 * kubeloop_sim::time::SECOND).contains(&took),
        "{took}"
    );
}
