//! The browser's side of the page: localStorage, the location hash, the clipboard and
//! the wall clock for animation. Every call tolerates a browser that says no.

use wasm_bindgen::JsValue;

use crate::i18n::Lang;

const SCENARIO_KEY: &str = "kubeloop.scenario.v1";
const LANG_KEY: &str = "kubeloop.lang";
const OPENING_KEY: &str = "kubeloop.opening";

fn storage() -> Option<web_sys::Storage> {
    web_sys::window()?.local_storage().ok().flatten()
}

/// The scenario saved by the last visit.
pub fn saved_scenario() -> Option<String> {
    storage()?.get_item(SCENARIO_KEY).ok().flatten()
}

/// Saves the scenario (YAML) for the next visit.
pub fn save_scenario(yaml: &str) {
    if let Some(s) = storage() {
        let _ = s.set_item(SCENARIO_KEY, yaml);
    }
}

/// Notes that the page is opening the saved scenario (`true`) or has opened it cleanly
/// (`false`): a mark still set at the next visit means that visit never got there.
pub fn mark_opening(opening: bool) {
    if let Some(s) = storage() {
        let _ = if opening {
            s.set_item(OPENING_KEY, "1")
        } else {
            s.remove_item(OPENING_KEY)
        };
    }
}

/// Whether the last visit started opening the saved scenario and never finished.
pub fn opening_marked() -> bool {
    storage()
        .and_then(|s| s.get_item(OPENING_KEY).ok().flatten())
        .is_some()
}

/// The language chosen last time, else the browser's.
pub fn saved_lang() -> Lang {
    if let Some(code) = storage().and_then(|s| s.get_item(LANG_KEY).ok().flatten()) {
        return Lang::from_code(&code);
    }
    let browser = web_sys::window()
        .and_then(|w| w.navigator().language())
        .unwrap_or_default();
    Lang::from_code(&browser)
}

/// Remembers the language.
pub fn save_lang(lang: Lang) {
    if let Some(s) = storage() {
        let _ = s.set_item(LANG_KEY, lang.code());
    }
    if let Some(root) = web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.document_element())
    {
        let _ = root.set_attribute("lang", lang.code());
    }
}

/// Forgets everything saved (tests start clean with this).
pub fn clear_saved() {
    if let Some(s) = storage() {
        let _ = s.remove_item(SCENARIO_KEY);
        let _ = s.remove_item(LANG_KEY);
        let _ = s.remove_item(OPENING_KEY);
        let _ = s.remove_item(LESSONS_KEY);
    }
}

/// The location's hash (`#s=…`), or "".
pub fn hash() -> String {
    web_sys::window()
        .and_then(|w| w.location().hash().ok())
        .unwrap_or_default()
}

/// Replaces the hash without a reload or a `hashchange` event ("" removes it).
pub fn replace_hash(fragment: &str) {
    let Some(w) = web_sys::window() else { return };
    let loc = w.location();
    let base = format!(
        "{}{}",
        loc.pathname().unwrap_or_default(),
        loc.search().unwrap_or_default()
    );
    if let Ok(h) = w.history() {
        let _ = h.replace_state_with_url(&JsValue::NULL, "", Some(&format!("{base}{fragment}")));
    }
}

/// The page's address as it stands.
pub fn href() -> String {
    web_sys::window()
        .and_then(|w| w.location().href().ok())
        .unwrap_or_default()
}

/// Copies text to the clipboard; false when the browser refused.
pub async fn copy(text: &str) -> bool {
    let Some(w) = web_sys::window() else {
        return false;
    };
    let promise = w.navigator().clipboard().write_text(text);
    wasm_bindgen_futures::JsFuture::from(promise).await.is_ok()
}

/// Milliseconds of wall-clock time (for animation only; the engine never sees it).
pub fn now_ms() -> f64 {
    web_sys::window()
        .and_then(|w| w.performance())
        .map_or(0.0, |p| p.now())
}

/// Whether the user asked the system for reduced motion.
pub fn prefers_reduced_motion() -> bool {
    web_sys::window()
        .and_then(|w| {
            w.match_media("(prefers-reduced-motion: reduce)")
                .ok()
                .flatten()
        })
        .is_some_and(|m| m.matches())
}

const LESSONS_KEY: &str = "kubeloop.lessons.v1";

/// The learner's lesson progress.
pub fn saved_lessons() -> crate::lesson_progress::Progress {
    let text = storage()
        .and_then(|s| s.get_item(LESSONS_KEY).ok().flatten())
        .unwrap_or_default();
    crate::lesson_progress::Progress::parse(&text)
}

/// Saves the learner's lesson progress.
pub fn save_lessons(progress: &crate::lesson_progress::Progress) {
    if let Some(s) = storage() {
        let _ = s.set_item(LESSONS_KEY, &progress.to_text());
    }
}

/// Offers bytes as a file download (`name`, MIME `mime`); false when the browser refused.
pub fn download(name: &str, mime: &str, bytes: &[u8]) -> bool {
    use wasm_bindgen::JsCast;
    let Some(document) = web_sys::window().and_then(|w| w.document()) else {
        return false;
    };
    let parts = js_sys::Array::of1(&js_sys::Uint8Array::from(bytes));
    let options = web_sys::BlobPropertyBag::new();
    options.set_type(mime);
    let Ok(blob) = web_sys::Blob::new_with_u8_array_sequence_and_options(&parts, &options) else {
        return false;
    };
    let Ok(url) = web_sys::Url::create_object_url_with_blob(&blob) else {
        return false;
    };
    let Some(a) = document
        .create_element("a")
        .ok()
        .and_then(|e| e.dyn_into::<web_sys::HtmlAnchorElement>().ok())
    else {
        return false;
    };
    a.set_href(&url);
    a.set_download(name);
    a.click();
    let _ = web_sys::Url::revoke_object_url(&url);
    true
}

/// Closes a popover (sets `open` to false) when Escape is pressed anywhere on the page
/// while it is open; the listener goes with the calling view.
pub fn close_on_escape(open: leptos::prelude::RwSignal<bool>) {
    use leptos::prelude::*;
    let keys = window_event_listener(leptos::ev::keydown, move |ev| {
        if ev.key() == "Escape" && open.get_untracked() {
            open.set(false);
        }
    });
    on_cleanup(move || keys.remove());
}
