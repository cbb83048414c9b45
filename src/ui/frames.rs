//! The animation loop: each frame runs `wall time × speed` of virtual time (bounded) while
//! playing, moves the message dots, and tells the views what changed.

use std::cell::Cell;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use kubeloop_sim::time::Time;
use leptos::prelude::*;

use super::browser::now_ms;
use super::Ui;

/// The most wall-clock time one frame accounts for: a tab that was in the background does
/// not come back to minutes of virtual time at once.
pub const MAX_FRAME_MS: f64 = 100.0;

/// Virtual milliseconds to run for `dt` wall-clock ms at `speed`; the fraction of a
/// millisecond left over is carried to the next frame.
pub fn virtual_ms(dt: f64, speed: f64, carry: &mut f64) -> Time {
    let v = dt.clamp(0.0, MAX_FRAME_MS) * speed.clamp(0.0, 64.0) + *carry;
    let whole = v.floor().max(0.0);
    *carry = v - whole;
    whole as Time
}

struct Loop {
    ui: Ui,
    alive: Arc<AtomicBool>,
    last: Cell<f64>,
    carry: Cell<f64>,
    had_dots: Cell<bool>,
}

/// Starts the loop; it stops when the owning view is cleaned up.
pub fn start(ui: Ui) {
    let alive = Arc::new(AtomicBool::new(true));
    let flag = alive.clone();
    on_cleanup(move || flag.store(false, Ordering::Relaxed));
    let state = Rc::new(Loop {
        ui,
        alive,
        last: Cell::new(now_ms()),
        carry: Cell::new(0.0),
        had_dots: Cell::new(false),
    });
    request_animation_frame(move || frame(state));
}

fn frame(state: Rc<Loop>) {
    if !state.alive.load(Ordering::Relaxed) {
        return;
    }
    let now = now_ms();
    let dt = (now - state.last.get()).clamp(0.0, MAX_FRAME_MS);
    state.last.set(now);
    if !tick(&state, dt) {
        return;
    }
    request_animation_frame(move || frame(state));
}

/// One frame; false once the session is gone.
fn tick(state: &Loop, dt: f64) -> bool {
    let ui = state.ui;
    let (playing, speed) = (ui.playing.get_untracked(), ui.speed.get_untracked());
    let mut carry = state.carry.get();
    let ms = if playing {
        virtual_ms(dt, speed, &mut carry)
    } else {
        0
    };
    state.carry.set(carry);
    let dots = ui.session.try_update_value(|s| {
        if ms > 0 {
            s.advance(ms);
        }
        s.tick_animation(dt);
        !s.traffic().is_empty()
    });
    let Some(dots) = dots else { return false };
    ui.sync();
    if dots || state.had_dots.get() {
        ui.frame.update(|f| *f += 1);
    }
    state.had_dots.set(dots);
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasm_bindgen_test::wasm_bindgen_test;

    #[wasm_bindgen_test(unsupported = test)]
    fn should_bound_and_carry_virtual_time() {
        let mut carry = 0.0;
        assert_eq!(virtual_ms(16.0, 1.0, &mut carry), 16);
        assert_eq!(
            virtual_ms(5_000.0, 8.0, &mut carry),
            800,
            "a long pause is one bounded frame"
        );
        let mut total = 0;
        for _ in 0..4 {
            total += virtual_ms(10.0, 0.25, &mut carry);
        }
        assert_eq!(total, 10, "quarter-speed milliseconds add up");
        assert_eq!(virtual_ms(-3.0, 1.0, &mut carry), 0);
    }
}
