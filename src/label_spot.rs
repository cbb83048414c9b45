//! Where the label of a message in flight goes: beside its dot, on a side where it covers
//! no box of the diagram (a label drawn over kube-controller-manager's name hid it).

use crate::geometry::{
    Layout, Point, Rect, APISERVER, CONTROLLER_MANAGER, ETCD, KUBECTL, SCHEDULER, TRAY, WIDTH,
};

/// Width of one character of a flight label (10 px monospace) in view-box units.
const CHAR_W: f64 = 6.1;
/// Height of a label line above its baseline, and below it.
const ASCENT: f64 = 9.0;
const DESCENT: f64 = 3.0;
/// Distance from the dot.
const OFFSET: f64 = 8.0;

/// A label's spot: its baseline point, whether the text ends there (`text-anchor: end`)
/// and how many of its characters fit.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Spot {
    /// Where the text is anchored.
    pub at: Point,
    /// Anchored at the text's end (the label lies left of the dot).
    pub end: bool,
    /// Characters that fit there (fewer than asked: shorten the label with `…`).
    pub chars: usize,
}

/// The nearest spot beside the dot (right, then left; just above, level, below, then a
/// line further out each way) where a label of `chars` characters stays in the view and
/// covers no box; else the one with the most room (the label is then shortened to fit).
pub fn label_spot(layout: &Layout, dot: Point, chars: usize) -> Spot {
    let boxes: Vec<Rect> = [
        KUBECTL,
        ETCD,
        APISERVER,
        CONTROLLER_MANAGER,
        SCHEDULER,
        TRAY,
    ]
    .into_iter()
    .chain(layout.nodes.iter().copied())
    .collect();
    let mut best: Option<Spot> = None;
    for dy in [-7.0, 4.0, 16.0, -19.0, 28.0, -31.0, 40.0] {
        let baseline = dot.y + dy;
        for end in [false, true] {
            let x = if end { dot.x - OFFSET } else { dot.x + OFFSET };
            let room = room(&boxes, x, baseline, end);
            let fit = ((room / CHAR_W).floor() as usize).min(chars);
            let spot = Spot {
                at: Point { x, y: baseline },
                end,
                chars: fit,
            };
            if fit == chars {
                return spot;
            }
            if best.is_none_or(|b| fit > b.chars) {
                best = Some(spot);
            }
        }
    }
    best.unwrap_or(Spot {
        at: dot,
        end: false,
        chars: 0,
    })
}

/// How far a line of text at `baseline` can run from `x` (leftwards when `end`) before
/// it meets a box or the edge of the view.
fn room(boxes: &[Rect], x: f64, baseline: f64, end: bool) -> f64 {
    let (top, bottom) = (baseline - ASCENT, baseline + DESCENT);
    let mut limit = if end { x } else { WIDTH - x };
    for b in boxes {
        if b.y >= bottom || b.y + b.h <= top {
            continue;
        }
        let gap = if end { x - (b.x + b.w) } else { b.x - x };
        let inside = b.x <= x && x <= b.x + b.w;
        if inside {
            return 0.0;
        }
        if gap >= 0.0 {
            limit = limit.min(gap);
        }
    }
    limit.max(0.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geometry::{layout, point_along};
    use kubeloop_sim::Actor;
    use wasm_bindgen_test::wasm_bindgen_test;

    /// The area two rectangles share.
    fn overlap(a: &Rect, b: &Rect) -> f64 {
        let w = (a.x + a.w).min(b.x + b.w) - a.x.max(b.x);
        let h = (a.y + a.h).min(b.y + b.h) - a.y.max(b.y);
        w.max(0.0) * h.max(0.0)
    }

    fn covers_a_box(layout: &Layout, s: Spot) -> bool {
        let w = s.chars as f64 * CHAR_W;
        let rect = Rect {
            x: if s.end { s.at.x - w } else { s.at.x },
            y: s.at.y - ASCENT,
            w,
            h: ASCENT + DESCENT,
        };
        [KUBECTL, ETCD, APISERVER, CONTROLLER_MANAGER, SCHEDULER]
            .iter()
            .chain(layout.nodes.iter())
            .any(|b| overlap(&rect, b) > 0.0)
    }

    #[test]
    #[wasm_bindgen_test]
    fn an_etcd_write_label_leaves_the_controller_manager_readable() {
        let l = layout(3, 5);
        let label = "Txn Put /registry/events/default/nginx-6";
        for t in [0.2, 0.5, 0.8] {
            let dot = point_along(&l.route(Actor::ApiServer, Actor::Etcd), t);
            let spot = label_spot(&l, dot, label.len());
            assert!(!covers_a_box(&l, spot), "{t}: {spot:?}");
            assert!(spot.chars >= 20, "most of it is still readable: {spot:?}");
        }
    }

    #[test]
    #[wasm_bindgen_test]
    fn a_label_stays_right_of_its_dot_where_there_is_room() {
        let l = layout(3, 5);
        let dot = Point { x: 120.0, y: 200.0 };
        assert_eq!(
            label_spot(&l, dot, 10),
            Spot {
                at: Point { x: 128.0, y: 193.0 },
                end: false,
                chars: 10
            }
        );
    }
}
