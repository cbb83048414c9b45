//! The world: virtual clock, the ordered event queue, the actors, and the network between
//! them (latency, stopped processes, partitions). Components never hold each other: every
//! interaction is a message the world delivers.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};

use crate::api::{ApiRequest, ApiResponse, Status, Transport, WatchEvent};
use crate::apiserver::ApiServer;
use crate::cluster::{ClusterConfig, NodeConfig};
use crate::controllers::ControllerManager;
use crate::etcd::{Etcd, EtcdRequest, EtcdResponse, EtcdWatchBatch};
use crate::kube_scheduler::KubeScheduler;
use crate::node::{CriRequest, CriResponse, KubeProxy, Kubelet, Runtime};
use crate::process::Process;
use crate::rng::fnv1a;
use crate::time::{Time, SECOND};

/// Who sends and receives messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Actor {
    /// The etcd member.
    Etcd,
    /// kube-apiserver.
    ApiServer,
    /// kube-controller-manager.
    ControllerManager,
    /// kube-scheduler.
    Scheduler,
    /// The kubelet of node N (index into the world's nodes).
    Kubelet(u32),
    /// containerd on node N.
    Runtime(u32),
    /// kube-proxy on node N.
    KubeProxy(u32),
    /// A terminal process (kubectl, etcdctl) with its id.
    Terminal(u32),
}

impl Actor {
    /// The node this actor runs on, if it is a node component.
    pub fn node(self) -> Option<u32> {
        match self {
            Actor::Kubelet(n) | Actor::Runtime(n) | Actor::KubeProxy(n) => Some(n),
            _ => None,
        }
    }

    /// The component's name as `systemctl`/`sim` know it.
    pub fn component_name(self) -> &'static str {
        match self {
            Actor::Etcd => "etcd",
            Actor::ApiServer => "kube-apiserver",
            Actor::ControllerManager => "kube-controller-manager",
            Actor::Scheduler => "kube-scheduler",
            Actor::Kubelet(_) => "kubelet",
            Actor::Runtime(_) => "containerd",
            Actor::KubeProxy(_) => "kube-proxy",
            Actor::Terminal(_) => "kubectl",
        }
    }
}

/// A message body.
#[derive(Debug)]
pub enum Payload {
    /// Client → apiserver (boxed: a request with its body is kilobytes, and every
    /// message is moved through the queue several times).
    Api(Box<ApiRequest>),
    /// Apiserver → client.
    ApiResp(ApiResponse),
    /// Apiserver → client watch stream.
    Watch(WatchEvent),
    /// Client → etcd.
    Etcd(EtcdRequest),
    /// Etcd → client.
    EtcdResp(EtcdResponse),
    /// Etcd → client watch stream.
    EtcdWatch(EtcdWatchBatch),
    /// Kubelet → containerd (CRI).
    Cri(CriRequest),
    /// Containerd → kubelet.
    CriResp(CriResponse),
    /// A timer an actor set for itself; the token means what the actor says.
    Timer(u64),
    /// To a client: its connections to the apiserver broke (apiserver down, network cut).
    ConnectionLost,
    /// To a server: every connection of this client closed.
    ClientGone(Actor),
    /// Terminal → apiserver → kubelet: the kubelet API (logs, exec, stats), which the
    /// apiserver proxies to the node's port 10250.
    KubeletApi(crate::node::server::KubeletRequest),
    /// Kubelet → apiserver → terminal.
    KubeletApiResp(crate::node::server::KubeletResponse),
}

impl Payload {
    /// A one-line description for traces and the diagram.
    pub fn label(&self) -> String {
        match self {
            Payload::Api(r) => format!("{} {}", r.verb.http_method(), r.path()),
            Payload::ApiResp(r) => match &r.result {
                Ok(_) => "200 OK".to_string(),
                Err(s) if s.code > 0 => format!("{} {}", s.code, s.reason.as_str()),
                Err(s) => s.message.clone(),
            },
            Payload::Watch(w) => match &w.event {
                Ok((t, o)) => format!("{} {} {}", t.as_str(), o.kind(), o.name()),
                Err(s) => format!("watch error {}", s.code),
            },
            Payload::Etcd(r) => r.op_label(),
            Payload::EtcdResp(_) => "etcd response".to_string(),
            Payload::EtcdWatch(b) => match &b.events {
                Ok(evs) => evs.first().map_or("watch".to_string(), |e| {
                    format!("{} {}", if e.deleted { "DELETE" } else { "PUT" }, e.kv.key)
                }),
                Err((msg, _)) => msg.clone(),
            },
            Payload::Cri(c) => c.label(),
            Payload::CriResp(_) => "CRI response".to_string(),
            Payload::Timer(_) => "timer".to_string(),
            Payload::ConnectionLost => "connection lost".to_string(),
            Payload::ClientGone(_) => "client gone".to_string(),
            Payload::KubeletApi(r) => r.label(),
            Payload::KubeletApiResp(_) => "kubelet response".to_string(),
        }
    }

    fn fingerprint(&self) -> u64 {
        match self {
            Payload::Api(r) => 1 ^ (r.id << 8),
            Payload::ApiResp(r) => 2 ^ (r.id << 8) ^ u64::from(r.result.is_ok()) << 4,
            Payload::Watch(w) => 3 ^ (w.watch_id << 8),
            Payload::Etcd(r) => 4 ^ (r.id << 8),
            Payload::EtcdResp(r) => 5 ^ (r.id << 8),
            Payload::EtcdWatch(b) => 6 ^ (b.watch_id << 8),
            Payload::Cri(c) => 7 ^ (c.id << 8),
            Payload::CriResp(c) => 8 ^ (c.id << 8),
            Payload::Timer(t) => 9 ^ (t << 8),
            Payload::ConnectionLost => 10,
            Payload::ClientGone(_) => 11,
            Payload::KubeletApi(r) => 12 ^ (r.id << 8),
            Payload::KubeletApiResp(r) => 13 ^ (r.id << 8),
        }
    }
}

/// An outgoing message recorded by an actor during one handler call.
#[derive(Debug)]
pub struct Outgoing {
    /// Extra delay on top of the network latency.
    pub delay: Time,
    /// Receiver.
    pub to: Actor,
    /// Body.
    pub payload: Payload,
}

/// What an actor can do while handling a message: read the clock, send, set timers.
pub struct Ctx<'a> {
    /// Current virtual time.
    pub now: Time,
    /// The actor being run.
    pub me: Actor,
    out: &'a mut Vec<Outgoing>,
}

impl<'a> Ctx<'a> {
    /// A context writing into `out` (tests use this to drive one component by hand).
    pub fn new(now: Time, me: Actor, out: &'a mut Vec<Outgoing>) -> Ctx<'a> {
        Ctx { now, me, out }
    }

    /// Sends a message; it arrives after the network latency.
    pub fn send(&mut self, to: Actor, payload: Payload) {
        self.out.push(Outgoing {
            delay: 0,
            to,
            payload,
        });
    }

    /// Sends a message that leaves after `delay` (processing time), then travels.
    pub fn send_after(&mut self, delay: Time, to: Actor, payload: Payload) {
        self.out.push(Outgoing { delay, to, payload });
    }

    /// Sets a timer: `Payload::Timer(token)` to self after `delay`.
    pub fn timer(&mut self, delay: Time, token: u64) {
        let me = self.me;
        self.out.push(Outgoing {
            delay,
            to: me,
            payload: Payload::Timer(token),
        });
    }
}

/// A message in flight.
#[derive(Debug)]
pub struct Envelope {
    /// When it was sent.
    pub sent: Time,
    /// When it arrives.
    pub at: Time,
    /// Sender.
    pub from: Actor,
    /// Receiver.
    pub to: Actor,
    /// Body.
    pub payload: Payload,
    /// Generated at the receiver's own end (a failed connection noticed locally): it
    /// needs no working link.
    pub local: bool,
}

/// How long a request waits before the client gives up on a cut network.
pub const REQUEST_TIMEOUT: Time = 10 * SECOND;
/// How long kube-apiserver's etcd client retries an unreachable etcd before failing.
pub const ETCD_DIAL_TIMEOUT: Time = 5 * SECOND;

/// One simulated machine: a worker node with its kubelet, containerd and kube-proxy.
#[derive(Debug)]
pub struct NodeHost {
    /// Configuration (name, capacity, labels, taints, pre-pulled images).
    pub config: NodeConfig,
    /// InternalIP.
    pub ip: String,
    /// The node's pod CIDR (`10.244.N.0/24`).
    pub pod_cidr: String,
    /// Whether the machine is on.
    pub powered: bool,
    /// Whether the machine is cut off from the control plane.
    pub partitioned: bool,
    /// The kubelet, when running.
    pub kubelet: Option<Kubelet>,
    /// containerd state (containers survive kubelet restarts).
    pub runtime: Runtime,
    /// Whether containerd is running.
    pub runtime_running: bool,
    /// kube-proxy, when running.
    pub proxy: Option<KubeProxy>,
    /// The Service rules in the kernel (written by kube-proxy; gone on reboot).
    pub rules: Option<crate::node::kube_proxy::RulesState>,
    /// The operating system: journald, host processes, mounts.
    pub os: crate::node::journal::NodeOs,
}

impl NodeHost {
    /// The machine at index `i` with its addresses, freshly booted.
    pub fn new(i: usize, config: NodeConfig) -> NodeHost {
        NodeHost {
            ip: crate::cluster::node_ip(i),
            pod_cidr: crate::cluster::pod_cidr(i),
            powered: true,
            partitioned: false,
            kubelet: None,
            runtime: Runtime::new(i as u32, &config),
            runtime_running: true,
            proxy: None,
            rules: None,
            os: crate::node::journal::NodeOs::new(&config.name),
            config,
        }
    }

    /// Takes what the kubelet wrote for the machine: journal lines, mount-table changes,
    /// and lines servers logged while being probed.
    pub fn absorb_kubelet(&mut self) {
        let Some(k) = self.kubelet.as_mut() else {
            return;
        };
        let lines = std::mem::take(&mut k.journal);
        let ops = std::mem::take(&mut k.os_ops);
        let logs = std::mem::take(&mut k.container_logs);
        self.os.append(crate::node::journal::Unit::Kubelet, lines);
        for op in ops {
            self.os.apply(op);
        }
        for (id, line) in logs {
            self.runtime.append_logs(&id, vec![line]);
        }
    }
}

/// The whole simulated cluster.
pub struct World {
    now: Time,
    seq: u64,
    queue: BinaryHeap<Reverse<(Time, u64)>>,
    /// The messages by sequence number, boxed: the map moves entries as it rebalances.
    pending: BTreeMap<u64, Box<Envelope>>,
    /// Cluster-wide settings.
    pub config: ClusterConfig,
    /// etcd (always present: its data is on disk).
    pub etcd: Etcd,
    /// Whether etcd is running.
    pub etcd_running: bool,
    /// kube-apiserver, when running.
    pub apiserver: Option<ApiServer>,
    /// kube-controller-manager, when running.
    pub controller_manager: Option<ControllerManager>,
    /// kube-scheduler, when running.
    pub scheduler: Option<KubeScheduler>,
    /// Worker nodes, index = `Actor::Kubelet(i)`.
    pub nodes: Vec<NodeHost>,
    /// Terminal processes.
    pub processes: BTreeMap<u32, Process>,
    /// The data plane: the seeded stream picking endpoints, conntrack/affinity, paths.
    pub net: crate::node::net::NetState,
    /// The terminal's kubeconfig (`kubectl config set-context|use-context` change it).
    kubeconfig: crate::cmd::kubeconfig::State,
    next_process: u32,
    delivered: u64,
    log_hash: u64,
}

impl World {
    /// Builds a cluster that has just finished booting: etcd holds the bootstrap objects
    /// and the registered nodes; every component starts at time 0.
    pub fn new(config: ClusterConfig) -> World {
        let mut etcd = Etcd::default();
        let mut nodes: Vec<NodeHost> = config
            .nodes
            .iter()
            .enumerate()
            .map(|(i, n)| NodeHost::new(i, n.clone()))
            .collect();
        for p in crate::cluster::bootstrap(&mut etcd.store, &config, &nodes) {
            if let Some(h) = nodes.get_mut(p.node) {
                h.runtime
                    .boot_pod(&p.uid, &p.name, &p.namespace, &p.ip, p.containers, 0);
            }
        }
        let seed = config.seed;
        let mut w = World {
            now: 0,
            seq: 0,
            queue: BinaryHeap::new(),
            pending: BTreeMap::new(),
            config,
            etcd,
            etcd_running: true,
            apiserver: None,
            controller_manager: None,
            scheduler: None,
            nodes,
            processes: BTreeMap::new(),
            net: crate::node::net::NetState::new(seed),
            kubeconfig: Default::default(),
            next_process: 1,
            delivered: 0,
            log_hash: 0xcbf2_9ce4_8422_2325,
        };
        for a in [Actor::ApiServer, Actor::ControllerManager, Actor::Scheduler] {
            w.start(a);
        }
        if !w.config.hollow_nodes {
            for i in 0..w.nodes.len() as u32 {
                w.start(Actor::Kubelet(i));
                w.start(Actor::KubeProxy(i));
            }
        }
        w
    }

    /// Current virtual time (ms).
    pub fn now(&self) -> Time {
        self.now
    }

    /// A hash of every delivery so far: equal hashes ⇒ identical runs.
    pub fn log_hash(&self) -> u64 {
        self.log_hash
    }

    /// Number of messages delivered so far.
    pub fn delivered(&self) -> u64 {
        self.delivered
    }

    /// Messages in flight, in arrival order (for the diagram).
    pub fn in_flight(&self) -> impl Iterator<Item = &Envelope> {
        let mut keys: Vec<&Reverse<(Time, u64)>> = self.queue.iter().collect();
        keys.sort();
        keys.reverse();
        keys.into_iter()
            .filter_map(|Reverse((_, s))| self.pending.get(s).map(|e| &**e))
    }

    /// Messages still in flight whose sequence number is at least `seq`, oldest first,
    /// each with its number: a reader that remembers [`World::next_seq`] sees each new
    /// message once, without walking the whole queue (the page's message dots).
    pub fn in_flight_since(&self, seq: u64) -> impl Iterator<Item = (u64, &Envelope)> {
        self.pending.range(seq..).map(|(s, e)| (*s, &**e))
    }

    /// The sequence number the next message sent will get.
    pub fn next_seq(&self) -> u64 {
        self.seq + 1
    }

    /// The time of the next event, if any.
    pub fn next_event_time(&self) -> Option<Time> {
        self.queue.peek().map(|Reverse((t, _))| *t)
    }

    /// Delivers the next message. Returns false when nothing is queued.
    pub fn step(&mut self) -> bool {
        let Some(Reverse((at, seq))) = self.queue.pop() else {
            return false;
        };
        let Some(env) = self.pending.remove(&seq) else {
            return true;
        };
        self.now = self.now.max(at);
        self.deliver(*env);
        true
    }

    /// Runs every event up to and including `t`, then sets the clock to `t`.
    /// Unbounded: what a user asks for goes through [`World::run_until_within`].
    pub fn run_until(&mut self, t: Time) {
        self.run_until_within(t, u64::MAX);
    }

    /// [`World::run_until`], delivering at most `budget` messages. Returns whether it
    /// reached `t`; when the budget runs out first, the clock stays at the last event
    /// delivered, so the run can go on later from exactly there.
    pub fn run_until_within(&mut self, t: Time, budget: u64) -> bool {
        let mut delivered = 0;
        while let Some(next) = self.next_event_time() {
            if next > t {
                break;
            }
            if delivered == budget {
                return false;
            }
            self.step();
            delivered += 1;
        }
        self.now = self.now.max(t);
        true
    }

    /// Runs for `d` ms of virtual time.
    pub fn run_for(&mut self, d: Time) {
        let t = self.now + d;
        self.run_until(t);
    }

    /// Whether an actor's process is running.
    pub fn is_running(&self, a: Actor) -> bool {
        match a {
            Actor::Etcd => self.etcd_running,
            Actor::ApiServer => self.apiserver.is_some(),
            Actor::ControllerManager => self.controller_manager.is_some(),
            Actor::Scheduler => self.scheduler.is_some(),
            Actor::Kubelet(n) => self
                .node(n)
                .is_some_and(|h| h.powered && h.kubelet.is_some()),
            Actor::Runtime(n) => self.node(n).is_some_and(|h| h.powered && h.runtime_running),
            Actor::KubeProxy(n) => self.node(n).is_some_and(|h| h.powered && h.proxy.is_some()),
            Actor::Terminal(id) => self.processes.get(&id).is_some_and(|p| !p.is_finished()),
        }
    }

    fn node(&self, n: u32) -> Option<&NodeHost> {
        self.nodes.get(n as usize)
    }

    /// Whether two actors can reach each other over the network.
    fn link_up(&self, a: Actor, b: Actor) -> bool {
        let cut = |x: Actor| {
            x.node()
                .and_then(|n| self.node(n))
                .is_some_and(|h| h.partitioned || !h.powered)
        };
        match (a.node(), b.node()) {
            (Some(x), Some(y)) if x == y => true,
            _ => !(cut(a) || cut(b)),
        }
    }

    fn latency(&self, from: Actor, to: Actor) -> Time {
        match (from, to) {
            (a, b) if a == b => 0,
            (Actor::Kubelet(_), Actor::Runtime(_)) | (Actor::Runtime(_), Actor::Kubelet(_)) => 0,
            (Actor::Terminal(_), _) | (_, Actor::Terminal(_)) => 2,
            _ => 1,
        }
    }

    /// A timer an actor set for itself, delivered after `delay` (the load loops').
    pub(crate) fn enqueue_timer(&mut self, delay: Time, me: Actor, payload: Payload) {
        self.enqueue(delay, me, me, payload);
    }

    fn enqueue(&mut self, delay: Time, from: Actor, to: Actor, payload: Payload) {
        let at = self.now + delay + self.latency(from, to);
        self.seq += 1;
        let seq = self.seq;
        self.queue.push(Reverse((at, seq)));
        self.pending.insert(
            seq,
            Box::new(Envelope {
                sent: self.now,
                at,
                from,
                to,
                payload,
                local: false,
            }),
        );
    }

    fn flush(&mut self, from: Actor, out: Vec<Outgoing>) {
        for o in out {
            self.enqueue(o.delay, from, o.to, o.payload);
        }
    }

    fn deliver(&mut self, env: Envelope) {
        self.delivered += 1;
        let fp = [
            env.at,
            env.from_code(),
            env.to_code(),
            env.payload.fingerprint(),
        ];
        for v in fp {
            self.log_hash = (self.log_hash ^ v).wrapping_mul(0x0000_0100_0000_01B3);
        }
        let Envelope {
            from,
            to,
            payload,
            local,
            ..
        } = env;
        if !self.is_running(to) {
            self.bounce(from, to, payload, Transport::Refused);
            return;
        }
        if !local && !self.link_up(from, to) {
            self.bounce(from, to, payload, Transport::TimedOut);
            return;
        }
        let payload = match (to, payload) {
            (Actor::ApiServer, Payload::KubeletApi(req)) => {
                self.proxy_to_kubelet(from, req);
                return;
            }
            (Actor::ApiServer, Payload::KubeletApiResp(resp)) => {
                let client = resp.client;
                self.enqueue(0, Actor::ApiServer, client, Payload::KubeletApiResp(resp));
                return;
            }
            (Actor::Runtime(n), Payload::Timer(t)) if t >= crate::node::load::LOAD_TIMER_BASE => {
                crate::node::load::tick(self, n, t);
                return;
            }
            (Actor::Kubelet(n), Payload::KubeletApi(req)) => {
                let resp = crate::node::server::serve(self, n, req);
                self.enqueue(0, to, Actor::ApiServer, Payload::KubeletApiResp(resp));
                return;
            }
            (_, p) => p,
        };
        let mut out = Vec::new();
        let mut ctx = Ctx {
            now: self.now,
            me: to,
            out: &mut out,
        };
        match to {
            Actor::Etcd => match payload {
                Payload::Etcd(req) => self.etcd.handle(&mut ctx, from, req),
                Payload::ClientGone(c) => self.etcd.client_gone(c),
                _ => {}
            },
            Actor::ApiServer => {
                if let Some(a) = self.apiserver.as_mut() {
                    a.handle(&mut ctx, from, payload);
                }
            }
            Actor::ControllerManager => {
                if let Some(c) = self.controller_manager.as_mut() {
                    c.handle(&mut ctx, from, payload);
                }
            }
            Actor::Scheduler => {
                if let Some(s) = self.scheduler.as_mut() {
                    s.handle(&mut ctx, from, payload);
                }
            }
            Actor::Kubelet(n) => {
                let host = &mut self.nodes[n as usize];
                if let Some(k) = host.kubelet.as_mut() {
                    k.handle(&mut ctx, from, payload);
                }
                host.absorb_kubelet();
            }
            Actor::Runtime(n) => {
                let host = &mut self.nodes[n as usize];
                host.runtime.handle(&mut ctx, from, payload);
                let lines = std::mem::take(&mut host.runtime.journal);
                host.os
                    .append(crate::node::journal::Unit::Containerd, lines);
            }
            Actor::KubeProxy(n) => {
                let host = &mut self.nodes[n as usize];
                if let Some(p) = host.proxy.as_mut() {
                    p.handle(&mut ctx, from, payload);
                    if let Some(r) = p.pending.take() {
                        host.rules = Some(r);
                    }
                    let lines = std::mem::take(&mut p.journal);
                    host.os.append(crate::node::journal::Unit::KubeProxy, lines);
                }
            }
            Actor::Terminal(id) => {
                if let Some(p) = self.processes.get_mut(&id) {
                    p.handle(&mut ctx, from, payload);
                }
            }
        }
        self.flush(to, out);
    }

    /// A message that could not be delivered: requests fail at the sender the way the
    /// network would make them fail; everything else is lost.
    fn bounce(&mut self, from: Actor, to: Actor, payload: Payload, how: Transport) {
        let delay = if how == Transport::TimedOut {
            REQUEST_TIMEOUT
        } else {
            0
        };
        let reply = match payload {
            Payload::Api(r) => {
                let s = Status::transport(how, format!("{} unreachable", to.component_name()));
                Payload::ApiResp(ApiResponse {
                    id: r.id,
                    result: Err(s),
                })
            }
            Payload::Etcd(r) => {
                let msg = match how {
                    Transport::Refused => "connection refused",
                    _ => "context deadline exceeded",
                };
                Payload::EtcdResp(EtcdResponse {
                    id: r.id,
                    result: Err(msg.to_string()),
                })
            }
            Payload::Cri(c) => Payload::CriResp(CriResponse::unavailable(c.id)),
            Payload::KubeletApi(r) => {
                let err = match (to, how) {
                    (Actor::Kubelet(n), how) => {
                        let ip = self
                            .nodes
                            .get(n as usize)
                            .map_or(String::new(), |h| h.ip.clone());
                        match how {
                            Transport::Refused => {
                                format!("dial tcp {ip}:10250: connect: connection refused")
                            }
                            _ => format!("dial tcp {ip}:10250: i/o timeout"),
                        }
                    }
                    _ => crate::node::server::APISERVER_DOWN.to_string(),
                };
                Payload::KubeletApiResp(crate::node::server::KubeletResponse {
                    id: r.id,
                    client: r.client.unwrap_or(from),
                    result: Err(err),
                })
            }
            _ => return,
        };
        if self.is_running(from) {
            // The failure is noticed locally, so it needs no working link back.
            self.seq += 1;
            let seq = self.seq;
            let at = self.now + delay;
            self.queue.push(Reverse((at, seq)));
            let env = Envelope {
                sent: self.now,
                at,
                from: to,
                to: from,
                payload: reply,
                local: true,
            };
            self.pending.insert(seq, Box::new(env));
        }
    }
}

impl Envelope {
    fn from_code(&self) -> u64 {
        actor_code(self.from)
    }
    fn to_code(&self) -> u64 {
        actor_code(self.to)
    }
}

fn actor_code(a: Actor) -> u64 {
    match a {
        Actor::Etcd => 1,
        Actor::ApiServer => 2,
        Actor::ControllerManager => 3,
        Actor::Scheduler => 4,
        Actor::Kubelet(n) => 0x100 + u64::from(n),
        Actor::Runtime(n) => 0x10000 + u64::from(n),
        Actor::KubeProxy(n) => 0x1000000 + u64::from(n),
        Actor::Terminal(n) => fnv1a(&n.to_le_bytes()),
    }
}

/// Lifecycle: starting and stopping processes, cutting and powering machines.
impl World {
    /// Starts a component's process with fresh memory (etcd keeps its data).
    pub fn start(&mut self, a: Actor) {
        if self.is_running(a) {
            return;
        }
        let mut out = Vec::new();
        let mut ctx = Ctx {
            now: self.now,
            me: a,
            out: &mut out,
        };
        match a {
            Actor::Etcd => self.etcd_running = true,
            Actor::ApiServer => {
                let mut s = ApiServer::new(&self.config);
                s.start(&mut ctx);
                self.apiserver = Some(s);
            }
            Actor::ControllerManager => {
                let mut c = ControllerManager::new(&self.config);
                c.start(&mut ctx);
                self.controller_manager = Some(c);
            }
            Actor::Scheduler => {
                let mut s = KubeScheduler::new(&self.config);
                s.start(&mut ctx);
                self.scheduler = Some(s);
            }
            Actor::Kubelet(n) => {
                let host = &mut self.nodes[n as usize];
                if !host.powered {
                    return;
                }
                host.os.started(crate::node::journal::Unit::Kubelet);
                let mut k = Kubelet::new(n, &host.config, &host.ip, &host.pod_cidr, &self.config);
                k.start(&mut ctx);
                host.kubelet = Some(k);
                host.absorb_kubelet();
            }
            Actor::Runtime(n) => {
                let host = &mut self.nodes[n as usize];
                if !host.powered {
                    return;
                }
                host.os.started(crate::node::journal::Unit::Containerd);
                host.runtime_running = true;
            }
            Actor::KubeProxy(n) => {
                let host = &mut self.nodes[n as usize];
                if !host.powered {
                    return;
                }
                host.os.started(crate::node::journal::Unit::KubeProxy);
                let mut p =
                    KubeProxy::new(n, &host.config.name, &host.ip, &host.pod_cidr, &self.config);
                p.start(&mut ctx);
                host.os.append(
                    crate::node::journal::Unit::KubeProxy,
                    std::mem::take(&mut p.journal),
                );
                host.proxy = Some(p);
            }
            Actor::Terminal(_) => {}
        }
        self.flush(a, out);
    }

    /// Stops a component's process: it stops receiving, its peers see connections close.
    pub fn stop(&mut self, a: Actor) {
        if !self.is_running(a) {
            return;
        }
        match a {
            Actor::Etcd => {
                self.etcd_running = false;
                self.etcd.drop_connections();
                self.notify_clients_of(Actor::Etcd);
            }
            Actor::ApiServer => {
                self.apiserver = None;
                self.notify_clients_of(Actor::ApiServer);
                self.enqueue(
                    0,
                    Actor::ApiServer,
                    Actor::Etcd,
                    Payload::ClientGone(Actor::ApiServer),
                );
            }
            Actor::ControllerManager => {
                self.controller_manager = None;
                self.client_gone(a);
            }
            Actor::Scheduler => {
                self.scheduler = None;
                self.client_gone(a);
            }
            Actor::Kubelet(n) => {
                self.nodes[n as usize].kubelet = None;
                self.client_gone(a);
            }
            Actor::Runtime(n) => self.nodes[n as usize].runtime_running = false,
            Actor::KubeProxy(n) => {
                self.nodes[n as usize].proxy = None;
                self.client_gone(a);
            }
            Actor::Terminal(_) => {}
        }
    }

    /// Tells the apiserver that a client's connections closed.
    fn client_gone(&mut self, a: Actor) {
        if self.apiserver.is_some() {
            self.enqueue(0, a, Actor::ApiServer, Payload::ClientGone(a));
        }
    }

    /// Tells every running client of `server` that their connections broke.
    fn notify_clients_of(&mut self, server: Actor) {
        let mut clients = Vec::new();
        if server == Actor::Etcd {
            clients.push(Actor::ApiServer);
        } else {
            clients.extend([Actor::ControllerManager, Actor::Scheduler]);
            for i in 0..self.nodes.len() as u32 {
                clients.extend([Actor::Kubelet(i), Actor::KubeProxy(i)]);
            }
            clients.extend(self.processes.keys().map(|id| Actor::Terminal(*id)));
        }
        for c in clients {
            if self.is_running(c) {
                self.local(server, c, Payload::ConnectionLost);
            }
        }
    }

    /// Sends an API request on behalf of an outside client (benchmarks); the response is
    /// dropped.
    pub fn inject_api(&mut self, mut req: ApiRequest) {
        self.seq += 1;
        req.id = self.seq;
        if req.user.is_none() {
            req.user = Some(crate::cmd::kubectl::ADMIN_USER.to_string());
            req.groups = crate::cmd::kubectl::ADMIN_GROUPS
                .iter()
                .map(|g| g.to_string())
                .collect();
        }
        self.enqueue(
            0,
            Actor::Terminal(0),
            Actor::ApiServer,
            Payload::Api(Box::new(req)),
        );
    }

    /// Queues a locally-noticed message (needs no working link).
    fn local(&mut self, from: Actor, to: Actor, payload: Payload) {
        self.seq += 1;
        let seq = self.seq;
        self.queue.push(Reverse((self.now, seq)));
        self.pending.insert(
            seq,
            Box::new(Envelope {
                sent: self.now,
                at: self.now,
                from,
                to,
                payload,
                local: true,
            }),
        );
    }

    /// Cuts a node off from the control plane (both directions).
    pub fn partition(&mut self, n: u32) {
        let Some(host) = self.nodes.get_mut(n as usize) else {
            return;
        };
        if host.partitioned {
            return;
        }
        host.partitioned = true;
        for a in [Actor::Kubelet(n), Actor::KubeProxy(n)] {
            if self.is_running(a) {
                self.local(Actor::ApiServer, a, Payload::ConnectionLost);
                self.local(a, Actor::ApiServer, Payload::ClientGone(a));
            }
        }
    }

    /// Restores a partitioned node's network.
    pub fn heal(&mut self, n: u32) {
        if let Some(host) = self.nodes.get_mut(n as usize) {
            host.partitioned = false;
        }
    }

    /// Powers a node off: every process on it dies, containers are gone, disks survive.
    pub fn poweroff(&mut self, n: u32) {
        if !self.nodes.get(n as usize).is_some_and(|h| h.powered) {
            return;
        }
        for a in [Actor::Kubelet(n), Actor::KubeProxy(n)] {
            self.stop(a);
        }
        let host = &mut self.nodes[n as usize];
        host.powered = false;
        host.runtime.reboot();
        host.runtime_running = false;
        host.rules = None;
    }

    /// Powers a node on: containerd, kubelet and kube-proxy start.
    pub fn poweron(&mut self, n: u32) {
        let Some(host) = self.nodes.get_mut(n as usize) else {
            return;
        };
        if host.powered {
            return;
        }
        host.powered = true;
        host.runtime_running = true;
        host.os.reboot(self.now);
        self.start(Actor::Kubelet(n));
        self.start(Actor::KubeProxy(n));
    }

    /// The index of a node by name.
    pub fn node_index(&self, name: &str) -> Option<u32> {
        self.nodes
            .iter()
            .position(|h| h.config.name == name)
            .map(|i| i as u32)
    }

    /// Adds a machine to the cluster; its kubelet registers the Node.
    pub fn add_node(&mut self, config: NodeConfig) -> u32 {
        let i = self.nodes.len();
        self.nodes.push(NodeHost::new(i, config.clone()));
        self.config.nodes.push(config);
        self.start(Actor::Kubelet(i as u32));
        self.start(Actor::KubeProxy(i as u32));
        i as u32
    }

    /// The apiserver's proxy to a kubelet (`/api/v1/nodes/NODE/proxy`, `pods/log`,
    /// `pods/exec`): forwards the request to the node's kubelet on port 10250.
    fn proxy_to_kubelet(&mut self, from: Actor, mut req: crate::node::server::KubeletRequest) {
        req.client = Some(from);
        match self.node_index(&req.node) {
            Some(n) => self.enqueue(
                0,
                Actor::ApiServer,
                Actor::Kubelet(n),
                Payload::KubeletApi(req),
            ),
            None => {
                let resp = crate::node::server::KubeletResponse {
                    id: req.id,
                    client: from,
                    result: Err(format!("nodes \"{}\" not found", req.node)),
                };
                self.enqueue(0, Actor::ApiServer, from, Payload::KubeletApiResp(resp));
            }
        }
    }

    /// The terminal's kubeconfig.
    pub fn kubeconfig(&self) -> &crate::cmd::kubeconfig::State {
        &self.kubeconfig
    }

    /// The terminal's kubeconfig, to change.
    pub fn kubeconfig_mut(&mut self) -> &mut crate::cmd::kubeconfig::State {
        &mut self.kubeconfig
    }

    /// Starts a terminal process and returns its id.
    pub fn spawn(&mut self, mut p: Process) -> u32 {
        let id = self.next_process;
        self.next_process += 1;
        let me = Actor::Terminal(id);
        let mut out = Vec::new();
        let mut ctx = Ctx {
            now: self.now,
            me,
            out: &mut out,
        };
        p.poll(&mut ctx);
        self.processes.insert(id, p);
        self.flush(me, out);
        id
    }
}

/// Simulator-only interventions on running processes.
impl World {
    /// Crashes a container of a pod (`sim crash`): its process exits with `code`.
    /// Returns the container's name.
    pub fn crash_container(
        &mut self,
        ns: &str,
        pod: &str,
        container: Option<&str>,
        code: i32,
    ) -> Result<String, String> {
        for (i, host) in self.nodes.iter_mut().enumerate() {
            let Some(sb) = host
                .runtime
                .sandboxes
                .values()
                .find(|s| s.namespace == ns && s.name == pod && s.ready)
                .cloned()
            else {
                continue;
            };
            let running: Vec<(String, String)> = host
                .runtime
                .containers
                .values()
                .filter(|c| {
                    c.sandbox == sb.id && c.state == crate::node::runtime::ContainerState::Running
                })
                .map(|c| (c.id.clone(), c.name.clone()))
                .collect();
            let target = match container {
                Some(name) => running.iter().find(|(_, n)| n == name).cloned(),
                None => running.first().cloned(),
            };
            let Some((id, name)) = target else {
                return Err(match container {
                    Some(c) => format!("container \"{c}\" is not running in pod {ns}/{pod}"),
                    None => format!("pod {ns}/{pod} has no running container"),
                });
            };
            let me = Actor::Runtime(i as u32);
            let mut out = Vec::new();
            let mut ctx = Ctx {
                now: self.now,
                me,
                out: &mut out,
            };
            host.runtime.crash(&mut ctx, &id, code);
            self.flush(me, out);
            return Ok(name);
        }
        Err(format!("pod {ns}/{pod} is not running on any node"))
    }
}

/// What a node's kernel knows of Services, as the proxy renderers take it.
impl World {
    /// Every node's address and podCIDR.
    pub fn node_addresses(&self) -> Vec<crate::proxy::NodeAddress> {
        self.nodes
            .iter()
            .map(|h| crate::proxy::NodeAddress {
                name: h.config.name.clone(),
                ip: h.ip.parse().unwrap_or(std::net::Ipv4Addr::UNSPECIFIED),
                pod_cidr: crate::proxy::Cidr::parse(&h.pod_cidr),
            })
            .collect()
    }
}
