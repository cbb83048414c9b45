//! Whether a panel can be seen, and a revision that skips the redraws of one that can't.
//!
//! Panels below the fold (the timeline, the message log, the proxy rules under the
//! diagram) redrew on every publish while the cluster scaled, out of sight: at 100 nodes
//! their redraws were most of the long frames. A panel that is off screen (an
//! `IntersectionObserver` says so, clipping by its scrolling pane included) is not told
//! of new revisions while the engine is behind; it catches up as soon as it is scrolled
//! into view or the engine has caught up with the clock.

use leptos::prelude::*;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

/// Whether a panel is told of a new revision: when it can be seen, or when the engine
/// has time to spare (it is not behind the clock).
pub fn tells(shown: bool, behind: bool) -> bool {
    shown || !behind
}

/// The revision a panel draws: `source`, held back while [`tells`] says no (the last
/// revision it was told is kept). Memoized, so holding back notifies no one.
///
/// Read it (`get`) where it is used: a memo computes, and so subscribes to `source`,
/// only when read; one that is only `track`ed never runs and never changes.
pub fn gated(
    shown: RwSignal<bool>,
    behind: RwSignal<bool>,
    source: impl Fn() -> u64 + Send + Sync + 'static,
) -> Memo<u64> {
    Memo::new(move |prev: Option<&u64>| {
        let rev = source();
        match prev {
            Some(p) if !tells(shown.get(), behind.get()) => *p,
            _ => rev,
        }
    })
}

/// Whether the element is (at least partly) on screen; true until the browser says
/// otherwise, and always true in a browser without `IntersectionObserver`.
pub fn on_screen<E>(node: NodeRef<E>) -> RwSignal<bool>
where
    E: leptos::html::ElementType,
    E::Output: JsCast + Clone + 'static,
    NodeRef<E>: Get<Value = Option<E::Output>>,
{
    let shown = RwSignal::new(true);
    let observer: StoredValue<Option<Observer>, LocalStorage> = StoredValue::new_local(None);
    Effect::new(move |_| {
        let Some(el) = node.get() else { return };
        let Ok(el) = el.dyn_into::<web_sys::Element>() else {
            return;
        };
        if observer.with_value(Option::is_some) {
            return;
        }
        observer.set_value(Observer::watch(&el, shown));
    });
    on_cleanup(move || {
        observer.try_update_value(|o| {
            if let Some(o) = o.take() {
                o.observer.disconnect();
            }
        });
    });
    shown
}

/// An observer and the callback it calls (kept alive as long as it).
struct Observer {
    observer: web_sys::IntersectionObserver,
    _callback: Closure<dyn FnMut(js_sys::Array)>,
}

impl Observer {
    fn watch(el: &web_sys::Element, shown: RwSignal<bool>) -> Option<Self> {
        let callback = Closure::<dyn FnMut(js_sys::Array)>::new(move |entries: js_sys::Array| {
            // The last entry is the newest state of the one element watched.
            let last = entries
                .iter()
                .filter_map(|e| e.dyn_into::<web_sys::IntersectionObserverEntry>().ok())
                .last();
            if let Some(e) = last {
                let on = e.is_intersecting();
                if shown.try_get_untracked() != Some(on) {
                    shown.try_set(on);
                }
            }
        });
        let observer =
            web_sys::IntersectionObserver::new(callback.as_ref().unchecked_ref()).ok()?;
        observer.observe(el);
        Some(Self {
            observer,
            _callback: callback,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasm_bindgen_test::wasm_bindgen_test;

    #[wasm_bindgen_test(unsupported = test)]
    fn should_hold_back_only_a_hidden_panel_while_the_engine_is_behind() {
        assert!(tells(true, true), "a panel in view follows the cluster");
        assert!(tells(true, false));
        assert!(
            tells(false, false),
            "an off-screen panel catches up once the engine has caught up"
        );
        assert!(
            !tells(false, true),
            "an off-screen panel waits while behind"
        );
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn should_hold_a_hidden_panel_back_and_catch_it_up() {
        let owner = Owner::new();
        owner.set();
        let source = RwSignal::new(1u64);
        let (shown, behind) = (RwSignal::new(false), RwSignal::new(true));
        let rev = gated(shown, behind, move || source.get());
        // A panel that reads the revision, as the proxy panel and the message log do.
        let drawn = Memo::new(move |_| rev.get() * 10);
        assert_eq!(drawn.get(), 10, "the first revision is drawn");
        source.set(2);
        assert_eq!(drawn.get(), 10, "hidden while behind: held back");
        behind.set(false);
        assert_eq!(drawn.get(), 20, "caught up once the engine has");
        behind.set(true);
        source.set(3);
        assert_eq!(drawn.get(), 20);
        shown.set(true);
        assert_eq!(drawn.get(), 30, "caught up once scrolled into view");
        source.set(4);
        assert_eq!(drawn.get(), 40, "in view it follows every revision");
    }
}
