//! On narrow screens (a phone) the four panes share the screen as tabs: Files, Cluster,
//! Terminal and Controls. Wider layouts hide the tab bar and show every pane.

use leptos::prelude::*;

use super::use_ui;
use crate::i18n::Key;

/// One of the page's panes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Pane {
    /// The editor.
    Files,
    /// The cluster diagram.
    #[default]
    Cluster,
    /// The terminal.
    Terminal,
    /// The flow and the component switches.
    Controls,
}

impl Pane {
    /// Every pane, in tab order.
    pub const ALL: [Pane; 4] = [Pane::Files, Pane::Cluster, Pane::Terminal, Pane::Controls];

    /// The tab's label.
    pub fn label(self) -> Key {
        match self {
            Pane::Files => Key::Files,
            Pane::Cluster => Key::Cluster,
            Pane::Terminal => Key::Terminal,
            Pane::Controls => Key::PaneControls,
        }
    }

    /// The pane after this one (ArrowRight), wrapping as a tab list does.
    pub fn next(self) -> Pane {
        let i = Pane::ALL.iter().position(|p| *p == self).unwrap_or(0);
        Pane::ALL[(i + 1) % Pane::ALL.len()]
    }

    /// The pane before this one (ArrowLeft).
    pub fn prev(self) -> Pane {
        let i = Pane::ALL.iter().position(|p| *p == self).unwrap_or(0);
        Pane::ALL[(i + Pane::ALL.len() - 1) % Pane::ALL.len()]
    }

    /// The `data-pane` value, shared by the tab and its panel.
    pub fn id(self) -> &'static str {
        match self {
            Pane::Files => "files",
            Pane::Cluster => "cluster",
            Pane::Terminal => "terminal",
            Pane::Controls => "controls",
        }
    }
}

/// The tab bar (shown by the stylesheet on narrow screens only).
#[component]
pub fn PaneTabs() -> impl IntoView {
    let ui = use_ui();
    let pick = move |p: Pane| {
        ui.pane.set(p);
        if let Some(el) = document()
            .query_selector(&format!("[data-pane-tab={}]", p.id()))
            .ok()
            .flatten()
        {
            use wasm_bindgen::JsCast;
            if let Ok(el) = el.dyn_into::<web_sys::HtmlElement>() {
                let _ = el.focus();
            }
        }
    };
    let keydown = move |ev: leptos::ev::KeyboardEvent| match ev.key().as_str() {
        "ArrowRight" => {
            ev.prevent_default();
            pick(ui.pane.get_untracked().next());
        }
        "ArrowLeft" => {
            ev.prevent_default();
            pick(ui.pane.get_untracked().prev());
        }
        _ => {}
    };
    view! {
        <nav class="pane-tabs" role="tablist" data-testid="pane-tabs" on:keydown=keydown>
            {Pane::ALL.into_iter().map(|p| {
                let selected = move || ui.pane.get() == p;
                view! {
                    <button role="tab" class="pane-tab" data-pane-tab=p.id()
                        aria-selected=move || selected().to_string()
                        tabindex=move || if selected() { "0" } else { "-1" }
                        class:active=selected
                        on:click=move |_| ui.pane.set(p)>
                        {move || ui.t(p.label())}
                    </button>
                }
            }).collect_view()}
        </nav>
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasm_bindgen_test::wasm_bindgen_test;

    #[wasm_bindgen_test(unsupported = test)]
    fn should_walk_the_tabs_in_order_and_wrap() {
        assert_eq!(Pane::Files.next(), Pane::Cluster);
        assert_eq!(Pane::Controls.next(), Pane::Files);
        assert_eq!(Pane::Files.prev(), Pane::Controls);
        for p in Pane::ALL {
            assert_eq!(p.next().prev(), p);
        }
        assert_eq!(
            Pane::default(),
            Pane::Cluster,
            "a phone opens on the diagram"
        );
    }
}
