//! The disruption controller's arithmetic (`pkg/controller/disruption/disruption.go`):
//! expected pods, desired and current healthy, the disruptedPods map with its 2-minute
//! expiry, and the DisruptionAllowed condition (`pkg/apis/policy/helper`).

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::api::policy::v1::{PodDisruptionBudgetSpec, PodDisruptionBudgetStatus};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, OwnerReference, Time as K8sTime};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::util::is_pod_ready;
use crate::time::{from_k8s_time, k8s_time, Time};

/// How long a pod the eviction subresource admitted may take to go (`DeletionTimeout`).
pub const DELETION_TIMEOUT: Time = 2 * 60 * 1000;

/// The condition type, and its reasons.
pub const DISRUPTION_ALLOWED: &str = "DisruptionAllowed";
/// Reason when `disruptionsAllowed > 0`.
pub const SUFFICIENT_PODS: &str = "SufficientPods";
/// Reason when `disruptionsAllowed == 0`.
pub const INSUFFICIENT_PODS: &str = "InsufficientPods";
/// Reason when the controller could not compute the status (`failSafe`).
pub const SYNC_FAILED: &str = "SyncFailed";

/// The scale of a pod's controller: the controller's UID and its `spec.replicas`.
pub type Scale = (String, i32);

/// What `getExpectedPodCount` found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Expected {
    /// `status.expectedPods`.
    pub expected: i32,
    /// `status.desiredHealthy`.
    pub desired_healthy: i32,
    /// Pods without a controller (only looked at when the scale is needed).
    pub unmanaged: Vec<String>,
}

/// `intstr.GetScaledValueFromIntOrPercent`.
pub fn scaled_value(v: &IntOrString, total: i32, round_up: bool) -> Result<i32, String> {
    match v {
        IntOrString::Int(i) => Ok(*i),
        IntOrString::String(s) => {
            let Some(n) = s.strip_suffix('%') else {
                return Err(
                    "invalid value for IntOrString: invalid type: string is not a percentage"
                        .into(),
                );
            };
            let pct: i64 = n.parse().map_err(|_| {
                format!("invalid value for IntOrString: invalid value \"{s}\": strconv.Atoi: parsing \"{n}\": invalid syntax")
            })?;
            let num = pct * i64::from(total);
            let v = if round_up {
                num.div_euclid(100) + i64::from(num.rem_euclid(100) != 0)
            } else {
                num.div_euclid(100)
            };
            Ok(v.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32)
        }
    }
}

/// `getExpectedScale`: the sum of the scales of the pods' controllers, each counted once.
/// `scale_of` resolves a pod's controller reference (Deployment through its ReplicaSet,
/// ReplicaSet, StatefulSet) in the pod's namespace.
fn expected_scale(
    pods: &[&Pod],
    scale_of: &dyn Fn(&OwnerReference, &str) -> Option<Scale>,
) -> Result<(i32, Vec<String>), String> {
    let mut scales: BTreeMap<String, i32> = BTreeMap::new();
    let mut unmanaged = Vec::new();
    for p in pods {
        let name = p.metadata.name.clone().unwrap_or_default();
        let Some(r) = crate::controllers::util::controller_of(&p.metadata) else {
            unmanaged.push(name);
            continue;
        };
        if scales.contains_key(&r.uid) {
            continue;
        }
        let ns = p.metadata.namespace.as_deref().unwrap_or("");
        match scale_of(r, ns) {
            Some((uid, n)) => {
                scales.insert(uid, n);
            }
            None => return Err(format!("found no controllers for pod \"{name}\"")),
        }
    }
    Ok((
        scales.values().fold(0i32, |a, n| a.saturating_add(*n)),
        unmanaged,
    ))
}

/// `getExpectedPodCount`.
pub fn expected_pod_count(
    spec: &PodDisruptionBudgetSpec,
    pods: &[&Pod],
    scale_of: &dyn Fn(&OwnerReference, &str) -> Option<Scale>,
) -> Result<Expected, String> {
    let mut out = Expected::default();
    if let Some(max) = &spec.max_unavailable {
        let (expected, unmanaged) = expected_scale(pods, scale_of)?;
        let max = scaled_value(max, expected, true)?;
        out.expected = expected;
        out.unmanaged = unmanaged;
        out.desired_healthy = expected.saturating_sub(max).max(0);
    } else if let Some(min) = &spec.min_available {
        match min {
            IntOrString::Int(i) => {
                out.desired_healthy = *i;
                out.expected = pods.len() as i32;
            }
            IntOrString::String(_) => {
                let (expected, unmanaged) = expected_scale(pods, scale_of)?;
                out.expected = expected;
                out.unmanaged = unmanaged;
                out.desired_healthy = scaled_value(min, expected, true)?;
            }
        }
    }
    Ok(out)
}

/// `buildDisruptedPodMap`: the entries still pending, the earliest time one of them
/// expires (to look again then), and the pods whose entry expired without a deletion.
pub fn build_disrupted_pod_map(
    pods: &[&Pod],
    recorded: Option<&BTreeMap<String, K8sTime>>,
    now: Time,
) -> (BTreeMap<String, K8sTime>, Option<Time>, Vec<String>) {
    let mut kept = BTreeMap::new();
    let mut recheck: Option<Time> = None;
    let mut expired = Vec::new();
    let Some(recorded) = recorded else {
        return (kept, recheck, expired);
    };
    for p in pods {
        if p.metadata.deletion_timestamp.is_some() {
            continue;
        }
        let name = p.metadata.name.clone().unwrap_or_default();
        let Some(t) = recorded.get(&name) else {
            continue;
        };
        let expected_deletion = from_k8s_time(t) + DELETION_TIMEOUT;
        if expected_deletion < now {
            expired.push(name);
        } else {
            recheck = Some(recheck.map_or(expected_deletion, |r| r.min(expected_deletion)));
            kept.insert(name, t.clone());
        }
    }
    (kept, recheck, expired)
}

/// `countHealthyPods`: Ready pods that are neither being deleted nor about to be.
pub fn count_healthy(pods: &[&Pod], disrupted: &BTreeMap<String, K8sTime>, now: Time) -> i32 {
    pods.iter()
        .filter(|p| p.metadata.deletion_timestamp.is_none())
        .filter(|p| {
            let name = p.metadata.name.as_deref().unwrap_or("");
            disrupted
                .get(name)
                .is_none_or(|t| from_k8s_time(t) + DELETION_TIMEOUT <= now)
        })
        .filter(|p| is_pod_ready(p))
        .count() as i32
}

/// `meta.SetStatusCondition`: lastTransitionTime moves only when the status changes.
pub fn set_condition(conds: &mut Vec<Condition>, c: Condition) {
    match conds.iter_mut().find(|x| x.type_ == c.type_) {
        Some(x) => {
            if x.status != c.status {
                x.status = c.status;
                x.last_transition_time = c.last_transition_time;
            }
            x.reason = c.reason;
            x.message = c.message;
            x.observed_generation = c.observed_generation;
        }
        None => conds.push(c),
    }
}

/// `UpdateDisruptionAllowedCondition`.
pub fn update_disruption_allowed_condition(s: &mut PodDisruptionBudgetStatus, now: Time) {
    let (status, reason) = if s.disruptions_allowed > 0 {
        ("True", SUFFICIENT_PODS)
    } else {
        ("False", INSUFFICIENT_PODS)
    };
    let c = Condition {
        type_: DISRUPTION_ALLOWED.into(),
        status: status.into(),
        reason: reason.into(),
        message: String::new(),
        observed_generation: s.observed_generation,
        last_transition_time: k8s_time(now),
    };
    set_condition(s.conditions.get_or_insert_with(Vec::new), c);
}

/// `ConditionsAreUpToDate`.
fn conditions_up_to_date(s: &PodDisruptionBudgetStatus, generation: i64) -> bool {
    let Some(c) = s
        .conditions
        .iter()
        .flatten()
        .find(|c| c.type_ == DISRUPTION_ALLOWED)
    else {
        return false;
    };
    if s.observed_generation != Some(generation) {
        return false;
    }
    if s.disruptions_allowed > 0 {
        c.status == "True" && c.reason == SUFFICIENT_PODS
    } else {
        c.status == "False" && c.reason == INSUFFICIENT_PODS
    }
}

/// The computed numbers of one sync.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Computed {
    /// Ready pods counted.
    pub current_healthy: i32,
    /// Healthy pods the budget requires.
    pub desired_healthy: i32,
    /// Pods expected.
    pub expected: i32,
    /// Pending evictions.
    pub disrupted: BTreeMap<String, K8sTime>,
}

/// `updatePdbStatus`: the new status, or None when the stored one is up to date.
pub fn next_status(
    old: &PodDisruptionBudgetStatus,
    generation: i64,
    c: &Computed,
    now: Time,
) -> Option<PodDisruptionBudgetStatus> {
    let mut allowed = c.current_healthy.saturating_sub(c.desired_healthy);
    if c.expected <= 0 || allowed <= 0 {
        allowed = 0;
    }
    let old_disrupted = old.disrupted_pods.clone().unwrap_or_default();
    if old.current_healthy == c.current_healthy
        && old.desired_healthy == c.desired_healthy
        && old.expected_pods == c.expected
        && old.disruptions_allowed == allowed
        && old_disrupted == c.disrupted
        && old.observed_generation == Some(generation)
        && conditions_up_to_date(old, generation)
    {
        return None;
    }
    let mut s = PodDisruptionBudgetStatus {
        current_healthy: c.current_healthy,
        desired_healthy: c.desired_healthy,
        expected_pods: c.expected,
        disruptions_allowed: allowed,
        disrupted_pods: (!c.disrupted.is_empty()).then(|| c.disrupted.clone()),
        observed_generation: Some(generation),
        conditions: old.conditions.clone(),
    };
    update_disruption_allowed_condition(&mut s, now);
    Some(s)
}

/// `failSafe`: no disruptions, and the condition says why.
pub fn fail_safe(
    old: &PodDisruptionBudgetStatus,
    err: &str,
    now: Time,
) -> PodDisruptionBudgetStatus {
    let mut s = old.clone();
    s.disruptions_allowed = 0;
    let c = Condition {
        type_: DISRUPTION_ALLOWED.into(),
        status: "False".into(),
        reason: SYNC_FAILED.into(),
        message: err.to_string(),
        observed_generation: s.observed_generation,
        last_transition_time: k8s_time(now),
    };
    set_condition(s.conditions.get_or_insert_with(Vec::new), c);
    s
}

#[cfg(test)]
#[path = "disruption_status_tests.rs"]
mod tests;
