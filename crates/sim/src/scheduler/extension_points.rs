//! Running a profile's extension points: PreEnqueue, PreFilter (and its AddPod/RemovePod
//! extensions), Filter (with nominated pods), PostFilter, PreScore, Score/NormalizeScore.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use super::framework::*;
use super::nodeinfo::{NodeInfo, Snapshot};
use super::podinfo::PodInfo;
use super::runtime::{Ext, Framework, PluginScores};

impl Framework {
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
    /// plugins that rejected the pod or narrowed the nodes it may go to.
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
        // Upstream returns the plugins that narrowed the nodes even on success: the nodes
        // they left out "didn't satisfy plugin(s) [...]".
        rejected.extend(with_nodes);
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
        self.run_pre_filter_extension(state, |pf, state| {
            pf.remove_pod(state, pod, to_remove, node)
        })
    }

    /// Runs `PreFilterExtensions.AddPod` of every (non-skipped) PreFilter plugin.
    pub fn run_pre_filter_add_pod(
        &self,
        state: &mut CycleState,
        pod: &PodInfo,
        to_add: &PodInfo,
        node: &NodeInfo,
    ) -> Status {
        self.run_pre_filter_extension(state, |pf, state| pf.add_pod(state, pod, to_add, node))
    }

    /// Calls `f` on every PreFilter plugin PreFilter did not skip, stopping at a failure.
    fn run_pre_filter_extension(
        &self,
        state: &mut CycleState,
        f: impl Fn(&dyn PreFilterPlugin, &mut CycleState) -> Status,
    ) -> Status {
        for p in self.iter(Ext::PreFilter) {
            if state.skip_filter_plugins.contains(p.name()) {
                continue;
            }
            if let Some(pf) = p.as_pre_filter() {
                let s = f(pf, state);
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
}
