//! A rate-limited work queue: each key at most once, per-item exponential backoff on
//! failure (client-go's ItemExponentialFailureRateLimiter: 5ms doubling to 1000s).
//!
//! A key being processed is not handed out again until its processing is done: adds in
//! the meantime fold into one more pass after it (client-go's `processing` and `dirty`
//! sets). A sync takes no virtual time unless its controller says it does
//! ([`WorkQueue::hold`]); then the adds during it wait for its end.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use crate::time::Time;

const BASE_DELAY: Time = 5;
const MAX_DELAY: Time = 1_000_000;

/// A de-duplicating FIFO of keys with delayed re-adds.
#[derive(Debug)]
pub struct WorkQueue<K: Ord + Clone> {
    queue: VecDeque<K>,
    dirty: BTreeSet<K>,
    failures: BTreeMap<K, u32>,
    waiting: BTreeMap<(Time, u64), K>,
    seq: u64,
    /// Keys still being processed, and until when.
    busy: BTreeMap<K, Time>,
    /// Busy keys added again, parked in `waiting` until their processing ends.
    parked: BTreeSet<K>,
}

impl<K: Ord + Clone> Default for WorkQueue<K> {
    fn default() -> Self {
        WorkQueue {
            queue: VecDeque::new(),
            dirty: BTreeSet::new(),
            failures: BTreeMap::new(),
            waiting: BTreeMap::new(),
            seq: 0,
            busy: BTreeMap::new(),
            parked: BTreeSet::new(),
        }
    }
}

impl<K: Ord + Clone> WorkQueue<K> {
    /// Adds a key now (no-op if already queued).
    pub fn add(&mut self, k: K) {
        if self.dirty.insert(k.clone()) {
            self.queue.push_back(k);
        }
    }

    /// Adds a key after its backoff; returns when it becomes due (for the caller's timer).
    pub fn add_rate_limited(&mut self, k: K, now: Time) -> Time {
        let n = self.failures.entry(k.clone()).or_insert(0);
        let delay = (BASE_DELAY.saturating_mul(1 << (*n).min(30))).min(MAX_DELAY);
        *n += 1;
        self.add_after(k, now + delay)
    }

    /// Adds a key at time `at`; returns `at`.
    pub fn add_after(&mut self, k: K, at: Time) -> Time {
        self.seq += 1;
        self.waiting.insert((at, self.seq), k);
        at
    }

    /// Moves keys whose delay expired into the queue.
    pub fn promote(&mut self, now: Time) {
        while let Some((&(t, s), _)) = self.waiting.first_key_value() {
            if t > now {
                break;
            }
            if let Some(k) = self.waiting.remove(&(t, s)) {
                self.add(k);
            }
        }
    }

    /// The next time a delayed key becomes due.
    pub fn next_due(&self) -> Option<Time> {
        self.waiting.first_key_value().map(|((t, _), _)| *t)
    }

    /// Takes the next key.
    pub fn pop(&mut self) -> Option<K> {
        let k = self.queue.pop_front()?;
        self.dirty.remove(&k);
        Some(k)
    }

    /// Takes the next key that is not being processed at `now`. A busy key added again
    /// waits until its processing ends (once, however often it was added).
    pub fn pop_ready(&mut self, now: Time) -> Option<K> {
        while let Some(k) = self.pop() {
            if let Some(&until) = self.busy.get(&k) {
                if until > now {
                    if self.parked.insert(k.clone()) {
                        self.add_after(k, until);
                    }
                    continue;
                }
                self.busy.remove(&k);
            }
            self.parked.remove(&k);
            return Some(k);
        }
        None
    }

    /// Marks `k`, just taken, as being processed until `until` (a sync that takes
    /// virtual time).
    pub fn hold(&mut self, k: K, until: Time) {
        self.busy.insert(k, until);
    }

    /// Clears a key's failure count (after a successful sync).
    pub fn forget(&mut self, k: &K) {
        self.failures.remove(k);
    }

    /// Number of keys ready now.
    pub fn len(&self) -> usize {
        self.queue.len()
    }

    /// Whether no key is ready.
    pub fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dedups_and_backs_off_exponentially() {
        let mut q = WorkQueue::default();
        q.add("a");
        q.add("a");
        q.add("b");
        assert_eq!(q.len(), 2);
        assert_eq!(q.pop(), Some("a"));
        assert_eq!(q.add_rate_limited("a", 0), 5);
        assert_eq!(q.add_rate_limited("a", 0), 10);
        assert_eq!(q.add_rate_limited("a", 0), 20);
        q.forget(&"a");
        assert_eq!(q.add_rate_limited("a", 100), 105);
        q.promote(10);
        assert_eq!(q.pop(), Some("b"));
        assert_eq!(q.pop(), Some("a"));
        assert_eq!(q.pop(), None);
    }

    #[test]
    fn folds_the_adds_during_a_long_sync_into_one_pass_after_it() {
        let mut q = WorkQueue::default();
        q.add("ds");
        assert_eq!(q.pop_ready(0), Some("ds"));
        q.hold("ds", 10);
        // Three changes while the sync runs: one more pass, when it is done.
        for now in [2, 5, 9] {
            q.add("ds");
            assert_eq!(q.pop_ready(now), None);
        }
        assert_eq!(q.next_due(), Some(10));
        q.promote(10);
        assert_eq!(q.pop_ready(10), Some("ds"));
        assert_eq!(q.pop_ready(10), None);
        // Done: an add is taken at once again.
        q.add("ds");
        assert_eq!(q.pop_ready(11), Some("ds"));
    }

    #[test]
    fn hands_out_other_keys_while_one_is_busy() {
        let mut q = WorkQueue::default();
        q.add("a");
        assert_eq!(q.pop_ready(0), Some("a"));
        q.hold("a", 50);
        q.add("a");
        q.add("b");
        assert_eq!(q.pop_ready(1), Some("b"));
        assert_eq!(q.pop_ready(1), None);
    }
}
