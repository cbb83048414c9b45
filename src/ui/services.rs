//! The Services under the diagram: one chip each (type, CLUSTER-IP, PORT(S) and how many
//! endpoints are ready, as `kubectl get svc` and its EndpointSlices say). Picking one marks
//! its endpoint pods on the diagram.

use kubeloop_sim::object::{Kind, ObjectKey};
use kubeloop_sim::view::services::{self as sv, ServiceView};
use leptos::prelude::*;

use super::use_ui;
use crate::i18n::Key;

/// The Services strip.
#[component]
pub fn ServicesStrip() -> impl IntoView {
    let ui = use_ui();
    let list = Memo::new(move |_| {
        ui.rev.track();
        ui.session
            .try_with_value(|s| sv::services(s.world()))
            .unwrap_or_default()
    });
    // A picked Service that went away is forgotten.
    Effect::new(move |_| {
        let gone = ui
            .service
            .get()
            .is_some_and(|k| list.with(|l| !l.iter().any(|s| s.key() == k)));
        if gone {
            ui.service.set(None);
        }
    });
    let chip = move |s: ServiceView| {
        let key = s.key();
        let (k1, k2) = (key.clone(), key.clone());
        let ready = s.ready();
        let total = s.endpoints.len();
        let counts = move || {
            if s.selects || total > 0 {
                ui.t(Key::ServiceEndpointsReady)
                    .replace("{r}", &ready.to_string())
                    .replace("{n}", &total.to_string())
            } else {
                ui.t(Key::ServiceNoSelector).to_string()
            }
        };
        let k1b = k1.clone();
        let pressed = move || ui.service.get().as_deref() == Some(k1.as_str());
        let on = move || ui.service.get().as_deref() == Some(k1b.as_str());
        let inspect_key = ObjectKey::new(Kind::Service, &s.namespace, &s.name);
        let label = s.name.clone();
        view! {
            <span class="svc" data-testid="service-chip" data-service=key.clone()
                data-ready=ready data-total=total>
                <button class="svc-pick" aria-pressed=move || pressed().to_string()
                    class:on=on title=move || ui.t(Key::ServiceMarkHint)
                    on:click=move |_| ui.service.update(|cur| {
                        *cur = if cur.as_deref() == Some(k2.as_str()) { None } else { Some(k2.clone()) }
                    })>
                    <span class="svc-name">{s.name.clone()}</span>
                    <span class="svc-type">{s.type_.clone()}</span>
                    <span class="svc-ip mono">{s.cluster_ip.clone()}</span>
                    <span class="svc-ports mono">{s.ports.clone()}</span>
                    <span class="svc-eps" class:none=move || ready == 0>{counts}</span>
                </button>
                <button class="svc-inspect" data-testid="service-inspect"
                    aria-label=move || ui.t(Key::ServiceInspect).replace("{s}", &label)
                    on:click=move |_| super::objects::inspect(ui, inspect_key.clone())>"⋯"</button>
            </span>
        }
    };
    view! {
        <Show when=move || list.with(|l| !l.is_empty())>
            <div class="services" data-testid="services" role="group" aria-label=move || ui.t(Key::ServicesTitle)>
                <span class="services-title">{move || ui.t(Key::ServicesTitle)}</span>
                <For each=move || list.get() key=|s| format!("{s:?}") let:s>
                    {chip(s)}
                </For>
            </div>
        </Show>
    }
}

/// The endpoints of the picked Service, for the diagram to mark (pod → ready).
pub fn picked_endpoints(ui: super::Ui) -> Option<std::collections::BTreeMap<String, bool>> {
    let key = ui.service.get()?;
    ui.session
        .try_with_value(|s| sv::endpoint_pods(&sv::services(s.world()), &key))
        .map(|v| v.into_iter().collect())
}
