//! What the pod inspector shows: the pod's etcd key and revisions, and the scheduler's
//! results from the pod's annotations (design §3.4: filter verdicts and per-plugin scores
//! per node, and the node it picked).

use std::collections::BTreeMap;

use kubeloop_sim::object::{Kind, Object};
use kubeloop_sim::World;
use serde_json::Value;

/// `kubeloop.dev/filter-result`.
pub const FILTER: &str = "kubeloop.dev/filter-result";
/// `kubeloop.dev/score-result`.
pub const SCORE: &str = "kubeloop.dev/score-result";
/// `kubeloop.dev/finalscore-result`.
pub const FINAL_SCORE: &str = "kubeloop.dev/finalscore-result";
/// `kubeloop.dev/selected-node`.
pub const SELECTED: &str = "kubeloop.dev/selected-node";

/// One node's line in the scheduling table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeResult {
    /// Node name.
    pub node: String,
    /// Whether every filter plugin passed.
    pub passed: bool,
    /// The reasons of the filters that failed (`node(s) had untolerated taint(s)`).
    pub reasons: Vec<String>,
    /// Normalized score × weight per score plugin, in [`Scheduling::plugins`] order.
    pub scores: Vec<Option<i64>>,
    /// The sum of the final scores.
    pub total: i64,
}

/// The scheduler's results for a pod.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Scheduling {
    /// Score plugins, the table's columns.
    pub plugins: Vec<String>,
    /// Nodes evaluated, best total first (filtered-out nodes last).
    pub nodes: Vec<NodeResult>,
    /// The node picked.
    pub selected: Option<String>,
}

fn object(ann: &BTreeMap<String, String>, key: &str) -> BTreeMap<String, BTreeMap<String, Value>> {
    ann.get(key)
        .and_then(|s| serde_json::from_str::<BTreeMap<String, BTreeMap<String, Value>>>(s).ok())
        .unwrap_or_default()
}

/// Reads the §3.4 annotations; `None` when the pod has none.
pub fn scheduling(ann: &BTreeMap<String, String>) -> Option<Scheduling> {
    if ![FILTER, SCORE, FINAL_SCORE, SELECTED]
        .iter()
        .any(|k| ann.contains_key(*k))
    {
        return None;
    }
    let filter = object(ann, FILTER);
    let finals = object(ann, FINAL_SCORE);
    let mut plugins: Vec<String> = finals.values().flat_map(|m| m.keys().cloned()).collect();
    plugins.sort();
    plugins.dedup();
    let mut names: Vec<&String> = filter.keys().chain(finals.keys()).collect();
    names.sort();
    names.dedup();
    let mut nodes: Vec<NodeResult> = names
        .into_iter()
        .map(|node| {
            let reasons: Vec<String> = filter
                .get(node)
                .into_iter()
                .flatten()
                .filter_map(|(_, v)| v.as_str().filter(|s| *s != "passed").map(str::to_string))
                .collect();
            let scores: Vec<Option<i64>> = plugins
                .iter()
                .map(|p| {
                    finals
                        .get(node)
                        .and_then(|m| m.get(p))
                        .and_then(Value::as_i64)
                })
                .collect();
            NodeResult {
                node: node.clone(),
                passed: reasons.is_empty(),
                reasons,
                total: scores.iter().flatten().sum(),
                scores,
            }
        })
        .collect();
    nodes.sort_by(|a, b| {
        b.passed
            .cmp(&a.passed)
            .then(b.total.cmp(&a.total))
            .then(a.node.cmp(&b.node))
    });
    Some(Scheduling {
        plugins,
        nodes,
        selected: ann.get(SELECTED).cloned(),
    })
}

/// The pod's record in etcd: its key, the revision it was created at, the revision of its
/// last write and how many writes it has had.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EtcdRecord {
    /// `/registry/pods/default/nginx-…`.
    pub key: String,
    /// create_revision.
    pub created: u64,
    /// mod_revision (= the object's resourceVersion).
    pub modified: u64,
    /// version: writes since creation.
    pub version: u64,
}

/// What the inspector shows for a pod.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PodInspection {
    /// The etcd record, if the pod is stored.
    pub etcd: Option<EtcdRecord>,
    /// The scheduler's results, if annotated.
    pub scheduling: Option<Scheduling>,
}

/// Looks a pod up in etcd (the page is omniscient).
pub fn inspect_pod(world: &World, namespace: &str, name: &str) -> PodInspection {
    let key = format!(
        "/registry/{}/{namespace}/{name}",
        Kind::Pod.info().etcd_prefix
    );
    let kv = world.etcd.store.get(&key);
    let etcd = kv.map(|kv| EtcdRecord {
        key: key.clone(),
        created: kv.create_revision,
        modified: kv.mod_revision,
        version: kv.version,
    });
    let scheduling = kv.and_then(|kv| match &*kv.value {
        Object::Pod(p) => p.metadata.annotations.as_ref().and_then(scheduling),
        _ => None,
    });
    PodInspection { etcd, scheduling }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasm_bindgen_test::wasm_bindgen_test;

    #[wasm_bindgen_test(unsupported = test)]
    fn should_read_the_scheduling_annotations() {
        let ann: BTreeMap<String, String> = [
            (FILTER, r#"{"node-1": {"NodeResourcesFit": "passed", "TaintToleration": "node(s) had untolerated taint(s)"}, "node-2": {"NodeResourcesFit": "passed"}, "node-3": {"NodeResourcesFit": "passed"}}"#),
            (SCORE, r#"{"node-2": {"NodeResourcesFit": 57, "ImageLocality": 0}, "node-3": {"NodeResourcesFit": 60, "ImageLocality": 0}}"#),
            (FINAL_SCORE, r#"{"node-2": {"NodeResourcesFit": 57, "ImageLocality": 0}, "node-3": {"NodeResourcesFit": 60, "ImageLocality": 10}}"#),
            (SELECTED, "node-3"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        let s = scheduling(&ann).expect("annotated");
        assert_eq!(s.plugins, ["ImageLocality", "NodeResourcesFit"]);
        let order: Vec<&str> = s.nodes.iter().map(|n| n.node.as_str()).collect();
        assert_eq!(
            order,
            ["node-3", "node-2", "node-1"],
            "best first, filtered out last"
        );
        assert_eq!(s.nodes[0].total, 70);
        assert_eq!(s.nodes[2].reasons, ["node(s) had untolerated taint(s)"]);
        assert!(!s.nodes[2].passed);
        assert_eq!(s.selected.as_deref(), Some("node-3"));
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn should_tolerate_missing_or_broken_annotations() {
        assert_eq!(scheduling(&BTreeMap::new()), None);
        let broken: BTreeMap<String, String> = [(FILTER.to_string(), "{not json".to_string())]
            .into_iter()
            .collect();
        assert_eq!(scheduling(&broken), Some(Scheduling::default()));
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn should_find_a_pod_in_etcd() {
        let mut s = crate::session::Session::new(crate::examples::default_scenario());
        s.run_button("kubectl apply -f nginx-deploy.yaml");
        s.advance(10_000);
        let pod = s
            .view()
            .nodes
            .iter()
            .flat_map(|n| n.pods.clone())
            .next()
            .expect("a pod");
        let i = inspect_pod(s.world(), &pod.namespace, &pod.name);
        let etcd = i.etcd.expect("stored");
        assert_eq!(etcd.key, format!("/registry/pods/default/{}", pod.name));
        assert!(etcd.modified > etcd.created && etcd.version > 1, "{etcd:?}");
        assert_eq!(inspect_pod(s.world(), "default", "nope").etcd, None);
    }
}
