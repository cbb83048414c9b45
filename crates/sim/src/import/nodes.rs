//! A Node from `kubectl get nodes -o yaml` as a scenario node entry: its name, capacity,
//! allocatable, labels, taints, images and cordon.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::scenario::{NodeGroup, NodeImage, Taint, TaintEffect};

/// Taints the node lifecycle controller and the kubelet put on a node from its conditions
/// (`node.kubernetes.io/not-ready`, `…/unreachable`, `…/disk-pressure`, …): the simulated
/// node's own conditions decide them.
pub const CONDITION_TAINT_PREFIX: &str = "node.kubernetes.io/";

/// The node entry, and notices about what was left out.
pub fn node_group(node: &Value) -> Result<(NodeGroup, Vec<String>), String> {
    let name = node["metadata"]["name"]
        .as_str()
        .filter(|n| !n.is_empty())
        .ok_or("a Node without metadata.name")?
        .to_string();
    let mut notices = Vec::new();
    let capacity = quantities(&node["status"]["capacity"]);
    if capacity.is_empty() {
        notices.push(format!(
            "Node {name}: no status.capacity in the list; kubeloop's defaults (4 CPUs, 8Gi) are used"
        ));
    }
    let allocatable: BTreeMap<String, String> = quantities(&node["status"]["allocatable"])
        .into_iter()
        .filter(|(k, v)| capacity.get(k) != Some(v))
        .collect();
    let mut taints = Vec::new();
    for t in node["spec"]["taints"].as_array().into_iter().flatten() {
        let key = t["key"].as_str().unwrap_or_default().to_string();
        let effect = match t["effect"].as_str() {
            Some("NoSchedule") => TaintEffect::NoSchedule,
            Some("PreferNoSchedule") => TaintEffect::PreferNoSchedule,
            Some("NoExecute") => TaintEffect::NoExecute,
            other => return Err(format!("Node {name}: taint {key} has effect {other:?}")),
        };
        if key.starts_with(CONDITION_TAINT_PREFIX) {
            notices.push(format!(
                "Node {name}: taint {key}:{} left out: it comes from the node's conditions, which kubeloop simulates",
                effect.as_str()
            ));
            continue;
        }
        let value = t["value"].as_str().unwrap_or_default().to_string();
        taints.push(Taint { key, value, effect });
    }
    let images = node["status"]["images"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|i| {
            let names: Vec<String> = i["names"]
                .as_array()?
                .iter()
                .filter_map(|n| n.as_str().map(String::from))
                .collect();
            (!names.is_empty()).then(|| NodeImage {
                names,
                size_bytes: i["sizeBytes"].as_u64().unwrap_or(0),
            })
        })
        .collect();
    let group = NodeGroup {
        name: Some(name),
        capacity,
        allocatable: (!allocatable.is_empty()).then_some(allocatable),
        labels: strings(&node["metadata"]["labels"]),
        taints,
        images,
        unschedulable: node["spec"]["unschedulable"].as_bool().unwrap_or(false),
        ..NodeGroup::default()
    };
    Ok((group, notices))
}

/// A map of quantities (`cpu: "4"`, `memory: 8141492Ki`); numbers are written as strings.
fn quantities(v: &Value) -> BTreeMap<String, String> {
    v.as_object()
        .into_iter()
        .flatten()
        .filter_map(|(k, v)| {
            let q = match v {
                Value::String(s) => s.clone(),
                Value::Number(n) => n.to_string(),
                _ => return None,
            };
            Some((k.clone(), q))
        })
        .collect()
}

/// A string → string map (labels).
fn strings(v: &Value) -> BTreeMap<String, String> {
    v.as_object()
        .into_iter()
        .flatten()
        .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
        .collect()
}
