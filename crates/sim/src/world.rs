//! The world: virtual clock, the ordered event queue, the actors, and the network between
//! them (latency, stopped processes, partitions). Components never hold each other: every
//! interaction is a message the world delivers.

use std::collections::BTreeMap;

use crate::api::{ApiRequest, ApiResponse, Status, Transport};
use crate::apiserver::ApiServer;
use crate::cluster::{ClusterConfig, NodeConfig};
use crate::controllers::ControllerManager;
use crate::engine::EventQueue;
use crate::etcd::{Etcd, EtcdResponse};
use crate::kube_scheduler::KubeScheduler;
use crate::node::host::{reachable, NodeHost};
use crate::node::machine::Machine;
use crate::node::net::Network;
use crate::node::{CriResponse, KubeProxy, Kubelet};
use crate::process::Process;
use crate::time::{Time, SECOND};

pub use crate::message::{Actor, Ctx, Envelope, Outgoing, Payload};

/// How long a request waits before the client gives up on a cut network.
pub const REQUEST_TIMEOUT: Time = 10 * SECOND;
/// How long kube-apiserver's etcd client retries an unreachable etcd before failing.
pub const ETCD_DIAL_TIMEOUT: Time = 5 * SECOND;

/// The whole simulated cluster.
pub struct World {
    now: Time,
    queue: EventQueue<Payload>,
    /// Cluster-wide settings.
    config: ClusterConfig,
    /// etcd (always present: its data is on disk).
    etcd: Etcd,
    /// Whether etcd is running.
    etcd_running: bool,
    /// kube-apiserver, when running.
    apiserver: Option<ApiServer>,
    /// kube-controller-manager, when running.
    controller_manager: Option<ControllerManager>,
    /// kube-scheduler, when running.
    scheduler: Option<KubeScheduler>,
    /// cloud-provider-kind on the host, when running (docs/design.md §6.19).
    cloud_provider: Option<ControllerManager>,
    /// Worker nodes, index = `Actor::Kubelet(i)`.
    nodes: Vec<NodeHost>,
    /// Terminal processes.
    processes: BTreeMap<u32, Process>,
    /// The data plane: the seeded stream picking endpoints, conntrack/affinity, paths.
    net: crate::node::net::NetState,
    /// The terminal's kubeconfig (`kubectl config set-context|use-context` change it).
    kubeconfig: crate::kubeconfig_state::State,
    /// The terminal's interactive shell in a container, while one is open.
    shell: Option<crate::kubeconfig_state::ShellSession>,
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
            queue: EventQueue::default(),
            config,
            etcd,
            etcd_running: true,
            apiserver: None,
            controller_manager: None,
            scheduler: None,
            cloud_provider: None,
            nodes,
            processes: BTreeMap::new(),
            net: crate::node::net::NetState::new(seed),
            kubeconfig: Default::default(),
            shell: None,
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

    /// The parts an [`crate::world_observe::Observer`] reads.
    pub(crate) fn parts(&self) -> crate::world_observe::Parts<'_> {
        crate::world_observe::Parts {
            config: &self.config,
            etcd: &self.etcd,
            etcd_running: self.etcd_running,
            apiserver: self.apiserver.as_ref(),
            controller_manager: self.controller_manager.as_ref(),
            scheduler: self.scheduler.as_ref(),
            nodes: &self.nodes,
            processes: &self.processes,
            net: &self.net,
        }
    }

    /// Writes an object straight into etcd's store, as a cluster's bootstrap does before
    /// any component runs (benchmarks seed large stores this way).
    pub fn bootstrap_put(&mut self, key: &str, value: crate::object::Object) {
        self.etcd.store.bootstrap_put(key, value);
    }

    /// etcd's store, written by a client other than kube-apiserver (another etcd
    /// client writing and compacting behind the apiserver's back).
    pub fn etcd_store_mut(&mut self) -> &mut crate::etcd::Store {
        &mut self.etcd.store
    }

    /// A terminal process, for the terminal that started it: to read what it printed
    /// since last asked, or to interrupt it.
    pub fn terminal(&mut self, id: u32) -> Option<&mut Process> {
        self.processes.get_mut(&id)
    }

    /// A finished terminal process, taken out of the world (its output read).
    pub fn take_process(&mut self, id: u32) -> Option<Process> {
        self.processes.remove(&id)
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
        self.queue.in_flight()
    }

    /// Messages still in flight whose sequence number is at least `seq`, oldest first,
    /// each with its number: a reader that remembers [`World::next_seq`] sees each new
    /// message once, without walking the whole queue (the page's message dots).
    pub fn in_flight_since(&self, seq: u64) -> impl Iterator<Item = (u64, &Envelope)> {
        self.queue.in_flight_since(seq)
    }

    /// The sequence number the next message sent will get.
    pub fn next_seq(&self) -> u64 {
        self.queue.next_seq()
    }

    /// The time of the next event, if any.
    pub fn next_event_time(&self) -> Option<Time> {
        self.queue.next_time()
    }

    /// Delivers the next message. Returns false when nothing is queued.
    pub fn step(&mut self) -> bool {
        let Some(env) = self.queue.pop() else {
            return false;
        };
        self.now = self.now.max(env.at);
        self.deliver(env);
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
            Actor::CloudProvider => self.cloud_provider.is_some(),
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
                .is_some_and(NodeHost::cut)
        };
        match (a.node(), b.node()) {
            (Some(x), Some(y)) => x == y || reachable(&self.nodes, x, y),
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

    fn enqueue(&mut self, delay: Time, from: Actor, to: Actor, payload: Payload) {
        let at = self.now + delay + self.latency(from, to);
        self.queue.push(Envelope {
            sent: self.now,
            at,
            from,
            to,
            payload,
            local: false,
        });
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
            env.from.code(),
            env.to.code(),
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
        let mut out = Vec::new();
        let mut ctx = Ctx::new(self.now, to, &mut out);
        match to {
            Actor::Etcd => match payload {
                Payload::Etcd(req) => self.etcd.handle(&mut ctx, from, req),
                Payload::ClientGone(c) => self.etcd.client_gone(c),
                Payload::Timer(t) => self.etcd.on_timer(&mut ctx, t),
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
                let net = Network::new(self.now, &mut self.nodes, &mut self.net)
                    .with_policies(&self.etcd.store);
                let mut m = Machine::new(n, net);
                crate::node::containerd::handle(&mut m, &mut ctx, from, payload);
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
                    if let Some(s) = p.take_session() {
                        self.shell = Some(s);
                    }
                }
            }
            Actor::CloudProvider => {
                if let Some(c) = self.cloud_provider.as_mut() {
                    // docker is local to the host: lent for the message, handed back.
                    let mut docker = std::mem::take(&mut self.net.docker);
                    docker.node_ips = self
                        .nodes
                        .iter()
                        .filter_map(|h| h.ip.parse().ok())
                        .collect();
                    c.docker = Some(docker);
                    c.handle(&mut ctx, from, payload);
                    self.net.docker = c.docker.take().unwrap_or_default();
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
                    _ => crate::node::kubelet_api::APISERVER_DOWN.to_string(),
                };
                Payload::KubeletApiResp(crate::node::kubelet_api::KubeletResponse {
                    id: r.id,
                    client: r.client.unwrap_or(from),
                    result: Err(err),
                })
            }
            _ => return,
        };
        if self.is_running(from) {
            // The failure is noticed locally, so it needs no working link back.
            self.queue.push(Envelope {
                sent: self.now,
                at: self.now + delay,
                from: to,
                to: from,
                payload: reply,
                local: true,
            });
        }
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
        let mut ctx = Ctx::new(self.now, a, &mut out);
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
            Actor::CloudProvider => {
                let mut c = crate::cloud::process(self.config.seed);
                c.start(&mut ctx);
                self.cloud_provider = Some(c);
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
            Actor::CloudProvider => {
                // On SIGINT/SIGTERM it deletes the containers it started (`cleanup`).
                self.cloud_provider = None;
                self.net.docker.remove_all();
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
            clients.extend([
                Actor::ControllerManager,
                Actor::Scheduler,
                Actor::CloudProvider,
            ]);
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
        req.id = self.queue.take_seq();
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
        self.queue.push(Envelope {
            sent: self.now,
            at: self.now,
            from,
            to,
            payload,
            local: true,
        });
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

    /// The terminal's kubeconfig.
    pub fn kubeconfig(&self) -> &crate::kubeconfig_state::State {
        &self.kubeconfig
    }

    /// The interactive shell the terminal has open in a container, if any.
    pub fn shell_session(&self) -> Option<&crate::kubeconfig_state::ShellSession> {
        self.shell.as_ref()
    }

    /// Opens (Some) or closes (None) the terminal's interactive shell.
    pub fn set_shell_session(&mut self, s: Option<crate::kubeconfig_state::ShellSession>) {
        self.shell = s;
    }

    /// The terminal's kubeconfig, to change.
    pub fn kubeconfig_mut(&mut self) -> &mut crate::kubeconfig_state::State {
        &mut self.kubeconfig
    }

    /// Starts a terminal process and returns its id.
    pub fn spawn(&mut self, mut p: Process) -> u32 {
        let id = self.next_process;
        self.next_process += 1;
        let me = Actor::Terminal(id);
        let mut out = Vec::new();
        let mut ctx = Ctx::new(self.now, me, &mut out);
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
            let mut ctx = Ctx::new(self.now, me, &mut out);
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
        crate::node::net::node_addresses(&self.nodes)
    }

    /// Runs `f` as a program on machine `n` (what `ssh` and the terminal's node tools
    /// do), with nothing but that machine and the network in reach.
    pub fn on_machine<R>(&mut self, n: u32, f: impl FnOnce(&mut Machine) -> R) -> Option<R> {
        if n as usize >= self.nodes.len() {
            return None;
        }
        let net =
            Network::new(self.now, &mut self.nodes, &mut self.net).with_policies(&self.etcd.store);
        Some(f(&mut Machine::new(n, net)))
    }
}
