//! PodTopologySpread scoring: PreScore counts matching pods per domain over all nodes,
//! Score sums `count * log(domains + 2) + (maxSkew − 1)`, NormalizeScore inverts.

use std::collections::{BTreeMap, BTreeSet};

use super::*;

/// Score state (`preScoreState`).
#[derive(Clone, Debug)]
pub(super) struct PreScoreState {
    constraints: Vec<Constraint>,
    /// Feasible nodes (snapshot positions) without all required keys: scored 0.
    ignored: BTreeSet<String>,
    /// Aligned with the feasible list passed to PreScore, for NormalizeScore.
    ignored_mask: Vec<bool>,
    counts: Vec<BTreeMap<String, i64>>,
    weights: Vec<f64>,
}

impl PreScorePlugin for PodTopologySpread {
    fn pre_score(
        &self,
        state: &mut CycleState,
        pod: &PodInfo,
        feasible: &[usize],
        snap: &Snapshot,
    ) -> Status {
        if snap.num_nodes() == 0 {
            return Status::code_only(Code::Skip);
        }
        let constraints = self.constraints(pod, snap, "ScheduleAnyway");
        if constraints.is_empty() {
            return Status::code_only(Code::Skip);
        }
        let has_own = pod
            .pod
            .spec
            .as_ref()
            .and_then(|s| s.topology_spread_constraints.as_ref())
            .is_some_and(|c| !c.is_empty());
        let require_all = has_own || !self.system_defaulted;
        let mut ignored = BTreeSet::new();
        let mut ignored_mask = vec![false; feasible.len()];
        let mut counts: Vec<BTreeMap<String, i64>> = vec![BTreeMap::new(); constraints.len()];
        // Domain sizes count the "" domain of unlabelled nodes, as upstream's topoSize does.
        let mut sizes = vec![BTreeSet::<&str>::new(); constraints.len()];
        for (k, &i) in feasible.iter().enumerate() {
            let node = &snap.nodes()[i];
            if require_all && !has_all_keys(&node.labels, &constraints) {
                ignored.insert(node.name.clone());
                ignored_mask[k] = true;
                continue;
            }
            for (ci, c) in constraints.iter().enumerate() {
                if c.topology_key == LABEL_HOSTNAME {
                    continue;
                }
                // A node without the key would count into the "" domain, which Score never
                // reads (it needs the label): only labelled domains are tracked.
                let v = node.labels.get(&c.topology_key);
                sizes[ci].insert(v.map(|s| s.as_str()).unwrap_or(""));
                if let Some(v) = v {
                    counts[ci].entry(v.clone()).or_insert(0);
                }
            }
        }
        let weights = constraints
            .iter()
            .zip(&sizes)
            .map(|(c, m)| {
                let size = if c.topology_key == LABEL_HOSTNAME {
                    feasible.len() - ignored.len()
                } else {
                    m.len()
                };
                ((size + 2) as f64).ln()
            })
            .collect();
        let required = Required::of(pod);
        let active: Vec<usize> = (0..constraints.len())
            .filter(|i| {
                !counts[*i].is_empty()
                    && snap.num_nodes_with_label_key(&constraints[*i].topology_key) > 0
            })
            .collect();
        // Constraints whose domains can come from the snapshot's cached counts: every node
        // with the key counts, and no other key is required of it.
        let (cached, active): (Vec<usize>, Vec<usize>) = active.into_iter().partition(|&ci| {
            constraints[ci].counts_all_nodes(&required) && (!require_all || constraints.len() == 1)
        });
        for ci in cached {
            let c = &constraints[ci];
            let all = snap.domain_counts(&pod.namespace, &c.selector, &c.topology_key);
            for (v, slot) in counts[ci].iter_mut() {
                *slot = all.get(v).copied().unwrap_or(0);
            }
        }
        if !active.is_empty() {
            for node in snap.nodes() {
                if require_all && !has_all_keys(&node.labels, &constraints) {
                    continue;
                }
                for &ci in &active {
                    let c = &constraints[ci];
                    let Some(v) = node.labels.get(&c.topology_key) else {
                        continue;
                    };
                    let Some(slot) = counts[ci].get_mut(v) else {
                        continue;
                    };
                    if node.pods.is_empty() || !c.includes_node(pod, node, &required) {
                        continue;
                    }
                    *slot += count_matching(node, &c.selector, &pod.namespace);
                }
            }
        }
        state.write(
            PRE_SCORE_KEY,
            PreScoreState {
                constraints,
                ignored,
                ignored_mask,
                counts,
                weights,
            },
        );
        Status::success()
    }
}

impl ScorePlugin for PodTopologySpread {
    fn score(
        &self,
        state: &CycleState,
        pod: &PodInfo,
        node: &NodeInfo,
        _: &Snapshot,
    ) -> Result<i64, Status> {
        let Some(s) = state.read::<PreScoreState>(PRE_SCORE_KEY) else {
            return Err(Status::error(format!(
                "error reading {PRE_SCORE_KEY:?} from cycleState: not found"
            )));
        };
        if !s.ignored.is_empty() && s.ignored.contains(&node.name) {
            return Ok(0);
        }
        let mut score = 0f64;
        for (i, c) in s.constraints.iter().enumerate() {
            let Some(v) = node.labels.get(&c.topology_key) else {
                continue;
            };
            let cnt = if c.topology_key == LABEL_HOSTNAME {
                count_matching(node, &c.selector, &pod.namespace)
            } else {
                s.counts[i].get(v).copied().unwrap_or(0)
            };
            score += cnt as f64 * s.weights[i] + (c.max_skew - 1) as f64;
        }
        Ok(score.round() as i64)
    }

    fn has_normalize(&self) -> bool {
        true
    }

    fn normalize_score(&self, state: &CycleState, _: &PodInfo, scores: &mut [i64]) -> Status {
        let Some(s) = state.read::<PreScoreState>(PRE_SCORE_KEY) else {
            return Status::success();
        };
        let ignored = |k: usize| s.ignored_mask.get(k).copied().unwrap_or(false);
        let (mut min, mut max) = (i64::MAX, 0i64);
        for (k, v) in scores.iter().enumerate() {
            if ignored(k) {
                continue;
            }
            min = min.min(*v);
            max = max.max(*v);
        }
        for (k, v) in scores.iter_mut().enumerate() {
            if ignored(k) {
                *v = 0;
            } else if max == 0 {
                *v = MAX_NODE_SCORE;
            } else {
                *v = MAX_NODE_SCORE * (max + min - *v) / max;
            }
        }
        Status::success()
    }
}
