//! The horizontal-pod-autoscaler controller: every 15 s it reads each HPA's target scale,
//! the CPU use of the target's pods from the resource metrics (metrics-server's kubelet
//! summaries) and sets the target's replicas through its `scale` subresource, with
//! upstream's conditions, events and status.

use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_openapi::api::autoscaling::v2::{
    HPAScalingRules, HorizontalPodAutoscaler, HorizontalPodAutoscalerCondition,
    HorizontalPodAutoscalerStatus, MetricStatus, MetricValueStatus, ResourceMetricStatus,
};
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;

use crate::api::{ApiRequest, ApiResponse, Body, ReqId, Subresource, Verb};
use crate::client::recorder::{NORMAL, WARNING};
use crate::client::{Change, Pending, WorkQueue};
use crate::controllers::hpa_calc::{self, PodMetric, Stamped, Why};
use crate::controllers::util::{key_of, split_key};
use crate::controllers::{Action, Controller, Env, Informers, SyncResult};
use crate::node::server::{KubeletCall, KubeletReply, KubeletRequest, KubeletResponse, SCRAPE};
use crate::object::{Kind, Object};
use crate::selector::LabelSelector;
use crate::time::{k8s_time, Time, SECOND};
use crate::world::{Actor, Payload};

/// `--horizontal-pod-autoscaler-sync-period`.
pub const SYNC_PERIOD: Time = 15 * SECOND;
/// Kubelet API request ids of the metrics scrapes (apart from terminals' ids).
const SCRAPE_ID_BASE: u64 = 1 << 40;

/// A scale target as its `scale` subresource shows it.
pub struct Scale {
    /// The target object.
    pub obj: Arc<Object>,
    /// spec.replicas.
    pub spec_replicas: i32,
    /// The pod selector.
    pub selector: Option<LabelSelector>,
}

/// What a request in flight was for.
#[derive(Debug)]
enum Sent {
    /// A rescale, with the status to write once it is answered.
    Scale {
        key: String,
        hpa: Box<HorizontalPodAutoscaler>,
        current: i32,
        desired: i32,
        reason: String,
    },
    Status,
}

/// The horizontal-pod-autoscaler controller.
#[derive(Default)]
pub struct HorizontalController {
    /// CPU millicores per pod (`namespace`, `name`), from the last scrape of each node.
    metrics: BTreeMap<(String, String), PodMetric>,
    /// Which pods each node's last summary held.
    node_pods: BTreeMap<String, Vec<(String, String)>>,
    scrapes: BTreeMap<u64, String>,
    next_scrape_id: u64,
    last_scrape: Option<Time>,
    /// When each HPA's next periodic sync is due (one chain per HPA).
    next_sync: BTreeMap<String, Time>,
    recommendations: BTreeMap<String, Vec<Stamped>>,
    up_events: BTreeMap<String, Vec<Stamped>>,
    down_events: BTreeMap<String, Vec<Stamped>>,
    sent: Pending<Sent>,
}

/// Sets a condition as `setCondition` does: the transition time moves only when the
/// status changes.
pub fn set_condition(
    st: &mut HorizontalPodAutoscalerStatus,
    type_: &str,
    status: &str,
    reason: &str,
    message: &str,
    now: Time,
) {
    let conds = st.conditions.get_or_insert_with(Vec::new);
    let c = match conds.iter().position(|c| c.type_ == type_) {
        Some(i) => &mut conds[i],
        None => {
            conds.push(HorizontalPodAutoscalerCondition {
                type_: type_.into(),
                ..Default::default()
            });
            conds.last_mut().expect("just pushed")
        }
    };
    if c.status != status || c.last_transition_time.is_none() {
        c.last_transition_time = Some(k8s_time(now));
    }
    c.status = status.into();
    c.reason = Some(reason.into());
    c.message = Some(message.into());
}

fn milli_quantity(m: i64) -> Quantity {
    if m % 1000 == 0 {
        Quantity((m / 1000).to_string())
    } else {
        Quantity(format!("{m}m"))
    }
}

/// The target's scale, or the error `scaleForResourceMappings` / `RESTMappings` gives.
pub fn get_scale(hpa: &HorizontalPodAutoscaler, inf: &Informers) -> Result<Scale, String> {
    let ns = hpa.metadata.namespace.as_deref().unwrap_or("");
    let r = &hpa
        .spec
        .as_ref()
        .map(|s| s.scale_target_ref.clone())
        .unwrap_or_default();
    let group = r
        .api_version
        .as_deref()
        .unwrap_or("")
        .rsplit_once('/')
        .map_or("", |(g, _)| g);
    let kind = match (group, r.kind.as_str()) {
        ("apps", "Deployment") => Kind::Deployment,
        ("apps", "ReplicaSet") => Kind::ReplicaSet,
        ("apps", "StatefulSet") => Kind::StatefulSet,
        _ => {
            return Err(format!(
                "no matches for kind \"{}\" in group \"{group}\"",
                r.kind
            ))
        }
    };
    let Some(obj) = inf.of(kind).get(ns, &r.name) else {
        return Err(format!(
            "{} \"{}\" not found",
            kind.info().group_resource(),
            r.name
        ));
    };
    let (replicas, sel) = match &**obj {
        Object::Deployment(d) => d
            .spec
            .as_ref()
            .map(|s| (s.replicas.unwrap_or(1), Some(&s.selector))),
        Object::ReplicaSet(x) => x
            .spec
            .as_ref()
            .map(|s| (s.replicas.unwrap_or(1), Some(&s.selector))),
        Object::StatefulSet(x) => x
            .spec
            .as_ref()
            .map(|s| (s.replicas.unwrap_or(1), Some(&s.selector))),
        _ => None,
    }
    .unwrap_or((1, None));
    let selector = sel.and_then(|s| LabelSelector::from_k8s(Some(s)).ok());
    Ok(Scale {
        obj: obj.clone(),
        spec_replicas: replicas,
        selector,
    })
}

/// The target's pods, through the controller index (a Deployment's through its
/// ReplicaSets), that its selector matches.
pub fn target_pods<'a>(scale: &Scale, inf: &'a Informers) -> Vec<&'a Pod> {
    let uid = scale.obj.meta().uid.clone().unwrap_or_default();
    let owners: Vec<String> = match scale.obj.kind() {
        Kind::Deployment => inf
            .of(Kind::ReplicaSet)
            .controlled_by(&uid)
            .filter_map(|rs| rs.meta().uid.clone())
            .collect(),
        _ => vec![uid],
    };
    let mut pods: Vec<&Pod> = owners
        .iter()
        .flat_map(|o| inf.of(Kind::Pod).controlled_by(o))
        .filter(|p| scale.selector.as_ref().is_some_and(|s| s.matches_object(p)))
        .filter_map(|p| match &**p {
            Object::Pod(p) => Some(p),
            _ => None,
        })
        .collect();
    pods.sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
    pods
}

/// The outcome of computing the metrics' proposal.
struct MetricsResult {
    replicas: i32,
    metric: String,
    statuses: Vec<MetricStatus>,
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
    fn compute_metrics(
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
            let res = match (spec.type_.as_str(), &spec.resource) {
                ("Resource", Some(r)) => match r.target.average_utilization {
                    Some(target) => hpa_calc::resource_replicas(scale.spec_replicas, target, pods, &metrics, now)
                        .map(|p| (p, r.name.clone()))
                        .map_err(|e| (format!("failed to get {} utilization: {e}", r.name), "FailedGetResourceMetric")),
                    None => Err(("invalid resource metric source: neither an average utilization target nor an average value (or value) target was set".into(), "FailedGetResourceMetric")),
                },
                (t, _) => Err((format!("unable to get metric {t}: no custom metrics API (kubeloop serves only resource metrics)"), "FailedGetPodsMetric")),
            };
            match res {
                Ok((p, name)) => {
                    statuses.push(MetricStatus {
                        type_: "Resource".into(),
                        resource: Some(ResourceMetricStatus {
                            name: name.clone(),
                            current: MetricValueStatus {
                                average_utilization: Some(p.utilization),
                                average_value: Some(milli_quantity(p.raw)),
                                value: None,
                            },
                        }),
                        ..Default::default()
                    });
                    if best
                        .as_ref()
                        .is_none_or(|b| b.replicas == 0 || p.replicas > b.replicas)
                    {
                        best = Some(MetricsResult {
                            replicas: p.replicas,
                            metric: format!("{name} resource utilization (percentage of request)"),
                            statuses: Vec::new(),
                        });
                    }
                }
                Err((msg, reason)) => {
                    env.event(obj, WARNING, reason, &msg);
                    statuses.push(MetricStatus {
                        type_: String::new(),
                        ..Default::default()
                    });
                    let full = match &spec.resource {
                        Some(r) if spec.type_ == "Resource" => {
                            format!("failed to get {} resource metric value: {msg}", r.name)
                        }
                        _ => msg.clone(),
                    };
                    if first.is_none() {
                        first = Some((full, reason, msg));
                    }
                    invalid += 1;
                }
            }
        }
        statuses.retain(|s| !s.type_.is_empty());
        if invalid >= specs.len() {
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
    fn normalize(
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

/// The scale-up rules upstream's defaulting gives a behavior without them.
pub fn default_scale_up() -> HPAScalingRules {
    use k8s_openapi::api::autoscaling::v2::HPAScalingPolicy;
    HPAScalingRules {
        policies: Some(vec![
            HPAScalingPolicy {
                type_: "Pods".into(),
                value: 4,
                period_seconds: 15,
            },
            HPAScalingPolicy {
                type_: "Percent".into(),
                value: 100,
                period_seconds: 15,
            },
        ]),
        select_policy: Some("Max".into()),
        stabilization_window_seconds: Some(0),
        tolerance: None,
    }
}

/// The scale-down rules upstream's defaulting gives a behavior without them.
pub fn default_scale_down() -> HPAScalingRules {
    use k8s_openapi::api::autoscaling::v2::HPAScalingPolicy;
    HPAScalingRules {
        policies: Some(vec![HPAScalingPolicy {
            type_: "Percent".into(),
            value: 100,
            period_seconds: 15,
        }]),
        select_policy: Some("Max".into()),
        stabilization_window_seconds: None,
        tolerance: None,
    }
}

/// `setStatus`: the replica counts and metrics of this sync.
fn set_status(
    st: &mut HorizontalPodAutoscalerStatus,
    current: i32,
    desired: i32,
    statuses: Vec<MetricStatus>,
    rescaled_at: Option<Time>,
) {
    st.current_replicas = Some(current);
    st.desired_replicas = desired;
    st.current_metrics = if statuses.is_empty() {
        None
    } else {
        Some(statuses)
    };
    if let Some(t) = rescaled_at {
        st.last_scale_time = Some(k8s_time(t));
    }
}

impl HorizontalController {
    fn update_status(
        &mut self,
        hpa: &HorizontalPodAutoscaler,
        st: HorizontalPodAutoscalerStatus,
        env: &mut Env,
    ) {
        if hpa.status.as_ref() == Some(&st) {
            return;
        }
        let mut updated = hpa.clone();
        updated.status = Some(st);
        let ns = hpa.metadata.namespace.as_deref().unwrap_or("");
        let name = hpa.metadata.name.as_deref().unwrap_or("");
        let req = ApiRequest::new(Verb::Update, Kind::HorizontalPodAutoscaler, ns, name)
            .with_subresource(Subresource::Status)
            .with_body(Body::Object(updated.into()));
        let id = env.send(req);
        self.sent.insert(id, Sent::Status);
    }

    fn forget(&mut self, key: &str) {
        self.next_sync.remove(key);
        self.recommendations.remove(key);
        self.up_events.remove(key);
        self.down_events.remove(key);
    }

    /// `reconcileAutoscaler`.
    fn reconcile(
        &mut self,
        key: &str,
        hpa: &HorizontalPodAutoscaler,
        obj: &Object,
        env: &mut Env,
        inf: &Informers,
    ) {
        let now = env.now();
        let mut st = hpa.status.clone().unwrap_or_default();
        let scale = match get_scale(hpa, inf) {
            Ok(s) => s,
            Err(e) => {
                env.event(obj, WARNING, "FailedGetScale", &e);
                let msg =
                    format!("the HPA controller was unable to get the target's current scale: {e}");
                set_condition(&mut st, "AbleToScale", "False", "FailedGetScale", &msg, now);
                self.update_status(hpa, st, env);
                return;
            }
        };
        set_condition(
            &mut st,
            "AbleToScale",
            "True",
            "SucceededGetScale",
            "the HPA controller was able to get the target's current scale",
            now,
        );
        let current = scale.spec_replicas;
        self.recommendations
            .entry(key.to_string())
            .or_insert_with(|| {
                vec![Stamped {
                    value: current,
                    at: now,
                }]
            });
        let spec = hpa.spec.clone().unwrap_or_default();
        let min = spec.min_replicas.unwrap_or(1);
        let (mut desired, mut reason, mut rescale) = (0, String::new(), true);
        let mut statuses = Vec::new();
        if current == 0 && min != 0 {
            rescale = false;
            set_condition(
                &mut st,
                "ScalingActive",
                "False",
                "ScalingDisabled",
                "scaling is disabled since the replica count of the target is zero",
                now,
            );
        } else if current > spec.max_replicas {
            reason = "Current number of replicas above Spec.MaxReplicas".into();
            desired = spec.max_replicas;
        } else if current < min {
            reason = "Current number of replicas below Spec.MinReplicas".into();
            desired = min;
        } else {
            let pods = target_pods(&scale, inf);
            let m = match self.compute_metrics(hpa, &mut st, &scale, &pods, env, obj) {
                Ok(m) => m,
                Err(e) => {
                    st.current_replicas = Some(current);
                    self.update_status(hpa, st, env);
                    env.event(obj, WARNING, "FailedComputeMetricsReplicas", &e);
                    return;
                }
            };
            statuses = m.statuses;
            desired = m.replicas.max(0);
            if desired > current {
                reason = format!("{} above target", m.metric);
            }
            if desired < current {
                reason = "All metrics below target".into();
            }
            desired = self.normalize(key, hpa, &mut st, current, desired, min, now);
            rescale = desired != current;
        }
        if !rescale {
            set_status(&mut st, current, current, statuses, None);
            self.update_status(hpa, st, env);
            return;
        }
        set_status(&mut st, current, desired, statuses, None);
        let t = &spec.scale_target_ref;
        let kind = scale.obj.kind();
        // The scale subresource's write (kubectl scale's request: a patch carrying the count).
        let req = ApiRequest::new(Verb::Patch, kind, scale.obj.namespace(), &t.name)
            .with_subresource(Subresource::Scale)
            .with_body(Body::Scale(desired));
        let id = env.send(req);
        let mut pending = hpa.clone();
        pending.status = Some(st);
        self.sent.insert(
            id,
            Sent::Scale {
                key: key.to_string(),
                hpa: Box::new(pending),
                current,
                desired,
                reason,
            },
        );
    }

    /// The rescale's answer: `SuccessfulRescale` or `FailedRescale`, then the status.
    #[allow(clippy::too_many_arguments)]
    fn rescaled(
        &mut self,
        key: &str,
        mut hpa: HorizontalPodAutoscaler,
        current: i32,
        desired: i32,
        reason: &str,
        resp: &ApiResponse,
        env: &mut Env,
    ) {
        let now = env.now();
        let obj: Object = hpa.clone().into();
        let mut st = hpa.status.take().unwrap_or_default();
        let original = hpa.clone();
        match &resp.result {
            Ok(_) => {
                let msg =
                    format!("the HPA controller was able to update the target scale to {desired}");
                set_condition(
                    &mut st,
                    "AbleToScale",
                    "True",
                    "SucceededRescale",
                    &msg,
                    now,
                );
                env.event(
                    &obj,
                    NORMAL,
                    "SuccessfulRescale",
                    &format!("New size: {desired}; reason: {reason}"),
                );
                if hpa.spec.as_ref().is_some_and(|s| s.behavior.is_some()) {
                    let (map, change) = if desired > current {
                        (&mut self.up_events, desired - current)
                    } else {
                        (&mut self.down_events, desired - current)
                    };
                    let events = map.entry(key.to_string()).or_default();
                    events.retain(|e| e.at + 30 * crate::time::MINUTE > now);
                    events.push(Stamped {
                        value: change,
                        at: now,
                    });
                }
                st.last_scale_time = Some(k8s_time(now));
            }
            Err(s) => {
                env.event(
                    &obj,
                    WARNING,
                    "FailedRescale",
                    &format!(
                        "New size: {desired}; reason: {reason}; error: {}",
                        s.message
                    ),
                );
                let msg = format!(
                    "the HPA controller was unable to update the target scale: {}",
                    s.message
                );
                set_condition(
                    &mut st,
                    "AbleToScale",
                    "False",
                    "FailedUpdateScale",
                    &msg,
                    now,
                );
                st.desired_replicas = current;
            }
        }
        let mut base = original;
        base.status = None;
        self.update_status(&base, st, env);
    }
}

impl Controller for HorizontalController {
    fn name(&self) -> &'static str {
        "horizontal-pod-autoscaler"
    }

    fn watches(&self) -> &'static [Kind] {
        &[
            Kind::HorizontalPodAutoscaler,
            Kind::Pod,
            Kind::Deployment,
            Kind::ReplicaSet,
            Kind::StatefulSet,
            Kind::Node,
        ]
    }

    fn on_change(
        &mut self,
        kind: Kind,
        change: &Change,
        queue: &mut WorkQueue<String>,
        _inf: &Informers,
        now: Time,
    ) {
        if kind != Kind::HorizontalPodAutoscaler {
            return;
        }
        let key = key_of(change.object());
        match change {
            Change::Deleted(_) => self.forget(&key),
            _ if !self.next_sync.contains_key(&key) => {
                // Upstream's queue adds every HPA with the resync period's delay.
                let at = queue.add_after(key.clone(), now + SYNC_PERIOD);
                self.next_sync.insert(key, at);
            }
            _ => {}
        }
    }

    fn sync(&mut self, key: &str, env: &mut Env, inf: &Informers) -> SyncResult {
        let now = env.now();
        let (ns, name) = split_key(key);
        let Some(obj) = inf.of(Kind::HorizontalPodAutoscaler).get(ns, name).cloned() else {
            self.forget(key);
            return Ok(Action::await_change());
        };
        if self.next_sync.get(key).is_some_and(|&t| t > now) {
            // A second chain of periodic syncs (the HPA was deleted and re-created).
            return Ok(Action::await_change());
        }
        self.next_sync.insert(key.to_string(), now + SYNC_PERIOD);
        if let Object::HorizontalPodAutoscaler(hpa) = &*obj {
            self.reconcile(key, hpa, &obj, env, inf);
        }
        Ok(Action::requeue(SYNC_PERIOD))
    }

    fn on_response(&mut self, id: ReqId, resp: &ApiResponse, env: &mut Env, _inf: &Informers) {
        if let Some(Sent::Scale {
            key,
            hpa,
            current,
            desired,
            reason,
        }) = self.sent.take(id)
        {
            self.rescaled(&key, *hpa, current, desired, &reason, resp, env);
        }
    }

    fn on_kubelet(&mut self, resp: &KubeletResponse, _env: &mut Env, _inf: &Informers) {
        let Some(node) = self.scrapes.remove(&resp.id) else {
            return;
        };
        for k in self.node_pods.remove(&node).unwrap_or_default() {
            self.metrics.remove(&k);
        }
        let Ok(KubeletReply::Stats(s)) = &resp.result else {
            return;
        };
        let mut held = Vec::new();
        for p in &s.pods {
            let cpu: u64 = p.containers.iter().map(|c| c.cpu_m).sum();
            let k = (p.namespace.clone(), p.name.clone());
            self.metrics.insert(
                k.clone(),
                PodMetric {
                    value: cpu as i64,
                    timestamp: s.at,
                    window: SCRAPE,
                },
            );
            held.push(k);
        }
        self.node_pods.insert(node, held);
    }

    /// metrics-server's scrape: every 15 s while HPAs exist, each node's summary.
    fn tick(&mut self, env: &mut Env, inf: &Informers) {
        let now = env.now();
        if inf.of(Kind::HorizontalPodAutoscaler).is_empty() {
            return;
        }
        if self.last_scrape.is_some_and(|t| now < t + SCRAPE) {
            return;
        }
        self.last_scrape = Some(now);
        for node in inf.of(Kind::Node).iter() {
            let id = SCRAPE_ID_BASE + self.next_scrape_id;
            self.next_scrape_id += 1;
            self.scrapes.insert(id, node.name().to_string());
            let req = KubeletRequest {
                id,
                node: node.name().to_string(),
                client: None,
                user: "system:serviceaccount:kube-system:metrics-server".into(),
                call: KubeletCall::Stats,
            };
            env.ctx.send(Actor::ApiServer, Payload::KubeletApi(req));
        }
    }
}
