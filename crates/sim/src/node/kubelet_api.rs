//! The kubelet API (port 10250) as messages: the calls kube-apiserver proxies to a node
//! (container logs, exec, the resource summary) and their answers.

use crate::engine::Actor;
use crate::time::Time;

/// The error a proxied call gets when kube-apiserver itself is unreachable.
pub const APISERVER_DOWN: &str = "apiserver unreachable";

/// How often metrics-server scrapes the kubelets.
pub const SCRAPE: Time = 15_000;

/// A call to the kubelet API.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum KubeletCall {
    /// `GET /containerLogs/{ns}/{pod}/{container}`.
    Logs {
        /// Namespace.
        namespace: String,
        /// Pod.
        pod: String,
        /// Container.
        container: String,
        /// `--previous`.
        previous: bool,
        /// Skip this many lines (for `-f` polling).
        skip: usize,
        /// `--tail`.
        tail: Option<usize>,
        /// `--timestamps`.
        timestamps: bool,
    },
    /// `POST /exec/{ns}/{pod}/{container}?command=…`.
    Exec {
        /// Namespace.
        namespace: String,
        /// Pod.
        pod: String,
        /// Container.
        container: String,
        /// Command.
        command: Vec<String>,
        /// An interactive shell session (`kubectl exec -it POD -- sh`): the shell's state
        /// (variables, directory) is kept between lines; 0 for a one-shot command.
        session: u64,
    },
    /// `GET /stats/summary` (metrics-server's source).
    Stats,
}

/// A request to the kubelet API.
#[derive(Clone, Debug)]
pub struct KubeletRequest {
    /// Request id (per terminal process).
    pub id: u64,
    /// The node addressed.
    pub node: String,
    /// The terminal the answer goes back to (set by the apiserver hop).
    pub client: Option<Actor>,
    /// Who asks.
    pub user: String,
    /// The call.
    pub call: KubeletCall,
}

impl KubeletRequest {
    /// A label for traces.
    pub fn label(&self) -> String {
        match &self.call {
            KubeletCall::Logs {
                namespace,
                pod,
                container,
                ..
            } => {
                format!("GET /containerLogs/{namespace}/{pod}/{container}")
            }
            KubeletCall::Exec {
                namespace,
                pod,
                container,
                ..
            } => {
                format!("POST /exec/{namespace}/{pod}/{container}")
            }
            KubeletCall::Stats => "GET /stats/summary".into(),
        }
    }
}

/// Resource use of one container.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ContainerUsage {
    /// Container name.
    pub name: String,
    /// CPU (millicores).
    pub cpu_m: u64,
    /// Memory working set (bytes).
    pub mem_bytes: u64,
}

/// Resource use of one pod.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PodUsage {
    /// Namespace.
    pub namespace: String,
    /// Name.
    pub name: String,
    /// Containers.
    pub containers: Vec<ContainerUsage>,
}

/// What `/stats/summary` gives (as of the last scrape).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Summary {
    /// When the numbers were taken.
    pub at: Time,
    /// Node CPU (millicores).
    pub cpu_m: u64,
    /// Node memory working set (bytes).
    pub mem_bytes: u64,
    /// Pods with metrics (running for at least one scrape interval).
    pub pods: Vec<PodUsage>,
}

/// An answer from the kubelet API.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum KubeletReply {
    /// Log text (lines after `skip`), the new offset, and whether the container still runs.
    Logs {
        /// The text.
        text: String,
        /// Lines seen so far.
        next: usize,
        /// Whether the container is still running (for `-f`).
        running: bool,
    },
    /// The command's output.
    Exec(RunResult),
    /// The command could not even start (`executable file not found in $PATH`).
    ExecFailed(String),
    /// Usage summary.
    Stats(Summary),
}

/// An answer, routed back to the terminal that asked.
#[derive(Clone, Debug)]
pub struct KubeletResponse {
    /// Request id.
    pub id: u64,
    /// The terminal.
    pub client: Actor,
    /// The reply, or the error kubectl prints after `Error from server: `.
    pub result: Result<KubeletReply, String>,
}

/// What a command printed, its exit code, and how long it took.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RunResult {
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
    /// Exit code.
    pub code: i32,
    /// Virtual time the command took.
    pub elapsed: Time,
}

impl RunResult {
    /// A result printing `stdout`.
    pub fn out(s: impl Into<String>) -> RunResult {
        RunResult {
            stdout: s.into(),
            ..RunResult::default()
        }
    }

    /// A failure printing `stderr` with `code`.
    pub fn err(code: i32, s: impl Into<String>) -> RunResult {
        RunResult {
            stderr: s.into(),
            code,
            ..RunResult::default()
        }
    }
}
