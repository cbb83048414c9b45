//! The timeline under the diagram: a density strip and a scrubber over the run, the span
//! to show (all of it down to 100 ms), filters (component, object, heartbeats, "follow
//! this pod") and the messages of the span; picking a moment shows the cluster as it was
//! then (the session rebuilds it), with a bar saying so and "Back to live".
//! The lists are `kubeloop_sim::view::timeline`'s; this only draws them.

use kubeloop_sim::time::{format_duration, Time};
use kubeloop_sim::view::timeline::{actor_name, span_around, Entry, Filter};
use leptos::prelude::*;

use super::{browser, on_screen, use_ui, Ui};
use crate::i18n::Key;

/// The spans offered (virtual ms; 0 = the whole run).
pub const SPANS: [Time; 5] = [0, 60_000, 10_000, 1_000, 100];
/// The most rows the list draws (the rest are counted): the page stays within its DOM
/// budget at 100 nodes (e2e/tests/never-freezes.spec.ts).
pub const MAX_ROWS: usize = 40;
/// Bars in the density strip.
const BINS: usize = 120;
/// The components the filter offers (`Actor::component_name`).
pub const COMPONENTS: [&str; 8] = [
    "kubectl",
    "kube-apiserver",
    "etcd",
    "kube-controller-manager",
    "kube-scheduler",
    "kubelet",
    "containerd",
    "kube-proxy",
];

/// A time as the list shows it: `12.345s`.
pub fn t_label(ms: Time) -> String {
    format!("{}.{:03}s", ms / 1000, ms % 1000)
}

/// A span's button label: `all`, `1m0s`, `100ms`.
fn span_label(ui: Ui, span: Time) -> String {
    if span == 0 {
        ui.t(Key::ZoomAll).to_string()
    } else {
        format_duration(span)
    }
}

/// One row, as drawn.
#[derive(Clone, Debug, PartialEq)]
struct Row {
    seq: u64,
    sent: Time,
    route: String,
    label: String,
    object: String,
    answer: String,
    sender: &'static str,
}

fn row(e: &Entry, nodes: &[String]) -> Row {
    let answer = match (&e.answer, e.latency()) {
        (Some(a), Some(l)) => format!("{a} · {}", format_duration(l)),
        (Some(a), None) => a.clone(),
        _ => String::new(),
    };
    Row {
        seq: e.seq,
        sent: e.sent,
        route: format!(
            "{} → {}",
            actor_name(e.from, nodes),
            actor_name(e.to, nodes)
        ),
        label: e.label.clone(),
        object: e.object.clone(),
        answer,
        sender: e.from.component_name(),
    }
}

/// Everything the panel draws.
#[derive(Clone, Debug, Default, PartialEq)]
struct Data {
    rows: Vec<Row>,
    more: usize,
    total: usize,
    kept: usize,
    capacity: usize,
    dropped: Option<(u64, Time)>,
    from: Time,
    to: Time,
    cursor: Time,
    bins: Vec<usize>,
}

/// A signal that follows the session's revision at most every `ms` of wall time (the last
/// change always arrives): the timeline and the trace redraw at that rate while the world
/// runs. A panel off screen (`shown` false) is not told while the engine is behind
/// ([`on_screen::tells`]); it catches up when shown or when the engine has caught up.
pub fn throttled_rev(ui: Ui, ms: f64, shown: RwSignal<bool>) -> RwSignal<u64> {
    let out = RwSignal::new(0u64);
    let last = StoredValue::new(0.0f64);
    let waiting = StoredValue::new(false);
    let open = move || on_screen::tells(shown.get(), ui.behind.get());
    Effect::new(move |_| {
        let rev = ui.panels_rev.get();
        if !open() || out.get_untracked() == rev {
            return;
        }
        let now = browser::now_ms();
        if now - last.get_value() >= ms {
            last.set_value(now);
            out.set(rev);
        } else if !waiting.get_value() {
            waiting.set_value(true);
            let wait = (ms - (now - last.get_value())).max(0.0) as u32;
            leptos::task::spawn_local(async move {
                gloo_timers::future::TimeoutFuture::new(wait).await;
                waiting.set_value(false);
                // Held back meanwhile: the effect forwards the revision once open.
                let open = on_screen::tells(
                    shown.try_get_untracked().unwrap_or(true),
                    ui.behind.try_get_untracked().unwrap_or(false),
                );
                if !open {
                    return;
                }
                last.set_value(browser::now_ms());
                if let Some(rev) = ui.panels_rev.try_get_untracked() {
                    out.try_set(rev);
                }
            });
        }
    });
    out
}

/// The bar over the page while a moment is shown.
#[component]
pub fn MomentBar() -> impl IntoView {
    let ui = use_ui();
    move || {
        ui.moment.get().map(|at| {
            let rebuilding = move || {
                ui.rev.track();
                ui.session
                    .try_with_value(|s| s.replaying().is_some())
                    .unwrap_or(false)
            };
            view! {
                <div class="banner moment" role="status" data-testid="moment-bar">
                    <div class="banner-text">
                        <strong data-testid="moment-at">{move || ui.t(Key::ViewingAt).replace("{t}", &t_label(at))}</strong>
                        <span class="banner-detail" hidden=move || !rebuilding()>{move || ui.t(Key::Rebuilding)}</span>
                        <span class="banner-detail mono">{move || format!("{}: t={}", ui.t(Key::LiveNow), t_label(ui.live_now.get()))}</span>
                    </div>
                    <button class="btn primary" data-testid="back-to-live" on:click=move |_| ui.back_to_live()>
                        {move || ui.t(Key::BackToLive)}
                    </button>
                </div>
            }
        })
    }
}

/// The timeline panel.
#[component]
pub fn TimelinePanel() -> impl IntoView {
    let ui = use_ui();
    let component = RwSignal::new(String::new());
    let heartbeats = RwSignal::new(false);
    let span = RwSignal::new(0 as Time);
    let root: NodeRef<leptos::html::Section> = NodeRef::new();
    let tick = throttled_rev(ui, 250.0, on_screen::on_screen(root));
    let data = Memo::new(move |_| {
        tick.track();
        let c = component.get();
        let filter = Filter {
            component: (!c.is_empty()).then_some(c),
            object: ui.tl_object.get(),
            heartbeats: heartbeats.get(),
        };
        let span = span.get();
        ui.session
            .try_with_value(|s| {
                let tl = s.timeline();
                let live = s.live_now();
                let cursor = s.moment().unwrap_or(live);
                let (from, to) = span_around(cursor, live, span);
                let (win, bins) =
                    tl.window_with_density(&filter, (from, to), cursor, MAX_ROWS, BINS);
                let nodes = s.world().observe().node_names();
                Data {
                    rows: win.rows.iter().map(|e| row(e, &nodes)).collect(),
                    more: win.more,
                    total: win.total,
                    kept: tl.len(),
                    capacity: tl.capacity(),
                    dropped: tl.dropped(),
                    from,
                    to,
                    cursor,
                    bins,
                }
            })
            .unwrap_or_default()
    });
    // A picked entry (here or in the trace) scrolls into view.
    Effect::new(move |_| {
        let Some(seq) = ui.tl_focus.get() else { return };
        data.track();
        let sel = format!("[data-testid=timeline-row][data-seq=\"{seq}\"]");
        if let Some(el) = web_sys::window()
            .and_then(|w| w.document())
            .and_then(|d| d.query_selector(&sel).ok().flatten())
        {
            let top = wasm_bindgen::JsCast::dyn_ref::<web_sys::HtmlElement>(&el)
                .map_or(0, |h| h.offset_top());
            if let Some(list) = el.parent_element() {
                list.set_scroll_top(top - 40);
            }
        }
    });
    let jump_to = move |ev: leptos::ev::Event| {
        if let Ok(t) = event_target_value(&ev).parse::<Time>() {
            ui.view_moment(t);
        }
    };
    let strip_click = move |ev: leptos::ev::MouseEvent| {
        let Some(el) = ev
            .current_target()
            .and_then(|t| wasm_bindgen::JsCast::dyn_into::<web_sys::Element>(t).ok())
        else {
            return;
        };
        let x = (f64::from(ev.offset_x()) / f64::from(el.client_width().max(1))).clamp(0.0, 1.0);
        let d = data.get_untracked();
        ui.view_moment(d.from + ((d.to - d.from) as f64 * x) as Time);
    };
    let following = move || {
        ui.selected.get().is_some_and(|p| {
            let name = p.rsplit('/').next().unwrap_or_default().to_string();
            !name.is_empty() && ui.tl_object.get() == name
        })
    };
    let follow = move |_| {
        if following() {
            ui.tl_object.set(String::new());
        } else if let Some(p) = ui.selected.get_untracked() {
            ui.tl_object
                .set(p.rsplit('/').next().unwrap_or_default().to_string());
        }
    };
    view! {
        <section class="timeline" data-testid="timeline" aria-labelledby="timeline-title" node_ref=root>
            <div class="pane-head">
                <span class="pane-title" id="timeline-title">{move || ui.t(Key::TimelineTitle)}</span>
                <span class="pane-hint">{move || ui.t(Key::TimelineHint)}</span>
                <span class="tl-count mono" data-testid="timeline-count">{move || {
                    let d = data.get();
                    ui.t(Key::TimelineCount)
                        .replace("{n}", &d.rows.len().to_string())
                        .replace("{total}", &d.total.to_string())
                }}</span>
            </div>
            {move || data.get().dropped.map(|(n, t)| {
                let cap = data.get_untracked().capacity;
                view! {
                    <p class="tl-dropped" data-testid="timeline-dropped" role="status">{move || ui.t(Key::TimelineDropped)
                        .replace("{n}", &n.to_string())
                        .replace("{t}", &t_label(t))
                        .replace("{cap}", &cap.to_string())}</p>
                }
            })}
            <div class="tl-strip" data-testid="timeline-strip" on:click=strip_click aria-hidden="true">
                <svg viewBox=format!("0 0 {BINS} 24") preserveAspectRatio="none">
                    {move || {
                        let d = data.get();
                        let max = d.bins.iter().copied().max().unwrap_or(0).max(1) as f64;
                        let cursor = if d.to > d.from {
                            (d.cursor.saturating_sub(d.from)) as f64 / (d.to - d.from) as f64 * BINS as f64
                        } else {
                            BINS as f64
                        };
                        let bars = d.bins.iter().enumerate().filter(|(_, n)| **n > 0).map(|(i, n)| {
                            let h = (*n as f64 / max).sqrt() * 22.0 + 2.0;
                            format!("<rect x=\"{i}\" y=\"{:.1}\" width=\"0.8\" height=\"{h:.1}\"/>", 24.0 - h)
                        }).collect::<String>();
                        view! {
                            <g class="tl-bars" inner_html=bars></g>
                            <line class="tl-cursor" x1=format!("{cursor:.2}") x2=format!("{cursor:.2}") y1="0" y2="24"/>
                        }
                    }}
                </svg>
            </div>
            <div class="tl-scrub">
                <span class="mono tl-edge">{move || t_label(data.get().from)}</span>
                <input type="range" class="tl-range" data-testid="timeline-scrubber"
                    aria-label=move || ui.t(Key::Scrubber)
                    min=move || data.get().from.to_string()
                    max=move || data.get().to.to_string()
                    step="1"
                    prop:value=move || data.get().cursor.to_string()
                    aria-valuetext=move || t_label(data.get().cursor)
                    on:change=jump_to/>
                <span class="mono tl-edge">{move || t_label(data.get().to)}</span>
            </div>
            <div class="tl-controls">
                <div class="speeds" role="group" aria-label=move || ui.t(Key::Zoom)>
                    <span class="tl-label">{move || ui.t(Key::Zoom)}</span>
                    {SPANS.into_iter().map(|sp| view! {
                        <button class="speed" data-testid=format!("span-{sp}")
                            class:active=move || span.get() == sp
                            aria-pressed=move || (span.get() == sp).to_string()
                            on:click=move |_| span.set(sp)>{move || span_label(ui, sp)}</button>
                    }).collect_view()}
                </div>
                <select class="btn select" data-testid="timeline-component"
                    aria-label=move || ui.t(Key::AllComponents)
                    on:change=move |ev| component.set(event_target_value(&ev))>
                    <option value="">{move || ui.t(Key::AllComponents)}</option>
                    {COMPONENTS.into_iter().map(|c| view! { <option value=c>{c}</option> }).collect_view()}
                </select>
                <input class="tl-object" data-testid="timeline-object" type="search"
                    placeholder=move || ui.t(Key::FilterObject)
                    aria-label=move || ui.t(Key::FilterObject)
                    prop:value=move || ui.tl_object.get()
                    on:input=move |ev| ui.tl_object.set(event_target_value(&ev))/>
                <label class="tl-check">
                    <input type="checkbox" data-testid="timeline-heartbeats"
                        prop:checked=move || heartbeats.get()
                        on:change=move |ev| heartbeats.set(event_target_checked(&ev))/>
                    {move || ui.t(Key::Heartbeats)}
                </label>
                <button class="btn slowmo" data-testid="slowmo" title=move || ui.t(Key::SlowMoHint)
                    aria-pressed=move || ui.slowmo.get().to_string()
                    class:active=move || ui.slowmo.get()
                    on:click=move |_| ui.slowmo.update(|v| *v = !*v)>{move || ui.t(Key::SlowMo)}</button>
                <button class="btn" data-testid="follow-pod"
                    disabled=move || ui.selected.get().is_none()
                    aria-pressed=move || following().to_string()
                    on:click=follow>
                    {move || if following() { ui.t(Key::Unfollow) } else { ui.t(Key::FollowPod) }}
                </button>
            </div>
            <div class="tl-list" data-testid="timeline-list" role="list">
                {move || {
                    let d = data.get();
                    if d.rows.is_empty() {
                        return view! { <p class="tl-empty">{move || ui.t(Key::TimelineEmpty)}</p> }.into_any();
                    }
                    let cursor = d.cursor;
                    d.rows.into_iter().map(|r| {
                        let seq = r.seq;
                        let sent = r.sent;
                        let sender = r.sender;
                        view! {
                            <button role="listitem"
                                class=move || format!(
                                    "tl-row from-{sender}{}{}",
                                    if sent > cursor { " future" } else { "" },
                                    if ui.tl_focus.get() == Some(seq) { " focus" } else { "" },
                                )
                                data-testid="timeline-row" data-seq=seq.to_string()
                                on:click=move |_| {
                                    ui.tl_focus.set(Some(seq));
                                    ui.view_moment(sent);
                                }>
                                <span class="tl-t mono">{t_label(r.sent)}</span>
                                <span class="tl-route">{r.route}</span>
                                <span class="tl-label mono">{r.label}</span>
                                <span class="tl-obj mono">{r.object}</span>
                                <span class="tl-ans mono">{r.answer}</span>
                            </button>
                        }
                    }).collect_view().into_any()
                }}
                {move || (data.get().more > 0).then(|| view! {
                    <p class="tl-more" data-testid="timeline-more">{move || ui.t(Key::TimelineMore).replace("{n}", &data.get().more.to_string())}</p>
                })}
            </div>
            <p class="tl-budget">{move || format!("{} / {}", data.get().kept, data.get().capacity)}</p>
        </section>
    }
}
