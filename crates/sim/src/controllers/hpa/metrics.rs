//! The HPA controller's metrics step (`computeReplicasForMetrics`) and normalization
//! (`normalizeDesiredReplicas`, `normalizeDesiredReplicasWithBehaviors`).

use std::collections::BTreeMap;

use k8s_openapi::api::autoscaling::v2::{
    ContainerResourceMetricStatus, HPAScalingRules, HorizontalPodAutoscaler,
    HorizontalPodAutoscalerStatus, MetricSpec, MetricStatus, MetricValueStatus,
    ResourceMetricStatus,
};
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;

use super::{
    default_scale_down, default_scale_up, set_condition, sources, HorizontalController, Scale,
};
use crate::client::recorder::WARNING;
use crate::controllers::hpa_calc::{self, PodMetric, Why};
use crate::controllers::Env;
use crate::object::Object;
use crate::time::{Time, SECOND};

fn milli_quantity(m: i64) -> Quantity {
    if m % 1000 == 0 {
        Quantity((m / 1000).to_string())
    } else {
        Quantity(format!("{m}m"))
    }
}

/// The outcome of computing the metrics' proposal.
pub(super) struct MetricsResult {
    pub(super) replicas: i32,
    pub(super) metric: String,
    pub(super) statuses: Vec<MetricStatus>,
}

/// A resource metric's proposal from `pods` and their `metrics` (Resource, or one
/// container's view for ContainerResource); `what` names it in errors.
fn resource_proposal(
    target: &k8s_openapi::api::autoscaling::v2::MetricTarget,
    name: &str,
    scale: &Scale,
    pods: &[&Pod],
    metrics: &BTreeMap<String, PodMetric>,
    now: Time,
) -> Result<hpa_calc::Proposal, String> {
    match (&target.average_value, target.average_utilization) {
        (Some(v), _) => {
            let t = crate::quantity::parse(&v.0).map_or(0, |q| q.milli_value());
            hpa_calc::raw_resource_replicas(scale.spec_replicas, t, pods, metrics, now)
                .map_err(|e| format!("failed to get {name} usage: {e}"))
        }
        (None, Some(t)) => hpa_calc::resource_replicas(scale.spec_replicas, t, pods, metrics, now)
            .map_err(|e| format!("failed to get {name} utilization: {e}")),
        (None, None) => Err("invalid resource metric source: neither an average utilization target nor an average value (usage) target was set".into()),
    }
}

/// One metric's proposal and the metric's name, or how it failed.
fn evaluate(
    spec: &MetricSpec,
    scale: &Scale,
    pods: &[&Pod],
    metrics: &BTreeMap<String, PodMetric>,
    containers: &BTreeMap<(String, String, String), PodMetric>,
    ns: &str,
    now: Time,
) -> Result<(hpa_calc::Proposal, String), sources::Failure> {
    let fail =
        |msg: String, reason: &'static str, full: String| sources::Failure { msg, reason, full };
    match (
        spec.type_.as_str(),
        &spec.resource,
        &spec.container_resource,
    ) {
        ("Resource", Some(r), _) => {
            resource_proposal(&r.target, &r.name, scale, pods, metrics, now)
                .map(|p| (p, r.name.clone()))
                .map_err(|msg| {
                    let full = format!("failed to get {} resource metric value: {msg}", r.name);
                    fail(msg, "FailedGetResourceMetric", full)
                })
        }
        ("ContainerResource", _, Some(c)) => {
            const REASON: &str = "FailedGetContainerResourceMetric";
            let wrap = |msg: String| {
                let full = format!(
                    "failed to get {} container metric value: {msg}",
                    c.container
                );
                fail(msg, REASON, full)
            };
            let (view, cm) = sources::container_view(&c.container, pods, containers)
                .map_err(|e| wrap(format!("failed to get {} utilization: {e}", c.name)))?;
            let refs: Vec<&Pod> = view.iter().collect();
            resource_proposal(&c.target, &c.name, scale, &refs, &cm, now)
                .map(|p| (p, c.name.clone()))
                .map_err(wrap)
        }
        _ => Err(sources::unserved(spec, ns).unwrap_or_else(|| {
            let msg = format!("unknown metric source type {:?}", spec.type_);
            fail(msg.clone(), "InvalidMetricSourceType", msg)
        })),
    }
}

/// The status of a metric that produced a proposal.
fn status_of(spec: &MetricSpec, name: &str, p: &hpa_calc::Proposal) -> MetricStatus {
    let target = spec
        .resource
        .as_ref()
        .map(|r| &r.target)
        .or(spec.container_resource.as_ref().map(|c| &c.target));
    let raw = target.is_some_and(|t| t.average_value.is_some());
    let current = MetricValueStatus {
        average_utilization: (!raw).then_some(p.utilization),
        average_value: Some(milli_quantity(p.raw)),
        value: None,
    };
    match &spec.container_resource {
        Some(c) if spec.type_ == "ContainerResource" => MetricStatus {
            type_: "ContainerResource".into(),
            container_resource: Some(ContainerResourceMetricStatus {
                name: name.to_string(),
                container: c.container.clone(),
                current,
            }),
            ..Default::default()
        },
        _ => MetricStatus {
            type_: "Resource".into(),
            resource: Some(ResourceMetricStatus {
                name: name.to_string(),
                current,
            }),
            ..Default::default()
        },
    }
}

impl HorizontalController {
    fn pod_metrics(&self, ns: &str, pods: &[&Pod]) -> BTreeMap<String, PodMetric> {
        pods.iter()
            .filter_map(|p| {
                let name = p.metadata.name.clone()?;
                let m = self.metrics.get(&(ns.to_string(), name.clone()))?;
                Some((name, *m))
            })
            .collect()
    }

    /// `computeReplicasForMetrics` for resource metrics (the only kind with a source
    /// here): the largest proposal, or every metric invalid with the first one's error.
    pub(super) fn compute_metrics(
        &self,
        hpa: &HorizontalPodAutoscaler,
        st: &mut HorizontalPodAutoscalerStatus,
        scale: &Scale,
        pods: &[&Pod],
        env: &mut Env,
        obj: &Object,
    ) -> Result<MetricsResult, String> {
        let now = env.now();
        let Some(_) = &scale.selector else {
            env.event(obj, WARNING, "SelectorRequired", "selector is required");
            set_condition(
                st,
                "ScalingActive",
                "False",
                "InvalidSelector",
                "the HPA target's scale is missing a selector",
                now,
            );
            return Err("selector is required".into());
        };
        let specs = hpa
            .spec
            .as_ref()
            .and_then(|s| s.metrics.clone())
            .unwrap_or_default();
        let ns = hpa.metadata.namespace.as_deref().unwrap_or("");
        let metrics = self.pod_metrics(ns, pods);
        let mut best: Option<MetricsResult> = None;
        let mut statuses = Vec::new();
        let mut invalid = 0;
        let mut first: Option<(String, &'static str, String)> = None;
        for spec in &specs {
            let res = evaluate(
                spec,
                scale,
                pods,
                &metrics,
                &self.container_metrics,
                ns,
                now,
            );
            match res {
                Ok((p, name)) => {
                    statuses.push(status_of(spec, &name, &p));
                    let target = spec
                        .resource
                        .as_ref()
                        .map(|r| &r.target)
                        .or(spec.container_resource.as_ref().map(|c| &c.target));
                    let raw = target.is_some_and(|t| t.average_value.is_some());
                    let container = if spec.type_ == "ContainerResource" {
                        " container"
                    } else {
                        ""
                    };
                    if best
                        .as_ref()
                        .is_none_or(|b| b.replicas == 0 || p.replicas > b.replicas)
                    {
                        best = Some(MetricsResult {
                            replicas: p.replicas,
                            metric: if raw {
                                format!("{name} resource")
                            } else {
                                format!("{name}{container} resource utilization (percentage of request)")
                            },
                            statuses: Vec::new(),
                        });
                    }
                }
                Err(f) => {
                    env.event(obj, WARNING, f.reason, &f.msg);
                    statuses.push(MetricStatus {
                        type_: String::new(),
                        ..Default::default()
                    });
                    if first.is_none() {
                        first = Some((f.full, f.reason, f.msg));
                    }
                    invalid += 1;
                }
            }
        }
        statuses.retain(|s| !s.type_.is_empty());
        // Some metrics invalid and the valid ones would scale down: do not act on them.
        let down = best
            .as_ref()
            .is_some_and(|b| b.replicas < scale.spec_replicas);
        if invalid >= specs.len() || (invalid > 0 && down) {
            let (full, reason, msg) = first.unwrap_or_default();
            set_condition(
                st,
                "ScalingActive",
                "False",
                reason,
                &format!("the HPA was unable to compute the replica count: {msg}"),
                now,
            );
            st.current_metrics = if statuses.is_empty() {
                None
            } else {
                Some(statuses)
            };
            return Err(format!(
                "invalid metrics ({invalid} invalid out of {}), first error is: {full}",
                specs.len()
            ));
        }
        let mut best = best.expect("a valid metric");
        set_condition(
            st,
            "ScalingActive",
            "True",
            "ValidMetricFound",
            &format!(
                "the HPA was able to successfully calculate a replica count from {}",
                best.metric
            ),
            now,
        );
        best.statuses = statuses;
        Ok(best)
    }

    /// `normalizeDesiredReplicas` (no behavior) or `normalizeDesiredReplicasWithBehaviors`.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn normalize(
        &mut self,
        key: &str,
        hpa: &HorizontalPodAutoscaler,
        st: &mut HorizontalPodAutoscalerStatus,
        current: i32,
        desired: i32,
        min: i32,
        now: Time,
    ) -> i32 {
        let spec = hpa.spec.clone().unwrap_or_default();
        let max = spec.max_replicas;
        let recs = self.recommendations.entry(key.to_string()).or_default();
        let (s, stab, d, why): (i32, Why, i32, Why) = match &spec.behavior {
            None => {
                let s = hpa_calc::stabilize(
                    recs,
                    desired,
                    now,
                    hpa_calc::DOWNSCALE_STABILIZATION_WINDOW,
                );
                let stab: Why = if s != desired {
                    ("ScaleDownStabilized", "recent recommendations were higher than current one, applying the highest recent recommendation".into())
                } else {
                    (
                        "ReadyForNewScale",
                        "recommended size matches current size".into(),
                    )
                };
                let (d, why) = hpa_calc::with_rules(current, s, min, max);
                (s, stab, d, why)
            }
            Some(b) => {
                let up = b.scale_up.clone().unwrap_or_else(default_scale_up);
                let down = b.scale_down.clone().unwrap_or_else(default_scale_down);
                let win = |r: &HPAScalingRules, d: Time| {
                    r.stabilization_window_seconds
                        .map_or(d, |s| Time::from(s.max(0) as u32) * SECOND)
                };
                let (s, stab) = hpa_calc::stabilize_with_behaviors(
                    recs,
                    current,
                    desired,
                    win(&up, 0),
                    win(&down, hpa_calc::DOWNSCALE_STABILIZATION_WINDOW),
                    now,
                );
                let ue = self.up_events.get(key).cloned().unwrap_or_default();
                let de = self.down_events.get(key).cloned().unwrap_or_default();
                let (d, why) =
                    hpa_calc::with_behavior_rate(current, s, min, max, &up, &down, &ue, &de, now);
                (s, stab, d, why)
            }
        };
        set_condition(st, "AbleToScale", "True", stab.0, &stab.1, now);
        let limited = if d == s { "False" } else { "True" };
        set_condition(st, "ScalingLimited", limited, why.0, &why.1, now);
        d
    }
}
