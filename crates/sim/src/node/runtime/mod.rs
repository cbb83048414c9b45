//! containerd on one node: the CRI (sandboxes with CNI addresses, image pulls, containers
//! and their processes and logs), its image store, and host-local IPAM on the podCIDR.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::net::Ipv4Addr;
use std::sync::Arc;

use crate::cluster::NodeConfig;
use crate::message::{Actor, Ctx, Payload};
use crate::node::behavior;
use crate::node::images::{self, ImageRef};
use crate::node::journal::{q, Level, LogLine};
use crate::node::logs::{self, LogEntry, LOG_LINES};
use crate::rng::Rng;
use crate::time::{Time, SECOND};

mod boot;
mod pull;

pub use crate::node::cri::{
    Container, ContainerConfig, ContainerState, CriOp, CriRequest, CriResponse, CriResult, Sandbox,
    StoredImage,
};

/// Pull throughput from the registry (bytes per ms ≈ 40 MB/s).
const PULL_BYTES_PER_MS: u64 = 40_000;
/// Fixed registry round-trips per pull.
const PULL_LATENCY: Time = 300;
/// The sandbox ("pause") image.
pub const PAUSE_IMAGE: &str = "registry.k8s.io/pause:3.10";

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
    pub sandboxes: BTreeMap<String, Arc<Sandbox>>,
    /// Containers, each shared with the kubelet's view of its pod from the last
    /// inspection (`PodStatus`) until either changes it.
    pub containers: BTreeMap<String, Arc<Container>>,
    /// Container logs (`/var/log/pods/…`), by container id.
    pub logs: BTreeMap<String, VecDeque<LogEntry>>,
    /// Host paths a database has initialized (they survive container restarts).
    pub initialized: BTreeSet<String>,
    /// Lines for containerd's journal, taken by the world after each message.
    pub journal: Vec<LogLine>,
    pod_cidr_base: u32,
    last_ip: u32,
    used_ips: BTreeSet<u32>,
    pulls: VecDeque<PendingPull>,
    pulling_since: Option<Time>,
    timers: BTreeMap<u64, TimerAction>,
    next_timer: u64,
    next_pid: u32,
    kubelet: Option<Actor>,
    /// Load-loop timers (token → container id): see [`crate::node::load`].
    pub load_timers: BTreeMap<u64, String>,
    /// Shell main processes (container id → the shell): see [`crate::node::script`].
    pub shells: BTreeMap<String, crate::node::sh::Shell>,
    /// Their wake-up timers (token → container id).
    pub script_timers: BTreeMap<u64, String>,
    /// Interactive `kubectl exec -it … -- sh` shells, by session.
    pub exec_sessions: BTreeMap<u64, crate::node::sh::Shell>,
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
            .map_or(1, |q| q.value().clamp(1, 256) as u32);
        let mut r = Runtime {
            node: n,
            rng: Rng::stream(u64::from(n) + 1, "containerd"),
            cpus,
            images: BTreeMap::new(),
            sandboxes: BTreeMap::new(),
            containers: BTreeMap::new(),
            logs: BTreeMap::new(),
            initialized: BTreeSet::new(),
            journal: Vec::new(),
            pod_cidr_base: u32::from(base),
            last_ip: 1,
            used_ips: BTreeSet::new(),
            pulls: VecDeque::new(),
            pulling_since: None,
            timers: BTreeMap::new(),
            next_timer: 0,
            next_pid: 1000,
            kubelet: None,
            load_timers: BTreeMap::new(),
            shells: BTreeMap::new(),
            script_timers: BTreeMap::new(),
            exec_sessions: BTreeMap::new(),
        };
        r.store(&images::parse(PAUSE_IMAGE), 320_000);
        // kind's node image ships the images of its kube-proxy and kindnet DaemonSets.
        for image in crate::cluster::kind_daemonsets::IMAGES {
            let img = images::parse(image);
            let size = images::resolve(&img).unwrap_or(0);
            r.store(&img, size);
        }
        for img in &config.images {
            let size = img.size_bytes.unwrap_or(0).max(0) as u64;
            for name in img.names.iter().flatten() {
                r.store(&images::parse(name), size);
            }
        }
        r
    }

    /// After a reboot: no sandbox, container or address survives; images and disks stay.
    pub fn reboot(&mut self) {
        self.sandboxes.clear();
        self.containers.clear();
        self.used_ips.clear();
        self.pulls.clear();
        self.pulling_since = None;
        self.timers.clear();
        self.load_timers.clear();
        self.shells.clear();
        self.script_timers.clear();
        self.exec_sessions.clear();
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

    fn log(&mut self, at: Time, msg: String) {
        self.journal
            .push(LogLine::logrus(at, Level::Info, msg, String::new()));
    }

    /// Stores an image (pre-pulled or pulled) and returns its id.
    pub fn store(&mut self, image: &ImageRef, size: u64) -> String {
        let id = format!(
            "sha256:{:016x}{:016x}{:016x}{:016x}",
            crate::rng::fnv1a(image.full.as_bytes()),
            size,
            crate::rng::fnv1a(image.repo.as_bytes()),
            self.node
        );
        match self.images.values_mut().find(|i| i.id == id) {
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
            // .2 … .254; .1 is the bridge.
            let host = ((i64::from(self.last_ip) - 2 + i64::from(step)).rem_euclid(253) + 2) as u32;
            if !self.used_ips.contains(&host) {
                self.used_ips.insert(host);
                self.last_ip = host;
                return Some(Ipv4Addr::from(self.pod_cidr_base + host).to_string());
            }
        }
        None
    }

    fn release_ip(&mut self, ip: &str) {
        if let Some(host) = self.host_part(ip) {
            self.used_ips.remove(&host);
        }
    }

    /// The host part of a pod-network address of this node (`None` for anything else,
    /// such as the node's own IP a host-network sandbox has).
    pub(super) fn host_part(&self, ip: &str) -> Option<u32> {
        let a = ip.parse::<Ipv4Addr>().ok()?;
        let host = u32::from(a).wrapping_sub(self.pod_cidr_base);
        (host < 256).then_some(host)
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
                    from,
                    req,
                }) => {
                    let reason = if code == 0 { "Completed" } else { "Error" };
                    self.exit(&id, code, reason, ctx.now);
                    self.log(
                        ctx.now,
                        format!("StopContainer for {} returns successfully", q(&id)),
                    );
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
        Some(match op {
            CriOp::RunPodSandbox {
                uid,
                name,
                namespace,
                host_network,
                dns,
                port_mappings,
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
                let meta = format!(
                    "&PodSandboxMetadata{{Name:{name},Uid:{uid},Namespace:{namespace},Attempt:0,}}"
                );
                self.log(now, format!("RunPodSandbox for {meta}"));
                let ip = if host_network {
                    Some(crate::cluster::node_ip(self.node as usize))
                } else {
                    self.allocate_ip()
                };
                let Some(ip) = ip else {
                    let e = format!("failed to setup network for sandbox: plugin type=\"bridge\" failed (add): failed to allocate for range 0: no IP addresses available in range set: {}", crate::cluster::pod_cidr(self.node as usize));
                    self.journal.push(LogLine::logrus(
                        now,
                        Level::Error,
                        format!("RunPodSandbox for {meta} failed"),
                        format!("error={}", q(&e)),
                    ));
                    return Some(Err(format!("rpc error: code = Unknown desc = {e}")));
                };
                let id = self.hex_id();
                self.next_pid += 13;
                self.sandboxes.insert(
                    id.clone(),
                    Arc::new(Sandbox {
                        id: id.clone(),
                        pod_uid: uid,
                        name,
                        namespace,
                        ip: ip.clone(),
                        ready: true,
                        created: now,
                        pid: self.next_pid,
                        dns,
                        port_mappings,
                    }),
                );
                self.log(
                    now,
                    format!("RunPodSandbox for {meta} returns sandbox id {}", q(&id)),
                );
                Ok(CriResult::Sandbox { id, ip })
            }
            CriOp::StopPodSandbox { id } => {
                self.log(now, format!("StopPodSandbox for {}", q(&id)));
                let ids: Vec<String> = self
                    .containers
                    .values()
                    .filter(|c| c.sandbox == id && c.state == ContainerState::Running)
                    .map(|c| c.id.clone())
                    .collect();
                for c in ids {
                    self.exit(&c, 137, "Error", now);
                }
                let ip = self
                    .sandboxes
                    .get_mut(&id)
                    .map(Arc::make_mut)
                    .filter(|s| s.ready)
                    .map(|s| {
                        s.ready = false;
                        s.ip.clone()
                    });
                if let Some(ip) = ip {
                    self.release_ip(&ip);
                    self.log(
                        now,
                        format!("TearDown network for sandbox {} successfully", q(&id)),
                    );
                }
                self.log(
                    now,
                    format!("StopPodSandbox for {} returns successfully", q(&id)),
                );
                Ok(CriResult::Ok)
            }
            CriOp::RemovePodSandbox { id } => {
                self.log(now, format!("RemovePodSandbox for {}", q(&id)));
                self.sandboxes.remove(&id);
                let gone: Vec<String> = self
                    .containers
                    .values()
                    .filter(|c| c.sandbox == id)
                    .map(|c| c.id.clone())
                    .collect();
                for c in gone {
                    self.containers.remove(&c);
                    self.logs.remove(&c);
                }
                self.log(
                    now,
                    format!("RemovePodSandbox {} returns successfully", q(&id)),
                );
                Ok(CriResult::Ok)
            }
            CriOp::ListImages => {
                let list = self
                    .images
                    .values()
                    .map(|i| {
                        let mut names: Vec<String> = i
                            .names
                            .iter()
                            .map(|n| {
                                format!(
                                    "{}@{}",
                                    n.rsplit_once(':').map_or(n.as_str(), |(r, _)| r),
                                    i.id
                                )
                            })
                            .collect();
                        names.dedup();
                        names.extend(i.names.iter().cloned());
                        (names, i.size)
                    })
                    .collect();
                Ok(CriResult::Images(list))
            }
            CriOp::ImageStatus { image } => {
                Ok(CriResult::Image(self.image(&image).map(|i| i.size)))
            }
            CriOp::PullImage { image } => {
                self.log(now, format!("PullImage {}", q(&image)));
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
            CriOp::CreateContainer { sandbox, config } => self.create(now, sandbox, *config),
            CriOp::StartContainer { id } => {
                self.log(now, format!("StartContainer for {}", q(&id)));
                let ip = self
                    .containers
                    .get(&id)
                    .and_then(|c| self.sandboxes.get(&c.sandbox))
                    .map(|s| s.ip.clone())
                    .unwrap_or_default();
                let exits = match self.containers.get_mut(&id).map(Arc::make_mut) {
                    Some(c) if c.state == ContainerState::Created => {
                        c.state = ContainerState::Running;
                        c.started = Some(now);
                        c.behaviour.exits
                    }
                    _ => {
                        return Some(Err(format!(
                            "rpc error: code = NotFound desc = failed to start containerd task \"{id}\": not found"
                        )))
                    }
                };
                self.write_startup(&id, &ip);
                let loops = self
                    .containers
                    .get(&id)
                    .is_some_and(|c| c.behaviour.load.is_some());
                if loops {
                    let token = crate::node::load::LOAD_TIMER_BASE + self.next_timer;
                    self.next_timer += 1;
                    self.load_timers.insert(token, id.clone());
                    ctx.timer(crate::node::load::LOAD_TICK, token);
                }
                if let Some((after, _, _)) = exits {
                    self.add_timer(ctx, after, TimerAction::Exit(id.clone()));
                }
                if self.containers.get(&id).is_some_and(|c| c.behaviour.script) {
                    let start = self.containers.get(&id).map_or(0, |c| c.behaviour.start_ms);
                    self.script_timer(ctx, start, &id);
                }
                self.log(
                    now,
                    format!("StartContainer for {} returns successfully", q(&id)),
                );
                Ok(CriResult::Ok)
            }
            CriOp::StopContainer { id, timeout_ms } => {
                let Some(c) = self
                    .containers
                    .get(&id)
                    .filter(|c| c.state == ContainerState::Running)
                    .cloned()
                else {
                    return Some(Ok(CriResult::Ok));
                };
                self.log(
                    now,
                    format!(
                        "StopContainer for {} with timeout {} (s)",
                        q(&id),
                        timeout_ms / SECOND
                    ),
                );
                let (delay, code) = match c.behaviour.on_sigterm {
                    Some((ms, code)) if ms <= timeout_ms => (ms, code),
                    _ => (timeout_ms, 137),
                };
                let lines = logs::on_stop(&c, now);
                let signal = if crate::node::images::parse(&c.image).repo == "nginx" {
                    "quit"
                } else {
                    "terminated"
                };
                self.log(
                    now,
                    format!("Stop container {} with signal {signal}", q(&id)),
                );
                if code == 137 {
                    self.log(now + delay, format!("Kill container {}", q(&id)));
                }
                self.append_logs(&id, lines);
                // The call returns once the container is gone.
                self.add_timer(
                    ctx,
                    delay,
                    TimerAction::Stopped {
                        id,
                        code,
                        from,
                        req,
                    },
                );
                return None;
            }
            CriOp::RemoveContainer { id } => {
                self.containers.remove(&id);
                self.logs.remove(&id);
                Ok(CriResult::Ok)
            }
            // Answered by `node::containerd` with the machine in hand.
            CriOp::Node(_) => Err("rpc error: code = Unimplemented".to_string()),
            CriOp::PodStatus { uid } => {
                let mut sandboxes: Vec<Arc<Sandbox>> = self
                    .sandboxes
                    .values()
                    .filter(|s| s.pod_uid == uid)
                    .cloned()
                    .collect();
                sandboxes.sort_by(|a, b| b.created.cmp(&a.created).then(b.id.cmp(&a.id)));
                let ids: BTreeSet<&String> = sandboxes.iter().map(|s| &s.id).collect();
                let mut containers: Vec<Arc<Container>> = self
                    .containers
                    .values()
                    .filter(|c| ids.contains(&c.sandbox))
                    .cloned()
                    .collect();
                // The kubelet keeps these until the pod's next inspection: a filtered
                // collect reserves room for four, three of them empty.
                sandboxes.shrink_to_fit();
                containers.shrink_to_fit();
                Ok(CriResult::PodStatus {
                    sandboxes,
                    containers,
                })
            }
        })
    }

    fn create(
        &mut self,
        now: Time,
        sandbox: String,
        cfg: ContainerConfig,
    ) -> Result<CriResult, String> {
        let meta = format!(
            "&ContainerMetadata{{Name:{},Attempt:{},}}",
            cfg.name, cfg.attempt
        );
        self.log(
            now,
            format!(
                "CreateContainer within sandbox {} for container {meta}",
                q(&sandbox)
            ),
        );
        let Some(img) = self.image(&cfg.image).cloned() else {
            return Err(format!(
                "rpc error: code = NotFound desc = failed to get image \"{}\": not found",
                cfg.image
            ));
        };
        if !self.sandboxes.get(&sandbox).is_some_and(|s| s.ready) {
            return Err(format!(
                "rpc error: code = Unknown desc = failed to create containerd container: sandbox {sandbox} is not ready"
            ));
        }
        // Container GC (MaxPerPodContainer = 1): keep only the newest dead instance.
        let mut dead: Vec<(u32, String)> = self
            .containers
            .values()
            .filter(|c| {
                c.sandbox == sandbox && c.name == cfg.name && c.state == ContainerState::Exited
            })
            .map(|c| (c.attempt, c.id.clone()))
            .collect();
        dead.sort();
        dead.pop();
        for (_, id) in dead {
            self.containers.remove(&id);
            self.logs.remove(&id);
        }
        let id = self.hex_id();
        let mut b = behavior::behaviour(
            &images::parse(&cfg.image),
            &cfg.command,
            &cfg.env,
            self.cpus,
            &cfg.overrides,
        );
        if cfg.stdin && behavior::reads_stdin(&images::parse(&cfg.image).repo, &cfg.command) {
            // An interactive shell (`kubectl run -i -t … -- sh`) waits for what is typed.
            b.script = false;
            b.exits = None;
        }
        self.next_pid += 7 + b.processes.len() as u32;
        self.containers.insert(
            id.clone(),
            Arc::new(Container {
                id: id.clone(),
                sandbox: sandbox.clone(),
                name: cfg.name,
                image: cfg.image,
                image_id: img.id,
                attempt: cfg.attempt,
                state: ContainerState::Created,
                created: now,
                started: None,
                finished: None,
                exit_code: 0,
                reason: String::new(),
                behaviour: b,
                pid: self.next_pid,
                env: cfg.env,
                command: cfg.command,
                declared_ports: cfg.ports,
                mounts: cfg.mounts,
                fs: BTreeMap::new(),
            }),
        );
        self.log(
            now,
            format!(
                "CreateContainer within sandbox {} for {meta} returns container id {}",
                q(&sandbox),
                q(&id)
            ),
        );
        Ok(CriResult::Container(id))
    }

    fn write_startup(&mut self, id: &str, ip: &str) {
        let Some(c) = self.containers.get(id) else {
            return;
        };
        let data = c
            .mounts
            .iter()
            .find(|(p, _)| p == "/var/lib/mysql" || p.starts_with("/var/lib/postgresql"))
            .map(|(_, h)| h.clone());
        let initialized = data.as_ref().is_some_and(|d| self.initialized.contains(d));
        let lines = logs::startup(c, ip, initialized);
        if c.behaviour.exits.is_none() {
            if let Some(d) = data {
                self.initialized.insert(d);
            }
        }
        self.append_logs(id, lines);
    }

    /// Appends lines to a container's log (bounded).
    pub fn append_logs(&mut self, id: &str, lines: Vec<LogEntry>) {
        let log = self.logs.entry(id.to_string()).or_default();
        log.extend(lines);
        while log.len() > LOG_LINES {
            log.pop_front();
        }
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
        let Some((_, code, reason)) = c.behaviour.exits else {
            return;
        };
        self.exit(id, code, reason, ctx.now);
        self.notify(ctx, id);
    }

    fn exit(&mut self, id: &str, code: i32, reason: &str, at: Time) {
        let Some(c) = self.containers.get_mut(id).map(Arc::make_mut) else {
            return;
        };
        if c.state == ContainerState::Exited {
            return;
        }
        c.state = ContainerState::Exited;
        c.exit_code = code;
        c.reason = reason.to_string();
        c.finished = Some(at);
        let (pid, epoch) = (
            c.pid,
            crate::time::EPOCH_UNIX_MS / 1000 + (at / 1000) as i64,
        );
        self.log(
            at,
            format!(
                "received exit event container_id:{id:?} id:{id:?} pid:{pid} exit_status:{code} exited_at:{{seconds:{epoch} nanos:{}}}",
                (at % 1000) * 1_000_000
            ),
        );
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

    /// Wakes the shell of container `id` after `delay`.
    pub fn script_timer(&mut self, ctx: &mut Ctx, delay: Time, id: &str) {
        let token = crate::node::script::SCRIPT_TIMER_BASE + self.next_timer;
        self.next_timer += 1;
        self.script_timers.insert(token, id.to_string());
        ctx.timer(delay, token);
    }

    /// A shell main process ended with `code`: the container exits.
    pub fn script_exited(&mut self, ctx: &mut Ctx, id: &str, code: i32) {
        self.shells.remove(id);
        let reason = if code == 0 { "Completed" } else { "Error" };
        self.exit(id, code, reason, ctx.now);
        self.notify(ctx, id);
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

    /// A sandbox by pod UID (the ready one, if any).
    pub fn sandbox_of(&self, uid: &str) -> Option<&Sandbox> {
        self.sandboxes
            .values()
            .filter(|s| s.pod_uid == uid)
            .max_by_key(|s| (s.ready, s.created))
            .map(|s| &**s)
    }

    /// The ready sandbox holding `ip`.
    pub fn sandbox_by_ip(&self, ip: &str) -> Option<&Sandbox> {
        self.sandboxes
            .values()
            .find(|s| s.ready && s.ip == ip)
            .map(|s| &**s)
    }

    /// Running containers of a sandbox.
    pub fn running_in(&self, sandbox: &str) -> impl Iterator<Item = &Container> {
        let sandbox = sandbox.to_string();
        self.containers
            .values()
            .filter(move |c| c.sandbox == sandbox && c.state == ContainerState::Running)
            .map(|c| &**c)
    }

    /// Whether a pull is in progress.
    pub fn pulling(&self) -> bool {
        self.pulling_since.is_some()
    }
}
