//! `run.sh`: the scenario's steps as bash, each at its time, after a setup that gives the
//! kind nodes what kind-config.yaml could not.

use super::kind_config::kubelet_may_set;
use super::names::{shell_join, shell_quote, NodeNames};
use super::steps::{self, Line};
use crate::scenario::Scenario;

/// The helpers every script starts with. `@CLUSTER@` and `@CONTROL_PLANE@` are filled in.
const PRELUDE: &str = r#"set -euo pipefail
# Steps name the scenario's files as they are written in manifests/.
cd "$(dirname "$0")"
if [ -d manifests ]; then cd manifests; fi

CLUSTER=@CLUSTER@
CONTROL_PLANE=@CONTROL_PLANE@

# Every kubectl command talks to the kind cluster, whatever the current context is.
kubectl() { command kubectl --context "kind-$CLUSTER" "$@"; }

# etcdctl runs inside kind's etcd static pod, with the client certificates kubeadm made.
etcdctl() {
  kubectl -n kube-system exec "etcd-$CONTROL_PLANE" -- etcdctl \
    --endpoints=https://127.0.0.1:2379 \
    --cacert=/etc/kubernetes/pki/etcd/ca.crt \
    --cert=/etc/kubernetes/pki/etcd/server.crt \
    --key=/etc/kubernetes/pki/etcd/server.key "$@"
}

# A control-plane component stops as on any kubeadm cluster: the kubelet stops a static
# pod when its manifest leaves /etc/kubernetes/manifests (it looks every 20 seconds) and
# starts it again when the manifest comes back.
stop_component() {
  docker exec "$CONTROL_PLANE" mv "/etc/kubernetes/manifests/$1.yaml" "/etc/kubernetes/$1.yaml"
  echo "$1 stopped"
}
start_component() {
  docker exec "$CONTROL_PLANE" mv "/etc/kubernetes/$1.yaml" "/etc/kubernetes/manifests/$1.yaml"
  echo "$1 started"
}

# A partition from the control plane: the node drops every packet to and from it.
control_plane_ip() {
  docker inspect -f '{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}' "$CONTROL_PLANE"
}
partition() {
  local ip
  ip=$(control_plane_ip)
  docker exec "$1" iptables -I INPUT -s "$ip" -j DROP
  docker exec "$1" iptables -I OUTPUT -d "$ip" -j DROP
  echo "$1 partitioned from the control plane"
}
heal() {
  local ip
  ip=$(control_plane_ip)
  docker exec "$1" iptables -D INPUT -s "$ip" -j DROP
  docker exec "$1" iptables -D OUTPUT -d "$ip" -j DROP
  echo "$1 network restored"
}

# A container crash: its process is killed from the node (it exits 137, where kubeloop's
# `sim crash` exits 1); the kubelet restarts it by the pod's restartPolicy.
crash_container() {
  local ns=$1 pod=$2 container=${3:-} node id pid
  node=$(kubectl get pod -n "$ns" "$pod" -o jsonpath='{.spec.nodeName}')
  if [ -z "$container" ]; then
    container=$(kubectl get pod -n "$ns" "$pod" -o jsonpath='{.spec.containers[0].name}')
  fi
  id=$(docker exec "$node" crictl ps -q --name "^$container\$" \
    --label "io.kubernetes.pod.name=$pod" --label "io.kubernetes.pod.namespace=$ns" | head -n 1)
  pid=$(docker exec "$node" crictl inspect --output go-template --template '{{.info.pid}}' "$id")
  docker exec "$node" kill -9 "$pid"
  echo "container $container in pod $ns/$pod crashed"
}

# Steps run at their time in seconds after the setup, or when the previous one returned if
# that was later, and print `[<seconds>s] $ <command>` as `kubeloop run` does. A failing
# command does not stop the script, as a failing step does not stop a scenario.
wait_until() {
  local d
  d=$(awk -v at="$1" -v now="$((SECONDS - START))" 'BEGIN { d = at - now; print (d > 0 ? d : 0) }')
  sleep "$d"
}
step() {
  local at=$1
  shift
  wait_until "$at"
  printf '[%ss] $ %s\n' "$at" "$*"
  "$@" || echo "(exit code $?)"
}
# A command that streams (kubectl get -w) runs until the next step's time, then is
# interrupted like Ctrl-C. It runs as its own job (set -m): a script's background
# commands ignore SIGINT otherwise, and the signal must reach kubectl, not only the shell.
stream() {
  local at=$1 until=$2
  shift 2
  wait_until "$at"
  printf '[%ss] $ %s\n' "$at" "$*"
  set -m
  "$@" &
  local pid=$!
  set +m
  wait_until "$until"
  # A command interrupted the moment it started may not have its own handlers yet: send
  # Ctrl-C again while the job lives, 0.2 s apart (read -t waits without running
  # anything), and after 2 s stop it as `kill` would.
  local tries=0
  while kill -0 "$pid" 2>/dev/null && [ "$tries" -lt 10 ]; do
    kill -INT -- "-$pid" 2>/dev/null || kill -INT "$pid" 2>/dev/null || true
    read -rt 0.2 <> <(:) || true
    tries=$((tries + 1))
  done
  kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
  wait "$pid" || true
}
"#;

/// The whole of `run.sh`.
pub fn run_sh(sc: &Scenario, names: &NodeNames) -> String {
    let mut out = String::from("#!/usr/bin/env bash\n");
    out += &format!(
        "# The steps of the kubeloop scenario \"{}\" on a kind cluster, written by\n\
         # `kubeloop export`. Create the cluster first, then run this from its directory:\n\
         #   kind create cluster --config kind-config.yaml\n\
         #   ./run.sh\n\
         # README.md says what differs from kubeloop.\n",
        display_name(sc)
    );
    out += &PRELUDE
        .replace("@CLUSTER@", &names.cluster)
        .replace("@CONTROL_PLANE@", &names.control_plane());
    out += "\n# kind names the nodes itself; every command below names them as kind does:\n";
    for (s, k) in &names.workers {
        out += &format!("#   {s} -> {k}\n");
    }
    out += "\n";
    out += &setup(sc, names);
    out += "\nSTART=$SECONDS\n\n# The scenario's steps.\n";
    out += &step_lines(sc, names);
    out
}

/// The scenario's name for a comment or a title: on one line, or "(unnamed)".
pub fn display_name(sc: &Scenario) -> String {
    if sc.metadata.name.is_empty() {
        "(unnamed)".to_string()
    } else {
        one_line(&sc.metadata.name)
    }
}

/// Before the steps: the nodes Ready, the labels and cordons kind-config.yaml cannot
/// give, pre-pulled images and the add-ons, so virtual time 0 finds the cluster as
/// kubeloop's starts.
fn setup(sc: &Scenario, names: &NodeNames) -> String {
    let mut out = String::from(
        "# Setup: the cluster as the scenario's starts (not timed).\n\
         kubectl wait --for=condition=Ready nodes --all --timeout=180s\n",
    );
    for ((_, kind), node) in names.workers.iter().zip(sc.nodes()) {
        let refused: Vec<String> = node
            .labels
            .iter()
            .filter(|(k, _)| {
                !kubelet_may_set(k) && !super::kind_config::KUBELET_OWN.contains(&k.as_str())
            })
            .map(|(k, v)| format!("{k}={}", names.translate(v)))
            .collect();
        if !refused.is_empty() {
            out += "# The kubelet may not register these labels itself (kubernetes.io and k8s.io prefixes).\n";
            let mut w = vec![
                "kubectl".to_string(),
                "label".into(),
                "node".into(),
                kind.clone(),
            ];
            w.extend(refused);
            out += &shell_join(&w);
            out += "\n";
        }
        if node.unschedulable {
            out += &format!("kubectl cordon {kind}\n");
        }
        for image in &node.images {
            if let Some(name) = image.names.iter().find(|n| !n.contains("@sha256:")) {
                out += &format!(
                    "docker exec {kind} crictl pull {} >/dev/null || echo {}\n",
                    shell_quote(name),
                    shell_quote(&format!("could not pre-pull {name} on {kind}")),
                );
            }
        }
    }
    for a in &sc.spec.addons {
        out += &addon(a);
    }
    out
}

fn addon(name: &str) -> String {
    if name == crate::cloud::ADDON {
        return "# The cloud-provider-kind add-on runs on the host: start `cloud-provider-kind` in\n\
                # another terminal (it gives LoadBalancer Services their IPs).\n"
            .to_string();
    }
    let Some((_, line)) = crate::runner::ADDONS.iter().find(|(n, _)| *n == name) else {
        return format!("# kubeloop only: add-on {name}\n");
    };
    let mut out = format!("{line}\n");
    if name == crate::cluster::ingress_nginx::ADDON {
        // kind's ingress guide waits for the controller before using it; `kubectl wait`
        // fails at once while no pod matches, so first wait for the pod to exist.
        out += "for _ in $(seq 90); do\n\
                \x20 kubectl get pods -n ingress-nginx -l app.kubernetes.io/component=controller -o name | grep -q . && break\n\
                \x20 sleep 2\n\
                done\n\
                kubectl wait --namespace ingress-nginx --for=condition=ready pod \
                --selector=app.kubernetes.io/component=controller --timeout=180s\n";
    }
    out
}

/// One line per step, in the order they run.
fn step_lines(sc: &Scenario, names: &NodeNames) -> String {
    let steps = sc.steps_in_order();
    let end = sc.until_ms().unwrap_or(0).max(sc.last_step_ms());
    let mut out = String::new();
    for (i, s) in steps.iter().enumerate() {
        let at = crate::runner::seconds(s.at_ms);
        match steps::translate(&s.run, names) {
            Line::Run(cmd) => out += &format!("step {at} {cmd}\n"),
            Line::Stream(cmd) => {
                let until = steps.get(i + 1).map_or(end, |n| n.at_ms).max(s.at_ms);
                let until = crate::runner::seconds(until);
                out += &format!("stream {at} {until} {cmd}\n");
            }
            Line::KubeloopOnly(why) => {
                out += &format!("# kubeloop only: [{at}s] {}\n", one_line(&why));
            }
        }
    }
    out
}

/// Keeps a comment on one line.
fn one_line(s: &str) -> String {
    s.replace(['\n', '\r'], " ")
}
