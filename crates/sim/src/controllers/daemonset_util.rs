//! DaemonSet helpers (upstream `pkg/controller/daemon/util` and `NodeShouldRunDaemonPod`):
//! the tolerations the controller adds, the node affinity that pins a pod to its node,
//! which nodes should run a daemon pod, and the pod's target node.

use std::collections::BTreeMap;

use k8s_openapi::api::apps::v1::DaemonSet;
use k8s_openapi::api::core::v1::{
    Affinity, Node, NodeAffinity, NodeSelector, NodeSelectorRequirement, NodeSelectorTerm, Pod,
    PodSpec, PodTemplateSpec, Taint, Toleration,
};

use crate::scheduler::plugins::helper::{find_untolerated_no_schedule, tolerations_tolerate};
use crate::scheduler::selector::CompiledNodeSelector;

/// The deprecated `pod-template-generation` label (`DaemonSetTemplateGenerationKey`).
pub const TEMPLATE_GENERATION_LABEL: &str = "pod-template-generation";

fn toleration(key: &str, effect: &str) -> Toleration {
    Toleration {
        key: Some(key.into()),
        operator: Some("Exists".into()),
        effect: Some(effect.into()),
        ..Toleration::default()
    }
}

/// `AddOrUpdateDaemonPodTolerations`: not-ready and unreachable NoExecute (for ever),
/// disk/memory/pid pressure and unschedulable NoSchedule, network-unavailable NoSchedule
/// for host-network pods.
pub fn add_daemon_tolerations(spec: &mut k8s_openapi::api::core::v1::PodSpec) {
    let mut wanted = vec![
        toleration("node.kubernetes.io/not-ready", "NoExecute"),
        toleration("node.kubernetes.io/unreachable", "NoExecute"),
        toleration("node.kubernetes.io/disk-pressure", "NoSchedule"),
        toleration("node.kubernetes.io/memory-pressure", "NoSchedule"),
        toleration("node.kubernetes.io/pid-pressure", "NoSchedule"),
        toleration("node.kubernetes.io/unschedulable", "NoSchedule"),
    ];
    if spec.host_network == Some(true) {
        wanted.push(toleration(
            "node.kubernetes.io/network-unavailable",
            "NoSchedule",
        ));
    }
    let tols = spec.tolerations.get_or_insert_with(Vec::new);
    for w in wanted {
        // AddOrUpdateTolerationInPodSpec: an equal toleration (key, operator, value,
        // effect) is replaced, otherwise appended.
        let same = |t: &Toleration| {
            t.key == w.key && t.effect == w.effect && t.operator == w.operator && t.value == w.value
        };
        match tols.iter_mut().find(|t| same(t)) {
            Some(t) => *t = w,
            None => tols.push(w),
        }
    }
}

/// `ReplaceDaemonSetPodNodeNameNodeAffinity`: the required node affinity becomes one
/// term matching the node's `metadata.name`.
pub fn pin_to_node(affinity: Option<Affinity>, node: &str) -> Affinity {
    let term = NodeSelectorTerm {
        match_expressions: None,
        match_fields: Some(vec![NodeSelectorRequirement {
            key: "metadata.name".into(),
            operator: "In".into(),
            values: Some(vec![node.to_string()]),
        }]),
    };
    let mut a = affinity.unwrap_or_default();
    let na = a.node_affinity.get_or_insert_with(NodeAffinity::default);
    na.required_during_scheduling_ignored_during_execution = Some(NodeSelector {
        node_selector_terms: vec![term],
    });
    a
}

/// `GetTargetNodeName`: the pod's node, or the node its affinity pins it to.
pub fn target_node(p: &Pod) -> Option<&str> {
    let spec = p.spec.as_ref()?;
    if let Some(n) = spec.node_name.as_deref().filter(|n| !n.is_empty()) {
        return Some(n);
    }
    let terms = &spec
        .affinity
        .as_ref()?
        .node_affinity
        .as_ref()?
        .required_during_scheduling_ignored_during_execution
        .as_ref()?
        .node_selector_terms;
    terms.iter().find_map(|t| {
        t.match_fields.iter().flatten().find_map(|r| {
            (r.key == "metadata.name" && r.operator == "In")
                .then(|| {
                    r.values
                        .as_ref()
                        .and_then(|v| v.first())
                        .map(String::as_str)
                })
                .flatten()
        })
    })
}

/// The template with the controller's tolerations added (what every daemon pod gets).
pub fn daemon_template(ds: &DaemonSet) -> PodTemplateSpec {
    let mut t = ds
        .spec
        .as_ref()
        .map(|s| s.template.clone())
        .unwrap_or_default();
    add_daemon_tolerations(t.spec.get_or_insert_with(Default::default));
    t
}

/// `NodeShouldRunDaemonPod`: (should run, should continue running).
pub fn should_run(node: &Node, template: &PodTemplateSpec) -> (bool, bool) {
    // Borrowed, not cloned: a sync asks this for every node, and a Node update for every
    // DaemonSet twice.
    let empty_spec = PodSpec::default();
    let spec = template.spec.as_ref().unwrap_or(&empty_spec);
    let name = node.metadata.name.as_deref().unwrap_or_default();
    let empty_labels = BTreeMap::new();
    let labels: &BTreeMap<String, String> = node.metadata.labels.as_ref().unwrap_or(&empty_labels);
    // nodeSelector and required node affinity (the scheduler's NodeAffinity Filter).
    let selector_ok = spec
        .node_selector
        .iter()
        .flatten()
        .all(|(k, v)| labels.get(k) == Some(v));
    let affinity_ok = spec
        .affinity
        .as_ref()
        .and_then(|a| a.node_affinity.as_ref())
        .and_then(|n| {
            n.required_during_scheduling_ignored_during_execution
                .as_ref()
        })
        .is_none_or(|ns| CompiledNodeSelector::new(ns).matches(labels, name));
    if !selector_ok || !affinity_ok {
        return (false, false);
    }
    let taints: &[Taint] = node
        .spec
        .as_ref()
        .and_then(|s| s.taints.as_deref())
        .unwrap_or_default();
    let tols: &[Toleration] = spec.tolerations.as_deref().unwrap_or_default();
    if find_untolerated_no_schedule(taints, tols).is_none() {
        return (true, true);
    }
    // An untolerated NoExecute taint evicts; a NoSchedule one only keeps new pods off.
    let evicts = taints
        .iter()
        .any(|t| t.effect == "NoExecute" && !tolerations_tolerate(tols, t));
    (false, !evicts)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn node(v: serde_json::Value) -> Node {
        serde_json::from_value(v).unwrap()
    }

    fn template(v: serde_json::Value) -> PodTemplateSpec {
        let mut t: PodTemplateSpec = serde_json::from_value(json!({"spec": v})).unwrap();
        add_daemon_tolerations(t.spec.as_mut().unwrap());
        t
    }

    #[test]
    fn the_controller_tolerates_node_conditions_and_cordoning() {
        let t = template(json!({"containers": []}));
        let keys: Vec<String> = t
            .spec
            .as_ref()
            .unwrap()
            .tolerations
            .iter()
            .flatten()
            .map(|t| format!("{}:{}", t.key.clone().unwrap(), t.effect.clone().unwrap()))
            .collect();
        assert_eq!(
            keys,
            [
                "node.kubernetes.io/not-ready:NoExecute",
                "node.kubernetes.io/unreachable:NoExecute",
                "node.kubernetes.io/disk-pressure:NoSchedule",
                "node.kubernetes.io/memory-pressure:NoSchedule",
                "node.kubernetes.io/pid-pressure:NoSchedule",
                "node.kubernetes.io/unschedulable:NoSchedule",
            ]
        );
        let cordoned = node(
            json!({"metadata": {"name": "n1"}, "spec": {"unschedulable": true,
            "taints": [{"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}]}}),
        );
        assert_eq!(should_run(&cordoned, &t), (true, true));
        let hostnet = template(json!({"containers": [], "hostNetwork": true}));
        assert_eq!(hostnet.spec.unwrap().tolerations.unwrap().len(), 7);
    }

    #[test]
    fn taints_selectors_and_affinity_decide_the_nodes() {
        let cp = node(
            json!({"metadata": {"name": "cp", "labels": {"kubernetes.io/os": "linux"}},
            "spec": {"taints": [{"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule"}]}}),
        );
        assert_eq!(
            should_run(&cp, &template(json!({"containers": []}))),
            (false, true)
        );
        let tolerant = template(json!({"containers": [], "tolerations": [
            {"key": "node-role.kubernetes.io/control-plane", "operator": "Exists", "effect": "NoSchedule"}]}));
        assert_eq!(should_run(&cp, &tolerant), (true, true));
        let evicting = node(json!({"metadata": {"name": "x"},
            "spec": {"taints": [{"key": "dedicated", "value": "db", "effect": "NoExecute"}]}}));
        assert_eq!(should_run(&evicting, &tolerant), (false, false));
        let sel = template(json!({"containers": [], "nodeSelector": {"disk": "ssd"}}));
        assert_eq!(should_run(&cp, &sel), (false, false));
        let pinned = pin_to_node(None, "node-2");
        let pod: Pod =
            serde_json::from_value(json!({"spec": {"containers": [], "affinity": pinned}}))
                .unwrap();
        assert_eq!(target_node(&pod), Some("node-2"));
    }
}
