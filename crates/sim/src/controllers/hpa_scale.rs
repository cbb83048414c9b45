//! What the HPA controller reads and writes besides its arithmetic: the target's scale
//! and pods, the conditions, and the default behavior rules.

use std::sync::Arc;

use k8s_openapi::api::autoscaling::v2::{
    HPAScalingRules, HorizontalPodAutoscaler, HorizontalPodAutoscalerCondition,
    HorizontalPodAutoscalerStatus,
};
use k8s_openapi::api::core::v1::Pod;

use crate::controllers::Informers;
use crate::object::{Kind, Object};
use crate::selector::LabelSelector;
use crate::time::{k8s_time, Time};

/// A scale target as its `scale` subresource shows it.
pub struct Scale {
    /// The target object.
    pub obj: Arc<Object>,
    /// spec.replicas.
    pub spec_replicas: i32,
    /// The pod selector.
    pub selector: Option<LabelSelector>,
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
            Object::Pod(p) => Some(&**p),
            _ => None,
        })
        .collect();
    pods.sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
    pods
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
