//! The pod table (`printPod`): READY, the aggregate STATUS, RESTARTS with the last restart's
//! age, and the wide IP/NODE/NOMINATED NODE/READINESS GATES columns.

use k8s_openapi::api::core::v1::{Container, ContainerStatus, Pod};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time as K8sTime;

use super::{age, col, wide, Column};
use crate::time::Time;

/// Pod columns as the apiserver defines them.
pub(super) const COLUMNS: [Column; 9] = [
    col("Name"),
    col("Ready"),
    col("Status"),
    col("Restarts"),
    col("Age"),
    wide("IP"),
    wide("Node"),
    wide("Nominated Node"),
    wide("Readiness Gates"),
];

/// The reason kubelet's node controller sets on pods of an unreachable node.
const NODE_UNREACHABLE_POD_REASON: &str = "NodeLost";

fn is_restartable_init_container(c: Option<&Container>) -> bool {
    c.and_then(|c| c.restart_policy.as_deref()) == Some("Always")
}

fn last_termination(cs: &ContainerStatus) -> Option<&K8sTime> {
    cs.last_state
        .as_ref()
        .and_then(|s| s.terminated.as_ref())
        .and_then(|t| t.finished_at.as_ref())
}

fn later(cur: Option<K8sTime>, t: Option<&K8sTime>) -> Option<K8sTime> {
    match (cur, t) {
        (Some(c), Some(t)) if c.0 < t.0 => Some(t.clone()),
        (None, Some(t)) => Some(t.clone()),
        (c, _) => c,
    }
}

/// The pod's aggregate status, as `kubectl get pods` shows it in STATUS.
pub fn pod_status(pod: &Pod) -> String {
    PodSummary::of(pod).reason
}

struct PodSummary {
    reason: String,
    ready: usize,
    total: usize,
    restarts: i64,
    last_restart: Option<K8sTime>,
}

impl PodSummary {
    fn of(pod: &Pod) -> PodSummary {
        let spec = pod.spec.as_ref();
        let status = pod.status.as_ref();
        let empty_c: Vec<Container> = Vec::new();
        let empty_s: Vec<ContainerStatus> = Vec::new();
        let containers = spec.map(|s| &s.containers).unwrap_or(&empty_c);
        let init_containers = spec
            .and_then(|s| s.init_containers.as_ref())
            .unwrap_or(&empty_c);
        let conditions = status.and_then(|s| s.conditions.as_deref()).unwrap_or(&[]);
        let phase = status.and_then(|s| s.phase.as_deref()).unwrap_or("");

        let mut restarts: i64 = 0;
        let mut restartable_restarts: i64 = 0;
        let mut total = containers.len();
        let mut ready = 0;
        let mut last_restart: Option<K8sTime> = None;
        let mut last_restartable_restart: Option<K8sTime> = None;

        let mut reason = phase.to_string();
        if let Some(r) = status
            .and_then(|s| s.reason.as_deref())
            .filter(|r| !r.is_empty())
        {
            reason = r.to_string();
        }
        if conditions
            .iter()
            .any(|c| c.type_ == "PodScheduled" && c.reason.as_deref() == Some("SchedulingGated"))
        {
            reason = "SchedulingGated".to_string();
        }

        let init_spec = |name: &str| init_containers.iter().find(|c| c.name == name);
        total += init_containers
            .iter()
            .filter(|c| is_restartable_init_container(Some(c)))
            .count();

        let init_statuses = status
            .and_then(|s| s.init_container_statuses.as_ref())
            .unwrap_or(&empty_s);
        let mut initializing = false;
        for (i, cs) in init_statuses.iter().enumerate() {
            restarts += cs.restart_count as i64;
            last_restart = later(last_restart.take(), last_termination(cs));
            let restartable = is_restartable_init_container(init_spec(&cs.name));
            if restartable {
                restartable_restarts += cs.restart_count as i64;
                last_restartable_restart =
                    later(last_restartable_restart.take(), last_termination(cs));
            }
            let state = cs.state.as_ref();
            let terminated = state.and_then(|s| s.terminated.as_ref());
            let waiting = state.and_then(|s| s.waiting.as_ref());
            if terminated.is_some_and(|t| t.exit_code == 0) {
                continue;
            }
            if restartable && cs.started == Some(true) {
                if cs.ready {
                    ready += 1;
                }
                continue;
            }
            if let Some(t) = terminated {
                reason = match t.reason.as_deref().filter(|r| !r.is_empty()) {
                    Some(r) => format!("Init:{r}"),
                    None => match t.signal.filter(|&s| s != 0) {
                        Some(s) => format!("Init:Signal:{s}"),
                        None => format!("Init:ExitCode:{}", t.exit_code),
                    },
                };
            } else if let Some(r) = waiting
                .and_then(|w| w.reason.as_deref())
                .filter(|r| !r.is_empty() && *r != "PodInitializing")
            {
                reason = format!("Init:{r}");
            } else {
                reason = format!("Init:{}/{}", i, init_containers.len());
            }
            initializing = true;
            break;
        }

        let initialized = conditions
            .iter()
            .any(|c| c.type_ == "Initialized" && c.status == "True");
        if !initializing || initialized {
            restarts = restartable_restarts;
            last_restart = last_restartable_restart.take();
            let mut has_running = false;
            let statuses = status
                .and_then(|s| s.container_statuses.as_ref())
                .unwrap_or(&empty_s);
            for cs in statuses.iter().rev() {
                restarts += cs.restart_count as i64;
                last_restart = later(last_restart.take(), last_termination(cs));
                let state = cs.state.as_ref();
                let waiting = state.and_then(|s| s.waiting.as_ref());
                let terminated = state.and_then(|s| s.terminated.as_ref());
                if let Some(r) = waiting
                    .and_then(|w| w.reason.as_deref())
                    .filter(|r| !r.is_empty())
                {
                    reason = r.to_string();
                } else if let Some(t) = terminated {
                    reason = match t.reason.as_deref().filter(|r| !r.is_empty()) {
                        Some(r) => r.to_string(),
                        None => match t.signal.filter(|&s| s != 0) {
                            Some(s) => format!("Signal:{s}"),
                            None => format!("ExitCode:{}", t.exit_code),
                        },
                    };
                } else if cs.ready && state.is_some_and(|s| s.running.is_some()) {
                    has_running = true;
                    ready += 1;
                }
            }
            if reason == "Completed" && has_running {
                let pod_ready = conditions
                    .iter()
                    .any(|c| c.type_ == "Ready" && c.status == "True");
                reason = if pod_ready { "Running" } else { "NotReady" }.to_string();
            }
        }

        let deleting = pod.metadata.deletion_timestamp.is_some();
        let pod_reason = status.and_then(|s| s.reason.as_deref());
        if deleting && pod_reason == Some(NODE_UNREACHABLE_POD_REASON) {
            reason = "Unknown".to_string();
        } else if deleting && phase != "Failed" && phase != "Succeeded" {
            reason = "Terminating".to_string();
        }

        PodSummary {
            reason,
            ready,
            total,
            restarts,
            last_restart,
        }
    }
}

pub(super) fn row(pod: &Pod, now: Time) -> Vec<String> {
    let s = PodSummary::of(pod);
    let restarts = match &s.last_restart {
        Some(t) if s.restarts != 0 => format!("{} ({} ago)", s.restarts, age(Some(t), now)),
        _ => s.restarts.to_string(),
    };
    let status = pod.status.as_ref();
    let non_empty = |v: Option<&str>| match v {
        Some(x) if !x.is_empty() => x.to_string(),
        _ => "<none>".to_string(),
    };
    let ip = non_empty(
        status
            .and_then(|s| s.pod_ips.as_ref())
            .and_then(|ips| ips.first())
            .map(|ip| ip.ip.as_str()),
    );
    let node = non_empty(pod.spec.as_ref().and_then(|s| s.node_name.as_deref()));
    let nominated = non_empty(status.and_then(|s| s.nominated_node_name.as_deref()));
    let gates = pod
        .spec
        .as_ref()
        .and_then(|s| s.readiness_gates.as_ref())
        .filter(|g| !g.is_empty());
    let readiness_gates = match gates {
        None => "<none>".to_string(),
        Some(gates) => {
            let conditions = status.and_then(|s| s.conditions.as_deref()).unwrap_or(&[]);
            let true_count = gates
                .iter()
                .filter(|g| {
                    conditions
                        .iter()
                        .find(|c| c.type_ == g.condition_type)
                        .is_some_and(|c| c.status == "True")
                })
                .count();
            format!("{}/{}", true_count, gates.len())
        }
    };
    vec![
        pod.metadata.name.clone().unwrap_or_default(),
        format!("{}/{}", s.ready, s.total),
        s.reason,
        restarts,
        age(pod.metadata.creation_timestamp.as_ref(), now),
        ip,
        node,
        nominated,
        readiness_gates,
    ]
}
