//! The followed pod's Service in the trace panel: each write of its EndpointSlices, the
//! `KUBE-SVC-… -j KUBE-SEP-…` jumps it added or dropped, and the kube-proxies it reached.
//! The trace is `kubeloop_sim::view::trace::service_trace`'s; this only draws it.

use kubeloop_sim::time::format_duration;
use kubeloop_sim::view::trace::{RuleChange, ServiceChange, ServiceTrace};
use leptos::prelude::*;

use super::timeline::t_label;
use super::Ui;
use crate::i18n::Key;

/// The most kube-proxies listed per change (the rest are counted).
const MAX_PROXIES: usize = 5;

fn rule_line(sign: &'static str, r: &RuleChange) -> String {
    format!(
        "{sign} -A {} -j {} ({})",
        r.service_chain, r.endpoint_chain, r.endpoint
    )
}

fn change_view(ui: Ui, c: ServiceChange) -> impl IntoView {
    let (at, seq, slice) = (c.at, c.seq, c.slice.clone());
    let mut rules: Vec<(bool, String)> =
        c.added.iter().map(|r| (true, rule_line("+", r))).collect();
    rules.extend(c.removed.iter().map(|r| (false, rule_line("−", r))));
    let hidden = c.proxies.len().saturating_sub(MAX_PROXIES);
    let proxies: Vec<_> = c.proxies.into_iter().take(MAX_PROXIES).collect();
    view! {
        <li class="tr-step lit" data-testid="service-change">
            <button class="tr-head" on:click=move |_| {
                ui.tl_object.set(slice.clone());
                ui.tl_focus.set(seq);
                ui.view_moment(at);
            }>
                <span class="tr-when mono">{t_label(c.at)}</span>
                <span class="tr-title mono">{format!("{} · rev {}", c.slice, c.revision)}</span>
            </button>
            <div class="tr-body">
                <div class="tr-what mono"><span class="tr-by">{c.by}</span>" "{c.what}</div>
                {if rules.is_empty() {
                    view! { <div class="tr-idle" data-testid="service-rules-same">{move || ui.t(Key::ServiceNoRuleChange)}</div> }.into_any()
                } else {
                    view! {
                        <ul class="tr-rules" data-testid="service-rules">
                            {rules.into_iter().map(|(add, l)| view! {
                                <li class="mono" class:added=add class:removed=!add>{l}</li>
                            }).collect_view()}
                        </ul>
                    }.into_any()
                }}
                {(!proxies.is_empty()).then(|| view! {
                    <ul class="tr-inner">
                        {proxies.into_iter().map(|(t, l, d)| view! {
                            <li class="mono">{t_label(t)}" "{l}{d.map(|d| format!(" · {}", format_duration(d)))}</li>
                        }).collect_view()}
                        {(hidden > 0).then(|| view! { <li class="mono">{format!("+{hidden}")}</li> })}
                    </ul>
                })}
            </div>
        </li>
    }
}

/// The Service's endpoint changes, newest last.
pub fn service_view(ui: Ui, t: ServiceTrace) -> impl IntoView {
    let name = t.service.clone();
    let earlier = t.earlier;
    view! {
        <div class="tr-rollout" data-testid="service-trace">
            <div class="tr-sub">{move || ui.t(Key::ServiceTraceTitle).replace("{s}", &name)}</div>
            {(earlier > 0).then(|| view! {
                <p class="tr-idle">{move || ui.t(Key::ServiceEarlier).replace("{n}", &earlier.to_string())}</p>
            })}
            {if t.changes.is_empty() {
                view! { <p class="tr-idle">{move || ui.t(Key::ServiceTraceNone)}</p> }.into_any()
            } else {
                view! {
                    <ol class="tr-steps">
                        {t.changes.into_iter().map(|c| change_view(ui, c)).collect_view()}
                    </ol>
                }.into_any()
            }}
        </div>
    }
}
