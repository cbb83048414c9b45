//! A least-recently-used cache of bounded size (groupcache's `lru`, as client-go's
//! event caches use), keyed by a 64-bit hash of the key's text.

use std::collections::BTreeMap;

/// At most `cap` entries; using one makes it the most recent, and adding one past the
/// bound forgets the least recently used.
#[derive(Debug)]
pub(super) struct Lru<V> {
    cap: usize,
    tick: u64,
    entries: BTreeMap<u64, (u64, V)>,
    order: BTreeMap<u64, u64>,
}

impl<V> Lru<V> {
    /// An empty cache of at most `cap` (≥ 1) entries.
    pub fn new(cap: usize) -> Lru<V> {
        Lru {
            cap: cap.max(1),
            tick: 0,
            entries: BTreeMap::new(),
            order: BTreeMap::new(),
        }
    }

    /// The entry for `key`, made the most recent; `make` fills a missing one.
    pub fn entry(&mut self, key: u64, make: impl FnOnce() -> V) -> &mut V {
        self.tick += 1;
        let tick = self.tick;
        if !self.entries.contains_key(&key) && self.entries.len() >= self.cap {
            if let Some((_, oldest)) = self.order.pop_first() {
                self.entries.remove(&oldest);
            }
        }
        let slot = self.entries.entry(key).or_insert_with(|| (tick, make()));
        self.order.remove(&slot.0);
        slot.0 = tick;
        self.order.insert(tick, key);
        &mut slot.1
    }

    /// Number of entries.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.entries.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_least_recently_used_entry_goes_first() {
        let mut lru = Lru::new(2);
        *lru.entry(1, || 0) += 1;
        *lru.entry(2, || 0) += 1;
        *lru.entry(1, || 0) += 1; // 1 is now the most recent
        *lru.entry(3, || 0) += 1; // forgets 2
        assert_eq!(lru.len(), 2);
        assert_eq!(*lru.entry(1, || 0), 2);
        assert_eq!(*lru.entry(2, || 0), 0, "2 was forgotten and starts again");
    }
}
