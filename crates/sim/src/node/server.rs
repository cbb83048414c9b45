//! The kubelet's own API (port 10250) as kube-apiserver proxies it: container logs,
//! exec, and the resource summary metrics-server scrapes for `kubectl top`.

use crate::node::cri::{Container, ContainerState};
use crate::node::journal::rfc3339_nanos;
use crate::node::shell;
use crate::time::Time;
use crate::world::{Actor, World};

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
    Exec(crate::node::curl::RunResult),
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

fn find(world: &World, n: u32, ns: &str, pod: &str, container: &str) -> Vec<Container> {
    let rt = &world.nodes[n as usize].runtime;
    let Some(sb) = rt
        .sandboxes
        .values()
        .filter(|s| s.namespace == ns && s.name == pod)
        .max_by_key(|s| (s.ready, s.created))
    else {
        return Vec::new();
    };
    let mut v: Vec<Container> = rt
        .containers
        .values()
        .filter(|c| c.sandbox == sb.id && c.name == container)
        .cloned()
        .collect();
    v.sort_by_key(|c| std::cmp::Reverse((c.attempt, c.created)));
    v
}

/// Serves one kubelet API request on node `n` (the world is the machine's view).
pub fn serve(world: &mut World, n: u32, req: KubeletRequest) -> KubeletResponse {
    let client = req.client.unwrap_or(Actor::ApiServer);
    let result = match req.call {
        KubeletCall::Logs {
            namespace,
            pod,
            container,
            previous,
            skip,
            tail,
            timestamps,
        } => {
            let cs = find(world, n, &namespace, &pod, &container);
            let latest_runs = cs
                .first()
                .is_some_and(|c| c.state != ContainerState::Exited);
            let target = match (previous, latest_runs) {
                (true, true) => cs.get(1),
                (true, false) | (false, _) => cs.first(),
            };
            match target {
                None if previous => Err(format!("previous terminated container \"{container}\" in pod \"{pod}\" not found")),
                None => Err(format!("container \"{container}\" in pod \"{pod}\" is waiting to start: ContainerCreating")),
                Some(c) => {
                    let lines: Vec<_> = world.nodes[n as usize]
                        .runtime
                        .logs
                        .get(&c.id)
                        .map(|l| l.iter().filter(|e| e.at <= world.now()).cloned().collect())
                        .unwrap_or_default();
                    let total = lines.len();
                    let start = match tail {
                        Some(t) => total.saturating_sub(t).max(skip),
                        None => skip.min(total),
                    };
                    let text: String = lines[start..]
                        .iter()
                        .map(|e| {
                            if timestamps {
                                format!("{} {}\n", rfc3339_nanos(e.at), e.text)
                            } else {
                                format!("{}\n", e.text)
                            }
                        })
                        .collect();
                    Ok(KubeletReply::Logs { text, next: total, running: c.state == ContainerState::Running })
                }
            }
        }
        KubeletCall::Exec {
            namespace,
            pod,
            container,
            command,
        } => {
            let cs = find(world, n, &namespace, &pod, &container);
            match cs
                .first()
                .filter(|c| c.state == ContainerState::Running)
                .cloned()
            {
                None => Err(format!(
                    "unable to upgrade connection: container not found (\"{container}\")"
                )),
                Some(c) => Ok(shell::exec(world, n, &c, &command)),
            }
        }
        KubeletCall::Stats => Ok(KubeletReply::Stats(summary(world, n))),
    };
    KubeletResponse {
        id: req.id,
        client,
        result,
    }
}

fn jitter(id: &str, window: Time, spread: u64) -> u64 {
    if spread == 0 {
        return 0;
    }
    crate::rng::fnv1a(format!("{id}/{window}").as_bytes()) % spread
}

/// The usage summary as of the last metrics-server scrape.
pub fn summary(world: &World, n: u32) -> Summary {
    let host = &world.nodes[n as usize];
    let at = world.now() / SCRAPE * SCRAPE;
    let mut pods: Vec<PodUsage> = Vec::new();
    let mut cpu = 60 + jitter(&host.config.name, at, 40);
    let mut mem: u64 = 690 * 1024 * 1024 + jitter(&host.config.name, at, 40) * 1024 * 1024;
    for sb in host.runtime.sandboxes.values().filter(|s| s.ready) {
        let mut containers = Vec::new();
        for c in host.runtime.running_in(&sb.id) {
            let b = &c.behaviour;
            let pod = format!("{}/{}", sb.namespace, sb.name);
            let served = crate::node::load::cpu_m(world, &pod, at, b.cost_us);
            let limit = b
                .cpu_limit_m
                .unwrap_or(u64::from(host.runtime.cpus()) * 1000);
            let u = ContainerUsage {
                name: c.name.clone(),
                cpu_m: (b.cpu_m + jitter(&c.id, at, b.cpu_m / 2 + 1) + served)
                    .min(limit.max(b.cpu_m)),
                mem_bytes: b.mem_bytes + jitter(&c.id, at, b.mem_bytes / 20 + 1),
            };
            cpu += u.cpu_m;
            mem += u.mem_bytes;
            if c.started.is_some_and(|s| s + SCRAPE <= at) {
                containers.push(u);
            }
        }
        if !containers.is_empty() {
            containers.sort_by(|a, b| a.name.cmp(&b.name));
            pods.push(PodUsage {
                namespace: sb.namespace.clone(),
                name: sb.name.clone(),
                containers,
            });
        }
    }
    pods.sort_by(|a, b| (&a.namespace, &a.name).cmp(&(&b.namespace, &b.name)));
    Summary {
        at,
        cpu_m: cpu,
        mem_bytes: mem,
        pods,
    }
}
