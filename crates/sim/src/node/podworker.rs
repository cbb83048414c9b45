//! One pod's worker in the kubelet: `SyncPod` as a sequence of CRI calls — read the
//! runtime's view, compute the actions (sandbox, image pulls, container starts and
//! restarts with back-off, or termination), run them one by one.

use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;

use k8s_openapi::api::core::v1::{Container as K8sContainer, Pod};

use crate::node::runtime::{Container, ContainerState, CriOp, Sandbox};
use crate::object::Object;
use crate::time::{Time, MINUTE, SECOND};

/// CrashLoopBackOff and image pull back-off: initial delay.
pub const BACKOFF_INITIAL: Time = 10 * SECOND;
/// Back-off cap.
pub const BACKOFF_MAX: Time = 300 * SECOND;
/// A container running this long resets its crash back-off.
pub const BACKOFF_RESET: Time = 10 * MINUTE;

/// One step of a sync.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Action {
    /// Ask the runtime for the pod's sandboxes and containers.
    Inspect,
    /// Create the sandbox (CNI ADD).
    RunSandbox,
    /// Check whether the image is present (then pull if needed).
    EnsureImage {
        /// Container name.
        container: String,
    },
    /// Pull the image.
    Pull {
        /// Container name.
        container: String,
    },
    /// Create a container.
    Create {
        /// Container name.
        container: String,
        /// Restart attempt.
        attempt: u32,
    },
    /// Start the container just created.
    Start {
        /// Container name.
        container: String,
    },
    /// Stop a running container.
    Kill {
        /// Container id.
        id: String,
        /// Container name.
        name: String,
        /// Grace period.
        grace_ms: Time,
    },
    /// Stop the sandbox (CNI DEL).
    StopSandbox,
    /// Remove sandbox and containers after termination.
    RemoveSandbox,
    /// Tell the apiserver the pod is gone from this node (final delete).
    FinalDelete,
}

/// Why a container is waiting, for its status.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Waiting {
    /// `ContainerCreating`, `ErrImagePull`, `ImagePullBackOff`, `CrashLoopBackOff`, …
    pub reason: String,
    /// Message.
    pub message: Option<String>,
}

/// A back-off entry (per container for crashes, per image for pulls).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Backoff {
    /// Not before.
    pub until: Time,
    /// Current delay.
    pub delay: Time,
}

impl Backoff {
    /// The next back-off after a failure at `now` (10s doubling to 300s).
    pub fn next(prev: Option<Backoff>, now: Time) -> Backoff {
        let delay = match prev {
            None => BACKOFF_INITIAL,
            Some(b) => (b.delay * 2).min(BACKOFF_MAX),
        };
        Backoff {
            until: now + delay,
            delay,
        }
    }
}

/// The kubelet's state for one pod.
#[derive(Debug)]
pub struct PodWorker {
    /// Pod UID.
    pub uid: String,
    /// The pod as last seen from the apiserver (None once deleted there).
    pub pod: Option<Arc<Object>>,
    /// Remaining actions of the current sync.
    pub actions: VecDeque<Action>,
    /// Whether a sync is in progress.
    pub busy: bool,
    /// Another sync was requested while busy.
    pub again: bool,
    /// The CRI request in flight.
    pub waiting_on: Option<u64>,
    /// When the kubelet first saw the pod (status.startTime).
    pub start_time: Option<Time>,
    /// The runtime's view from the last inspection.
    pub sandboxes: Vec<Sandbox>,
    /// Containers from the last inspection.
    pub containers: Vec<Container>,
    /// The sandbox used by this sync.
    pub sandbox: Option<(String, String)>,
    /// Container just created, awaiting start.
    pub created: BTreeMap<String, String>,
    /// Waiting reasons by container name.
    pub waiting: BTreeMap<String, Waiting>,
    /// Crash back-off by container name.
    pub crash_backoff: BTreeMap<String, Backoff>,
    /// Image pull back-off by image.
    pub pull_backoff: BTreeMap<String, Backoff>,
    /// Terminated on this node (sandbox stopped, final delete sent).
    pub terminated: bool,
    /// Termination in progress.
    pub terminating: bool,
}

impl PodWorker {
    /// A worker for a pod just seen.
    pub fn new(uid: &str, pod: Arc<Object>, now: Time) -> PodWorker {
        PodWorker {
            uid: uid.to_string(),
            pod: Some(pod),
            actions: VecDeque::new(),
            busy: false,
            again: false,
            waiting_on: None,
            start_time: Some(now),
            sandboxes: Vec::new(),
            containers: Vec::new(),
            sandbox: None,
            created: BTreeMap::new(),
            waiting: BTreeMap::new(),
            crash_backoff: BTreeMap::new(),
            pull_backoff: BTreeMap::new(),
            terminated: false,
            terminating: false,
        }
    }

    /// The pod object.
    pub fn pod(&self) -> Option<&Pod> {
        match self.pod.as_deref() {
            Some(Object::Pod(p)) => Some(p),
            _ => None,
        }
    }

    /// The spec of a container by name (regular or init).
    pub fn container_spec(&self, name: &str) -> Option<&K8sContainer> {
        let spec = self.pod()?.spec.as_ref()?;
        spec.containers
            .iter()
            .chain(spec.init_containers.iter().flatten())
            .find(|c| c.name == name)
    }

    /// The latest runtime container of a name.
    pub fn latest(&self, name: &str) -> Option<&Container> {
        self.containers
            .iter()
            .filter(|c| c.name == name)
            .max_by_key(|c| (c.attempt, c.created))
    }

    /// The ready sandbox, if any.
    pub fn ready_sandbox(&self) -> Option<&Sandbox> {
        self.sandboxes.iter().find(|s| s.ready)
    }

    /// Whether the pod must be torn down (deleted, or gone from the apiserver).
    pub fn should_terminate(&self) -> bool {
        match self.pod() {
            None => true,
            Some(p) => p.metadata.deletion_timestamp.is_some(),
        }
    }

    /// computePodActions: what this sync must do, given the runtime's view.
    pub fn compute_actions(&mut self, now: Time) -> VecDeque<Action> {
        let mut out = VecDeque::new();
        if self.should_terminate() {
            if self.terminated {
                return out;
            }
            self.terminating = true;
            let grace = self
                .pod()
                .and_then(|p| p.metadata.deletion_grace_period_seconds)
                .map_or(0, |g| g.max(0) as Time * SECOND);
            for c in self
                .containers
                .iter()
                .filter(|c| c.state == ContainerState::Running)
            {
                out.push_back(Action::Kill {
                    id: c.id.clone(),
                    name: c.name.clone(),
                    grace_ms: grace,
                });
            }
            out.push_back(Action::StopSandbox);
            if self.pod.is_some() {
                out.push_back(Action::FinalDelete);
            }
            out.push_back(Action::RemoveSandbox);
            return out;
        }
        let Some(pod) = self.pod().cloned() else {
            return out;
        };
        let spec = pod.spec.clone().unwrap_or_default();
        let phase = pod
            .status
            .as_ref()
            .and_then(|s| s.phase.clone())
            .unwrap_or_default();
        if phase == "Succeeded" || phase == "Failed" {
            return out;
        }
        let restart_policy = spec
            .restart_policy
            .clone()
            .unwrap_or_else(|| "Always".into());
        let sandbox_ready = self.ready_sandbox().is_some();
        if !sandbox_ready {
            // A sandbox that died takes its containers with it: start over.
            if !self.sandboxes.is_empty()
                && restart_policy == "Never"
                && self
                    .containers
                    .iter()
                    .any(|c| c.state == ContainerState::Exited)
            {
                return out;
            }
            out.push_back(Action::RunSandbox);
        }
        // Init containers run one at a time, in order, to completion.
        for c in spec.init_containers.iter().flatten() {
            let latest = if sandbox_ready {
                self.latest(&c.name).cloned()
            } else {
                None
            };
            match latest {
                Some(l) if l.state == ContainerState::Exited && l.exit_code == 0 => continue,
                Some(l) if l.state != ContainerState::Exited => return out,
                Some(l) => {
                    if restart_policy == "Never" {
                        return out;
                    }
                    self.restart(&mut out, &c.name, l.attempt + 1, now);
                    return out;
                }
                None => {
                    self.start(&mut out, &c.name, 0);
                    return out;
                }
            }
        }
        for c in &spec.containers {
            let latest = if sandbox_ready {
                self.latest(&c.name).cloned()
            } else {
                None
            };
            match latest {
                Some(l)
                    if l.state == ContainerState::Running || l.state == ContainerState::Created => {
                }
                Some(l) => {
                    let restart = match restart_policy.as_str() {
                        "Always" => true,
                        "OnFailure" => l.exit_code != 0,
                        _ => false,
                    };
                    if restart {
                        self.restart(&mut out, &c.name, l.attempt + 1, now);
                    }
                }
                None => {
                    let attempt = self.latest(&c.name).map_or(0, |l| l.attempt + 1);
                    self.start(&mut out, &c.name, attempt);
                }
            }
        }
        out
    }

    fn start(&mut self, out: &mut VecDeque<Action>, name: &str, attempt: u32) {
        self.waiting.insert(
            name.to_string(),
            Waiting {
                reason: "ContainerCreating".into(),
                message: None,
            },
        );
        out.push_back(Action::EnsureImage {
            container: name.to_string(),
        });
        out.push_back(Action::Create {
            container: name.to_string(),
            attempt,
        });
        out.push_back(Action::Start {
            container: name.to_string(),
        });
    }

    fn restart(&mut self, out: &mut VecDeque<Action>, name: &str, attempt: u32, now: Time) {
        if let Some(b) = self.crash_backoff.get(name) {
            if now < b.until {
                let pod = self.pod().map(pod_ref).unwrap_or_default();
                self.waiting.insert(
                    name.to_string(),
                    Waiting {
                        reason: "CrashLoopBackOff".into(),
                        message: Some(format!(
                            "back-off {} restarting failed container={name} pod={pod}",
                            crate::time::format_duration(b.delay)
                        )),
                    },
                );
                return;
            }
        }
        self.start(out, name, attempt);
    }

    /// Records a container exit for crash back-off (reset after 10 minutes of running).
    pub fn note_exit(&mut self, name: &str, started: Option<Time>, finished: Time) {
        let prev = self.crash_backoff.get(name).copied();
        let ran = started.map_or(0, |s| finished.saturating_sub(s));
        let prev = if ran >= BACKOFF_RESET { None } else { prev };
        self.crash_backoff
            .insert(name.to_string(), Backoff::next(prev, finished));
    }

    /// The CRI operation for an action, if it needs one.
    pub fn cri_op(&self, a: &Action) -> Option<CriOp> {
        let pod = self.pod();
        let image = |name: &str| {
            self.container_spec(name)
                .and_then(|c| c.image.clone())
                .unwrap_or_default()
        };
        match a {
            Action::Inspect => Some(CriOp::PodStatus {
                uid: self.uid.clone(),
            }),
            Action::RunSandbox => {
                let p = pod?;
                Some(CriOp::RunPodSandbox {
                    uid: self.uid.clone(),
                    name: p.metadata.name.clone().unwrap_or_default(),
                    namespace: p.metadata.namespace.clone().unwrap_or_default(),
                })
            }
            Action::EnsureImage { container } => Some(CriOp::ImageStatus {
                image: image(container),
            }),
            Action::Pull { container } => Some(CriOp::PullImage {
                image: image(container),
            }),
            Action::Create { container, attempt } => {
                let c = self.container_spec(container)?;
                let mut command = c.command.clone().unwrap_or_default();
                command.extend(c.args.clone().unwrap_or_default());
                Some(CriOp::CreateContainer {
                    sandbox: self.sandbox.as_ref()?.0.clone(),
                    name: container.clone(),
                    image: image(container),
                    command,
                    attempt: *attempt,
                })
            }
            Action::Start { container } => Some(CriOp::StartContainer {
                id: self.created.get(container)?.clone(),
            }),
            Action::Kill { id, grace_ms, .. } => Some(CriOp::StopContainer {
                id: id.clone(),
                timeout_ms: *grace_ms,
            }),
            Action::StopSandbox => {
                let s = self
                    .sandboxes
                    .iter()
                    .find(|s| s.ready)
                    .or(self.sandboxes.first())?;
                Some(CriOp::StopPodSandbox { id: s.id.clone() })
            }
            Action::RemoveSandbox => {
                let s = self.sandboxes.first()?;
                Some(CriOp::RemovePodSandbox { id: s.id.clone() })
            }
            Action::FinalDelete => None,
        }
    }
}

/// `name_namespace(uid)`, the pod reference in kubelet messages.
pub fn pod_ref(p: &Pod) -> String {
    format!(
        "{}_{}({})",
        p.metadata.name.as_deref().unwrap_or(""),
        p.metadata.namespace.as_deref().unwrap_or(""),
        p.metadata.uid.as_deref().unwrap_or("")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_to_five_minutes() {
        let mut b = None;
        let mut delays = Vec::new();
        for _ in 0..7 {
            let n = Backoff::next(b, 0);
            delays.push(n.delay / 1000);
            b = Some(n);
        }
        assert_eq!(delays, [10, 20, 40, 80, 160, 300, 300]);
    }
}
