//! `LimitRanger`: fills in default requests and limits from the namespace's LimitRanges
//! (mutating) and enforces their min, max and ratio constraints (validating).

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{Container, LimitRange, PersistentVolumeClaim, Pod, PodSpec};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity as ApiQuantity;

use super::resourcequota::{pod_limits, pod_requests};
use super::{forbidden, AdmissionError};
use crate::apiserver::field_error::aggregate;
use crate::apiserver::quantity::{parse_api_quantity, Quantity};
use crate::object::Object;

/// The annotation recording what LimitRanger set.
pub const LIMIT_RANGER_ANNOTATION: &str = "kubernetes.io/limit-ranger";

type Resources = BTreeMap<String, Quantity>;

fn parsed(list: Option<&BTreeMap<String, ApiQuantity>>) -> Resources {
    list.into_iter()
        .flatten()
        .filter_map(|(k, v)| parse_api_quantity(v).ok().map(|q| (k.clone(), q)))
        .collect()
}

fn merge_container(
    c: &mut Container,
    requests: &BTreeMap<String, ApiQuantity>,
    limits: &BTreeMap<String, ApiQuantity>,
    prefix: &str,
    notes: &mut Vec<String>,
) {
    let res = c.resources.get_or_insert_with(Default::default);
    let (mut set_req, mut set_lim) = (Vec::new(), Vec::new());
    let l = res.limits.get_or_insert_with(BTreeMap::new);
    for (k, v) in limits {
        if !l.contains_key(k) {
            l.insert(k.clone(), v.clone());
            set_lim.push(k.clone());
        }
    }
    let r = res.requests.get_or_insert_with(BTreeMap::new);
    for (k, v) in requests {
        if !r.contains_key(k) {
            r.insert(k.clone(), v.clone());
            set_req.push(k.clone());
        }
    }
    if res.limits.as_ref().is_some_and(|l| l.is_empty()) {
        res.limits = None;
    }
    if res.requests.as_ref().is_some_and(|r| r.is_empty()) {
        res.requests = None;
    }
    if !set_req.is_empty() {
        notes.push(format!(
            "{} request for {prefix} {}",
            set_req.join(", "),
            c.name
        ));
    }
    if !set_lim.is_empty() {
        notes.push(format!(
            "{} limit for {prefix} {}",
            set_lim.join(", "),
            c.name
        ));
    }
}

/// Mutating admission for a pod create: applies each LimitRange's Container defaults
/// (`defaultRequest` → requests, `default` → limits) where the container sets none, and
/// records them in the `kubernetes.io/limit-ranger` annotation.
pub fn mutate_pod(pod: &mut Pod, ranges: &[LimitRange]) {
    for lr in sorted(ranges) {
        let (mut requests, mut limits) = (BTreeMap::new(), BTreeMap::new());
        for item in lr
            .spec
            .iter()
            .flat_map(|s| s.limits.iter())
            .filter(|i| i.type_ == "Container")
        {
            requests.extend(item.default_request.clone().unwrap_or_default());
            limits.extend(item.default.clone().unwrap_or_default());
        }
        let mut notes = Vec::new();
        let spec = pod.spec.get_or_insert_with(Default::default);
        for c in spec.containers.iter_mut() {
            merge_container(c, &requests, &limits, "container", &mut notes);
        }
        for c in spec.init_containers.iter_mut().flatten() {
            merge_container(c, &requests, &limits, "init container", &mut notes);
        }
        if !notes.is_empty() {
            pod.metadata
                .annotations
                .get_or_insert_with(BTreeMap::new)
                .insert(
                    LIMIT_RANGER_ANNOTATION.into(),
                    format!("LimitRanger plugin set: {}", notes.join("; ")),
                );
        }
    }
}

fn sorted(ranges: &[LimitRange]) -> Vec<&LimitRange> {
    let mut v: Vec<&LimitRange> = ranges.iter().collect();
    v.sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
    v
}

fn min_constraint(
    limit_type: &str,
    name: &str,
    enforced: &Quantity,
    req: &Resources,
    lim: &Resources,
) -> Option<String> {
    let Some(r) = req.get(name) else {
        return Some(format!(
            "minimum {name} usage per {limit_type} is {enforced}.  No request is specified"
        ));
    };
    if r.milli_value() < enforced.milli_value() {
        return Some(format!(
            "minimum {name} usage per {limit_type} is {enforced}, but request is {r}"
        ));
    }
    match lim.get(name) {
        Some(l) if l.milli_value() < enforced.milli_value() => Some(format!(
            "minimum {name} usage per {limit_type} is {enforced}, but limit is {l}"
        )),
        _ => None,
    }
}

fn max_constraint(
    limit_type: &str,
    name: &str,
    enforced: &Quantity,
    req: &Resources,
    lim: &Resources,
) -> Option<String> {
    let Some(l) = lim.get(name) else {
        return Some(format!(
            "maximum {name} usage per {limit_type} is {enforced}.  No limit is specified"
        ));
    };
    if l.milli_value() > enforced.milli_value() {
        return Some(format!(
            "maximum {name} usage per {limit_type} is {enforced}, but limit is {l}"
        ));
    }
    match req.get(name) {
        Some(r) if r.milli_value() > enforced.milli_value() => Some(format!(
            "maximum {name} usage per {limit_type} is {enforced}, but request is {r}"
        )),
        _ => None,
    }
}

fn ratio_constraint(
    limit_type: &str,
    name: &str,
    enforced: &Quantity,
    req: &Resources,
    lim: &Resources,
) -> Option<String> {
    let r = req.get(name).map(|q| q.milli_value()).unwrap_or(0);
    if r == 0 {
        return Some(format!("{name} max limit to request ratio per {limit_type} is {enforced}, but no request is specified or request is 0"));
    }
    let l = lim.get(name).map(|q| q.milli_value()).unwrap_or(0);
    if l == 0 {
        return Some(format!("{name} max limit to request ratio per {limit_type} is {enforced}, but no limit is specified or limit is 0"));
    }
    let observed = l as f64 / r as f64;
    if observed * 1000.0 > enforced.milli_value() as f64 {
        return Some(format!("{name} max limit to request ratio per {limit_type} is {enforced}, but provided ratio is {observed:.6}"));
    }
    None
}

fn check(
    limit_type: &str,
    item: &k8s_openapi::api::core::v1::LimitRangeItem,
    req: &Resources,
    lim: &Resources,
    errs: &mut Vec<String>,
) {
    for (k, v) in parsed(item.min.as_ref()) {
        errs.extend(min_constraint(limit_type, &k, &v, req, lim));
    }
    for (k, v) in parsed(item.max.as_ref()) {
        errs.extend(max_constraint(limit_type, &k, &v, req, lim));
    }
    for (k, v) in parsed(item.max_limit_request_ratio.as_ref()) {
        errs.extend(ratio_constraint(limit_type, &k, &v, req, lim));
    }
}

/// Validating admission for a pod create: every LimitRange's Container and Pod
/// constraints. Errors name the pod (`pods "x" is forbidden: maximum cpu usage per
/// Container is 1, but limit is 2`), several as `[a, b]`.
pub fn validate_pod(pod: &Pod, ranges: &[LimitRange]) -> Result<(), AdmissionError> {
    if ranges.is_empty() {
        return Ok(());
    }
    let no_spec = PodSpec::default();
    let spec = pod.spec.as_ref().unwrap_or(&no_spec);
    for lr in sorted(ranges) {
        let mut errs = Vec::new();
        for item in lr.spec.iter().flat_map(|s| s.limits.iter()) {
            match item.type_.as_str() {
                "Container" => {
                    for c in spec
                        .containers
                        .iter()
                        .chain(spec.init_containers.iter().flatten())
                    {
                        let res = c.resources.as_ref();
                        check(
                            "Container",
                            item,
                            &parsed(res.and_then(|r| r.requests.as_ref())),
                            &parsed(res.and_then(|r| r.limits.as_ref())),
                            &mut errs,
                        );
                    }
                }
                "Pod" => check("Pod", item, &pod_requests(pod), &pod_limits(pod), &mut errs),
                _ => {}
            }
        }
        if !errs.is_empty() {
            return Err(forbidden(&Object::from(pod.clone()), &aggregate(&errs)));
        }
    }
    Ok(())
}

/// Validating admission for a PVC: storage requests within the PersistentVolumeClaim
/// limits (`maximum storage usage per PersistentVolumeClaim is 2Gi, but request is 5Gi`).
pub fn validate_pvc(
    pvc: &PersistentVolumeClaim,
    ranges: &[LimitRange],
) -> Result<(), AdmissionError> {
    let req = parsed(
        pvc.spec
            .as_ref()
            .and_then(|s| s.resources.as_ref())
            .and_then(|r| r.requests.as_ref()),
    );
    for lr in sorted(ranges) {
        let mut errs = Vec::new();
        for item in lr
            .spec
            .iter()
            .flat_map(|s| s.limits.iter())
            .filter(|i| i.type_ == "PersistentVolumeClaim")
        {
            for (k, v) in parsed(item.min.as_ref()) {
                errs.extend(min_constraint(
                    "PersistentVolumeClaim",
                    &k,
                    &v,
                    &req,
                    &Resources::new(),
                ));
            }
            for (k, v) in parsed(item.max.as_ref()) {
                match req.get(&k) {
                    None => errs.push(format!("maximum {k} usage per PersistentVolumeClaim is {v}.  No request is specified")),
                    Some(r) if r.milli_value() > v.milli_value() => {
                        errs.push(format!("maximum {k} usage per PersistentVolumeClaim is {v}, but request is {r}"))
                    }
                    Some(_) => {}
                }
            }
        }
        if !errs.is_empty() {
            return Err(forbidden(&Object::from(pvc.clone()), &aggregate(&errs)));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn lr(spec: serde_json::Value) -> LimitRange {
        serde_json::from_value(
            json!({"metadata": {"name": "limits", "namespace": "default"}, "spec": spec}),
        )
        .unwrap()
    }

    fn pod(resources: serde_json::Value) -> Pod {
        serde_json::from_value(json!({"metadata": {"name": "web", "namespace": "default"},
            "spec": {"containers": [{"name": "nginx", "image": "nginx", "resources": resources}]}}))
        .unwrap()
    }

    #[test]
    fn defaults_are_applied_and_annotated() {
        let ranges = [lr(
            json!({"limits": [{"type": "Container", "default": {"cpu": "500m", "memory": "256Mi"}, "defaultRequest": {"cpu": "100m", "memory": "128Mi"}}]}),
        )];
        let mut p = pod(json!({}));
        mutate_pod(&mut p, &ranges);
        let v = serde_json::to_value(&p).unwrap();
        assert_eq!(
            v["spec"]["containers"][0]["resources"],
            json!({"limits": {"cpu": "500m", "memory": "256Mi"}, "requests": {"cpu": "100m", "memory": "128Mi"}})
        );
        assert_eq!(
            v["metadata"]["annotations"][LIMIT_RANGER_ANNOTATION],
            "LimitRanger plugin set: cpu, memory request for container nginx; cpu, memory limit for container nginx"
        );
    }

    #[test]
    fn max_is_enforced() {
        let ranges = [lr(
            json!({"limits": [{"type": "Container", "max": {"cpu": "800m"}}]}),
        )];
        let err = validate_pod(
            &pod(json!({"limits": {"cpu": "1500m"}, "requests": {"cpu": "1500m"}})),
            &ranges,
        )
        .unwrap_err();
        assert_eq!(err.message(), "pods \"web\" is forbidden: maximum cpu usage per Container is 800m, but limit is 1500m");
        let err = validate_pod(&pod(json!({})), &ranges).unwrap_err();
        assert_eq!(err.message(), "pods \"web\" is forbidden: maximum cpu usage per Container is 800m.  No limit is specified");
    }

    #[test]
    fn min_is_enforced() {
        let ranges = [lr(
            json!({"limits": [{"type": "Container", "min": {"memory": "500Mi"}}]}),
        )];
        let err =
            validate_pod(&pod(json!({"requests": {"memory": "100Mi"}})), &ranges).unwrap_err();
        assert_eq!(err.message(), "pods \"web\" is forbidden: minimum memory usage per Container is 500Mi, but request is 100Mi");
    }

    #[test]
    fn ratio_is_enforced_and_errors_aggregate() {
        let ranges = [lr(
            json!({"limits": [{"type": "Container", "maxLimitRequestRatio": {"cpu": "2"}, "max": {"memory": "1Gi"}}]}),
        )];
        let err = validate_pod(&pod(json!({"limits": {"cpu": "1", "memory": "2Gi"}, "requests": {"cpu": "250m", "memory": "2Gi"}})), &ranges).unwrap_err();
        assert_eq!(err.message(), "pods \"web\" is forbidden: [maximum memory usage per Container is 1Gi, but limit is 2Gi, cpu max limit to request ratio per Container is 2, but provided ratio is 4.000000]");
    }

    #[test]
    fn pvc_storage_is_bounded() {
        let ranges = [lr(
            json!({"limits": [{"type": "PersistentVolumeClaim", "max": {"storage": "2Gi"}}]}),
        )];
        let pvc: PersistentVolumeClaim = serde_json::from_value(json!({"metadata": {"name": "data"},
            "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "5Gi"}}}})).unwrap();
        assert_eq!(validate_pvc(&pvc, &ranges).unwrap_err().message(), "persistentvolumeclaims \"data\" is forbidden: maximum storage usage per PersistentVolumeClaim is 2Gi, but request is 5Gi");
    }
}
