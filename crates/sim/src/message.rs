//! The messages the cluster's components exchange, carried by the engine's queue
//! ([`crate::engine`]): API requests and watch streams, etcd's protocol, CRI, the
//! kubelet API, timers and connection notices.

use crate::api::{ApiRequest, ApiResponse, WatchEvent};
use crate::etcd::{EtcdRequest, EtcdResponse, EtcdWatchBatch};
use crate::node::cri::{CriRequest, CriResponse};
use crate::node::kubelet_api::{KubeletRequest, KubeletResponse};

pub use crate::engine::Actor;

/// What an actor can do while handling a message.
pub type Ctx<'a> = crate::engine::Ctx<'a, Payload>;
/// A message an actor sent during one handler call.
pub type Outgoing = crate::engine::Outgoing<Payload>;
/// A message in flight.
pub type Envelope = crate::engine::Envelope<Payload>;

/// A message body.
#[derive(Debug)]
pub enum Payload {
    /// Client → apiserver (boxed: a request with its body is kilobytes, and every
    /// message is moved through the queue several times).
    Api(Box<ApiRequest>),
    /// Apiserver → client.
    ApiResp(ApiResponse),
    /// Apiserver → client watch stream.
    Watch(WatchEvent),
    /// Client → etcd.
    Etcd(EtcdRequest),
    /// Etcd → client.
    EtcdResp(EtcdResponse),
    /// Etcd → client watch stream.
    EtcdWatch(EtcdWatchBatch),
    /// Kubelet → containerd (CRI).
    Cri(CriRequest),
    /// Containerd → kubelet.
    CriResp(CriResponse),
    /// A timer an actor set for itself; the token means what the actor says.
    Timer(u64),
    /// To a client: its connections to the apiserver broke (apiserver down, network cut).
    ConnectionLost,
    /// To a server: every connection of this client closed.
    ClientGone(Actor),
    /// Terminal → apiserver → kubelet: the kubelet API (logs, exec, stats), which the
    /// apiserver proxies to the node's port 10250.
    KubeletApi(KubeletRequest),
    /// Kubelet → apiserver → terminal.
    KubeletApiResp(KubeletResponse),
}

impl Payload {
    /// A one-line description for traces and the diagram.
    pub fn label(&self) -> String {
        match self {
            Payload::Api(r) => format!("{} {}", r.verb.http_method(), r.path()),
            Payload::ApiResp(r) => match &r.result {
                Ok(_) => "200 OK".to_string(),
                Err(s) if s.code > 0 => format!("{} {}", s.code, s.reason.as_str()),
                Err(s) => s.message.clone(),
            },
            Payload::Watch(w) => match &w.event {
                Ok((t, o)) => format!("{} {} {}", t.as_str(), o.kind(), o.name()),
                Err(s) => format!("watch error {}", s.code),
            },
            Payload::Etcd(r) => r.op_label(),
            Payload::EtcdResp(_) => "etcd response".to_string(),
            Payload::EtcdWatch(b) => match &b.events {
                Ok(evs) => evs.first().map_or("watch".to_string(), |e| {
                    format!("{} {}", if e.deleted { "DELETE" } else { "PUT" }, e.kv.key)
                }),
                Err((msg, _)) => msg.clone(),
            },
            Payload::Cri(c) => c.label(),
            Payload::CriResp(_) => "CRI response".to_string(),
            Payload::Timer(_) => "timer".to_string(),
            Payload::ConnectionLost => "connection lost".to_string(),
            Payload::ClientGone(_) => "client gone".to_string(),
            Payload::KubeletApi(r) => r.label(),
            Payload::KubeletApiResp(_) => "kubelet response".to_string(),
        }
    }

    pub(crate) fn fingerprint(&self) -> u64 {
        match self {
            Payload::Api(r) => 1 ^ (r.id << 8),
            Payload::ApiResp(r) => 2 ^ (r.id << 8) ^ u64::from(r.result.is_ok()) << 4,
            Payload::Watch(w) => 3 ^ (w.watch_id << 8),
            Payload::Etcd(r) => 4 ^ (r.id << 8),
            Payload::EtcdResp(r) => 5 ^ (r.id << 8),
            Payload::EtcdWatch(b) => 6 ^ (b.watch_id << 8),
            Payload::Cri(c) => 7 ^ (c.id << 8),
            Payload::CriResp(c) => 8 ^ (c.id << 8),
            Payload::Timer(t) => 9 ^ (t << 8),
            Payload::ConnectionLost => 10,
            Payload::ClientGone(_) => 11,
            Payload::KubeletApi(r) => 12 ^ (r.id << 8),
            Payload::KubeletApiResp(r) => 13 ^ (r.id << 8),
        }
    }
}

impl crate::engine::Message for Payload {
    fn timer(token: u64) -> Payload {
        Payload::Timer(token)
    }
}
