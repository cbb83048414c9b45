//! `DefaultTolerationSeconds`: pods tolerate `not-ready` and `unreachable` NoExecute
//! taints for 300 s unless they already say otherwise.

use k8s_openapi::api::core::v1::{Pod, Toleration};

/// `--default-not-ready-toleration-seconds` and `--default-unreachable-toleration-seconds`.
pub const DEFAULT_TOLERATION_SECONDS: i64 = 300;
/// The taint a node controller puts on a NotReady node.
pub const TAINT_NODE_NOT_READY: &str = "node.kubernetes.io/not-ready";
/// The taint a node controller puts on an unreachable node.
pub const TAINT_NODE_UNREACHABLE: &str = "node.kubernetes.io/unreachable";

fn toleration(key: &str, seconds: i64) -> Toleration {
    Toleration {
        key: Some(key.into()),
        operator: Some("Exists".into()),
        effect: Some("NoExecute".into()),
        toleration_seconds: Some(seconds),
        value: None,
    }
}

/// Appends the default tolerations a pod lacks (on create and update of pods).
pub fn admit(pod: &mut Pod) {
    admit_with(pod, DEFAULT_TOLERATION_SECONDS, DEFAULT_TOLERATION_SECONDS);
}

/// [`admit`] with explicit durations (the apiserver flags).
pub fn admit_with(pod: &mut Pod, not_ready_seconds: i64, unreachable_seconds: i64) {
    let spec = pod.spec.get_or_insert_with(Default::default);
    let tolerates = |key: &str| {
        spec.tolerations.iter().flatten().any(|t| {
            let k = t.key.as_deref().unwrap_or("");
            let e = t.effect.as_deref().unwrap_or("");
            (k == key || k.is_empty()) && (e == "NoExecute" || e.is_empty())
        })
    };
    let (not_ready, unreachable) = (
        tolerates(TAINT_NODE_NOT_READY),
        tolerates(TAINT_NODE_UNREACHABLE),
    );
    let list = spec.tolerations.get_or_insert_with(Vec::new);
    if !not_ready {
        list.push(toleration(TAINT_NODE_NOT_READY, not_ready_seconds));
    }
    if !unreachable {
        list.push(toleration(TAINT_NODE_UNREACHABLE, unreachable_seconds));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn adds_both_tolerations_in_upstream_order() {
        let mut pod = Pod::default();
        admit(&mut pod);
        assert_eq!(
            serde_json::to_value(&pod.spec.unwrap().tolerations).unwrap(),
            json!([
                {"effect": "NoExecute", "key": "node.kubernetes.io/not-ready", "operator": "Exists", "tolerationSeconds": 300},
                {"effect": "NoExecute", "key": "node.kubernetes.io/unreachable", "operator": "Exists", "tolerationSeconds": 300}
            ])
        );
    }

    #[test]
    fn existing_tolerations_are_respected() {
        let mut pod = Pod::default();
        pod.spec.get_or_insert_with(Default::default).tolerations = Some(vec![Toleration {
            key: Some(TAINT_NODE_UNREACHABLE.into()),
            operator: Some("Exists".into()),
            effect: Some("NoExecute".into()),
            toleration_seconds: Some(10),
            value: None,
        }]);
        admit(&mut pod);
        let t = pod.spec.unwrap().tolerations.unwrap();
        assert_eq!(t.len(), 2);
        assert_eq!(t[0].toleration_seconds, Some(10));
        assert_eq!(t[1].key.as_deref(), Some(TAINT_NODE_NOT_READY));
        let mut all = Pod::default();
        all.spec.get_or_insert_with(Default::default).tolerations = Some(vec![Toleration {
            operator: Some("Exists".into()),
            ..Default::default()
        }]);
        admit(&mut all);
        assert_eq!(all.spec.unwrap().tolerations.unwrap().len(), 1);
    }
}
