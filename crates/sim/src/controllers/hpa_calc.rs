//! The HorizontalPodAutoscaler's arithmetic, as pkg/controller/podautoscaler has it: the
//! replica calculator for resource utilization (with its treatment of unready pods and
//! pods without metrics), the scale-down stabilization window and the scale limits.

use std::collections::BTreeMap;

use k8s_openapi::api::autoscaling::v2::{HPAScalingPolicy, HPAScalingRules};
use k8s_openapi::api::core::v1::Pod;

use crate::time::{from_k8s_time, Time, MINUTE, SECOND};

/// `--horizontal-pod-autoscaler-tolerance`.
pub const TOLERANCE: f64 = 0.1;
/// `--horizontal-pod-autoscaler-cpu-initialization-period`.
pub const CPU_INITIALIZATION_PERIOD: Time = 5 * MINUTE;
/// `--horizontal-pod-autoscaler-initial-readiness-delay`.
pub const DELAY_OF_INITIAL_READINESS_STATUS: Time = 30 * SECOND;
/// `--horizontal-pod-autoscaler-downscale-stabilization`.
pub const DOWNSCALE_STABILIZATION_WINDOW: Time = 5 * MINUTE;

/// One pod's CPU use as the resource metrics API reports it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PodMetric {
    /// Millicores.
    pub value: i64,
    /// When it was measured.
    pub timestamp: Time,
    /// The window it averages over.
    pub window: Time,
}

/// What `GetResourceReplicas` proposes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Proposal {
    /// Replica count.
    pub replicas: i32,
    /// Average utilization in percent of the request.
    pub utilization: i32,
    /// Average usage in millicores.
    pub raw: i64,
    /// Measurement time.
    pub timestamp: Time,
}

/// `groupPods`: the ready pods counted, the pods ignored (pending, or unready within the
/// initialization period) and those without metrics.
fn group_pods(
    pods: &[&Pod],
    metrics: &BTreeMap<String, PodMetric>,
    now: Time,
) -> (usize, Vec<String>, Vec<String>) {
    let mut ready = 0;
    let mut ignored = Vec::new();
    let mut missing = Vec::new();
    for pod in pods {
        let name = pod.metadata.name.clone().unwrap_or_default();
        let status = pod.status.as_ref();
        let phase = status.and_then(|s| s.phase.as_deref()).unwrap_or("");
        if pod.metadata.deletion_timestamp.is_some() || phase == "Failed" {
            continue;
        }
        if phase == "Pending" || phase.is_empty() {
            ignored.push(name);
            continue;
        }
        let Some(metric) = metrics.get(&name) else {
            missing.push(name);
            continue;
        };
        let cond = status
            .and_then(|s| s.conditions.as_ref())
            .and_then(|cs| cs.iter().find(|c| c.type_ == "Ready"));
        let start = status
            .and_then(|s| s.start_time.as_ref())
            .map(from_k8s_time);
        let ignore = match (cond, start) {
            (Some(c), Some(start)) => {
                let transition = c.last_transition_time.as_ref().map_or(0, from_k8s_time);
                if start + CPU_INITIALIZATION_PERIOD > now {
                    c.status == "False" || metric.timestamp < transition + metric.window
                } else {
                    c.status == "False" && start + DELAY_OF_INITIAL_READINESS_STATUS > transition
                }
            }
            _ => true,
        };
        if ignore {
            ignored.push(name);
            continue;
        }
        ready += 1;
    }
    (ready, ignored, missing)
}

/// `calculatePodRequests` for CPU (millicores), or the error upstream gives.
fn pod_requests(pods: &[&Pod]) -> Result<BTreeMap<String, i64>, String> {
    let mut out = BTreeMap::new();
    for pod in pods {
        let mut sum = 0;
        for c in pod.spec.iter().flat_map(|s| &s.containers) {
            let req = c
                .resources
                .as_ref()
                .and_then(|r| r.requests.as_ref())
                .and_then(|r| r.get("cpu"));
            match req.and_then(|q| crate::quantity::parse(&q.0).ok()) {
                Some(q) => sum += q.milli_value(),
                None => return Err("missing request for cpu".into()),
            }
        }
        out.insert(pod.metadata.name.clone().unwrap_or_default(), sum);
    }
    Ok(out)
}

/// `GetResourceUtilizationRatio`.
fn utilization_ratio(
    metrics: &BTreeMap<String, PodMetric>,
    requests: &BTreeMap<String, i64>,
    target: i32,
) -> Result<(f64, i32, i64), String> {
    let (mut total, mut req_total, mut n) = (0i64, 0i64, 0i64);
    for (pod, m) in metrics {
        let Some(r) = requests.get(pod) else {
            continue;
        };
        total += m.value;
        req_total += r;
        n += 1;
    }
    if req_total == 0 {
        return Err("no metrics returned matched known pods".into());
    }
    let util = ((total * 100) / req_total) as i32;
    Ok((f64::from(util) / f64::from(target), util, total / n))
}

/// `GetResourceReplicas` for CPU: the replica count that brings average utilization to
/// `target` percent, or the error upstream words (without the `failed to get cpu
/// utilization: ` prefix the caller adds).
pub fn resource_replicas(
    current: i32,
    target: i32,
    pods: &[&Pod],
    all_metrics: &BTreeMap<String, PodMetric>,
    now: Time,
) -> Result<Proposal, String> {
    let mut metrics: BTreeMap<String, PodMetric> = pods
        .iter()
        .filter_map(|p| {
            let n = p.metadata.name.clone()?;
            all_metrics.get(&n).map(|m| (n, *m))
        })
        .collect();
    if metrics.is_empty() {
        return Err(
            "unable to get metrics for resource cpu: no metrics returned from resource metrics API"
                .into(),
        );
    }
    let timestamp = metrics.values().map(|m| m.timestamp).max().unwrap_or(0);
    if pods.is_empty() {
        return Err("no pods returned by selector while calculating replica count".into());
    }
    let (ready, ignored, missing) = group_pods(pods, &metrics, now);
    for p in &ignored {
        metrics.remove(p);
    }
    let requests = pod_requests(pods)?;
    if metrics.is_empty() {
        return Err("did not receive metrics for any ready pods".into());
    }
    let (ratio, utilization, raw) = utilization_ratio(&metrics, &requests, target)?;
    let proposal = |replicas| Proposal {
        replicas,
        utilization,
        raw,
        timestamp,
    };
    let rebalance_ignored = !ignored.is_empty() && ratio > 1.0;
    if !rebalance_ignored && missing.is_empty() {
        if (1.0 - ratio).abs() <= TOLERANCE {
            return Ok(proposal(current));
        }
        return Ok(proposal((ratio * ready as f64).ceil() as i32));
    }
    let fill = |m: &mut BTreeMap<String, PodMetric>, pod: &str, value: i64| {
        m.insert(
            pod.to_string(),
            PodMetric {
                value,
                timestamp,
                window: 0,
            },
        );
    };
    if !missing.is_empty() {
        for p in &missing {
            if ratio < 1.0 {
                fill(&mut metrics, p, requests.get(p).copied().unwrap_or(0));
            } else if ratio > 1.0 {
                fill(&mut metrics, p, 0);
            }
        }
    }
    if rebalance_ignored {
        for p in &ignored {
            fill(&mut metrics, p, 0);
        }
    }
    let (new_ratio, _, _) = utilization_ratio(&metrics, &requests, target)?;
    if (1.0 - new_ratio).abs() <= TOLERANCE
        || (ratio < 1.0 && new_ratio > 1.0)
        || (ratio > 1.0 && new_ratio < 1.0)
    {
        return Ok(proposal(current));
    }
    let replicas = (new_ratio * metrics.len() as f64).ceil() as i32;
    if (new_ratio < 1.0 && replicas > current) || (new_ratio > 1.0 && replicas < current) {
        return Ok(proposal(current));
    }
    Ok(proposal(replicas))
}

/// `GetRawResourceReplicas` for CPU (`calcPlainMetricReplicas`): the replica count that
/// brings the average use to `target_m` millicores.
pub fn raw_resource_replicas(
    current: i32,
    target_m: i64,
    pods: &[&Pod],
    all_metrics: &BTreeMap<String, PodMetric>,
    now: Time,
) -> Result<Proposal, String> {
    let mut metrics: BTreeMap<String, PodMetric> = pods
        .iter()
        .filter_map(|p| {
            let n = p.metadata.name.clone()?;
            all_metrics.get(&n).map(|m| (n, *m))
        })
        .collect();
    if metrics.is_empty() {
        return Err(
            "unable to get metrics for resource cpu: no metrics returned from resource metrics API"
                .into(),
        );
    }
    let timestamp = metrics.values().map(|m| m.timestamp).max().unwrap_or(0);
    let (ready, ignored, missing) = group_pods(pods, &metrics, now);
    for p in &ignored {
        metrics.remove(p);
    }
    if metrics.is_empty() {
        return Err("did not receive metrics for any ready pods".into());
    }
    let ratio_of = |m: &BTreeMap<String, PodMetric>| {
        let avg = m.values().map(|x| x.value).sum::<i64>() / m.len() as i64;
        (avg as f64 / target_m.max(1) as f64, avg)
    };
    let (ratio, raw) = ratio_of(&metrics);
    let proposal = |replicas| Proposal {
        replicas,
        utilization: 0,
        raw,
        timestamp,
    };
    let rebalance_ignored = !ignored.is_empty() && ratio > 1.0;
    if !rebalance_ignored && missing.is_empty() {
        if (1.0 - ratio).abs() <= TOLERANCE {
            return Ok(proposal(current));
        }
        return Ok(proposal((ratio * ready as f64).ceil() as i32));
    }
    let zero = PodMetric {
        value: 0,
        timestamp,
        window: 0,
    };
    for p in &missing {
        let value = if ratio < 1.0 { target_m } else { 0 };
        metrics.insert(p.clone(), PodMetric { value, ..zero });
    }
    if rebalance_ignored {
        for p in &ignored {
            metrics.insert(p.clone(), zero);
        }
    }
    let (new_ratio, _) = ratio_of(&metrics);
    if (1.0 - new_ratio).abs() <= TOLERANCE
        || (ratio < 1.0 && new_ratio > 1.0)
        || (ratio > 1.0 && new_ratio < 1.0)
    {
        return Ok(proposal(current));
    }
    Ok(proposal((new_ratio * metrics.len() as f64).ceil() as i32))
}

/// A condition the normalization sets: (reason, message).
pub type Why = (&'static str, String);

/// `convertDesiredReplicasWithRules`: min, max and the scale-up limit (twice the current
/// count, at least 4) of an HPA without `behavior`.
pub fn with_rules(current: i32, desired: i32, min: i32, max: i32) -> (i32, Why) {
    let limit = (2 * current).max(4);
    let (max_allowed, why) = if max > limit {
        (
            limit,
            (
                "ScaleUpLimit",
                "the desired replica count is increasing faster than the maximum scale rate",
            ),
        )
    } else {
        (
            max,
            (
                "TooManyReplicas",
                "the desired replica count is more than the maximum replica count",
            ),
        )
    };
    if desired < min {
        return (
            min,
            (
                "TooFewReplicas",
                "the desired replica count is less than the minimum replica count".into(),
            ),
        );
    }
    if desired > max_allowed {
        return (max_allowed, (why.0, why.1.into()));
    }
    (
        desired,
        (
            "DesiredWithinRange",
            "the desired count is within the acceptable range".into(),
        ),
    )
}

/// A past recommendation or scale change of one HPA.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stamped {
    /// Replicas recommended, or the change made (positive up, negative down).
    pub value: i32,
    /// When.
    pub at: Time,
}

/// `stabilizeRecommendation`: the highest recommendation within the downscale window,
/// replacing the oldest expired sample with this one.
pub fn stabilize(recs: &mut Vec<Stamped>, desired: i32, now: Time, window: Time) -> i32 {
    let cutoff = now.saturating_sub(window);
    let mut max = desired;
    let mut old = None;
    for (i, r) in recs.iter().enumerate() {
        if r.at < cutoff {
            old = Some(i);
        } else if r.value > max {
            max = r.value;
        }
    }
    let s = Stamped {
        value: desired,
        at: now,
    };
    match old {
        Some(i) => recs[i] = s,
        None => recs.push(s),
    }
    max
}

/// `stabilizeRecommendationWithBehaviors`: within each direction's window, scale up to no
/// more than the lowest recommendation and down to no less than the highest.
pub fn stabilize_with_behaviors(
    recs: &mut Vec<Stamped>,
    current: i32,
    desired: i32,
    up_window: Time,
    down_window: Time,
    now: Time,
) -> (i32, Why) {
    let mut up = desired;
    let mut down = desired;
    let longest = up_window.max(down_window);
    let mut old = None;
    for (i, r) in recs.iter().enumerate() {
        if r.at + up_window > now {
            up = up.min(r.value);
        }
        if r.at + down_window > now {
            down = down.max(r.value);
        }
        if r.at + longest <= now {
            old = Some(i);
        }
    }
    let s = Stamped {
        value: desired,
        at: now,
    };
    match old {
        Some(i) => recs[i] = s,
        None => recs.push(s),
    }
    let mut rec = current;
    if rec < up {
        rec = up;
    }
    if rec > down {
        rec = down;
    }
    if rec == desired {
        return (
            rec,
            (
                "ReadyForNewScale",
                "recommended size matches current size".into(),
            ),
        );
    }
    if desired > current {
        (
            rec,
            (
                "ScaleUpStabilized",
                "recent recommendations were lower than current one, applying the lowest recent recommendation".into(),
            ),
        )
    } else {
        (
            rec,
            (
                "ScaleDownStabilized",
                "recent recommendations were higher than current one, applying the highest recent recommendation".into(),
            ),
        )
    }
}

/// The replicas added (or removed) by the scale events within `period`.
fn change_in_period(events: &[Stamped], period: Time, now: Time) -> i32 {
    let cutoff = now.saturating_sub(period);
    events
        .iter()
        .filter(|e| e.at > cutoff)
        .map(|e| e.value)
        .sum()
}

fn policies(rules: &HPAScalingRules) -> &[HPAScalingPolicy] {
    rules.policies.as_deref().unwrap_or(&[])
}

/// `calculateScaleUpLimitWithScalingRules`.
pub fn scale_up_limit(current: i32, events: &[Stamped], rules: &HPAScalingRules, now: Time) -> i32 {
    let select = rules.select_policy.as_deref().unwrap_or("Max");
    if select == "Disabled" {
        return current;
    }
    let mut result = if select == "Min" { i32::MAX } else { i32::MIN };
    for p in policies(rules) {
        let period = Time::from(p.period_seconds.max(0) as u32) * SECOND;
        let added = change_in_period(events, period, now);
        let start = current - added;
        let proposed = match p.type_.as_str() {
            "Pods" => start + p.value,
            _ => (f64::from(start) * (1.0 + f64::from(p.value) / 100.0)).ceil() as i32,
        };
        result = if select == "Min" {
            result.min(proposed)
        } else {
            result.max(proposed)
        };
    }
    result.max(current)
}

/// `calculateScaleDownLimitWithBehaviors`.
pub fn scale_down_limit(
    current: i32,
    events: &[Stamped],
    rules: &HPAScalingRules,
    now: Time,
) -> i32 {
    let select = rules.select_policy.as_deref().unwrap_or("Max");
    if select == "Disabled" {
        return current;
    }
    let mut result = if select == "Min" { i32::MIN } else { i32::MAX };
    for p in policies(rules) {
        let period = Time::from(p.period_seconds.max(0) as u32) * SECOND;
        let removed = -change_in_period(events, period, now);
        let start = current + removed;
        let proposed = match p.type_.as_str() {
            "Pods" => start - p.value,
            _ => (f64::from(start) * (1.0 - f64::from(p.value) / 100.0)) as i32,
        };
        result = if select == "Min" {
            result.max(proposed)
        } else {
            result.min(proposed)
        };
    }
    result.min(current)
}

/// `convertDesiredReplicasWithBehaviorRate`.
#[allow(clippy::too_many_arguments)]
pub fn with_behavior_rate(
    current: i32,
    desired: i32,
    min: i32,
    max: i32,
    up: &HPAScalingRules,
    down: &HPAScalingRules,
    up_events: &[Stamped],
    down_events: &[Stamped],
    now: Time,
) -> (i32, Why) {
    if desired > current {
        let limit = scale_up_limit(current, up_events, up, now);
        let (max_allowed, why) = if limit < max {
            (
                limit,
                (
                    "ScaleUpLimit",
                    "the desired replica count is increasing faster than the maximum scale rate",
                ),
            )
        } else {
            (
                max,
                (
                    "TooManyReplicas",
                    "the desired replica count is more than the maximum replica count",
                ),
            )
        };
        if desired > max_allowed {
            return (max_allowed, (why.0, why.1.into()));
        }
    } else if desired < current {
        let limit = scale_down_limit(current, down_events, down, now);
        let (min_allowed, why) = if limit > min {
            (
                limit,
                (
                    "ScaleDownLimit",
                    "the desired replica count is decreasing faster than the maximum scale rate",
                ),
            )
        } else {
            (
                min,
                (
                    "TooFewReplicas",
                    "the desired replica count is less than the minimum replica count",
                ),
            )
        };
        if desired < min_allowed {
            return (min_allowed, (why.0, why.1.into()));
        }
    }
    (
        desired,
        (
            "DesiredWithinRange",
            "the desired count is within the acceptable range".into(),
        ),
    )
}
