//! Request routing: what each request in flight was for, so its response reaches the
//! code that sent it with the caller's own typed tag instead of a number range.

use std::collections::BTreeMap;

use crate::api::ReqId;

/// Requests in flight, each with the sender's tag.
#[derive(Debug)]
pub struct Pending<T> {
    inflight: BTreeMap<ReqId, T>,
}

impl<T> Default for Pending<T> {
    fn default() -> Self {
        Pending {
            inflight: BTreeMap::new(),
        }
    }
}

impl<T> Pending<T> {
    /// Remembers that request `id` was sent for `what`.
    pub fn insert(&mut self, id: ReqId, what: T) {
        self.inflight.insert(id, what);
    }

    /// The tag of a request whose response arrived (forgotten from then on).
    pub fn take(&mut self, id: ReqId) -> Option<T> {
        self.inflight.remove(&id)
    }

    /// Every request still in flight, oldest first (a broken connection fails them all).
    pub fn drain(&mut self) -> Vec<(ReqId, T)> {
        std::mem::take(&mut self.inflight).into_iter().collect()
    }

    /// Number of requests in flight.
    pub fn len(&self) -> usize {
        self.inflight.len()
    }

    /// Whether nothing is in flight.
    pub fn is_empty(&self) -> bool {
        self.inflight.is_empty()
    }
}
