//! The files pane: tabs, a textarea over a highlighted copy of its text (line numbers,
//! YAML colors, errors marked at line:column), the problems list and Apply.

use kubeloop_sim::manifest::Located;
use leptos::html;
use leptos::prelude::*;

use super::use_ui;
use crate::highlight::{escape, highlight};
use crate::i18n::Key;
use crate::session::shell_quote;

/// The UTF-16 offset (what textarea selections count) of a 1-based line and column.
pub fn offset_of(text: &str, line: usize, column: usize) -> u32 {
    let mut offset = 0usize;
    for (i, l) in text.split('\n').enumerate() {
        if i + 1 == line {
            let col: usize = l
                .chars()
                .take(column.saturating_sub(1))
                .map(char::len_utf16)
                .sum();
            return (offset + col) as u32;
        }
        offset += l.encode_utf16().count() + 1;
    }
    text.encode_utf16().count() as u32
}

/// The gutter's line numbers as HTML, lines with errors marked.
pub fn gutter_html(lines: usize, errors: &[Located]) -> String {
    (1..=lines.max(1))
        .map(|n| {
            let bad = errors.iter().any(|e| e.line == n);
            if bad {
                format!("<div class=\"ln err\" data-testid=\"gutter-error\">{n}</div>")
            } else {
                format!("<div class=\"ln\">{n}</div>")
            }
        })
        .collect()
}

/// The files pane.
#[component]
pub fn Editor() -> impl IntoView {
    let ui = use_ui();
    let file_text = move |f: String| {
        ui.session
            .try_with_value(|s| s.file(&f).unwrap_or("").to_string())
            .unwrap_or_default()
    };
    let current_text = move || file_text(ui.file.get());
    let text = RwSignal::new(file_text(ui.file.get_untracked()));
    Effect::new(move |prev: Option<()>| {
        ui.files_rev.track();
        let t = current_text();
        if prev.is_some() {
            text.set(t);
        }
    });
    let names = Memo::new(move |_| {
        ui.files_rev.track();
        ui.scenario_rev.track();
        ui.session
            .try_with_value(|s| s.file_names())
            .unwrap_or_default()
    });
    let errors = Memo::new(move |_| {
        ui.rev.track();
        text.track();
        let f = ui.file.get();
        ui.session
            .try_with_value(|s| s.editor_errors(&f))
            .unwrap_or_default()
    });
    let about = Memo::new(move |_| {
        ui.files_rev.track();
        let lang = ui.lang.get();
        ui.session
            .try_with_value(|s| crate::examples::description(s.scenario(), lang))
            .flatten()
    });
    let area: NodeRef<html::Textarea> = NodeRef::new();
    let pre: NodeRef<html::Pre> = NodeRef::new();
    let gutter: NodeRef<html::Div> = NodeRef::new();
    let sync_scroll = move || {
        if let (Some(a), Some(p), Some(g)) = (area.get(), pre.get(), gutter.get()) {
            p.set_scroll_top(a.scroll_top());
            p.set_scroll_left(a.scroll_left());
            g.set_scroll_top(a.scroll_top());
        }
    };
    let edit = move |value: String| {
        let f = ui.file.get_untracked();
        ui.update(|s| s.set_file(&f, &value));
        text.set(value);
    };
    let apply = move || {
        let f = ui.file.get_untracked();
        ui.run_button(&format!("kubectl apply -f {}", shell_quote(&f)));
    };
    let jump = move |line: usize, column: usize| {
        let Some(a) = area.get() else { return };
        let at = offset_of(&text.get_untracked(), line, column);
        let _ = a.focus();
        let _ = a.set_selection_range(at, at);
        // Bring the line into view: ~20px per line.
        a.set_scroll_top(((line as i32 - 5).max(0)) * 20);
        sync_scroll();
    };
    // Esc releases the editor: the next Tab moves on instead of indenting (as in
    // CodeMirror), so the keyboard is never trapped here.
    let released = RwSignal::new(false);
    let on_key = move |ev: leptos::ev::KeyboardEvent| {
        let key = ev.key();
        if key == "Escape" {
            released.set(true);
            return;
        }
        if released.get_untracked() {
            if key == "Tab" {
                released.set(false);
                return;
            }
            if !matches!(key.as_str(), "Shift" | "Control" | "Alt" | "Meta") {
                released.set(false);
            }
        }
        if key == "Tab" && !ev.shift_key() {
            ev.prevent_default();
            let Some(a) = area.get() else { return };
            let (start, end) = (
                a.selection_start().ok().flatten().unwrap_or(0),
                a.selection_end().ok().flatten().unwrap_or(0),
            );
            let _ = a.set_range_text_with_start_and_end("  ", start, end);
            let _ = a.set_selection_range(start + 2, start + 2);
            edit(a.value());
        } else if ev.key() == "Enter" && (ev.ctrl_key() || ev.meta_key()) {
            ev.prevent_default();
            apply();
        }
    };
    view! {
        <div class="pane-head">
            <span class="pane-title">{move || ui.t(Key::Files)}</span>
            <div class="tabs" role="tablist">
                <For each=move || names.get() key=|n| n.clone() let:name>
                    {
                        let n = name.clone();
                        let n2 = name.clone();
                        view! {
                            <button class="tab" role="tab" data-testid="file-tab"
                                class:active=move || ui.file.get() == n
                                on:click=move |_| ui.file.set(n2.clone())>{name}</button>
                        }
                    }
                </For>
            </div>
            <button class="btn primary apply" data-testid="apply" title=move || ui.t(Key::ApplyHint) on:click=move |_| apply()>
                <span aria-hidden="true">"▶"</span>" "{move || ui.t(Key::Apply)}
            </button>
        </div>
        {move || about.get().map(|d| view! { <div class="about" data-testid="about" title=move || ui.t(Key::About)>{d}</div> })}
        <div class="code" data-testid="editor">
            <div class="gutter" node_ref=gutter aria-hidden="true" inner_html=move || gutter_html(text.get().split('\n').count(), &errors.get())></div>
            <div class="code-body">
                <pre class="code-hl" node_ref=pre aria-hidden="true" inner_html=move || highlight(&text.get(), &errors.get())></pre>
                <textarea
                    class="code-input"
                    data-testid="editor-input"
                    node_ref=area
                    spellcheck="false"
                    autocomplete="off"
                    autocapitalize="off"
                    wrap="off"
                    aria-label=move || ui.file.get()
                    prop:value=move || text.get()
                    on:input=move |ev| edit(event_target_value(&ev))
                    on:scroll=move |_| sync_scroll()
                    aria-describedby="editor-keys"
                    on:keydown=on_key
                    on:blur=move |_| released.set(false)
                ></textarea>
            </div>
        </div>
        <div class="editor-keys" id="editor-keys" data-testid="editor-keys" aria-live="polite">
            {move || if released.get() { ui.t(Key::EditorReleased) } else { ui.t(Key::EditorKeys) }}
        </div>
        <div class="problems" data-testid="problems">
            <div class="problems-head">
                {move || ui.t(Key::EditorErrors)}
                <span class="count" class:bad=move || !errors.get().is_empty()>{move || errors.get().len()}</span>
            </div>
            {move || {
                let list = errors.get();
                if list.is_empty() {
                    view! { <div class="problem none">{move || ui.t(Key::NoErrors)}</div> }.into_any()
                } else {
                    list.into_iter().map(|e| {
                        let (line, column) = (e.line, e.column);
                        view! {
                            <button class="problem" data-testid="editor-error" data-line=line data-column=column on:click=move |_| jump(line, column)>
                                <span class="where">{format!("{line}:{column}")}</span>
                                <span class="what" inner_html=escape(&e.message)></span>
                            </button>
                        }
                    }).collect_view().into_any()
                }
            }}
        </div>
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasm_bindgen_test::wasm_bindgen_test;

    #[wasm_bindgen_test(unsupported = test)]
    fn should_count_offsets_in_utf16() {
        let text = "a: 1\nbé: 2\n😀: x";
        assert_eq!(offset_of(text, 1, 1), 0);
        assert_eq!(offset_of(text, 2, 3), 7);
        assert_eq!(offset_of(text, 3, 2), 13, "the emoji is two UTF-16 units");
        assert_eq!(offset_of(text, 9, 1), text.encode_utf16().count() as u32);
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn should_mark_error_lines_in_the_gutter() {
        let g = gutter_html(
            3,
            &[Located {
                line: 2,
                column: 1,
                message: "x".into(),
            }],
        );
        assert_eq!(g.matches("class=\"ln\"").count(), 2);
        assert_eq!(g.matches("gutter-error").count(), 1);
    }
}
