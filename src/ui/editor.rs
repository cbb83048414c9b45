//! The files pane: the file tabs (editor_tabs.rs), a CodeMirror 6 editor (YAML mode,
//! lint squiggles and gutter markers at line:column, search, undo per file), the
//! problems list and Apply.

use kubeloop_sim::manifest::Located;
use leptos::html;
use leptos::prelude::*;
use wasm_bindgen::prelude::*;

use super::codemirror::KubeloopEditor;
use super::editor_tabs::FileTabs;
use super::use_ui;
use crate::highlight::escape;
use crate::i18n::Key;
use crate::session::shell_quote;

/// The problems as the editor's JavaScript reads them: `[{line, column, message}]`.
pub fn problems_json(errors: &[Located]) -> String {
    serde_json::Value::Array(
        errors
            .iter()
            .map(|e| serde_json::json!({"line": e.line, "column": e.column, "message": e.message}))
            .collect(),
    )
    .to_string()
}

/// The mounted editor and the callbacks it calls (kept alive as long as it is).
struct Mounted {
    view: KubeloopEditor,
    _callbacks: (
        Closure<dyn FnMut(String)>,
        Closure<dyn FnMut()>,
        Closure<dyn FnMut(bool)>,
    ),
}

/// The files pane.
#[component]
pub fn Editor() -> impl IntoView {
    let ui = use_ui();
    // Bumped on every edit, so the problems follow the text as it is typed.
    let edits = RwSignal::new(0u64);
    let errors = Memo::new(move |_| {
        ui.panels_rev.track();
        edits.track();
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
    let apply = move || {
        let f = ui.file.get_untracked();
        ui.run_button(&format!("kubectl apply -f {}", shell_quote(&f)));
    };
    let released = RwSignal::new(false);
    let host: NodeRef<html::Div> = NodeRef::new();
    // Set once the editor is mounted: the effects below show the file from then on.
    let ready = RwSignal::new(false);
    let cm: StoredValue<Option<Mounted>, LocalStorage> = StoredValue::new_local(None);
    let with_cm = move |f: &dyn Fn(&KubeloopEditor)| {
        cm.try_with_value(|m| {
            if let Some(m) = m {
                f(&m.view)
            }
        });
    };
    host.on_load(move |el| {
        let on_change = Closure::<dyn FnMut(String)>::new(move |text: String| {
            let f = ui.file.get_untracked();
            ui.update(|s| s.set_file(&f, &text));
            edits.update(|n| *n += 1);
        });
        let on_apply = Closure::<dyn FnMut()>::new(apply);
        let on_released = Closure::<dyn FnMut(bool)>::new(move |on: bool| released.set(on));
        let view = KubeloopEditor::new(&el, &on_change, &on_apply, &on_released);
        cm.set_value(Some(Mounted {
            view,
            _callbacks: (on_change, on_apply, on_released),
        }));
        ready.set(true);
    });
    on_cleanup(move || with_cm(&|v| v.destroy()));
    // The open file (and, when the files were replaced wholesale, every file) shown.
    Effect::new(move |prev: Option<u64>| {
        let frev = ui.files_rev.get();
        let name = ui.file.get();
        ready.track();
        let text = ui
            .session
            .try_with_value(|s| s.file(&name).map(str::to_string))
            .flatten()
            .unwrap_or_default();
        with_cm(&|v| {
            if prev.is_some_and(|p| p != frev) {
                v.forget_all();
            }
            v.open(&name, &text);
        });
        frev
    });
    Effect::new(move |_| {
        let json = problems_json(&errors.get());
        ready.track();
        with_cm(&|v| v.diagnose_json(&json));
    });
    let jump = move |line: usize, column: usize| {
        with_cm(&|v| v.jump(line as u32, column as u32));
    };
    view! {
        <div class="pane-head">
            <span class="pane-title">{move || ui.t(Key::Files)}</span>
            <FileTabs on_renamed=move |from: String, to: String| with_cm(&|v| v.rename(&from, &to))
                on_deleted=move |name: String| with_cm(&|v| v.forget(&name))/>
            <button class="btn primary apply" data-testid="apply" title=move || ui.t(Key::ApplyHint) on:click=move |_| apply()>
                <span aria-hidden="true">"▶"</span>" "{move || ui.t(Key::Apply)}
            </button>
        </div>
        {move || about.get().map(|d| view! { <div class="about" data-testid="about" title=move || ui.t(Key::About)>{d}</div> })}
        <div class="code cm-host" data-testid="editor" node_ref=host aria-describedby="editor-keys"></div>
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
    fn should_hand_problems_to_the_editor_as_json() {
        let json = problems_json(&[Located {
            line: 9,
            column: 3,
            message: "unknown field \"spec.replica\"".into(),
        }]);
        let v: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(v[0]["line"], 9);
        assert_eq!(v[0]["column"], 3);
        assert_eq!(v[0]["message"], "unknown field \"spec.replica\"");
        assert_eq!(problems_json(&[]), "[]");
    }
}
