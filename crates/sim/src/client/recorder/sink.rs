//! The event sink (`recordToSink`): a repeat patches the Event's count, and a patch that
//! finds the Event gone (its hour-long TTL ran out, or someone deleted it) creates it
//! again with the same name and count, as client-go does.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Event;

use crate::api::{ApiRequest, ApiResponse, Body, PatchType, ReqId, Verb};
use crate::client::Client;
use crate::message::Ctx;
use crate::object::Kind;
use crate::time::k8s_time;

/// Patches in flight are forgotten past this many (a connection cut off mid-patch never
/// answers them).
const MAX_IN_FLIGHT: usize = 1024;

/// A client's Event patches in flight, each with the whole Event to create again.
#[derive(Clone, Debug, Default)]
pub struct InFlight {
    patches: BTreeMap<ReqId, Event>,
}

/// Sends the patch of a repeated event: its count, lastTimestamp and message.
pub(super) fn patch(ctx: &mut Ctx, client: &mut Client, ev: Event) {
    let ns = ev.metadata.namespace.clone().unwrap_or_default();
    let name = ev.metadata.name.clone().unwrap_or_default();
    let body = serde_json::json!({
        "count": ev.count,
        "lastTimestamp": k8s_time(ctx.now),
        "message": ev.message,
    });
    let req = ApiRequest::new(Verb::Patch, Kind::Event, &ns, &name)
        .with_body(Body::Patch(PatchType::Merge, body));
    let id = client.send(ctx, req);
    let mut ev = ev;
    ev.last_timestamp = Some(k8s_time(ctx.now));
    ev.metadata.resource_version = None;
    let patches = &mut client.events.patches;
    if patches.len() >= MAX_IN_FLIGHT {
        patches.pop_first();
    }
    patches.insert(id, ev);
}

impl Client {
    /// Takes the response to one of this client's Event patches: an Event that has gone
    /// is created again. Returns whether the response was one.
    pub fn on_event_response(&mut self, ctx: &mut Ctx, resp: &ApiResponse) -> bool {
        let Some(ev) = self.events.patches.remove(&resp.id) else {
            return false;
        };
        if matches!(&resp.result, Err(s) if s.code == 404) {
            let ns = ev.metadata.namespace.clone().unwrap_or_default();
            let req = ApiRequest::new(Verb::Create, Kind::Event, &ns, "")
                .with_body(Body::Object(ev.into()));
            self.send(ctx, req);
        }
        true
    }
}
