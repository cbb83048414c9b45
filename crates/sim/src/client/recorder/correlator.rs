//! client-go's EventCorrelator (`tools/record/events_cache.go`), in its order:
//! 1. the aggregator: once an object has had similar events (same source, object, type
//!    and reason) with 10 different messages within 10 minutes, the next new message is
//!    recorded as one `(combined from similar events): …` Event that counts up;
//! 2. the logger: an event identical to one seen before raises that Event's count
//!    instead of creating another (`kubectl describe` shows `(x3 over 2m)`);
//! 3. the spam filter: a source may send 25 events about one object, then one every
//!    5 minutes; the rest are dropped (their counts still add up in the logger).
//!
//! Each cache keeps at most 4,096 entries, least recently used first out.

use std::collections::BTreeSet;

use k8s_openapi::api::core::v1::Event;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time as K8sTime};

use super::lru::Lru;
use crate::rng::fnv1a;
use crate::time::{k8s_time, Time, SECOND};

/// `maxLruCacheEntries`.
const CACHE_ENTRIES: usize = 4096;
/// `defaultAggregateMaxEvents`: different messages before they are combined.
const AGGREGATE_MAX_EVENTS: usize = 10;
/// `defaultAggregateIntervalInSeconds`: a quieter gap starts the count again.
const AGGREGATE_INTERVAL: Time = 600 * SECOND;
/// `defaultSpamBurst`.
const SPAM_BURST: f64 = 25.0;
/// `defaultSpamQPS`: one event per 300 s, in events per millisecond.
const SPAM_PER_MS: f64 = 1.0 / 300_000.0;
/// `EventAggregatorByReasonMessageFunc`'s prefix.
const COMBINED: &str = "(combined from similar events): ";

/// What to do with an event after correlation.
#[derive(Debug)]
pub enum Correlated {
    /// Create this new Event.
    Create(Event),
    /// Patch the existing Event of this name: its count, lastTimestamp and message (the
    /// whole Event is kept, to create it again if it has gone).
    Patch(Event),
    /// Over the source's budget for the object: send nothing.
    Skip,
}

#[derive(Debug, Default)]
struct Similar {
    messages: BTreeSet<u64>,
    last: Option<Time>,
}

#[derive(Debug)]
struct Observation {
    count: i32,
    first: Option<K8sTime>,
    name: String,
}

#[derive(Debug)]
struct Bucket {
    tokens: f64,
    at: Time,
}

/// One recorder's correlator.
#[derive(Debug)]
pub struct Correlator {
    similar: Lru<Similar>,
    observed: Lru<Observation>,
    spam: Lru<Bucket>,
}

impl Default for Correlator {
    fn default() -> Self {
        Correlator {
            similar: Lru::new(CACHE_ENTRIES),
            observed: Lru::new(CACHE_ENTRIES),
            spam: Lru::new(CACHE_ENTRIES),
        }
    }
}

impl Correlator {
    /// Aggregates, counts and filters `event` (named `<object>.<nanos>`) at `now`;
    /// `fresh_name` names a combined event.
    pub fn correlate(
        &mut self,
        event: Event,
        now: Time,
        fresh_name: impl FnOnce() -> String,
    ) -> Correlated {
        let (event, key) = self.aggregate(event, now, fresh_name);
        let (event, seen) = self.observe(event, key);
        if !self.accept(&event, now) {
            return Correlated::Skip;
        }
        if seen {
            Correlated::Patch(event)
        } else {
            Correlated::Create(event)
        }
    }

    /// `EventAggregate`: the event, or a combined one, and the key the logger counts it by.
    fn aggregate(
        &mut self,
        event: Event,
        now: Time,
        fresh_name: impl FnOnce() -> String,
    ) -> (Event, u64) {
        let group = aggregate_key(&event);
        let message = fnv1a(event.message.as_deref().unwrap_or("").as_bytes());
        let record = self.similar.entry(group, Similar::default);
        if record
            .last
            .is_none_or(|t| now.saturating_sub(t) > AGGREGATE_INTERVAL)
        {
            *record = Similar::default();
        }
        record.messages.insert(message);
        record.last = Some(now);
        if record.messages.len() < AGGREGATE_MAX_EVENTS {
            let key = event_key(&event);
            return (event, key);
        }
        // Keep the set below the bound (client-go pops an arbitrary one; this pops the
        // smallest hash, so runs stay deterministic).
        record.messages.pop_first();
        let combined = Event {
            metadata: ObjectMeta {
                name: Some(fresh_name()),
                namespace: event.metadata.namespace.clone(),
                ..ObjectMeta::default()
            },
            count: Some(1),
            first_timestamp: Some(k8s_time(now)),
            last_timestamp: Some(k8s_time(now)),
            message: Some(format!(
                "{COMBINED}{}",
                event.message.as_deref().unwrap_or("")
            )),
            involved_object: event.involved_object,
            type_: event.type_,
            reason: event.reason,
            source: event.source,
            ..Event::default()
        };
        (combined, group)
    }

    /// `eventObserve`: a repeat takes the first one's name, first timestamp and count + 1.
    fn observe(&mut self, mut event: Event, key: u64) -> (Event, bool) {
        let name = event.metadata.name.clone().unwrap_or_default();
        let first = event.first_timestamp.clone();
        let seen = self.observed.entry(key, || Observation {
            count: 0,
            first,
            name,
        });
        let repeat = seen.count > 0;
        if repeat {
            event.metadata.name = Some(seen.name.clone());
            event.first_timestamp = seen.first.clone();
            event.count = Some(seen.count + 1);
        }
        seen.count = event.count.unwrap_or(1);
        (event, repeat)
    }

    /// The spam filter's token bucket for the event's source and object.
    fn accept(&mut self, event: &Event, now: Time) -> bool {
        let bucket = self.spam.entry(spam_key(event), || Bucket {
            tokens: SPAM_BURST,
            at: now,
        });
        let refill = now.saturating_sub(bucket.at) as f64 * SPAM_PER_MS;
        bucket.tokens = (bucket.tokens + refill).min(SPAM_BURST);
        bucket.at = now;
        if bucket.tokens >= 1.0 {
            bucket.tokens -= 1.0;
            true
        } else {
            false
        }
    }
}

/// The fields that name an event's source and object: client-go's spam key, which its
/// other keys extend (the order inside a hash does not matter).
fn source_and_object(e: &Event) -> Vec<&str> {
    let s = e.source.as_ref();
    let o = &e.involved_object;
    vec![
        s.and_then(|s| s.component.as_deref()).unwrap_or(""),
        s.and_then(|s| s.host.as_deref()).unwrap_or(""),
        o.kind.as_deref().unwrap_or(""),
        o.namespace.as_deref().unwrap_or(""),
        o.name.as_deref().unwrap_or(""),
        o.uid.as_deref().unwrap_or(""),
        o.api_version.as_deref().unwrap_or(""),
    ]
}

fn hash(tag: &str, parts: &[&str]) -> u64 {
    fnv1a(format!("{tag}\0{}", parts.join("\0")).as_bytes())
}

/// `getEventKey`: source, object (with field path), type, reason and message.
fn event_key(e: &Event) -> u64 {
    let mut parts = source_and_object(e);
    parts.extend([
        e.involved_object.field_path.as_deref().unwrap_or(""),
        e.type_.as_deref().unwrap_or(""),
        e.reason.as_deref().unwrap_or(""),
        e.message.as_deref().unwrap_or(""),
    ]);
    hash("event", &parts)
}

/// `EventAggregatorByReasonFunc`'s group: source, object, type, reason and reporter.
fn aggregate_key(e: &Event) -> u64 {
    let mut parts = source_and_object(e);
    parts.extend([
        e.type_.as_deref().unwrap_or(""),
        e.reason.as_deref().unwrap_or(""),
        e.reporting_component.as_deref().unwrap_or(""),
        e.reporting_instance.as_deref().unwrap_or(""),
    ]);
    hash("aggregate", &parts)
}

/// `getSpamKey`: source and object only.
fn spam_key(e: &Event) -> u64 {
    hash("spam", &source_and_object(e))
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::{EventSource, ObjectReference};

    use super::*;
    use crate::time::MINUTE;

    fn event(reason: &str, message: &str, now: Time) -> Event {
        Event {
            metadata: ObjectMeta {
                name: Some(format!("web-1.{now:x}")),
                namespace: Some("default".into()),
                ..ObjectMeta::default()
            },
            involved_object: ObjectReference {
                kind: Some("Pod".into()),
                namespace: Some("default".into()),
                name: Some("web-1".into()),
                uid: Some("u1".into()),
                ..ObjectReference::default()
            },
            reason: Some(reason.into()),
            message: Some(message.into()),
            type_: Some("Warning".into()),
            source: Some(EventSource {
                component: Some("kubelet".into()),
                host: Some("node-1".into()),
            }),
            first_timestamp: Some(k8s_time(now)),
            count: Some(1),
            ..Event::default()
        }
    }

    fn run(c: &mut Correlator, reason: &str, message: &str, now: Time) -> Correlated {
        c.correlate(event(reason, message, now), now, || {
            format!("web-1.c{now:x}")
        })
    }

    #[test]
    fn an_identical_event_counts_up_the_first_one() {
        let mut c = Correlator::default();
        let Correlated::Create(first) = run(&mut c, "BackOff", "Back-off", 0) else {
            panic!("the first is created")
        };
        let Correlated::Patch(again) = run(&mut c, "BackOff", "Back-off", 2 * MINUTE) else {
            panic!("a repeat is a patch")
        };
        assert_eq!(again.metadata.name, first.metadata.name);
        assert_eq!(again.count, Some(2));
        assert_eq!(again.first_timestamp, first.first_timestamp);
        assert!(matches!(
            run(&mut c, "BackOff", "another message", 3 * MINUTE),
            Correlated::Create(_)
        ));
    }

    #[test]
    fn ten_messages_of_one_reason_in_ten_minutes_are_combined() {
        let mut c = Correlator::default();
        for i in 0..9 {
            let r = run(&mut c, "FailedMount", &format!("volume {i}"), i * SECOND);
            assert!(matches!(r, Correlated::Create(_)), "message {i}");
        }
        let Correlated::Create(combined) = run(&mut c, "FailedMount", "volume 9", 9 * SECOND)
        else {
            panic!("the tenth message is combined into a new event")
        };
        assert_eq!(
            combined.message.as_deref(),
            Some("(combined from similar events): volume 9")
        );
        assert_eq!(combined.metadata.name.as_deref(), Some("web-1.c2328"));
        let Correlated::Patch(more) = run(&mut c, "FailedMount", "volume 10", 10 * SECOND) else {
            panic!("the next new message counts up the combined event")
        };
        assert_eq!(more.metadata.name, combined.metadata.name);
        assert_eq!(more.count, Some(2));
        assert_eq!(
            more.message.as_deref(),
            Some("(combined from similar events): volume 10")
        );
        // Another reason is another group.
        assert!(matches!(
            run(&mut c, "Unhealthy", "volume 11", 11 * SECOND),
            Correlated::Create(e) if e.message.as_deref() == Some("volume 11")
        ));
    }

    #[test]
    fn a_quiet_ten_minutes_starts_the_count_again() {
        let mut c = Correlator::default();
        for i in 0..9 {
            run(&mut c, "FailedMount", &format!("volume {i}"), i * SECOND);
        }
        let later = 9 * SECOND + AGGREGATE_INTERVAL + 1;
        let Correlated::Create(e) = run(&mut c, "FailedMount", "volume 9", later) else {
            panic!("created")
        };
        assert_eq!(e.message.as_deref(), Some("volume 9"), "not combined");
    }

    #[test]
    fn a_source_sends_25_events_about_an_object_then_one_per_five_minutes() {
        let mut c = Correlator::default();
        for i in 0..25 {
            let r = run(&mut c, "BackOff", "Back-off", i * SECOND);
            assert!(
                !matches!(r, Correlated::Skip),
                "event {i} is within the burst"
            );
        }
        assert!(matches!(
            run(&mut c, "BackOff", "Back-off", 26 * SECOND),
            Correlated::Skip
        ));
        let Correlated::Patch(e) = run(&mut c, "BackOff", "Back-off", 26 * SECOND + 5 * MINUTE)
        else {
            panic!("a token came back after five minutes")
        };
        assert_eq!(e.count, Some(27), "the dropped one still counts");
    }
}
