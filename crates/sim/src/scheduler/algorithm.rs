//! One scheduling cycle (`schedulePod` + PostFilter): PreFilter, Filter from the round-robin
//! start index until enough feasible nodes are found, PreScore/Score/NormalizeScore,
//! weighted totals and host selection with reservoir-sampled tie-breaks; FitError messages.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use super::framework::*;
use super::nodeinfo::Snapshot;
use super::podinfo::PodInfo;
use super::runtime::{Framework, PluginScores};
use crate::rng::Rng;

/// `minFeasibleNodesToFind`.
pub const MIN_FEASIBLE_NODES_TO_FIND: usize = 100;
/// `minFeasibleNodesPercentageToFind`.
pub const MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND: i64 = 5;

/// Scheduler state that outlives a cycle (owned by the caller).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SchedulerState {
    /// Where the next cycle starts filtering (`nextStartNodeIndex`).
    pub next_start_node_index: usize,
    /// The global percentageOfNodesToScore (0 = adaptive).
    pub percentage_of_nodes_to_score: i32,
}

/// `numFeasibleNodesToFind`: all nodes below 100; else the configured percentage, or
/// adaptively `50 − nodes/125` (at least 5%), and never fewer than 100 nodes.
pub fn num_feasible_nodes_to_find(
    profile_pct: Option<i32>,
    global_pct: i32,
    num_all_nodes: usize,
) -> usize {
    if num_all_nodes < MIN_FEASIBLE_NODES_TO_FIND {
        return num_all_nodes;
    }
    let n = num_all_nodes as i64;
    let mut pct = i64::from(profile_pct.unwrap_or(global_pct));
    if pct == 0 {
        pct = (50 - n / 125).max(MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND);
    }
    let num = n * pct / 100;
    if num < MIN_FEASIBLE_NODES_TO_FIND as i64 {
        return MIN_FEASIBLE_NODES_TO_FIND;
    }
    num as usize
}

/// Why a pod fits no node (`framework.Diagnosis`).
#[derive(Clone, Debug, Default)]
pub struct Diagnosis {
    /// Failing statuses per evaluated node, and the status of the others.
    pub node_to_status: NodeToStatus,
    /// Plugins that rejected the pod (decide which cluster events requeue it).
    pub unschedulable_plugins: BTreeSet<&'static str>,
    /// The PreFilter rejection message, if PreFilter rejected the pod.
    pub pre_filter_msg: String,
    /// The PostFilter (preemption) message.
    pub post_filter_msg: String,
}

/// No node fits the pod (`framework.FitError`).
#[derive(Clone, Debug, Default)]
pub struct FitError {
    /// Nodes in the snapshot.
    pub num_all_nodes: usize,
    /// The diagnosis.
    pub diagnosis: Diagnosis,
}

impl fmt::Display for FitError {
    /// `0/N nodes are available: <PreFilterMsg or sorted reason histogram>. <PostFilterMsg>`
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let d = &self.diagnosis;
        write!(f, "0/{} nodes are available:", self.num_all_nodes)?;
        if !d.pre_filter_msg.is_empty() {
            write!(f, " {}.", d.pre_filter_msg)?;
        } else {
            let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
            for (_, s) in &d.node_to_status.nodes {
                for r in &s.reasons {
                    *counts.entry(r).or_insert(0) += 1;
                }
            }
            let explicit = d.node_to_status.nodes.len();
            if explicit < self.num_all_nodes {
                if let Some(a) = &d.node_to_status.absent {
                    for r in &a.reasons {
                        *counts.entry(r).or_insert(0) += self.num_all_nodes - explicit;
                    }
                }
            }
            // Upstream sorts the formatted "<count> <reason>" strings.
            let mut hist: Vec<String> = counts.iter().map(|(r, c)| format!("{c} {r}")).collect();
            hist.sort();
            if !hist.is_empty() {
                write!(f, " {}.", hist.join(", "))?;
            }
        }
        if !d.post_filter_msg.is_empty() {
            write!(f, " {}", d.post_filter_msg)?;
        }
        Ok(())
    }
}

/// The pod annotations of design §3.4, keyed by node name.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Annotations {
    /// Node → filter plugin → "passed" or the failure message.
    pub filter: BTreeMap<String, BTreeMap<String, String>>,
    /// Node → score plugin → raw score.
    pub score: BTreeMap<String, BTreeMap<String, i64>>,
    /// Node → score plugin → normalized score × weight.
    pub final_score: BTreeMap<String, BTreeMap<String, i64>>,
    /// The chosen node, if any.
    pub selected_node: Option<String>,
}

/// `kubeloop.dev/filter-result`.
pub const ANNOTATION_FILTER: &str = "kubeloop.dev/filter-result";
/// `kubeloop.dev/score-result`.
pub const ANNOTATION_SCORE: &str = "kubeloop.dev/score-result";
/// `kubeloop.dev/finalscore-result`.
pub const ANNOTATION_FINAL_SCORE: &str = "kubeloop.dev/finalscore-result";
/// `kubeloop.dev/selected-node`.
pub const ANNOTATION_SELECTED_NODE: &str = "kubeloop.dev/selected-node";

impl Annotations {
    /// The annotations as key → value (JSON objects with sorted keys, integer scores).
    pub fn to_pod_annotations(&self) -> BTreeMap<String, String> {
        // Written straight from the maps (sorted keys), not through a `Value` tree: at
        // 100 nodes these are ~30 KB per scheduling attempt.
        fn j<T: serde::Serialize>(v: &T) -> String {
            serde_json::to_string(v).unwrap_or_default()
        }
        let mut out = BTreeMap::new();
        out.insert(ANNOTATION_FILTER.to_string(), j(&self.filter));
        out.insert(ANNOTATION_SCORE.to_string(), j(&self.score));
        out.insert(ANNOTATION_FINAL_SCORE.to_string(), j(&self.final_score));
        if let Some(n) = &self.selected_node {
            out.insert(ANNOTATION_SELECTED_NODE.to_string(), n.clone());
        }
        out
    }
}

/// `validation.NoteLengthLimit`: events and conditions carry at most this many bytes.
pub const NOTE_LENGTH_LIMIT: usize = 1024;

/// `truncateMessage`: messages over the limit end with " ...".
pub fn truncate_message(msg: &str) -> String {
    if msg.len() <= NOTE_LENGTH_LIMIT {
        return msg.to_string();
    }
    let mut end = NOTE_LENGTH_LIMIT - 4;
    while !msg.is_char_boundary(end) {
        end -= 1;
    }
    format!("{} ...", &msg[..end])
}

/// The `Scheduled` event message after a successful bind.
pub fn scheduled_message(namespace: &str, name: &str, node: &str) -> String {
    format!("Successfully assigned {namespace}/{name} to {node}")
}

/// A successful cycle.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScheduleResult {
    /// The chosen node.
    pub suggested_host: String,
    /// Nodes filtered (feasible + failed).
    pub evaluated_nodes: usize,
    /// Nodes that passed filtering.
    pub feasible_nodes: usize,
}

/// Why a cycle failed.
#[derive(Clone, Debug)]
pub enum ScheduleError {
    /// `no nodes available to schedule pods`.
    NoNodesAvailable,
    /// No node fits; `post_filter` carries the preemption outcome (nominated node, victims).
    Fit {
        /// The fit error (its Display is the FailedScheduling message).
        fit_error: Box<FitError>,
        /// What PostFilter decided.
        post_filter: Option<PostFilterResult>,
    },
    /// An internal plugin error: the pod goes to backoff.
    Internal(String),
}

impl ScheduleError {
    /// The message for the FailedScheduling event and PodScheduled condition.
    pub fn message(&self) -> String {
        match self {
            ScheduleError::NoNodesAvailable => "no nodes available to schedule pods".to_string(),
            ScheduleError::Fit { fit_error, .. } => fit_error.to_string(),
            ScheduleError::Internal(m) => m.clone(),
        }
    }

    /// The status: Unschedulable for fit errors, UnschedulableAndUnresolvable for "no
    /// nodes available" (as `schedulingCycle` wraps ErrNoNodesAvailable), Error otherwise.
    pub fn status(&self) -> Status {
        match self {
            ScheduleError::Fit { .. } => Status::new(Code::Unschedulable, self.message()),
            ScheduleError::NoNodesAvailable => {
                Status::new(Code::UnschedulableAndUnresolvable, self.message())
            }
            ScheduleError::Internal(_) => Status::error(self.message()),
        }
    }

    /// Plugins that rejected the pod.
    pub fn unschedulable_plugins(&self) -> BTreeSet<&'static str> {
        match self {
            ScheduleError::Fit { fit_error, .. } => {
                fit_error.diagnosis.unschedulable_plugins.clone()
            }
            _ => BTreeSet::new(),
        }
    }
}

/// Everything one cycle produced.
#[derive(Debug)]
pub struct ScheduleOutcome {
    /// The chosen node, or why there is none.
    pub result: Result<ScheduleResult, ScheduleError>,
    /// The cycle state (Reserve/PreBind plugins read it, e.g. VolumeBinding's decisions).
    pub cycle_state: CycleState,
    /// Annotations, when recording was asked for.
    pub annotations: Option<Annotations>,
}

/// Schedules one pod: `schedulePod`, then PostFilter (preemption) on a FitError.
/// `record` turns on the per-node annotation bookkeeping (off for scale runs).
pub fn schedule_one(
    fw: &Framework,
    snap: &Snapshot,
    nominated: &Nominated,
    pod: &PodInfo,
    st: &mut SchedulerState,
    rng: &mut Rng,
    record: bool,
) -> ScheduleOutcome {
    let mut state = CycleState::default();
    let mut ann = record.then(Annotations::default);
    let result = schedule_pod(fw, snap, nominated, pod, st, rng, &mut state, ann.as_mut());
    let result = match result {
        Err(ScheduleError::Fit { mut fit_error, .. }) => {
            let mut ctx = PostFilterContext {
                framework: fw,
                snapshot: snap,
                nominated,
                rng,
            };
            let (r, s) =
                fw.run_post_filter(&mut ctx, &state, pod, &fit_error.diagnosis.node_to_status);
            fit_error.diagnosis.post_filter_msg = s.message();
            Err(ScheduleError::Fit {
                fit_error,
                post_filter: r,
            })
        }
        other => other,
    };
    if let (Some(a), Ok(r)) = (ann.as_mut(), &result) {
        a.selected_node = Some(r.suggested_host.clone());
    }
    ScheduleOutcome {
        result,
        cycle_state: state,
        annotations: ann,
    }
}

#[allow(clippy::too_many_arguments)]
fn schedule_pod(
    fw: &Framework,
    snap: &Snapshot,
    nominated: &Nominated,
    pod: &PodInfo,
    st: &mut SchedulerState,
    rng: &mut Rng,
    state: &mut CycleState,
    mut ann: Option<&mut Annotations>,
) -> Result<ScheduleResult, ScheduleError> {
    let all = snap.num_nodes();
    if all == 0 {
        return Err(ScheduleError::NoNodesAvailable);
    }
    let mut diag = Diagnosis::default();
    let (pre, s, plugins) = fw.run_pre_filter(state, pod, snap);
    diag.unschedulable_plugins = plugins.clone();
    if !s.is_success() {
        if !s.is_rejected() {
            return Err(ScheduleError::Internal(s.message()));
        }
        diag.pre_filter_msg = s.message();
        diag.node_to_status.absent = Some(s);
        return Err(fit(all, diag));
    }
    let mut feasible: Vec<usize> = Vec::new();
    // A node nominated by an earlier preemption is tried first.
    let nnn = pod
        .pod
        .status
        .as_ref()
        .and_then(|s| s.nominated_node_name.as_deref())
        .unwrap_or("");
    if let Some(i) = (!nnn.is_empty()).then(|| snap.position(nnn)).flatten() {
        let rec = ann
            .as_deref_mut()
            .map(|a| a.filter.entry(nnn.to_string()).or_default());
        let s = fw.run_filter_with_nominated(state, pod, &snap.nodes()[i], nominated, rec);
        if s.is_success() {
            feasible.push(i);
        }
    }
    if feasible.is_empty() {
        let nodes: Vec<usize> = match &pre.node_names {
            None => (0..all).collect(),
            Some(names) => {
                diag.node_to_status.absent = Some(Status::new(
                    Code::UnschedulableAndUnresolvable,
                    format!(
                        "node(s) didn't satisfy plugin(s) [{}]",
                        plugins.iter().copied().collect::<Vec<_>>().join(" ")
                    ),
                ));
                (0..all)
                    .filter(|i| names.contains(&snap.nodes()[*i].name))
                    .collect()
            }
        };
        let res = find_nodes_that_pass_filters(
            fw,
            snap,
            nominated,
            pod,
            st,
            state,
            &nodes,
            &mut diag,
            ann.as_deref_mut(),
        );
        let processed = feasible_len(&res) + diag.node_to_status.nodes.len();
        st.next_start_node_index = (st.next_start_node_index + processed) % all;
        feasible = res?;
    }
    if feasible.is_empty() {
        return Err(fit(all, diag));
    }
    let evaluated = feasible.len() + diag.node_to_status.nodes.len();
    if feasible.len() == 1 {
        return Ok(ScheduleResult {
            suggested_host: snap.nodes()[feasible[0]].name.clone(),
            evaluated_nodes: evaluated,
            feasible_nodes: 1,
        });
    }
    let totals = prioritize_nodes(fw, snap, pod, state, &feasible, ann)?;
    let host = select_host(&feasible, &totals, rng);
    Ok(ScheduleResult {
        suggested_host: snap.nodes()[host].name.clone(),
        evaluated_nodes: evaluated,
        feasible_nodes: feasible.len(),
    })
}

fn feasible_len(r: &Result<Vec<usize>, ScheduleError>) -> usize {
    r.as_ref().map(|v| v.len()).unwrap_or(0)
}

fn fit(all: usize, diagnosis: Diagnosis) -> ScheduleError {
    ScheduleError::Fit {
        fit_error: Box::new(FitError {
            num_all_nodes: all,
            diagnosis,
        }),
        post_filter: None,
    }
}

#[allow(clippy::too_many_arguments)]
fn find_nodes_that_pass_filters(
    fw: &Framework,
    snap: &Snapshot,
    nominated: &Nominated,
    pod: &PodInfo,
    st: &SchedulerState,
    state: &CycleState,
    nodes: &[usize],
    diag: &mut Diagnosis,
    mut ann: Option<&mut Annotations>,
) -> Result<Vec<usize>, ScheduleError> {
    let n = nodes.len();
    if n == 0 {
        return Ok(Vec::new());
    }
    let mut to_find = num_feasible_nodes_to_find(
        fw.percentage_of_nodes_to_score,
        st.percentage_of_nodes_to_score,
        n,
    );
    if !fw.has_score_plugins() {
        to_find = 1;
    }
    let mut feasible = Vec::with_capacity(to_find.min(n));
    if !fw.has_filter_plugins() {
        for i in 0..to_find.min(n) {
            feasible.push(nodes[(st.next_start_node_index + i) % n]);
        }
        return Ok(feasible);
    }
    for i in 0..n {
        let idx = nodes[(st.next_start_node_index + i) % n];
        let node = &snap.nodes()[idx];
        let rec = ann
            .as_deref_mut()
            .map(|a| a.filter.entry(node.name.clone()).or_default());
        let s = fw.run_filter_with_nominated(state, pod, node, nominated, rec);
        if s.code == Code::Error {
            return Err(ScheduleError::Internal(s.message()));
        }
        if s.is_success() {
            feasible.push(idx);
            if feasible.len() >= to_find {
                break;
            }
        } else {
            diag.unschedulable_plugins.insert(s.plugin);
            diag.node_to_status.nodes.push((idx, s));
        }
    }
    Ok(feasible)
}

fn prioritize_nodes(
    fw: &Framework,
    snap: &Snapshot,
    pod: &PodInfo,
    state: &mut CycleState,
    feasible: &[usize],
    ann: Option<&mut Annotations>,
) -> Result<Vec<i64>, ScheduleError> {
    if !fw.has_score_plugins() {
        return Ok(vec![1; feasible.len()]);
    }
    let s = fw.run_pre_score(state, pod, feasible, snap);
    if !s.is_success() {
        return Err(ScheduleError::Internal(s.message()));
    }
    let scores: Vec<PluginScores> = fw
        .run_score(state, pod, feasible, snap)
        .map_err(|s| ScheduleError::Internal(s.message()))?;
    let mut totals = vec![0i64; feasible.len()];
    for ps in &scores {
        for (t, v) in totals.iter_mut().zip(&ps.normalized) {
            *t += v * ps.weight;
        }
    }
    if let Some(a) = ann {
        for (k, &idx) in feasible.iter().enumerate() {
            let name = &snap.nodes()[idx].name;
            let raw = a.score.entry(name.clone()).or_default();
            for ps in &scores {
                raw.insert(ps.name.to_string(), ps.raw[k]);
            }
            let fin = a.final_score.entry(name.clone()).or_default();
            for ps in &scores {
                fin.insert(ps.name.to_string(), ps.normalized[k] * ps.weight);
            }
        }
    }
    Ok(totals)
}

/// `selectHost`: the node with the highest total; every further node tied with the best
/// so far replaces the pick with probability 1/count (`rng.intn(count) == 0`), i.e.
/// reservoir sampling, uniform among ties. Upstream visits ties in its heap's pop order;
/// here they are visited in evaluation order, with the same number of draws and the same
/// distribution, without building a heap per cycle.
pub fn select_host(feasible: &[usize], totals: &[i64], rng: &mut Rng) -> usize {
    let Some(top) = totals.iter().copied().max() else {
        return 0;
    };
    let mut ties = feasible
        .iter()
        .zip(totals)
        .filter(|(_, t)| **t == top)
        .map(|(i, _)| *i);
    let mut best = ties.next().unwrap_or(0);
    let mut cnt = 1u64;
    for idx in ties {
        cnt += 1;
        if rng.intn(cnt) == 0 {
            best = idx;
        }
    }
    best
}

#[cfg(test)]
#[path = "algorithm_tests.rs"]
mod tests;
