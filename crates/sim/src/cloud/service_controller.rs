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

use k8s_openapi::api::core::v1::Service;

use super::docker::Backend;
pub use super::service_lb::wants_load_balancer;
use super::service_lb::{
    backends, container_name, current_status, envoy_config, finalizers_patch, has_finalizer,
    needs_cleanup, needs_update, node_included, node_ip, patch, service, status_json,
};
use crate::api::{ApiRequest, ApiResponse, ReqId, Subresource};
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
pub(super) const TO_BE_DELETED_TAINT: &str = "ToBeDeletedByClusterAutoscaler";
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
