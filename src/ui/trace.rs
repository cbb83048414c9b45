//! The causal trace of the followed pod (the one the flow follows): its eight stages with
//! the request behind each, what woke the component that sent it, its time and latency;
//! the rollout of its Deployment; and its Service's endpoint changes. Each stage opens its
//! moment in the timeline.
//! The traces are `kubeloop_sim::view::trace`'s; this only draws them.

use kubeloop_sim::time::{format_duration, Time};
use kubeloop_sim::view::trace::{PodTrace, RolloutTrace, ServiceTrace, TraceStep};
use leptos::prelude::*;

use super::timeline::{t_label, throttled_rev};
use super::{use_ui, Ui};
use crate::i18n::Key;

/// The most inner steps drawn per stage (a hundred kube-proxies are counted, not listed).
const MAX_INNER: usize = 5;

/// The title of stage `n` (1…8).
pub fn stage_key(n: u8) -> Key {
    match n {
        1 => Key::TraceStage1,
        2 => Key::TraceStage2,
        3 => Key::TraceStage3,
        4 => Key::TraceStage4,
        5 => Key::TraceStage5,
        6 => Key::TraceStage6,
        7 => Key::TraceStage7,
        _ => Key::TraceStage8,
    }
}

/// Opens a moment in the timeline, the entry picked and the pod followed.
fn open(ui: Ui, at: Time, seq: Option<u64>, pod: &str) {
    ui.tl_object
        .set(pod.rsplit('/').next().unwrap_or_default().to_string());
    ui.tl_focus.set(seq);
    ui.view_moment(at);
}

fn stage_view(ui: Ui, s: TraceStep, pod: String) -> impl IntoView {
    let n = s.number;
    let lit = s.at.is_some();
    let when = s.at.map(t_label).unwrap_or_default();
    let gap = s
        .since_previous
        .map(|g| format!("+{}", format_duration(g)))
        .unwrap_or_default();
    let took = s.took.map(format_duration);
    let cause = s.cause.clone();
    let hidden = s.inner.len().saturating_sub(MAX_INNER);
    let inner: Vec<_> = s.inner.iter().take(MAX_INNER).cloned().collect();
    let (at, seq) = (s.at, s.seq);
    view! {
        <li class="tr-step" class:lit=lit data-testid="trace-stage" data-stage=n.to_string()>
            <button class="tr-head" disabled=!lit
                on:click=move |_| if let Some(at) = at { open(ui, at, seq, &pod) }>
                <span class="tr-n">{n}</span>
                <span class="tr-title">{move || ui.t(stage_key(n))}</span>
                <span class="tr-when mono">{if lit { when.clone() } else { String::new() }}</span>
                <span class="tr-gap mono">{gap}</span>
            </button>
            {if lit {
                view! {
                    <div class="tr-body">
                        <div class="tr-what mono"><span class="tr-by">{s.by.clone()}</span>" "{s.what.clone()}</div>
                        {cause.map(|(t, c)| view! {
                            <div class="tr-cause">{move || ui.t(Key::WokenBy)}" "<span class="mono">{c.clone()}</span>" (t="{t_label(t)}")"</div>
                        })}
                        {took.map(|t| view! { <div class="tr-took">{move || ui.t(Key::Took)}" "<span class="mono">{t.clone()}</span></div> })}
                        {(!inner.is_empty()).then(|| view! {
                            <ul class="tr-inner">
                                {inner.into_iter().map(|(t, l, d)| view! {
                                    <li class="mono">{t_label(t)}" "{l}{d.map(|d| format!(" · {}", format_duration(d)))}</li>
                                }).collect_view()}
                                {(hidden > 0).then(|| view! { <li class="mono">{format!("+{hidden}")}</li> })}
                            </ul>
                        })}
                    </div>
                }.into_any()
            } else {
                view! { <div class="tr-body tr-idle">{move || ui.t(Key::TraceNotYet)}</div> }.into_any()
            }}
        </li>
    }
}

fn rollout_view(ui: Ui, r: RolloutTrace) -> impl IntoView {
    let name = r.deployment.clone();
    view! {
        <div class="tr-rollout" data-testid="rollout-trace">
            <div class="tr-sub">{move || ui.t(Key::RolloutTitle).replace("{d}", &name)}</div>
            {if r.steps.is_empty() {
                view! { <p class="tr-idle">{move || ui.t(Key::RolloutNone)}</p> }.into_any()
            } else {
                view! {
                    <ol class="tr-steps">
                        {r.steps.into_iter().map(|s| {
                            let (at, seq) = (s.at, s.request.as_ref().and_then(|r| r.1));
                            let rs = s.replica_set.clone();
                            view! {
                                <li class="tr-step lit" data-testid="rollout-step">
                                    <button class="tr-head" on:click=move |_| {
                                        ui.tl_object.set(rs.clone());
                                        ui.tl_focus.set(seq);
                                        ui.view_moment(at);
                                    }>
                                        <span class="tr-when mono">{t_label(s.at)}</span>
                                        <span class="tr-title">{s.message.clone()}</span>
                                    </button>
                                    <div class="tr-body">
                                        {s.why.map(|(t, w)| view! {
                                            <div class="tr-cause">{move || ui.t(Key::RolloutWhy)}" "<span class="mono">{w.clone()}</span>" (t="{t_label(t)}")"</div>
                                        })}
                                        {s.request.map(|(r, _)| view! { <div class="tr-what mono">{r}</div> })}
                                    </div>
                                </li>
                            }
                        }).collect_view()}
                    </ol>
                }.into_any()
            }}
        </div>
    }
}

/// The trace panel.
#[component]
pub fn TracePanel() -> impl IntoView {
    let ui = use_ui();
    let root: NodeRef<leptos::html::Section> = NodeRef::new();
    let tick = throttled_rev(ui, 300.0, super::on_screen::on_screen(root));
    type Traces = (PodTrace, Option<RolloutTrace>, Option<ServiceTrace>);
    let data = Memo::new(move |_| -> Option<Traces> {
        tick.track();
        let selected = ui.selected.get();
        ui.session
            .try_with_value(|s| {
                let (flow, _) = s.flow(selected.as_deref());
                let t = s.pod_trace(&flow?.pod)?;
                let ns = t.pod.split('/').next().unwrap_or_default().to_string();
                let r = t
                    .deployment
                    .as_ref()
                    .and_then(|d| s.rollout_trace(&format!("{ns}/{d}")));
                let svc = t
                    .service
                    .as_ref()
                    .and_then(|v| s.service_trace(&format!("{ns}/{v}")));
                Some((t, r, svc))
            })
            .flatten()
    });
    view! {
        <section class="pane trace-pane" data-testid="trace" aria-labelledby="trace-title" node_ref=root>
            <div class="pane-head">
                <span class="pane-title" id="trace-title">{move || ui.t(Key::TraceTitle)}</span>
            </div>
            <p class="trace-hint">{move || ui.t(Key::TraceHint)}</p>
            {move || match data.get() {
                None => view! { <p class="tr-idle" data-testid="trace-none">{move || ui.t(Key::TraceNone)}</p> }.into_any(),
                Some((t, r, svc)) => {
                    let pod = t.pod.clone();
                    view! {
                        <div class="tr-pod mono" data-testid="trace-pod">{pod.clone()}</div>
                        <ol class="tr-steps">
                            {t.steps.into_iter().map(|s| stage_view(ui, s, pod.clone())).collect_view()}
                        </ol>
                        {r.map(|r| rollout_view(ui, r))}
                        {svc.map(|v| super::trace_service::service_view(ui, v))}
                    }.into_any()
                }
            }}
        </section>
    }
}
