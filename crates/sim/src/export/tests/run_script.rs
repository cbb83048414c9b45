//! run.sh run for real by bash, with `kubectl`, `docker` and `sleep` replaced by stubs that
//! log their arguments: the commands a kind cluster would get, in order, and the script
//! reaching its end under `set -euo pipefail`.

use super::{file, gallery, LABELLED};
use crate::export::*;
use crate::scenario::parse_scenario;

const STUB: &str = "#!/bin/sh\necho \"$(basename \"$0\") $*\" >> \"$STUB_LOG\"\ncase \"$*\" in\n  *jsonpath=*nodeName*) echo stub-node ;;\n  *jsonpath=*containers*) echo app ;;\n  *crictl\\ ps*) echo c0ffee ;;\n  *crictl\\ inspect*) echo 4242 ;;\n  *inspect\\ -f*) echo 172.18.0.2 ;;\n  *'get pods --field'*) exit 1 ;;\n  *'get pods -w'*) exec /bin/sleep 60 ;;\nesac\nexit 0\n";

/// Writes the export to a scratch directory, runs `bash run.sh` there with the stubs
/// first on PATH, and returns (exit code, stdout, the stubs' log).
fn run_exported(files: &[(String, String)], name: &str) -> (i32, String, Vec<String>) {
    let dir = std::env::temp_dir().join(format!("kubeloop-run-sh-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    for (path, text) in files {
        let p = dir.join("out").join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    for tool in ["kubectl", "docker", "sleep"] {
        let p = bin.join(tool);
        std::fs::write(&p, STUB).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let log = dir.join("log");
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = std::process::Command::new("bash")
        .arg(dir.join("out/run.sh"))
        .env("PATH", path)
        .env("STUB_LOG", &log)
        .output()
        .expect("bash runs");
    let logged = std::fs::read_to_string(&log).unwrap_or_default();
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        out.stderr.is_empty() || out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        logged.lines().map(String::from).collect(),
    )
}

#[test]
fn run_sh_gives_kind_the_scenarios_commands_in_order() {
    let (code, stdout, log) = run_exported(&to_kind(&gallery("node-failure")), "node-failure");
    assert_eq!(code, 0, "{stdout}");
    let ctx = "kubectl --context kind-node-failure";
    let want = [
        format!("{ctx} wait --for=condition=Ready nodes --all --timeout=180s"),
        format!("{ctx} apply -f web.yaml"),
        "sleep 20".to_string(),
        format!("{ctx} get pods -o wide"),
        "sleep 21".to_string(),
        "docker stop node-failure-worker3".to_string(),
        "sleep 30".to_string(),
        "docker exec node-failure-worker curl -sS --connect-timeout 2 http://10.96.100.100"
            .to_string(),
    ];
    // `sleep` is stubbed, so almost no wall time passes: each wait is the step's whole
    // time, less the seconds the stubs themselves took on a loaded machine.
    let filtered: Vec<&String> = log.iter().filter(|l| !l.starts_with("sleep 0")).collect();
    assert!(filtered.len() >= want.len(), "{log:#?}");
    for (got, want) in filtered.iter().zip(&want) {
        match (got.strip_prefix("sleep "), want.strip_prefix("sleep ")) {
            (Some(g), Some(w)) => {
                let (g, w): (u64, u64) = (g.parse().unwrap(), w.parse().unwrap());
                assert!(
                    g <= w && g + 3 >= w,
                    "sleep {g} for a wait of {w}: {log:#?}"
                );
            }
            _ => assert_eq!(*got, want, "{log:#?}"),
        }
    }
    assert!(
        stdout.contains("[21s] $ docker stop node-failure-worker3\n"),
        "{stdout}"
    );
}

#[test]
fn run_sh_keeps_going_past_a_failing_step_and_runs_the_helpers() {
    let sc = parse_scenario(LABELLED).unwrap();
    let started = std::time::Instant::now();
    let (code, stdout, log) = run_exported(&to_kind(&sc), "zones");
    // `kubectl get pods -w` (a real 60 s sleep here) is interrupted at the next step.
    assert!(
        started.elapsed().as_secs() < 30,
        "the stream was not interrupted"
    );
    assert_eq!(code, 0, "{stdout}");
    assert!(stdout.contains("[3s] $ kubectl get pods --field-selector spec.nodeName=zones-worker3 -o wide\n(exit code 1)\n"), "{stdout}");
    for line in [
        "kubectl --context kind-zones label node zones-worker node-role.kubernetes.io/db=",
        "kubectl --context kind-zones cordon zones-worker2",
        "kubectl --context kind-zones apply -f https://kind.sigs.k8s.io/examples/ingress/deploy-ingress-nginx.yaml",
        // sim crash pinned app: find the container, kill its process from the node.
        "docker exec stub-node crictl ps -q --name ^app$ --label io.kubernetes.pod.name=pinned --label io.kubernetes.pod.namespace=default",
        "docker exec stub-node crictl inspect --output go-template --template {{.info.pid}} c0ffee",
        "docker exec stub-node kill -9 4242",
        // sim partition web-1
        "docker exec zones-worker2 iptables -I INPUT -s 172.18.0.2 -j DROP",
        "docker exec zones-worker2 iptables -I OUTPUT -d 172.18.0.2 -j DROP",
        "docker exec zones-worker2 sh -c crictl ps | grep app",
    ] {
        assert!(log.iter().any(|l| l == line), "no {line:?} in {log:#?}");
    }
    assert!(stdout.contains("container app in pod default/pinned crashed\n"));
    // The stream ran (its prompt is printed) and was stopped; whether the stub logged its
    // start before the interrupt came is a race, so the log is not asked.
    assert!(stdout.contains("$ kubectl get pods -w\n"), "{stdout}");
}

#[test]
fn run_sh_of_a_scenario_without_files_runs_from_its_directory() {
    let sc = parse_scenario(
        "apiVersion: kubeloop.dev/v1alpha1\nkind: Scenario\nmetadata: {name: bare}\nspec:\n  steps:\n  - {at: 2s, run: kubectl get nodes}\n  - {at: 3s, run: sim stop kube-scheduler}\n",
    )
    .unwrap();
    let files = to_kind(&sc);
    assert!(!files.iter().any(|(p, _)| p.starts_with("manifests/")));
    let (code, stdout, log) = run_exported(&files, "bare");
    assert_eq!(code, 0, "{stdout}");
    assert!(
        log.contains(&"kubectl --context kind-bare get nodes".to_string()),
        "{log:#?}"
    );
    assert!(log.contains(&"docker exec bare-control-plane mv /etc/kubernetes/manifests/kube-scheduler.yaml /etc/kubernetes/kube-scheduler.yaml".to_string()));
    assert!(
        stdout.ends_with("[3s] $ stop_component kube-scheduler\nkube-scheduler stopped\n"),
        "{stdout}"
    );
    let _ = file(&files, RUN_SH);
}
