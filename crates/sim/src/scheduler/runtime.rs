//! The framework runtime: builds a profile's plugin lists from configuration (with
//! upstream's NewFramework checks and messages) and runs each extension point.

use std::collections::{BTreeMap, BTreeSet};

use super::config::{KubeSchedulerConfiguration, KubeSchedulerProfile, PluginArgs, PluginSet};
use super::framework::*;

/// Builds a plugin from its (defaulted) args.
pub type Factory = fn(Option<&PluginArgs>) -> Result<Box<dyn Plugin>, String>;

/// Plugin name → constructor.
pub type Registry = BTreeMap<&'static str, Factory>;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Ext {
    PreFilter,
    Filter,
    PostFilter,
    Reserve,
    PreScore,
    Score,
    PreBind,
    Bind,
    PostBind,
    Permit,
    PreEnqueue,
    QueueSort,
}

/// Extension points in upstream's `getExtensionPoints` order.
const EXTS: [Ext; 12] = [
    Ext::PreFilter,
    Ext::Filter,
    Ext::PostFilter,
    Ext::Reserve,
    Ext::PreScore,
    Ext::Score,
    Ext::PreBind,
    Ext::Bind,
    Ext::PostBind,
    Ext::Permit,
    Ext::PreEnqueue,
    Ext::QueueSort,
];

impl Ext {
    fn type_name(self) -> &'static str {
        match self {
            Ext::PreFilter => "PreFilterPlugin",
            Ext::Filter => "FilterPlugin",
            Ext::PostFilter => "PostFilterPlugin",
            Ext::Reserve => "ReservePlugin",
            Ext::PreScore => "PreScorePlugin",
            Ext::Score => "ScorePlugin",
            Ext::PreBind => "PreBindPlugin",
            Ext::Bind => "BindPlugin",
            Ext::PostBind => "PostBindPlugin",
            Ext::Permit => "PermitPlugin",
            Ext::PreEnqueue => "PreEnqueuePlugin",
            Ext::QueueSort => "QueueSortPlugin",
        }
    }

    fn set(self, p: &KubeSchedulerProfile) -> &PluginSet {
        let ps = &p.plugins;
        match self {
            Ext::PreFilter => &ps.pre_filter,
            Ext::Filter => &ps.filter,
            Ext::PostFilter => &ps.post_filter,
            Ext::Reserve => &ps.reserve,
            Ext::PreScore => &ps.pre_score,
            Ext::Score => &ps.score,
            Ext::PreBind => &ps.pre_bind,
            Ext::Bind => &ps.bind,
            Ext::PostBind => &ps.post_bind,
            Ext::Permit => &ps.permit,
            Ext::PreEnqueue => &ps.pre_enqueue,
            Ext::QueueSort => &ps.queue_sort,
        }
    }

    fn implemented_by(self, p: &dyn Plugin) -> bool {
        match self {
            Ext::PreFilter => p.as_pre_filter().is_some(),
            Ext::Filter => p.as_filter().is_some(),
            Ext::PostFilter => p.as_post_filter().is_some(),
            Ext::Reserve => p.as_reserve().is_some(),
            Ext::PreScore => p.as_pre_score().is_some(),
            Ext::Score => p.as_score().is_some(),
            Ext::PreBind => p.as_pre_bind().is_some(),
            Ext::Bind => p.as_bind().is_some(),
            Ext::PostBind => p.as_post_bind().is_some(),
            Ext::Permit => p.as_permit().is_some(),
            Ext::PreEnqueue => p.as_pre_enqueue().is_some(),
            Ext::QueueSort => p.as_queue_sort().is_some(),
        }
    }
}

/// A profile's instantiated plugins with one ordered list per extension point.
pub struct Framework {
    /// The profile's scheduler name.
    pub profile_name: String,
    /// Per-profile percentageOfNodesToScore (None = use the global setting).
    pub percentage_of_nodes_to_score: Option<i32>,
    pub(crate) plugins: Vec<Box<dyn Plugin>>,
    lists: BTreeMap<u8, Vec<usize>>,
    pub(crate) weights: BTreeMap<&'static str, i64>,
}

impl std::fmt::Debug for Framework {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Framework")
            .field("profile_name", &self.profile_name)
            .field("filter", &self.names(Ext::Filter))
            .field("score", &self.score_weights())
            .finish()
    }
}

impl Framework {
    /// `NewFramework`: instantiates the plugins the profile needs and validates the lists.
    pub fn new(registry: &Registry, profile: &KubeSchedulerProfile) -> Result<Framework, String> {
        let mut needed: BTreeSet<&str> = BTreeSet::new();
        for (_, set) in profile.plugins.sets() {
            for p in &set.enabled {
                needed.insert(&p.name);
            }
        }
        let mut plugins: Vec<Box<dyn Plugin>> = Vec::new();
        let mut by_name: BTreeMap<&str, usize> = BTreeMap::new();
        for (name, factory) in registry {
            if !needed.contains(name) {
                continue;
            }
            let p = factory(profile.args(name))
                .map_err(|e| format!("initializing plugin {name:?}: {e}"))?;
            by_name.insert(name, plugins.len());
            plugins.push(p);
        }
        let mut fw = Framework {
            profile_name: profile.scheduler_name.clone(),
            percentage_of_nodes_to_score: profile.percentage_of_nodes_to_score,
            plugins,
            lists: BTreeMap::new(),
            weights: BTreeMap::new(),
        };
        for ext in EXTS {
            let mut list = Vec::new();
            for e in &ext.set(profile).enabled {
                let Some(&i) = by_name.get(e.name.as_str()) else {
                    return Err(format!("{} {:?} does not exist", ext.type_name(), e.name));
                };
                if !ext.implemented_by(fw.plugins[i].as_ref()) {
                    return Err(format!(
                        "plugin {:?} does not extend {} plugin",
                        e.name,
                        ext.type_name()
                    ));
                }
                if list.contains(&i) {
                    return Err(format!(
                        "plugin {:?} already registered as {:?}",
                        e.name,
                        ext.type_name()
                    ));
                }
                list.push(i);
            }
            fw.lists.insert(ext as u8, list);
        }
        if !profile.plugins.multi_point.enabled.is_empty() {
            fw.expand_multi_point(profile, &by_name)?;
        }
        let qs = fw.list(Ext::QueueSort).len();
        if qs != 1 {
            return Err(format!(
                "only one queue sort plugin required for profile with scheduler name {:?}, but got {qs}",
                profile.scheduler_name
            ));
        }
        if fw.list(Ext::Bind).is_empty() {
            return Err(format!(
                "at least one bind plugin is needed for profile with scheduler name {:?}",
                profile.scheduler_name
            ));
        }
        // getScoreWeights: explicit Score weights win over MultiPoint ones; 0 means 1.
        let mut total: i64 = 0;
        for e in profile
            .plugins
            .score
            .enabled
            .iter()
            .chain(profile.plugins.multi_point.enabled.iter())
        {
            let Some(&i) = by_name.get(e.name.as_str()) else {
                continue;
            };
            let p = &fw.plugins[i];
            if p.as_score().is_none() || fw.weights.contains_key(p.name()) {
                continue;
            }
            let w = if e.weight == 0 {
                1
            } else {
                i64::from(e.weight)
            };
            // Go's int64 arithmetic wraps: after a negative weight the next plugin's
            // check overflows and fails, as it does in kube-scheduler.
            if w * MAX_NODE_SCORE > MAX_TOTAL_SCORE.wrapping_sub(total) {
                return Err("total score of Score plugins could overflow".into());
            }
            total = total.wrapping_add(w * MAX_NODE_SCORE);
            fw.weights.insert(p.name(), w);
        }
        for &i in fw.list(Ext::Score) {
            let n = fw.plugins[i].name();
            if fw.weights.get(n).copied().unwrap_or(0) == 0 {
                return Err(format!("score plugin {n:?} is not configured with weight"));
            }
        }
        Ok(fw)
    }

    fn expand_multi_point(
        &mut self,
        profile: &KubeSchedulerProfile,
        by_name: &BTreeMap<&str, usize>,
    ) -> Result<(), String> {
        for ext in EXTS {
            let set = ext.set(profile);
            if set.disabled.iter().any(|d| d.name == "*") {
                continue;
            }
            let enabled: Vec<usize> = self.list(ext).to_vec();
            let mut overrides = Vec::new();
            let mut multi = Vec::new();
            for e in &profile.plugins.multi_point.enabled {
                let Some(&i) = by_name.get(e.name.as_str()) else {
                    return Err(format!("{} {:?} does not exist", ext.type_name(), e.name));
                };
                if !ext.implemented_by(self.plugins[i].as_ref()) {
                    continue;
                }
                if set.disabled.iter().any(|d| d.name == e.name) {
                    continue;
                }
                if enabled.contains(&i) {
                    overrides.push(i);
                    continue;
                }
                if multi.contains(&i) {
                    return Err(format!(
                        "plugin {:?} already registered as {:?}",
                        e.name,
                        ext.type_name()
                    ));
                }
                multi.push(i);
            }
            let mut out: Vec<usize> = enabled
                .iter()
                .copied()
                .filter(|i| overrides.contains(i))
                .collect();
            out.extend(multi.iter().copied());
            out.extend(enabled.iter().copied().filter(|i| !overrides.contains(i)));
            self.lists.insert(ext as u8, out);
        }
        Ok(())
    }

    pub(crate) fn list(&self, ext: Ext) -> &[usize] {
        self.lists
            .get(&(ext as u8))
            .map(|v| v.as_slice())
            .unwrap_or(&[])
    }

    fn names(&self, ext: Ext) -> Vec<&'static str> {
        self.list(ext)
            .iter()
            .map(|i| self.plugins[*i].name())
            .collect()
    }

    pub(crate) fn iter(&self, ext: Ext) -> impl Iterator<Item = &dyn Plugin> {
        self.list(ext)
            .iter()
            .map(move |i| self.plugins[*i].as_ref())
    }

    /// The profile's plugin of that name, at whatever extension points it has.
    pub fn plugin(&self, name: &str) -> Option<&dyn Plugin> {
        self.plugins
            .iter()
            .find(|p| p.name() == name)
            .map(|p| p.as_ref())
    }

    /// Plugin names per extension point, for display (`ListPlugins`).
    pub fn plugin_names(&self) -> BTreeMap<&'static str, Vec<&'static str>> {
        EXTS.iter()
            .map(|e| (e.type_name(), self.names(*e)))
            .filter(|(_, v)| !v.is_empty())
            .collect()
    }

    /// Filter plugin names in order.
    pub fn filter_plugin_names(&self) -> Vec<&'static str> {
        self.names(Ext::Filter)
    }

    /// Score plugins and their weights, in order.
    pub fn score_weights(&self) -> Vec<(&'static str, i64)> {
        self.iter(Ext::Score)
            .map(|p| (p.name(), self.weights.get(p.name()).copied().unwrap_or(1)))
            .collect()
    }

    /// Whether any Score plugin is configured.
    pub fn has_score_plugins(&self) -> bool {
        !self.list(Ext::Score).is_empty()
    }

    /// Whether any Filter plugin is configured.
    pub fn has_filter_plugins(&self) -> bool {
        !self.list(Ext::Filter).is_empty()
    }

    /// The QueueSort plugin.
    pub fn queue_sort(&self) -> Option<&dyn QueueSortPlugin> {
        self.iter(Ext::QueueSort)
            .next()
            .and_then(|p| p.as_queue_sort())
    }
}

/// One score plugin's results over the feasible nodes.
#[derive(Clone, Debug, PartialEq)]
pub struct PluginScores {
    /// Plugin name.
    pub name: &'static str,
    /// Its weight.
    pub weight: i64,
    /// Raw scores.
    pub raw: Vec<i64>,
    /// Normalized scores (before weighting).
    pub normalized: Vec<i64>,
}

/// Builds one Framework per profile, keyed by scheduler name (`profile.NewMap`).
pub fn build_frameworks(
    registry: &Registry,
    cfg: &KubeSchedulerConfiguration,
) -> Result<BTreeMap<String, Framework>, String> {
    let mut out = BTreeMap::new();
    for p in &cfg.profiles {
        let fw = Framework::new(registry, p).map_err(|e| {
            format!(
                "initializing profiles: creating profile for scheduler name {}: {e}",
                p.scheduler_name
            )
        })?;
        out.insert(p.scheduler_name.clone(), fw);
    }
    Ok(out)
}
