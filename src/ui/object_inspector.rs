//! The inspector of the object picked in the browser, the owner tree or the etcd browser:
//! its YAML (`kubectl get -o yaml`), Events, owner tree, etcd key with revisions and their
//! diff, and the request that wrote the current revision with its pipeline spans.

use kubeloop_sim::kubectl::describe::EventRow;
use kubeloop_sim::view::etcd::{yaml_diff, DiffLine, KeyHistory, WriteRequest};
use leptos::prelude::*;

use super::objects::inspect;
use super::timeline::{t_label, throttled_rev};
use super::{use_ui, Ui};
use crate::i18n::Key;
use crate::inspect_object::{
    default_pair, inspect_object, kubectl_kind, object_id, span_bars, Inspected, TreeRow,
};

/// The inspector's tabs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Tab {
    Yaml,
    Events,
    Owners,
    Etcd,
    Request,
}

impl Tab {
    const ALL: [Tab; 5] = [Tab::Yaml, Tab::Events, Tab::Owners, Tab::Etcd, Tab::Request];

    fn id(self) -> &'static str {
        match self {
            Tab::Yaml => "yaml",
            Tab::Events => "events",
            Tab::Owners => "owners",
            Tab::Etcd => "etcd",
            Tab::Request => "request",
        }
    }

    fn label(self, ui: Ui) -> &'static str {
        match self {
            Tab::Yaml => "YAML",
            Tab::Events => ui.t(Key::InspectEvents),
            Tab::Owners => ui.t(Key::InspectOwners),
            Tab::Etcd => "etcd",
            Tab::Request => ui.t(Key::InspectRequest),
        }
    }
}

/// The inspector card.
#[component]
pub fn ObjectInspector() -> impl IntoView {
    let ui = use_ui();
    let tab = RwSignal::new(Tab::Yaml);
    // Opened by the learner, so always in view (never held back).
    let tick = throttled_rev(ui, 500.0, RwSignal::new(true));
    // The revision picked in the etcd tab (None: the newest), kept while the card redraws.
    let pick = RwSignal::new(None::<u64>);
    // Events' ages move with the clock: they are read apart, so the YAML and the diff
    // are redrawn only when the object is written.
    let data = Memo::new(move |_| -> Option<Result<Inspected, String>> {
        tick.track();
        let key = ui.inspected.get()?;
        let found = ui
            .session
            .try_with_value(|s| inspect_object(s.world(), &key))
            .flatten();
        Some(
            found
                .map(|mut i| {
                    i.events.clear();
                    i
                })
                .ok_or_else(|| object_id(&key)),
        )
    });
    let events = Memo::new(move |_| {
        tick.track();
        let key = ui.inspected.get()?;
        ui.session
            .try_with_value(|s| {
                let obj = kubeloop_sim::view::objects::stored_object(s.world(), &key)?;
                Some(kubeloop_sim::view::objects::object_events(s.world(), &obj))
            })
            .flatten()
    });
    Effect::new(move |_| {
        ui.inspected.track();
        pick.set(None);
    });
    let tabs = move || {
        Tab::ALL
            .iter()
            .map(|&t| {
                view! {
                    <button class="obj-tab" role="tab" id=format!("insptab-{}", t.id())
                        data-testid=format!("inspect-tab-{}", t.id())
                        aria-selected=move || (tab.get() == t).to_string()
                        tabindex=move || if tab.get() == t { "0" } else { "-1" }
                        on:click=move |_| tab.set(t)
                        on:keydown=move |ev: leptos::ev::KeyboardEvent| {
                            let i = Tab::ALL.iter().position(|x| *x == t).unwrap_or(0);
                            let next = match ev.key().as_str() {
                                "ArrowRight" => Tab::ALL[(i + 1) % Tab::ALL.len()],
                                "ArrowLeft" => Tab::ALL[(i + Tab::ALL.len() - 1) % Tab::ALL.len()],
                                _ => return,
                            };
                            ev.prevent_default();
                            tab.set(next);
                            let sel = format!("#insptab-{}", next.id());
                            request_animation_frame(move || super::diagram::focus_selector(&sel));
                        }>
                        {move || t.label(ui)}
                    </button>
                }
            })
            .collect_view()
    };
    move || {
        data.get().map(|d| match d {
            Err(id) => view! {
                <div class="obj-inspector" data-testid="object-inspector" tabindex="-1">
                    <div class="obj-insp-head"><strong class="mono">{id}</strong></div>
                    <p class="tr-idle">{move || ui.t(Key::InspectGone)}</p>
                </div>
            }
            .into_any(),
            Ok(i) => {
                let title = format!("{} {}", i.key.kind.info().kind, kubeloop_sim::view::objects::display_name(&i.key));
                let ns = if i.key.namespace.is_empty() { String::new() } else { format!(" -n {}", i.key.namespace) };
                let get = format!("kubectl get {} {}{ns} -o yaml", kubectl_kind(i.key.kind), i.key.name);
                let i2 = i.clone();
                view! {
                    <div class="obj-inspector" data-testid="object-inspector" data-object=object_id(&i.key)
                        tabindex="-1" role="region" aria-label=move || ui.t(Key::InspectorTitle)
                        on:keydown=move |ev: leptos::ev::KeyboardEvent| if ev.key() == "Escape" { ui.inspected.set(None) }>
                        <div class="obj-insp-head">
                            <strong class="mono" data-testid="inspect-title">{title}</strong>
                            <button class="btn small" on:click=move |_| { ui.update(|s| s.submit(&get)); }>"kubectl get -o yaml"</button>
                            <button class="btn small ghost" aria-label=move || ui.t(Key::Close) on:click=move |_| ui.inspected.set(None)>"×"</button>
                        </div>
                        <div class="obj-tabs" role="tablist" aria-label=move || ui.t(Key::InspectorTitle)>{tabs}</div>
                        <div class="obj-insp-body" role="tabpanel" aria-labelledby=move || format!("insptab-{}", tab.get().id())>
                            {move || tab_body(ui, tab.get(), &i2, events, pick)}
                        </div>
                    </div>
                }
                .into_any()
            }
        })
    }
}

fn tab_body(
    ui: Ui,
    tab: Tab,
    i: &Inspected,
    events: Memo<Option<Vec<EventRow>>>,
    pick: RwSignal<Option<u64>>,
) -> AnyView {
    match tab {
        Tab::Yaml => view! { <pre class="obj-yaml mono" data-testid="inspect-yaml" tabindex="0">{i.yaml.clone()}</pre> }.into_any(),
        Tab::Events => (move || events_view(ui, events.get().unwrap_or_default())).into_any(),
        Tab::Owners => tree_view(ui, i.tree.clone(), i.tree_hidden).into_any(),
        Tab::Etcd => view! { <EtcdHistory h=i.etcd.clone() pick=pick/> }.into_any(),
        Tab::Request => request_view(ui, i.etcd.mod_revision, i.writer.clone()).into_any(),
    }
}

fn events_view(ui: Ui, events: Vec<EventRow>) -> impl IntoView {
    if events.is_empty() {
        return view! { <p class="tr-idle" data-testid="inspect-events-none">{move || ui.t(Key::EventsNone)}</p> }.into_any();
    }
    view! {
        <table class="obj-table" data-testid="inspect-events">
            <thead><tr><th>"Type"</th><th>"Reason"</th><th>"Age"</th><th>"From"</th><th>"Message"</th></tr></thead>
            <tbody>
                {events.iter().map(|e| view! {
                    <tr class:warning=e.type_ == "Warning">
                        <td>{e.type_.clone()}</td><td>{e.reason.clone()}</td><td class="mono">{e.age.clone()}</td>
                        <td>{e.from.clone()}</td><td class="msg">{e.message.clone()}</td>
                    </tr>
                }).collect_view()}
            </tbody>
        </table>
    }
    .into_any()
}

fn tree_view(ui: Ui, rows: Vec<TreeRow>, hidden: usize) -> impl IntoView {
    // Owners have negative depths: indent from the topmost row.
    let top = rows.iter().map(|r| r.depth).min().unwrap_or(0);
    view! {
        <p class="obj-hint">{move || ui.t(Key::OwnersHint)}</p>
        <ul class="obj-tree" data-testid="inspect-tree" role="tree">
            {rows.into_iter().map(|r| {
                let me = r.depth == 0;
                let indent = r.depth - top;
                let label = format!("{} {}", r.key.kind.info().kind, kubeloop_sim::view::objects::display_name(&r.key));
                let k = r.key.clone();
                let via = r.via;
                view! {
                    <li role="treeitem" aria-current=me.then_some("true") class:me=me
                        style=format!("padding-left:{}px", 8 + 14 * indent) data-testid="tree-row"
                        data-object=object_id(&r.key) data-depth=r.depth.to_string()>
                        {if me {
                            view! { <strong class="mono">{label}</strong> }.into_any()
                        } else {
                            view! { <button class="obj-item mono" on:click=move |_| inspect(ui, k.clone())>{label}</button> }.into_any()
                        }}
                        {(!via.is_empty() && via != "ownerReference").then(|| view! { <span class="obj-via mono">{via}</span> })}
                    </li>
                }
            }).collect_view()}
            {(hidden > 0).then(|| view! { <li class="obj-more">{move || ui.t(Key::TreeMore).replace("{n}", &hidden.to_string())}</li> })}
        </ul>
    }
}

/// The key, its revisions, and the diff of the one picked against the one before.
#[component]
fn EtcdHistory(h: KeyHistory, pick: RwSignal<Option<u64>>) -> impl IntoView {
    let ui = use_ui();
    let revs = h.revisions.clone();
    let newest = default_pair(&h).map(|(_, b)| b);
    let picked = {
        let revs = revs.clone();
        move || {
            pick.get()
                .and_then(|r| revs.iter().position(|x| x.revision == r))
                .or(newest)
        }
    };
    let picked2 = picked.clone();
    let diff = {
        let revs = revs.clone();
        move || {
            let b = picked()?;
            let a = b.checked_sub(1)?;
            let (old, new) = (revs.get(a)?, revs.get(b)?);
            Some((old.revision, new.revision, yaml_diff(&old.yaml, &new.yaml)))
        }
    };
    view! {
        <div class="obj-etcd" data-testid="inspect-etcd">
            <div class="mono obj-key" data-testid="inspect-etcd-key">{h.key.clone()}</div>
            <div class="mono muted small">{format!("create_revision {} · mod_revision {} · version {}", h.create_revision, h.mod_revision, h.version)}</div>
            <div class="obj-sub">{move || ui.t(Key::EtcdRevisions)}</div>
            {(h.compacted > 0).then(|| view! { <p class="obj-hint">{move || ui.t(Key::EtcdCompacted).replace("{r}", &h.compacted.to_string())}</p> })}
            {(h.hidden > 0).then(|| view! { <p class="obj-hint">{move || ui.t(Key::RevisionsHidden).replace("{n}", &h.hidden.to_string())}</p> })}
            <ol class="obj-revs">
                {revs.iter().enumerate().map(|(i, r)| {
                    let label = format!("{} · v{}", r.revision, r.version);
                    let deleted = r.deleted;
                    let rev = r.revision;
                    let picked = picked2.clone();
                    view! {
                        <li>
                            <button class="obj-rev mono" data-testid="etcd-revision" data-revision=r.revision.to_string()
                                aria-pressed=move || (picked() == Some(i)).to_string() disabled=i == 0
                                on:click=move |_| pick.set(Some(rev))>
                                {label}{deleted.then(|| view! { " "<span class="obj-via">{move || ui.t(Key::Deleted)}</span> })}
                            </button>
                        </li>
                    }
                }).collect_view()}
            </ol>
            {move || match diff() {
                None => view! { <p class="tr-idle">{move || ui.t(Key::OneRevision)}</p> }.into_any(),
                Some((a, b, lines)) => view! {
                    <div class="obj-sub" data-testid="etcd-diff-title">{move || ui.t(Key::DiffTitle).replace("{a}", &a.to_string()).replace("{b}", &b.to_string())}</div>
                    {if lines.is_empty() {
                        view! { <p class="tr-idle">{move || ui.t(Key::DiffSame)}</p> }.into_any()
                    } else {
                        view! { <pre class="obj-diff mono" data-testid="etcd-diff" tabindex="0">{lines.into_iter().map(diff_line).collect_view()}</pre> }.into_any()
                    }}
                }.into_any(),
            }}
        </div>
    }
}

fn diff_line(l: DiffLine) -> impl IntoView {
    let (class, text) = match l {
        DiffLine::Same(t) => ("same", format!(" {t}")),
        DiffLine::Removed(t) => ("del", format!("-{t}")),
        DiffLine::Added(t) => ("add", format!("+{t}")),
        DiffLine::Hunk(t) => ("hunk", t),
    };
    view! { <span class=format!("dl {class}")>{text}"\n"</span> }
}

fn request_view(ui: Ui, revision: u64, w: Option<WriteRequest>) -> impl IntoView {
    let Some(w) = w else {
        return view! { <p class="tr-idle" data-testid="inspect-request-none">{move || ui.t(Key::RequestNone)}</p> }.into_any();
    };
    let bars = span_bars(w.received, &w.spans);
    view! {
        <div class="obj-request" data-testid="inspect-request">
            <div class="obj-sub">{move || ui.t(Key::RequestTitle).replace("{r}", &revision.to_string())}</div>
            <div class="mono obj-key">{format!("{} {} → {}", w.verb.to_uppercase(), w.path, w.code)}</div>
            <div class="mono muted small">{format!("{} · {} · t={}", w.client, if w.user.is_empty() { "system:anonymous" } else { &w.user }, t_label(w.received))}</div>
            <table class="obj-table obj-spans">
                <thead><tr><th>{move || ui.t(Key::Stage)}</th><th class="num">{move || ui.t(Key::Start)}</th><th class="num">{move || ui.t(Key::Duration)}</th><th></th></tr></thead>
                <tbody>
                    {bars.into_iter().map(|b| view! {
                        <tr data-testid="span-row" data-stage=b.stage>
                            <td class="mono">{b.stage}</td>
                            <td class="num mono">{format!("+{}ms", b.offset)}</td>
                            <td class="num mono">{format!("{}ms", b.duration)}</td>
                            <td class="spancell"><span class=format!("spanbar {}", b.stage) style=format!("margin-left:{:.1}%;width:{:.1}%", b.left, b.width)></span></td>
                        </tr>
                    }).collect_view()}
                </tbody>
            </table>
        </div>
    }
    .into_any()
}
