//! The timeline: every message one component sent another (API requests with their
//! answer and latency, watch events, etcd's protocol, CRI calls, the kubelet API), with
//! its virtual times, the object it is about and whether it is a periodic heartbeat.
//!
//! A [`Timeline`] is fed after each event ([`Timeline::record`]): it reads the messages
//! sent since it last looked (`World::in_flight_since`), so each is seen once while it is
//! still in flight. It keeps at most its capacity ([`TIMELINE_CAPACITY`] by default):
//! older entries are dropped first and counted ([`Timeline::dropped`]), so a long run
//! stays within a fixed memory budget. Jumping to a moment never needs the entries: the
//! world is replayed from the seed and the recorded commands.

use std::collections::{BTreeMap, VecDeque};

use crate::api::{ApiResult, Verb};
use crate::message::{Actor, Payload};
use crate::node::cri::{CriOp, CriResult};
use crate::time::Time;
use crate::world::{Envelope, World};

/// How many entries a timeline keeps (about 250 bytes each: a few MB at most).
pub const TIMELINE_CAPACITY: usize = 20_000;

/// What kind of message an entry is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum EntryKind {
    /// A client's API request to kube-apiserver (answered in the same entry).
    Request,
    /// kube-apiserver → a client's watch.
    Watch,
    /// kube-apiserver → etcd (answered in the same entry).
    Etcd,
    /// etcd → kube-apiserver's watch.
    EtcdWatch,
    /// kubelet → containerd (answered in the same entry).
    Cri,
    /// An unsolicited runtime event (evented PLEG).
    CriEvent,
    /// The kubelet API (logs, exec), through the apiserver.
    Kubelet,
    /// Connections lost, clients gone.
    Connection,
}

impl EntryKind {
    /// A short name for the list and its filter.
    pub fn as_str(self) -> &'static str {
        match self {
            EntryKind::Request => "request",
            EntryKind::Watch => "watch",
            EntryKind::Etcd => "etcd",
            EntryKind::EtcdWatch => "etcd-watch",
            EntryKind::Cri => "cri",
            EntryKind::CriEvent => "cri-event",
            EntryKind::Kubelet => "kubelet-api",
            EntryKind::Connection => "connection",
        }
    }
}

/// One message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    /// The message's sequence number (unique, in the order messages were sent).
    pub seq: u64,
    /// When it was sent (virtual ms).
    pub sent: Time,
    /// When it arrived.
    pub arrives: Time,
    /// Sender.
    pub from: Actor,
    /// Receiver.
    pub to: Actor,
    /// What it is.
    pub kind: EntryKind,
    /// `POST /api/v1/namespaces/default/pods`, `ADDED Pod web-1`, `RunPodSandbox web-1`.
    pub label: String,
    /// The object it is about: `Pod default/web-1`, an etcd key, or empty.
    pub object: String,
    /// A periodic heartbeat (Leases, Node status): hidden unless asked for.
    pub heartbeat: bool,
    /// The answer, once it was sent: `201 Created`, `404 NotFound`, `ok`.
    pub answer: Option<String>,
    /// When the answer arrived back at the sender.
    pub answered: Option<Time>,
}

impl Entry {
    /// From sending the request to its answer arriving back, once it has.
    pub fn latency(&self) -> Option<Time> {
        self.answered.map(|a| a.saturating_sub(self.sent))
    }

    /// Whether `component` (`kube-scheduler`, `kubelet`, …) sent or received it.
    pub fn involves(&self, component: &str) -> bool {
        self.from.component_name() == component || self.to.component_name() == component
    }
}

/// What the list shows.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Filter {
    /// Only entries a component sent or received (`Actor::component_name`).
    pub component: Option<String>,
    /// Only entries whose object or label contains this (case-insensitive), e.g. a pod's
    /// name: "follow this pod".
    pub object: String,
    /// Whether heartbeats are shown.
    pub heartbeats: bool,
}

impl Filter {
    /// Whether `e` passes.
    pub fn matches(&self, e: &Entry) -> bool {
        self.matcher().matches(e)
    }

    /// The filter ready to test many entries (its search text lowered once).
    fn matcher(&self) -> Matcher<'_> {
        Matcher {
            heartbeats: self.heartbeats,
            component: self.component.as_deref(),
            needle: self.object.trim().to_ascii_lowercase(),
        }
    }
}

/// A [`Filter`] prepared for a pass over the timeline.
struct Matcher<'a> {
    heartbeats: bool,
    component: Option<&'a str>,
    needle: String,
}

impl Matcher<'_> {
    fn matches(&self, e: &Entry) -> bool {
        if e.heartbeat && !self.heartbeats {
            return false;
        }
        if self.component.is_some_and(|c| !e.involves(c)) {
            return false;
        }
        self.needle.is_empty()
            || contains_ignoring_case(&e.object, &self.needle)
            || contains_ignoring_case(&e.label, &self.needle)
    }
}

/// Whether `hay` contains `needle` (already lower case), ASCII case ignored, without
/// lowering a copy of `hay`.
fn contains_ignoring_case(hay: &str, needle: &str) -> bool {
    let (h, n) = (hay.as_bytes(), needle.as_bytes());
    n.is_empty()
        || h.windows(n.len())
            .any(|w| w.iter().zip(n).all(|(a, b)| a.to_ascii_lowercase() == *b))
}

/// A window of the filtered list.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Window {
    /// The entries shown, oldest first.
    pub rows: Vec<Entry>,
    /// Filtered entries in the span that were not shown (past the row limit).
    pub more: usize,
    /// Filtered entries in the whole timeline.
    pub total: usize,
}

/// The requests waiting for their answers: (sender, kind of call, id) → entry seq.
type OpenKey = (Actor, u8, u64);

/// A bounded record of what happened.
#[derive(Debug)]
pub struct Timeline {
    entries: VecDeque<Entry>,
    capacity: usize,
    dropped: u64,
    dropped_until: Time,
    seen: u64,
    open: BTreeMap<OpenKey, u64>,
    /// Sandbox and container ids → the pod they belong to, from the runtime's answers.
    ids: BTreeMap<String, String>,
}

impl Default for Timeline {
    fn default() -> Timeline {
        Timeline::with_capacity(TIMELINE_CAPACITY)
    }
}

impl Timeline {
    /// An empty timeline keeping at most `capacity` entries (at least one).
    pub fn with_capacity(capacity: usize) -> Timeline {
        Timeline {
            entries: VecDeque::new(),
            capacity: capacity.max(1),
            dropped: 0,
            dropped_until: 0,
            seen: 0,
            open: BTreeMap::new(),
            ids: BTreeMap::new(),
        }
    }

    /// Reads the messages sent since the last call. Call it after every event: a message
    /// delivered before it is looked at is not seen.
    pub fn record(&mut self, world: &World) {
        let from = self.seen;
        self.seen = world.next_seq();
        if from == self.seen {
            return;
        }
        for (seq, env) in world.in_flight_since(from) {
            if env.from != env.to {
                self.observe(seq, env);
            }
        }
    }

    /// Forgets the messages sent so far without recording them (a replay that is not
    /// shown).
    pub fn skip(&mut self, world: &World) {
        self.seen = world.next_seq();
    }

    fn observe(&mut self, seq: u64, env: &Envelope) {
        match &env.payload {
            Payload::ApiResp(r) => {
                let ok = r.result.as_ref().ok();
                let answer = env.payload.label();
                let object = ok.and_then(|res| match res {
                    ApiResult::Object(o) => {
                        Some(object_name(o.kind().info().kind, o.namespace(), o.name()))
                    }
                    _ => None,
                });
                self.answer(env.to, 0, r.id, env, answer, object);
            }
            Payload::EtcdResp(r) => {
                let answer = match &r.result {
                    Ok(_) => "ok".to_string(),
                    Err(e) => e.clone(),
                };
                self.answer(env.to, 1, r.id, env, answer, None);
            }
            Payload::CriResp(r) if r.id != 0 => {
                let answer = match &r.result {
                    Ok(_) => "ok".to_string(),
                    Err(e) => e.clone(),
                };
                let key = (env.to, 2, r.id);
                if let (Some(seq), Ok(res)) = (self.open.get(&key), &r.result) {
                    let pod = self.get(*seq).map(|e| e.object.clone()).unwrap_or_default();
                    if let CriResult::Sandbox { id, .. } | CriResult::Container(id) = res {
                        if !pod.is_empty() {
                            self.ids.insert(id.clone(), pod);
                        }
                    }
                }
                self.answer(env.to, 2, r.id, env, answer, None);
            }
            Payload::KubeletApiResp(r) => {
                self.answer(env.to, 3, r.id, env, "ok".into(), None);
            }
            _ => {
                let e = self.describe(seq, env);
                if let Some(key) = open_key(env) {
                    self.open.insert(key, seq);
                }
                self.push(e);
            }
        }
    }

    fn describe(&self, seq: u64, env: &Envelope) -> Entry {
        let (kind, object, heartbeat) = match &env.payload {
            Payload::Api(r) => {
                let info = r.kind.info();
                let heartbeat = r.kind == crate::object::Kind::Lease
                    || (r.kind == crate::object::Kind::Node
                        && matches!(r.verb, Verb::Get | Verb::Patch | Verb::Update)
                        && matches!(env.from, Actor::Kubelet(_)));
                let object = if r.name.is_empty() {
                    String::new()
                } else {
                    object_name(info.kind, &r.namespace, &r.name)
                };
                (EntryKind::Request, object, heartbeat)
            }
            Payload::Watch(w) => match &w.event {
                Ok((t, o)) => {
                    let kind = o.kind();
                    let heartbeat = kind == crate::object::Kind::Lease
                        || (kind == crate::object::Kind::Node
                            && *t == crate::api::WatchEventType::Modified);
                    let object = object_name(kind.info().kind, o.namespace(), o.name());
                    (EntryKind::Watch, object, heartbeat)
                }
                Err(_) => (EntryKind::Watch, String::new(), false),
            },
            Payload::Etcd(r) => {
                let key = etcd_key(&r.op);
                let heartbeat = is_heartbeat_key(&key);
                (EntryKind::Etcd, key, heartbeat)
            }
            Payload::EtcdWatch(b) => {
                let key = b
                    .events
                    .as_ref()
                    .ok()
                    .and_then(|evs| evs.first())
                    .map(|e| e.kv.key.clone())
                    .unwrap_or_default();
                let heartbeat = is_heartbeat_key(&key);
                (EntryKind::EtcdWatch, key, heartbeat)
            }
            Payload::Cri(c) => {
                let object = match &c.op {
                    CriOp::RunPodSandbox {
                        name, namespace, ..
                    } => object_name("Pod", namespace, name),
                    CriOp::StopPodSandbox { id }
                    | CriOp::RemovePodSandbox { id }
                    | CriOp::StartContainer { id }
                    | CriOp::StopContainer { id, .. }
                    | CriOp::RemoveContainer { id }
                    | CriOp::CreateContainer { sandbox: id, .. } => {
                        self.ids.get(id).cloned().unwrap_or_default()
                    }
                    _ => String::new(),
                };
                let periodic = matches!(c.op, CriOp::PodStatus { .. } | CriOp::ListImages);
                (EntryKind::Cri, object, periodic)
            }
            Payload::CriResp(_) => (EntryKind::CriEvent, String::new(), false),
            Payload::KubeletApi(r) => (EntryKind::Kubelet, r.node.clone(), false),
            _ => (EntryKind::Connection, String::new(), false),
        };
        Entry {
            seq,
            sent: env.sent,
            arrives: env.at,
            from: env.from,
            to: env.to,
            kind,
            label: env.payload.label(),
            object,
            heartbeat,
            answer: None,
            answered: None,
        }
    }

    fn answer(
        &mut self,
        client: Actor,
        call: u8,
        id: u64,
        env: &Envelope,
        answer: String,
        object: Option<String>,
    ) {
        let Some(seq) = self.open.remove(&(client, call, id)) else {
            return;
        };
        let Some(i) = self.index(seq) else { return };
        let e = &mut self.entries[i];
        let answer = match (&e.kind, e.label.split_whitespace().next()) {
            (EntryKind::Request, Some("POST")) if answer == "200 OK" => "201 Created".into(),
            _ => answer,
        };
        e.answer = Some(answer);
        e.answered = Some(env.at);
        if let Some(o) = object.filter(|_| e.object.is_empty()) {
            e.object = o;
        }
    }

    fn push(&mut self, e: Entry) {
        self.entries.push_back(e);
        while self.entries.len() > self.capacity {
            if let Some(old) = self.entries.pop_front() {
                self.dropped += 1;
                self.dropped_until = old.sent;
            }
        }
        // Forget the requests whose entries were dropped once the map holds twice what the
        // entries can: every key left points at a kept entry, so a pass frees at least
        // `capacity` keys and pruning costs O(1) per entry. (Pruning past `capacity` walked
        // the whole map on every push while most kept entries were requests still waiting,
        // as 5,000 nodes' watches are.)
        if self.open.len() > 2 * self.capacity {
            let first = self.entries.front().map_or(0, |e| e.seq);
            self.open.retain(|_, seq| *seq >= first);
        }
        if self.ids.len() > self.capacity {
            self.ids.clear();
        }
    }

    fn index(&self, seq: u64) -> Option<usize> {
        self.entries.binary_search_by_key(&seq, |e| e.seq).ok()
    }

    /// The entry with this sequence number, if it is kept.
    pub fn get(&self, seq: u64) -> Option<&Entry> {
        self.index(seq).map(|i| &self.entries[i])
    }

    /// Every kept entry, oldest first.
    pub fn entries(&self) -> impl DoubleEndedIterator<Item = &Entry> + ExactSizeIterator {
        self.entries.iter()
    }

    /// How many entries are kept.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether nothing is kept.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The most entries kept.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// How many older entries were dropped, and the send time of the newest of them.
    pub fn dropped(&self) -> Option<(u64, Time)> {
        (self.dropped > 0).then_some((self.dropped, self.dropped_until))
    }

    /// The first kept entry sent at or after `t`.
    fn first_at(&self, t: Time) -> usize {
        self.entries.partition_point(|e| e.sent < t)
    }

    /// The filtered entries sent in `[from, to]`, at most `max` of them: the ones nearest
    /// `around` (the moment viewed), in time order.
    pub fn window(&self, f: &Filter, from: Time, to: Time, around: Time, max: usize) -> Window {
        self.window_with_density(f, (from, to), around, max, 0).0
    }

    /// [`Timeline::window`] and [`Timeline::density`] of the same span in one pass over
    /// the timeline (the page asks for both at every redraw).
    pub fn window_with_density(
        &self,
        f: &Filter,
        (from, to): (Time, Time),
        around: Time,
        max: usize,
        bins: usize,
    ) -> (Window, Vec<usize>) {
        let m = f.matcher();
        let (a, b) = (self.first_at(from), self.first_at(to.saturating_add(1)));
        let span: Vec<&Entry> = self.entries.range(a..b).filter(|e| m.matches(e)).collect();
        let outside = self.entries.range(..a).filter(|e| m.matches(e)).count()
            + self.entries.range(b..).filter(|e| m.matches(e)).count();
        let density = bin_counts(span.iter().map(|e| e.sent), from, to, bins);
        let centre = span.partition_point(|e| e.sent < around);
        let start = centre
            .saturating_sub(max / 2)
            .min(span.len().saturating_sub(max));
        let rows: Vec<Entry> = span
            .iter()
            .skip(start)
            .take(max)
            .map(|e| (*e).clone())
            .collect();
        let window = Window {
            more: span.len() - rows.len(),
            total: span.len() + outside,
            rows,
        };
        (window, density)
    }

    /// How many entries that are not heartbeats were sent in `[t - before, t + after]`:
    /// the page slows virtual time down around such bursts.
    pub fn activity(&self, t: Time, before: Time, after: Time) -> usize {
        let (a, b) = (
            self.first_at(t.saturating_sub(before)),
            self.first_at(t.saturating_add(after).saturating_add(1)),
        );
        self.entries.range(a..b).filter(|e| !e.heartbeat).count()
    }

    /// The filtered entry sent nearest to `t` (the latest at or before it, else the first
    /// after): where the list's cursor stands.
    pub fn nearest(&self, f: &Filter, t: Time) -> Option<&Entry> {
        let m = f.matcher();
        let i = self.first_at(t.saturating_add(1));
        self.entries
            .range(..i)
            .rev()
            .find(|e| m.matches(e))
            .or_else(|| self.entries.range(i..).find(|e| m.matches(e)))
    }
}

impl Timeline {
    /// How many filtered entries fall in each of `bins` equal slices of `[from, to]`:
    /// the scrubber's density strip.
    pub fn density(&self, f: &Filter, from: Time, to: Time, bins: usize) -> Vec<usize> {
        let m = f.matcher();
        let (a, b) = (self.first_at(from), self.first_at(to.saturating_add(1)));
        let sent = self
            .entries
            .range(a..b)
            .filter(|e| m.matches(e))
            .map(|e| e.sent);
        bin_counts(sent, from, to, bins)
    }
}

/// How many of the times `sent` (all within `[from, to]`) fall in each of `bins` equal
/// slices of it.
fn bin_counts(sent: impl Iterator<Item = Time>, from: Time, to: Time, bins: usize) -> Vec<usize> {
    let mut out = vec![0; bins];
    let width = to.saturating_sub(from).max(1) as u128;
    for t in sent {
        let i = (u128::from(t.saturating_sub(from)) * bins as u128 / width) as usize;
        if let Some(n) = out.get_mut(i.min(bins.saturating_sub(1))) {
            *n += 1;
        }
    }
    out
}

/// The span the list and the scrubber show: `span` ms (0 = everything) around `cursor`,
/// kept inside `[0, live]`.
pub fn span_around(cursor: Time, live: Time, span: Time) -> (Time, Time) {
    if span == 0 || span >= live {
        return (0, live);
    }
    let from = cursor.saturating_sub(span / 2).min(live - span);
    (from, from + span)
}

/// Which open call a message starts, to match its answer.
fn open_key(env: &Envelope) -> Option<OpenKey> {
    match &env.payload {
        Payload::Api(r) => Some((env.from, 0, r.id)),
        Payload::Etcd(r) => Some((env.from, 1, r.id)),
        Payload::Cri(c) => Some((env.from, 2, c.id)),
        Payload::KubeletApi(r) => Some((env.from, 3, r.id)),
        _ => None,
    }
}

/// `Pod default/web-1`, `Node node-1`.
pub fn object_name(kind: &str, namespace: &str, name: &str) -> String {
    if namespace.is_empty() {
        format!("{kind} {name}")
    } else {
        format!("{kind} {namespace}/{name}")
    }
}

fn etcd_key(op: &crate::etcd::EtcdOp) -> String {
    use crate::etcd::EtcdOp;
    match op {
        EtcdOp::Range { key, .. } | EtcdOp::Txn { key, .. } => key.clone(),
        EtcdOp::Watch { prefix, .. } => prefix.clone(),
        _ => String::new(),
    }
}

fn is_heartbeat_key(key: &str) -> bool {
    key.starts_with("/registry/leases/") || key.starts_with("/registry/minions/")
}

/// How an actor is named in the list: `kube-scheduler`, `kubelet node-2`, `kubectl`.
pub fn actor_name(a: Actor, nodes: &[String]) -> String {
    match a.node() {
        Some(n) => format!(
            "{} {}",
            a.component_name(),
            nodes.get(n as usize).map_or("?", String::as_str)
        ),
        None => a.component_name().to_string(),
    }
}

#[cfg(test)]
#[path = "view_timeline_tests.rs"]
mod tests;
