//! The etcd member actor: serves ranges, transactions, watches, compaction and status to
//! kube-apiserver and etcdctl.

use std::collections::BTreeMap;

use super::{
    EtcdEvent, EtcdOp, EtcdRequest, EtcdResponse, EtcdResult, EtcdWatchBatch, KeyValue, Store,
};
use crate::message::{Actor, Ctx, Payload};
use crate::time::{Time, SECOND};

/// bbolt's page size: the database file grows in whole pages.
const PAGE: u64 = 4096;
/// What an empty member's database file weighs (meta pages, buckets, cluster info).
const EMPTY_DB: u64 = 20 * 1024;

/// The token of the timer that expires leases.
const TIMER_LEASES: u64 = 1;

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
    /// Each live key's encoded size at its revision, so a size estimate encodes only
    /// what changed since the last one.
    sizes: BTreeMap<String, (u64, u64)>,
    /// When the lease timer is due, if one is set.
    lease_timer: Option<Time>,
}

impl Etcd {
    /// Forgets every watch (the process stopped; connections are gone).
    pub fn drop_connections(&mut self) {
        self.watchers.clear();
        // Its timers die with the process; the next request after a restart sets one.
        self.lease_timer = None;
    }

    /// A timer fired: expires the leases that are due.
    pub fn on_timer(&mut self, ctx: &mut Ctx, token: u64) {
        if token == TIMER_LEASES {
            self.lease_timer = None;
            self.expire_leases(ctx);
        }
    }

    /// Deletes the keys whose lease has expired, tells the watchers, and sets the timer
    /// for the next expiry.
    fn expire_leases(&mut self, ctx: &mut Ctx) {
        for ev in self.store.expire(ctx.now) {
            self.notify(ctx, &ev);
        }
        if let Some(at) = self.store.next_expiry() {
            if self.lease_timer.is_none_or(|t| at < t) {
                self.lease_timer = Some(at);
                ctx.timer(at.saturating_sub(ctx.now), TIMER_LEASES);
            }
        }
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
        self.expire_leases(ctx);
        let result = match req.op {
            EtcdOp::Range {
                key,
                prefix,
                limit,
                revision,
            } => self.range(&key, prefix, limit, revision),
            EtcdOp::Txn { key, expect, op } => {
                let leased = matches!(op, super::TxnOp::PutLeased(..));
                let (res, ev) = self.store.txn(&key, expect, op);
                if let Some(ev) = ev {
                    self.notify(ctx, &ev);
                }
                if leased {
                    self.expire_leases(ctx);
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
            EtcdOp::LeaseLeases => Ok(EtcdResult::Leases(
                self.store.leases().into_keys().collect(),
            )),
            EtcdOp::LeaseTimeToLive { id } => Ok(match self.store.leases().remove(&id) {
                Some((lease, keys)) => EtcdResult::TimeToLive {
                    granted_ttl: (lease.ttl / SECOND) as i64,
                    ttl: (lease.expires_at.saturating_sub(ctx.now) / SECOND) as i64,
                    keys,
                },
                None => EtcdResult::TimeToLive {
                    granted_ttl: 0,
                    ttl: -1,
                    keys: Vec::new(),
                },
            }),
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
        let mut sizes = BTreeMap::new();
        for kv in self.store.range_prefix("") {
            let bytes = match self.sizes.remove(&kv.key) {
                Some((rev, bytes)) if rev == kv.mod_revision => bytes,
                _ => value_bytes(kv),
            };
            sizes.insert(kv.key.clone(), (kv.mod_revision, bytes));
        }
        // Keys deleted since the last estimate are left behind in the old map.
        self.sizes = sizes;
        let live: u64 = self.sizes.values().map(|(_, b)| b).sum();
        // Old revisions cost about what the values they replaced did.
        let history = self.store.history_len() as u64 * 512;
        let in_use = (EMPTY_DB + live + history).div_ceil(PAGE) * PAGE;
        self.db_high_water = self.db_high_water.max(in_use);
        (self.db_high_water, in_use)
    }
}

/// What one key costs in the database file: the key, bbolt's per-key overhead and the
/// value as the JSON it is stored as.
fn value_bytes(kv: &KeyValue) -> u64 {
    kv.key.len() as u64
        + 48
        + serde_json::to_vec(&kv.value.to_value()).map_or(0, |v| v.len() as u64)
}
