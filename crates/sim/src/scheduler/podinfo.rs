//! PodInfo: a pod with everything the scheduler derives from it computed once (requests as
//! integers, host ports, priority, parsed affinity terms), as upstream's `framework.PodInfo`.

use std::sync::Arc;

use k8s_openapi::api::core::v1::{Pod, PodAffinityTerm, WeightedPodAffinityTerm};

use super::resource::{pod_requests, Resource};
use super::selector::{Labels, Selector};
use crate::object::Object;
use crate::time::{from_k8s_time, Time};

/// A pod object shared with the informer's cache, the watch event and etcd (no copy per
/// event, as client-go's informers share pointers); it derefs to the `Pod`.
#[derive(Clone, Debug, PartialEq)]
pub struct SharedPod(Arc<Object>);

impl SharedPod {
    /// The pod inside a shared object; None for another kind.
    pub fn from_object(o: &Arc<Object>) -> Option<SharedPod> {
        matches!(**o, Object::Pod(_)).then(|| SharedPod(o.clone()))
    }
}

impl From<Pod> for SharedPod {
    fn from(p: Pod) -> SharedPod {
        SharedPod(Arc::new(Object::from(p)))
    }
}

impl std::ops::Deref for SharedPod {
    type Target = Pod;
    fn deref(&self) -> &Pod {
        match &*self.0 {
            Object::Pod(p) => p,
            _ => unreachable!("a SharedPod is built only from a pod"),
        }
    }
}

/// A host port a container asks for (`hostIP`, protocol, `hostPort`).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct HostPort {
    /// Host IP; `0.0.0.0` when unset.
    pub ip: String,
    /// `TCP`, `UDP` or `SCTP`.
    pub protocol: String,
    /// The port.
    pub port: i32,
}

impl HostPort {
    /// Whether two host ports conflict (same protocol and port; IPs equal or either wildcard).
    pub fn conflicts(&self, o: &HostPort) -> bool {
        self.port == o.port
            && self.protocol == o.protocol
            && (self.ip == o.ip || self.ip == "0.0.0.0" || o.ip == "0.0.0.0")
    }
}

/// A pod (anti-)affinity term, processed (`fwk.AffinityTerm`).
#[derive(Clone, Debug)]
pub struct AffinityTerm {
    /// Namespaces named by the term (or the pod's own when neither list nor selector is set).
    pub namespaces: Vec<String>,
    /// The label selector over pods.
    pub selector: Selector,
    /// The topology key.
    pub topology_key: String,
    /// The namespace selector (Nothing when unset).
    pub namespace_selector: Selector,
}

impl AffinityTerm {
    fn new(pod_ns: &str, t: &PodAffinityTerm) -> AffinityTerm {
        let namespaces = match (&t.namespaces, &t.namespace_selector) {
            (ns, None) if ns.as_ref().is_none_or(|n| n.is_empty()) => vec![pod_ns.to_string()],
            (ns, _) => ns.clone().unwrap_or_default(),
        };
        let selector = Selector::from_label_selector(t.label_selector.as_ref());
        AffinityTerm {
            namespaces,
            selector,
            topology_key: t.topology_key.clone(),
            namespace_selector: Selector::from_label_selector(t.namespace_selector.as_ref()),
        }
    }

    /// `AffinityTerm.Matches`: the pod is in a selected namespace and its labels match.
    pub fn matches(&self, pod: &PodInfo, ns_labels: Option<&Labels>) -> bool {
        let ns_ok = self.namespaces.contains(&pod.namespace)
            || ns_labels.is_some_and(|l| self.namespace_selector.matches(l));
        ns_ok && self.selector.matches(&pod.labels)
    }
}

/// A weighted pod (anti-)affinity term.
#[derive(Clone, Debug)]
pub struct WeightedAffinityTerm {
    /// The term.
    pub term: AffinityTerm,
    /// Its weight (1–100).
    pub weight: i32,
}

/// A pod and what the scheduler derives from it.
#[derive(Clone, Debug)]
pub struct PodInfo {
    /// The pod object.
    pub pod: SharedPod,
    /// Namespace.
    pub namespace: String,
    /// Name.
    pub name: String,
    /// `namespace/name`, the pod's key in the snapshot and queue.
    pub key: String,
    /// Labels.
    pub labels: Labels,
    /// `spec.priority` (0 when unset).
    pub priority: i32,
    /// `spec.nodeName` ("" when unassigned).
    pub node_name: String,
    /// Requests without defaults (`NodeInfo.Requested` arithmetic, Fit filter).
    pub requests: Resource,
    /// CPU request with 100m for containers missing one (`NonZeroRequested`).
    pub non0_cpu: i64,
    /// Memory request with 200Mi for containers missing one.
    pub non0_mem: i64,
    /// Host ports the pod asks for.
    pub host_ports: Vec<HostPort>,
    /// Required pod affinity terms.
    pub required_affinity: Vec<AffinityTerm>,
    /// Required pod anti-affinity terms.
    pub required_anti_affinity: Vec<AffinityTerm>,
    /// Preferred pod affinity terms.
    pub preferred_affinity: Vec<WeightedAffinityTerm>,
    /// Preferred pod anti-affinity terms.
    pub preferred_anti_affinity: Vec<WeightedAffinityTerm>,
    /// When the pod started (status.startTime, else creation), for preemption ordering.
    pub start_time: Time,
    /// PVC names the pod mounts.
    pub pvc_names: Vec<String>,
}

fn weighted(ns: &str, v: Option<&Vec<WeightedPodAffinityTerm>>) -> Vec<WeightedAffinityTerm> {
    v.into_iter()
        .flatten()
        .map(|w| WeightedAffinityTerm {
            term: AffinityTerm::new(ns, &w.pod_affinity_term),
            weight: w.weight,
        })
        .collect()
}

impl PodInfo {
    /// Derives a PodInfo from a pod.
    pub fn new(pod: SharedPod) -> PodInfo {
        let namespace = pod.metadata.namespace.clone().unwrap_or_default();
        let name = pod.metadata.name.clone().unwrap_or_default();
        let key = format!("{namespace}/{name}");
        let labels = pod.metadata.labels.clone().unwrap_or_default();
        let spec = pod.spec.as_ref();
        let requests = pod_requests(&pod, false);
        let non0 = pod_requests(&pod, true);
        let mut host_ports = Vec::new();
        let mut pvc_names = Vec::new();
        let (mut ra, mut raa, mut pa, mut paa) = (vec![], vec![], vec![], vec![]);
        if let Some(spec) = spec {
            for c in spec
                .containers
                .iter()
                .chain(spec.init_containers.iter().flatten())
            {
                for p in c.ports.iter().flatten() {
                    if p.host_port.unwrap_or(0) > 0 {
                        host_ports.push(HostPort {
                            ip: p
                                .host_ip
                                .clone()
                                .filter(|s| !s.is_empty())
                                .unwrap_or_else(|| "0.0.0.0".to_string()),
                            protocol: p.protocol.clone().unwrap_or_else(|| "TCP".to_string()),
                            port: p.host_port.unwrap_or(0),
                        });
                    }
                }
            }
            for v in spec.volumes.iter().flatten() {
                if let Some(c) = &v.persistent_volume_claim {
                    pvc_names.push(c.claim_name.clone());
                } else if v.ephemeral.is_some() {
                    // Generic ephemeral volumes get a PVC named <pod>-<volume>.
                    pvc_names.push(format!("{name}-{}", v.name));
                }
            }
            if let Some(aff) = &spec.affinity {
                if let Some(a) = &aff.pod_affinity {
                    ra = a
                        .required_during_scheduling_ignored_during_execution
                        .iter()
                        .flatten()
                        .map(|t| AffinityTerm::new(&namespace, t))
                        .collect();
                    pa = weighted(
                        &namespace,
                        a.preferred_during_scheduling_ignored_during_execution
                            .as_ref(),
                    );
                }
                if let Some(a) = &aff.pod_anti_affinity {
                    raa = a
                        .required_during_scheduling_ignored_during_execution
                        .iter()
                        .flatten()
                        .map(|t| AffinityTerm::new(&namespace, t))
                        .collect();
                    paa = weighted(
                        &namespace,
                        a.preferred_during_scheduling_ignored_during_execution
                            .as_ref(),
                    );
                }
            }
        }
        let start_time = pod
            .status
            .as_ref()
            .and_then(|s| s.start_time.as_ref())
            .or(pod.metadata.creation_timestamp.as_ref())
            .map(from_k8s_time)
            .unwrap_or(0);
        PodInfo {
            priority: spec.and_then(|s| s.priority).unwrap_or(0),
            node_name: spec.and_then(|s| s.node_name.clone()).unwrap_or_default(),
            non0_cpu: non0.milli_cpu,
            non0_mem: non0.memory,
            requests,
            host_ports,
            required_affinity: ra,
            required_anti_affinity: raa,
            preferred_affinity: pa,
            preferred_anti_affinity: paa,
            start_time,
            pvc_names,
            namespace,
            name,
            key,
            labels,
            pod,
        }
    }

    /// Whether the pod has any pod affinity or anti-affinity (required or preferred).
    pub fn has_affinity(&self) -> bool {
        !(self.required_affinity.is_empty()
            && self.required_anti_affinity.is_empty()
            && self.preferred_affinity.is_empty()
            && self.preferred_anti_affinity.is_empty())
    }

    /// The pod's tolerations.
    pub fn tolerations(&self) -> &[k8s_openapi::api::core::v1::Toleration] {
        self.pod
            .spec
            .as_ref()
            .and_then(|s| s.tolerations.as_deref())
            .unwrap_or(&[])
    }

    /// `spec.schedulerName` (default `default-scheduler`).
    pub fn scheduler_name(&self) -> &str {
        self.pod
            .spec
            .as_ref()
            .and_then(|s| s.scheduler_name.as_deref())
            .unwrap_or("default-scheduler")
    }
}
