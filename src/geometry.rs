//! Geometry of the cluster diagram: where the control plane, the worker nodes, their pod
//! chips and the arrows between actors go, for 1 node or hundreds. Plain numbers in SVG
//! user units (the view box is [`WIDTH`] wide).

use kubeloop_sim::Actor;

/// Width of the view box.
pub const WIDTH: f64 = 800.0;

/// A point.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Point {
    /// Left to right.
    pub x: f64,
    /// Top to bottom.
    pub y: f64,
}

const fn pt(x: f64, y: f64) -> Point {
    Point { x, y }
}

/// A rectangle.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rect {
    /// Left edge.
    pub x: f64,
    /// Top edge.
    pub y: f64,
    /// Width.
    pub w: f64,
    /// Height.
    pub h: f64,
}

impl Rect {
    const fn new(x: f64, y: f64, w: f64, h: f64) -> Rect {
        Rect { x, y, w, h }
    }

    /// The center.
    pub fn center(&self) -> Point {
        pt(self.x + self.w / 2.0, self.y + self.h / 2.0)
    }

    /// The bottom edge.
    pub fn bottom(&self) -> f64 {
        self.y + self.h
    }

    /// Whether `other` lies inside this rectangle.
    pub fn contains(&self, other: &Rect) -> bool {
        other.x >= self.x - 1e-9
            && other.y >= self.y - 1e-9
            && other.x + other.w <= self.x + self.w + 1e-9
            && other.y + other.h <= self.y + self.h + 1e-9
    }
}

/// The box around the control plane.
pub const CONTROL_PLANE: Rect = Rect::new(118.0, 12.0, 670.0, 178.0);
/// etcd.
pub const ETCD: Rect = Rect::new(170.0, 38.0, 136.0, 40.0);
/// kube-apiserver.
pub const APISERVER: Rect = Rect::new(143.0, 106.0, 190.0, 52.0);
/// kube-controller-manager.
pub const CONTROLLER_MANAGER: Rect = Rect::new(382.0, 76.0, 196.0, 42.0);
/// kube-scheduler.
pub const SCHEDULER: Rect = Rect::new(382.0, 136.0, 196.0, 42.0);
/// The terminal's kubectl, outside the cluster.
pub const KUBECTL: Rect = Rect::new(12.0, 110.0, 92.0, 44.0);
/// Where unscheduled pods wait, beside the scheduler.
pub const TRAY: Rect = Rect::new(594.0, 36.0, 182.0, 142.0);
/// The horizontal line every node hangs from.
pub const BUS_Y: f64 = 212.0;
const NODES_TOP: f64 = 232.0;
const MARGIN: f64 = 12.0;
const TRAY_CHIP: f64 = 14.0;
const TRAY_GAP: f64 = 4.0;
const TRAY_TOP: f64 = 58.0;
/// Height of a compact node's pod bar.
const SUMMARY_H: f64 = 9.0;

/// Height of the band at the bottom of a node where the followed pod's scheduling verdict
/// goes, per tier.
fn band_h(tier: Tier) -> f64 {
    match tier {
        Tier::Detail => 18.0,
        Tier::Medium => 12.0,
        Tier::Compact => 4.0,
        Tier::Dense => 3.0,
    }
}

/// How much a node box shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tier {
    /// Few nodes: name, IP, components, pod chips with names.
    Detail,
    /// A few dozen: name, status, small chips.
    Medium,
    /// Many: tiny boxes; pods too small to read are drawn as one bar per node, split by
    /// state ([`Layout::summary`]).
    Compact,
    /// Hundreds to thousands: a cell per node, coloured by its condition, with its pods as
    /// a strip inside it ([`Layout::pod_strip`]); the name and counts are in its tooltip.
    /// A few elements per node, so 5,000 nodes stay a page the browser can redraw.
    Dense,
}

impl Tier {
    /// Whether pods are drawn in aggregate (a bar or a strip per node), not one by one.
    pub fn aggregated(self) -> bool {
        matches!(self, Tier::Compact | Tier::Dense)
    }
}

/// Height of a dense node's cell.
const DENSE_H: f64 = 12.0;
/// Pods that fill a dense node's strip: 30, the envelope's density (150,000 pods on
/// 5,000 nodes), so a node with a few pods shows a strip one can see; a fuller node's
/// strip is scaled to fit. (The kubelet's `maxPods`, 110, would leave 4 pods at 4 % of a
/// cell 14 units wide.)
pub const DENSE_STRIP_PODS: usize = 30;

/// Size of a pod chip and the space between chips.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Chip {
    /// Width.
    pub w: f64,
    /// Height.
    pub h: f64,
    /// Gap between chips.
    pub gap: f64,
}

/// A node component with a pill in the detailed node box.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodePart {
    /// kubelet.
    Kubelet,
    /// containerd.
    Runtime,
    /// kube-proxy.
    Proxy,
}

/// Where everything goes for a number of nodes.
#[derive(Clone, Debug, PartialEq)]
pub struct Layout {
    /// View box height.
    pub height: f64,
    /// Level of detail.
    pub tier: Tier,
    /// Nodes per grid row.
    pub cols: usize,
    /// Node boxes, in node order.
    pub nodes: Vec<Rect>,
    /// Pod chip size.
    pub chip: Chip,
    /// Chips per row inside a node.
    pub per_row: usize,
    /// Gap between node boxes.
    pub gap: f64,
    header: f64,
    parts: f64,
    pad: f64,
}

/// Lays out `node_count` nodes whose fullest one holds `max_pods` pods.
pub fn layout(node_count: usize, max_pods: usize) -> Layout {
    let (tier, cols) = match node_count {
        0..=4 => (Tier::Detail, node_count.max(1)),
        5..=8 => (Tier::Detail, 4),
        9..=24 => (Tier::Medium, 6),
        25..=60 => (Tier::Compact, 10),
        61..=300 => (Tier::Compact, 12),
        301..=1200 => (Tier::Dense, 30),
        _ => (Tier::Dense, 50),
    };
    let (gap, header, parts, pad, chip) = match tier {
        Tier::Detail => (
            14.0,
            66.0,
            28.0,
            10.0,
            Chip {
                w: 70.0,
                h: 36.0,
                gap: 6.0,
            },
        ),
        Tier::Medium => (
            12.0,
            24.0,
            0.0,
            8.0,
            Chip {
                w: 14.0,
                h: 14.0,
                gap: 4.0,
            },
        ),
        Tier::Compact => (
            8.0,
            15.0,
            0.0,
            4.0,
            Chip {
                w: 6.0,
                h: 6.0,
                gap: 2.0,
            },
        ),
        Tier::Dense => (
            2.0,
            0.0,
            0.0,
            1.5,
            Chip {
                w: 0.0,
                h: 0.0,
                gap: 0.0,
            },
        ),
    };
    let node_w = ((WIDTH - 2.0 * MARGIN - (cols as f64 - 1.0) * gap) / cols as f64).min(360.0);
    let per_row = (((node_w - 2.0 * pad + chip.gap) / (chip.w + chip.gap)).floor() as usize).max(1);
    let node_h = match tier {
        Tier::Dense => DENSE_H,
        Tier::Compact => band_h(tier) + header + pad / 2.0 + SUMMARY_H + pad,
        Tier::Detail | Tier::Medium => {
            let rows = max_pods.div_ceil(per_row).max(1);
            band_h(tier) + header + parts + pad + rows as f64 * (chip.h + chip.gap) - chip.gap + pad
        }
    };
    let grid_w = cols as f64 * node_w + (cols as f64 - 1.0) * gap;
    let x0 = (WIDTH - grid_w) / 2.0;
    let nodes: Vec<Rect> = (0..node_count)
        .map(|i| {
            let (r, c) = ((i / cols) as f64, (i % cols) as f64);
            Rect::new(
                x0 + c * (node_w + gap),
                NODES_TOP + r * (node_h + gap),
                node_w,
                node_h,
            )
        })
        .collect();
    let bottom = nodes.last().map_or(NODES_TOP + 60.0, |n| n.bottom());
    Layout {
        height: bottom + MARGIN,
        tier,
        cols,
        nodes,
        chip,
        per_row,
        gap,
        header,
        parts,
        pad,
    }
}

impl Layout {
    /// The box of node `i`.
    pub fn node(&self, i: usize) -> Option<Rect> {
        self.nodes.get(i).copied()
    }

    /// The chip of the `i`-th pod on node `node`; none on compact nodes, which draw a
    /// [`Layout::summary`] instead.
    pub fn chip(&self, node: usize, i: usize) -> Option<Rect> {
        if self.tier.aggregated() {
            return None;
        }
        let n = self.node(node)?;
        let (r, c) = ((i / self.per_row) as f64, (i % self.per_row) as f64);
        Some(Rect::new(
            n.x + self.pad + c * (self.chip.w + self.chip.gap),
            n.y + self.header + self.parts + self.pad / 2.0 + r * (self.chip.h + self.chip.gap),
            self.chip.w,
            self.chip.h,
        ))
    }

    /// The band at the bottom of node `node` for the followed pod's scheduling verdict.
    pub fn verdict_band(&self, node: usize) -> Option<Rect> {
        let n = self.node(node)?;
        let h = band_h(self.tier);
        let inner = if self.tier == Tier::Dense {
            h - 1.0
        } else {
            h - 2.0
        };
        Some(Rect::new(
            n.x + self.pad,
            n.bottom() - h - self.pad / 2.0,
            n.w - 2.0 * self.pad,
            inner,
        ))
    }

    /// The bar that stands for a compact node's pods, split by state; on a dense node the
    /// strip inside its cell, above the verdict band.
    pub fn summary(&self, node: usize) -> Option<Rect> {
        if self.tier == Tier::Dense {
            let n = self.node(node)?;
            return Some(Rect::new(
                n.x + self.pad,
                n.y + self.pad,
                n.w - 2.0 * self.pad,
                n.h - band_h(self.tier) - 2.0 * self.pad,
            ));
        }
        if self.tier != Tier::Compact {
            return None;
        }
        let n = self.node(node)?;
        Some(Rect::new(
            n.x + self.pad,
            n.y + self.header + self.pad / 2.0,
            n.w - 2.0 * self.pad,
            SUMMARY_H,
        ))
    }

    /// The pill of a node component (detailed nodes only).
    pub fn part(&self, node: usize, part: NodePart) -> Option<Rect> {
        if self.tier != Tier::Detail {
            return None;
        }
        let n = self.node(node)?;
        let w = (n.w - 2.0 * self.pad - 2.0 * 6.0) / 3.0;
        let i = match part {
            NodePart::Kubelet => 0.0,
            NodePart::Runtime => 1.0,
            NodePart::Proxy => 2.0,
        };
        Some(Rect::new(
            n.x + self.pad + i * (w + 6.0),
            n.y + self.header - 4.0,
            w,
            22.0,
        ))
    }

    /// The path from an actor's box to kube-apiserver's edge, the hub every arrow meets.
    pub fn path_to_hub(&self, a: Actor) -> Vec<Point> {
        let api = APISERVER.center();
        let right = APISERVER.x + APISERVER.w;
        let elbow = (right + CONTROLLER_MANAGER.x) / 2.0;
        match a {
            Actor::ApiServer => vec![],
            // cloud-provider-kind runs on the terminal's host, beside kubectl.
            Actor::Terminal(_) | Actor::CloudProvider => {
                vec![pt(KUBECTL.x + KUBECTL.w, api.y), pt(APISERVER.x, api.y)]
            }
            Actor::Etcd => vec![pt(api.x, ETCD.bottom()), pt(api.x, APISERVER.y)],
            Actor::ControllerManager | Actor::Scheduler => {
                let y = if a == Actor::Scheduler {
                    SCHEDULER.center().y
                } else {
                    CONTROLLER_MANAGER.center().y
                };
                vec![
                    pt(CONTROLLER_MANAGER.x, y),
                    pt(elbow, y),
                    pt(elbow, api.y),
                    pt(right, api.y),
                ]
            }
            Actor::Kubelet(n) | Actor::Runtime(n) | Actor::KubeProxy(n) => {
                let n = n as usize;
                let Some(node) = self.node(n) else {
                    return vec![pt(api.x, BUS_Y), pt(api.x, APISERVER.bottom())];
                };
                let top = pt(node.center().x, node.y);
                let part = match a {
                    Actor::Kubelet(_) => NodePart::Kubelet,
                    Actor::Runtime(_) => NodePart::Runtime,
                    _ => NodePart::Proxy,
                };
                let mut path: Vec<Point> = self
                    .part(n, part)
                    .map(|p| pt(p.center().x, p.y))
                    .into_iter()
                    .collect();
                path.push(top);
                if n >= self.cols {
                    // Lower rows reach the bus through the gap left of their column.
                    let y = node.y - self.gap / 2.0;
                    let x = node.x - self.gap / 2.0;
                    path.extend([pt(top.x, y), pt(x, y), pt(x, BUS_Y)]);
                } else {
                    path.push(pt(top.x, BUS_Y));
                }
                path.extend([pt(api.x, BUS_Y), pt(api.x, APISERVER.bottom())]);
                path
            }
        }
    }

    /// The arrow a message from `from` to `to` travels.
    pub fn route(&self, from: Actor, to: Actor) -> Vec<Point> {
        let direct = |a: Actor, b: Actor| matches!((a, b), (Actor::Terminal(_), Actor::Etcd));
        if direct(from, to) || direct(to, from) {
            let path = vec![
                pt(KUBECTL.center().x, KUBECTL.y),
                pt(KUBECTL.center().x, ETCD.center().y),
                pt(ETCD.x, ETCD.center().y),
            ];
            return if matches!(from, Actor::Etcd) {
                path.into_iter().rev().collect()
            } else {
                path
            };
        }
        let mut path = self.path_to_hub(from);
        path.extend(self.path_to_hub(to).into_iter().rev());
        path.dedup();
        path
    }

    /// The `i`-th chip in the tray of unscheduled pods, `None` once the tray is full.
    pub fn tray_chip(i: usize) -> Option<Rect> {
        let per_row = ((TRAY.w - 12.0 + TRAY_GAP) / (TRAY_CHIP + TRAY_GAP)).floor() as usize;
        let rows = ((TRAY.bottom() - TRAY_TOP - 18.0 + TRAY_GAP) / (TRAY_CHIP + TRAY_GAP)).floor()
            as usize;
        if i >= per_row * rows {
            return None;
        }
        let (r, c) = ((i / per_row) as f64, (i % per_row) as f64);
        Some(Rect::new(
            TRAY.x + 6.0 + c * (TRAY_CHIP + TRAY_GAP),
            TRAY_TOP + r * (TRAY_CHIP + TRAY_GAP),
            TRAY_CHIP,
            TRAY_CHIP,
        ))
    }
}

/// The point a fraction `t` (0 … 1) of the way along a polyline, by length.
pub fn point_along(route: &[Point], t: f64) -> Point {
    let Some(&first) = route.first() else {
        return pt(0.0, 0.0);
    };
    let seg = |a: &Point, b: &Point| ((b.x - a.x).powi(2) + (b.y - a.y).powi(2)).sqrt();
    let total: f64 = route.windows(2).map(|w| seg(&w[0], &w[1])).sum();
    if total <= 0.0 {
        return first;
    }
    let mut left = t.clamp(0.0, 1.0) * total;
    for w in route.windows(2) {
        let l = seg(&w[0], &w[1]);
        if left <= l && l > 0.0 {
            let f = left / l;
            return pt(
                w[0].x + (w[1].x - w[0].x) * f,
                w[0].y + (w[1].y - w[0].y) * f,
            );
        }
        left -= l;
    }
    *route.last().unwrap_or(&first)
}

/// A polyline's `points` attribute.
pub fn svg_points(route: &[Point]) -> String {
    route
        .iter()
        .map(|p| format!("{:.1},{:.1}", p.x, p.y))
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasm_bindgen_test::wasm_bindgen_test;

    #[wasm_bindgen_test(unsupported = test)]
    fn should_fit_every_node_and_chip_in_the_view_box() {
        for (n, pods) in [
            (1, 0),
            (3, 3),
            (3, 20),
            (8, 5),
            (20, 30),
            (50, 12),
            (300, 110),
            (301, 30),
            (1200, 30),
            (5000, 30),
        ] {
            let l = layout(n, pods);
            assert_eq!(l.nodes.len(), n);
            let view = Rect::new(0.0, 0.0, WIDTH, l.height);
            for (i, node) in l.nodes.iter().enumerate() {
                assert!(
                    view.contains(node),
                    "{n} nodes: node {i} {node:?} in the view box"
                );
                assert!(node.y > BUS_Y, "nodes hang below the bus");
                if l.tier == Tier::Dense {
                    let strip = l.summary(i).expect("strip");
                    let band = l.verdict_band(i).expect("band");
                    assert!(node.contains(&strip) && node.contains(&band));
                    assert!(strip.bottom() <= band.y, "the strip above the verdict band");
                    assert!(strip.h >= 5.0 && band.h >= 2.0, "both can be seen");
                    assert!(l.chip(i, 0).is_none());
                    continue;
                }
                if let Some(bar) = l.summary(i) {
                    assert!(
                        node.contains(&bar),
                        "{n} nodes: the pod bar inside node {i}"
                    );
                    assert!(l.chip(i, 0).is_none(), "compact nodes draw no chips");
                    continue;
                }
                for p in [0, pods.saturating_sub(1)] {
                    let chip = l.chip(i, p).expect("chip");
                    assert!(
                        node.contains(&chip),
                        "{n} nodes, {pods} pods: chip {p} {chip:?} inside node {node:?}"
                    );
                }
            }
            for w in l.nodes.windows(2) {
                let overlap_x = w[0].x < w[1].x + w[1].w && w[1].x < w[0].x + w[0].w;
                let overlap_y = w[0].y < w[1].y + w[1].h && w[1].y < w[0].y + w[0].h;
                assert!(!(overlap_x && overlap_y), "nodes do not overlap: {w:?}");
            }
        }
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn should_pick_less_detail_for_more_nodes() {
        assert_eq!(layout(3, 3).tier, Tier::Detail);
        assert_eq!(layout(3, 3).cols, 3);
        assert_eq!(layout(20, 3).tier, Tier::Medium);
        assert_eq!(layout(300, 3).tier, Tier::Compact);
        assert_eq!(layout(301, 3).tier, Tier::Dense);
        assert_eq!(layout(5000, 3).tier, Tier::Dense);
        // 5,000 nodes in a hundred rows of fifty, the page a few screens tall.
        assert_eq!(layout(5000, 3).cols, 50);
        assert!(
            layout(5000, 3).height < 1700.0,
            "{}",
            layout(5000, 3).height
        );
        // The layout does not depend on how many pods a dense node holds: a scale-up
        // leaves every cell where it was.
        assert_eq!(layout(1000, 3), layout(1000, 90));
        assert!(layout(3, 3).part(0, NodePart::Proxy).is_some());
        assert!(layout(300, 3).part(0, NodePart::Proxy).is_none());
        assert!(
            layout(3, 40).height > layout(3, 3).height,
            "taller nodes for more pods"
        );
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn should_route_messages_through_the_apiserver() {
        let l = layout(6, 3);
        let r = l.route(Actor::Scheduler, Actor::Kubelet(5));
        assert_eq!(
            r.first(),
            Some(&pt(CONTROLLER_MANAGER.x, SCHEDULER.center().y))
        );
        let kubelet = l.part(5, NodePart::Kubelet).expect("pill");
        assert_eq!(r.last(), Some(&pt(kubelet.center().x, kubelet.y)));
        assert!(r.iter().any(|p| p.y == BUS_Y), "through the bus");
        let back = l.route(Actor::Kubelet(5), Actor::Scheduler);
        assert_eq!(back.first(), r.last());
        let etcdctl = l.route(Actor::Terminal(3), Actor::Etcd);
        assert_eq!(etcdctl.last(), Some(&pt(ETCD.x, ETCD.center().y)));
        assert_eq!(
            l.route(Actor::Etcd, Actor::Terminal(3)).first(),
            etcdctl.last()
        );
        let unknown = l.route(Actor::Kubelet(99), Actor::ApiServer);
        assert!(
            !unknown.is_empty(),
            "a node the layout does not know still has a route"
        );
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn should_find_points_along_a_polyline() {
        let r = [pt(0.0, 0.0), pt(10.0, 0.0), pt(10.0, 10.0)];
        assert_eq!(point_along(&r, 0.0), pt(0.0, 0.0));
        assert_eq!(point_along(&r, 0.5), pt(10.0, 0.0));
        assert_eq!(point_along(&r, 0.75), pt(10.0, 5.0));
        assert_eq!(point_along(&r, 2.0), pt(10.0, 10.0));
        assert_eq!(point_along(&[], 0.5), pt(0.0, 0.0));
        assert_eq!(svg_points(&r[..2]), "0.0,0.0 10.0,0.0");
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn should_fill_the_tray_then_stop() {
        let first = Layout::tray_chip(0).expect("room for one");
        assert!(TRAY.contains(&first));
        let last = (0..)
            .take_while(|i| Layout::tray_chip(*i).is_some())
            .count();
        assert!(last >= 20, "room for a few rows: {last}");
        assert!(TRAY.contains(&Layout::tray_chip(last - 1).unwrap()));
    }
}
