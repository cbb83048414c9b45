//! PrioritySort: orders activeQ by pod priority (higher first), then by the time the pod
//! entered the queue.

use crate::scheduler::config::PluginArgs;
use crate::scheduler::framework::{Plugin, QueueSortPlugin};
use crate::scheduler::queue::QueuedPodInfo;

/// The plugin name.
pub const NAME: &str = "PrioritySort";

/// The PrioritySort plugin.
pub struct PrioritySort;

/// Constructor for the registry.
pub fn new(_: Option<&PluginArgs>) -> Result<Box<dyn Plugin>, String> {
    Ok(Box::new(PrioritySort))
}

impl Plugin for PrioritySort {
    fn name(&self) -> &'static str {
        NAME
    }
    fn as_queue_sort(&self) -> Option<&dyn QueueSortPlugin> {
        Some(self)
    }
}

impl QueueSortPlugin for PrioritySort {
    fn less(&self, a: &QueuedPodInfo, b: &QueuedPodInfo) -> bool {
        let (p1, p2) = (a.pod_info.priority, b.pod_info.priority);
        p1 > p2 || (p1 == p2 && a.timestamp < b.timestamp)
    }
}
