//! Messages made visible: every message the engine sends between two actors becomes a dot
//! that travels its arrow for a short while of animation time, however short its virtual
//! latency was (a request takes 1 ms of virtual time: far too quick to see).

use std::collections::{BTreeSet, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};

use kubeloop_sim::time::Time;
use kubeloop_sim::view::FlightView;
use kubeloop_sim::Actor;

/// At most this many dots at once; the oldest go first.
pub const MAX_ACTIVE: usize = 48;
/// Messages sent together set off one after another, this fraction of a trip apart, so
/// a burst reads as a stream rather than a clump.
const SPACING: f64 = 0.08;
/// A message that would wait longer than this (ms) for its turn is not drawn.
const MAX_BACKLOG: f64 = 1500.0;
/// How many of the latest messages the log keeps.
pub const LOG: usize = 5;

/// Dot ids are unique across sessions (views key on them).
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// What a message is, for its color.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FlightKind {
    /// A request to the apiserver (`POST /apis/apps/v1/…`).
    Request,
    /// A successful response.
    Response,
    /// A watch event pushed to a client (`ADDED Pod nginx-…`).
    Watch,
    /// kube-apiserver ↔ etcd.
    Etcd,
    /// An error response, a broken connection.
    Error,
}

impl FlightKind {
    /// The CSS class suffix.
    pub fn as_str(self) -> &'static str {
        match self {
            FlightKind::Request => "request",
            FlightKind::Response => "response",
            FlightKind::Watch => "watch",
            FlightKind::Etcd => "etcd",
            FlightKind::Error => "error",
        }
    }
}

/// Classifies a message by its endpoints and its label.
pub fn kind_of(from: Actor, to: Actor, label: &str) -> FlightKind {
    let first = label.split_whitespace().next().unwrap_or("");
    if label.contains("connection lost")
        || label.starts_with("watch error")
        || label.contains("unreachable")
    {
        return FlightKind::Error;
    }
    if let Ok(code) = first.parse::<u16>() {
        return if code >= 400 {
            FlightKind::Error
        } else {
            FlightKind::Response
        };
    }
    if from == Actor::Etcd || to == Actor::Etcd {
        return FlightKind::Etcd;
    }
    match first {
        "ADDED" | "MODIFIED" | "DELETED" | "BOOKMARK" => FlightKind::Watch,
        _ => FlightKind::Request,
    }
}

/// One dot on its way.
#[derive(Clone, Debug, PartialEq)]
pub struct Anim {
    /// Unique: the key for rendering.
    pub id: u64,
    /// Sender.
    pub from: Actor,
    /// Receiver.
    pub to: Actor,
    /// The message (`POST /api/v1/namespaces/default/pods`).
    pub label: String,
    /// For its color.
    pub kind: FlightKind,
    /// Animation clock when it set off (ms).
    pub start: f64,
    /// How long it travels (ms of animation time).
    pub duration: f64,
    /// When it was sent (virtual ms).
    pub sent: Time,
}

/// Recently sent messages and their dots.
#[derive(Debug)]
pub struct Traffic {
    /// Messages already turned into dots: (arrival, sent, from, to, label).
    seen: BTreeSet<(Time, Time, Actor, Actor, String)>,
    active: VecDeque<Anim>,
    total: u64,
    clock: f64,
    last_start: f64,
    log: VecDeque<Anim>,
}

impl Default for Traffic {
    fn default() -> Traffic {
        Traffic {
            seen: BTreeSet::new(),
            active: VecDeque::new(),
            total: 0,
            clock: 0.0,
            last_start: f64::NEG_INFINITY,
            log: VecDeque::new(),
        }
    }
}

impl Traffic {
    /// No messages yet.
    pub fn new() -> Traffic {
        Traffic::default()
    }

    /// Turns every message in `flights` not seen before into a dot; forgets messages that
    /// arrived before `now`.
    pub fn observe(&mut self, flights: Vec<FlightView>, now: Time, duration: f64) {
        while self.seen.first().is_some_and(|k| k.0 < now) {
            self.seen.pop_first();
        }
        for f in flights.into_iter().filter(|f| f.arrives >= now) {
            let key = (f.arrives, f.sent, f.from, f.to, f.label);
            if self.seen.contains(&key) {
                continue;
            }
            let (_, sent, from, to, label) = key.clone();
            self.seen.insert(key);
            self.total += 1;
            let start = self.clock.max(self.last_start + duration * SPACING);
            let anim = Anim {
                id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
                from,
                to,
                kind: kind_of(from, to, &label),
                label,
                start,
                duration,
                sent,
            };
            if self.log.len() >= LOG {
                self.log.pop_front();
            }
            self.log.push_back(anim.clone());
            if start - self.clock > MAX_BACKLOG {
                continue;
            }
            self.last_start = start;
            if self.active.len() >= MAX_ACTIVE {
                self.active.pop_front();
            }
            self.active.push_back(anim);
        }
    }

    /// Advances the animation clock; drops dots that arrived.
    pub fn tick(&mut self, dt: f64) {
        self.clock += dt.max(0.0);
        let clock = self.clock;
        self.active.retain(|a| clock < a.start + a.duration);
    }

    /// The dots that set off, with their progress along their arrows (0 … 1).
    pub fn dots(&self) -> impl Iterator<Item = (&Anim, f64)> {
        self.active
            .iter()
            .filter(|a| a.start <= self.clock)
            .map(|a| {
                (
                    a,
                    ((self.clock - a.start) / a.duration.max(1.0)).clamp(0.0, 1.0),
                )
            })
    }

    /// The latest messages, newest first.
    pub fn log(&self) -> impl Iterator<Item = &Anim> {
        self.log.iter().rev()
    }

    /// How many messages were turned into dots so far.
    pub fn total(&self) -> u64 {
        self.total
    }

    /// Number of dots.
    pub fn len(&self) -> usize {
        self.active.len()
    }

    /// Whether no dot is travelling.
    pub fn is_empty(&self) -> bool {
        self.active.is_empty()
    }

    /// Drops every dot and memory of messages (a new world).
    pub fn clear(&mut self) {
        self.seen.clear();
        self.active.clear();
        self.log.clear();
    }
}

/// How long a dot travels at `speed`: quicker when time runs faster.
pub fn duration_at(speed: f64) -> f64 {
    (900.0 / speed.max(0.25).sqrt()).clamp(250.0, 1400.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasm_bindgen_test::wasm_bindgen_test;

    fn flight(from: Actor, to: Actor, label: &str, sent: Time, arrives: Time) -> FlightView {
        FlightView {
            from,
            to,
            label: label.into(),
            progress: 0.0,
            sent,
            arrives,
        }
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn should_classify_messages() {
        assert_eq!(
            kind_of(
                Actor::Terminal(1),
                Actor::ApiServer,
                "POST /apis/apps/v1/namespaces/default/deployments"
            ),
            FlightKind::Request
        );
        assert_eq!(
            kind_of(Actor::ApiServer, Actor::Terminal(1), "201 Created"),
            FlightKind::Response
        );
        assert_eq!(
            kind_of(Actor::ApiServer, Actor::Terminal(1), "404 NotFound"),
            FlightKind::Error
        );
        assert_eq!(
            kind_of(Actor::ApiServer, Actor::Scheduler, "ADDED Pod nginx-1"),
            FlightKind::Watch
        );
        assert_eq!(
            kind_of(
                Actor::ApiServer,
                Actor::Etcd,
                "txn /registry/pods/default/x"
            ),
            FlightKind::Etcd
        );
        assert_eq!(
            kind_of(Actor::ApiServer, Actor::Kubelet(0), "connection lost"),
            FlightKind::Error
        );
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn should_animate_each_message_once_and_drop_it_on_arrival() {
        let mut t = Traffic::new();
        let a = flight(Actor::Terminal(1), Actor::ApiServer, "POST /x", 10, 12);
        t.observe(vec![a.clone()], 10, 500.0);
        t.observe(vec![a.clone()], 11, 500.0);
        assert_eq!(t.len(), 1, "seen once");
        t.tick(250.0);
        let (_, p) = t.dots().next().expect("a dot");
        assert!((p - 0.5).abs() < 1e-9);
        t.tick(300.0);
        assert!(t.is_empty(), "arrived");
        t.observe(vec![a], 13, 500.0);
        assert!(
            t.is_empty(),
            "an old message is not seen again once its time passed"
        );
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn should_cap_the_dots() {
        let mut t = Traffic::new();
        let many = (0..200)
            .map(|i| flight(Actor::Kubelet(i), Actor::ApiServer, "PUT lease", 5, 6))
            .collect();
        t.observe(many, 5, 500.0);
        assert!(t.len() <= MAX_ACTIVE && t.len() > 10, "{}", t.len());
        assert_eq!(
            t.log().count(),
            LOG,
            "the log keeps the latest few, drawn or not"
        );
        assert!(
            t.log()
                .next()
                .is_some_and(|a| a.from == Actor::Kubelet(199)),
            "newest first"
        );
        assert_eq!(
            t.dots().count(),
            1,
            "a burst sets off one dot after another"
        );
        t.tick(100.0);
        assert_eq!(t.dots().count(), 3);
        assert!(duration_at(8.0) < duration_at(1.0));
    }
}
