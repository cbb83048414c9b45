//! KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1): parsing from JSON, upstream
//! defaulting (default plugins merged into each profile, default plugin args) and validation.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use k8s_openapi::api::core::v1::{NodeAffinity, TopologySpreadConstraint};

use super::pluginargs::{decode, plugin_args, PLUGINS_WITH_ARGS};
use super::validation::validate;

/// The only accepted apiVersion.
pub const API_VERSION: &str = "kubescheduler.config.k8s.io/v1";
/// `v1.DefaultSchedulerName`.
pub const DEFAULT_SCHEDULER_NAME: &str = "default-scheduler";

/// A plugin reference in a PluginSet (`name`, optional `weight`).
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct PluginRef {
    /// Plugin name.
    pub name: String,
    /// Score weight (0 = unset).
    #[serde(default)]
    pub weight: i32,
}

impl PluginRef {
    fn w(name: &str, weight: i32) -> PluginRef {
        PluginRef {
            name: name.to_string(),
            weight,
        }
    }
}

/// Enabled and disabled plugins of one extension point.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct PluginSet {
    /// Enabled plugins, in order.
    #[serde(default)]
    pub enabled: Vec<PluginRef>,
    /// Disabled plugins (`*` = all defaults).
    #[serde(default)]
    pub disabled: Vec<PluginRef>,
}

/// Plugins per extension point (`multiPoint` expands to every point a plugin implements).
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
#[allow(missing_docs)]
pub struct Plugins {
    #[serde(default)]
    pub pre_enqueue: PluginSet,
    #[serde(default)]
    pub queue_sort: PluginSet,
    #[serde(default)]
    pub pre_filter: PluginSet,
    #[serde(default)]
    pub filter: PluginSet,
    #[serde(default)]
    pub post_filter: PluginSet,
    #[serde(default)]
    pub pre_score: PluginSet,
    #[serde(default)]
    pub score: PluginSet,
    #[serde(default)]
    pub reserve: PluginSet,
    #[serde(default)]
    pub permit: PluginSet,
    #[serde(default)]
    pub pre_bind: PluginSet,
    #[serde(default)]
    pub bind: PluginSet,
    #[serde(default)]
    pub post_bind: PluginSet,
    #[serde(default)]
    pub multi_point: PluginSet,
}

impl Plugins {
    /// The sets by their config field names, in upstream's `pluginsNames` order.
    pub fn sets(&self) -> [(&'static str, &PluginSet); 13] {
        [
            ("multiPoint", &self.multi_point),
            ("preFilter", &self.pre_filter),
            ("filter", &self.filter),
            ("postFilter", &self.post_filter),
            ("reserve", &self.reserve),
            ("preScore", &self.pre_score),
            ("score", &self.score),
            ("preBind", &self.pre_bind),
            ("bind", &self.bind),
            ("postBind", &self.post_bind),
            ("permit", &self.permit),
            ("preEnqueue", &self.pre_enqueue),
            ("queueSort", &self.queue_sort),
        ]
    }

    fn sets_mut(&mut self) -> [&mut PluginSet; 13] {
        [
            &mut self.multi_point,
            &mut self.pre_filter,
            &mut self.filter,
            &mut self.post_filter,
            &mut self.reserve,
            &mut self.pre_score,
            &mut self.score,
            &mut self.pre_bind,
            &mut self.bind,
            &mut self.post_bind,
            &mut self.permit,
            &mut self.pre_enqueue,
            &mut self.queue_sort,
        ]
    }
}

/// `getDefaultPlugins()`: the v1 default MultiPoint list with weights (behaviour doc §4.1).
pub fn default_plugins() -> Plugins {
    let names: &[(&str, i32)] = &[
        ("SchedulingGates", 0),
        ("PrioritySort", 0),
        ("NodeUnschedulable", 0),
        ("NodeName", 0),
        ("TaintToleration", 3),
        ("NodeAffinity", 2),
        ("NodePorts", 0),
        ("NodeResourcesFit", 1),
        ("VolumeRestrictions", 0),
        ("NodeVolumeLimits", 0),
        ("VolumeBinding", 0),
        ("VolumeZone", 0),
        ("PodTopologySpread", 2),
        ("InterPodAffinity", 2),
        ("DefaultPreemption", 0),
        ("NodeResourcesBalancedAllocation", 1),
        ("ImageLocality", 1),
        ("DefaultBinder", 0),
    ];
    Plugins {
        multi_point: PluginSet {
            enabled: names.iter().map(|(n, w)| PluginRef::w(n, *w)).collect(),
            disabled: vec![],
        },
        ..Plugins::default()
    }
}

/// A resource and its weight in a scoring strategy.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct ResourceSpec {
    /// Resource name (`cpu`, `memory`, `example.com/gpu`).
    pub name: String,
    /// Weight (0 is defaulted to 1).
    #[serde(default)]
    pub weight: i64,
}

/// A point of a RequestedToCapacityRatio shape.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct UtilizationShapePoint {
    /// Utilization 0–100.
    #[serde(default)]
    pub utilization: i32,
    /// Score 0–10.
    #[serde(default)]
    pub score: i32,
}

/// RequestedToCapacityRatio parameters.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct RequestedToCapacityRatioParam {
    /// The piecewise-linear shape.
    #[serde(default)]
    pub shape: Vec<UtilizationShapePoint>,
}

/// NodeResourcesFit's scoring strategy.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct ScoringStrategy {
    /// `LeastAllocated`, `MostAllocated` or `RequestedToCapacityRatio`.
    #[serde(rename = "type", default)]
    pub type_: String,
    /// Resources and weights.
    #[serde(default)]
    pub resources: Vec<ResourceSpec>,
    /// Shape, for RequestedToCapacityRatio.
    #[serde(default)]
    pub requested_to_capacity_ratio: Option<RequestedToCapacityRatioParam>,
}

/// NodeResourcesFitArgs.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct NodeResourcesFitArgs {
    /// Extended resources the Fit filter ignores.
    #[serde(default)]
    pub ignored_resources: Vec<String>,
    /// Extended resource groups the Fit filter ignores.
    #[serde(default)]
    pub ignored_resource_groups: Vec<String>,
    /// The scoring strategy (defaulted to LeastAllocated cpu:1 memory:1).
    #[serde(default)]
    pub scoring_strategy: Option<ScoringStrategy>,
}

/// Typed args of the in-tree plugins that take any, after defaulting.
#[derive(Clone, Debug, PartialEq)]
pub enum PluginArgs {
    /// DefaultPreemptionArgs.
    DefaultPreemption {
        /// Default 10.
        min_candidate_nodes_percentage: i32,
        /// Default 100.
        min_candidate_nodes_absolute: i32,
    },
    /// InterPodAffinityArgs.
    InterPodAffinity {
        /// Default 1.
        hard_pod_affinity_weight: i32,
        /// Default false.
        ignore_preferred_terms_of_existing_pods: bool,
    },
    /// NodeAffinityArgs.
    NodeAffinity {
        /// Affinity added to every pod.
        added_affinity: Option<NodeAffinity>,
    },
    /// NodeResourcesFitArgs.
    NodeResourcesFit(NodeResourcesFitArgs),
    /// NodeResourcesBalancedAllocationArgs.
    NodeResourcesBalancedAllocation {
        /// Default cpu:1, memory:1.
        resources: Vec<ResourceSpec>,
    },
    /// PodTopologySpreadArgs.
    PodTopologySpread {
        /// Cluster-level default constraints (with `List` defaulting).
        default_constraints: Vec<TopologySpreadConstraint>,
        /// `System` (default) or `List`.
        defaulting_type: String,
    },
    /// VolumeBindingArgs.
    VolumeBinding {
        /// Default 600.
        bind_timeout_seconds: i64,
        /// Shape (StorageCapacityScoring).
        shape: Option<Vec<UtilizationShapePoint>>,
    },
    /// Args of a plugin without a typed schema, kept as given.
    Unknown(Value),
}

/// A named plugin config.
#[derive(Clone, Debug, PartialEq)]
pub struct PluginConfig {
    /// Plugin name.
    pub name: String,
    /// Its args.
    pub args: PluginArgs,
}

/// One scheduling profile.
#[derive(Clone, Debug, PartialEq)]
pub struct KubeSchedulerProfile {
    /// `schedulerName` pods select with `spec.schedulerName`.
    pub scheduler_name: String,
    /// Per-profile override of percentageOfNodesToScore.
    pub percentage_of_nodes_to_score: Option<i32>,
    /// Plugins after merging with the defaults.
    pub plugins: Plugins,
    /// Plugin args (explicit ones first, then defaults for plugins without one).
    pub plugin_config: Vec<PluginConfig>,
}

impl KubeSchedulerProfile {
    /// The args configured for a plugin.
    pub fn args(&self, name: &str) -> Option<&PluginArgs> {
        self.plugin_config
            .iter()
            .find(|c| c.name == name)
            .map(|c| &c.args)
    }
}

/// The scheduler's configuration after defaulting.
#[derive(Clone, Debug, PartialEq)]
pub struct KubeSchedulerConfiguration {
    /// Default 16 (kept for fidelity; the simulator is single-threaded).
    pub parallelism: i32,
    /// 0 = adaptive.
    pub percentage_of_nodes_to_score: i32,
    /// Default 1.
    pub pod_initial_backoff_seconds: i64,
    /// Default 10.
    pub pod_max_backoff_seconds: i64,
    /// Profiles (default: one named `default-scheduler`).
    pub profiles: Vec<KubeSchedulerProfile>,
}

impl Default for KubeSchedulerConfiguration {
    fn default() -> Self {
        parse(&Value::Null).unwrap_or_else(|_| unreachable_default())
    }
}

fn unreachable_default() -> KubeSchedulerConfiguration {
    KubeSchedulerConfiguration {
        parallelism: 16,
        percentage_of_nodes_to_score: 0,
        pod_initial_backoff_seconds: 1,
        pod_max_backoff_seconds: 10,
        profiles: vec![],
    }
}

#[derive(Deserialize, Serialize, Default)]
#[serde(rename_all = "camelCase")]
struct RawConfig {
    parallelism: Option<i32>,
    percentage_of_nodes_to_score: Option<i32>,
    pod_initial_backoff_seconds: Option<i64>,
    pod_max_backoff_seconds: Option<i64>,
    #[serde(default)]
    profiles: Vec<RawProfile>,
    // Accepted and ignored: they configure the process, not scheduling decisions.
    #[serde(default)]
    #[allow(dead_code)]
    leader_election: Option<Value>,
    #[serde(default)]
    #[allow(dead_code)]
    client_connection: Option<Value>,
    #[serde(default)]
    #[allow(dead_code)]
    extenders: Option<Value>,
    #[serde(default)]
    #[allow(dead_code)]
    enable_profiling: Option<Value>,
    #[serde(default)]
    #[allow(dead_code)]
    enable_contention_profiling: Option<Value>,
    #[serde(default)]
    #[allow(dead_code)]
    delay_cache_until_active: Option<Value>,
}

#[derive(Deserialize, Serialize, Default)]
#[serde(rename_all = "camelCase")]
struct RawProfile {
    scheduler_name: Option<String>,
    percentage_of_nodes_to_score: Option<i32>,
    plugins: Option<Plugins>,
    #[serde(default)]
    plugin_config: Vec<RawPluginConfig>,
}

#[derive(Deserialize, Serialize)]
struct RawPluginConfig {
    name: String,
    #[serde(default)]
    args: Value,
}

/// `mergePluginSet`: defaults minus disabled, with re-configured defaults replaced in place,
/// then the remaining custom plugins appended.
fn merge_plugin_set(default: &PluginSet, custom: &PluginSet) -> PluginSet {
    let mut disabled: Vec<PluginRef> = custom
        .disabled
        .iter()
        .map(|p| PluginRef::w(&p.name, 0))
        .collect();
    disabled.extend(default.disabled.iter().map(|p| PluginRef::w(&p.name, 0)));
    let is_disabled = |n: &str| disabled.iter().any(|d| d.name == n);
    let mut replaced = vec![false; custom.enabled.len()];
    let mut enabled = Vec::new();
    if !is_disabled("*") {
        for d in &default.enabled {
            if is_disabled(&d.name) {
                continue;
            }
            match custom.enabled.iter().position(|c| c.name == d.name) {
                Some(i) => {
                    replaced[i] = true;
                    enabled.push(custom.enabled[i].clone());
                }
                None => enabled.push(d.clone()),
            }
        }
    }
    for (i, c) in custom.enabled.iter().enumerate() {
        if !replaced[i] {
            enabled.push(c.clone());
        }
    }
    PluginSet { enabled, disabled }
}

fn merge_plugins(custom: Option<&Plugins>) -> Plugins {
    let defaults = default_plugins();
    let Some(custom) = custom else {
        return defaults;
    };
    let mut out = custom.clone();
    let d_sets = defaults.sets();
    for (i, set) in out.sets_mut().into_iter().enumerate() {
        *set = merge_plugin_set(d_sets[i].1, set);
    }
    out
}

/// Parses, defaults and validates a KubeSchedulerConfiguration. `null` or `{}` gives the
/// default configuration. Errors are every problem found, in upstream wording.
pub fn parse(v: &Value) -> Result<KubeSchedulerConfiguration, Vec<String>> {
    let mut errs = Vec::new();
    let raw: RawConfig = decode(v, "", &mut errs).unwrap_or_default();
    let api_version = v
        .get("apiVersion")
        .and_then(|a| a.as_str())
        .map(String::from);
    let kind = v.get("kind").and_then(|a| a.as_str()).map(String::from);
    if let Some(av) = &api_version {
        if av != API_VERSION {
            errs.push(format!(
                "no kind \"KubeSchedulerConfiguration\" is registered for version \"{av}\""
            ));
        }
    }
    if let Some(k) = &kind {
        if k != "KubeSchedulerConfiguration" {
            errs.push(format!(
                "no kind \"{k}\" is registered for version \"{API_VERSION}\""
            ));
        }
    }
    let mut raw_profiles = raw.profiles;
    if raw_profiles.is_empty() {
        raw_profiles.push(RawProfile::default());
    }
    let single = raw_profiles.len() == 1;
    let mut profiles = Vec::new();
    for (i, rp) in raw_profiles.into_iter().enumerate() {
        let scheduler_name = match rp.scheduler_name {
            Some(n) => n,
            None if single => DEFAULT_SCHEDULER_NAME.to_string(),
            None => String::new(),
        };
        let plugins = merge_plugins(rp.plugins.as_ref());
        let mut plugin_config = Vec::new();
        for (j, pc) in rp.plugin_config.iter().enumerate() {
            let path = format!("profiles[{i}].pluginConfig[{j}].args");
            plugin_config.push(PluginConfig {
                name: pc.name.clone(),
                args: plugin_args(&pc.name, &pc.args, &path, &mut errs),
            });
        }
        let mut names: Vec<&str> = plugins
            .sets()
            .iter()
            .flat_map(|(_, s)| s.enabled.iter().map(|p| p.name.as_str()))
            .collect();
        names.sort_unstable();
        names.dedup();
        for n in names {
            if PLUGINS_WITH_ARGS.contains(&n) && !plugin_config.iter().any(|c| c.name == n) {
                plugin_config.push(PluginConfig {
                    name: n.to_string(),
                    args: plugin_args(n, &Value::Null, "", &mut errs),
                });
            }
        }
        profiles.push(KubeSchedulerProfile {
            scheduler_name,
            percentage_of_nodes_to_score: rp.percentage_of_nodes_to_score,
            plugins,
            plugin_config,
        });
    }
    let cfg = KubeSchedulerConfiguration {
        parallelism: raw.parallelism.unwrap_or(16),
        percentage_of_nodes_to_score: raw.percentage_of_nodes_to_score.unwrap_or(0),
        pod_initial_backoff_seconds: raw.pod_initial_backoff_seconds.unwrap_or(1),
        pod_max_backoff_seconds: raw.pod_max_backoff_seconds.unwrap_or(10),
        profiles,
    };
    errs.extend(validate(&cfg));
    if errs.is_empty() {
        Ok(cfg)
    } else {
        Err(errs)
    }
}

#[cfg(test)]
#[path = "config_tests.rs"]
mod tests;
