//! client-go for the simulated components: an identity that stamps requests, informers
//! (list+watch caches) shared per component, typed timers and request routing,
//! rate-limited work queues and an event recorder.

pub mod informer;
pub mod informers;
pub mod pending;
pub mod recorder;
pub mod timers;
pub mod workqueue;

use crate::api::{ApiRequest, ReqId};
use crate::message::{Actor, Ctx, Payload};

pub use informer::{Change, Informer};
pub use informers::Informers;
pub use pending::Pending;
pub use recorder::Recorder;
pub use timers::Timers;
pub use workqueue::WorkQueue;

/// A component's connection to kube-apiserver: its identity and request ids.
#[derive(Clone, Debug)]
pub struct Client {
    user: String,
    groups: Vec<String>,
    next_id: ReqId,
    /// Event patches in flight (see [`Client::on_event_response`]).
    events: recorder::InFlight,
}

impl Client {
    /// A client authenticating as `user` in `groups`.
    pub fn new(user: &str, groups: &[&str]) -> Client {
        Client {
            user: user.to_string(),
            groups: groups.iter().map(|g| g.to_string()).collect(),
            next_id: 1,
            events: recorder::InFlight::default(),
        }
    }

    /// Sends a request; returns its id.
    pub fn send(&mut self, ctx: &mut Ctx, mut req: ApiRequest) -> ReqId {
        let id = self.next_id;
        self.next_id += 1;
        req.id = id;
        req.user = Some(self.user.clone());
        req.groups = self.groups.clone();
        ctx.send(Actor::ApiServer, Payload::Api(Box::new(req)));
        id
    }

    /// The user name.
    pub fn user(&self) -> &str {
        &self.user
    }
}
