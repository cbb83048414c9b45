//! kube-proxy: watches Services and EndpointSlices and resyncs the node's rules, no more
//! often than minSyncPeriod.

use std::sync::Arc;

use k8s_openapi::api::core::v1::Service;
use k8s_openapi::api::discovery::v1::EndpointSlice;

use crate::client::{Client, Informer};
use crate::cluster::{ClusterConfig, ProxyMode};
use crate::node::journal::{Level, LogLine};
use crate::object::{Kind, Object};
use crate::time::{Time, SECOND};
use crate::world::{Actor, Ctx, Payload};

/// `minSyncPeriod`.
pub const MIN_SYNC_PERIOD: Time = SECOND;
/// `syncPeriod` (iptables).
pub const SYNC_PERIOD: Time = 30 * SECOND;

const TIMER_SYNC: u64 = 1;
const TIMER_SVC: u64 = 2;
const TIMER_SLICES: u64 = 3;

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
    services: Informer,
    slices: Informer,
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
            services: Informer::new(Kind::Service, TIMER_SVC),
            slices: Informer::new(Kind::EndpointSlice, TIMER_SLICES),
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
        let mode = match self.mode {
            ProxyMode::Iptables => "iptables",
            ProxyMode::Ipvs => "ipvs",
        };
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
        self.services.start(ctx, &mut self.client);
        self.slices.start(ctx, &mut self.client);
        ctx.timer(SYNC_PERIOD, TIMER_SYNC + 10);
    }

    /// Handles a message.
    pub fn handle(&mut self, ctx: &mut Ctx, _from: Actor, payload: Payload) {
        let changed = match payload {
            Payload::ApiResp(r) => {
                let a = self.services.on_response(ctx, &mut self.client, &r);
                let b = if a.is_none() {
                    self.slices.on_response(ctx, &mut self.client, &r)
                } else {
                    None
                };
                a.or(b).is_some_and(|c| !c.is_empty())
            }
            Payload::Watch(ev) => {
                let a = self.services.on_watch(ctx, &mut self.client, &ev);
                let b = if a.is_none() {
                    self.slices.on_watch(ctx, &mut self.client, &ev)
                } else {
                    None
                };
                a.or(b).is_some_and(|c| !c.is_empty())
            }
            Payload::ConnectionLost => {
                self.services.on_connection_lost(ctx);
                self.slices.on_connection_lost(ctx);
                false
            }
            Payload::Timer(TIMER_SYNC) => {
                self.sync_scheduled = false;
                self.sync(ctx);
                false
            }
            Payload::Timer(t) if t == TIMER_SYNC + 10 => {
                ctx.timer(SYNC_PERIOD, TIMER_SYNC + 10);
                true
            }
            Payload::Timer(t) => {
                if !self.services.on_timer(ctx, &mut self.client, t) {
                    self.slices.on_timer(ctx, &mut self.client, t);
                }
                false
            }
            _ => false,
        };
        if changed {
            self.dirty = true;
            self.request_sync(ctx);
        }
    }

    fn request_sync(&mut self, ctx: &mut Ctx) {
        if self.sync_scheduled || !(self.services.has_synced() && self.slices.has_synced()) {
            return;
        }
        let earliest = self.last_sync.map_or(ctx.now, |t| t + MIN_SYNC_PERIOD);
        self.sync_scheduled = true;
        ctx.timer(earliest.saturating_sub(ctx.now), TIMER_SYNC);
    }

    fn sync(&mut self, ctx: &mut Ctx) {
        if !self.dirty {
            return;
        }
        self.dirty = false;
        self.last_sync = Some(ctx.now);
        self.syncs += 1;
        let services = self.services.iter().filter_map(|o| match &**o {
            Object::Service(s) => Some(Arc::new(s.clone())),
            _ => None,
        });
        let slices = self.slices.iter().filter_map(|o| match &**o {
            Object::EndpointSlice(s) => Some(Arc::new(s.clone())),
            _ => None,
        });
        let endpoints: usize = self
            .slices
            .iter()
            .filter_map(|o| match &**o {
                Object::EndpointSlice(s) => Some(s.endpoints.len()),
                _ => None,
            })
            .sum();
        let (tool, src) = match self.mode {
            ProxyMode::Iptables => ("iptables", "proxier.go:1528"),
            ProxyMode::Ipvs => ("ipvs", "proxier.go:1012"),
        };
        self.journal.push(LogLine::klog(
            ctx.now,
            Level::Info,
            src,
            format!(
                "\"Syncing {tool} rules\" numServices={} numEndpoints={endpoints}",
                self.services.len()
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
