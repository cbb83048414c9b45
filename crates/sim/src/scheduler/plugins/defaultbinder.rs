//! DefaultBinder: binds the pod by posting a `Binding` (pods/binding subresource) to the
//! apiserver.

use crate::scheduler::config::PluginArgs;
use crate::scheduler::framework::{BindPlugin, BindingWrites, CycleState, Plugin, Status};
use crate::scheduler::podinfo::PodInfo;

/// The plugin name.
pub const NAME: &str = "DefaultBinder";

/// The DefaultBinder plugin.
pub struct DefaultBinder;

/// Constructor for the registry.
pub fn new(_: Option<&PluginArgs>) -> Result<Box<dyn Plugin>, String> {
    Ok(Box::new(DefaultBinder))
}

impl Plugin for DefaultBinder {
    fn name(&self) -> &'static str {
        NAME
    }
    fn as_bind(&self) -> Option<&dyn BindPlugin> {
        Some(self)
    }
}

impl BindPlugin for DefaultBinder {
    fn bind(
        &self,
        _: &CycleState,
        pod: &PodInfo,
        node: &str,
        writes: &mut BindingWrites,
    ) -> Status {
        writes.binding(NAME, pod, node);
        Status::success()
    }
}
