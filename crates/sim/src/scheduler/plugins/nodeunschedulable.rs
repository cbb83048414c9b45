//! NodeUnschedulable: rejects cordoned nodes (`spec.unschedulable`) unless the pod tolerates
//! the `node.kubernetes.io/unschedulable:NoSchedule` taint.

use k8s_openapi::api::core::v1::Taint;

use super::helper::tolerations_tolerate;
use crate::scheduler::config::PluginArgs;
use crate::scheduler::framework::{
    Code, CycleState, EventObjects, FilterPlugin, Plugin, QueueingHint, Status,
};
use crate::scheduler::nodeinfo::NodeInfo;
use crate::scheduler::podinfo::PodInfo;

/// The plugin name.
pub const NAME: &str = "NodeUnschedulable";
/// `ErrReasonUnschedulable`.
pub const ERR_REASON_UNSCHEDULABLE: &str = "node(s) were unschedulable";

/// The NodeUnschedulable plugin.
pub struct NodeUnschedulable;

/// Constructor for the registry.
pub fn new(_: Option<&PluginArgs>) -> Result<Box<dyn Plugin>, String> {
    Ok(Box::new(NodeUnschedulable))
}

impl Plugin for NodeUnschedulable {
    fn name(&self) -> &'static str {
        NAME
    }
    fn queueing_hint(&self, pod: &PodInfo, event: &EventObjects<'_>) -> QueueingHint {
        super::helper::node_now_passes(self, pod, event)
    }
    fn as_filter(&self) -> Option<&dyn FilterPlugin> {
        Some(self)
    }
}

impl FilterPlugin for NodeUnschedulable {
    fn filter(&self, _: &CycleState, pod: &PodInfo, node: &NodeInfo) -> Status {
        if !node.unschedulable {
            return Status::success();
        }
        let taint = Taint {
            key: "node.kubernetes.io/unschedulable".into(),
            effect: "NoSchedule".into(),
            value: None,
            time_added: None,
        };
        if tolerations_tolerate(pod.tolerations(), &taint) {
            return Status::success();
        }
        Status::new(Code::UnschedulableAndUnresolvable, ERR_REASON_UNSCHEDULABLE)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scheduler::plugins::helper::fixtures::*;
    use serde_json::json;

    #[test]
    fn cordoned_nodes_reject_unless_tolerated() {
        let cordoned = NodeInfo::new(node("n", json!({"spec": {"unschedulable": true}})));
        let open = NodeInfo::new(node("n", json!({})));
        let plain = info(pod("p", json!({})));
        let tolerant = info(pod(
            "p",
            json!({"spec": {"tolerations": [
                {"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"}
            ]}}),
        ));
        let st = CycleState::default();
        let s = NodeUnschedulable.filter(&st, &plain, &cordoned);
        assert_eq!(s.code, Code::UnschedulableAndUnresolvable);
        assert_eq!(s.message(), "node(s) were unschedulable");
        assert!(NodeUnschedulable
            .filter(&st, &tolerant, &cordoned)
            .is_success());
        assert!(NodeUnschedulable.filter(&st, &plain, &open).is_success());
    }
}
