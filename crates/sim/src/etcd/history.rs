//! etcd's retained history, kept small: each superseded revision as its JSON
//! ([`Stored`]), the newest of each key shared with the live store.

use std::collections::VecDeque;

use super::{EtcdEvent, KeyValue};
use crate::stored::Stored;

#[derive(Clone, Debug)]
struct Kv {
    key: String,
    create_revision: u64,
    mod_revision: u64,
    version: u64,
    value: Stored,
}

impl Kv {
    fn live(kv: &KeyValue) -> Kv {
        Kv {
            key: kv.key.clone(),
            create_revision: kv.create_revision,
            mod_revision: kv.mod_revision,
            version: kv.version,
            value: Stored::Live(kv.value.clone()),
        }
    }

    fn with(kv: &KeyValue, value: Stored) -> Kv {
        Kv {
            value,
            ..Kv::live(kv)
        }
    }

    fn thaw(&self) -> KeyValue {
        KeyValue {
            key: self.key.clone(),
            create_revision: self.create_revision,
            mod_revision: self.mod_revision,
            version: self.version,
            value: self.value.object(),
        }
    }
}

#[derive(Clone, Debug)]
struct Entry {
    revision: u64,
    deleted: bool,
    kv: Kv,
    prev: Option<Kv>,
}

/// The events since the last compaction, oldest first.
#[derive(Debug, Default)]
pub(super) struct History {
    entries: VecDeque<Entry>,
}

impl History {
    /// Records a write. The value it replaced is encoded once, shared by the replaced
    /// revision's event and this event's previous value; a delete's last value too.
    /// Returns the event with that encoding in [`EtcdEvent::replaced`].
    pub fn push(&mut self, mut ev: EtcdEvent) -> EtcdEvent {
        let replaced = ev.prev.as_ref().map(|p| {
            // The replaced revision's own previous value is the key's revision before
            // it, already encoded: what did not change is shared with it.
            let encoded = match self.find_mut(p.mod_revision, &p.key) {
                Some(e) => {
                    let base = e.prev.as_ref().map(|k| k.value.clone());
                    e.kv.value.supersede(base.as_ref())
                }
                None => Stored::encode(&p.value),
            };
            Kv::with(p, encoded)
        });
        let kv = match (&replaced, ev.deleted) {
            (Some(p), true) => Kv::with(&ev.kv, p.value.clone()),
            _ => Kv::live(&ev.kv),
        };
        self.entries.push_back(Entry {
            revision: ev.revision,
            deleted: ev.deleted,
            kv,
            prev: replaced.clone(),
        });
        ev.replaced = replaced.map(|p| p.value);
        ev
    }

    fn find_mut(&mut self, revision: u64, key: &str) -> Option<&mut Entry> {
        let i = self.entries.partition_point(|e| e.revision < revision);
        self.entries
            .get_mut(i)
            .filter(|e| e.revision == revision && e.kv.key == key)
    }

    /// Index of the first event at or after `revision`.
    fn start(&self, revision: u64) -> usize {
        self.entries.partition_point(|e| e.revision < revision)
    }

    /// Events at revisions ≥ `from` whose key passes `keep`, decoded.
    pub fn since(&self, from: u64, keep: impl Fn(&str) -> bool) -> Vec<EtcdEvent> {
        self.entries
            .iter()
            .skip(self.start(from))
            .filter(|e| keep(&e.kv.key))
            .map(thaw)
            .collect()
    }

    /// The events of one key, decoded, oldest first.
    pub fn of_key(&self, key: &str) -> Vec<EtcdEvent> {
        self.since(0, |k| k == key)
    }

    /// The revision and key of every event, oldest first.
    pub fn keys(&self) -> impl Iterator<Item = (u64, &str)> + '_ {
        self.entries.iter().map(|e| (e.revision, e.kv.key.as_str()))
    }

    /// Number of events.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Drops the events before `revision`.
    pub fn compact(&mut self, revision: u64) {
        let n = self.start(revision);
        self.entries.drain(..n);
    }

    /// Bytes of encoded values held (each shared value once per holder).
    #[cfg(test)]
    pub fn encoded_bytes(&self) -> usize {
        self.entries.iter().map(|e| e.kv.value.encoded_len()).sum()
    }
}

fn thaw(e: &Entry) -> EtcdEvent {
    EtcdEvent {
        revision: e.revision,
        deleted: e.deleted,
        kv: e.kv.thaw(),
        prev: e.prev.as_ref().map(Kv::thaw),
        replaced: None,
    }
}
