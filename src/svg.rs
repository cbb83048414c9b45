//! The cluster diagram's layers as SVG markup: wires, the control plane, the worker nodes,
//! their pods and the messages in flight. Pure functions of the read model and the
//! [`geometry`](crate::geometry), so they are tested without a browser; the view sets each
//! layer as the inner HTML of its `<g>`.

use std::fmt::Write as _;
use std::sync::Arc;

use kubeloop_sim::time::Time;
use kubeloop_sim::view::{
    is_system_namespace, pod_class, ComponentView, NodeView, PodClass, PodView,
};
use kubeloop_sim::Actor;

use crate::geometry::{
    self, Layout, NodePart, Rect, Tier, APISERVER, BUS_Y, CONTROLLER_MANAGER, CONTROL_PLANE, ETCD,
    KUBECTL, SCHEDULER, TRAY,
};
use crate::highlight::escape;
use crate::i18n::{t, Key, Lang};
use crate::svg_summary;
pub use crate::svg_summary::class_counts;
use crate::traffic::Anim;

/// How many of the newest dots carry their message as a label.
const LABELLED: usize = 1;

/// What the learner picked, marked on the pods: the selected pod (`namespace/name`) and
/// the endpoints of the selected Service (pod `namespace/name` → ready).
#[derive(Clone, Copy, Debug, Default)]
pub struct Marks<'a> {
    pub selected: Option<&'a str>,
    pub endpoints: Option<&'a std::collections::BTreeMap<String, bool>>,
}

impl Marks<'_> {
    fn selects(&self, p: &PodView) -> bool {
        self.selected
            .is_some_and(|s| s.split_once('/') == Some((p.namespace.as_str(), p.name.as_str())))
    }

    /// `Some(ready)` when the pod is an endpoint of the selected Service.
    pub(crate) fn endpoint(&self, p: &PodView) -> Option<bool> {
        self.endpoints?
            .get(&format!("{}/{}", p.namespace, p.name))
            .copied()
    }
}

pub(crate) fn rect(out: &mut String, r: &Rect, rx: f64, class: &str) {
    let _ = write!(
        out,
        r#"<rect class="{class}" x="{:.1}" y="{:.1}" width="{:.1}" height="{:.1}" rx="{rx}"/>"#,
        r.x, r.y, r.w, r.h
    );
}

fn text(out: &mut String, x: f64, y: f64, class: &str, s: &str) {
    let _ = write!(
        out,
        r#"<text class="{class}" x="{x:.1}" y="{y:.1}">{}</text>"#,
        escape(s)
    );
}

/// The static wires: kubectl, etcd, controller-manager and scheduler to the apiserver, and
/// the bus down to every node.
pub fn wires(layout: &Layout) -> String {
    let mut out = String::new();
    let mut line = |points: Vec<geometry::Point>, class: &str| {
        let _ = write!(
            out,
            r#"<polyline class="{class}" points="{}"/>"#,
            geometry::svg_points(&points)
        );
    };
    for a in [
        Actor::Terminal(0),
        Actor::Etcd,
        Actor::ControllerManager,
        Actor::Scheduler,
    ] {
        line(layout.path_to_hub(a), "wire");
    }
    if let (Some(first), Some(last)) = (
        layout.nodes.first(),
        layout
            .nodes
            .get(layout.cols.min(layout.nodes.len()).saturating_sub(1)),
    ) {
        let api = APISERVER.center().x;
        let (l, r) = (first.x.min(api), (last.x + last.w).max(api));
        line(
            vec![
                geometry::Point {
                    x: api,
                    y: APISERVER.bottom(),
                },
                geometry::Point { x: api, y: BUS_Y },
            ],
            "wire bus",
        );
        line(
            vec![
                geometry::Point { x: l, y: BUS_Y },
                geometry::Point { x: r, y: BUS_Y },
            ],
            "wire bus",
        );
        if !layout.tier.aggregated() {
            for (i, n) in layout.nodes.iter().enumerate() {
                let path = layout.path_to_hub(Actor::Kubelet(i as u32));
                let start = path.iter().position(|p| p.y == n.y).unwrap_or(0);
                let end = path
                    .iter()
                    .position(|p| p.y == BUS_Y)
                    .map_or(path.len(), |e| e + 1);
                if start < end {
                    line(path[start..end].to_vec(), "wire drop");
                }
            }
        }
    }
    out
}

fn role(name: &str, lang: Lang) -> &'static str {
    match (name, lang) {
        ("etcd", Lang::En) => "key-value store · the truth",
        ("etcd", Lang::Zh) => "键值存储 · 集群状态",
        ("kube-apiserver", Lang::En) => "authn · authz · admission · REST",
        ("kube-apiserver", Lang::Zh) => "认证 · 授权 · 准入 · REST",
        ("kube-controller-manager", Lang::En) => "Deployment · ReplicaSet · nodes",
        ("kube-controller-manager", Lang::Zh) => "Deployment · ReplicaSet · 节点",
        ("kube-scheduler", Lang::En) => "filter → score → bind",
        ("kube-scheduler", Lang::Zh) => "过滤 → 打分 → 绑定",
        _ => "",
    }
}

/// The control plane box, its four components (running or stopped), kubectl and the tray
/// of unscheduled pods.
pub fn control_plane(components: &[ComponentView], lang: Lang) -> String {
    let mut out = String::new();
    rect(&mut out, &CONTROL_PLANE, 16.0, "cp-box");
    text(
        &mut out,
        CONTROL_PLANE.x + 14.0,
        CONTROL_PLANE.y + 20.0,
        "cp-label",
        t(lang, Key::ControlPlane),
    );
    for (name, r) in [
        ("etcd", ETCD),
        ("kube-apiserver", APISERVER),
        ("kube-controller-manager", CONTROLLER_MANAGER),
        ("kube-scheduler", SCHEDULER),
    ] {
        let running = components
            .iter()
            .find(|c| c.name == name)
            .is_none_or(|c| c.running);
        let state = if running { "running" } else { "stopped" };
        let _ = write!(
            out,
            r#"<g class="component {state}" data-testid="component" data-name="{name}" data-state="{state}">"#
        );
        rect(&mut out, &r, 10.0, "box");
        let c = r.center();
        let big = name == "kube-apiserver";
        text(
            &mut out,
            c.x,
            c.y - if big { 4.0 } else { 2.0 },
            // kube-controller-manager's name filled its box up to the status light.
            if big {
                "name big"
            } else if name.len() > 18 {
                "name long"
            } else {
                "name"
            },
            name,
        );
        let sub = if running {
            role(name, lang)
        } else {
            t(lang, Key::Stopped)
        };
        text(
            &mut out,
            c.x,
            c.y + if big { 13.0 } else { 12.0 },
            "role",
            sub,
        );
        let _ = write!(
            out,
            r#"<circle class="led" cx="{:.1}" cy="{:.1}" r="4"/>"#,
            r.x + r.w - 10.0,
            r.y + 10.0
        );
        out.push_str("</g>");
    }
    out.push_str(r#"<g class="kubectl">"#);
    rect(&mut out, &KUBECTL, 10.0, "box");
    text(
        &mut out,
        KUBECTL.center().x,
        KUBECTL.center().y + 4.0,
        "name mono",
        "$ kubectl",
    );
    out.push_str("</g>");
    rect(&mut out, &TRAY, 10.0, "tray");
    text(
        &mut out,
        TRAY.x + 8.0,
        TRAY.y + 15.0,
        "tray-label",
        t(lang, Key::Unscheduled),
    );
    out
}

/// The node's state as the cluster sees it (its Node object's Ready condition).
fn node_state(n: &NodeView) -> &'static str {
    match n.status.as_str() {
        "Ready" => "ready",
        "NotReady" => "notready",
        _ => "unknown",
    }
}

/// What only the simulator knows about a node (the cluster learns it from missed
/// heartbeats, ~40 s later): drawn as its own layer, marked "sim".
fn sim_fact(n: &NodeView) -> Option<&'static str> {
    if !n.powered {
        Some("off")
    } else if n.partitioned {
        Some("partitioned")
    } else {
        None
    }
}

/// The short names of a node's taints and cordon, as the cluster reports them.
pub fn taint_tags(n: &NodeView) -> Vec<String> {
    let mut out: Vec<String> = n
        .taints
        .iter()
        .map(|t| {
            let key = t.key.strip_prefix("node.kubernetes.io/").unwrap_or(&t.key);
            format!("{key}:{}", t.effect)
        })
        .collect();
    if n.unschedulable && !n.taints.iter().any(|t| t.key.ends_with("/unschedulable")) {
        out.push("SchedulingDisabled".into());
    }
    out
}

/// Taint tags with one key written once: `unreachable:NoSchedule,NoExecute`.
pub fn short_taints(tags: &[String]) -> String {
    let mut keys: Vec<(String, Vec<String>)> = Vec::new();
    for tag in tags {
        let (k, e) = tag.split_once(':').unwrap_or((tag.as_str(), ""));
        match keys.iter_mut().find(|(key, _)| key == k) {
            Some((_, effects)) => effects.push(e.to_string()),
            None => keys.push((k.to_string(), vec![e.to_string()])),
        }
    }
    keys.into_iter()
        .map(|(k, e)| {
            let e: Vec<String> = e.into_iter().filter(|e| !e.is_empty()).collect();
            if e.is_empty() {
                k
            } else {
                format!("{k}:{}", e.join(","))
            }
        })
        .collect::<Vec<_>>()
        .join(" · ")
}

/// `4m05s` until `at`, or `now` once it is due.
pub fn countdown(at: Time, now: Time) -> String {
    let left = at.saturating_sub(now).div_ceil(1000);
    if left == 0 {
        "now".into()
    } else if left >= 60 {
        format!("{}m{:02}s", left / 60, left % 60)
    } else {
        format!("{left}s")
    }
}

/// The worker node boxes: name, address, status, and (in detail) their components.
pub fn nodes(layout: &Layout, nodes: &[Arc<NodeView>], now: Time, lang: Lang) -> String {
    let mut out = String::new();
    for (i, n) in nodes.iter().enumerate() {
        node_box(&mut out, layout, i, n, now, lang);
    }
    out
}

/// The followed pod's scheduling verdict on one node, drawn on the node's card.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Verdict {
    /// Passed every filter.
    pub passed: bool,
    /// The failing filter plugin and its reason (`NodeResourcesFit: Insufficient cpu`).
    pub reason: String,
    /// The final score (Σ of weighted scores), for feasible nodes.
    pub total: i64,
    /// The best total among feasible nodes (the bars' scale).
    pub best: i64,
    /// The node the scheduler picked.
    pub winner: bool,
}

fn verdict(out: &mut String, band: &Rect, v: &Verdict, tier: Tier) {
    let class = if v.winner {
        "winner"
    } else if v.passed {
        "feasible"
    } else {
        "filtered"
    };
    let _ = write!(
        out,
        r#"<g class="verdict {class}" data-testid="verdict" data-verdict="{class}" data-total="{}">"#,
        v.total
    );
    rect(out, band, 3.0, "verdict-track");
    if v.passed {
        let share = if v.best > 0 {
            (v.total.max(0) as f64 / v.best as f64).clamp(0.0, 1.0)
        } else {
            0.0
        };
        let bar = Rect {
            w: (band.w * share).max(1.0),
            ..*band
        };
        rect(out, &bar, 3.0, "verdict-bar");
    }
    if !tier.aggregated() {
        let label = if v.passed {
            format!("{}Σ {}", if v.winner { "★ " } else { "" }, v.total)
        } else {
            format!("✗ {}", v.reason)
        };
        let max = if tier == Tier::Detail { 60 } else { 14 };
        let label: String = label.chars().take(max).collect();
        text(
            out,
            band.x + 4.0,
            band.y + band.h - if tier == Tier::Detail { 4.0 } else { 2.5 },
            "verdict-text",
            &label,
        );
    }
    out.push_str("</g>");
}

/// A node's two cells as the diagram keys them: the box (name, state, taints, parts)
/// and what sits in it (its pods and the verdict). The view redraws a cell only when its
/// markup changed, so pods coming and going leave the box alone.
pub fn node_cell_parts(
    layout: &Layout,
    i: usize,
    n: &NodeView,
    now: Time,
    marks: Marks,
    sched: Option<&Verdict>,
    lang: Lang,
) -> [String; 2] {
    let mut inside = String::new();
    node_pods(&mut inside, layout, i, n, marks, lang);
    inside.push_str(&verdict_cell(layout, i, sched));
    [box_cell(layout, i, n, now, lang), inside]
}

/// A node's box alone (name, state, taints, parts).
pub fn box_cell(layout: &Layout, i: usize, n: &NodeView, now: Time, lang: Lang) -> String {
    let mut out = String::new();
    node_box(&mut out, layout, i, n, now, lang);
    out
}

/// The followed pod's verdict on node `i` (empty when there is none).
pub fn verdict_cell(layout: &Layout, i: usize, sched: Option<&Verdict>) -> String {
    let mut out = String::new();
    if let (Some(v), Some(band)) = (sched, layout.verdict_band(i)) {
        verdict(&mut out, &band, v, layout.tier);
    }
    out
}

fn node_box(out: &mut String, layout: &Layout, i: usize, n: &NodeView, now: Time, lang: Lang) {
    let Some(r) = layout.node(i) else { return };
    let state = node_state(n);
    let sim = sim_fact(n);
    let tags = taint_tags(n);
    let _ = write!(
        out,
        r#"<g class="node {state}{}{}" data-testid="node" data-name="{}" data-state="{state}" data-sim="{}" data-taints="{}">"#,
        if tags.iter().any(|t| t.ends_with(":NoExecute")) {
            " tainted"
        } else {
            ""
        },
        if layout.tier == Tier::Dense {
            " dense"
        } else {
            ""
        },
        escape(&n.name),
        sim.unwrap_or(""),
        escape(&tags.join(" ")),
    );
    let mut title = format!(
        "{} · {} · {} · {}",
        n.name,
        if n.reason.is_empty() {
            n.status.clone()
        } else {
            format!("{} ({})", n.status, n.reason)
        },
        n.ip,
        n.pod_cidr
    );
    for t in &n.taints {
        let _ = write!(title, "\ntaint {}", t.text());
    }
    if let Some(at) = n.eviction_at {
        let _ = write!(title, "\n{} {}", t(lang, Key::EvictsIn), countdown(at, now));
    }
    if let Some(f) = sim {
        let _ = write!(
            title,
            "\n{}: {}",
            t(lang, Key::SimLayer),
            sim_label(f, lang)
        );
    }
    let _ = write!(out, "<title>{}</title>", escape(&title));
    let radius = match layout.tier {
        Tier::Dense => 1.5,
        Tier::Compact => 4.0,
        _ => 10.0,
    };
    rect(out, &r, radius, "box");
    match layout.tier {
        Tier::Detail => {
            text(out, r.x + 12.0, r.y + 20.0, "node-name", &n.name);
            text(
                out,
                r.x + 12.0,
                r.y + 35.0,
                "node-ip",
                &format!("{} · {}", n.ip, n.pod_cidr),
            );
            let badge = n.status.clone();
            let w = 12.0 + 6.5 * badge.chars().count() as f64;
            let b = Rect {
                x: r.x + r.w - w - 10.0,
                y: r.y + 9.0,
                w,
                h: 18.0,
            };
            rect(out, &b, 9.0, "badge");
            text(out, b.center().x, b.y + 13.0, "badge-text", &badge);
            // The cluster's taints (one key with its effects) and the eviction
            // countdown, on two lines under the address.
            let mut lines = vec![short_taints(&tags)];
            if let Some(at) = n.eviction_at {
                lines.push(format!("{} {}", t(lang, Key::EvictsIn), countdown(at, now)));
            }
            let lines: Vec<String> = lines.into_iter().filter(|l| !l.is_empty()).collect();
            if !lines.is_empty() {
                let _ = write!(
                    out,
                    r#"<text class="node-taints" data-testid="node-taints" x="{:.1}" y="{:.1}">"#,
                    r.x + 12.0,
                    r.y + 49.0,
                );
                for (k, l) in lines.iter().enumerate() {
                    let _ = write!(
                        out,
                        r#"<tspan x="{:.1}" dy="{}">{}</tspan>"#,
                        r.x + 12.0,
                        if k == 0 { 0.0 } else { 11.0 },
                        escape(l)
                    );
                }
                out.push_str("</text>");
            }
            for (part, label, short, on) in [
                (NodePart::Kubelet, "kubelet", "kubelet", n.kubelet),
                (NodePart::Runtime, "containerd", "cri", n.runtime),
                (NodePart::Proxy, "kube-proxy", "proxy", n.proxy),
            ] {
                let Some(p) = layout.part(i, part) else {
                    continue;
                };
                let label = if p.w >= 68.0 { label } else { short };
                let _ = write!(out, r#"<g class="part {}">"#, if on { "on" } else { "off" });
                rect(out, &p, 6.0, "pill");
                let _ = write!(
                    out,
                    r#"<circle class="led" cx="{:.1}" cy="{:.1}" r="3"/>"#,
                    p.x + 8.0,
                    p.center().y
                );
                text(out, p.x + 14.0, p.center().y + 3.5, "part-name", label);
                out.push_str("</g>");
            }
        }
        Tier::Medium => {
            text(out, r.x + 8.0, r.y + 16.0, "node-name small", &n.name);
            let _ = write!(
                out,
                r#"<circle class="led" cx="{:.1}" cy="{:.1}" r="4"/>"#,
                r.x + r.w - 10.0,
                r.y + 12.0
            );
            if n.eviction_at.is_some() || !tags.is_empty() {
                let _ = write!(
                    out,
                    r#"<text class="node-taints small" x="{:.1}" y="{:.1}">{}</text>"#,
                    r.x + r.w - 18.0,
                    r.y + 16.0,
                    escape(
                        &n.eviction_at
                            .map_or("⚠".to_string(), |at| countdown(at, now))
                    )
                );
            }
        }
        Tier::Compact => {
            let short = n.name.rsplit('-').next().unwrap_or(&n.name);
            text(out, r.x + 4.0, r.y + 10.0, "node-name tiny", short);
        }
        // The cell's fill says its condition; its pods are a strip in the bars layer.
        Tier::Dense => {}
    }
    // The simulator's layer: a dashed outline and a tag saying what only it knows.
    if let Some(f) = sim {
        let _ = write!(
            out,
            r#"<g class="sim-fact {f}" data-testid="sim-fact" data-fact="{f}"><rect class="sim-outline" x="{:.1}" y="{:.1}" width="{:.1}" height="{:.1}" rx="10"/>"#,
            r.x - 2.0,
            r.y - 2.0,
            r.w + 4.0,
            r.h + 4.0
        );
        if !layout.tier.aggregated() {
            let label = format!("sim · {}", sim_label(f, lang));
            // CJK glyphs are about twice as wide as the monospace Latin ones.
            let units: f64 = label
                .chars()
                .map(|c| if c.is_ascii() { 1.0 } else { 1.9 })
                .sum();
            let w = (10.0 + 5.6 * units).min(r.w - 12.0);
            let tag = Rect {
                x: r.x + r.w - w - 6.0,
                y: r.y + r.h - 8.0,
                w,
                h: 15.0,
            };
            rect(out, &tag, 7.5, "sim-tag");
            text(out, tag.center().x, tag.y + 11.0, "sim-tag-text", &label);
        }
        out.push_str("</g>");
    }
    out.push_str("</g>");
}

fn sim_label(fact: &str, lang: Lang) -> &'static str {
    match fact {
        "off" => t(lang, Key::PoweredOff),
        _ => t(lang, Key::Partitioned),
    }
}

/// How the message log names an actor: `kube-scheduler`, `kubelet@node-2`, `kubectl`.
pub fn actor_name(a: Actor, node_names: &[String]) -> String {
    let node = |n: u32| {
        node_names
            .get(n as usize)
            .cloned()
            .unwrap_or_else(|| format!("node#{n}"))
    };
    match a {
        Actor::Kubelet(n) => format!("kubelet@{}", node(n)),
        Actor::Runtime(n) => format!("containerd@{}", node(n)),
        Actor::KubeProxy(n) => format!("kube-proxy@{}", node(n)),
        other => other.component_name().to_string(),
    }
}

/// The last part of a generated pod name (`x8kq2` of `nginx-7c5ddbdf54-x8kq2`).
pub fn short_name(name: &str) -> &str {
    name.rsplit('-')
        .next()
        .filter(|s| !s.is_empty())
        .unwrap_or(name)
}

pub(crate) fn class_label(c: PodClass, lang: Lang) -> &'static str {
    let key = match c {
        PodClass::Unscheduled => Key::ClassUnscheduled,
        PodClass::Creating => Key::ClassCreating,
        PodClass::Ready => Key::ClassReady,
        PodClass::NotReady => Key::ClassNotReady,
        PodClass::Failed => Key::ClassFailed,
        PodClass::Succeeded => Key::ClassSucceeded,
        PodClass::Terminating => Key::ClassTerminating,
    };
    t(lang, key)
}

fn pod(out: &mut String, p: &PodView, r: &Rect, detail: bool, marks: Marks, lang: Lang) {
    let class = pod_class(p);
    let id = format!("{}/{}", p.namespace, p.name);
    let selected = marks.selects(p);
    let (ep_class, ep_attr) = match marks.endpoint(p) {
        Some(true) => (" endpoint", r#" data-endpoint="ready""#),
        Some(false) => (" endpoint off", r#" data-endpoint="not-ready""#),
        None => ("", ""),
    };
    let _ = write!(
        out,
        r#"<g class="pod {}{}{}{ep_class}"{ep_attr} data-testid="pod" data-pod="{}" data-namespace="{}" data-name="{}" data-status="{}" data-class="{}" data-node="{}" tabindex="0" role="button" aria-label="{}" aria-pressed="{}">"#,
        class.as_str(),
        if is_system_namespace(&p.namespace) {
            " system"
        } else {
            ""
        },
        if selected { " selected" } else { "" },
        escape(&id),
        escape(&p.namespace),
        escape(&p.name),
        escape(&p.status),
        class.as_str(),
        escape(&p.node),
        escape(&format!(
            "{} {} · {}{}",
            t(lang, Key::Pod),
            p.name,
            p.status,
            if p.node.is_empty() {
                String::new()
            } else {
                format!(" · {}", p.node)
            }
        )),
        selected,
    );
    let restarts: i32 = p.containers.iter().map(|c| c.restarts).sum();
    let where_ = if p.node.is_empty() {
        "—".to_string()
    } else {
        p.node.clone()
    };
    let ip = if p.ip.is_empty() { "<none>" } else { &p.ip };
    let _ = write!(
        out,
        "<title>{}\n{} · {}\nIP {} · {}{}{}</title>",
        escape(&p.name),
        escape(&p.status),
        class_label(class, lang),
        escape(ip),
        escape(&where_),
        if restarts > 0 {
            format!(" · {restarts} restarts")
        } else {
            String::new()
        },
        if p.owner.is_empty() {
            String::new()
        } else {
            format!("\n{} {}", t(lang, Key::ControlledBy), escape(&p.owner))
        }
    );
    rect(
        out,
        r,
        if detail { 7.0 } else { (r.w / 4.0).min(3.0) },
        "chip",
    );
    if detail {
        text(out, r.x + 8.0, r.y + 15.0, "pod-name", short_name(&p.name));
        let second = if class == PodClass::Ready && !p.ip.is_empty() {
            p.ip.clone()
        } else {
            p.status.clone()
        };
        let second = crate::chip_text::fit(&second, crate::chip_text::CHIP_CHARS);
        text(out, r.x + 8.0, r.y + 28.0, "pod-sub", &second);
    }
    out.push_str("</g>");
}

/// A node's pods: a chip each, or on a compact node one bar split by state.
fn node_pods(out: &mut String, layout: &Layout, i: usize, n: &NodeView, marks: Marks, lang: Lang) {
    if let Some(bar) = layout.summary(i) {
        svg_summary::write(out, &svg_summary::summary(&bar, n, marks, lang));
        return;
    }
    for (j, p) in n.pods.iter().enumerate() {
        if let Some(r) = layout.chip(i, j) {
            pod(out, p, &r, layout.tier == Tier::Detail, marks, lang);
        }
    }
}

/// The unscheduled pods in the tray by the scheduler, and how many there are.
pub fn tray(pending: &[std::sync::Arc<PodView>], marks: Marks, lang: Lang) -> String {
    let mut out = String::new();
    let mut shown = 0;
    for (i, p) in pending.iter().enumerate() {
        let Some(r) = Layout::tray_chip(i) else { break };
        pod(&mut out, p, &r, false, marks, lang);
        shown += 1;
    }
    if pending.len() > shown {
        text(
            &mut out,
            TRAY.x + TRAY.w - 8.0,
            TRAY.bottom() - 8.0,
            "tray-more",
            &format!("+{}", pending.len() - shown),
        );
    } else if !pending.is_empty() {
        text(
            &mut out,
            TRAY.x + TRAY.w - 8.0,
            TRAY.bottom() - 8.0,
            "tray-more",
            &pending.len().to_string(),
        );
    }
    out
}

/// The pods: chips in their nodes (bars on compact nodes), unscheduled ones in the tray by
/// the scheduler.
pub fn pods(
    layout: &Layout,
    nodes: &[Arc<NodeView>],
    pending: &[std::sync::Arc<PodView>],
    marks: Marks,
    lang: Lang,
) -> String {
    let mut out = String::new();
    for (i, n) in nodes.iter().enumerate() {
        node_pods(&mut out, layout, i, n, marks, lang);
    }
    out.push_str(&tray(pending, marks, lang));
    out
}

/// The messages in flight: a dot each along its arrow; the newest few with their label.
pub fn flights<'a>(layout: &Layout, dots: impl Iterator<Item = (&'a Anim, f64)>) -> String {
    let dots: Vec<(&Anim, f64)> = dots.collect();
    let mut out = String::new();
    let label_from = dots.len().saturating_sub(LABELLED);
    for (i, (a, progress)) in dots.iter().enumerate() {
        let route = layout.route(a.from, a.to);
        let p = geometry::point_along(&route, *progress);
        let fade = if *progress > 0.85 {
            (1.0 - progress) / 0.15
        } else {
            1.0
        };
        let _ = write!(
            out,
            r#"<g class="flight {}" data-testid="flight" opacity="{fade:.2}">"#,
            a.kind.as_str()
        );
        let _ = write!(out, r#"<circle cx="{:.1}" cy="{:.1}" r="5"/>"#, p.x, p.y);
        if i >= label_from && layout.tier == Tier::Detail {
            let full: Vec<char> = a.label.chars().take(40).collect();
            let spot = crate::label_spot::label_spot(layout, p, full.len());
            let label: String = if spot.chars >= full.len() {
                full.iter().collect()
            } else if spot.chars >= 4 {
                full[..spot.chars - 1].iter().chain(['…'].iter()).collect()
            } else {
                String::new()
            };
            let anchor = if spot.end {
                r#" text-anchor="end""#
            } else {
                ""
            };
            let _ = write!(
                out,
                r#"<text class="flight-label" x="{:.1}" y="{:.1}"{anchor}>{}</text>"#,
                spot.at.x,
                spot.at.y,
                escape(&label)
            );
        }
        out.push_str("</g>");
    }
    out
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::geometry::layout;
    use crate::traffic::FlightKind;
    use wasm_bindgen_test::wasm_bindgen_test;

    /// One node as the diagram draws it: both its cells, the box then what sits in it.
    fn node_cell(
        layout: &Layout,
        i: usize,
        n: &NodeView,
        now: Time,
        marks: Marks,
        sched: Option<&Verdict>,
        lang: Lang,
    ) -> String {
        node_cell_parts(layout, i, n, now, marks, sched, lang).concat()
    }

    pub(crate) fn node(name: &str, pods: Vec<PodView>) -> NodeView {
        NodeView {
            name: name.into(),
            ip: "172.18.0.3".into(),
            pod_cidr: "10.244.1.0/24".into(),
            status: "Ready".into(),
            reason: "KubeletReady".into(),
            taints: vec![],
            unschedulable: false,
            eviction_at: None,
            powered: true,
            partitioned: false,
            kubelet: true,
            runtime: true,
            proxy: true,
            pods: pods.into_iter().map(std::sync::Arc::new).collect(),
        }
    }

    pub(crate) fn pod_view(name: &str, node: &str, status: &str) -> PodView {
        PodView {
            owner: String::new(),
            namespace: "default".into(),
            name: name.into(),
            status: status.into(),
            phase: if status == "Running" {
                "Running".into()
            } else {
                "Pending".into()
            },
            ready: status == "Running",
            ip: "10.244.1.2".into(),
            node: node.into(),
            containers: vec![],
            terminating: false,
        }
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn should_draw_each_node_and_pod_once() {
        let ns: Vec<Arc<NodeView>> = (1..=3)
            .map(|i| {
                node(
                    &format!("node-{i}"),
                    vec![pod_view(
                        &format!("web-abc-{i}x"),
                        &format!("node-{i}"),
                        "Running",
                    )],
                )
            })
            .map(Arc::new)
            .collect();
        let l = layout(3, 1);
        let svg = nodes(&l, &ns, 0, Lang::En);
        assert_eq!(svg.matches(r#"data-testid="node""#).count(), 3);
        assert!(svg.contains("kube-proxy") && svg.contains("172.18.0.3 · 10.244.1.0/24"));
        let pending = [std::sync::Arc::new(pod_view("web-abc-zz", "", "Pending"))];
        let p = pods(
            &l,
            &ns,
            &pending,
            Marks {
                selected: Some("default/web-abc-2x"),
                endpoints: None,
            },
            Lang::En,
        );
        assert_eq!(p.matches(r#"data-testid="pod""#).count(), 4);
        assert_eq!(p.matches(r#"data-class="ready""#).count(), 3);
        assert_eq!(p.matches(r#"data-class="unscheduled""#).count(), 1);
        assert_eq!(p.matches("selected").count(), 1);
        assert!(p.contains(">1x<"), "short names on detailed chips");
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn should_mark_the_selected_services_endpoints_ready_or_not() {
        let n = node(
            "node-1",
            vec![
                pod_view("web-1", "node-1", "Running"),
                pod_view("web-2", "node-1", "Running"),
                pod_view("db-1", "node-1", "Running"),
            ],
        );
        let eps: std::collections::BTreeMap<String, bool> = [
            ("default/web-1".to_string(), true),
            ("default/web-2".to_string(), false),
        ]
        .into();
        let marks = Marks {
            selected: None,
            endpoints: Some(&eps),
        };
        let cell = node_cell(&layout(3, 3), 0, &n, 0, marks, None, Lang::En);
        assert_eq!(cell.matches(r#"data-endpoint="ready""#).count(), 1);
        assert_eq!(cell.matches(r#"data-endpoint="not-ready""#).count(), 1);
        assert!(cell.contains(r#"class="pod ready endpoint off""#), "{cell}");
        let plain = node_cell(&layout(3, 3), 0, &n, 0, Marks::default(), None, Lang::En);
        assert!(!plain.contains("data-endpoint"));
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn should_draw_stopped_components_and_dead_nodes_distinctly() {
        let cs = [
            ComponentView {
                name: "kube-scheduler",
                running: false,
            },
            ComponentView {
                name: "etcd",
                running: true,
            },
        ];
        let svg = control_plane(&cs, Lang::Zh);
        assert!(svg.contains(r#"data-name="kube-scheduler" data-state="stopped""#));
        assert!(svg.contains(r#"data-name="etcd" data-state="running""#));
        assert!(svg.contains("已停止"));
        let mut off = node("node-1", vec![]);
        off.powered = false;
        let mut cut = node("node-2", vec![]);
        cut.partitioned = true;
        let svg = nodes(&layout(2, 0), &[Arc::new(off), Arc::new(cut)], 0, Lang::En);
        assert!(
            !svg.contains(r#"data-state="off""#),
            "the cluster still thinks both are Ready"
        );
        assert_eq!(svg.matches(r#"data-state="ready""#).count(), 2);
        assert!(svg.contains(r#"data-sim="off""#) && svg.contains("sim · powered off"));
        assert!(svg.contains(r#"data-sim="partitioned""#));
        assert_eq!(svg.matches(r#"data-testid="sim-fact""#).count(), 2);
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn should_scale_to_hundreds_of_nodes() {
        let ns: Vec<Arc<NodeView>> = (1..=300)
            .map(|i| {
                node(
                    &format!("node-{i}"),
                    (0..3)
                        .map(|j| pod_view(&format!("w-{i}-{j}"), "x", "Running"))
                        .collect(),
                )
            })
            .map(Arc::new)
            .collect();
        let l = layout(300, 3);
        assert_eq!(
            nodes(&l, &ns, 0, Lang::En)
                .matches(r#"data-testid="node""#)
                .count(),
            300
        );
        let drawn = pods(&l, &ns, &[], Marks::default(), Lang::En);
        assert_eq!(
            drawn.matches(r#"data-testid="pod""#).count(),
            0,
            "pods too small to read are not drawn one by one"
        );
        assert_eq!(
            drawn.matches(r#"data-testid="pod-summary""#).count(),
            300,
            "a bar per node stands for them"
        );
        assert!(drawn.contains(r#"data-pods="3""#));
        assert!(drawn.contains(r#"data-class="ready" data-count="3""#));
        let many: Vec<_> = (0..500)
            .map(|i| std::sync::Arc::new(pod_view(&format!("p-{i}"), "", "Pending")))
            .collect();
        let tray = pods(&l, &[], &many, Marks::default(), Lang::En);
        assert!(tray.contains(">+"), "the tray says how many more wait");
    }

    /// At thousands of nodes a node is a few elements: its cell (coloured by its
    /// condition, its name and condition in the tooltip), a strip of its pods by state in
    /// the bars layer (its tooltip counting them), and a followed pod's verdict band.
    #[wasm_bindgen_test(unsupported = test)]
    fn should_draw_a_dense_node_as_a_cell_with_a_pod_strip() {
        let mut ps: Vec<PodView> = (0..50)
            .map(|j| pod_view(&format!("w-{j}"), "node-7", "Running"))
            .collect();
        ps.extend((0..5).map(|j| pod_view(&format!("p-{j}"), "node-7", "Pending")));
        let mut n = node("node-7", ps);
        n.status = "NotReady".into();
        let l = layout(5000, 55);
        let cell = box_cell(&l, 6, &n, 0, Lang::En);
        assert!(cell.contains(r#"class="node notready dense""#), "{cell}");
        assert!(cell.contains("<title>node-7 · NotReady"), "{cell}");
        assert_eq!(cell.matches('<').count() - cell.matches("</").count(), 3);
        assert!(!cell.contains("<text"), "no text at this size");
        let strip = l.summary(6).expect("a strip");
        let s = crate::svg_summary::dense(&strip, &n, Marks::default(), Lang::En);
        let mut bar = String::new();
        crate::svg_summary::write(&mut bar, &s);
        assert!(
            bar.contains("node-7: 55 pods · 5 Creating · 50 Ready"),
            "{bar}"
        );
        assert_eq!(
            bar.matches("<rect").count(),
            2,
            "two segments, no track: {bar}"
        );
        assert!(!bar.contains("<text"), "no count: {bar}");
        // 55 pods are more than fill a strip (30): it is scaled to fit, by state.
        let ready = format!(
            r#"data-count="50" x="{:.1}" y="{:.1}" width="{:.1}""#,
            strip.x + strip.w * 5.0 / 55.0,
            strip.y,
            strip.w * 50.0 / 55.0
        );
        assert!(bar.contains(&ready), "{bar}");
        // Fewer than 30 pods: each is 1/30 of the strip.
        let few: Vec<PodView> = (0..3)
            .map(|j| pod_view(&format!("f-{j}"), "node-8", "Running"))
            .collect();
        let s = crate::svg_summary::dense(&strip, &node("node-8", few), Marks::default(), Lang::En);
        assert_eq!(
            s.segs.iter().map(|g| g.w).sum::<f64>(),
            strip.w * 3.0 / 30.0
        );
        // The verdict of a followed pod is a band under the strip, with no label.
        let v = Verdict {
            passed: true,
            reason: String::new(),
            total: 80,
            best: 100,
            winner: true,
        };
        let band = verdict_cell(&l, 6, Some(&v));
        assert!(band.contains(r#"data-verdict="winner""#) && !band.contains("<text"));
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn should_split_a_compact_nodes_bar_by_pod_state() {
        let mut ps: Vec<PodView> = (0..3)
            .map(|j| pod_view(&format!("w-{j}"), "node-1", "Running"))
            .collect();
        ps.push(pod_view("w-9", "node-1", "ContainerCreating"));
        let n = node("node-1", ps);
        assert_eq!(
            class_counts(&n.pods),
            vec![(PodClass::Creating, 1), (PodClass::Ready, 3)]
        );
        let l = layout(100, 4);
        let cell = node_cell(&l, 0, &n, 0, Marks::default(), None, Lang::En);
        assert!(cell.contains(r#"data-testid="node""#) && cell.contains("pod-summary"));
        assert!(
            cell.contains("node-1: 4 pods · 1 Creating · 3 Ready"),
            "{cell}"
        );
        let detail = node_cell(
            &layout(3, 4),
            0,
            &n,
            0,
            Marks {
                selected: Some("default/w-9"),
                endpoints: None,
            },
            None,
            Lang::En,
        );
        assert_eq!(detail.matches(r#"data-testid="pod""#).count(), 4);
        assert!(detail.contains(" selected"));
        // A picked Service's endpoints are counted on the compact bar.
        let eps: std::collections::BTreeMap<String, bool> = [
            ("default/w-0".to_string(), true),
            ("default/w-9".to_string(), false),
        ]
        .into();
        let marked = node_cell(
            &l,
            0,
            &n,
            0,
            Marks {
                selected: None,
                endpoints: Some(&eps),
            },
            None,
            Lang::En,
        );
        assert!(
            marked.contains(r#"data-endpoints="2" data-endpoints-ready="1""#),
            "{marked}"
        );
        assert!(marked.contains("summary-endpoints") && marked.contains("2 endpoints (1 ready)"));
        assert!(!cell.contains("summary-endpoints"));
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn should_leave_a_nodes_box_alone_when_only_its_pods_change() {
        let l = layout(100, 4);
        let before = node(
            "node-1",
            vec![pod_view("w-0", "node-1", "ContainerCreating")],
        );
        let after = node(
            "node-1",
            vec![
                pod_view("w-0", "node-1", "Running"),
                pod_view("w-1", "node-1", "Pending"),
            ],
        );
        let parts = |n: &NodeView| node_cell_parts(&l, 0, n, 0, Marks::default(), None, Lang::En);
        let (b, a) = (parts(&before), parts(&after));
        assert_eq!(
            b[0], a[0],
            "the box is the same markup, so it is not redrawn"
        );
        assert_ne!(b[1], a[1], "the pods' bar is redrawn");
        assert!(a[0].contains(r#"data-testid="node""#) && !a[0].contains("pod-summary"));
        assert!(a[1].contains(r#"data-pods="2""#));
        assert_eq!(
            a.concat(),
            node_cell(&l, 0, &after, 0, Marks::default(), None, Lang::En)
        );
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn should_draw_the_clusters_view_of_a_failed_node_with_the_eviction_countdown() {
        let mut n = node("node-2", vec![pod_view("web-1", "node-2", "Running")]);
        n.status = "Unknown".into();
        n.reason = "NodeStatusUnknown".into();
        n.powered = false;
        n.taints = vec![
            kubeloop_sim::view::TaintView {
                key: "node.kubernetes.io/unreachable".into(),
                effect: "NoExecute".into(),
                added: Some(60_000),
            },
            kubeloop_sim::view::TaintView {
                key: "node.kubernetes.io/unreachable".into(),
                effect: "NoSchedule".into(),
                added: None,
            },
        ];
        n.eviction_at = Some(360_000);
        let n = Arc::new(n);
        let svg = nodes(&layout(3, 1), std::slice::from_ref(&n), 105_500, Lang::En);
        assert!(svg.contains(r#"data-state="unknown""#) && svg.contains(r#"data-sim="off""#));
        assert!(
            svg.contains(">unreachable:NoExecute,NoSchedule<")
                && svg.contains(">evicts pods in 4m15s<"),
            "{svg}"
        );
        assert!(svg.contains("Unknown (NodeStatusUnknown)"));
        assert_eq!(countdown(360_000, 359_001), "1s");
        assert_eq!(countdown(360_000, 400_000), "now");
        let zh = nodes(&layout(3, 1), &[n], 105_500, Lang::Zh);
        assert!(zh.contains("驱逐 Pod 倒计时 4m15s"));
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn should_draw_the_followed_pods_verdict_on_each_node() {
        let n = node("node-1", vec![]);
        let l = layout(3, 1);
        let won = Verdict {
            passed: true,
            reason: String::new(),
            total: 180,
            best: 180,
            winner: true,
        };
        let cell = node_cell(&l, 0, &n, 0, Marks::default(), Some(&won), Lang::En);
        assert!(cell.contains(r#"data-verdict="winner""#) && cell.contains("★ Σ 180"));
        let out = Verdict {
            passed: false,
            reason: "NodeResourcesFit: Insufficient cpu".into(),
            total: 0,
            best: 180,
            winner: false,
        };
        let cell = node_cell(&l, 1, &n, 0, Marks::default(), Some(&out), Lang::En);
        assert!(cell.contains("✗ NodeResourcesFit: Insufficient cpu"));
        assert!(
            !cell.contains("verdict-bar"),
            "no score bar for a filtered node"
        );
        let band = l.verdict_band(0).unwrap();
        assert!(l.node(0).unwrap().contains(&band));
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn should_name_actors_for_the_message_log() {
        let names = vec!["node-1".to_string(), "node-2".to_string()];
        assert_eq!(actor_name(Actor::Kubelet(1), &names), "kubelet@node-2");
        assert_eq!(actor_name(Actor::KubeProxy(0), &names), "kube-proxy@node-1");
        assert_eq!(actor_name(Actor::Terminal(4), &names), "kubectl");
        assert_eq!(actor_name(Actor::Scheduler, &names), "kube-scheduler");
        assert_eq!(actor_name(Actor::Runtime(9), &names), "containerd@node#9");
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn should_escape_names_and_labels() {
        let evil = Arc::new(node(
            "<script>",
            vec![pod_view("a\"b", "<script>", "Running")],
        ));
        let l = layout(1, 1);
        assert!(!nodes(&l, std::slice::from_ref(&evil), 0, Lang::En).contains("<script>"));
        assert!(!pods(&l, &[evil], &[], Marks::default(), Lang::En).contains("a\"b"));
        let anim = Anim {
            id: 1,
            from: Actor::Terminal(1),
            to: Actor::ApiServer,
            label: "GET /api/<x>".into(),
            kind: FlightKind::Request,
            start: 0.0,
            duration: 100.0,
            sent: 0,
        };
        let svg = flights(&l, std::iter::once((&anim, 0.5)));
        assert!(svg.contains("&lt;x&gt;") && svg.contains(r#"class="flight request""#));
    }
}
