//! The proxy view's SVG markup: the rule graph of [`kubeloop_sim::view::proxy`] and the
//! last request's path as a lane of hops a packet dot walks, one hop after another (CSS
//! animations with a delay per hop; `prefers-reduced-motion` shows the path at once).

use std::fmt::Write as _;

use kubeloop_sim::view::proxy::{GraphLayout, PathView, StepKind};

use crate::highlight::escape;

/// Width of the lane's view box.
pub const LANE_WIDTH: f64 = 640.0;
/// Hops per row of the lane.
pub const PER_ROW: usize = 4;
const HOP_W: f64 = 142.0;
const HOP_H: f64 = 46.0;
const GAP_X: f64 = 16.0;
const GAP_Y: f64 = 16.0;
const PAD: f64 = 6.0;
/// How long the packet stays on one hop (ms of animation).
pub const HOP_MS: f64 = 550.0;

/// At most this many characters of a line in a box (the full text is in its tooltip).
fn clip(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let mut out: String = s.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}

/// The rule graph.
pub fn graph(g: &GraphLayout) -> String {
    let mut out = String::new();
    for e in &g.edges {
        let mid = (e.from.0 + e.to.0) / 2.0;
        let _ = write!(
            out,
            r#"<path class="rg-edge {m}" data-mark="{m}" d="M{:.1},{:.1} C{mid:.1},{:.1} {mid:.1},{:.1} {:.1},{:.1}"/>"#,
            e.from.0,
            e.from.1,
            e.from.1,
            e.to.1,
            e.to.0,
            e.to.1,
            m = e.mark.as_str()
        );
        if let Some(l) = &e.label {
            let _ = write!(
                out,
                r#"<text class="rg-prob {m}" x="{:.1}" y="{:.1}" data-testid="rule-probability">{}</text>"#,
                e.to.0 - 6.0,
                e.to.1 - 4.0,
                escape(l),
                m = e.mark.as_str()
            );
        }
    }
    for b in &g.boxes {
        let kind = b.kind.as_str();
        let m = b.mark.as_str();
        let _ = write!(
            out,
            r#"<g class="rg-box {kind} {m}" data-testid="rule-box" data-kind="{kind}" data-mark="{m}" data-chain="{}"><title>{}</title>"#,
            escape(b.lines.first().map_or("", String::as_str)),
            escape(
                if b.rule.is_empty() {
                    b.lines.join(" ")
                } else {
                    b.rule.clone()
                }
                .as_str()
            )
        );
        let _ = write!(
            out,
            r#"<rect x="{:.1}" y="{:.1}" width="{:.1}" height="{:.1}" rx="6"/>"#,
            b.x, b.y, b.w, b.h
        );
        let max = (b.w / 6.1) as usize;
        for (i, line) in b.lines.iter().enumerate() {
            let class = if i == 0 { "rg-name" } else { "rg-sub" };
            let _ = write!(
                out,
                r#"<text class="{class}" x="{:.1}" y="{:.1}">{}</text>"#,
                b.x + 7.0,
                b.y + 14.0 + 13.0 * i as f64,
                escape(&clip(line, max))
            );
        }
        out.push_str("</g>");
    }
    out
}

/// Where hop `i` of the lane goes (top-left corner): rows run left to right, then right
/// to left (a snake), so each link is short and none crosses the lane.
pub fn hop_at(i: usize) -> (f64, f64) {
    let (row, col) = (i / PER_ROW, i % PER_ROW);
    let col = if row % 2 == 1 { PER_ROW - 1 - col } else { col };
    (
        PAD + col as f64 * (HOP_W + GAP_X),
        PAD + row as f64 * (HOP_H + GAP_Y),
    )
}

/// The lane's height for `n` hops.
pub fn lane_height(n: usize) -> f64 {
    let rows = n.div_ceil(PER_ROW).max(1);
    2.0 * PAD + rows as f64 * HOP_H + (rows - 1) as f64 * GAP_Y
}

fn center(i: usize) -> (f64, f64) {
    let (x, y) = hop_at(i);
    (x + HOP_W / 2.0, y + HOP_H / 2.0)
}

/// The packet's keyframes: it rests on each hop, then moves to the next.
fn packet_keyframes(name: &str, n: usize) -> String {
    let mut out = format!("@keyframes {name} {{");
    for i in 0..n {
        let (x, y) = center(i);
        let at = i as f64 / n as f64 * 100.0;
        let rest = (i as f64 + 0.6) / n as f64 * 100.0;
        let _ = write!(
            out,
            "{at:.2}%,{rest:.2}% {{ transform: translate({x:.1}px,{y:.1}px); opacity: 1 }} "
        );
    }
    let (x, y) = center(n.saturating_sub(1));
    let _ = write!(
        out,
        "100% {{ transform: translate({x:.1}px,{y:.1}px); opacity: 0 }} }}"
    );
    out
}

/// A short, CSS-identifier-safe name for the animation of one path.
fn anim_name(key: &str) -> String {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    key.hash(&mut h);
    format!("pk{:x}", h.finish())
}

/// The lane of hops, lit one after another; with `motion`, a packet dot walks them.
pub fn lane(p: &PathView, motion: bool) -> String {
    let mut out = String::new();
    let n = p.steps.len();
    for i in 1..n {
        let (a, b) = (center(i - 1), center(i));
        let _ = write!(
            out,
            r#"<line class="lane-link" x1="{:.1}" y1="{:.1}" x2="{:.1}" y2="{:.1}" style="animation-delay:{:.0}ms"/>"#,
            a.0,
            a.1,
            b.0,
            b.1,
            i as f64 * HOP_MS
        );
    }
    for (i, s) in p.steps.iter().enumerate() {
        let (x, y) = hop_at(i);
        let kind = s.kind.as_str();
        let taken = if s.taken { "taken" } else { "skipped" };
        let last = if i + 1 == n { " last" } else { "" };
        let outcome = if s.kind == StepKind::Failure {
            format!(" {}", p.outcome.as_str())
        } else {
            String::new()
        };
        let _ = write!(
            out,
            r#"<g class="hop {kind} {taken}{last}{outcome}" data-testid="hop" data-kind="{kind}" data-taken="{}" style="animation-delay:{:.0}ms"><title>{}</title>"#,
            s.taken,
            i as f64 * HOP_MS,
            escape(&format!("{}: {}", s.title, s.detail))
        );
        let _ = write!(
            out,
            r#"<rect x="{x:.1}" y="{y:.1}" width="{HOP_W}" height="{HOP_H}" rx="7"/>"#
        );
        let mark = match (s.kind, s.taken) {
            (StepKind::Failure, _) => "✕ ",
            (_, false) => "↷ ",
            _ => "",
        };
        let _ = write!(
            out,
            r#"<text class="hop-title" x="{:.1}" y="{:.1}">{}</text><text class="hop-detail" x="{:.1}" y="{:.1}">{}</text>"#,
            x + 7.0,
            y + 17.0,
            escape(&clip(&format!("{mark}{}", s.title), 23)),
            x + 7.0,
            y + 34.0,
            escape(&clip(&s.detail, 25))
        );
        out.push_str("</g>");
    }
    if motion && n > 0 {
        let name = anim_name(&p.key());
        let _ = write!(
            out,
            r#"<style>{}</style><circle class="packet" r="6" cx="0" cy="0" style="animation:{name} {:.0}ms linear 1 both"/>"#,
            packet_keyframes(&name, n),
            n as f64 * HOP_MS
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use kubeloop_sim::view::proxy::{path_view, PathOutcome};
    use wasm_bindgen_test::wasm_bindgen_test;

    fn path(outcome: &str) -> PathView {
        path_view(&kubeloop_sim::node::net::TrafficPath {
            at: 5,
            from: "default/client".into(),
            node: "node-1".into(),
            url: "http://web/".into(),
            dns: Some((
                "web.default.svc.cluster.local".into(),
                "10.96.0.50".into(),
                "kube-system/coredns-1".into(),
            )),
            hops: Vec::new(),
            outcome: outcome.into(),
            endpoint: None,
        })
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn should_lay_hops_in_rows_and_animate_one_after_another() {
        assert_eq!(hop_at(0), (PAD, PAD));
        // The second row starts under the end of the first and runs back.
        assert_eq!(hop_at(PER_ROW).0, hop_at(PER_ROW - 1).0);
        assert!(hop_at(PER_ROW).1 > hop_at(0).1);
        assert_eq!(hop_at(2 * PER_ROW - 1).0, PAD);
        assert!(hop_at(PER_ROW - 1).0 + HOP_W <= LANE_WIDTH);
        assert!(lane_height(5) > lane_height(4));
        let p = path("10.244.2.3:80 (default/web-1) on node-2");
        let svg = lane(&p, true);
        assert_eq!(svg.matches(r#"data-testid="hop""#).count(), p.steps.len());
        assert!(svg.contains("animation-delay:550ms"));
        assert!(svg.contains("<circle class=\"packet\""));
        assert!(
            !lane(&p, false).contains("packet"),
            "no dot for reduced motion"
        );
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn should_mark_a_reject_at_the_end_of_the_lane() {
        let p = path("rejected: no ready endpoints");
        assert_eq!(p.outcome, PathOutcome::Rejected);
        let svg = lane(&p, false);
        assert!(
            svg.contains(r#"class="hop failure taken last rejected""#),
            "{svg}"
        );
        assert!(svg.contains("✕ REJECT"));
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn should_escape_and_clip_text() {
        assert_eq!(clip("abcdef", 4), "abc…");
        assert_eq!(clip("abc", 4), "abc");
        let p = path("<b>");
        assert!(!lane(&p, false).contains("<b>"));
    }
}
