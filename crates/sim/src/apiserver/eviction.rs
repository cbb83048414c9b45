//! The `pods/eviction` subresource (`pkg/registry/core/pod/storage/eviction.go`): a pod
//! goes only if its PodDisruptionBudget allows it, and the budget is charged first.
//!
//! An allowed eviction of a Ready pod is two writes: the PDB's status (one fewer
//! `disruptionsAllowed`, the pod in `disruptedPods`), then the pod's deletion. The first
//! is a [`WriteOp::PdbDecrement`]; when it lands, the server computes the request again
//! with [`Request::pdb_charged`] set and this module answers with the delete.

use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::api::policy::v1::PodDisruptionBudget;

use crate::api::{Status, StatusExtra, StatusReason};
use crate::apiserver::field_error::forbidden_message;
use crate::apiserver::server::{ApiServer, Request};
use crate::apiserver::write::{set_pod_condition, WriteOp};
use crate::controllers::disruption_status::update_disruption_allowed_condition;
use crate::controllers::util::is_pod_ready;
use crate::object::{Kind, Object};
use crate::selector::LabelSelector;
use crate::time::{k8s_time, Time};

/// `MaxDisruptedPodSize`: evictions the controller has not confirmed yet, at most.
const MAX_DISRUPTED_POD_SIZE: usize = 2000;

/// What kubectl shows of a refused eviction.
pub const VIOLATION: &str = "Cannot evict pod as it would violate the pod's disruption budget.";

/// The message of the 500 for a pod two or more budgets select.
pub const MULTIPLE_PDBS: &str =
    "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.";

/// What the eviction does next.
pub enum Decision {
    /// Delete the pod (no budget applies, or it was charged already).
    Delete,
    /// Charge the budget: write this PDB (its status decremented), then delete.
    Charge(Arc<Object>),
}

/// `canIgnorePDB`: terminal, Pending and terminating pods go without a budget check.
fn can_ignore_pdb(p: &Pod) -> bool {
    let phase = p.status.as_ref().and_then(|s| s.phase.as_deref());
    matches!(phase, Some("Succeeded" | "Failed" | "Pending"))
        || p.metadata.deletion_timestamp.is_some()
}

/// `getPodDisruptionBudgets`: the pod's namespace's PDBs whose selector matches it. An
/// empty or unparsable selector matches nothing here.
fn budgets_for(s: &ApiServer, p: &Pod, ns: &str) -> Vec<Arc<Object>> {
    s.cache
        .list(Kind::PodDisruptionBudget, ns)
        .into_iter()
        .filter(|o| {
            let Object::PodDisruptionBudget(pdb) = &**o else {
                return false;
            };
            let sel = pdb.spec.as_ref().and_then(|s| s.selector.as_ref());
            match LabelSelector::from_k8s(sel) {
                Ok(sel) => !sel.is_empty() && sel.matches(p.metadata.labels.as_ref()),
                Err(_) => false,
            }
        })
        .collect()
}

/// `errors.NewTooManyRequests` with the DisruptionBudget cause.
fn too_many_requests(cause: String, retry_after: u32) -> Status {
    let mut s = Status::new(429, StatusReason::TooManyRequests, VIOLATION);
    s.extra = Some(Box::new(StatusExtra {
        typed_causes: vec![("DisruptionBudget".into(), cause)],
        retry_after_seconds: retry_after,
    }));
    s
}

fn forbidden(name: &str, reason: &str) -> Status {
    Status::new(
        403,
        StatusReason::Forbidden,
        forbidden_message("poddisruptionbudget.policy", name, reason),
    )
}

/// `checkAndDecrement`: the budget with one fewer disruption allowed and the pod
/// recorded, or why the eviction must wait.
fn check_and_decrement(
    mut pdb: PodDisruptionBudget,
    pod: &str,
    now: Time,
) -> Result<PodDisruptionBudget, Status> {
    let name = pdb.metadata.name.clone().unwrap_or_default();
    let generation = pdb.metadata.generation.unwrap_or(0);
    let status = pdb.status.get_or_insert_with(Default::default);
    if status.observed_generation.unwrap_or(0) < generation {
        let cause = format!("The disruption budget {name} is still being processed by the server.");
        return Err(too_many_requests(cause, 10));
    }
    if status.disruptions_allowed < 0 {
        return Err(forbidden(&name, "pdb disruptions allowed is negative"));
    }
    if status.disrupted_pods.as_ref().map_or(0, BTreeMap::len) > MAX_DISRUPTED_POD_SIZE {
        return Err(forbidden(
            &name,
            "DisruptedPods map too big - too many evictions not confirmed by PDB controller",
        ));
    }
    if status.disruptions_allowed == 0 {
        let cause = format!(
            "The disruption budget {name} needs {} healthy pods and has {} currently",
            status.desired_healthy, status.current_healthy
        );
        return Err(too_many_requests(cause, 0));
    }
    status.disruptions_allowed -= 1;
    if status.disruptions_allowed == 0 {
        update_disruption_allowed_condition(status, now);
    }
    status
        .disrupted_pods
        .get_or_insert_with(BTreeMap::new)
        .insert(pod.to_string(), k8s_time(now));
    Ok(pdb)
}

/// Decides an eviction of `pod` (the current object) for request `r`.
pub(crate) fn decide(
    s: &ApiServer,
    r: &Request,
    pod: &Object,
    now: Time,
) -> Result<Decision, Status> {
    let Object::Pod(p) = pod else {
        return Err(Status::internal("not a pod"));
    };
    if r.pdb_charged || can_ignore_pdb(p) {
        return Ok(Decision::Delete);
    }
    let budgets = budgets_for(s, p, pod.namespace());
    if budgets.len() > 1 {
        return Err(Status::new(500, StatusReason::Unknown, MULTIPLE_PDBS));
    }
    let Some(cached) = budgets.into_iter().next() else {
        return Ok(Decision::Delete);
    };
    // After a lost race, the budget as etcd returned it.
    let current = match &r.fresh_pdb {
        Some(f) if f.name() == cached.name() => f.clone(),
        _ => cached,
    };
    let Object::PodDisruptionBudget(pdb) = &*current else {
        return Err(Status::internal("not a PodDisruptionBudget"));
    };
    let status = pdb.status.clone().unwrap_or_default();
    if !is_pod_ready(p) {
        let always_allow = pdb
            .spec
            .as_ref()
            .and_then(|s| s.unhealthy_pod_eviction_policy.as_deref())
            == Some("AlwaysAllow");
        let budget_healthy =
            status.current_healthy >= status.desired_healthy && status.desired_healthy > 0;
        if always_allow || budget_healthy {
            return Ok(Decision::Delete);
        }
    }
    let mut charged = check_and_decrement((**pdb).clone(), pod.name(), now)?;
    charged.metadata.resource_version = current.meta().resource_version.clone();
    Ok(Decision::Charge(Arc::new(Object::from(charged))))
}

/// The pod being deleted, with the `DisruptionTarget` condition upstream's
/// `addConditionAndDeletePod` writes just before (here folded into the same write).
pub fn with_disruption_target(pod: &Arc<Object>, now: Time) -> Arc<Object> {
    let mut o = (**pod).clone();
    if let Object::Pod(p) = &mut o {
        let status = p.status.get_or_insert_with(Default::default);
        set_pod_condition(
            status.conditions.get_or_insert_with(Vec::new),
            "DisruptionTarget",
            "True",
            Some("EvictionByEvictionAPI"),
            Some("Eviction API: evicting"),
            now,
        );
    }
    Arc::new(o)
}

/// The PDB write of a charged eviction.
pub fn charge_op(pdb: Arc<Object>) -> WriteOp {
    let key = pdb.key().etcd_key();
    let expect = pdb.resource_version();
    let mut obj = (*pdb).clone();
    obj.meta_mut().resource_version = None;
    WriteOp::PdbDecrement {
        key,
        expect,
        obj: Arc::new(obj),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pdb(generation: i64, observed: i64, allowed: i32) -> PodDisruptionBudget {
        serde_json::from_value(serde_json::json!({
            "metadata": {"name": "web", "namespace": "default", "generation": generation},
            "spec": {"minAvailable": 2, "selector": {"matchLabels": {"app": "web"}}},
            "status": {"observedGeneration": observed, "disruptionsAllowed": allowed,
                       "currentHealthy": 2, "desiredHealthy": 2, "expectedPods": 3}
        }))
        .unwrap()
    }

    #[test]
    fn no_disruptions_left_is_a_429_with_the_budget_cause() {
        let s = check_and_decrement(pdb(1, 1, 0), "web-1", 5_000).unwrap_err();
        assert_eq!((s.code, s.reason), (429, StatusReason::TooManyRequests));
        assert_eq!(s.message, VIOLATION);
        assert_eq!(
            s.extra.unwrap().typed_causes,
            vec![(
                "DisruptionBudget".to_string(),
                "The disruption budget web needs 2 healthy pods and has 2 currently".to_string()
            )]
        );
    }

    #[test]
    fn an_unobserved_generation_is_a_429_still_being_processed() {
        let s = check_and_decrement(pdb(2, 1, 1), "web-1", 5_000).unwrap_err();
        assert_eq!(s.code, 429);
        let extra = s.extra.unwrap();
        assert_eq!(extra.retry_after_seconds, 10);
        assert_eq!(
            extra.typed_causes[0].1,
            "The disruption budget web is still being processed by the server."
        );
    }

    #[test]
    fn a_negative_budget_is_forbidden() {
        let s = check_and_decrement(pdb(1, 1, -1), "web-1", 5_000).unwrap_err();
        assert_eq!(s.code, 403);
        assert_eq!(
            s.message,
            "poddisruptionbudget.policy \"web\" is forbidden: pdb disruptions allowed is negative"
        );
    }

    #[test]
    fn an_allowed_eviction_charges_the_budget_and_records_the_pod() {
        let charged = check_and_decrement(pdb(1, 1, 1), "web-1", 5_000).unwrap();
        let st = charged.status.unwrap();
        assert_eq!(st.disruptions_allowed, 0);
        let disrupted = st.disrupted_pods.unwrap();
        assert_eq!(disrupted.get("web-1"), Some(&k8s_time(5_000)));
        let c = &st.conditions.unwrap()[0];
        assert_eq!(
            (c.status.as_str(), c.reason.as_str()),
            ("False", "InsufficientPods")
        );
    }
}
