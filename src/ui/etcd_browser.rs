//! The etcd browser: the keyspace by prefix (`/registry/<resource>/`) with each key's
//! create and mod revisions and version, and the watch stream the apiserver's watch cache
//! received, newest first. Both are capped; what is hidden is counted.

use kubeloop_sim::view::etcd::{keyspace, watch_stream, Keyspace, WatchRow};
use leptos::prelude::*;

use super::objects::inspect;
use super::timeline::throttled_rev;
use super::use_ui;
use crate::i18n::Key;

/// Keys listed under the prefix picked.
const KEYS: usize = 60;
/// Watch events listed.
const WATCH: usize = 40;

/// The keyspace and the watch stream.
#[component]
pub fn EtcdBrowser() -> impl IntoView {
    let ui = use_ui();
    let prefix = RwSignal::new("/registry/deployments/".to_string());
    let root: NodeRef<leptos::html::Div> = NodeRef::new();
    let tick = throttled_rev(ui, 500.0, super::on_screen::on_screen(root));
    let space = Memo::new(move |_| -> Option<Keyspace> {
        tick.track();
        let p = prefix.get();
        ui.session.try_with_value(|s| keyspace(s.world(), &p, KEYS))
    });
    let stream = Memo::new(move |_| -> (Vec<WatchRow>, usize) {
        tick.track();
        ui.session
            .try_with_value(|s| watch_stream(s.world(), WATCH))
            .unwrap_or_default()
    });
    let chips = move || {
        let Some(ks) = space.get() else {
            return Vec::new();
        };
        let all = ks.prefixes.iter().map(|p| p.count).sum::<usize>();
        std::iter::once(("/registry/".to_string(), all))
            .chain(ks.prefixes.iter().map(|p| (p.prefix.clone(), p.count)))
            .collect::<Vec<_>>()
    };
    view! {
        <div class="etcd-browser" data-testid="etcd-browser" node_ref=root>
            <div class="obj-sub">{move || ui.t(Key::EtcdKeyspace)}</div>
            <div class="mono muted small" data-testid="etcd-revision">{move || space.get().map(|k| format!("revision {} · compacted {}", k.revision, k.compacted))}</div>
            <div class="etcd-prefixes" role="group" aria-label=move || ui.t(Key::EtcdKeyspace)>
                <For each=chips key=|c| c.clone() let:c>
                    {
                        let (p, n) = c;
                        let p2 = p.clone();
                        let p3 = p.clone();
                        let label = if p == "/registry/" {
                            view! { {move || ui.t(Key::EtcdAll)}" "{n} }.into_any()
                        } else {
                            let short = p.trim_start_matches("/registry/").trim_end_matches('/').to_string();
                            view! { {short}" "{n} }.into_any()
                        };
                        view! {
                            <button class="etcd-prefix mono" data-testid="etcd-prefix" data-prefix=p.clone()
                                aria-pressed=move || (prefix.get() == p2).to_string()
                                on:click=move |_| prefix.set(p3.clone())>{label}</button>
                        }
                    }
                </For>
            </div>
            {move || space.get().map(|ks| {
                let more = ks.matching.saturating_sub(ks.keys.len());
                view! {
                    <table class="obj-table etcd-keys" data-testid="etcd-keys">
                        <thead><tr><th>{move || ui.t(Key::KeyCol)}</th><th class="num">"create"</th><th class="num">"mod"</th><th class="num">"ver"</th></tr></thead>
                        <tbody>
                            {ks.keys.into_iter().map(|k| {
                                let o = k.object.clone();
                                view! {
                                    <tr data-testid="etcd-key" data-key=k.key.clone()>
                                        <td><button class="obj-item mono" on:click=move |_| inspect(ui, o.clone())>{k.key.clone()}</button></td>
                                        <td class="num mono">{k.create_revision}</td>
                                        <td class="num mono">{k.mod_revision}</td>
                                        <td class="num mono">{k.version}</td>
                                    </tr>
                                }
                            }).collect_view()}
                        </tbody>
                    </table>
                    {(more > 0).then(|| view! { <p class="obj-more">{move || ui.t(Key::EtcdKeysMore).replace("{n}", &more.to_string())}</p> })}
                }
            })}
            <div class="obj-sub">{move || ui.t(Key::WatchStream)}</div>
            {move || {
                let (rows, total) = stream.get();
                if rows.is_empty() {
                    return view! { <p class="tr-idle">{move || ui.t(Key::WatchNone)}</p> }.into_any();
                }
                let k = rows.len();
                view! {
                    <p class="obj-hint">{move || ui.t(Key::WatchHeld).replace("{k}", &k.to_string()).replace("{n}", &total.to_string())}</p>
                    <table class="obj-table etcd-watch" data-testid="etcd-watch">
                        <thead><tr><th class="num">{move || ui.t(Key::Revision)}</th><th>{move || ui.t(Key::Type)}</th><th>{move || ui.t(Key::KeyCol)}</th></tr></thead>
                        <tbody>
                            {rows.into_iter().map(|r| {
                                let o = r.object.clone();
                                view! {
                                    <tr data-testid="watch-event" data-revision=r.revision.to_string() class=format!("w-{}", r.kind.to_lowercase())>
                                        <td class="num mono">{r.revision}</td>
                                        <td class="mono">{r.kind}</td>
                                        <td><button class="obj-item mono" on:click=move |_| inspect(ui, o.clone())>{r.key.clone()}</button></td>
                                    </tr>
                                }
                            }).collect_view()}
                        </tbody>
                    </table>
                }.into_any()
            }}
        </div>
    }
}
