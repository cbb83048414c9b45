//! The etcd side of the inspector and the etcd browser: an object's key with every revision
//! the store still holds (and a line diff between two of them), the request that wrote a
//! revision with its pipeline spans, the keyspace by prefix, and the watch stream the
//! apiserver's watch cache received.

use std::collections::BTreeMap;

use super::objects::object_yaml;
use crate::apiserver::server::{AuditEntry, Span};
use crate::message::Actor;
use crate::object::ObjectKey;
use crate::world::World;

/// One revision of a key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Revision {
    /// The etcd revision of the write.
    pub revision: u64,
    /// The key's version after it (1 after create).
    pub version: u64,
    /// Whether the write deleted the key.
    pub deleted: bool,
    /// The value as `kubectl get -o yaml` prints it (for a delete: the last value).
    pub yaml: String,
}

/// An object's etcd key and its retained history.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyHistory {
    /// `/registry/deployments/default/nginx`.
    pub key: String,
    /// `create_revision` of the current value (0 when the key is gone).
    pub create_revision: u64,
    /// `mod_revision` of the current value.
    pub mod_revision: u64,
    /// `version` of the current value.
    pub version: u64,
    /// Revisions still held (history since the last compaction, and the current value),
    /// oldest first; at most the cap, the newest kept.
    pub revisions: Vec<Revision>,
    /// Older retained revisions not listed.
    pub hidden: usize,
    /// etcd's compaction revision: history before it is gone.
    pub compacted: u64,
}

/// The key of `key` with the revisions etcd still holds, at most `cap` (the newest).
pub fn key_history(world: &World, key: &ObjectKey, cap: usize) -> KeyHistory {
    let store = &world.observe().etcd().store;
    let k = key.etcd_key();
    let mut revisions: Vec<Revision> = store
        .history_of(&k)
        .into_iter()
        .map(|e| Revision {
            revision: e.revision,
            version: if e.deleted { 0 } else { e.kv.version },
            deleted: e.deleted,
            yaml: object_yaml(&e.kv.value),
        })
        .collect();
    let current = store.get(&k);
    if let Some(kv) = current {
        // A value written before the last compaction is held, though its event is not.
        if revisions
            .last()
            .is_none_or(|r| r.revision < kv.mod_revision)
        {
            revisions.push(Revision {
                revision: kv.mod_revision,
                version: kv.version,
                deleted: false,
                yaml: object_yaml(&kv.value),
            });
        }
    }
    let hidden = revisions.len().saturating_sub(cap);
    revisions.drain(..hidden);
    KeyHistory {
        key: k,
        create_revision: current.map_or(0, |kv| kv.create_revision),
        mod_revision: current.map_or(0, |kv| kv.mod_revision),
        version: current.map_or(0, |kv| kv.version),
        revisions,
        hidden,
        compacted: store.compact_revision(),
    }
}

/// One line of a diff between two revisions' YAML.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DiffLine {
    /// Unchanged context.
    Same(String),
    /// Only in the older revision.
    Removed(String),
    /// Only in the newer revision.
    Added(String),
    /// A hunk header (`@@ -3,7 +3,7 @@`).
    Hunk(String),
}

/// The line diff (`diff -u` hunks, as `kubectl diff` prints them) from `old` to `new`.
pub fn yaml_diff(old: &str, new: &str) -> Vec<DiffLine> {
    let Some(hunks) = crate::cmd::unified::hunks(old, new) else {
        return Vec::new();
    };
    hunks
        .lines()
        .map(|l| {
            if l.starts_with("@@") {
                DiffLine::Hunk(l.to_string())
            } else if let Some(r) = l.strip_prefix('-') {
                DiffLine::Removed(r.to_string())
            } else if let Some(r) = l.strip_prefix('+') {
                DiffLine::Added(r.to_string())
            } else {
                DiffLine::Same(l.strip_prefix(' ').unwrap_or(l).to_string())
            }
        })
        .collect()
}

/// The request that wrote a revision, from the apiserver's audit log.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WriteRequest {
    /// `create`, `update`, `patch`, `delete`.
    pub verb: &'static str,
    /// The request path.
    pub path: String,
    /// Who sent it (the component).
    pub client: String,
    /// The user it authenticated as.
    pub user: String,
    /// The HTTP status code.
    pub code: u16,
    /// When it arrived.
    pub received: u64,
    /// Its pipeline spans, in order (authentication → … → etcd → response).
    pub spans: Vec<Span>,
}

/// The request that stored `revision`, while the audit log still holds it (it keeps the
/// latest 2000 requests) and the apiserver runs.
pub fn writer_of(world: &World, revision: u64) -> Option<WriteRequest> {
    let obs = world.observe();
    let entry: &AuditEntry = obs
        .apiserver()?
        .audit()
        .find(|e| e.revision == Some(revision))?;
    Some(WriteRequest {
        verb: entry.verb.as_str(),
        path: entry.path.clone(),
        client: client_name(entry.client, &obs.node_names()),
        user: entry.user.clone(),
        code: entry.code,
        received: entry.received,
        spans: entry.spans.clone(),
    })
}

fn client_name(a: Actor, nodes: &[String]) -> String {
    super::timeline::actor_name(a, nodes)
}

/// One resource's keys in the etcd browser.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Prefix {
    /// `/registry/pods/`.
    pub prefix: String,
    /// Keys under it.
    pub count: usize,
}

/// One key in the etcd browser.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyRow {
    /// The key.
    pub key: String,
    /// `create_revision`.
    pub create_revision: u64,
    /// `mod_revision`.
    pub mod_revision: u64,
    /// `version`.
    pub version: u64,
    /// The object the key holds.
    pub object: ObjectKey,
}

/// The keyspace: every `/registry/<resource>/` prefix with its key count, and the keys
/// under `prefix` (at most `cap`) with the number that match.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Keyspace {
    /// Every resource prefix, in key order.
    pub prefixes: Vec<Prefix>,
    /// Keys under the chosen prefix, in key order, at most the cap.
    pub keys: Vec<KeyRow>,
    /// How many keys are under the chosen prefix.
    pub matching: usize,
    /// The store's revision.
    pub revision: u64,
    /// The compaction revision.
    pub compacted: u64,
}

/// The keyspace by prefix, and the keys under `prefix` (at most `cap`).
pub fn keyspace(world: &World, prefix: &str, cap: usize) -> Keyspace {
    let store = &world.observe().etcd().store;
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    let mut keys = Vec::new();
    let mut matching = 0;
    for kv in store.range_prefix("/registry/") {
        if let Some(p) = resource_prefix(&kv.key) {
            *counts.entry(p.to_string()).or_default() += 1;
        }
        if kv.key.starts_with(prefix) {
            matching += 1;
            if keys.len() < cap {
                keys.push(KeyRow {
                    key: kv.key.clone(),
                    create_revision: kv.create_revision,
                    mod_revision: kv.mod_revision,
                    version: kv.version,
                    object: kv.value.key(),
                });
            }
        }
    }
    Keyspace {
        prefixes: counts
            .into_iter()
            .map(|(prefix, count)| Prefix { prefix, count })
            .collect(),
        keys,
        matching,
        revision: store.revision(),
        compacted: store.compact_revision(),
    }
}

/// `/registry/pods/` of `/registry/pods/default/web-0`.
fn resource_prefix(key: &str) -> Option<&str> {
    let rest = key.strip_prefix("/registry/")?;
    let end = rest.find('/')?;
    Some(&key[..("/registry/".len() + end + 1)])
}

/// One event of the watch stream.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WatchRow {
    /// The etcd revision.
    pub revision: u64,
    /// `ADDED`, `MODIFIED` or `DELETED`.
    pub kind: &'static str,
    /// The key.
    pub key: String,
    /// The object.
    pub object: ObjectKey,
}

/// The latest `cap` events the apiserver's watch cache received, newest first, and how
/// many it holds in all (none while the apiserver is down: its cache is gone).
pub fn watch_stream(world: &World, cap: usize) -> (Vec<WatchRow>, usize) {
    let obs = world.observe();
    let Some(api) = obs.apiserver() else {
        return (Vec::new(), 0);
    };
    let (events, total) = api.cache().recent(cap);
    let rows = events
        .into_iter()
        .map(|e| WatchRow {
            revision: e.revision,
            kind: if e.deleted {
                "DELETED"
            } else if e.modified {
                "MODIFIED"
            } else {
                "ADDED"
            },
            key: e.key.etcd_key(),
            object: e.key.clone(),
        })
        .collect();
    (rows, total)
}
