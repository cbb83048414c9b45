//! The seven stages of the pod creation flow (the seed notes' mnemonic chain), lit as
//! they happen, with their virtual times.

use kubeloop_sim::time::Time;
use kubeloop_sim::view::Stage;
use leptos::prelude::*;

use super::use_ui;
use crate::i18n::Key;

/// How long a stage glows after it happened (virtual ms).
pub const FRESH_MS: Time = 1500;

/// Each stage's state: `lit` when it happened in the latest run (which starts at the
/// newest `kubectl` write) and not before an earlier lit stage (a run may skip stages:
/// self-healing starts at the ReplicaSet controller); `stale` when it happened but not
/// so; `idle` when it never happened. "Proxy通" follows "Kubelet建": kube-proxy's
/// boot-time sync is not this run's.
pub fn stage_states(stages: &[Stage]) -> Vec<&'static str> {
    let run = stages.first().and_then(|s| s.at);
    let mut last_lit: Option<Time> = None;
    let mut out: Vec<&'static str> = Vec::with_capacity(stages.len());
    for (i, s) in stages.iter().enumerate() {
        let follows_kubelet = |at: Time| {
            i != 6 || (out.get(5) == Some(&"lit") && stages[5].at.is_some_and(|k| at >= k))
        };
        let state = match (s.at, run) {
            (None, _) => "idle",
            (Some(at), Some(run))
                if at >= run && last_lit.is_none_or(|l| at >= l) && follows_kubelet(at) =>
            {
                last_lit = Some(at);
                "lit"
            }
            _ => "stale",
        };
        out.push(state);
    }
    out
}

/// One stage's state (see [`stage_states`]).
pub fn stage_state(stages: &[Stage], i: usize) -> &'static str {
    stage_states(stages).get(i).copied().unwrap_or("idle")
}

/// The time shown beside a stage: `+15ms` after the run's start for a lit stage, else
/// when it last happened, `t=12.003s`.
pub fn stage_time(stages: &[Stage], i: usize) -> String {
    let Some(at) = stages.get(i).and_then(|s| s.at) else {
        return String::new();
    };
    match stages.first().and_then(|s| s.at) {
        Some(run) if i > 0 && stage_state(stages, i) == "lit" => {
            format!("+{}", kubeloop_sim::time::format_duration(at - run))
        }
        _ => format!("t={}s", kubeloop_sim::runner::seconds(at)),
    }
}

fn stage_key(n: u8) -> Key {
    match n {
        1 => Key::Stage1,
        2 => Key::Stage2,
        3 => Key::Stage3,
        4 => Key::Stage4,
        5 => Key::Stage5,
        6 => Key::Stage6,
        _ => Key::Stage7,
    }
}

/// The flow panel.
#[component]
pub fn Flow() -> impl IntoView {
    let ui = use_ui();
    let stages = Memo::new(move |_| {
        ui.rev.track();
        ui.session
            .try_update_value(|s| {
                s.view();
                s.stages().to_vec()
            })
            .unwrap_or_default()
    });
    view! {
        <section class="flow" data-testid="flow">
            <div class="side-head">
                <h2>{move || ui.t(Key::Flow)}</h2>
                <p class="muted">{move || ui.t(Key::FlowHint)}</p>
            </div>
            <div class="chain" data-testid="mnemonic">
                {move || {
                    let st = stages.get();
                    st.iter().enumerate().map(|(i, s)| {
                        view! { <span class=format!("link {}", stage_state(&st, i))>{s.mnemonic}</span><span class="arrow">"→"</span> }
                    }).collect_view()
                }}
                <span class=move || {
                    let st = stages.get();
                    if st.len() >= 6 && (0..6).all(|i| stage_state(&st, i) == "lit") { "link lit alive" } else { "link idle" }
                }>"Pod活"</span>
            </div>
            <ol class="stages">
                <For each=move || 0..7usize key=|i| *i let:i>
                    {
                        let state = move || stage_state(&stages.get(), i);
                        let fresh = move || {
                            stages.with(|st| st.get(i).and_then(|s| s.at)).is_some_and(|at| ui.clock.get().saturating_sub(at) < FRESH_MS && state() == "lit")
                        };
                        view! {
                            <li class=move || format!("stage {}", state()) class:fresh=fresh data-testid="stage" data-stage=i + 1 data-state=state
                                title=move || stages.with(|st| st.get(i).map(|s| s.detail.clone()).unwrap_or_default())>
                                <span class="num">{i + 1}</span>
                                <div class="stage-body">
                                    <div class="stage-top">
                                        <span class="mnemonic">{move || stages.with(|st| st.get(i).map(|s| s.mnemonic).unwrap_or(""))}</span>
                                        <span class="stage-time mono" data-testid="stage-time">{move || {
                                            let st = stages.get();
                                            if st.get(i).and_then(|s| s.at).is_some() { stage_time(&st, i) } else { ui.t(Key::FlowNotYet).to_string() }
                                        }}</span>
                                    </div>
                                    <div class="stage-title">{move || {
                                        if i == 6 && state() != "lit" { ui.t(Key::ProxyHint) } else { ui.t(stage_key(i as u8 + 1)) }
                                    }}</div>
                                </div>
                            </li>
                        }
                    }
                </For>
            </ol>
        </section>
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasm_bindgen_test::wasm_bindgen_test;

    fn stage(n: u8, at: Option<Time>) -> Stage {
        Stage {
            number: n,
            title: "",
            mnemonic: "",
            at,
            detail: String::new(),
        }
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn should_light_the_stages_of_the_latest_run() {
        let st = vec![
            stage(1, Some(5000)),
            stage(2, Some(5003)),
            stage(3, Some(100)),
            stage(4, None),
        ];
        assert_eq!(stage_states(&st), ["lit", "lit", "stale", "idle"]);
        assert_eq!(stage_time(&st, 0), "t=5s");
        assert_eq!(stage_time(&st, 1), "+3ms");
        assert_eq!(stage_time(&st, 2), "t=0.1s");
        assert_eq!(stage_time(&st, 3), "");
        let healed = vec![
            stage(1, Some(40_000)),
            stage(2, Some(40_002)),
            stage(3, Some(450)),
            stage(4, Some(40_010)),
            stage(5, Some(40_020)),
            stage(6, Some(44_000)),
            stage(7, Some(1000)),
        ];
        assert_eq!(
            stage_states(&healed),
            ["lit", "lit", "stale", "lit", "lit", "lit", "stale"],
            "a run may skip a stage"
        );
        let boot_sync = vec![
            stage(1, Some(400)),
            stage(2, Some(402)),
            stage(3, Some(404)),
            stage(4, Some(410)),
            stage(5, Some(420)),
            stage(6, None),
            stage(7, Some(1000)),
        ];
        assert_eq!(
            stage_state(&boot_sync, 6),
            "stale",
            "kube-proxy's sync before any kubelet report is not this run's"
        );
        let exposed = vec![
            stage(1, Some(400)),
            stage(2, Some(402)),
            stage(3, Some(404)),
            stage(4, Some(410)),
            stage(5, Some(420)),
            stage(6, Some(4000)),
            stage(7, Some(31_000)),
        ];
        assert_eq!(stage_state(&exposed, 6), "lit");
        let out_of_order = vec![
            stage(1, Some(400)),
            stage(2, Some(402)),
            stage(3, Some(4000)),
            stage(4, Some(1000)),
        ];
        assert_eq!(stage_state(&out_of_order, 3), "stale");
        assert_eq!(
            stage_state(&[stage(1, None), stage(7, Some(1))], 1),
            "stale"
        );
    }
}
