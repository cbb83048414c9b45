//! `kubectl wait` through the terminal: conditions, `--for=delete`, jsonpath, selectors,
//! and the timeout, all in virtual time, with kubectl's messages.

mod common;
use common::Term as T;
use kubeloop_sim::time::SECOND;

#[test]
fn wait_for_a_condition_returns_once_it_holds() {
    let mut t = T::new();
    t.ok("kubectl apply -f nginx.yaml");
    let before = t.w.now();
    assert_eq!(
        t.ok("kubectl wait --for=condition=available deployment/nginx --timeout=120s"),
        "deployment.apps/nginx condition met\n"
    );
    assert!(t.w.now() > before, "the wait took virtual time");
    let d = t.ok("kubectl get deploy nginx");
    assert!(d.contains("nginx   3/3     3            3"), "{d}");
    let pods = t.ok("kubectl wait --for=condition=Ready pod -l app=nginx");
    assert_eq!(pods.lines().count(), 3, "{pods}");
    assert!(pods
        .lines()
        .all(|l| l.starts_with("pod/nginx-") && l.ends_with(" condition met")));
    assert_eq!(
        t.ok("kubectl wait --for=condition=Available -f nginx.yaml"),
        "deployment.apps/nginx condition met\n"
    );
    assert_eq!(
        t.ok("kubectl wait --for=jsonpath={.status.readyReplicas}=3 deploy nginx"),
        "deployment.apps/nginx condition met\n"
    );
    assert_eq!(
        t.ok("kubectl wait --for=jsonpath='{.status.phase}'=Running pods --all")
            .lines()
            .count(),
        3
    );
}

#[test]
fn wait_times_out_in_virtual_time_with_kubectls_error() {
    let mut t = T::new();
    t.ok("kubectl apply -f nginx.yaml");
    t.ok("kubectl wait --for=condition=available deployment/nginx --timeout=120s");
    let pod = t.ok("kubectl get pods -o jsonpath={.items[0].metadata.name}");
    let before = t.w.now();
    assert_eq!(
        t.err(&format!(
            "kubectl wait --for=condition=Ready=false pod/{pod} --timeout=3s"
        )),
        format!("error: timed out waiting for the condition on pods/{pod}\n")
    );
    let took = t.w.now() - before;
    assert!((3 * SECOND..4 * SECOND).contains(&took), "{took}");
    assert_eq!(
        t.err(&format!(
            "kubectl wait --for=condition=Ready=false pod/{pod} --timeout=0"
        )),
        format!("error: condition not met for pods/{pod}\n")
    );
}

#[test]
fn wait_for_delete() {
    let mut t = T::new();
    t.ok("kubectl apply -f nginx.yaml");
    t.ok("kubectl wait --for=condition=available deployment/nginx --timeout=120s");
    // Already gone: nothing to wait for.
    assert_eq!(t.ok("kubectl wait --for=delete pod/ghost"), "");
    t.ok("kubectl delete deploy nginx --wait=false");
    let out = t.ok("kubectl wait --for=delete pod -l app=nginx --timeout=60s");
    assert_eq!(out.lines().count(), 3, "{out}");
    assert_eq!(
        t.run("kubectl get pods").stderr,
        "No resources found in default namespace.\n"
    );
}

#[test]
fn bad_wait_arguments_fail_as_kubectl_does() {
    let mut t = T::new();
    for (line, err) in [
        ("kubectl wait --for=ready pod/x", "error: unrecognized condition: \"ready\"\n"),
        ("kubectl wait pod/x", "error: unrecognized condition: \"\"\n"),
        ("kubectl wait --for=condition=Ready pods", "error: resource(s) were provided, but no name was specified\n"),
        ("kubectl wait --for=condition=Ready pod -l app=nope", "error: no matching resources found\n"),
        ("kubectl wait --for=condition=Ready pod/ghost", "Error from server (NotFound): pods \"ghost\" not found\n"),
        ("kubectl wait --for=condition=Ready --timeout=abc pod/ghost", "error: invalid argument \"abc\" for \"--timeout\" flag: time: invalid duration \"abc\"\n"),
        ("kubectl wait --for=jsonpath='{.status.phase}'= pod/x", "error: jsonpath wait has to have a value after equal sign, like --for=jsonpath='{.status.readyReplicas}'=3\n"),
        ("kubectl wait --for=condition=Ready --bogus pod/x", "error: unknown flag: --bogus\nSee 'kubectl wait --help' for usage.\n"),
    ] {
        assert_eq!(t.err(line), err, "{line}");
    }
}
