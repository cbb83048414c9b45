//! The endpoints controller: keeps the v1 Endpoints object of every selector Service
//! (deprecated since v1.33 in favour of EndpointSlices, still maintained upstream):
//! ready pods under `addresses`, the others under `notReadyAddresses`, subsets grouped
//! by their resolved ports, as pkg/controller/endpoint does.

use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_openapi::api::core::v1::{
    EndpointAddress, EndpointPort, EndpointSubset, Endpoints, ObjectReference, Service,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use crate::api::{ApiRequest, ApiResponse, Body, ReqId, Verb};
use crate::client::{Change, Pending, WorkQueue};
use crate::controllers::endpointslice::{selector_of, target_port};
use crate::controllers::util::{is_pod_ready, key_of, split_key};
use crate::controllers::{Action, Controller, Env, Informers, SyncResult};
use crate::object::{Kind, Object};
use crate::time::Time;

/// The label a headless Service's Endpoints carry.
const HEADLESS_LABEL: &str = "service.kubernetes.io/headless";

/// The endpoints controller.
#[derive(Default)]
pub struct EndpointsController {
    /// Writes in flight, with their Service's key.
    sent: Pending<String>,
}

/// The Endpoints a Service should have, from the pods in the cache.
pub fn desired_endpoints(svc: &Service, inf: &Informers) -> Option<Endpoints> {
    let sel = selector_of(svc)?;
    let spec = svc.spec.clone().unwrap_or_default();
    let ns = svc.metadata.namespace.clone().unwrap_or_default();
    let publish_not_ready = spec.publish_not_ready_addresses.unwrap_or(false);
    // Subsets keyed by their resolved ports: (name, port, protocol) per Service port.
    type Ports = Vec<(String, i32, String)>;
    let mut subsets: BTreeMap<Ports, (Vec<EndpointAddress>, Vec<EndpointAddress>)> =
        BTreeMap::new();
    for o in inf.of(Kind::Pod).iter_ns(&ns) {
        let Object::Pod(p) = &**o else { continue };
        if !sel.matches(p.metadata.labels.as_ref()) {
            continue;
        }
        let status = p.status.clone().unwrap_or_default();
        let Some(ip) = status.pod_ip.clone().filter(|ip| !ip.is_empty()) else {
            continue;
        };
        // ShouldPodBeInEndpoints: finished pods never, terminating ones only when
        // not-ready addresses are published.
        if matches!(status.phase.as_deref(), Some("Succeeded") | Some("Failed")) {
            continue;
        }
        if p.metadata.deletion_timestamp.is_some() && !publish_not_ready {
            continue;
        }
        let ports: Ports = spec
            .ports
            .iter()
            .flatten()
            .filter_map(|sp| {
                let tp = target_port(sp.target_port.as_ref(), sp.port, p)?;
                let proto = sp.protocol.clone().unwrap_or_else(|| "TCP".into());
                Some((sp.name.clone().unwrap_or_default(), tp, proto))
            })
            .collect();
        let addr = EndpointAddress {
            ip,
            hostname: None,
            node_name: p.spec.as_ref().and_then(|s| s.node_name.clone()),
            target_ref: Some(ObjectReference {
                kind: Some("Pod".into()),
                namespace: Some(ns.clone()),
                name: p.metadata.name.clone(),
                uid: p.metadata.uid.clone(),
                ..ObjectReference::default()
            }),
        };
        let entry = subsets.entry(ports).or_default();
        if is_pod_ready(p) || publish_not_ready {
            entry.0.push(addr);
        } else {
            entry.1.push(addr);
        }
    }
    let by_ip = |a: &EndpointAddress, b: &EndpointAddress| {
        (
            a.ip.as_str(),
            a.target_ref.as_ref().and_then(|r| r.uid.as_deref()),
        )
            .cmp(&(
                b.ip.as_str(),
                b.target_ref.as_ref().and_then(|r| r.uid.as_deref()),
            ))
    };
    let subsets: Vec<EndpointSubset> = subsets
        .into_iter()
        .map(|(ports, (mut ready, mut not_ready))| {
            ready.sort_by(by_ip);
            not_ready.sort_by(by_ip);
            EndpointSubset {
                addresses: (!ready.is_empty()).then_some(ready),
                not_ready_addresses: (!not_ready.is_empty()).then_some(not_ready),
                ports: (!ports.is_empty()).then(|| {
                    ports
                        .into_iter()
                        .map(|(name, port, protocol)| EndpointPort {
                            name: (!name.is_empty()).then_some(name),
                            port,
                            protocol: Some(protocol),
                            app_protocol: None,
                        })
                        .collect()
                }),
            }
        })
        .collect();
    let mut labels = svc.metadata.labels.clone().unwrap_or_default();
    if spec.cluster_ip.as_deref() == Some("None") {
        labels.insert(HEADLESS_LABEL.into(), String::new());
    }
    Some(Endpoints {
        metadata: ObjectMeta {
            name: svc.metadata.name.clone(),
            namespace: Some(ns),
            labels: (!labels.is_empty()).then_some(labels),
            ..ObjectMeta::default()
        },
        subsets: (!subsets.is_empty()).then_some(subsets),
    })
}

impl Controller for EndpointsController {
    fn name(&self) -> &'static str {
        "endpoints-controller"
    }

    fn component(&self) -> &'static str {
        "endpoint-controller"
    }

    fn watches(&self) -> &'static [Kind] {
        &[Kind::Service, Kind::Pod, Kind::Endpoints]
    }

    fn on_change(
        &mut self,
        kind: Kind,
        change: &Change,
        queue: &mut WorkQueue<String>,
        inf: &Informers,
        _now: Time,
    ) {
        let o = change.object();
        match kind {
            Kind::Service | Kind::Endpoints => queue.add(key_of(o)),
            Kind::Pod => {
                // Every Service of the namespace whose selector matches the pod, before
                // or after the change.
                for svc_obj in inf.of(Kind::Service).iter_ns(o.namespace()) {
                    let Object::Service(svc) = &**svc_obj else {
                        continue;
                    };
                    let Some(sel) = selector_of(svc) else {
                        continue;
                    };
                    let hit = [Some(o), change.old()]
                        .into_iter()
                        .flatten()
                        .any(|p| sel.matches(p.meta().labels.as_ref()));
                    if hit {
                        queue.add(key_of(svc_obj));
                    }
                }
            }
            _ => {}
        }
    }

    fn sync(&mut self, key: &str, env: &mut Env, inf: &Informers) -> SyncResult {
        let (ns, name) = split_key(key);
        let current = inf.of(Kind::Endpoints).get(ns, name).cloned();
        let svc = match inf.of(Kind::Service).get(ns, name).map(|o| &**o) {
            Some(Object::Service(s)) => s.clone(),
            _ => {
                // The Service is gone: so are its Endpoints.
                if current.is_some() {
                    let id = env.send(ApiRequest::new(Verb::Delete, Kind::Endpoints, ns, name));
                    self.sent.insert(id, key.to_string());
                }
                return Ok(Action::await_change());
            }
        };
        let Some(want) = desired_endpoints(&svc, inf) else {
            // A Service without a selector: its Endpoints are the user's.
            return Ok(Action::await_change());
        };
        self.write(env, key, current.as_ref(), want);
        Ok(Action::await_change())
    }

    fn on_response(&mut self, id: ReqId, resp: &ApiResponse, env: &mut Env, _inf: &Informers) {
        if let (Some(key), Err(s)) = (self.sent.take(id), &resp.result) {
            if !s.is_not_found() {
                env.retry(key);
            }
        }
    }
}

impl EndpointsController {
    /// Creates the Endpoints, or updates them when subsets or labels differ.
    fn write(&mut self, env: &mut Env, key: &str, current: Option<&Arc<Object>>, want: Endpoints) {
        let (ns, name) = split_key(key);
        let req = match current.map(|o| &**o) {
            Some(Object::Endpoints(cur)) => {
                if cur.subsets == want.subsets && cur.metadata.labels == want.metadata.labels {
                    return;
                }
                let mut updated = cur.clone();
                updated.subsets = want.subsets;
                updated.metadata.labels = want.metadata.labels;
                ApiRequest::new(Verb::Update, Kind::Endpoints, ns, name)
                    .with_body(Body::Object(updated.into()))
            }
            _ => ApiRequest::new(Verb::Create, Kind::Endpoints, ns, "")
                .with_body(Body::Object(want.into())),
        };
        let id = env.send(req);
        self.sent.insert(id, key.to_string());
    }
}
