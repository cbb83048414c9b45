//! Envoy Gateway's control loop (`internal/provider/kubernetes`, `internal/gatewayapi`,
//! `internal/infrastructure`): while its `envoy-gateway` pod is Ready it accepts the
//! GatewayClasses naming `gateway.envoyproxy.io/gatewayclass-controller`, creates each
//! of their Gateways' envoy ServiceAccount, Service and Deployment in
//! `envoy-gateway-system`, and writes the Gateway, listener and HTTPRoute statuses. It
//! runs in kube-controller-manager's process, as the ingress-nginx controller does, on
//! informers for the Gateway API kinds that start once their CRDs are established
//! (docs/design.md §6.18). envoy itself is on the data plane (`node::envoy_proxy`).

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use crate::api::{ApiRequest, Body, Subresource, Verb};
use crate::client::{Change, WorkQueue};
use crate::controllers::envoy_gateway_infra as infra;
use crate::controllers::gateway_status::{self as status, Stamp};
use crate::controllers::util::is_pod_ready;
use crate::controllers::{Action, Controller, Env, Informers, SyncResult};
use crate::node::envoy_proxy::{OWNING_NAME, OWNING_NAMESPACE};
use crate::node::gateway_model::{self as gm, Gateway, Grant, Route, CONTROLLER_NAME};
use crate::node::gateway_tls::{self, Problem};
use crate::object::{CustomObject, Kind, Object};
use crate::time::{Time, SECOND};

/// The one queue key: Envoy Gateway translates the whole set of resources at once.
const KEY: &str = "reconcile";
/// The plurals of the kinds it reads.
const PLURALS: [&str; 5] = [
    "gatewayclasses",
    "gateways",
    "grpcroutes",
    "httproutes",
    "referencegrants",
];

/// The controller: the custom kinds it reads, and the proxy objects it created and has
/// not seen yet.
#[derive(Default)]
pub struct EnvoyGatewayController {
    /// (CRD fingerprint, kinds) of the last discovery.
    kinds: Option<(Vec<(String, String)>, Vec<Kind>)>,
    /// `kind/name` of proxy objects created, not yet in the informers.
    creating: BTreeSet<String>,
}

fn running(inf: &Informers) -> bool {
    inf.of(Kind::Pod)
        .iter_ns(infra::NAMESPACE)
        .any(|o| match &**o {
            Object::Pod(p) => {
                p.metadata
                    .labels
                    .as_ref()
                    .and_then(|l| l.get("control-plane"))
                    .is_some_and(|v| v == "envoy-gateway")
                    && p.metadata.deletion_timestamp.is_none()
                    && is_pod_ready(p)
            }
            _ => false,
        })
}

fn customs(inf: &Informers, k: Kind) -> Vec<CustomObject> {
    inf.find(k)
        .into_iter()
        .flat_map(|i| i.iter())
        .filter_map(|o| match &**o {
            Object::Custom(c) if c.metadata.deletion_timestamp.is_none() => Some((**c).clone()),
            _ => None,
        })
        .collect()
}

fn status_of(o: &CustomObject) -> Option<&Value> {
    o.content.get("status")
}

impl EnvoyGatewayController {
    fn kind(&self, plural: &str) -> Option<Kind> {
        self.kinds
            .as_ref()?
            .1
            .iter()
            .copied()
            .find(|k| k.info().plural == plural)
    }

    fn write_status(env: &mut Env, o: &CustomObject, st: Value) {
        if status_of(o) == Some(&st) {
            return;
        }
        let mut updated = o.clone();
        updated.content.insert("status".into(), st);
        let ns = o.metadata.namespace.as_deref().unwrap_or("");
        let name = o.metadata.name.as_deref().unwrap_or("");
        env.fire(
            ApiRequest::new(Verb::Update, Kind::Custom(o.kind), ns, name)
                .with_subresource(Subresource::Status)
                .with_body(Body::Object(Object::from(updated))),
        );
    }

    /// Accepts our GatewayClasses; returns the names of the accepted ones.
    fn classes(&self, env: &mut Env, inf: &Informers) -> BTreeSet<String> {
        let mut ok = BTreeSet::new();
        let Some(k) = self.kind("gatewayclasses") else {
            return ok;
        };
        for gc in customs(inf, k) {
            let spec = gc.content.get("spec").cloned().unwrap_or(Value::Null);
            if spec.get("controllerName").and_then(Value::as_str) != Some(CONTROLLER_NAME) {
                continue;
            }
            let old = status::conditions_of(status_of(&gc));
            let st = Stamp {
                now: env.now(),
                generation: gc.metadata.generation.unwrap_or(1),
                old: &old,
            };
            let (accepted, s) = status::gateway_class(&st, &spec);
            if accepted {
                ok.insert(gc.metadata.name.clone().unwrap_or_default());
            }
            Self::write_status(env, &gc, s);
        }
        ok
    }

    fn create(&mut self, env: &mut Env, inf: &Informers, kind: Kind, obj: Option<Object>) {
        let Some(obj) = obj else { return };
        let name = obj.meta().name.clone().unwrap_or_default();
        let mark = format!("{kind:?}/{name}");
        if inf.of(kind).get(infra::NAMESPACE, &name).is_some() {
            self.creating.remove(&mark);
            return;
        }
        if self.creating.insert(mark) {
            env.fire(
                ApiRequest::new(Verb::Create, kind, infra::NAMESPACE, "")
                    .with_body(Body::Object(obj)),
            );
        }
    }

    /// Keeps the proxy Service's and Deployment's ports in step with the listeners.
    fn update_ports(env: &mut Env, inf: &Informers, gw: &Gateway) {
        let name = gm::proxy_name(&gw.namespace, &gw.name);
        if let Some(o) = inf.of(Kind::Service).get(infra::NAMESPACE, &name) {
            if let Object::Service(svc) = &**o {
                let want: Vec<k8s_openapi::api::core::v1::ServicePort> =
                    crate::object::decode(&infra::service_ports(gw)).unwrap_or_default();
                let have = svc
                    .spec
                    .as_ref()
                    .and_then(|s| s.ports.clone())
                    .unwrap_or_default();
                let same = have.len() == want.len()
                    && have
                        .iter()
                        .zip(&want)
                        .all(|(a, b)| a.port == b.port && a.target_port == b.target_port);
                if !same {
                    let mut s = svc.clone();
                    if let Some(spec) = s.spec.as_mut() {
                        let keep: BTreeMap<i32, Option<i32>> =
                            have.iter().map(|p| (p.port, p.node_port)).collect();
                        spec.ports = Some(
                            want.into_iter()
                                .map(|mut p| {
                                    p.node_port = keep.get(&p.port).copied().flatten();
                                    p
                                })
                                .collect(),
                        );
                    }
                    env.fire(
                        ApiRequest::new(Verb::Update, Kind::Service, infra::NAMESPACE, &name)
                            .with_body(Body::Object(Object::Service(s))),
                    );
                }
            }
        }
        if let Some(o) = inf.of(Kind::Deployment).get(infra::NAMESPACE, &name) {
            if let Object::Deployment(d) = &**o {
                let want: Vec<k8s_openapi::api::core::v1::ContainerPort> =
                    crate::object::decode(&infra::container_ports(gw)).unwrap_or_default();
                let mut d2 = d.clone();
                let Some(c) = d2
                    .spec
                    .as_mut()
                    .and_then(|s| s.template.spec.as_mut())
                    .and_then(|s| s.containers.iter_mut().find(|c| c.name == "envoy"))
                else {
                    return;
                };
                let have: Vec<i32> = c.ports.iter().flatten().map(|p| p.container_port).collect();
                let wanted: Vec<i32> = want.iter().map(|p| p.container_port).collect();
                if have != wanted {
                    c.ports = Some(want);
                    env.fire(
                        ApiRequest::new(Verb::Update, Kind::Deployment, infra::NAMESPACE, &name)
                            .with_body(Body::Object(Object::Deployment(d2))),
                    );
                }
            }
        }
    }

    fn proxy_state(inf: &Informers, gw: &Gateway) -> status::Infra {
        let name = gm::proxy_name(&gw.namespace, &gw.name);
        let mut addresses = Vec::new();
        if let Some(o) = inf.of(Kind::Service).get(infra::NAMESPACE, &name) {
            if let Object::Service(svc) = &**o {
                let ingress = svc
                    .status
                    .as_ref()
                    .and_then(|s| s.load_balancer.as_ref())
                    .and_then(|l| l.ingress.clone())
                    .unwrap_or_default();
                for i in &ingress {
                    if let Some(ip) = &i.ip {
                        addresses.push(("IPAddress".to_string(), ip.clone()));
                    } else if let Some(h) = &i.hostname {
                        if h == "localhost" {
                            addresses.push(("IPAddress".to_string(), "127.0.0.1".to_string()));
                        }
                    }
                }
                for i in &ingress {
                    if let (None, Some(h)) = (&i.ip, &i.hostname) {
                        addresses.push(("Hostname".to_string(), h.clone()));
                    }
                }
                if svc.spec.as_ref().and_then(|s| s.type_.as_deref()) == Some("ClusterIP") {
                    for ip in svc
                        .spec
                        .as_ref()
                        .and_then(|s| s.cluster_ips.clone())
                        .unwrap_or_default()
                    {
                        addresses.push(("IPAddress".to_string(), ip));
                    }
                }
            }
        }
        let replicas = inf
            .of(Kind::Deployment)
            .get(infra::NAMESPACE, &name)
            .and_then(|o| match &**o {
                Object::Deployment(d) => d
                    .status
                    .as_ref()
                    .map(|s| (s.available_replicas.unwrap_or(0), s.replicas.unwrap_or(0))),
                _ => None,
            });
        status::Infra {
            addresses,
            replicas,
        }
    }

    /// Writes the HTTPRoutes' `status.parents[]`; returns the routes attached per
    /// Gateway listener.
    fn route_statuses(
        env: &mut Env,
        inf: &Informers,
        rk: Kind,
        gws: &[Gateway],
        grants: &[Grant],
    ) -> Vec<Vec<usize>> {
        let ns_labels = |ns: &str| -> Vec<(String, String)> {
            inf.of(Kind::Namespace)
                .get("", ns)
                .map(|o| {
                    o.meta()
                        .labels
                        .clone()
                        .unwrap_or_default()
                        .into_iter()
                        .collect()
                })
                .unwrap_or_default()
        };
        let service = |ns: &str, name: &str| inf.of(Kind::Service).get(ns, name).is_some();
        let mut attached: Vec<Vec<usize>> =
            gws.iter().map(|g| vec![0; g.listeners.len()]).collect();
        for ro in customs(inf, rk) {
            let route = Route::read(&ro);
            let old = status::conditions_of(None);
            let old_parents: Vec<Value> = status_of(&ro)
                .and_then(|s| s.get("parents"))
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            let mut parents: Vec<Value> = old_parents
                .iter()
                .filter(|p| {
                    p.get("controllerName").and_then(Value::as_str) != Some(CONTROLLER_NAME)
                })
                .cloned()
                .collect();
            let mut ours = false;
            for p in &route.parents {
                let Some(gi) = gws.iter().position(|g| gm::names(p, g)) else {
                    continue;
                };
                ours = true;
                let prev: Vec<Value> = old_parents
                    .iter()
                    .find(|o| {
                        o.get("controllerName").and_then(Value::as_str) == Some(CONTROLLER_NAME)
                            && o.get("parentRef").and_then(|r| r.get("name")) == p.raw.get("name")
                            && o.get("parentRef").and_then(|r| r.get("sectionName"))
                                == p.raw.get("sectionName")
                    })
                    .map(|o| status::conditions_of(Some(o)))
                    .unwrap_or(old.clone());
                let st = Stamp {
                    now: env.now(),
                    generation: ro.metadata.generation.unwrap_or(1),
                    old: &prev,
                };
                let (entry, on) =
                    status::route_parent(&st, &route, p, &gws[gi], &ns_labels, &service, grants);
                for li in on {
                    attached[gi][li] += 1;
                }
                parents.push(entry);
            }
            if ours {
                Self::write_status(env, &ro, serde_json::json!({ "parents": parents }));
            }
        }
        attached
    }

    fn reconcile(&mut self, env: &mut Env, inf: &Informers) {
        let classes = self.classes(env, inf);
        let (Some(gk), Some(rk)) = (self.kind("gateways"), self.kind("httproutes")) else {
            return;
        };
        let gw_objs: Vec<CustomObject> = customs(inf, gk)
            .into_iter()
            .filter(|g| {
                let class = g
                    .content
                    .get("spec")
                    .and_then(|s| s.get("gatewayClassName"))
                    .and_then(Value::as_str)
                    .unwrap_or("");
                classes.contains(class)
            })
            .collect();
        let gws: Vec<Gateway> = gw_objs.iter().map(Gateway::read).collect();
        let grants: Vec<Grant> = self
            .kind("referencegrants")
            .map(|k| customs(inf, k).iter().map(Grant::read).collect())
            .unwrap_or_default();
        let mut attached = Self::route_statuses(env, inf, rk, &gws, &grants);
        if let Some(grpc) = self.kind("grpcroutes") {
            let more = Self::route_statuses(env, inf, grpc, &gws, &grants);
            for (a, m) in attached.iter_mut().zip(more) {
                for (x, y) in a.iter_mut().zip(m) {
                    *x += y;
                }
            }
        }
        for (gi, (obj, gw)) in gw_objs.iter().zip(&gws).enumerate() {
            self.create(env, inf, Kind::ServiceAccount, infra::service_account(gw));
            self.create(env, inf, Kind::Service, infra::service(gw));
            self.create(env, inf, Kind::Deployment, infra::deployment(gw));
            Self::update_ports(env, inf, gw);
            let old = status::conditions_of(status_of(obj));
            let old_listeners: Vec<Value> = status_of(obj)
                .and_then(|s| s.get("listeners"))
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            let st = Stamp {
                now: env.now(),
                generation: obj.metadata.generation.unwrap_or(1),
                old: &old,
            };
            let tls = Self::listener_tls(inf, gw, &grants);
            let s = status::gateway(
                &st,
                gw,
                &Self::proxy_state(inf, gw),
                &attached[gi],
                &old_listeners,
                &tls,
            );
            Self::write_status(env, obj, s);
        }
        self.remove_orphans(env, inf, &gws);
    }

    /// Each listener's TLS problem, checked against the Secrets the informer holds.
    fn listener_tls(inf: &Informers, gw: &Gateway, grants: &[Grant]) -> Vec<Option<Problem>> {
        let secret = |ns: &str, name: &str| match inf.of(Kind::Secret).get(ns, name) {
            Some(o) => match &**o {
                Object::Secret(s) => Some((**s).clone()),
                _ => None,
            },
            None => None,
        };
        gw.listeners
            .iter()
            .map(|l| gateway_tls::check(gw, l, &secret, grants).err())
            .collect()
    }

    /// Deletes the proxy objects of Gateways that are gone.
    fn remove_orphans(&mut self, env: &mut Env, inf: &Informers, gws: &[Gateway]) {
        let live: BTreeSet<(String, String)> = gws
            .iter()
            .map(|g| (g.namespace.clone(), g.name.clone()))
            .collect();
        for kind in [Kind::Deployment, Kind::Service, Kind::ServiceAccount] {
            for o in inf.of(kind).iter_ns(infra::NAMESPACE) {
                let m = o.meta();
                let Some(l) = m.labels.as_ref() else { continue };
                if l.get("app.kubernetes.io/managed-by").map(String::as_str)
                    != Some("envoy-gateway")
                {
                    continue;
                }
                let (Some(ns), Some(n)) = (l.get(OWNING_NAMESPACE), l.get(OWNING_NAME)) else {
                    continue;
                };
                if live.contains(&(ns.clone(), n.clone())) || m.deletion_timestamp.is_some() {
                    continue;
                }
                let name = m.name.clone().unwrap_or_default();
                self.creating.remove(&format!("{kind:?}/{name}"));
                env.fire(ApiRequest::new(Verb::Delete, kind, infra::NAMESPACE, &name));
            }
        }
    }
}

impl Controller for EnvoyGatewayController {
    fn name(&self) -> &'static str {
        "envoy-gateway"
    }

    fn component(&self) -> &'static str {
        "envoy-gateway"
    }

    fn watches(&self) -> &'static [Kind] {
        &[
            Kind::CustomResourceDefinition,
            Kind::Pod,
            Kind::Service,
            Kind::Deployment,
            Kind::ServiceAccount,
            Kind::Namespace,
            Kind::Secret,
        ]
    }

    fn custom_watches(&self, _inf: &Informers) -> Vec<Kind> {
        self.kinds
            .as_ref()
            .map(|(_, k)| k.clone())
            .unwrap_or_default()
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
            Kind::CustomResourceDefinition => {
                let crds: Vec<_> = inf
                    .of(Kind::CustomResourceDefinition)
                    .iter()
                    .cloned()
                    .collect();
                let print: Vec<(String, String)> = crds
                    .iter()
                    .filter(|o| o.name().ends_with(gm::GROUP))
                    .map(|o| {
                        (
                            o.name().to_string(),
                            o.meta().resource_version.clone().unwrap_or_default(),
                        )
                    })
                    .collect();
                if self.kinds.as_ref().is_some_and(|(p, _)| *p == print) {
                    return;
                }
                let served = crate::apiserver::crd::discovery(crds.iter().map(|o| &**o));
                let kinds: Vec<Kind> = served
                    .preferred()
                    .into_iter()
                    .filter(|k| k.info().group == gm::GROUP && PLURALS.contains(&k.info().plural))
                    .collect();
                self.kinds = Some((print, kinds));
                queue.add(KEY.to_string());
            }
            Kind::Pod | Kind::Deployment | Kind::ServiceAccount
                if change.object().namespace() != infra::NAMESPACE => {}
            _ => queue.add(KEY.to_string()),
        }
    }

    fn sync(&mut self, _key: &str, env: &mut Env, inf: &Informers) -> SyncResult {
        if !running(inf) {
            return Ok(Action::await_change());
        }
        let all_synced = self
            .kinds
            .as_ref()
            .map(|(_, k)| {
                k.iter()
                    .all(|k| inf.find(*k).is_some_and(|i| i.has_synced()))
            })
            .unwrap_or(false);
        if !all_synced {
            return Ok(Action::requeue(SECOND));
        }
        self.reconcile(env, inf);
        Ok(Action::await_change())
    }
}
