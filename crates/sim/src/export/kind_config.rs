//! `kind-config.yaml`: a kind `Cluster` (kind.x-k8s.io/v1alpha4) with one control-plane
//! node and one worker per scenario node, labelled and tainted as the scenario says.
//!
//! Labels go in a node's `labels:` (kind passes them to the kubelet's `--node-labels`),
//! taints in a `JoinConfiguration` patch's `nodeRegistration.taints` (kubeadm registers
//! the node with them). What kind cannot set — capacity, allocatable, pre-pulled images,
//! labels the kubelet may not register — is written as a comment beside the node and,
//! where a command can do it, done by run.sh's setup.

use super::names::NodeNames;
use crate::scenario::{NodeSpec, ProxyMode, Scenario, DEFAULT_CAPACITY};

/// Labels the kubelet sets itself from the machine (`kubernetes.io/hostname` is kind's
/// container name there): not passed on.
pub const KUBELET_OWN: &[&str] = &[
    "kubernetes.io/hostname",
    "kubernetes.io/os",
    "kubernetes.io/arch",
    "beta.kubernetes.io/os",
    "beta.kubernetes.io/arch",
];

/// Labels under `kubernetes.io`/`k8s.io` the kubelet may still register
/// (k8s.io/kubelet `IsKubeletLabel`).
const KUBELET_LABELS: &[&str] = &[
    "kubernetes.io/hostname",
    "topology.kubernetes.io/zone",
    "topology.kubernetes.io/region",
    "failure-domain.beta.kubernetes.io/zone",
    "failure-domain.beta.kubernetes.io/region",
    "beta.kubernetes.io/instance-type",
    "node.kubernetes.io/instance-type",
    "kubernetes.io/os",
    "kubernetes.io/arch",
    "beta.kubernetes.io/os",
    "beta.kubernetes.io/arch",
];

/// Whether the kubelet accepts `key` in `--node-labels`: the kubelet refuses labels in the
/// `kubernetes.io` and `k8s.io` namespaces except its own and `kubelet.kubernetes.io`,
/// `node.kubernetes.io` (and their subdomains).
pub fn kubelet_may_set(key: &str) -> bool {
    let Some((ns, _)) = key.split_once('/') else {
        return true;
    };
    let restricted = |d: &str| ns == d || ns.ends_with(&format!(".{d}"));
    if !restricted("kubernetes.io") && !restricted("k8s.io") {
        return true;
    }
    KUBELET_LABELS.contains(&key)
        || ["kubelet.kubernetes.io", "node.kubernetes.io"]
            .iter()
            .any(|d| ns == *d || ns.ends_with(&format!(".{d}")))
}

/// A YAML scalar that reads back as exactly `s` (JSON strings are YAML).
fn q(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_default()
}

/// The whole of `kind-config.yaml`.
pub fn kind_config(sc: &Scenario, names: &NodeNames) -> String {
    let mut out = format!(
        "# A kind cluster for the kubeloop scenario \"{}\", written by `kubeloop export`:\n\
         #   kind create cluster --config kind-config.yaml\n\
         # kind names the nodes itself; the scenario's nodes become:\n",
        super::script::display_name(sc)
    );
    for (s, k) in &names.workers {
        out += &format!("#   {s} -> {k}\n");
    }
    out += "kind: Cluster\napiVersion: kind.x-k8s.io/v1alpha4\n";
    out += &format!("name: {}\n", names.cluster);
    if sc.spec.proxy_mode != ProxyMode::Iptables {
        out += &format!(
            "networking:\n  kubeProxyMode: {}\n",
            q(sc.spec.proxy_mode.as_str())
        );
    }
    if sc.spec.scheduler_configuration.is_some() {
        out +=
            "# kubeloop only: spec.schedulerConfiguration is not set here; kube-scheduler runs\n\
                # with its defaults (README.md says how to give it the configuration).\n";
    }
    out += "nodes:\n";
    out += &control_plane(sc);
    for ((_, kind), node) in names.workers.iter().zip(sc.nodes()) {
        out += &worker(&node, kind, names);
    }
    out
}

/// The control-plane node; with ingress-nginx it is the node kind's ingress guide makes
/// ingress-ready, with ports 80 and 443 mapped to the host.
fn control_plane(sc: &Scenario) -> String {
    let mut out = String::from(
        "- role: control-plane\n  # Runs the control plane; tainted NoSchedule, so the scenario's pods go to the workers.\n",
    );
    if sc
        .spec
        .addons
        .iter()
        .any(|a| a == crate::cluster::ingress_nginx::ADDON)
    {
        out += "  # The ingress-nginx add-on, as kind's ingress guide sets it up.\n\
                \x20 labels:\n    ingress-ready: \"true\"\n\
                \x20 extraPortMappings:\n\
                \x20 - containerPort: 80\n    hostPort: 80\n    protocol: TCP\n\
                \x20 - containerPort: 443\n    hostPort: 443\n    protocol: TCP\n";
    }
    out
}

fn worker(node: &NodeSpec, kind: &str, names: &NodeNames) -> String {
    let mut out = format!("- role: worker   # {} -> {kind}\n", node.name);
    out += &capacity_comment(node);
    let labels: Vec<(&String, &String)> = node
        .labels
        .iter()
        .filter(|(k, _)| kubelet_may_set(k) && !KUBELET_OWN.contains(&k.as_str()))
        .collect();
    let own: Vec<&String> = node
        .labels
        .keys()
        .filter(|k| KUBELET_OWN.contains(&k.as_str()))
        .collect();
    if !own.is_empty() {
        out += &format!(
            "  # Set by the kubelet itself, not from here: {}\n",
            own.iter()
                .map(|k| format!("{k}={}", names.translate(&node.labels[*k])))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    if node.labels.keys().any(|k| !kubelet_may_set(k)) {
        out += "  # Labels the kubelet may not register are set by run.sh (kubectl label node).\n";
    }
    if !labels.is_empty() {
        out += "  labels:\n";
        for (k, v) in labels {
            out += &format!("    {}: {}\n", q(k), q(&names.translate(v)));
        }
    }
    if !node.taints.is_empty() {
        out += "  kubeadmConfigPatches:\n  - |\n    kind: JoinConfiguration\n    nodeRegistration:\n      taints:\n";
        for t in &node.taints {
            out += &format!("      - key: {}\n", q(&t.key));
            if !t.value.is_empty() {
                out += &format!("        value: {}\n", q(&t.value));
            }
            out += &format!("        effect: {}\n", t.effect.as_str());
        }
    }
    if node.unschedulable {
        out += "  # Starts cordoned in the scenario: run.sh cordons it.\n";
    }
    out
}

/// `# capacity …` comments: kind nodes are containers sharing the host's CPUs and memory.
fn capacity_comment(node: &NodeSpec) -> String {
    let list = |m: &std::collections::BTreeMap<String, String>| {
        m.iter()
            .map(|(k, v)| format!("{k}: {v}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let defaults = DEFAULT_CAPACITY
        .iter()
        .all(|(k, v)| node.capacity.get(*k).map(String::as_str) == Some(*v))
        && node.capacity.len() == DEFAULT_CAPACITY.len();
    let mut out = format!(
        "  # capacity in the scenario{}: {} (kind cannot set it: the node has the host's)\n",
        if defaults {
            " (kubeloop's defaults)"
        } else {
            ""
        },
        list(&node.capacity)
    );
    if node.allocatable != node.capacity {
        out += &format!(
            "  # allocatable in the scenario: {}\n",
            list(&node.allocatable)
        );
    }
    if !node.images.is_empty() {
        out += &format!(
            "  # {} pre-pulled image(s) in the scenario: run.sh pulls them (crictl pull)\n",
            node.images.len()
        );
    }
    out
}
