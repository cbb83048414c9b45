//! The lesson panel (design §6.20): the step the learner is on beside the cluster, its
//! check live (and why it does not hold yet), hints and the solution behind a click, the
//! steps done with their times, and a quiet note when the lesson is complete. The content
//! is `crate::lesson_view`'s; this draws it and keeps the progress in localStorage.

use leptos::prelude::*;

use super::timeline::{t_label, throttled_rev};
use super::{browser, use_ui, Ui};
use crate::i18n::{Key, Lang};
use crate::lesson_view::{LessonView, StepState, StepView};
use crate::markdown::{Block, Inline};

/// Draws a text's runs.
fn inline_view(runs: Vec<Inline>) -> impl IntoView {
    runs.into_iter()
        .map(|r| match r {
            Inline::Text(t) => view! { <span>{t}</span> }.into_any(),
            Inline::Code(t) => view! { <code>{t}</code> }.into_any(),
            Inline::Strong(t) => view! { <strong>{t}</strong> }.into_any(),
            Inline::Em(t) => view! { <em>{t}</em> }.into_any(),
            Inline::Link { text, url } => {
                view! { <a href=url target="_blank" rel="noopener noreferrer">{text}</a> }
                    .into_any()
            }
        })
        .collect_view()
}

/// Draws a text's blocks.
pub fn blocks_view(blocks: Vec<Block>) -> impl IntoView {
    blocks
        .into_iter()
        .map(|b| match b {
            Block::Para(runs) => view! { <p>{inline_view(runs)}</p> }.into_any(),
            Block::Code(code) => view! { <pre class="ls-code mono">{code}</pre> }.into_any(),
            Block::List { ordered, items } => {
                let items = items
                    .into_iter()
                    .map(|runs| view! { <li>{inline_view(runs)}</li> })
                    .collect_view();
                if ordered {
                    view! { <ol>{items}</ol> }.into_any()
                } else {
                    view! { <ul>{items}</ul> }.into_any()
                }
            }
        })
        .collect_view()
}

/// What the learner opened on the current step: how many hints, whether the solution.
/// Kept by the panel (its content is redrawn as checks change), keyed by the step.
#[derive(Clone, Copy)]
struct Help {
    hints: RwSignal<(usize, usize)>,
    solution: RwSignal<Option<usize>>,
}

/// The current step's hints, one more per click, and its solution.
fn help_view(ui: Ui, help: Help, step: &StepView) -> impl IntoView {
    let number = step.number;
    let shown = Signal::derive(move || {
        let (n, count) = help.hints.get();
        if n == number {
            count
        } else {
            0
        }
    });
    let solution_open = Signal::derive(move || help.solution.get() == Some(number));
    let hints = step.hints.clone();
    let total = hints.len();
    let solution = step.solution.clone();
    let has_solution = solution.is_some();
    view! {
        <div class="ls-help">
            {move || {
                let n = shown.get();
                hints.iter().take(n).cloned().enumerate().map(|(i, h)| view! {
                    <div class="ls-hint" data-testid="lesson-hint" data-n=(i + 1).to_string()>{blocks_view(h)}</div>
                }).collect_view()
            }}
            <div class="ls-buttons">
                <button class="btn ghost" data-testid="lesson-hint-button"
                    hidden=move || { shown.get() >= total }
                    on:click=move |_| help.hints.set((number, shown.get_untracked() + 1))>
                    {move || if shown.get() == 0 {
                        ui.t(Key::LessonHint).to_string()
                    } else {
                        ui.t(Key::LessonNextHint)
                            .replace("{i}", &(shown.get() + 1).to_string())
                            .replace("{n}", &total.to_string())
                    }}
                </button>
                <button class="btn ghost" data-testid="lesson-solution-button" hidden=!has_solution
                    aria-expanded=move || solution_open.get().to_string()
                    on:click=move |_| help.solution.set((!solution_open.get_untracked()).then_some(number))>
                    {move || if solution_open.get() { ui.t(Key::LessonHideSolution) } else { ui.t(Key::LessonSolution) }}
                </button>
            </div>
            {move || solution_open.get().then(|| solution.clone().map(|s| view! {
                <div class="ls-solution" data-testid="lesson-solution">{blocks_view(s)}</div>
            }))}
        </div>
    }
}

fn step_view(ui: Ui, help: Help, step: StepView) -> impl IntoView {
    let state = match step.state {
        StepState::Done(_) => "done",
        StepState::Current => "current",
        StepState::Later => "later",
    };
    let when = match step.state {
        StepState::Done(at) => ui.t(Key::LessonCompletedAt).replace("{t}", &t_label(at)),
        _ => String::new(),
    };
    let current = step.state == StepState::Current;
    let check = step.check.clone();
    let help = current.then(|| help_view(ui, help, &step));
    view! {
        <li class=format!("ls-step {state}") data-testid="lesson-step" data-state=state
            aria-current=current.then_some("step")>
            <div class="ls-head">
                <span class="ls-n" aria-hidden="true">{if state == "done" { "✓".to_string() } else { step.number.to_string() }}</span>
                <span class="ls-title">{step.title.clone()}</span>
                <span class="ls-when mono">{when}</span>
            </div>
            {current.then(|| view! {
                <div class="ls-body">
                    <div class="ls-text" data-testid="lesson-text">{blocks_view(step.text.clone())}</div>
                    {check.map(|(holds, why)| view! {
                        <p class="ls-check" class:holds=holds data-testid="lesson-check">
                            <span class="ls-check-label">{move || if holds { ui.t(Key::LessonChecking) } else { ui.t(Key::LessonNotYet) }}</span>
                            " "<span>{why}</span>
                        </p>
                    })}
                    {help}
                </div>
            })}
        </li>
    }
}

/// Records the lesson's progress for the lessons list.
fn remember(ui: Ui) {
    let Some(Some((id, done, total))) = ui.session.try_with_value(|s| s.lesson_progress()) else {
        return;
    };
    let mut progress = browser::saved_lessons();
    if progress.record(&id, done, total) {
        browser::save_lessons(&progress);
    }
}

/// Copies a link to the lesson (`#lesson=ID`, the gallery's lessons only; any other
/// lesson travels as a share link with its whole scenario).
fn copy_link(ui: Ui, copied: RwSignal<bool>) {
    let Some(scenario) = ui.session.try_with_value(|s| s.scenario().clone()) else {
        return;
    };
    let fragment = if crate::examples::lesson(&scenario.metadata.name).is_some() {
        crate::startup::lesson_fragment(&scenario.metadata.name)
    } else {
        crate::startup::share_fragment(&scenario)
    };
    let href = browser::href();
    let base = href.split('#').next().unwrap_or_default();
    let url = format!("{base}{fragment}");
    leptos::task::spawn_local(async move {
        let ok = browser::copy(&url).await;
        copied.set(ok);
    });
}

/// The panel, shown while the scenario is a lesson.
#[component]
pub fn LessonPanel() -> impl IntoView {
    let ui = use_ui();
    // The lesson's checks are its point: always told.
    let tick = throttled_rev(ui, 250.0, RwSignal::new(true));
    let copied = RwSignal::new(false);
    let help = Help {
        hints: RwSignal::new((0, 0)),
        solution: RwSignal::new(None),
    };
    Effect::new(move |_| {
        ui.files_rev.track();
        help.hints.set((0, 0));
        help.solution.set(None);
        // A lesson opens on its steps (on a phone, the Controls tab holds them).
        let is_lesson = ui
            .session
            .try_with_value(|s| s.scenario().spec.lesson.is_some())
            .unwrap_or(false);
        if is_lesson {
            ui.pane.set(super::tabs::Pane::Controls);
        }
    });
    Effect::new(move |_| {
        tick.track();
        ui.scenario_rev.track();
        let changed = ui.session.try_update_value(|s| s.check_lesson());
        if changed == Some(true) {
            ui.sync();
        }
        remember(ui);
    });
    let data = Memo::new(move |_| -> Option<LessonView> {
        tick.track();
        ui.scenario_rev.track();
        let zh = ui.lang.get() == Lang::Zh;
        ui.session.try_with_value(|s| s.lesson_view(zh)).flatten()
    });
    move || {
        data.get().map(|v| {
            let (done, total) = (v.done, v.steps.len());
            let complete = v.complete();
            let label = ui
                .t(Key::LessonStepOf)
                .replace("{i}", &(done + 1).min(total).to_string())
                .replace("{n}", &total.to_string());
            view! {
                <section class="pane lesson-pane" data-testid="lesson" aria-labelledby="lesson-title">
                    <div class="pane-head">
                        <span class="pane-title" id="lesson-title">{v.title.clone()}</span>
                        <span class="ls-progress mono" data-testid="lesson-progress">{format!("{done}/{total}")}</span>
                        <button class="btn ghost small" data-testid="lesson-link" title=move || ui.t(Key::LessonLink)
                            aria-label=move || ui.t(Key::LessonLink) on:click=move |_| copy_link(ui, copied)>
                            {move || if copied.get() { ui.t(Key::Copied) } else { ui.t(Key::LessonLinkShort) }}
                        </button>
                        <button class="btn ghost small" data-testid="lesson-restart" on:click=move |_| {
                            ui.update(|s| s.restart_lesson());
                            ui.selected.set(None);
                        }>{move || ui.t(Key::LessonRestart)}</button>
                    </div>
                    <div class="ls-bar" role="progressbar" aria-label=label.clone()
                        aria-valuemin="0" aria-valuemax=total.to_string() aria-valuenow=done.to_string()>
                        <div class="ls-fill" style=format!("width:{}%", done * 100 / total.max(1))></div>
                    </div>
                    <div role="status" aria-live="polite" class="ls-live">
                        {if complete {
                            view! { <p class="ls-complete" data-testid="lesson-complete">{move || ui.t(Key::LessonComplete)}</p> }.into_any()
                        } else {
                            view! { <span class="ls-step-of">{label}</span> }.into_any()
                        }}
                    </div>
                    <ol class="ls-steps">
                        {v.steps.into_iter().map(|s| step_view(ui, help, s)).collect_view()}
                    </ol>
                </section>
            }
        })
    }
}
