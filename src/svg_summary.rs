//! The bar that stands for a compact node's pods (25 to 300 nodes) and the strip that
//! stands for a dense node's (from 301): one segment per state, as wide as its share, and
//! on the bar the count; its tooltip says how many are in each state.
//! While a Service is picked, the bar is ringed and counts the node's endpoints of it
//! (ready ones apart).
//!
//! [`Summary`] is the bar as numbers and [`write`] its markup. The diagram keeps one bar
//! element per node and [`changes`] says what to set on it for a new summary: a
//! scale-up changes every node's count at every redraw, and replacing a hundred bars'
//! markup (parsing it, styling the new elements) was most of a redraw's cost.

use std::fmt::Write as _;

use kubeloop_sim::view::{pod_class, NodeView, PodClass, PodView};

use crate::geometry::{Rect, DENSE_STRIP_PODS};
use crate::highlight::escape;
use crate::i18n::Lang;
use crate::svg::{class_label, rect, Marks};

/// One state's segment of the bar: `w` is 0 when the node has no pod in that state.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Seg {
    pub class: PodClass,
    pub count: usize,
    pub x: f64,
    pub w: f64,
}

/// A compact node's bar, as numbers.
#[derive(Clone, Debug, PartialEq)]
pub struct Summary {
    pub node: String,
    pub bar: Rect,
    pub total: usize,
    /// The tooltip (plain text).
    pub title: String,
    /// One per state, in legend order ([`PodClass::ALL`]).
    pub segs: Vec<Seg>,
    /// The picked Service's endpoints on this node and how many are ready.
    pub endpoints: Option<(usize, usize)>,
    /// A dense node's strip ([`dense`]): segments only, no track, ring or count.
    pub dense: bool,
}

impl Summary {
    /// The ring around the bar while it holds endpoints.
    pub fn ring(&self) -> Rect {
        Rect {
            x: self.bar.x - 2.0,
            y: self.bar.y - 2.0,
            w: self.bar.w + 4.0,
            h: self.bar.h + 4.0,
        }
    }

    /// Where the count is written (its right end).
    pub fn count_at(&self) -> (f64, f64) {
        (self.bar.x + self.bar.w - 1.0, self.bar.y + self.bar.h - 1.5)
    }
}

/// How many of a node's pods are in each state, in legend order (states with none left out).
pub fn class_counts(pods: &[std::sync::Arc<PodView>]) -> Vec<(PodClass, usize)> {
    let mut counts = [0usize; PodClass::ALL.len()];
    for p in pods {
        let c = pod_class(p);
        if let Some(i) = PodClass::ALL.iter().position(|k| *k == c) {
            counts[i] += 1;
        }
    }
    PodClass::ALL
        .into_iter()
        .zip(counts)
        .filter(|(_, n)| *n > 0)
        .collect()
}

/// The bar of node `n` drawn in `bar`.
pub fn summary(bar: &Rect, n: &NodeView, marks: Marks, lang: Lang) -> Summary {
    let counts = class_counts(&n.pods);
    let total = n.pods.len();
    let mut title = match lang {
        Lang::En => format!("{}: {total} pods", n.name),
        Lang::Zh => format!("{}：{total} 个 Pod", n.name),
    };
    for (c, k) in &counts {
        let _ = write!(title, " · {k} {}", class_label(*c, lang));
    }
    let endpoints: Vec<bool> = n.pods.iter().filter_map(|p| marks.endpoint(p)).collect();
    let ready = endpoints.iter().filter(|r| **r).count();
    if !endpoints.is_empty() {
        let (label, ready_label) = match lang {
            Lang::En => ("endpoints", "ready"),
            Lang::Zh => ("个端点", "就绪"),
        };
        let _ = write!(
            title,
            " · {} {label} ({ready} {ready_label})",
            endpoints.len()
        );
    }
    let width = bar.w - 16.0;
    let mut x = bar.x;
    let segs = PodClass::ALL
        .into_iter()
        .map(|class| {
            let count = counts
                .iter()
                .find(|(c, _)| *c == class)
                .map_or(0, |(_, k)| *k);
            let w = if total == 0 {
                0.0
            } else {
                width * count as f64 / total as f64
            };
            let seg = Seg { class, count, x, w };
            x += w;
            seg
        })
        .collect();
    Summary {
        node: n.name.clone(),
        bar: *bar,
        total,
        title,
        segs,
        endpoints: (!endpoints.is_empty()).then_some((endpoints.len(), ready)),
        dense: false,
    }
}

/// A dense node's pods as a strip across `strip`: one segment per state, each pod
/// [`DENSE_STRIP_PODS`]th of the strip (a fuller node's strip is scaled down to fit), so
/// a glance across thousands of cells shows where the pods are and which are not Ready.
/// The count is in the tooltip only.
pub fn dense(strip: &Rect, n: &NodeView, marks: Marks, lang: Lang) -> Summary {
    let mut s = summary(strip, n, marks, lang);
    let unit = strip.w / s.total.max(DENSE_STRIP_PODS) as f64;
    let mut x = strip.x;
    for seg in &mut s.segs {
        seg.x = x;
        seg.w = unit * seg.count as f64;
        x += seg.w;
    }
    s.dense = true;
    s
}

/// The bar as markup (segments of states with no pod left out).
pub fn write(out: &mut String, s: &Summary) {
    let mut attrs = String::new();
    if let Some((n, ready)) = s.endpoints {
        let _ = write!(
            attrs,
            r#" data-endpoints="{n}" data-endpoints-ready="{ready}""#
        );
    }
    let _ = write!(
        out,
        r#"<g class="pod-summary{}" data-testid="pod-summary" data-node="{}" data-pods="{}"{attrs}><title>{}</title>"#,
        if s.endpoints.is_some() {
            " has-endpoints"
        } else {
            ""
        },
        escape(&s.node),
        s.total,
        escape(&s.title),
    );
    if s.endpoints.is_some() && !s.dense {
        rect(out, &s.ring(), 3.0, "summary-endpoints");
    }
    if !s.dense {
        rect(out, &s.bar, 2.0, "summary-track");
    }
    for seg in s.segs.iter().filter(|g| g.count > 0) {
        let _ = write!(
            out,
            r#"<rect class="summary-seg {c}" data-class="{c}" data-count="{k}" x="{x:.1}" y="{y:.1}" width="{w:.1}" height="{h:.1}"/>"#,
            c = seg.class.as_str(),
            k = seg.count,
            x = seg.x,
            w = seg.w,
            y = s.bar.y,
            h = s.bar.h
        );
    }
    if s.dense {
        out.push_str("</g>");
        return;
    }
    let (x, y) = s.count_at();
    let _ = write!(
        out,
        r#"<text class="summary-count" x="{x:.1}" y="{y:.1}">{}</text></g>"#,
        s.total
    );
}

/// What changed between two summaries of one node's bar.
#[derive(Clone, Debug, PartialEq)]
pub enum Change {
    /// Nothing to do.
    None,
    /// Its elements differ (a state appeared or went, the ring came or went, the bar
    /// moved): the bar's markup is replaced.
    Rebuild,
    /// The same elements: these attributes and texts are set.
    Update(Vec<Set>),
}

/// One thing to set on a bar (element positions as [`write`] lays them out).
#[derive(Clone, Debug, PartialEq)]
pub enum Set {
    /// An attribute of the bar's `<g>`.
    Bar(&'static str, String),
    /// The tooltip's text.
    Title(String),
    /// An attribute of the `k`-th written segment.
    Seg(usize, &'static str, String),
    /// The count's text.
    Count(String),
}

/// The states written as segments, in order.
fn shape(s: &Summary) -> (Vec<PodClass>, bool, String, bool) {
    let classes = s
        .segs
        .iter()
        .filter(|g| g.count > 0)
        .map(|g| g.class)
        .collect();
    let bar = format!(
        "{:.1} {:.1} {:.1} {:.1}",
        s.bar.x, s.bar.y, s.bar.w, s.bar.h
    );
    (classes, s.endpoints.is_some(), bar, s.dense)
}

/// What to set on the bar drawn from `old` so it shows `new`.
pub fn changes(old: &Summary, new: &Summary) -> Change {
    if old == new {
        return Change::None;
    }
    if old.node != new.node || shape(old) != shape(new) {
        return Change::Rebuild;
    }
    let mut out = Vec::new();
    if old.total != new.total {
        out.push(Set::Bar("data-pods", new.total.to_string()));
        if !new.dense {
            out.push(Set::Count(new.total.to_string()));
        }
    }
    if let (Some(a), Some(b)) = (old.endpoints, new.endpoints) {
        if a.0 != b.0 {
            out.push(Set::Bar("data-endpoints", b.0.to_string()));
        }
        if a.1 != b.1 {
            out.push(Set::Bar("data-endpoints-ready", b.1.to_string()));
        }
    }
    if old.title != new.title {
        out.push(Set::Title(new.title.clone()));
    }
    let written = |s: &Summary| {
        s.segs
            .iter()
            .filter(|g| g.count > 0)
            .copied()
            .collect::<Vec<_>>()
    };
    for (k, (a, b)) in written(old).iter().zip(written(new)).enumerate() {
        if a.count != b.count {
            out.push(Set::Seg(k, "data-count", b.count.to_string()));
        }
        if format!("{:.1}", a.x) != format!("{:.1}", b.x) {
            out.push(Set::Seg(k, "x", format!("{:.1}", b.x)));
        }
        if format!("{:.1}", a.w) != format!("{:.1}", b.w) {
            out.push(Set::Seg(k, "width", format!("{:.1}", b.w)));
        }
    }
    Change::Update(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::svg::tests::{node, pod_view};
    use wasm_bindgen_test::wasm_bindgen_test;

    const BAR: Rect = Rect {
        x: 10.0,
        y: 20.0,
        w: 96.0,
        h: 6.0,
    };

    fn bar_of(statuses: &[&str], marks: Marks) -> Summary {
        let pods = statuses
            .iter()
            .enumerate()
            .map(|(j, s)| pod_view(&format!("w-{j}"), "node-1", s))
            .collect();
        summary(&BAR, &node("node-1", pods), marks, Lang::En)
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn should_give_every_state_a_segment_as_wide_as_its_share() {
        let eps: std::collections::BTreeMap<String, bool> =
            [("default/w-0".to_string(), true)].into();
        let marks = Marks {
            selected: None,
            endpoints: Some(&eps),
        };
        let s = bar_of(
            &["Running", "Running", "Running", "ContainerCreating"],
            marks,
        );
        assert_eq!(s.total, 4);
        assert_eq!(s.segs.len(), PodClass::ALL.len());
        let seg = |c: PodClass| s.segs.iter().find(|g| g.class == c).map(|g| (g.count, g.w));
        assert_eq!(
            seg(PodClass::Ready),
            Some((3, 60.0)),
            "3 of 4 of the 80 px left of the count"
        );
        assert_eq!(seg(PodClass::Creating), Some((1, 20.0)));
        assert_eq!(seg(PodClass::Failed), Some((0, 0.0)));
        for w in s.segs.windows(2) {
            assert_eq!(w[1].x, w[0].x + w[0].w, "segments follow each other");
        }
        assert_eq!(s.endpoints, Some((1, 1)));
        assert_eq!(
            s.title,
            "node-1: 4 pods · 1 Creating · 3 Ready · 1 endpoints (1 ready)"
        );
        let mut markup = String::new();
        write(&mut markup, &s);
        assert_eq!(
            markup.matches("summary-seg ").count(),
            2,
            "empty states are not written"
        );
        assert!(markup.contains(r#"data-endpoints="1" data-endpoints-ready="1""#));
        let empty = summary(&BAR, &node("node-2", vec![]), Marks::default(), Lang::En);
        assert!(
            empty.segs.iter().all(|g| g.w == 0.0),
            "no pods, no NaN widths"
        );
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn should_set_only_what_changed_and_rebuild_when_the_elements_differ() {
        let none = Marks::default();
        let a = bar_of(&["Running", "ContainerCreating"], none);
        assert_eq!(changes(&a, &a), Change::None);
        // One more Ready pod: the same two segments, resized and recounted.
        let b = bar_of(&["Running", "ContainerCreating", "Running"], none);
        let Change::Update(sets) = changes(&a, &b) else {
            panic!("the same elements are updated in place");
        };
        assert!(sets.contains(&Set::Bar("data-pods", "3".into())));
        assert!(sets.contains(&Set::Count("3".into())));
        assert!(sets.contains(&Set::Title(b.title.clone())));
        // Creating is written first (legend order), Ready second.
        assert!(sets.contains(&Set::Seg(1, "data-count", "2".into())));
        assert!(sets.contains(&Set::Seg(0, "width", "26.7".into())));
        assert!(
            !sets
                .iter()
                .any(|s| matches!(s, Set::Seg(0, "data-count", _))),
            "an unchanged count is not set"
        );
        // A state appears: new elements.
        let c = bar_of(&["Running", "ContainerCreating", "Terminating"], none);
        assert_eq!(changes(&b, &c), Change::Rebuild);
        // Applying the update to a's markup gives b's markup.
        let (mut from, mut to) = (String::new(), String::new());
        write(&mut from, &a);
        write(&mut to, &b);
        assert_eq!(from.matches("<rect").count(), to.matches("<rect").count());
    }

    /// A dense strip has no count element: an update never sets one (the layer would set
    /// the last segment's text instead), and a strip never becomes a bar in place.
    #[wasm_bindgen_test(unsupported = test)]
    fn should_update_a_dense_strip_without_a_count() {
        let n = |statuses: &[&str]| {
            let pods = statuses
                .iter()
                .enumerate()
                .map(|(j, s)| pod_view(&format!("w-{j}"), "node-1", s))
                .collect();
            node("node-1", pods)
        };
        let none = Marks::default();
        let a = dense(&BAR, &n(&["Running"]), none, Lang::En);
        let b = dense(&BAR, &n(&["Running", "Running"]), none, Lang::En);
        let Change::Update(sets) = changes(&a, &b) else {
            panic!("the same elements are updated in place");
        };
        assert!(!sets.iter().any(|s| matches!(s, Set::Count(_))), "{sets:?}");
        assert!(
            sets.contains(&Set::Seg(0, "width", "6.4".into())),
            "2 × 96/30"
        );
        let bar = bar_of(&["Running", "Running"], none);
        assert_eq!(changes(&b, &bar), Change::Rebuild);
    }
}
