//! Which fields of a request body are `resource.Quantity`, checked while decoding.
//!
//! Upstream decodes a quantity with `Quantity.UnmarshalJSON`, so a malformed one
//! (`cpu: 1KiB`, `memory: 1.5.5`) fails the request body's decoding with 400
//! `Pod in version "v1" cannot be handled as a Pod: quantities must match the regular
//! expression '…'`. k8s-openapi keeps a quantity as its string, so [`first_malformed`]
//! walks the body along the quantity fields of its kind and parses each one.

use serde_json::Value;

use crate::apiserver::quantity::parse_quantity;
use crate::object::Kind;

/// The quantity fields of a pod spec, relative to it. `[]` is every element of a list,
/// `{}` every value of a map.
const POD_SPEC: &[&str] = &[
    "containers[].resources.limits{}",
    "containers[].resources.requests{}",
    "initContainers[].resources.limits{}",
    "initContainers[].resources.requests{}",
    "ephemeralContainers[].resources.limits{}",
    "ephemeralContainers[].resources.requests{}",
    "resources.limits{}",
    "resources.requests{}",
    "overhead{}",
    "volumes[].emptyDir.sizeLimit",
    "volumes[].ephemeral.volumeClaimTemplate.spec.resources.limits{}",
    "volumes[].ephemeral.volumeClaimTemplate.spec.resources.requests{}",
];

/// Where the pod spec is in an object of `kind`, and the kind's other quantity fields.
fn fields(kind: Kind) -> (Option<&'static str>, &'static [&'static str]) {
    match kind {
        Kind::Pod => (Some("spec"), &[]),
        Kind::Deployment | Kind::ReplicaSet | Kind::DaemonSet | Kind::Job => {
            (Some("spec.template.spec"), &[])
        }
        Kind::StatefulSet => (
            Some("spec.template.spec"),
            &[
                "spec.volumeClaimTemplates[].spec.resources.limits{}",
                "spec.volumeClaimTemplates[].spec.resources.requests{}",
            ],
        ),
        Kind::PersistentVolumeClaim => (
            None,
            &[
                "spec.resources.limits{}",
                "spec.resources.requests{}",
                "status.capacity{}",
                "status.allocatedResources{}",
            ],
        ),
        Kind::PersistentVolume => (None, &["spec.capacity{}"]),
        Kind::Node => (None, &["status.capacity{}", "status.allocatable{}"]),
        Kind::ResourceQuota => (None, &["spec.hard{}", "status.hard{}", "status.used{}"]),
        Kind::LimitRange => (
            None,
            &[
                "spec.limits[].max{}",
                "spec.limits[].min{}",
                "spec.limits[].default{}",
                "spec.limits[].defaultRequest{}",
                "spec.limits[].maxLimitRequestRatio{}",
            ],
        ),
        _ => (None, &[]),
    }
}

/// The parse error of the first malformed quantity in `body`, an object of `kind`
/// (upstream's `ErrFormatWrong`, `ErrNumeric` or `ErrSuffix` text).
pub fn first_malformed(kind: Kind, body: &Value) -> Option<String> {
    let (pod_spec, others) = fields(kind);
    let mut found = None;
    if let Some(at) = pod_spec {
        let base = walk_to(body, at);
        for path in POD_SPEC {
            if let Some(spec) = base {
                check(spec, path, &mut found);
            }
        }
    }
    for path in others {
        check(body, path, &mut found);
    }
    found
}

fn walk_to<'v>(v: &'v Value, path: &str) -> Option<&'v Value> {
    path.split('.').try_fold(v, |v, k| v.get(k))
}

fn check(v: &Value, path: &str, found: &mut Option<String>) {
    if found.is_some() {
        return;
    }
    let (step, rest) = match path.split_once('.') {
        Some((s, r)) => (s, Some(r)),
        None => (path, None),
    };
    let next = |child: &Value, found: &mut Option<String>| match rest {
        Some(r) => check(child, r, found),
        None => quantity(child, found),
    };
    if let Some(key) = step.strip_suffix("[]") {
        if let Some(Value::Array(items)) = v.get(key) {
            for item in items {
                next(item, found);
            }
        }
    } else if let Some(key) = step.strip_suffix("{}") {
        if let Some(Value::Object(m)) = v.get(key) {
            for q in m.values() {
                next(q, found);
            }
        }
    } else if let Some(child) = v.get(step) {
        next(child, found);
    }
}

fn quantity(v: &Value, found: &mut Option<String>) {
    let text = match v {
        Value::String(s) => s.clone(),
        Value::Number(n) => n.to_string(),
        _ => return, // a wrong type is the typed decoder's error
    };
    if let Err(e) = parse_quantity(text.trim()) {
        *found = Some(e);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apiserver::quantity::ERR_FORMAT_WRONG;

    #[test]
    fn malformed_quantities_are_found_along_the_kinds_fields() {
        let pod = serde_json::json!({"spec": {"containers": [
            {"name": "a", "resources": {"requests": {"cpu": "100m"}}},
            {"name": "b", "resources": {"limits": {"memory": "1.5.5"}}},
        ]}});
        assert_eq!(
            first_malformed(Kind::Pod, &pod).as_deref(),
            Some(ERR_FORMAT_WRONG)
        );
        let deploy = serde_json::json!({"spec": {"template": {"spec": {"containers": [
            {"name": "a", "resources": {"requests": {"cpu": "1KiB"}}},
        ]}}}});
        assert_eq!(
            first_malformed(Kind::Deployment, &deploy).as_deref(),
            Some(ERR_FORMAT_WRONG)
        );
        let quota = serde_json::json!({"spec": {"hard": {"pods": "10x"}}});
        assert_eq!(
            first_malformed(Kind::ResourceQuota, &quota).as_deref(),
            Some(ERR_FORMAT_WRONG)
        );
        let fine = serde_json::json!({"spec": {"containers": [
            {"name": "a", "resources": {"requests": {"cpu": 1, "memory": "1e19"}}},
        ]}});
        assert_eq!(first_malformed(Kind::Pod, &fine), None);
        // Other kinds have no quantity fields to check.
        let cm = serde_json::json!({"data": {"requests": "1.5.5"}});
        assert_eq!(first_malformed(Kind::ConfigMap, &cm), None);
    }
}
