//! The resource-allocation scorers NodeResourcesFit and NodeResourcesBalancedAllocation
//! share: per-resource requested/allocatable pairs and the LeastAllocated, MostAllocated,
//! RequestedToCapacityRatio and balanced formulas (integer arithmetic as upstream).

use crate::scheduler::config::{ResourceSpec, UtilizationShapePoint};
use crate::scheduler::framework::MAX_NODE_SCORE;
use crate::scheduler::nodeinfo::NodeInfo;
use crate::scheduler::podinfo::PodInfo;
use crate::scheduler::resource::is_scalar_resource_name;

/// `MaxCustomPriorityScore` of RequestedToCapacityRatio shapes.
pub const MAX_CUSTOM_PRIORITY_SCORE: i64 = 10;
const MAX_UTILIZATION: i64 = 100;

/// A configured resource, resolved once so scoring compares no strings per node.
#[derive(Clone, Debug, PartialEq)]
pub enum ResName {
    /// `cpu` (milli-cores).
    Cpu,
    /// `memory` (bytes).
    Memory,
    /// `ephemeral-storage`.
    EphemeralStorage,
    /// `pods` or a resource the scheduler doesn't track (always skipped).
    Untracked,
    /// An extended/scalar resource.
    Scalar(String),
}

/// Configured resources: names resolved, weights aligned.
#[derive(Clone, Debug, PartialEq)]
pub struct Resources {
    /// Resolved names.
    pub names: Vec<ResName>,
    /// Weights.
    pub weights: Vec<i64>,
}

impl Resources {
    /// Resolves a config resource list.
    pub fn new(specs: &[ResourceSpec]) -> Resources {
        Resources {
            names: specs
                .iter()
                .map(|r| match r.name.as_str() {
                    "cpu" => ResName::Cpu,
                    "memory" => ResName::Memory,
                    "ephemeral-storage" => ResName::EphemeralStorage,
                    n if is_scalar_resource_name(n) => ResName::Scalar(n.to_string()),
                    _ => ResName::Untracked,
                })
                .collect(),
            weights: specs.iter().map(|r| r.weight).collect(),
        }
    }

    /// Whether the list is empty.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }
}

/// The pod's request for each configured resource. With `use_requested = false`, cpu and
/// memory use the 100m/200Mi non-zero defaults for containers that omit them.
pub fn pod_request_list(pod: &PodInfo, res: &Resources, use_requested: bool) -> Vec<i64> {
    res.names
        .iter()
        .map(|r| match (r, use_requested) {
            (ResName::Cpu, false) => pod.non0_cpu,
            (ResName::Memory, false) => pod.non0_mem,
            (ResName::Cpu, true) => pod.requests.milli_cpu,
            (ResName::Memory, true) => pod.requests.memory,
            (ResName::EphemeralStorage, _) => pod.requests.ephemeral_storage,
            (ResName::Scalar(n), _) => pod.requests.scalar(n),
            (ResName::Untracked, _) => 0,
        })
        .collect()
}

/// `calculateResourceAllocatableRequest`: (allocatable, node usage + pod request); (0, 0)
/// skips the resource (an extended resource the pod doesn't request, or one the node lacks).
pub fn allocatable_request(
    node: &NodeInfo,
    name: &ResName,
    pod_request: i64,
    use_requested: bool,
) -> (i64, i64) {
    let requested = if use_requested {
        &node.requested
    } else {
        &node.non_zero_requested
    };
    match name {
        ResName::Cpu => (
            node.allocatable.milli_cpu,
            requested.milli_cpu + pod_request,
        ),
        ResName::Memory => (node.allocatable.memory, requested.memory + pod_request),
        ResName::EphemeralStorage => (
            node.allocatable.ephemeral_storage,
            node.requested.ephemeral_storage + pod_request,
        ),
        ResName::Scalar(n) => {
            if pod_request == 0 {
                return (0, 0);
            }
            if node.allocatable.scalar.iter().any(|(k, _)| k == n) {
                (
                    node.allocatable.scalar(n),
                    node.requested.scalar(n) + pod_request,
                )
            } else {
                (0, 0)
            }
        }
        ResName::Untracked => (0, 0),
    }
}

/// The scoring formula of a strategy.
#[derive(Clone, Debug, PartialEq)]
pub enum Scorer {
    /// `(cap − req) * 100 / cap`, 0 when over capacity.
    LeastAllocated,
    /// `req * 100 / cap` with req capped at cap.
    MostAllocated,
    /// A broken-linear function of utilization (shape scores already scaled to 0–100).
    RequestedToCapacityRatio(Vec<(i64, i64)>),
    /// `(1 − std(fractions)) * 100`.
    Balanced,
}

impl Scorer {
    /// A RequestedToCapacityRatio scorer from a config shape.
    pub fn ratio(shape: &[UtilizationShapePoint]) -> Scorer {
        Scorer::RequestedToCapacityRatio(
            shape
                .iter()
                .map(|p| {
                    (
                        i64::from(p.utilization),
                        i64::from(p.score) * (MAX_NODE_SCORE / MAX_CUSTOM_PRIORITY_SCORE),
                    )
                })
                .collect(),
        )
    }

    /// Combines per-resource (requested, allocatable) pairs into a node score; pairs with
    /// allocatable 0 are skipped.
    pub fn score(&self, weights: &[i64], requested: &[i64], allocatable: &[i64]) -> i64 {
        match self {
            Scorer::LeastAllocated | Scorer::MostAllocated => {
                let (mut sum, mut wsum) = (0i64, 0i64);
                for i in 0..requested.len() {
                    let (req, cap) = (requested[i], allocatable[i]);
                    if cap == 0 {
                        continue;
                    }
                    let s = if *self == Scorer::LeastAllocated {
                        if req > cap {
                            0
                        } else {
                            (cap - req) * MAX_NODE_SCORE / cap
                        }
                    } else {
                        req.min(cap) * MAX_NODE_SCORE / cap
                    };
                    sum += s * weights[i];
                    wsum += weights[i];
                }
                if wsum == 0 {
                    0
                } else {
                    sum / wsum
                }
            }
            Scorer::RequestedToCapacityRatio(shape) => {
                let (mut sum, mut wsum) = (0i64, 0i64);
                for i in 0..requested.len() {
                    let (req, cap) = (requested[i], allocatable[i]);
                    if cap == 0 {
                        continue;
                    }
                    let u = if req > cap {
                        MAX_UTILIZATION
                    } else {
                        req * MAX_UTILIZATION / cap
                    };
                    let s = broken_linear(shape, u);
                    if s > 0 {
                        sum += s * weights[i];
                        wsum += weights[i];
                    }
                }
                if wsum == 0 {
                    0
                } else {
                    (sum as f64 / wsum as f64).round() as i64
                }
            }
            Scorer::Balanced => {
                // Fixed storage: this runs once per node per cycle.
                let mut buf = [0f64; 8];
                let mut heap = Vec::new();
                let fractions: &mut [f64] = if requested.len() <= 8 {
                    &mut buf
                } else {
                    heap.resize(requested.len(), 0.0);
                    &mut heap
                };
                let mut n = 0;
                for i in 0..requested.len() {
                    if allocatable[i] == 0 {
                        continue;
                    }
                    fractions[n] = (requested[i] as f64 / allocatable[i] as f64).min(1.0);
                    n += 1;
                }
                let fractions = &fractions[..n];
                let std = match n {
                    2 => ((fractions[0] - fractions[1]) / 2.0).abs(),
                    n if n > 2 => {
                        let mean = fractions.iter().sum::<f64>() / n as f64;
                        let v = fractions
                            .iter()
                            .map(|f| (f - mean) * (f - mean))
                            .sum::<f64>();
                        (v / n as f64).sqrt()
                    }
                    _ => 0.0,
                };
                ((1.0 - std) * MAX_NODE_SCORE as f64) as i64
            }
        }
    }
}

/// `BuildBrokenLinearFunction`.
fn broken_linear(shape: &[(i64, i64)], p: i64) -> i64 {
    for i in 0..shape.len() {
        if p <= shape[i].0 {
            if i == 0 {
                return shape[0].1;
            }
            let (u0, s0) = shape[i - 1];
            let (u1, s1) = shape[i];
            return s0 + (s1 - s0) * (p - u0) / (u1 - u0);
        }
    }
    shape.last().map(|s| s.1).unwrap_or(0)
}

/// Scores a node: (requested, allocatable) per resource, then the formula.
pub fn score_node(
    scorer: &Scorer,
    res: &Resources,
    pod_requests: &[i64],
    node: &NodeInfo,
    use_requested: bool,
) -> i64 {
    // At most a handful of resources: fixed arrays avoid a heap allocation per node.
    let n = res.names.len();
    if n > 8 {
        let (mut r, mut a) = (vec![0; n], vec![0; n]);
        for (i, name) in res.names.iter().enumerate() {
            (a[i], r[i]) = allocatable_request(node, name, pod_requests[i], use_requested);
        }
        return scorer.score(&res.weights, &r, &a);
    }
    let mut req = [0i64; 8];
    let mut alloc = [0i64; 8];
    for (i, name) in res.names.iter().enumerate() {
        (alloc[i], req[i]) = allocatable_request(node, name, pod_requests[i], use_requested);
    }
    scorer.score(&res.weights, &req[..n], &alloc[..n])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn res(v: &[(&str, i64)]) -> Vec<i64> {
        v.iter().map(|(_, w)| *w).collect()
    }

    #[test]
    fn requested_to_capacity_ratio_follows_the_shape() {
        // Shape (0,0),(100,10) scaled to (0,0),(100,100): utilization u scores u.
        let s = Scorer::ratio(&[
            UtilizationShapePoint {
                utilization: 0,
                score: 0,
            },
            UtilizationShapePoint {
                utilization: 100,
                score: 10,
            },
        ]);
        let r = res(&[("cpu", 1), ("memory", 1)]);
        // cpu 3000/4000 → 75; memory 5000/10000 → 50; round((75+50)/2) = round(62.5) = 63.
        assert_eq!(s.score(&r, &[3000, 5000], &[4000, 10000]), 63);
        // Over capacity counts as 100% utilization.
        assert_eq!(s.score(&r, &[5000, 20000], &[4000, 10000]), 100);
        // Zero scores don't count towards the weight sum: cpu 0% → 0, memory 50% → 50.
        assert_eq!(s.score(&r, &[0, 5000], &[4000, 10000]), 50);
    }

    #[test]
    fn balanced_uses_population_std_for_more_than_two() {
        let r = res(&[("cpu", 1), ("memory", 1), ("example.com/gpu", 1)]);
        // fractions 0.5, 0.5, 1.0 → mean 2/3; var = (2*(1/6)^2 + (1/3)^2)/3 = (1/18+1/9)/3
        // = 1/18 → std = 0.2357 → (1−0.2357)*100 = 76.43 → 76.
        assert_eq!(Scorer::Balanced.score(&r, &[2, 4, 2], &[4, 8, 2]), 76);
    }
}
