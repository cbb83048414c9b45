//! Defaulting: upstream's `SetObjectDefaults_*` for every kind the apiserver serves,
//! applied after decoding and before admission, so stored objects read like a real
//! cluster's (`restartPolicy: Always`, `maxSurge: 25%`, `ipFamilies: [IPv4]`, …).

mod batch;
mod pod;

use std::collections::BTreeMap;

use k8s_openapi::api::apps::v1::{
    DaemonSet, DaemonSetUpdateStrategy, Deployment, RollingUpdateDaemonSet,
    RollingUpdateDeployment, RollingUpdateStatefulSetStrategy, StatefulSet,
    StatefulSetPersistentVolumeClaimRetentionPolicy, StatefulSetUpdateStrategy,
};
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{ClientIPConfig, Service, SessionAffinityConfig};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use k8s_openapi::ByteString;

pub use pod::{canonicalize_resource_list, image_tag};

use crate::object::Object;

/// Applies upstream's defaults to an object in place. Never fails: fields it cannot
/// interpret are left for validation to report.
pub fn set_defaults(obj: &mut Object) {
    match obj {
        Object::Pod(p) => pod::default_pod(p),
        Object::CustomResourceDefinition(c) => crate::apiserver::crd::set_defaults(c),
        // Custom objects get their schema's defaults in `crd::admit`.
        Object::Custom(_) => {}
        Object::Deployment(d) => default_deployment(d),
        Object::ReplicaSet(rs) => {
            let spec = rs.spec.get_or_insert_with(Default::default);
            spec.replicas.get_or_insert(1);
            if let Some(t) = spec.template.as_mut() {
                pod::default_pod_template(t);
            }
        }
        Object::StatefulSet(s) => default_stateful_set(s),
        Object::DaemonSet(d) => default_daemon_set(d),
        Object::Job(j) => default_job(j),
        // policy/v1 defaults nothing (v1beta1 defaulted minAvailable to 1).
        Object::PodDisruptionBudget(_) => {}
        Object::NetworkPolicy(p) => default_network_policy(p),
        Object::CronJob(c) => batch::default_cron_job(c),
        Object::HorizontalPodAutoscaler(h) => default_hpa(h),
        Object::ControllerRevision(_) => {}
        // networking/v1 defaults nothing for Ingress and IngressClass.
        Object::Ingress(_) | Object::IngressClass(_) => {}
        Object::Service(s) => default_service(s),
        Object::Endpoints(e) => {
            for p in e
                .subsets
                .iter_mut()
                .flatten()
                .flat_map(|s| s.ports.iter_mut().flatten())
            {
                default_protocol(&mut p.protocol);
            }
        }
        Object::EndpointSlice(s) => {
            for p in s.ports.iter_mut().flatten() {
                p.name.get_or_insert_with(String::new);
                default_protocol(&mut p.protocol);
            }
        }
        Object::Namespace(ns) => {
            if let Some(name) = ns.metadata.name.clone().filter(|n| !n.is_empty()) {
                ns.metadata
                    .labels
                    .get_or_insert_with(BTreeMap::new)
                    .insert("kubernetes.io/metadata.name".into(), name);
            }
            let status = ns.status.get_or_insert_with(Default::default);
            if status.phase.as_deref().unwrap_or("").is_empty() {
                status.phase = Some("Active".into());
            }
        }
        Object::Node(n) => {
            if let Some(status) = n.status.as_mut() {
                if status.allocatable.is_none() && status.capacity.is_some() {
                    status.allocatable = status.capacity.clone();
                }
                canonicalize_resource_list(&mut status.capacity);
                canonicalize_resource_list(&mut status.allocatable);
            }
        }
        Object::PersistentVolume(pv) => {
            let status = pv.status.get_or_insert_with(Default::default);
            if status.phase.as_deref().unwrap_or("").is_empty() {
                status.phase = Some("Pending".into());
            }
            let spec = pv.spec.get_or_insert_with(Default::default);
            if spec
                .persistent_volume_reclaim_policy
                .as_deref()
                .unwrap_or("")
                .is_empty()
            {
                spec.persistent_volume_reclaim_policy = Some("Retain".into());
            }
            spec.volume_mode.get_or_insert_with(|| "Filesystem".into());
            if let Some(h) = spec.host_path.as_mut() {
                h.type_.get_or_insert_with(String::new);
            }
            canonicalize_resource_list(&mut spec.capacity);
        }
        Object::PersistentVolumeClaim(pvc) => {
            let status = pvc.status.get_or_insert_with(Default::default);
            if status.phase.as_deref().unwrap_or("").is_empty() {
                status.phase = Some("Pending".into());
            }
            canonicalize_resource_list(&mut status.capacity);
            pod::default_pvc_spec(pvc.spec.get_or_insert_with(Default::default));
        }
        Object::Secret(s) => {
            if s.type_.as_deref().unwrap_or("").is_empty() {
                s.type_ = Some("Opaque".into());
            }
            // v1 conversion folds stringData into data; it is never stored or returned.
            if let Some(sd) = s.string_data.take() {
                let data = s.data.get_or_insert_with(BTreeMap::new);
                for (k, v) in sd {
                    data.insert(k, ByteString(v.into_bytes()));
                }
            }
        }
        Object::LimitRange(lr) => {
            for item in lr.spec.iter_mut().flat_map(|s| s.limits.iter_mut()) {
                if item.type_ == "Container" {
                    let default = item.default.get_or_insert_with(BTreeMap::new);
                    for (k, v) in item.max.iter().flatten() {
                        default.entry(k.clone()).or_insert_with(|| v.clone());
                    }
                    let default = default.clone();
                    let req = item.default_request.get_or_insert_with(BTreeMap::new);
                    for (k, v) in default.iter().chain(item.min.iter().flatten()) {
                        req.entry(k.clone()).or_insert_with(|| v.clone());
                    }
                }
                for list in [
                    &mut item.max,
                    &mut item.min,
                    &mut item.default,
                    &mut item.default_request,
                    &mut item.max_limit_request_ratio,
                ] {
                    canonicalize_resource_list(list);
                }
            }
        }
        Object::ResourceQuota(q) => {
            if let Some(spec) = q.spec.as_mut() {
                canonicalize_resource_list(&mut spec.hard);
            }
            if let Some(status) = q.status.as_mut() {
                canonicalize_resource_list(&mut status.hard);
                canonicalize_resource_list(&mut status.used);
            }
        }
        Object::PriorityClass(pc) => {
            pc.preemption_policy
                .get_or_insert_with(|| "PreemptLowerPriority".into());
        }
        Object::StorageClass(sc) => {
            sc.reclaim_policy.get_or_insert_with(|| "Delete".into());
            sc.volume_binding_mode
                .get_or_insert_with(|| "Immediate".into());
        }
        Object::RoleBinding(rb) => {
            default_role_ref(&mut rb.role_ref.api_group);
            default_subjects(rb.subjects.as_mut());
        }
        Object::ClusterRoleBinding(rb) => {
            default_role_ref(&mut rb.role_ref.api_group);
            default_subjects(rb.subjects.as_mut());
        }
        Object::ConfigMap(_)
        | Object::ServiceAccount(_)
        | Object::Event(_)
        | Object::Lease(_)
        | Object::Role(_)
        | Object::ClusterRole(_)
        | Object::SelfSubjectAccessReview(_) => {}
    }
}

const RBAC_GROUP: &str = "rbac.authorization.k8s.io";

fn default_role_ref(api_group: &mut String) {
    if api_group.is_empty() {
        *api_group = RBAC_GROUP.into();
    }
}

fn default_subjects(subjects: Option<&mut Vec<k8s_openapi::api::rbac::v1::Subject>>) {
    for s in subjects.into_iter().flatten() {
        if s.api_group.as_deref().unwrap_or("").is_empty() {
            match s.kind.as_str() {
                "ServiceAccount" => s.api_group = Some(String::new()),
                "User" | "Group" => s.api_group = Some(RBAC_GROUP.into()),
                _ => {}
            }
        }
    }
}

fn default_protocol(p: &mut Option<String>) {
    if p.as_deref().unwrap_or("").is_empty() {
        *p = Some("TCP".into());
    }
}

fn pct(s: &str) -> IntOrString {
    IntOrString::String(s.into())
}

/// `SetDefaults_Deployment` (apps/v1) plus the pod template.
fn default_deployment(d: &mut Deployment) {
    let spec = d.spec.get_or_insert_with(Default::default);
    spec.replicas.get_or_insert(1);
    let strategy = spec.strategy.get_or_insert_with(Default::default);
    if strategy.type_.as_deref().unwrap_or("").is_empty() {
        strategy.type_ = Some("RollingUpdate".into());
    }
    if strategy.type_.as_deref() == Some("RollingUpdate") {
        let ru = strategy
            .rolling_update
            .get_or_insert_with(RollingUpdateDeployment::default);
        ru.max_unavailable.get_or_insert_with(|| pct("25%"));
        ru.max_surge.get_or_insert_with(|| pct("25%"));
    }
    spec.revision_history_limit.get_or_insert(10);
    spec.progress_deadline_seconds.get_or_insert(600);
    pod::default_pod_template(&mut spec.template);
}

/// `SetDefaults_StatefulSet` plus the template and claim templates.
fn default_stateful_set(s: &mut StatefulSet) {
    let spec = s.spec.get_or_insert_with(Default::default);
    if spec
        .pod_management_policy
        .as_deref()
        .unwrap_or("")
        .is_empty()
    {
        spec.pod_management_policy = Some("OrderedReady".into());
    }
    let us = spec
        .update_strategy
        .get_or_insert_with(StatefulSetUpdateStrategy::default);
    if us.type_.as_deref().unwrap_or("").is_empty() {
        us.type_ = Some("RollingUpdate".into());
        us.rolling_update
            .get_or_insert_with(RollingUpdateStatefulSetStrategy::default);
    }
    if us.type_.as_deref() == Some("RollingUpdate") {
        if let Some(ru) = us.rolling_update.as_mut() {
            ru.partition.get_or_insert(0);
        }
    }
    let policy = spec
        .persistent_volume_claim_retention_policy
        .get_or_insert_with(StatefulSetPersistentVolumeClaimRetentionPolicy::default);
    for f in [&mut policy.when_deleted, &mut policy.when_scaled] {
        if f.as_deref().unwrap_or("").is_empty() {
            *f = Some("Retain".into());
        }
    }
    spec.replicas.get_or_insert(1);
    spec.revision_history_limit.get_or_insert(10);
    pod::default_pod_template(&mut spec.template);
    for pvc in spec.volume_claim_templates.iter_mut().flatten() {
        let status = pvc.status.get_or_insert_with(Default::default);
        if status.phase.as_deref().unwrap_or("").is_empty() {
            status.phase = Some("Pending".into());
        }
        pod::default_pvc_spec(pvc.spec.get_or_insert_with(Default::default));
    }
}

/// `SetDefaults_DaemonSet` plus the template.
fn default_daemon_set(d: &mut DaemonSet) {
    let spec = d.spec.get_or_insert_with(Default::default);
    let us = spec
        .update_strategy
        .get_or_insert_with(DaemonSetUpdateStrategy::default);
    if us.type_.as_deref().unwrap_or("").is_empty() {
        us.type_ = Some("RollingUpdate".into());
    }
    if us.type_.as_deref() == Some("RollingUpdate") {
        let ru = us
            .rolling_update
            .get_or_insert_with(RollingUpdateDaemonSet::default);
        ru.max_unavailable.get_or_insert(IntOrString::Int(1));
        ru.max_surge.get_or_insert(IntOrString::Int(0));
    }
    spec.revision_history_limit.get_or_insert(10);
    pod::default_pod_template(&mut spec.template);
}

/// `SetDefaults_Job` (batch/v1, v1.35) plus the template.
fn default_job(j: &mut Job) {
    let spec = j.spec.get_or_insert_with(Default::default);
    if spec.completions.is_none() && spec.parallelism.is_none() {
        spec.completions = Some(1);
        spec.parallelism = Some(1);
    }
    spec.parallelism.get_or_insert(1);
    if spec.backoff_limit.is_none() {
        spec.backoff_limit = Some(if spec.backoff_limit_per_index.is_some() {
            i32::MAX
        } else {
            6
        });
    }
    if let Some(labels) = spec
        .template
        .metadata
        .as_ref()
        .and_then(|m| m.labels.clone())
    {
        if j.metadata.labels.as_ref().is_none_or(|l| l.is_empty()) {
            j.metadata.labels = Some(labels);
        }
    }
    spec.completion_mode
        .get_or_insert_with(|| "NonIndexed".into());
    spec.suspend.get_or_insert(false);
    if let Some(pfp) = spec.pod_failure_policy.as_mut() {
        for rule in pfp.rules.iter_mut() {
            for pattern in rule.on_pod_conditions.iter_mut().flatten() {
                if pattern.status.as_deref().unwrap_or("").is_empty() {
                    pattern.status = Some("True".into());
                }
            }
        }
    }
    if spec.pod_replacement_policy.is_none() {
        let policy = if spec.pod_failure_policy.is_some() {
            "Failed"
        } else {
            "TerminatingOrFailed"
        };
        spec.pod_replacement_policy = Some(policy.into());
    }
    pod::default_pod_template(&mut spec.template);
}

/// The Job strategy's `generateSelector` (registry PrepareForCreate, needs the UID): unless
/// `manualSelector` is true, labels the template with the job name and controller UID and
/// selects on `batch.kubernetes.io/controller-uid`.
pub fn generate_job_selector(j: &mut Job, uid: &str) {
    let name = j.metadata.name.clone().unwrap_or_default();
    let Some(spec) = j.spec.as_mut() else { return };
    if spec.manual_selector == Some(true) {
        return;
    }
    let labels = spec
        .template
        .metadata
        .get_or_insert_with(Default::default)
        .labels
        .get_or_insert_with(BTreeMap::new);
    for key in ["job-name", "batch.kubernetes.io/job-name"] {
        labels.entry(key.into()).or_insert_with(|| name.clone());
    }
    for key in ["controller-uid", "batch.kubernetes.io/controller-uid"] {
        labels.entry(key.into()).or_insert_with(|| uid.to_string());
    }
    spec.selector
        .get_or_insert_with(Default::default)
        .match_labels
        .get_or_insert_with(BTreeMap::new)
        .entry("batch.kubernetes.io/controller-uid".into())
        .or_insert_with(|| uid.to_string());
}

/// `SetDefaults_Service`, plus the registry's pure IP-family choice for a single-stack
/// IPv4 cluster and the `clusterIP`/`clusterIPs` sync (allocation itself happens later).
fn default_service(s: &mut Service) {
    let spec = s.spec.get_or_insert_with(Default::default);
    if spec.session_affinity.as_deref().unwrap_or("").is_empty() {
        spec.session_affinity = Some("None".into());
    }
    match spec.session_affinity.as_deref() {
        Some("None") => spec.session_affinity_config = None,
        Some("ClientIP") => {
            let missing = spec
                .session_affinity_config
                .as_ref()
                .and_then(|c| c.client_ip.as_ref())
                .and_then(|c| c.timeout_seconds)
                .is_none();
            if missing {
                spec.session_affinity_config = Some(SessionAffinityConfig {
                    client_ip: Some(ClientIPConfig {
                        timeout_seconds: Some(10800),
                    }),
                });
            }
        }
        _ => {}
    }
    if spec.type_.as_deref().unwrap_or("").is_empty() {
        spec.type_ = Some("ClusterIP".into());
    }
    for p in spec.ports.iter_mut().flatten() {
        default_protocol(&mut p.protocol);
        let unset = match &p.target_port {
            None => true,
            Some(IntOrString::Int(0)) => true,
            Some(IntOrString::String(s)) => s.is_empty(),
            Some(IntOrString::Int(_)) => false,
        };
        if unset {
            p.target_port = Some(IntOrString::Int(p.port));
        }
    }
    let ty = spec.type_.clone().unwrap_or_default();
    let externally_accessible = ty == "LoadBalancer"
        || ty == "NodePort"
        || (ty == "ClusterIP" && spec.external_ips.as_ref().is_some_and(|e| !e.is_empty()));
    if externally_accessible
        && spec
            .external_traffic_policy
            .as_deref()
            .unwrap_or("")
            .is_empty()
    {
        spec.external_traffic_policy = Some("Cluster".into());
    }
    if spec.internal_traffic_policy.is_none()
        && matches!(ty.as_str(), "NodePort" | "LoadBalancer" | "ClusterIP")
    {
        spec.internal_traffic_policy = Some("Cluster".into());
    }
    if ty == "LoadBalancer" {
        spec.allocate_load_balancer_node_ports.get_or_insert(true);
    }
    if ty == "ExternalName" {
        return;
    }
    // Registry normalization: clusterIP and clusterIPs[0] agree.
    let cip = spec.cluster_ip.clone().unwrap_or_default();
    let cips_empty = spec.cluster_ips.as_ref().is_none_or(|c| c.is_empty());
    if !cip.is_empty() && cips_empty {
        spec.cluster_ips = Some(vec![cip]);
    } else if cip.is_empty() && !cips_empty {
        spec.cluster_ip = spec.cluster_ips.as_ref().and_then(|c| c.first().cloned());
    }
    let headless = spec.cluster_ip.as_deref() == Some("None");
    let has_selector = spec.selector.as_ref().is_some_and(|s| !s.is_empty());
    if spec.ip_family_policy.is_none() {
        let policy = if headless && !has_selector {
            "RequireDualStack"
        } else {
            "SingleStack"
        };
        spec.ip_family_policy = Some(policy.into());
    }
    if spec.ip_families.as_ref().is_none_or(|f| f.is_empty()) {
        spec.ip_families = Some(vec!["IPv4".into()]);
    }
}

#[cfg(test)]
mod tests;

/// autoscaling/v2 `SetDefaults_HorizontalPodAutoscaler`: minReplicas 1, an 80% CPU target
/// when no metric is given, and a given behavior's missing rules filled in.
fn default_hpa(h: &mut k8s_openapi::api::autoscaling::v2::HorizontalPodAutoscaler) {
    use k8s_openapi::api::autoscaling::v2::{MetricSpec, MetricTarget, ResourceMetricSource};
    let spec = h.spec.get_or_insert_with(Default::default);
    spec.min_replicas.get_or_insert(1);
    if spec.metrics.as_ref().is_none_or(Vec::is_empty) {
        spec.metrics = Some(vec![MetricSpec {
            type_: "Resource".into(),
            resource: Some(ResourceMetricSource {
                name: "cpu".into(),
                target: MetricTarget {
                    type_: "Utilization".into(),
                    average_utilization: Some(80),
                    ..Default::default()
                },
            }),
            ..Default::default()
        }]);
    }
    if let Some(b) = spec.behavior.as_mut() {
        use crate::controllers::hpa::{default_scale_down, default_scale_up};
        let fill = |from: Option<k8s_openapi::api::autoscaling::v2::HPAScalingRules>,
                    mut to: k8s_openapi::api::autoscaling::v2::HPAScalingRules| {
            if let Some(f) = from {
                if f.select_policy.is_some() {
                    to.select_policy = f.select_policy;
                }
                if f.stabilization_window_seconds.is_some() {
                    to.stabilization_window_seconds = f.stabilization_window_seconds;
                }
                if f.policies.is_some() {
                    to.policies = f.policies;
                }
                if f.tolerance.is_some() {
                    to.tolerance = f.tolerance;
                }
            }
            to
        };
        b.scale_up = Some(fill(b.scale_up.take(), default_scale_up()));
        b.scale_down = Some(fill(b.scale_down.take(), default_scale_down()));
    }
}

/// `SetDefaults_NetworkPolicy` and `SetDefaults_NetworkPolicyPort`: ports default to TCP;
/// a policy without policyTypes is an Ingress policy, and an Egress one too when it has
/// egress rules. The internal type's podSelector is not a pointer, so it is always there.
fn default_network_policy(p: &mut k8s_openapi::api::networking::v1::NetworkPolicy) {
    let spec = p.spec.get_or_insert_with(Default::default);
    spec.pod_selector.get_or_insert_with(Default::default);
    let ports = spec
        .ingress
        .iter_mut()
        .flatten()
        .flat_map(|r| r.ports.iter_mut().flatten())
        .chain(
            spec.egress
                .iter_mut()
                .flatten()
                .flat_map(|r| r.ports.iter_mut().flatten()),
        );
    for port in ports {
        default_protocol(&mut port.protocol);
    }
    if spec.policy_types.as_ref().is_none_or(|t| t.is_empty()) {
        let mut types = vec!["Ingress".to_string()];
        if spec.egress.as_ref().is_some_and(|e| !e.is_empty()) {
            types.push("Egress".into());
        }
        spec.policy_types = Some(types);
    }
}
