//! NodeName: a pod that names a node (`spec.nodeName`) fits only that node.

use crate::scheduler::config::PluginArgs;
use crate::scheduler::framework::{Code, CycleState, FilterPlugin, Plugin, Status};
use crate::scheduler::nodeinfo::NodeInfo;
use crate::scheduler::podinfo::PodInfo;

/// The plugin name.
pub const NAME: &str = "NodeName";
/// `ErrReason`.
pub const ERR_REASON: &str = "node(s) didn't match the requested node name";

/// The NodeName plugin.
pub struct NodeName;

/// Constructor for the registry.
pub fn new(_: Option<&PluginArgs>) -> Result<Box<dyn Plugin>, String> {
    Ok(Box::new(NodeName))
}

impl Plugin for NodeName {
    fn name(&self) -> &'static str {
        NAME
    }
    fn as_filter(&self) -> Option<&dyn FilterPlugin> {
        Some(self)
    }
}

impl FilterPlugin for NodeName {
    fn filter(&self, _: &CycleState, pod: &PodInfo, node: &NodeInfo) -> Status {
        if pod.node_name.is_empty() || pod.node_name == node.name {
            return Status::success();
        }
        Status::new(Code::UnschedulableAndUnresolvable, ERR_REASON)
    }
}
