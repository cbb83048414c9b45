//! The service controller of k8s.io/cloud-provider (`controllers/service`) as
//! cloud-provider-kind runs it, with cloud-provider-kind's load balancer behind it
//! (`pkg/loadbalancer`): for every Service of type LoadBalancer without a
//! `loadBalancerClass` it records `EnsuringLoadBalancer`, adds the
//! `service.kubernetes.io/load-balancer-cleanup` finalizer, starts an envoy container on
//! the kind network forwarding each port to every node's NodePort, waits for envoy, records
//! `EnsuredLoadBalancer` and patches `status.loadBalancer.ingress` with the container's
//! address (`ipMode: Proxy`). A Service deleted or changed to another type loses its
//! container (`DeletingLoadBalancer`, `DeletedLoadBalancer`), finalizer and status.

use std::collections::BTreeMap;
use std::net::Ipv4Addr;
use std::sync::Arc;

use k8s_openapi::api::core::v1::{Node, Service};

use super::docker::{self, Backend, EnvoyConfig, Listener};
use crate::api::{ApiRequest, ApiResponse, Body, PatchType, ReqId, Subresource, Verb};
use crate::client::{Change, WorkQueue};
use crate::controllers::util::{key_of, split_key};
use crate::controllers::{Action, Controller, Env, Informers, SyncResult};
use crate::object::{Kind, Object};
use crate::time::{Time, SECOND};

/// `servicehelper.LoadBalancerCleanupFinalizer`.
pub const FINALIZER: &str = "service.kubernetes.io/load-balancer-cleanup";
/// `v1.LabelNodeExcludeBalancers`.
pub const EXCLUDE_LABEL: &str = "node.kubernetes.io/exclude-from-external-load-balancers";
/// The cluster autoscaler's `ToBeDeletedTaint`.
const TO_BE_DELETED_TAINT: &str = "ToBeDeletedByClusterAutoscaler";
/// kube-proxy's healthz port, envoy's health check with `externalTrafficPolicy: Cluster`.
pub const KUBE_PROXY_HEALTHZ: u16 = 10256;
/// From `docker run` to envoy answering `/ready` with `LIVE` (the image is cached).
pub const ENVOY_START: Time = 2 * SECOND;
/// The kind cluster's name (`kind create cluster` without `--name`).
pub const CLUSTER_NAME: &str = "kind";
/// The queue key that re-syncs every load balancer's nodes.
const NODES_KEY: &str = "\u{0}nodes";

/// The controller's memory: the last state of each Service it balanced (to clean up
/// after a deletion without finalizer), the containers still starting and the nodes
/// each load balancer was last given.
#[derive(Default)]
pub struct ServiceController {
    cache: BTreeMap<String, Arc<Object>>,
    starting: BTreeMap<String, Time>,
    synced_nodes: BTreeMap<String, Vec<Backend>>,
    /// Patches in flight → the Service key they are for: a failed one fails the sync,
    /// which is retried with the queue's backoff.
    sent: BTreeMap<ReqId, String>,
}

fn service(o: &Object) -> Option<&Service> {
    match o {
        Object::Service(s) => Some(s),
        _ => None,
    }
}

/// `wantsLoadBalancer`: type LoadBalancer and no `loadBalancerClass`.
pub fn wants_load_balancer(s: &Service) -> bool {
    s.spec.as_ref().is_some_and(|sp| {
        sp.type_.as_deref() == Some("LoadBalancer") && sp.load_balancer_class.is_none()
    })
}

fn has_finalizer(s: &Service) -> bool {
    s.metadata
        .finalizers
        .as_ref()
        .is_some_and(|f| f.iter().any(|x| x == FINALIZER))
}

/// `needsCleanup`: the finalizer is there and the Service is going or no longer a
/// LoadBalancer.
fn needs_cleanup(s: &Service) -> bool {
    has_finalizer(s)
        && (s.metadata.deletion_timestamp.is_some()
            || s.spec.as_ref().and_then(|sp| sp.type_.as_deref()) != Some("LoadBalancer"))
}

/// `needsUpdate`: a change that the load balancer has to follow.
fn needs_update(old: &Service, new: &Service) -> bool {
    if !wants_load_balancer(old) && !wants_load_balancer(new) {
        return false;
    }
    if wants_load_balancer(old) != wants_load_balancer(new) {
        return true;
    }
    let (o, n) = (
        old.spec.clone().unwrap_or_default(),
        new.spec.clone().unwrap_or_default(),
    );
    let ports = |s: &k8s_openapi::api::core::v1::ServiceSpec| {
        s.ports
            .iter()
            .flatten()
            .map(|p| (p.port, p.protocol.clone(), p.node_port))
            .collect::<Vec<_>>()
    };
    o.load_balancer_source_ranges != n.load_balancer_source_ranges
        || ports(&o) != ports(&n)
        || o.session_affinity != n.session_affinity
        || o.session_affinity_config != n.session_affinity_config
        || o.load_balancer_ip != n.load_balancer_ip
        || o.external_ips != n.external_ips
        || old.metadata.annotations != new.metadata.annotations
        || old.metadata.uid != new.metadata.uid
        || o.external_traffic_policy != n.external_traffic_policy
        || o.health_check_node_port != n.health_check_node_port
        || o.ip_families.as_ref().map(Vec::len) != n.ip_families.as_ref().map(Vec::len)
}

/// `stableNodeSetPredicates`: not being deleted, not excluded by label, not tainted for
/// deletion by the autoscaler. Readiness does not count (StableLoadBalancerNodeSet).
fn node_included(n: &Node) -> bool {
    let excluded = n
        .metadata
        .labels
        .as_ref()
        .and_then(|l| l.get(EXCLUDE_LABEL))
        .is_some_and(|v| parse_bool(v) != Some(false));
    let tainted = n
        .spec
        .as_ref()
        .and_then(|s| s.taints.as_ref())
        .is_some_and(|t| t.iter().any(|t| t.key == TO_BE_DELETED_TAINT));
    n.metadata.deletion_timestamp.is_none() && !excluded && !tainted
}

/// Go's `strconv.ParseBool`.
fn parse_bool(v: &str) -> Option<bool> {
    match v {
        "1" | "t" | "T" | "TRUE" | "true" | "True" => Some(true),
        "0" | "f" | "F" | "FALSE" | "false" | "False" => Some(false),
        _ => None,
    }
}

/// The nodes a load balancer sends to, with their InternalIPs, in name order.
fn backends(inf: &Informers) -> Vec<Backend> {
    let mut out: Vec<Backend> = inf
        .of(Kind::Node)
        .iter()
        .filter_map(|o| match &**o {
            Object::Node(n) if node_included(n) => Some(n),
            _ => None,
        })
        .filter_map(|n| {
            let ip = n
                .status
                .as_ref()?
                .addresses
                .as_ref()?
                .iter()
                .find(|a| a.type_ == "InternalIP")?
                .address
                .parse::<Ipv4Addr>()
                .ok()?;
            Some(Backend {
                node: n.metadata.name.clone().unwrap_or_default(),
                ip,
            })
        })
        .collect();
    out.sort_by(|a, b| a.node.cmp(&b.node));
    out
}

/// `generateConfig`: one listener per TCP/UDP port, every node as a backend.
fn envoy_config(s: &Service, nodes: Vec<Backend>) -> EnvoyConfig {
    let spec = s.spec.clone().unwrap_or_default();
    let local = spec.external_traffic_policy.as_deref() == Some("Local");
    let hc = if local {
        spec.health_check_node_port.unwrap_or(0) as u16
    } else {
        KUBE_PROXY_HEALTHZ
    };
    let listeners = spec
        .ports
        .iter()
        .flatten()
        .filter_map(|p| {
            let proto = p.protocol.clone().unwrap_or_else(|| "TCP".into());
            if proto != "TCP" && proto != "UDP" {
                return None;
            }
            Some(Listener {
                key: format!("IPv4_{}_{proto}", p.port),
                port: p.port as u16,
                protocol: proto,
                node_port: p.node_port.unwrap_or(0) as u16,
            })
        })
        .collect();
    EnvoyConfig {
        listeners,
        backends: nodes,
        health_check_port: hc,
        session_affinity: spec.session_affinity.unwrap_or_default(),
        source_ranges: spec
            .load_balancer_source_ranges
            .iter()
            .flatten()
            .filter_map(|r| crate::proxy::Cidr::parse(r.trim()))
            .collect(),
    }
}

/// `GetLoadBalancer`'s status: the container's IPv4 with ipMode Proxy and the ports.
fn status_json(s: &Service, ip: Ipv4Addr) -> serde_json::Value {
    let ports: Vec<serde_json::Value> = s
        .spec
        .as_ref()
        .and_then(|sp| sp.ports.clone())
        .unwrap_or_default()
        .iter()
        .map(|p| {
            serde_json::json!({"port": p.port, "protocol": p.protocol.clone().unwrap_or_else(|| "TCP".into())})
        })
        .collect();
    serde_json::json!({"ingress": [{"ip": ip.to_string(), "ipMode": "Proxy", "ports": ports}]})
}

fn container_name(s: &Service) -> String {
    docker::load_balancer_name(
        CLUSTER_NAME,
        s.metadata.namespace.as_deref().unwrap_or(""),
        s.metadata.name.as_deref().unwrap_or(""),
    )
}

fn patch(s: &Service, sub: Option<Subresource>, body: serde_json::Value) -> ApiRequest {
    let ns = s.metadata.namespace.as_deref().unwrap_or("");
    let name = s.metadata.name.as_deref().unwrap_or("");
    let r = ApiRequest::new(Verb::Patch, Kind::Service, ns, name)
        .with_body(Body::Patch(PatchType::Merge, body));
    match sub {
        Some(x) => r.with_subresource(x),
        None => r,
    }
}

fn finalizers_patch(s: &Service, add: bool) -> ApiRequest {
    let mut f: Vec<String> = s.metadata.finalizers.clone().unwrap_or_default();
    f.retain(|x| x != FINALIZER);
    if add {
        f.push(FINALIZER.to_string());
    }
    // `removeString` leaves nil, which the patch deletes rather than storing `[]`.
    let value = if f.is_empty() {
        serde_json::Value::Null
    } else {
        serde_json::json!(f)
    };
    patch(
        s,
        None,
        serde_json::json!({"metadata": {"finalizers": value}}),
    )
}

fn current_status(s: &Service) -> serde_json::Value {
    let ingress = s
        .status
        .as_ref()
        .and_then(|st| st.load_balancer.as_ref())
        .and_then(|lb| lb.ingress.clone())
        .unwrap_or_default();
    if ingress.is_empty() {
        return serde_json::json!({});
    }
    let mut v = serde_json::to_value(s.status.clone().unwrap_or_default().load_balancer)
        .unwrap_or_default();
    if let Some(m) = v.as_object_mut() {
        m.retain(|k, _| k == "ingress");
    }
    v
}

impl ServiceController {
    fn send(&mut self, env: &mut Env, key: &str, req: ApiRequest) {
        let id = env.send(req);
        self.sent.insert(id, key.to_string());
    }

    /// `syncLoadBalancerIfNeeded`'s delete branch.
    fn delete_balancer(&mut self, key: &str, obj: &Arc<Object>, s: &Service, env: &mut Env) {
        let name = container_name(s);
        let existed = env.docker().is_some_and(|d| d.get(&name).is_some());
        if existed {
            env.event(
                obj,
                "Normal",
                "DeletingLoadBalancer",
                "Deleting load balancer",
            );
            if let Some(d) = env.docker() {
                d.remove(&name);
            }
        }
        if has_finalizer(s) {
            self.send(env, key, finalizers_patch(s, false));
        }
        env.event(
            obj,
            "Normal",
            "DeletedLoadBalancer",
            "Deleted load balancer",
        );
        if s.metadata.deletion_timestamp.is_none() && current_status(s) != serde_json::json!({}) {
            self.send(
                env,
                key,
                patch(
                    s,
                    Some(Subresource::Status),
                    serde_json::json!({"status": {"loadBalancer": {"ingress": null}}}),
                ),
            );
        }
        self.cache.remove(key);
        self.starting.remove(key);
        self.synced_nodes.remove(key);
    }

    /// `processLoadBalancerDelete`: the Service is gone (deleted without finalizer, or
    /// re-created under the same name).
    fn forget(&mut self, key: &str, env: &mut Env) {
        self.starting.remove(key);
        self.synced_nodes.remove(key);
        let Some(old) = self.cache.remove(key) else {
            return;
        };
        let Some(s) = service(&old) else { return };
        if !wants_load_balancer(s) {
            return;
        }
        env.event(
            &old,
            "Normal",
            "DeletingLoadBalancer",
            "Deleting load balancer",
        );
        if let Some(d) = env.docker() {
            d.remove(&container_name(s));
        }
        env.event(
            &old,
            "Normal",
            "DeletedLoadBalancer",
            "Deleted load balancer",
        );
    }

    /// `syncLoadBalancerIfNeeded`'s ensure branch, split where envoy is waited for.
    fn ensure_balancer(
        &mut self,
        key: &str,
        obj: &Arc<Object>,
        s: &Service,
        env: &mut Env,
        inf: &Informers,
    ) -> Action {
        let now = env.now();
        let name = container_name(s);
        if let Some(&ready_at) = self.starting.get(key) {
            if now < ready_at {
                return Action::requeue(ready_at - now);
            }
            self.starting.remove(key);
            return self.ensured(key, obj, s, &name, env);
        }
        env.event(
            obj,
            "Normal",
            "EnsuringLoadBalancer",
            "Ensuring load balancer",
        );
        if !has_finalizer(s) {
            self.send(env, key, finalizers_patch(s, true));
        }
        let nodes = backends(inf);
        if nodes.is_empty() {
            env.event(
                obj,
                "Warning",
                "UnAvailableLoadBalancer",
                "There are no available nodes for LoadBalancer",
            );
        }
        self.synced_nodes.insert(key.to_string(), nodes.clone());
        let requested = s
            .spec
            .as_ref()
            .and_then(|sp| sp.load_balancer_ip.as_deref())
            .filter(|ip| !ip.is_empty())
            .map(|ip| ip.parse::<Ipv4Addr>().map_err(|_| ip.to_string()));
        let simple = format!("{CLUSTER_NAME}/{key}");
        let Some(d) = env.docker() else {
            return Action::await_change();
        };
        let created = match requested {
            Some(Err(bad)) => Err(format!(
                "Error response from daemon: invalid IPv4 address: {bad}"
            )),
            Some(Ok(ip)) => d.create(&name, &simple, Some(ip), now + ENVOY_START),
            None => d.create(&name, &simple, None, now + ENVOY_START),
        };
        if let Err(e) = created {
            let msg = format!("Error syncing load balancer: failed to ensure load balancer: failed to create continers {name}: {e}");
            env.event(obj, "Warning", "SyncLoadBalancerFailed", &msg);
            return Action::requeue(5 * SECOND);
        }
        d.configure(&name, envoy_config(s, nodes));
        let ready_at = d.get(&name).map_or(now, |c| c.ready_at);
        if ready_at > now {
            self.starting.insert(key.to_string(), ready_at);
            return Action::requeue(ready_at - now);
        }
        self.ensured(key, obj, s, &name, env)
    }

    fn ensured(
        &mut self,
        key: &str,
        obj: &Arc<Object>,
        s: &Service,
        name: &str,
        env: &mut Env,
    ) -> Action {
        let Some(ip) = env.docker().and_then(|d| d.get(name)).map(|c| c.ip) else {
            return Action::await_change();
        };
        env.event(
            obj,
            "Normal",
            "EnsuredLoadBalancer",
            "Ensured load balancer",
        );
        let want = status_json(s, ip);
        if current_status(s) != want {
            self.send(
                env,
                key,
                patch(
                    s,
                    Some(Subresource::Status),
                    serde_json::json!({"status": {"loadBalancer": want}}),
                ),
            );
        }
        Action::await_change()
    }

    /// `nodeSyncService`: a load balancer whose node set changed gets the new one.
    fn sync_nodes(&mut self, env: &mut Env, inf: &Informers) {
        let nodes = backends(inf);
        let keys: Vec<String> = self.synced_nodes.keys().cloned().collect();
        for key in keys {
            if self.synced_nodes.get(&key) == Some(&nodes) {
                continue;
            }
            let (ns, n) = split_key(&key);
            let Some(obj) = inf.of(Kind::Service).get(ns, n).cloned() else {
                continue;
            };
            let Some(s) = service(&obj) else { continue };
            if !wants_load_balancer(s) {
                continue;
            }
            let name = container_name(s);
            let Some(d) = env.docker() else { return };
            if !d.configure(&name, envoy_config(s, nodes.clone())) {
                continue;
            }
            self.synced_nodes.insert(key, nodes.clone());
            if nodes.is_empty() {
                env.event(
                    &obj,
                    "Warning",
                    "UnAvailableLoadBalancer",
                    "There are no available nodes for LoadBalancer",
                );
            } else {
                env.event(
                    &obj,
                    "Normal",
                    "UpdatedLoadBalancer",
                    "Updated load balancer with new hosts",
                );
            }
        }
    }
}

impl Controller for ServiceController {
    fn name(&self) -> &'static str {
        "service-lb-controller"
    }

    fn component(&self) -> &'static str {
        "service-controller"
    }

    fn watches(&self) -> &'static [Kind] {
        &[Kind::Service, Kind::Node]
    }

    fn on_change(
        &mut self,
        kind: Kind,
        change: &Change,
        queue: &mut WorkQueue<String>,
        _inf: &Informers,
        _now: Time,
    ) {
        match kind {
            Kind::Service => {
                let Some(new) = service(change.object()) else {
                    return;
                };
                let wanted = match change {
                    Change::Added(_) => wants_load_balancer(new) || needs_cleanup(new),
                    Change::Updated(old, _) => {
                        service(old).is_some_and(|old| needs_update(old, new)) || needs_cleanup(new)
                    }
                    Change::Deleted(_) => true,
                };
                if wanted {
                    queue.add(key_of(change.object()));
                }
            }
            Kind::Node => {
                let included = |o: Option<&Arc<Object>>| match o.map(|o| &**o) {
                    Some(Object::Node(n)) => node_included(n),
                    _ => false,
                };
                let relevant = match change {
                    Change::Updated(old, new) => {
                        included(Some(old)) != included(Some(new)) || node_ip(old) != node_ip(new)
                    }
                    _ => true,
                };
                if relevant {
                    queue.add(NODES_KEY.to_string());
                }
            }
            _ => {}
        }
    }

    fn on_response(&mut self, id: ReqId, resp: &ApiResponse, env: &mut Env, _inf: &Informers) {
        let Some(key) = self.sent.remove(&id) else {
            return;
        };
        // A Service gone meanwhile needs nothing more (upstream ignores NotFound).
        if matches!(&resp.result, Err(st) if st.code != 404) {
            env.retry(key);
        }
    }

    fn sync(&mut self, key: &str, env: &mut Env, inf: &Informers) -> SyncResult {
        if key == NODES_KEY {
            self.sync_nodes(env, inf);
            return Ok(Action::await_change());
        }
        let (ns, name) = split_key(key);
        let Some(obj) = inf.of(Kind::Service).get(ns, name).cloned() else {
            self.forget(key, env);
            return Ok(Action::await_change());
        };
        let Some(s) = service(&obj) else {
            return Ok(Action::await_change());
        };
        let recreated = self
            .cache
            .get(key)
            .and_then(|c| c.meta().uid.clone())
            .is_some_and(|uid| Some(uid) != s.metadata.uid);
        if recreated {
            self.forget(key, env);
        }
        self.cache.insert(key.to_string(), obj.clone());
        if !wants_load_balancer(s) || needs_cleanup(s) {
            self.delete_balancer(key, &obj, s, env);
            return Ok(Action::await_change());
        }
        Ok(self.ensure_balancer(key, &obj, s, env, inf))
    }
}

fn node_ip(o: &Arc<Object>) -> Option<String> {
    match &**o {
        Object::Node(n) => n
            .status
            .as_ref()?
            .addresses
            .as_ref()?
            .iter()
            .find(|a| a.type_ == "InternalIP")
            .map(|a| a.address.clone()),
        _ => None,
    }
}
