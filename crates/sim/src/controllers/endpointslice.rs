//! The EndpointSlice controller: one set of slices per selector Service, listing the
//! selected pods' IPs with ready/serving/terminating conditions.

use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_openapi::api::core::v1::{ObjectReference, Pod, Service};
use k8s_openapi::api::discovery::v1::{Endpoint, EndpointConditions, EndpointPort, EndpointSlice};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use crate::api::{ApiRequest, ApiResponse, Body, ReqId, Verb};
use crate::client::{Change, Pending, WorkQueue};
use crate::controllers::util::{controlled_by, is_pod_ready, key_of, owner_ref, split_key};
use crate::controllers::{Action, Controller, Env, Informers, SyncResult};
use crate::object::{Kind, Object};
use crate::selector::LabelSelector;
use crate::time::Time;

/// Endpoints per slice (`--max-endpoints-per-slice` default).
pub const MAX_ENDPOINTS_PER_SLICE: usize = 100;
/// Label naming the Service a slice belongs to.
pub const SERVICE_NAME_LABEL: &str = "kubernetes.io/service-name";
/// Label naming the slice's manager.
pub const MANAGED_BY_LABEL: &str = "endpointslice.kubernetes.io/managed-by";
/// This controller's manager value.
pub const MANAGED_BY: &str = "endpointslice-controller.k8s.io";

/// The EndpointSlice controller.
#[derive(Default)]
pub struct EndpointSliceController {
    sent: Pending<String>,
    /// Services with a slice write in flight (like upstream's endpointSliceTracker, this
    /// stops a sync from acting on a cache that has not seen its own writes yet).
    in_flight: BTreeMap<String, usize>,
}

pub(crate) fn selector_of(svc: &Service) -> Option<LabelSelector> {
    let sel = svc.spec.as_ref()?.selector.as_ref()?;
    if sel.is_empty() {
        return None;
    }
    Some(LabelSelector {
        requirements: sel
            .iter()
            .map(|(k, v)| crate::selector::Requirement::Equals(k.clone(), v.clone()))
            .collect(),
        nothing: false,
    })
}

/// Resolves a Service port's targetPort against a pod (named ports look up containerPort).
pub(crate) fn target_port(target: Option<&IntOrString>, port: i32, pod: &Pod) -> Option<i32> {
    match target {
        None => Some(port),
        Some(IntOrString::Int(0)) => Some(port),
        Some(IntOrString::Int(p)) => Some(*p),
        Some(IntOrString::String(name)) => pod
            .spec
            .as_ref()?
            .containers
            .iter()
            .flat_map(|c| c.ports.iter().flatten())
            .find(|p| p.name.as_deref() == Some(name))
            .map(|p| p.container_port),
    }
}

/// The slices a Service should have (without names), from the pods in the cache.
pub fn desired_slices(
    svc_obj: &Arc<Object>,
    svc: &Service,
    pods: &[&Arc<Object>],
    inf: &Informers,
) -> Vec<EndpointSlice> {
    let Some(sel) = selector_of(svc) else {
        return Vec::new();
    };
    let spec = svc.spec.clone().unwrap_or_default();
    let publish_not_ready = spec.publish_not_ready_addresses.unwrap_or(false);
    // Group endpoints by their resolved port list (named ports may differ per pod).
    let mut groups: BTreeMap<Vec<(String, String, i32)>, Vec<Endpoint>> = BTreeMap::new();
    for o in pods {
        let Object::Pod(p) = &***o else { continue };
        if !sel.matches(p.metadata.labels.as_ref()) {
            continue;
        }
        let status = p.status.clone().unwrap_or_default();
        let phase = status.phase.as_deref().unwrap_or("");
        let Some(ip) = status.pod_ip.clone().filter(|ip| !ip.is_empty()) else {
            continue;
        };
        if phase == "Succeeded" || phase == "Failed" {
            continue;
        }
        let terminating = p.metadata.deletion_timestamp.is_some();
        let serving = is_pod_ready(p) || publish_not_ready;
        let ready = serving && !terminating;
        let mut ports = Vec::new();
        for sp in spec.ports.iter().flatten() {
            if let Some(tp) = target_port(sp.target_port.as_ref(), sp.port, p) {
                ports.push((
                    sp.name.clone().unwrap_or_default(),
                    sp.protocol.clone().unwrap_or_else(|| "TCP".into()),
                    tp,
                ));
            }
        }
        let node = p.spec.as_ref().and_then(|s| s.node_name.clone());
        let zone = node
            .as_ref()
            .and_then(|n| inf.of(Kind::Node).get("", n))
            .and_then(|n| {
                n.meta()
                    .labels
                    .as_ref()
                    .and_then(|l| l.get("topology.kubernetes.io/zone").cloned())
            });
        let ep = Endpoint {
            addresses: vec![ip],
            conditions: Some(EndpointConditions {
                ready: Some(ready),
                serving: Some(serving),
                terminating: Some(terminating),
            }),
            // A pod whose subdomain names this Service is published by hostname
            // (a StatefulSet pod: web-0.nginx.default.svc.cluster.local).
            hostname: p
                .spec
                .as_ref()
                .filter(|s| s.subdomain.as_deref() == Some(svc_obj.name()))
                .and_then(|s| s.hostname.clone())
                .filter(|_| p.metadata.namespace.as_deref() == Some(svc_obj.namespace())),
            node_name: node,
            zone,
            target_ref: Some(ObjectReference {
                kind: Some("Pod".into()),
                name: p.metadata.name.clone(),
                namespace: p.metadata.namespace.clone(),
                uid: p.metadata.uid.clone(),
                ..ObjectReference::default()
            }),
            ..Endpoint::default()
        };
        groups.entry(ports).or_default().push(ep);
    }
    let mut labels = svc.metadata.labels.clone().unwrap_or_default();
    labels.insert(SERVICE_NAME_LABEL.into(), svc_obj.name().to_string());
    labels.insert(MANAGED_BY_LABEL.into(), MANAGED_BY.into());
    if spec.cluster_ip.as_deref() == Some("None") {
        labels.insert("service.kubernetes.io/headless".into(), String::new());
    }
    let mut out = Vec::new();
    if groups.is_empty() {
        // A Service with no endpoints still gets one (empty) slice, as upstream.
        let ports = spec
            .ports
            .iter()
            .flatten()
            .map(|sp| EndpointPort {
                name: Some(sp.name.clone().unwrap_or_default()),
                port: None,
                protocol: Some(sp.protocol.clone().unwrap_or_else(|| "TCP".into())),
                app_protocol: sp.app_protocol.clone(),
            })
            .collect();
        out.push(slice(svc_obj, &labels, Vec::new(), ports));
        return out;
    }
    for (ports, eps) in groups {
        let eports: Vec<EndpointPort> = ports
            .iter()
            .map(|(n, proto, p)| EndpointPort {
                name: Some(n.clone()),
                port: Some(*p),
                protocol: Some(proto.clone()),
                app_protocol: None,
            })
            .collect();
        for chunk in eps.chunks(MAX_ENDPOINTS_PER_SLICE) {
            out.push(slice(svc_obj, &labels, chunk.to_vec(), eports.clone()));
        }
    }
    out
}

fn slice(
    svc_obj: &Arc<Object>,
    labels: &BTreeMap<String, String>,
    endpoints: Vec<Endpoint>,
    ports: Vec<EndpointPort>,
) -> EndpointSlice {
    EndpointSlice {
        metadata: ObjectMeta {
            generate_name: Some(format!("{}-", svc_obj.name())),
            namespace: Some(svc_obj.namespace().to_string()),
            labels: Some(labels.clone()),
            owner_references: Some(vec![owner_ref(svc_obj)]),
            ..ObjectMeta::default()
        },
        address_type: "IPv4".into(),
        endpoints,
        ports: Some(ports),
    }
}

impl Controller for EndpointSliceController {
    fn name(&self) -> &'static str {
        "endpointslice-controller"
    }

    fn watches(&self) -> &'static [Kind] {
        &[Kind::Service, Kind::EndpointSlice, Kind::Pod, Kind::Node]
    }

    fn on_change(
        &mut self,
        kind: Kind,
        change: &Change,
        queue: &mut WorkQueue<String>,
        inf: &Informers,
        _now: Time,
    ) {
        match kind {
            Kind::Service => queue.add(key_of(change.object())),
            Kind::EndpointSlice => {
                let o = change.object();
                if let Some(svc) = o
                    .meta()
                    .labels
                    .as_ref()
                    .and_then(|l| l.get(SERVICE_NAME_LABEL))
                {
                    queue.add(format!("{}/{}", o.namespace(), svc));
                }
            }
            Kind::Pod => {
                let mut objs = vec![change.object()];
                if let Some(old) = change.old() {
                    objs.push(old);
                }
                for svc_obj in inf.of(Kind::Service).iter_ns(change.object().namespace()) {
                    let Object::Service(svc) = &**svc_obj else {
                        continue;
                    };
                    let Some(sel) = selector_of(svc) else {
                        continue;
                    };
                    if objs.iter().any(|o| sel.matches_object(o)) {
                        queue.add(key_of(svc_obj));
                    }
                }
            }
            _ => {}
        }
    }

    fn sync(&mut self, key: &str, env: &mut Env, inf: &Informers) -> SyncResult {
        if self.in_flight.get(key).is_some_and(|n| *n > 0) {
            return Ok(Action::await_change());
        }
        let (ns, name) = split_key(key);
        let existing: Vec<&Arc<Object>> = inf
            .of(Kind::EndpointSlice)
            .iter_ns(ns)
            .filter(|s| {
                let l = s.meta().labels.as_ref();
                l.and_then(|l| l.get(SERVICE_NAME_LABEL))
                    .map(String::as_str)
                    == Some(name)
                    && l.and_then(|l| l.get(MANAGED_BY_LABEL)).map(String::as_str)
                        == Some(MANAGED_BY)
            })
            .collect();
        let Some(svc_obj) = inf.of(Kind::Service).get(ns, name).cloned() else {
            return Ok(Action::await_change()); // the garbage collector removes slices of deleted Services
        };
        let Object::Service(svc) = &*svc_obj else {
            return Ok(Action::await_change());
        };
        let uid = svc_obj.meta().uid.clone().unwrap_or_default();
        let existing: Vec<&Arc<Object>> = existing
            .into_iter()
            .filter(|s| controlled_by(s, &uid))
            .collect();
        let pods: Vec<&Arc<Object>> = inf.of(Kind::Pod).iter_ns(ns).collect();
        let desired = if selector_of(svc).is_some() {
            desired_slices(&svc_obj, svc, &pods, inf)
        } else {
            Vec::new()
        };
        for (i, want) in desired.iter().enumerate() {
            match existing.get(i) {
                Some(have) => {
                    let Object::EndpointSlice(h) = &***have else {
                        continue;
                    };
                    if h.endpoints == want.endpoints
                        && h.ports == want.ports
                        && h.metadata.labels == want.metadata.labels
                    {
                        continue;
                    }
                    let mut upd = h.clone();
                    upd.endpoints = want.endpoints.clone();
                    upd.ports = want.ports.clone();
                    upd.metadata.labels = want.metadata.labels.clone();
                    let req = ApiRequest::new(Verb::Update, Kind::EndpointSlice, ns, have.name())
                        .with_body(Body::Object(upd.into()));
                    self.send(env, key, req);
                }
                None => {
                    let req = ApiRequest::new(Verb::Create, Kind::EndpointSlice, ns, "")
                        .with_body(Body::Object(want.clone().into()));
                    self.send(env, key, req);
                }
            }
        }
        for extra in existing.iter().skip(desired.len()) {
            self.send(
                env,
                key,
                ApiRequest::new(Verb::Delete, Kind::EndpointSlice, ns, extra.name()),
            );
        }
        Ok(Action::await_change())
    }

    fn on_response(&mut self, id: ReqId, resp: &ApiResponse, env: &mut Env, _inf: &Informers) {
        let Some(key) = self.sent.take(id) else {
            return;
        };
        if let Some(n) = self.in_flight.get_mut(&key) {
            *n = n.saturating_sub(1);
        }
        if resp.result.is_err() {
            env.retry(key);
        } else {
            env.enqueue(key);
        }
    }
}

impl EndpointSliceController {
    fn send(&mut self, env: &mut Env, key: &str, req: ApiRequest) {
        *self.in_flight.entry(key.to_string()).or_insert(0) += 1;
        let id = env.send(req);
        self.sent.insert(id, key.to_string());
    }
}
