//! The code editor's JavaScript side: CodeMirror 6, bundled offline from npm by
//! scripts/build-editor.sh into codemirror/dist/kubeloop-editor.js (see
//! codemirror/src/kubeloop-editor.js for what each method does).

use wasm_bindgen::prelude::*;

#[wasm_bindgen(module = "/codemirror/dist/kubeloop-editor.js")]
extern "C" {
    /// One CodeMirror view over the scenario's files.
    pub type KubeloopEditor;

    /// Mounts the editor in `parent`; `on_change(text)` after each edit, `on_apply()` on
    /// Ctrl/Cmd-Enter, `on_released(bool)` when Esc released the keyboard.
    #[wasm_bindgen(constructor)]
    pub fn new(
        parent: &web_sys::HtmlElement,
        on_change: &Closure<dyn FnMut(String)>,
        on_apply: &Closure<dyn FnMut()>,
        on_released: &Closure<dyn FnMut(bool)>,
    ) -> KubeloopEditor;

    /// Shows file `name` (its own undo history) with `text`.
    #[wasm_bindgen(method)]
    pub fn open(this: &KubeloopEditor, name: &str, text: &str);

    /// Replaces the shown text if it differs (no change event).
    #[wasm_bindgen(method, js_name = setText)]
    pub fn set_text(this: &KubeloopEditor, text: &str);

    /// The shown text.
    #[wasm_bindgen(method)]
    pub fn text(this: &KubeloopEditor) -> String;

    /// Marks problems: a JSON array of `{line, column, message}`, 1-based.
    #[wasm_bindgen(method, js_name = diagnoseJson)]
    pub fn diagnose_json(this: &KubeloopEditor, problems: &str);

    /// Puts the cursor at a 1-based line and column and focuses the editor.
    #[wasm_bindgen(method)]
    pub fn jump(this: &KubeloopEditor, line: u32, column: u32);

    /// A file was renamed: its history follows it.
    #[wasm_bindgen(method)]
    pub fn rename(this: &KubeloopEditor, from: &str, to: &str);

    /// A file was deleted: its history goes.
    #[wasm_bindgen(method)]
    pub fn forget(this: &KubeloopEditor, name: &str);

    /// Forgets every file's history (another scenario was loaded).
    #[wasm_bindgen(method, js_name = forgetAll)]
    pub fn forget_all(this: &KubeloopEditor);

    /// Focuses the editor.
    #[wasm_bindgen(method)]
    pub fn focus(this: &KubeloopEditor);

    /// Removes the view.
    #[wasm_bindgen(method)]
    pub fn destroy(this: &KubeloopEditor);
}
