//! The lessons button in the top bar and its list: every lesson of the gallery with the
//! learner's progress (kept in localStorage), opened with a click or the keyboard.

use leptos::prelude::*;

use super::{browser, use_ui};
use crate::examples;
use crate::i18n::{Key, Lang};

/// The progress shown beside a lesson.
fn progress_label(ui: super::Ui, progress: Option<(usize, usize)>) -> String {
    match progress {
        None | Some((0, _)) => ui.t(Key::LessonNotStarted).to_string(),
        Some((d, t)) if d >= t => format!("✓ {}", ui.t(Key::LessonDone)),
        Some((d, t)) => format!("{d}/{t}"),
    }
}

/// The button and its list.
#[component]
pub fn LessonsButton() -> impl IntoView {
    let ui = use_ui();
    let open = RwSignal::new(false);
    let list_ref = NodeRef::<leptos::html::Ul>::new();
    Effect::new(move |_| {
        if open.get() {
            if let Some(first) = list_ref
                .get()
                .and_then(|ul| ul.query_selector("button").ok().flatten())
            {
                let _ = wasm_bindgen::JsCast::unchecked_into::<web_sys::HtmlElement>(first).focus();
            }
        }
    });
    browser::close_on_escape(open);
    view! {
        <div class="lessons-menu">
            <button class="btn" data-testid="lessons" aria-haspopup="true"
                aria-expanded=move || open.get().to_string()
                on:click=move |_| open.update(|o| *o = !*o)>
                {move || ui.t(Key::Lessons)}
            </button>
            {move || open.get().then(|| {
                let progress = browser::saved_lessons();
                view! {
                    <div class="lessons-pop" role="dialog" aria-label=move || ui.t(Key::LessonList) data-testid="lessons-list">
                        <div class="lessons-title">{move || ui.t(Key::LessonsTitle)}</div>
                        <ul node_ref=list_ref>
                            {examples::lessons().map(|e| {
                                let p = progress.get(e.id);
                                view! {
                                    <li>
                                        <button class="lessons-item" data-testid="lesson-open" data-lesson=e.id
                                            on:click=move |_| {
                                                open.set(false);
                                                ui.load(examples::scenario(e));
                                            }>
                                            <span class="lessons-name">{move || if ui.lang.get() == Lang::Zh { e.title_zh } else { e.title }}</span>
                                            <span class="lessons-progress mono" data-testid="lesson-list-progress">{move || progress_label(ui, p)}</span>
                                        </button>
                                    </li>
                                }
                            }).collect_view()}
                        </ul>
                    </div>
                }
            })}
        </div>
    }
}
