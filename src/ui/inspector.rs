//! The pod inspector under the diagram: the selected pod's status, containers, its etcd
//! key and revisions, and the scheduler's verdicts and scores per node when recorded.

use leptos::prelude::*;

use super::use_ui;
use crate::i18n::Key;
use crate::inspect::{inspect_pod, PodInspection, Scheduling};

/// The selected pod's card.
#[component]
pub fn PodDetails() -> impl IntoView {
    let ui = use_ui();
    let pod = Memo::new(move |_| {
        ui.rev.track();
        let sel = ui.selected.get()?;
        let (ns, name) = sel.split_once('/')?;
        ui.session
            .try_update_value(|s| {
                let v = s.view();
                let pod = v
                    .nodes
                    .iter()
                    .flat_map(|n| n.pods.iter())
                    .chain(v.pending.iter())
                    .find(|p| p.namespace == ns && p.name == name)
                    .cloned()?;
                Some((pod, inspect_pod(s.world(), ns, name)))
            })
            .flatten()
    });
    move || {
        pod.get().map(|(p, PodInspection { etcd, scheduling })| {
            let class = kubeloop_sim::view::pod_class(&p);
            let describe = format!("kubectl describe pod {} -n {}", p.name, p.namespace);
            let id = format!("{}/{}", p.namespace, p.name);
            let close = move || {
                ui.selected.set(None);
                let sel = format!("[data-pod=\"{}\"]", super::diagram::css_escape(&id));
                request_animation_frame(move || super::diagram::focus_selector(&sel));
            };
            let close2 = close.clone();
            view! {
                <div class="pod-card" data-testid="pod-details" tabindex="-1" role="region"
                    aria-label=move || ui.t(Key::Inspector)
                    on:keydown=move |ev: leptos::ev::KeyboardEvent| if ev.key() == "Escape" { close2() }>
                    <div class="pod-card-head">
                        <span class=format!("swatch {}", class.as_str())></span>
                        <strong class="mono">{p.name.clone()}</strong>
                        <span class="pill-text">{p.status.clone()}</span>
                        <span class="muted mono">{if p.node.is_empty() { "—".to_string() } else { p.node.clone() }}</span>
                        <span class="muted mono">{if p.ip.is_empty() { "<none>".to_string() } else { p.ip.clone() }}</span>
                        <button class="btn small" on:click=move |_| { ui.update(|s| s.submit(&describe)); }>"kubectl describe"</button>
                        <button class="btn small ghost" aria-label=move || ui.t(Key::Close) on:click=move |_| close()>"×"</button>
                    </div>
                    <div class="pod-card-row">
                        <span class="label">{move || ui.t(Key::Containers)}</span>
                        {p.containers.iter().map(|c| {
                            let restarts = if c.restarts > 0 { format!(" · ↻{}", c.restarts) } else { String::new() };
                            let reason = if c.reason.is_empty() { String::new() } else { format!(" ({})", c.reason) };
                            view! { <span class=format!("container mono {}", c.state)>{format!("{} · {}{reason}{restarts}", c.name, c.state)}</span> }
                        }).collect_view()}
                    </div>
                    {etcd.map(|e| view! {
                        <div class="pod-card-row" data-testid="pod-etcd">
                            <span class="label">"etcd"</span>
                            <span class="mono key">{e.key}</span>
                            <span class="mono muted">{format!("create_revision {} · mod_revision {} · version {}", e.created, e.modified, e.version)}</span>
                        </div>
                    })}
                    {scheduling.map(|s| view! { <SchedulingTable s=s/> })}
                </div>
            }
        })
    }
}

/// Filter verdicts and final scores per node, the picked node highlighted.
#[component]
fn SchedulingTable(s: Scheduling) -> impl IntoView {
    let ui = use_ui();
    let plugins = s.plugins.clone();
    view! {
        <div class="sched" data-testid="scheduling">
            <span class="label">{move || ui.t(Key::SchedulingResult)}</span>
            <table>
                <thead><tr>
                    <th>"node"</th><th>"filter"</th>
                    {plugins.iter().map(|p| view! { <th>{p.clone()}</th> }).collect_view()}
                    <th>"Σ"</th>
                </tr></thead>
                <tbody>
                    {s.nodes.iter().map(|n| {
                        let picked = s.selected.as_deref() == Some(n.node.as_str());
                        view! {
                            <tr class:picked=picked class:out=!n.passed>
                                <td class="mono">{if picked { format!("★ {}", n.node) } else { n.node.clone() }}</td>
                                <td>{if n.passed { "✓".to_string() } else { n.reasons.join("; ") }}</td>
                                {n.scores.iter().map(|v| view! { <td class="num">{v.map(|x| x.to_string()).unwrap_or_default()}</td> }).collect_view()}
                                <td class="num total">{if n.passed { n.total.to_string() } else { String::new() }}</td>
                            </tr>
                        }
                    }).collect_view()}
                </tbody>
            </table>
        </div>
    }
}
