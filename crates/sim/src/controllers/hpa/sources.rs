//! The HPA's metric sources besides `Resource`: `Pods` and `Object` (the custom metrics
//! API), `External` (the external metrics API) — neither is served on a kind cluster,
//! so they fail with the errors upstream's metrics clients give there — and
//! `ContainerResource`, which metrics-server answers per container.

use std::collections::BTreeMap;

use k8s_openapi::api::autoscaling::v2::MetricSpec;
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;

use crate::controllers::hpa_calc::PodMetric;

/// The custom metrics client's discovery error when no adapter registers the API.
const NO_CUSTOM_METRICS_API: &str = "no custom metrics API (custom.metrics.k8s.io) registered";

/// A failed metric: the condition's and event's error, its reason, and the error
/// `computeReplicasForMetric` wraps it in.
pub(super) struct Failure {
    pub(super) msg: String,
    pub(super) reason: &'static str,
    pub(super) full: String,
}

/// A `*metav1.LabelSelector` as `%+v` prints it (the generated `String()`), `nil` when
/// unset.
pub fn go_selector(s: Option<&LabelSelector>) -> String {
    let Some(s) = s else {
        return "nil".into();
    };
    let labels: String = s
        .match_labels
        .iter()
        .flatten()
        .map(|(k, v)| format!("{k}: {v},"))
        .collect();
    let exprs: String = s
        .match_expressions
        .iter()
        .flatten()
        .map(|e| {
            format!(
                "LabelSelectorRequirement{{Key:{},Operator:{},Values:[{}],}},",
                e.key,
                e.operator,
                e.values.clone().unwrap_or_default().join(" ")
            )
        })
        .collect();
    format!("&LabelSelector{{MatchLabels:map[string]string{{{labels}}},MatchExpressions:[]LabelSelectorRequirement{{{exprs}}},}}")
}

/// `Pods`, `Object` and `External` metrics: what upstream's HPA controller reports when
/// their APIs are not served. `None` for other source types.
pub(super) fn unserved(spec: &MetricSpec, ns: &str) -> Option<Failure> {
    match spec.type_.as_str() {
        "Pods" => {
            let name = &spec.pods.as_ref()?.metric.name;
            let msg = format!("unable to get metric {name}: unable to fetch metrics from custom metrics API: {NO_CUSTOM_METRICS_API}");
            Some(Failure {
                full: format!("failed to get pods metric value: {msg}"),
                msg,
                reason: "FailedGetPodsMetric",
            })
        }
        "Object" => {
            let o = spec.object.as_ref()?;
            let name = &o.metric.name;
            let (kind, obj) = (&o.described_object.kind, &o.described_object.name);
            let (msg, inner) = if o.target.value.is_none() && o.target.average_value.is_none() {
                let m = "invalid object metric source: neither a value target nor an average value target was set".to_string();
                (m.clone(), m)
            } else {
                // Upstream's format string takes its arguments in this order.
                let m = format!("unable to get metric {name}: {kind} on {ns} {obj}/unable to fetch metrics from custom metrics API: {NO_CUSTOM_METRICS_API}");
                let inner = if o.target.value.is_some() {
                    m.clone()
                } else {
                    format!("failed to get {name} object metric: {m}")
                };
                (m, inner)
            };
            Some(Failure {
                full: format!("failed to get object metric value: {inner}"),
                msg,
                reason: "FailedGetObjectMetric",
            })
        }
        "External" => {
            let e = spec.external.as_ref()?;
            let name = &e.metric.name;
            let msg = format!(
                "unable to get external metric {ns}/{name}/{}: unable to fetch metrics from external metrics API: the server could not find the requested resource (get {name}.external.metrics.k8s.io)",
                go_selector(e.metric.selector.as_ref())
            );
            let inner = match (&e.target.average_value, &e.target.value) {
                (Some(_), _) => format!("failed to get {name} external metric: {msg}"),
                (None, Some(_)) => format!("failed to get external metric {name}: {msg}"),
                (None, None) => {
                    let m = "invalid external metric source: neither a value target nor an average value target was set".to_string();
                    return Some(Failure {
                        full: format!("failed to get {name} external metric value: {m}"),
                        msg: m,
                        reason: "FailedGetExternalMetric",
                    });
                }
            };
            Some(Failure {
                full: format!("failed to get {name} external metric value: {inner}"),
                msg,
                reason: "FailedGetExternalMetric",
            })
        }
        _ => None,
    }
}

/// The pods and metrics as one container sees them, for `ContainerResource`: each pod
/// keeps only `container` (its requests are that container's), each metric is that
/// container's usage. A pod whose metrics lack the container is an error, as upstream's
/// `container %s not present in metrics for pod %s/%s`.
pub(super) fn container_view(
    container: &str,
    pods: &[&Pod],
    usage: &BTreeMap<(String, String, String), PodMetric>,
) -> Result<(Vec<Pod>, BTreeMap<String, PodMetric>), String> {
    let mut view = Vec::new();
    let mut metrics = BTreeMap::new();
    for p in pods {
        let ns = p.metadata.namespace.clone().unwrap_or_default();
        let name = p.metadata.name.clone().unwrap_or_default();
        let mut q = (*p).clone();
        if let Some(s) = q.spec.as_mut() {
            s.containers.retain(|c| c.name == container);
            if s.containers.is_empty() {
                return Err(format!(
                    "container {container} not present in pod {ns}/{name}"
                ));
            }
        }
        if let Some(m) = usage.get(&(ns.clone(), name.clone(), container.to_string())) {
            metrics.insert(name.clone(), *m);
        } else if usage.keys().any(|(n, p, _)| *n == ns && *p == name) {
            return Err(format!(
                "container {container} not present in metrics for pod {ns}/{name}"
            ));
        }
        view.push(q);
    }
    Ok((view, metrics))
}
