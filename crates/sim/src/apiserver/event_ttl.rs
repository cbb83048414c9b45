//! `--event-ttl`: kube-apiserver writes every Event with an etcd lease, so Events expire
//! an hour after their last write. Like the storage layer's lease manager
//! (`storage/etcd3/lease_manager.go`), it grants each lease a little longer than the TTL
//! and attaches the writes of the next minute (up to 1,000 objects) to the same lease,
//! so an Event goes between 60 and 61 minutes after it was last written.

use crate::etcd::Lease;
use crate::time::{Time, MINUTE, SECOND};

/// kube-apiserver's `--event-ttl` default.
pub const EVENT_TTL: Time = 60 * MINUTE;
/// `--lease-reuse-duration-seconds` default (capped at 5 % of the TTL).
const REUSE: Time = 60 * SECOND;
/// The most objects one lease carries.
const MAX_ATTACHED: u32 = 1000;
/// etcd's lease ids look random; these are one fixed base plus a count.
const FIRST_ID: i64 = 0x694d_8b3a_5f2c_0001;

/// The lease the next Event write is attached to.
#[derive(Debug, Default)]
pub struct LeaseManager {
    prev: Option<Lease>,
    attached: u32,
    granted: i64,
}

impl LeaseManager {
    /// The lease for a write at `now` that must live at least `ttl`.
    pub fn lease(&mut self, now: Time, ttl: Time) -> Lease {
        let reuse = REUSE.min(ttl / 20);
        self.attached += 1;
        if let Some(prev) = self.prev {
            let valid = now + ttl < prev.expires_at;
            // `>=` where upstream's clock has nanoseconds: writes in one virtual
            // millisecond share the lease just granted.
            let sufficient = now + ttl + reuse >= prev.expires_at;
            if valid && sufficient && self.attached <= MAX_ATTACHED {
                return prev;
            }
        }
        let lease = Lease {
            id: FIRST_ID + self.granted,
            expires_at: now + ttl + reuse,
            ttl: ttl + reuse,
        };
        self.granted += 1;
        self.prev = Some(lease);
        self.attached = 1;
        lease
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_within_a_minute_share_a_lease_a_minute_longer_than_the_ttl() {
        let mut m = LeaseManager::default();
        let first = m.lease(0, EVENT_TTL);
        assert_eq!(first.expires_at, EVENT_TTL + MINUTE);
        assert_eq!(m.lease(30 * SECOND, EVENT_TTL), first);
        let next = m.lease(61 * SECOND, EVENT_TTL);
        assert_ne!(next.id, first.id);
        assert_eq!(next.expires_at, 61 * SECOND + EVENT_TTL + MINUTE);
    }

    #[test]
    fn a_lease_carries_at_most_a_thousand_objects() {
        let mut m = LeaseManager::default();
        let first = m.lease(0, EVENT_TTL);
        for _ in 1..MAX_ATTACHED {
            assert_eq!(m.lease(0, EVENT_TTL), first);
        }
        assert_ne!(m.lease(0, EVENT_TTL).id, first.id);
    }
}
