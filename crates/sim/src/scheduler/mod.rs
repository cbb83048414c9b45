//! kube-scheduler's decision logic as pure functions over a [`Snapshot`]: the framework and
//! its default plugins, the scheduling algorithm (filter, score, select host), the
//! scheduling queue, and KubeSchedulerConfiguration. The actor around it (informers,
//! bindings, events) lives elsewhere.
//!
//! ```
//! use std::sync::Arc;
//! use kubeloop_sim::rng::Rng;
//! use kubeloop_sim::scheduler::*;
//! use serde_json::json;
//!
//! // Configuration → one Framework per profile.
//! let cfg = parse_config(&json!({})).unwrap();
//! let frameworks = build_frameworks(&in_tree_registry(), &cfg).unwrap();
//! let fw = &frameworks["default-scheduler"];
//!
//! // The cluster as the scheduler's cache sees it (kept up to date incrementally).
//! let node = |n: &str| Arc::new(serde_json::from_value(json!({
//!     "metadata": {"name": n},
//!     "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}})).unwrap());
//! let mut snap = Snapshot::new(&[node("node-1"), node("node-2")], &[]);
//!
//! // Queue → pop → schedule → assume.
//! let mut queue = SchedulingQueue::new(cfg.pod_initial_backoff_seconds, cfg.pod_max_backoff_seconds);
//! let pod: k8s_openapi::api::core::v1::Pod = serde_json::from_value(json!({
//!     "metadata": {"name": "web", "namespace": "default"},
//!     "spec": {"containers": [{"name": "c", "image": "nginx",
//!              "resources": {"requests": {"cpu": "500m"}}}]}})).unwrap();
//! let pod = SharedPod::from(pod);
//! queue.add(fw, Arc::new(PodInfo::new(pod)), 0);
//! let q = queue.pop(0).unwrap();
//! let mut st = SchedulerState { next_start_node_index: 0,
//!     percentage_of_nodes_to_score: cfg.percentage_of_nodes_to_score };
//! let mut rng = Rng::stream(42, "kube-scheduler");
//! let out = schedule_one(fw, &snap, queue.nominated(), &q.pod_info, &mut st, &mut rng, true);
//! match out.result {
//!     Ok(r) => {
//!         snap.assume_pod(q.pod_info.clone(), &r.suggested_host);
//!         queue.done(&q.pod_info.key);
//!         let annotations = out.annotations.unwrap().to_pod_annotations();
//!         assert_eq!(annotations["kubeloop.dev/selected-node"], r.suggested_host);
//!     }
//!     Err(e) => {
//!         let status = e.status();
//!         queue.add_unschedulable_if_not_present(q, &status, e.unschedulable_plugins(), 0);
//!     }
//! }
//! ```

pub mod algorithm;
pub mod binding;
pub mod config;
pub mod domaincache;
pub mod extension_points;
pub mod framework;
pub mod nodeinfo;
pub mod pluginargs;
pub mod plugins;
pub mod podinfo;
pub mod queue;
pub mod resource;
pub mod runtime;
pub mod selector;
pub mod validation;

pub use algorithm::{schedule_one, Annotations, FitError, ScheduleOutcome, SchedulerState};
pub use binding::{BindingCycle, Progress};
pub use config::{parse as parse_config, KubeSchedulerConfiguration};
pub use framework::{BindingWrites, Code, CycleState, Status};
pub use nodeinfo::{NodeInfo, Snapshot};
pub use plugins::in_tree_registry;
pub use podinfo::{PodInfo, SharedPod};
pub use queue::{ClusterEvent, QueuedPodInfo, SchedulingQueue};
pub use runtime::{build_frameworks, Framework};
