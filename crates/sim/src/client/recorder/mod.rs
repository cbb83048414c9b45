//! The event recorder: writes core/v1 Events through the apiserver after client-go's
//! EventCorrelator has combined, counted and rate-limited them.

mod correlator;
mod lru;
mod sink;

pub use sink::InFlight;

use k8s_openapi::api::core::v1::{Event, EventSource, ObjectReference};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use crate::api::{ApiRequest, Body, Verb};
use crate::client::Client;
use crate::message::Ctx;
use crate::object::{Kind, Object};
use crate::time::{k8s_time, Time, EPOCH_UNIX_MS};
use correlator::Correlated;

/// `Normal` or `Warning`.
pub const NORMAL: &str = "Normal";
/// `Warning`.
pub const WARNING: &str = "Warning";

/// Records Events for one component (`source.component`).
#[derive(Debug)]
pub struct Recorder {
    component: String,
    host: Option<String>,
    correlator: correlator::Correlator,
    names: Names,
}

impl Recorder {
    /// A recorder for `component` (e.g. `deployment-controller`), optionally on a host.
    pub fn new(component: &str, host: Option<&str>) -> Recorder {
        Recorder {
            component: component.to_string(),
            host: host.map(str::to_string),
            correlator: correlator::Correlator::default(),
            names: Names {
                source: crate::rng::fnv1a(format!("{component}/{}", host.unwrap_or("")).as_bytes()),
                counter: 0,
            },
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
        let name = self.names.next(ctx.now, r.name.as_deref());
        let ev = Event {
            metadata: ObjectMeta {
                name: Some(name),
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
        let object = ev.involved_object.name.clone();
        let now = ctx.now;
        let names = &mut self.names;
        let correlated = self
            .correlator
            .correlate(ev, now, || names.next(now, object.as_deref()));
        match correlated {
            Correlated::Create(ev) => {
                let req = ApiRequest::new(Verb::Create, Kind::Event, &ns, "")
                    .with_body(Body::Object(ev.into()));
                client.send(ctx, req);
            }
            Correlated::Patch(ev) => sink::patch(ctx, client, ev),
            Correlated::Skip => {}
        }
    }
}

/// Upstream names events `<object>.<unix nanos in hex>`; the sub-millisecond part is the
/// recorder's source and a counter, so events in one virtual millisecond differ.
#[derive(Debug)]
struct Names {
    source: u64,
    counter: u64,
}

impl Names {
    fn next(&mut self, now: Time, object: Option<&str>) -> String {
        self.counter += 1;
        let sub_ms = (self.source % 1000) * 1000 + self.counter % 1000;
        format!(
            "{}.{:x}",
            object.unwrap_or("unknown"),
            unix_nanos(now, sub_ms)
        )
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
