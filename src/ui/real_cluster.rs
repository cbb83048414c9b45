//! The "Real cluster" button in the top bar and its panel (design §6.21): download the
//! scenario as a kind directory, or import a real cluster's objects as a scenario. The
//! work is `crate::transfer`'s; this draws it.

use leptos::prelude::*;
use wasm_bindgen::JsCast;

use super::{browser, use_ui, Ui};
use crate::i18n::Key;
use crate::transfer::{self, ImportReport};

/// The outcome of the last import, for the panel.
#[derive(Clone, Debug, PartialEq)]
enum Outcome {
    Imported(ImportReport),
    Refused(String),
}

fn list_view(ui: Ui, key: Key, items: Vec<String>, testid: &'static str) -> impl IntoView {
    (!items.is_empty()).then(|| {
        let n = items.len();
        view! {
            <details class="rc-list" data-testid=testid open=true>
                <summary>{move || format!("{} ({n})", ui.t(key))}</summary>
                <ul>{items.iter().map(|i| view! { <li class="mono">{i.clone()}</li> }).collect_view()}</ul>
            </details>
        }
    })
}

fn outcome_view(ui: Ui, outcome: Outcome) -> impl IntoView {
    match outcome {
        Outcome::Refused(e) => {
            view! { <p class="rc-error" role="alert" data-testid="import-error">{e}</p> }.into_any()
        }
        Outcome::Imported(r) => view! {
            <div class="rc-report" data-testid="import-report">
                <p>{move || ui.t(Key::ImportDone)
                    .replace("{nodes}", &r.nodes.to_string())
                    .replace("{files}", &r.files.to_string())}</p>
                {list_view(ui, Key::ImportErrors, r.errors.clone(), "import-errors")}
                {list_view(ui, Key::ImportSkipped, r.skipped.clone(), "import-skipped")}
                {list_view(ui, Key::ImportNotices, r.notices.clone(), "import-notices")}
            </div>
        }
        .into_any(),
    }
}

fn import(ui: Ui, text: &str, outcome: RwSignal<Option<Outcome>>) {
    match transfer::import_list(text) {
        Ok((scenario, report)) => {
            ui.load(scenario);
            outcome.set(Some(Outcome::Imported(report)));
        }
        Err(e) => outcome.set(Some(Outcome::Refused(e))),
    }
}

/// Reads the chosen file into the paste box.
fn read_file(ev: leptos::ev::Event, pasted: RwSignal<String>) {
    let Some(file) = ev
        .target()
        .and_then(|t| t.dyn_into::<web_sys::HtmlInputElement>().ok())
        .and_then(|i| i.files())
        .and_then(|f| f.get(0))
    else {
        return;
    };
    leptos::task::spawn_local(async move {
        if let Ok(v) = wasm_bindgen_futures::JsFuture::from(file.text()).await {
            pasted.set(v.as_string().unwrap_or_default());
        }
    });
}

/// The button and its panel.
#[component]
pub fn RealClusterButton() -> impl IntoView {
    let ui = use_ui();
    let open = RwSignal::new(false);
    let pasted = RwSignal::new(String::new());
    let outcome = RwSignal::new(None::<Outcome>);
    browser::close_on_escape(open);
    let download = move |_| {
        if let Some((name, bytes)) = ui
            .session
            .try_with_value(|s| transfer::kind_tar(s.scenario()))
        {
            browser::download(&name, "application/x-tar", &bytes);
        }
    };
    let commands = move || {
        ui.session
            .try_with_value(|s| transfer::kind_commands(s.scenario()))
            .unwrap_or_default()
    };
    view! {
        <div class="rc-menu">
            <button class="btn" data-testid="real-cluster" aria-haspopup="dialog"
                aria-expanded=move || open.get().to_string()
                on:click=move |_| open.update(|o| *o = !*o)>
                {move || ui.t(Key::RealCluster)}
            </button>
            {move || open.get().then(|| view! {
                <div class="rc-pop" role="dialog" data-testid="real-cluster-pop"
                    aria-label=move || ui.t(Key::RealClusterTitle)>
                    <div class="rc-title">{move || ui.t(Key::RealClusterTitle)}</div>
                    <section class="rc-section">
                        <button class="btn accent" data-testid="export-kind" on:click=download>
                            {move || ui.t(Key::ExportKind)}
                        </button>
                        <p class="rc-hint">{move || ui.t(Key::ExportKindHint)}</p>
                        <pre class="rc-code mono" data-testid="export-commands">{commands}</pre>
                    </section>
                    <section class="rc-section">
                        <div class="rc-subtitle">{move || ui.t(Key::ImportTitle)}</div>
                        <p class="rc-hint">{move || ui.t(Key::ImportHint)}</p>
                        <textarea class="rc-paste mono" data-testid="import-text" rows="6" spellcheck="false"
                            aria-label=move || ui.t(Key::ImportPasteLabel)
                            prop:value=move || pasted.get()
                            on:input=move |ev| pasted.set(event_target_value(&ev))></textarea>
                        <div class="rc-buttons">
                            <label class="btn ghost rc-file">
                                {move || ui.t(Key::ImportFile)}
                                <input type="file" accept=".yaml,.yml,.json,application/json,text/yaml"
                                    data-testid="import-file" on:change=move |ev| read_file(ev, pasted)/>
                            </label>
                            <button class="btn accent" data-testid="import-button"
                                on:click=move |_| import(ui, &pasted.get_untracked(), outcome)>
                                {move || ui.t(Key::ImportButton)}
                            </button>
                            <button class="btn ghost" on:click=move |_| open.set(false)>{move || ui.t(Key::Close)}</button>
                        </div>
                        {move || outcome.get().map(|o| outcome_view(ui, o))}
                    </section>
                </div>
            })}
        </div>
    }
}
