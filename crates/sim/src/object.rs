//! The API object model: every kind the cluster stores, over `k8s-openapi` (v1.35) types.

use std::fmt;

use k8s_openapi::api::apps::v1::{
    ControllerRevision, DaemonSet, Deployment, ReplicaSet, StatefulSet,
};
use k8s_openapi::api::authorization::v1::SelfSubjectAccessReview;
use k8s_openapi::api::autoscaling::v2::HorizontalPodAutoscaler;
use k8s_openapi::api::batch::v1::{CronJob, Job};
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::{
    ConfigMap, Endpoints, Event, LimitRange, Namespace, Node, PersistentVolume,
    PersistentVolumeClaim, Pod, ResourceQuota, Secret, Service, ServiceAccount,
};
use k8s_openapi::api::discovery::v1::EndpointSlice;
use k8s_openapi::api::networking::v1::{Ingress, IngressClass, NetworkPolicy};
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding, Role, RoleBinding};
use k8s_openapi::api::scheduling::v1::PriorityClass;
use k8s_openapi::api::storage::v1::StorageClass;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

pub use crate::object_custom::{CustomKind, CustomKinds, CustomObject, PrinterColumn};

/// Declares `Kind` and `Object` together so the two lists can never drift apart.
macro_rules! kinds {
    ($( $variant:ident : $ty:ty {
        group: $group:expr, version: $version:expr, plural: $plural:expr,
        singular: $singular:expr, short: [$($short:expr),*], namespaced: $ns:expr,
        etcd: $etcd:expr $(,)?
    } ),* $(,)?) => {
        /// A resource kind the apiserver serves.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum Kind {
            $($variant,)*
            /// A kind a CustomResourceDefinition declares.
            Custom(CustomKind),
        }

        /// A stored API object of any kind. Each variant is boxed, so an `Object` is two
        /// words and each allocation of one is the size of its own kind: unboxed, every
        /// `Arc<Object>` (an Event's, a request's body) took the largest kind's ~3 KB.
        #[derive(Clone, Debug, PartialEq)]
        pub enum Object {
            $($variant(Box<$ty>),)*
            /// An object of a custom kind.
            Custom(Box<CustomObject>),
        }

        impl Kind {
            /// Every kind, in declaration order.
            pub const ALL: &'static [Kind] = &[$(Kind::$variant),*];

            /// Static facts about this kind.
            pub fn info(self) -> &'static KindInfo {
                match self {
                    $(Kind::$variant => &KindInfo {
                        kind: stringify!($variant),
                        group: $group,
                        version: $version,
                        plural: $plural,
                        singular: $singular,
                        short_names: &[$($short),*],
                        categories: &[],
                        printer_columns: &[],
                        namespaced: $ns,
                        etcd_prefix: $etcd,
                    },)*
                    Kind::Custom(c) => c.info(),
                }
            }
        }

        impl Object {
            /// The kind of this object.
            pub fn kind(&self) -> Kind {
                match self {
                    $(Object::$variant(_) => Kind::$variant,)*
                    Object::Custom(o) => Kind::Custom(o.kind),
                }
            }

            /// The object's metadata.
            pub fn meta(&self) -> &ObjectMeta {
                match self {
                    $(Object::$variant(o) => &o.metadata,)*
                    Object::Custom(o) => &o.metadata,
                }
            }

            /// The object's metadata, mutably.
            pub fn meta_mut(&mut self) -> &mut ObjectMeta {
                match self {
                    $(Object::$variant(o) => &mut o.metadata,)*
                    Object::Custom(o) => &mut o.metadata,
                }
            }

            /// Serializes to JSON (with apiVersion and kind).
            pub fn to_value(&self) -> serde_json::Value {
                let v = match self {
                    $(Object::$variant(o) => serde_json::to_value(o),)*
                    Object::Custom(o) => Ok(o.to_value()),
                };
                // Serializing these types cannot fail: they contain no maps with non-string keys.
                v.unwrap_or(serde_json::Value::Null)
            }

            /// [`Object::to_value`] as bytes, written straight from the object (fields in
            /// declaration order, not sorted).
            pub fn to_json(&self) -> Vec<u8> {
                let v = match self {
                    $(Object::$variant(o) => serde_json::to_vec(o),)*
                    Object::Custom(o) => serde_json::to_vec(&o.to_value()),
                };
                v.unwrap_or_default()
            }

            /// Deserializes a JSON value of the given kind. Unknown fields are collected in
            /// `unknown` (as dotted paths) instead of failing, as the apiserver's strict
            /// field validation needs to report them all.
            pub fn from_value(kind: Kind, value: &serde_json::Value, unknown: &mut Vec<String>)
                -> Result<Object, String>
            {
                match kind {
                    $(Kind::$variant => {
                        let o: $ty = decode_tracking_unknown(value, unknown)?;
                        Ok(Object::$variant(Box::new(o)))
                    })*
                    Kind::Custom(c) => {
                        Ok(Object::Custom(Box::new(CustomObject::from_value(c, value, unknown)?)))
                    }
                }
            }
        }

        $(
            impl From<$ty> for Object {
                fn from(o: $ty) -> Object { Object::$variant(Box::new(o)) }
            }

            impl From<Box<$ty>> for Object {
                fn from(o: Box<$ty>) -> Object { Object::$variant(o) }
            }
        )*

        impl From<CustomObject> for Object {
            fn from(o: CustomObject) -> Object { Object::Custom(Box::new(o)) }
        }
    };
}

kinds! {
    Pod: Pod { group: "", version: "v1", plural: "pods", singular: "pod", short: ["po"], namespaced: true, etcd: "pods" },
    Node: Node { group: "", version: "v1", plural: "nodes", singular: "node", short: ["no"], namespaced: false, etcd: "minions" },
    Service: Service { group: "", version: "v1", plural: "services", singular: "service", short: ["svc"], namespaced: true, etcd: "services/specs" },
    Endpoints: Endpoints { group: "", version: "v1", plural: "endpoints", singular: "endpoints", short: ["ep"], namespaced: true, etcd: "services/endpoints" },
    Namespace: Namespace { group: "", version: "v1", plural: "namespaces", singular: "namespace", short: ["ns"], namespaced: false, etcd: "namespaces" },
    ConfigMap: ConfigMap { group: "", version: "v1", plural: "configmaps", singular: "configmap", short: ["cm"], namespaced: true, etcd: "configmaps" },
    Secret: Secret { group: "", version: "v1", plural: "secrets", singular: "secret", short: [], namespaced: true, etcd: "secrets" },
    ServiceAccount: ServiceAccount { group: "", version: "v1", plural: "serviceaccounts", singular: "serviceaccount", short: ["sa"], namespaced: true, etcd: "serviceaccounts" },
    Event: Event { group: "", version: "v1", plural: "events", singular: "event", short: ["ev"], namespaced: true, etcd: "events" },
    PersistentVolumeClaim: PersistentVolumeClaim { group: "", version: "v1", plural: "persistentvolumeclaims", singular: "persistentvolumeclaim", short: ["pvc"], namespaced: true, etcd: "persistentvolumeclaims" },
    PersistentVolume: PersistentVolume { group: "", version: "v1", plural: "persistentvolumes", singular: "persistentvolume", short: ["pv"], namespaced: false, etcd: "persistentvolumes" },
    ResourceQuota: ResourceQuota { group: "", version: "v1", plural: "resourcequotas", singular: "resourcequota", short: ["quota"], namespaced: true, etcd: "resourcequotas" },
    LimitRange: LimitRange { group: "", version: "v1", plural: "limitranges", singular: "limitrange", short: ["limits"], namespaced: true, etcd: "limitranges" },
    Deployment: Deployment { group: "apps", version: "v1", plural: "deployments", singular: "deployment", short: ["deploy"], namespaced: true, etcd: "deployments" },
    ReplicaSet: ReplicaSet { group: "apps", version: "v1", plural: "replicasets", singular: "replicaset", short: ["rs"], namespaced: true, etcd: "replicasets" },
    DaemonSet: DaemonSet { group: "apps", version: "v1", plural: "daemonsets", singular: "daemonset", short: ["ds"], namespaced: true, etcd: "daemonsets" },
    StatefulSet: StatefulSet { group: "apps", version: "v1", plural: "statefulsets", singular: "statefulset", short: ["sts"], namespaced: true, etcd: "statefulsets" },
    ControllerRevision: ControllerRevision { group: "apps", version: "v1", plural: "controllerrevisions", singular: "controllerrevision", short: [], namespaced: true, etcd: "controllerrevisions" },
    Job: Job { group: "batch", version: "v1", plural: "jobs", singular: "job", short: [], namespaced: true, etcd: "jobs" },
    CronJob: CronJob { group: "batch", version: "v1", plural: "cronjobs", singular: "cronjob", short: ["cj"], namespaced: true, etcd: "cronjobs" },
    HorizontalPodAutoscaler: HorizontalPodAutoscaler { group: "autoscaling", version: "v2", plural: "horizontalpodautoscalers", singular: "horizontalpodautoscaler", short: ["hpa"], namespaced: true, etcd: "horizontalpodautoscalers" },
    EndpointSlice: EndpointSlice { group: "discovery.k8s.io", version: "v1", plural: "endpointslices", singular: "endpointslice", short: [], namespaced: true, etcd: "endpointslices" },
    NetworkPolicy: NetworkPolicy { group: "networking.k8s.io", version: "v1", plural: "networkpolicies", singular: "networkpolicy", short: ["netpol"], namespaced: true, etcd: "networkpolicies" },
    PodDisruptionBudget: PodDisruptionBudget { group: "policy", version: "v1", plural: "poddisruptionbudgets", singular: "poddisruptionbudget", short: ["pdb"], namespaced: true, etcd: "poddisruptionbudgets" },
    Lease: Lease { group: "coordination.k8s.io", version: "v1", plural: "leases", singular: "lease", short: [], namespaced: true, etcd: "leases" },
    Role: Role { group: "rbac.authorization.k8s.io", version: "v1", plural: "roles", singular: "role", short: [], namespaced: true, etcd: "roles" },
    RoleBinding: RoleBinding { group: "rbac.authorization.k8s.io", version: "v1", plural: "rolebindings", singular: "rolebinding", short: [], namespaced: true, etcd: "rolebindings" },
    ClusterRole: ClusterRole { group: "rbac.authorization.k8s.io", version: "v1", plural: "clusterroles", singular: "clusterrole", short: [], namespaced: false, etcd: "clusterroles" },
    ClusterRoleBinding: ClusterRoleBinding { group: "rbac.authorization.k8s.io", version: "v1", plural: "clusterrolebindings", singular: "clusterrolebinding", short: [], namespaced: false, etcd: "clusterrolebindings" },
    PriorityClass: PriorityClass { group: "scheduling.k8s.io", version: "v1", plural: "priorityclasses", singular: "priorityclass", short: ["pc"], namespaced: false, etcd: "priorityclasses" },
    StorageClass: StorageClass { group: "storage.k8s.io", version: "v1", plural: "storageclasses", singular: "storageclass", short: ["sc"], namespaced: false, etcd: "storageclasses" },
    Ingress: Ingress { group: "networking.k8s.io", version: "v1", plural: "ingresses", singular: "ingress", short: ["ing"], namespaced: true, etcd: "ingress" },
    IngressClass: IngressClass { group: "networking.k8s.io", version: "v1", plural: "ingressclasses", singular: "ingressclass", short: [], namespaced: false, etcd: "ingressclasses" },
    CustomResourceDefinition: CustomResourceDefinition { group: "apiextensions.k8s.io", version: "v1", plural: "customresourcedefinitions", singular: "customresourcedefinition", short: ["crd", "crds"], namespaced: false, etcd: "apiextensions.k8s.io/customresourcedefinitions" },
    // Never stored: the apiserver answers a create with the review's verdict.
    SelfSubjectAccessReview: SelfSubjectAccessReview { group: "authorization.k8s.io", version: "v1", plural: "selfsubjectaccessreviews", singular: "selfsubjectaccessreview", short: [], namespaced: false, etcd: "selfsubjectaccessreviews" },
}

/// Static facts about a kind: its names, group/version, scope and etcd key prefix.
#[derive(Debug)]
pub struct KindInfo {
    /// `Pod`, `Deployment`, …
    pub kind: &'static str,
    /// API group, empty for the core group.
    pub group: &'static str,
    /// API version within the group.
    pub version: &'static str,
    /// Resource name: `pods`.
    pub plural: &'static str,
    /// Singular resource name: `pod`.
    pub singular: &'static str,
    /// kubectl short names: `po`.
    pub short_names: &'static [&'static str],
    /// Categories a custom kind joins (`all`); built-in `all` members are in `get::ALL`.
    pub categories: &'static [&'static str],
    /// A custom kind's `additionalPrinterColumns` (built-ins print through `printers`).
    pub printer_columns: &'static [PrinterColumn],
    /// Whether objects live in a namespace.
    pub namespaced: bool,
    /// The segment after `/registry/` in etcd keys (`minions` for nodes, as upstream).
    pub etcd_prefix: &'static str,
}

impl KindInfo {
    /// `apps/v1`, or `v1` for the core group.
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.to_string()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    /// `deployments.apps`, or `pods` for the core group: how kubectl names a resource.
    pub fn group_resource(&self) -> String {
        if self.group.is_empty() {
            self.plural.to_string()
        } else {
            format!("{}.{}", self.plural, self.group)
        }
    }
}

impl Kind {
    /// Resolves what a user types after `kubectl get`: plural, singular, short name or
    /// kind, optionally qualified with the group (`deployments.apps`), case-insensitive.
    pub fn from_resource_arg(arg: &str) -> Option<Kind> {
        let lower = arg.to_ascii_lowercase();
        let (name, group) = match lower.split_once('.') {
            Some((n, g)) => (n.to_string(), Some(g.to_string())),
            None => (lower.clone(), None),
        };
        Kind::ALL.iter().copied().find(|k| {
            let i = k.info();
            let name_ok = i.plural == name
                || i.singular == name
                || i.kind.eq_ignore_ascii_case(&name)
                || i.short_names.contains(&name.as_str());
            let group_ok = match &group {
                None => true,
                Some(g) => i.group == g || format!("{}.{}", i.version, i.group) == *g,
            };
            name_ok && group_ok
        })
    }

    /// The etcd key prefix of this kind's objects in `namespace` (all of them for a
    /// cluster-scoped kind): `/registry/pods/default/`, `/registry/minions/`.
    pub fn registry_prefix(self, namespace: &str) -> String {
        let info = self.info();
        if info.namespaced {
            format!("/registry/{}/{namespace}/", info.etcd_prefix)
        } else {
            format!("/registry/{}/", info.etcd_prefix)
        }
    }

    /// Resolves `apiVersion` + `kind` from a manifest.
    pub fn from_api_version_kind(api_version: &str, kind: &str) -> Option<Kind> {
        Kind::ALL.iter().copied().find(|k| {
            let i = k.info();
            i.kind == kind && i.api_version() == api_version
        })
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.info().kind)
    }
}

/// Identifies one object: kind, namespace (empty for cluster-scoped) and name.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ObjectKey {
    /// The kind.
    pub kind: Kind,
    /// Namespace; empty for cluster-scoped kinds.
    pub namespace: String,
    /// Name.
    pub name: String,
}

impl ObjectKey {
    /// A key for a namespaced or cluster-scoped object.
    pub fn new(kind: Kind, namespace: &str, name: &str) -> ObjectKey {
        let namespace = if kind.info().namespaced {
            namespace.to_string()
        } else {
            String::new()
        };
        ObjectKey {
            kind,
            namespace,
            name: name.to_string(),
        }
    }

    /// The etcd key, following upstream's layout (`/registry/pods/default/nginx-…`).
    pub fn etcd_key(&self) -> String {
        let prefix = self.kind.info().etcd_prefix;
        if self.namespace.is_empty() {
            format!("/registry/{}/{}", prefix, self.name)
        } else {
            format!("/registry/{}/{}/{}", prefix, self.namespace, self.name)
        }
    }
}

impl Object {
    /// The key of this object.
    pub fn key(&self) -> ObjectKey {
        let m = self.meta();
        ObjectKey::new(
            self.kind(),
            m.namespace.as_deref().unwrap_or(""),
            m.name.as_deref().unwrap_or(""),
        )
    }

    /// The object's name, or "" if unset.
    pub fn name(&self) -> &str {
        self.meta().name.as_deref().unwrap_or("")
    }

    /// The object's namespace, or "" if unset or cluster-scoped.
    pub fn namespace(&self) -> &str {
        self.meta().namespace.as_deref().unwrap_or("")
    }

    /// The resourceVersion as a number (0 if unset or not numeric).
    pub fn resource_version(&self) -> u64 {
        self.meta()
            .resource_version
            .as_deref()
            .and_then(|s| s.parse().ok())
            .unwrap_or(0)
    }
}

/// Deserializes `value` into `T`, recording every field `T` ignored as a dotted path
/// (`spec.replica`, `spec.template.spec.containers[0].imagee`), as upstream's strict
/// decoder prints them.
///
/// The fields `T` ignored are found by serializing the decoded `T` back and walking the
/// input beside it: a key of the input that the round trip lost is one `T` has no field
/// for. (A wrapping deserializer that records ignored fields, as serde_ignored is, compiles
/// every nested type's `Deserialize` again for each wrapper type: it was 0.86 MB of the
/// page's code, and PodSpec's decoder eight times over.) A key whose value is `null` is
/// not judged: `null` decodes to an unset field, which serializes as no key at all.
pub fn decode_tracking_unknown<T: serde::de::DeserializeOwned + serde::Serialize>(
    value: &serde_json::Value,
    unknown: &mut Vec<String>,
) -> Result<T, String> {
    let decoded = decode::<T>(value)?;
    if let Ok(back) = serde_json::to_value(&decoded) {
        lost_keys(value, &back, &mut String::new(), unknown);
    }
    Ok(decoded)
}

/// Deserializes `value` into `T`, ignoring unknown fields. Every typed decode of the
/// engine goes through here, from a `&serde_json::Value`, so each k8s-openapi type's
/// `Deserialize` is compiled once (use this rather than `serde_json::from_value`, which
/// would compile `T`'s `Deserialize` again for an owned `Value`).
pub fn decode<T: serde::de::DeserializeOwned>(value: &serde_json::Value) -> Result<T, String> {
    T::deserialize(value).map_err(|e| e.to_string())
}

/// Pushes the path of every non-null key of `input` that `back` (the decoded object
/// serialized again) does not have, in the input's order: `spec.replica`,
/// `spec.containers[0].imagee`.
fn lost_keys(
    input: &serde_json::Value,
    back: &serde_json::Value,
    path: &mut String,
    out: &mut Vec<String>,
) {
    use serde_json::Value;
    let at = path.len();
    match (input, back) {
        (Value::Object(fields), Value::Object(kept)) => {
            for (key, v) in fields {
                if !path.is_empty() {
                    path.push('.');
                }
                path.push_str(key);
                match kept.get(key) {
                    Some(b) => lost_keys(v, b, path, out),
                    None if !v.is_null() => out.push(path.clone()),
                    None => {}
                }
                path.truncate(at);
            }
        }
        (Value::Array(items), Value::Array(kept)) => {
            for (i, (v, b)) in items.iter().zip(kept).enumerate() {
                path.push_str(&format!("[{i}]"));
                lost_keys(v, b, path, out);
                path.truncate(at);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every variant is boxed: an `Object` (and so every `Arc<Object>`, request body
    /// and message that holds one) stays two words, whatever the largest kind is.
    #[test]
    fn an_object_is_two_words() {
        assert_eq!(
            std::mem::size_of::<Object>(),
            2 * std::mem::size_of::<usize>()
        );
    }

    #[test]
    fn resource_args_resolve_like_kubectl() {
        assert_eq!(Kind::from_resource_arg("po"), Some(Kind::Pod));
        assert_eq!(Kind::from_resource_arg("Pods"), Some(Kind::Pod));
        assert_eq!(Kind::from_resource_arg("deploy"), Some(Kind::Deployment));
        assert_eq!(
            Kind::from_resource_arg("deployments.apps"),
            Some(Kind::Deployment)
        );
        assert_eq!(
            Kind::from_resource_arg("deployments.v1.apps"),
            Some(Kind::Deployment)
        );
        assert_eq!(Kind::from_resource_arg("rs"), Some(Kind::ReplicaSet));
        assert_eq!(
            Kind::from_resource_arg("endpointslices"),
            Some(Kind::EndpointSlice)
        );
        assert_eq!(Kind::from_resource_arg("svc"), Some(Kind::Service));
        assert_eq!(Kind::from_resource_arg("pods.apps"), None);
        assert_eq!(Kind::from_resource_arg("widgets"), None);
    }

    #[test]
    fn etcd_keys_follow_upstream_layout() {
        assert_eq!(
            ObjectKey::new(Kind::Deployment, "default", "nginx").etcd_key(),
            "/registry/deployments/default/nginx"
        );
        assert_eq!(
            ObjectKey::new(Kind::Node, "ignored", "node-1").etcd_key(),
            "/registry/minions/node-1"
        );
        assert_eq!(
            ObjectKey::new(Kind::Service, "default", "web").etcd_key(),
            "/registry/services/specs/default/web"
        );
    }

    #[test]
    fn unknown_fields_are_reported_with_their_paths() {
        let v = serde_json::json!({
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "x"},
            "spec": {"replica": 3, "selector": {}, "template": {"spec": {"containers": [{"name": "a", "imagee": "nginx"}]}}}
        });
        let mut unknown = Vec::new();
        let o = Object::from_value(Kind::Deployment, &v, &mut unknown).unwrap();
        assert_eq!(o.kind(), Kind::Deployment);
        assert_eq!(
            unknown,
            vec!["spec.replica", "spec.template.spec.containers[0].imagee"]
        );
    }

    /// What a manifest written by kubectl or by hand carries besides unknown fields: known
    /// fields set to `null` (`creationTimestamp: null`), empty lists and maps, values in
    /// another spelling (`cpu: 0.5`, a port by name), free-form JSON (a CRD's schema
    /// default), and the second of two list items: only the two unknown keys are reported.
    #[test]
    fn known_fields_in_every_shape_are_not_reported() {
        let v = serde_json::json!({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "x", "creationTimestamp": null, "labels": {}, "annotations": {"a": "b"}},
            "spec": {
                "containers": [
                    {"name": "a", "image": "nginx", "ports": [], "resources": {"requests": {"cpu": 0.5}}},
                    {"name": "b", "image": "nginx", "readinessProbe": {"httpGet": {"port": "http"}}, "colour": "red"}
                ],
                "nodeSelector": null,
                "volumes": [{"name": "v", "emptyDir": {}}],
                "hostnme": "h"
            }
        });
        let mut unknown = Vec::new();
        Object::from_value(Kind::Pod, &v, &mut unknown).unwrap();
        assert_eq!(unknown, vec!["spec.containers[1].colour", "spec.hostnme"]);
    }

    #[test]
    fn free_form_json_keeps_every_key() {
        let v = serde_json::json!({
            "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "crontabs.stable.example.com"},
            "spec": {"group": "stable.example.com", "scope": "Namespaced",
                "names": {"plural": "crontabs", "kind": "CronTab"},
                "versions": [{"name": "v1", "served": true, "storage": true, "schema": {"openAPIV3Schema": {
                    "type": "object", "x-kubernetes-preserve-unknown-fields": true,
                    "properties": {"spec": {"type": "object", "default": {"any": {"deep": [1]}}}}
                }}}]}
        });
        let mut unknown = Vec::new();
        Object::from_value(Kind::CustomResourceDefinition, &v, &mut unknown).unwrap();
        assert!(unknown.is_empty(), "{unknown:?}");
    }

    #[test]
    fn a_type_error_is_the_decoders_message() {
        let v = serde_json::json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": 5}});
        let e = Object::from_value(Kind::Pod, &v, &mut Vec::new()).unwrap_err();
        assert!(
            e.contains("invalid type: integer `5`, expected a string"),
            "{e}"
        );
    }
}
