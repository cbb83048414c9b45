//! kube-proxy: watches Services and EndpointSlices and resyncs the node's rules, no more
//! often than minSyncPeriod.

use std::sync::Arc;

use k8s_openapi::api::core::v1::Service;
use k8s_openapi::api::discovery::v1::EndpointSlice;

use crate::client::{Client, Informers, Timers};
use crate::cluster::{ClusterConfig, ProxyMode};
use crate::message::{Actor, Ctx, Payload};
use crate::node::journal::{Level, LogLine};
use crate::object::{Kind, Object};
use crate::time::{Time, SECOND};

/// `minSyncPeriod`.
pub const MIN_SYNC_PERIOD: Time = SECOND;
/// `syncPeriod` (iptables).
pub const SYNC_PERIOD: Time = 30 * SECOND;

/// What a kube-proxy timer means.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Timer {
    /// minSyncPeriod has passed since the last sync: sync now.
    Sync,
    /// syncPeriod: the periodic full resync.
    Resync,
    /// An informer's list/watch backoff ended.
    Informer(Kind),
}

/// The kinds kube-proxy's rules come from.
const WATCHES: [Kind; 2] = [Kind::Service, Kind::EndpointSlice];

/// The rules kube-proxy last wrote into the node's kernel (they outlive kube-proxy).
#[derive(Clone, Debug, Default)]
pub struct RulesState {
    /// Services as of the sync.
    pub services: Vec<Arc<Service>>,
    /// EndpointSlices as of the sync.
    pub slices: Vec<Arc<EndpointSlice>>,
    /// When it was written.
    pub synced_at: Time,
    /// The mode that wrote them.
    pub mode: ProxyMode,
}

/// kube-proxy on one node.
pub struct KubeProxy {
    /// Node name.
    pub node_name: String,
    /// Node IP.
    pub node_ip: String,
    /// Node podCIDR.
    pub pod_cidr: String,
    /// Mode.
    pub mode: ProxyMode,
    client: Client,
    informers: Informers,
    timers: Timers<Timer>,
    last_sync: Option<Time>,
    sync_scheduled: bool,
    dirty: bool,
    /// How many times the rules were rewritten.
    pub syncs: u64,
    /// Rules written by the last sync, for the node's kernel to take.
    pub pending: Option<RulesState>,
    /// Lines for kube-proxy's journal, taken by the world.
    pub journal: Vec<LogLine>,
}

impl KubeProxy {
    /// kube-proxy for node `n`.
    pub fn new(_n: u32, name: &str, ip: &str, pod_cidr: &str, config: &ClusterConfig) -> KubeProxy {
        KubeProxy {
            node_name: name.to_string(),
            node_ip: ip.to_string(),
            pod_cidr: pod_cidr.to_string(),
            mode: config.proxy_mode,
            client: Client::new("system:kube-proxy", &[]),
            informers: Informers::default(),
            timers: Timers::new(0),
            last_sync: None,
            sync_scheduled: false,
            dirty: false,
            syncs: 0,
            pending: None,
            journal: Vec::new(),
        }
    }

    /// Starts the informers.
    pub fn start(&mut self, ctx: &mut Ctx) {
        let mode = self.mode.as_str();
        self.journal.push(LogLine::klog(
            ctx.now,
            Level::Info,
            "server_linux.go:66",
            format!("\"Using {mode} proxy\""),
        ));
        self.journal.push(LogLine::klog(
            ctx.now,
            Level::Info,
            "server.go:483",
            format!(
                "\"Version info\" version=\"{}\"",
                crate::cluster::KUBERNETES_VERSION
            ),
        ));
        if self.mode == ProxyMode::Ipvs {
            self.warn_ipvs_deprecated(ctx);
        }
        if self.mode == ProxyMode::Nftables {
            self.journal.push(LogLine::klog(
                ctx.now,
                Level::Info,
                "server_linux.go:176",
                "\"Using nftables Proxier\"".to_string(),
            ));
        }
        self.timers = Timers::new(ctx.now);
        self.informers = Informers::default();
        for k in WATCHES {
            let timers = &mut self.timers;
            self.informers
                .register(k, || timers.standing(Timer::Informer(k)));
        }
        self.informers.start(ctx, &mut self.client);
        self.timers.set(ctx, SYNC_PERIOD, Timer::Resync);
    }

    /// v1.35 deprecates IPVS mode (KEP-5495): kube-proxy says so in its log and with a
    /// Warning event on its Node.
    fn warn_ipvs_deprecated(&mut self, ctx: &mut Ctx) {
        let message = "The ipvs proxier is now deprecated and may be removed in a future release. Please use 'nftables' instead.";
        self.journal.push(LogLine::klog(
            ctx.now,
            Level::Info,
            "server_linux.go:194",
            "\"Using ipvs Proxier\"".to_string(),
        ));
        self.journal.push(LogLine::klog(
            ctx.now,
            Level::Error,
            "server_linux.go:196",
            format!("\"{message}\""),
        ));
        let node_ref = k8s_openapi::api::core::v1::ObjectReference {
            kind: Some("Node".into()),
            name: Some(self.node_name.clone()),
            uid: Some(self.node_name.clone()),
            ..Default::default()
        };
        let mut recorder =
            crate::client::recorder::Recorder::new("kube-proxy", Some(&self.node_name));
        recorder.event_ref(
            ctx,
            &mut self.client,
            node_ref,
            "Warning",
            "IPVSDeprecation",
            message,
        );
    }

    /// Handles a message.
    pub fn handle(&mut self, ctx: &mut Ctx, _from: Actor, payload: Payload) {
        let changed = match payload {
            Payload::ApiResp(r) if self.client.on_event_response(ctx, &r) => false,
            Payload::ApiResp(r) => self
                .informers
                .on_response(ctx, &mut self.client, &r)
                .is_some_and(|(_, c)| !c.is_empty()),
            Payload::Watch(ev) => self
                .informers
                .on_watch(ctx, &mut self.client, &ev)
                .is_some_and(|(_, c)| !c.is_empty()),
            Payload::ConnectionLost => {
                self.informers.on_connection_lost(ctx);
                false
            }
            Payload::Timer(token) => match self.timers.fired(token) {
                Some(Timer::Sync) => {
                    self.sync_scheduled = false;
                    self.sync(ctx);
                    false
                }
                Some(Timer::Resync) => {
                    self.timers.set(ctx, SYNC_PERIOD, Timer::Resync);
                    true
                }
                Some(Timer::Informer(kind)) => {
                    self.informers.on_timer(ctx, &mut self.client, kind, token);
                    false
                }
                None => false,
            },
            _ => false,
        };
        if changed {
            self.dirty = true;
            self.request_sync(ctx);
        }
    }

    fn request_sync(&mut self, ctx: &mut Ctx) {
        if self.sync_scheduled || !self.informers.synced() {
            return;
        }
        let earliest = self.last_sync.map_or(ctx.now, |t| t + MIN_SYNC_PERIOD);
        self.sync_scheduled = true;
        self.timers
            .set(ctx, earliest.saturating_sub(ctx.now), Timer::Sync);
    }

    fn sync(&mut self, ctx: &mut Ctx) {
        if !self.dirty {
            return;
        }
        self.dirty = false;
        self.last_sync = Some(ctx.now);
        self.syncs += 1;
        let services = self
            .informers
            .of(Kind::Service)
            .iter()
            .filter_map(|o| match &**o {
                Object::Service(s) => Some(Arc::new((**s).clone())),
                _ => None,
            });
        let slices = self
            .informers
            .of(Kind::EndpointSlice)
            .iter()
            .filter_map(|o| match &**o {
                Object::EndpointSlice(s) => Some(Arc::new((**s).clone())),
                _ => None,
            });
        let endpoints: usize = self
            .informers
            .of(Kind::EndpointSlice)
            .iter()
            .filter_map(|o| match &**o {
                Object::EndpointSlice(s) => Some(s.endpoints.len()),
                _ => None,
            })
            .sum();
        let (tool, src) = match self.mode {
            ProxyMode::Iptables => ("iptables", "proxier.go:1528"),
            ProxyMode::Ipvs => ("ipvs", "proxier.go:1012"),
            ProxyMode::Nftables => ("nftables", "proxier.go:1190"),
        };
        self.journal.push(LogLine::klog(
            ctx.now,
            Level::Info,
            src,
            format!(
                "\"Syncing {tool} rules\" numServices={} numEndpoints={endpoints}",
                self.informers.of(Kind::Service).len()
            ),
        ));
        self.journal.push(LogLine::klog(
            ctx.now,
            Level::Info,
            "proxier.go:805",
            "\"SyncProxyRules complete\" elapsed=\"3.2ms\"".to_string(),
        ));
        self.pending = Some(RulesState {
            services: services.collect(),
            slices: slices.collect(),
            synced_at: ctx.now,
            mode: self.mode,
        });
    }

    /// When the rules were last written.
    pub fn last_sync(&self) -> Option<Time> {
        self.last_sync
    }
}

impl std::fmt::Debug for KubeProxy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KubeProxy").finish_non_exhaustive()
    }
}
