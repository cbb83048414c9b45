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
    /// The filter plugins that failed, each with its reason.
    pub failing: Vec<(String, String)>,
    /// Raw score per score plugin, in [`Scheduling::plugins`] order.
    pub raw: Vec<Option<i64>>,
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
    /// Each score plugin's weight, in [`Scheduling::plugins`] order (from the scenario's
    /// KubeSchedulerConfiguration, else upstream's defaults).
    pub weights: Vec<i64>,
}

impl Scheduling {
    /// How many feasible nodes share the best total (the scheduler then picks one of them
    /// at random, from its seeded stream).
    pub fn ties(&self) -> usize {
        let best = self
            .nodes
            .iter()
            .filter(|n| n.passed)
            .map(|n| n.total)
            .max();
        self.nodes
            .iter()
            .filter(|n| n.passed && Some(n.total) == best)
            .count()
    }

    /// The normalized score (0–100) of plugin `i` on a node: the weighted score divided by
    /// the weight.
    pub fn normalized(&self, node: &NodeResult, i: usize) -> Option<i64> {
        let w = self.weights.get(i).copied().unwrap_or(1).max(1);
        node.scores.get(i).copied().flatten().map(|s| s / w)
    }

    /// The best total among feasible nodes (for score bars).
    pub fn best(&self) -> i64 {
        self.nodes
            .iter()
            .filter(|n| n.passed)
            .map(|n| n.total)
            .max()
            .unwrap_or(0)
    }
}

/// Score plugin weights for pods of `scheduler_name`: the scenario's configuration when it
/// parses, else the defaults (a weight of 0 means 1, as upstream defaults it).
pub fn score_weights(world: &World, scheduler_name: &str) -> BTreeMap<String, i64> {
    use kubeloop_sim::scheduler::config;
    let cfg = world
        .observe()
        .config()
        .scheduler_config
        .as_ref()
        .and_then(|v| config::parse(v).ok())
        .or_else(|| config::parse(&Value::Null).ok());
    let mut out = BTreeMap::new();
    let Some(cfg) = cfg else { return out };
    let Some(profile) = cfg
        .profiles
        .iter()
        .find(|p| p.scheduler_name == scheduler_name)
        .or(cfg.profiles.first())
    else {
        return out;
    };
    for set in [&profile.plugins.multi_point, &profile.plugins.score] {
        for r in &set.enabled {
            out.insert(r.name.clone(), i64::from(r.weight.max(1)));
        }
    }
    out
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
    let raws = object(ann, SCORE);
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
            let failing: Vec<(String, String)> = filter
                .get(node)
                .into_iter()
                .flatten()
                .filter_map(|(p, v)| {
                    v.as_str()
                        .filter(|s| *s != "passed")
                        .map(|s| (p.clone(), s.to_string()))
                })
                .collect();
            let reasons: Vec<String> = failing.iter().map(|(_, r)| r.clone()).collect();
            let raw: Vec<Option<i64>> = plugins
                .iter()
                .map(|p| {
                    raws.get(node)
                        .and_then(|m| m.get(p))
                        .and_then(Value::as_i64)
                })
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
                failing,
                raw,
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
        weights: vec![1; plugins.len()],
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

/// Looks a pod up in etcd (the page is omniscient). The scheduling results are read only
/// when `trusted` (the scheduler was the last to write the pod: see
/// [`crate::session::Session::scheduler_wrote`]); the selected node only when the pod is
/// bound to it.
pub fn inspect_pod(world: &World, namespace: &str, name: &str, trusted: bool) -> PodInspection {
    let key = format!(
        "/registry/{}/{namespace}/{name}",
        Kind::Pod.info().etcd_prefix
    );
    let kv = world.observe().etcd().store.get(&key);
    let etcd = kv.map(|kv| EtcdRecord {
        key: key.clone(),
        created: kv.create_revision,
        modified: kv.mod_revision,
        version: kv.version,
    });
    let scheduling = kv.filter(|_| trusted).and_then(|kv| match &*kv.value {
        Object::Pod(p) => {
            let mut s = p.metadata.annotations.as_ref().and_then(scheduling)?;
            let spec = p.spec.as_ref();
            let bound = spec.and_then(|s| s.node_name.clone());
            if s.selected.is_some() && s.selected != bound {
                s.selected = None;
            }
            let sched_name = spec
                .and_then(|s| s.scheduler_name.clone())
                .unwrap_or_else(|| "default-scheduler".into());
            let w = score_weights(world, &sched_name);
            s.weights = s
                .plugins
                .iter()
                .map(|p| w.get(p).copied().unwrap_or(1))
                .collect();
            Some(s)
        }
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
        let i = inspect_pod(s.world(), &pod.namespace, &pod.name, true);
        let etcd = i.etcd.expect("stored");
        assert_eq!(etcd.key, format!("/registry/pods/default/{}", pod.name));
        assert!(etcd.modified > etcd.created && etcd.version > 1, "{etcd:?}");
        assert_eq!(inspect_pod(s.world(), "default", "nope", true).etcd, None);
        assert!(
            s.scheduler_wrote(&pod.namespace, &pod.name),
            "the scheduler annotated it"
        );
        let sched = i.scheduling.expect("annotated by the scheduler");
        assert_eq!(sched.selected.as_deref(), Some(pod.node.as_str()));
        assert_eq!(sched.weights.len(), sched.plugins.len());
        let w = score_weights(s.world(), "default-scheduler");
        assert_eq!(w.get("TaintToleration"), Some(&3));
        assert_eq!(w.get("NodeResourcesFit"), Some(&1));
        // A user's annotate afterwards makes the results untrusted.
        s.submit(&format!(
            "kubectl annotate pod {} kubeloop.dev/selected-node=node-9 --overwrite",
            pod.name
        ));
        s.advance(2_000);
        assert!(!s.scheduler_wrote(&pod.namespace, &pod.name));
    }
}
