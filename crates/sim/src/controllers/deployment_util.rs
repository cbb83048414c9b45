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
                return Err(
                    "invalid value for IntOrString: invalid type: string is not a percentage"
                        .to_string(),
                );
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

/// `GetProportion`: how much of `to_add` this ReplicaSet takes during proportional
/// scaling (negative when removing), bounded by what is still left to add.
pub fn proportion(rs: &ReplicaSet, d: &Deployment, to_add: i32, added: i32) -> i32 {
    if rs_replicas(rs) == 0 || to_add == 0 || to_add == added {
        return 0;
    }
    let fraction = replica_set_fraction(rs, d);
    let allowed = to_add - added;
    if to_add > 0 {
        fraction.min(allowed)
    } else {
        fraction.max(allowed)
    }
}

/// `getReplicaSetFraction`: the ReplicaSet's size scaled by the Deployment's new
/// `replicas + maxSurge` over the one it was last scaled for, minus its size.
fn replica_set_fraction(rs: &ReplicaSet, d: &Deployment) -> i32 {
    let size = rs_replicas(rs);
    if replicas(d) == 0 {
        return -size;
    }
    let max_now = replicas(d) + max_surge(d);
    let mut max_before = rs
        .metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(MAX_REPLICAS))
        .and_then(|v| v.parse::<i32>().ok())
        .unwrap_or(0);
    if max_before == 0 {
        // No (or a zero) annotation: fall back to the Deployment's status, then to the
        // ReplicaSet's own size.
        max_before = d.status.as_ref().map_or(0, |s| s.replicas.unwrap_or(0));
        if max_before == 0 {
            max_before = size;
        }
    }
    let new_size = f64::from(size) * f64::from(max_now) / f64::from(max_before);
    new_size.round() as i32 - size
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
        let mut d = Deployment {
            spec: Some(k8s_openapi::api::apps::v1::DeploymentSpec {
                replicas: Some(10),
                ..Default::default()
            }),
            ..Default::default()
        };
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
            }),
        });
        // surge = ceil(10*25/100) = 3 ⇒ max total 13 ⇒ new RS may take 3.
        assert_eq!(new_rs_new_replicas(&d, &[&old, &new], 0).unwrap(), 3);
        assert_eq!(max_unavailable(&d), 2);
    }

    fn rs(replicas: i32, max_annotation: Option<&str>) -> ReplicaSet {
        ReplicaSet {
            metadata: k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta {
                annotations: max_annotation
                    .map(|m| [(MAX_REPLICAS.to_string(), m.to_string())].into()),
                ..Default::default()
            },
            spec: Some(k8s_openapi::api::apps::v1::ReplicaSetSpec {
                replicas: Some(replicas),
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    fn deployment(replicas: i32, surge: i32, unavailable: i32, status_replicas: i32) -> Deployment {
        Deployment {
            spec: Some(k8s_openapi::api::apps::v1::DeploymentSpec {
                replicas: Some(replicas),
                strategy: Some(k8s_openapi::api::apps::v1::DeploymentStrategy {
                    type_: Some("RollingUpdate".into()),
                    rolling_update: Some(k8s_openapi::api::apps::v1::RollingUpdateDeployment {
                        max_surge: Some(IntOrString::Int(surge)),
                        max_unavailable: Some(IntOrString::Int(unavailable)),
                    }),
                }),
                ..Default::default()
            }),
            status: Some(DeploymentStatus {
                replicas: Some(status_replicas),
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    /// `GetProportion` / `getReplicaSetFraction` as upstream's table tests read them.
    #[test]
    fn proportion_follows_upstream() {
        // The documentation's example: 10 → 15 replicas, surge 3: 13 → 18 max.
        let d = deployment(15, 3, 2, 13);
        assert_eq!(proportion(&rs(8, Some("13")), &d, 5, 0), 3); // round(8×18/13)=11
        assert_eq!(proportion(&rs(5, Some("13")), &d, 5, 3), 2); // round(5×18/13)=7, capped
                                                                 // Capped by what is left to add.
        assert_eq!(proportion(&rs(8, Some("13")), &d, 2, 0), 2);
        // Nothing for an empty ReplicaSet, nothing to add, or everything added.
        assert_eq!(proportion(&rs(0, Some("13")), &d, 5, 0), 0);
        assert_eq!(proportion(&rs(8, Some("13")), &d, 0, 0), 0);
        assert_eq!(proportion(&rs(8, Some("13")), &d, 5, 5), 0);
        // Scaling down: bounded below by what is left to remove.
        let d = deployment(5, 3, 2, 18);
        assert_eq!(proportion(&rs(11, Some("18")), &d, -10, 0), -6); // round(11×8/18)=5
        assert_eq!(proportion(&rs(11, Some("18")), &d, -3, 0), -3);
        // Scaling to zero removes the whole ReplicaSet.
        let d = deployment(0, 3, 2, 18);
        assert_eq!(proportion(&rs(11, Some("18")), &d, -18, 0), -11);
        // No annotation: the Deployment's status.replicas, then the ReplicaSet's size.
        let d = deployment(15, 3, 2, 13);
        assert_eq!(proportion(&rs(8, None), &d, 5, 0), 3);
        let d = deployment(15, 3, 2, 0);
        assert_eq!(proportion(&rs(8, None), &d, 20, 0), 10); // 8×18/8 = 18
    }
}
