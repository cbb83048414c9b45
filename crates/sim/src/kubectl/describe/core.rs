//! Describers for core kinds (`describe.go`): ConfigMap (`Data`/`BinaryData`), Secret
//! (`Type`, data byte counts), ResourceQuota (`Used`/`Hard`), LimitRange (its table),
//! PersistentVolumeClaim (`Used By`).

use std::collections::BTreeSet;
use std::sync::Arc;

use k8s_openapi::api::core::v1::{
    ConfigMap, LimitRange, PersistentVolumeClaim, ResourceQuota, Secret,
};

use super::{annotations_multiline, labels_multiline, Writer};
use crate::object::Object;

fn name_ns(w: &mut Writer, m: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta) {
    w.line(0, &format!("Name:\t{}", m.name.as_deref().unwrap_or("")));
    w.line(
        0,
        &format!("Namespace:\t{}", m.namespace.as_deref().unwrap_or("")),
    );
}

/// `describeConfigMap`: each key, a `----` rule, its value; binary keys by size.
pub(super) fn describe_config_map(w: &mut Writer, c: &ConfigMap) {
    name_ns(w, &c.metadata);
    labels_multiline(w, "", "Labels", c.metadata.labels.as_ref());
    annotations_multiline(w, "Annotations", c.metadata.annotations.as_ref());
    w.line(0, "");
    w.line(0, "Data");
    w.line(0, "====");
    for (k, v) in c.data.iter().flatten() {
        w.line(0, &format!("{k}:"));
        w.line(0, "----");
        w.line(0, v);
        w.line(0, "");
    }
    w.line(0, "");
    w.line(0, "BinaryData");
    w.line(0, "====");
    for (k, v) in c.binary_data.iter().flatten() {
        w.line(0, &format!("{k}: {} bytes", v.0.len()));
    }
    w.line(0, "");
}

/// `describeSecret`: the type, and each key's size (a service-account token in full).
pub(super) fn describe_secret(w: &mut Writer, s: &Secret) {
    name_ns(w, &s.metadata);
    labels_multiline(w, "", "Labels", s.metadata.labels.as_ref());
    annotations_multiline(w, "Annotations", s.metadata.annotations.as_ref());
    let ty = s.type_.as_deref().unwrap_or("");
    w.line(0, "");
    w.line(0, &format!("Type:\t{ty}"));
    w.line(0, "");
    w.line(0, "Data");
    w.line(0, "====");
    for (k, v) in s.data.iter().flatten() {
        if k == "token" && ty == "kubernetes.io/service-account-token" {
            w.line(0, &format!("{k}:\t{}", String::from_utf8_lossy(&v.0)));
        } else {
            w.line(0, &format!("{k}:\t{} bytes", v.0.len()));
        }
    }
}

/// `helpTextForResourceQuotaScope`.
fn scope_help(scope: &str) -> Option<&'static str> {
    Some(match scope {
        "Terminating" => "Matches all pods that have an active deadline. These pods have a limited lifespan on a node before being actively terminated by the system.",
        "NotTerminating" => "Matches all pods that do not have an active deadline. These pods usually include long running pods whose container command is not expected to terminate.",
        "BestEffort" => "Matches all pods that do not have resource requirements set. These pods have a best effort quality of service.",
        "NotBestEffort" => "Matches all pods that have at least one resource requirement set. These pods have a burstable or guaranteed quality of service.",
        _ => return None,
    })
}

/// `describeQuota`: scopes, then `Resource Used Hard` from the quota's status.
pub(super) fn describe_resource_quota(w: &mut Writer, q: &ResourceQuota) {
    name_ns(w, &q.metadata);
    let spec = q.spec.clone().unwrap_or_default();
    let mut scopes = spec.scopes.clone().unwrap_or_default();
    if !scopes.is_empty() {
        scopes.sort();
        w.line(0, &format!("Scopes:\t{}", scopes.join(", ")));
        for s in &scopes {
            if let Some(h) = scope_help(s) {
                w.line(0, &format!(" * {h}"));
            }
        }
    }
    w.line(0, "Resource\tUsed\tHard");
    w.line(0, "--------\t----\t----");
    let status = q.status.clone().unwrap_or_default();
    let used = status.used.unwrap_or_default();
    for (name, hard) in status.hard.iter().flatten() {
        let u = used.get(name).map_or("0", |q| q.0.as_str());
        w.line(0, &format!("{name}\t{u}\t{}", hard.0));
    }
}

/// `describeLimitRange`: one row per limit type and resource, `-` where unset.
pub(super) fn describe_limit_range(w: &mut Writer, l: &LimitRange) {
    name_ns(w, &l.metadata);
    w.line(
        0,
        "Type\tResource\tMin\tMax\tDefault Request\tDefault Limit\tMax Limit/Request Ratio",
    );
    w.line(
        0,
        "----\t--------\t---\t---\t---------------\t-------------\t-----------------------",
    );
    for item in l.spec.iter().flat_map(|s| s.limits.iter()) {
        let lists = [
            &item.min,
            &item.max,
            &item.default_request,
            &item.default,
            &item.max_limit_request_ratio,
        ];
        let names: BTreeSet<&String> = lists
            .iter()
            .filter_map(|l| l.as_ref())
            .flat_map(|m| m.keys())
            .collect();
        for name in names {
            let cell = |l: &Option<
                std::collections::BTreeMap<
                    String,
                    k8s_openapi::apimachinery::pkg::api::resource::Quantity,
                >,
            >| {
                l.as_ref()
                    .and_then(|m| m.get(name))
                    .map_or("-".to_string(), |q| q.0.clone())
            };
            w.line(
                0,
                &format!(
                    "{}\t{name}\t{}\t{}\t{}\t{}\t{}",
                    item.type_,
                    cell(&item.min),
                    cell(&item.max),
                    cell(&item.default_request),
                    cell(&item.default),
                    cell(&item.max_limit_request_ratio)
                ),
            );
        }
    }
}

/// `GetAccessModesAsString`.
fn access_modes(modes: &[String]) -> String {
    let mut out = Vec::new();
    for (full, short) in [
        ("ReadWriteOnce", "RWO"),
        ("ReadOnlyMany", "ROX"),
        ("ReadWriteMany", "RWX"),
        ("ReadWriteOncePod", "RWOP"),
    ] {
        if modes.iter().any(|m| m == full) {
            out.push(short);
        }
    }
    out.join(",")
}

/// `describePersistentVolumeClaim`, with the pods that mount the claim.
pub(super) fn describe_pvc(w: &mut Writer, c: &PersistentVolumeClaim, pods: &[Arc<Object>]) {
    name_ns(w, &c.metadata);
    let spec = c.spec.clone().unwrap_or_default();
    let status = c.status.clone().unwrap_or_default();
    let class = spec.storage_class_name.clone().unwrap_or_default();
    w.line(0, &format!("StorageClass:\t{class}"));
    if c.metadata.deletion_timestamp.is_some() {
        w.line(0, "Status:\tTerminating");
    } else {
        w.line(
            0,
            &format!("Status:\t{}", status.phase.clone().unwrap_or_default()),
        );
    }
    let volume = spec.volume_name.clone().unwrap_or_default();
    w.line(0, &format!("Volume:\t{volume}"));
    labels_multiline(w, "", "Labels", c.metadata.labels.as_ref());
    annotations_multiline(w, "Annotations", c.metadata.annotations.as_ref());
    let finalizers = c.metadata.finalizers.clone().unwrap_or_default();
    w.line(0, &format!("Finalizers:\t[{}]", finalizers.join(" ")));
    let (capacity, modes) = if volume.is_empty() {
        (String::new(), String::new())
    } else {
        (
            status
                .capacity
                .as_ref()
                .and_then(|c| c.get("storage"))
                .map(|q| q.0.clone())
                .unwrap_or_default(),
            access_modes(&status.access_modes.clone().unwrap_or_default()),
        )
    };
    w.line(0, &format!("Capacity:\t{capacity}"));
    w.line(0, &format!("Access Modes:\t{modes}"));
    if let Some(m) = &spec.volume_mode {
        w.line(0, &format!("VolumeMode:\t{m}"));
    }
    let claim = c.metadata.name.as_deref().unwrap_or("");
    let users: Vec<&str> = pods
        .iter()
        .filter_map(|o| match &**o {
            Object::Pod(p) => Some(p),
            _ => None,
        })
        .filter(|p| p.metadata.namespace == c.metadata.namespace)
        .filter(|p| {
            p.spec
                .iter()
                .flat_map(|s| s.volumes.iter().flatten())
                .any(|v| {
                    v.persistent_volume_claim
                        .as_ref()
                        .is_some_and(|s| s.claim_name == claim)
                })
        })
        .filter_map(|p| p.metadata.name.as_deref())
        .collect();
    w.write(0, "Used By:\t");
    if users.is_empty() {
        w.line(0, "<none>");
    }
    for (i, u) in users.iter().enumerate() {
        if i != 0 {
            w.write(0, "\t");
        }
        w.line(0, u);
    }
}
