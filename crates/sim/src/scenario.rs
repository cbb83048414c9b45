//! The scenario file (design §3.1): the cluster, the files and the timed commands of a run.
//!
//! [`parse_scenario`] reads YAML or JSON and returns either a [`Scenario`] or every problem
//! found, each placed at a line and column. The types keep what the file says (a node
//! group stays `namePrefix` + `count`), so [`Scenario::to_yaml`] writes back a file that
//! reads the same; [`Scenario::nodes`] expands groups and applies defaults.
//!
//! Fields beyond design §3.1, all optional: `spec.proxyMode` (`iptables` | `ipvs`),
//! `spec.schedulingAnnotations` (default true), `spec.startTime` (RFC 3339),
//! `spec.until` (Go duration), and per node group `allocatable` and `unschedulable`.

use std::collections::BTreeMap;
use std::fmt;

use serde::Serialize;
use serde_json::Value;

use crate::time::Time;

#[path = "scenario_parse.rs"]
mod parse;

pub use parse::{parse_quantity_milli, MAX_NODES};

/// The scenario file's `apiVersion`.
pub const API_VERSION: &str = "kubeloop.dev/v1alpha1";
/// The scenario file's `kind`.
pub const KIND: &str = "Scenario";
/// `spec.seed` when the file does not set it.
pub const DEFAULT_SEED: u64 = 1;
/// How many nodes a scenario without `spec.nodes` gets.
pub const DEFAULT_NODE_COUNT: u32 = 3;
/// Capacity for resources a node group leaves out (and for the default nodes): 4 CPUs,
/// 8Gi memory, 110 pods (kubelet's maxPods default) and 100Gi of ephemeral storage.
pub const DEFAULT_CAPACITY: &[(&str, &str)] = &[
    ("cpu", "4"),
    ("ephemeral-storage", "100Gi"),
    ("memory", "8Gi"),
    ("pods", "110"),
];

/// A scenario: a cluster, files for the terminal's working directory and timed commands.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Scenario {
    /// Always [`API_VERSION`].
    pub api_version: String,
    /// Always [`KIND`].
    pub kind: String,
    /// Name and annotations (`kubeloop.dev/description`).
    pub metadata: ScenarioMeta,
    /// Everything else.
    pub spec: ScenarioSpec,
}

/// `metadata`.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct ScenarioMeta {
    /// The scenario's name ("" if unset).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub name: String,
    /// Labels.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: BTreeMap<String, String>,
    /// Annotations, e.g. `kubeloop.dev/description`.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub annotations: BTreeMap<String, String>,
}

/// `spec`.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ScenarioSpec {
    /// Seed of the world's PRNG (default 1).
    pub seed: u64,
    /// Node groups as written; empty means three default nodes (see [`Scenario::nodes`]).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub nodes: Vec<NodeGroup>,
    /// A KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1), unchecked here.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scheduler_configuration: Option<Value>,
    /// The terminal's working directory: file name → contents.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub files: BTreeMap<String, String>,
    /// Terminal commands at virtual times, in file order (see [`steps_in_order`]).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub steps: Vec<Step>,
    /// Extension: kube-proxy's mode on every node (default iptables).
    #[serde(skip_serializing_if = "ProxyMode::is_default")]
    pub proxy_mode: ProxyMode,
    /// Extension: whether the scheduler writes the `kubeloop.dev/*-result` annotations of
    /// design §3.4 (default true).
    #[serde(skip_serializing_if = "is_true")]
    pub scheduling_annotations: bool,
    /// Extension: the wall-clock instant virtual time 0 stands for, RFC 3339
    /// (default: the engine's epoch, 2026-01-01T00:00:00Z).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub start_time: Option<String>,
    /// Extension: how long to run when the CLI gets no `--until` (Go duration as written).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub until: Option<String>,
    /// Extension: add-ons installed at time 0 the way their docs install them
    /// (`ingress-nginx`: kind's `deploy-ingress-nginx.yaml`; `cloud-provider-kind`: the host's
    /// load-balancer provider).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub addons: Vec<String>,
    /// Extension: the lesson this scenario teaches (design §6.20).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lesson: Option<crate::lesson::Lesson>,
}

fn is_true(b: &bool) -> bool {
    *b
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// kube-proxy's mode.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ProxyMode {
    /// iptables rules (`iptables-save`).
    #[default]
    Iptables,
    /// IPVS virtual servers (`ipvsadm -Ln`).
    Ipvs,
    /// nftables (`nft list ruleset`).
    Nftables,
}

impl ProxyMode {
    fn is_default(&self) -> bool {
        *self == ProxyMode::Iptables
    }

    /// `iptables`, `ipvs` or `nftables`.
    pub fn as_str(self) -> &'static str {
        match self {
            ProxyMode::Iptables => "iptables",
            ProxyMode::Ipvs => "ipvs",
            ProxyMode::Nftables => "nftables",
        }
    }
}

/// One entry of `spec.nodes`: a single node (`name`) or a group (`namePrefix` + `count`,
/// named `<prefix>1` … `<prefix><count>`).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeGroup {
    /// The node's name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Prefix of the group's node names.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name_prefix: Option<String>,
    /// How many nodes the group has (≥ 1).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub count: Option<u32>,
    /// Resource name → quantity as written (`cpu: "4"`, `memory: 8Gi`, `nvidia.com/gpu: "1"`).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub capacity: BTreeMap<String, String>,
    /// Extension: allocatable quantities; resources left out are equal to capacity.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub allocatable: Option<BTreeMap<String, String>>,
    /// Node labels.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: BTreeMap<String, String>,
    /// Node taints.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub taints: Vec<Taint>,
    /// Images already pulled on the node.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub images: Vec<NodeImage>,
    /// Extension: the node starts cordoned (`spec.unschedulable`).
    #[serde(skip_serializing_if = "is_false")]
    pub unschedulable: bool,
}

/// A node taint.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Taint {
    /// Taint key.
    pub key: String,
    /// Taint value ("" if none).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub value: String,
    /// `NoSchedule`, `PreferNoSchedule` or `NoExecute`.
    pub effect: TaintEffect,
}

/// What a taint does to pods that don't tolerate it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub enum TaintEffect {
    /// New pods are not scheduled.
    NoSchedule,
    /// The scheduler avoids the node.
    PreferNoSchedule,
    /// Running pods are evicted too.
    NoExecute,
}

impl TaintEffect {
    /// The name as Kubernetes spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            TaintEffect::NoSchedule => "NoSchedule",
            TaintEffect::PreferNoSchedule => "PreferNoSchedule",
            TaintEffect::NoExecute => "NoExecute",
        }
    }
}

/// An image already present on a node (`node.status.images[]`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeImage {
    /// Names and digests the image is known by.
    pub names: Vec<String>,
    /// Size in bytes.
    pub size_bytes: u64,
}

/// A terminal command at a virtual time.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Step {
    /// The time as written (Go duration; `0s` when the file left it out).
    pub at: String,
    /// The same time in virtual milliseconds.
    #[serde(skip)]
    pub at_ms: Time,
    /// The command line.
    pub run: String,
}

/// A node as the engine creates it: a name, resources with defaults applied, and the rest
/// of its group's settings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeSpec {
    /// Node name.
    pub name: String,
    /// Capacity, with [`DEFAULT_CAPACITY`] for resources left out.
    pub capacity: BTreeMap<String, String>,
    /// Allocatable: capacity, overridden per resource by the group's `allocatable`.
    pub allocatable: BTreeMap<String, String>,
    /// Labels.
    pub labels: BTreeMap<String, String>,
    /// Taints.
    pub taints: Vec<Taint>,
    /// Pre-pulled images.
    pub images: Vec<NodeImage>,
    /// Whether the node starts cordoned.
    pub unschedulable: bool,
}

/// One problem in a scenario file, placed in the text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScenarioError {
    /// 1-based line.
    pub line: usize,
    /// 1-based column.
    pub column: usize,
    /// What is wrong, Kubernetes field-error style: `spec.nodes[1].count: Invalid value: 0:
    /// must be greater than or equal to 1`.
    pub message: String,
    /// The field it is about (`spec.nodes[1].count`), "" for the whole file.
    pub field: String,
}

impl fmt::Display for ScenarioError {
    /// `<line>:<column>: <message>`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.line, self.column, self.message)
    }
}

impl std::error::Error for ScenarioError {}

impl Default for ScenarioSpec {
    fn default() -> Self {
        ScenarioSpec {
            seed: DEFAULT_SEED,
            nodes: Vec::new(),
            scheduler_configuration: None,
            files: BTreeMap::new(),
            steps: Vec::new(),
            proxy_mode: ProxyMode::Iptables,
            scheduling_annotations: true,
            start_time: None,
            until: None,
            addons: Vec::new(),
            lesson: None,
        }
    }
}

impl Default for Scenario {
    /// An empty scenario: three default nodes, seed 1, no files, no steps.
    fn default() -> Self {
        Scenario {
            api_version: API_VERSION.to_string(),
            kind: KIND.to_string(),
            metadata: ScenarioMeta::default(),
            spec: ScenarioSpec::default(),
        }
    }
}

/// Reads a scenario from YAML or JSON. On failure, returns every problem found, in text
/// order, each with its line and column. A step that names a file missing from
/// `spec.files` is not a problem here: kubectl reports it when the step runs.
pub fn parse_scenario(text: &str) -> Result<Scenario, Vec<ScenarioError>> {
    parse::parse(text)
}

/// The steps in the order they run: by `at`, steps with the same `at` in file order.
pub fn steps_in_order(scenario: &Scenario) -> Vec<Step> {
    let mut steps = scenario.spec.steps.clone();
    steps.sort_by_key(|s| s.at_ms);
    steps
}

/// Writes a scenario as YAML that [`parse_scenario`] reads back to an equal value.
pub fn to_yaml(scenario: &Scenario) -> String {
    scenario.to_yaml()
}

impl Scenario {
    /// Every node, groups expanded (`node-1` … `node-100`) and defaults applied; three
    /// 4-CPU/8Gi/110-pod nodes `node-1` … `node-3` when the file lists none.
    pub fn nodes(&self) -> Vec<NodeSpec> {
        if self.spec.nodes.is_empty() {
            let group = NodeGroup {
                name_prefix: Some("node-".to_string()),
                count: Some(DEFAULT_NODE_COUNT),
                ..NodeGroup::default()
            };
            return group.expand();
        }
        self.spec.nodes.iter().flat_map(NodeGroup::expand).collect()
    }

    /// The steps in the order they run (see [`steps_in_order`]).
    pub fn steps_in_order(&self) -> Vec<Step> {
        steps_in_order(self)
    }

    /// The time of the last step in virtual milliseconds (0 without steps): how long the
    /// CLI runs by default.
    pub fn last_step_ms(&self) -> Time {
        self.spec.steps.iter().map(|s| s.at_ms).max().unwrap_or(0)
    }

    /// `spec.until` in virtual milliseconds, if set.
    pub fn until_ms(&self) -> Option<Time> {
        self.spec
            .until
            .as_deref()
            .and_then(|u| crate::time::parse_duration(u).ok())
    }

    /// Writes the scenario as YAML that [`parse_scenario`] reads back to an equal value.
    pub fn to_yaml(&self) -> String {
        // Serializing these types cannot fail: every map has string keys.
        serde_yaml::to_string(self).unwrap_or_default()
    }

    /// Writes the scenario as pretty JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default()
    }
}

impl NodeGroup {
    /// The group's nodes with defaults applied.
    pub fn expand(&self) -> Vec<NodeSpec> {
        let mut capacity: BTreeMap<String, String> = DEFAULT_CAPACITY
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        capacity.extend(self.capacity.clone());
        let mut allocatable = capacity.clone();
        if let Some(a) = &self.allocatable {
            allocatable.extend(a.clone());
        }
        let node = |name: String| NodeSpec {
            name,
            capacity: capacity.clone(),
            allocatable: allocatable.clone(),
            labels: self.labels.clone(),
            taints: self.taints.clone(),
            images: self.images.clone(),
            unschedulable: self.unschedulable,
        };
        match (&self.name, &self.name_prefix) {
            (Some(name), _) => vec![node(name.clone())],
            (None, Some(prefix)) => (1..=self.count.unwrap_or(0).min(MAX_NODES))
                .map(|i| node(format!("{prefix}{i}")))
                .collect(),
            (None, None) => Vec::new(),
        }
    }
}

#[cfg(test)]
#[path = "scenario_tests.rs"]
mod tests;
