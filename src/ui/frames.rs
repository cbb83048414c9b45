//! The animation loop: each frame runs `wall time × speed` of virtual time (bounded) while
//! playing, moves the message dots, and tells the views what changed.
//!
//! The engine gets a time-boxed slice of each frame ([`SLICE_MS`], measured with
//! `performance.now()` here, never in the engine): what it could not run in time is carried
//! to the next frame (at most [`MAX_DEBT_MS`] of wall time's worth), so a burst of thousands
//! of pods slows virtual time down for a while instead of freezing the page.

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

/// The most wall-clock ms of a frame the engine may use; the rest is the diagram's and
/// the browser's (a frame is 16.7 ms at 60 Hz). The slice a frame gets adapts below this
/// to what the browser's own rendering leaves ([`next_slice`]).
pub const SLICE_MS: f64 = 7.0;
/// The least wall-clock ms of a frame the engine gets, however slow the rendering: the
/// world still moves on a loaded machine.
pub const MIN_SLICE_MS: f64 = 2.0;
/// What an on-time frame gives back to the slice (wall-clock ms): a slice halved by one
/// late frame regains its size in about a third of a second.
pub const SLICE_STEP_MS: f64 = 0.25;
/// The most virtual time carried from frame to frame when the engine falls behind, in
/// wall-clock ms at the current speed: after a burst the world catches up this much, then
/// runs in real time again rather than racing through a backlog.
pub const MAX_DEBT_MS: f64 = 1000.0;

/// What the frame still owes the world after running `done` of the `wanted` virtual ms.
pub fn debt_after(wanted: Time, done: Time, speed: f64) -> Time {
    let cap = (MAX_DEBT_MS * speed.clamp(0.0, 64.0)) as Time;
    wanted.saturating_sub(done).min(cap)
}

/// While the engine is behind, or when redrawing the views made the last frame that did
/// it miss its deadline, the views (diagram, flow, switches, inspector) are told about
/// changes at most this often (wall-clock ms); the clock and the message dots still move
/// every frame. Redrawing a thousand changing pods sixty times a second is what froze the
/// page; at this rate fewer than one frame in twenty redraws them.
pub const BUSY_PUBLISH_MS: f64 = 400.0;
/// How far past its slice the engine may have run for its frame still to build the
/// diagram's next view (wall-clock ms).
pub const PREPARE_SLACK_MS: f64 = 3.0;
/// One frame at 60 Hz, in wall-clock ms.
pub const FRAME_MS: f64 = 1000.0 / 60.0;
/// A frame interval past this (wall-clock ms) means the frame before it overran its
/// budget: two vsyncs at 60 Hz are 33.3 ms.
pub const SLOW_FRAME_MS: f64 = 25.0;

/// Whether this frame tells the views: every frame while the engine keeps up and the
/// views redraw within a frame, else once per [`BUSY_PUBLISH_MS`].
pub fn publish_now(busy: bool, now: f64, last_publish: f64) -> bool {
    !busy || now - last_publish >= BUSY_PUBLISH_MS
}

/// What one frame tells the views, besides the clock that every frame moves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tell {
    /// Only the clock.
    Clock,
    /// The diagram and the panels beside it.
    All,
    /// The diagram; the panels are due on the next frame.
    Diagram,
    /// The panels the previous frame left for this one.
    Panels,
}

impl Tell {
    /// Whether the engine sits this frame out: the redraws split over two frames
    /// have their frames to themselves.
    pub fn engine_rests(self) -> bool {
        matches!(self, Tell::Diagram | Tell::Panels)
    }
}

/// What a frame tells: while the engine is behind or the views are slow, a redraw is
/// split over two frames (the diagram, then the panels), so neither frame carries the
/// whole page's redraw on top of its own rendering.
pub fn what_to_tell(publish: bool, busy: bool, panels_due: bool) -> Tell {
    match (panels_due, publish, busy) {
        (true, _, _) => Tell::Panels,
        (false, false, _) => Tell::Clock,
        (false, true, true) => Tell::Diagram,
        (false, true, false) => Tell::All,
    }
}

/// Whether the engine is behind the clock, as the header says and the panels out of
/// sight go by: what the last frame that ran the engine left owing. A frame that rested
/// for a redraw carries its virtual time to the next by design; that is not falling
/// behind (an idle cluster whose redraws are slow would otherwise flicker "behind").
pub fn behind_after(was: bool, engine_rested: bool, debt: Time) -> bool {
    if engine_rested {
        was
    } else {
        debt > 0
    }
}

/// Whether the views are slow to redraw, judged when the frame after a redraw begins:
/// `dt` since the redrawing frame began tells whether that frame fit its budget. Frames
/// that did not redraw leave the judgement as it was.
pub fn views_slow(was_slow: bool, redrew_last_frame: bool, dt: f64) -> bool {
    if redrew_last_frame {
        dt > SLOW_FRAME_MS
    } else {
        was_slow
    }
}

/// The engine's slice for the next frame: halved when a frame that ran a full slice of
/// engine and drew nothing but the clock and the dots was late (`dt` since it began past
/// [`SLOW_FRAME_MS`]: the slice and the browser's rendering did not fit one vsync
/// together), grown by [`SLICE_STEP_MS`] when it was on time, kept after other frames
/// (a redraw's lateness says nothing about the slice). On a loaded machine the browser
/// renders slower, so the engine takes less of each frame and virtual time slows down
/// instead of frames being dropped.
pub fn next_slice(slice: f64, judged: bool, dt: f64) -> f64 {
    if !judged {
        slice
    } else if dt > SLOW_FRAME_MS {
        (slice / 2.0).max(MIN_SLICE_MS)
    } else {
        (slice + SLICE_STEP_MS).min(SLICE_MS)
    }
}

/// Virtual seconds per wall-clock second around a burst, in slow motion: the chain
/// after `kubectl apply` (about 25 virtual ms from kubectl to the binding) takes a
/// second or so to watch.
pub const SLOWMO_SPEED: f64 = 0.02;

/// The speed a frame runs at: the chosen one, or slower in a burst.
pub fn slow_motion(speed: f64, burst: bool) -> f64 {
    if burst {
        speed.min(SLOWMO_SPEED)
    } else {
        speed
    }
}

/// How many frames a shared link's scenario runs before the page saves it.
pub const TRUST_AFTER_FRAMES: u32 = 60;

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
    debt: Cell<Time>,
    had_dots: Cell<bool>,
    /// Frames since the scenario stopped being trusted (a shared link opened).
    untrusted_frames: Cell<u32>,
    /// Whether the replay of the saved scenario finished and the mark was cleared.
    opened: Cell<bool>,
    /// When the views were last told (wall-clock ms).
    last_publish: Cell<f64>,
    /// Whether the previous frame told the views.
    published: Cell<bool>,
    /// Whether the views' last redraw made its frame overrun (see [`views_slow`]).
    slow_views: Cell<bool>,
    /// Whether the panels are still to be told of the diagram's last redraw.
    panels_due: Cell<bool>,
    /// The engine's slice of this frame, wall-clock ms (see [`next_slice`]).
    slice: Cell<f64>,
    /// Whether the previous frame ran the engine until its slice ran out and drew only
    /// the clock and the dots: its lateness judges the slice.
    full_slice: Cell<bool>,
    performance: Option<web_sys::Performance>,
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
        debt: Cell::new(0),
        had_dots: Cell::new(false),
        untrusted_frames: Cell::new(0),
        opened: Cell::new(false),
        last_publish: Cell::new(0.0),
        published: Cell::new(false),
        slow_views: Cell::new(false),
        panels_due: Cell::new(false),
        slice: Cell::new(SLICE_MS),
        full_slice: Cell::new(false),
        performance: web_sys::window().and_then(|w| w.performance()),
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
    // Slow motion: while control-plane messages fly, virtual time crawls.
    let slowed = playing
        && ui.slowmo.get_untracked()
        && ui.session.try_with_value(|s| s.burst()).unwrap_or(false);
    let speed = slow_motion(speed, slowed);
    if ui.slowed.get_untracked() != slowed {
        ui.slowed.set(slowed);
    }
    let mut carry = state.carry.get();
    let ms = if playing {
        virtual_ms(dt, speed, &mut carry) + state.debt.get()
    } else {
        0
    };
    state.carry.set(carry);
    let clock = state.performance.clone();
    let now = move || clock.as_ref().map_or(0.0, |p| p.now());
    let start = now();
    let slow = views_slow(state.slow_views.get(), state.published.get(), dt);
    state.slow_views.set(slow);
    let busy = state.debt.get() > 0 || slow;
    let panels_due = state.panels_due.get();
    let publish = publish_now(busy, start, state.last_publish.get());
    // While behind, the two frames that redraw run no engine: the redraw has the frame
    // to itself, the panels draw the world the diagram drew a frame before (its view
    // cached), and the virtual time is carried.
    let engine_rests = what_to_tell(publish, busy, panels_due).engine_rests();
    let prepare_view =
        busy && !engine_rests && publish_now(busy, start + FRAME_MS, state.last_publish.get());
    let slice = next_slice(state.slice.get(), state.full_slice.get(), dt);
    state.slice.set(slice);
    let deadline = start + slice;
    let ran_out = Cell::new(false);
    let mut over_budget = || {
        let over = now() > deadline;
        ran_out.set(over);
        over
    };
    let dots = ui.session.try_update_value(|s| {
        let replaying = s.replaying().is_some();
        if !replaying && !state.opened.get() {
            // The saved scenario replayed without bringing the tab down.
            state.opened.set(true);
            super::browser::mark_opening(false);
        }
        let done = if engine_rests {
            0
        } else if ms > 0 || replaying {
            s.advance_within(ms, &mut over_budget)
        } else {
            0
        };
        let debt = if replaying {
            0
        } else {
            debt_after(ms, done, speed)
        };
        let prepared = prepare_view && now() <= deadline + PREPARE_SLACK_MS;
        if prepared {
            // The next frame redraws the diagram without running the engine: its view
            // is built now, on a frame that only ran the engine's slice (unless one
            // event overran it: then the diagram's frame builds it).
            s.view();
        }
        state.full_slice.set(ran_out.get() && !prepared);
        s.tick_animation(dt);
        (!s.traffic().is_empty(), debt)
    });
    let Some((dots, debt)) = dots else {
        return false;
    };
    let publish = publish || (debt == 0 && !slow);
    let tell = what_to_tell(publish, busy, panels_due);
    state.debt.set(debt);
    state.published.set(tell != Tell::Clock);
    if tell != Tell::Clock {
        state.full_slice.set(false);
    }
    state.panels_due.set(tell == Tell::Diagram);
    // A shared link's scenario is saved once it has run a second of frames cleanly.
    if ui.trusted.get_untracked() {
        state.untrusted_frames.set(0);
    } else {
        let n = state.untrusted_frames.get() + 1;
        state.untrusted_frames.set(n);
        if n >= TRUST_AFTER_FRAMES {
            ui.trusted.set(true);
        }
    }
    let behind = behind_after(ui.behind.get_untracked(), engine_rests, debt);
    if ui.behind.get_untracked() != behind {
        ui.behind.set(behind);
    }
    match tell {
        Tell::All => ui.sync(),
        Tell::Diagram => ui.sync_diagram(),
        Tell::Panels => ui.sync_panels(),
        Tell::Clock => ui.sync_clock(),
    }
    if matches!(tell, Tell::All | Tell::Diagram) {
        state.last_publish.set(start);
    }
    if tell == Tell::Panels {
        ui.sync_clock();
    }
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

    #[wasm_bindgen_test(unsupported = test)]
    fn should_crawl_through_bursts_in_slow_motion() {
        assert_eq!(slow_motion(1.0, true), SLOWMO_SPEED);
        assert_eq!(slow_motion(0.01, true), 0.01, "never faster than chosen");
        assert_eq!(slow_motion(4.0, false), 4.0);
        let mut carry = 0.0;
        let ms: Time = (0..60)
            .map(|_| virtual_ms(16.7, slow_motion(1.0, true), &mut carry))
            .sum();
        assert!(
            (19..=21).contains(&ms),
            "a second of frames runs 20 virtual ms: {ms}"
        );
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn should_tell_the_views_less_often_while_behind() {
        assert!(publish_now(false, 1000.0, 999.0), "keeping up: every frame");
        assert!(!publish_now(true, 1100.0, 1000.0));
        assert!(!publish_now(true, 1250.0, 1000.0));
        assert!(publish_now(true, 1400.0, 1000.0));
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn should_call_the_engine_behind_only_after_a_frame_that_ran_it() {
        assert!(behind_after(false, false, 5), "ran and still owes");
        assert!(!behind_after(true, false, 0), "ran and caught up");
        assert!(
            !behind_after(false, true, 130),
            "a redraw's rest carries time by design"
        );
        assert!(
            behind_after(true, true, 0),
            "a rest keeps what the last run said"
        );
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn should_judge_the_views_by_the_frame_after_they_redrew() {
        assert!(views_slow(false, true, 33.4), "the redraw cost a vsync");
        assert!(!views_slow(true, true, 16.7), "the redraw fit again");
        assert!(views_slow(true, false, 16.7), "no redraw, no new judgement");
        assert!(
            !views_slow(false, false, 50.0),
            "a slow frame without a redraw"
        );
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn should_shrink_the_slice_when_a_frame_of_engine_was_late_and_regrow_it() {
        assert_eq!(
            next_slice(SLICE_MS, true, 33.3),
            SLICE_MS / 2.0,
            "a vsync missed"
        );
        assert_eq!(
            next_slice(3.0, true, 50.0),
            MIN_SLICE_MS,
            "never below the least"
        );
        assert_eq!(
            next_slice(4.0, false, 50.0),
            4.0,
            "a redraw's lateness: kept"
        );
        assert_eq!(
            next_slice(4.0, true, 16.7),
            4.0 + SLICE_STEP_MS,
            "on time: grows"
        );
        assert_eq!(
            next_slice(SLICE_MS, true, 16.6),
            SLICE_MS,
            "never above the most"
        );
        let mut slice = MIN_SLICE_MS;
        let mut frames = 0;
        while slice < SLICE_MS {
            slice = next_slice(slice, true, 16.7);
            frames += 1;
        }
        assert_eq!(
            frames, 20,
            "a third of a second of on-time frames regrows it"
        );
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn should_split_a_busy_redraw_over_two_frames() {
        // Keeping up: every frame redraws everything.
        assert_eq!(what_to_tell(true, false, false), Tell::All);
        // Behind: the diagram on one frame, the panels on the next, then only the clock
        // until the next publish.
        assert_eq!(what_to_tell(true, true, false), Tell::Diagram);
        assert_eq!(what_to_tell(false, true, true), Tell::Panels);
        assert_eq!(
            what_to_tell(true, true, true),
            Tell::Panels,
            "the panels first"
        );
        assert_eq!(what_to_tell(false, true, false), Tell::Clock);
        assert!(Tell::Diagram.engine_rests() && Tell::Panels.engine_rests());
        assert!(!Tell::All.engine_rests() && !Tell::Clock.engine_rests());
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn should_carry_what_the_slice_could_not_run_up_to_a_cap() {
        assert_eq!(debt_after(16, 16, 1.0), 0);
        assert_eq!(
            debt_after(16, 4, 1.0),
            12,
            "the rest waits for the next frame"
        );
        assert_eq!(
            debt_after(900_000, 0, 2.0),
            2_000,
            "at most a second of wall time at 2x"
        );
        assert_eq!(debt_after(5, 9, 1.0), 0);
    }
}
