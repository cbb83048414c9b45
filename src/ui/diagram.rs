//! The cluster diagram: the SVG layers from [`crate::svg`] over the session's read model,
//! the node count, the legend, and the selected pod's details.

use kubeloop_sim::view::{ComponentView, NodeView, PodClass, PodView};
use leptos::prelude::*;
use wasm_bindgen::JsCast;

use super::use_ui;
use crate::geometry::{self, WIDTH};
use crate::i18n::Key;
use crate::svg;

/// Node counts offered by the picker.
pub const NODE_COUNTS: [u32; 8] = [1, 3, 5, 8, 20, 50, 100, 300];

/// What the diagram draws, compared to skip redraws when nothing changed.
#[derive(Clone, Debug, PartialEq, Default)]
struct Cluster {
    components: Vec<ComponentView>,
    nodes: Vec<NodeView>,
    pending: Vec<PodView>,
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

/// The diagram pane.
#[component]
pub fn Diagram() -> impl IntoView {
    let ui = use_ui();
    let cluster = Memo::new(move |_| {
        ui.rev.track();
        ui.session
            .try_update_value(|s| {
                let v = s.view();
                Cluster { components: v.components.clone(), nodes: v.nodes.clone(), pending: v.pending.clone() }
            })
            .unwrap_or_default()
    });
    let layout = Memo::new(move |_| cluster.with(|c| geometry::layout(c.nodes.len(), c.nodes.iter().map(|n| n.pods.len()).max().unwrap_or(0))));
    let wires = Memo::new(move |_| layout.with(svg::wires));
    let control = Memo::new(move |_| cluster.with(|c| svg::control_plane(&c.components, ui.lang.get())));
    let nodes = Memo::new(move |_| cluster.with(|c| layout.with(|l| svg::nodes(l, &c.nodes, ui.lang.get()))));
    let pods = Memo::new(move |_| {
        let selected = ui.selected.get();
        cluster.with(|c| layout.with(|l| svg::pods(l, &c.nodes, &c.pending, selected.as_deref(), ui.lang.get())))
    });
    let flights = move || {
        ui.frame.track();
        layout.with(|l| ui.session.try_with_value(|s| svg::flights(l, s.traffic().dots())).unwrap_or_default())
    };
    let node_count = move || cluster.with(|c| c.nodes.len());
    let pick = move |ev: leptos::ev::MouseEvent| {
        let pod = ev
            .target()
            .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
            .and_then(|e| e.closest("[data-pod]").ok().flatten())
            .and_then(|e| e.get_attribute("data-pod"));
        ui.selected.update(|s| *s = if pod.is_some() && *s == pod { None } else { pod });
    };
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
            <div class="legend" data-testid="legend">
                {PodClass::ALL.into_iter().map(|c| view! {
                    <span class="legend-item"><span class=format!("swatch {}", c.as_str())></span>{move || ui.t(legend_key(c))}</span>
                }).collect_view()}
            </div>
        </div>
        <div class="diagram-scroll">
            <svg
                data-testid="cluster-diagram"
                class="cluster-diagram"
                role="img"
                aria-label="cluster diagram"
                viewBox=move || format!("0 0 {WIDTH} {:.0}", layout.get().height)
                preserveAspectRatio="xMidYMin meet"
                style=move || format!("min-height: {:.0}px", layout.get().height * 0.5)
                on:click=pick
            >
                <g class="layer-wires" inner_html=move || wires.get()></g>
                <g class="layer-control" inner_html=move || control.get()></g>
                <g class="layer-nodes" inner_html=move || nodes.get()></g>
                <g class="layer-pods" inner_html=move || pods.get()></g>
                <g class="layer-flights" inner_html=flights></g>
            </svg>
        </div>
        <PodDetails/>
    }
}

/// The selected pod: status, node, IP, containers.
#[component]
fn PodDetails() -> impl IntoView {
    let ui = use_ui();
    let pod = Memo::new(move |_| {
        ui.rev.track();
        let sel = ui.selected.get()?;
        let (ns, name) = sel.split_once('/')?;
        ui.session
            .try_update_value(|s| {
                let v = s.view();
                v.nodes.iter().flat_map(|n| n.pods.iter()).chain(v.pending.iter()).find(|p| p.namespace == ns && p.name == name).cloned()
            })
            .flatten()
    });
    move || {
        pod.get().map(|p| {
            let class = kubeloop_sim::view::pod_class(&p);
            let describe = format!("kubectl describe pod {} -n {}", p.name, p.namespace);
            view! {
                <div class="pod-card" data-testid="pod-details">
                    <div class="pod-card-head">
                        <span class=format!("swatch {}", class.as_str())></span>
                        <strong class="mono">{p.name.clone()}</strong>
                        <span class="muted">{p.status.clone()}</span>
                        <span class="muted mono">{if p.node.is_empty() { "—".to_string() } else { p.node.clone() }}</span>
                        <span class="muted mono">{if p.ip.is_empty() { "<none>".to_string() } else { p.ip.clone() }}</span>
                        <button class="btn small" on:click=move |_| { ui.update(|s| s.submit(&describe)); }>"describe"</button>
                        <button class="btn small ghost" on:click=move |_| ui.selected.set(None)>"×"</button>
                    </div>
                    <div class="pod-card-containers">
                        {p.containers.iter().map(|c| view! {
                            <span class="container mono">
                                {format!("{} · {}{}{}", c.name, c.state, if c.reason.is_empty() { String::new() } else { format!(" ({})", c.reason) }, if c.restarts > 0 { format!(" · {} restarts", c.restarts) } else { String::new() })}
                            </span>
                        }).collect_view()}
                    </div>
                </div>
            }
        })
    }
}
