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
                let nodes: Vec<(String, bool, bool, String)> = v
                    .nodes
                    .iter()
                    .map(|n| (n.name.clone(), !n.partitioned, n.powered, n.status.clone()))
                    .collect();
                (comps, nodes)
            })
            .unwrap_or_default()
    });
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
                <For each=move || state.get().1 key=|n| n.clone() let:n>
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
}
