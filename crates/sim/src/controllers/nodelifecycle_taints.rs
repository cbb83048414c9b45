//! The taints the node lifecycle controller owns: NoSchedule taints from node conditions
//! and `spec.unschedulable` (`doNoScheduleTaintingPass`), and the NoExecute not-ready /
//! unreachable taints that drive taint-based eviction.

use k8s_openapi::api::core::v1::{Node, Taint};

use crate::time::{k8s_time, Time};

/// Taint for NotReady nodes.
pub const NOT_READY: &str = "node.kubernetes.io/not-ready";
/// Taint for nodes that stopped reporting.
pub const UNREACHABLE: &str = "node.kubernetes.io/unreachable";
/// Taint for cordoned nodes (`v1.TaintNodeUnschedulable`).
pub const UNSCHEDULABLE: &str = "node.kubernetes.io/unschedulable";

/// `nodeConditionToTaintKeyStatusMap`: condition type and status → NoSchedule taint key.
const CONDITION_TAINTS: &[(&str, &str, &str)] = &[
    ("Ready", "False", NOT_READY),
    ("Ready", "Unknown", UNREACHABLE),
    (
        "MemoryPressure",
        "True",
        "node.kubernetes.io/memory-pressure",
    ),
    ("DiskPressure", "True", "node.kubernetes.io/disk-pressure"),
    (
        "NetworkUnavailable",
        "True",
        "node.kubernetes.io/network-unavailable",
    ),
    ("PIDPressure", "True", "node.kubernetes.io/pid-pressure"),
];

/// Whether the controller owns this taint (and so may add or remove it).
fn owned(t: &Taint) -> bool {
    match t.effect.as_str() {
        "NoSchedule" => {
            t.key == UNSCHEDULABLE || CONDITION_TAINTS.iter().any(|(_, _, k)| *k == t.key)
        }
        "NoExecute" => t.key == NOT_READY || t.key == UNREACHABLE,
        _ => false,
    }
}

/// The (key, effect) pairs the controller wants on the node. `ready` is the Ready status
/// the controller acts on (Unknown once it has marked a silent node).
fn wanted(node: &Node, ready: &str) -> Vec<(&'static str, &'static str)> {
    let conds = node
        .status
        .as_ref()
        .and_then(|s| s.conditions.as_deref())
        .unwrap_or_default();
    let mut want = Vec::new();
    for c in conds {
        let status = if c.type_ == "Ready" {
            ready
        } else {
            c.status.as_str()
        };
        if let Some((_, _, key)) = CONDITION_TAINTS
            .iter()
            .find(|(t, s, _)| *t == c.type_ && *s == status)
        {
            want.push((*key, "NoSchedule"));
        }
    }
    if node.spec.as_ref().and_then(|s| s.unschedulable) == Some(true) {
        want.push((UNSCHEDULABLE, "NoSchedule"));
    }
    match ready {
        "False" => want.push((NOT_READY, "NoExecute")),
        "Unknown" => want.push((UNREACHABLE, "NoExecute")),
        _ => {}
    }
    want
}

/// The node's taints after the controller's passes, or None when nothing changes. Taints
/// it does not own stay in place; its stale ones are removed and missing ones appended
/// with `timeAdded` (as `SwapNodeControllerTaint` does).
pub fn reconcile(node: &Node, ready: &str, now: Time) -> Option<Vec<Taint>> {
    let existing = node
        .spec
        .as_ref()
        .and_then(|s| s.taints.clone())
        .unwrap_or_default();
    let want = wanted(node, ready);
    let mut out: Vec<Taint> = existing
        .iter()
        .filter(|t| !owned(t) || want.contains(&(t.key.as_str(), t.effect.as_str())))
        .cloned()
        .collect();
    for (key, effect) in want {
        if !out.iter().any(|t| t.key == key && t.effect == effect) {
            out.push(Taint {
                key: key.into(),
                effect: effect.into(),
                value: None,
                time_added: Some(k8s_time(now)),
            });
        }
    }
    (out != existing).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn node(v: serde_json::Value) -> Node {
        serde_json::from_value(v).unwrap()
    }

    fn keys(t: &[Taint]) -> Vec<String> {
        t.iter()
            .map(|t| format!("{}:{}", t.key, t.effect))
            .collect()
    }

    fn ready_node(unschedulable: bool, taints: serde_json::Value) -> Node {
        node(json!({"metadata": {"name": "n"},
            "spec": {"unschedulable": unschedulable, "taints": taints},
            "status": {"conditions": [{"type": "Ready", "status": "True"}]}}))
    }

    #[test]
    fn cordoned_node_gets_the_unschedulable_taint() {
        let n = ready_node(true, json!([]));
        let t = reconcile(&n, "True", 0).expect("a change");
        assert_eq!(keys(&t), ["node.kubernetes.io/unschedulable:NoSchedule"]);
        assert!(t[0].time_added.is_some());
    }

    #[test]
    fn uncordoned_node_loses_it_and_keeps_user_taints() {
        let n = ready_node(
            false,
            json!([{"key": "dedicated", "value": "db", "effect": "NoSchedule"},
                   {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}]),
        );
        let t = reconcile(&n, "True", 0).expect("a change");
        assert_eq!(keys(&t), ["dedicated:NoSchedule"]);
    }

    #[test]
    fn nothing_to_do_is_none() {
        let n = ready_node(
            true,
            json!([{"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}]),
        );
        assert_eq!(reconcile(&n, "True", 0), None);
    }

    #[test]
    fn unreachable_replaces_not_ready_with_both_effects() {
        let n = ready_node(
            false,
            json!([{"key": NOT_READY, "effect": "NoSchedule"}, {"key": NOT_READY, "effect": "NoExecute"}]),
        );
        let t = reconcile(&n, "Unknown", 0).expect("a change");
        assert_eq!(
            keys(&t),
            [
                "node.kubernetes.io/unreachable:NoSchedule",
                "node.kubernetes.io/unreachable:NoExecute"
            ]
        );
    }

    #[test]
    fn pressure_conditions_taint_no_schedule() {
        let n = node(json!({"metadata": {"name": "n"}, "status": {"conditions": [
            {"type": "DiskPressure", "status": "True"}, {"type": "Ready", "status": "True"}]}}));
        let t = reconcile(&n, "True", 0).expect("a change");
        assert_eq!(keys(&t), ["node.kubernetes.io/disk-pressure:NoSchedule"]);
    }
}
