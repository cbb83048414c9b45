//! The views: thin components over one [`Session`] held in context, and the page layout.

mod bars;
mod browser;
mod codemirror;
mod console;
mod diagram;
mod editor;
mod editor_tabs;
mod etcd_browser;
mod flow;
pub mod frames;
mod header;
mod inspector;
mod lesson;
mod lessons_list;
mod memory;
mod object_inspector;
mod objects;
mod on_screen;
mod proxy;
mod real_cluster;
mod services;
mod switches;
mod tabs;
mod timeline;
mod trace;
mod trace_service;

use kubeloop_sim::scenario::Scenario;
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
    /// The pane shown on a narrow screen.
    pub pane: RwSignal<tabs::Pane>,
    /// Whether virtual time runs.
    pub playing: RwSignal<bool>,
    /// Virtual seconds per wall-clock second.
    pub speed: RwSignal<f64>,
    /// Virtual time, per frame.
    pub clock: RwSignal<Time>,
    /// The session's revision as the diagram knows it: something shown changed.
    pub rev: RwSignal<u64>,
    /// The session's revision as the panels beside the diagram know it (flow, timeline,
    /// proxy rules, switches, inspector, terminal, editor): while the engine is behind,
    /// they are told a frame after the diagram, so no one frame redraws everything.
    pub panels_rev: RwSignal<u64>,
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
    /// Whether the scenario may be saved: a shared link's is not until it ran cleanly.
    pub trusted: RwSignal<bool>,
    /// A shared link's scenario waiting for the learner's yes.
    pub offer: RwSignal<Option<Scenario>>,
    /// The work a shared link replaced (YAML), for Undo.
    pub undo: RwSignal<Option<String>>,
    /// Whether the browser asks for reduced motion (no travelling dots, no pulsing).
    pub reduced_motion: bool,
    /// Slow motion around bursts of control-plane messages.
    pub slowmo: RwSignal<bool>,
    /// Whether this frame ran in slow motion.
    pub slowed: RwSignal<bool>,
    /// The wasm heap in use, in whole MiB, as the status line shows it (see [`memory`]).
    pub memory: RwSignal<Option<memory::Reading>>,
    /// The moment shown, while the page views one (else live).
    pub moment: RwSignal<Option<Time>>,
    /// The live session's virtual time.
    pub live_now: RwSignal<Time>,
    /// The timeline's object filter ("follow this pod" sets it).
    pub tl_object: RwSignal<String>,
    /// The timeline entry picked (a row, a trace stage).
    pub tl_focus: RwSignal<Option<u64>>,
    /// The object open in the object inspector.
    pub inspected: RwSignal<Option<kubeloop_sim::object::ObjectKey>>,
    /// The Service whose endpoints the diagram marks, `namespace/name`.
    pub service: RwSignal<Option<String>>,
}

impl Ui {
    /// A string in the current language (tracked).
    pub fn t(&self, key: Key) -> &'static str {
        t(self.lang.get(), key)
    }

    /// Copies the session's revisions and clock into the signals that changed.
    pub fn sync(&self) {
        self.sync_diagram();
        self.sync_panels();
    }

    /// Tells the panels beside the diagram (see [`Ui::panels_rev`]).
    pub fn sync_panels(&self) {
        if let Some(rev) = self.session.try_with_value(|s| s.revision) {
            if self.panels_rev.get_untracked() != rev {
                self.panels_rev.set(rev);
            }
        }
        let memory = memory::read();
        if self.memory.get_untracked() != memory {
            self.memory.set(memory);
        }
    }

    /// Copies the session's revisions and clock into the signals the diagram and the
    /// page's frame follow.
    pub fn sync_diagram(&self) {
        let Some((now, rev, srev, frev, moment, live)) = self.session.try_with_value(|s| {
            (
                s.world().now(),
                s.revision,
                s.scenario_revision,
                s.files_revision,
                s.moment(),
                s.live_now(),
            )
        }) else {
            return;
        };
        if self.moment.get_untracked() != moment {
            self.moment.set(moment);
        }
        if self.live_now.get_untracked() != live {
            self.live_now.set(live);
        }
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

    /// Copies only the virtual clock (the frame loop, while the engine is behind, tells the
    /// heavier views at a lower rate: see frames.rs).
    pub fn sync_clock(&self) {
        if let Some(now) = self.session.try_with_value(|s| s.world().now()) {
            if self.clock.get_untracked() != now {
                self.clock.set(now);
            }
        }
    }

    /// Changes the session, then tells the views.
    pub fn update<R>(&self, f: impl FnOnce(&mut Session) -> R) -> Option<R> {
        let r = self.session.try_update_value(f);
        self.sync();
        r
    }

    /// Shows the cluster as it was at `at` (paused: Play replays from there).
    pub fn view_moment(&self, at: Time) {
        self.playing.set(false);
        self.update(|s| s.view_moment(at));
    }

    /// Leaves a moment for the live cluster.
    pub fn back_to_live(&self) {
        self.update(|s| s.back_to_live());
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
            Notice::NotReplayed => Key::BannerNotReplayed,
        };
        self.notice.set(Some((key, n.detail())));
    }

    /// Opens a shared link's scenario: at once when nothing would be lost, else after the
    /// learner said yes ([`Ui::offer`]); the replaced work is kept for Undo.
    pub fn open_link(&self, scenario: Scenario) {
        let current = self.session.try_with_value(|s| s.scenario().clone());
        let Some(current) = current else { return };
        if startup::is_pristine(&current) || startup::same_work(&current, &scenario) {
            self.trusted.set(false);
            self.load(scenario);
        } else {
            self.offer.set(Some(scenario));
        }
    }

    /// The learner said yes to the offered link: keeps their work for Undo, opens it.
    pub fn accept_offer(&self) {
        let Some(scenario) = self.offer.get_untracked() else {
            return;
        };
        self.offer.set(None);
        if let Some(yaml) = self.session.try_with_value(|s| s.saved_yaml()) {
            self.undo.set(Some(yaml));
        }
        self.trusted.set(false);
        self.load(scenario);
    }

    /// Goes back to the work a shared link replaced.
    pub fn undo_link(&self) {
        let Some(yaml) = self.undo.get_untracked() else {
            return;
        };
        self.undo.set(None);
        if let Ok(sc) = kubeloop_sim::scenario::parse_scenario(&yaml) {
            self.trusted.set(true);
            self.load(sc);
            self.update(|s| s.begin_fast_forward());
        }
    }

    /// Loads a scenario (an example, a share link) and opens its first file.
    pub fn load(&self, scenario: Scenario) {
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
            ) || e
                .dyn_ref::<web_sys::HtmlElement>()
                .is_some_and(|h| h.is_content_editable())
        })
}

/// The [`Ui`] in context.
pub fn use_ui() -> Ui {
    expect_context::<Ui>()
}

/// The kubeloop page.
#[component]
pub fn App() -> impl IntoView {
    let hash = browser::hash();
    let saved = browser::saved_scenario();
    let startup::Opening {
        scenario,
        mut notice,
        offer,
        from_link,
    } = startup::opening_asking(&hash, saved.as_deref());
    if startup::has_share(&hash) {
        // A reload opens the saved work, never the link again.
        browser::replace_hash("");
    }
    // The last visit began replaying the saved scenario and never finished (it crashed or
    // froze the tab): this time it opens at t=0, so a bad scenario cannot lock the page.
    let replay = !from_link && !browser::opening_marked();
    if !from_link && !replay && notice.is_none() {
        notice = Some(Notice::NotReplayed);
    }
    let first = scenario
        .spec
        .files
        .keys()
        .next()
        .cloned()
        .unwrap_or_default();
    let mut session = Session::new_in(scenario, browser::saved_lang());
    if replay {
        // A reload comes back to where the learner was (in slices, see frames.rs); a
        // shared lesson plays out.
        session.begin_fast_forward();
        browser::mark_opening(true);
    }
    let ui = Ui {
        rev: RwSignal::new(session.revision),
        panels_rev: RwSignal::new(session.revision),
        scenario_rev: RwSignal::new(session.scenario_revision),
        files_rev: RwSignal::new(session.files_revision),
        session: StoredValue::new_local(session),
        lang: RwSignal::new(browser::saved_lang()),
        pane: RwSignal::new(tabs::Pane::default()),
        playing: RwSignal::new(true),
        speed: RwSignal::new(1.0),
        clock: RwSignal::new(0),
        frame: RwSignal::new(0),
        behind: RwSignal::new(false),
        notice: RwSignal::new(None),
        selected: RwSignal::new(None),
        file: RwSignal::new(first),
        trusted: RwSignal::new(!from_link),
        offer: RwSignal::new(offer),
        undo: RwSignal::new(None),
        reduced_motion: browser::prefers_reduced_motion(),
        slowmo: RwSignal::new(false),
        slowed: RwSignal::new(false),
        memory: RwSignal::new(memory::read()),
        moment: RwSignal::new(None),
        live_now: RwSignal::new(0),
        tl_object: RwSignal::new(String::new()),
        tl_focus: RwSignal::new(None),
        inspected: RwSignal::new(None),
        service: RwSignal::new(None),
    };
    provide_context(ui);
    if let Some(n) = &notice {
        ui.notify(n);
    }
    let save = move || {
        if !ui.trusted.get_untracked() {
            return;
        }
        if let Some(yaml) = ui.session.try_with_value(|s| s.saved_yaml()) {
            browser::save_scenario(&yaml);
        }
    };
    Effect::new(move |_| {
        ui.scenario_rev.track();
        ui.trusted.track();
        save();
    });
    // Leaving or reloading keeps the virtual time too.
    let hide = window_event_listener(leptos::ev::pagehide, move |_| save());
    on_cleanup(move || hide.remove());
    Effect::new(move |_| {
        let lang = ui.lang.get();
        browser::save_lang(lang);
        ui.session.update_value(|s| s.set_lang(lang));
    });
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
            Ok(sc) => ui.open_link(sc),
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
        <div class="app" data-testid="app" class:viewing=move || ui.moment.get().is_some()>
            <header::Header/>
            <div class="banners"><Banner/><LinkBar/><timeline::MomentBar/></div>
            <tabs::PaneTabs/>
            <section class="pane editor-pane" class:shown=move || ui.pane.get() == tabs::Pane::Files><editor::Editor/></section>
            <section class="pane diagram-pane" class:shown=move || ui.pane.get() == tabs::Pane::Cluster><diagram::Diagram/></section>
            <section class="pane terminal-pane" class:shown=move || ui.pane.get() == tabs::Pane::Terminal><console::Console/></section>
            <aside class="pane side-pane" class:shown=move || ui.pane.get() == tabs::Pane::Controls>
                <lesson::LessonPanel/>
                <flow::Flow/>
                <trace::TracePanel/>
                <objects::ObjectsPanel/>
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

/// Asks before a shared link replaces the learner's work, then offers Undo.
#[component]
fn LinkBar() -> impl IntoView {
    let ui = use_ui();
    move || {
        if let Some(sc) = ui.offer.get() {
            let name = sc.metadata.name.clone();
            Some(
                view! {
                    <div class="banner offer" role="alertdialog" aria-labelledby="link-offer-text" data-testid="link-offer">
                        <div class="banner-text">
                            <strong id="link-offer-text">{move || ui.t(Key::LinkOffer)}</strong>
                            <span class="banner-detail mono">{name}</span>
                        </div>
                        <button class="btn primary" data-testid="link-open" on:click=move |_| ui.accept_offer()>
                            {move || ui.t(Key::LinkOpen)}
                        </button>
                        <button class="btn ghost" data-testid="link-keep" on:click=move |_| ui.offer.set(None)>
                            {move || ui.t(Key::LinkKeep)}
                        </button>
                    </div>
                }
                .into_any(),
            )
        } else if ui.undo.get().is_some() {
            Some(
                view! {
                    <div class="banner undo" role="status" data-testid="link-undo-bar">
                        <div class="banner-text"><strong>{move || ui.t(Key::LinkOpened)}</strong></div>
                        <button class="btn" data-testid="link-undo" on:click=move |_| ui.undo_link()>
                            {move || ui.t(Key::Undo)}
                        </button>
                        <button class="btn ghost" on:click=move |_| ui.undo.set(None)>
                            {move || ui.t(Key::Dismiss)}
                        </button>
                    </div>
                }
                .into_any(),
            )
        } else {
            None
        }
    }
}
