//! The framework runtime: builds a profile's plugin lists from configuration (with
//! upstream's NewFramework checks and messages) and runs each extension point.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use super::config::{KubeSchedulerConfiguration, KubeSchedulerProfile, PluginArgs, PluginSet};
use super::framework::*;
use super::nodeinfo::{NodeInfo, Snapshot};
use super::podinfo::PodInfo;

/// Builds a plugin from its (defaulted) args.
pub type Factory = fn(Option<&PluginArgs>) -> Result<Box<dyn Plugin>, String>;

/// Plugin name → constructor.
pub type Registry = BTreeMap<&'static str, Factory>;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Ext {
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
    plugins: Vec<Box<dyn Plugin>>,
    lists: BTreeMap<u8, Vec<usize>>,
    weights: BTreeMap<&'static str, i64>,
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
            if w.saturating_mul(MAX_NODE_SCORE) > MAX_TOTAL_SCORE - total {
                return Err("total score of Score plugins could overflow".into());
            }
            total += w * MAX_NODE_SCORE;
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

    fn list(&self, ext: Ext) -> &[usize] {
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

    fn iter(&self, ext: Ext) -> impl Iterator<Item = &dyn Plugin> {
        self.list(ext)
            .iter()
            .map(move |i| self.plugins[*i].as_ref())
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

    /// Runs PreEnqueue plugins; the first non-success status (with its plugin) is returned.
    pub fn run_pre_enqueue(&self, pod: &PodInfo) -> Status {
        for p in self.iter(Ext::PreEnqueue) {
            if let Some(pe) = p.as_pre_enqueue() {
                let s = pe.pre_enqueue(pod);
                if !s.is_success() {
                    return s.with_plugin(p.name());
                }
            }
        }
        Status::success()
    }

    /// Runs PreFilter plugins. Returns the merged node restriction, the status, and the
    /// plugins that rejected the pod.
    pub fn run_pre_filter(
        &self,
        state: &mut CycleState,
        pod: &PodInfo,
        snap: &Snapshot,
    ) -> (PreFilterResult, Status, BTreeSet<&'static str>) {
        let mut result = PreFilterResult::default();
        let mut with_nodes: Vec<&'static str> = Vec::new();
        let mut rejected = BTreeSet::new();
        for p in self.iter(Ext::PreFilter) {
            let Some(pf) = p.as_pre_filter() else {
                continue;
            };
            let (r, s) = pf.pre_filter(state, pod, snap);
            if s.code == Code::Skip {
                state.skip_filter_plugins.insert(p.name());
                for (j, &fi) in self.list(Ext::Filter).iter().enumerate().take(64) {
                    if self.plugins[fi].name() == p.name() {
                        state.skip_filter_bits |= 1 << j;
                    }
                }
                continue;
            }
            if !s.is_success() {
                if s.is_rejected() {
                    rejected.insert(p.name());
                    return (result, s.with_plugin(p.name()), rejected);
                }
                let msg = format!("running PreFilter plugin {:?}: {}", p.name(), s.message());
                return (result, Status::error(msg).with_plugin(p.name()), rejected);
            }
            let Some(r) = r else { continue };
            if r.node_names.is_none() {
                continue;
            }
            result = result.merge(r);
            with_nodes.push(p.name());
            if result.node_names.as_ref().is_some_and(|n| n.is_empty()) {
                let msg = if with_nodes.len() == 1 {
                    format!("node(s) didn't satisfy plugin {}", with_nodes[0])
                } else {
                    format!(
                        "node(s) didn't satisfy plugin(s) [{}] simultaneously",
                        with_nodes.join(" ")
                    )
                };
                rejected.extend(with_nodes.iter().copied());
                return (
                    result,
                    Status::new(Code::UnschedulableAndUnresolvable, msg),
                    rejected,
                );
            }
        }
        (result, Status::success(), rejected)
    }

    /// Runs Filter plugins on one node, stopping at the first failure. With `record`, each
    /// plugin that ran gets "passed" or its message.
    pub fn run_filter(
        &self,
        state: &CycleState,
        pod: &PodInfo,
        node: &NodeInfo,
        mut record: Option<&mut BTreeMap<String, String>>,
    ) -> Status {
        for (j, &i) in self.list(Ext::Filter).iter().enumerate() {
            let p = self.plugins[i].as_ref();
            let skipped = if j < 64 {
                state.skip_filter_bits >> j & 1 == 1
            } else {
                state.skip_filter_plugins.contains(p.name())
            };
            if skipped {
                continue;
            }
            let Some(f) = p.as_filter() else { continue };
            let s = f.filter(state, pod, node);
            if let Some(r) = record.as_deref_mut() {
                let v = if s.is_success() {
                    "passed".to_string()
                } else {
                    s.message()
                };
                r.insert(p.name().to_string(), v);
            }
            if !s.is_success() {
                if !s.is_rejected() {
                    let msg = format!("running {:?} filter plugin: {}", p.name(), s.message());
                    return Status::error(msg).with_plugin(p.name());
                }
                return s.with_plugin(p.name());
            }
        }
        Status::success()
    }

    /// `RunFilterPluginsWithNominatedPods`: when pods of equal or higher priority are
    /// nominated to the node, the pod must fit both with and without them.
    pub fn run_filter_with_nominated(
        &self,
        state: &CycleState,
        pod: &PodInfo,
        node: &NodeInfo,
        nominated: &Nominated,
        mut record: Option<&mut BTreeMap<String, String>>,
    ) -> Status {
        if nominated.is_empty() {
            return self.run_filter(state, pod, node, record);
        }
        let noms: Vec<&Arc<PodInfo>> = nominated
            .get(&node.name)
            .into_iter()
            .flatten()
            .filter(|n| n.priority >= pod.priority && n.key != pod.key)
            .collect();
        if noms.is_empty() {
            return self.run_filter(state, pod, node, record);
        }
        let mut st = state.clone();
        let mut ni = node.clone();
        for n in noms {
            ni.add_pod((*n).clone());
            for p in self.iter(Ext::PreFilter) {
                if st.skip_filter_plugins.contains(p.name()) {
                    continue;
                }
                if let Some(pf) = p.as_pre_filter() {
                    let s = pf.add_pod(&mut st, pod, n, &ni);
                    if !s.is_success() {
                        return s.with_plugin(p.name());
                    }
                }
            }
        }
        let s = self.run_filter(&st, pod, &ni, record.as_deref_mut());
        if !s.is_success() {
            return s;
        }
        self.run_filter(state, pod, node, record)
    }

    /// Runs `PreFilterExtensions.RemovePod` of every (non-skipped) PreFilter plugin.
    pub fn run_pre_filter_remove_pod(
        &self,
        state: &mut CycleState,
        pod: &PodInfo,
        to_remove: &PodInfo,
        node: &NodeInfo,
    ) -> Status {
        for p in self.iter(Ext::PreFilter) {
            if state.skip_filter_plugins.contains(p.name()) {
                continue;
            }
            if let Some(pf) = p.as_pre_filter() {
                let s = pf.remove_pod(state, pod, to_remove, node);
                if !s.is_success() {
                    return s.with_plugin(p.name());
                }
            }
        }
        Status::success()
    }

    /// Runs `PreFilterExtensions.AddPod` of every (non-skipped) PreFilter plugin.
    pub fn run_pre_filter_add_pod(
        &self,
        state: &mut CycleState,
        pod: &PodInfo,
        to_add: &PodInfo,
        node: &NodeInfo,
    ) -> Status {
        for p in self.iter(Ext::PreFilter) {
            if state.skip_filter_plugins.contains(p.name()) {
                continue;
            }
            if let Some(pf) = p.as_pre_filter() {
                let s = pf.add_pod(state, pod, to_add, node);
                if !s.is_success() {
                    return s.with_plugin(p.name());
                }
            }
        }
        Status::success()
    }

    /// Runs PostFilter plugins (preemption).
    pub fn run_post_filter(
        &self,
        ctx: &mut PostFilterContext<'_>,
        state: &CycleState,
        pod: &PodInfo,
        statuses: &NodeToStatus,
    ) -> (Option<PostFilterResult>, Status) {
        let mut result = None;
        let mut reasons = Vec::new();
        let mut rejector = "";
        for p in self.iter(Ext::PostFilter) {
            let Some(pf) = p.as_post_filter() else {
                continue;
            };
            let (r, s) = pf.post_filter(ctx, state, pod, statuses);
            if s.is_success() {
                return (r, s);
            }
            if s.code == Code::UnschedulableAndUnresolvable {
                return (r, s.with_plugin(p.name()));
            }
            if !s.is_rejected() {
                return (None, s.with_plugin(p.name()));
            }
            if r.is_some() {
                result = r;
            }
            reasons.extend(s.reasons);
            if rejector.is_empty() {
                rejector = p.name();
            }
        }
        (
            result,
            Status::with_reasons(Code::Unschedulable, reasons).with_plugin(rejector),
        )
    }

    /// Runs PreScore plugins over the feasible nodes.
    pub fn run_pre_score(
        &self,
        state: &mut CycleState,
        pod: &PodInfo,
        feasible: &[usize],
        snap: &Snapshot,
    ) -> Status {
        for p in self.iter(Ext::PreScore) {
            let Some(ps) = p.as_pre_score() else { continue };
            let s = ps.pre_score(state, pod, feasible, snap);
            if s.code == Code::Skip {
                state.skip_score_plugins.insert(p.name());
                continue;
            }
            if !s.is_success() {
                return Status::error(format!(
                    "running PreScore plugin {:?}: {}",
                    p.name(),
                    s.message()
                ))
                .with_plugin(p.name());
            }
        }
        Status::success()
    }

    /// Runs Score and NormalizeScore plugins over the feasible nodes. Returns, per plugin
    /// that ran, (name, weight, raw scores, normalized scores) aligned with `feasible`.
    pub fn run_score(
        &self,
        state: &CycleState,
        pod: &PodInfo,
        feasible: &[usize],
        snap: &Snapshot,
    ) -> Result<Vec<PluginScores>, Status> {
        let mut out = Vec::new();
        for p in self.iter(Ext::Score) {
            if state.skip_score_plugins.contains(p.name()) {
                continue;
            }
            let Some(sp) = p.as_score() else { continue };
            let mut raw = Vec::with_capacity(feasible.len());
            for &i in feasible {
                match sp.score(state, pod, &snap.nodes()[i], snap) {
                    Ok(v) => raw.push(v),
                    Err(s) => {
                        return Err(Status::error(format!(
                            "running Score plugins: plugin {:?} failed with: {}",
                            p.name(),
                            s.message()
                        )))
                    }
                }
            }
            let mut norm = raw.clone();
            if sp.has_normalize() {
                let s = sp.normalize_score(state, pod, &mut norm);
                if !s.is_success() {
                    return Err(Status::error(format!(
                        "running Normalize on Score plugins: plugin {:?} failed with: {}",
                        p.name(),
                        s.message()
                    )));
                }
            }
            if let Some(bad) = norm
                .iter()
                .find(|v| **v < MIN_NODE_SCORE || **v > MAX_NODE_SCORE)
            {
                return Err(Status::error(format!(
                    "applying score defaultWeights on Score plugins: plugin {:?} returns an invalid score {bad}, it should in the range of [{MIN_NODE_SCORE}, {MAX_NODE_SCORE}] after normalizing",
                    p.name()
                )));
            }
            out.push(PluginScores {
                name: p.name(),
                weight: self.weights.get(p.name()).copied().unwrap_or(1),
                raw,
                normalized: norm,
            });
        }
        Ok(out)
    }

    /// Names of the Reserve, Permit, PreBind and Bind plugins, for the actor to drive.
    pub fn binding_plugins(&self) -> BindingPlugins<'_> {
        BindingPlugins {
            reserve: self
                .iter(Ext::Reserve)
                .filter_map(|p| p.as_reserve())
                .collect(),
            permit: self
                .iter(Ext::Permit)
                .filter_map(|p| p.as_permit())
                .collect(),
            pre_bind: self
                .iter(Ext::PreBind)
                .filter_map(|p| p.as_pre_bind())
                .collect(),
            bind: self
                .iter(Ext::Bind)
                .filter_map(|p| p.as_bind().map(|b| (p.name(), b)))
                .collect(),
        }
    }
}

/// Reserve/Permit/PreBind/Bind plugins of a framework.
pub struct BindingPlugins<'a> {
    /// Reserve plugins in order.
    pub reserve: Vec<&'a dyn ReservePlugin>,
    /// Permit plugins in order.
    pub permit: Vec<&'a dyn PermitPlugin>,
    /// PreBind plugins in order.
    pub pre_bind: Vec<&'a dyn PreBindPlugin>,
    /// Bind plugins in order, with names.
    pub bind: Vec<(&'static str, &'a dyn BindPlugin)>,
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
