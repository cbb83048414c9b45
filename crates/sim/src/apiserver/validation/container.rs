//! Container validation (core `validateContainers`, `validateInitContainers` and what they
//! call): names, images, ports, env, mounts, probes, lifecycle, resources, security context.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::core::v1::{
    Container, EnvFromSource, EnvVar, HTTPGetAction, LifecycleHandler, Probe, ResourceRequirements,
    SecurityContext, Volume,
};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity as ApiQuantity;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::names::*;
use crate::apiserver::field_error::{BadValue, FieldError, GoJson, Path};
use crate::apiserver::quantity::{parse_quantity, Quantity};

/// Volumes declared by the pod, by name (only the ones that validated).
pub type Volumes<'a> = BTreeMap<String, &'a Volume>;

/// What container validation needs from the surrounding pod spec.
pub struct PodCtx<'a> {
    /// Declared volumes.
    pub volumes: Volumes<'a>,
    /// `terminationGracePeriodSeconds`.
    pub grace_period: Option<i64>,
    /// `restartPolicy`.
    pub restart_policy: String,
}

/// `validateContainers`.
pub fn validate_containers(cs: &[Container], ctx: &PodCtx<'_>, path: &Path) -> Vec<FieldError> {
    if cs.is_empty() {
        return vec![FieldError::required(path, "")];
    }
    let mut errs = Vec::new();
    let mut names = BTreeSet::new();
    for (i, c) in cs.iter().enumerate() {
        let p = path.index(i);
        errs.extend(validate_container_common(c, ctx, &p));
        if !names.insert(c.name.clone()) {
            errs.push(FieldError::duplicate(&p.child("name"), c.name.as_str()));
        }
        if let Some(l) = c.lifecycle.as_ref() {
            for (name, h) in [("postStart", &l.post_start), ("preStop", &l.pre_stop)] {
                if let Some(h) = h {
                    errs.extend(validate_lifecycle_handler(
                        h,
                        ctx.grace_period,
                        &p.child("lifecycle").child(name),
                    ));
                }
            }
        }
        errs.extend(validate_probes(c, ctx.grace_period, &p));
        if c.restart_policy.is_some() {
            errs.push(FieldError::forbidden(
                &p.child("restartPolicy"),
                "may not be set for non-init containers",
            ));
        }
    }
    errs.extend(host_port_conflicts(cs, path));
    errs
}

/// `validateInitContainers`.
pub fn validate_init_containers(
    cs: &[Container],
    regular: &[Container],
    ctx: &PodCtx<'_>,
    path: &Path,
) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut names: BTreeSet<String> = regular.iter().map(|c| c.name.clone()).collect();
    for (i, c) in cs.iter().enumerate() {
        let p = path.index(i);
        errs.extend(validate_container_common(c, ctx, &p));
        let mut restart_always = false;
        if let Some(rp) = c.restart_policy.as_deref() {
            if rp != "Always" {
                errs.push(FieldError::not_supported(
                    &p.child("restartPolicy"),
                    BadValue::typed_str(rp),
                    &["Always"],
                ));
            }
            restart_always = rp == "Always";
        }
        if names.contains(&c.name) {
            errs.push(FieldError::duplicate(&p.child("name"), c.name.as_str()));
        } else if !c.name.is_empty() {
            names.insert(c.name.clone());
        }
        errs.extend(host_port_conflicts(std::slice::from_ref(c), path));
        if restart_always {
            if let Some(l) = c.lifecycle.as_ref() {
                for (name, h) in [("postStart", &l.post_start), ("preStop", &l.pre_stop)] {
                    if let Some(h) = h {
                        errs.extend(validate_lifecycle_handler(
                            h,
                            ctx.grace_period,
                            &p.child("lifecycle").child(name),
                        ));
                    }
                }
            }
            errs.extend(validate_probes(c, ctx.grace_period, &p));
        } else {
            let msg = "may not be set for init containers without restartPolicy=Always";
            for (name, set) in [
                ("lifecycle", c.lifecycle.is_some()),
                ("livenessProbe", c.liveness_probe.is_some()),
                ("readinessProbe", c.readiness_probe.is_some()),
                ("startupProbe", c.startup_probe.is_some()),
            ] {
                if set {
                    errs.push(FieldError::forbidden(&p.child(name), msg));
                }
            }
        }
    }
    errs
}

fn validate_probes(c: &Container, grace: Option<i64>, p: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if let Some(pr) = c.liveness_probe.as_ref() {
        let lp = p.child("livenessProbe");
        errs.extend(validate_probe(pr, grace, &lp));
        if pr.success_threshold.unwrap_or(0) != 1 {
            errs.push(FieldError::invalid(
                &lp.child("successThreshold"),
                pr.success_threshold.unwrap_or(0),
                "must be 1",
            ));
        }
    }
    if let Some(pr) = c.readiness_probe.as_ref() {
        let rp = p.child("readinessProbe");
        errs.extend(validate_probe(pr, grace, &rp));
        if let Some(t) = pr.termination_grace_period_seconds {
            errs.push(FieldError::invalid(
                &rp.child("terminationGracePeriodSeconds"),
                t,
                "must not be set for readinessProbes",
            ));
        }
    }
    if let Some(pr) = c.startup_probe.as_ref() {
        let sp = p.child("startupProbe");
        errs.extend(validate_probe(pr, grace, &sp));
        if pr.success_threshold.unwrap_or(0) != 1 {
            errs.push(FieldError::invalid(
                &sp.child("successThreshold"),
                pr.success_threshold.unwrap_or(0),
                "must be 1",
            ));
        }
    }
    errs
}

/// `validateContainerCommon`.
fn validate_container_common(c: &Container, ctx: &PodCtx<'_>, p: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if c.name.is_empty() {
        errs.push(FieldError::required(&p.child("name"), ""));
    } else {
        errs.extend(validate_dns1123_label(&c.name, &p.child("name")));
    }
    if c.image.as_deref().unwrap_or("").is_empty() {
        errs.push(FieldError::required(&p.child("image"), ""));
    }
    match c.termination_message_policy.as_deref().unwrap_or("") {
        "File" | "FallbackToLogsOnError" => {}
        "" => errs.push(FieldError::required(
            &p.child("terminationMessagePolicy"),
            "",
        )),
        other => errs.push(FieldError::not_supported(
            &p.child("terminationMessagePolicy"),
            BadValue::typed_str(other),
            &["File", "FallbackToLogsOnError"],
        )),
    }
    errs.extend(validate_container_ports(c, &p.child("ports")));
    errs.extend(validate_env(
        c.env.as_deref().unwrap_or(&[]),
        &p.child("env"),
    ));
    errs.extend(validate_env_from(
        c.env_from.as_deref().unwrap_or(&[]),
        &p.child("envFrom"),
    ));
    errs.extend(validate_volume_mounts(
        c,
        &ctx.volumes,
        &p.child("volumeMounts"),
    ));
    errs.extend(validate_volume_devices(
        c,
        &ctx.volumes,
        &p.child("volumeDevices"),
    ));
    match c.image_pull_policy.as_deref().unwrap_or("") {
        "Always" | "IfNotPresent" | "Never" => {}
        "" => errs.push(FieldError::required(&p.child("imagePullPolicy"), "")),
        other => errs.push(FieldError::not_supported(
            &p.child("imagePullPolicy"),
            BadValue::typed_str(other),
            &["Always", "IfNotPresent", "Never"],
        )),
    }
    if let Some(r) = c.resources.as_ref() {
        errs.extend(validate_resource_requirements(
            r,
            &p.child("resources"),
            ResourceNames::Container,
        ));
    }
    let mut resize_seen = BTreeSet::new();
    for (i, rp) in c.resize_policy.iter().flatten().enumerate() {
        let path = p.child("resizePolicy");
        if !resize_seen.insert(rp.resource_name.clone()) {
            errs.push(FieldError::duplicate(
                &path.index(i),
                BadValue::typed_str(&rp.resource_name),
            ));
        }
        match rp.resource_name.as_str() {
            "cpu" | "memory" => {}
            "" => errs.push(FieldError::required(&path, "")),
            other => errs.push(FieldError::not_supported(
                &path,
                BadValue::typed_str(other),
                &["cpu", "memory"],
            )),
        }
        match rp.restart_policy.as_str() {
            "NotRequired" | "RestartContainer" => {}
            "" => errs.push(FieldError::required(&path, "")),
            other => errs.push(FieldError::not_supported(
                &path,
                BadValue::typed_str(other),
                &["NotRequired", "RestartContainer"],
            )),
        }
        if ctx.restart_policy == "Never" && rp.restart_policy != "NotRequired" {
            errs.push(FieldError::invalid(
                &path,
                BadValue::typed_str(&rp.restart_policy),
                "must be 'NotRequired' when `restartPolicy` is 'Never'",
            ));
        }
    }
    if let Some(sc) = c.security_context.as_ref() {
        errs.extend(validate_security_context(sc, &p.child("securityContext")));
    }
    errs
}

fn validate_container_ports(c: &Container, path: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut names = BTreeSet::new();
    for (i, port) in c.ports.iter().flatten().enumerate() {
        let p = path.index(i);
        if let Some(name) = port.name.as_deref().filter(|n| !n.is_empty()) {
            let msgs = is_valid_port_name(name);
            if !msgs.is_empty() {
                errs.extend(invalid_each(&p.child("name"), name, msgs));
            } else if !names.insert(name.to_string()) {
                errs.push(FieldError::duplicate(&p.child("name"), name));
            }
        }
        if port.container_port == 0 {
            errs.push(FieldError::required(&p.child("containerPort"), ""));
        } else {
            for m in is_valid_port_num(i64::from(port.container_port)) {
                errs.push(FieldError::invalid(
                    &p.child("containerPort"),
                    port.container_port,
                    &m,
                ));
            }
        }
        if let Some(hp) = port.host_port.filter(|h| *h != 0) {
            for m in is_valid_port_num(i64::from(hp)) {
                errs.push(FieldError::invalid(&p.child("hostPort"), hp, &m));
            }
        }
        errs.extend(validate_protocol(
            port.protocol.as_deref(),
            &p.child("protocol"),
        ));
    }
    errs
}

/// Protocol required and one of SCTP, TCP, UDP.
pub fn validate_protocol(proto: Option<&str>, path: &Path) -> Vec<FieldError> {
    match proto.unwrap_or("") {
        "TCP" | "UDP" | "SCTP" => Vec::new(),
        "" => vec![FieldError::required(path, "")],
        other => vec![FieldError::not_supported(
            path,
            BadValue::typed_str(other),
            &["SCTP", "TCP", "UDP"],
        )],
    }
}

fn host_port_conflicts(cs: &[Container], path: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut seen = BTreeSet::new();
    for (ci, c) in cs.iter().enumerate() {
        for (pi, port) in c.ports.iter().flatten().enumerate() {
            let hp = port.host_port.unwrap_or(0);
            if hp == 0 {
                continue;
            }
            let key = format!(
                "{}/{}/{}",
                port.protocol.as_deref().unwrap_or(""),
                port.host_ip.as_deref().unwrap_or(""),
                hp
            );
            if !seen.insert(key.clone()) {
                errs.push(FieldError::duplicate(
                    &path.index(ci).child("ports").index(pi).child("hostPort"),
                    key,
                ));
            }
        }
    }
    errs
}

/// `IsRelaxedEnvVarName` (RelaxedEnvironmentVariableValidation is GA).
fn is_relaxed_env_var_name(v: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if v.is_empty() {
        errs.push("environment variable name must be non-empty".to_string());
    }
    if v.chars()
        .any(|c| !c.is_ascii() || c.is_ascii_control() || c == '=')
    {
        errs.push("a valid environment variable name must consist only of printable ASCII characters other than '='".to_string());
    }
    errs
}

const ENV_FIELD_PATHS: &[&str] = &[
    "metadata.name",
    "metadata.namespace",
    "metadata.uid",
    "spec.nodeName",
    "spec.serviceAccountName",
    "status.hostIP",
    "status.hostIPs",
    "status.podIP",
    "status.podIPs",
];
const CONVERTIBLE_FIELD_PATHS: &[&str] = &[
    "metadata.name",
    "metadata.namespace",
    "metadata.uid",
    "metadata.labels",
    "metadata.annotations",
    "spec.nodeName",
    "spec.restartPolicy",
    "spec.serviceAccountName",
    "spec.schedulerName",
    "status.phase",
    "status.hostIP",
    "status.hostIPs",
    "status.podIP",
    "status.podIPs",
];

/// `validateObjectFieldSelector` for env or volume downward API items.
pub fn validate_field_ref(
    api_version: Option<&str>,
    field_path: &str,
    allowed: &[&str],
    path: &Path,
) -> Vec<FieldError> {
    if api_version.unwrap_or("").is_empty() {
        return vec![FieldError::required(&path.child("apiVersion"), "")];
    }
    if field_path.is_empty() {
        return vec![FieldError::required(&path.child("fieldPath"), "")];
    }
    let (base, subscript) = match field_path.split_once('[') {
        Some((b, rest)) if rest.ends_with(']') => (b, Some(&rest[..rest.len() - 1])),
        _ => (field_path, None),
    };
    if !CONVERTIBLE_FIELD_PATHS.contains(&base)
        || (subscript.is_some() && !matches!(base, "metadata.labels" | "metadata.annotations"))
    {
        return vec![FieldError::invalid(
            &path.child("fieldPath"),
            field_path,
            &format!("error converting fieldPath: field label not supported: {field_path}"),
        )];
    }
    if let Some(sub) = subscript {
        let key = sub.trim_matches('\'');
        let key = if base == "metadata.annotations" {
            key.to_lowercase()
        } else {
            key.to_string()
        };
        return validate_qualified_name(&key, path);
    }
    if !allowed.contains(&base) {
        let mut sorted: Vec<&str> = allowed.to_vec();
        sorted.sort();
        return vec![FieldError::not_supported(
            &path.child("fieldPath"),
            base,
            &sorted,
        )];
    }
    Vec::new()
}

fn validate_env(vars: &[EnvVar], path: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    for (i, ev) in vars.iter().enumerate() {
        let p = path.index(i);
        if ev.name.is_empty() {
            errs.push(FieldError::required(&p.child("name"), ""));
        } else {
            errs.extend(invalid_each(
                &p.child("name"),
                &ev.name,
                is_relaxed_env_var_name(&ev.name),
            ));
        }
        let Some(from) = ev.value_from.as_ref() else {
            continue;
        };
        let vp = p.child("valueFrom");
        let mut n = 0;
        if let Some(f) = from.field_ref.as_ref() {
            n += 1;
            errs.extend(validate_field_ref(
                f.api_version.as_deref(),
                &f.field_path,
                ENV_FIELD_PATHS,
                &vp.child("fieldRef"),
            ));
        }
        if let Some(r) = from.resource_field_ref.as_ref() {
            n += 1;
            let rp = vp.child("resourceFieldRef");
            if r.resource.is_empty() {
                errs.push(FieldError::required(&rp.child("resource"), ""));
            } else if !RESOURCE_FIELD_PATHS.contains(&r.resource.as_str())
                && !r.resource.starts_with("requests.hugepages-")
                && !r.resource.starts_with("limits.hugepages-")
            {
                errs.push(FieldError::not_supported(
                    &rp.child("resource"),
                    r.resource.as_str(),
                    RESOURCE_FIELD_PATHS,
                ));
            }
        }
        for (kind, sel) in [
            (
                "configMapKeyRef",
                from.config_map_key_ref.as_ref().map(|s| (&s.name, &s.key)),
            ),
            (
                "secretKeyRef",
                from.secret_key_ref.as_ref().map(|s| (&s.name, &s.key)),
            ),
        ] {
            let Some((name, key)) = sel else { continue };
            n += 1;
            let kp = vp.child(kind);
            errs.extend(invalid_each(
                &kp.child("name"),
                name,
                name_is_dns_subdomain(name, false),
            ));
            if key.is_empty() {
                errs.push(FieldError::required(&kp.child("key"), ""));
            } else {
                errs.extend(invalid_each(&kp.child("key"), key, is_config_map_key(key)));
            }
        }
        if n == 0 {
            errs.push(FieldError::invalid(&vp, "", "must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef` or `secretKeyRef`"));
        } else if ev.value.as_deref().is_some_and(|v| !v.is_empty()) {
            errs.push(FieldError::invalid(
                &vp,
                "",
                "may not be specified when `value` is not empty",
            ));
        } else if n > 1 {
            errs.push(FieldError::invalid(
                &vp,
                "",
                "may not have more than one field specified at a time",
            ));
        }
    }
    errs
}

const RESOURCE_FIELD_PATHS: &[&str] = &[
    "limits.cpu",
    "limits.ephemeral-storage",
    "limits.memory",
    "requests.cpu",
    "requests.ephemeral-storage",
    "requests.memory",
];

fn validate_env_from(sources: &[EnvFromSource], path: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    for (i, s) in sources.iter().enumerate() {
        let p = path.index(i);
        if let Some(prefix) = s.prefix.as_deref().filter(|x| !x.is_empty()) {
            errs.extend(invalid_each(
                &p.child("prefix"),
                prefix,
                is_relaxed_env_var_name(prefix),
            ));
        }
        let mut n = 0;
        for (kind, name) in [
            ("configMapRef", s.config_map_ref.as_ref().map(|r| &r.name)),
            ("secretRef", s.secret_ref.as_ref().map(|r| &r.name)),
        ] {
            let Some(name) = name else { continue };
            n += 1;
            let np = p.child(kind).child("name");
            if name.is_empty() {
                errs.push(FieldError::required(&np, ""));
            } else {
                errs.extend(invalid_each(&np, name, name_is_dns_subdomain(name, true)));
            }
        }
        if n == 0 {
            errs.push(FieldError::invalid(
                path,
                "",
                "must specify one of: `configMapRef` or `secretRef`",
            ));
        } else if n > 1 {
            errs.push(FieldError::invalid(
                path,
                "",
                "may not have more than one field specified at a time",
            ));
        }
    }
    errs
}

/// `validateLocalDescendingPath`: relative and without `..` elements.
pub fn validate_local_descending_path(target: &str, path: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if target.starts_with('/') {
        errs.push(FieldError::invalid(path, target, "must be a relative path"));
    }
    errs.extend(validate_no_backsteps(target, path));
    errs
}

/// `validatePathNoBacksteps`.
pub fn validate_no_backsteps(target: &str, path: &Path) -> Vec<FieldError> {
    if target.split('/').any(|s| s == "..") {
        vec![FieldError::invalid(path, target, "must not contain '..'")]
    } else {
        Vec::new()
    }
}

fn validate_volume_mounts(c: &Container, vols: &Volumes<'_>, path: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let devices: BTreeMap<&str, &str> = c
        .volume_devices
        .iter()
        .flatten()
        .map(|d| (d.name.as_str(), d.device_path.as_str()))
        .collect();
    let mut mountpoints = BTreeSet::new();
    let privileged = c.security_context.as_ref().and_then(|s| s.privileged) == Some(true);
    for (i, m) in c.volume_mounts.iter().flatten().enumerate() {
        let p = path.index(i);
        if m.name.is_empty() {
            errs.push(FieldError::required(&p.child("name"), ""));
        }
        if !vols.contains_key(&m.name) {
            errs.push(FieldError::not_found(&p.child("name"), m.name.as_str()));
        }
        if m.mount_path.is_empty() {
            errs.push(FieldError::required(&p.child("mountPath"), ""));
        }
        if !mountpoints.insert(m.mount_path.clone()) {
            errs.push(FieldError::invalid(
                &p.child("mountPath"),
                m.mount_path.as_str(),
                "must be unique",
            ));
        }
        if devices.contains_key(m.name.as_str()) {
            errs.push(FieldError::invalid(
                &p.child("name"),
                m.name.as_str(),
                "must not already exist in volumeDevices",
            ));
        }
        if devices.values().any(|d| *d == m.mount_path) {
            errs.push(FieldError::invalid(
                &p.child("mountPath"),
                m.mount_path.as_str(),
                "must not already exist as a path in volumeDevices",
            ));
        }
        let sub_path = m.sub_path.as_deref().unwrap_or("");
        let sub_expr = m.sub_path_expr.as_deref().unwrap_or("");
        if vols.get(&m.name).is_some_and(|v| v.image.is_some()) {
            if !sub_path.is_empty() {
                errs.push(FieldError::invalid(
                    &p.child("subPath"),
                    sub_path,
                    "not allowed in image volume sources",
                ));
            }
            if !sub_expr.is_empty() {
                errs.push(FieldError::invalid(
                    &p.child("subPathExpr"),
                    sub_expr,
                    "not allowed in image volume sources",
                ));
            }
        }
        if !sub_path.is_empty() {
            errs.extend(validate_local_descending_path(
                sub_path,
                &path.child("subPath"),
            ));
        }
        if !sub_expr.is_empty() {
            if !sub_path.is_empty() {
                errs.push(FieldError::invalid(
                    &p.child("subPathExpr"),
                    sub_expr,
                    "subPathExpr and subPath are mutually exclusive",
                ));
            }
            errs.extend(validate_local_descending_path(
                sub_expr,
                &path.child("subPathExpr"),
            ));
        }
        if let Some(mp) = m.mount_propagation.as_deref() {
            let mpp = path.child("mountPropagation");
            if !matches!(mp, "Bidirectional" | "HostToContainer" | "None") {
                errs.push(FieldError::not_supported(
                    &mpp,
                    BadValue::typed_str(mp),
                    &["Bidirectional", "HostToContainer", "None"],
                ));
            }
            if mp == "Bidirectional" && !privileged {
                errs.push(FieldError::forbidden(
                    &mpp,
                    "Bidirectional mount propagation is available only to privileged containers",
                ));
            }
        }
        if let Some(rro) = m.recursive_read_only.as_deref() {
            let rp = path.child("recursiveReadOnly");
            match rro {
                "Disabled" => {}
                "Enabled" | "IfPossible" => {
                    if m.read_only != Some(true) {
                        errs.push(FieldError::forbidden(
                            &rp,
                            "may only be specified when readOnly is true",
                        ));
                    }
                    if m.mount_propagation.as_deref().is_some_and(|x| x != "None") {
                        errs.push(FieldError::forbidden(
                            &rp,
                            "may only be specified when mountPropagation is None or not specified",
                        ));
                    }
                }
                other => errs.push(FieldError::not_supported(
                    &rp,
                    BadValue::typed_str(other),
                    &["Disabled", "Enabled", "IfPossible"],
                )),
            }
        }
    }
    errs
}

fn validate_volume_devices(c: &Container, vols: &Volumes<'_>, path: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mounts: BTreeMap<&str, &str> = c
        .volume_mounts
        .iter()
        .flatten()
        .map(|m| (m.name.as_str(), m.mount_path.as_str()))
        .collect();
    let (mut paths, mut names) = (BTreeSet::new(), BTreeSet::new());
    for (i, d) in c.volume_devices.iter().flatten().enumerate() {
        let p = path.index(i);
        let vol = vols.get(&d.name);
        if d.name.is_empty() {
            errs.push(FieldError::required(&p.child("name"), ""));
        }
        if names.contains(&d.name) {
            errs.push(FieldError::invalid(
                &p.child("name"),
                d.name.as_str(),
                "must be unique",
            ));
        }
        match vol {
            Some(v) if v.persistent_volume_claim.is_none() && v.ephemeral.is_none() => errs.push(FieldError::invalid(
                &p.child("name"),
                d.name.as_str(),
                "can only use volume source type of PersistentVolumeClaim or Ephemeral for block mode",
            )),
            Some(_) => {}
            None => errs.push(FieldError::not_found(&p.child("name"), d.name.as_str())),
        }
        if d.device_path.is_empty() {
            errs.push(FieldError::required(&p.child("devicePath"), ""));
        }
        if paths.contains(&d.device_path) {
            errs.push(FieldError::invalid(
                &p.child("devicePath"),
                d.device_path.as_str(),
                "must be unique",
            ));
        }
        if !d.device_path.is_empty() && d.device_path.split('/').any(|s| s == "..") {
            errs.push(FieldError::invalid(
                &p.child("devicePath"),
                d.device_path.as_str(),
                "can not contain backsteps ('..')",
            ));
        } else {
            paths.insert(d.device_path.clone());
        }
        if mounts.contains_key(d.name.as_str()) {
            errs.push(FieldError::invalid(
                &p.child("name"),
                d.name.as_str(),
                "must not already exist in volumeMounts",
            ));
        }
        if mounts.values().any(|m| *m == d.device_path) {
            errs.push(FieldError::invalid(
                &p.child("devicePath"),
                d.device_path.as_str(),
                "must not already exist as a path in volumeMounts",
            ));
        }
        if !d.name.is_empty() {
            names.insert(d.name.clone());
        }
    }
    errs
}

/// `ValidatePortNumOrName` for probe and service target ports.
pub fn validate_port_num_or_name(port: &IntOrString, path: &Path) -> Vec<FieldError> {
    match port {
        IntOrString::Int(n) => is_valid_port_num(i64::from(*n))
            .into_iter()
            .map(|m| FieldError::invalid(path, *n, &m))
            .collect(),
        IntOrString::String(s) => invalid_each(path, s, is_valid_port_name(s)),
    }
}

fn validate_http_get(h: &HTTPGetAction, path: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if h.path.as_deref().unwrap_or("").is_empty() {
        errs.push(FieldError::required(&path.child("path"), ""));
    }
    errs.extend(validate_port_num_or_name(&h.port, &path.child("port")));
    let scheme = h.scheme.as_deref().unwrap_or("");
    if scheme != "HTTP" && scheme != "HTTPS" {
        errs.push(FieldError::not_supported(
            &path.child("scheme"),
            BadValue::typed_str(scheme),
            &["HTTP", "HTTPS"],
        ));
    }
    for header in h.http_headers.iter().flatten() {
        let ok = !header.name.is_empty()
            && header
                .name
                .bytes()
                .all(|c| c.is_ascii_alphanumeric() || c == b'-');
        if !ok {
            let msg = regex_error(
                "a valid HTTP header must consist of alphanumeric characters or '-'",
                "[-A-Za-z0-9]+",
                &["X-Header-Name"],
            );
            errs.push(FieldError::invalid(
                &path.child("httpHeaders"),
                header.name.as_str(),
                &msg,
            ));
        }
    }
    errs
}

/// The handler parts probes and lifecycle hooks share (`validateHandler`).
struct Handler<'a> {
    exec: Option<Option<&'a Vec<String>>>,
    http_get: Option<&'a HTTPGetAction>,
    tcp_port: Option<&'a IntOrString>,
    grpc_port: Option<i32>,
    sleep: Option<i64>,
}

fn validate_handler(h: Handler<'_>, grace: Option<i64>, path: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut n = 0;
    let mut take = |name: &str, errs: &mut Vec<FieldError>| {
        n += 1;
        if n > 1 {
            errs.push(FieldError::forbidden(
                &path.child(name),
                "may not specify more than 1 handler type",
            ));
            false
        } else {
            true
        }
    };
    if let Some(cmd) = h.exec {
        if take("exec", &mut errs) && cmd.is_none_or(|c| c.is_empty()) {
            errs.push(FieldError::required(
                &path.child("exec").child("command"),
                "",
            ));
        }
    }
    if let Some(g) = h.http_get {
        if take("httpGet", &mut errs) {
            errs.extend(validate_http_get(g, &path.child("httpGet")));
        }
    }
    if let Some(port) = h.tcp_port {
        if take("tcpSocket", &mut errs) {
            errs.extend(validate_port_num_or_name(
                port,
                &path.child("tcpSocket").child("port"),
            ));
        }
    }
    if let Some(port) = h.grpc_port {
        if take("grpc", &mut errs) {
            errs.extend(validate_port_num_or_name(
                &IntOrString::Int(port),
                &path.child("grpc").child("port"),
            ));
        }
    }
    if let Some(secs) = h.sleep {
        if take("sleep", &mut errs) {
            if let Some(g) = grace.filter(|g| secs < 0 || secs > *g) {
                errs.push(FieldError::invalid(
                    &path.child("sleep"),
                    secs,
                    &format!(
                        "must be non-negative and less than terminationGracePeriodSeconds ({g})"
                    ),
                ));
            }
        }
    }
    if n == 0 {
        errs.push(FieldError::required(path, "must specify a handler type"));
    }
    errs
}

fn validate_lifecycle_handler(
    h: &LifecycleHandler,
    grace: Option<i64>,
    path: &Path,
) -> Vec<FieldError> {
    validate_handler(
        Handler {
            exec: h.exec.as_ref().map(|e| e.command.as_ref()),
            http_get: h.http_get.as_ref(),
            tcp_port: h.tcp_socket.as_ref().map(|t| &t.port),
            grpc_port: None,
            sleep: h.sleep.as_ref().map(|s| s.seconds),
        },
        grace,
        path,
    )
}

fn validate_probe(p: &Probe, grace: Option<i64>, path: &Path) -> Vec<FieldError> {
    let mut errs = validate_handler(
        Handler {
            exec: p.exec.as_ref().map(|e| e.command.as_ref()),
            http_get: p.http_get.as_ref(),
            tcp_port: p.tcp_socket.as_ref().map(|t| &t.port),
            grpc_port: p.grpc.as_ref().map(|g| g.port),
            sleep: None,
        },
        grace,
        path,
    );
    for (name, v) in [
        ("initialDelaySeconds", p.initial_delay_seconds),
        ("timeoutSeconds", p.timeout_seconds),
        ("periodSeconds", p.period_seconds),
        ("successThreshold", p.success_threshold),
        ("failureThreshold", p.failure_threshold),
    ] {
        errs.extend(validate_nonnegative(
            i64::from(v.unwrap_or(0)),
            &path.child(name),
        ));
    }
    if let Some(t) = p.termination_grace_period_seconds.filter(|t| *t <= 0) {
        errs.push(FieldError::invalid(
            &path.child("terminationGracePeriodSeconds"),
            t,
            "must be greater than 0",
        ));
    }
    errs
}

fn validate_nonnegative(v: i64, path: &Path) -> Vec<FieldError> {
    super::meta::validate_nonnegative(v, path)
}

/// Which resource names a resource list accepts.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum ResourceNames {
    /// Container requests/limits: cpu, memory, ephemeral-storage, hugepages, extended.
    Container,
    /// Pod-level resources: cpu, memory, hugepages.
    Pod,
}

fn is_hugepages(name: &str) -> bool {
    name.starts_with("hugepages-")
}

/// Native resources are unprefixed or in the `kubernetes.io/` namespace.
pub fn is_native_resource(name: &str) -> bool {
    !name.contains('/') || name.contains("kubernetes.io/")
}

/// `IsExtendedResourceName`.
pub fn is_extended_resource(name: &str) -> bool {
    if is_native_resource(name) || name.starts_with("requests.") {
        return false;
    }
    is_qualified_name(&format!("requests.{name}")).is_empty()
}

/// `IsOvercommitAllowed`: native, non-hugepage resources.
pub fn is_overcommit_allowed(name: &str) -> bool {
    is_native_resource(name) && !is_hugepages(name)
}

/// `IsStandardResourceName`.
pub fn is_standard_resource_name(name: &str) -> bool {
    const STANDARD: &[&str] = &[
        "cpu",
        "memory",
        "ephemeral-storage",
        "requests.cpu",
        "requests.memory",
        "requests.ephemeral-storage",
        "limits.cpu",
        "limits.memory",
        "limits.ephemeral-storage",
        "pods",
        "services",
        "replicationcontrollers",
        "resourcequotas",
        "secrets",
        "persistentvolumeclaims",
        "storage",
        "requests.storage",
        "services.nodeports",
        "services.loadbalancers",
        "configmaps",
    ];
    STANDARD.contains(&name) || is_hugepages(name) || name.starts_with("requests.hugepages-")
}

fn validate_resource_name(name: &str, path: &Path, kind: ResourceNames) -> Vec<FieldError> {
    let msgs = is_qualified_name(name);
    if !msgs.is_empty() {
        return msgs
            .iter()
            .map(|m| FieldError::invalid(path, BadValue::typed_str(name), m))
            .collect();
    }
    if !name.contains('/') && !is_standard_resource_name(name) {
        return vec![FieldError::invalid(
            path,
            BadValue::typed_str(name),
            "must be a standard resource type or fully qualified",
        )];
    }
    match kind {
        ResourceNames::Container => {
            if !name.contains('/') {
                if !matches!(name, "cpu" | "memory" | "ephemeral-storage") && !is_hugepages(name) {
                    return vec![FieldError::invalid(
                        path,
                        BadValue::typed_str(name),
                        "must be a standard resource for containers",
                    )];
                }
            } else if !is_native_resource(name) && !is_extended_resource(name) {
                return vec![FieldError::invalid(
                    path,
                    BadValue::typed_str(name),
                    "doesn't follow extended resource name standard",
                )];
            }
        }
        ResourceNames::Pod => {
            if !matches!(name, "cpu" | "memory") && !is_hugepages(name) {
                return vec![FieldError::not_supported(
                    path,
                    BadValue::typed_str(name),
                    &["cpu", "memory"],
                )];
            }
        }
    }
    Vec::new()
}

/// A quantity as the validator sees it (unparseable ones are a decode error upstream).
pub fn qty(q: &ApiQuantity) -> Option<Quantity> {
    parse_quantity(q.0.trim()).ok()
}

/// `ValidateResourceQuantityValue`: non-negative, and whole for integer resources.
pub fn validate_resource_quantity_value(name: &str, q: &Quantity, path: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if q.sign() < 0 {
        errs.push(FieldError::invalid(
            path,
            q.canonical(),
            super::meta::IS_NEGATIVE_MSG,
        ));
    }
    const INTEGER: &[&str] = &[
        "pods",
        "services",
        "replicationcontrollers",
        "resourcequotas",
        "secrets",
        "configmaps",
        "persistentvolumeclaims",
        "services.nodeports",
        "services.loadbalancers",
    ];
    let integer =
        INTEGER.contains(&name) || name.starts_with("count/") || is_extended_resource(name);
    if integer && q.milli_value() % 1000 != 0 {
        errs.push(FieldError::invalid(
            path,
            BadValue::Json(crate::apiserver::field_error::go_json_quote(&q.canonical())),
            "must be an integer",
        ));
    }
    errs
}

/// `validateResourceRequirements`: names, quantities, requests ≤ limits.
pub fn validate_resource_requirements(
    r: &ResourceRequirements,
    path: &Path,
    kind: ResourceNames,
) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let (lim_path, req_path) = (path.child("limits"), path.child("requests"));
    let empty = BTreeMap::new();
    let limits = r.limits.as_ref().unwrap_or(&empty);
    let requests = r.requests.as_ref().unwrap_or(&empty);
    let (mut cpu_mem, mut huge) = (false, false);
    for (name, q) in limits {
        let p = lim_path.key(name);
        errs.extend(validate_resource_name(name, &p, kind));
        if let Some(v) = qty(q) {
            errs.extend(validate_resource_quantity_value(name, &v, &p));
        }
        huge |= is_hugepages(name);
        cpu_mem |= name == "cpu" || name == "memory";
    }
    for (name, q) in requests {
        let p = req_path.key(name);
        errs.extend(validate_resource_name(name, &p, kind));
        let Some(v) = qty(q) else { continue };
        errs.extend(validate_resource_quantity_value(name, &v, &p));
        match limits.get(name).and_then(qty) {
            Some(limit) => {
                if v != limit && !is_overcommit_allowed(name) {
                    errs.push(FieldError::invalid(
                        &req_path,
                        v.canonical(),
                        &format!("must be equal to {name} limit of {limit}"),
                    ));
                } else if v > limit {
                    errs.push(FieldError::invalid(
                        &req_path,
                        v.canonical(),
                        &format!("must be less than or equal to {name} limit of {limit}"),
                    ));
                }
            }
            None if !limits.contains_key(name) && !is_overcommit_allowed(name) => {
                errs.push(FieldError::required(
                    &lim_path,
                    "Limit must be set for non overcommitable resources",
                ));
            }
            None => {}
        }
        huge |= is_hugepages(name);
        cpu_mem |= name == "cpu" || name == "memory";
    }
    if huge && !cpu_mem {
        errs.push(FieldError::forbidden(
            path,
            "HugePages require cpu or memory",
        ));
    }
    errs
}

/// `ValidateSecurityContext` (container level).
pub fn validate_security_context(sc: &SecurityContext, path: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let id_range = inclusive_range_error(0, 4_294_967_295);
    for (name, v) in [
        ("runAsUser", sc.run_as_user),
        ("runAsGroup", sc.run_as_group),
    ] {
        if let Some(v) = v.filter(|v| !(0..=4_294_967_295).contains(v)) {
            errs.push(FieldError::invalid(&path.child(name), v, &id_range));
        }
    }
    if let Some(pm) = sc.proc_mount.as_deref() {
        if pm != "Default" && pm != "Unmasked" {
            errs.push(FieldError::not_supported(
                &path.child("procMount"),
                BadValue::typed_str(pm),
                &["Default", "Unmasked"],
            ));
        }
    }
    if let Some(sp) = sc.seccomp_profile.as_ref() {
        let p = path.child("seccompProfile");
        match sp.type_.as_str() {
            "Localhost" | "RuntimeDefault" | "Unconfined" => {}
            "" => errs.push(FieldError::required(
                &p.child("type"),
                "type is required when seccompProfile is set",
            )),
            other => errs.push(FieldError::not_supported(
                &p.child("type"),
                BadValue::typed_str(other),
                &["Localhost", "RuntimeDefault", "Unconfined"],
            )),
        }
        if sp.type_ == "Localhost" && sp.localhost_profile.is_none() {
            errs.push(FieldError::required(
                &p.child("localhostProfile"),
                "must be set when seccomp type is Localhost",
            ));
        }
    }
    if sc.allow_privilege_escalation == Some(false) {
        if sc.privileged == Some(true) {
            errs.push(FieldError::invalid(
                path,
                security_context_json(sc),
                "cannot set `allowPrivilegeEscalation` to false and `privileged` to true",
            ));
        }
        let adds = sc.capabilities.as_ref().and_then(|c| c.add.as_ref());
        if adds.is_some_and(|a| a.iter().any(|c| c == "CAP_SYS_ADMIN")) {
            errs.push(FieldError::invalid(path, security_context_json(sc), "cannot set `allowPrivilegeEscalation` to false and `capabilities.Add` CAP_SYS_ADMIN"));
        }
    }
    errs
}

/// The internal `core.SecurityContext` as Go's JSON (untagged: Go field names).
fn security_context_json(sc: &SecurityContext) -> GoJson {
    let opt_bool = |b: Option<bool>| b.map(GoJson::Bool).unwrap_or(GoJson::Null);
    let opt_int = |i: Option<i64>| i.map(GoJson::Int).unwrap_or(GoJson::Null);
    let caps = sc.capabilities.as_ref().map_or(GoJson::Null, |c| {
        GoJson::obj(vec![
            ("Add", GoJson::opt_string_list(c.add.as_deref())),
            ("Drop", GoJson::opt_string_list(c.drop.as_deref())),
        ])
    });
    GoJson::obj(vec![
        ("Capabilities", caps),
        ("Privileged", opt_bool(sc.privileged)),
        ("SELinuxOptions", GoJson::Null),
        ("WindowsOptions", GoJson::Null),
        ("RunAsUser", opt_int(sc.run_as_user)),
        ("RunAsGroup", opt_int(sc.run_as_group)),
        ("RunAsNonRoot", opt_bool(sc.run_as_non_root)),
        (
            "ReadOnlyRootFilesystem",
            opt_bool(sc.read_only_root_filesystem),
        ),
        (
            "AllowPrivilegeEscalation",
            opt_bool(sc.allow_privilege_escalation),
        ),
        ("ProcMount", GoJson::opt_str(sc.proc_mount.as_deref())),
        ("SeccompProfile", GoJson::Null),
        ("AppArmorProfile", GoJson::Null),
    ])
}
