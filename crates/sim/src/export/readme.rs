//! The exported directory's `README.md`: how to run it and what differs from kubeloop.

use super::names::NodeNames;
use super::script::display_name;
use crate::scenario::Scenario;

/// The whole of `README.md`. `kubeloop_only` lists the steps run.sh could only comment.
pub fn readme(sc: &Scenario, names: &NodeNames, kubeloop_only: &[String]) -> String {
    let mut out = format!("# {} on a real cluster (kind)\n\n", display_name(sc));
    if let Some(d) = sc.metadata.annotations.get("kubeloop.dev/description") {
        out += &format!("{d}\n\n");
    }
    out += &format!(
        "Written by `kubeloop export`. It needs [kind](https://kind.sigs.k8s.io/), Docker and kubectl.\n\n\
         ```sh\n\
         kind create cluster --config kind-config.yaml   # the cluster \"{c}\", context kind-{c}\n\
         ./run.sh   # the scenario's steps at their times\n\
         kind delete cluster --name {c}   # when done\n\
         ```\n\n\
         - `kind-config.yaml`: one control-plane node and one worker per scenario node, with the\n\
         \x20 scenario's labels and taints.\n\
         - `manifests/`: the scenario's files; `run.sh` runs from there, so `kubectl apply -f FILE` works as written.\n\
         - `run.sh`: a setup (waits for the nodes, sets what kind-config.yaml cannot), then every step at\n\
         \x20 its time after the setup, printed `[<seconds>s] $ <command>` like `kubeloop run` prints it.\n\n",
        c = names.cluster
    );
    out += "## Node names\n\nkind names the nodes itself, so every command and manifest that names a node uses kind's name:\n\n\
            | scenario | kind |\n|---|---|\n";
    for (s, k) in &names.workers {
        out += &format!("| {s} | {k} |\n");
    }
    out += &format!(
        "\nThe control plane runs on `{}` (a Node on kind, tainted NoSchedule; in kubeloop it is not a Node).\n\n",
        names.control_plane()
    );
    if names.workers.len() > BIG {
        out += &format!(
            "kind runs every node as a container: {} nodes need a large machine (each kind node takes\n\
             a few hundred MiB of memory before any pod runs). kubeloop's hollow nodes have no such cost.\n\n",
            names.workers.len() + 1
        );
    }
    out += DIFFERENCES;
    if !kubeloop_only.is_empty() {
        out += "\n## Steps with no kind equivalent\n\nThese are comments in run.sh:\n\n";
        for s in kubeloop_only {
            out += &format!("- `{s}`\n");
        }
    }
    out
}

/// More worker nodes than this get a warning about the machine kind needs.
const BIG: usize = 10;

const DIFFERENCES: &str = "## What differs from kubeloop\n\n\
- Time is the wall clock: steps run at their times to about a second, and everything takes as long
  as it takes on your machine (image pulls above all). Virtual time does not exist; `sim advance D`
  becomes `sleep D`.
- Capacity: kind nodes are containers that share the host's CPUs and memory; the scenario's
  capacity and allocatable are comments in kind-config.yaml. Pods whose requests fit in kubeloop
  may not fit (or may fit more) here.
- Failures: `sim poweroff`/`poweron` stop and start the node's container (`docker stop`/`start`);
  `sim stop`/`start` of a control-plane component moves its static pod manifest out of
  `/etc/kubernetes/manifests` and back (the kubelet notices within 20 seconds); `sim partition`/
  `heal` drop the node's traffic to and from the control plane with iptables; `sim crash` kills
  the container's process from the node (exit code 137 rather than 1).
- `ssh NODE CMD` becomes `docker exec NODE CMD`; `etcdctl` runs in the etcd pod, and `etcdctl get`
  prints etcd's protobuf values, not kubeloop's JSON.
- Names, IPs and the scheduler's random choices differ: pod name suffixes, pod and node IPs, and
  which of several equal nodes a pod lands on. The `kubeloop.dev/*-result` scheduling annotations
  do not exist on a real cluster.
- `spec.schedulerConfiguration` is not applied: kube-scheduler runs with its defaults (give it a
  configuration through a ClusterConfiguration patch and an extraMount if you need it).
";
