//! Redis keeping keys, as the guestbook uses it: the frontend's `guestbook.php` sets a key
//! on the leader (`redis-leader`) and reads it from a follower (`redis-follower`), each a
//! real connection through DNS and the Service rules to a redis container. A leader's
//! writes reach its followers, as replication does; the keys live in the container (gone
//! when it is, like redis without persistence).

use std::net::Ipv4Addr;

use crate::node::cri::{Container, ContainerState};
use crate::node::net::{self, Network, Source};
use crate::proxy::model::Protocol;
use crate::proxy::traffic::Outcome;

/// Where a redis container keeps a key (in its writable layer).
fn slot(key: &str) -> String {
    format!("/data/.redis/{key}")
}

fn is_redis(c: &Container) -> bool {
    c.state == ContainerState::Running
        && crate::node::images::parse(&c.image)
            .repo
            .rsplit('/')
            .next()
            .is_some_and(|r| r == "redis" || r == "gb-redis-follower")
}

/// Whether a redis container replicates from a leader (the guestbook's followers).
fn is_follower(c: &Container) -> bool {
    c.image.contains("redis-follower")
        || c.command
            .iter()
            .any(|a| a.contains("replicaof") || a.contains("slaveof"))
}

/// The redis container that answers `host:6379` from `src`, as (machine, container id).
fn connect(net: &mut Network, src: &Source, host: &str) -> Option<(usize, String)> {
    let (ip, _) = net::resolve(net, src, host);
    let ip: Ipv4Addr = ip.ok()?;
    let outcome = net::route(net, src, ip, 6379, Protocol::Tcp);
    let Outcome::Delivered { pod_ip, .. } = outcome else {
        return None;
    };
    let pod_ip = pod_ip.to_string();
    net.hosts().iter().enumerate().find_map(|(i, h)| {
        let sb = h.runtime.sandbox_by_ip(&pod_ip)?;
        let c = h.runtime.running_in(&sb.id).find(|c| is_redis(c))?;
        Some((i, c.id.clone()))
    })
}

/// `SET key value` on the leader behind `host`, replicated to every follower.
pub fn set(net: &mut Network, src: &Source, host: &str, key: &str, value: &str) -> bool {
    let Some((n, id)) = connect(net, src, host) else {
        return false;
    };
    let mut targets = vec![(n, id)];
    for (i, h) in net.hosts().iter().enumerate() {
        for c in h
            .runtime
            .containers
            .values()
            .filter(|c| is_redis(c) && is_follower(c))
        {
            targets.push((i, c.id.clone()));
        }
    }
    for (i, id) in targets {
        if let Some(c) = net
            .host_mut(i as u32)
            .and_then(|h| h.runtime.containers.get_mut(&id))
            .map(std::sync::Arc::make_mut)
        {
            c.fs.insert(slot(key), value.to_string());
        }
    }
    true
}

/// `GET key` from the redis behind `host`: None when it cannot be reached.
pub fn get(net: &mut Network, src: &Source, host: &str, key: &str) -> Option<String> {
    let (n, id) = connect(net, src, host)?;
    let c = net.hosts().get(n)?.runtime.containers.get(&id)?;
    Some(c.fs.get(&slot(key)).cloned().unwrap_or_default())
}

/// What the guestbook frontend's `guestbook.php?cmd=…` answers, talking to redis from
/// the frontend pod `src`.
pub fn guestbook(net: &mut Network, src: &Source, query: &str) -> (u16, String) {
    let param = |name: &str| {
        query.split('&').find_map(|kv| {
            let (k, v) = kv.split_once('=')?;
            (k == name).then(|| percent_decode(v))
        })
    };
    let key = param("key").unwrap_or_else(|| "messages".into());
    match param("cmd").as_deref() {
        Some("set") => {
            let value = param("value").unwrap_or_default();
            if set(net, src, "redis-leader", &key, &value) {
                (200, "{\"message\": \"Updated\"}".into())
            } else {
                (500, "Fatal error: Uncaught Predis\\Connection\\ConnectionException: php_network_getaddresses: getaddrinfo for redis-leader failed: Name or service not known [tcp://redis-leader:6379]".into())
            }
        }
        Some("get") | None => match get(net, src, "redis-follower", &key) {
            Some(v) => (200, format!("{{\"data\": \"{}\"}}", v.replace('"', "\\\""))),
            None => (500, "Fatal error: Uncaught Predis\\Connection\\ConnectionException: php_network_getaddresses: getaddrinfo for redis-follower failed: Name or service not known [tcp://redis-follower:6379]".into()),
        },
        Some(_) => (200, "{\"data\": \"\"}".into()),
    }
}

fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'%' if i + 2 < b.len() => {
                let hex = std::str::from_utf8(&b[i + 1..i + 3]).ok();
                match hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                    Some(v) => {
                        out.push(v);
                        i += 3;
                        continue;
                    }
                    None => out.push(b'%'),
                }
            }
            b'+' => out.push(b' '),
            c => out.push(c),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}
