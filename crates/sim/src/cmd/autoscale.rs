//! `kubectl autoscale`: an autoscaling/v2 HorizontalPodAutoscaler for a Deployment,
//! ReplicaSet or StatefulSet (`kubectl/pkg/cmd/autoscale`).

use k8s_openapi::api::autoscaling::v2::{
    CrossVersionObjectReference, HorizontalPodAutoscaler, HorizontalPodAutoscalerSpec, MetricSpec,
    MetricTarget, ResourceMetricSource,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use crate::api::{ApiRequest, Body, Verb};
use crate::cmd::kubectl::{resolve_kind, Kubectl};
use crate::object::Kind;

fn int_flag(k: &Kubectl, name: &str, default: i32) -> Result<i32, String> {
    match k.flags.get(name) {
        None => Ok(default),
        Some(v) => v.parse().map_err(|_| {
            format!("invalid argument \"{v}\" for \"--{name}\" flag: strconv.ParseInt: parsing \"{v}\": invalid syntax")
        }),
    }
}

fn target(k: &Kubectl) -> Result<(Kind, String), String> {
    let args = &k.flags.args;
    let (t, n) = match args.first().and_then(|a| a.split_once('/')) {
        Some((t, n)) => (t.to_string(), n.to_string()),
        None => match (args.first(), args.get(1)) {
            (Some(t), Some(n)) => (t.clone(), n.clone()),
            _ => {
                return Err(
                    "You must provide one or more resources by argument or filename.".into(),
                )
            }
        },
    };
    Ok((resolve_kind(&t, &k.custom)?, n))
}

/// `--cpu=70%` (Utilization) or `--cpu=500m` (AverageValue).
fn cpu_target(v: &str) -> Result<MetricTarget, String> {
    if let Some(p) = v.strip_suffix('%') {
        return match p.parse::<i32>() {
            Ok(n) => Ok(MetricTarget {
                type_: "Utilization".into(),
                average_utilization: Some(n),
                ..Default::default()
            }),
            Err(_) => Err(format!("invalid CPU utilization value: {v}")),
        };
    }
    match crate::quantity::parse(v) {
        Ok(_) => Ok(MetricTarget {
            type_: "AverageValue".into(),
            average_value: Some(k8s_openapi::apimachinery::pkg::api::resource::Quantity(
                v.to_string(),
            )),
            ..Default::default()
        }),
        Err(_) => Err(format!("invalid CPU value: {v}")),
    }
}

/// `kubectl autoscale TYPE NAME --max=N [--min=N] [--cpu=N%|Q] [--cpu-percent=N] [--name=NAME]`.
pub async fn autoscale(k: Kubectl) -> i32 {
    let (max, min, cpu) = match (
        int_flag(&k, "max", -1),
        int_flag(&k, "min", -1),
        int_flag(&k, "cpu-percent", -1),
    ) {
        (Ok(a), Ok(b), Ok(c)) => (a, b, c),
        (Err(e), _, _) | (_, Err(e), _) | (_, _, Err(e)) => return k.error(&e),
    };
    if k.flags.get("cpu-percent").is_some() {
        k.sys.err("Flag --cpu-percent has been deprecated, Use --cpu with percentage or resource quantity format (e.g., '70%' for utilization or '500m' for milliCPU).\n");
    }
    if max < 1 {
        return k.error(&format!(
            "--max=MAXPODS is required and must be at least 1, max: {max}"
        ));
    }
    if max < min {
        return k.error(&format!(
            "--max=MAXPODS must be larger or equal to --min=MINPODS, max: {max}, min: {min}"
        ));
    }
    let (kind, name) = match target(&k) {
        Ok(t) => t,
        Err(e) => return k.error(&e),
    };
    if !matches!(
        kind,
        Kind::Deployment | Kind::ReplicaSet | Kind::StatefulSet
    ) {
        return k.error(&format!(
            "cannot autoscale a {}: not scalable",
            kind.info().kind
        ));
    }
    let ns = k.namespace();
    if let Err(s) = k
        .sys
        .api(ApiRequest::new(Verb::Get, kind, &ns, &name))
        .await
    {
        return k.status_error(&s);
    }
    let hpa_name = k.flags.get("name").unwrap_or(&name).to_string();
    let target = match (k.flags.get("cpu"), cpu) {
        (Some(c), _) => match cpu_target(c) {
            Ok(t) => Some(t),
            Err(e) => return k.error(&e),
        },
        (None, c) if c >= 0 => Some(MetricTarget {
            type_: "Utilization".into(),
            average_utilization: Some(c),
            ..Default::default()
        }),
        _ => None,
    };
    let metrics = target.map(|target| {
        vec![MetricSpec {
            type_: "Resource".into(),
            resource: Some(ResourceMetricSource {
                name: "cpu".into(),
                target,
            }),
            ..Default::default()
        }]
    });
    let hpa = HorizontalPodAutoscaler {
        metadata: ObjectMeta {
            name: Some(hpa_name.clone()),
            namespace: Some(ns.clone()),
            ..Default::default()
        },
        spec: Some(HorizontalPodAutoscalerSpec {
            scale_target_ref: CrossVersionObjectReference {
                api_version: Some(kind.info().api_version()),
                kind: kind.info().kind.into(),
                name,
            },
            min_replicas: (min >= 0).then_some(min),
            max_replicas: max,
            metrics,
            behavior: None,
        }),
        status: None,
    };
    let req = ApiRequest::new(Verb::Create, Kind::HorizontalPodAutoscaler, &ns, "")
        .with_body(Body::Object(hpa.into()));
    match k.sys.api(req).await {
        Ok(_) => {
            k.sys.out(&format!(
                "horizontalpodautoscaler.autoscaling/{hpa_name} autoscaled\n"
            ));
            0
        }
        Err(s) => k.status_error(&s),
    }
}
