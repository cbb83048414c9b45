//! SchedulingGates: keeps a pod out of activeQ while `spec.schedulingGates` is not empty.

use crate::scheduler::config::PluginArgs;
use crate::scheduler::framework::{Code, Plugin, PreEnqueuePlugin, Status};
use crate::scheduler::podinfo::PodInfo;

/// The plugin name.
pub const NAME: &str = "SchedulingGates";

/// The SchedulingGates plugin.
pub struct SchedulingGates;

/// Constructor for the registry.
pub fn new(_: Option<&PluginArgs>) -> Result<Box<dyn Plugin>, String> {
    Ok(Box::new(SchedulingGates))
}

impl Plugin for SchedulingGates {
    fn name(&self) -> &'static str {
        NAME
    }
    fn as_pre_enqueue(&self) -> Option<&dyn PreEnqueuePlugin> {
        Some(self)
    }
}

impl PreEnqueuePlugin for SchedulingGates {
    fn pre_enqueue(&self, pod: &PodInfo) -> Status {
        let gates: Vec<&str> = pod
            .pod
            .spec
            .as_ref()
            .and_then(|s| s.scheduling_gates.as_ref())
            .into_iter()
            .flatten()
            .map(|g| g.name.as_str())
            .collect();
        if gates.is_empty() {
            return Status::success();
        }
        // Go prints a []string as "[a b]".
        Status::new(
            Code::UnschedulableAndUnresolvable,
            format!("waiting for scheduling gates: [{}]", gates.join(" ")),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scheduler::plugins::helper::fixtures::*;
    use serde_json::json;

    #[test]
    fn gated_pods_wait() {
        let p = info(pod(
            "p",
            json!({"spec": {"schedulingGates": [{"name": "a"}, {"name": "b"}]}}),
        ));
        let s = SchedulingGates.pre_enqueue(&p);
        assert_eq!(s.code, Code::UnschedulableAndUnresolvable);
        assert_eq!(s.message(), "waiting for scheduling gates: [a b]");
        assert!(SchedulingGates
            .pre_enqueue(&info(pod("q", json!({}))))
            .is_success());
    }
}
