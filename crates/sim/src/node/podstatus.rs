//! The pod status the kubelet reports: phase (`getPhase`), conditions, container
//! statuses, IPs and start time, from the runtime's view and the kubelet's own state.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{
    ContainerState as K8sState, ContainerStateRunning, ContainerStateTerminated,
    ContainerStateWaiting, ContainerStatus, HostIP, PodCondition, PodIP, PodStatus,
};

use crate::apiserver::write::set_pod_condition;
use crate::node::podworker::PodWorker;
use crate::node::runtime::{Container, ContainerState};
use crate::time::{k8s_time, Time};

fn terminated(c: &Container) -> ContainerStateTerminated {
    ContainerStateTerminated {
        exit_code: c.exit_code,
        reason: Some(c.reason.clone()),
        started_at: c.started.map(k8s_time),
        finished_at: c.finished.map(k8s_time),
        container_id: Some(format!("containerd://{}", c.id)),
        ..ContainerStateTerminated::default()
    }
}

fn image_id(c: &Container) -> String {
    let full = crate::node::images::parse(&c.image).full;
    let repo = full
        .rsplit_once(':')
        .map_or(full.as_str(), |(r, _)| r)
        .to_string();
    let repo = if repo.contains('@') {
        repo.split('@').next().unwrap_or("").to_string()
    } else {
        repo
    };
    format!("{repo}@{}", c.image_id)
}

/// Whether a running container counts as ready: without a readiness probe as soon as it
/// runs; with one, once the probe has succeeded.
fn container_ready(w: &PodWorker, c: &Container, probe_ready: &BTreeMap<String, bool>) -> bool {
    if c.state != ContainerState::Running {
        return false;
    }
    let has_probe = w
        .container_spec(&c.name)
        .is_some_and(|s| s.readiness_probe.is_some());
    !has_probe || probe_ready.get(&c.name).copied().unwrap_or(false)
}

/// The status of one container (regular or init).
fn container_status(
    w: &PodWorker,
    name: &str,
    image: &str,
    probe_ready: &BTreeMap<String, bool>,
) -> ContainerStatus {
    let latest = w.latest(name);
    let previous = latest.and_then(|l| {
        w.containers
            .iter()
            .filter(|c| c.name == name && c.attempt < l.attempt)
            .max_by_key(|c| c.attempt)
    });
    let waiting = w.waiting.get(name);
    let mut st = ContainerStatus {
        name: name.to_string(),
        image: image.to_string(),
        image_id: String::new(),
        restart_count: latest.map_or(0, |l| l.attempt as i32),
        ready: false,
        started: Some(false),
        ..ContainerStatus::default()
    };
    match latest {
        Some(c) if c.state == ContainerState::Running => {
            st.state = Some(K8sState {
                running: Some(ContainerStateRunning {
                    started_at: c.started.map(k8s_time),
                }),
                ..K8sState::default()
            });
            st.ready = container_ready(w, c, probe_ready);
            st.started = Some(true);
            st.container_id = Some(format!("containerd://{}", c.id));
            st.image_id = image_id(c);
            if let Some(p) = previous {
                st.last_state = Some(K8sState {
                    terminated: Some(terminated(p)),
                    ..K8sState::default()
                });
            }
        }
        Some(c) if c.state == ContainerState::Exited => {
            st.container_id = Some(format!("containerd://{}", c.id));
            st.image_id = image_id(c);
            match waiting.filter(|wt| wt.reason != "ContainerCreating") {
                Some(wt) => {
                    st.state = Some(K8sState {
                        waiting: Some(ContainerStateWaiting {
                            reason: Some(wt.reason.clone()),
                            message: wt.message.clone(),
                        }),
                        ..K8sState::default()
                    });
                    st.last_state = Some(K8sState {
                        terminated: Some(terminated(c)),
                        ..K8sState::default()
                    });
                }
                None => {
                    st.state = Some(K8sState {
                        terminated: Some(terminated(c)),
                        ..K8sState::default()
                    })
                }
            }
            if st.last_state.is_none() {
                if let Some(p) = previous {
                    st.last_state = Some(K8sState {
                        terminated: Some(terminated(p)),
                        ..K8sState::default()
                    });
                }
            }
        }
        _ => {
            let wt = waiting.cloned().unwrap_or(crate::node::podworker::Waiting {
                reason: "ContainerCreating".into(),
                message: None,
            });
            st.state = Some(K8sState {
                waiting: Some(ContainerStateWaiting {
                    reason: Some(wt.reason),
                    message: wt.message,
                }),
                ..K8sState::default()
            });
            if let Some(c) = latest {
                st.container_id = Some(format!("containerd://{}", c.id));
            }
            if let Some(p) = latest
                .filter(|l| l.state == ContainerState::Exited)
                .or(previous)
            {
                st.last_state = Some(K8sState {
                    terminated: Some(terminated(p)),
                    ..K8sState::default()
                });
            }
        }
    }
    st
}

/// The full status of a worker's pod (None if the pod is unknown).
pub fn generate(
    w: &PodWorker,
    host_ip: &str,
    now: Time,
    probe_ready: &BTreeMap<String, bool>,
) -> Option<PodStatus> {
    let pod = w.pod()?;
    let spec = pod.spec.clone().unwrap_or_default();
    let old = pod.status.clone().unwrap_or_default();
    let restart_policy = spec
        .restart_policy
        .clone()
        .unwrap_or_else(|| "Always".into());
    let mut statuses: Vec<ContainerStatus> = spec
        .containers
        .iter()
        .map(|c| container_status(w, &c.name, c.image.as_deref().unwrap_or(""), probe_ready))
        .collect();
    statuses.sort_by(|a, b| a.name.cmp(&b.name));
    let init: Vec<ContainerStatus> = spec
        .init_containers
        .iter()
        .flatten()
        .map(|c| container_status(w, &c.name, c.image.as_deref().unwrap_or(""), probe_ready))
        .collect();
    let init_done = spec.init_containers.iter().flatten().all(|c| {
        w.latest(&c.name)
            .is_some_and(|l| l.state == ContainerState::Exited && l.exit_code == 0)
    });
    let phase = get_phase(
        w,
        &spec
            .containers
            .iter()
            .map(|c| c.name.clone())
            .collect::<Vec<_>>(),
        &restart_policy,
        init_done,
        &old,
    );
    let sandbox = w.ready_sandbox();
    let all_ready = !statuses.is_empty() && statuses.iter().all(|s| s.ready);
    let mut conditions: Vec<PodCondition> = old.conditions.clone().unwrap_or_default();
    let b = |x: bool| if x { "True" } else { "False" };
    set_pod_condition(
        &mut conditions,
        "PodReadyToStartContainers",
        b(sandbox.is_some()),
        None,
        None,
        now,
    );
    let (init_reason, init_msg) = if init_done {
        (None, None)
    } else {
        let names: Vec<&str> = spec
            .init_containers
            .iter()
            .flatten()
            .map(|c| c.name.as_str())
            .collect();
        (
            Some("ContainersNotInitialized"),
            Some(format!(
                "containers with incomplete status: [{}]",
                names.join(" ")
            )),
        )
    };
    set_pod_condition(
        &mut conditions,
        "Initialized",
        b(init_done),
        init_reason,
        init_msg.as_deref(),
        now,
    );
    let terminal = phase == "Succeeded" || phase == "Failed";
    let not_ready: Vec<&str> = statuses
        .iter()
        .filter(|s| !s.ready)
        .map(|s| s.name.as_str())
        .collect();
    let (reason, msg) = if all_ready {
        (None, None)
    } else if terminal {
        (Some("PodCompleted"), None)
    } else {
        (
            Some("ContainersNotReady"),
            Some(format!(
                "containers with unready status: [{}]",
                not_ready.join(" ")
            )),
        )
    };
    set_pod_condition(
        &mut conditions,
        "ContainersReady",
        b(all_ready),
        reason,
        msg.as_deref(),
        now,
    );
    set_pod_condition(
        &mut conditions,
        "Ready",
        b(all_ready),
        reason,
        msg.as_deref(),
        now,
    );
    let order = [
        "PodReadyToStartContainers",
        "Initialized",
        "Ready",
        "ContainersReady",
        "PodScheduled",
    ];
    conditions.sort_by_key(|c| {
        order
            .iter()
            .position(|o| *o == c.type_)
            .unwrap_or(order.len())
    });
    let ip = sandbox
        .map(|s| s.ip.clone())
        .or_else(|| old.pod_ip.clone().filter(|_| w.terminating));
    Some(PodStatus {
        phase: Some(phase),
        conditions: Some(conditions),
        host_ip: Some(host_ip.to_string()),
        host_ips: Some(vec![HostIP {
            ip: host_ip.to_string(),
        }]),
        pod_ip: ip.clone(),
        pod_ips: ip.map(|ip| vec![PodIP { ip }]),
        start_time: w.start_time.map(k8s_time).or(old.start_time.clone()),
        container_statuses: Some(statuses),
        init_container_statuses: if init.is_empty() { None } else { Some(init) },
        qos_class: old.qos_class.clone(),
        observed_generation: pod.metadata.generation,
        ..PodStatus::default()
    })
}

/// `getPhase`.
fn get_phase(
    w: &PodWorker,
    names: &[String],
    restart_policy: &str,
    init_done: bool,
    old: &PodStatus,
) -> String {
    if !init_done {
        return "Pending".into();
    }
    let (mut running, mut waiting, mut stopped, mut succeeded) = (0, 0, 0, 0);
    for n in names {
        match w.latest(n) {
            Some(c) if c.state == ContainerState::Running => running += 1,
            Some(c) if c.state == ContainerState::Exited => {
                stopped += 1;
                if c.exit_code == 0 {
                    succeeded += 1;
                }
            }
            _ => waiting += 1,
        }
    }
    let _ = old;
    if waiting > 0 && running == 0 && stopped == 0 {
        return "Pending".into();
    }
    if waiting > 0 {
        return if running > 0 || stopped > 0 {
            "Running".into()
        } else {
            "Pending".into()
        };
    }
    if running > 0 {
        return "Running".into();
    }
    if stopped > 0 {
        return match restart_policy {
            "Always" => "Running".into(),
            "OnFailure" if succeeded == stopped => "Succeeded".into(),
            "OnFailure" => "Running".into(),
            _ if succeeded == stopped => "Succeeded".into(),
            _ => "Failed".into(),
        };
    }
    "Pending".into()
}
