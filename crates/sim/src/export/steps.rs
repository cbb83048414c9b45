//! One scenario step as a line of `run.sh`: kubectl as is, `ssh` as `docker exec`, `sim`
//! failures as what does the same to a kind cluster, the rest as a comment.

use super::names::{shell_join, NodeNames};
use crate::cmd::tokenize;

/// Control-plane components kind runs as static pods on the control-plane node.
pub const STATIC_PODS: &[&str] = &[
    "etcd",
    "kube-apiserver",
    "kube-scheduler",
    "kube-controller-manager",
];

/// What a step becomes in the script.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Line {
    /// A bash command line, run at the step's time by the script's `step` helper.
    Run(String),
    /// A command that streams (`kubectl get -w`): run until the next step's time.
    Stream(String),
    /// No equivalent on kind: written as `# kubeloop only: <why>: <command>`.
    KubeloopOnly(String),
}

/// Translates one step's command line.
pub fn translate(line: &str, names: &NodeNames) -> Line {
    let words = match tokenize(line) {
        Ok(w) => w,
        Err(e) => return Line::KubeloopOnly(format!("{e}: {line}")),
    };
    let Some(cmd) = words.first() else {
        return Line::KubeloopOnly(format!("empty command: {line}"));
    };
    let words: Vec<String> = words.iter().map(|w| names.translate(w)).collect();
    match cmd.as_str() {
        "kubectl" | "k" | "etcdctl" => {
            let mut words = words;
            words[0] = if cmd == "etcdctl" {
                "etcdctl"
            } else {
                "kubectl"
            }
            .into();
            let text = shell_join(&words);
            if crate::runner::is_streaming(line) {
                Line::Stream(text)
            } else {
                Line::Run(text)
            }
        }
        // kind's node containers run no sshd; `docker exec` gives the same shell.
        "ssh" => ssh(&words, line),
        "sim" => sim(&words, line, names),
        // The host's own curl reaches what cloud-provider-kind exposes, as in kubeloop.
        "curl" => Line::Run(shell_join(&words)),
        "cloud-provider-kind" => Line::KubeloopOnly(format!(
            "a host program: run `cloud-provider-kind` in another terminal instead: {line}"
        )),
        _ => Line::KubeloopOnly(format!("not a command kubeloop exports: {line}")),
    }
}

fn ssh(words: &[String], line: &str) -> Line {
    let Some(node) = words.get(1) else {
        return Line::KubeloopOnly(format!("ssh without a node: {line}"));
    };
    let rest = &words[2..];
    if rest.is_empty() {
        return Line::KubeloopOnly(format!(
            "an interactive shell: use `docker exec -it {node} bash`: {line}"
        ));
    }
    let rest: Vec<String> = match rest.first().map(String::as_str) {
        Some("sudo") => rest[1..].to_vec(),
        _ => rest.to_vec(),
    };
    let mut out = vec!["docker".to_string(), "exec".into(), node.clone()];
    if rest.iter().any(|w| w == "|") {
        // ssh runs its command in the remote shell, pipes included.
        let inner = shell_join(&rest);
        out.extend(["sh".into(), "-c".into(), inner]);
    } else {
        out.extend(rest);
    }
    Line::Run(shell_join(&out))
}

fn sim(words: &[String], line: &str, names: &NodeNames) -> Line {
    let sub = words.get(1).map(String::as_str).unwrap_or("");
    let arg = words.get(2).cloned().unwrap_or_default();
    let run = |w: &[&str]| {
        Line::Run(shell_join(
            &w.iter().map(|s| s.to_string()).collect::<Vec<_>>(),
        ))
    };
    let is_node = |n: &str| names.workers.iter().any(|(_, k)| k == n);
    match sub {
        "stop" | "start" if STATIC_PODS.contains(&component(&arg)) => {
            run(&[&format!("{sub}_component"), component(&arg)])
        }
        "poweroff" if is_node(&arg) => run(&["docker", "stop", &arg]),
        "poweron" if is_node(&arg) => run(&["docker", "start", &arg]),
        "partition" if is_node(&arg) => run(&["partition", &arg]),
        "heal" if is_node(&arg) => run(&["heal", &arg]),
        "crash" => crash(&words[2..], line),
        "advance" => match crate::time::parse_duration(&arg) {
            Ok(ms) => run(&["sleep", &crate::runner::seconds(ms)]),
            Err(e) => Line::KubeloopOnly(format!("{e}: {line}")),
        },
        "node" => Line::KubeloopOnly(format!(
            "kind cannot add a node to a running cluster (add a `role: worker` to kind-config.yaml and recreate it): {line}"
        )),
        "speed" => Line::KubeloopOnly(format!("a real cluster runs at the wall clock's speed: {line}")),
        "stop" | "start" if component(&arg) == "cloud-provider-kind" => Line::KubeloopOnly(format!(
            "cloud-provider-kind runs on the host: {sub} it there (Ctrl-C / `cloud-provider-kind`): {line}"
        )),
        _ => Line::KubeloopOnly(format!("no kind equivalent: {line}")),
    }
}

/// A component's full name (`scheduler` → `kube-scheduler`), or "" if unknown.
fn component(name: &str) -> &'static str {
    match name {
        "etcd" => "etcd",
        "kube-apiserver" | "apiserver" => "kube-apiserver",
        "kube-scheduler" | "scheduler" => "kube-scheduler",
        "kube-controller-manager" | "controller-manager" => "kube-controller-manager",
        "cloud-provider-kind" => "cloud-provider-kind",
        _ => "",
    }
}

/// `sim crash POD [CONTAINER] [-n NS]` → `crash_container NS POD [CONTAINER]`.
fn crash(args: &[String], line: &str) -> Line {
    let (ns, words) = crate::cmd::sim::crash_args(args);
    let Some(pod) = words.first() else {
        return Line::KubeloopOnly(format!("sim crash without a pod: {line}"));
    };
    let mut out = vec!["crash_container".to_string(), ns, pod.clone()];
    out.extend(words.get(1).cloned());
    Line::Run(shell_join(&out))
}
