//! The envoy proxy Envoy Gateway runs for a Gateway, on the data plane: a request that
//! reached a listener port of the proxy container is matched against the HTTPRoutes
//! attached to that listener (`node::gateway_route`), a backendRef is drawn by weight,
//! and the request is proxied to a ready endpoint of that Service (round robin), or
//! answered by envoy itself: 404 when no route matches, 500 for a rule whose chosen
//! backendRef is invalid, 503 `no healthy upstream`. One `TrafficPath` per request with a
//! `gateway` hop naming the listener, the route, the rule and the backend chosen.

use std::net::Ipv4Addr;

use serde_json::Value;

use crate::node::cri::{Container, Sandbox};
use crate::node::gateway_model::{self as gm, Gateway, Grant, Listener, Route};
use crate::node::gateway_route::{self, Req};
use crate::node::gateway_tls;
use crate::node::http::{respond, Request, Response};
use crate::node::ingress_route::Backend;
use crate::node::logs;
use crate::node::net::{deliver, record, Conn, Fetch, Network, Source};
use crate::node::netpol_walk;
use crate::node::x509::Certificate;
use crate::object::{CustomObject, Object};
use crate::proxy::model::Protocol;
use crate::proxy::traffic::Hop;
use crate::time::EPOCH_UNIX_MS;

/// The label Envoy Gateway puts on a proxy pod naming its Gateway.
pub const OWNING_NAME: &str = "gateway.envoyproxy.io/owning-gateway-name";
/// The label naming the Gateway's namespace.
pub const OWNING_NAMESPACE: &str = "gateway.envoyproxy.io/owning-gateway-namespace";

/// Where a connection reached the proxy.
pub(crate) struct Arrival {
    /// The proxy's machine.
    pub node: u32,
    /// Its sandbox.
    pub sandbox: Sandbox,
    /// Its container.
    pub container: Container,
    /// The container port reached.
    pub port: u16,
}

fn customs(net: &Network, plural: &str) -> Vec<CustomObject> {
    let Some(store) = net.store() else {
        return Vec::new();
    };
    let prefix = format!("/registry/{}/{plural}/", gm::GROUP);
    store
        .range_prefix(&prefix)
        .filter_map(|kv| match &*kv.value {
            Object::Custom(c) if c.metadata.deletion_timestamp.is_none() => Some((**c).clone()),
            _ => None,
        })
        .collect()
}

fn stored(net: &Network, key: &str) -> Option<Object> {
    net.store()
        .and_then(|s| s.get(key).map(|kv| (*kv.value).clone()))
}

fn owning_gateway(net: &Network, sb: &Sandbox) -> Option<(String, String)> {
    let key = format!("/registry/pods/{}/{}", sb.namespace, sb.name);
    let Some(Object::Pod(p)) = stored(net, &key) else {
        return None;
    };
    let l = p.metadata.labels.as_ref()?;
    Some((
        l.get(OWNING_NAMESPACE)?.clone(),
        l.get(OWNING_NAME)?.clone(),
    ))
}

/// The labels of namespace `ns` in the store.
pub(crate) fn namespace_labels(net: &Network, ns: &str) -> Vec<(String, String)> {
    match stored(net, &format!("/registry/namespaces/{ns}")) {
        Some(Object::Namespace(n)) => n.metadata.labels.unwrap_or_default().into_iter().collect(),
        _ => Vec::new(),
    }
}

/// What envoy was configured with for one Gateway: its listeners, the routes attached to
/// each, and the grants that make cross-namespace backends valid.
struct Config {
    gateway: Gateway,
    routes: Vec<(Route, Vec<usize>)>,
    grants: Vec<Grant>,
}

fn config(net: &Network, ns: &str, name: &str) -> Option<Config> {
    let gw = customs(net, "gateways")
        .iter()
        .find(|g| {
            g.metadata.namespace.as_deref() == Some(ns) && g.metadata.name.as_deref() == Some(name)
        })
        .map(Gateway::read)?;
    let labels = |n: &str| namespace_labels(net, n);
    let mut objs = customs(net, "httproutes");
    objs.extend(customs(net, "grpcroutes"));
    let routes = objs
        .iter()
        .map(Route::read)
        .filter_map(|r| {
            let mut on: Vec<usize> = Vec::new();
            for p in r.parents.iter().filter(|p| gm::names(p, &gw)) {
                if let Ok(ls) = gm::attach(&r, p, &gw, &labels) {
                    on.extend(ls);
                }
            }
            on.sort();
            on.dedup();
            (!on.is_empty()).then_some((r, on))
        })
        .collect();
    let grants = customs(net, "referencegrants")
        .iter()
        .map(Grant::read)
        .collect();
    Some(Config {
        gateway: gw,
        routes,
        grants,
    })
}

/// The listener a request on `port` with `host` lands on: the most specific hostname.
fn listener(gw: &Gateway, port: u16, host: &str) -> Option<usize> {
    gw.listeners
        .iter()
        .enumerate()
        .filter(|(_, l)| {
            gm::container_port(l.port) == port && matches!(l.protocol.as_str(), "HTTP" | "HTTPS")
        })
        .filter_map(|(i, l)| match &l.hostname {
            None => Some(((0u8, 0usize), i)),
            Some(h) if gm::host_matches(h, host) => {
                Some(((if h.starts_with('*') { 1 } else { 2 }, h.len()), i))
            }
            Some(_) => None,
        })
        .max_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)))
        .map(|(_, i)| i)
}

fn envoy_page(status: u16, body: &str) -> Response {
    Response {
        status,
        body: body.to_string(),
        tls: false,
        location: None,
        server: Some("envoy".into()),
        cert: None,
    }
}

fn hop(node: &str, l: &Listener, gw: &Gateway, rule: &str, note: &str) -> Hop {
    Hop {
        node: node.to_string(),
        table: "gateway".into(),
        chain: format!(
            "listener {} (:{}) of gateway {}/{}",
            l.name, l.port, gw.namespace, gw.name
        ),
        rule: rule.to_string(),
        matched: true,
        note: note.to_string(),
    }
}

/// Envoy Gateway's JSON access log line (the fields a learner reads).
fn access_line(
    net: &Network,
    c: &Conn,
    status: u16,
    route_name: &str,
    cluster: &str,
    upstream: &str,
    details: &str,
) -> logs::LogEntry {
    let at = net.now;
    let when = k8s_openapi::jiff::Timestamp::from_millisecond(EPOCH_UNIX_MS + at as i64)
        .unwrap_or(k8s_openapi::jiff::Timestamp::UNIX_EPOCH)
        .strftime("%Y-%m-%dT%H:%M:%S%.3fZ");
    let id = crate::rng::fnv1a(format!("{at}{}{}", c.client, c.path).as_bytes());
    let method = if net.state_ref().request.method.is_empty() {
        "GET".to_string()
    } else {
        net.state_ref().request.method.clone()
    };
    let null_or = |s: &str| {
        if s.is_empty() {
            Value::Null
        } else {
            Value::String(s.to_string())
        }
    };
    let line = serde_json::json!({
        "start_time": when.to_string(),
        "method": method,
        "x-envoy-origin-path": c.path,
        "protocol": "HTTP/1.1",
        "response_code": status,
        "response_flags": if status == 503 { "UH" } else if status == 404 { "NR" } else { "-" },
        "response_code_details": details,
        "upstream_host": null_or(upstream),
        "upstream_cluster": null_or(cluster),
        "route_name": null_or(route_name),
        ":authority": c.host,
        "user-agent": c.agent,
        "downstream_remote_address": format!("{}:{}", c.client, 40000 + id % 20000),
        "x-request-id": format!("{:08x}-{:04x}-4{:03x}-a{:03x}-{:012x}", id as u32, (id >> 32) as u16, (id >> 48) & 0xfff, (id >> 20) & 0xfff, id & 0xffff_ffff_ffff),
    });
    logs::out(at, line.to_string())
}

fn write_log(net: &mut Network, at: &Arrival, line: logs::LogEntry) {
    if let Some(h) = net.host_mut(at.node) {
        h.runtime.append_logs(&at.container.id, vec![line]);
    }
}

/// Who answers and where, for the walk's record.
struct Here {
    pod: String,
    node_name: String,
    where_: String,
    /// The certificate of an HTTPS listener's handshake.
    cert: Option<Certificate>,
}

impl Here {
    fn of(net: &Network, at: &Arrival) -> Here {
        let pod = format!("{}/{}", at.sandbox.namespace, at.sandbox.name);
        let node_name = net.hosts()[at.node as usize].config.name.clone();
        let where_ = format!("{}:{} ({pod}) on {node_name}", at.sandbox.ip, at.port);
        Here {
            pod,
            node_name,
            where_,
            cert: None,
        }
    }

    /// envoy answers itself: the walk ends at the proxy.
    fn answer(&self, net: &mut Network, c: Conn, mut r: Response, outcome: &str) -> Fetch {
        self.seal(&mut r);
        let f = Fetch::Answered {
            response: r,
            pod: Some(self.pod.clone()),
        };
        record(
            net,
            c.src,
            c.url,
            c.dns,
            c.hops,
            outcome,
            Some(self.pod.clone()),
            f,
        )
    }
}

impl Here {
    /// An answer over an HTTPS listener goes back over TLS with its certificate.
    fn seal(&self, r: &mut Response) {
        if let Some(c) = &self.cert {
            r.tls = true;
            r.cert = Some(Box::new(c.clone()));
        }
    }
}

/// The TLS of listener `li`: `None` for HTTP; the certificate for SNI; or what the
/// client meets instead (a listener Envoy Gateway could not program is not listening;
/// plain HTTP to a TLS listener is closed).
fn handshake(
    net: &Network,
    cfg: &Config,
    li: usize,
    https: bool,
    sni: Option<&str>,
) -> Result<Option<Certificate>, (Fetch, String)> {
    let l = &cfg.gateway.listeners[li];
    if l.protocol != "HTTPS" {
        return Ok(None);
    }
    let secret = |ns: &str, name: &str| match stored(net, &format!("/registry/secrets/{ns}/{name}"))
    {
        Some(Object::Secret(s)) => Some(*s),
        _ => None,
    };
    let certs = gateway_tls::check(&cfg.gateway, l, &secret, &cfg.grants).map_err(|p| {
        let msg = format!(
            "listener {} not programmed ({}: {}): connection refused",
            l.name, p.reason, p.message
        );
        (Fetch::Refused, msg)
    })?;
    if !https {
        let msg = format!(
            "plain HTTP to TLS listener {}: envoy closes the connection",
            l.name
        );
        return Err((Fetch::EmptyReply, msg));
    }
    Ok(gateway_tls::for_sni(&certs, sni).cloned())
}

/// Answers a connection that reached the proxy container: admin ports and requests
/// before envoy is ready are answered as the image does, the rest are routed.
pub(crate) fn serve(net: &mut Network, c: Conn, at: Arrival) -> Fetch {
    let now = net.now;
    let mut here = Here::of(net, &at);
    let host = c.host.split(':').next().unwrap_or("").to_ascii_lowercase();
    let https = c.url.to_ascii_lowercase().starts_with("https://");
    let sni = crate::node::ingress_nginx::sni(c.url).map(str::to_ascii_lowercase);
    // A TLS listener is picked by the hello's server name, as envoy's filter chains are.
    let pick = if https {
        sni.clone().unwrap_or_else(|| host.clone())
    } else {
        host.clone()
    };
    let cfg = owning_gateway(net, &at.sandbox).and_then(|(ns, name)| config(net, &ns, &name));
    let li = cfg
        .as_ref()
        .and_then(|cfg| listener(&cfg.gateway, at.port, &pick));
    match (cfg, li) {
        (Some(cfg), Some(li)) if !at.container.unready(now) => {
            match handshake(net, &cfg, li, https, sni.as_deref()) {
                Ok(cert) => here.cert = cert,
                Err((f, why)) => {
                    let outcome = format!("{}: {why}", here.where_);
                    let pod = Some(here.pod.clone());
                    return record(net, c.src, c.url, c.dns, c.hops, &outcome, pod, f);
                }
            }
            route(net, c, &at, &here, &cfg, li, &host)
        }
        _ => {
            let client = c.client.to_string();
            let req = Request {
                host: c.host,
                path: c.path,
                client: &client,
                agent: c.agent,
                pod_name: &at.sandbox.name,
                pod_ip: &at.sandbox.ip,
                port: i32::from(at.port),
                now,
            };
            let r = respond(crate::node::behavior::Server::Envoy, &at.container, &req);
            let outcome = here.where_.clone();
            here.answer(net, c, r, &outcome)
        }
    }
}

/// What the chosen rule sends to, for the hop and the log.
struct Picked<'a> {
    l: &'a Listener,
    gw: &'a Gateway,
    rule_text: String,
    route_name: String,
    cluster: String,
    backend: &'a gm::BackendRef,
    share: String,
}

/// Matches the request on listener `li`, draws a backendRef and forwards or answers.
fn route(
    net: &mut Network,
    mut c: Conn,
    at: &Arrival,
    here: &Here,
    cfg: &Config,
    li: usize,
    host: &str,
) -> Fetch {
    let gw = &cfg.gateway;
    let l = &gw.listeners[li];
    let routes: Vec<Route> = cfg
        .routes
        .iter()
        .filter(|(_, on)| on.contains(&li))
        .map(|(r, _)| r.clone())
        .collect();
    let extras = net.state_ref().request.clone();
    let req = Req {
        host,
        path: c.path,
        method: if extras.method.is_empty() {
            "GET"
        } else {
            extras.method.as_str()
        },
        headers: &extras.headers,
    };
    let Some(chosen) = gateway_route::choose(&routes, l, &req) else {
        c.hops.push(hop(
            &here.node_name,
            l,
            gw,
            "no HTTPRoute matched",
            "envoy: 404 (route not found)",
        ));
        let line = access_line(net, &c, 404, "", "", "", "route_not_found");
        write_log(net, at, line);
        let outcome = format!("{}: envoy 404, no route", here.where_);
        return here.answer(net, c, envoy_page(404, ""), &outcome);
    };
    let route = &routes[chosen.route];
    let rule = &route.rules[chosen.rule];
    let kind = route.kind.to_ascii_lowercase();
    let route_name = format!(
        "{kind}/{}/{}/rule/{}/match/{}/{}",
        route.namespace,
        route.name,
        chosen.rule,
        chosen.matched,
        chosen.host.replace('.', "_").replace('*', "")
    );
    let cluster = format!(
        "{kind}/{}/{}/rule/{}",
        route.namespace, route.name, chosen.rule
    );
    let rule_text = format!(
        "{kind} {}/{} rule {} match {} (host {})",
        route.namespace,
        route.name,
        chosen.rule,
        gateway_route::describe(&rule.matches[chosen.matched]),
        chosen.host
    );
    let (drawn, total) = {
        let rng = &mut net.state().envoy_rng;
        gateway_route::pick(&rule.backends, |n| rng.intn(n))
    };
    let svc_exists = |ns: &str, name: &str| {
        stored(net, &format!("/registry/services/specs/{ns}/{name}")).is_some()
    };
    let share = |b: &gm::BackendRef| {
        format!(
            "{}/{}:{} weight {}/{}",
            b.namespace,
            b.name,
            b.port.unwrap_or(0),
            b.weight,
            total
        )
    };
    let problem = match drawn {
        None => Some(("no backendRef with a weight".to_string(), None)),
        Some(i) => {
            let b = &rule.backends[i];
            gm::backend_problem(
                &route.namespace,
                chosen.rule,
                i,
                b,
                &svc_exists,
                &cfg.grants,
            )
            .map(|(_, msg)| (msg, Some(share(b))))
        }
    };
    if let Some((why, picked)) = problem {
        let note = match picked {
            Some(s) => format!("picks {s}: invalid ({why}): 500"),
            None => format!("{why}: 500"),
        };
        c.hops.push(hop(&here.node_name, l, gw, &rule_text, &note));
        let line = access_line(net, &c, 500, &route_name, &cluster, "", "direct_response");
        write_log(net, at, line);
        let outcome = format!("{}: envoy 500, {why}", here.where_);
        return here.answer(net, c, envoy_page(500, ""), &outcome);
    }
    let Some(i) = drawn else {
        return Fetch::Refused;
    };
    let backend = &rule.backends[i];
    let picked = Picked {
        l,
        gw,
        rule_text,
        route_name,
        cluster,
        backend,
        share: share(backend),
    };
    forward(net, c, at, here, &picked)
}

/// Proxies to a ready endpoint of the drawn Service, from the envoy pod.
fn forward(net: &mut Network, mut c: Conn, at: &Arrival, here: &Here, p: &Picked) -> Fetch {
    let b = p.backend;
    let target = Backend {
        namespace: b.namespace.clone(),
        service: b.name.clone(),
        port: i32::from(b.port.unwrap_or(0)),
        port_name: String::new(),
    };
    let Ok(eps) = crate::node::ingress_nginx::endpoints(net, &target) else {
        let note = format!("picks {}: no healthy upstream: 503", p.share);
        c.hops
            .push(hop(&here.node_name, p.l, p.gw, &p.rule_text, &note));
        let line = access_line(
            net,
            &c,
            503,
            &p.route_name,
            &p.cluster,
            "",
            "no_healthy_upstream",
        );
        write_log(net, at, line);
        let outcome = format!("{}: envoy 503, no healthy upstream", here.where_);
        return here.answer(net, c, envoy_page(503, "no healthy upstream"), &outcome);
    };
    let key = format!("envoy {} {}/{}", p.cluster, b.namespace, b.name);
    let turn = net.state().ingress_rr.entry(key).or_insert(0);
    let (ip, port) = eps[*turn % eps.len()];
    *turn = turn.wrapping_add(1);
    let note = format!("picks {} → endpoint {ip}:{port} of {}", p.share, eps.len());
    c.hops
        .push(hop(&here.node_name, p.l, p.gw, &p.rule_text, &note));
    let proxy_ip: Ipv4Addr = at.sandbox.ip.parse().unwrap_or(Ipv4Addr::UNSPECIFIED);
    let proxy = Source {
        node: at.node,
        ip: proxy_ip,
        pod: Some((at.sandbox.namespace.clone(), at.sandbox.name.clone())),
        agent: c.agent.to_string(),
    };
    if let Err(d) = netpol_walk::check(net, &proxy, proxy_ip, ip, port, Protocol::Tcp, &mut c.hops)
    {
        // The SYN is dropped: envoy's connect timeout ends the attempt.
        let body = "upstream connect error or disconnect/reset before headers. reset reason: connection timeout";
        return here.answer(net, c, envoy_page(503, body), &d.0);
    }
    let up = deliver(
        net,
        Conn {
            src: c.src,
            from_node: at.node,
            host: c.host,
            path: c.path,
            url: c.url,
            dns: c.dns.clone(),
            hops: c.hops.clone(),
            ip,
            port,
            client: proxy_ip,
            agent: c.agent,
            depth: 1,
        },
    );
    let (mut response, answered_by) = match up {
        Fetch::Answered { mut response, pod } => {
            response.server = Some("envoy".into());
            (response, pod)
        }
        _ => (
            envoy_page(503, "upstream connect error or disconnect/reset before headers. reset reason: connection failure"),
            Some(here.pod.clone()),
        ),
    };
    here.seal(&mut response);
    let upstream = format!("{ip}:{port}");
    let line = access_line(
        net,
        &c,
        response.status,
        &p.route_name,
        &p.cluster,
        &upstream,
        "via_upstream",
    );
    write_log(net, at, line);
    Fetch::Answered {
        response,
        pod: answered_by,
    }
}
