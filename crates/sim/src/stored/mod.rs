//! An object a history keeps: shared with the live state while it is the newest
//! revision of its key, or encoded as the JSON the apiserver stores
//! (`--storage-media-type=application/json`) once a later write superseded it — a few
//! KB for a pod instead of the decoded object's tens. etcd's history and the watch
//! cache's event window hold every write until compaction or until the window moves
//! on; reads of superseded revisions (a watch from a past revision, `etcdctl get --rev`,
//! the inspector) decode them again.
//!
//! The JSON is kept in parts ([`members`]), and a part byte-identical to the same part
//! of the key's previous revision is shared with it.

mod members;

use std::sync::Arc;

use crate::object::{Kind, Object};

/// A stored revision of an object.
#[derive(Clone, Debug)]
pub enum Stored {
    /// The object itself, shared.
    Live(Arc<Object>),
    /// Its JSON.
    Encoded {
        /// Its kind, to decode it.
        kind: Kind,
        /// The JSON object's members, in order.
        members: Arc<[members::Member]>,
        /// The whole JSON, should it not split into members (it always does).
        whole: Option<Arc<[u8]>>,
    },
}

impl Stored {
    /// The JSON of a superseded revision. Custom objects (whose kind may go away with
    /// its definition) stay decoded.
    pub fn encode(obj: &Arc<Object>) -> Stored {
        Stored::encode_like(obj, None)
    }

    /// [`Stored::encode`], sharing each member equal to one of `base` (the key's
    /// previous revision).
    pub fn encode_like(obj: &Arc<Object>, base: Option<&Stored>) -> Stored {
        let kind = obj.kind();
        if matches!(kind, Kind::Custom(_)) {
            return Stored::Live(obj.clone());
        }
        let json = obj.to_json();
        let old: &[members::Member] = match base {
            Some(Stored::Encoded { members, .. }) => members,
            _ => &[],
        };
        match members::split(&json, old) {
            Some(m) => Stored::Encoded {
                kind,
                members: m.into(),
                whole: None,
            },
            None => Stored::Encoded {
                kind,
                members: Arc::new([]),
                whole: Some(json.into()),
            },
        }
    }

    /// Encodes the value in place unless it already is, sharing what it can with `base`;
    /// returns the stored form.
    pub fn supersede(&mut self, base: Option<&Stored>) -> Stored {
        if let Stored::Live(o) = self {
            *self = Stored::encode_like(o, base);
        }
        self.clone()
    }

    /// Whether this holds `obj` itself.
    pub fn is(&self, obj: &Arc<Object>) -> bool {
        matches!(self, Stored::Live(o) if Arc::ptr_eq(o, obj))
    }

    /// The object.
    pub fn object(&self) -> Arc<Object> {
        match self {
            Stored::Live(o) => o.clone(),
            Stored::Encoded {
                kind,
                members,
                whole,
            } => {
                let json = match whole {
                    Some(w) => w.to_vec(),
                    None => members::join(members),
                };
                // Encoded from a valid object of this kind: decoding cannot fail short of
                // a bug, and then the reader gets an empty object of the kind.
                let decoded = serde_json::from_slice(&json)
                    .map_err(|e| e.to_string())
                    .and_then(|v| Object::from_value(*kind, &v, &mut Vec::new()));
                Arc::new(decoded.unwrap_or_else(|_| empty(*kind)))
            }
        }
    }

    /// Bytes of JSON held (0 for a shared object; a member shared with another revision
    /// counts in each).
    pub fn encoded_len(&self) -> usize {
        match self {
            Stored::Encoded { members, whole, .. } => {
                members::len(members) + whole.as_ref().map_or(0, |w| w.len())
            }
            Stored::Live(_) => 0,
        }
    }
}

fn empty(kind: Kind) -> Object {
    Object::from_value(kind, &serde_json::json!({}), &mut Vec::new())
        .expect("every built-in kind decodes from an empty object")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::ClusterConfig;
    use crate::world::World;

    const APP: &str = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 2\n  selector:\n    matchLabels: {app: web}\n  template:\n    metadata:\n      labels: {app: web}\n    spec:\n      containers:\n      - name: web\n        image: nginx:1.27\n        readinessProbe:\n          httpGet: {path: /, port: 80}\n---\napiVersion: v1\nkind: Service\nmetadata:\n  name: web\nspec:\n  selector: {app: web}\n  ports:\n  - port: 80\n---\napiVersion: batch/v1\nkind: Job\nmetadata:\n  name: once\nspec:\n  template:\n    spec:\n      restartPolicy: Never\n      containers:\n      - name: c\n        image: busybox:1.36\n        command: [\"true\"]\n";

    /// Every object a running cluster stores comes back from its encoded form equal, so
    /// an old revision read from history is the object that was written.
    #[test]
    fn every_stored_kind_comes_back_equal_from_its_encoding() {
        let mut w = World::new(ClusterConfig::default());
        let files = [("d.yaml".to_string(), APP.to_string())]
            .into_iter()
            .collect();
        let out = crate::cmd::run(&mut w, "kubectl apply -f d.yaml", &files, 60_000);
        assert_eq!(out.exit_code, 0, "{out:?}");
        w.run_for(60_000);
        let store = &w.observe().etcd().store;
        let mut kinds = std::collections::BTreeSet::new();
        for kv in store.range_prefix("/registry/") {
            let back = Stored::encode(&kv.value).object();
            assert_eq!(*back, *kv.value, "{}", kv.key);
            kinds.insert(kv.value.kind().info().kind);
        }
        for k in [
            "Pod",
            "Deployment",
            "ReplicaSet",
            "Service",
            "EndpointSlice",
            "Node",
            "Lease",
            "Event",
            "Job",
            "ConfigMap",
            "ClusterRole",
        ] {
            assert!(kinds.contains(k), "{k} in {kinds:?}");
        }
    }

    /// A status update's revision shares its metadata and spec with the revision before
    /// it, and still decodes to itself.
    #[test]
    fn a_status_update_shares_what_it_did_not_change() {
        let mut pod = k8s_openapi::api::core::v1::Pod::default();
        pod.metadata.name = Some("web-1".into());
        pod.metadata.annotations = Some(
            [("kubeloop.dev/filter-result".to_string(), "x".repeat(30_000))]
                .into_iter()
                .collect(),
        );
        pod.spec = Some(Default::default());
        let first = Arc::new(Object::from(pod.clone()));
        pod.status = Some(k8s_openapi::api::core::v1::PodStatus {
            phase: Some("Running".into()),
            ..Default::default()
        });
        let second = Arc::new(Object::from(pod));
        let old = Stored::encode(&first);
        let new = Stored::encode_like(&second, Some(&old));
        let (Stored::Encoded { members: a, .. }, Stored::Encoded { members: b, .. }) = (&old, &new)
        else {
            panic!("both encoded")
        };
        // apiVersion, kind, "metadata": with its annotations and name, and the spec.
        assert!(members::shared_parts(b, a) >= 5, "{b:?}");
        assert!(members::len(b) > 30_000);
        assert_eq!(*new.object(), *second);
        assert_eq!(*old.object(), *first);
    }
}
