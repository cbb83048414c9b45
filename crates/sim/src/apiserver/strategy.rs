//! Per-kind REST strategies: what create and update reset, keep or bump (status,
//! generation, immutable metadata), as each kind's upstream `strategy.go` does.

use k8s_openapi::api::apps::v1::{
    DaemonSetStatus, DeploymentStatus, ReplicaSetStatus, StatefulSetStatus,
};
use k8s_openapi::api::core::v1::{NamespaceStatus, Pod, PodStatus};

use crate::object::{Kind, Object};

/// Kinds whose status is written only through the `status` subresource.
pub fn has_status_subresource(kind: Kind) -> bool {
    matches!(
        kind,
        Kind::Pod
            | Kind::Node
            | Kind::Service
            | Kind::Namespace
            | Kind::PersistentVolumeClaim
            | Kind::PersistentVolume
            | Kind::ResourceQuota
            | Kind::Deployment
            | Kind::ReplicaSet
            | Kind::DaemonSet
            | Kind::StatefulSet
            | Kind::Job
            | Kind::CronJob
            | Kind::PodDisruptionBudget
            | Kind::CustomResourceDefinition
            | Kind::Ingress
    )
}

/// Kinds that track `metadata.generation` for spec changes.
fn tracks_generation(kind: Kind) -> bool {
    matches!(
        kind,
        Kind::Deployment
            | Kind::ReplicaSet
            | Kind::DaemonSet
            | Kind::StatefulSet
            | Kind::Job
            | Kind::CronJob
            | Kind::Pod
            | Kind::PodDisruptionBudget
            | Kind::NetworkPolicy
            | Kind::CustomResourceDefinition
            | Kind::Ingress
            | Kind::IngressClass
    )
}

/// Resets what a create may not set (status of most kinds) and sets generation 1.
pub fn prepare_for_create(o: &mut Object) {
    if tracks_generation(o.kind()) {
        o.meta_mut().generation = Some(1);
    }
    match o {
        Object::Pod(p) => {
            let qos = qos_class(p).to_string();
            p.status = Some(PodStatus {
                phase: Some("Pending".into()),
                qos_class: Some(qos),
                ..PodStatus::default()
            });
        }
        Object::Deployment(d) => d.status = Some(DeploymentStatus::default()),
        Object::ReplicaSet(r) => {
            r.status = Some(ReplicaSetStatus {
                replicas: 0,
                ..ReplicaSetStatus::default()
            })
        }
        Object::StatefulSet(s) => s.status = Some(StatefulSetStatus::default()),
        Object::DaemonSet(d) => {
            d.status = Some(DaemonSetStatus::default());
            set_template_generation(d, 1);
        }
        Object::PodDisruptionBudget(p) => p.status = Some(Default::default()),
        Object::HorizontalPodAutoscaler(h) => h.status = Some(Default::default()),
        Object::Job(j) => {
            // The Job strategy's PrepareForCreate: generateSelector, then an empty status.
            let uid = j.metadata.uid.clone().unwrap_or_default();
            crate::apiserver::defaults::generate_job_selector(j, &uid);
            j.status = Some(Default::default());
        }
        Object::CronJob(c) => c.status = Some(Default::default()),
        Object::Service(s) => s.status = Some(Default::default()),
        Object::Namespace(n) => {
            n.status = Some(NamespaceStatus {
                phase: Some("Active".into()),
                ..NamespaceStatus::default()
            });
            let spec = n.spec.get_or_insert_with(Default::default);
            spec.finalizers = Some(vec!["kubernetes".into()]);
        }
        _ => {}
    }
}

fn spec_value(o: &Object) -> serde_json::Value {
    let mut v = o.to_value();
    if let Some(m) = v.as_object_mut() {
        m.remove("metadata");
        m.remove("status");
    }
    v
}

/// Makes `new` a valid main-resource update of `old`: status kept from old (for kinds with
/// a status subresource), system metadata kept, generation bumped when the spec changed.
pub fn prepare_for_update(new: &mut Object, old: &Object) {
    keep_system_metadata(new, old);
    if has_status_subresource(new.kind()) {
        copy_status(new, old);
    }
    if tracks_generation(new.kind()) {
        let g = old.meta().generation.unwrap_or(1);
        let changed = spec_value(new) != spec_value(old);
        new.meta_mut().generation = Some(if changed { g + 1 } else { g });
    }
    if let (Object::DaemonSet(n), Object::DaemonSet(o)) = (new, old) {
        let g = template_generation(o);
        let changed = n.spec.as_ref().map(|s| &s.template) != o.spec.as_ref().map(|s| &s.template);
        set_template_generation(n, if changed { g + 1 } else { g });
    }
}

/// The annotation v1 keeps a DaemonSet's `spec.templateGeneration` in.
pub const TEMPLATE_GENERATION_ANNOTATION: &str = "deprecated.daemonset.template.generation";

/// A DaemonSet's template generation (1 when unset).
pub fn template_generation(d: &k8s_openapi::api::apps::v1::DaemonSet) -> i64 {
    d.metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(TEMPLATE_GENERATION_ANNOTATION))
        .and_then(|v| v.parse().ok())
        .unwrap_or(1)
}

/// The daemonset strategy's templateGeneration: 1 on create, one more whenever the
/// template changes.
fn set_template_generation(d: &mut k8s_openapi::api::apps::v1::DaemonSet, g: i64) {
    d.metadata
        .annotations
        .get_or_insert_with(Default::default)
        .insert(TEMPLATE_GENERATION_ANNOTATION.into(), g.to_string());
}

/// Makes `new` a status update of `old`: everything but status comes from old.
pub fn prepare_for_status_update(new: &mut Object, old: &Object) {
    // A status writer's object usually differs from the stored one in its status alone
    // (a kubelet's status patch): it already is the merged object, and the stored one
    // (a Pod's spec is most of its size) need not be copied.
    let status_alone = match (&*new, old) {
        (Object::Pod(n), Object::Pod(o)) => n.metadata == o.metadata && n.spec == o.spec,
        (Object::Node(n), Object::Node(o)) => n.metadata == o.metadata && n.spec == o.spec,
        _ => false,
    };
    if status_alone {
        return;
    }
    let mut merged = old.clone();
    copy_status(&mut merged, new);
    // Status writers may touch annotations/labels only through the main resource.
    *new = merged;
}

fn keep_system_metadata(new: &mut Object, old: &Object) {
    let o = old.meta();
    let n = new.meta_mut();
    n.uid = o.uid.clone();
    n.creation_timestamp = o.creation_timestamp.clone();
    n.deletion_timestamp = o.deletion_timestamp.clone();
    n.deletion_grace_period_seconds = o.deletion_grace_period_seconds;
    n.generation = o.generation;
    n.namespace = o.namespace.clone();
    n.name = o.name.clone();
    if n.generate_name.is_none() {
        n.generate_name = o.generate_name.clone();
    }
}

/// Copies `from`'s status onto `to` (same kind).
fn copy_status(to: &mut Object, from: &Object) {
    if let (Object::Custom(t), Object::Custom(f)) = (&mut *to, from) {
        match f.content.get("status") {
            Some(s) => t.content.insert("status".into(), s.clone()),
            None => t.content.remove("status"),
        };
        return;
    }
    macro_rules! cp {
        ($($v:ident),*) => {
            match (to, from) {
                $((Object::$v(t), Object::$v(f)) => t.status = f.status.clone(),)*
                _ => {}
            }
        };
    }
    cp!(
        Pod,
        Node,
        Service,
        Namespace,
        PersistentVolumeClaim,
        PersistentVolume,
        ResourceQuota,
        Deployment,
        ReplicaSet,
        DaemonSet,
        StatefulSet,
        Job,
        CronJob,
        PodDisruptionBudget,
        HorizontalPodAutoscaler,
        CustomResourceDefinition,
        Ingress
    );
}

/// The pod's QoS class (`Guaranteed`, `Burstable`, `BestEffort`), as `qos.GetPodQOS`.
pub fn qos_class(p: &Pod) -> &'static str {
    let Some(spec) = &p.spec else {
        return "BestEffort";
    };
    let containers: Vec<_> = spec
        .containers
        .iter()
        .chain(spec.init_containers.iter().flatten())
        .collect();
    let mut any = false;
    let mut guaranteed = true;
    for c in &containers {
        let req = c.resources.as_ref().and_then(|r| r.requests.as_ref());
        let lim = c.resources.as_ref().and_then(|r| r.limits.as_ref());
        for res in ["cpu", "memory"] {
            let r = req.and_then(|m| m.get(res)).map(|q| q.0.as_str());
            let l = lim.and_then(|m| m.get(res)).map(|q| q.0.as_str());
            if r.is_some() || l.is_some() {
                any = true;
            }
            match (r, l) {
                (_, None) => guaranteed = false,
                (Some(r), Some(l)) if !same_quantity(r, l) => guaranteed = false,
                _ => {}
            }
        }
    }
    if !any {
        "BestEffort"
    } else if guaranteed {
        "Guaranteed"
    } else {
        "Burstable"
    }
}

fn same_quantity(a: &str, b: &str) -> bool {
    match (crate::quantity::parse(a), crate::quantity::parse(b)) {
        (Ok(x), Ok(y)) => x == y,
        _ => a == b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(v: serde_json::Value) -> Object {
        Object::from(serde_json::from_value::<Pod>(v).expect("a pod"))
    }

    fn stored() -> Object {
        pod(serde_json::json!({
            "metadata": {"name": "web", "labels": {"app": "web"}},
            "spec": {"nodeName": "node-1", "containers": [{"name": "c", "image": "nginx"}]},
            "status": {"phase": "Pending"}
        }))
    }

    #[test]
    fn a_status_update_keeps_the_stored_metadata_and_spec() {
        let mut new = pod(serde_json::json!({
            "metadata": {"name": "web", "labels": {"app": "other"}},
            "spec": {"nodeName": "node-2", "containers": [{"name": "c", "image": "redis"}]},
            "status": {"phase": "Running"}
        }));
        prepare_for_status_update(&mut new, &stored());
        let mut want = stored();
        if let Object::Pod(p) = &mut want {
            p.status.get_or_insert_with(Default::default).phase = Some("Running".into());
        }
        assert_eq!(new, want);
    }

    #[test]
    fn a_status_update_that_changes_the_status_alone_is_taken_as_sent() {
        let mut new = stored();
        if let Object::Pod(p) = &mut new {
            p.status.get_or_insert_with(Default::default).phase = Some("Running".into());
        }
        let sent = new.clone();
        prepare_for_status_update(&mut new, &stored());
        assert_eq!(new, sent);
        let mut gone = stored();
        if let Object::Pod(p) = &mut gone {
            p.status = None;
        }
        prepare_for_status_update(&mut gone, &stored());
        assert!(
            matches!(&gone, Object::Pod(p) if p.status.is_none()),
            "{gone:?}"
        );
    }

    #[test]
    fn a_node_status_update_keeps_the_stored_taints() {
        let node = |taint: &str, ready: &str| {
            Object::from(
                serde_json::from_value::<k8s_openapi::api::core::v1::Node>(serde_json::json!({
                    "metadata": {"name": "node-1"},
                    "spec": {"taints": [{"key": taint, "effect": "NoSchedule"}]},
                    "status": {"conditions": [{"type": "Ready", "status": ready}]}
                }))
                .expect("a node"),
            )
        };
        let mut new = node("sent", "True");
        prepare_for_status_update(&mut new, &node("stored", "Unknown"));
        assert_eq!(new, node("stored", "True"));
        let mut new = node("stored", "True");
        prepare_for_status_update(&mut new, &node("stored", "Unknown"));
        assert_eq!(new, node("stored", "True"));
    }
}
