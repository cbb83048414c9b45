//! Import from a real cluster: `kubectl get nodes,pods,deploy,rs,svc,pvc,pv,sc,pdb,
//! priorityclasses -A -o yaml` (a v1 List) as a scenario whose cluster matches it
//! (issue 12, item 5), so "where would this pod go and why" is asked of real data.
//!
//! Nodes become `spec.nodes` (name, capacity, allocatable, labels, taints, images,
//! cordon). Other objects are cleaned of what the cluster wrote ([`clean`]) and become
//! files applied at 0s: cluster-scoped first, then configuration and Services, then bare
//! pods (bound ones keep `spec.nodeName`, so they land where they are, before anything
//! is scheduled), then workloads. Objects a controller owns are left to their owner.
//! Every object is applied once in a throwaway world ([`check`]) so one the apiserver
//! refuses is reported with its error and the rest is imported.

mod check;
mod clean;
mod nodes;

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use crate::scenario::{parse_scenario, Scenario, Step};

/// The largest list [`from_cluster`] reads (a dump of a few thousand objects).
pub const MAX_INPUT_BYTES: usize = 32 << 20;

/// What an import gives.
#[derive(Clone, Debug, PartialEq)]
pub struct ImportResult {
    /// The scenario: the cluster's nodes, its objects as files, steps that apply them.
    pub scenario: Scenario,
    /// Objects not imported because kubeloop does not import their kind
    /// (`EndpointSlice default/web-abcde (discovery.k8s.io/v1)`).
    pub skipped: Vec<String>,
    /// What was changed or left to kubeloop (Secret data dropped, owned pods left to
    /// their owners, objects kubeloop's cluster already has, …).
    pub notices: Vec<String>,
    /// Objects the apiserver refused, each with its error; they are not in the scenario.
    pub errors: Vec<String>,
}

/// The input could not be read as a list of objects at all.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ImportError {
    /// 1-based line (0 when not known).
    pub line: usize,
    /// 1-based column (0 when not known).
    pub column: usize,
    /// What is wrong.
    pub message: String,
}

impl std::fmt::Display for ImportError {
    /// `<line>:<column>: <message>`, or the message alone without a place.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.line == 0 {
            write!(f, "{}", self.message)
        } else {
            write!(f, "{}:{}: {}", self.line, self.column, self.message)
        }
    }
}

impl std::error::Error for ImportError {}

/// The kinds imported, in the order their files apply them, and the file each goes to.
const KINDS: &[(&str, &str)] = &[
    ("Namespace", "cluster.yaml"),
    ("PriorityClass", "cluster.yaml"),
    ("StorageClass", "cluster.yaml"),
    ("PersistentVolume", "cluster.yaml"),
    ("ServiceAccount", "config.yaml"),
    ("ConfigMap", "config.yaml"),
    ("Secret", "config.yaml"),
    ("PersistentVolumeClaim", "config.yaml"),
    ("Service", "config.yaml"),
    ("PodDisruptionBudget", "config.yaml"),
    ("Pod", "pods.yaml"),
    ("ReplicaSet", "workloads.yaml"),
    ("Deployment", "workloads.yaml"),
    ("StatefulSet", "workloads.yaml"),
    ("DaemonSet", "workloads.yaml"),
];

/// The files in the order the steps apply them.
const FILES: &[&str] = &["cluster.yaml", "config.yaml", "pods.yaml", "workloads.yaml"];

/// Namespaces every cluster has: not created by the import.
const BUILTIN_NAMESPACES: &[&str] = &["default", "kube-system", "kube-public", "kube-node-lease"];

/// `Kind namespace/name` or `Kind name`.
fn describe(obj: &Value) -> String {
    let kind = obj["kind"].as_str().unwrap_or("<no kind>");
    let name = obj["metadata"]["name"].as_str().unwrap_or("<no name>");
    match obj["metadata"]["namespace"].as_str() {
        Some(ns) => format!("{kind} {ns}/{name}"),
        None => format!("{kind} {name}"),
    }
}

/// Reads the list: a `kind: List` (as `kubectl get -o yaml` prints), a single object, or
/// a stream of YAML documents.
fn read_items(yaml: &str) -> Result<Vec<Value>, ImportError> {
    if yaml.len() > MAX_INPUT_BYTES {
        return Err(ImportError {
            line: 0,
            column: 0,
            message: format!("the list is more than {} bytes", MAX_INPUT_BYTES),
        });
    }
    let mut items = Vec::new();
    for doc in serde_yaml::Deserializer::from_str(yaml.trim_start_matches('\u{feff}')) {
        let v: Value = serde::Deserialize::deserialize(doc).map_err(|e| {
            let (line, column) = e.location().map_or((0, 0), |l| (l.line(), l.column()));
            ImportError {
                line,
                column,
                message: e.to_string(),
            }
        })?;
        match v {
            Value::Null => {}
            Value::Object(_) if v["kind"].as_str().is_some_and(|k| k.ends_with("List")) => {
                match v["items"].as_array() {
                    Some(a) => items.extend(a.iter().cloned()),
                    None if v["items"].is_null() => {}
                    None => return Err(err("items: must be a list of objects")),
                }
            }
            Value::Object(_) => items.push(v),
            _ => return Err(err("expected a List of objects (kubectl get … -o yaml)")),
        }
    }
    Ok(items)
}

fn err(message: &str) -> ImportError {
    ImportError {
        line: 0,
        column: 0,
        message: message.to_string(),
    }
}

/// Imports a cluster from what `kubectl get nodes,pods,deploy,rs,svc,pvc,pv,sc,pdb,
/// priorityclasses -A -o yaml` prints. Bad objects are reported in the result, not
/// returned as an error; only input that is not YAML objects at all is an error.
pub fn from_cluster(yaml: &str) -> Result<ImportResult, ImportError> {
    let items = read_items(yaml)?;
    let mut r = ImportResult {
        scenario: Scenario::default(),
        skipped: Vec::new(),
        notices: Vec::new(),
        errors: Vec::new(),
    };
    r.scenario.metadata.name = "imported-cluster".into();
    r.scenario.metadata.annotations.insert(
        "kubeloop.dev/description".into(),
        "A cluster imported from kubectl get -o yaml: its nodes, and its workloads applied again."
            .into(),
    );
    r.scenario.metadata.annotations.insert(
        "kubeloop.dev/description-zh".into(),
        "从 kubectl get -o yaml 导入的集群：它的节点，以及重新应用的工作负载。".into(),
    );
    import_nodes(&items, &mut r);
    let objects = select_objects(&items, &mut r);
    let files = check_objects(objects, &mut r);
    for name in FILES {
        if let Some(docs) = files.get(*name) {
            r.scenario
                .spec
                .files
                .insert(name.to_string(), docs.join("---\n"));
            r.scenario
                .spec
                .steps
                .push(step(0, &format!("kubectl apply -f {name}")));
        }
    }
    r.scenario
        .spec
        .steps
        .push(step(30_000, "kubectl get nodes"));
    r.scenario
        .spec
        .steps
        .push(step(30_000, "kubectl get pods -A -o wide"));
    let size = r.scenario.to_yaml().len();
    if size > crate::envelope::MAX_SCENARIO_BYTES {
        r.errors.push(format!(
            "the imported scenario is {size} bytes, more than the {} a scenario may be (kubeloop's envelope): import fewer objects",
            crate::envelope::MAX_SCENARIO_BYTES
        ));
    }
    Ok(r)
}

fn step(at_ms: crate::time::Time, run: &str) -> Step {
    Step {
        at: crate::time::format_duration(at_ms),
        at_ms,
        run: run.to_string(),
    }
}

/// Nodes, each checked as the scenario parser checks a node entry.
fn import_nodes(items: &[Value], r: &mut ImportResult) {
    for item in items.iter().filter(|i| i["kind"] == "Node") {
        let (group, notices) = match nodes::node_group(item) {
            Ok(g) => g,
            Err(e) => {
                r.errors.push(e);
                continue;
            }
        };
        let name = group.name.clone().unwrap_or_default();
        if r.scenario.spec.nodes.iter().any(|n| n.name == group.name) {
            r.errors.push(format!("Node {name}: listed twice"));
            continue;
        }
        let mut one = Scenario::default();
        one.spec.nodes.push(group.clone());
        if let Err(errs) = parse_scenario(&one.to_yaml()) {
            let msgs: Vec<String> = errs
                .into_iter()
                .map(|e| e.message.replace("spec.nodes[0].", ""))
                .collect();
            r.errors.push(format!("Node {name}: {}", msgs.join("; ")));
            continue;
        }
        r.notices.extend(notices);
        r.scenario.spec.nodes.push(group);
    }
    if r.scenario.spec.nodes.is_empty() {
        r.notices
            .push("the list has no Nodes: the scenario gets kubeloop's three default nodes".into());
    }
}

/// The objects to recreate, cleaned, in apply order; the rest skipped or noted.
fn select_objects(items: &[Value], r: &mut ImportResult) -> Vec<(String, Value)> {
    let present: BTreeSet<(String, String, String)> = items.iter().map(identity).collect();
    let nodes: BTreeSet<String> = r
        .scenario
        .spec
        .nodes
        .iter()
        .filter_map(|n| n.name.clone())
        .collect();
    let mut left_to_owner: BTreeMap<String, usize> = BTreeMap::new();
    let mut absent_owner: BTreeMap<String, usize> = BTreeMap::new();
    let mut static_pods: BTreeMap<String, usize> = BTreeMap::new();
    let mut out: Vec<(usize, String, Value)> = Vec::new();
    for item in items {
        let kind = item["kind"].as_str().unwrap_or_default();
        if kind == "Node" {
            continue;
        }
        let what = describe(item);
        let Some(order) = KINDS.iter().position(|(k, _)| *k == kind) else {
            let api = item["apiVersion"].as_str().unwrap_or("?");
            r.skipped.push(format!("{what} ({api})"));
            continue;
        };
        if let Some(owner) = controller(item) {
            if owner.0 == "Node" {
                // A mirror pod: the kubelet runs it from a static manifest on that node.
                *static_pods.entry(owner.1).or_default() += 1;
                continue;
            }
            let ns = item["metadata"]["namespace"].as_str().unwrap_or_default();
            let key = (owner.0.clone(), ns.to_string(), owner.1.clone());
            let key = if present.contains(&key) {
                key
            } else {
                (owner.0.clone(), String::new(), owner.1.clone())
            };
            let tally = if present.contains(&key) {
                &mut left_to_owner
            } else {
                &mut absent_owner
            };
            *tally.entry(format!("{} {}", owner.0, owner.1)).or_default() += 1;
            continue;
        }
        let bound = item["spec"]["nodeName"].as_str().filter(|n| !n.is_empty());
        if let Some(node) = bound.filter(|n| !nodes.contains(*n)) {
            r.notices.push(format!(
                "{what} is bound to node {node}, which is not among the imported nodes: it stays Pending"
            ));
        }
        let mut obj = item.clone();
        r.notices.extend(clean::clean(&mut obj, &what));
        out.push((order, what, obj));
    }
    if !left_to_owner.is_empty() {
        let n: usize = left_to_owner.values().sum();
        r.notices.push(format!(
            "{n} object(s) owned by a controller in the list (pods of ReplicaSets, ReplicaSets of Deployments) are not recreated separately: their owners make them again"
        ));
    }
    for (node, n) in static_pods {
        r.notices.push(format!(
            "{n} static pod(s) of Node {node} (mirror pods) are not recreated: kubeloop runs its own control plane"
        ));
    }
    for (owner, n) in absent_owner {
        r.notices.push(format!(
            "{n} object(s) owned by {owner}, which the list does not include, are not recreated"
        ));
    }
    out.sort_by_key(|(order, _, _)| *order);
    out.into_iter().map(|(_, w, o)| (w, o)).collect()
}

/// (kind, namespace, name).
fn identity(v: &Value) -> (String, String, String) {
    let s = |x: &Value| x.as_str().unwrap_or_default().to_string();
    (
        s(&v["kind"]),
        s(&v["metadata"]["namespace"]),
        s(&v["metadata"]["name"]),
    )
}

/// The controller owner reference's (kind, name), if the object has one.
fn controller(v: &Value) -> Option<(String, String)> {
    v["metadata"]["ownerReferences"]
        .as_array()?
        .iter()
        .find(|o| o["controller"].as_bool() == Some(true))
        .map(|o| {
            let s = |x: &Value| x.as_str().unwrap_or_default().to_string();
            (s(&o["kind"]), s(&o["name"]))
        })
}

/// Applies each object in a world with the imported nodes: namespaces the objects need
/// are created first; objects kubeloop's cluster already has are left out, refused ones
/// reported. Returns file name → YAML documents.
fn check_objects(
    objects: Vec<(String, Value)>,
    r: &mut ImportResult,
) -> BTreeMap<String, Vec<String>> {
    let mut kinds: Vec<(String, String)> = objects
        .iter()
        .map(|(_, o)| {
            let s = |v: &Value| v.as_str().unwrap_or_default().to_string();
            (s(&o["kind"]), s(&o["apiVersion"]))
        })
        .chain([("Namespace".to_string(), "v1".to_string())])
        .collect();
    kinds.sort();
    kinds.dedup();
    let mut checker = check::Checker::new(&r.scenario, &kinds);
    let mut files: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let listed: BTreeSet<String> = objects
        .iter()
        .filter(|(_, o)| o["kind"] == "Namespace")
        .filter_map(|(_, o)| o["metadata"]["name"].as_str().map(String::from))
        .collect();
    let needed: BTreeSet<String> = objects
        .iter()
        .filter_map(|(_, o)| o["metadata"]["namespace"].as_str().map(String::from))
        .filter(|ns| !BUILTIN_NAMESPACES.contains(&ns.as_str()) && !listed.contains(ns))
        .collect();
    let namespaces = needed.into_iter().map(|ns| {
        let obj =
            serde_json::json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}});
        (format!("Namespace {ns}"), obj)
    });
    let mut already = Vec::new();
    for (what, obj) in namespaces.chain(objects) {
        if checker.exists(&obj) {
            already.push(what);
            continue;
        }
        let yaml = serde_yaml::to_string(&obj).unwrap_or_default();
        match checker.apply(&obj, &yaml) {
            Ok(()) => {
                let kind = obj["kind"].as_str().unwrap_or_default();
                let file = KINDS
                    .iter()
                    .find(|(k, _)| *k == kind)
                    .map_or("cluster.yaml", |(_, f)| f);
                files.entry(file.to_string()).or_default().push(yaml);
            }
            Err(e) => r.errors.push(format!("{what}: {e}")),
        }
    }
    if !already.is_empty() {
        r.notices.push(format!(
            "kubeloop's cluster already has these, so they are not applied again: {}",
            already.join(", ")
        ));
    }
    files
}

#[cfg(test)]
mod tests;
