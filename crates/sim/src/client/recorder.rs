//! The event recorder: writes core/v1 Events through the apiserver, aggregating repeats
//! into a count as client-go's EventCorrelator does.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{Event, EventSource, ObjectReference};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use crate::api::{ApiRequest, Body, PatchType, Verb};
use crate::client::Client;
use crate::message::Ctx;
use crate::object::{Kind, Object};
use crate::time::{k8s_time, Time, EPOCH_UNIX_MS};

/// `Normal` or `Warning`.
pub const NORMAL: &str = "Normal";
/// `Warning`.
pub const WARNING: &str = "Warning";

/// Records Events for one component (`source.component`).
#[derive(Debug)]
pub struct Recorder {
    component: String,
    host: Option<String>,
    seen: BTreeMap<(String, String, String), (String, String, i32)>,
    counter: u64,
}

impl Recorder {
    /// A recorder for `component` (e.g. `deployment-controller`), optionally on a host.
    pub fn new(component: &str, host: Option<&str>) -> Recorder {
        Recorder {
            component: component.to_string(),
            host: host.map(str::to_string),
            seen: BTreeMap::new(),
            counter: 0,
        }
    }

    /// Records an event about `obj`.
    pub fn event(
        &mut self,
        ctx: &mut Ctx,
        client: &mut Client,
        obj: &Object,
        type_: &str,
        reason: &str,
        message: &str,
    ) {
        self.event_ref(ctx, client, reference(obj, None), type_, reason, message);
    }

    /// Records an event about a container of a pod (`spec.containers{name}`).
    pub fn container_event(
        &mut self,
        ctx: &mut Ctx,
        client: &mut Client,
        pod: &Object,
        field_path: &str,
        type_: &str,
        reason: &str,
        message: &str,
    ) {
        self.event_ref(
            ctx,
            client,
            reference(pod, Some(field_path)),
            type_,
            reason,
            message,
        );
    }

    /// Records an event about the object `r` refers to (kube-proxy's NodeRef, which it
    /// builds from its hostname rather than from a Node it read).
    pub fn event_ref(
        &mut self,
        ctx: &mut Ctx,
        client: &mut Client,
        r: ObjectReference,
        type_: &str,
        reason: &str,
        message: &str,
    ) {
        let ns = r.namespace.clone().unwrap_or_else(|| "default".to_string());
        let obj_id = format!(
            "{}/{}/{}/{}",
            r.kind.as_deref().unwrap_or(""),
            ns,
            r.name.as_deref().unwrap_or(""),
            r.field_path.as_deref().unwrap_or("")
        );
        let key = (obj_id, reason.to_string(), message.to_string());
        if let Some((name, evns, count)) = self.seen.get_mut(&key) {
            *count += 1;
            let patch = serde_json::json!({
                "count": *count,
                "lastTimestamp": k8s_time(ctx.now),
                "message": message,
            });
            let req = ApiRequest::new(Verb::Patch, Kind::Event, evns, name)
                .with_body(Body::Patch(PatchType::Merge, patch));
            client.send(ctx, req);
            return;
        }
        // Upstream names events `<object>.<unix nanos in hex>`; the sub-millisecond part
        // is a per-recorder counter so events in the same virtual millisecond stay distinct.
        self.counter += 1;
        let source = crate::rng::fnv1a(
            format!("{}/{}", self.component, self.host.as_deref().unwrap_or("")).as_bytes(),
        );
        let sub_ms = (source % 1000) * 1000 + self.counter % 1000;
        let name = format!(
            "{}.{:x}",
            r.name.as_deref().unwrap_or("unknown"),
            unix_nanos(ctx.now, sub_ms)
        );
        let ev = Event {
            metadata: ObjectMeta {
                name: Some(name.clone()),
                namespace: Some(ns.clone()),
                ..ObjectMeta::default()
            },
            involved_object: r,
            reason: Some(reason.to_string()),
            message: Some(message.to_string()),
            source: Some(EventSource {
                component: Some(self.component.clone()),
                host: self.host.clone(),
            }),
            first_timestamp: Some(k8s_time(ctx.now)),
            last_timestamp: Some(k8s_time(ctx.now)),
            count: Some(1),
            type_: Some(type_.to_string()),
            reporting_component: Some(self.component.clone()),
            reporting_instance: Some(self.host.clone().unwrap_or_default()),
            ..Event::default()
        };
        self.seen.insert(key, (name, ns.clone(), 1));
        let req =
            ApiRequest::new(Verb::Create, Kind::Event, &ns, "").with_body(Body::Object(ev.into()));
        client.send(ctx, req);
    }
}

fn unix_nanos(t: Time, counter: u64) -> u128 {
    (EPOCH_UNIX_MS as u128 + u128::from(t)) * 1_000_000 + u128::from(counter % 1_000_000)
}

/// An ObjectReference to `o` (optionally to one of its containers).
pub fn reference(o: &Object, field_path: Option<&str>) -> ObjectReference {
    let info = o.kind().info();
    let m = o.meta();
    ObjectReference {
        api_version: Some(info.api_version()),
        kind: Some(info.kind.to_string()),
        name: m.name.clone(),
        namespace: m.namespace.clone(),
        uid: m.uid.clone(),
        resource_version: m.resource_version.clone(),
        field_path: field_path.map(str::to_string),
    }
}
