//! Pod validation: `ValidatePodCreate`, `ValidatePodUpdate`, `ValidatePodSpec` and the pod
//! template rules workloads share.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{Pod, PodSpec, PodTemplateSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use super::container::{validate_containers, validate_init_containers, PodCtx};
use super::meta::*;
use super::names::*;
use super::resources::{validate_resource_requirements, ResourceNames};
use super::volumes::validate_volumes;
use super::{dns::*, scheduling::*};
use crate::apiserver::field_error::{BadValue, FieldError, Path};

/// The pod-spec fields a user may change on a running pod, as upstream lists them.
const UPDATABLE_POD_SPEC_FIELDS: &str = "`spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)";

/// `ValidatePodSpec`. `pod_meta` is given for real pods (ephemeral volume names).
pub fn validate_pod_spec(
    spec: &PodSpec,
    pod_meta: Option<&ObjectMeta>,
    path: &Path,
) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if spec.termination_grace_period_seconds.is_none() {
        errs.push(FieldError::required(
            &path.child("terminationGracePeriodSeconds"),
            "",
        ));
    }
    let (volumes, verrs) = validate_volumes(
        spec.volumes.as_deref().unwrap_or(&[]),
        pod_meta,
        &path.child("volumes"),
    );
    errs.extend(verrs);
    let ctx = PodCtx {
        volumes,
        grace_period: spec.termination_grace_period_seconds,
        restart_policy: spec.restart_policy.clone().unwrap_or_default(),
    };
    errs.extend(validate_containers(
        &spec.containers,
        &ctx,
        &path.child("containers"),
    ));
    errs.extend(validate_init_containers(
        spec.init_containers.as_deref().unwrap_or(&[]),
        &spec.containers,
        &ctx,
        &path.child("initContainers"),
    ));
    if let Some(r) = spec.resources.as_ref() {
        errs.extend(validate_resource_requirements(
            r,
            &path.child("resources"),
            ResourceNames::Pod,
        ));
    }
    if spec.host_network == Some(true) {
        for (i, c) in spec.containers.iter().enumerate() {
            for (j, p) in c.ports.iter().flatten().enumerate() {
                let hp = p.host_port.unwrap_or(0);
                if (pod_meta.is_some() || hp != 0) && hp != p.container_port {
                    let hp_path = path
                        .child("containers")
                        .index(i)
                        .child("ports")
                        .index(j)
                        .child("hostPort");
                    errs.push(FieldError::invalid(
                        &hp_path,
                        hp,
                        "must match `containerPort` when `hostNetwork` is true",
                    ));
                }
            }
        }
    }
    match spec.restart_policy.as_deref().unwrap_or("") {
        "Always" | "OnFailure" | "Never" => {}
        "" => errs.push(FieldError::required(&path.child("restartPolicy"), "")),
        rp => errs.push(FieldError::not_supported(
            &path.child("restartPolicy"),
            BadValue::typed_str(rp),
            &["Always", "OnFailure", "Never"],
        )),
    }
    match spec.dns_policy.as_deref().unwrap_or("") {
        "ClusterFirstWithHostNet" | "ClusterFirst" | "Default" | "None" => {}
        "" => errs.push(FieldError::required(&path.child("dnsPolicy"), "")),
        p => errs.push(FieldError::not_supported(
            &path.child("dnsPolicy"),
            BadValue::typed_str(p),
            &["ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"],
        )),
    }
    errs.extend(validate_labels(
        spec.node_selector.as_ref(),
        &path.child("nodeSelector"),
    ));
    errs.extend(validate_pod_security_context(
        spec,
        &path.child("securityContext"),
    ));
    if let Some(a) = spec.affinity.as_ref() {
        errs.extend(validate_affinity(a, &path.child("affinity")));
    }
    errs.extend(validate_dns_config(spec, &path.child("dnsConfig")));
    for (i, g) in spec.readiness_gates.iter().flatten().enumerate() {
        errs.extend(validate_qualified_name(
            &g.condition_type,
            &path.child("readinessGates").index(i).child("conditionType"),
        ));
    }
    let mut gates = std::collections::BTreeSet::new();
    for (i, g) in spec.scheduling_gates.iter().flatten().enumerate() {
        let gp = path.child("schedulingGates").index(i);
        errs.extend(validate_qualified_name(&g.name, &gp));
        if !gates.insert(g.name.clone()) {
            errs.push(FieldError::duplicate(&gp, g.name.as_str()));
        }
    }
    errs.extend(validate_topology_spread(
        spec,
        &path.child("topologySpreadConstraints"),
    ));
    for (field, value, f) in [
        (
            "serviceAccountName",
            spec.service_account_name.as_deref(),
            name_is_dns_subdomain as NameFn,
        ),
        ("nodeName", spec.node_name.as_deref(), name_is_dns_subdomain),
    ] {
        if let Some(v) = value.filter(|v| !v.is_empty()) {
            errs.extend(invalid_each(&path.child(field), v, f(v, false)));
        }
    }
    if let Some(v) = spec
        .active_deadline_seconds
        .filter(|v| *v < 1 || *v > i64::from(i32::MAX))
    {
        errs.push(FieldError::invalid(
            &path.child("activeDeadlineSeconds"),
            v,
            &inclusive_range_error(1, i64::from(i32::MAX)),
        ));
    }
    for (field, v) in [
        ("hostname", spec.hostname.as_deref()),
        ("subdomain", spec.subdomain.as_deref()),
    ] {
        if let Some(v) = v.filter(|v| !v.is_empty()) {
            errs.extend(validate_dns1123_label(v, &path.child(field)));
        }
    }
    errs.extend(validate_tolerations(
        spec.tolerations.as_deref().unwrap_or(&[]),
        &path.child("tolerations"),
    ));
    for (i, ha) in spec.host_aliases.iter().flatten().enumerate() {
        let hp = path.child("hostAliases").index(i);
        errs.extend(validate_ip(&ha.ip, &hp.child("ip")));
        for (j, h) in ha.hostnames.iter().flatten().enumerate() {
            errs.extend(validate_dns1123_subdomain(
                h,
                &hp.child("hostnames").index(j),
            ));
        }
    }
    if let Some(pc) = spec
        .priority_class_name
        .as_deref()
        .filter(|v| !v.is_empty())
    {
        errs.extend(invalid_each(
            &path.child("priorityClassName"),
            pc,
            name_is_dns_subdomain(pc, false),
        ));
    }
    if let Some(rc) = spec.runtime_class_name.as_deref() {
        errs.extend(invalid_each(
            &path.child("runtimeClassName"),
            rc,
            name_is_dns_subdomain(rc, false),
        ));
    }
    if let Some(pp) = spec.preemption_policy.as_deref() {
        match pp {
            "PreemptLowerPriority" | "Never" => {}
            "" => errs.push(FieldError::required(&path.child("preemptionPolicy"), "")),
            other => errs.push(FieldError::not_supported(
                &path.child("preemptionPolicy"),
                BadValue::typed_str(other),
                &["PreemptLowerPriority", "Never"],
            )),
        }
    }
    if let Some(os) = spec.os.as_ref() {
        if os.name.is_empty() {
            errs.push(FieldError::required(&path.child("os").child("name"), ""));
        } else if os.name != "linux" && os.name != "windows" {
            errs.push(FieldError::not_supported(
                &path.child("os").child("name"),
                BadValue::typed_str(&os.name),
                &["linux", "windows"],
            ));
        }
    }
    errs
}

fn validate_pod_security_context(spec: &PodSpec, path: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let Some(sc) = spec.security_context.as_ref() else {
        return errs;
    };
    let range = inclusive_range_error(0, 4_294_967_295);
    let valid = |v: i64| (0..=4_294_967_295).contains(&v);
    for (name, v) in [
        ("fsGroup", sc.fs_group),
        ("runAsUser", sc.run_as_user),
        ("runAsGroup", sc.run_as_group),
    ] {
        if let Some(v) = v.filter(|v| !valid(*v)) {
            errs.push(FieldError::invalid(&path.child(name), v, &range));
        }
    }
    for (i, g) in sc.supplemental_groups.iter().flatten().enumerate() {
        if !valid(*g) {
            errs.push(FieldError::invalid(
                &path.child("supplementalGroups").index(i),
                *g,
                &range,
            ));
        }
    }
    if spec.share_process_namespace == Some(true) && spec.host_pid == Some(true) {
        errs.push(FieldError::invalid(
            &path.child("shareProcessNamespace"),
            true,
            "ShareProcessNamespace and HostPID cannot both be enabled",
        ));
    }
    if let Some(p) = sc
        .fs_group_change_policy
        .as_deref()
        .filter(|p| !matches!(*p, "Always" | "OnRootMismatch"))
    {
        errs.push(FieldError::not_supported(
            &path.child("fsGroupChangePolicy"),
            BadValue::typed_str(p),
            &["Always", "OnRootMismatch"],
        ));
    }
    let mut sysctls = std::collections::BTreeSet::new();
    for (i, s) in sc.sysctls.iter().flatten().enumerate() {
        let np = path.child("sysctls").index(i).child("name");
        if s.name.is_empty() {
            errs.push(FieldError::required(&np, ""));
        } else if !sysctls.insert(s.name.clone()) {
            errs.push(FieldError::duplicate(&np, s.name.as_str()));
        }
    }
    errs
}

fn validate_pod_annotations(meta: &ObjectMeta, spec: &PodSpec, path: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let empty = BTreeMap::new();
    let a = meta.annotations.as_ref().unwrap_or(&empty);
    if let Some(v) = a.get("kubernetes.io/config.mirror") {
        if spec.node_name.as_deref().unwrap_or("").is_empty() {
            errs.push(FieldError::invalid(
                &path.key("kubernetes.io/config.mirror"),
                v.as_str(),
                "must set spec.nodeName if mirror pod annotation is set",
            ));
        }
    }
    if let Some(v) = a.get("controller.kubernetes.io/pod-deletion-cost") {
        if v.parse::<i32>().is_err() {
            errs.push(FieldError::invalid(
                &path.key("controller.kubernetes.io/pod-deletion-cost"),
                v.as_str(),
                "must be a 32bit integer",
            ));
        }
    }
    errs
}

/// `ValidatePodTemplateSpec` (template metadata, spec; no ephemeral containers).
pub fn validate_pod_template(t: &PodTemplateSpec, path: &Path) -> Vec<FieldError> {
    let meta = t.metadata.clone().unwrap_or_default();
    let spec = t.spec.clone().unwrap_or_default();
    let mut errs = validate_labels(meta.labels.as_ref(), &path.child("labels"));
    errs.extend(validate_annotations(
        meta.annotations.as_ref(),
        &path.child("annotations"),
    ));
    errs.extend(validate_pod_annotations(
        &meta,
        &spec,
        &path.child("annotations"),
    ));
    errs.extend(validate_pod_spec(&spec, None, &path.child("spec")));
    if spec
        .ephemeral_containers
        .as_ref()
        .is_some_and(|e| !e.is_empty())
    {
        errs.push(FieldError::forbidden(
            &path.child("spec").child("ephemeralContainers"),
            "ephemeral containers not allowed in pod template",
        ));
    }
    errs
}

fn validate_pod_metadata_and_spec(pod: &Pod) -> Vec<FieldError> {
    let meta_path = Path::new("metadata");
    let spec_path = Path::new("spec");
    let no_spec = PodSpec::default();
    let spec = pod.spec.as_ref().unwrap_or(&no_spec);
    let mut errs = validate_object_meta(&pod.metadata, true, name_is_dns_subdomain, &meta_path);
    errs.extend(validate_pod_annotations(
        &pod.metadata,
        spec,
        &meta_path.child("annotations"),
    ));
    errs.extend(validate_pod_spec(spec, Some(&pod.metadata), &spec_path));
    if spec
        .service_account_name
        .as_deref()
        .unwrap_or("")
        .is_empty()
    {
        for (vi, v) in spec.volumes.iter().flatten().enumerate() {
            for (si, s) in v
                .projected
                .iter()
                .flat_map(|p| p.sources.iter().flatten())
                .enumerate()
            {
                if s.service_account_token.is_some() {
                    let p = spec_path
                        .child("volumes")
                        .index(vi)
                        .child("projected")
                        .child("sources")
                        .index(si)
                        .child("serviceAccountToken");
                    errs.push(FieldError::forbidden(
                        &p,
                        "must not be specified when serviceAccountName is not set",
                    ));
                }
            }
        }
    }
    for (list, name) in [
        (&spec.containers[..], "containers"),
        (
            spec.init_containers.as_deref().unwrap_or_default(),
            "initContainers",
        ),
    ] {
        for (i, c) in list.iter().enumerate() {
            let image = c.image.as_deref().unwrap_or("");
            if image.len() != image.trim().len() {
                errs.push(FieldError::invalid(
                    &spec_path.child(name).index(i).child("image"),
                    image,
                    "must not have leading or trailing whitespace",
                ));
            }
        }
    }
    errs
}

/// `ValidatePodCreate`.
pub fn validate_pod_create(pod: &Pod) -> Vec<FieldError> {
    let mut errs = validate_pod_metadata_and_spec(pod);
    let no_spec = PodSpec::default();
    let spec = pod.spec.as_ref().unwrap_or(&no_spec);
    if spec
        .ephemeral_containers
        .as_ref()
        .is_some_and(|e| !e.is_empty())
    {
        errs.push(FieldError::forbidden(
            &Path::new("spec").child("ephemeralContainers"),
            "cannot be set on create",
        ));
    }
    if !spec.node_name.as_deref().unwrap_or("").is_empty()
        && spec
            .scheduling_gates
            .as_ref()
            .is_some_and(|g| !g.is_empty())
    {
        errs.push(FieldError::forbidden(
            &Path::new("spec").child("nodeName"),
            "cannot be set until all schedulingGates have been cleared",
        ));
    }
    errs
}

/// `ValidatePodUpdate`: only images, `activeDeadlineSeconds`, toleration additions and
/// scheduling-gate removals may change.
pub fn validate_pod_update(new: &Pod, old: &Pod) -> Vec<FieldError> {
    let sp = Path::new("spec");
    let mut errs =
        validate_object_meta_update(&new.metadata, &old.metadata, &Path::new("metadata"));
    errs.extend(validate_pod_metadata_and_spec(new));
    let (ns, os) = (
        new.spec.clone().unwrap_or_default(),
        old.spec.clone().unwrap_or_default(),
    );
    for (name, n, o) in [
        ("containers", ns.containers.clone(), os.containers.clone()),
        (
            "initContainers",
            ns.init_containers.clone().unwrap_or_default(),
            os.init_containers.clone().unwrap_or_default(),
        ),
    ] {
        if n.len() != o.len() {
            errs.push(FieldError::forbidden(
                &sp.child(name),
                "pod updates may not add or remove containers",
            ));
            return errs;
        }
        for (i, c) in n.iter().enumerate() {
            let image = c.image.as_deref().unwrap_or("");
            if image.is_empty() {
                errs.push(FieldError::required(
                    &sp.child(name).index(i).child("image"),
                    "",
                ));
            }
            if image.trim().len() != image.len() {
                errs.push(FieldError::invalid(
                    &sp.child(name).index(i).child("image"),
                    image,
                    "must not have leading or trailing whitespace",
                ));
            }
        }
    }
    if let Some(n) = ns.active_deadline_seconds {
        if n < 0 || n > i64::from(i32::MAX) {
            errs.push(FieldError::invalid(
                &sp.child("activeDeadlineSeconds"),
                n,
                &inclusive_range_error(0, i64::from(i32::MAX)),
            ));
            return errs;
        }
        if os.active_deadline_seconds.is_some_and(|o| o < n) {
            errs.push(FieldError::invalid(
                &sp.child("activeDeadlineSeconds"),
                n,
                "must be less than or equal to previous value",
            ));
            return errs;
        }
    } else if os.active_deadline_seconds.is_some() {
        errs.push(FieldError::invalid(
            &sp.child("activeDeadlineSeconds"),
            BadValue::Json("null".into()),
            "must not update from a positive integer to nil value",
        ));
    }
    let new_tols = ns.tolerations.clone().unwrap_or_default();
    let tolerations_ok = os.tolerations.iter().flatten().all(|o| {
        new_tols.iter().any(|n| {
            let mut o = o.clone();
            o.toleration_seconds = n.toleration_seconds;
            o == *n
        })
    });
    if !tolerations_ok {
        errs.push(FieldError::forbidden(
            &sp.child("tolerations"),
            "existing toleration can not be modified except its tolerationSeconds",
        ));
    } else {
        errs.extend(validate_tolerations(&new_tols, &sp.child("tolerations")));
    }
    let old_gates: Vec<&String> = os
        .scheduling_gates
        .iter()
        .flatten()
        .map(|g| &g.name)
        .collect();
    for (i, g) in ns.scheduling_gates.iter().flatten().enumerate() {
        if !old_gates.contains(&&g.name) {
            errs.push(FieldError::forbidden(
                &sp.child("schedulingGates").index(i).child("name"),
                &format!(
                    "only deletion is allowed, but found new scheduling gate '{}'",
                    g.name
                ),
            ));
        }
    }
    let mut munged = ns.clone();
    for (c, o) in munged.containers.iter_mut().zip(&os.containers) {
        c.image = o.image.clone();
    }
    for (c, o) in munged
        .init_containers
        .iter_mut()
        .flatten()
        .zip(os.init_containers.iter().flatten())
    {
        c.image = o.image.clone();
    }
    munged.active_deadline_seconds = os.active_deadline_seconds;
    munged.scheduling_gates = os.scheduling_gates.clone();
    munged.tolerations = os.tolerations.clone();
    if os.termination_grace_period_seconds.is_some_and(|g| g < 0)
        && munged.termination_grace_period_seconds == Some(1)
    {
        munged.termination_grace_period_seconds = os.termination_grace_period_seconds;
    }
    if !os.scheduling_gates.as_ref().is_none_or(|g| g.is_empty()) {
        munged.node_selector = os.node_selector.clone();
        munged.affinity = os.affinity.clone();
    }
    if munged != os {
        let diff = super::storage::spec_diff(&os, &munged);
        errs.push(FieldError::forbidden(
            &sp,
            &format!(
                "pod updates may not change fields other than {UPDATABLE_POD_SPEC_FIELDS}\n{diff}"
            ),
        ));
    }
    errs
}
