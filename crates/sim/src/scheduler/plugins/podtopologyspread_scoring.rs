//! PodTopologySpread scoring: PreScore counts matching pods per domain over all nodes,
//! Score sums `count * log(domains + 2) + (maxSkew − 1)`, NormalizeScore inverts.
//!
//! When no node-inclusion policy filters nodes (the common case), counts come from the
//! snapshot's integer indexes (domain per node, matching pods per node), so neither
//! PreScore nor Score does string work per node. Otherwise the direct scan is used.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use super::*;
use crate::scheduler::domaincache::{KeyIndex, NO_DOMAIN};

/// `topologyNormalizingWeight`: ln(size + 2), computed with basic IEEE operations only so
/// native and wasm builds (whose `ln` come from different math libraries) agree bit for bit.
pub fn topology_normalizing_weight(size: usize) -> f64 {
    const LN2: f64 = std::f64::consts::LN_2;
    let mut m = (size + 2) as f64;
    let mut e = 0i32;
    while m >= 2.0 {
        m /= 2.0; // exact
        e += 1;
    }
    // ln(m) = 2·atanh(t), t = (m−1)/(m+1) ∈ [0, 1/3): the series converges fast.
    let t = (m - 1.0) / (m + 1.0);
    let t2 = t * t;
    let (mut term, mut sum) = (t, 0.0f64);
    let mut k = 1.0;
    while k < 80.0 {
        sum += term / k;
        term *= t2;
        k += 2.0;
    }
    f64::from(e) * LN2 + 2.0 * sum
}

/// How one constraint's counts are looked up in Score.
#[derive(Clone, Debug)]
enum Counts {
    /// Domain totals by domain index (hostname: the node's own count).
    Indexed {
        ki: Arc<KeyIndex>,
        per_node: Arc<Vec<i64>>,
        totals: Arc<Vec<i64>>,
    },
    /// Domain totals by label value (direct scan; hostname counted in Score).
    Map(BTreeMap<String, i64>),
}

/// Score state (`preScoreState`).
#[derive(Clone, Debug)]
pub(super) struct PreScoreState {
    constraints: Vec<Constraint>,
    /// Feasible nodes without all required keys: scored 0.
    ignored: BTreeSet<String>,
    /// Aligned with the feasible list passed to PreScore, for NormalizeScore.
    ignored_mask: Vec<bool>,
    counts: Vec<Counts>,
    weights: Vec<f64>,
}

impl PodTopologySpread {
    fn pre_score_indexed(
        &self,
        pod: &PodInfo,
        constraints: Vec<Constraint>,
        feasible: &[usize],
        snap: &Snapshot,
        require_all: bool,
    ) -> PreScoreState {
        let kis: Vec<Arc<KeyIndex>> = constraints
            .iter()
            .map(|c| snap.key_index(&c.topology_key))
            .collect();
        let has_all = |i: usize| kis.iter().all(|k| k.node_domain[i] != NO_DOMAIN);
        let mut ignored = BTreeSet::new();
        let mut ignored_mask = vec![false; feasible.len()];
        // Domains among feasible nodes (index `values.len()` stands for the "" domain);
        // hostname domains are just the scored nodes.
        let hostname = |ci: usize| constraints[ci].is_hostname;
        let mut seen: Vec<Vec<bool>> = kis
            .iter()
            .enumerate()
            .map(|(ci, k)| {
                if hostname(ci) {
                    vec![]
                } else {
                    vec![false; k.values.len() + 1]
                }
            })
            .collect();
        let mut scored = 0usize;
        for (k, &i) in feasible.iter().enumerate() {
            if require_all && !has_all(i) {
                ignored.insert(snap.nodes()[i].name.clone());
                ignored_mask[k] = true;
                continue;
            }
            scored += 1;
            for (ci, ki) in kis.iter().enumerate() {
                if hostname(ci) {
                    continue;
                }
                let d = ki.node_domain[i];
                let slot = if d == NO_DOMAIN {
                    ki.values.len()
                } else {
                    d as usize
                };
                seen[ci][slot] = true;
            }
        }
        let mut counts = Vec::with_capacity(constraints.len());
        let mut weights = Vec::with_capacity(constraints.len());
        for (ci, c) in constraints.iter().enumerate() {
            let ki = kis[ci].clone();
            let per_node = snap.node_pod_counts(&pod.namespace, &c.selector);
            let size = if c.is_hostname {
                scored
            } else {
                seen[ci].iter().filter(|b| **b).count()
            };
            weights.push(topology_normalizing_weight(size));
            let totals = if c.is_hostname {
                Arc::new(Vec::new())
            } else if !require_all || constraints.len() == 1 {
                // Every node with the key counts: the cached totals are exact.
                snap.domain_totals(&pod.namespace, &c.selector, &c.topology_key)
            } else {
                let mut t = vec![0i64; ki.values.len()];
                for (i, d) in ki.node_domain.iter().enumerate() {
                    if *d != NO_DOMAIN && seen[ci][*d as usize] && has_all(i) {
                        t[*d as usize] += per_node[i];
                    }
                }
                Arc::new(t)
            };
            counts.push(Counts::Indexed {
                ki,
                per_node,
                totals,
            });
        }
        PreScoreState {
            constraints,
            ignored,
            ignored_mask,
            counts,
            weights,
        }
    }

    fn pre_score_scan(
        &self,
        pod: &PodInfo,
        constraints: Vec<Constraint>,
        feasible: &[usize],
        snap: &Snapshot,
        require_all: bool,
    ) -> PreScoreState {
        let mut ignored = BTreeSet::new();
        let mut ignored_mask = vec![false; feasible.len()];
        let mut maps: Vec<BTreeMap<String, i64>> = vec![BTreeMap::new(); constraints.len()];
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
                if c.is_hostname {
                    continue;
                }
                let v = node.labels.get(&c.topology_key);
                sizes[ci].insert(v.map(|s| s.as_str()).unwrap_or(""));
                // A node without the key would count into the "" domain, which Score
                // never reads (it needs the label): only labelled domains are tracked.
                if let Some(v) = v {
                    if !maps[ci].contains_key(v) {
                        maps[ci].insert(v.clone(), 0);
                    }
                }
            }
        }
        let weights = constraints
            .iter()
            .zip(&sizes)
            .map(|(c, m)| {
                let size = if c.is_hostname {
                    feasible.len() - ignored.len()
                } else {
                    m.len()
                };
                topology_normalizing_weight(size)
            })
            .collect();
        let required = Required::of(pod);
        for node in snap.nodes() {
            if node.pods.is_empty() || (require_all && !has_all_keys(&node.labels, &constraints)) {
                continue;
            }
            for (ci, c) in constraints.iter().enumerate() {
                let Some(v) = node.labels.get(&c.topology_key) else {
                    continue;
                };
                let Some(slot) = maps[ci].get_mut(v) else {
                    continue;
                };
                if c.includes_node(pod, node, &required) {
                    *slot += count_matching(node, &c.selector, &pod.namespace);
                }
            }
        }
        PreScoreState {
            constraints,
            ignored,
            ignored_mask,
            counts: maps.into_iter().map(Counts::Map).collect(),
            weights,
        }
    }
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
        // Only require all topology keys with the pod's own (or List-defaulted) rules, so
        // nodes without a zone label still get hostname spreading.
        let require_all = has_own || !self.system_defaulted;
        let required = Required::of(pod);
        let s = if constraints.iter().all(|c| c.counts_all_nodes(&required)) {
            self.pre_score_indexed(pod, constraints, feasible, snap, require_all)
        } else {
            self.pre_score_scan(pod, constraints, feasible, snap, require_all)
        };
        state.write(PRE_SCORE_KEY, s);
        Status::success()
    }
}

#[cfg(test)]
#[test]
fn normalizing_weight_matches_ln() {
    for size in [0usize, 1, 2, 3, 10, 100, 499, 500, 5000, 100_000] {
        let want = ((size + 2) as f64).ln();
        let got = topology_normalizing_weight(size);
        assert!(
            (got - want).abs() <= 4.0 * f64::EPSILON * want,
            "{size}: {got} vs {want}"
        );
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
            let cnt = match &s.counts[i] {
                Counts::Indexed {
                    ki,
                    per_node,
                    totals,
                } => {
                    let d = ki.node_domain.get(node.idx).copied().unwrap_or(NO_DOMAIN);
                    if d == NO_DOMAIN {
                        continue;
                    }
                    if c.is_hostname {
                        per_node[node.idx]
                    } else {
                        totals[d as usize]
                    }
                }
                Counts::Map(m) => {
                    let Some(v) = node.labels.get(&c.topology_key) else {
                        continue;
                    };
                    if c.is_hostname {
                        count_matching(node, &c.selector, &pod.namespace)
                    } else {
                        m.get(v).copied().unwrap_or(0)
                    }
                }
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
