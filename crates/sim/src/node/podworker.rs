//! One pod's worker in the kubelet: `SyncPod` as a sequence of CRI calls — read the
//! runtime's view, compute the actions (volumes, sandbox, init containers and sidecars,
//! image pulls, container starts and restarts with back-off, liveness kills, or
//! termination), run them one by one.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::sync::Arc;

use k8s_openapi::api::core::v1::{Container as K8sContainer, Pod, PodSpec};

use crate::node::runtime::{Container, ContainerState, CriOp, Sandbox};
use crate::node::volumes::VolumeState;
use crate::object::Object;
use crate::time::{Time, MINUTE, SECOND};

pub use crate::node::backoff::{Backoff, BACKOFF_INITIAL, BACKOFF_MAX, BACKOFF_RESET};
/// `minimumGracePeriodInSeconds`: a container always gets this long after SIGTERM.
pub const MIN_GRACE: Time = 2 * SECOND;
/// How long a pod's volumes may take before `FailedMount` (`podAttachAndMountTimeout`).
pub const MOUNT_TIMEOUT: Time = 2 * MINUTE + 3 * SECOND;

/// One step of a sync.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Action {
    /// Ask the runtime for the pod's sandboxes and containers.
    Inspect,
    /// Fetch the ConfigMaps, Secrets and claims the pod uses and set up its volumes.
    Prepare,
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
    /// Stop a running container (preStop hook, then SIGTERM, SIGKILL after the grace period).
    Kill {
        /// Container id.
        id: String,
        /// Container name.
        name: String,
        /// Grace period.
        grace_ms: Time,
        /// The `Killing` event's message (default `Stopping container NAME`).
        message: Option<String>,
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
    /// The runtime's view from the last inspection (shared with its records).
    pub sandboxes: Vec<Arc<Sandbox>>,
    /// Containers from the last inspection (shared with the runtime's records).
    pub containers: Vec<Arc<Container>>,
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
    /// Volumes and the objects they (and env vars) come from.
    pub volumes: VolumeState,
    /// Containers a liveness or startup probe condemned: name → Killing message.
    pub condemned: BTreeMap<String, String>,
    /// Container ids whose startup probe succeeded (or that have none).
    pub started: BTreeSet<String>,
    /// Exits already seen (container ids), so each feeds the back-off once.
    pub seen_exits: BTreeSet<String>,
    /// The last pull error per image (shown while backing off).
    pub pull_errors: BTreeMap<String, String>,
}

/// The spec of a shared pod object, borrowed (an empty one for a pod without a spec, or
/// no pod): the kubelet reads it on every sync, and a Pod's spec is most of its ~10 KB.
pub fn spec_of(pod: &Option<Arc<Object>>) -> Cow<'_, PodSpec> {
    match pod_of(pod).and_then(|p| p.spec.as_ref()) {
        Some(spec) => Cow::Borrowed(spec),
        None => Cow::Owned(PodSpec::default()),
    }
}

/// The Pod in a shared object, borrowed.
pub fn pod_of(pod: &Option<Arc<Object>>) -> Option<&Pod> {
    match pod.as_deref() {
        Some(Object::Pod(p)) => Some(p),
        _ => None,
    }
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
            volumes: VolumeState::default(),
            condemned: BTreeMap::new(),
            started: BTreeSet::new(),
            seen_exits: BTreeSet::new(),
            pull_errors: BTreeMap::new(),
        }
    }

    /// The pod object.
    pub fn pod(&self) -> Option<&Pod> {
        pod_of(&self.pod)
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
            .map(|c| &**c)
    }

    /// The ready sandbox, if any.
    pub fn ready_sandbox(&self) -> Option<&Sandbox> {
        self.sandboxes.iter().find(|s| s.ready).map(|s| &**s)
    }

    /// Whether the pod must be torn down (deleted, or gone from the apiserver).
    pub fn should_terminate(&self) -> bool {
        match self.pod() {
            None => true,
            Some(p) => p.metadata.deletion_timestamp.is_some(),
        }
    }

    /// The grace period for stopping containers now.
    fn grace(&self) -> Time {
        let p = self.pod();
        let s = p
            .and_then(|p| p.metadata.deletion_grace_period_seconds)
            .or_else(|| p.and_then(|p| p.spec.as_ref()?.termination_grace_period_seconds))
            .unwrap_or(30);
        (s.max(0) as Time)
            .saturating_mul(SECOND)
            .min(crate::node::behavior::FOREVER)
    }

    /// Whether a container counts as started (running and past its startup probe).
    pub fn is_started(&self, c: &Container) -> bool {
        c.state == ContainerState::Running && self.started.contains(&c.id)
    }

    /// Containers without a startup probe count as started as soon as they run.
    pub fn mark_started(&mut self) {
        let pod = self.pod.clone();
        let spec = spec_of(&pod);
        for c in spec
            .containers
            .iter()
            .chain(spec.init_containers.iter().flatten())
        {
            if c.startup_probe.is_some() {
                continue;
            }
            if let Some(l) = self
                .latest(&c.name)
                .filter(|l| l.state == ContainerState::Running)
            {
                let id = l.id.clone();
                self.started.insert(id);
            }
        }
    }

    /// computePodActions: what this sync must do, given the runtime's view.
    pub fn compute_actions(&mut self, now: Time) -> VecDeque<Action> {
        let mut out = VecDeque::new();
        if self.should_terminate() {
            if self.terminated {
                return out;
            }
            // A pod the apiserver removed without our final delete (a finished pod is
            // deleted at once) is done once nothing of it is left on the node: like
            // upstream's `SyncKnownPods`, the kubelet may forget its worker.
            if self.pod.is_none()
                && self.sandboxes.is_empty()
                && self
                    .containers
                    .iter()
                    .all(|c| c.state != ContainerState::Running)
            {
                self.terminated = true;
                return out;
            }
            self.terminating = true;
            let grace = self.grace();
            let pod = self.pod.clone();
            let spec = spec_of(&pod);
            // Regular containers first, then sidecars in reverse order.
            let mut order: Vec<String> = spec.containers.iter().map(|c| c.name.clone()).collect();
            order.extend(
                spec.init_containers
                    .iter()
                    .flatten()
                    .rev()
                    .map(|c| c.name.clone()),
            );
            let mut running: Vec<&Container> = self
                .containers
                .iter()
                .filter(|c| c.state == ContainerState::Running)
                .map(|c| &**c)
                .collect();
            running.sort_by_key(|c| {
                order
                    .iter()
                    .position(|n| *n == c.name)
                    .unwrap_or(usize::MAX)
            });
            for c in running {
                out.push_back(Action::Kill {
                    id: c.id.clone(),
                    name: c.name.clone(),
                    grace_ms: grace,
                    message: None,
                });
            }
            out.push_back(Action::StopSandbox);
            if self.pod.is_some() {
                out.push_back(Action::FinalDelete);
            }
            out.push_back(Action::RemoveSandbox);
            return out;
        }
        let pod_obj = self.pod.clone();
        let Some(pod) = pod_of(&pod_obj) else {
            return out;
        };
        let spec = spec_of(&pod_obj);
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
        // Liveness/startup failures: kill now; the restart follows with back-off.
        let condemned: Vec<(String, String)> =
            std::mem::take(&mut self.condemned).into_iter().collect();
        let grace = (spec.termination_grace_period_seconds.unwrap_or(30).max(0) as Time)
            .saturating_mul(SECOND)
            .min(crate::node::behavior::FOREVER);
        for (name, message) in condemned {
            if let Some(c) = self
                .latest(&name)
                .filter(|c| c.state == ContainerState::Running)
            {
                out.push_back(Action::Kill {
                    id: c.id.clone(),
                    name,
                    grace_ms: grace,
                    message: Some(message),
                });
            }
        }
        if !out.is_empty() {
            return out;
        }
        let needs_start = spec
            .containers
            .iter()
            .chain(spec.init_containers.iter().flatten())
            .any(|c| {
                self.latest(&c.name)
                    .is_none_or(|l| l.state == ContainerState::Exited)
            });
        if !self.volumes.ready || needs_start || self.volumes.remount {
            out.push_back(Action::Prepare);
        }
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
        // podHasInitialized: a regular container already exists in this sandbox.
        let main_started = sandbox_ready
            && spec
                .containers
                .iter()
                .any(|c| self.latest(&c.name).is_some());
        // Init containers run one at a time, in order; sidecars (restartPolicy: Always)
        // start in order and keep running.
        for c in spec.init_containers.iter().flatten() {
            let sidecar = c.restart_policy.as_deref() == Some("Always");
            let latest = if sandbox_ready {
                self.latest(&c.name).cloned()
            } else {
                None
            };
            if sidecar {
                match latest {
                    Some(l) if l.state == ContainerState::Running => {
                        if !self.is_started(&l) && !main_started {
                            return out;
                        }
                    }
                    Some(l) if l.state == ContainerState::Created => return out,
                    Some(l) => {
                        self.restart(
                            &mut out,
                            &c.name,
                            l.attempt + 1,
                            l.finished.unwrap_or(now),
                            now,
                        );
                        if !main_started {
                            return out;
                        }
                    }
                    None => {
                        self.start(&mut out, &c.name, 0);
                        if !main_started {
                            return out;
                        }
                    }
                }
                continue;
            }
            if main_started {
                continue;
            }
            match latest {
                Some(l) if l.state == ContainerState::Exited && l.exit_code == 0 => continue,
                Some(l) if l.state != ContainerState::Exited => return out,
                Some(l) => {
                    if restart_policy == "Never" {
                        return out;
                    }
                    self.restart(
                        &mut out,
                        &c.name,
                        l.attempt + 1,
                        l.finished.unwrap_or(now),
                        now,
                    );
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
                        self.restart(
                            &mut out,
                            &c.name,
                            l.attempt + 1,
                            l.finished.unwrap_or(now),
                            now,
                        );
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
        let keep = self.waiting.get(name).is_some_and(|w| {
            w.reason == "CreateContainerConfigError"
                || w.reason == "ErrImagePull"
                || w.reason == "ImagePullBackOff"
        });
        if !keep {
            self.waiting.insert(
                name.to_string(),
                Waiting {
                    reason: "ContainerCreating".into(),
                    message: None,
                },
            );
        }
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

    /// `doBackOff`: restart now, or wait in CrashLoopBackOff.
    fn restart(
        &mut self,
        out: &mut VecDeque<Action>,
        name: &str,
        attempt: u32,
        finished: Time,
        now: Time,
    ) {
        let b = self.crash_backoff.get(name).copied();
        if Backoff::in_backoff_since(b.as_ref(), finished, now) {
            let delay = b.map_or(BACKOFF_INITIAL, |b| b.delay);
            let pod = self.pod().map(pod_ref).unwrap_or_default();
            self.waiting.insert(
                name.to_string(),
                Waiting {
                    reason: "CrashLoopBackOff".into(),
                    message: Some(format!(
                        "back-off {} restarting failed container={name} pod={pod}",
                        crate::time::format_duration(delay)
                    )),
                },
            );
            return;
        }
        self.crash_backoff
            .insert(name.to_string(), Backoff::next(b, now));
        self.start(out, name, attempt);
    }

    /// When the crash back-off of a container ends (for the worker's wake-up timer).
    pub fn backoff_ends(&self, name: &str) -> Option<Time> {
        let b = self.crash_backoff.get(name)?;
        let finished = self.latest(name)?.finished?;
        Some(finished + b.delay)
    }

    /// The CRI operation for an action, if it needs one (configs come from the kubelet).
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
                    host_network: p.spec.as_ref().and_then(|s| s.host_network) == Some(true),
                    dns: crate::node::dns::DnsConfig::for_pod(p),
                    port_mappings: host_ports(p),
                })
            }
            Action::EnsureImage { container } => Some(CriOp::ImageStatus {
                image: image(container),
            }),
            Action::Pull { container } => Some(CriOp::PullImage {
                image: image(container),
            }),
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
            Action::Create { .. } | Action::Prepare | Action::FinalDelete => None,
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

/// `namespace/name`, how structured kubelet logs name a pod.
pub fn pod_key(p: &Pod) -> String {
    format!(
        "{}/{}",
        p.metadata.namespace.as_deref().unwrap_or(""),
        p.metadata.name.as_deref().unwrap_or("")
    )
}

/// The pod's TCP `hostPort`s as CRI PortMappings (host port, container port).
fn host_ports(p: &k8s_openapi::api::core::v1::Pod) -> Vec<(u16, u16)> {
    let Some(spec) = p.spec.as_ref() else {
        return Vec::new();
    };
    spec.containers
        .iter()
        .flat_map(|c| c.ports.iter().flatten())
        .filter(|cp| cp.protocol.as_deref().unwrap_or("TCP") == "TCP")
        .filter_map(|cp| {
            let host = u16::try_from(cp.host_port?).ok().filter(|h| *h > 0)?;
            Some((host, u16::try_from(cp.container_port).ok()?))
        })
        .collect()
}
