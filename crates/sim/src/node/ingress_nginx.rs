//! The ingress-nginx controller's nginx on the data plane: a request that reached the
//! controller container (its hostPorts 80/443) is matched against the Ingresses of its
//! class (`node::ingress_route`), proxied to a ready endpoint of the backend Service
//! (round robin, as the controller's Lua balancer does), or answered with nginx's own
//! 404, 503 or 308 pages; the controller writes its access log line.

use std::net::Ipv4Addr;

use k8s_openapi::api::core::v1::Service;
use k8s_openapi::api::discovery::v1::EndpointSlice;
use k8s_openapi::api::networking::v1::{Ingress, IngressClass};

use crate::node::cri::{Container, Sandbox};
use crate::node::http::{respond, Request, Response};
use crate::node::ingress_route::{self, Backend, Decision};
use crate::node::ingress_tls;
use crate::node::logs;
use crate::node::net::{deliver, record, Conn, Fetch, Network, Source};
use crate::node::netpol_walk;
use crate::node::x509::Certificate;
use crate::object::{Kind, Object};
use crate::proxy::model::Protocol;
use crate::proxy::traffic::Hop;
use crate::time::{Time, EPOCH_UNIX_MS};

/// Where a connection reached the controller.
pub(crate) struct Arrival {
    /// The controller's machine.
    pub node: u32,
    /// Its sandbox.
    pub sandbox: Sandbox,
    /// Its container.
    pub container: Container,
    /// The container port reached.
    pub port: u16,
}

/// nginx's error page with `server_tokens off` (no version), as ingress-nginx serves it.
pub fn error_page(status: u16, text: &str) -> String {
    format!("<html>\r\n<head><title>{status} {text}</title></head>\r\n<body>\r\n<center><h1>{status} {text}</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n")
}

fn plain_http_to_https_port() -> String {
    "<html>\r\n<head><title>400 The plain HTTP request was sent to HTTPS port</title></head>\r\n<body>\r\n<center><h1>400 Bad Request</h1></center>\r\n<center>The plain HTTP request was sent to HTTPS port</center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n".into()
}

fn page(status: u16, text: &str, tls: bool) -> Response {
    Response {
        status,
        body: error_page(status, text),
        tls,
        location: None,
        server: Some("nginx".into()),
        cert: None,
    }
}

/// The objects the controller's informers hold, read from the store.
fn list<T>(net: &Network, kind: Kind, pick: impl Fn(&Object) -> Option<&T>) -> Vec<T>
where
    T: Clone,
{
    let Some(store) = net.store() else {
        return Vec::new();
    };
    let prefix = format!("/registry/{}/", kind.info().etcd_prefix);
    store
        .range_prefix(&prefix)
        .filter_map(|kv| pick(&kv.value).cloned())
        .collect()
}

fn config(net: &Network) -> ingress_route::Config {
    let classes: Vec<IngressClass> = list(net, Kind::IngressClass, |o| match o {
        Object::IngressClass(c) => Some(&**c),
        _ => None,
    });
    let ings: Vec<Ingress> = list(net, Kind::Ingress, |o| match o {
        Object::Ingress(i) => Some(&**i),
        _ => None,
    });
    let served: Vec<&Ingress> = ings
        .iter()
        .filter(|i| i.metadata.deletion_timestamp.is_none())
        .filter(|i| ingress_route::serves(i, &classes))
        .collect();
    ingress_route::build(&served)
}

/// The ready endpoints of `b` (sorted), or the controller's warning when there are none.
pub(crate) fn endpoints(net: &Network, b: &Backend) -> Result<Vec<(Ipv4Addr, u16)>, String> {
    let key = format!("{}/{}", b.namespace, b.service);
    let svc = net.store().and_then(|s| {
        match &*s.get(&format!("/registry/services/specs/{key}"))?.value {
            Object::Service(svc) => Some(svc.clone()),
            _ => None,
        }
    });
    let Some(svc) = svc else {
        return Err(format!(
            "Error obtaining Endpoints for Service \"{key}\": no object matching key \"{key}\" in local store"
        ));
    };
    let Some(sp) = service_port(&svc, b) else {
        return Err(format!(
            "Service \"{key}\" does not have any port matching {}",
            if b.port_name.is_empty() {
                b.port.to_string()
            } else {
                b.port_name.clone()
            }
        ));
    };
    let slices: Vec<EndpointSlice> = list(net, Kind::EndpointSlice, |o| match o {
        Object::EndpointSlice(s) => Some(&**s),
        _ => None,
    });
    let mut out = Vec::new();
    for s in slices.iter().filter(|s| {
        s.metadata.namespace.as_deref() == Some(&b.namespace)
            && s.metadata
                .labels
                .as_ref()
                .and_then(|l| l.get("kubernetes.io/service-name"))
                == Some(&b.service)
    }) {
        let Some(port) = s
            .ports
            .iter()
            .flatten()
            .find(|p| p.name.as_deref().unwrap_or("") == sp.name.as_deref().unwrap_or(""))
            .and_then(|p| p.port)
        else {
            continue;
        };
        for ep in &s.endpoints {
            if ep.conditions.as_ref().and_then(|c| c.ready) == Some(false) {
                continue;
            }
            for a in &ep.addresses {
                if let (Ok(ip), Ok(p)) = (a.parse(), u16::try_from(port)) {
                    out.push((ip, p));
                }
            }
        }
    }
    out.sort();
    out.dedup();
    if out.is_empty() {
        return Err(format!(
            "Service \"{key}\" does not have any active Endpoint."
        ));
    }
    Ok(out)
}

fn service_port<'a>(
    svc: &'a Service,
    b: &Backend,
) -> Option<&'a k8s_openapi::api::core::v1::ServicePort> {
    svc.spec.as_ref()?.ports.iter().flatten().find(|p| {
        if b.port_name.is_empty() {
            p.port == b.port
        } else {
            p.name.as_deref() == Some(&b.port_name)
        }
    })
}

fn klog_warning(at: Time, pid: u32, msg: &str) -> logs::LogEntry {
    klog_warning_at(at, pid, "controller.go:1216", msg)
}

fn klog_warning_at(at: Time, pid: u32, source: &str, msg: &str) -> logs::LogEntry {
    let header =
        crate::node::journal::klog_header(at, crate::node::journal::Level::Warning, pid, source);
    logs::err(at, format!("{header}{msg}"))
}

fn access_line(
    at: Time,
    client: &str,
    c: &Conn,
    status: u16,
    bytes: usize,
    upstream: &str,
    upstream_addr: &str,
) -> logs::LogEntry {
    let when = k8s_openapi::jiff::Timestamp::from_millisecond(EPOCH_UNIX_MS + at as i64)
        .unwrap_or(k8s_openapi::jiff::Timestamp::UNIX_EPOCH)
        .strftime("%d/%b/%Y:%H:%M:%S +0000");
    let len = 60 + c.path.len() + c.host.len() + c.agent.len();
    let id = crate::rng::fnv1a(format!("{at}{client}{}", c.path).as_bytes());
    let (up, up_status) = if upstream_addr.is_empty() {
        ("-".to_string(), "-".to_string())
    } else {
        (format!("{upstream_addr} {bytes} 0.001"), status.to_string())
    };
    logs::out(
        at,
        format!(
            "{client} - - [{when}] \"GET {} HTTP/1.1\" {status} {bytes} \"-\" \"{}\" {len} 0.001 [{upstream}] [] {up} {up_status} {id:016x}{:016x}",
            c.path,
            c.agent,
            id.rotate_left(17)
        ),
    )
}

fn write_log(net: &mut Network, at: &Arrival, lines: Vec<logs::LogEntry>) {
    if let Some(h) = net.host_mut(at.node) {
        h.runtime.append_logs(&at.container.id, lines);
    }
}

/// What every answer of one request shares: where it was answered and the certificate.
struct Answer {
    pod: String,
    where_: String,
    node_name: String,
    client: String,
    cert: Option<Certificate>,
}

impl Answer {
    fn send(&self, net: &mut Network, c: Conn, mut r: Response, outcome: &str) -> Fetch {
        r.cert = self.cert.clone().map(Box::new);
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

/// The server name curl sends in its TLS hello: the URL's host, unless an IP literal.
pub(crate) fn sni(url: &str) -> Option<&str> {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let hostport = rest.split('/').next().unwrap_or(rest);
    let host = hostport.rsplit_once(':').map_or(hostport, |(h, _)| h);
    (!host.is_empty() && host.parse::<Ipv4Addr>().is_err()).then_some(host)
}

/// The certificates: the one nginx presents (by SNI, over TLS) and the warnings the
/// controller logs for the servers this request meets.
fn certificates(
    net: &mut Network,
    c: &mut Conn,
    cfg: &ingress_route::Config,
    at: &Arrival,
    tls: bool,
) -> Option<Certificate> {
    let now = net.now;
    let fake = ingress_tls::fake(at.container.started.unwrap_or(0));
    let (host_name, host_server) = ingress_route::server_for(cfg, c.host);
    let routed = ingress_tls::choose(net, host_name, host_server.cert.as_ref(), fake.clone());
    let mut warnings = routed.warnings.clone();
    let presented = if !tls {
        None
    } else {
        let (name, server) = ingress_route::server_for(cfg, sni(c.url).unwrap_or("_"));
        let chosen = if name == host_name {
            routed
        } else {
            let ch = ingress_tls::choose(net, name, server.cert.as_ref(), fake);
            warnings.extend(ch.warnings.clone());
            ch
        };
        let node_name = net.hosts()[at.node as usize].config.name.clone();
        let what = match &chosen.secret {
            Some(key) => format!("ssl_certificate of Secret {key}"),
            None => "the default (fake) certificate".into(),
        };
        c.hops.push(ingress_hop(
            &node_name,
            name,
            &format!("TLS handshake, SNI {}", sni(c.url).unwrap_or("(none)")),
            &format!(
                "presents {what}: {}",
                Certificate::name_line(&chosen.cert.subject)
            ),
        ));
        Some(chosen.cert)
    };
    let lines = warnings
        .iter()
        .map(|(src, w)| klog_warning_at(now, 7, src, w))
        .collect();
    write_log(net, at, lines);
    presented
}

/// Answers a connection that reached the controller container.
pub(crate) fn serve(net: &mut Network, mut c: Conn, at: Arrival) -> Fetch {
    let now = net.now;
    let https = c.url.to_ascii_lowercase().starts_with("https://");
    let node_name = net.hosts()[at.node as usize].config.name.clone();
    let pod = format!("{}/{}", at.sandbox.namespace, at.sandbox.name);
    let mut ans = Answer {
        where_: format!("{}:{} ({pod}) on {node_name}", at.sandbox.ip, at.port),
        pod,
        node_name,
        client: c.client.to_string(),
        cert: None,
    };
    if !matches!(at.port, 80 | 443) || at.container.unready(now) {
        let req = Request {
            host: c.host,
            path: c.path,
            client: &ans.client,
            agent: c.agent,
            pod_name: &at.sandbox.name,
            pod_ip: &at.sandbox.ip,
            port: i32::from(at.port),
            now,
        };
        let r = respond(
            crate::node::behavior::Server::IngressNginx,
            &at.container,
            &req,
        );
        let where_ = ans.where_.clone();
        return ans.send(net, c, r, &where_);
    }
    let tls = at.port == 443;
    if tls && !https {
        let r = Response {
            status: 400,
            body: plain_http_to_https_port(),
            server: Some("nginx".into()),
            ..Response::default()
        };
        let where_ = ans.where_.clone();
        return ans.send(net, c, r, &where_);
    }
    let cfg = config(net);
    ans.cert = certificates(net, &mut c, &cfg, &at, tls);
    match ingress_route::decide(&cfg, c.host, c.path, tls) {
        Decision::NotFound { server } => not_found(net, c, &at, &ans, &server, tls),
        Decision::Redirect { location } => {
            c.hops.push(ingress_hop(
                &ans.node_name,
                c.host,
                "TLS host over plain HTTP",
                &format!("return 308 {location}"),
            ));
            let r = Response {
                status: 308,
                body: error_page(308, "Permanent Redirect"),
                tls,
                location: Some(location),
                server: Some("nginx".into()),
                cert: None,
            };
            let outcome = format!("{}: 308 redirect to HTTPS", ans.where_);
            ans.send(net, c, r, &outcome)
        }
        Decision::Proxy {
            backend,
            server,
            location,
            ingress,
            uri,
        } => {
            let route = Route {
                backend,
                server,
                location,
                ingress,
                uri,
            };
            proxy(net, c, &at, &ans, route, tls)
        }
    }
}

fn not_found(
    net: &mut Network,
    mut c: Conn,
    at: &Arrival,
    ans: &Answer,
    server: &str,
    tls: bool,
) -> Fetch {
    c.hops.push(ingress_hop(
        &ans.node_name,
        server,
        "no location matched",
        "default backend: 404 Not Found",
    ));
    let r = page(404, "Not Found", tls);
    let line = access_line(
        net.now,
        &ans.client,
        &c,
        404,
        r.body.len(),
        "upstream-default-backend",
        "",
    );
    write_log(net, at, vec![line]);
    let outcome = format!("{}: ingress-nginx default backend 404", ans.where_);
    ans.send(net, c, r, &outcome)
}

/// A location's upstream, as `Decision::Proxy` gives it.
struct Route {
    backend: Backend,
    server: String,
    location: String,
    ingress: String,
    uri: String,
}

fn proxy(
    net: &mut Network,
    mut c: Conn,
    at: &Arrival,
    ans: &Answer,
    route: Route,
    tls: bool,
) -> Fetch {
    let now = net.now;
    let Route {
        backend,
        server,
        location,
        ingress,
        uri,
    } = route;
    let upstream = backend.upstream();
    let eps = match endpoints(net, &backend) {
        Ok(eps) => eps,
        Err(warning) => {
            c.hops.push(ingress_hop(
                &ans.node_name,
                &server,
                &format!("{location} → {upstream} (ingress {ingress})"),
                &format!("{warning} 503"),
            ));
            let r = page(503, "Service Temporarily Unavailable", tls);
            let line = access_line(now, &ans.client, &c, 503, r.body.len(), &upstream, "");
            write_log(net, at, vec![klog_warning(now, 7, &warning), line]);
            let outcome = format!("{}: 503, {warning}", ans.where_);
            return ans.send(net, c, r, &outcome);
        }
    };
    let turn = net.state().ingress_rr.entry(upstream.clone()).or_insert(0);
    let (ip, port) = eps[*turn % eps.len()];
    *turn = turn.wrapping_add(1);
    c.hops.push(ingress_hop(
        &ans.node_name,
        &server,
        &format!("{location} → {upstream} (ingress {ingress})"),
        &format!(
            "{location} → {upstream}: round robin over {} endpoint(s) picks {ip}:{port}, URI {uri}",
            eps.len()
        ),
    ));
    let ctrl_ip: Ipv4Addr = at.sandbox.ip.parse().unwrap_or(Ipv4Addr::UNSPECIFIED);
    let ctrl = Source {
        node: at.node,
        ip: ctrl_ip,
        pod: Some((at.sandbox.namespace.clone(), at.sandbox.name.clone())),
        agent: c.agent.to_string(),
    };
    if let Err(d) = netpol_walk::check(net, &ctrl, ctrl_ip, ip, port, Protocol::Tcp, &mut c.hops) {
        let r = page(504, "Gateway Time-out", tls);
        return ans.send(net, c, r, &d.0);
    }
    let up = deliver(
        net,
        Conn {
            src: c.src,
            from_node: at.node,
            host: c.host,
            path: &uri,
            url: c.url,
            dns: c.dns.clone(),
            hops: c.hops.clone(),
            ip,
            port,
            client: ctrl_ip,
            agent: c.agent,
            depth: 1,
        },
    );
    let (mut response, pod) = match up {
        Fetch::Answered { mut response, pod } => {
            response.tls = tls;
            response.server = Some("nginx".into());
            (response, pod)
        }
        _ => (page(502, "Bad Gateway", tls), Some(ans.pod.clone())),
    };
    response.cert = ans.cert.clone().map(Box::new);
    let line = access_line(
        now,
        &ans.client,
        &c,
        response.status,
        response.body.len(),
        &upstream,
        &format!("{ip}:{port}"),
    );
    write_log(net, at, vec![line]);
    Fetch::Answered { response, pod }
}

fn ingress_hop(node: &str, server: &str, rule: &str, note: &str) -> Hop {
    Hop {
        node: node.to_string(),
        table: "ingress".into(),
        chain: format!("server {server}"),
        rule: rule.to_string(),
        matched: true,
        note: note.to_string(),
    }
}
