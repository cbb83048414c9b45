//! Deployment arithmetic from upstream `deployment_util.go`: fenceposts, surge and
//! unavailability, new-ReplicaSet sizing, revisions, proportional scaling, conditions.

use k8s_openapi::api::apps::v1::{Deployment, DeploymentCondition, DeploymentStatus, ReplicaSet};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use crate::time::{k8s_time, Time};

/// Annotation: the revision of a ReplicaSet / Deployment.
pub const REVISION: &str = "deployment.kubernetes.io/revision";
/// Annotation: the deployment's replicas when the RS was last scaled.
pub const DESIRED_REPLICAS: &str = "deployment.kubernetes.io/desired-replicas";
/// Annotation: replicas + maxSurge when the RS was last scaled.
pub const MAX_REPLICAS: &str = "deployment.kubernetes.io/max-replicas";
/// Annotation: revisions this RS had before (after rollbacks).
pub const REVISION_HISTORY: &str = "deployment.kubernetes.io/revision-history";

/// `GetScaledValueFromIntOrPercent`.
pub fn scaled_value(v: &IntOrString, total: i32, round_up: bool) -> Result<i32, String> {
    match v {
        IntOrString::Int(i) => Ok(*i),
        IntOrString::String(s) => {
            let Some(p) = s.strip_suffix('%') else {
                return Err(format!(
                    "invalid value for IntOrString: invalid type: string is not a percentage"
                ));
            };
            let pct: i64 = p.parse().map_err(|_| {
                format!("invalid value \"{s}\": strconv.Atoi: parsing \"{p}\": invalid syntax")
            })?;
            let num = i64::from(total) * pct;
            Ok(if round_up {
                (num + 99).div_euclid(100)
            } else {
                num.div_euclid(100)
            } as i32)
        }
    }
}

/// `ResolveFenceposts(maxSurge, maxUnavailable, desired)` → (surge, unavailable).
pub fn resolve_fenceposts(
    max_surge: Option<&IntOrString>,
    max_unavailable: Option<&IntOrString>,
    desired: i32,
) -> Result<(i32, i32), String> {
    let zero = IntOrString::Int(0);
    let surge = scaled_value(max_surge.unwrap_or(&zero), desired, true)?;
    let mut unavailable = scaled_value(max_unavailable.unwrap_or(&zero), desired, false)?;
    if surge == 0 && unavailable == 0 {
        unavailable = 1;
    }
    Ok((surge, unavailable))
}

fn replicas(d: &Deployment) -> i32 {
    d.spec.as_ref().and_then(|s| s.replicas).unwrap_or(1)
}

fn is_rolling(d: &Deployment) -> bool {
    d.spec
        .as_ref()
        .and_then(|s| s.strategy.as_ref())
        .and_then(|s| s.type_.as_deref())
        .unwrap_or("RollingUpdate")
        == "RollingUpdate"
}

fn rolling_params(d: &Deployment) -> (Option<IntOrString>, Option<IntOrString>) {
    let ru = d
        .spec
        .as_ref()
        .and_then(|s| s.strategy.as_ref())
        .and_then(|s| s.rolling_update.as_ref());
    (
        ru.and_then(|r| r.max_surge.clone()),
        ru.and_then(|r| r.max_unavailable.clone()),
    )
}

/// `MaxUnavailable(deployment)`.
pub fn max_unavailable(d: &Deployment) -> i32 {
    if !is_rolling(d) || replicas(d) == 0 {
        return 0;
    }
    let (s, u) = rolling_params(d);
    let (_, unavailable) =
        resolve_fenceposts(s.as_ref(), u.as_ref(), replicas(d)).unwrap_or((0, 1));
    unavailable.min(replicas(d))
}

/// `MaxSurge(deployment)`.
pub fn max_surge(d: &Deployment) -> i32 {
    if !is_rolling(d) {
        return 0;
    }
    let (s, u) = rolling_params(d);
    resolve_fenceposts(s.as_ref(), u.as_ref(), replicas(d))
        .map(|(s, _)| s)
        .unwrap_or(0)
}

/// spec.replicas of a ReplicaSet.
pub fn rs_replicas(rs: &ReplicaSet) -> i32 {
    rs.spec.as_ref().and_then(|s| s.replicas).unwrap_or(0)
}

/// status.availableReplicas of a ReplicaSet.
pub fn rs_available(rs: &ReplicaSet) -> i32 {
    rs.status
        .as_ref()
        .and_then(|s| s.available_replicas)
        .unwrap_or(0)
}

/// `NewRSNewReplicas`.
pub fn new_rs_new_replicas(
    d: &Deployment,
    all: &[&ReplicaSet],
    new_rs_replicas: i32,
) -> Result<i32, String> {
    if !is_rolling(d) {
        return Ok(replicas(d));
    }
    let (s, _) = rolling_params(d);
    let surge = scaled_value(
        s.as_ref().unwrap_or(&IntOrString::Int(0)),
        replicas(d),
        true,
    )?;
    let current: i32 = all.iter().map(|r| rs_replicas(r)).sum();
    let max_total = replicas(d) + surge;
    if current >= max_total {
        return Ok(new_rs_replicas);
    }
    let scale_up = (max_total - current).min(replicas(d) - new_rs_replicas);
    Ok(new_rs_replicas + scale_up)
}

/// The revision number of an object's annotations (0 if absent or malformed).
pub fn revision_of(annotations: Option<&std::collections::BTreeMap<String, String>>) -> i64 {
    annotations
        .and_then(|a| a.get(REVISION))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

/// `DeploymentComplete`.
pub fn deployment_complete(d: &Deployment, s: &DeploymentStatus) -> bool {
    let r = replicas(d);
    s.updated_replicas.unwrap_or(0) == r
        && s.replicas.unwrap_or(0) == r
        && s.available_replicas.unwrap_or(0) == r
        && s.observed_generation.unwrap_or(0) >= d.metadata.generation.unwrap_or(0)
}

/// `DeploymentProgressing`: the new status shows progress over the old one.
pub fn deployment_progressing(d: &Deployment, new: &DeploymentStatus) -> bool {
    let old = d.status.clone().unwrap_or_default();
    let old_ready = old.ready_replicas.unwrap_or(0);
    let old_status_old_replicas = old.replicas.unwrap_or(0) - old.updated_replicas.unwrap_or(0);
    let new_status_old_replicas = new.replicas.unwrap_or(0) - new.updated_replicas.unwrap_or(0);
    new.updated_replicas.unwrap_or(0) > old.updated_replicas.unwrap_or(0)
        || new_status_old_replicas < old_status_old_replicas
        || new.ready_replicas.unwrap_or(0) > old_ready
        || new.available_replicas.unwrap_or(0) > old.available_replicas.unwrap_or(0)
}

/// A deployment condition.
pub fn condition(
    type_: &str,
    status: &str,
    reason: &str,
    message: &str,
    now: Time,
) -> DeploymentCondition {
    DeploymentCondition {
        type_: type_.to_string(),
        status: status.to_string(),
        reason: Some(reason.to_string()),
        message: Some(message.to_string()),
        last_update_time: Some(k8s_time(now)),
        last_transition_time: Some(k8s_time(now)),
    }
}

/// `SetDeploymentCondition`: replaces the condition of the same type, keeping the
/// transition time when the status did not change.
pub fn set_condition(s: &mut DeploymentStatus, mut c: DeploymentCondition) {
    let conds = s.conditions.get_or_insert_with(Vec::new);
    if let Some(existing) = conds.iter().find(|x| x.type_ == c.type_) {
        if existing.status == c.status && existing.reason == c.reason {
            return;
        }
        if existing.status == c.status {
            c.last_transition_time = existing.last_transition_time.clone();
        }
    }
    conds.retain(|x| x.type_ != c.type_);
    conds.push(c);
}

/// The condition of a type.
pub fn get_condition<'a>(s: &'a DeploymentStatus, t: &str) -> Option<&'a DeploymentCondition> {
    s.conditions.as_ref()?.iter().find(|c| c.type_ == t)
}

/// `GetProportion`: how much of `to_scale` this RS takes during proportional scaling.
pub fn proportion(
    rs: &ReplicaSet,
    rs_size: i32,
    fraction_to_add: i32,
    fraction_added: i32,
    d_replicas: i32,
    max_surge: i32,
) -> i32 {
    if fraction_to_add == 0 {
        return 0;
    }
    let allowed = fraction_to_add - fraction_added;
    // getReplicaSetFraction: rs.replicas * deployment.replicas / annotated desired replicas.
    let annotated = rs
        .metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(MAX_REPLICAS))
        .and_then(|v| v.parse::<i32>().ok());
    let new_size = match annotated {
        Some(max_replicas) if max_replicas > 0 => {
            let desired = d_replicas + max_surge;
            (f64::from(rs_size) * f64::from(desired) / f64::from(max_replicas)).round() as i32
                - rs_size
        }
        _ => 0,
    };
    if fraction_to_add > 0 {
        new_size.min(allowed)
    } else {
        new_size.max(allowed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fenceposts_follow_upstream_rounding() {
        let pct = |s: &str| IntOrString::String(s.to_string());
        let cases = [(1, (1, 0)), (3, (1, 0)), (4, (1, 1)), (10, (3, 2))];
        for (desired, want) in cases {
            assert_eq!(
                resolve_fenceposts(Some(&pct("25%")), Some(&pct("25%")), desired).unwrap(),
                want,
                "desired {desired}"
            );
        }
        assert_eq!(
            resolve_fenceposts(Some(&IntOrString::Int(0)), Some(&IntOrString::Int(0)), 5).unwrap(),
            (0, 1)
        );
        assert!(resolve_fenceposts(Some(&pct("oops")), None, 5).is_err());
        assert!(resolve_fenceposts(Some(&IntOrString::String("urg".into())), None, 5).is_err());
    }

    #[test]
    fn new_rs_grows_only_within_surge() {
        let mut d = Deployment::default();
        d.spec = Some(k8s_openapi::api::apps::v1::DeploymentSpec {
            replicas: Some(10),
            ..Default::default()
        });
        let old = ReplicaSet {
            spec: Some(k8s_openapi::api::apps::v1::ReplicaSetSpec {
                replicas: Some(10),
                ..Default::default()
            }),
            ..Default::default()
        };
        let new = ReplicaSet::default();
        // No strategy set ⇒ RollingUpdate with absent surge ⇒ 0: can't grow beyond 10 total.
        assert_eq!(new_rs_new_replicas(&d, &[&old, &new], 0).unwrap(), 0);
        d.spec.as_mut().unwrap().strategy = Some(k8s_openapi::api::apps::v1::DeploymentStrategy {
            type_: Some("RollingUpdate".into()),
            rolling_update: Some(k8s_openapi::api::apps::v1::RollingUpdateDeployment {
                max_surge: Some(IntOrString::String("25%".into())),
                max_unavailable: Some(IntOrString::String("25%".into())),
                ..Default::default()
            }),
        });
        // surge = ceil(10*25/100) = 3 ⇒ max total 13 ⇒ new RS may take 3.
        assert_eq!(new_rs_new_replicas(&d, &[&old, &new], 0).unwrap(), 3);
        assert_eq!(max_unavailable(&d), 2);
    }
}
