//! Helpers shared by plugins: DefaultNormalizeScore, taint/toleration matching, and test
//! fixtures.

use k8s_openapi::api::core::v1::{Taint, Toleration};

use crate::scheduler::framework::{Status, MAX_NODE_SCORE};

/// `DefaultNormalizeScore`: scales scores so the highest becomes `max`; with `reverse`,
/// inverts them (`max − s`). All zero: unchanged, or all `max` when reversed.
pub fn default_normalize_score(max: i64, reverse: bool, scores: &mut [i64]) -> Status {
    let max_count = scores.iter().copied().max().unwrap_or(0);
    if max_count == 0 {
        if reverse {
            scores.iter_mut().for_each(|s| *s = max);
        }
        return Status::success();
    }
    for s in scores.iter_mut() {
        *s = max * *s / max_count;
        if reverse {
            *s = max - *s;
        }
    }
    Status::success()
}

/// `MaxNodeScore` re-exported for plugins.
pub const MAX: i64 = MAX_NODE_SCORE;

/// `Toleration.ToleratesTaint`.
pub fn tolerates(t: &Toleration, taint: &Taint) -> bool {
    if let Some(e) = t.effect.as_deref().filter(|e| !e.is_empty()) {
        if e != taint.effect {
            return false;
        }
    }
    if let Some(k) = t.key.as_deref().filter(|k| !k.is_empty()) {
        if k != taint.key {
            return false;
        }
    }
    match t.operator.as_deref().unwrap_or("") {
        "" | "Equal" => t.value.as_deref().unwrap_or("") == taint.value.as_deref().unwrap_or(""),
        "Exists" => true,
        _ => false,
    }
}

/// `TolerationsTolerateTaint`.
pub fn tolerations_tolerate(tolerations: &[Toleration], taint: &Taint) -> bool {
    tolerations.iter().any(|t| tolerates(t, taint))
}

/// `FindMatchingUntoleratedTaint` with `DoNotScheduleTaintsFilterFunc` (NoSchedule and
/// NoExecute taints only).
pub fn find_untolerated_no_schedule<'a>(
    taints: &'a [Taint],
    tolerations: &[Toleration],
) -> Option<&'a Taint> {
    taints.iter().find(|t| {
        (t.effect == "NoSchedule" || t.effect == "NoExecute")
            && !tolerations_tolerate(tolerations, t)
    })
}

/// The node-event QueueingHint of plugins whose Filter looks only at the node
/// (NodeAffinity, TaintToleration, NodeUnschedulable): Queue when the node now passes the
/// plugin's Filter and did not before (or is new); any other event queues.
pub fn node_now_passes(
    f: &dyn crate::scheduler::framework::FilterPlugin,
    pod: &crate::scheduler::podinfo::PodInfo,
    event: &crate::scheduler::framework::EventObjects<'_>,
) -> crate::scheduler::framework::QueueingHint {
    use crate::scheduler::framework::{CycleState, EventObjects, QueueingHint};
    let EventObjects::Node { old, new } = event else {
        return QueueingHint::Queue;
    };
    let state = CycleState::default();
    let passes = |n| f.filter(&state, pod, n).is_success();
    if passes(new) && !old.is_some_and(passes) {
        QueueingHint::Queue
    } else {
        QueueingHint::QueueSkip
    }
}

#[cfg(test)]
pub(crate) mod fixtures {
    //! Builders for nodes and pods used by the plugin tests.
    use std::sync::Arc;

    use k8s_openapi::api::core::v1::{Node, Pod};
    use serde_json::{json, Value};

    use crate::scheduler::podinfo::{PodInfo, SharedPod};

    /// A node from a JSON literal merged into defaults (4 cpu, 8Gi, 110 pods).
    pub fn node(name: &str, extra: Value) -> Arc<Node> {
        let mut v = json!({
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}
        });
        merge(&mut v, extra);
        Arc::new(serde_json::from_value(v).unwrap())
    }

    /// A pod from a JSON literal merged into defaults (namespace default, one container).
    pub fn pod(name: &str, extra: Value) -> SharedPod {
        let mut v = json!({
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"containers": [{"name": "c", "image": "nginx"}]}
        });
        merge(&mut v, extra);
        SharedPod::from(serde_json::from_value::<Pod>(v).unwrap())
    }

    /// A pod with cpu/memory requests on a node ("" = unassigned).
    pub fn req_pod(name: &str, node: &str, cpu: &str, mem: &str) -> SharedPod {
        let mut requests = serde_json::Map::new();
        if !cpu.is_empty() {
            requests.insert("cpu".into(), cpu.into());
        }
        if !mem.is_empty() {
            requests.insert("memory".into(), mem.into());
        }
        let mut spec = json!({"containers": [{"name": "c", "image": "nginx",
            "resources": {"requests": requests}}]});
        if !node.is_empty() {
            spec["nodeName"] = node.into();
        }
        pod(name, json!({"spec": spec}))
    }

    /// PodInfo of a pod.
    pub fn info(p: SharedPod) -> PodInfo {
        PodInfo::new(p)
    }

    /// Deep-merges `extra` into `base` (objects merge, everything else replaces).
    pub fn merge(base: &mut Value, extra: Value) {
        match (base, extra) {
            (Value::Object(b), Value::Object(e)) => {
                for (k, v) in e {
                    merge(b.entry(k).or_insert(Value::Null), v);
                }
            }
            (b, e) => *b = e,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalize_matches_upstream_table() {
        // normalize_score_test.go: reverse and non-reverse cases.
        let mut s = vec![10, 20, 30, 40];
        default_normalize_score(100, false, &mut s);
        assert_eq!(s, [25, 50, 75, 100]); // 100*10/40 = 25 …
        let mut s = vec![10, 20, 30, 40];
        default_normalize_score(100, true, &mut s);
        assert_eq!(s, [75, 50, 25, 0]);
        let mut s = vec![0, 0];
        default_normalize_score(100, true, &mut s);
        assert_eq!(s, [100, 100]);
        let mut s = vec![0, 0];
        default_normalize_score(100, false, &mut s);
        assert_eq!(s, [0, 0]);
        let mut s = vec![1000, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100];
        default_normalize_score(100, false, &mut s);
        // 100*10/1000 = 1, 100*100/1000 = 10.
        assert_eq!(s, [100, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    }

    fn taint(k: &str, v: &str, e: &str) -> Taint {
        Taint {
            key: k.into(),
            value: Some(v.into()),
            effect: e.into(),
            time_added: None,
        }
    }

    fn tol(k: &str, op: &str, v: &str, e: &str) -> Toleration {
        Toleration {
            key: Some(k.into()),
            operator: Some(op.into()),
            value: Some(v.into()),
            effect: Some(e.into()),
            toleration_seconds: None,
        }
    }

    #[test]
    fn toleration_matching() {
        let t = taint("dedicated", "db", "NoSchedule");
        assert!(tolerates(
            &tol("dedicated", "Equal", "db", "NoSchedule"),
            &t
        ));
        assert!(tolerates(&tol("dedicated", "Equal", "db", ""), &t));
        assert!(!tolerates(
            &tol("dedicated", "Equal", "web", "NoSchedule"),
            &t
        ));
        assert!(tolerates(&tol("dedicated", "Exists", "", "NoSchedule"), &t));
        assert!(tolerates(&tol("", "Exists", "", ""), &t));
        assert!(!tolerates(&tol("dedicated", "Exists", "", "NoExecute"), &t));
    }
}
