//! `Priority`: resolves a pod's `priorityClassName` to `priority` and `preemptionPolicy`,
//! and keeps a single `globalDefault` PriorityClass.

use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::api::scheduling::v1::PriorityClass;

use super::{forbidden, AdmissionError, Operation};
use crate::object::Object;

/// The PriorityClasses the apiserver creates at startup.
pub fn system_priority_classes() -> Vec<PriorityClass> {
    [
        ("system-node-critical", 2_000_001_000, "Used for system critical pods that must not be moved from their current node."),
        ("system-cluster-critical", 2_000_000_000, "Used for system critical pods that must run in the cluster, but can be moved to another node if necessary."),
    ]
    .into_iter()
    .map(|(name, value, desc)| {
        let mut pc = PriorityClass {
            value,
            description: Some(desc.into()),
            preemption_policy: Some("PreemptLowerPriority".into()),
            ..Default::default()
        };
        pc.metadata.name = Some(name.into());
        pc
    })
    .collect()
}

/// The global default class; with several (a race upstream allows) the lowest value wins.
fn default_class(classes: &[PriorityClass]) -> Option<&PriorityClass> {
    classes
        .iter()
        .filter(|c| c.global_default == Some(true))
        .min_by_key(|c| c.value)
}

/// Admits a pod: on create resolves its priority; on update keeps the stored priority.
pub fn admit_pod(
    op: Operation,
    pod: &mut Pod,
    old: Option<&Pod>,
    classes: &[PriorityClass],
) -> Result<(), AdmissionError> {
    match op {
        Operation::Update => {
            let old_priority = old.and_then(|o| o.spec.as_ref()).and_then(|s| s.priority);
            let spec = pod.spec.get_or_insert_with(Default::default);
            if spec.priority.is_none() {
                spec.priority = old_priority;
            }
            Ok(())
        }
        Operation::Delete => Ok(()),
        Operation::Create => {
            let spec = pod.spec.clone().unwrap_or_default();
            let name = spec.priority_class_name.clone().unwrap_or_default();
            let (priority, policy) = if name.is_empty() {
                match default_class(classes) {
                    Some(c) => {
                        let s = pod.spec.get_or_insert_with(Default::default);
                        s.priority_class_name = c.metadata.name.clone();
                        (c.value, c.preemption_policy.clone())
                    }
                    None => (0, Some("PreemptLowerPriority".to_string())),
                }
            } else {
                match classes
                    .iter()
                    .find(|c| c.metadata.name.as_deref() == Some(name.as_str()))
                {
                    Some(c) => (c.value, c.preemption_policy.clone()),
                    None => {
                        return Err(forbidden(
                            &Object::from(pod.clone()),
                            &format!("no PriorityClass with name {name} was found"),
                        ))
                    }
                }
            };
            if let Some(p) = spec.priority.filter(|p| *p != priority) {
                return Err(forbidden(
                    &Object::from(pod.clone()),
                    &format!("the integer value of priority ({p}) must not be provided in pod spec; priority admission controller computed {priority} from the given PriorityClass name"),
                ));
            }
            if let Some(policy) = policy {
                if let Some(given) = spec.preemption_policy.filter(|g| *g != policy) {
                    return Err(forbidden(
                        &Object::from(pod.clone()),
                        &format!("the string value of PreemptionPolicy ({given}) must not be provided in pod spec; priority admission controller computed {policy} from the given PriorityClass name"),
                    ));
                }
                pod.spec
                    .get_or_insert_with(Default::default)
                    .preemption_policy = Some(policy);
            }
            pod.spec.get_or_insert_with(Default::default).priority = Some(priority);
            Ok(())
        }
    }
}

/// Admits a PriorityClass create or update: at most one may be the global default.
pub fn admit_priority_class(
    op: Operation,
    pc: &PriorityClass,
    existing: &[PriorityClass],
) -> Result<(), AdmissionError> {
    if pc.global_default != Some(true) {
        return Ok(());
    }
    if let Some(d) = default_class(existing) {
        let other = d.metadata.name != pc.metadata.name;
        if op == Operation::Create || (op == Operation::Update && other) {
            let name = d.metadata.name.clone().unwrap_or_default();
            return Err(forbidden(
                &Object::from(pc.clone()),
                &format!(
                    "PriorityClass {name} is already marked as default. Only one default can exist"
                ),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(class: Option<&str>) -> Pod {
        let mut p = Pod::default();
        p.metadata.name = Some("web".into());
        p.spec
            .get_or_insert_with(Default::default)
            .priority_class_name = class.map(Into::into);
        p
    }

    fn class(name: &str, value: i32, default: bool) -> PriorityClass {
        let mut pc = PriorityClass {
            value,
            global_default: Some(default),
            preemption_policy: Some("PreemptLowerPriority".into()),
            ..Default::default()
        };
        pc.metadata.name = Some(name.into());
        pc
    }

    #[test]
    fn no_class_means_priority_zero() {
        let mut p = pod(None);
        admit_pod(Operation::Create, &mut p, None, &system_priority_classes()).unwrap();
        let s = p.spec.unwrap();
        assert_eq!(
            (s.priority, s.preemption_policy.as_deref()),
            (Some(0), Some("PreemptLowerPriority"))
        );
    }

    #[test]
    fn named_class_resolves_and_default_applies() {
        let classes = [class("high", 1000, false), class("low", 10, true)];
        let mut p = pod(Some("high"));
        admit_pod(Operation::Create, &mut p, None, &classes).unwrap();
        assert_eq!(p.spec.unwrap().priority, Some(1000));
        let mut p = pod(None);
        admit_pod(Operation::Create, &mut p, None, &classes).unwrap();
        let s = p.spec.unwrap();
        assert_eq!(
            (s.priority, s.priority_class_name.as_deref()),
            (Some(10), Some("low"))
        );
    }

    #[test]
    fn unknown_class_is_forbidden() {
        let err = admit_pod(Operation::Create, &mut pod(Some("gold")), None, &[]).unwrap_err();
        assert_eq!(
            err.message(),
            "pods \"web\" is forbidden: no PriorityClass with name gold was found"
        );
    }

    #[test]
    fn explicit_priority_must_agree() {
        let mut p = pod(None);
        p.spec.as_mut().unwrap().priority = Some(5);
        let err = admit_pod(Operation::Create, &mut p, None, &[]).unwrap_err();
        assert_eq!(err.message(), "pods \"web\" is forbidden: the integer value of priority (5) must not be provided in pod spec; priority admission controller computed 0 from the given PriorityClass name");
    }

    #[test]
    fn only_one_global_default() {
        let err = admit_priority_class(
            Operation::Create,
            &class("b", 1, true),
            &[class("a", 1, true)],
        )
        .unwrap_err();
        assert_eq!(err.message(), "priorityclasses.scheduling.k8s.io \"b\" is forbidden: PriorityClass a is already marked as default. Only one default can exist");
    }
}
