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

#[cfg(test)]
mod tests {
    //! `ActivePodsWithRanks.Less`, one rule at a time: each pair differs in the rule's
    //! attribute only (and in later rules' attributes, pointing the other way).
    use super::*;
    use crate::time::{k8s_time, MINUTE, SECOND};
    use serde_json::json;

    const NOW: Time = 100 * MINUTE;

    struct P {
        name: &'static str,
        node: &'static str,
        phase: &'static str,
        ready_at: Option<Time>,
        cost: Option<i64>,
        restarts: i32,
        created: Time,
    }

    impl P {
        fn new(name: &'static str) -> P {
            P {
                name,
                node: "node-1",
                phase: "Running",
                ready_at: Some(10 * MINUTE),
                cost: None,
                restarts: 0,
                created: 5 * MINUTE,
            }
        }

        fn build(&self) -> Arc<Object> {
            let mut annotations = serde_json::Map::new();
            if let Some(c) = self.cost {
                annotations.insert(
                    "controller.kubernetes.io/pod-deletion-cost".into(),
                    json!(c.to_string()),
                );
            }
            let ready = match self.ready_at {
                Some(t) => {
                    json!({"type": "Ready", "status": "True", "lastTransitionTime": k8s_time(t)})
                }
                None => {
                    json!({"type": "Ready", "status": "False", "lastTransitionTime": k8s_time(0)})
                }
            };
            let pod: Pod = serde_json::from_value(json!({
                "metadata": {"name": self.name, "uid": format!("uid-{}", self.name),
                    "creationTimestamp": k8s_time(self.created), "annotations": annotations},
                "spec": {"nodeName": self.node, "containers": [{"name": "c", "image": "nginx"}]},
                "status": {"phase": self.phase, "conditions": [ready],
                    "containerStatuses": [{"name": "c", "image": "nginx", "imageID": "", "ready": self.ready_at.is_some(),
                        "restartCount": self.restarts}]},
            }))
            .unwrap();
            Arc::new(Object::from(pod))
        }
    }

    /// `first` is deleted before `second`, and not the other way round.
    fn before(first: &P, second: &P, per_node: &BTreeMap<String, i32>) {
        let (a, b) = (first.build(), second.build());
        assert_eq!(
            compare_for_deletion(&a, &b, per_node, NOW),
            Ordering::Less,
            "{} before {}",
            first.name,
            second.name
        );
        assert_eq!(
            compare_for_deletion(&b, &a, per_node, NOW),
            Ordering::Greater
        );
    }

    #[test]
    fn each_rule_decides_in_upstream_order() {
        let none = BTreeMap::new();
        // 1. Unassigned before assigned (even if Running and ready beats Pending).
        let mut a = P::new("unassigned");
        a.node = "";
        a.phase = "Running";
        let mut b = P::new("assigned");
        b.phase = "Pending";
        b.ready_at = None;
        before(&a, &b, &none);
        // 2. Pending < Unknown < Running.
        let mut a = P::new("pending");
        a.phase = "Pending";
        a.cost = Some(100);
        let mut b = P::new("unknown");
        b.phase = "Unknown";
        before(&a, &b, &none);
        let mut c = P::new("running");
        c.phase = "Running";
        before(&b, &c, &none);
        // 3. Not ready before ready.
        let mut a = P::new("not-ready");
        a.ready_at = None;
        a.cost = Some(100);
        before(&a, &P::new("ready"), &none);
        // 4. Lower pod-deletion-cost first (missing = 0).
        let mut a = P::new("cheap");
        a.cost = Some(-5);
        let mut b = P::new("default-cost");
        b.restarts = 9;
        before(&a, &b, &none);
        let mut c = P::new("dear");
        c.cost = Some(5);
        before(&b, &c, &none);
        // 5. More pods of the same owner on the node first.
        let ranks: BTreeMap<String, i32> = [("node-1".into(), 3), ("node-2".into(), 1)].into();
        let crowded = P::new("crowded");
        let mut alone = P::new("alone");
        alone.node = "node-2";
        alone.ready_at = Some(90 * MINUTE);
        before(&crowded, &alone, &ranks);
        // 6. Ready more recently first, by log2 buckets of the time since.
        let mut recent = P::new("recent");
        recent.ready_at = Some(NOW - 10 * SECOND);
        let mut old = P::new("old");
        old.ready_at = Some(NOW - 10 * MINUTE);
        old.restarts = 9;
        before(&recent, &old, &none);
        // …within one bucket the UID decides, not the exact time.
        let mut x = P::new("x");
        x.ready_at = Some(NOW - 40 * SECOND);
        let mut y = P::new("y");
        y.ready_at = Some(NOW - 35 * SECOND);
        before(&x, &y, &none);
        // 7. More restarts first.
        let mut a = P::new("restarting");
        a.restarts = 3;
        let mut b = P::new("steady");
        b.created = 50 * MINUTE;
        before(&a, &b, &none);
        // 8. Newer first, by log2 buckets, then UID.
        let mut newer = P::new("newer");
        newer.created = NOW - MINUTE;
        before(&newer, &P::new("older"), &none);
        let mut p = P::new("p");
        p.created = NOW - 50 * SECOND;
        let mut q = P::new("q");
        q.created = NOW - 45 * SECOND;
        before(&p, &q, &none);
    }

    #[test]
    fn pods_to_delete_takes_the_first_in_rank_order() {
        let mut pending = P::new("pending");
        pending.phase = "Pending";
        pending.ready_at = None;
        let mut not_ready = P::new("not-ready");
        not_ready.ready_at = None;
        let mut spread = P::new("spread");
        spread.node = "node-2";
        let pods: Vec<Arc<Object>> = [&P::new("crowded"), &spread, &not_ready, &pending]
            .iter()
            .map(|p| p.build())
            .collect();
        let refs: Vec<&Arc<Object>> = pods.iter().collect();
        let names = |v: Vec<&Arc<Object>>| -> Vec<String> {
            v.iter().map(|o| o.name().to_string()).collect()
        };
        // Related pods: three on node-1, one on node-2.
        let got = crate::controllers::replicaset::pods_to_delete(&refs, &refs, 3, NOW);
        assert_eq!(names(got), ["pending", "not-ready", "crowded"]);
        // Deleting everything skips the sort.
        let got = crate::controllers::replicaset::pods_to_delete(&refs, &refs, 4, NOW);
        assert_eq!(got.len(), 4);
    }
}
