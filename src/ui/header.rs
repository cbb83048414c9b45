//! The top bar: the clock, play/pause, step, speed, lessons, examples, reset, the real
//! cluster (export and import), share and language.

use leptos::prelude::*;

use super::{browser, use_ui};
use crate::examples::{self, EXAMPLES};
use crate::i18n::{Key, Lang};
use crate::startup;

/// The speeds offered.
pub const SPEEDS: [f64; 6] = [0.1, 0.5, 1.0, 2.0, 4.0, 8.0];

/// Virtual time as the clock shows it: `01:05.320`, `1:02:03.004`.
pub use crate::terminal::clock_text;

/// A speed's label: `0.25×`, `8×`.
pub fn speed_label(speed: f64) -> String {
    format!("{speed}×")
}

/// The top bar.
#[component]
pub fn Header() -> impl IntoView {
    let ui = use_ui();
    let share_url = RwSignal::new(None::<String>);
    let copied = RwSignal::new(None::<bool>);
    let share = move |_| {
        let Some(fragment) = ui
            .session
            .try_with_value(|s| startup::share_fragment(s.scenario()))
        else {
            return;
        };
        browser::replace_hash(&fragment);
        let url = browser::href();
        share_url.set(Some(url.clone()));
        copied.set(None);
        leptos::task::spawn_local(async move {
            let ok = browser::copy(&url).await;
            copied.set(Some(ok));
        });
    };
    let load_example = move |ev: leptos::ev::Event| {
        let id = event_target_value(&ev);
        if let Some(e) = examples::example(&id) {
            ui.load(examples::scenario(e));
        }
        if let Some(sel) = ev
            .target()
            .and_then(|t| wasm_bindgen::JsCast::dyn_into::<web_sys::HtmlSelectElement>(t).ok())
        {
            sel.set_value("");
        }
    };
    view! {
        <header class="topbar">
            <div class="brand">
                <span class="logo" aria-hidden="true">"⎈"</span>
                <h1 class="word">"kubeloop"</h1>
                <span class="tagline">{move || ui.t(Key::Tagline)}</span>
            </div>
            <div class="transport">
                <button
                    class="btn primary play"
                    data-testid="play-pause"
                    aria-pressed=move || ui.playing.get().to_string()
                    on:click=move |_| ui.playing.update(|p| *p = !*p)
                >
                    <span class="icon" aria-hidden="true">{move || if ui.playing.get() { "❚❚" } else { "▶" }}</span>
                    <span>{move || if ui.playing.get() { ui.t(Key::Pause) } else { ui.t(Key::Play) }}</span>
                </button>
                <button class="btn" data-testid="step" title=move || ui.t(Key::StepHint) on:click=move |_| {
                    ui.playing.set(false);
                    ui.update(|s| s.step());
                }>
                    <span class="icon" aria-hidden="true">"▸❙"</span>
                    <span>{move || ui.t(Key::Step)}</span>
                </button>
                <div class="speeds" role="group" aria-label=move || ui.t(Key::Speed)>
                    {SPEEDS.into_iter().map(|sp| view! {
                        <button
                            class="speed"
                            class:active=move || ui.speed.get() == sp
                            data-testid=format!("speed-{sp}")
                            on:click=move |_| ui.speed.set(sp)
                        >{speed_label(sp)}</button>
                    }).collect_view()}
                </div>
                <div class="clock" data-testid="clock" title=move || ui.t(Key::VirtualTime)>
                    <span class="clock-label">{move || ui.t(Key::VirtualTime)}</span>
                    <span class="clock-value" data-testid="clock-value">{move || clock_text(ui.clock.get())}</span>
                    <span class="clock-behind" data-testid="clock-behind" title=move || ui.t(Key::BehindHint)
                        hidden=move || !ui.behind.get()>{move || ui.t(Key::Behind)}</span>
                    <span class="clock-slowed" data-testid="clock-slowed"
                        hidden=move || !ui.slowed.get()>{move || ui.t(Key::SlowedBurst)}</span>
                    {move || ui.memory.get().map(|m| view! {
                        <span class="clock-mem" data-testid="memory" data-mib=m.in_use_mib
                            title=move || ui.t(Key::MemoryHint).replace("{memory}", &super::memory::size_text(m.memory_mib))>
                            {move || format!("{} {}", ui.t(Key::Memory), m.text())}
                        </span>
                    })}
                </div>
            </div>
            <div class="actions">
                <super::lessons_list::LessonsButton/>
                <select class="btn select" data-testid="examples" on:change=load_example>
                    <option value="" selected>{move || format!("{} …", ui.t(Key::Examples))}</option>
                    {EXAMPLES.iter().filter(|e| examples::lesson(e.id).is_none()).map(|e| view! {
                        <option value=e.id>{move || if ui.lang.get() == Lang::Zh { e.title_zh } else { e.title }}</option>
                    }).collect_view()}
                </select>
                <button class="btn" data-testid="reset" title=move || ui.t(Key::ResetHint) on:click=move |_| {
                    ui.update(|s| s.reset());
                    ui.selected.set(None);
                }>{move || ui.t(Key::Reset)}</button>
                <super::real_cluster::RealClusterButton/>
                <button class="btn accent" data-testid="share" on:click=share>{move || ui.t(Key::Share)}</button>
                <button class="btn ghost lang" data-testid="lang" on:click=move |_| ui.lang.update(|l| *l = l.other())>
                    {move || ui.lang.get().other().name()}
                </button>
            </div>
            {move || share_url.get().map(|url| view! {
                <div class="share-pop" data-testid="share-pop">
                    <div class="share-status">{move || match copied.get() {
                        Some(true) => ui.t(Key::ShareCopied),
                        _ => ui.t(Key::ShareCopyFailed),
                    }}</div>
                    <input class="share-url" data-testid="share-url" readonly prop:value=url.clone()
                        on:focus=move |ev| {
                            if let Some(i) = ev.target().and_then(|t| wasm_bindgen::JsCast::dyn_into::<web_sys::HtmlInputElement>(t).ok()) {
                                i.select();
                            }
                        }/>
                    <button class="btn ghost" on:click=move |_| share_url.set(None)>{move || ui.t(Key::Close)}</button>
                </div>
            })}
        </header>
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasm_bindgen_test::wasm_bindgen_test;

    #[wasm_bindgen_test(unsupported = test)]
    fn should_format_the_clock() {
        assert_eq!(clock_text(0), "00:00.000");
        assert_eq!(clock_text(65_320), "01:05.320");
        assert_eq!(clock_text(3_723_004), "1:02:03.004");
        assert_eq!(speed_label(0.25), "0.25×");
        assert_eq!(speed_label(8.0), "8×");
    }
}
