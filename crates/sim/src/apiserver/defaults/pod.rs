//! Pod and pod-template defaulting (`SetDefaults_Pod`, `SetDefaults_PodSpec`,
//! `SetDefaults_Container`, probes, volumes) and quantity canonicalization.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{
    Container, HTTPGetAction, LifecycleHandler, PersistentVolumeClaimSpec, Pod, PodSecurityContext,
    PodSpec, PodTemplateSpec, Probe, ResourceRequirements, Volume,
};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity as ApiQuantity;

use crate::apiserver::quantity::parse_quantity;

/// `SetDefaults_ResourceList`: every quantity rounded up to milli precision and written in
/// canonical form, as the apiserver stores and returns it. Unparseable strings are left
/// for validation (the decoder rejects them upstream).
pub fn canonicalize_resource_list(list: &mut Option<BTreeMap<String, ApiQuantity>>) {
    for q in list.iter_mut().flat_map(|l| l.values_mut()) {
        if let Ok(parsed) = parse_quantity(q.0.trim()) {
            q.0 = parsed.round_up(-3).canonical();
        }
    }
}

/// A quantity written in canonical form without rounding (any Quantity field).
pub fn canonicalize_quantity(q: &mut Option<ApiQuantity>) {
    if let Some(q) = q {
        if let Ok(parsed) = parse_quantity(q.0.trim()) {
            q.0 = parsed.canonical();
        }
    }
}

/// The image tag as `parsers.ParseImageName` reports it: `latest` when neither tag nor
/// digest is given, "" for digest-only or unparseable references.
pub fn image_tag(image: &str) -> &str {
    let (name, digest) = match image.split_once('@') {
        Some((n, d)) => (n, Some(d)),
        None => (image, None),
    };
    let last_slash = name.rfind('/').map_or(0, |i| i + 1);
    let (repo, tag) = match name[last_slash..].rfind(':') {
        Some(i) => (&name[..last_slash + i], Some(&name[last_slash + i + 1..])),
        None => (name, None),
    };
    if !valid_repository(repo) || digest.is_some_and(|d| !valid_digest(d)) {
        return "";
    }
    match tag {
        Some(t) if valid_tag(t) => t,
        Some(_) => "",
        None if digest.is_some() => "",
        None => "latest",
    }
}

fn valid_tag(t: &str) -> bool {
    let b = t.as_bytes();
    !b.is_empty()
        && b.len() <= 128
        && (b[0].is_ascii_alphanumeric() || b[0] == b'_')
        && b.iter()
            .all(|&c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.' | b'-'))
}

fn valid_digest(d: &str) -> bool {
    match d.split_once(':') {
        Some((algo, hex)) => {
            !algo.is_empty() && hex.len() >= 32 && hex.bytes().all(|c| c.is_ascii_hexdigit())
        }
        None => false,
    }
}

/// Docker reference rules: an optional domain, then lowercase path components.
fn valid_repository(repo: &str) -> bool {
    let mut parts: Vec<&str> = repo.split('/').collect();
    if parts.len() > 1 {
        let first = parts[0];
        let is_domain = first.contains('.')
            || first.contains(':')
            || first == "localhost"
            || first.to_lowercase() != first;
        if is_domain {
            if first.is_empty() || first.contains("..") {
                return false;
            }
            parts.remove(0);
        }
    }
    !parts.is_empty() && parts.iter().all(|p| valid_path_component(p))
}

fn valid_path_component(p: &str) -> bool {
    let b = p.as_bytes();
    if b.is_empty() || !is_lower_alnum(b[0]) || !is_lower_alnum(b[b.len() - 1]) {
        return false;
    }
    // Separators: '.', '_', '__' or any run of '-', each between alphanumerics.
    let mut i = 0;
    while i < b.len() {
        if is_lower_alnum(b[i]) {
            i += 1;
            continue;
        }
        let start = i;
        while i < b.len() && !is_lower_alnum(b[i]) {
            i += 1;
        }
        let sep = &p[start..i];
        let ok = sep == "." || sep == "_" || sep == "__" || sep.bytes().all(|c| c == b'-');
        if !ok {
            return false;
        }
    }
    true
}

fn is_lower_alnum(c: u8) -> bool {
    c.is_ascii_lowercase() || c.is_ascii_digit()
}

/// `SetDefaults_Pod` followed by the pod-spec defaults (`SetObjectDefaults_Pod`).
pub fn default_pod(pod: &mut Pod) {
    let spec = pod.spec.get_or_insert_with(Default::default);
    for c in spec
        .containers
        .iter_mut()
        .chain(spec.init_containers.iter_mut().flatten())
    {
        let res = c.resources.get_or_insert_with(Default::default);
        requests_from_limits(res);
    }
    default_pod_level_requests(spec);
    if spec.enable_service_links.is_none() {
        spec.enable_service_links = Some(true);
    }
    if spec.host_network == Some(true) {
        for c in spec
            .containers
            .iter_mut()
            .chain(spec.init_containers.iter_mut().flatten())
        {
            for p in c.ports.iter_mut().flatten() {
                if p.host_port.unwrap_or(0) == 0 {
                    p.host_port = Some(p.container_port);
                }
            }
        }
    }
    default_pod_spec(spec);
    for e in spec.ephemeral_containers.iter_mut().flatten() {
        default_ephemeral_container(e);
    }
}

/// Copies limits into requests where a request is missing (pods only, not templates).
fn requests_from_limits(res: &mut ResourceRequirements) {
    let Some(limits) = res.limits.clone().filter(|l| !l.is_empty()) else {
        return;
    };
    let requests = res.requests.get_or_insert_with(BTreeMap::new);
    for (k, v) in limits {
        requests.entry(k).or_insert(v);
    }
}

/// Pod-level resources (beta, on by default since v1.34): a pod-level limit without a
/// request makes the request equal the limit when no container requests that resource.
fn default_pod_level_requests(spec: &mut PodSpec) {
    let containers_request = |name: &str| {
        spec.containers
            .iter()
            .chain(spec.init_containers.iter().flatten())
            .any(|c| {
                c.resources
                    .as_ref()
                    .and_then(|r| r.requests.as_ref())
                    .is_some_and(|r| r.contains_key(name))
            })
    };
    let Some(limits) = spec.resources.as_ref().and_then(|r| r.limits.clone()) else {
        return;
    };
    let missing: Vec<(String, ApiQuantity)> = limits
        .into_iter()
        .filter(|(k, _)| (k == "cpu" || k == "memory") && !containers_request(k))
        .collect();
    if let Some(res) = spec.resources.as_mut() {
        let requests = res.requests.get_or_insert_with(BTreeMap::new);
        for (k, v) in missing {
            requests.entry(k).or_insert(v);
        }
    }
}

/// The defaults every pod template gets (`SetDefaults_PodSpec` plus nested defaults).
pub fn default_pod_template(t: &mut PodTemplateSpec) {
    t.metadata.get_or_insert_with(Default::default);
    default_pod_spec(t.spec.get_or_insert_with(Default::default));
}

/// `SetDefaults_PodSpec`, volumes and containers.
pub fn default_pod_spec(spec: &mut PodSpec) {
    if spec.dns_policy.as_deref().unwrap_or("").is_empty() {
        spec.dns_policy = Some("ClusterFirst".into());
    }
    if spec.restart_policy.as_deref().unwrap_or("").is_empty() {
        spec.restart_policy = Some("Always".into());
    }
    if spec.security_context.is_none() {
        spec.security_context = Some(PodSecurityContext::default());
    }
    if spec.termination_grace_period_seconds.is_none() {
        spec.termination_grace_period_seconds = Some(30);
    }
    if spec.scheduler_name.as_deref().unwrap_or("").is_empty() {
        spec.scheduler_name = Some("default-scheduler".into());
    }
    // v1 conversion keeps the deprecated `serviceAccount` in step with `serviceAccountName`.
    if spec
        .service_account_name
        .as_deref()
        .unwrap_or("")
        .is_empty()
    {
        if let Some(sa) = spec.service_account.clone().filter(|s| !s.is_empty()) {
            spec.service_account_name = Some(sa);
        }
    }
    if let Some(name) = spec.service_account_name.clone().filter(|s| !s.is_empty()) {
        spec.service_account = Some(name);
    }
    for v in spec.volumes.iter_mut().flatten() {
        default_volume(v);
    }
    for c in spec
        .containers
        .iter_mut()
        .chain(spec.init_containers.iter_mut().flatten())
    {
        default_container(c);
    }
    canonicalize_resource_list(&mut spec.overhead);
    if let Some(r) = spec.resources.as_mut() {
        canonicalize_resource_list(&mut r.limits);
        canonicalize_resource_list(&mut r.requests);
    }
}

/// `SetDefaults_Container` and everything nested in a container.
pub fn default_container(c: &mut Container) {
    if c.image_pull_policy.as_deref().unwrap_or("").is_empty() {
        let policy = if image_tag(c.image.as_deref().unwrap_or("")) == "latest" {
            "Always"
        } else {
            "IfNotPresent"
        };
        c.image_pull_policy = Some(policy.into());
    }
    if c.termination_message_path
        .as_deref()
        .unwrap_or("")
        .is_empty()
    {
        c.termination_message_path = Some("/dev/termination-log".into());
    }
    if c.termination_message_policy
        .as_deref()
        .unwrap_or("")
        .is_empty()
    {
        c.termination_message_policy = Some("File".into());
    }
    for p in c.ports.iter_mut().flatten() {
        if p.protocol.as_deref().unwrap_or("").is_empty() {
            p.protocol = Some("TCP".into());
        }
    }
    for e in c.env.iter_mut().flatten() {
        if let Some(f) = e.value_from.as_mut().and_then(|v| v.field_ref.as_mut()) {
            if f.api_version.as_deref().unwrap_or("").is_empty() {
                f.api_version = Some("v1".into());
            }
        }
    }
    // Go's ResourceRequirements is a struct, so `resources: {}` is always returned.
    let res = c.resources.get_or_insert_with(Default::default);
    canonicalize_resource_list(&mut res.limits);
    canonicalize_resource_list(&mut res.requests);
    for p in [
        &mut c.liveness_probe,
        &mut c.readiness_probe,
        &mut c.startup_probe,
    ]
    .into_iter()
    .flatten()
    {
        default_probe(p);
    }
    if let Some(l) = c.lifecycle.as_mut() {
        for h in [&mut l.post_start, &mut l.pre_stop].into_iter().flatten() {
            default_handler(h);
        }
    }
}

fn default_ephemeral_container(e: &mut k8s_openapi::api::core::v1::EphemeralContainer) {
    // An ephemeral container shares Container's defaults; round-trip through JSON is not
    // needed because the relevant fields have the same names.
    if e.image_pull_policy.as_deref().unwrap_or("").is_empty() {
        let policy = if image_tag(e.image.as_deref().unwrap_or("")) == "latest" {
            "Always"
        } else {
            "IfNotPresent"
        };
        e.image_pull_policy = Some(policy.into());
    }
    if e.termination_message_path
        .as_deref()
        .unwrap_or("")
        .is_empty()
    {
        e.termination_message_path = Some("/dev/termination-log".into());
    }
    if e.termination_message_policy
        .as_deref()
        .unwrap_or("")
        .is_empty()
    {
        e.termination_message_policy = Some("File".into());
    }
    let res = e.resources.get_or_insert_with(Default::default);
    canonicalize_resource_list(&mut res.limits);
    canonicalize_resource_list(&mut res.requests);
}

/// `SetDefaults_Probe` plus its handler.
pub fn default_probe(p: &mut Probe) {
    for (field, value) in [
        (&mut p.timeout_seconds, 1),
        (&mut p.period_seconds, 10),
        (&mut p.success_threshold, 1),
        (&mut p.failure_threshold, 3),
    ] {
        if field.unwrap_or(0) == 0 {
            *field = Some(value);
        }
    }
    if let Some(h) = p.http_get.as_mut() {
        default_http_get(h);
    }
    if let Some(g) = p.grpc.as_mut() {
        if g.service.is_none() {
            g.service = Some(String::new());
        }
    }
}

fn default_handler(h: &mut LifecycleHandler) {
    if let Some(g) = h.http_get.as_mut() {
        default_http_get(g);
    }
}

fn default_http_get(h: &mut HTTPGetAction) {
    if h.path.as_deref().unwrap_or("").is_empty() {
        h.path = Some("/".into());
    }
    if h.scheme.as_deref().unwrap_or("").is_empty() {
        h.scheme = Some("HTTP".into());
    }
}

fn no_volume_source(v: &Volume) -> bool {
    v.aws_elastic_block_store.is_none()
        && v.azure_disk.is_none()
        && v.azure_file.is_none()
        && v.cephfs.is_none()
        && v.cinder.is_none()
        && v.config_map.is_none()
        && v.csi.is_none()
        && v.downward_api.is_none()
        && v.empty_dir.is_none()
        && v.ephemeral.is_none()
        && v.fc.is_none()
        && v.flex_volume.is_none()
        && v.flocker.is_none()
        && v.gce_persistent_disk.is_none()
        && v.git_repo.is_none()
        && v.glusterfs.is_none()
        && v.host_path.is_none()
        && v.image.is_none()
        && v.iscsi.is_none()
        && v.nfs.is_none()
        && v.persistent_volume_claim.is_none()
        && v.photon_persistent_disk.is_none()
        && v.portworx_volume.is_none()
        && v.projected.is_none()
        && v.quobyte.is_none()
        && v.rbd.is_none()
        && v.scale_io.is_none()
        && v.secret.is_none()
        && v.storageos.is_none()
        && v.vsphere_volume.is_none()
}

/// `SetDefaults_Volume` and the per-source defaults (file modes 0644 = 420).
pub fn default_volume(v: &mut Volume) {
    if no_volume_source(v) {
        v.empty_dir = Some(Default::default());
    }
    if let Some(e) = v.empty_dir.as_mut() {
        canonicalize_quantity(&mut e.size_limit);
    }
    if let Some(h) = v.host_path.as_mut() {
        h.type_.get_or_insert_with(String::new);
    }
    if let Some(s) = v.secret.as_mut() {
        s.default_mode.get_or_insert(420);
    }
    if let Some(c) = v.config_map.as_mut() {
        c.default_mode.get_or_insert(420);
    }
    if let Some(d) = v.downward_api.as_mut() {
        d.default_mode.get_or_insert(420);
        for item in d.items.iter_mut().flatten() {
            if let Some(f) = item.field_ref.as_mut() {
                f.api_version.get_or_insert_with(|| "v1".into());
            }
        }
    }
    if let Some(p) = v.projected.as_mut() {
        p.default_mode.get_or_insert(420);
        for s in p.sources.iter_mut().flatten() {
            if let Some(t) = s.service_account_token.as_mut() {
                t.expiration_seconds.get_or_insert(3600);
            }
            for item in s
                .downward_api
                .iter_mut()
                .flat_map(|d| d.items.iter_mut().flatten())
            {
                if let Some(f) = item.field_ref.as_mut() {
                    f.api_version.get_or_insert_with(|| "v1".into());
                }
            }
        }
    }
    if let Some(i) = v.image.as_mut() {
        if i.pull_policy.as_deref().unwrap_or("").is_empty() {
            let tag = image_tag(i.reference.as_deref().unwrap_or(""));
            i.pull_policy = Some(
                if tag == "latest" {
                    "Always"
                } else {
                    "IfNotPresent"
                }
                .into(),
            );
        }
    }
    if let Some(t) = v
        .ephemeral
        .as_mut()
        .and_then(|e| e.volume_claim_template.as_mut())
    {
        default_pvc_spec(&mut t.spec);
    }
}

/// `SetDefaults_PersistentVolumeClaimSpec` plus its resource lists.
pub fn default_pvc_spec(spec: &mut PersistentVolumeClaimSpec) {
    if spec.volume_mode.is_none() {
        spec.volume_mode = Some("Filesystem".into());
    }
    if let Some(r) = spec.resources.as_mut() {
        canonicalize_resource_list(&mut r.limits);
        canonicalize_resource_list(&mut r.requests);
    }
}
