//! The seven stages of the pod creation flow (the seed notes' mnemonic chain), lit as
//! they happen, with their virtual times.

use kubeloop_sim::time::Time;
use kubeloop_sim::view::Stage;
use leptos::prelude::*;

use super::use_ui;
use crate::i18n::Key;

/// How long a stage glows after it happened (virtual ms).
pub const FRESH_MS: Time = 1500;

/// A stage's state: `lit` when it happened in the latest run (which starts at the newest
/// `kubectl` write) after the stage before it was lit, `stale` when it happened but not
/// so (an earlier run, or out of causal order: kube-proxy's boot-time sync is not this
/// run's "Proxy通"), `idle` when it never happened.
pub fn stage_state(stages: &[Stage], i: usize) -> &'static str {
    let Some(at) = stages.get(i).and_then(|s| s.at) else { return "idle" };
    let in_run = stages.first().and_then(|s| s.at).is_some_and(|run| at >= run);
    let after_previous = i == 0 || (stage_state(stages, i - 1) == "lit" && stages[i - 1].at.is_some_and(|p| at >= p));
    if in_run && after_previous {
        "lit"
    } else {
        "stale"
    }
}

/// The time shown beside a stage: `t=12.003s` for the first, `+15ms` after it in a run.
pub fn stage_time(stages: &[Stage], i: usize) -> String {
    let Some(at) = stages.get(i).and_then(|s| s.at) else { return String::new() };
    let abs = format!("t={}s", kubeloop_sim::runner::seconds(at));
    match stages.first().and_then(|s| s.at) {
        Some(run) if i > 0 && at >= run => format!("+{}", kubeloop_sim::time::format_duration(at - run)),
        _ => abs,
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
        ui.session.try_update_value(|s| {
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
                            <li class=move || format!("stage {}", state()) class:fresh=fresh data-testid="stage" data-stage=i + 1 data-state=state>
                                <span class="num">{i + 1}</span>
                                <div class="stage-body">
                                    <div class="stage-top">
                                        <span class="mnemonic">{move || stages.with(|st| st.get(i).map(|s| s.mnemonic).unwrap_or(""))}</span>
                                        <span class="stage-time mono" data-testid="stage-time">{move || {
                                            let st = stages.get();
                                            if st.get(i).and_then(|s| s.at).is_some() { stage_time(&st, i) } else { ui.t(Key::FlowNotYet).to_string() }
                                        }}</span>
                                    </div>
                                    <div class="stage-title">{move || ui.t(stage_key(i as u8 + 1))}</div>
                                    <div class="stage-detail mono" title=move || stages.with(|st| st.get(i).map(|s| s.detail.clone()).unwrap_or_default())>
                                        {move || {
                                            let st = stages.get();
                                            match st.get(i) {
                                                Some(s) if !s.detail.is_empty() => s.detail.clone(),
                                                _ if i == 6 => ui.t(Key::ProxyHint).to_string(),
                                                _ => String::new(),
                                            }
                                        }}
                                    </div>
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
        Stage { number: n, title: "", mnemonic: "", at, detail: String::new() }
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn should_light_the_stages_of_the_latest_run() {
        let st = vec![stage(1, Some(5000)), stage(2, Some(5003)), stage(3, Some(100)), stage(4, None)];
        assert_eq!(stage_state(&st, 0), "lit");
        assert_eq!(stage_state(&st, 1), "lit");
        assert_eq!(stage_state(&st, 2), "stale");
        assert_eq!(stage_state(&st, 3), "idle");
        let boot_sync = vec![stage(1, Some(400)), stage(2, Some(402)), stage(3, Some(4200)), stage(4, Some(1000))];
        assert_eq!(stage_state(&boot_sync, 3), "stale", "before the stage it follows");
        let healed = vec![stage(1, Some(400)), stage(2, Some(402)), stage(3, Some(450)), stage(4, Some(40_000))];
        assert_eq!(stage_state(&healed, 3), "lit", "self-healing re-lights a later stage alone");
        assert_eq!(stage_time(&st, 0), "t=5s");
        assert_eq!(stage_time(&st, 1), "+3ms");
        assert_eq!(stage_time(&st, 2), "t=0.1s");
        assert_eq!(stage_time(&st, 3), "");
        let no_run = vec![stage(1, None), stage(7, Some(1))];
        assert_eq!(stage_state(&no_run, 1), "stale");
    }
}
