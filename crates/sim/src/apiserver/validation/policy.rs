//! policy/v1 validation: PodDisruptionBudget (`pkg/apis/policy/validation`).

use k8s_openapi::api::policy::v1::{PodDisruptionBudget, PodDisruptionBudgetSpec};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::apps::{
    int_or_string_json, not_more_than_100_percent, validate_positive_int_or_percent,
};
use super::meta::*;
use super::names::*;
use crate::apiserver::field_error::{BadValue, FieldError, GoJson, Path};

/// The values `spec.unhealthyPodEvictionPolicy` accepts, sorted as upstream lists them.
const EVICTION_POLICIES: &[&str] = &["AlwaysAllow", "IfHealthyBudget"];

/// The internal `policy.PodDisruptionBudgetSpec` as `json.Marshal` prints it in a field
/// error: the internal type has no JSON tags, so the keys are the Go field names.
fn spec_json(spec: &PodDisruptionBudgetSpec) -> GoJson {
    let int_or = |v: Option<&IntOrString>| v.map_or(GoJson::Null, int_or_string_json);
    GoJson::obj(vec![
        ("MinAvailable", int_or(spec.min_available.as_ref())),
        (
            "Selector",
            spec.selector.as_ref().map_or(GoJson::Null, selector_json),
        ),
        ("MaxUnavailable", int_or(spec.max_unavailable.as_ref())),
        (
            "UnhealthyPodEvictionPolicy",
            GoJson::opt_str(spec.unhealthy_pod_eviction_policy.as_deref()),
        ),
    ])
}

/// `ValidatePodDisruptionBudget` plus the object metadata the strategy validates.
pub fn validate_pod_disruption_budget(pdb: &PodDisruptionBudget) -> Vec<FieldError> {
    let mut errs = validate_object_meta(
        &pdb.metadata,
        true,
        name_is_dns_subdomain,
        &Path::new("metadata"),
    );
    let spec = pdb.spec.clone().unwrap_or_default();
    let path = Path::new("spec");
    if spec.min_available.is_some() && spec.max_unavailable.is_some() {
        errs.push(FieldError::invalid(
            &path,
            spec_json(&spec),
            "minAvailable and maxUnavailable cannot be both set",
        ));
    }
    for (name, v) in [
        ("minAvailable", &spec.min_available),
        ("maxUnavailable", &spec.max_unavailable),
    ] {
        if let Some(v) = v {
            let p = path.child(name);
            errs.extend(validate_positive_int_or_percent(v, &p));
            errs.extend(not_more_than_100_percent(v, &p));
        }
    }
    errs.extend(validate_label_selector(
        spec.selector.as_ref(),
        &path.child("selector"),
    ));
    if let Some(policy) = spec.unhealthy_pod_eviction_policy.as_deref() {
        if !EVICTION_POLICIES.contains(&policy) {
            errs.push(FieldError::not_supported(
                &path.child("unhealthyPodEvictionPolicy"),
                BadValue::typed_str(policy),
                EVICTION_POLICIES,
            ));
        }
    }
    errs
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apiserver::field_error::invalid_message;

    fn pdb(spec: serde_json::Value) -> PodDisruptionBudget {
        serde_json::from_value(serde_json::json!({
            "metadata": {"name": "web", "namespace": "default"},
            "spec": spec,
        }))
        .unwrap()
    }

    fn message(p: &PodDisruptionBudget) -> String {
        let errs = validate_pod_disruption_budget(p);
        invalid_message("PodDisruptionBudget", "policy", "web", &errs)
    }

    #[test]
    fn both_min_available_and_max_unavailable_is_invalid() {
        let p = pdb(serde_json::json!({
            "minAvailable": 2, "maxUnavailable": "50%",
            "selector": {"matchLabels": {"app": "web"}}
        }));
        assert_eq!(
            message(&p),
            "PodDisruptionBudget.policy \"web\" is invalid: spec: Invalid value: {\"MinAvailable\":2,\"Selector\":{\"matchLabels\":{\"app\":\"web\"}},\"MaxUnavailable\":\"50%\",\"UnhealthyPodEvictionPolicy\":null}: minAvailable and maxUnavailable cannot be both set"
        );
    }

    #[test]
    fn negative_and_over_100_percent_values_are_invalid() {
        let p = pdb(serde_json::json!({"minAvailable": -1}));
        assert_eq!(
            message(&p),
            "PodDisruptionBudget.policy \"web\" is invalid: spec.minAvailable: Invalid value: -1: must be greater than or equal to 0"
        );
        let p = pdb(serde_json::json!({"maxUnavailable": "150%"}));
        assert_eq!(
            message(&p),
            "PodDisruptionBudget.policy \"web\" is invalid: spec.maxUnavailable: Invalid value: \"150%\": must not be greater than 100%"
        );
        let p = pdb(serde_json::json!({"maxUnavailable": "half"}));
        assert!(message(&p).contains("spec.maxUnavailable: Invalid value: \"half\": a valid percent string must be a numeric string followed by an ending '%'"));
    }

    #[test]
    fn unknown_eviction_policy_is_not_supported() {
        let p = pdb(serde_json::json!({"minAvailable": 1, "unhealthyPodEvictionPolicy": "Never"}));
        assert_eq!(
            message(&p),
            "PodDisruptionBudget.policy \"web\" is invalid: spec.unhealthyPodEvictionPolicy: Unsupported value: \"Never\": supported values: \"AlwaysAllow\", \"IfHealthyBudget\""
        );
    }

    #[test]
    fn a_valid_budget_has_no_errors() {
        let p = pdb(
            serde_json::json!({"minAvailable": "50%", "selector": {"matchLabels": {"app": "web"}}}),
        );
        assert!(validate_pod_disruption_budget(&p).is_empty());
    }
}
