//! The cluster diagram: the SVG layers from [`crate::svg`] over the session's read model,
//! the node count, the legend, and the selected pod's details.

use kubeloop_sim::time::Time;
use kubeloop_sim::view::{pod_class, ComponentView, NodeView, PodClass, PodView};
use leptos::prelude::*;
use wasm_bindgen::JsCast;

use super::use_ui;
use crate::geometry::{self, WIDTH};
use crate::i18n::Key;
use crate::{svg, svg_summary};

/// Node counts offered by the picker.
pub const NODE_COUNTS: [u32; 8] = [1, 3, 5, 8, 20, 50, 100, 300];

/// What the diagram draws, compared to skip redraws when nothing changed.
#[derive(Clone, Debug, PartialEq, Default)]
struct Cluster {
    /// Virtual time, whole seconds (eviction countdowns).
    now: Time,
    components: Vec<ComponentView>,
    nodes: Vec<std::sync::Arc<NodeView>>,
    pending: Vec<std::sync::Arc<PodView>>,
}

fn legend_key(c: PodClass) -> Key {
    match c {
        PodClass::Unscheduled => Key::ClassUnscheduled,
        PodClass::Creating => Key::ClassCreating,
        PodClass::Ready => Key::ClassReady,
        PodClass::NotReady => Key::ClassNotReady,
        PodClass::Failed => Key::ClassFailed,
        PodClass::Succeeded => Key::ClassSucceeded,
        PodClass::Terminating => Key::ClassTerminating,
    }
}

/// The `namespace/name` of the pod an event happened on.
fn pod_of(target: Option<web_sys::EventTarget>) -> Option<String> {
    target
        .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
        .and_then(|e| e.closest("[data-pod]").ok().flatten())
        .and_then(|e| e.get_attribute("data-pod"))
}

/// Focuses the first element matching `selector` (HTML or SVG), if any.
pub fn focus_selector(selector: &str) {
    let Some(el) = document().query_selector(selector).ok().flatten() else {
        return;
    };
    match el.dyn_into::<web_sys::HtmlElement>() {
        Ok(h) => {
            let _ = h.focus();
        }
        Err(el) => {
            if let Ok(svg) = el.dyn_into::<web_sys::SvgElement>() {
                let _ = svg.focus();
            }
        }
    }
}

/// Escapes a value for a CSS attribute selector in double quotes.
pub fn css_escape(s: &str) -> String {
    s.replace('\\', "\\\\").replace('"', "\\\"")
}

/// A cell's key: its place and a hash of its markup, so a changed cell is a new key.
fn cell_key(i: usize, markup: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    i.hash(&mut h);
    markup.hash(&mut h);
    h.finish()
}

/// The diagram pane.
#[component]
pub fn Diagram() -> impl IntoView {
    let ui = use_ui();
    let cluster = Memo::new(move |_| {
        ui.rev.track();
        ui.session
            .try_update_value(|s| {
                let v = s.view();
                Cluster {
                    now: v.now / 1000 * 1000,
                    components: v.components.clone(),
                    nodes: v.nodes.clone(),
                    pending: v.pending.clone(),
                }
            })
            .unwrap_or_default()
    });
    let layout = Memo::new(move |_| {
        cluster.with(|c| {
            geometry::layout(
                c.nodes.len(),
                c.nodes.iter().map(|n| n.pods.len()).max().unwrap_or(0),
            )
        })
    });
    let wires = Memo::new(move |_| layout.with(svg::wires));
    let control =
        Memo::new(move |_| cluster.with(|c| svg::control_plane(&c.components, ui.lang.get())));
    // While a pod is selected, its scheduling verdict per node (only results the
    // scheduler wrote: see Session::scheduler_wrote).
    let verdicts = Memo::new(move |_| {
        ui.rev.track();
        let sel = ui.selected.get()?;
        let (ns, name) = sel.split_once('/')?;
        ui.session
            .try_update_value(|s| {
                if !s.scheduler_wrote(ns, name) {
                    return None;
                }
                let sched = crate::inspect::inspect_pod(s.world(), ns, name, true).scheduling?;
                let best = sched.best();
                Some(
                    sched
                        .nodes
                        .iter()
                        .map(|n| {
                            (
                                n.node.clone(),
                                svg::Verdict {
                                    passed: n.passed,
                                    reason: n
                                        .failing
                                        .iter()
                                        .map(|(p, r)| format!("{p}: {r}"))
                                        .collect::<Vec<_>>()
                                        .join("; "),
                                    total: n.total,
                                    best,
                                    winner: sched.selected.as_deref() == Some(n.node.as_str()),
                                },
                            )
                        })
                        .collect::<std::collections::BTreeMap<_, _>>(),
                )
            })
            .flatten()
    });
    // While a Service is picked, its endpoints' pods (pod → ready).
    let endpoints = Memo::new(move |_| {
        ui.rev.track();
        super::services::picked_endpoints(ui)
    });
    // Two keyed cells per node (its box; its pods and verdict) and one for the tray: a
    // frame replaces only the cells whose markup changed, however many nodes there are.
    // A compact node's pods are its bar, kept in place in their own layer (`bars`).
    let cells = Memo::new(move |_| {
        let selected = ui.selected.get();
        let lang = ui.lang.get();
        let verdicts = verdicts.get();
        let endpoints = endpoints.get();
        let marks = svg::Marks {
            selected: selected.as_deref(),
            endpoints: endpoints.as_ref(),
        };
        cluster.with(|c| {
            layout.with(|l| {
                let mut out: Vec<(u64, String)> = c
                    .nodes
                    .iter()
                    .enumerate()
                    .flat_map(|(i, n)| {
                        let v = verdicts.as_ref().and_then(|v| v.get(&n.name));
                        if l.tier.aggregated() {
                            [
                                svg::box_cell(l, i, n, c.now, lang),
                                svg::verdict_cell(l, i, v),
                            ]
                        } else {
                            svg::node_cell_parts(l, i, n, c.now, marks, v, lang)
                        }
                    })
                    .chain(std::iter::once(svg::tray(&c.pending, marks, lang)))
                    .enumerate()
                    // An empty cell (a verdict band with no pod followed) is no element;
                    // its place still counts in the keys, so one appearing moves nothing.
                    .filter(|(_, m)| !m.is_empty())
                    .map(|(i, m)| (cell_key(i, &m), m))
                    .collect();
                out.shrink_to_fit();
                out
            })
        })
    });
    let bars = Memo::new(move |_| {
        let lang = ui.lang.get();
        let endpoints = endpoints.get();
        let marks = svg::Marks {
            selected: None,
            endpoints: endpoints.as_ref(),
        };
        cluster.with(|c| {
            layout.with(|l| {
                let dense = l.tier == geometry::Tier::Dense;
                let bar = |(i, n): (usize, &std::sync::Arc<NodeView>)| {
                    let r = l.summary(i)?;
                    Some(if dense {
                        svg_summary::dense(&r, n, marks, lang)
                    } else {
                        svg_summary::summary(&r, n, marks, lang)
                    })
                };
                c.nodes
                    .iter()
                    .enumerate()
                    .filter_map(bar)
                    .collect::<Vec<_>>()
            })
        })
    });
    let bars_layer: NodeRef<leptos::svg::G> = NodeRef::new();
    super::bars::keep_in_place(bars, bars_layer);
    let flights = move || {
        ui.frame.track();
        if ui.reduced_motion {
            // No travelling dots: the message log below still lists every message.
            return String::new();
        }
        layout.with(|l| {
            ui.session
                .try_with_value(|s| svg::flights(l, s.traffic().dots()))
                .unwrap_or_default()
        })
    };
    let node_count = move || cluster.with(|c| c.nodes.len());
    // The user's pods and how many are Ready (tests and the benchmark read these: at
    // many nodes pods are drawn as bars, not one by one).
    let user_pods = Memo::new(move |_| {
        cluster.with(|c| {
            let mine = || {
                c.nodes
                    .iter()
                    .flat_map(|n| &n.pods)
                    .chain(&c.pending)
                    .filter(|p| !kubeloop_sim::view::is_system_namespace(&p.namespace))
            };
            (
                mine().count(),
                mine().filter(|p| pod_class(p) == PodClass::Ready).count(),
            )
        })
    });
    // The message log is under the fold: held back while off screen and behind.
    let log_root: NodeRef<leptos::html::Div> = NodeRef::new();
    let log_rev = super::on_screen::gated(
        super::on_screen::on_screen(log_root),
        ui.behind,
        move || ui.rev.get(),
    );
    let log = Memo::new(move |_| {
        // Read, not only tracked: the gate is a memo (see `on_screen::gated`).
        log_rev.get();
        let names: Vec<String> = cluster.with(|c| c.nodes.iter().map(|n| n.name.clone()).collect());
        ui.session
            .try_with_value(|s| {
                s.traffic()
                    .log()
                    .map(|a| {
                        (
                            a.id,
                            a.kind.as_str(),
                            format!(
                                "{} → {}",
                                svg::actor_name(a.from, &names),
                                svg::actor_name(a.to, &names)
                            ),
                            a.label.clone(),
                            a.sent,
                        )
                    })
                    .collect::<Vec<_>>()
            })
            .unwrap_or_default()
    });
    let pick = move |ev: leptos::ev::MouseEvent| {
        let pod = ev
            .target()
            .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
            .and_then(|e| e.closest("[data-pod]").ok().flatten())
            .and_then(|e| e.get_attribute("data-pod"));
        ui.selected.update(|s| {
            *s = if pod.is_some() && *s == pod {
                None
            } else {
                pod
            }
        });
    };
    // The keyboard: Enter or Space on a focused pod selects it and moves focus to its
    // card. A cell redrawn under the focus (the pod changed state) gets it back.
    let focused_pod = StoredValue::new(None::<String>);
    let on_key = move |ev: leptos::ev::KeyboardEvent| {
        if !matches!(ev.key().as_str(), "Enter" | " ") {
            return;
        }
        let Some(pod) = pod_of(ev.target()) else {
            return;
        };
        ev.prevent_default();
        let open = ui.selected.get_untracked().as_deref() != Some(pod.as_str());
        ui.selected.set(open.then_some(pod));
        if open {
            request_animation_frame(|| focus_selector("[data-testid=pod-details]"));
        }
    };
    let on_focus = move |ev: leptos::ev::FocusEvent| {
        if let Some(pod) = pod_of(ev.target()) {
            focused_pod.set_value(Some(pod));
        }
    };
    let on_blur = move |ev: leptos::ev::FocusEvent| {
        // Focus went somewhere else on the page (not: the pod's cell was redrawn).
        if ev.related_target().is_some() {
            focused_pod.set_value(None);
        }
    };
    Effect::new(move |_| {
        cells.track();
        request_animation_frame(move || {
            let Some(pod) = focused_pod.try_get_value().flatten() else {
                return;
            };
            let lost = document()
                .active_element()
                .is_none_or(|e| e.tag_name().eq_ignore_ascii_case("body"));
            if lost {
                focus_selector(&format!("[data-pod=\"{}\"]", css_escape(&pod)));
            }
        });
    });
    let set_nodes = move |ev: leptos::ev::Event| {
        if let Ok(n) = event_target_value(&ev).parse::<u32>() {
            ui.update(|s| s.set_node_count(n));
            ui.selected.set(None);
        }
    };
    view! {
        <div class="pane-head">
            <span class="pane-title">{move || ui.t(Key::Cluster)}</span>
            <label class="nodes-pick">
                {move || ui.t(Key::Nodes)}
                <select class="btn select small" data-testid="node-count" on:change=set_nodes
                    prop:value=move || node_count().to_string()>
                    {move || {
                        let n = node_count() as u32;
                        let mut counts = NODE_COUNTS.to_vec();
                        if !counts.contains(&n) {
                            counts.push(n);
                            counts.sort_unstable();
                        }
                        counts.into_iter().map(|c| view! { <option value=c.to_string() selected=c == n>{c}</option> }).collect_view()
                    }}
                </select>
            </label>
        </div>
        <div class="diagram-scroll">
            <div class="diagram-stack">
            <svg
                data-testid="cluster-diagram"
                class="cluster-diagram"
                role="group"
                aria-label=move || ui.t(Key::Cluster)
                data-user-pods=move || user_pods.get().0
                data-user-ready=move || user_pods.get().1
                viewBox=move || format!("0 0 {WIDTH} {:.0}", layout.get().height)
                preserveAspectRatio="xMidYMin meet"
                on:click=pick
                on:keydown=on_key
                on:focusin=on_focus
                on:focusout=on_blur
            >
                <g class="layer-wires" inner_html=move || wires.get()></g>
                <g class="layer-control" inner_html=move || control.get()></g>
                <g class="layer-nodes">
                    <For each=move || cells.get() key=|c| c.0 let:c>
                        <g class="cell" inner_html=c.1></g>
                    </For>
                </g>
                <g class="layer-bars" node_ref=bars_layer></g>
            </svg>
            // The dots move every frame: their own SVG (its own compositing layer), so a
            // frame repaints them, not the whole cluster.
            <svg class="flights-overlay" aria-hidden="true"
                viewBox=move || format!("0 0 {WIDTH} {:.0}", layout.get().height)
                preserveAspectRatio="xMidYMin meet">
                <g class="layer-flights" inner_html=flights></g>
            </svg>
            </div>
            <super::services::ServicesStrip/>
            <div class="legend" data-testid="legend">
                {PodClass::ALL.into_iter().map(|c| view! {
                    <span class="legend-item"><span class=format!("swatch {}", c.as_str())></span>{move || ui.t(legend_key(c))}</span>
                }).collect_view()}
            </div>
            <super::timeline::TimelinePanel/>
            <super::proxy::ProxyPanel/>
            <div class="msglog" data-testid="message-log" aria-live="off" node_ref=log_root>
                <div class="msglog-head">{move || ui.t(Key::Messages)}</div>
                <For each=move || log.get() key=|m| m.0 let:m>
                    <div class="msg">
                        <span class=format!("dot {}", m.1)></span>
                        <span class="msg-t mono">{super::header::clock_text(m.4)}</span>
                        <span class="msg-route">{m.2}</span>
                        <span class="msg-label mono">{m.3}</span>
                    </div>
                </For>
            </div>
        </div>
        <super::inspector::PodDetails/>
    }
}
