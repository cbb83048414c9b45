//! The in-tree plugins of the default profile, one module per plugin, and the registry.

pub mod balancedallocation;
pub mod defaultbinder;
pub mod defaultpreemption;
pub mod helper;
pub mod imagelocality;
pub mod interpodaffinity;
pub mod nodeaffinity;
pub mod nodename;
pub mod nodeports;
pub mod noderesources_fit;
pub mod nodeunschedulable;
pub mod nodevolumelimits;
pub mod podtopologyspread;
pub mod prioritysort;
pub mod resource_allocation;
pub mod schedulinggates;
pub mod tainttoleration;
pub mod volumebinding;
pub mod volumerestrictions;
pub mod volumezone;

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
    r.insert(volumerestrictions::NAME, volumerestrictions::new);
    r.insert(nodevolumelimits::NAME, nodevolumelimits::new);
    r.insert(volumebinding::NAME, volumebinding::new);
    r.insert(volumezone::NAME, volumezone::new);
    r.insert(podtopologyspread::NAME, podtopologyspread::new);
    r.insert(interpodaffinity::NAME, interpodaffinity::new);
    r.insert(defaultpreemption::NAME, defaultpreemption::new);
    r.insert(balancedallocation::NAME, balancedallocation::new);
    r.insert(imagelocality::NAME, imagelocality::new);
    r.insert(defaultbinder::NAME, defaultbinder::new);
    r
}

#[cfg(test)]
#[path = "queueing_hints_tests.rs"]
mod queueing_hints_tests;
