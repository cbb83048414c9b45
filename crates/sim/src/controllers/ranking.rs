//! Which pods a ReplicaSet deletes first: upstream's `ActivePodsWithRanks` ordering
//! with logarithmic scale-down.

use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_openapi::api::core::v1::Pod;

use crate::controllers::util::ready_since;
use crate::object::Object;
use crate::time::{from_k8s_time, Time};

fn phase_rank(p: &Pod) -> u8 {
    match p.status.as_ref().and_then(|s| s.phase.as_deref()) {
        Some("Pending") => 0,
        Some("Unknown") => 1,
        Some("Running") => 2,
        _ => 0,
    }
}

fn deletion_cost(p: &Pod) -> i64 {
    p.metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get("controller.kubernetes.io/pod-deletion-cost"))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

fn max_restarts(p: &Pod) -> i32 {
    p.status
        .as_ref()
        .and_then(|s| s.container_statuses.as_ref())
        .into_iter()
        .flatten()
        .map(|c| c.restart_count)
        .max()
        .unwrap_or(0)
}

/// floor(log2(now − t)) with durations in nanoseconds, −1 for non-positive durations.
fn log_rank(t: Time, now: Time) -> i64 {
    let d = (now as i128 - t as i128) * 1_000_000;
    if d > 0 {
        (d as f64).log2() as i64
    } else {
        -1
    }
}

fn uid(p: &Pod) -> &str {
    p.metadata.uid.as_deref().unwrap_or("")
}

/// Orders two pods: `Less` means `a` is deleted before `b`.
pub fn compare_for_deletion(
    a: &Arc<Object>,
    b: &Arc<Object>,
    per_node: &BTreeMap<String, i32>,
    now: Time,
) -> Ordering {
    let (Object::Pod(a), Object::Pod(b)) = (&**a, &**b) else {
        return Ordering::Equal;
    };
    let node = |p: &Pod| {
        p.spec
            .as_ref()
            .and_then(|s| s.node_name.clone())
            .filter(|n| !n.is_empty())
    };
    // 1. Unassigned before assigned.
    let (na, nb) = (node(a), node(b));
    if na.is_some() != nb.is_some() {
        return if na.is_none() {
            Ordering::Less
        } else {
            Ordering::Greater
        };
    }
    // 2. Pending < Unknown < Running.
    let (pa, pb) = (phase_rank(a), phase_rank(b));
    if pa != pb {
        return pa.cmp(&pb);
    }
    // 3. Not ready before ready.
    let (ra, rb) = (ready_since(a), ready_since(b));
    if ra.is_some() != rb.is_some() {
        return if ra.is_none() {
            Ordering::Less
        } else {
            Ordering::Greater
        };
    }
    // 4. Lower pod-deletion-cost first.
    let (ca, cb) = (deletion_cost(a), deletion_cost(b));
    if ca != cb {
        return ca.cmp(&cb);
    }
    // 5. More co-located pods (higher rank) first.
    let rank = |n: &Option<String>| {
        n.as_ref()
            .and_then(|n| per_node.get(n))
            .copied()
            .unwrap_or(0)
    };
    let (ka, kb) = (rank(&na), rank(&nb));
    if ka != kb {
        return kb.cmp(&ka);
    }
    // 6. Both ready: ready for a shorter time first (logarithmic buckets, then UID).
    if let (Some(ta), Some(tb)) = (ra, rb) {
        if ta != tb {
            let d = log_rank(ta, now) - log_rank(tb, now);
            return if d == 0 {
                uid(a).cmp(uid(b))
            } else {
                d.cmp(&0)
            };
        }
    }
    // 7. More restarts first.
    let (xa, xb) = (max_restarts(a), max_restarts(b));
    if xa != xb {
        return xb.cmp(&xa);
    }
    // 8. Newer first (logarithmic buckets, then UID).
    let created = |p: &Pod| p.metadata.creation_timestamp.as_ref().map(from_k8s_time);
    let (ta, tb) = (created(a), created(b));
    if ta != tb {
        let (ta, tb) = (ta.unwrap_or(0), tb.unwrap_or(0));
        let d = log_rank(ta, now) - log_rank(tb, now);
        return if d == 0 {
            uid(a).cmp(uid(b))
        } else {
            d.cmp(&0)
        };
    }
    Ordering::Equal
}
