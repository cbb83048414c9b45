//! Container validation (core `validateContainers`, `validateInitContainers` and what they
//! call): names, images, ports, env, mounts, probes, lifecycle, resources, security context.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::core::v1::{Container, SecurityContext, Volume};

use super::names::*;
use super::{env::*, mounts::*, probes::*, resources::*};
use crate::apiserver::field_error::{BadValue, FieldError, GoJson, Path};

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
