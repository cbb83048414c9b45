//! The proxy view: for one node, kube-proxy's rules as a laid-out graph, the raw
//! `iptables-save` text with the rules the last packet matched marked, and that packet's
//! recorded path as hops to animate. Plain data from a [`ProxySnapshot`]; only
//! [`snapshot`] and [`last_path`] read the world.

use std::collections::{BTreeMap, BTreeSet};
use std::net::Ipv4Addr;
use std::sync::Arc;

use k8s_openapi::api::core::v1::Service;
use k8s_openapi::api::discovery::v1::EndpointSlice;

use crate::node::net::TrafficPath;
use crate::proxy::graph::{rule_graph, EndpointRules, ServiceRules};
use crate::proxy::{
    iptables, ipvs, nftables, Cidr, NodeAddress, ProxyInput, ProxyMode, ProxyOptions,
};
use crate::time::Time;
use crate::world::World;

#[path = "view_proxy_path.rs"]
mod path;
pub use path::{classify, path_view, PathOutcome, PathStep, PathView, StepKind};

/// At most this many service ports in the graph (the ones the last packet used first).
pub const MAX_SERVICES: usize = 8;
/// At most this many endpoints per service port (the chosen one always among them).
pub const MAX_ENDPOINTS: usize = 6;
/// `iptables-save` lines shown before only the matched ones (and their neighbours) are.
pub const HEAD_LINES: usize = 160;

/// What kube-proxy on one node last wrote its rules from: plain data, cheap to clone.
#[derive(Clone, Debug)]
pub struct ProxySnapshot {
    /// The node.
    pub node: String,
    /// Its InternalIP.
    pub node_ip: Ipv4Addr,
    /// Its podCIDR.
    pub pod_cidr: Option<Cidr>,
    /// Every node (for endpoints' nodes).
    pub nodes: Vec<NodeAddress>,
    /// Services as of the sync.
    pub services: Vec<Arc<Service>>,
    /// EndpointSlices as of the sync.
    pub slices: Vec<Arc<EndpointSlice>>,
    /// iptables or IPVS.
    pub mode: ProxyMode,
    /// When kube-proxy wrote them (the `iptables-save` header's time).
    pub synced_at: Time,
}

impl ProxySnapshot {
    fn input(&self) -> ProxyInput<'_> {
        ProxyInput {
            node_name: self.node.clone(),
            node_ip: self.node_ip,
            pod_cidr: self.pod_cidr,
            cluster_cidr: Cidr::parse(crate::cluster::CLUSTER_CIDR),
            services: &self.services,
            slices: &self.slices,
            nodes: &self.nodes,
            mode: self.mode,
            now: self.synced_at,
            options: ProxyOptions::default(),
        }
    }

    /// Pod names by endpoint address, from the slices' targetRefs.
    fn pods_by_ip(&self) -> BTreeMap<String, String> {
        self.slices
            .iter()
            .flat_map(|s| s.endpoints.iter())
            .filter_map(|e| {
                let name = e.target_ref.as_ref()?.name.clone()?;
                Some((e.addresses.first()?.clone(), name))
            })
            .collect()
    }
}

/// kube-proxy's last rules on `node`, or `None` before its first sync.
pub fn snapshot(world: &World, node: &str) -> Option<ProxySnapshot> {
    let host = world
        .observe()
        .nodes()
        .iter()
        .find(|h| h.config.name == node)?;
    let rules = host.rules.clone()?;
    Some(ProxySnapshot {
        node: node.to_string(),
        node_ip: host.ip.parse().unwrap_or(Ipv4Addr::UNSPECIFIED),
        pod_cidr: Cidr::parse(&host.pod_cidr),
        nodes: world.node_addresses(),
        services: rules.services,
        slices: rules.slices,
        mode: rules.mode,
        synced_at: rules.synced_at,
    })
}

/// When kube-proxy on `node` last wrote its rules, and in which mode: a view built from
/// [`snapshot`] stays valid while this and [`last_path`] do not move.
pub fn rules_key(world: &World, node: &str) -> Option<(Time, ProxyMode)> {
    let host = world
        .observe()
        .nodes()
        .iter()
        .find(|h| h.config.name == node)?;
    host.rules.as_ref().map(|r| (r.synced_at, r.mode))
}

/// The worker nodes' names, in order.
pub fn node_names(world: &World) -> Vec<String> {
    world.observe().node_names()
}

/// The newest request walked through the data plane (`curl`, `wget`, a load loop).
pub fn last_path(world: &World) -> Option<&TrafficPath> {
    world.observe().net().paths.back()
}

/// How a rule or a box took part in the last packet's walk.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Mark {
    /// Not touched.
    Idle,
    /// Evaluated and not taken (a statistic draw, an affinity check).
    Tested,
    /// Matched: the packet went this way.
    Taken,
}

impl Mark {
    /// The CSS class / `data-mark` value.
    pub fn as_str(self) -> &'static str {
        match self {
            Mark::Idle => "idle",
            Mark::Tested => "tested",
            Mark::Taken => "taken",
        }
    }
}

/// The rules a walk touched on one node: `(table, rule text)` → how.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Touched(BTreeMap<(String, String), Mark>);

impl Touched {
    /// The hops of `path` that ran on `node`.
    pub fn of(path: Option<&TrafficPath>, node: &str) -> Touched {
        let mut m = BTreeMap::new();
        for h in path.iter().flat_map(|p| &p.hops).filter(|h| h.node == node) {
            let mark = if h.matched { Mark::Taken } else { Mark::Tested };
            let mut put = |text: &str| {
                let e = m
                    .entry((h.table.clone(), text.trim_end().to_string()))
                    .or_insert(mark);
                *e = (*e).max(mark);
            };
            put(&h.rule);
            if h.table == "ipvs" {
                put(&h.chain);
            }
        }
        Touched(m)
    }

    /// How the rule `text` of `table` took part.
    pub fn mark(&self, table: &str, text: &str) -> Mark {
        self.0
            .get(&(table.to_string(), text.trim_end().to_string()))
            .copied()
            .unwrap_or(Mark::Idle)
    }

    /// Whether the walk touched nothing here.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// A box of the rule graph.
#[derive(Clone, Debug, PartialEq)]
pub struct GraphBox {
    /// What it stands for.
    pub kind: BoxKind,
    /// Left edge (SVG user units).
    pub x: f64,
    /// Top edge.
    pub y: f64,
    /// Width.
    pub w: f64,
    /// Height.
    pub h: f64,
    /// Its lines of text, first the chain.
    pub lines: Vec<String>,
    /// The rule it stands for, as `iptables-save` prints it (its tooltip).
    pub rule: String,
    /// Whether the last packet went through it.
    pub mark: Mark,
}

/// Kinds of graph boxes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BoxKind {
    /// The KUBE-SERVICES chain (IPVS: the kube-ipvs0 virtual servers).
    Services,
    /// A KUBE-SVC-… chain (IPVS: a virtual server).
    Service,
    /// A service port without endpoints: its REJECT rule.
    Reject,
    /// A KUBE-SEP-… chain with its DNAT (IPVS: a real server).
    Endpoint,
    /// `+N more`.
    More,
}

impl BoxKind {
    /// The CSS class / `data-kind` value.
    pub fn as_str(self) -> &'static str {
        match self {
            BoxKind::Services => "services",
            BoxKind::Service => "svc",
            BoxKind::Reject => "reject",
            BoxKind::Endpoint => "sep",
            BoxKind::More => "more",
        }
    }
}

/// An arrow of the rule graph.
#[derive(Clone, Debug, PartialEq)]
pub struct GraphEdge {
    /// Start.
    pub from: (f64, f64),
    /// End.
    pub to: (f64, f64),
    /// The probability printed on it (`0.33333333349`), or `rr`.
    pub label: Option<String>,
    /// Whether the last packet took it.
    pub mark: Mark,
}

/// The laid-out rule graph.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct GraphLayout {
    /// View box width.
    pub width: f64,
    /// View box height.
    pub height: f64,
    /// Boxes.
    pub boxes: Vec<GraphBox>,
    /// Arrows.
    pub edges: Vec<GraphEdge>,
}

/// Graph geometry (SVG user units).
pub const GRAPH_WIDTH: f64 = 640.0;
const TOP: f64 = 8.0;
const ROW: f64 = 50.0;
const BOX_H: f64 = 44.0;
const SERVICES_X: f64 = 6.0;
const SERVICES_W: f64 = 104.0;
const SVC_X: f64 = 130.0;
const SVC_W: f64 = 196.0;
const SEP_X: f64 = 420.0;
const SEP_W: f64 = 214.0;

/// Keeps at most `max` of `items`, the ones `keep` says first, in their order; and how
/// many were left out.
fn capped<T: Clone>(items: &[T], max: usize, keep: impl Fn(&T) -> bool) -> (Vec<T>, usize) {
    let must: BTreeSet<usize> = (0..items.len())
        .filter(|i| keep(&items[*i]))
        .take(max)
        .collect();
    let mut chosen = must.clone();
    for i in 0..items.len() {
        if chosen.len() >= max {
            break;
        }
        chosen.insert(i);
    }
    let out = chosen.iter().map(|i| items[*i].clone()).collect();
    (out, items.len() - chosen.len())
}

fn endpoint_box(
    e: &EndpointRules,
    y: f64,
    mode: ProxyMode,
    pods: &BTreeMap<String, String>,
    touched: &Touched,
) -> GraphBox {
    let ip = e.destination.split(':').next().unwrap_or("");
    let whom = match (pods.get(ip), &e.node) {
        (Some(p), Some(n)) => format!("{} · {n}", p.as_str()),
        (Some(p), None) => p.clone(),
        (None, Some(n)) => n.clone(),
        (None, None) => String::new(),
    };
    let (table, first) = match mode {
        ProxyMode::Iptables => ("nat", e.chain.clone()),
        ProxyMode::Ipvs => ("ipvs", format!("-> {}", e.destination)),
        ProxyMode::Nftables => ("nft", e.chain.clone()),
    };
    GraphBox {
        kind: BoxKind::Endpoint,
        x: SEP_X,
        y,
        w: SEP_W,
        h: BOX_H,
        lines: vec![first, format!("DNAT → {}", e.destination), whom],
        rule: e.dnat.clone(),
        mark: touched.mark(table, &e.dnat),
    }
}

/// Lays out one service port's box and its endpoints from row `y`; returns the next `y`.
fn service_rows(
    s: &ServiceRules,
    mut y: f64,
    mode: ProxyMode,
    pods: &BTreeMap<String, String>,
    touched: &Touched,
    g: &mut GraphLayout,
) -> f64 {
    let table = if mode == ProxyMode::Ipvs {
        "ipvs"
    } else {
        s.table
    };
    let (eps, more) = capped(&s.endpoints, MAX_ENDPOINTS, |e| {
        touched.mark(table, &e.jump) == Mark::Taken || touched.mark(table, &e.dnat) == Mark::Taken
    });
    let rows = (eps.len() + usize::from(more > 0)).max(1) as f64;
    let h = rows * ROW - (ROW - BOX_H);
    let capture = touched.mark(table, &s.capture);
    let (kind, first) = if s.reject {
        (BoxKind::Reject, "REJECT".to_string())
    } else {
        (BoxKind::Service, s.chain.clone())
    };
    let svc_mid = y + h / 2.0;
    g.boxes.push(GraphBox {
        kind,
        x: SVC_X,
        y,
        w: SVC_W,
        h,
        lines: vec![first, s.service.clone(), s.vip.clone()],
        rule: s.capture.clone(),
        mark: capture,
    });
    g.edges.push(GraphEdge {
        from: (SERVICES_X + SERVICES_W, svc_mid),
        to: (SVC_X, svc_mid),
        label: None,
        mark: capture,
    });
    for e in &eps {
        let b = endpoint_box(e, y, mode, pods, touched);
        let jump = touched.mark(table, &e.jump);
        let label = match mode {
            ProxyMode::Ipvs => Some("rr".to_string()),
            ProxyMode::Iptables => Some(e.probability.clone().unwrap_or_else(|| "1 (last)".into())),
            ProxyMode::Nftables => e.probability.clone(),
        };
        g.edges.push(GraphEdge {
            from: (SVC_X + SVC_W, svc_mid),
            to: (SEP_X, y + BOX_H / 2.0),
            label,
            mark: jump.max(if b.mark == Mark::Taken {
                Mark::Taken
            } else {
                Mark::Idle
            }),
        });
        g.boxes.push(b);
        y += ROW;
    }
    if more > 0 {
        g.boxes.push(more_box(SEP_X, y, SEP_W, more));
        y += ROW;
    }
    if eps.is_empty() && more == 0 {
        y += ROW;
    }
    y
}

fn more_box(x: f64, y: f64, w: f64, n: usize) -> GraphBox {
    GraphBox {
        kind: BoxKind::More,
        x,
        y,
        w,
        h: BOX_H * 0.6,
        lines: vec![format!("+{n}")],
        rule: String::new(),
        mark: Mark::Idle,
    }
}

/// Lays out the graph: KUBE-SERVICES on the left, a box per service port, a box per
/// endpoint with the probability of the rule that jumps to it on the arrow.
pub fn graph_layout(snap: &ProxySnapshot, touched: &Touched) -> GraphLayout {
    let input = snap.input();
    let graph = rule_graph(&input);
    let pods = snap.pods_by_ip();
    let mut g = GraphLayout {
        width: GRAPH_WIDTH,
        ..GraphLayout::default()
    };
    let mode = graph.mode;
    let (services, more) = capped(&graph.services, MAX_SERVICES, |s| {
        let table = if mode == ProxyMode::Ipvs {
            "ipvs"
        } else {
            s.table
        };
        touched.mark(table, &s.capture) != Mark::Idle
    });
    let mut y = TOP;
    for s in &services {
        y = service_rows(s, y, mode, &pods, touched, &mut g);
    }
    if more > 0 {
        g.boxes.push(more_box(SVC_X, y, SVC_W, more));
        y += ROW;
    }
    let any = g
        .boxes
        .iter()
        .any(|b| b.kind != BoxKind::More && b.mark == Mark::Taken);
    let head = match mode {
        ProxyMode::Iptables => vec!["KUBE-SERVICES".to_string(), "nat".to_string()],
        ProxyMode::Ipvs => vec!["kube-ipvs0".to_string(), "IPVS".to_string()],
        ProxyMode::Nftables => vec!["services".to_string(), "ip kube-proxy".to_string()],
    };
    g.boxes.insert(
        0,
        GraphBox {
            kind: BoxKind::Services,
            x: SERVICES_X,
            y: TOP,
            w: SERVICES_W,
            h: (y - TOP - (ROW - BOX_H)).max(BOX_H),
            lines: head,
            rule: String::new(),
            mark: if any { Mark::Taken } else { Mark::Idle },
        },
    );
    g.height = y.max(TOP + ROW) + TOP;
    g
}

/// One line of the raw rules text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SaveRow {
    /// A line as printed, with how the last packet used it.
    Line {
        /// The text.
        text: String,
        /// Matched, tested or untouched.
        mark: Mark,
    },
    /// `n` lines left out.
    Elided(usize),
}

/// `iptables-save` (and `ipvsadm -Ln` in IPVS mode) as kube-proxy left it on the node,
/// each line marked with how the last packet used it. Past [`HEAD_LINES`], only the
/// touched lines and their neighbours are kept.
pub fn save_rows(snap: &ProxySnapshot, touched: &Touched) -> Vec<SaveRow> {
    let input = snap.input();
    if snap.mode == ProxyMode::Nftables {
        return nft_rows(&nftables::nft_list_ruleset(&input), touched);
    }
    let mut text = iptables::iptables_save(&input);
    if snap.mode == ProxyMode::Ipvs {
        text.push_str("# ipvsadm -Ln\n");
        text.push_str(&ipvs::ipvsadm_ln(&input));
    }
    let mut table = String::new();
    let lines: Vec<(String, Mark)> = text
        .lines()
        .map(|l| {
            if let Some(t) = l.strip_prefix('*') {
                table = t.to_string();
            } else if l == "# ipvsadm -Ln" {
                table = "ipvs".into();
            }
            (l.to_string(), touched.mark(&table, l))
        })
        .collect();
    elide(lines)
}

/// `nft list ruleset` marked like [`save_rows`]: a rule line by its text, an element line
/// by the element it lists.
fn nft_rows(text: &str, touched: &Touched) -> Vec<SaveRow> {
    let lines = text
        .lines()
        .map(|l| {
            let t = l.trim();
            let elem = t
                .strip_prefix("elements = { ")
                .unwrap_or(t)
                .trim_end_matches(" }")
                .trim_end_matches(',');
            let mark = touched.mark("nft", t).max(touched.mark("nft", elem));
            (l.to_string(), mark)
        })
        .collect();
    elide(lines)
}

/// Keeps the first [`HEAD_LINES`] and the touched lines with their neighbours.
fn elide(lines: Vec<(String, Mark)>) -> Vec<SaveRow> {
    let near: BTreeSet<usize> = lines
        .iter()
        .enumerate()
        .filter(|(_, (_, m))| *m != Mark::Idle)
        .flat_map(|(i, _)| i.saturating_sub(1)..=i + 1)
        .collect();
    let mut out = Vec::new();
    let mut skipped = 0;
    for (i, (text, mark)) in lines.into_iter().enumerate() {
        if i < HEAD_LINES || near.contains(&i) {
            if skipped > 0 {
                out.push(SaveRow::Elided(skipped));
                skipped = 0;
            }
            out.push(SaveRow::Line { text, mark });
        } else {
            skipped += 1;
        }
    }
    if skipped > 0 {
        out.push(SaveRow::Elided(skipped));
    }
    out
}

/// Everything the proxy view draws for one node.
#[derive(Clone, Debug, PartialEq)]
pub struct ProxyView {
    /// The node.
    pub node: String,
    /// iptables or IPVS.
    pub mode: ProxyMode,
    /// When kube-proxy wrote these rules.
    pub synced_at: Time,
    /// The rule graph.
    pub graph: GraphLayout,
    /// The raw rules text.
    pub save: Vec<SaveRow>,
    /// The last packet's path, if one was sent.
    pub path: Option<PathView>,
    /// Whether that packet met this node's rules.
    pub path_here: bool,
}

/// Builds the view of `snap`'s node with `path` (the last packet) marked on it.
pub fn proxy_view(snap: &ProxySnapshot, path: Option<&TrafficPath>) -> ProxyView {
    let touched = Touched::of(path, &snap.node);
    ProxyView {
        node: snap.node.clone(),
        mode: snap.mode,
        synced_at: snap.synced_at,
        graph: graph_layout(snap, &touched),
        save: save_rows(snap, &touched),
        path: path.map(path_view),
        path_here: !touched.is_empty(),
    }
}

#[cfg(test)]
#[path = "view_proxy_tests.rs"]
mod tests;
