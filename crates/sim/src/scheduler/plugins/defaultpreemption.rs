//! DefaultPreemption (PostFilter): when no node fits, finds nodes where evicting
//! lower-priority pods would make room, picks the minimal victim set per node and the best
//! node by upstream's ordered criteria, and nominates the pod there.

use std::sync::Arc;

use k8s_openapi::api::policy::v1::PodDisruptionBudget;

use crate::api::{ApiRequest, Body, PatchType, Subresource, Verb};
use crate::object::{Kind, Object};
use crate::scheduler::algorithm::{Diagnosis, FitError};
use crate::scheduler::config::PluginArgs;
use crate::scheduler::framework::*;
use crate::scheduler::nodeinfo::NodeInfo;
use crate::scheduler::podinfo::PodInfo;
use crate::scheduler::runtime::Framework;
use crate::time::{k8s_time, Time};

/// The plugin name.
pub const NAME: &str = "DefaultPreemption";
/// Status of nodes where preemption cannot help.
pub const PREEMPTION_NOT_HELPFUL: &str = "Preemption is not helpful for scheduling";
/// `SelectVictimsOnNode` when nothing on the node has a lower priority.
pub const NO_VICTIMS: &str = "No preemption victims found for incoming pod";

/// The DefaultPreemption plugin.
pub struct DefaultPreemption {
    min_candidate_nodes_percentage: i64,
    min_candidate_nodes_absolute: i64,
}

/// Constructor for the registry.
pub fn new(args: Option<&PluginArgs>) -> Result<Box<dyn Plugin>, String> {
    let (p, a) = match args {
        Some(PluginArgs::DefaultPreemption {
            min_candidate_nodes_percentage,
            min_candidate_nodes_absolute,
        }) => (
            i64::from(*min_candidate_nodes_percentage),
            i64::from(*min_candidate_nodes_absolute),
        ),
        _ => (10, 100),
    };
    Ok(Box::new(DefaultPreemption {
        min_candidate_nodes_percentage: p,
        min_candidate_nodes_absolute: a,
    }))
}

impl Plugin for DefaultPreemption {
    fn name(&self) -> &'static str {
        NAME
    }
    fn as_post_filter(&self) -> Option<&dyn PostFilterPlugin> {
        Some(self)
    }
}

/// A node where preemption makes room, with the pods to evict (most important first).
#[derive(Clone, Debug)]
pub struct Candidate {
    /// Node name.
    pub node: String,
    /// Victims.
    pub victims: Vec<Arc<PodInfo>>,
    /// How many victims' evictions would violate a PodDisruptionBudget.
    pub num_pdb_violations: usize,
}

impl DefaultPreemption {
    /// `calculateNumCandidates`.
    pub fn num_candidates(&self, num_nodes: i64) -> i64 {
        (num_nodes * self.min_candidate_nodes_percentage / 100)
            .max(self.min_candidate_nodes_absolute)
            .min(num_nodes)
    }
}

/// `MoreImportantPod`: higher priority, then earlier start.
fn more_important(a: &PodInfo, b: &PodInfo) -> std::cmp::Ordering {
    b.priority
        .cmp(&a.priority)
        .then(a.start_time.cmp(&b.start_time))
}

fn terminating_by_preemption(p: &PodInfo) -> bool {
    p.pod.metadata.deletion_timestamp.is_some()
        && p.pod
            .status
            .as_ref()
            .and_then(|s| s.conditions.as_ref())
            .is_some_and(|cs| {
                cs.iter().any(|c| {
                    c.type_ == "DisruptionTarget"
                        && c.status == "True"
                        && c.reason.as_deref() == Some("PreemptionByScheduler")
                })
            })
}

/// `filterPodsWithPDBViolation`: splits pods (in order) into those whose eviction would
/// take a matching budget below zero and the others. Each match spends one of the
/// budget's `disruptionsAllowed`, unless the budget already counts the pod as disrupted.
pub fn filter_pods_with_pdb_violation(
    pods: Vec<Arc<PodInfo>>,
    pdbs: &[Arc<PodDisruptionBudget>],
) -> (Vec<Arc<PodInfo>>, Vec<Arc<PodInfo>>) {
    let mut allowed: Vec<i32> = pdbs
        .iter()
        .map(|p| p.status.as_ref().map_or(0, |s| s.disruptions_allowed))
        .collect();
    let (mut violating, mut non_violating) = (Vec::new(), Vec::new());
    for p in pods {
        let mut violated = false;
        // A pod without labels matches no budget.
        if !p.labels.is_empty() {
            for (i, pdb) in pdbs.iter().enumerate() {
                if pdb.metadata.namespace.as_deref() != Some(p.namespace.as_str()) {
                    continue;
                }
                let sel = pdb.spec.as_ref().and_then(|s| s.selector.as_ref());
                let Ok(sel) = crate::selector::LabelSelector::from_k8s(sel) else {
                    continue;
                };
                // A nil or empty selector matches nothing here.
                if sel.is_empty() || !sel.matches(Some(&p.labels)) {
                    continue;
                }
                let disrupted = pdb.status.as_ref().and_then(|s| s.disrupted_pods.as_ref());
                if disrupted.is_some_and(|d| d.contains_key(&p.name)) {
                    continue;
                }
                allowed[i] -= 1;
                if allowed[i] < 0 {
                    violated = true;
                }
            }
        }
        if violated {
            violating.push(p);
        } else {
            non_violating.push(p);
        }
    }
    (violating, non_violating)
}

/// `SelectVictimsOnNode`: evict every lower-priority pod, check the pod fits, then reprieve
/// as many as possible: first those whose eviction would violate a PodDisruptionBudget,
/// then the others, each group most important first. Returns the victims (most important
/// first) and how many of them violate a budget.
pub fn select_victims_on_node(
    fw: &Framework,
    state: &mut CycleState,
    pod: &PodInfo,
    node: &mut NodeInfo,
    nominated: &Nominated,
    pdbs: &[Arc<PodDisruptionBudget>],
) -> Result<(Vec<Arc<PodInfo>>, usize), Status> {
    let mut potential: Vec<Arc<PodInfo>> = node
        .pods
        .iter()
        .filter(|p| p.priority < pod.priority)
        .cloned()
        .collect();
    if potential.is_empty() {
        return Err(Status::new(Code::UnschedulableAndUnresolvable, NO_VICTIMS));
    }
    for v in &potential {
        node.remove_pod(&v.key);
        let s = fw.run_pre_filter_remove_pod(state, pod, v, node);
        if !s.is_success() {
            return Err(s);
        }
    }
    let s = fw.run_filter_with_nominated(state, pod, node, nominated, None);
    if !s.is_success() {
        return Err(s);
    }
    potential.sort_by(|a, b| more_important(a, b));
    let (violating, non_violating) = filter_pods_with_pdb_violation(potential, pdbs);
    let both = !violating.is_empty() && !non_violating.is_empty();
    let mut victims = Vec::new();
    let mut num_violating = 0;
    let ordered = violating
        .into_iter()
        .map(|v| (true, v))
        .chain(non_violating.into_iter().map(|v| (false, v)));
    for (is_violating, v) in ordered {
        node.add_pod(v.clone());
        let s = fw.run_pre_filter_add_pod(state, pod, &v, node);
        if !s.is_success() {
            return Err(s);
        }
        if !fw
            .run_filter_with_nominated(state, pod, node, nominated, None)
            .is_success()
        {
            node.remove_pod(&v.key);
            let s = fw.run_pre_filter_remove_pod(state, pod, &v, node);
            if !s.is_success() {
                return Err(s);
            }
            victims.push(v);
            if is_violating {
                num_violating += 1;
            }
        }
    }
    if both {
        victims.sort_by(|a, b| more_important(a, b));
    }
    Ok((victims, num_violating))
}

/// The status patch marking a victim with the DisruptionTarget condition before the
/// scheduler deletes it (strategic merge: conditions merge by type).
pub fn disruption_target_request(
    preemptor: &Object,
    ns: &str,
    name: &str,
    now: Time,
) -> ApiRequest {
    let scheduler = match preemptor {
        Object::Pod(p) => p.spec.as_ref().and_then(|s| s.scheduler_name.clone()),
        _ => None,
    }
    .unwrap_or_else(|| "default-scheduler".into());
    let time = serde_json::to_value(k8s_time(now)).unwrap_or_default();
    let patch = serde_json::json!({"status": {"conditions": [{
        "type": "DisruptionTarget",
        "status": "True",
        "reason": "PreemptionByScheduler",
        "message": format!("{scheduler}: preempting to accommodate a higher priority pod"),
        "lastTransitionTime": time,
    }]}});
    ApiRequest::new(Verb::Patch, Kind::Pod, ns, name)
        .with_subresource(Subresource::Status)
        .with_body(Body::Patch(PatchType::StrategicMerge, patch))
}

/// The PodDisruptionBudgets among informer objects, for the snapshot.
pub fn pdb_list<'a>(
    objects: impl Iterator<Item = &'a Arc<Object>>,
) -> Vec<Arc<PodDisruptionBudget>> {
    objects
        .filter_map(|o| match &**o {
            Object::PodDisruptionBudget(p) => Some(Arc::new((**p).clone())),
            _ => None,
        })
        .collect()
}

/// `pickOneNodeForPreemption` with the default criteria: fewest PDB violations, lowest
/// highest-victim priority, lowest priority sum, fewest victims, latest earliest-start
/// among the highest-priority victims; then the first candidate.
pub fn pick_one_node(candidates: &[Candidate]) -> Option<&Candidate> {
    type ScoreFn = fn(&Candidate) -> i64;
    let score_fns: [ScoreFn; 5] = [
        |c| -(c.num_pdb_violations as i64),
        |c| -i64::from(c.victims.first().map(|p| p.priority).unwrap_or(0)),
        |c| {
            -c.victims
                .iter()
                .map(|p| i64::from(p.priority) + i64::from(i32::MAX) + 1)
                .sum::<i64>()
        },
        |c| -(c.victims.len() as i64),
        |c| {
            let Some(first) = c.victims.first() else {
                return i64::MIN;
            };
            let (mut maxp, mut earliest) = (first.priority, first.start_time);
            for p in &c.victims {
                if p.priority == maxp {
                    earliest = earliest.min(p.start_time);
                } else if p.priority > maxp {
                    maxp = p.priority;
                    earliest = p.start_time;
                }
            }
            earliest as i64
        },
    ];
    let mut all: Vec<&Candidate> = candidates.iter().collect();
    for f in score_fns {
        let max = all.iter().map(|c| f(c)).max()?;
        all.retain(|c| f(c) == max);
        if all.len() == 1 {
            break;
        }
    }
    all.first().copied()
}

impl PostFilterPlugin for DefaultPreemption {
    fn post_filter(
        &self,
        ctx: &mut PostFilterContext<'_>,
        state: &CycleState,
        pod: &PodInfo,
        statuses: &NodeToStatus,
    ) -> (Option<PostFilterResult>, Status) {
        let snap = ctx.snapshot;
        let wrap = |code: Code, msg: String| Status::new(code, format!("preemption: {msg}"));
        // 1) PodEligibleToPreemptOthers.
        let spec = pod.pod.spec.as_ref();
        if spec.and_then(|s| s.preemption_policy.as_deref()) == Some("Never") {
            return (
                None,
                wrap(
                    Code::Unschedulable,
                    "not eligible due to preemptionPolicy=Never.".into(),
                ),
            );
        }
        let nnn = pod
            .pod
            .status
            .as_ref()
            .and_then(|s| s.nominated_node_name.clone())
            .unwrap_or_default();
        if let Some(i) = (!nnn.is_empty()).then(|| snap.position(&nnn)).flatten() {
            let unresolvable = statuses
                .get(i)
                .is_some_and(|s| s.code == Code::UnschedulableAndUnresolvable);
            let terminating = snap.nodes()[i]
                .pods
                .iter()
                .any(|p| p.priority < pod.priority && terminating_by_preemption(p));
            if !unresolvable && terminating {
                return (
                    None,
                    wrap(
                        Code::Unschedulable,
                        "not eligible due to a terminating pod on the nominated node.".into(),
                    ),
                );
            }
        }
        // 2) Candidates: nodes whose failure was Unschedulable (not unresolvable).
        let potential: Vec<usize> = (0..snap.num_nodes())
            .filter(|i| {
                statuses
                    .get(*i)
                    .is_some_and(|s| s.code == Code::Unschedulable)
            })
            .collect();
        let mut dry = NodeToStatus::default();
        let mut candidates = Vec::new();
        if !potential.is_empty() {
            let n = potential.len();
            let offset = ctx.rng.intn(n as u64) as usize;
            let want = self.num_candidates(n as i64) as usize;
            for k in 0..n {
                let idx = potential[(offset + k) % n];
                let mut node = snap.nodes()[idx].clone();
                let mut st = state.clone();
                let pdbs = &snap.pdbs;
                match select_victims_on_node(
                    ctx.framework,
                    &mut st,
                    pod,
                    &mut node,
                    ctx.nominated,
                    pdbs,
                ) {
                    Ok((v, num_pdb_violations)) if !v.is_empty() => {
                        candidates.push(Candidate {
                            node: node.name.clone(),
                            victims: v,
                            num_pdb_violations,
                        });
                        if candidates.len() >= want {
                            break;
                        }
                    }
                    Ok(_) => dry.nodes.push((
                        idx,
                        Status::error(format!(
                            "expected at least one victim pod on node {:?}",
                            node.name
                        )),
                    )),
                    Err(s) => dry.nodes.push((idx, s)),
                }
            }
        }
        if candidates.is_empty() {
            dry.absent = Some(Status::new(
                Code::UnschedulableAndUnresolvable,
                PREEMPTION_NOT_HELPFUL,
            ));
            let fe = FitError {
                num_all_nodes: snap.num_nodes(),
                diagnosis: Diagnosis {
                    node_to_status: dry,
                    ..Default::default()
                },
            };
            // An empty nomination clears the pod's nominatedNodeName.
            let r = PostFilterResult::default();
            return (Some(r), wrap(Code::Unschedulable, fe.to_string()));
        }
        // 4) The best candidate.
        let Some(best) = pick_one_node(&candidates) else {
            return (
                None,
                wrap(
                    Code::Unschedulable,
                    "no candidate node for preemption".into(),
                ),
            );
        };
        let clear_nominations = ctx
            .nominated
            .get(&best.node)
            .into_iter()
            .flatten()
            .filter(|p| p.priority < pod.priority && p.key != pod.key)
            .map(|p| p.key.clone())
            .collect();
        let r = PostFilterResult {
            nominated_node_name: best.node.clone(),
            victims: best.victims.iter().map(|v| v.key.clone()).collect(),
            clear_nominations,
        };
        (Some(r), Status::success())
    }
}

#[cfg(test)]
#[path = "defaultpreemption_tests.rs"]
mod tests;
