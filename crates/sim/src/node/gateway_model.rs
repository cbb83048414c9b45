//! Gateway API objects as Envoy Gateway reads them (`GatewayClass`, `Gateway`,
//! `HTTPRoute`, `ReferenceGrant` as JSON custom objects), and which route attaches to
//! which listener: the parentRef's sectionName and port, the listener's allowedRoutes,
//! and the intersection of the route's and the listener's hostnames. Shared by the
//! controller (statuses) and envoy on the data plane (routing), so both agree.

use serde_json::Value;

use crate::object::{CustomObject, Object};

/// Envoy Gateway's controller name (its quickstart's GatewayClass `eg`).
pub const CONTROLLER_NAME: &str = "gateway.envoyproxy.io/gatewayclass-controller";
/// The Gateway API group.
pub const GROUP: &str = "gateway.networking.k8s.io";

fn s<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

fn opt(v: &Value, key: &str) -> Option<String> {
    v.get(key).and_then(Value::as_str).map(String::from)
}

fn list<'a>(v: &'a Value, key: &str) -> &'a [Value] {
    v.get(key)
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

fn port(v: &Value, key: &str) -> Option<u16> {
    v.get(key)
        .and_then(Value::as_u64)
        .and_then(|p| u16::try_from(p).ok())
}

/// A custom object of `kind` in the Gateway API group.
pub fn is_kind<'a>(o: &'a Object, kind: &str) -> Option<&'a CustomObject> {
    match o {
        Object::Custom(c) if c.kind.info().group == GROUP && c.kind.info().kind == kind => Some(c),
        _ => None,
    }
}

/// Which namespaces a listener admits routes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum From {
    /// The Gateway's own namespace (the default).
    Same,
    /// Every namespace.
    All,
    /// Namespaces whose labels match (kubeloop reads `matchLabels` only).
    Selector(Vec<(String, String)>),
}

/// One listener of a Gateway.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Listener {
    /// `name` (the parentRef's sectionName).
    pub name: String,
    /// `port`.
    pub port: u16,
    /// `protocol`.
    pub protocol: String,
    /// `hostname`, if any.
    pub hostname: Option<String>,
    /// `allowedRoutes.namespaces.from`.
    pub from: From,
    /// `allowedRoutes.kinds[].kind` (empty: the protocol's route kinds).
    pub kinds: Vec<String>,
    /// `tls` as written (`node::gateway_tls` reads it).
    pub tls: Option<Value>,
}

/// A Gateway.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Gateway {
    /// Namespace.
    pub namespace: String,
    /// Name.
    pub name: String,
    /// `spec.gatewayClassName`.
    pub class: String,
    /// `spec.listeners`.
    pub listeners: Vec<Listener>,
}

impl Gateway {
    /// Reads a Gateway object.
    pub fn read(o: &CustomObject) -> Gateway {
        let spec = o.content.get("spec").cloned().unwrap_or(Value::Null);
        let listeners = list(&spec, "listeners")
            .iter()
            .map(|l| {
                let ar = l.get("allowedRoutes").cloned().unwrap_or(Value::Null);
                let ns = ar.get("namespaces").cloned().unwrap_or(Value::Null);
                let from = match s(&ns, "from") {
                    "All" => From::All,
                    "Selector" => From::Selector(
                        ns.get("selector")
                            .and_then(|x| x.get("matchLabels"))
                            .and_then(Value::as_object)
                            .map(|m| {
                                m.iter()
                                    .map(|(k, v)| (k.clone(), v.as_str().unwrap_or("").to_string()))
                                    .collect()
                            })
                            .unwrap_or_default(),
                    ),
                    _ => From::Same,
                };
                Listener {
                    name: s(l, "name").to_string(),
                    port: port(l, "port").unwrap_or(0),
                    protocol: s(l, "protocol").to_string(),
                    hostname: opt(l, "hostname").filter(|h| !h.is_empty()),
                    from,
                    kinds: list(&ar, "kinds")
                        .iter()
                        .map(|k| s(k, "kind").to_string())
                        .collect(),
                    tls: l.get("tls").cloned(),
                }
            })
            .collect();
        Gateway {
            namespace: o.metadata.namespace.clone().unwrap_or_default(),
            name: o.metadata.name.clone().unwrap_or_default(),
            class: s(&spec, "gatewayClassName").to_string(),
            listeners,
        }
    }
}

/// A route's `parentRefs[]` entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParentRef {
    /// `group` (defaulted).
    pub group: String,
    /// `kind` (defaulted).
    pub kind: String,
    /// `namespace`, defaulted to the route's.
    pub namespace: String,
    /// `name`.
    pub name: String,
    /// `sectionName`.
    pub section: Option<String>,
    /// `port`.
    pub port: Option<u16>,
    /// The entry as written (echoed in `status.parents[].parentRef`).
    pub raw: Value,
}

/// A header or query parameter match.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ValueMatch {
    /// `Exact` or `RegularExpression`.
    pub regex: bool,
    /// `name`.
    pub name: String,
    /// `value`.
    pub value: String,
}

/// The path match type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum PathType {
    /// `Exact`.
    Exact,
    /// `RegularExpression` (Envoy's `safe_regex`, a full match).
    Regex,
    /// `PathPrefix`, by whole path elements.
    Prefix,
}

/// One `matches[]` entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Match {
    /// The path match.
    pub path: (PathType, String),
    /// `headers`.
    pub headers: Vec<ValueMatch>,
    /// `method`.
    pub method: Option<String>,
    /// `queryParams`.
    pub query: Vec<ValueMatch>,
}

/// One `backendRefs[]` entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BackendRef {
    /// `group` ("" is the core group).
    pub group: String,
    /// `kind`.
    pub kind: String,
    /// `name`.
    pub name: String,
    /// `namespace`, defaulted to the route's.
    pub namespace: String,
    /// `port`.
    pub port: Option<u16>,
    /// `weight` (default 1).
    pub weight: u64,
}

/// One rule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rule {
    /// `matches` (defaulted to `PathPrefix /`).
    pub matches: Vec<Match>,
    /// `backendRefs`.
    pub backends: Vec<BackendRef>,
}

/// An HTTPRoute or a GRPCRoute.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Route {
    /// `HTTPRoute` or `GRPCRoute`.
    pub kind: String,
    /// Namespace.
    pub namespace: String,
    /// Name.
    pub name: String,
    /// `metadata.creationTimestamp` (ties go to the oldest).
    pub created: String,
    /// `spec.hostnames`.
    pub hostnames: Vec<String>,
    /// `spec.parentRefs`.
    pub parents: Vec<ParentRef>,
    /// `spec.rules`.
    pub rules: Vec<Rule>,
}

fn value_matches(v: &[Value]) -> Vec<ValueMatch> {
    v.iter()
        .map(|m| ValueMatch {
            regex: s(m, "type") == "RegularExpression",
            name: s(m, "name").to_string(),
            value: s(m, "value").to_string(),
        })
        .collect()
}

impl Route {
    /// Reads an HTTPRoute or GRPCRoute object.
    pub fn read(o: &CustomObject) -> Route {
        let kind = o.kind.info().kind.to_string();
        let grpc = kind == "GRPCRoute";
        let ns = o.metadata.namespace.clone().unwrap_or_default();
        let spec = o.content.get("spec").cloned().unwrap_or(Value::Null);
        let parents = list(&spec, "parentRefs")
            .iter()
            .map(|p| ParentRef {
                group: opt(p, "group").unwrap_or_else(|| GROUP.into()),
                kind: opt(p, "kind").unwrap_or_else(|| "Gateway".into()),
                namespace: opt(p, "namespace").unwrap_or_else(|| ns.clone()),
                name: s(p, "name").to_string(),
                section: opt(p, "sectionName"),
                port: port(p, "port"),
                raw: p.clone(),
            })
            .collect();
        let default_match = || Match {
            path: (PathType::Prefix, "/".into()),
            headers: Vec::new(),
            method: None,
            query: Vec::new(),
        };
        let rules = list(&spec, "rules")
            .iter()
            .map(|r| {
                let mut matches: Vec<Match> = list(r, "matches")
                    .iter()
                    .map(|m| {
                        if grpc {
                            let headers = value_matches(list(m, "headers"));
                            return crate::node::grpc_route::read_match(m, headers);
                        }
                        let path = m.get("path").cloned().unwrap_or(Value::Null);
                        let ty = match s(&path, "type") {
                            "Exact" => PathType::Exact,
                            "RegularExpression" => PathType::Regex,
                            _ => PathType::Prefix,
                        };
                        Match {
                            path: (ty, opt(&path, "value").unwrap_or_else(|| "/".into())),
                            headers: value_matches(list(m, "headers")),
                            method: opt(m, "method"),
                            query: value_matches(list(m, "queryParams")),
                        }
                    })
                    .collect();
                if matches.is_empty() {
                    matches.push(default_match());
                }
                let backends = list(r, "backendRefs")
                    .iter()
                    .map(|b| BackendRef {
                        group: opt(b, "group").unwrap_or_default(),
                        kind: opt(b, "kind").unwrap_or_else(|| "Service".into()),
                        name: s(b, "name").to_string(),
                        namespace: opt(b, "namespace").unwrap_or_else(|| ns.clone()),
                        port: port(b, "port"),
                        weight: b.get("weight").and_then(Value::as_u64).unwrap_or(1),
                    })
                    .collect();
                Rule { matches, backends }
            })
            .collect();
        let mut rules: Vec<Rule> = rules;
        if rules.is_empty() {
            rules.push(Rule {
                matches: vec![default_match()],
                backends: Vec::new(),
            });
        }
        Route {
            kind,
            namespace: ns,
            name: o.metadata.name.clone().unwrap_or_default(),
            created: o
                .metadata
                .creation_timestamp
                .as_ref()
                .map(|t| t.0.to_string())
                .unwrap_or_default(),
            hostnames: list(&spec, "hostnames")
                .iter()
                .filter_map(|h| h.as_str().map(String::from))
                .collect(),
            parents,
            rules,
        }
    }
}

/// Whether `host` (exact or `*.` wildcard) matches the request's host name.
pub fn host_matches(pattern: &str, host: &str) -> bool {
    match pattern.strip_prefix('*') {
        Some(suffix) => host.len() > suffix.len() && host.ends_with(suffix),
        None => pattern == host,
    }
}

/// The intersection of a route hostname and a listener hostname: the more specific of
/// the two when one matches the other (Gateway API's hostname rules).
pub fn intersect(route: &str, listener: Option<&str>) -> Option<String> {
    let Some(l) = listener else {
        return Some(route.to_string());
    };
    if route == l {
        return Some(route.to_string());
    }
    if host_matches(l, route.trim_start_matches("*.")) && !route.starts_with('*') {
        return Some(route.to_string());
    }
    if l.starts_with('*') && route.starts_with('*') {
        if route.ends_with(&l[1..]) {
            return Some(route.to_string());
        }
        if l.ends_with(&route[1..]) {
            return Some(l.to_string());
        }
        return None;
    }
    if route.starts_with('*') && host_matches(route, l) {
        return Some(l.to_string());
    }
    None
}

/// The hostnames a route serves on a listener: `None` when they do not intersect; an
/// empty list means any host.
pub fn effective_hostnames(route: &Route, l: &Listener) -> Option<Vec<String>> {
    if route.hostnames.is_empty() {
        return Some(l.hostname.iter().cloned().collect());
    }
    let v: Vec<String> = route
        .hostnames
        .iter()
        .filter_map(|h| intersect(h, l.hostname.as_deref()))
        .collect();
    (!v.is_empty()).then_some(v)
}

/// Why a route does not attach to a parent (the `Accepted` condition's reasons).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NotAccepted {
    /// No listener has the parentRef's sectionName/port.
    NoMatchingParent,
    /// The listeners' allowedRoutes refuse the route's namespace or kind.
    NotAllowedByListeners,
    /// No hostname of the route intersects the listeners'.
    NoMatchingListenerHostname,
}

impl NotAccepted {
    /// The reason.
    pub fn reason(self) -> &'static str {
        match self {
            NotAccepted::NoMatchingParent => "NoMatchingParent",
            NotAccepted::NotAllowedByListeners => "NotAllowedByListeners",
            NotAccepted::NoMatchingListenerHostname => "NoMatchingListenerHostname",
        }
    }

    /// Envoy Gateway's message.
    pub fn message(self) -> &'static str {
        match self {
            NotAccepted::NoMatchingParent => "No listeners match this parent ref",
            NotAccepted::NotAllowedByListeners => {
                "No listeners included by this parent ref allowed this attachment."
            }
            NotAccepted::NoMatchingListenerHostname => {
                "There were no hostname intersections between the HTTPRoute and this parent ref's Listener(s)."
            }
        }
    }
}

fn allows(
    l: &Listener,
    gw: &Gateway,
    route: &Route,
    ns_labels: &dyn Fn(&str) -> Vec<(String, String)>,
) -> bool {
    let route_ns = route.namespace.as_str();
    let ns_ok = match &l.from {
        From::Same => route_ns == gw.namespace,
        From::All => true,
        From::Selector(want) => {
            let have = ns_labels(route_ns);
            want.iter().all(|kv| have.contains(kv))
        }
    };
    let kind_ok = if l.kinds.is_empty() {
        l.protocol == "HTTP" || l.protocol == "HTTPS"
    } else {
        l.kinds.iter().any(|k| *k == route.kind)
    };
    ns_ok && kind_ok
}

/// The listeners (indexes) of `gw` that `route` attaches to through `p`, or why none.
pub fn attach(
    route: &Route,
    p: &ParentRef,
    gw: &Gateway,
    ns_labels: &dyn Fn(&str) -> Vec<(String, String)>,
) -> Result<Vec<usize>, NotAccepted> {
    let selected: Vec<usize> = gw
        .listeners
        .iter()
        .enumerate()
        .filter(|(_, l)| p.section.as_ref().is_none_or(|s| *s == l.name))
        .filter(|(_, l)| p.port.is_none_or(|port| port == l.port))
        .map(|(i, _)| i)
        .collect();
    if selected.is_empty() {
        return Err(NotAccepted::NoMatchingParent);
    }
    let allowed: Vec<usize> = selected
        .into_iter()
        .filter(|i| allows(&gw.listeners[*i], gw, route, ns_labels))
        .collect();
    if allowed.is_empty() {
        return Err(NotAccepted::NotAllowedByListeners);
    }
    let hosts: Vec<usize> = allowed
        .into_iter()
        .filter(|i| effective_hostnames(route, &gw.listeners[*i]).is_some())
        .collect();
    if hosts.is_empty() {
        return Err(NotAccepted::NoMatchingListenerHostname);
    }
    Ok(hosts)
}

/// A ReferenceGrant: who in other namespaces may refer to what in its own.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Grant {
    /// Its namespace (the referents').
    pub namespace: String,
    /// `spec.from[]`: (group, kind, namespace).
    pub from: Vec<(String, String, String)>,
    /// `spec.to[]`: (group, kind, name or "" for any).
    pub to: Vec<(String, String, String)>,
}

impl Grant {
    /// Reads a ReferenceGrant object.
    pub fn read(o: &CustomObject) -> Grant {
        let spec = o.content.get("spec").cloned().unwrap_or(Value::Null);
        Grant {
            namespace: o.metadata.namespace.clone().unwrap_or_default(),
            from: list(&spec, "from")
                .iter()
                .map(|f| {
                    (
                        s(f, "group").into(),
                        s(f, "kind").into(),
                        s(f, "namespace").into(),
                    )
                })
                .collect(),
            to: list(&spec, "to")
                .iter()
                .map(|t| {
                    (
                        s(t, "group").into(),
                        s(t, "kind").into(),
                        s(t, "name").into(),
                    )
                })
                .collect(),
        }
    }

    fn permits(&self, route_ns: &str, b: &BackendRef) -> bool {
        self.namespace == b.namespace
            && self
                .from
                .iter()
                .any(|(g, k, ns)| g == GROUP && k == "HTTPRoute" && ns == route_ns)
            && self
                .to
                .iter()
                .any(|(g, k, n)| g.is_empty() && k == "Service" && (n.is_empty() || *n == b.name))
    }
}

/// Why a backendRef cannot be used (the `ResolvedRefs` reason and Envoy Gateway's
/// message), or `None` when it resolves. `service` tells whether a Service exists.
pub fn backend_problem(
    route_ns: &str,
    rule: usize,
    index: usize,
    b: &BackendRef,
    service: &dyn Fn(&str, &str) -> bool,
    grants: &[Grant],
) -> Option<(&'static str, String)> {
    let at = format!("Failed to process route rule {rule} backendRef {index}");
    if !b.group.is_empty() || b.kind != "Service" {
        let gk = if b.group.is_empty() {
            b.kind.clone()
        } else {
            format!("{}.{}", b.kind, b.group)
        };
        return Some(("InvalidKind", format!("{at}: {gk} is not supported.")));
    }
    if b.namespace != route_ns && !grants.iter().any(|g| g.permits(route_ns, b)) {
        return Some((
            "RefNotPermitted",
            format!(
                "{at}: backendRef {}/{} not permitted by any ReferenceGrant.",
                b.namespace, b.name
            ),
        ));
    }
    if !service(&b.namespace, &b.name) {
        return Some((
            "BackendNotFound",
            format!("{at}: service {}/{} not found.", b.namespace, b.name),
        ));
    }
    None
}

/// Whether the parentRef names `gw`.
pub fn names(p: &ParentRef, gw: &Gateway) -> bool {
    p.group == GROUP && p.kind == "Gateway" && p.namespace == gw.namespace && p.name == gw.name
}

/// Envoy Gateway's name for a Gateway's proxy Deployment, Service and ServiceAccount:
/// `envoy-<namespace>-<name>-<first 8 hex of sha256("namespace/name")>`.
pub fn proxy_name(namespace: &str, name: &str) -> String {
    use sha2::{Digest, Sha256};
    let key = format!("{namespace}/{name}");
    let hash = Sha256::digest(key.as_bytes());
    let hex: String = hash.iter().take(4).map(|b| format!("{b:02x}")).collect();
    let base = key.replace('/', "-");
    let base: String = base.chars().take(48).collect();
    format!("envoy-{base}-{hex}")
}

/// The container port envoy binds for a listener port (ports below 1024 + 10000, as
/// Envoy Gateway runs envoy unprivileged).
pub fn container_port(listener_port: u16) -> u16 {
    if listener_port < 1024 {
        listener_port + 10000
    } else {
        listener_port
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proxy_names_are_envoy_gateways() {
        assert_eq!(proxy_name("default", "eg"), "envoy-default-eg-e41e7b31");
        assert_eq!(container_port(80), 10080);
        assert_eq!(container_port(8080), 8080);
    }

    #[test]
    fn hostnames_intersect_as_the_spec_says() {
        assert_eq!(
            intersect("foo.example.com", Some("*.example.com")).as_deref(),
            Some("foo.example.com")
        );
        assert_eq!(
            intersect("*.example.com", Some("foo.example.com")).as_deref(),
            Some("foo.example.com")
        );
        assert_eq!(
            intersect("a.b.example.com", Some("*.example.com")).as_deref(),
            Some("a.b.example.com")
        );
        assert_eq!(intersect("example.com", Some("*.example.com")), None);
        assert_eq!(
            intersect("*.foo.example.com", Some("*.example.com")).as_deref(),
            Some("*.foo.example.com")
        );
        assert_eq!(intersect("other.org", Some("*.example.com")), None);
        assert_eq!(intersect("x.org", None).as_deref(), Some("x.org"));
        assert!(host_matches("*.example.com", "a.example.com"));
        assert!(!host_matches("*.example.com", "example.com"));
    }
}
