//! Leases: a key written with a lease is deleted when the lease expires. kube-apiserver
//! writes every Event with one (`--event-ttl`, 1 h), so Events disappear an hour after
//! their last write.

use std::collections::{BTreeMap, BTreeSet};

use crate::time::Time;

/// A lease a key is attached to: its id and the virtual time it expires.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Lease {
    /// The lease id (etcd prints it in hex).
    pub id: i64,
    /// When the lease, and every key attached to it, expires.
    pub expires_at: Time,
    /// The TTL it was granted with.
    pub ttl: Time,
}

/// The keys attached to leases, by key and by expiry.
#[derive(Debug, Default)]
pub(super) struct Leases {
    of_key: BTreeMap<String, Lease>,
    by_expiry: BTreeSet<(Time, String)>,
}

impl Leases {
    /// Attaches `key` to `lease`, or detaches it (`None`: a put without a lease).
    pub fn attach(&mut self, key: &str, lease: Option<Lease>) {
        self.detach(key);
        if let Some(l) = lease {
            self.of_key.insert(key.to_string(), l);
            self.by_expiry.insert((l.expires_at, key.to_string()));
        }
    }

    /// Detaches `key` (it was deleted, or rewritten without a lease).
    pub fn detach(&mut self, key: &str) {
        if let Some(old) = self.of_key.remove(key) {
            self.by_expiry.remove(&(old.expires_at, key.to_string()));
        }
    }

    /// The keys whose lease has expired at `now`, soonest first.
    pub fn expired(&self, now: Time) -> Vec<String> {
        self.by_expiry
            .iter()
            .take_while(|(at, _)| *at <= now)
            .map(|(_, k)| k.clone())
            .collect()
    }

    /// When the next lease expires.
    pub fn next_expiry(&self) -> Option<Time> {
        self.by_expiry.first().map(|(at, _)| *at)
    }

    /// Every lease with keys attached, by id, with its keys in key order.
    pub fn all(&self) -> std::collections::BTreeMap<i64, (Lease, Vec<String>)> {
        let mut out: std::collections::BTreeMap<i64, (Lease, Vec<String>)> = Default::default();
        for (k, l) in &self.of_key {
            out.entry(l.id)
                .or_insert_with(|| (*l, Vec::new()))
                .1
                .push(k.clone());
        }
        out
    }

    /// The lease of `key`, if it has one.
    pub fn of(&self, key: &str) -> Option<Lease> {
        self.of_key.get(key).copied()
    }
}
