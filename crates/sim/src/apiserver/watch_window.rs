//! One resource's window of recent changes in the watch cache, sized as upstream's
//! `watchCache` sizes it (`cacher/watch_cache.go`): 100 to 102,400 changes, doubled
//! while the oldest one is younger than 75 s, halved once even the newest quarter is
//! older. A busy resource keeps about 75 s of changes, a quiet one its last 100; a
//! watch resuming from before the window gets 410 Gone and its informer relists.

use std::collections::VecDeque;

use crate::time::{Time, SECOND};

/// `defaultLowerBoundCapacity`: the fewest changes a window keeps.
pub const LOWER_BOUND: usize = 100;
/// `defaultUpperBoundCapacity`: the most changes a window keeps.
pub const UPPER_BOUND: usize = 100 * 1024;
/// `DefaultEventFreshDuration`: changes younger than this are not dropped while the
/// window may still grow.
pub const EVENT_FRESH: Time = 75 * SECOND;

/// Recent changes of one resource, oldest first, each with the time it was recorded.
#[derive(Debug)]
pub struct Window<T> {
    events: VecDeque<(Time, T)>,
    capacity: usize,
    /// Whether a change was dropped since the cache was (re)loaded: until then the
    /// window reaches back to the load.
    removed: bool,
}

impl<T> Default for Window<T> {
    fn default() -> Self {
        Window {
            events: VecDeque::new(),
            capacity: LOWER_BOUND,
            removed: false,
        }
    }
}

impl<T> Window<T> {
    /// Records a change at `at`, resizing first (`resizeCacheLocked`), then dropping
    /// the oldest change if the window is still full (`updateCache`).
    pub fn push(&mut self, at: Time, event: T) {
        self.resize(at);
        if self.events.len() >= self.capacity {
            self.events.pop_front();
            self.removed = true;
        }
        self.events.push_back((at, event));
    }

    fn resize(&mut self, at: Time) {
        if self.events.len() < self.capacity {
            return;
        }
        let age = |i: usize| self.events.get(i).map_or(0, |(t, _)| at.saturating_sub(*t));
        if age(0) < EVENT_FRESH {
            self.capacity = (self.capacity * 2).min(UPPER_BOUND);
        } else if age(self.events.len() - self.capacity / 4) > EVENT_FRESH {
            let capacity = (self.capacity / 2).max(LOWER_BOUND);
            while self.events.len() > capacity {
                self.events.pop_front();
                self.removed = true;
            }
            self.capacity = capacity;
        }
    }

    /// Whether a change was dropped since the last (re)load.
    pub fn removed(&self) -> bool {
        self.removed
    }

    /// The changes, oldest first.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = &T> + '_ {
        self.events.iter().map(|(_, e)| e)
    }

    /// The oldest change kept.
    pub fn front(&self) -> Option<&T> {
        self.events.front().map(|(_, e)| e)
    }

    /// The newest change.
    pub fn back(&self) -> Option<&T> {
        self.events.back().map(|(_, e)| e)
    }

    /// The index of the first change for which `before` is false.
    pub fn partition_point(&self, before: impl Fn(&T) -> bool) -> usize {
        self.events.partition_point(|(_, e)| before(e))
    }

    /// The change at `i`, to change in place.
    pub fn get_mut(&mut self, i: usize) -> Option<&mut T> {
        self.events.get_mut(i).map(|(_, e)| e)
    }

    /// The changes from `i` on.
    pub fn skip(&self, i: usize) -> impl Iterator<Item = &T> + '_ {
        self.events.iter().skip(i).map(|(_, e)| e)
    }

    /// How many changes the window holds.
    pub fn len(&self) -> usize {
        self.events.len()
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.events.is_empty()
    }

    /// How many changes it may hold before dropping or growing.
    pub fn capacity(&self) -> usize {
        self.capacity
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_quiet_resource_keeps_its_last_hundred_changes() {
        let mut w = Window::default();
        for i in 0..250u64 {
            w.push(i * 10 * SECOND, i);
        }
        assert_eq!(w.len(), LOWER_BOUND);
        assert_eq!(w.front(), Some(&150));
        assert!(w.removed());
    }

    #[test]
    fn a_busy_resource_grows_to_keep_75_seconds_then_shrinks_when_it_calms() {
        let mut w = Window::default();
        // 100 changes a second for 200 s: the window doubles until it holds 75 s.
        for i in 0..20_000u64 {
            w.push(i * 10, i);
        }
        assert!(!w.is_empty() && w.capacity() == 12_800, "{}", w.capacity());
        let oldest = 19_999 - w.len() as u64 + 1;
        assert!((19_999 - oldest) * 10 >= EVENT_FRESH, "keeps at least 75 s");
        // Then one change a minute: each full push halves it, down to 100.
        for i in 0..20u64 {
            w.push(200 * SECOND + i * 60 * SECOND, i);
        }
        assert_eq!(w.capacity(), LOWER_BOUND);
        assert_eq!(w.len(), LOWER_BOUND);
    }

    #[test]
    fn the_window_never_grows_past_the_upper_bound() {
        let mut w = Window::default();
        for i in 0..(UPPER_BOUND as u64 + 5000) {
            w.push(0, i);
        }
        assert_eq!(w.len(), UPPER_BOUND);
        assert_eq!(w.back(), Some(&(UPPER_BOUND as u64 + 4999)));
    }

    #[test]
    fn nothing_is_removed_before_the_window_is_full() {
        let mut w = Window::default();
        for i in 0..LOWER_BOUND as u64 {
            w.push(i, i);
        }
        assert!(!w.removed());
        assert_eq!(w.partition_point(|e| *e < 40), 40);
        assert_eq!(w.skip(98).copied().collect::<Vec<_>>(), [98, 99]);
    }
}
