//! The CRI between kubelet and containerd: calls, results, and the sandboxes, containers
//! and images they talk about.

use std::collections::{BTreeMap, BTreeSet};

use crate::node::behavior::{Behaviour, Overrides};
use crate::time::Time;

/// Container states as the CRI reports them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ContainerState {
    /// Created, not started.
    Created,
    /// Running.
    Running,
    /// Exited.
    Exited,
}

/// A container known to containerd.
#[derive(Clone, Debug)]
pub struct Container {
    /// 64-hex id.
    pub id: String,
    /// Sandbox id.
    pub sandbox: String,
    /// Container name in the pod.
    pub name: String,
    /// Image as requested.
    pub image: String,
    /// Image id (`sha256:…`).
    pub image_id: String,
    /// Restart attempt (0 for the first).
    pub attempt: u32,
    /// State.
    pub state: ContainerState,
    /// When created.
    pub created: Time,
    /// When started.
    pub started: Option<Time>,
    /// When it exited.
    pub finished: Option<Time>,
    /// Exit code.
    pub exit_code: i32,
    /// `Completed`, `Error`, `OOMKilled`.
    pub reason: String,
    /// How it behaves.
    pub behaviour: Behaviour,
    /// PID of its main process on the host.
    pub pid: u32,
    /// Environment (as the kubelet resolved it).
    pub env: BTreeMap<String, String>,
    /// Command and args.
    pub command: Vec<String>,
    /// Ports the pod declares for it.
    pub declared_ports: Vec<i32>,
    /// Mounts: container path → host path.
    pub mounts: Vec<(String, String)>,
    /// The writable layer: files written inside the container outside its volumes
    /// (directories end in `/`). Gone with the container, as with overlayfs.
    pub fs: BTreeMap<String, String>,
}

impl Container {
    /// When the process starts listening (None if it never started).
    pub fn listening_at(&self) -> Option<Time> {
        self.started
            .map(|s| s.saturating_add(self.behaviour.start_ms))
    }

    /// Whether it accepts connections on `port` at `now`.
    pub fn accepts(&self, port: i32, now: Time) -> bool {
        self.state == ContainerState::Running
            && self.listening_at().is_some_and(|t| now >= t)
            && self
                .behaviour
                .listening(&self.declared_ports)
                .iter()
                .any(|(p, _)| *p == port)
    }

    /// Whether its HTTP endpoints still answer 503 (`not-ready-for`).
    pub fn unready(&self, now: Time) -> bool {
        self.listening_at()
            .is_some_and(|t| now < t.saturating_add(self.behaviour.not_ready_ms))
    }
}

/// A pod sandbox.
#[derive(Clone, Debug)]
pub struct Sandbox {
    /// 64-hex id.
    pub id: String,
    /// Pod UID.
    pub pod_uid: String,
    /// Pod name.
    pub name: String,
    /// Pod namespace.
    pub namespace: String,
    /// The IP CNI gave it.
    pub ip: String,
    /// Ready (network up) or NotReady (stopped).
    pub ready: bool,
    /// When created.
    pub created: Time,
    /// PID of its pause process.
    pub pid: u32,
    /// Its resolver configuration (`/etc/resolv.conf`).
    pub dns: crate::node::dns::DnsConfig,
    /// CNI portmap entries from the containers' `hostPort`s: (host port, container port).
    pub port_mappings: Vec<(u16, u16)>,
}

/// An image in the store.
#[derive(Clone, Debug)]
pub struct StoredImage {
    /// Normalized names (`docker.io/library/nginx:1.27`).
    pub names: BTreeSet<String>,
    /// Image id.
    pub id: String,
    /// Size in bytes.
    pub size: u64,
}

/// What the kubelet puts into a container's config.
#[derive(Clone, Debug, Default)]
pub struct ContainerConfig {
    /// Container name.
    pub name: String,
    /// Image.
    pub image: String,
    /// Command + args.
    pub command: Vec<String>,
    /// Resolved environment.
    pub env: BTreeMap<String, String>,
    /// Restart attempt.
    pub attempt: u32,
    /// Ports the pod declares.
    pub ports: Vec<i32>,
    /// Volume mounts: container path → host path.
    pub mounts: Vec<(String, String)>,
    /// `kubeloop.dev/behavior` tuning.
    pub overrides: Overrides,
    /// `stdin: true`: a shell started without a script waits for input.
    pub stdin: bool,
}

/// CRI calls.
#[derive(Clone, Debug)]
pub enum CriOp {
    /// Creates (or returns the ready) sandbox of a pod: CNI ADD.
    RunPodSandbox {
        /// Pod UID.
        uid: String,
        /// Pod name.
        name: String,
        /// Namespace.
        namespace: String,
        /// `spec.hostNetwork`: the sandbox shares the node's network namespace (no CNI
        /// ADD; the pod's IP is the node's).
        host_network: bool,
        /// The resolver configuration the kubelet computed (`/etc/resolv.conf`).
        dns: crate::node::dns::DnsConfig,
        /// The containers' TCP `hostPort`s as CRI PortMappings: (host port, container port).
        port_mappings: Vec<(u16, u16)>,
    },
    /// Stops a sandbox: CNI DEL frees its IP.
    StopPodSandbox {
        /// Sandbox id.
        id: String,
    },
    /// Removes a stopped sandbox and its containers.
    RemovePodSandbox {
        /// Sandbox id.
        id: String,
    },
    /// Whether an image is present.
    ImageStatus {
        /// Image reference.
        image: String,
    },
    /// Every image in the store (names and size).
    ListImages,
    /// Pulls an image (serialized, one at a time).
    PullImage {
        /// Image reference.
        image: String,
    },
    /// Creates a container.
    CreateContainer {
        /// Sandbox id.
        sandbox: String,
        /// The container's configuration.
        config: Box<ContainerConfig>,
    },
    /// Starts a created container.
    StartContainer {
        /// Container id.
        id: String,
    },
    /// SIGTERM, then SIGKILL after `timeout_ms`.
    StopContainer {
        /// Container id.
        id: String,
        /// Grace period.
        timeout_ms: Time,
    },
    /// Removes an exited container.
    RemoveContainer {
        /// Container id.
        id: String,
    },
    /// The sandboxes and containers of a pod.
    PodStatus {
        /// Pod UID.
        uid: String,
    },
    /// A kubelet API call the kubelet hands to the runtime of its machine: a container's
    /// log (the files containerd writes), `Exec` (its streaming server runs the command
    /// in the container), or `ListContainerStats`.
    Node(crate::node::kubelet_api::KubeletCall),
}

/// A CRI request.
#[derive(Clone, Debug)]
pub struct CriRequest {
    /// Id, unique per kubelet.
    pub id: u64,
    /// The call.
    pub op: CriOp,
}

impl CriRequest {
    /// A label for traces.
    pub fn label(&self) -> String {
        match &self.op {
            CriOp::RunPodSandbox { name, .. } => format!("RunPodSandbox {name}"),
            CriOp::StopPodSandbox { .. } => "StopPodSandbox".into(),
            CriOp::RemovePodSandbox { .. } => "RemovePodSandbox".into(),
            CriOp::ImageStatus { image } => format!("ImageStatus {image}"),
            CriOp::ListImages => "ListImages".into(),
            CriOp::PullImage { image } => format!("PullImage {image}"),
            CriOp::CreateContainer { config, .. } => format!("CreateContainer {}", config.name),
            CriOp::StartContainer { .. } => "StartContainer".into(),
            CriOp::StopContainer { .. } => "StopContainer".into(),
            CriOp::RemoveContainer { .. } => "RemoveContainer".into(),
            CriOp::PodStatus { .. } => "PodSandboxStatus".into(),
            CriOp::Node(call) => match call {
                crate::node::kubelet_api::KubeletCall::Logs { container, .. } => {
                    format!("ReadLogs {container}")
                }
                crate::node::kubelet_api::KubeletCall::Exec { container, .. } => {
                    format!("Exec {container}")
                }
                crate::node::kubelet_api::KubeletCall::Stats => "ListContainerStats".into(),
            },
        }
    }
}

/// CRI results.
#[derive(Clone, Debug)]
pub enum CriResult {
    /// Sandbox id and IP.
    Sandbox {
        /// Id.
        id: String,
        /// IP.
        ip: String,
    },
    /// Image present (with size) or not.
    Image(Option<u64>),
    /// The images on the machine: (repo digests and tags, size).
    Images(Vec<(Vec<String>, u64)>),
    /// Pull done: image id and size, and how long it took (ms).
    Pulled {
        /// Image id.
        id: String,
        /// Size.
        size: u64,
        /// Pull duration.
        took: Time,
        /// Including time waiting for earlier pulls.
        waited: Time,
    },
    /// Container id.
    Container(String),
    /// Done.
    Ok,
    /// A pod's sandboxes and containers.
    PodStatus {
        /// Sandboxes, newest first.
        sandboxes: Vec<std::sync::Arc<Sandbox>>,
        /// Containers of those sandboxes.
        containers: Vec<std::sync::Arc<Container>>,
    },
    /// The answer to a kubelet API call ([`CriOp::Node`]).
    Node(crate::node::kubelet_api::KubeletReply),
    /// An unsolicited event (evented PLEG): a container of this pod changed state.
    ContainerEvent {
        /// Pod UID.
        pod_uid: String,
    },
}

/// A CRI response.
#[derive(Clone, Debug)]
pub struct CriResponse {
    /// Request id (0 for events).
    pub id: u64,
    /// Result or the runtime's error.
    pub result: Result<CriResult, String>,
}

impl CriResponse {
    /// The error the kubelet sees when containerd is down.
    pub fn unavailable(id: u64) -> CriResponse {
        CriResponse {
            id,
            result: Err("rpc error: code = Unavailable desc = connection error: desc = \"transport: Error while dialing: dial unix /run/containerd/containerd.sock: connect: connection refused\"".into()),
        }
    }
}
