//! containerd on one node: the CRI (sandboxes with CNI addresses, image pulls, containers
//! and their processes), its image store, and host-local IPAM on the node's podCIDR.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::net::Ipv4Addr;

use crate::cluster::NodeConfig;
use crate::node::images::{self, Behaviour, ImageRef};
use crate::rng::Rng;
use crate::time::{Time, SECOND};
use crate::world::{Actor, Ctx, Payload};

/// Pull throughput from the registry (bytes per ms ≈ 40 MB/s).
const PULL_BYTES_PER_MS: u64 = 40_000;
/// Fixed registry round-trips per pull.
const PULL_LATENCY: Time = 300;
/// The sandbox ("pause") image.
pub const PAUSE_IMAGE: &str = "registry.k8s.io/pause:3.10";

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
    /// Pulls an image (serialized, one at a time).
    PullImage {
        /// Image reference.
        image: String,
    },
    /// Creates a container.
    CreateContainer {
        /// Sandbox id.
        sandbox: String,
        /// Container name.
        name: String,
        /// Image.
        image: String,
        /// Command + args.
        command: Vec<String>,
        /// Restart attempt.
        attempt: u32,
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
            CriOp::PullImage { image } => format!("PullImage {image}"),
            CriOp::CreateContainer { name, .. } => format!("CreateContainer {name}"),
            CriOp::StartContainer { .. } => "StartContainer".into(),
            CriOp::StopContainer { .. } => "StopContainer".into(),
            CriOp::RemoveContainer { .. } => "RemoveContainer".into(),
            CriOp::PodStatus { .. } => "PodSandboxStatus".into(),
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
        sandboxes: Vec<Sandbox>,
        /// Containers of those sandboxes.
        containers: Vec<Container>,
    },
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

#[derive(Debug)]
struct PendingPull {
    from: Actor,
    req: u64,
    image: ImageRef,
    queued_at: Time,
}

#[derive(Debug)]
enum TimerAction {
    /// The container's process exits on its own.
    Exit(String),
    /// A stop completes: the process is gone; answer the StopContainer call.
    Stopped {
        id: String,
        code: i32,
        reason: &'static str,
        from: Actor,
        req: u64,
    },
}

const TIMER_PULL_DONE: u64 = 1;
const TIMER_CONTAINER_BASE: u64 = 1 << 32;

/// containerd.
#[derive(Debug)]
pub struct Runtime {
    node: u32,
    rng: Rng,
    cpus: u32,
    /// Images on disk.
    pub images: BTreeMap<String, StoredImage>,
    /// Sandboxes.
    pub sandboxes: BTreeMap<String, Sandbox>,
    /// Containers.
    pub containers: BTreeMap<String, Container>,
    pod_cidr_base: u32,
    last_ip: u32,
    used_ips: BTreeSet<u32>,
    pulls: VecDeque<PendingPull>,
    pulling_since: Option<Time>,
    timers: BTreeMap<u64, TimerAction>,
    next_timer: u64,
    next_pid: u32,
    kubelet: Option<Actor>,
}

impl Runtime {
    /// containerd for node `n` with its pre-pulled images.
    pub fn new(n: u32, config: &NodeConfig) -> Runtime {
        let cidr = crate::cluster::pod_cidr(n as usize);
        let base: Ipv4Addr = cidr
            .split('/')
            .next()
            .unwrap_or("10.244.0.0")
            .parse()
            .unwrap_or(Ipv4Addr::new(10, 244, 0, 0));
        let cpus = config
            .capacity
            .get("cpu")
            .and_then(|c| crate::quantity::parse(c).ok())
            .map_or(1, |q| q.value().max(1) as u32);
        let mut r = Runtime {
            node: n,
            rng: Rng::stream(u64::from(n) + 1, "containerd"),
            cpus,
            images: BTreeMap::new(),
            sandboxes: BTreeMap::new(),
            containers: BTreeMap::new(),
            pod_cidr_base: u32::from(base),
            last_ip: 1,
            used_ips: BTreeSet::new(),
            pulls: VecDeque::new(),
            pulling_since: None,
            timers: BTreeMap::new(),
            next_timer: 0,
            next_pid: 1000,
            kubelet: None,
        };
        r.store(&images::parse(PAUSE_IMAGE), 320_000);
        for img in &config.images {
            let size = img.size_bytes.unwrap_or(0).max(0) as u64;
            for name in img.names.iter().flatten() {
                r.store(&images::parse(name), size);
            }
        }
        r
    }

    /// After a reboot: no sandbox, container or address survives; images stay on disk.
    pub fn reboot(&mut self) {
        self.sandboxes.clear();
        self.containers.clear();
        self.used_ips.clear();
        self.pulls.clear();
        self.pulling_since = None;
        self.timers.clear();
    }

    /// CPUs of the machine.
    pub fn cpus(&self) -> u32 {
        self.cpus
    }

    fn hex_id(&mut self) -> String {
        format!(
            "{:016x}{:016x}{:016x}{:016x}",
            self.rng.next_u64(),
            self.rng.next_u64(),
            self.rng.next_u64(),
            self.rng.next_u64()
        )
    }

    fn store(&mut self, image: &ImageRef, size: u64) -> String {
        let id = format!(
            "sha256:{:016x}{:016x}{:016x}{:016x}",
            crate::rng::fnv1a(image.full.as_bytes()),
            size,
            crate::rng::fnv1a(image.repo.as_bytes()),
            self.node
        );
        let existing = self.images.values_mut().find(|i| i.id == id);
        match existing {
            Some(i) => {
                i.names.insert(image.full.clone());
            }
            None => {
                self.images.insert(
                    id.clone(),
                    StoredImage {
                        names: [image.full.clone()].into_iter().collect(),
                        id: id.clone(),
                        size,
                    },
                );
            }
        }
        id
    }

    /// The stored image for a reference.
    pub fn image(&self, image: &str) -> Option<&StoredImage> {
        let full = images::parse(image).full;
        self.images.values().find(|i| i.names.contains(&full))
    }

    /// host-local IPAM: the next free address after the last one handed out.
    fn allocate_ip(&mut self) -> Option<String> {
        for step in 1..=253u32 {
            let host = ((i64::from(self.last_ip) - 2 + i64::from(step)).rem_euclid(253) + 2) as u32; // .2 … .254; .1 is the bridge
            if !self.used_ips.contains(&host) {
                self.used_ips.insert(host);
                self.last_ip = host;
                return Some(Ipv4Addr::from(self.pod_cidr_base + host).to_string());
            }
        }
        None
    }

    fn release_ip(&mut self, ip: &str) {
        if let Ok(a) = ip.parse::<Ipv4Addr>() {
            self.used_ips
                .remove(&(u32::from(a).wrapping_sub(self.pod_cidr_base)));
        }
    }

    /// Handles a message.
    pub fn handle(&mut self, ctx: &mut Ctx, from: Actor, payload: Payload) {
        match payload {
            Payload::Cri(req) => {
                self.kubelet = Some(from);
                if let Some(result) = self.call(ctx, from, req.id, req.op) {
                    ctx.send(from, Payload::CriResp(CriResponse { id: req.id, result }));
                }
            }
            Payload::Timer(TIMER_PULL_DONE) => self.finish_pull(ctx),
            Payload::Timer(t) if t >= TIMER_CONTAINER_BASE => match self.timers.remove(&t) {
                Some(TimerAction::Exit(id)) => self.container_timer(ctx, &id),
                Some(TimerAction::Stopped {
                    id,
                    code,
                    reason,
                    from,
                    req,
                }) => {
                    self.exit(&id, code, reason, ctx.now);
                    ctx.send(
                        from,
                        Payload::CriResp(CriResponse {
                            id: req,
                            result: Ok(CriResult::Ok),
                        }),
                    );
                }
                None => {}
            },
            _ => {}
        }
    }

    fn call(
        &mut self,
        ctx: &mut Ctx,
        from: Actor,
        req: u64,
        op: CriOp,
    ) -> Option<Result<CriResult, String>> {
        let now = ctx.now;
        let _ = &from;
        Some(match op {
            CriOp::RunPodSandbox {
                uid,
                name,
                namespace,
            } => {
                if let Some(s) = self
                    .sandboxes
                    .values()
                    .find(|s| s.pod_uid == uid && s.ready)
                {
                    return Some(Ok(CriResult::Sandbox {
                        id: s.id.clone(),
                        ip: s.ip.clone(),
                    }));
                }
                let Some(ip) = self.allocate_ip() else {
                    return Some(Err(format!("failed to setup network for sandbox: plugin type=\"bridge\" failed (add): failed to allocate for range 0: no IP addresses available in range set: {}", crate::cluster::pod_cidr(self.node as usize))));
                };
                let id = self.hex_id();
                self.sandboxes.insert(
                    id.clone(),
                    Sandbox {
                        id: id.clone(),
                        pod_uid: uid,
                        name,
                        namespace,
                        ip: ip.clone(),
                        ready: true,
                        created: now,
                    },
                );
                Ok(CriResult::Sandbox { id, ip })
            }
            CriOp::StopPodSandbox { id } => {
                let ids: Vec<String> = self
                    .containers
                    .values()
                    .filter(|c| c.sandbox == id && c.state == ContainerState::Running)
                    .map(|c| c.id.clone())
                    .collect();
                for c in ids {
                    self.exit(&c, 137, "Error", now);
                }
                let ip = self.sandboxes.get_mut(&id).filter(|s| s.ready).map(|s| {
                    s.ready = false;
                    s.ip.clone()
                });
                if let Some(ip) = ip {
                    self.release_ip(&ip);
                }
                Ok(CriResult::Ok)
            }
            CriOp::RemovePodSandbox { id } => {
                self.sandboxes.remove(&id);
                self.containers.retain(|_, c| c.sandbox != id);
                Ok(CriResult::Ok)
            }
            CriOp::ImageStatus { image } => {
                Ok(CriResult::Image(self.image(&image).map(|i| i.size)))
            }
            CriOp::PullImage { image } => {
                let r = images::parse(&image);
                self.pulls.push_back(PendingPull {
                    from,
                    req,
                    image: r,
                    queued_at: now,
                });
                if self.pulling_since.is_none() {
                    self.start_pull(ctx);
                }
                return None;
            }
            CriOp::CreateContainer {
                sandbox,
                name,
                image,
                command,
                attempt,
            } => {
                let Some(img) = self.image(&image).cloned() else {
                    return Some(Err(format!("failed to get image \"{image}\": not found")));
                };
                if !self.sandboxes.get(&sandbox).is_some_and(|s| s.ready) {
                    return Some(Err(format!(
                        "failed to create containerd container: sandbox {sandbox} is not ready"
                    )));
                }
                let id = self.hex_id();
                let behaviour = images::behaviour(&images::parse(&image), &command, self.cpus);
                self.next_pid += 7;
                self.containers.insert(
                    id.clone(),
                    Container {
                        id: id.clone(),
                        sandbox,
                        name,
                        image,
                        image_id: img.id,
                        attempt,
                        state: ContainerState::Created,
                        created: now,
                        started: None,
                        finished: None,
                        exit_code: 0,
                        reason: String::new(),
                        behaviour,
                        pid: self.next_pid,
                    },
                );
                Ok(CriResult::Container(id))
            }
            CriOp::StartContainer { id } => {
                let exits = match self.containers.get_mut(&id) {
                    Some(c) if c.state == ContainerState::Created => {
                        c.state = ContainerState::Running;
                        c.started = Some(now);
                        c.behaviour.exits
                    }
                    _ => {
                        return Some(Err(format!(
                            "failed to start containerd task \"{id}\": not found"
                        )))
                    }
                };
                if let Some((after, _)) = exits {
                    self.add_timer(ctx, after, TimerAction::Exit(id));
                }
                Ok(CriResult::Ok)
            }
            CriOp::StopContainer { id, timeout_ms } => {
                let Some(c) = self
                    .containers
                    .get(&id)
                    .filter(|c| c.state == ContainerState::Running)
                else {
                    return Some(Ok(CriResult::Ok));
                };
                let (delay, code, reason) =
                    if c.behaviour.handles_sigterm && c.behaviour.stop_ms <= timeout_ms {
                        (c.behaviour.stop_ms, 0, "Completed")
                    } else {
                        (timeout_ms, 137, "Error")
                    };
                // The call returns once the container is gone.
                self.add_timer(
                    ctx,
                    delay,
                    TimerAction::Stopped {
                        id,
                        code,
                        reason,
                        from,
                        req,
                    },
                );
                return None;
            }
            CriOp::RemoveContainer { id } => {
                self.containers.remove(&id);
                Ok(CriResult::Ok)
            }
            CriOp::PodStatus { uid } => {
                let mut sandboxes: Vec<Sandbox> = self
                    .sandboxes
                    .values()
                    .filter(|s| s.pod_uid == uid)
                    .cloned()
                    .collect();
                sandboxes.sort_by(|a, b| b.created.cmp(&a.created).then(b.id.cmp(&a.id)));
                let ids: BTreeSet<&String> = sandboxes.iter().map(|s| &s.id).collect();
                let containers = self
                    .containers
                    .values()
                    .filter(|c| ids.contains(&c.sandbox))
                    .cloned()
                    .collect();
                Ok(CriResult::PodStatus {
                    sandboxes,
                    containers,
                })
            }
        })
    }

    fn add_timer(&mut self, ctx: &mut Ctx, after: Time, action: TimerAction) {
        self.next_timer += 1;
        let t = TIMER_CONTAINER_BASE + self.next_timer;
        self.timers.insert(t, action);
        ctx.timer(after, t);
    }

    fn container_timer(&mut self, ctx: &mut Ctx, id: &str) {
        let Some(c) = self.containers.get(id) else {
            return;
        };
        if c.state != ContainerState::Running {
            return;
        }
        let Some((_, code)) = c.behaviour.exits else {
            return;
        };
        let reason = if code == 0 { "Completed" } else { "Error" };
        self.exit(id, code, reason, ctx.now);
        self.notify(ctx, id);
    }

    fn exit(&mut self, id: &str, code: i32, reason: &str, at: Time) {
        if let Some(c) = self.containers.get_mut(id) {
            c.state = ContainerState::Exited;
            c.exit_code = code;
            c.reason = reason.to_string();
            c.finished = Some(at);
        }
    }

    /// Crashes a running container (`sim crash`): it exits with the given code.
    pub fn crash(&mut self, ctx: &mut Ctx, id: &str, code: i32) {
        if self
            .containers
            .get(id)
            .is_some_and(|c| c.state == ContainerState::Running)
        {
            self.exit(id, code, "Error", ctx.now);
            self.notify(ctx, id);
        }
    }

    fn notify(&mut self, ctx: &mut Ctx, container: &str) {
        let Some(c) = self.containers.get(container) else {
            return;
        };
        let Some(uid) = self.sandboxes.get(&c.sandbox).map(|s| s.pod_uid.clone()) else {
            return;
        };
        if let Some(k) = self.kubelet {
            ctx.send(
                k,
                Payload::CriResp(CriResponse {
                    id: 0,
                    result: Ok(CriResult::ContainerEvent { pod_uid: uid }),
                }),
            );
        }
    }

    fn start_pull(&mut self, ctx: &mut Ctx) {
        let Some(p) = self.pulls.front() else {
            self.pulling_since = None;
            return;
        };
        self.pulling_since = Some(ctx.now);
        let took = match images::resolve(&p.image) {
            Ok(size) => PULL_LATENCY + size / PULL_BYTES_PER_MS,
            Err(_) => PULL_LATENCY,
        };
        ctx.timer(took, TIMER_PULL_DONE);
    }

    fn finish_pull(&mut self, ctx: &mut Ctx) {
        let Some(p) = self.pulls.pop_front() else {
            return;
        };
        let started = self.pulling_since.unwrap_or(ctx.now);
        let result = match images::resolve(&p.image) {
            Ok(size) => {
                let id = self.store(&p.image, size);
                Ok(CriResult::Pulled {
                    id,
                    size,
                    took: ctx.now - started,
                    waited: ctx.now - p.queued_at,
                })
            }
            Err(e) => Err(e),
        };
        ctx.send(p.from, Payload::CriResp(CriResponse { id: p.req, result }));
        self.start_pull(ctx);
    }

    /// The containers' processes on this machine (for `ps`), with their container.
    pub fn processes(&self) -> Vec<(u32, &Container, String)> {
        let mut out = Vec::new();
        for c in self
            .containers
            .values()
            .filter(|c| c.state == ContainerState::Running)
        {
            for (i, p) in c.behaviour.processes.iter().enumerate() {
                out.push((c.pid + i as u32, c, p.clone()));
            }
        }
        out
    }

    /// A sandbox by pod UID (the ready one, if any).
    pub fn sandbox_of(&self, uid: &str) -> Option<&Sandbox> {
        self.sandboxes
            .values()
            .filter(|s| s.pod_uid == uid)
            .max_by_key(|s| (s.ready, s.created))
    }

    /// Whether a pull is in progress.
    pub fn pulling(&self) -> bool {
        self.pulling_since.is_some()
    }

    #[doc(hidden)]
    pub fn seconds(t: Time) -> f64 {
        t as f64 / SECOND as f64
    }
}
