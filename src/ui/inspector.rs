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
        ui.panels_rev.track();
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
                let trusted = s.scheduler_wrote(ns, name);
                let nodes = s.world().observe().nodes().len();
                Some((pod, inspect_pod(s.world(), ns, name, trusted), nodes))
            })
            .flatten()
    });
    move || {
        pod.get().map(|(p, PodInspection { etcd, scheduling }, nodes_in_cluster)| {
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
                    {scheduling.map(|s| view! { <SchedulingTable s=s nodes_in_cluster=nodes_in_cluster/> })}
                </div>
            }
        })
    }
}

/// How many feasible nodes the table lists before "show all".
const TOP: usize = 8;

/// Filter verdicts and total scores per node (the winner marked, ties and sampling
/// explained), and for one node (the winner, or the row clicked) each score plugin's raw
/// score, normalized score, weight and weighted score.
#[component]
fn SchedulingTable(s: Scheduling, nodes_in_cluster: usize) -> impl IntoView {
    let ui = use_ui();
    let s = std::sync::Arc::new(s);
    let picked = RwSignal::new(
        s.selected
            .clone()
            .or_else(|| s.nodes.iter().find(|n| n.passed).map(|n| n.node.clone())),
    );
    let all = RwSignal::new(false);
    let best = s.best().max(1);
    let ties = s.ties();
    let evaluated = s.nodes.len();
    let feasible = s.nodes.iter().filter(|n| n.passed).count();
    let mut out_reasons: std::collections::BTreeMap<String, usize> = Default::default();
    for n in s.nodes.iter().filter(|n| !n.passed) {
        for (p, r) in &n.failing {
            *out_reasons.entry(format!("{p}: {r}")).or_default() += 1;
        }
    }
    let rows = {
        let s = s.clone();
        move || {
            let show_all = all.get();
            let mut shown = 0;
            s.nodes
                .iter()
                .filter(|n| {
                    let keep = show_all
                        || !n.passed
                        || shown < TOP
                        || s.selected.as_deref() == Some(n.node.as_str());
                    if n.passed && keep {
                        shown += 1;
                    }
                    keep && (show_all || n.passed || s.nodes.len() <= 2 * TOP)
                })
                .cloned()
                .collect::<Vec<_>>()
        }
    };
    let selected = s.selected.clone();
    let breakdown = {
        let s = s.clone();
        move || {
            let node = picked.get()?;
            let n = s.nodes.iter().find(|n| n.node == node)?.clone();
            Some((node, n))
        }
    };
    let s2 = s.clone();
    view! {
        <div class="sched" data-testid="scheduling">
            <span class="label">{move || ui.t(Key::SchedulingResult)}</span>
            <p class="sched-note" data-testid="sched-note">
                {move || ui.t(Key::SchedEvaluated).replace("{n}", &evaluated.to_string()).replace("{m}", &nodes_in_cluster.to_string()).replace("{f}", &feasible.to_string())}
                {(evaluated < nodes_in_cluster).then(|| view! { " "{move || ui.t(Key::SchedSampled)} })}
                {(ties > 1).then(|| view! { " "<span data-testid="sched-ties">{move || ui.t(Key::SchedTies).replace("{k}", &ties.to_string())}</span> })}
            </p>
            <table class="sched-nodes">
                <thead><tr>
                    <th>{move || ui.t(Key::Node)}</th><th>{move || ui.t(Key::SchedFilter)}</th><th class="num">"Σ"</th><th></th>
                </tr></thead>
                <tbody>
                    <For each=rows key=|n| n.node.clone() let:n>
                        {
                            let is_winner = selected.as_deref() == Some(n.node.as_str());
                            let node = n.node.clone();
                            let node2 = n.node.clone();
                            let width = if n.passed { (n.total.max(0) as f64 / best as f64 * 100.0).clamp(0.0, 100.0) } else { 0.0 };
                            let verdict = if n.passed { "✓".to_string() } else { n.failing.iter().map(|(p, r)| format!("{p}: {r}")).collect::<Vec<_>>().join("; ") };
                            view! {
                                <tr class:picked=is_winner class:out=!n.passed class:focus=move || picked.get().as_deref() == Some(node.as_str())
                                    data-testid="sched-row" data-node=n.node.clone()>
                                    <td class="mono">
                                        <button class="linkish" on:click=move |_| picked.set(Some(node2.clone()))>
                                            {if is_winner { format!("★ {}", n.node) } else { n.node.clone() }}
                                        </button>
                                    </td>
                                    <td class="verdict">{verdict}</td>
                                    <td class="num total">{if n.passed { n.total.to_string() } else { String::new() }}</td>
                                    <td class="barcell"><span class="scorebar" style=format!("width:{width:.0}%")></span></td>
                                </tr>
                            }
                        }
                    </For>
                </tbody>
            </table>
            {(feasible > TOP).then(|| view! {
                <button class="btn small ghost" data-testid="sched-all" on:click=move |_| all.update(|a| *a = !*a)>
                    {move || if all.get() { ui.t(Key::ShowFewer) } else { ui.t(Key::ShowAll) }}
                </button>
            })}
            {(!out_reasons.is_empty()).then(|| view! {
                <ul class="sched-out" data-testid="sched-out">
                    {out_reasons.into_iter().map(|(r, k)| view! { <li>{format!("{k} × {r}")}</li> }).collect_view()}
                </ul>
            })}
            {move || breakdown().map(|(node, n)| {
                let s = s2.clone();
                view! {
                    <table class="sched-plugins" data-testid="sched-plugins">
                        <caption>{move || ui.t(Key::SchedBreakdown).replace("{node}", &node)}</caption>
                        <thead><tr>
                            <th>{move || ui.t(Key::Plugin)}</th><th class="num">{move || ui.t(Key::Raw)}</th>
                            <th class="num">{move || ui.t(Key::Normalized)}</th><th class="num">{move || ui.t(Key::Weight)}</th>
                            <th class="num">{move || ui.t(Key::Weighted)}</th>
                        </tr></thead>
                        <tbody>
                            {s.plugins.iter().enumerate().map(|(i, p)| {
                                let cell = |v: Option<i64>| v.map(|x| x.to_string()).unwrap_or_else(|| "—".into());
                                view! {
                                    <tr data-testid="sched-plugin" data-plugin=p.clone()>
                                        <td class="mono">{p.clone()}</td>
                                        <td class="num">{cell(n.raw.get(i).copied().flatten())}</td>
                                        <td class="num">{cell(s.normalized(&n, i))}</td>
                                        <td class="num">{s.weights.get(i).copied().unwrap_or(1)}</td>
                                        <td class="num">{cell(n.scores.get(i).copied().flatten())}</td>
                                    </tr>
                                }
                            }).collect_view()}
                            <tr class="sum"><td>"Σ"</td><td></td><td></td><td></td><td class="num total">{n.total}</td></tr>
                        </tbody>
                    </table>
                }
            })}
        </div>
    }
}
