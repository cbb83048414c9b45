//! Failure switches: stop and start each control-plane component, cut or power off each
//! node. Every switch runs its `sim` command in the terminal, so the learner sees it.

use leptos::prelude::*;

use super::use_ui;
use crate::i18n::Key;

/// The `sim` command that flips a component: `sim stop kube-scheduler`.
pub fn component_command(name: &str, running: bool) -> String {
    format!("sim {} {name}", if running { "stop" } else { "start" })
}

/// The `sim` command that flips a node's network or power.
pub fn node_command(node: &str, power: bool, on: bool) -> String {
    let verb = match (power, on) {
        (false, true) => "partition",
        (false, false) => "heal",
        (true, true) => "poweroff",
        (true, false) => "poweron",
    };
    format!("sim {verb} {node}")
}

/// A node's switch row: name, network up, powered, the cluster's status.
pub type NodeRow = (String, bool, bool, String);

/// At most this many node rows: beyond it the list is filtered by name (a cluster of
/// 5,000 nodes would otherwise be 35,000 elements in a pane nobody scrolls through).
pub const NODE_ROWS: usize = 100;

/// The rows shown for `filter`: the nodes whose name contains it, those the learner cut
/// off or powered down first (so they can be brought back), the rest in order; at most
/// [`NODE_ROWS`], and how many matching nodes that leaves out.
pub fn node_rows(nodes: &[NodeRow], filter: &str) -> (Vec<NodeRow>, usize) {
    let filter = filter.trim();
    let matching = || nodes.iter().filter(|n| n.0.contains(filter));
    let down = |n: &&NodeRow| !n.1 || !n.2;
    let rows: Vec<NodeRow> = matching()
        .filter(down)
        .chain(matching().filter(|n| !down(n)))
        .take(NODE_ROWS)
        .cloned()
        .collect();
    let left = matching().count() - rows.len();
    (rows, left)
}

fn consequence(name: &str) -> Key {
    match name {
        "etcd" => Key::DownEtcd,
        "kube-apiserver" => Key::DownApiServer,
        "kube-controller-manager" => Key::DownControllerManager,
        _ => Key::DownScheduler,
    }
}

/// A switch: a labelled toggle with `role=switch`.
#[component]
fn Toggle(
    #[prop(into)] testid: String,
    #[prop(into)] on: Signal<bool>,
    #[prop(into)] label: String,
    on_flip: impl Fn() + 'static,
) -> impl IntoView {
    view! {
        <button
            class="toggle"
            class:on=move || on.get()
            role="switch"
            aria-checked=move || on.get().to_string()
            data-testid=testid
            title=label.clone()
            aria-label=label.clone()
            on:click=move |_| on_flip()
        >
            <span class="knob"></span>
        </button>
    }
}

/// The switches panel.
#[component]
pub fn Switches() -> impl IntoView {
    let ui = use_ui();
    let state = Memo::new(move |_| {
        ui.panels_rev.track();
        ui.session
            .try_update_value(|s| {
                let v = s.view();
                let comps: Vec<(&'static str, bool)> =
                    v.components.iter().map(|c| (c.name, c.running)).collect();
                let nodes: Vec<NodeRow> = v
                    .nodes
                    .iter()
                    .map(|n| (n.name.clone(), !n.partitioned, n.powered, n.status.clone()))
                    .collect();
                (comps, nodes)
            })
            .unwrap_or_default()
    });
    let filter = RwSignal::new(String::new());
    let rows = Memo::new(move |_| state.with(|(_, n)| filter.with(|f| node_rows(n, f))));
    let many = move || state.with(|(_, n)| n.len() > NODE_ROWS);
    let component = move |name: &'static str| {
        Signal::derive(move || {
            state.with(|(c, _)| c.iter().find(|x| x.0 == name).is_some_and(|x| x.1))
        })
    };
    view! {
        <section class="switches" data-testid="switches">
            <div class="side-head">
                <h2>{move || ui.t(Key::Failures)}</h2>
                <p class="muted">{move || ui.t(Key::FailuresHint)}</p>
            </div>
            <ul class="switch-list">
                {["etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler"].into_iter().map(|name| {
                    let on = component(name);
                    view! {
                        <li class="switch-row" class:down=move || !on.get()>
                            <Toggle testid=format!("switch-{name}") on=on label=name.to_string()
                                on_flip=move || ui.run_button(&component_command(name, on.get_untracked()))/>
                            <div class="switch-text">
                                <span class="mono">{name}</span>
                                <span class="switch-state">{move || if on.get() { ui.t(Key::Running) } else { ui.t(Key::Stopped) }}</span>
                                <Show when=move || !on.get()>
                                    <span class="consequence">{move || format!("⚠ {}", ui.t(consequence(name)))}</span>
                                </Show>
                            </div>
                        </li>
                    }
                }).collect_view()}
            </ul>
            <div class="node-switches">
                <div class="node-switch-head muted">
                    <span>{move || ui.t(Key::Nodes)}</span>
                    <span>{move || ui.t(Key::Network)}</span>
                    <span>{move || ui.t(Key::Power)}</span>
                </div>
                <Show when=many>
                    <input type="search" class="node-filter" data-testid="node-filter"
                        placeholder=move || ui.t(Key::NodeFilter) aria-label=move || ui.t(Key::NodeFilter)
                        prop:value=move || filter.get()
                        on:input=move |ev| filter.set(event_target_value(&ev))/>
                </Show>
                <For each=move || rows.get().0 key=|n| n.clone() let:n>
                    {
                        let (name, net, power, status) = n;
                        let (a, b) = (name.clone(), name.clone());
                        view! {
                            <div class="node-switch" data-testid="node-switch" data-node=name.clone()>
                                <span class="mono node-switch-name">{name.clone()}<span class=format!("status {}", status.to_lowercase())>{status.clone()}</span></span>
                                <Toggle testid=format!("switch-network-{name}") on=Signal::derive(move || net) label=format!("{name} network")
                                    on_flip=move || ui.run_button(&node_command(&a, false, net))/>
                                <Toggle testid=format!("switch-power-{name}") on=Signal::derive(move || power) label=format!("{name} power")
                                    on_flip=move || ui.run_button(&node_command(&b, true, power))/>
                            </div>
                        }
                    }
                </For>
                <Show when=move || rows.with(|r| r.1 > 0)>
                    <p class="muted small" data-testid="nodes-more">
                        {move || ui.t(Key::NodesMore).replace("{n}", &rows.with(|r| r.1).to_string())}
                    </p>
                </Show>
                <p class="muted small">{move || ui.t(Key::DownNode)}</p>
            </div>
        </section>
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasm_bindgen_test::wasm_bindgen_test;

    #[wasm_bindgen_test(unsupported = test)]
    fn should_run_the_matching_sim_command() {
        assert_eq!(
            component_command("kube-scheduler", true),
            "sim stop kube-scheduler"
        );
        assert_eq!(component_command("etcd", false), "sim start etcd");
        assert_eq!(node_command("node-2", false, true), "sim partition node-2");
        assert_eq!(node_command("node-2", false, false), "sim heal node-2");
        assert_eq!(node_command("node-3", true, true), "sim poweroff node-3");
        assert_eq!(node_command("node-3", true, false), "sim poweron node-3");
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn should_list_down_nodes_first_and_at_most_a_hundred() {
        let nodes: Vec<NodeRow> = (1..=1000)
            .map(|i| (format!("node-{i}"), i != 700, i != 900, "Ready".to_string()))
            .collect();
        let (rows, left) = node_rows(&nodes, "");
        assert_eq!(rows.len(), NODE_ROWS);
        assert_eq!(left, 900);
        assert_eq!(rows[0].0, "node-700", "cut off: listed first to be healed");
        assert_eq!(rows[1].0, "node-900", "powered off");
        assert_eq!(rows[2].0, "node-1");
        let (rows, left) = node_rows(&nodes, " node-99");
        let names: Vec<&str> = rows.iter().map(|r| r.0.as_str()).collect();
        assert_eq!(names[..3], ["node-99", "node-990", "node-991"]);
        assert_eq!((rows.len(), left), (11, 0));
        assert_eq!(node_rows(&nodes[..5], "").0.len(), 5);
    }
}
