//! The object browser: every stored object grouped by kind, filterable by namespace/name,
//! next to the etcd browser (two tabs), with the inspector of the object picked below.
//! Lists are capped (the hidden are counted) so a 100-node cluster stays fast.

use std::collections::BTreeSet;

use kubeloop_sim::object::{Kind, ObjectKey};
use kubeloop_sim::view::objects::{display_name, object_index, KindGroup};
use leptos::prelude::*;

use super::timeline::throttled_rev;
use super::{use_ui, Ui};
use crate::i18n::Key;
use crate::inspect_object::object_id;

/// Objects listed per kind before "n more".
const PER_KIND: usize = 50;

/// The browser's two tabs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum BrowserTab {
    Objects,
    Etcd,
}

/// Opens an object in the inspector (and a Pod's card under the diagram too).
pub fn inspect(ui: Ui, key: ObjectKey) {
    if key.kind == Kind::Pod {
        ui.selected
            .set(Some(format!("{}/{}", key.namespace, key.name)));
    }
    ui.inspected.set(Some(key));
    request_animation_frame(|| {
        super::diagram::focus_selector("[data-testid=\"object-inspector\"]")
    });
}

/// The objects panel: the browser tabs and the inspector.
#[component]
pub fn ObjectsPanel() -> impl IntoView {
    let ui = use_ui();
    let tab = RwSignal::new(BrowserTab::Objects);
    let tab_button = move |t: BrowserTab, key: Key, id: &'static str| {
        view! {
            <button class="obj-tab" role="tab" id=format!("objtab-{id}") data-testid=format!("browser-tab-{id}")
                aria-selected=move || (tab.get() == t).to_string()
                aria-controls=format!("objpanel-{id}")
                tabindex=move || if tab.get() == t { "0" } else { "-1" }
                on:click=move |_| tab.set(t)
                on:keydown=move |ev: leptos::ev::KeyboardEvent| {
                    if matches!(ev.key().as_str(), "ArrowLeft" | "ArrowRight") {
                        ev.prevent_default();
                        let other = if t == BrowserTab::Objects { BrowserTab::Etcd } else { BrowserTab::Objects };
                        tab.set(other);
                        let sel = if other == BrowserTab::Etcd { "#objtab-etcd" } else { "#objtab-objects" };
                        request_animation_frame(move || super::diagram::focus_selector(sel));
                    }
                }>
                {move || ui.t(key)}
            </button>
        }
    };
    view! {
        <section class="pane objects-pane" data-testid="objects" aria-labelledby="objects-title">
            <div class="pane-head">
                <span class="pane-title" id="objects-title">{move || ui.t(Key::ObjectsTitle)}</span>
                <div class="obj-tabs" role="tablist" aria-labelledby="objects-title">
                    {tab_button(BrowserTab::Objects, Key::BrowserObjects, "objects")}
                    {tab_button(BrowserTab::Etcd, Key::BrowserEtcd, "etcd")}
                </div>
            </div>
            {move || match tab.get() {
                BrowserTab::Objects => view! {
                    <div role="tabpanel" id="objpanel-objects" aria-labelledby="objtab-objects"><ObjectList/></div>
                }.into_any(),
                BrowserTab::Etcd => view! {
                    <div role="tabpanel" id="objpanel-etcd" aria-labelledby="objtab-etcd"><super::etcd_browser::EtcdBrowser/></div>
                }.into_any(),
            }}
            <super::object_inspector::ObjectInspector/>
        </section>
    }
}

/// Every stored object by kind, with a filter.
#[component]
fn ObjectList() -> impl IntoView {
    let ui = use_ui();
    let filter = RwSignal::new(String::new());
    let open: RwSignal<BTreeSet<&'static str>> =
        RwSignal::new(["Deployment", "ReplicaSet"].into_iter().collect());
    let root: NodeRef<leptos::html::Div> = NodeRef::new();
    let tick = throttled_rev(ui, 500.0, super::on_screen::on_screen(root));
    let groups = Memo::new(move |_| -> Vec<KindGroup> {
        tick.track();
        let f = filter.get();
        ui.session
            .try_with_value(|s| object_index(s.world(), &f, PER_KIND))
            .unwrap_or_default()
    });
    view! {
        <div class="obj-browser" node_ref=root>
            <p class="obj-hint">{move || ui.t(Key::ObjectsHint)}</p>
            <input class="obj-filter mono" type="search" data-testid="object-filter"
                placeholder=move || ui.t(Key::ObjectsFilter) aria-label=move || ui.t(Key::ObjectsFilter)
                prop:value=move || filter.get()
                on:input=move |ev| filter.set(event_target_value(&ev))/>
            {move || groups.get().is_empty().then(|| view! { <p class="tr-idle">{move || ui.t(Key::ObjectsNone)}</p> })}
            <ul class="obj-groups">
                <For each=move || groups.get() key=|g| (g.kind.info().kind, g.matching, g.items.clone()) let:g>
                    {group_view(ui, g, open, filter)}
                </For>
            </ul>
        </div>
    }
}

fn group_view(
    ui: Ui,
    g: KindGroup,
    open: RwSignal<BTreeSet<&'static str>>,
    filter: RwSignal<String>,
) -> impl IntoView {
    let kind = g.kind.info().kind;
    let expanded = move || !filter.get().trim().is_empty() || open.get().contains(kind);
    let hidden = g.matching - g.items.len();
    let list_id = format!("objgroup-{kind}");
    let items = g.items.clone();
    view! {
        <li class="obj-group" data-testid="object-group" data-kind=kind>
            <button class="obj-kind" aria-expanded=move || expanded().to_string() aria-controls=list_id.clone()
                on:click=move |_| open.update(|o| { if !o.remove(kind) { o.insert(kind); } })>
                <span class="obj-caret">{move || if expanded() { "▾" } else { "▸" }}</span>
                <span>{kind}</span>
                <span class="obj-count mono">{g.matching}</span>
            </button>
            <Show when=expanded>
                <ul class="obj-items" id=list_id.clone()>
                    {items.iter().map(|k| item_view(ui, k.clone())).collect_view()}
                    {(hidden > 0).then(|| view! {
                        <li class="obj-more">{move || ui.t(Key::ObjectsMore).replace("{n}", &hidden.to_string())}</li>
                    })}
                </ul>
            </Show>
        </li>
    }
}

fn item_view(ui: Ui, k: ObjectKey) -> impl IntoView {
    let id = object_id(&k);
    let label = display_name(&k);
    let k2 = k.clone();
    view! {
        <li>
            <button class="obj-item mono" data-testid="object-item" data-object=id
                aria-pressed=move || (ui.inspected.get().as_ref() == Some(&k2)).to_string()
                on:click=move |_| inspect(ui, k.clone())>
                {label}
            </button>
        </li>
    }
}
