//! The trace of a Service: every change of its EndpointSlices that etcd still holds, each
//! with the request that wrote it, the endpoints it added and removed — so the
//! `KUBE-SVC-… -j KUBE-SEP-…` jumps kube-proxy wrote or dropped for them — and the
//! kube-proxies its watch event reached.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use crate::etcd::EtcdEvent;
use crate::message::Actor;
use crate::object::{Kind, Object};
use crate::proxy::hash::service_port_policy_cluster_chain;
use crate::proxy::model::endpoints_map;
use crate::time::Time;
use crate::world::World;

use crate::view::timeline::{actor_name, object_name, Entry, EntryKind, Timeline};

/// The label that ties a slice to its Service.
const SERVICE_NAME: &str = "kubernetes.io/service-name";

/// At most this many changes are listed (the newest); older ones are counted.
pub const MAX_CHANGES: usize = 20;

/// One endpoint that a change added to or removed from a Service port's rules.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct RuleChange {
    /// The service port (`default/web:http`, or `default/web` when unnamed).
    pub port: String,
    /// `ip:port`.
    pub endpoint: String,
    /// The port's `KUBE-SVC-…` chain, where the jump is written.
    pub service_chain: String,
    /// The endpoint's `KUBE-SEP-…` chain.
    pub endpoint_chain: String,
}

/// One write of one of the Service's EndpointSlices.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServiceChange {
    /// When the apiserver received the write (else when etcd stored it is unknown: 0).
    pub at: Time,
    /// etcd's revision of the write.
    pub revision: u64,
    /// The slice's name.
    pub slice: String,
    /// Who wrote it (`kube-controller-manager`).
    pub by: String,
    /// The request: `PUT /apis/discovery.k8s.io/v1/namespaces/default/endpointslices/web-x 200 OK`.
    pub what: String,
    /// The request's timeline entry (for a jump into the list).
    pub seq: Option<u64>,
    /// Ready endpoints the write added: a jump kube-proxy then writes.
    pub added: Vec<RuleChange>,
    /// Ready endpoints the write removed: a jump kube-proxy then drops.
    pub removed: Vec<RuleChange>,
    /// The kube-proxies the slice's watch event reached: when, on which node, what it said,
    /// and how long after the write.
    pub proxies: Vec<(Time, String, Option<Time>)>,
}

/// A Service's trace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServiceTrace {
    /// `namespace/name`.
    pub service: String,
    /// The newest [`MAX_CHANGES`] changes, oldest first.
    pub changes: Vec<ServiceChange>,
    /// How many older changes were left out.
    pub earlier: usize,
}

/// The ready endpoints of a slice, per service port, as kube-proxy reads them.
fn ready_endpoints(kv_value: Option<&Object>) -> BTreeSet<RuleChange> {
    let Some(Object::EndpointSlice(slice)) = kv_value else {
        return BTreeSet::new();
    };
    endpoints_map(&[Arc::new((**slice).clone())], "")
        .into_iter()
        .flat_map(|(spn, eps)| {
            let port = spn.to_string();
            let service_chain = service_port_policy_cluster_chain(&port, spn.protocol.lower());
            eps.into_iter()
                .filter(|e| e.ready)
                .map(move |e| RuleChange {
                    port: port.clone(),
                    endpoint: e.to_string(),
                    service_chain: service_chain.clone(),
                    endpoint_chain: e.chain,
                })
        })
        .collect()
}

fn service_of(e: &EtcdEvent) -> Option<&str> {
    e.kv.value
        .meta()
        .labels
        .as_ref()?
        .get(SERVICE_NAME)
        .map(|s| s.as_str())
}

/// Whether a timeline label is a write (`POST …`, `PUT …`, `PATCH …`, `DELETE …`).
fn is_write(label: &str) -> bool {
    ["POST ", "PUT ", "PATCH ", "DELETE "]
        .iter()
        .any(|m| label.starts_with(m))
}

/// The successful write requests about `object`, oldest first.
fn writes<'t>(tl: &'t Timeline, object: &str) -> Vec<&'t Entry> {
    tl.entries()
        .filter(|t| {
            t.kind == EntryKind::Request
                && t.object == object
                && is_write(&t.label)
                && t.answer.as_deref().is_some_and(|a| a.starts_with('2'))
        })
        .collect()
}

/// The trace of the Service `ns/name`, or `None` when there is no such Service.
pub fn service_trace(world: &World, tl: &Timeline, ns: &str, name: &str) -> Option<ServiceTrace> {
    let store = &world.observe().etcd().store;
    let svc_key = format!("/registry/{}/{ns}/{name}", Kind::Service.info().etcd_prefix);
    store.get(&svc_key)?;
    let prefix = format!("/registry/{}/{ns}/", Kind::EndpointSlice.info().etcd_prefix);
    let events = store
        .events_since(&prefix, store.compact_revision())
        .unwrap_or_default();
    // Only the newest changes are described (the endpoint sets are the costly part: a
    // Service of hundreds of pods has hundreds of slice writes).
    let ours: Vec<&EtcdEvent> = events
        .iter()
        .filter(|e| service_of(e) == Some(name))
        .collect();
    let earlier = ours.len().saturating_sub(MAX_CHANGES);
    let newest = ours.get(earlier).map_or(u64::MAX, |e| e.revision);
    // Each slice's etcd writes, matched to its write requests from the newest back (the
    // timeline keeps a bounded window; etcd keeps history since the last compaction).
    let mut per_key: BTreeMap<&str, Vec<&EtcdEvent>> = BTreeMap::new();
    for e in ours {
        per_key.entry(e.kv.key.as_str()).or_default().push(e);
    }
    let nodes = world.observe().node_names();
    let mut changes = Vec::new();
    for (key, evs) in per_key {
        let slice = key.rsplit('/').next().unwrap_or_default().to_string();
        let object = object_name("EndpointSlice", ns, &slice);
        let reqs = writes(tl, &object);
        let offset = reqs.len() as i64 - evs.len() as i64;
        for (i, e) in evs.iter().enumerate().filter(|(_, e)| e.revision >= newest) {
            let req = usize::try_from(i as i64 + offset)
                .ok()
                .and_then(|j| reqs.get(j));
            changes.push(change(e, req.copied(), &slice, &object, tl, &nodes));
        }
    }
    changes.sort_by_key(|c| c.revision);
    Some(ServiceTrace {
        service: format!("{ns}/{name}"),
        changes,
        earlier,
    })
}

/// One write of a slice, described: the request behind it and the rules it changed.
fn change(
    e: &EtcdEvent,
    req: Option<&Entry>,
    slice: &str,
    object: &str,
    tl: &Timeline,
    nodes: &[String],
) -> ServiceChange {
    let before = ready_endpoints(e.prev.as_ref().map(|kv| &*kv.value));
    let after = if e.deleted {
        BTreeSet::new()
    } else {
        ready_endpoints(Some(&e.kv.value))
    };
    ServiceChange {
        at: req.map_or(0, |t| t.arrives),
        revision: e.revision,
        slice: slice.to_string(),
        by: req.map_or_else(String::new, |t| actor_name(t.from, nodes)),
        what: req.map_or_else(String::new, |t| {
            format!("{} {}", t.label, t.answer.as_deref().unwrap_or_default())
        }),
        seq: req.map(|t| t.seq),
        added: after.difference(&before).cloned().collect(),
        removed: before.difference(&after).cloned().collect(),
        proxies: req.map_or_else(Vec::new, |r| proxies_after(tl, object, r.arrives, nodes)),
    }
}

/// The first watch event about `object` each kube-proxy received after `at`: when it
/// arrived, on which node, what it said, and how long after `at`.
pub(super) fn proxies_after(
    tl: &Timeline,
    object: &str,
    at: Time,
    nodes: &[String],
) -> Vec<(Time, String, Option<Time>)> {
    let mut seen = BTreeSet::new();
    tl.entries()
        .filter(|t| {
            t.kind == EntryKind::Watch
                && matches!(t.to, Actor::KubeProxy(_))
                && t.object == object
                && t.sent >= at
        })
        .filter(|t| seen.insert(t.to))
        .map(|t| {
            let node = actor_name(t.to, nodes);
            (
                t.arrives,
                format!("{node}: {}", t.label),
                Some(t.arrives.saturating_sub(at)),
            )
        })
        .collect()
}
