//! The terminal pane: the scrollback, the input line with history (↑/↓), Ctrl-C, and a
//! status line saying what the terminal waits for.

use leptos::html;
use leptos::prelude::*;

use super::header::clock_text;
use super::{browser, use_ui};
use crate::i18n::Key;
use crate::terminal::{LineKind, TermLine};

/// The terminal pane.
#[component]
pub fn Console() -> impl IntoView {
    let ui = use_ui();
    // A cheap signature first, so the lines are cloned only when they changed.
    let signature = Memo::new(move |_| {
        ui.panels_rev.track();
        ui.session
            .try_with_value(|s| {
                let t = s.terminal();
                (
                    t.lines().next().map(|l| l.id),
                    t.lines().last().map(|l| l.id),
                )
            })
            .unwrap_or_default()
    });
    let lines = Memo::new(move |_| {
        let _ = signature.get();
        ui.session
            .try_with_value(|s| s.terminal().lines().cloned().collect::<Vec<TermLine>>())
            .unwrap_or_default()
    });
    let busy = Memo::new(move |_| {
        ui.panels_rev.track();
        ui.session.try_with_value(|s| {
            let (line, queued) = s.busy();
            (line.map(str::to_string), queued)
        })
    });
    let input = RwSignal::new(String::new());
    let scroll: NodeRef<html::Div> = NodeRef::new();
    let field: NodeRef<html::Input> = NodeRef::new();
    Effect::new(move |_| {
        let _ = signature.get();
        request_animation_frame(move || {
            // The view may be gone by the next frame.
            if let Some(el) = scroll.try_get_untracked().flatten() {
                el.set_scroll_top(el.scroll_height());
            }
        });
    });
    let on_key = move |ev: leptos::ev::KeyboardEvent| {
        let key = ev.key();
        match key.as_str() {
            "Enter" => {
                let line = input.get_untracked();
                input.set(String::new());
                ui.update(|s| s.submit(&line));
            }
            "ArrowUp" | "ArrowDown" => {
                ev.prevent_default();
                let current = input.get_untracked();
                let next = ui
                    .update(|s| {
                        if key == "ArrowUp" {
                            s.terminal_mut().history_up(&current)
                        } else {
                            s.terminal_mut().history_down()
                        }
                    })
                    .flatten();
                if let Some(n) = next {
                    input.set(n);
                }
            }
            "c" | "C" if ev.ctrl_key() => {
                let selecting = field.get_untracked().is_some_and(|f| {
                    f.selection_start().ok().flatten() != f.selection_end().ok().flatten()
                });
                if !selecting {
                    ev.prevent_default();
                    input.set(String::new());
                    ui.update(|s| s.interrupt());
                }
            }
            // Tab completes what is typed (an empty line lets Tab move the focus on).
            "Tab" if !ev.shift_key() && !input.get_untracked().is_empty() => {
                ev.prevent_default();
                let current = input.get_untracked();
                let completed = ui.update(|s| s.complete(&current));
                if let Some(line) = completed {
                    input.set(line);
                }
            }
            "Escape" => {
                if let Some(f) = field.get_untracked() {
                    let _ = f.blur();
                }
            }
            "l" | "L" if ev.ctrl_key() => {
                ev.prevent_default();
                ui.update(|s| s.submit("clear"));
            }
            _ => {}
        }
    };
    let focus_input = move |_| {
        let selected = window()
            .get_selection()
            .ok()
            .flatten()
            .is_some_and(|s| !s.is_collapsed());
        if !selected {
            if let Some(f) = field.get_untracked() {
                let _ = f.focus();
            }
        }
    };
    let dropped = Memo::new(move |_| {
        let _ = signature.get();
        ui.session
            .try_with_value(|s| s.terminal().dropped())
            .unwrap_or_default()
    });
    // The copy button's answer, shown for a moment.
    let copied = RwSignal::new(None::<bool>);
    let copy = move |_| {
        let text = ui
            .session
            .try_with_value(|s| s.terminal().as_text())
            .unwrap_or_default();
        leptos::task::spawn_local(async move {
            let ok = browser::copy(&text).await;
            copied.set(Some(ok));
            gloo_timers::future::TimeoutFuture::new(2_000).await;
            copied.set(None);
        });
    };
    view! {
        <div class="pane-head">
            <span class="pane-title">{move || ui.t(Key::Terminal)}</span>
            <span class="pane-hint">{move || ui.t(Key::TerminalHint)}</span>
            <button class="btn ghost term-copy" data-testid="terminal-copy" title=move || ui.t(Key::CopyOutputHint)
                aria-label=move || ui.t(Key::CopyOutputHint) on:click=copy>
                {move || match copied.get() {
                    Some(true) => ui.t(Key::Copied),
                    Some(false) => ui.t(Key::CopyFailed),
                    None => ui.t(Key::CopyOutput),
                }}
            </button>
        </div>
        <div class="term" data-testid="terminal" on:click=focus_input>
            <div class="scrollback" node_ref=scroll data-testid="terminal-output"
                role="log" aria-live="polite" aria-relevant="additions" aria-label=move || ui.t(Key::Terminal)>
                {move || (dropped.get() > 0).then(|| view! {
                    <div class="tl info trimmed" data-testid="terminal-trimmed">
                        {move || format!("({} · {} {})", ui.t(Key::TerminalTrimmed), crate::terminal::MAX_LINES, ui.t(Key::TerminalLines))}
                    </div>
                })}
                <For each=move || lines.get() key=|l| l.id let:l>
                    <TermRow line=l/>
                </For>
            </div>
            <div class="term-input">
                <span class="ps1" aria-hidden="true">
                    {move || {
                        ui.panels_rev.track();
                        ui.session
                            .try_with_value(|s| s.shell_prompt())
                            .flatten()
                            .unwrap_or_else(|| "$".to_string())
                    }}
                </span>
                <input
                    data-testid="terminal-input"
                    node_ref=field
                    type="text"
                    spellcheck="false"
                    autocomplete="off"
                    aria-label=move || ui.t(Key::Terminal)
                    prop:value=move || input.get()
                    on:input=move |ev| input.set(event_target_value(&ev))
                    on:keydown=on_key
                />
            </div>
            <div class="term-status" data-testid="terminal-status">
                {move || {
                    let paused = !ui.playing.get();
                    match busy.get() {
                        Some((Some(line), queued)) => {
                            let waiting = if queued > 0 { format!(" · {} {queued}", ui.t(Key::TerminalWaiting)) } else { String::new() };
                            let note = if paused { format!(" · {}", ui.t(Key::TerminalPaused)) } else { String::new() };
                            format!("⏳ {line}{waiting}{note} · Ctrl-C")
                        }
                        _ if paused => format!("❚❚ {}", ui.t(Key::TerminalPaused)),
                        _ => String::new(),
                    }
                }}
            </div>
        </div>
    }
}

/// One scrollback line.
#[component]
fn TermRow(line: TermLine) -> impl IntoView {
    let kind = line.kind;
    let class = format!("tl {}", kind.as_str());
    match kind {
        LineKind::Prompt | LineKind::Step => view! {
            <div class=class data-testid="terminal-line">
                <span class="tl-time">{line.at.map(clock_text).unwrap_or_default()}</span>
                <span class="tl-ps1">{match (&line.ps1, kind) {
                    (Some(ps1), _) => ps1.clone(),
                    (None, LineKind::Step) => "▸ $".to_string(),
                    (None, _) => "$".to_string(),
                }}</span>
                <span class="tl-cmd">{line.text}</span>
            </div>
        }
        .into_any(),
        _ => view! { <div class=class data-testid="terminal-line">{line.text}</div> }.into_any(),
    }
}
