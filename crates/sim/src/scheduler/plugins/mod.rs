//! The in-tree plugins of the default profile, one module per plugin, and the registry.

pub mod balancedallocation;
pub mod defaultbinder;
pub mod helper;
pub mod imagelocality;
pub mod nodeaffinity;
pub mod nodename;
pub mod nodeports;
pub mod noderesources_fit;
pub mod nodeunschedulable;
pub mod prioritysort;
pub mod resource_allocation;
pub mod schedulinggates;
pub mod tainttoleration;

use super::runtime::Registry;

/// `NewInTreeRegistry`: every in-tree plugin by name.
pub fn in_tree_registry() -> Registry {
    let mut r = Registry::new();
    r.insert(schedulinggates::NAME, schedulinggates::new);
    r.insert(prioritysort::NAME, prioritysort::new);
    r.insert(nodeunschedulable::NAME, nodeunschedulable::new);
    r.insert(nodename::NAME, nodename::new);
    r.insert(tainttoleration::NAME, tainttoleration::new);
    r.insert(nodeaffinity::NAME, nodeaffinity::new);
    r.insert(nodeports::NAME, nodeports::new);
    r.insert(noderesources_fit::NAME, noderesources_fit::new);
    r.insert(balancedallocation::NAME, balancedallocation::new);
    r.insert(imagelocality::NAME, imagelocality::new);
    r.insert(defaultbinder::NAME, defaultbinder::new);
    r
}
