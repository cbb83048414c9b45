//! etcd: an MVCC key-value store with revisions, prefix ranges, watches with history,
//! compaction and single-key compare-and-swap transactions — and the actor serving it.

use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;

use crate::object::Object;
use crate::world::{Actor, Ctx, Payload};

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
    /// Watch a prefix from a revision (0 = from the next write).
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
                op: TxnOp::Put(_),
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
        /// Approximate database size in bytes.
        db_size: u64,
        /// Number of keys.
        keys: usize,
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

/// The MVCC store.
#[derive(Debug, Default)]
pub struct Store {
    kv: BTreeMap<String, KeyValue>,
    revision: u64,
    compact_revision: u64,
    history: VecDeque<EtcdEvent>,
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

    /// Keys under a prefix, in key order.
    pub fn range_prefix<'a>(&'a self, prefix: &'a str) -> impl Iterator<Item = &'a KeyValue> + 'a {
        self.kv
            .range(prefix.to_string()..)
            .take_while(move |(k, _)| k.starts_with(prefix))
            .map(|(_, v)| v)
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
        match op {
            TxnOp::Put(value) => {
                self.revision += 1;
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
                };
                self.history.push_back(ev.clone());
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
            TxnOp::Delete => {
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
                };
                self.history.push_back(ev.clone());
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

    /// Events at revisions ≥ `from` under `prefix`, or the compaction error.
    pub fn events_since(&self, prefix: &str, from: u64) -> Result<Vec<EtcdEvent>, (String, u64)> {
        if from != 0 && from <= self.compact_revision {
            return Err((ERR_COMPACTED.to_string(), self.compact_revision));
        }
        let start = self.history.partition_point(|e| e.revision < from);
        Ok(self
            .history
            .iter()
            .skip(start)
            .filter(|e| e.kv.key.starts_with(prefix))
            .cloned()
            .collect())
    }

    /// Drops history before `revision`.
    pub fn compact(&mut self, revision: u64) -> Result<(), String> {
        if revision <= self.compact_revision {
            return Err(ERR_COMPACTED.to_string());
        }
        if revision > self.revision {
            return Err("mvcc: required revision is a future revision".to_string());
        }
        self.compact_revision = revision;
        while self.history.front().is_some_and(|e| e.revision < revision) {
            self.history.pop_front();
        }
        Ok(())
    }

    /// Writes an object at boot (before the world starts), bypassing the actor.
    pub fn bootstrap_put(&mut self, key: &str, value: Object) {
        let _ = self.txn(key, Expect::Any, TxnOp::Put(Arc::new(value)));
    }
}

/// A registered watch.
#[derive(Debug)]
struct Watcher {
    prefix: String,
}

/// The etcd member actor: serves the store to kube-apiserver and etcdctl.
#[derive(Debug, Default)]
pub struct Etcd {
    /// The data (kept across stop/start: it is on disk).
    pub store: Store,
    watchers: BTreeMap<(Actor, u64), Watcher>,
}

impl Etcd {
    /// Forgets every watch (the process stopped; connections are gone).
    pub fn drop_connections(&mut self) {
        self.watchers.clear();
    }

    /// Forgets the watches of one client.
    pub fn client_gone(&mut self, client: Actor) {
        self.watchers.retain(|(a, _), _| *a != client);
    }

    /// Handles a request.
    pub fn handle(&mut self, ctx: &mut Ctx, from: Actor, req: EtcdRequest) {
        let result = match req.op {
            EtcdOp::Range { key, prefix, limit } => {
                let kvs: Vec<KeyValue> = if prefix {
                    self.store.range_prefix(&key).cloned().collect()
                } else {
                    self.store.get(&key).cloned().into_iter().collect()
                };
                let count = kvs.len();
                let kvs = if limit > 0 {
                    kvs.into_iter().take(limit).collect()
                } else {
                    kvs
                };
                Ok(EtcdResult::Range {
                    kvs,
                    count,
                    revision: self.store.revision,
                })
            }
            EtcdOp::Txn { key, expect, op } => {
                let (res, ev) = self.store.txn(&key, expect, op);
                if let Some(ev) = ev {
                    self.notify(ctx, &ev);
                }
                Ok(res)
            }
            EtcdOp::Watch {
                prefix,
                start_revision,
            } => {
                let backlog = if start_revision == 0 {
                    Ok(Vec::new())
                } else {
                    self.store.events_since(&prefix, start_revision)
                };
                match backlog {
                    Err(e) => {
                        ctx.send(
                            from,
                            Payload::EtcdWatch(EtcdWatchBatch {
                                watch_id: req.id,
                                events: Err(e),
                            }),
                        );
                        return;
                    }
                    Ok(events) => {
                        self.watchers.insert((from, req.id), Watcher { prefix });
                        ctx.send(
                            from,
                            Payload::EtcdResp(EtcdResponse {
                                id: req.id,
                                result: Ok(EtcdResult::WatchCreated),
                            }),
                        );
                        if !events.is_empty() {
                            ctx.send(
                                from,
                                Payload::EtcdWatch(EtcdWatchBatch {
                                    watch_id: req.id,
                                    events: Ok(events),
                                }),
                            );
                        }
                        return;
                    }
                }
            }
            EtcdOp::CancelWatch { watch_id } => {
                self.watchers.remove(&(from, watch_id));
                return;
            }
            EtcdOp::Compact { revision } => {
                self.store.compact(revision).map(|_| EtcdResult::Compacted)
            }
            EtcdOp::Status => Ok(EtcdResult::Status {
                revision: self.store.revision,
                compact_revision: self.store.compact_revision,
                db_size: self.approx_db_size(),
                keys: self.store.len(),
            }),
        };
        ctx.send(from, Payload::EtcdResp(EtcdResponse { id: req.id, result }));
    }

    fn notify(&mut self, ctx: &mut Ctx, ev: &EtcdEvent) {
        for ((actor, id), w) in &self.watchers {
            if ev.kv.key.starts_with(&w.prefix) {
                ctx.send(
                    *actor,
                    Payload::EtcdWatch(EtcdWatchBatch {
                        watch_id: *id,
                        events: Ok(vec![ev.clone()]),
                    }),
                );
            }
        }
    }

    /// A rough database size: keys plus a fixed per-revision cost, like bbolt's growth.
    fn approx_db_size(&self) -> u64 {
        let base = 20 * 1024u64;
        base + self.store.revision() * 1024
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::ConfigMap;

    fn obj(name: &str) -> Arc<Object> {
        let mut cm = ConfigMap::default();
        cm.metadata.name = Some(name.to_string());
        Arc::new(Object::ConfigMap(cm))
    }

    #[test]
    fn revisions_and_versions_advance_per_write() {
        let mut s = Store::default();
        let (r, _) = s.txn(
            "/registry/configmaps/default/a",
            Expect::Absent,
            TxnOp::Put(obj("a")),
        );
        assert!(matches!(
            r,
            EtcdResult::Txn {
                succeeded: true,
                revision: 1,
                ..
            }
        ));
        let (r, _) = s.txn(
            "/registry/configmaps/default/a",
            Expect::Absent,
            TxnOp::Put(obj("a")),
        );
        assert!(
            matches!(
                r,
                EtcdResult::Txn {
                    succeeded: false,
                    ..
                }
            ),
            "create of an existing key fails"
        );
        s.txn(
            "/registry/configmaps/default/b",
            Expect::Absent,
            TxnOp::Put(obj("b")),
        );
        let (r, _) = s.txn(
            "/registry/configmaps/default/a",
            Expect::ModRevision(1),
            TxnOp::Put(obj("a")),
        );
        assert!(matches!(
            r,
            EtcdResult::Txn {
                succeeded: true,
                revision: 3,
                ..
            }
        ));
        let a = s.get("/registry/configmaps/default/a").unwrap();
        assert_eq!((a.create_revision, a.mod_revision, a.version), (1, 3, 2));
        let (r, _) = s.txn(
            "/registry/configmaps/default/a",
            Expect::ModRevision(1),
            TxnOp::Delete,
        );
        assert!(
            matches!(
                r,
                EtcdResult::Txn {
                    succeeded: false,
                    ..
                }
            ),
            "stale compare fails"
        );
    }

    #[test]
    fn prefix_range_is_ordered_and_bounded() {
        let mut s = Store::default();
        for k in [
            "/registry/pods/b/x",
            "/registry/pods/a/y",
            "/registry/podsecurity/z",
            "/registry/pods/a/x",
        ] {
            s.bootstrap_put(k, (*obj("o")).clone());
        }
        let keys: Vec<&str> = s
            .range_prefix("/registry/pods/")
            .map(|kv| kv.key.as_str())
            .collect();
        assert_eq!(
            keys,
            [
                "/registry/pods/a/x",
                "/registry/pods/a/y",
                "/registry/pods/b/x"
            ]
        );
    }

    #[test]
    fn watch_history_and_compaction() {
        let mut s = Store::default();
        for i in 0..5 {
            s.bootstrap_put(
                &format!("/registry/configmaps/default/{i}"),
                (*obj("o")).clone(),
            );
        }
        assert_eq!(s.events_since("/registry/", 3).unwrap().len(), 3);
        s.compact(4).unwrap();
        assert_eq!(
            s.events_since("/registry/", 3).unwrap_err().0,
            ERR_COMPACTED
        );
        assert_eq!(s.events_since("/registry/", 5).unwrap().len(), 1);
        assert!(s.compact(2).is_err());
    }
}
