//! The views: thin components over one [`Session`] held in context, and the page layout.

mod browser;
mod console;
mod diagram;
mod editor;
mod flow;
pub mod frames;
mod header;
mod inspector;
mod switches;

use kubeloop_sim::time::Time;
use leptos::prelude::*;

use crate::i18n::{t, Key, Lang};
use crate::session::Session;
use crate::startup::{self, Notice};

pub use browser::clear_saved;

/// Handles every view shares: the session and the page's signals. Copy.
#[derive(Clone, Copy)]
pub struct Ui {
    /// The learner's session (the engine's world lives in it; it is not `Send`).
    pub session: StoredValue<Session, LocalStorage>,
    /// The page's language.
    pub lang: RwSignal<Lang>,
    /// Whether virtual time runs.
    pub playing: RwSignal<bool>,
    /// Virtual seconds per wall-clock second.
    pub speed: RwSignal<f64>,
    /// Virtual time, per frame.
    pub clock: RwSignal<Time>,
    /// The session's revision: something shown changed.
    pub rev: RwSignal<u64>,
    /// The scenario's revision: time to save.
    pub scenario_rev: RwSignal<u64>,
    /// Files replaced wholesale: editors reload.
    pub files_rev: RwSignal<u64>,
    /// The engine could not keep up with the clock this frame (virtual time runs slower).
    pub behind: RwSignal<bool>,
    /// Bumped each frame while message dots move.
    pub frame: RwSignal<u64>,
    /// A banner: what went wrong and its details.
    pub notice: RwSignal<Option<(Key, String)>>,
    /// The pod selected in the diagram, `namespace/name`.
    pub selected: RwSignal<Option<String>>,
    /// The file open in the editor.
    pub file: RwSignal<String>,
}

impl Ui {
    /// A string in the current language (tracked).
    pub fn t(&self, key: Key) -> &'static str {
        t(self.lang.get(), key)
    }

    /// Copies the session's revisions and clock into the signals that changed.
    pub fn sync(&self) {
        let Some((now, rev, srev, frev)) = self.session.try_with_value(|s| {
            (
                s.world().now(),
                s.revision,
                s.scenario_revision,
                s.files_revision,
            )
        }) else {
            return;
        };
        if self.clock.get_untracked() != now {
            self.clock.set(now);
        }
        if self.rev.get_untracked() != rev {
            self.rev.set(rev);
        }
        if self.scenario_rev.get_untracked() != srev {
            self.scenario_rev.set(srev);
        }
        if self.files_rev.get_untracked() != frev {
            self.files_rev.set(frev);
        }
    }

    /// Changes the session, then tells the views.
    pub fn update<R>(&self, f: impl FnOnce(&mut Session) -> R) -> Option<R> {
        let r = self.session.try_update_value(f);
        self.sync();
        r
    }

    /// Runs a command for a button (Apply, a switch) in the terminal.
    pub fn run_button(&self, line: &str) {
        self.update(|s| s.run_button(line));
    }

    /// Shows a banner for a notice.
    pub fn notify(&self, n: &Notice) {
        let key = match n {
            Notice::BadLink(_) => Key::BannerBadLink,
            Notice::BadScenario(_) => Key::BannerBadScenario,
            Notice::BadSaved(_) => Key::BannerBadSaved,
        };
        self.notice.set(Some((key, n.detail())));
    }

    /// Loads a scenario (an example, a share link) and opens its first file.
    pub fn load(&self, scenario: kubeloop_sim::scenario::Scenario) {
        let first = scenario
            .spec
            .files
            .keys()
            .next()
            .cloned()
            .unwrap_or_default();
        self.update(|s| s.load(scenario));
        self.selected.set(None);
        self.file.set(first);
    }
}

/// Whether an event comes from a field the user types in.
fn typing_in_field(ev: &web_sys::Event) -> bool {
    use wasm_bindgen::JsCast;
    ev.target()
        .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
        .is_some_and(|e| {
            matches!(
                e.tag_name().as_str(),
                "INPUT" | "TEXTAREA" | "SELECT" | "BUTTON"
            )
        })
}

/// The [`Ui`] in context.
pub fn use_ui() -> Ui {
    expect_context::<Ui>()
}

/// The kubeloop page.
#[component]
pub fn App() -> impl IntoView {
    let from_link = startup::has_share(&browser::hash());
    let (scenario, notice) =
        startup::opening(&browser::hash(), browser::saved_scenario().as_deref());
    if from_link {
        // The link's scenario is saved below; a reload then keeps later edits.
        browser::replace_hash("");
    }
    let first = scenario
        .spec
        .files
        .keys()
        .next()
        .cloned()
        .unwrap_or_default();
    let mut session = Session::new(scenario);
    if !from_link || notice.is_some() {
        // A reload comes back to where the learner was; a shared lesson plays out.
        session.begin_fast_forward();
    }
    let ui = Ui {
        rev: RwSignal::new(session.revision),
        scenario_rev: RwSignal::new(session.scenario_revision),
        files_rev: RwSignal::new(session.files_revision),
        session: StoredValue::new_local(session),
        lang: RwSignal::new(browser::saved_lang()),
        playing: RwSignal::new(true),
        speed: RwSignal::new(1.0),
        clock: RwSignal::new(0),
        frame: RwSignal::new(0),
        behind: RwSignal::new(false),
        notice: RwSignal::new(None),
        selected: RwSignal::new(None),
        file: RwSignal::new(first),
    };
    provide_context(ui);
    if let Some(n) = &notice {
        ui.notify(n);
    }
    let save = move || {
        if let Some(yaml) = ui.session.try_with_value(|s| s.saved_yaml()) {
            browser::save_scenario(&yaml);
        }
    };
    Effect::new(move |_| {
        ui.scenario_rev.track();
        save();
    });
    // Leaving or reloading keeps the virtual time too.
    let hide = window_event_listener(leptos::ev::pagehide, move |_| save());
    on_cleanup(move || hide.remove());
    Effect::new(move |_| browser::save_lang(ui.lang.get()));
    Effect::new(move |_| {
        let speed = ui.speed.get();
        ui.session
            .update_value(|s| s.set_anim_duration(crate::traffic::duration_at(speed)));
    });
    let hash_listener = window_event_listener(leptos::ev::hashchange, move |_| {
        let hash = browser::hash();
        if !startup::has_share(&hash) {
            return;
        }
        browser::replace_hash("");
        match startup::from_link(&hash) {
            Ok(sc) => ui.load(sc),
            Err(n) => ui.notify(&n),
        }
    });
    on_cleanup(move || hash_listener.remove());
    // Space plays and pauses, unless the user is typing.
    let keys = window_event_listener(leptos::ev::keydown, move |ev| {
        if ev.key() == " " && !ev.ctrl_key() && !ev.meta_key() && !typing_in_field(&ev) {
            ev.prevent_default();
            ui.playing.update(|p| *p = !*p);
        }
    });
    on_cleanup(move || keys.remove());
    frames::start(ui);

    view! {
        <div class="app" data-testid="app">
            <header::Header/>
            <Banner/>
            <section class="pane editor-pane"><editor::Editor/></section>
            <section class="pane diagram-pane"><diagram::Diagram/></section>
            <section class="pane terminal-pane"><console::Console/></section>
            <aside class="pane side-pane">
                <flow::Flow/>
                <switches::Switches/>
            </aside>
        </div>
    }
}

/// The banner for links and saved copies that could not be read.
#[component]
fn Banner() -> impl IntoView {
    let ui = use_ui();
    move || {
        ui.notice.get().map(|(key, detail)| {
            view! {
                <div class="banner" role="alert" data-testid="banner">
                    <div class="banner-text">
                        <strong>{move || ui.t(key)}</strong>
                        <pre class="banner-detail">{detail}</pre>
                    </div>
                    <button class="btn ghost" data-testid="banner-dismiss" on:click=move |_| ui.notice.set(None)>
                        {move || ui.t(Key::Dismiss)}
                    </button>
                </div>
            }
        })
    }
}
