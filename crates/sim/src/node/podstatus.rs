//! The pod status the kubelet reports: phase (upstream `getPhase`), conditions, container
//! statuses (with sidecars), IPs and start time, from the runtime's view, the probes and
//! the kubelet's own state.

use k8s_openapi::api::core::v1::{
    ContainerState as K8sState, ContainerStateRunning, ContainerStateTerminated,
    ContainerStateWaiting, ContainerStatus, HostIP, PodCondition, PodIP, PodStatus,
};

use crate::apiserver::write::set_pod_condition;
use crate::node::kubelet::ProbeView;
use crate::node::podworker::{PodWorker, Waiting};
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
    let repo = repo.split('@').next().unwrap_or("").to_string();
    format!("{repo}@{}", c.image_id)
}

fn state(waiting: Option<Waiting>) -> K8sState {
    let wt = waiting.unwrap_or(Waiting {
        reason: "ContainerCreating".into(),
        message: None,
    });
    K8sState {
        waiting: Some(ContainerStateWaiting {
            reason: Some(wt.reason),
            message: wt.message,
        }),
        ..K8sState::default()
    }
}

fn terminated_state(c: &Container) -> K8sState {
    K8sState {
        terminated: Some(terminated(c)),
        ..K8sState::default()
    }
}

/// The status of one container (regular or init).
fn container_status(w: &PodWorker, name: &str, image: &str, view: &ProbeView) -> ContainerStatus {
    let latest = w.latest(name);
    let previous = latest.and_then(|l| {
        w.containers
            .iter()
            .filter(|c| c.name == name && c.attempt < l.attempt)
            .max_by_key(|c| c.attempt)
            .map(|c| &**c)
    });
    let waiting = w.waiting.get(name).cloned();
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
            st.ready = view.ready.get(name).copied().unwrap_or(false);
            st.started = Some(view.started.get(name).copied().unwrap_or(false));
            st.container_id = Some(format!("containerd://{}", c.id));
            st.image_id = image_id(c);
            st.last_state = previous.map(terminated_state);
        }
        Some(c) if c.state == ContainerState::Exited => {
            st.container_id = Some(format!("containerd://{}", c.id));
            st.image_id = image_id(c);
            match waiting.filter(|wt| wt.reason != "ContainerCreating") {
                Some(wt) => {
                    st.state = Some(state(Some(wt)));
                    st.last_state = Some(terminated_state(c));
                }
                None => {
                    st.state = Some(terminated_state(c));
                    st.last_state = previous.map(terminated_state);
                }
            }
        }
        _ => {
            st.state = Some(state(waiting));
            if let Some(c) = latest {
                st.container_id = Some(format!("containerd://{}", c.id));
            }
            st.last_state = latest
                .filter(|l| l.state == ContainerState::Exited)
                .or(previous)
                .map(terminated_state);
        }
    }
    st
}

/// The full status of a worker's pod (None if the pod is unknown).
pub fn generate(w: &PodWorker, host_ip: &str, now: Time, view: &ProbeView) -> Option<PodStatus> {
    let pod = w.pod()?;
    let spec = crate::node::podworker::spec_of(&w.pod);
    let old = pod.status.clone().unwrap_or_default();
    let restart_policy = spec
        .restart_policy
        .clone()
        .unwrap_or_else(|| "Always".into());
    let img = |c: &k8s_openapi::api::core::v1::Container| c.image.clone().unwrap_or_default();
    let mut statuses: Vec<ContainerStatus> = spec
        .containers
        .iter()
        .map(|c| container_status(w, &c.name, &img(c), view))
        .collect();
    statuses.sort_by(|a, b| a.name.cmp(&b.name));
    let inits = spec.init_containers.clone().unwrap_or_default();
    let init: Vec<ContainerStatus> = inits
        .iter()
        .map(|c| container_status(w, &c.name, &img(c), view))
        .collect();
    let sidecar =
        |c: &k8s_openapi::api::core::v1::Container| c.restart_policy.as_deref() == Some("Always");
    let main_exists =
        w.ready_sandbox().is_some() && spec.containers.iter().any(|c| w.latest(&c.name).is_some());
    let init_done = main_exists
        || inits.iter().zip(&init).all(|(c, s)| {
            if sidecar(c) {
                s.started == Some(true)
            } else {
                s.state
                    .as_ref()
                    .and_then(|x| x.terminated.as_ref())
                    .is_some_and(|t| t.exit_code == 0)
            }
        });
    let phase = get_phase(&inits, &init, &statuses, &restart_policy, init_done);
    let sandbox = w.ready_sandbox();
    let sidecars_ready = inits
        .iter()
        .zip(&init)
        .filter(|(c, _)| sidecar(c))
        .all(|(_, s)| s.ready);
    let all_ready = !statuses.is_empty() && statuses.iter().all(|s| s.ready) && sidecars_ready;
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
        let names: Vec<&str> = inits
            .iter()
            .zip(&init)
            .filter(|(c, s)| {
                if sidecar(c) {
                    s.started != Some(true)
                } else {
                    s.state
                        .as_ref()
                        .and_then(|x| x.terminated.as_ref())
                        .is_none_or(|t| t.exit_code != 0)
                }
            })
            .map(|(c, _)| c.name.as_str())
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
    let not_ready: Vec<&str> = inits
        .iter()
        .zip(&init)
        .filter(|(c, s)| sidecar(c) && !s.ready)
        .map(|(c, _)| c.name.as_str())
        .chain(
            statuses
                .iter()
                .filter(|s| !s.ready)
                .map(|s| s.name.as_str()),
        )
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

fn running(s: &ContainerStatus) -> bool {
    s.state.as_ref().is_some_and(|x| x.running.is_some())
}

fn term(s: &ContainerStatus) -> Option<&ContainerStateTerminated> {
    s.state.as_ref().and_then(|x| x.terminated.as_ref())
}

fn last_term(s: &ContainerStatus) -> Option<&ContainerStateTerminated> {
    s.last_state.as_ref().and_then(|x| x.terminated.as_ref())
}

fn is_waiting(s: &ContainerStatus) -> bool {
    s.state.as_ref().is_some_and(|x| x.waiting.is_some())
}

/// `getPhase` (pkg/kubelet/kubelet_pods.go), over the statuses just computed.
fn get_phase(
    inits: &[k8s_openapi::api::core::v1::Container],
    init: &[ContainerStatus],
    main: &[ContainerStatus],
    restart_policy: &str,
    initialized: bool,
) -> String {
    let (mut pending_regular, mut pending_sidecar, mut failed_init) = (0, 0, 0);
    let (mut unknown, mut running_n, mut waiting, mut stopped, mut succeeded) = (0, 0, 0, 0, 0);
    for (c, s) in inits.iter().zip(init) {
        let sidecar = c.restart_policy.as_deref() == Some("Always");
        if !sidecar {
            if running(s) {
                pending_regular += 1;
            } else if let Some(t) = term(s) {
                if t.exit_code != 0 {
                    failed_init += 1;
                }
            } else if is_waiting(s) {
                match last_term(s) {
                    Some(t) if t.exit_code != 0 => failed_init += 1,
                    Some(_) => {}
                    None => pending_regular += 1,
                }
            } else {
                pending_regular += 1;
            }
        } else if running(s) {
            if s.started != Some(true) {
                pending_sidecar += 1;
            }
            running_n += 1;
        } else if term(s).is_some() {
        } else if is_waiting(s) {
            if last_term(s).is_none() {
                pending_sidecar += 1;
                waiting += 1;
            }
        } else {
            pending_sidecar += 1;
            unknown += 1;
        }
    }
    for s in main {
        if running(s) {
            running_n += 1;
        } else if let Some(t) = term(s) {
            stopped += 1;
            if t.exit_code == 0 {
                succeeded += 1;
            }
        } else if is_waiting(s) {
            if last_term(s).is_some() {
                stopped += 1;
            } else {
                waiting += 1;
            }
        } else {
            unknown += 1;
        }
    }
    if failed_init > 0 && restart_policy == "Never" {
        return "Failed".into();
    }
    if pending_regular > 0 || (pending_sidecar > 0 && !initialized) || waiting > 0 {
        return "Pending".into();
    }
    if running_n > 0 && unknown == 0 {
        return "Running".into();
    }
    if running_n == 0 && stopped > 0 && unknown == 0 {
        if restart_policy == "Always" {
            return "Running".into();
        }
        if stopped == succeeded {
            return "Succeeded".into();
        }
        if restart_policy == "Never" {
            return "Failed".into();
        }
        return "Running".into();
    }
    "Pending".into()
}
