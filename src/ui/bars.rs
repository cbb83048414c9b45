//! Compact nodes' pod bars, kept in place: the layer holds one bar per node, and a
//! redraw sets on each only what [`svg_summary::changes`] says changed (segment widths,
//! counts, the tooltip), replacing a bar's markup only when its elements differ. A
//! scale-up changes every node's count at every redraw; replacing a hundred bars was
//! most of the diagram's redraw.

use leptos::prelude::*;
use wasm_bindgen::JsCast;

use crate::svg_summary::{self, Change, Set, Summary};

/// Keeps the bars drawn in `layer` (an element the view leaves empty) equal to `bars`.
pub fn keep_in_place(bars: Memo<Vec<Summary>>, layer: NodeRef<leptos::svg::G>) {
    let drawn: StoredValue<Vec<Summary>, LocalStorage> = StoredValue::new_local(Vec::new());
    Effect::new(move |_| {
        let Some(layer) = layer.get() else { return };
        let layer: &web_sys::Element = layer.unchecked_ref();
        bars.with(|new| {
            drawn.update_value(|old| {
                if !update(layer, old, new) {
                    layer.set_inner_html(&markup(new));
                }
                old.clone_from(new);
            });
        });
    });
}

fn markup(bars: &[Summary]) -> String {
    let mut out = String::new();
    for b in bars {
        svg_summary::write(&mut out, b);
    }
    out
}

/// Updates the drawn bars in place; false when they must all be redrawn.
fn update(layer: &web_sys::Element, old: &[Summary], new: &[Summary]) -> bool {
    let children = layer.children();
    if old.len() != new.len() || children.length() as usize != new.len() {
        return false;
    }
    for (i, (a, b)) in old.iter().zip(new).enumerate() {
        let Some(el) = children.item(i as u32) else {
            return false;
        };
        match svg_summary::changes(a, b) {
            Change::None => {}
            Change::Rebuild => el.set_outer_html(&markup(std::slice::from_ref(b))),
            Change::Update(sets) => {
                for set in sets {
                    apply(&el, set);
                }
            }
        }
    }
    true
}

fn apply(bar: &web_sys::Element, set: Set) {
    match set {
        Set::Bar(name, value) => {
            let _ = bar.set_attribute(name, &value);
        }
        Set::Title(text) => {
            if let Some(t) = bar.first_element_child() {
                t.set_text_content(Some(&text));
            }
        }
        Set::Count(text) => {
            if let Some(t) = bar.last_element_child() {
                t.set_text_content(Some(&text));
            }
        }
        Set::Seg(k, name, value) => {
            if let Some(seg) = bar.get_elements_by_class_name("summary-seg").item(k as u32) {
                let _ = seg.set_attribute(name, &value);
            }
        }
    }
}
