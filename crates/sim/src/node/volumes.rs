//! The kubelet's volume manager as pure functions: which objects a pod's volumes and env
//! vars need, what setting each volume up does (emptyDir, configMap, secret, projected,
//! hostPath, and PVCs through their PV — local-path hostPath or CSI attach/stage/publish),
//! and the container environment.

use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_openapi::api::core::v1::{Container, PersistentVolume, Pod, PodSpec, Volume};
use sha2::{Digest, Sha256};

use crate::node::journal::Mount;
use crate::object::Object;
use crate::time::{Time, MINUTE};

/// First retry of a failed mount (`nestedpendingoperations` initialDurationBeforeRetry).
pub const RETRY_INITIAL: Time = 500;
/// Cap of the mount retry back-off (`maxDurationBeforeRetry`, 2m2s).
pub const RETRY_MAX: Time = 2 * MINUTE + 2_000;

/// What the kubelet knows of a pod's volumes.
#[derive(Clone, Debug, Default)]
pub struct VolumeState {
    /// Every volume is set up and every object env vars need was fetched.
    pub ready: bool,
    /// Objects fetched in this sync: `configmaps/x`, `secrets/x`,
    /// `persistentvolumeclaims/x`, `persistentvolumes/x` → the object or the API error.
    pub objects: BTreeMap<String, Result<Arc<Object>, String>>,
    /// Keys still being fetched.
    pub fetching: Vec<String>,
    /// Volumes set up, by name. Boxed: a map's node has room for eleven values, and a
    /// pod mostly has one or two volumes.
    pub mounted: BTreeMap<String, Box<MountedVolume>>,
    /// Per-volume retry back-off: name → (delay, not before).
    pub retry: BTreeMap<String, (Time, Time)>,
    /// Since when the pod waits for its volumes (`WaitForAttachAndMount`).
    pub waiting_since: Option<Time>,
    /// The files each volume holds as last written: name → (relative path → a hash of
    /// the contents, which the machine's filesystem holds).
    pub written: BTreeMap<String, BTreeMap<String, u64>>,
    /// The periodic sync asked for a remount of the volumes whose contents follow an
    /// object (ConfigMap, Secret, projected, downwardAPI).
    pub remount: bool,
}

/// What a remount changes in a volume's directory: files to write and files to remove
/// (relative paths), as the atomic writer swaps the volume's data directory.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Refresh {
    /// Files whose contents changed or that are new.
    pub write: Vec<(String, String)>,
    /// Files the object no longer holds.
    pub remove: Vec<String>,
}

/// Whether a mounted volume's files follow an API object (so a remount may change them).
pub fn follows_object(m: &MountedVolume) -> bool {
    matches!(
        m.plugin.as_str(),
        "kubernetes.io/configmap" | "kubernetes.io/secret" | "kubernetes.io/projected"
    )
}

/// What [`VolumeState::written`] keeps of a file's contents.
pub fn content_hash(content: &str) -> u64 {
    crate::rng::fnv1a(content.as_bytes())
}

/// The hashes [`VolumeState::written`] keeps of a volume's files.
pub fn hashes(files: &BTreeMap<String, String>) -> BTreeMap<String, u64> {
    files
        .iter()
        .map(|(k, v)| (k.clone(), content_hash(v)))
        .collect()
}

/// The change from the files a volume holds to the files it should hold now.
pub fn refresh(old: &BTreeMap<String, u64>, new: &BTreeMap<String, String>) -> Refresh {
    Refresh {
        write: new
            .iter()
            .filter(|(k, v)| old.get(*k) != Some(&content_hash(v)))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
        remove: old
            .keys()
            .filter(|k| !new.contains_key(*k))
            .cloned()
            .collect(),
    }
}

/// A volume set up for a pod.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MountedVolume {
    /// Plugin (`kubernetes.io/configmap`, `kubernetes.io/csi`, …).
    pub plugin: String,
    /// The volume's unique name (`kubernetes.io/configmap/<uid>-config`).
    pub unique: String,
    /// What the container mounts (the pod's volume directory or a host path).
    pub host_path: String,
    /// The steps taken, in order: `attach`, `stage` (MountDevice), `publish` (SetUp).
    pub steps: Vec<String>,
    /// Mounts added to the node's table.
    pub mounts: Vec<Mount>,
    /// The PV name, for PVC volumes.
    pub pv: Option<String>,
}

pub use crate::node::env::{env, service_links};

/// An object reference a pod needs: `configmaps/name` style keys.
pub fn needed(pod: &Pod) -> Vec<(String, bool)> {
    let mut out: Vec<(String, bool)> = Vec::new();
    let mut add = |k: String, optional: bool| {
        if !out.iter().any(|(x, _)| *x == k) {
            out.push((k, optional));
        }
    };
    let empty = PodSpec::default();
    let spec = pod.spec.as_ref().unwrap_or(&empty);
    for v in spec.volumes.iter().flatten() {
        if let Some(cm) = &v.config_map {
            add(
                format!("configmaps/{}", cm.name),
                cm.optional.unwrap_or(false),
            );
        }
        if let Some(s) = &v.secret {
            add(
                format!("secrets/{}", s.secret_name.clone().unwrap_or_default()),
                s.optional.unwrap_or(false),
            );
        }
        if let Some(c) = &v.persistent_volume_claim {
            add(format!("persistentvolumeclaims/{}", c.claim_name), false);
        }
    }
    for c in spec
        .containers
        .iter()
        .chain(spec.init_containers.iter().flatten())
    {
        for e in c.env.iter().flatten() {
            if let Some(vf) = &e.value_from {
                if let Some(r) = &vf.config_map_key_ref {
                    add(
                        format!("configmaps/{}", r.name),
                        r.optional.unwrap_or(false),
                    );
                }
                if let Some(r) = &vf.secret_key_ref {
                    add(format!("secrets/{}", r.name), r.optional.unwrap_or(false));
                }
            }
        }
        for e in c.env_from.iter().flatten() {
            if let Some(r) = &e.config_map_ref {
                add(
                    format!("configmaps/{}", r.name),
                    r.optional.unwrap_or(false),
                );
            }
            if let Some(r) = &e.secret_ref {
                add(format!("secrets/{}", r.name), r.optional.unwrap_or(false));
            }
        }
    }
    out
}

/// Outcome of setting one volume up.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Setup {
    /// Set up.
    Mounted(MountedVolume),
    /// `MountVolume.SetUp failed …` (retried with back-off, reported as FailedMount).
    Failed(String),
    /// Not in the desired state yet (PVC missing or unbound): logged, retried.
    Unprocessed(String),
}

fn pods_dir(uid: &str) -> String {
    format!("/var/lib/kubelet/pods/{uid}/volumes")
}

fn not_found(objects: &BTreeMap<String, Result<Arc<Object>, String>>, key: &str) -> Option<String> {
    match objects.get(key) {
        // The kubelet's watch-based managers word it in the singular.
        Some(Err(e)) if e.contains("not found") => Some(format!(
            "{} \"{}\" not found",
            singular(key),
            key.split('/').nth(1).unwrap_or("")
        )),
        Some(Err(e)) => Some(e.clone()),
        None => Some(format!(
            "{} \"{}\" not found",
            singular(key),
            key.split('/').nth(1).unwrap_or("")
        )),
        Some(Ok(_)) => None,
    }
}

fn singular(key: &str) -> &'static str {
    match key.split('/').next() {
        Some("configmaps") => "configmap",
        Some("secrets") => "secret",
        Some("persistentvolumeclaims") => "persistentvolumeclaim",
        _ => "persistentvolume",
    }
}

/// The PV a bound claim uses, or why the volume cannot be processed yet.
pub fn claim_volume(
    pod: &Pod,
    claim: &str,
    objects: &BTreeMap<String, Result<Arc<Object>, String>>,
) -> Result<String, String> {
    let ns = pod.metadata.namespace.as_deref().unwrap_or("default");
    match objects.get(&format!("persistentvolumeclaims/{claim}")) {
        Some(Ok(o)) => match &**o {
            Object::PersistentVolumeClaim(pvc) => {
                let bound = pvc.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Bound");
                let pv = pvc.spec.as_ref().and_then(|s| s.volume_name.clone()).unwrap_or_default();
                if !bound || pv.is_empty() {
                    return Err(format!("error processing PVC {ns}/{claim}: PVC is not bound"));
                }
                Ok(pv)
            }
            _ => Err(format!("error processing PVC {ns}/{claim}: unexpected object")),
        },
        Some(Err(e)) => Err(format!("error processing PVC {ns}/{claim}: failed to fetch PVC from API server: {e}")),
        None => Err(format!("error processing PVC {ns}/{claim}: failed to fetch PVC from API server: persistentvolumeclaims \"{claim}\" not found")),
    }
}

fn tmpfs(uid: &str, target: String, size_kb: u64) -> Mount {
    Mount {
        source: "tmpfs".into(),
        target,
        fstype: "tmpfs".into(),
        options: format!("rw,relatime,size={size_kb}k,noswap"),
        pod_uid: uid.to_string(),
    }
}

/// Sets one volume up for the pod on `node` with the objects fetched so far.
pub fn setup(
    pod: &Pod,
    v: &Volume,
    objects: &BTreeMap<String, Result<Arc<Object>, String>>,
    node: &str,
) -> Setup {
    let uid = pod.metadata.uid.as_deref().unwrap_or("");
    let name = &v.name;
    let mem_kb = 8 * 1024 * 1024;
    let plain = |plugin: &str, dir: &str, mounts: Vec<Mount>| {
        Setup::Mounted(MountedVolume {
            plugin: format!("kubernetes.io/{plugin}"),
            unique: format!("kubernetes.io/{plugin}/{uid}-{name}"),
            host_path: format!("{}/kubernetes.io~{dir}/{name}", pods_dir(uid)),
            steps: vec!["publish".into()],
            mounts,
            pv: None,
        })
    };
    if let Some(cm) = &v.config_map {
        let key = format!("configmaps/{}", cm.name);
        if let Some(e) = not_found(objects, &key).filter(|_| !cm.optional.unwrap_or(false)) {
            return Setup::Failed(e);
        }
        return plain("configmap", "configmap", Vec::new());
    }
    if let Some(s) = &v.secret {
        let key = format!("secrets/{}", s.secret_name.clone().unwrap_or_default());
        if let Some(e) = not_found(objects, &key).filter(|_| !s.optional.unwrap_or(false)) {
            return Setup::Failed(e);
        }
        let target = format!("{}/kubernetes.io~secret/{name}", pods_dir(uid));
        return plain("secret", "secret", vec![tmpfs(uid, target, mem_kb)]);
    }
    if v.projected.is_some() {
        let target = format!("{}/kubernetes.io~projected/{name}", pods_dir(uid));
        return plain("projected", "projected", vec![tmpfs(uid, target, mem_kb)]);
    }
    if let Some(e) = &v.empty_dir {
        let mounts = if e.medium.as_deref() == Some("Memory") {
            vec![tmpfs(
                uid,
                format!("{}/kubernetes.io~empty-dir/{name}", pods_dir(uid)),
                mem_kb,
            )]
        } else {
            Vec::new()
        };
        return plain("empty-dir", "empty-dir", mounts);
    }
    if let Some(h) = &v.host_path {
        return Setup::Mounted(MountedVolume {
            plugin: "kubernetes.io/host-path".into(),
            unique: format!("kubernetes.io/host-path/{uid}-{name}"),
            host_path: h.path.clone(),
            steps: vec!["publish".into()],
            mounts: Vec::new(),
            pv: None,
        });
    }
    if let Some(c) = &v.persistent_volume_claim {
        let pv_name = match claim_volume(pod, &c.claim_name, objects) {
            Ok(pv) => pv,
            Err(e) => return Setup::Unprocessed(e),
        };
        let pv = match objects.get(&format!("persistentvolumes/{pv_name}")) {
            Some(Ok(o)) => match &**o {
                Object::PersistentVolume(pv) => pv.clone(),
                _ => {
                    return Setup::Unprocessed(format!(
                        "error processing PVC: unexpected object for {pv_name}"
                    ))
                }
            },
            _ => {
                let ns = pod.metadata.namespace.as_deref().unwrap_or("default");
                return Setup::Unprocessed(format!("error processing PVC {ns}/{}: failed to fetch PV {pv_name} from API server: persistentvolumes \"{pv_name}\" not found", c.claim_name));
            }
        };
        return setup_pv(uid, &pv_name, &pv, node);
    }
    plain("empty-dir", "empty-dir", Vec::new())
}

fn setup_pv(uid: &str, pv_name: &str, pv: &PersistentVolume, node: &str) -> Setup {
    let spec = pv.spec.clone().unwrap_or_default();
    if let Some(csi) = &spec.csi {
        let hash = hex(&Sha256::digest(csi.volume_handle.as_bytes()));
        let global = format!(
            "/var/lib/kubelet/plugins/kubernetes.io/csi/{}/{hash}/globalmount",
            csi.driver
        );
        let publish = format!("{}/kubernetes.io~csi/{pv_name}/mount", pods_dir(uid));
        let dev = format!(
            "/dev/{}",
            if csi.driver.contains("hostpath") {
                "loop0"
            } else {
                "sdb"
            }
        );
        let fs = csi.fs_type.clone().unwrap_or_else(|| "ext4".into());
        return Setup::Mounted(MountedVolume {
            plugin: "kubernetes.io/csi".into(),
            unique: format!("kubernetes.io/csi/{}^{}", csi.driver, csi.volume_handle),
            host_path: publish.clone(),
            steps: vec!["attach".into(), "stage".into(), "publish".into()],
            mounts: vec![
                Mount {
                    source: dev.clone(),
                    target: global,
                    fstype: fs.clone(),
                    options: "rw,relatime".into(),
                    pod_uid: String::new(),
                },
                Mount {
                    source: dev,
                    target: publish,
                    fstype: fs,
                    options: "rw,relatime".into(),
                    pod_uid: uid.to_string(),
                },
            ],
            pv: Some(pv_name.to_string()),
        });
    }
    if spec.local.is_some() {
        let target = format!("{}/kubernetes.io~local-volume/{pv_name}", pods_dir(uid));
        return Setup::Mounted(MountedVolume {
            plugin: "kubernetes.io/local-volume".into(),
            unique: format!("kubernetes.io/local-volume/{pv_name}"),
            host_path: target.clone(),
            steps: vec!["publish".into()],
            mounts: vec![Mount {
                source: "/dev/sda1".into(),
                target,
                fstype: "ext4".into(),
                options: "rw,relatime".into(),
                pod_uid: uid.to_string(),
            }],
            pv: Some(pv_name.to_string()),
        });
    }
    if let Some(h) = &spec.host_path {
        // local-path volumes: a directory on this node, bind-mounted into the container
        // by the runtime; the kubelet has nothing to mount.
        let affinity_ok = pv_node(pv).is_none_or(|n| n == node);
        if !affinity_ok {
            return Setup::Failed(format!(
                "volume node affinity conflict: PV {pv_name} is pinned to node {}",
                pv_node(pv).unwrap_or_default()
            ));
        }
        return Setup::Mounted(MountedVolume {
            plugin: "kubernetes.io/host-path".into(),
            unique: format!("kubernetes.io/host-path/{pv_name}"),
            host_path: h.path.clone(),
            steps: vec!["publish".into()],
            mounts: Vec::new(),
            pv: Some(pv_name.to_string()),
        });
    }
    Setup::Mounted(MountedVolume {
        plugin: "kubernetes.io/unknown".into(),
        unique: format!("kubernetes.io/unknown/{pv_name}"),
        host_path: format!("{}/kubernetes.io~unknown/{pv_name}", pods_dir(uid)),
        steps: vec!["publish".into()],
        mounts: Vec::new(),
        pv: Some(pv_name.to_string()),
    })
}

/// The node a PV's required node affinity pins it to (`kubernetes.io/hostname In [x]`).
pub fn pv_node(pv: &PersistentVolume) -> Option<String> {
    let terms = &pv
        .spec
        .as_ref()?
        .node_affinity
        .as_ref()?
        .required
        .as_ref()?
        .node_selector_terms;
    terms.iter().find_map(|t| {
        t.match_expressions.iter().flatten().find_map(|e| {
            (e.key == "kubernetes.io/hostname" && e.operator == "In")
                .then(|| e.values.as_ref()?.first().cloned())
                .flatten()
        })
    })
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// Where each of a container's volume mounts comes from on the host.
pub fn container_mounts(
    c: &Container,
    mounted: &BTreeMap<String, Box<MountedVolume>>,
) -> Vec<(String, String)> {
    c.volume_mounts
        .iter()
        .flatten()
        .filter_map(|m| {
            let v = mounted.get(&m.name)?;
            let host = match &m.sub_path {
                Some(s) if !s.is_empty() => format!("{}/{s}", v.host_path),
                _ => v.host_path.clone(),
            };
            Some((m.mount_path.clone(), host))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::{
        ConfigMap, ConfigMapKeySelector, EnvVar, EnvVarSource, PodSpec,
    };
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

    fn pod_with(c: Container) -> Pod {
        Pod {
            metadata: ObjectMeta {
                name: Some("web".into()),
                namespace: Some("default".into()),
                uid: Some("u1".into()),
                ..ObjectMeta::default()
            },
            spec: Some(PodSpec {
                containers: vec![c],
                ..PodSpec::default()
            }),
            status: None,
        }
    }

    #[test]
    fn env_from_a_missing_configmap_is_a_config_error() {
        let c = Container {
            name: "app".into(),
            env: Some(vec![EnvVar {
                name: "LEVEL".into(),
                value_from: Some(EnvVarSource {
                    config_map_key_ref: Some(ConfigMapKeySelector {
                        name: "app-config".into(),
                        key: "level".into(),
                        optional: None,
                    }),
                    ..EnvVarSource::default()
                }),
                value: None,
            }]),
            ..Container::default()
        };
        let pod = pod_with(c.clone());
        let mut objects = BTreeMap::new();
        assert_eq!(
            env(&pod, &c, &objects, "", "").unwrap_err(),
            "configmap \"app-config\" not found"
        );
        let cm = ConfigMap {
            metadata: ObjectMeta::default(),
            data: Some(
                [("other".to_string(), "x".to_string())]
                    .into_iter()
                    .collect(),
            ),
            ..ConfigMap::default()
        };
        objects.insert(
            "configmaps/app-config".to_string(),
            Ok(Arc::new(Object::from(cm))),
        );
        assert_eq!(
            env(&pod, &c, &objects, "", "").unwrap_err(),
            "couldn't find key level in ConfigMap default/app-config"
        );
    }
}

/// The files a ConfigMap, Secret or projected volume holds, as the kubelet's atomic
/// writer lays them out: each key (or each `items` entry, at its `path`) relative to the
/// volume's directory, with its contents. Other volumes hold no files of their own.
pub fn files(
    pod: &Pod,
    v: &Volume,
    objects: &BTreeMap<String, Result<Arc<Object>, String>>,
) -> Vec<(String, String)> {
    use k8s_openapi::api::core::v1::KeyToPath;
    let data = |key: String| -> BTreeMap<String, String> {
        match objects
            .get(&key)
            .and_then(|r| r.as_ref().ok())
            .map(|o| &**o)
        {
            Some(Object::ConfigMap(cm)) => cm.data.clone().unwrap_or_default(),
            Some(Object::Secret(s)) => s
                .data
                .iter()
                .flatten()
                .map(|(k, b)| (k.clone(), String::from_utf8_lossy(&b.0).into_owned()))
                .chain(s.string_data.clone().unwrap_or_default())
                .collect(),
            _ => BTreeMap::new(),
        }
    };
    let pick = |d: BTreeMap<String, String>, items: &Option<Vec<KeyToPath>>| match items {
        None => d.into_iter().collect::<Vec<_>>(),
        Some(items) => items
            .iter()
            .filter_map(|i| d.get(&i.key).map(|t| (i.path.clone(), t.clone())))
            .collect(),
    };
    let mut out = Vec::new();
    if let Some(cm) = &v.config_map {
        out = pick(data(format!("configmaps/{}", cm.name)), &cm.items);
    } else if let Some(s) = &v.secret {
        let name = s.secret_name.clone().unwrap_or_default();
        out = pick(data(format!("secrets/{name}")), &s.items);
    } else if let Some(p) = &v.projected {
        for src in p.sources.iter().flatten() {
            if let Some(cm) = &src.config_map {
                out.extend(pick(data(format!("configmaps/{}", cm.name)), &cm.items));
            }
            if let Some(s) = &src.secret {
                out.extend(pick(data(format!("secrets/{}", s.name)), &s.items));
            }
            if let Some(t) = &src.service_account_token {
                out.push((t.path.clone(), token(pod)));
            }
            for item in src
                .downward_api
                .iter()
                .flat_map(|d| d.items.iter().flatten())
            {
                let value = item
                    .field_ref
                    .as_ref()
                    .and_then(|f| field(pod, &f.field_path));
                if let Some(value) = value {
                    out.push((item.path.clone(), value));
                }
            }
        }
    } else if let Some(d) = &v.downward_api {
        for item in d.items.iter().flatten() {
            if let Some(value) = item
                .field_ref
                .as_ref()
                .and_then(|f| field(pod, &f.field_path))
            {
                out.push((item.path.clone(), value));
            }
        }
    }
    out
}

/// A downward-API field of the pod as the kubelet writes it into a file.
fn field(pod: &Pod, path: &str) -> Option<String> {
    let m = &pod.metadata;
    let map = |x: &Option<BTreeMap<String, String>>| {
        x.iter()
            .flatten()
            .map(|(k, v)| format!("{k}=\"{v}\""))
            .collect::<Vec<_>>()
            .join("\n")
    };
    Some(match path {
        "metadata.name" => m.name.clone()?,
        "metadata.namespace" => m.namespace.clone()?,
        "metadata.uid" => m.uid.clone()?,
        "metadata.labels" => map(&m.labels),
        "metadata.annotations" => map(&m.annotations),
        _ => return None,
    })
}

/// The bound service-account token the kubelet writes (a JWT's shape; not verifiable).
fn token(pod: &Pod) -> String {
    let uid = pod.metadata.uid.clone().unwrap_or_default();
    let h = crate::rng::fnv1a(uid.as_bytes());
    format!("eyJhbGciOiJSUzI1NiIsImtpZCI6Imt1YmVsb29wIn0.eyJzdWIiOiJzeXN0ZW06c2VydmljZWFjY291bnQifQ.{h:016x}{:016x}", h.rotate_left(17))
}
