//! The Services the diagram draws: each user Service with its type, addresses and ports as
//! `kubectl get svc` prints them, and its endpoints as its EndpointSlices list them (the
//! pod, its node, and whether kube-proxy sends it traffic).

use std::collections::BTreeMap;

use crate::kubectl::printers::{service_external_ip, service_ports};
use crate::object::{Kind, Object};
use crate::world::World;

use super::stored;

/// The label that ties a slice to its Service.
const SERVICE_NAME: &str = "kubernetes.io/service-name";

/// One endpoint of a Service, as an EndpointSlice lists it.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct EndpointView {
    /// The pod behind it (`namespace/name`), when the slice names one.
    pub pod: Option<String>,
    /// The node it runs on.
    pub node: String,
    /// Its address.
    pub ip: String,
    /// `conditions.ready`: kube-proxy sends it new connections.
    pub ready: bool,
    /// `conditions.terminating`.
    pub terminating: bool,
}

/// A Service as the diagram draws it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServiceView {
    pub namespace: String,
    pub name: String,
    /// `ClusterIP`, `NodePort`, `LoadBalancer`, `ExternalName`.
    pub type_: String,
    /// The CLUSTER-IP column (`None` for a headless Service).
    pub cluster_ip: String,
    /// The EXTERNAL-IP column.
    pub external_ip: String,
    /// The PORT(S) column.
    pub ports: String,
    /// Whether it has a selector (without one, its endpoints are whatever a user wrote).
    pub selects: bool,
    /// Its endpoints, each address once, ordered by pod then address.
    pub endpoints: Vec<EndpointView>,
}

impl ServiceView {
    /// `namespace/name`.
    pub fn key(&self) -> String {
        format!("{}/{}", self.namespace, self.name)
    }

    /// How many endpoints are ready.
    pub fn ready(&self) -> usize {
        self.endpoints.iter().filter(|e| e.ready).count()
    }
}

/// Every endpoint the slices list, per `namespace/service`.
fn endpoints_by_service(world: &World) -> BTreeMap<(String, String), Vec<EndpointView>> {
    let mut out: BTreeMap<(String, String), BTreeMap<String, EndpointView>> = BTreeMap::new();
    for obj in stored(world, Kind::EndpointSlice) {
        let Object::EndpointSlice(slice) = obj.as_ref() else {
            continue;
        };
        let ns = slice.metadata.namespace.clone().unwrap_or_default();
        let Some(svc) = slice
            .metadata
            .labels
            .as_ref()
            .and_then(|l| l.get(SERVICE_NAME))
        else {
            continue;
        };
        let set = out.entry((ns, svc.clone())).or_default();
        for ep in &slice.endpoints {
            let cond = ep.conditions.clone().unwrap_or_default();
            let pod = ep.target_ref.as_ref().and_then(|r| {
                let name = r.name.clone()?;
                Some(format!(
                    "{}/{name}",
                    r.namespace
                        .clone()
                        .or_else(|| slice.metadata.namespace.clone())
                        .unwrap_or_default()
                ))
            });
            let terminating = cond.terminating == Some(true);
            for ip in &ep.addresses {
                set.entry(ip.clone()).or_insert_with(|| EndpointView {
                    pod: pod.clone(),
                    node: ep.node_name.clone().unwrap_or_default(),
                    ip: ip.clone(),
                    // As the EndpointSlice API says: an unknown ready is ready, except
                    // while terminating.
                    ready: cond.ready.unwrap_or(!terminating),
                    terminating,
                });
            }
        }
    }
    out.into_iter()
        .map(|(k, set)| {
            let mut eps: Vec<EndpointView> = set.into_values().collect();
            eps.sort();
            (k, eps)
        })
        .collect()
}

/// The user's Services (the cluster's own namespaces and the `kubernetes` Service left
/// out), ordered by namespace and name.
pub fn services(world: &World) -> Vec<ServiceView> {
    let mut eps = endpoints_by_service(world);
    stored(world, Kind::Service)
        .iter()
        .filter_map(|o| match o.as_ref() {
            Object::Service(s) => Some(s),
            _ => None,
        })
        .filter_map(|s| {
            let ns = s.metadata.namespace.clone().unwrap_or_default();
            let name = s.metadata.name.clone().unwrap_or_default();
            if super::is_system_namespace(&ns) || (ns == "default" && name == "kubernetes") {
                return None;
            }
            let spec = s.spec.clone().unwrap_or_default();
            Some(ServiceView {
                endpoints: eps.remove(&(ns.clone(), name.clone())).unwrap_or_default(),
                namespace: ns,
                name,
                type_: spec.type_.clone().unwrap_or_default(),
                cluster_ip: spec.cluster_ip.clone().unwrap_or_else(|| "<none>".into()),
                external_ip: service_external_ip(s),
                ports: service_ports(s),
                selects: spec.selector.as_ref().is_some_and(|m| !m.is_empty()),
            })
        })
        .collect()
}

/// The endpoints' pods of the Service `key` (`namespace/name`), for the diagram to mark.
pub fn endpoint_pods(services: &[ServiceView], key: &str) -> Vec<(String, bool)> {
    services
        .iter()
        .filter(|s| s.key() == key)
        .flat_map(|s| &s.endpoints)
        .filter_map(|e| Some((e.pod.clone()?, e.ready)))
        .collect()
}

#[cfg(test)]
#[path = "view_services_tests.rs"]
mod tests;
