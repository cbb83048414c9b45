//! kube-scheduler's decision logic as pure functions over a [`Snapshot`]: the framework and
//! its default plugins, the scheduling algorithm (filter, score, select host), the
//! scheduling queue, and KubeSchedulerConfiguration. The actor around it (informers,
//! bindings, events) lives elsewhere.

pub mod algorithm;
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
pub use config::{parse as parse_config, KubeSchedulerConfiguration};
pub use framework::{Code, CycleState, Status};
pub use nodeinfo::{NodeInfo, Snapshot};
pub use plugins::in_tree_registry;
pub use podinfo::PodInfo;
pub use queue::{ClusterEvent, QueuedPodInfo, SchedulingQueue};
pub use runtime::{build_frameworks, Framework};
