//! The horizontal-pod-autoscaler controller: every 15 s it reads each HPA's target scale,
//! the CPU use of the target's pods from the resource metrics (metrics-server's kubelet
//! summaries) and sets the target's replicas through its `scale` subresource, with
//! upstream's conditions, events and status.

use std::collections::BTreeMap;

use k8s_openapi::api::autoscaling::v2::{
    HorizontalPodAutoscaler, HorizontalPodAutoscalerStatus, MetricStatus,
};

use crate::api::{ApiRequest, ApiResponse, Body, ReqId, Subresource, Verb};
use crate::client::recorder::{NORMAL, WARNING};
use crate::client::{Change, Pending, WorkQueue};
use crate::controllers::hpa_calc::{PodMetric, Stamped};
mod metrics;
pub mod sources;

pub use crate::controllers::hpa_scale::{
    default_scale_down, default_scale_up, get_scale, set_condition, target_pods, Scale,
};
use crate::controllers::util::{key_of, split_key};
use crate::controllers::{Action, Controller, Env, Informers, SyncResult};
use crate::message::{Actor, Payload};
use crate::node::kubelet_api::{
    KubeletCall, KubeletReply, KubeletRequest, KubeletResponse, SCRAPE,
};
use crate::object::{Kind, Object};
use crate::time::{k8s_time, Time, SECOND};

/// `--horizontal-pod-autoscaler-sync-period`.
pub const SYNC_PERIOD: Time = 15 * SECOND;
/// Kubelet API request ids of the metrics scrapes (apart from terminals' ids).
const SCRAPE_ID_BASE: u64 = 1 << 40;

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
    /// CPU millicores per container (`namespace`, pod, container), for ContainerResource.
    container_metrics: BTreeMap<(String, String, String), PodMetric>,
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
        let mut pending = hpa.clone();
        pending.status = Some(st);
        self.send_rescale(key, &scale, pending, current, desired, reason, env);
    }

    /// Writes the target's `scale` (the request kubectl scale sends: a patch carrying the
    /// count); the status follows its answer.
    #[allow(clippy::too_many_arguments)]
    fn send_rescale(
        &mut self,
        key: &str,
        scale: &Scale,
        pending: HorizontalPodAutoscaler,
        current: i32,
        desired: i32,
        reason: String,
        env: &mut Env,
    ) {
        let req = ApiRequest::new(
            Verb::Patch,
            scale.obj.kind(),
            scale.obj.namespace(),
            scale.obj.name(),
        )
        .with_subresource(Subresource::Scale)
        .with_body(Body::Scale(desired));
        let id = env.send(req);
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
        // `hpa` carries no status now, so the write always goes out.
        self.update_status(&hpa, st, env);
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
            self.container_metrics
                .retain(|(ns, pod, _), _| (ns, pod) != (&k.0, &k.1));
        }
        let Ok(KubeletReply::Stats(s)) = &resp.result else {
            return;
        };
        let mut held = Vec::new();
        for p in &s.pods {
            let cpu: u64 = p.containers.iter().map(|c| c.cpu_m).sum();
            let k = (p.namespace.clone(), p.name.clone());
            for c in &p.containers {
                self.container_metrics.insert(
                    (p.namespace.clone(), p.name.clone(), c.name.clone()),
                    PodMetric {
                        value: c.cpu_m as i64,
                        timestamp: s.at,
                        window: SCRAPE,
                    },
                );
            }
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
