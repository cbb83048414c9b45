//! The etcd member actor: serves ranges, transactions, watches, compaction and status to
//! kube-apiserver and etcdctl.

use std::collections::BTreeMap;

use super::{
    EtcdEvent, EtcdOp, EtcdRequest, EtcdResponse, EtcdResult, EtcdWatchBatch, KeyValue, Store,
};
use crate::message::{Actor, Ctx, Payload};

/// bbolt's page size: the database file grows in whole pages.
const PAGE: u64 = 4096;
/// What an empty member's database file weighs (meta pages, buckets, cluster info).
const EMPTY_DB: u64 = 20 * 1024;

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
    /// The largest the database file has been: compaction frees pages inside the file
    /// but only a defrag would shrink it.
    db_high_water: u64,
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

    /// Number of open watches.
    pub fn watch_count(&self) -> usize {
        self.watchers.len()
    }

    /// Handles a request.
    pub fn handle(&mut self, ctx: &mut Ctx, from: Actor, req: EtcdRequest) {
        let result = match req.op {
            EtcdOp::Range {
                key,
                prefix,
                limit,
                revision,
            } => self.range(&key, prefix, limit, revision),
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
                let batch = match backlog {
                    // The watch is created, then canceled at once with the compaction
                    // revision, as etcd's watch stream answers.
                    Err(e) => {
                        ctx.send(
                            from,
                            Payload::EtcdResp(EtcdResponse {
                                id: req.id,
                                result: Ok(EtcdResult::WatchCreated),
                            }),
                        );
                        EtcdWatchBatch {
                            watch_id: req.id,
                            events: Err(e),
                        }
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
                        if events.is_empty() {
                            return;
                        }
                        EtcdWatchBatch {
                            watch_id: req.id,
                            events: Ok(events),
                        }
                    }
                };
                ctx.send(from, Payload::EtcdWatch(batch));
                return;
            }
            EtcdOp::CancelWatch { watch_id } => {
                self.watchers.remove(&(from, watch_id));
                return;
            }
            EtcdOp::Compact { revision } => {
                self.db_size();
                self.store
                    .compact(revision)
                    .map(|_| EtcdResult::Compacted)
                    .map_err(|e| format!("etcdserver: {e}"))
            }
            EtcdOp::Status => {
                let (db_size, in_use) = self.db_size();
                Ok(EtcdResult::Status {
                    revision: self.store.revision(),
                    compact_revision: self.store.compact_revision(),
                    db_size,
                    db_size_in_use: in_use,
                    keys: self.store.len(),
                })
            }
        };
        ctx.send(from, Payload::EtcdResp(EtcdResponse { id: req.id, result }));
    }

    fn range(
        &self,
        key: &str,
        prefix: bool,
        limit: usize,
        revision: u64,
    ) -> Result<EtcdResult, String> {
        let header = self.store.revision();
        if revision == 0 && prefix {
            // The hot path (every consistent list asks for one key to learn the revision).
            let (kvs, count) = self.store.range_limited(key, limit);
            return Ok(EtcdResult::Range {
                more: kvs.len() < count,
                kvs,
                count,
                revision: header,
            });
        }
        let all: Vec<KeyValue> = self
            .store
            .range_at(key, prefix, revision)
            .map_err(|e| format!("etcdserver: {e}"))?;
        let count = all.len();
        let kvs: Vec<KeyValue> = if limit > 0 {
            all.into_iter().take(limit).collect()
        } else {
            all
        };
        Ok(EtcdResult::Range {
            more: kvs.len() < count,
            kvs,
            count,
            revision: header,
        })
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

    /// The database file's size and the part of it in use: live keys and the history
    /// compaction has not yet freed, each value as the JSON it is stored as, in pages.
    fn db_size(&mut self) -> (u64, u64) {
        let value_bytes = |kv: &KeyValue| {
            kv.key.len() as u64
                + 48
                + serde_json::to_vec(&kv.value.to_value()).map_or(0, |v| v.len() as u64)
        };
        let live: u64 = self.store.range_prefix("").map(value_bytes).sum();
        // Old revisions cost about what the values they replaced did.
        let history = self.store.history_len() as u64 * 512;
        let in_use = (EMPTY_DB + live + history).div_ceil(PAGE) * PAGE;
        self.db_high_water = self.db_high_water.max(in_use);
        (self.db_high_water, in_use)
    }
}
