//! API validation: `validate_create` and `validate_update` for every kind the apiserver
//! serves, returning upstream's field errors in upstream's order.
//!
//! Call after defaulting and admission, on objects whose generated names (and, for Jobs,
//! generated selectors) are already filled in; render with
//! [`crate::apiserver::field_error::invalid_message`].

pub mod apps;
pub mod autoscaling;
pub mod batch;
pub mod container;
pub mod cronjob;
pub mod dns;
pub mod endpoints;
pub mod env;
pub mod ingress;
pub mod meta;
pub mod mounts;
pub mod names;
pub mod networking;
pub mod other;
pub mod pod;
pub mod pod_status;
pub mod policy;
pub mod probes;
pub mod quota;
pub mod rbac;
pub mod resources;
pub mod scheduling;
pub mod service;
pub mod statefulset;
pub mod storage;
pub mod volumes;

use crate::apiserver::field_error::{FieldError, Path};
use crate::apiserver::quantity::parse_quantity;
use crate::object::Object;

/// Validates an object being created.
///
/// For Services the node-port allocator's range check runs first, as upstream allocates
/// before validating: if a node port is out of range only those errors are returned.
pub fn validate_create(obj: &Object) -> Vec<FieldError> {
    match obj {
        Object::Pod(p) => pod::validate_pod_create(p),
        Object::CustomResourceDefinition(c) => crate::apiserver::crd::validation::validate_crd(c),
        // Validated against their CRD's schema in `crd::admit`.
        Object::Custom(_) => Vec::new(),
        Object::Deployment(d) => apps::validate_deployment(d),
        Object::ReplicaSet(r) => apps::validate_replica_set(r),
        Object::StatefulSet(s) => statefulset::validate_stateful_set(s),
        Object::DaemonSet(d) => apps::validate_daemon_set(d),
        Object::Job(j) => batch::validate_job(j),
        Object::Service(s) => {
            let (lo, hi) = service::NODE_PORT_RANGE;
            let alloc = service::validate_node_port_range(s, lo, hi);
            if alloc.is_empty() {
                service::validate_service(s)
            } else {
                alloc
            }
        }
        Object::Endpoints(e) => endpoints::validate_endpoints(e),
        Object::EndpointSlice(e) => endpoints::validate_endpoint_slice(e),
        Object::Namespace(n) => other::validate_namespace(n),
        Object::ConfigMap(c) => other::validate_config_map(c),
        Object::Secret(s) => other::validate_secret(s),
        Object::ServiceAccount(s) => other::validate_service_account(s),
        Object::Node(n) => other::validate_node(n),
        Object::LimitRange(l) => quota::validate_limit_range(l),
        Object::ResourceQuota(q) => quota::validate_resource_quota(q),
        Object::PriorityClass(p) => other::validate_priority_class(p),
        Object::Lease(l) => other::validate_lease(l),
        Object::PodDisruptionBudget(p) => policy::validate_pod_disruption_budget(p),
        Object::NetworkPolicy(p) => networking::validate_network_policy(p),
        Object::Event(e) => other::validate_event(e),
        Object::PersistentVolumeClaim(p) => storage::validate_pvc(p),
        Object::PersistentVolume(p) => storage::validate_pv(p),
        Object::StorageClass(s) => storage::validate_storage_class(s),
        Object::Role(r) => rbac::validate_role(r),
        Object::ClusterRole(r) => rbac::validate_cluster_role(r),
        Object::RoleBinding(b) => rbac::validate_role_binding(b),
        Object::ClusterRoleBinding(b) => rbac::validate_cluster_role_binding(b),
        // Reviews are answered, never stored.
        Object::SelfSubjectAccessReview(_) => Vec::new(),
        Object::ControllerRevision(r) => other::validate_meta_only(&r.metadata),
        Object::CronJob(c) => cronjob::validate_cron_job(c),
        Object::HorizontalPodAutoscaler(h) => autoscaling::validate_hpa(h),
        Object::Ingress(i) => ingress::validate_ingress(i),
        Object::IngressClass(i) => ingress::validate_ingress_class(i),
    }
}

/// Create-time errors minus the name checks, plus the metadata update rules: the shape
/// of most upstream `Validate*Update` functions.
fn generic_update(new: &Object, old: &Object) -> Vec<FieldError> {
    let mut errs =
        meta::validate_object_meta_update(new.meta(), old.meta(), &Path::new("metadata"));
    errs.extend(
        validate_create(new)
            .into_iter()
            .filter(|e| !e.field.starts_with("metadata.")),
    );
    errs
}

/// Validates a write to the `status` subresource of `old` (the status strategy's
/// `ValidateUpdate`): a Pod's by `ValidatePodStatusUpdate`, other kinds as an update.
pub fn validate_status_update(new: &Object, old: &Object) -> Vec<FieldError> {
    match (new, old) {
        (Object::Pod(n), Object::Pod(o)) => pod_status::validate_pod_status_update(n, o),
        _ => validate_update(new, old),
    }
}

/// Validates an update of `old` to `new` (immutable fields, allowed transitions).
pub fn validate_update(new: &Object, old: &Object) -> Vec<FieldError> {
    match (new, old) {
        (Object::Pod(n), Object::Pod(o)) => pod::validate_pod_update(n, o),
        (Object::CustomResourceDefinition(n), Object::CustomResourceDefinition(o)) => {
            crate::apiserver::crd::validation::validate_crd_update(n, o)
        }
        (Object::Custom(_), Object::Custom(_)) => Vec::new(),
        (Object::Deployment(n), Object::Deployment(o)) => apps::validate_deployment_update(n, o),
        (Object::ReplicaSet(n), Object::ReplicaSet(o)) => apps::validate_replica_set_update(n, o),
        (Object::StatefulSet(n), Object::StatefulSet(o)) => {
            statefulset::validate_stateful_set_update(n, o)
        }
        (Object::DaemonSet(n), Object::DaemonSet(o)) => apps::validate_daemon_set_update(n, o),
        (Object::Job(n), Object::Job(o)) => batch::validate_job_update(n, o),
        (Object::CronJob(n), Object::CronJob(o)) => cronjob::validate_cron_job_update(n, o),
        (Object::Service(n), Object::Service(o)) => service::validate_service_update(n, o),
        (Object::ConfigMap(n), Object::ConfigMap(o)) => other::validate_config_map_update(n, o),
        (Object::Secret(n), Object::Secret(o)) => other::validate_secret_update(n, o),
        (Object::Node(n), Object::Node(o)) => other::validate_node_update(n, o),
        (Object::ResourceQuota(n), Object::ResourceQuota(o)) => {
            quota::validate_resource_quota_update(n, o)
        }
        (Object::PriorityClass(n), Object::PriorityClass(o)) => {
            other::validate_priority_class_update(n, o)
        }
        (Object::PersistentVolumeClaim(n), Object::PersistentVolumeClaim(o)) => {
            storage::validate_pvc_update(n, o)
        }
        (Object::PersistentVolume(n), Object::PersistentVolume(o)) => {
            storage::validate_pv_update(n, o)
        }
        (Object::StorageClass(n), Object::StorageClass(o)) => {
            storage::validate_storage_class_update(n, o)
        }
        (Object::RoleBinding(n), Object::RoleBinding(o)) => {
            rbac::validate_role_binding_update(n, o)
        }
        (Object::ClusterRoleBinding(n), Object::ClusterRoleBinding(o)) => {
            rbac::validate_cluster_role_binding_update(n, o)
        }
        (Object::Namespace(n), Object::Namespace(o)) => {
            meta::validate_object_meta_update(&n.metadata, &o.metadata, &Path::new("metadata"))
        }
        (Object::LimitRange(_), Object::LimitRange(_)) => validate_create(new),
        (Object::IngressClass(n), Object::IngressClass(o)) => {
            ingress::validate_ingress_class_update(n, o)
        }
        (n, o) if n.kind() == o.kind() => generic_update(n, o),
        (n, o) => vec![FieldError::internal(
            &Path::new("kind"),
            &format!("cannot update a {} with a {}", o.kind(), n.kind()),
        )],
    }
}

const QUANTITY_MAPS: &[&str] = &[
    "limits",
    "requests",
    "overhead",
    "capacity",
    "allocatable",
    "hard",
    "used",
    "max",
    "min",
    "default",
    "defaultRequest",
    "maxLimitRequestRatio",
    "allocatedResources",
];

/// The decoder's error for the first malformed quantity in the object, if any (upstream
/// rejects these while decoding, before defaulting: `quantities must match the regular
/// expression '…'`; the handler wraps it as `<Kind> in version "v1" cannot be handled as
/// a <Kind>: …`).
pub fn decode_quantity_error(obj: &Object) -> Option<String> {
    fn walk(v: &serde_json::Value, in_limit_range: bool) -> Option<String> {
        match v {
            serde_json::Value::Object(m) => {
                for (k, child) in m {
                    let quantity_map = QUANTITY_MAPS.contains(&k.as_str())
                        && (in_limit_range
                            || !matches!(
                                k.as_str(),
                                "max"
                                    | "min"
                                    | "default"
                                    | "defaultRequest"
                                    | "maxLimitRequestRatio"
                            ));
                    if quantity_map {
                        if let serde_json::Value::Object(q) = child {
                            for s in q.values().filter_map(|x| x.as_str()) {
                                if let Err(e) = parse_quantity(s.trim()) {
                                    return Some(e);
                                }
                            }
                            continue;
                        }
                    }
                    if k == "sizeLimit" || k == "divisor" {
                        if let Some(Err(e)) = child.as_str().map(|s| parse_quantity(s.trim())) {
                            return Some(e);
                        }
                    }
                    if let Some(e) = walk(child, in_limit_range) {
                        return Some(e);
                    }
                }
                None
            }
            serde_json::Value::Array(a) => a.iter().find_map(|x| walk(x, in_limit_range)),
            _ => None,
        }
    }
    let v = obj.to_value();
    let spec_or_status = serde_json::json!({"spec": v.get("spec"), "status": v.get("status")});
    walk(&spec_or_status, matches!(obj, Object::LimitRange(_)))
}

#[cfg(test)]
mod tests;
