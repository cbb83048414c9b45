//! client-go's `flowcontrol.Backoff` as the kubelet uses it: CrashLoopBackOff and image
//! pull back-off, 10 s doubling to 300 s, forgotten after ten quiet minutes.

use crate::time::{Time, SECOND};

/// CrashLoopBackOff and image pull back-off: initial delay.
pub const BACKOFF_INITIAL: Time = 10 * SECOND;
/// Back-off cap.
pub const BACKOFF_MAX: Time = 300 * SECOND;
/// An entry untouched for twice the cap starts over (`flowcontrol.Backoff` hasExpired).
pub const BACKOFF_RESET: Time = 2 * BACKOFF_MAX;

/// A back-off entry (`flowcontrol.Backoff`): per container for crashes, per image for pulls.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Backoff {
    /// Current delay.
    pub delay: Time,
    /// When it was last bumped.
    pub last_update: Time,
}

impl Backoff {
    /// `Next`: the entry after a failure at `now` (10 s doubling to 300 s; an entry idle
    /// for more than 600 s starts over).
    pub fn next(prev: Option<Backoff>, now: Time) -> Backoff {
        let delay = match prev {
            Some(b) if now.saturating_sub(b.last_update) <= BACKOFF_RESET => {
                (b.delay * 2).min(BACKOFF_MAX)
            }
            _ => BACKOFF_INITIAL,
        };
        Backoff {
            delay,
            last_update: now,
        }
    }

    /// `IsInBackOffSince(event)`: still backing off an event (a container exit) at `now`.
    pub fn in_backoff_since(b: Option<&Backoff>, event: Time, now: Time) -> bool {
        match b {
            None => false,
            Some(b) if event.saturating_sub(b.last_update) > BACKOFF_RESET => false,
            Some(b) => now.saturating_sub(event) < b.delay,
        }
    }

    /// `IsInBackOffSinceUpdate`: still backing off since the last failure (image pulls).
    pub fn in_backoff(b: Option<&Backoff>, now: Time) -> bool {
        b.is_some_and(|b| now.saturating_sub(b.last_update) < b.delay)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crash_backoff_restarts_at_once_then_doubles_to_five_minutes() {
        // Each crash happens right after the restart; the wait before the next restart
        // is the delay in force when the container exits.
        let mut b: Option<Backoff> = None;
        let mut now = 0;
        let mut waits = Vec::new();
        for _ in 0..8 {
            let finished = now;
            let mut t = finished;
            while Backoff::in_backoff_since(b.as_ref(), finished, t) {
                t += 1000;
            }
            waits.push((t - finished) / 1000);
            b = Some(Backoff::next(b, t));
            now = t;
        }
        assert_eq!(waits, [0, 10, 20, 40, 80, 160, 300, 300]);
    }

    #[test]
    fn backoff_resets_after_ten_quiet_minutes() {
        let b = Backoff::next(
            Some(Backoff {
                delay: 160_000,
                last_update: 0,
            }),
            601_000,
        );
        assert_eq!(b.delay, BACKOFF_INITIAL);
        assert!(!Backoff::in_backoff_since(
            Some(&Backoff {
                delay: 300_000,
                last_update: 0
            }),
            700_000,
            700_001
        ));
    }
}
