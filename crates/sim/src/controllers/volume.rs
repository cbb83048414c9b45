//! The PersistentVolume controller (kube-controller-manager's binder) and, beside it, the
//! external local-path provisioner kind runs: default StorageClass assignment,
//! WaitForFirstConsumer, provisioning a hostPath PV pinned to the consumer's node,
//! binding claim and volume, and reclaiming volumes whose claim is gone.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::core::v1::{
    HostPathVolumeSource, NodeSelector, NodeSelectorRequirement, NodeSelectorTerm, ObjectReference,
    PersistentVolume, PersistentVolumeClaim, PersistentVolumeSpec, VolumeNodeAffinity,
};
use k8s_openapi::api::storage::v1::StorageClass;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use crate::api::{ApiRequest, Body, PatchType, Subresource, Verb};
use crate::client::recorder::NORMAL;
use crate::client::{Change, Recorder, WorkQueue};
use crate::cluster::addons::LOCAL_PATH_PROVISIONER;
use crate::controllers::{Action, Controller, Env, Informers, SyncResult};
use crate::object::{Kind, Object};
use crate::time::{Time, SECOND};

/// `pvClaimSyncPeriod`: unbound claims are looked at again this often.
const RESYNC: Time = 15 * SECOND;
/// How long the local-path helper pod takes to create the directory.
const PROVISION_TIME: Time = 2 * SECOND;

const SELECTED_NODE: &str = "volume.kubernetes.io/selected-node";
const DEFAULT_CLASS: &str = "storageclass.kubernetes.io/is-default-class";

/// The PV binder and the local-path provisioner.
#[derive(Default)]
pub struct VolumeController {
    provisioner: Option<Recorder>,
    /// Claims being provisioned: key → when the volume is ready.
    provisioning: BTreeMap<String, Time>,
    /// Writes already sent for a claim state (so each is sent once per state).
    sent: BTreeSet<String>,
    last_resync: Time,
}

fn claim(o: &Object) -> Option<&PersistentVolumeClaim> {
    match o {
        Object::PersistentVolumeClaim(c) => Some(c),
        _ => None,
    }
}

fn key_of(ns: &str, name: &str) -> String {
    format!("{ns}/{name}")
}

/// The claims a pod's volumes use (`ns/name`).
fn pod_claims(o: &Object) -> Vec<String> {
    let Object::Pod(p) = o else { return Vec::new() };
    let ns = p.metadata.namespace.clone().unwrap_or_default();
    p.spec
        .iter()
        .flat_map(|s| s.volumes.iter().flatten())
        .filter_map(|v| v.persistent_volume_claim.as_ref())
        .map(|c| key_of(&ns, &c.claim_name))
        .collect()
}

fn default_class(inf: &Informers) -> Option<StorageClass> {
    inf.of(Kind::StorageClass)
        .iter()
        .filter_map(|o| match &**o {
            Object::StorageClass(sc) => Some((**sc).clone()),
            _ => None,
        })
        .find(|sc| {
            sc.metadata
                .annotations
                .as_ref()
                .and_then(|a| a.get(DEFAULT_CLASS))
                .map(String::as_str)
                == Some("true")
        })
}

fn class(inf: &Informers, name: &str) -> Option<StorageClass> {
    match inf
        .of(Kind::StorageClass)
        .get("", name)
        .map(|o| (**o).clone())
    {
        Some(Object::StorageClass(sc)) => Some(*sc),
        _ => None,
    }
}

fn annotations(c: &PersistentVolumeClaim) -> BTreeMap<String, String> {
    c.metadata.annotations.clone().unwrap_or_default()
}

impl VolumeController {
    fn once(&mut self, what: String) -> bool {
        self.sent.insert(what)
    }

    fn event(&mut self, env: &mut Env, o: &Object, reason: &str, msg: &str) {
        env.event(o, NORMAL, reason, msg);
    }

    fn provisioner_event(
        &mut self,
        env: &mut Env,
        inf: &Informers,
        o: &Object,
        reason: &str,
        msg: &str,
    ) {
        if self.provisioner.is_none() {
            let pod = inf
                .of(Kind::Pod)
                .iter_ns("local-path-storage")
                .find(|p| p.name().starts_with("local-path-provisioner"))
                .map_or("local-path-provisioner".to_string(), |p| {
                    p.name().to_string()
                });
            let id = crate::cluster::uuid(env.rng);
            self.provisioner = Some(Recorder::new(
                &format!("{LOCAL_PATH_PROVISIONER}_{pod}_{id}"),
                None,
            ));
        }
        if let Some(rec) = self.provisioner.as_mut() {
            env.event_from(rec, o, NORMAL, reason, msg);
        }
    }

    fn sync_claim(&mut self, key: &str, env: &mut Env, inf: &Informers) {
        let (ns, name) = key.split_once('/').unwrap_or(("", key));
        let Some(obj) = inf.of(Kind::PersistentVolumeClaim).get(ns, name).cloned() else {
            self.provisioning.remove(key);
            return;
        };
        let Some(c) = claim(&obj).cloned() else {
            return;
        };
        if c.metadata.deletion_timestamp.is_some() {
            return;
        }
        let uid = c.metadata.uid.clone().unwrap_or_default();
        let rv = c.metadata.resource_version.clone().unwrap_or_default();
        let spec = c.spec.clone().unwrap_or_default();
        // RetroactiveDefaultStorageClass: a claim without a class gets the default.
        let Some(class_name) = spec.storage_class_name.clone() else {
            if let Some(sc) = default_class(inf) {
                if self.once(format!("class/{uid}")) {
                    let patch = serde_json::json!({"spec": {"storageClassName": sc.metadata.name}});
                    env.fire(
                        ApiRequest::new(Verb::Patch, Kind::PersistentVolumeClaim, ns, name)
                            .with_body(Body::Patch(PatchType::Merge, patch)),
                    );
                }
            }
            return;
        };
        let volume = spec.volume_name.clone().filter(|v| !v.is_empty());
        if let Some(pv_name) = volume {
            let pv = match inf
                .of(Kind::PersistentVolume)
                .get("", &pv_name)
                .map(|o| (**o).clone())
            {
                Some(Object::PersistentVolume(pv)) => pv,
                _ => return,
            };
            // A claim naming a volume that claims nobody: the binder claims it.
            let unclaimed = pv
                .spec
                .as_ref()
                .and_then(|s| s.claim_ref.as_ref())
                .is_none();
            if unclaimed && self.once(format!("claimref/{pv_name}/{uid}")) {
                env.fire(claim_ref_patch(&pv_name, &c));
                return;
            }
            let phase = c
                .status
                .as_ref()
                .and_then(|s| s.phase.clone())
                .unwrap_or_default();
            if phase != "Bound" && self.once(format!("bound/{uid}/{rv}")) {
                let pvs = pv.spec.clone().unwrap_or_default();
                let status = serde_json::json!({"status": {
                    "phase": "Bound",
                    "accessModes": pvs.access_modes,
                    "capacity": pvs.capacity,
                }});
                env.fire(
                    ApiRequest::new(Verb::Patch, Kind::PersistentVolumeClaim, ns, name)
                        .with_subresource(Subresource::Status)
                        .with_body(Body::Patch(PatchType::Merge, status)),
                );
                let ann = serde_json::json!({"metadata": {"annotations": {"pv.kubernetes.io/bind-completed": "yes", "pv.kubernetes.io/bound-by-controller": "yes"}}});
                env.fire(
                    ApiRequest::new(Verb::Patch, Kind::PersistentVolumeClaim, ns, name)
                        .with_body(Body::Patch(PatchType::Merge, ann)),
                );
            }
            return;
        }
        // A volume already claims it (provisioned for it): bind the claim to it.
        let claimed_by = inf
            .of(Kind::PersistentVolume)
            .iter()
            .find_map(|o| match &**o {
                Object::PersistentVolume(pv) => pv
                    .spec
                    .as_ref()
                    .and_then(|s| s.claim_ref.as_ref())
                    .filter(|r| r.uid.as_deref() == Some(uid.as_str()))
                    .and(pv.metadata.name.clone()),
                _ => None,
            });
        if let Some(pv) = claimed_by {
            if self.once(format!("bind/{uid}")) {
                let patch = serde_json::json!({"spec": {"volumeName": pv}});
                env.fire(
                    ApiRequest::new(Verb::Patch, Kind::PersistentVolumeClaim, ns, name)
                        .with_body(Body::Patch(PatchType::Merge, patch)),
                );
            }
            return;
        }
        // Static binding: an Available volume of the claim's class that fits it.
        let selected = annotations(&c).get(SELECTED_NODE).cloned();
        // `IsDelayBindingMode`: a class that does not exist does not delay binding, so a
        // static volume of class `manual` binds without a StorageClass object.
        let static_ok = class_name.is_empty()
            || class(inf, &class_name).is_none_or(|sc| {
                sc.volume_binding_mode.as_deref() != Some("WaitForFirstConsumer")
                    || selected.is_some()
            });
        if static_ok {
            if let Some(pv) = matching_volume(inf, &c, &class_name, selected.as_deref()) {
                if self.once(format!("claimref/{pv}/{uid}")) {
                    env.fire(claim_ref_patch(&pv, &c));
                }
                return;
            }
        }
        if class_name.is_empty() {
            if self.once(format!("nopv/{uid}/{}", env.now() / RESYNC)) {
                self.event(
                    env,
                    &obj,
                    "FailedBinding",
                    "no persistent volumes available for this claim and no storage class is set",
                );
            }
            return;
        }
        let Some(sc) = class(inf, &class_name) else {
            if self.once(format!("noclass/{uid}/{}", env.now() / RESYNC)) {
                let msg = format!("storageclass.storage.k8s.io \"{class_name}\" not found");
                env.event(
                    &obj,
                    crate::client::recorder::WARNING,
                    "ProvisioningFailed",
                    &msg,
                );
            }
            return;
        };
        let ann = annotations(&c);
        let wffc = sc.volume_binding_mode.as_deref() == Some("WaitForFirstConsumer");
        let mut node = ann.get(SELECTED_NODE).cloned();
        if wffc && node.is_none() {
            // The scheduler's VolumeBinding plugin records the chosen node at PreBind;
            // a consumer already bound to a node (nodeName set directly) picks it too.
            let consumer = inf.of(Kind::Pod).iter_ns(ns).find(|p| {
                pod_claims(p).contains(&key.to_string())
                    && matches!(&***p, Object::Pod(pod) if pod.spec.as_ref().and_then(|s| s.node_name.clone()).is_some())
            });
            match consumer.and_then(|p| match &**p {
                Object::Pod(pod) => pod.spec.as_ref().and_then(|s| s.node_name.clone()),
                _ => None,
            }) {
                Some(n) => {
                    if self.once(format!("select/{uid}")) {
                        let patch =
                            serde_json::json!({"metadata": {"annotations": {SELECTED_NODE: n}}});
                        env.fire(
                            ApiRequest::new(Verb::Patch, Kind::PersistentVolumeClaim, ns, name)
                                .with_body(Body::Patch(PatchType::Merge, patch)),
                        );
                    }
                    node = Some(n);
                }
                None => {
                    if self.once(format!("wffc/{uid}/{}", env.now() / RESYNC)) {
                        self.event(
                            env,
                            &obj,
                            "WaitForFirstConsumer",
                            "waiting for first consumer to be created before binding",
                        );
                    }
                    return;
                }
            }
        }
        let provisioner = sc.provisioner.clone();
        if provisioner == "kubernetes.io/no-provisioner" {
            return;
        }
        if self.once(format!("annotate/{uid}")) {
            let patch = serde_json::json!({"metadata": {"annotations": {
                "volume.beta.kubernetes.io/storage-provisioner": provisioner,
                "volume.kubernetes.io/storage-provisioner": provisioner,
            }}});
            env.fire(
                ApiRequest::new(Verb::Patch, Kind::PersistentVolumeClaim, ns, name)
                    .with_body(Body::Patch(PatchType::Merge, patch)),
            );
        }
        if self.once(format!("external/{uid}/{}", env.now() / RESYNC)) {
            let msg = format!("Waiting for a volume to be created either by the external provisioner '{provisioner}' or manually by the system administrator. If volume creation is delayed, please verify that the provisioner is running and correctly registered.");
            self.event(env, &obj, "ExternalProvisioning", &msg);
        }
        if provisioner != LOCAL_PATH_PROVISIONER || !provisioner_running(inf) {
            return;
        }
        let Some(node) = node.or_else(|| first_node(inf)) else {
            return;
        };
        match self.provisioning.get(key).copied() {
            None => {
                self.provisioner_event(
                    env,
                    inf,
                    &obj,
                    "Provisioning",
                    &format!("External provisioner is provisioning volume for claim \"{key}\""),
                );
                let at = env.now() + PROVISION_TIME;
                self.provisioning.insert(key.to_string(), at);
                env.enqueue_after(format!("claim/{key}"), at - env.now());
            }
            Some(at) if env.now() >= at => {
                if self.once(format!("create/{uid}")) {
                    let pv = local_path_pv(&c, &sc, &node);
                    let pv_name = pv.metadata.name.clone().unwrap_or_default();
                    env.fire(
                        ApiRequest::new(Verb::Create, Kind::PersistentVolume, "", "")
                            .with_body(Body::Object(pv.into())),
                    );
                    self.provisioner_event(
                        env,
                        inf,
                        &obj,
                        "ProvisioningSucceeded",
                        &format!("Successfully provisioned volume {pv_name}"),
                    );
                }
            }
            Some(at) => {
                env.enqueue_after(format!("claim/{key}"), at - env.now());
            }
        }
    }

    fn sync_volume(&mut self, name: &str, env: &mut Env, inf: &Informers) {
        let pv = match inf
            .of(Kind::PersistentVolume)
            .get("", name)
            .map(|o| (**o).clone())
        {
            Some(Object::PersistentVolume(pv)) => pv,
            _ => return,
        };
        if pv.metadata.deletion_timestamp.is_some() {
            return;
        }
        let rv = pv.metadata.resource_version.clone().unwrap_or_default();
        let spec = pv.spec.clone().unwrap_or_default();
        let phase = pv
            .status
            .as_ref()
            .and_then(|s| s.phase.clone())
            .unwrap_or_default();
        let set_phase = |env: &mut Env, p: &str| {
            let patch = serde_json::json!({"status": {"phase": p, "lastPhaseTransitionTime": crate::time::k8s_time(env.now())}});
            env.fire(
                ApiRequest::new(Verb::Patch, Kind::PersistentVolume, "", name)
                    .with_subresource(Subresource::Status)
                    .with_body(Body::Patch(PatchType::Merge, patch)),
            );
        };
        let Some(r) = spec.claim_ref.clone() else {
            if phase != "Available" && self.once(format!("available/{name}/{rv}")) {
                set_phase(env, "Available");
            }
            return;
        };
        if r.uid.as_deref().unwrap_or("").is_empty() {
            // Pre-bound to a claim that is not bound to it yet: syncing the claim binds.
            if phase != "Available" && self.once(format!("available/{name}/{rv}")) {
                set_phase(env, "Available");
            }
            return;
        }
        let ns = r.namespace.clone().unwrap_or_default();
        let cname = r.name.clone().unwrap_or_default();
        let claim_obj = inf
            .of(Kind::PersistentVolumeClaim)
            .get(&ns, &cname)
            .cloned();
        let live = claim_obj
            .as_ref()
            .and_then(|o| claim(o))
            .filter(|c| c.metadata.uid == r.uid);
        match live {
            Some(c) => {
                if phase != "Bound"
                    && c.spec.as_ref().and_then(|s| s.volume_name.as_deref()) == Some(name)
                    && self.once(format!("pvbound/{name}/{rv}"))
                {
                    set_phase(env, "Bound");
                }
            }
            None => {
                // The claim is gone: Released, then reclaimed by policy.
                if phase != "Released" && phase != "Failed" && self.once(format!("released/{name}"))
                {
                    set_phase(env, "Released");
                }
                if spec
                    .persistent_volume_reclaim_policy
                    .as_deref()
                    .unwrap_or("Delete")
                    == "Delete"
                    && self.once(format!("delete/{name}"))
                {
                    env.fire(ApiRequest::new(
                        Verb::Delete,
                        Kind::PersistentVolume,
                        "",
                        name,
                    ));
                }
            }
        }
    }
}

/// A merge patch setting a volume's claimRef to `c`.
fn claim_ref_patch(pv: &str, c: &PersistentVolumeClaim) -> ApiRequest {
    let patch = serde_json::json!({"spec": {"claimRef": {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "name": c.metadata.name,
        "namespace": c.metadata.namespace,
        "uid": c.metadata.uid,
        "resourceVersion": c.metadata.resource_version,
    }}, "metadata": {"annotations": {"pv.kubernetes.io/bound-by-controller": "yes"}}});
    ApiRequest::new(Verb::Patch, Kind::PersistentVolume, "", pv)
        .with_body(Body::Patch(PatchType::Merge, patch))
}

fn bytes(q: Option<&k8s_openapi::apimachinery::pkg::api::resource::Quantity>) -> i64 {
    q.and_then(|q| crate::quantity::parse(&q.0).ok())
        .map_or(0, |q| q.value())
}

/// The smallest Available volume of `class` that fits the claim (and its node).
fn matching_volume(
    inf: &Informers,
    c: &PersistentVolumeClaim,
    class: &str,
    node: Option<&str>,
) -> Option<String> {
    let spec = c.spec.clone().unwrap_or_default();
    let want = bytes(
        spec.resources
            .as_ref()
            .and_then(|r| r.requests.as_ref())
            .and_then(|r| r.get("storage")),
    );
    let modes = spec.access_modes.clone().unwrap_or_default();
    inf.of(Kind::PersistentVolume)
        .iter()
        .filter_map(|o| match &**o {
            Object::PersistentVolume(pv) => Some(pv.clone()),
            _ => None,
        })
        .filter(|pv| {
            let s = pv.spec.clone().unwrap_or_default();
            s.claim_ref.is_none()
                && pv.metadata.deletion_timestamp.is_none()
                && s.storage_class_name.clone().unwrap_or_default() == class
                && modes
                    .iter()
                    .all(|m| s.access_modes.iter().flatten().any(|x| x == m))
                && node.is_none_or(|n| crate::node::volumes::pv_node(pv).is_none_or(|p| p == n))
        })
        .map(|pv| {
            let size = bytes(
                pv.spec
                    .as_ref()
                    .and_then(|s| s.capacity.as_ref())
                    .and_then(|c| c.get("storage")),
            );
            (size, pv.metadata.name.clone().unwrap_or_default())
        })
        .filter(|(size, _)| *size >= want)
        .min()
        .map(|(_, n)| n)
}

fn provisioner_running(inf: &Informers) -> bool {
    inf.of(Kind::Pod)
        .iter_ns("local-path-storage")
        .any(|p| match &**p {
            Object::Pod(pod) => {
                pod.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Running")
            }
            _ => false,
        })
}

fn first_node(inf: &Informers) -> Option<String> {
    inf.of(Kind::Node)
        .iter()
        .next()
        .map(|n| n.name().to_string())
}

/// The PV the local-path provisioner creates for a claim on `node`.
fn local_path_pv(c: &PersistentVolumeClaim, sc: &StorageClass, node: &str) -> PersistentVolume {
    let ns = c.metadata.namespace.clone().unwrap_or_default();
    let name = c.metadata.name.clone().unwrap_or_default();
    let uid = c.metadata.uid.clone().unwrap_or_default();
    let spec = c.spec.clone().unwrap_or_default();
    let pv_name = format!("pvc-{uid}");
    let storage = spec
        .resources
        .as_ref()
        .and_then(|r| r.requests.as_ref())
        .and_then(|r| r.get("storage"))
        .cloned();
    PersistentVolume {
        metadata: ObjectMeta {
            name: Some(pv_name.clone()),
            annotations: Some(
                [
                    (
                        "local.path.provisioner/selected-node".to_string(),
                        node.to_string(),
                    ),
                    (
                        "pv.kubernetes.io/provisioned-by".to_string(),
                        LOCAL_PATH_PROVISIONER.to_string(),
                    ),
                ]
                .into_iter()
                .collect(),
            ),
            ..ObjectMeta::default()
        },
        spec: Some(PersistentVolumeSpec {
            access_modes: spec.access_modes.clone(),
            capacity: storage.map(|s| [("storage".to_string(), s)].into_iter().collect()),
            claim_ref: Some(ObjectReference {
                api_version: Some("v1".into()),
                kind: Some("PersistentVolumeClaim".into()),
                name: Some(name.clone()),
                namespace: Some(ns.clone()),
                resource_version: c.metadata.resource_version.clone(),
                uid: Some(uid.clone()),
                field_path: None,
            }),
            host_path: Some(HostPathVolumeSource {
                path: format!("/var/local-path-provisioner/{pv_name}_{ns}_{name}"),
                type_: Some("DirectoryOrCreate".into()),
            }),
            node_affinity: Some(VolumeNodeAffinity {
                required: Some(NodeSelector {
                    node_selector_terms: vec![NodeSelectorTerm {
                        match_expressions: Some(vec![NodeSelectorRequirement {
                            key: "kubernetes.io/hostname".into(),
                            operator: "In".into(),
                            values: Some(vec![node.to_string()]),
                        }]),
                        match_fields: None,
                    }],
                }),
            }),
            persistent_volume_reclaim_policy: Some(
                sc.reclaim_policy.clone().unwrap_or_else(|| "Delete".into()),
            ),
            storage_class_name: sc.metadata.name.clone(),
            volume_mode: Some(
                spec.volume_mode
                    .clone()
                    .unwrap_or_else(|| "Filesystem".into()),
            ),
            ..PersistentVolumeSpec::default()
        }),
        status: None,
    }
}

impl Controller for VolumeController {
    fn name(&self) -> &'static str {
        "persistentvolume-binder"
    }

    fn component(&self) -> &'static str {
        "persistentvolume-controller"
    }

    fn watches(&self) -> &'static [Kind] {
        &[
            Kind::PersistentVolumeClaim,
            Kind::PersistentVolume,
            Kind::Pod,
            Kind::StorageClass,
            Kind::Node,
        ]
    }

    fn on_change(
        &mut self,
        kind: Kind,
        change: &Change,
        queue: &mut WorkQueue<String>,
        inf: &Informers,
        _now: Time,
    ) {
        let o = change.object();
        match kind {
            Kind::PersistentVolumeClaim => {
                queue.add(format!("claim/{}", key_of(o.namespace(), o.name())));
                if let Some(v) = claim(o).and_then(|c| c.spec.as_ref()?.volume_name.clone()) {
                    queue.add(format!("volume/{v}"));
                }
                if matches!(change, Change::Deleted(_)) {
                    for pv in inf.of(Kind::PersistentVolume).iter() {
                        queue.add(format!("volume/{}", pv.name()));
                    }
                }
            }
            Kind::PersistentVolume => {
                queue.add(format!("volume/{}", o.name()));
                if let Object::PersistentVolume(pv) = &**o {
                    if let Some(r) = pv.spec.as_ref().and_then(|s| s.claim_ref.as_ref()) {
                        queue.add(format!(
                            "claim/{}/{}",
                            r.namespace.clone().unwrap_or_default(),
                            r.name.clone().unwrap_or_default()
                        ));
                    }
                }
                if matches!(change, Change::Deleted(_)) {
                    let name = format!("/{}", o.name());
                    self.sent.retain(|s| !s.ends_with(&name));
                }
            }
            Kind::Pod => {
                for c in pod_claims(o) {
                    queue.add(format!("claim/{c}"));
                }
            }
            Kind::StorageClass => {
                for c in inf.of(Kind::PersistentVolumeClaim).iter() {
                    queue.add(format!("claim/{}", key_of(c.namespace(), c.name())));
                }
            }
            _ => {}
        }
    }

    fn sync(&mut self, key: &str, env: &mut Env, inf: &Informers) -> SyncResult {
        if let Some(k) = key.strip_prefix("claim/") {
            self.sync_claim(k, env, inf);
        } else if let Some(n) = key.strip_prefix("volume/") {
            self.sync_volume(n, env, inf);
        }
        Ok(Action::await_change())
    }

    fn tick(&mut self, env: &mut Env, inf: &Informers) {
        if env.now() < self.last_resync + RESYNC {
            return;
        }
        self.last_resync = env.now();
        for c in inf.of(Kind::PersistentVolumeClaim).iter() {
            let unbound = claim(c).is_some_and(|x| {
                x.status.as_ref().and_then(|s| s.phase.as_deref()) != Some("Bound")
            });
            if unbound {
                env.enqueue(format!("claim/{}", key_of(c.namespace(), c.name())));
            }
        }
    }
}
