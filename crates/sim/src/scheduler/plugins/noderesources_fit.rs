//! NodeResourcesFit: the pod's requests must fit the node's free allocatable resources
//! (`Insufficient cpu`, `Too many pods`, …); scores with the configured strategy
//! (LeastAllocated by default, MostAllocated or RequestedToCapacityRatio).

use std::borrow::Cow;

use super::resource_allocation::{pod_request_list, score_node, Resources, Scorer};
use crate::scheduler::config::{NodeResourcesFitArgs, PluginArgs};
use crate::scheduler::framework::*;
use crate::scheduler::nodeinfo::{NodeInfo, Snapshot};
use crate::scheduler::podinfo::PodInfo;
use crate::scheduler::resource::Resource;
use crate::scheduler::validation::validate_fit_args;

/// The plugin name.
pub const NAME: &str = "NodeResourcesFit";
const PRE_SCORE_KEY: &str = "PreScoreNodeResourcesFit";

/// The NodeResourcesFit plugin.
pub struct Fit {
    ignored_resources: Vec<String>,
    ignored_resource_groups: Vec<String>,
    resources: Resources,
    scorer: Scorer,
}

/// Constructor for the registry: validates args as `NewFit` does.
pub fn new(args: Option<&PluginArgs>) -> Result<Box<dyn Plugin>, String> {
    let default;
    let args = match args {
        Some(PluginArgs::NodeResourcesFit(a)) => a,
        _ => {
            default = default_args();
            &default
        }
    };
    let errs = validate_fit_args(args);
    if !errs.is_empty() {
        return Err(if errs.len() == 1 {
            errs[0].clone()
        } else {
            format!("[{}]", errs.join(", "))
        });
    }
    let Some(s) = args.scoring_strategy.as_ref() else {
        return Err("scoringStrategy: Required value: ScoringStrategy field is required".into());
    };
    let scorer = match s.type_.as_str() {
        "MostAllocated" => Scorer::MostAllocated,
        "RequestedToCapacityRatio" => Scorer::ratio(
            &s.requested_to_capacity_ratio
                .as_ref()
                .map(|r| r.shape.clone())
                .unwrap_or_default(),
        ),
        _ => Scorer::LeastAllocated,
    };
    Ok(Box::new(Fit {
        ignored_resources: args.ignored_resources.clone(),
        ignored_resource_groups: args.ignored_resource_groups.clone(),
        resources: Resources::new(&s.resources),
        scorer,
    }))
}

fn default_args() -> NodeResourcesFitArgs {
    match crate::scheduler::config::KubeSchedulerConfiguration::default()
        .profiles
        .first()
        .and_then(|p| p.args(NAME).cloned())
    {
        Some(PluginArgs::NodeResourcesFit(a)) => a,
        _ => NodeResourcesFitArgs::default(),
    }
}

impl Plugin for Fit {
    fn name(&self) -> &'static str {
        NAME
    }
    /// `isSchedulableAfterNodeChange` / `isSchedulableAfterPodEvent`.
    fn queueing_hint(&self, pod: &PodInfo, event: &EventObjects<'_>) -> QueueingHint {
        let queue = |b: bool| {
            if b {
                QueueingHint::Queue
            } else {
                QueueingHint::QueueSkip
            }
        };
        match event {
            // The pod must fit the node's allocatable, and a changed node must have more
            // of something the pod asks for.
            EventObjects::Node { old, new } => queue(
                self.insufficient(pod, new).0.is_empty()
                    && old.is_none_or(|o| {
                        any_requested(&pod.requests, &o.allocatable, &new.allocatable, |a, b| {
                            b > a
                        })
                    }),
            ),
            // Any scheduled (or nominated) pod that goes frees room.
            EventObjects::DeletedPod(gone) => queue(
                !gone.node_name.is_empty()
                    || gone
                        .pod
                        .status
                        .as_ref()
                        .and_then(|s| s.nominated_node_name.as_deref())
                        .is_some_and(|n| !n.is_empty()),
            ),
            // An assigned pod whose requests went down (in-place resize) frees room.
            EventObjects::UpdatedPod { old, new } => queue(
                !new.node_name.is_empty()
                    && any_requested(&pod.requests, &old.requests, &new.requests, |a, b| b < a),
            ),
            _ => QueueingHint::Queue,
        }
    }
    fn as_pre_filter(&self) -> Option<&dyn PreFilterPlugin> {
        Some(self)
    }
    fn as_filter(&self) -> Option<&dyn FilterPlugin> {
        Some(self)
    }
    fn as_pre_score(&self) -> Option<&dyn PreScorePlugin> {
        Some(self)
    }
    fn as_score(&self) -> Option<&dyn ScorePlugin> {
        Some(self)
    }
}

impl PreFilterPlugin for Fit {
    fn pre_filter(
        &self,
        _: &mut CycleState,
        _: &PodInfo,
        _: &Snapshot,
    ) -> (Option<PreFilterResult>, Status) {
        // The pod's requests are precomputed in PodInfo; nothing else to prepare.
        (None, Status::success())
    }
}

/// Whether `changed(before, after)` holds for any resource `wanted` asks for.
fn any_requested(
    wanted: &Resource,
    before: &Resource,
    after: &Resource,
    changed: fn(i64, i64) -> bool,
) -> bool {
    (wanted.milli_cpu > 0 && changed(before.milli_cpu, after.milli_cpu))
        || (wanted.memory > 0 && changed(before.memory, after.memory))
        || (wanted.ephemeral_storage > 0
            && changed(before.ephemeral_storage, after.ephemeral_storage))
        || changed(before.allowed_pod_number, after.allowed_pod_number)
        || wanted.scalar.iter().any(|(name, v)| {
            let get = |r: &Resource| {
                r.scalar
                    .iter()
                    .find(|(n, _)| n == name)
                    .map_or(0, |(_, x)| *x)
            };
            *v > 0 && changed(get(before), get(after))
        })
}

impl Fit {
    fn ignored(&self, name: &str) -> bool {
        if !name.contains('/') || name.contains("kubernetes.io/") {
            return false;
        }
        let prefix = name.split('/').next().unwrap_or("");
        self.ignored_resources.iter().any(|r| r == name)
            || self.ignored_resource_groups.iter().any(|g| g == prefix)
    }

    /// `fitsRequest`: the reasons the pod doesn't fit, and whether any is unresolvable
    /// (the request exceeds the node's whole allocatable).
    pub fn insufficient(&self, pod: &PodInfo, node: &NodeInfo) -> (Vec<Cow<'static, str>>, bool) {
        let mut out = Vec::new();
        let mut unresolvable = false;
        let alloc = &node.allocatable;
        let used = &node.requested;
        if node.pods.len() as i64 + 1 > alloc.allowed_pod_number {
            out.push(Cow::Borrowed("Too many pods"));
        }
        let r = &pod.requests;
        if r.milli_cpu == 0
            && r.memory == 0
            && r.ephemeral_storage == 0
            && r.scalar.iter().all(|(_, v)| *v == 0)
        {
            return (out, false);
        }
        if r.milli_cpu > 0 && r.milli_cpu > alloc.milli_cpu - used.milli_cpu {
            out.push(Cow::Borrowed("Insufficient cpu"));
            unresolvable |= r.milli_cpu > alloc.milli_cpu;
        }
        if r.memory > 0 && r.memory > alloc.memory - used.memory {
            out.push(Cow::Borrowed("Insufficient memory"));
            unresolvable |= r.memory > alloc.memory;
        }
        if r.ephemeral_storage > 0
            && r.ephemeral_storage > alloc.ephemeral_storage - used.ephemeral_storage
        {
            out.push(Cow::Borrowed("Insufficient ephemeral-storage"));
            unresolvable |= r.ephemeral_storage > alloc.ephemeral_storage;
        }
        for (name, q) in &r.scalar {
            if *q == 0 || self.ignored(name) {
                continue;
            }
            if *q > alloc.scalar(name) - used.scalar(name) {
                out.push(Cow::Owned(format!("Insufficient {name}")));
                unresolvable |= *q > alloc.scalar(name);
            }
        }
        (out, unresolvable)
    }
}

impl FilterPlugin for Fit {
    fn filter(&self, _: &CycleState, pod: &PodInfo, node: &NodeInfo) -> Status {
        let (reasons, unresolvable) = self.insufficient(pod, node);
        if reasons.is_empty() {
            return Status::success();
        }
        let code = if unresolvable {
            Code::UnschedulableAndUnresolvable
        } else {
            Code::Unschedulable
        };
        Status::with_reasons(code, reasons)
    }
}

#[derive(Clone)]
struct PreScoreState {
    pod_requests: Vec<i64>,
}

impl PreScorePlugin for Fit {
    fn pre_score(
        &self,
        state: &mut CycleState,
        pod: &PodInfo,
        _: &[usize],
        _: &Snapshot,
    ) -> Status {
        state.write(
            PRE_SCORE_KEY,
            PreScoreState {
                pod_requests: pod_request_list(pod, &self.resources, false),
            },
        );
        Status::success()
    }
}

impl ScorePlugin for Fit {
    fn score(
        &self,
        state: &CycleState,
        pod: &PodInfo,
        node: &NodeInfo,
        _: &Snapshot,
    ) -> Result<i64, Status> {
        if self.resources.is_empty() {
            return Err(Status::error("resources not found"));
        }
        let owned;
        let reqs = match state.read::<PreScoreState>(PRE_SCORE_KEY) {
            Some(s) => &s.pod_requests,
            None => {
                owned = pod_request_list(pod, &self.resources, false);
                &owned
            }
        };
        Ok(score_node(&self.scorer, &self.resources, reqs, node, false))
    }
}

#[cfg(test)]
#[path = "noderesources_fit_tests.rs"]
mod tests;
