//! The proxy view under the diagram: for a picked node (else the node the last request
//! left from), kube-proxy's rules as a graph, the last request's path hop by hop, and the
//! raw `iptables-save` text with the rules that packet matched highlighted.

use std::sync::Arc;

use kubeloop_sim::view::proxy::{self as pv, Mark, PathOutcome, ProxyView, SaveRow};
use leptos::html;
use leptos::prelude::*;

use super::use_ui;
use crate::highlight::escape;
use crate::i18n::{t, Key, Lang};
use crate::proxy_svg;

/// What the panel shows, rebuilt only when its key moves (the node, when its kube-proxy
/// last wrote rules, the last request).
#[derive(Clone, Debug, Default)]
struct Shown {
    key: String,
    nodes: Vec<String>,
    node: String,
    view: Option<Arc<ProxyView>>,
}

impl PartialEq for Shown {
    fn eq(&self, other: &Shown) -> bool {
        self.key == other.key && self.nodes == other.nodes
    }
}

fn outcome_key(o: PathOutcome) -> Key {
    match o {
        PathOutcome::Answered => Key::OutcomeAnswered,
        PathOutcome::Rejected => Key::OutcomeRejected,
        PathOutcome::Dropped => Key::OutcomeDropped,
        PathOutcome::Timeout => Key::OutcomeTimeout,
        PathOutcome::Refused => Key::OutcomeRefused,
        PathOutcome::Unresolved => Key::OutcomeUnresolved,
    }
}

/// The `iptables-save` rows as markup: one span per line, marked as the packet used it.
fn save_markup(rows: &[SaveRow], lang: Lang) -> String {
    let mut out = String::new();
    // Lines the packet did not touch share one block per run: a few hundred rules
    // are then a handful of elements, not one each.
    let mut idle: Vec<&str> = Vec::new();
    let flush = |idle: &mut Vec<&str>, out: &mut String| {
        if !idle.is_empty() {
            out.push_str(&format!(
                r#"<span class="save-line idle" data-testid="save-line" data-mark="idle">{}</span>"#,
                escape(&idle.join("\n"))
            ));
            idle.clear();
        }
    };
    for r in rows {
        match r {
            SaveRow::Line { text, mark } if *mark == Mark::Idle => idle.push(text),
            SaveRow::Line { text, mark } => {
                flush(&mut idle, &mut out);
                let m = mark.as_str();
                out.push_str(&format!(
                    r#"<span class="save-line {m}" data-testid="save-line" data-mark="{m}">{}</span>"#,
                    escape(text)
                ));
            }
            SaveRow::Elided(n) => {
                flush(&mut idle, &mut out);
                out.push_str(&format!(
                    r#"<span class="save-line elided">{}</span>"#,
                    escape(&t(lang, Key::ProxyMoreLines).replace("{n}", &n.to_string()))
                ));
            }
        }
    }
    flush(&mut idle, &mut out);
    out
}

/// Tells one recorded request from the next.
fn path_key(p: Option<&kubeloop_sim::node::net::TrafficPath>) -> String {
    p.map(|p| {
        format!(
            "{}|{}|{}|{}|{}",
            p.at,
            p.from,
            p.url,
            p.hops.len(),
            p.outcome
        )
    })
    .unwrap_or_default()
}

/// Scrolls the first matched line to the upper third of the text box (not the page; the
/// box is `position: relative`, so lines' offsets are from its top). False if none is.
fn reveal_match(pre: &web_sys::HtmlElement) -> bool {
    use wasm_bindgen::JsCast;
    let Some(first) = pre.query_selector(".save-line.taken").ok().flatten() else {
        return false;
    };
    let Ok(line) = first.dyn_into::<web_sys::HtmlElement>() else {
        return false;
    };
    let top = line.offset_top() - pre.client_height() / 3;
    pre.set_scroll_top(top.max(0));
    true
}

/// The proxy panel.
#[component]
pub fn ProxyPanel() -> impl IntoView {
    let ui = use_ui();
    // A picked node holds until the next request: then the panel follows that request.
    let picked = RwSignal::new(None::<(String, String)>);
    let replay = RwSignal::new(0u32);
    let cache = StoredValue::new(Shown::default());
    let root: NodeRef<leptos::html::Section> = NodeRef::new();
    let rev = super::on_screen::gated(super::on_screen::on_screen(root), ui.behind, move || {
        ui.panels_rev.get()
    });
    let shown = Memo::new(move |_| {
        // Read, not only tracked: the gate is a memo (see `on_screen::gated`).
        rev.get();
        let picked = picked.get();
        ui.session
            .try_with_value(|s| {
                let w = s.world();
                let nodes = pv::node_names(w);
                let path = pv::last_path(w);
                let path_key = path_key(path);
                let node = picked
                    .filter(|(n, k)| nodes.contains(n) && *k == path_key)
                    .map(|(n, _)| n)
                    .or_else(|| path.map(|p| p.node.clone()))
                    .or_else(|| nodes.first().cloned())
                    .unwrap_or_default();
                let key = format!("{node}|{:?}|{path_key}", pv::rules_key(w, &node));
                let old = cache.get_value();
                if old.key == key && old.nodes == nodes {
                    return old;
                }
                let view = pv::snapshot(w, &node).map(|snap| Arc::new(pv::proxy_view(&snap, path)));
                let fresh = Shown {
                    key,
                    nodes,
                    node,
                    view,
                };
                cache.set_value(fresh.clone());
                fresh
            })
            .unwrap_or_default()
    });
    let graph = Memo::new(move |_| {
        shown.with(|s| {
            s.view
                .as_ref()
                .map(|v| (proxy_svg::graph(&v.graph), v.graph.height))
        })
    });
    let lane = Memo::new(move |_| {
        let n = replay.get();
        shown.with(|s| {
            let p = s.view.as_ref()?.path.as_ref()?;
            let svg = format!("<!--{n}-->{}", proxy_svg::lane(p, !ui.reduced_motion));
            Some((svg, proxy_svg::lane_height(p.steps.len())))
        })
    });
    let save = Memo::new(move |_| {
        let lang = ui.lang.get();
        shown.with(|s| s.view.as_ref().map(|v| save_markup(&v.save, lang)))
    });
    let pre = NodeRef::<html::Pre>::new();
    let reveal_key = Memo::new(move |_| {
        shown.with(|s| {
            let path = s
                .view
                .as_ref()
                .and_then(|v| v.path.as_ref())
                .map(|p| p.key());
            (s.node.clone(), path, s.view.is_some())
        })
    });
    // Once per request (and node): the text may arrive after the key, so each new text
    // tries again until a matched line was shown.
    let revealed = StoredValue::new(String::new());
    Effect::new(move |_| {
        let key = format!("{:?}", reveal_key.get());
        save.track();
        request_animation_frame(move || {
            if revealed.try_get_value().is_none_or(|r| r == key) {
                return;
            }
            if pre.get_untracked().is_some_and(|el| reveal_match(&el)) {
                revealed.set_value(key);
            }
        });
    });
    let node = move || shown.with(|s| s.node.clone());
    let on_pick = move |ev: leptos::ev::Event| {
        let now = ui
            .session
            .try_with_value(|s| path_key(pv::last_path(s.world())));
        picked.set(Some((event_target_value(&ev), now.unwrap_or_default())));
    };
    let head = move || {
        shown.with(|s| {
            let v = s.view.as_ref()?;
            let mode = v.mode.as_str();
            Some((mode, super::header::clock_text(v.synced_at)))
        })
    };
    let save_key = move || {
        if head().is_some_and(|h| h.0 == "nftables") {
            Key::ProxySaveNft
        } else {
            Key::ProxySave
        }
    };
    // A Memo of plain values: kube-proxy's periodic resyncs rebuild the view, but while
    // the request is the same its lane is not redrawn (that would restart the walk).
    let packet = Memo::new(move |_| {
        let lang = ui.lang.get();
        shown.with(|s| {
            let v = s.view.as_ref()?;
            let p = v.path.as_ref()?;
            let words = t(lang, outcome_key(p.outcome));
            let elsewhere = (!v.path_here).then(|| {
                let first = p
                    .steps
                    .iter()
                    .find_map(|st| st.node.clone())
                    .unwrap_or_default();
                t(lang, Key::ProxyElsewhere).replace("{node}", &first)
            });
            Some((
                p.outcome.as_str(),
                format!("{} → {} · {words}", p.from, p.url),
                p.outcome_text.clone(),
                elsewhere,
            ))
        })
    });
    // Wide: the panel over the page, the graph and the rules text side by side.
    let wide = RwSignal::new(false);
    let on_key = move |ev: leptos::ev::KeyboardEvent| {
        if ev.key() == "Escape" && wide.get_untracked() {
            ev.stop_propagation();
            wide.set(false);
        }
    };
    view! {
        <section class="proxy" class:wide=move || wide.get() data-testid="proxy-view"
            aria-labelledby="proxy-title" on:keydown=on_key node_ref=root>
            <div class="proxy-head">
                <h2 class="pane-title" id="proxy-title">{move || ui.t(Key::ProxyTitle)}</h2>
                <label class="nodes-pick">
                    {move || ui.t(Key::Node)}
                    <select class="btn select small" data-testid="proxy-node" on:change=on_pick
                        prop:value=node>
                        {move || {
                            let current = node();
                            shown.with(|s| s.nodes.clone()).into_iter().map(|n| {
                                let sel = n == current;
                                let label = n.clone();
                                view! { <option value=n selected=sel>{label}</option> }
                            }).collect_view()
                        }}
                    </select>
                </label>
                {move || head().map(|(mode, at)| view! {
                    <span class="pill-text" data-testid="proxy-mode">{format!("{} {mode}", ui.t(Key::ProxyMode))}</span>
                    <span class="proxy-synced mono">{format!("{} {at}", ui.t(Key::ProxySynced))}</span>
                })}
                <button class="btn small proxy-wide" data-testid="proxy-wide"
                    aria-pressed=move || wide.get().to_string()
                    on:click=move |_| wide.update(|w| *w = !*w)>
                    {move || if wide.get() { ui.t(Key::ProxyWideClose) } else { ui.t(Key::ProxyWide) }}
                </button>
            </div>
            {move || match packet.get() {
                None => view! { <p class="proxy-note" data-testid="packet-none">{move || ui.t(Key::ProxyNoPacket)}</p> }.into_any(),
                Some((outcome, line, detail, elsewhere)) => view! {
                    <div class="proxy-packet" data-testid="packet-path" data-outcome=outcome>
                        <div class="proxy-packet-head">
                            <span class="label">{move || ui.t(Key::ProxyLastPacket)}</span>
                            <span class=format!("packet-outcome mono {outcome}") data-testid="packet-outcome" title=detail.clone()>{line}</span>
                            <button class="btn small" data-testid="packet-replay" on:click=move |_| replay.update(|n| *n += 1)>
                                {move || ui.t(Key::ProxyReplay)}
                            </button>
                        </div>
                        <p class="proxy-note mono">{detail}</p>
                        {elsewhere.map(|e| view! { <p class="proxy-note">{e}</p> })}
                        {move || lane.get().map(|(svg, h)| view! {
                            <div class="proxy-scroll"><svg class="proxy-lane" data-testid="packet-lane" role="img"
                                aria-label=move || ui.t(Key::ProxyLastPacket)
                                viewBox=format!("0 0 {} {h:.0}", proxy_svg::LANE_WIDTH)
                                preserveAspectRatio="xMinYMin meet" inner_html=svg></svg></div>
                        })}
                    </div>
                }.into_any(),
            }}
            {move || match graph.get() {
                None => view! { <p class="proxy-note" data-testid="proxy-none">{move || ui.t(Key::ProxyNoRules)}</p> }.into_any(),
                Some((svg, h)) => view! {
                    <div class="proxy-body">
                        <figure class="proxy-graph-box">
                            <figcaption class="proxy-note">{move || match head().map(|h| h.0) { Some("ipvs") => ui.t(Key::ProxyGraphIpvs), Some("nftables") => ui.t(Key::ProxyGraphNft), _ => ui.t(Key::ProxyGraph) }}</figcaption>
                            <div class="proxy-scroll"><svg class="proxy-graph" data-testid="rule-graph" role="img"
                                aria-label=move || ui.t(Key::ProxyShown).replace("{node}", &node())
                                viewBox=format!("0 0 {} {h:.0}", pv::GRAPH_WIDTH)
                                preserveAspectRatio="xMinYMin meet" inner_html=svg></svg></div>
                        </figure>
                        <figure class="proxy-save-box">
                            <figcaption class="proxy-note">
                                <span class="mono">{move || ui.t(save_key()).replace("{node}", &node())}</span>
                                " · "{move || ui.t(Key::ProxyMatched)}
                            </figcaption>
                            <pre class="proxy-save mono" data-testid="iptables-save" tabindex="0" node_ref=pre
                                aria-label=move || ui.t(save_key()).replace("{node}", &node())
                                inner_html=move || save.get().unwrap_or_default()></pre>
                        </figure>
                    </div>
                }.into_any(),
            }}
        </section>
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasm_bindgen_test::wasm_bindgen_test;

    fn line(text: &str, mark: Mark) -> SaveRow {
        SaveRow::Line {
            text: text.to_string(),
            mark,
        }
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn should_mark_the_packets_rules_and_keep_the_rest_as_text_runs() {
        let rows = vec![
            line("*nat", Mark::Idle),
            line(":KUBE-SERVICES - [0:0]", Mark::Idle),
            line(
                "-A KUBE-SERVICES -d 10.96.0.10/32 -j KUBE-SVC-X",
                Mark::Taken,
            ),
            line(
                "-A KUBE-SVC-X -m statistic --probability 0.5 -j A",
                Mark::Tested,
            ),
            line("-A A -j DNAT --to-destination 10.244.1.2:80", Mark::Idle),
            line("COMMIT <end>", Mark::Idle),
        ];
        let html = save_markup(&rows, Lang::En);
        assert_eq!(html.matches("<span").count(), 4, "{html}");
        assert_eq!(html.matches(r#"data-mark="idle""#).count(), 2);
        assert!(html.contains(
            r#"data-mark="idle">*nat
:KUBE-SERVICES - [0:0]</span>"#
        ));
        assert!(html.contains(r#"class="save-line taken""#));
        assert!(html.contains(r#"class="save-line tested""#));
        assert!(html.contains("COMMIT &lt;end&gt;"), "text is escaped");
    }
}
