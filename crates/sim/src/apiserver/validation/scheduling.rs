//! Pod scheduling constraints: tolerations, node selectors, node and pod (anti-)affinity
//! and topology spread constraints.

use k8s_openapi::api::core::v1::{
    Affinity, NodeSelector, NodeSelectorRequirement, PodAffinityTerm, PodSpec, Toleration,
};

use super::meta::*;
use super::names::*;
use crate::apiserver::field_error::{BadValue, FieldError, Path};

/// `ValidateTolerations`.
pub fn validate_tolerations(tolerations: &[Toleration], path: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    for (i, t) in tolerations.iter().enumerate() {
        let p = path.index(i);
        let key = t.key.as_deref().unwrap_or("");
        let op = t.operator.as_deref().unwrap_or("");
        let effect = t.effect.as_deref().unwrap_or("");
        let value = t.value.as_deref().unwrap_or("");
        if !key.is_empty() {
            errs.extend(validate_qualified_name(key, &p.child("key")));
        }
        if key.is_empty() && op != "Exists" {
            errs.push(FieldError::invalid(&p.child("operator"), BadValue::typed_str(op), "operator must be Exists when `key` is empty, which means \"match all values and all keys\""));
        }
        if t.toleration_seconds.is_some() && effect != "NoExecute" {
            errs.push(FieldError::invalid(
                &p.child("effect"),
                BadValue::typed_str(effect),
                "effect must be 'NoExecute' when `tolerationSeconds` is set",
            ));
        }
        match op {
            "Equal" | "" => {
                let msgs = is_valid_label_value(value);
                if !msgs.is_empty() {
                    errs.push(FieldError::invalid(
                        &p.child("operator"),
                        value,
                        &msgs.join(";"),
                    ));
                }
            }
            "Exists" => {
                if !value.is_empty() {
                    errs.push(FieldError::invalid(
                        &p.child("operator"),
                        value,
                        "value must be empty when `operator` is 'Exists'",
                    ));
                }
            }
            other => errs.push(FieldError::not_supported(
                &p.child("operator"),
                BadValue::typed_str(other),
                &["Equal", "Exists"],
            )),
        }
        if !effect.is_empty() && !matches!(effect, "NoSchedule" | "PreferNoSchedule" | "NoExecute")
        {
            errs.push(FieldError::not_supported(
                &p.child("effect"),
                BadValue::typed_str(effect),
                &["NoSchedule", "PreferNoSchedule", "NoExecute"],
            ));
        }
    }
    errs
}

fn validate_node_selector_requirement(
    r: &NodeSelectorRequirement,
    check_values: bool,
    path: &Path,
) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let n = r.values.as_ref().map_or(0, |v| v.len());
    match r.operator.as_str() {
        "In" | "NotIn" if n == 0 => errs.push(FieldError::required(
            &path.child("values"),
            "must be specified when `operator` is 'In' or 'NotIn'",
        )),
        "Exists" | "DoesNotExist" if n > 0 => errs.push(FieldError::forbidden(
            &path.child("values"),
            "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
        )),
        "Gt" | "Lt" if n != 1 => errs.push(FieldError::required(
            &path.child("values"),
            "must be specified single value when `operator` is 'Lt' or 'Gt'",
        )),
        "In" | "NotIn" | "Exists" | "DoesNotExist" | "Gt" | "Lt" => {}
        op => errs.push(FieldError::invalid(
            &path.child("operator"),
            BadValue::typed_str(op),
            "not a valid selector operator",
        )),
    }
    errs.extend(validate_qualified_name(&r.key, &path.child("key")));
    if check_values {
        for (i, v) in r.values.iter().flatten().enumerate() {
            errs.extend(invalid_each(
                &path.child("values").index(i),
                v,
                is_valid_label_value(v),
            ));
        }
    }
    errs
}

pub(super) fn validate_node_selector(ns: &NodeSelector, path: &Path) -> Vec<FieldError> {
    let tp = path.child("nodeSelectorTerms");
    if ns.node_selector_terms.is_empty() {
        return vec![FieldError::required(
            &tp,
            "must have at least one node selector term",
        )];
    }
    let mut errs = Vec::new();
    for (i, t) in ns.node_selector_terms.iter().enumerate() {
        for (j, r) in t.match_expressions.iter().flatten().enumerate() {
            errs.extend(validate_node_selector_requirement(
                r,
                true,
                &tp.index(i).child("matchExpressions").index(j),
            ));
        }
    }
    errs
}

fn validate_pod_affinity_term(t: &PodAffinityTerm, path: &Path) -> Vec<FieldError> {
    let mut errs = validate_label_selector(t.label_selector.as_ref(), &path.child("labelSelector"));
    errs.extend(validate_label_selector(
        t.namespace_selector.as_ref(),
        &path.child("namespaceSelector"),
    ));
    for ns in t.namespaces.iter().flatten() {
        errs.extend(invalid_each(
            &path.child("namespace"),
            ns,
            name_is_dns_label(ns, false),
        ));
    }
    if t.topology_key.is_empty() {
        errs.push(FieldError::required(
            &path.child("topologyKey"),
            "can not be empty",
        ));
    }
    errs.extend(validate_qualified_name(
        &t.topology_key,
        &path.child("topologyKey"),
    ));
    errs
}

pub(super) fn validate_affinity(a: &Affinity, path: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if let Some(na) = a.node_affinity.as_ref() {
        let np = path.child("nodeAffinity");
        if let Some(req) = na
            .required_during_scheduling_ignored_during_execution
            .as_ref()
        {
            errs.extend(validate_node_selector(
                req,
                &np.child("requiredDuringSchedulingIgnoredDuringExecution"),
            ));
        }
        for (i, t) in na
            .preferred_during_scheduling_ignored_during_execution
            .iter()
            .flatten()
            .enumerate()
        {
            let tp = np
                .child("preferredDuringSchedulingIgnoredDuringExecution")
                .index(i);
            if !(1..=100).contains(&t.weight) {
                errs.push(FieldError::invalid(
                    &tp.child("weight"),
                    t.weight,
                    "must be in the range 1-100",
                ));
            }
            for (j, r) in t.preference.match_expressions.iter().flatten().enumerate() {
                errs.extend(validate_node_selector_requirement(
                    r,
                    false,
                    &tp.child("preference").child("matchExpressions").index(j),
                ));
            }
        }
    }
    let terms = [
        (
            "podAffinity",
            a.pod_affinity.as_ref().map(|p| {
                (
                    &p.required_during_scheduling_ignored_during_execution,
                    &p.preferred_during_scheduling_ignored_during_execution,
                )
            }),
        ),
        (
            "podAntiAffinity",
            a.pod_anti_affinity.as_ref().map(|p| {
                (
                    &p.required_during_scheduling_ignored_during_execution,
                    &p.preferred_during_scheduling_ignored_during_execution,
                )
            }),
        ),
    ];
    for (name, t) in terms {
        let Some((required, preferred)) = t else {
            continue;
        };
        let ap = path.child(name);
        for (i, term) in required.iter().flatten().enumerate() {
            errs.extend(validate_pod_affinity_term(
                term,
                &ap.child("requiredDuringSchedulingIgnoredDuringExecution")
                    .index(i),
            ));
        }
        for (i, w) in preferred.iter().flatten().enumerate() {
            let wp = ap
                .child("preferredDuringSchedulingIgnoredDuringExecution")
                .index(i);
            if !(1..=100).contains(&w.weight) {
                errs.push(FieldError::invalid(
                    &wp.child("weight"),
                    w.weight,
                    "must be in the range 1-100",
                ));
            }
            errs.extend(validate_pod_affinity_term(
                &w.pod_affinity_term,
                &wp.child("podAffinityTerm"),
            ));
        }
    }
    errs
}

pub(super) fn validate_topology_spread(spec: &PodSpec, path: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let cs = spec.topology_spread_constraints.as_deref().unwrap_or(&[]);
    for (i, c) in cs.iter().enumerate() {
        let p = path.index(i);
        if c.max_skew <= 0 {
            errs.push(FieldError::invalid(
                &p.child("maxSkew"),
                c.max_skew,
                "must be greater than zero",
            ));
        }
        if c.topology_key.is_empty() {
            errs.push(FieldError::required(
                &p.child("topologyKey"),
                "can not be empty",
            ));
        }
        if !matches!(
            c.when_unsatisfiable.as_str(),
            "DoNotSchedule" | "ScheduleAnyway"
        ) {
            errs.push(FieldError::not_supported(
                &p.child("whenUnsatisfiable"),
                BadValue::typed_str(&c.when_unsatisfiable),
                &["DoNotSchedule", "ScheduleAnyway"],
            ));
        }
        if cs[i + 1..].iter().any(|o| {
            o.topology_key == c.topology_key && o.when_unsatisfiable == c.when_unsatisfiable
        }) {
            errs.push(FieldError::duplicate(
                &p.child("{topologyKey, whenUnsatisfiable}"),
                format!("{{{}, {}}}", c.topology_key, c.when_unsatisfiable),
            ));
        }
        if let Some(m) = c.min_domains {
            if m <= 0 {
                errs.push(FieldError::invalid(
                    &p.child("minDomains"),
                    m,
                    "must be greater than zero",
                ));
            }
            if c.when_unsatisfiable != "DoNotSchedule" {
                errs.push(FieldError::invalid(
                    &p.child("minDomains"),
                    m,
                    &format!(
                        "can only use minDomains if whenUnsatisfiable=DoNotSchedule, not {}",
                        c.when_unsatisfiable
                    ),
                ));
            }
        }
        errs.extend(validate_label_selector(
            c.label_selector.as_ref(),
            &p.child("labelSelector"),
        ));
    }
    errs
}
