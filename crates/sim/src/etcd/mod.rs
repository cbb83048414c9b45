//! etcd: an MVCC key-value store with revisions, prefix ranges, reads at past revisions,
//! watches with history, compaction and single-key compare-and-swap transactions — and
//! the actor serving it.

mod history;
mod lease;
mod server;
#[cfg(test)]
mod tests;

pub use lease::Lease;
pub use server::Etcd;

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::object::Object;
use crate::time::Time;

/// One stored key with its MVCC metadata.
#[derive(Clone, Debug)]
pub struct KeyValue {
    /// The key (`/registry/pods/default/nginx-…`).
    pub key: String,
    /// Revision of the write that created the key.
    pub create_revision: u64,
    /// Revision of the last write to the key.
    pub mod_revision: u64,
    /// Number of writes since creation (1 after create).
    pub version: u64,
    /// The stored object (the apiserver stores JSON: `--storage-media-type=application/json`).
    pub value: Arc<Object>,
}

/// What happened at one revision.
#[derive(Clone, Debug)]
pub struct EtcdEvent {
    /// The revision of the write.
    pub revision: u64,
    /// True for a delete.
    pub deleted: bool,
    /// The key after the write (for deletes: the last value, with `mod_revision` = this revision).
    pub kv: KeyValue,
    /// The previous value, if any.
    pub prev: Option<KeyValue>,
    /// `prev`'s value as the history now holds it (its JSON), for the watch cache to
    /// share rather than encode the same object again; `None` in replayed events.
    pub replaced: Option<crate::stored::Stored>,
}

/// A compare clause of a transaction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Expect {
    /// The key must not exist (create).
    Absent,
    /// The key's mod_revision must equal this (optimistic update/delete).
    ModRevision(u64),
    /// No condition.
    Any,
}

/// The operation of a transaction's success branch.
#[derive(Clone, Debug)]
pub enum TxnOp {
    /// Put a value.
    Put(Arc<Object>),
    /// Put a value attached to a lease: the key is deleted when the lease expires.
    PutLeased(Arc<Object>, Lease),
    /// Delete the key.
    Delete,
}

/// Requests etcd serves.
#[derive(Clone, Debug)]
pub enum EtcdOp {
    /// Read a key or a prefix.
    Range {
        /// Key or prefix.
        key: String,
        /// Treat `key` as a prefix.
        prefix: bool,
        /// Return at most this many keys (0 = all).
        limit: usize,
        /// Read as of this revision (0 = the current one), like `etcdctl get --rev`.
        revision: u64,
    },
    /// `If(compare) Then(op) Else(get)` on one key.
    Txn {
        /// The key.
        key: String,
        /// The compare.
        expect: Expect,
        /// The operation if the compare holds.
        op: TxnOp,
    },
    /// Watch a key or prefix from a revision (0 = from the next write).
    Watch {
        /// Prefix.
        prefix: String,
        /// First revision to deliver.
        start_revision: u64,
    },
    /// Cancel a watch created by the same client.
    CancelWatch {
        /// The id of the Watch request.
        watch_id: u64,
    },
    /// Discard history before `revision`.
    Compact {
        /// Compaction revision.
        revision: u64,
    },
    /// `etcdctl endpoint status`.
    Status,
    /// `etcdctl lease list`.
    LeaseLeases,
    /// `etcdctl lease timetolive ID`.
    LeaseTimeToLive {
        /// The lease.
        id: i64,
    },
}

/// A request to etcd.
#[derive(Clone, Debug)]
pub struct EtcdRequest {
    /// Id, unique per client; the response carries it.
    pub id: u64,
    /// The operation.
    pub op: EtcdOp,
}

impl EtcdRequest {
    /// A label for traces: the gRPC call and key.
    pub fn op_label(&self) -> String {
        match &self.op {
            EtcdOp::Range {
                key, prefix: true, ..
            } => format!("Range {key}*"),
            EtcdOp::Range { key, .. } => format!("Range {key}"),
            EtcdOp::Txn {
                key,
                op: TxnOp::Put(_) | TxnOp::PutLeased(..),
                ..
            } => format!("Txn Put {key}"),
            EtcdOp::Txn {
                key,
                op: TxnOp::Delete,
                ..
            } => format!("Txn Delete {key}"),
            EtcdOp::Watch { prefix, .. } => format!("Watch {prefix}"),
            EtcdOp::CancelWatch { .. } => "CancelWatch".into(),
            EtcdOp::Compact { revision } => format!("Compact {revision}"),
            EtcdOp::Status => "Status".into(),
            EtcdOp::LeaseLeases => "LeaseLeases".into(),
            EtcdOp::LeaseTimeToLive { id } => format!("LeaseTimeToLive {id:016x}"),
        }
    }
}

/// Successful results.
#[derive(Clone, Debug)]
pub enum EtcdResult {
    /// Keys found, and the store's current revision.
    Range {
        /// Matching keys in key order.
        kvs: Vec<KeyValue>,
        /// Total matching keys (before limit).
        count: usize,
        /// Whether the limit cut the result short.
        more: bool,
        /// Header revision.
        revision: u64,
    },
    /// Transaction outcome.
    Txn {
        /// Whether the compare held and the op ran.
        succeeded: bool,
        /// Header revision after the transaction.
        revision: u64,
        /// The key's value after a successful put, or the current value when the compare failed.
        kv: Option<KeyValue>,
        /// The value before a successful write.
        prev: Option<KeyValue>,
    },
    /// The watch is established.
    WatchCreated,
    /// Compaction done.
    Compacted,
    /// Endpoint status.
    Status {
        /// Current revision.
        revision: u64,
        /// Compacted revision.
        compact_revision: u64,
        /// Size of the database file in bytes (it never shrinks without a defrag).
        db_size: u64,
        /// Bytes of the file holding live data and retained history.
        db_size_in_use: u64,
        /// Number of keys.
        keys: usize,
    },
    /// The ids of the leases, in order.
    Leases(Vec<i64>),
    /// A lease's TTLs in seconds (`-1` remaining and `0` granted: it has expired) and its
    /// keys.
    TimeToLive {
        /// TTL it was granted with.
        granted_ttl: i64,
        /// Seconds left.
        ttl: i64,
        /// Keys attached.
        keys: Vec<String>,
    },
}

/// A response from etcd (or the network when etcd cannot be reached).
#[derive(Clone, Debug)]
pub struct EtcdResponse {
    /// Id of the request.
    pub id: u64,
    /// Result or an etcd error message (`etcdserver: …`, `mvcc: …`).
    pub result: Result<EtcdResult, String>,
}

/// Events for one watch, or the error that ended it.
#[derive(Clone, Debug)]
pub struct EtcdWatchBatch {
    /// Id of the Watch request.
    pub watch_id: u64,
    /// Events, or `mvcc: required revision has been compacted` (with the compact revision).
    pub events: Result<Vec<EtcdEvent>, (String, u64)>,
}

/// The error etcd returns for a watch or read below the compaction point.
pub const ERR_COMPACTED: &str = "mvcc: required revision has been compacted";
/// The error etcd returns for a read or compaction above the current revision.
pub const ERR_FUTURE_REV: &str = "mvcc: required revision is a future revision";

/// The MVCC store.
#[derive(Debug, Default)]
pub struct Store {
    kv: BTreeMap<String, KeyValue>,
    revision: u64,
    compact_revision: u64,
    history: history::History,
    leases: lease::Leases,
}

impl Store {
    /// The current revision.
    pub fn revision(&self) -> u64 {
        self.revision
    }

    /// The compaction revision.
    pub fn compact_revision(&self) -> u64 {
        self.compact_revision
    }

    /// One key.
    pub fn get(&self, key: &str) -> Option<&KeyValue> {
        self.kv.get(key)
    }

    /// Keys from `start` on, in key order (a reader that skips a range seeks past it).
    pub fn range_from(&self, start: &str) -> impl Iterator<Item = &KeyValue> {
        self.kv
            .range::<str, _>((std::ops::Bound::Included(start), std::ops::Bound::Unbounded))
            .map(|(_, v)| v)
    }

    /// Keys under a prefix, in key order.
    pub fn range_prefix<'a>(&'a self, prefix: &'a str) -> impl Iterator<Item = &'a KeyValue> + 'a {
        self.kv
            .range(prefix.to_string()..)
            .take_while(move |(k, _)| k.starts_with(prefix))
            .map(|(_, v)| v)
    }

    /// Keys under a prefix (or the one key), as of `rev` (0 = now): the current value
    /// of keys unchanged since `rev`, else the value the first later write replaced.
    /// Fails below the compaction point or above the current revision.
    pub fn range_at(&self, key: &str, prefix: bool, rev: u64) -> Result<Vec<KeyValue>, String> {
        let matches = |k: &str| if prefix { k.starts_with(key) } else { k == key };
        let now: Vec<KeyValue> = if prefix {
            self.range_prefix(key).cloned().collect()
        } else {
            self.get(key).cloned().into_iter().collect()
        };
        if rev == 0 || rev >= self.revision {
            if rev > self.revision {
                return Err(ERR_FUTURE_REV.to_string());
            }
            return Ok(now);
        }
        if rev < self.compact_revision {
            return Err(ERR_COMPACTED.to_string());
        }
        // The first write after `rev` to each key tells what the key held at `rev`.
        let later = self.history.since(rev + 1, matches);
        let mut first_after: BTreeMap<&str, &EtcdEvent> = BTreeMap::new();
        for e in &later {
            first_after.entry(e.kv.key.as_str()).or_insert(e);
        }
        let mut out: BTreeMap<String, KeyValue> = now
            .into_iter()
            .filter(|kv| !first_after.contains_key(kv.key.as_str()))
            .map(|kv| (kv.key.clone(), kv))
            .collect();
        for (k, e) in first_after {
            if let Some(p) = &e.prev {
                out.insert(k.to_string(), p.clone());
            }
        }
        Ok(out.into_values().collect())
    }

    /// Number of keys under a prefix and the first `limit` of them (0 = all), without
    /// cloning the rest.
    pub fn range_limited(&self, prefix: &str, limit: usize) -> (Vec<KeyValue>, usize) {
        let mut kvs = Vec::new();
        let mut count = 0;
        for kv in self.range_prefix(prefix) {
            if limit == 0 || count < limit {
                kvs.push(kv.clone());
            }
            count += 1;
        }
        (kvs, count)
    }

    /// The retained writes to one key (since the last compaction), oldest first.
    pub fn history_of(&self, key: &str) -> Vec<EtcdEvent> {
        self.history.of_key(key)
    }

    /// The revision and key of every retained history event, oldest first.
    pub fn history_keys(&self) -> impl Iterator<Item = (u64, &str)> + '_ {
        self.history.keys()
    }

    /// Retained history events (since the last compaction).
    pub fn history_len(&self) -> usize {
        self.history.len()
    }

    /// Number of keys.
    pub fn len(&self) -> usize {
        self.kv.len()
    }

    /// Whether the store is empty.
    pub fn is_empty(&self) -> bool {
        self.kv.is_empty()
    }

    /// Runs a single-key transaction; returns the result and the event it produced.
    pub fn txn(&mut self, key: &str, expect: Expect, op: TxnOp) -> (EtcdResult, Option<EtcdEvent>) {
        let current = self.kv.get(key);
        let holds = match expect {
            Expect::Absent => current.is_none(),
            Expect::ModRevision(r) => current.is_some_and(|c| c.mod_revision == r),
            Expect::Any => true,
        };
        if !holds {
            let r = EtcdResult::Txn {
                succeeded: false,
                revision: self.revision,
                kv: current.cloned(),
                prev: None,
            };
            return (r, None);
        }
        let (put, lease) = match op {
            TxnOp::Put(value) => (Some(value), None),
            TxnOp::PutLeased(value, lease) => (Some(value), Some(lease)),
            TxnOp::Delete => (None, None),
        };
        match put {
            Some(mut value) => {
                self.leases.attach(key, lease);
                self.revision += 1;
                stamp(&mut value, self.revision);
                let prev = current.cloned();
                let kv = KeyValue {
                    key: key.to_string(),
                    create_revision: prev.as_ref().map_or(self.revision, |p| p.create_revision),
                    mod_revision: self.revision,
                    version: prev.as_ref().map_or(1, |p| p.version + 1),
                    value,
                };
                self.kv.insert(key.to_string(), kv.clone());
                let ev = EtcdEvent {
                    revision: self.revision,
                    deleted: false,
                    kv: kv.clone(),
                    prev: prev.clone(),
                    replaced: None,
                };
                let ev = self.history.push(ev);
                (
                    EtcdResult::Txn {
                        succeeded: true,
                        revision: self.revision,
                        kv: Some(kv),
                        prev,
                    },
                    Some(ev),
                )
            }
            None => {
                self.leases.detach(key);
                let Some(prev) = self.kv.remove(key) else {
                    // Deleting a missing key succeeds without a new revision, as in etcd.
                    let r = EtcdResult::Txn {
                        succeeded: true,
                        revision: self.revision,
                        kv: None,
                        prev: None,
                    };
                    return (r, None);
                };
                self.revision += 1;
                let mut tomb = prev.clone();
                tomb.mod_revision = self.revision;
                let ev = EtcdEvent {
                    revision: self.revision,
                    deleted: true,
                    kv: tomb,
                    prev: Some(prev.clone()),
                    replaced: None,
                };
                let ev = self.history.push(ev);
                (
                    EtcdResult::Txn {
                        succeeded: true,
                        revision: self.revision,
                        kv: None,
                        prev: Some(prev),
                    },
                    Some(ev),
                )
            }
        }
    }

    /// Deletes the keys whose lease expired at `now`, one revision each; returns the
    /// deletions' events.
    pub fn expire(&mut self, now: Time) -> Vec<EtcdEvent> {
        let keys = self.leases.expired(now);
        keys.iter()
            .filter_map(|k| self.txn(k, Expect::Any, TxnOp::Delete).1)
            .collect()
    }

    /// When the next lease expires.
    pub fn next_expiry(&self) -> Option<Time> {
        self.leases.next_expiry()
    }

    /// Every lease with keys attached, by id, with its keys.
    pub fn leases(&self) -> std::collections::BTreeMap<i64, (Lease, Vec<String>)> {
        self.leases.all()
    }

    /// The lease `key` is attached to.
    pub fn lease_of(&self, key: &str) -> Option<Lease> {
        self.leases.of(key)
    }

    /// Events at revisions ≥ `from` under `prefix`, or the compaction error.
    pub fn events_since(&self, prefix: &str, from: u64) -> Result<Vec<EtcdEvent>, (String, u64)> {
        // A watch may start at the compaction revision itself, not before (as etcd).
        if from != 0 && from < self.compact_revision {
            return Err((ERR_COMPACTED.to_string(), self.compact_revision));
        }
        Ok(self.history.since(from, |k| k.starts_with(prefix)))
    }

    /// Drops history before `revision`.
    pub fn compact(&mut self, revision: u64) -> Result<(), String> {
        if revision <= self.compact_revision {
            return Err(ERR_COMPACTED.to_string());
        }
        if revision > self.revision {
            return Err(ERR_FUTURE_REV.to_string());
        }
        self.compact_revision = revision;
        self.history.compact(revision);
        Ok(())
    }

    /// Writes an object at boot (before the world starts), bypassing the actor.
    pub fn bootstrap_put(&mut self, key: &str, value: Object) {
        let _ = self.txn(key, Expect::Any, TxnOp::Put(Arc::new(value)));
    }
}

/// Stamps the revision of the write into the stored object's `resourceVersion`, as the
/// apiserver's storage layer sets it on every object it decodes from etcd. Done here,
/// in place, so etcd, the watch cache and every response share one copy per revision;
/// printing a stored value (etcdctl) leaves it out again, as the stored bytes have none.
fn stamp(value: &mut Arc<Object>, revision: u64) {
    let rv = Some(revision.to_string());
    match Arc::get_mut(value) {
        Some(o) => o.meta_mut().resource_version = rv,
        None => {
            let mut o = (**value).clone();
            o.meta_mut().resource_version = rv;
            *value = Arc::new(o);
        }
    }
}
