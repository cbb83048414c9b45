//! The node scenarios shipped in public/scenarios/, run through the scenario runner and
//! checked for what a user sees at each step.

use kubeloop_sim::runner::{self, StepResult};
use kubeloop_sim::scenario::parse_scenario;

fn run(name: &str) -> Vec<StepResult> {
    let path = format!(
        "{}/../../public/scenarios/{name}.yaml",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).expect("scenario file");
    let sc = parse_scenario(&text).unwrap_or_else(|e| panic!("{name} is valid: {e:?}"));
    let desc = sc
        .metadata
        .annotations
        .get("kubeloop.dev/description")
        .cloned()
        .unwrap_or_default();
    assert!(desc.len() > 40, "{name} describes itself");
    runner::run(&sc, None).1
}

/// The step run at `at` seconds whose command starts with `prefix`.
fn step<'a>(r: &'a [StepResult], at: u64, prefix: &str) -> &'a StepResult {
    r.iter()
        .find(|s| s.at_ms == at * 1000 && s.command.starts_with(prefix))
        .unwrap_or_else(|| panic!("no step `{prefix}` at {at}s"))
}

fn rows(s: &StepResult) -> Vec<Vec<String>> {
    s.stdout
        .lines()
        .skip(1)
        .map(|l| l.split_whitespace().map(String::from).collect())
        .collect()
}

#[test]
fn nginx_service_traffic_resolves_through_coredns_and_lands_in_an_access_log() {
    let r = run("nginx-service-traffic");
    let pods = step(&r, 20, "kubectl get pods");
    let web: Vec<_> = rows(pods)
        .into_iter()
        .filter(|p| p[0].starts_with("web-"))
        .collect();
    assert_eq!(web.len(), 3, "{}", pods.stdout);
    assert!(web.iter().all(|p| p[1] == "1/1" && p[2] == "Running"));
    let ns = step(&r, 22, "kubectl exec client -- nslookup");
    assert!(ns.stdout.starts_with("Server:\t\t10.96.0.10\nAddress:\t10.96.0.10:53\n\nName:\tweb.default.svc.cluster.local\nAddress: 10."), "{ns:?}");
    let page = step(&r, 23, "kubectl exec client -- curl -s web");
    assert!(
        page.stdout
            .starts_with("<!DOCTYPE html>\n<html>\n<head>\n<title>Welcome to nginx!</title>"),
        "{page:?}"
    );
    assert_eq!(page.stdout.len(), 615);
    assert_eq!(step(&r, 24, "kubectl exec client -- curl").stdout, "404\n");
    let logs = step(&r, 25, "kubectl logs deploy/web");
    assert!(
        logs.stderr.starts_with("Found 3 pods, using pod/web-"),
        "{logs:?}"
    );
    let nat = step(&r, 26, "ssh node-1 iptables-save");
    assert!(nat.stdout.contains("*nat\n") && !nat.stdout.contains("*filter\n"));
    assert!(nat.stdout.contains("-A KUBE-SERVICES -d 10.96.0.10/32 -p udp -m comment --comment \"kube-system/kube-dns:dns cluster IP\" -m udp --dport 53 -j KUBE-SVC-TCOU7JCQXEZGVUNU"));
    // Nodes use the host's resolver, which knows no cluster names.
    let node = step(&r, 27, "ssh node-2 curl");
    assert_eq!(
        node.stderr,
        "curl: (6) Could not resolve host: web.default.svc.cluster.local\n"
    );
    assert_eq!(node.stdout, "000\n");
    assert_eq!(node.exit_code, 6);
    let ps = step(&r, 28, "ssh node-1 ps aux");
    assert!(ps.stdout.starts_with(
        "USER         PID %CPU %MEM    VSZ   RSS TTY      STAT START   TIME COMMAND\n"
    ));
    assert!(ps
        .stdout
        .contains("/usr/local/bin/containerd-shim-runc-v2 -namespace k8s.io -id "));
    let top = step(&r, 60, "kubectl top pods");
    assert!(top.stdout.starts_with("NAME"), "{top:?}");
    assert!(top.stdout.contains("CPU(cores)   MEMORY(bytes)"));
}

#[test]
fn mysql_claim_waits_for_its_consumer_is_provisioned_and_mounted() {
    let r = run("mysql-pvc");
    assert!(step(&r, 0, "kubectl get storageclass").stdout.contains(
        "standard (default)   rancher.io/local-path   Delete          WaitForFirstConsumer   false"
    ));
    let pending = step(&r, 1, "kubectl get pvc");
    assert!(
        pending.stdout.contains("mysql-pv-claim   Pending"),
        "{pending:?}"
    );
    let bound = step(&r, 30, "kubectl get pvc,pv");
    assert!(
        bound
            .stdout
            .contains("persistentvolumeclaim/mysql-pv-claim   Bound    pvc-"),
        "{bound:?}"
    );
    assert!(bound.stdout.contains(
        "1Gi        RWO            Delete           Bound    default/mysql-pv-claim   standard"
    ));
    let events = step(&r, 32, "kubectl get events");
    for e in [
        "WaitForFirstConsumer    persistentvolumeclaim/mysql-pv-claim   waiting for first consumer to be created before binding",
        "ExternalProvisioning    persistentvolumeclaim/mysql-pv-claim   Waiting for a volume to be created either by the external provisioner 'rancher.io/local-path' or manually by the system administrator. If volume creation is delayed, please verify that the provisioner is running and correctly registered.",
        "Provisioning            persistentvolumeclaim/mysql-pv-claim   External provisioner is provisioning volume for claim \"default/mysql-pv-claim\"",
        "ProvisioningSucceeded   persistentvolumeclaim/mysql-pv-claim   Successfully provisioned volume pvc-",
    ] {
        assert!(events.stdout.contains(e), "{e}\n{}", events.stdout);
    }
    let logs = step(&r, 33, "kubectl logs deploy/mysql");
    assert!(logs.stdout.contains("[Server] /usr/sbin/mysqld: ready for connections. Version: '8.4.7'  socket: '/var/run/mysqld/mysqld.sock'  port: 3306  MySQL Community Server - GPL."), "{logs:?}");
    assert_eq!(step(&r, 34, "kubectl exec deploy/mysql").stdout, "s3cr3t\n");
}

#[test]
fn crashloop_backs_off_and_previous_logs_show_the_last_run() {
    let r = run("crashloop");
    let later = rows(step(&r, 60, "kubectl get pods"));
    assert_eq!(later[0][2], "CrashLoopBackOff");
    assert_eq!(
        step(&r, 61, "kubectl logs crasher --previous").stdout,
        "starting\ncrashing now\n"
    );
    let msg = step(&r, 62, "kubectl get pod crasher");
    assert!(
        msg.stdout
            .starts_with("back-off 40s restarting failed container=app pod=crasher_default("),
        "{msg:?}"
    );
    let ev = step(&r, 63, "kubectl get events");
    assert!(ev.stdout.contains("Warning   BackOff   pod/crasher   Back-off restarting failed container app in pod crasher_default("));
}

#[test]
fn image_pull_backoff_is_fixed_by_set_image() {
    let r = run("imagepull-fix");
    let early = rows(step(&r, 3, "kubectl get pods"));
    assert!(
        early
            .iter()
            .all(|p| p[2] == "ImagePullBackOff" || p[2] == "ErrImagePull"),
        "{early:?}"
    );
    let ev = step(&r, 4, "kubectl get events");
    assert!(ev.stdout.contains("Failed to pull image \"nginx:1.277\": rpc error: code = NotFound desc = failed to pull and unpack image \"docker.io/library/nginx:1.277\": failed to resolve reference \"docker.io/library/nginx:1.277\": docker.io/library/nginx:1.277: not found"));
    assert!(ev.stdout.contains("Error: ErrImagePull"));
    assert_eq!(
        step(&r, 31, "kubectl set image").stdout,
        "deployment.apps/web image updated\n"
    );
    assert_eq!(
        step(&r, 60, "kubectl rollout status").stdout,
        "deployment \"web\" successfully rolled out\n"
    );
    let done = rows(step(&r, 61, "kubectl get pods"));
    assert_eq!(done.len(), 2);
    assert!(
        done.iter().all(|p| p[1] == "1/1" && p[2] == "Running"),
        "{done:?}"
    );
}

#[test]
fn readiness_gates_the_endpoints_during_a_rolling_update() {
    let r = run("readiness-rollout");
    let mid = rows(step(&r, 30, "kubectl get pods"));
    let fresh: Vec<_> = mid
        .iter()
        .filter(|p| p[0].starts_with("web-") && p[1] == "0/1")
        .collect();
    assert_eq!(
        fresh.len(),
        1,
        "one new pod, running but not ready: {mid:?}"
    );
    assert_eq!(fresh[0][2], "Running");
    let new_name = fresh[0][0].clone();
    let ready = step(&r, 31, "kubectl get endpointslices -l kubernetes.io/service-name=web -o jsonpath={.items[*].endpoints[*].conditions.ready}");
    assert_eq!(ready.stdout.matches("false").count(), 1);
    for at in [32, 33, 34] {
        let hit = step(&r, at, "kubectl exec client -- curl");
        assert!(
            hit.stdout.starts_with("web-") && hit.stdout != new_name,
            "traffic only reaches ready pods: {hit:?}"
        );
    }
    assert_eq!(
        step(&r, 100, "kubectl rollout status").stdout,
        "deployment \"web\" successfully rolled out\n"
    );
    let after = rows(step(&r, 101, "kubectl get pods"));
    assert_eq!(
        after
            .iter()
            .filter(|p| p[0].starts_with("web-") && p[1] == "1/1")
            .count(),
        3
    );
}

#[test]
fn node_failure_moves_traffic_and_evicts_after_five_minutes() {
    let r = run("node-failure");
    let before = rows(step(&r, 20, "kubectl get pods -o wide"));
    let on3: Vec<String> = before
        .iter()
        .filter(|p| p[6] == "node-3")
        .map(|p| p[0].clone())
        .collect();
    assert_eq!(on3.len(), 1, "one replica per node: {before:?}");
    let nodes = step(&r, 90, "kubectl get nodes");
    assert!(nodes.stdout.contains("node-3   NotReady"), "{nodes:?}");
    for at in [92, 93, 94] {
        let hit = step(&r, at, "ssh node-1 curl");
        assert_eq!(hit.exit_code, 0, "the dead endpoint is gone: {hit:?}");
        assert!(hit.stdout.starts_with("web-") && hit.stdout != on3[0]);
    }
    let after = rows(step(&r, 400, "kubectl get pods -o wide"));
    let running: Vec<_> = after.iter().filter(|p| p[2] == "Running").collect();
    assert_eq!(running.len(), 3, "{after:?}");
    assert!(running.iter().all(|p| p[6] != "node-3"));
    assert!(
        after
            .iter()
            .any(|p| p[0] == on3[0] && p[2] == "Terminating"),
        "{after:?}"
    );
}

#[test]
fn node_scenarios_are_deterministic() {
    for name in ["node-failure", "readiness-rollout"] {
        let path = format!(
            "{}/../../public/scenarios/{name}.yaml",
            env!("CARGO_MANIFEST_DIR")
        );
        let sc = parse_scenario(&std::fs::read_to_string(&path).expect("file")).expect("valid");
        let (w1, a) = runner::run(&sc, None);
        let (w2, b) = runner::run(&sc, None);
        assert_eq!(runner::format_text(&a), runner::format_text(&b), "{name}");
        assert_eq!(w1.log_hash(), w2.log_hash(), "{name}");
        assert_eq!(w1.observe().net().paths, w2.observe().net().paths, "{name}");
    }
}

#[test]
fn logs_follow_streams_until_the_next_step() {
    assert!(runner::is_streaming("kubectl logs -f web"));
    assert!(runner::is_streaming("kubectl logs web --follow"));
    assert!(!runner::is_streaming("kubectl logs web"));
}

#[test]
fn network_policy_dns_breaks_lookups_until_dns_egress_is_allowed() {
    let r = run("network-policy-dns");
    let page = step(&r, 20, "kubectl exec client -- wget");
    assert!(page.stdout.contains("Welcome to nginx!"), "{page:?}");
    let denied = step(&r, 26, "kubectl exec client -- nslookup");
    assert_eq!(
        denied.stdout,
        ";; connection timed out; no servers could be reached\n\n"
    );
    let ns = step(&r, 41, "kubectl exec client -- nslookup");
    assert!(
        ns.stdout.contains("Name:\tweb.default.svc.cluster.local\n"),
        "{ns:?}"
    );
    let still = step(&r, 42, "kubectl exec client -- wget");
    assert_eq!(
        still.stderr,
        "wget: download timed out\ncommand terminated with exit code 1\n"
    );
    let open = step(&r, 51, "kubectl exec client -- wget");
    assert!(open.stdout.contains("Welcome to nginx!"), "{open:?}");
    let list = step(&r, 52, "kubectl get networkpolicy");
    assert_eq!(rows(list).len(), 4, "{}", list.stdout);
    let d = step(&r, 53, "kubectl describe networkpolicy");
    assert!(
        d.stdout.contains("  Allowing ingress traffic:\n    To Port: 80/TCP\n    From:\n      PodSelector: app=client\n"),
        "{}",
        d.stdout
    );
}
