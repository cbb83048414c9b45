//! How ingress-nginx turns the Ingresses of its class into nginx `server`/`location`
//! blocks and which one answers a request: host (exact, then `*.` wildcard, then the
//! default server `_`), then `location = /p` (Exact, and the exact half of a Prefix),
//! the longest Prefix by path elements or ImplementationSpecific by characters (nginx's
//! plain prefix location), or with `use-regex`/`rewrite-target` case-insensitive
//! `^`-anchored regexes tried longest first; the Ingress `defaultBackend`; TLS hosts
//! redirect plain HTTP with 308.

use std::collections::BTreeMap;

use k8s_openapi::api::networking::v1::{Ingress, IngressBackend, IngressClass};

/// The controller class ingress-nginx serves.
pub const CONTROLLER_CLASS: &str = "k8s.io/ingress-nginx";
/// The IngressClass name it is started with (`--ingress-class=nginx`).
pub const CLASS_NAME: &str = "nginx";
const USE_REGEX: &str = "nginx.ingress.kubernetes.io/use-regex";
const REWRITE_TARGET: &str = "nginx.ingress.kubernetes.io/rewrite-target";
const SSL_REDIRECT: &str = "nginx.ingress.kubernetes.io/ssl-redirect";
const LEGACY_CLASS: &str = "kubernetes.io/ingress.class";

/// How a location matches (the Ingress `pathType`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PathKind {
    /// `location = /p`.
    Exact,
    /// `location /p/` plus `location = /p`: whole path elements.
    Prefix,
    /// nginx's own `location /p`: a character prefix.
    ImplementationSpecific,
}

impl PathKind {
    fn name(self) -> &'static str {
        match self {
            PathKind::Exact => "Exact",
            PathKind::Prefix => "Prefix",
            PathKind::ImplementationSpecific => "ImplementationSpecific",
        }
    }
}

/// A Service backend: namespace, name and port (number or name).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Backend {
    /// The Ingress's namespace (the Service's).
    pub namespace: String,
    /// Service name.
    pub service: String,
    /// `port.number`, or 0 with `port_name`.
    pub port: i32,
    /// `port.name`.
    pub port_name: String,
}

impl Backend {
    fn of(ns: &str, b: &IngressBackend) -> Option<Backend> {
        let s = b.service.as_ref()?;
        let port = s.port.as_ref();
        Some(Backend {
            namespace: ns.to_string(),
            service: s.name.clone(),
            port: port.and_then(|p| p.number).unwrap_or(0),
            port_name: port.and_then(|p| p.name.clone()).unwrap_or_default(),
        })
    }

    /// `ns/name:port` as the controller names an upstream (`default-foo-service-8080`).
    pub fn upstream(&self) -> String {
        let port = if self.port_name.is_empty() {
            self.port.to_string()
        } else {
            self.port_name.clone()
        };
        format!("{}-{}-{port}", self.namespace, self.service)
    }
}

/// One `location` block.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Location {
    /// The path as written in the Ingress.
    pub path: String,
    /// Its type.
    pub kind: PathKind,
    /// Where it proxies.
    pub backend: Backend,
    /// `namespace/name` of the Ingress it came from.
    pub ingress: String,
    /// `rewrite-target`, if the Ingress sets one.
    pub rewrite: Option<String>,
}

/// One `server` block.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Server {
    /// Locations in the order the Ingresses gave them (oldest Ingress first).
    pub locations: Vec<Location>,
    /// Every location is a regex (`use-regex` or `rewrite-target` on an Ingress of the host).
    pub regex: bool,
    /// A TLS section names the host: plain HTTP is redirected.
    pub tls: bool,
    /// The Ingress `defaultBackend` that answers what no location matches.
    pub default_backend: Option<(Backend, String)>,
    /// The TLS section that first named the host: its certificate's Secret.
    pub cert: Option<TlsRef>,
}

/// A TLS host's `secretName`, in the namespace of the Ingress that names it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TlsRef {
    /// The Ingress's namespace.
    pub namespace: String,
    /// `secretName` ("" when the section has none: the default certificate).
    pub secret: String,
}

/// The nginx configuration: server name → server (`_` is the default server).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Config {
    /// Servers by name.
    pub servers: BTreeMap<String, Server>,
}

/// What the controller's nginx does with a request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decision {
    /// Proxies to a Service.
    Proxy {
        /// The upstream.
        backend: Backend,
        /// The server block that matched (`foo.example` or `_`).
        server: String,
        /// The location as nginx.conf says it (`location /foo/`, `default backend`).
        location: String,
        /// The Ingress the location came from.
        ingress: String,
        /// The URI sent upstream (after `rewrite-target`).
        uri: String,
    },
    /// `return 308 https://host/uri` (TLS host reached over plain HTTP).
    Redirect {
        /// The `Location` header.
        location: String,
    },
    /// Nothing matched: the built-in default backend's 404.
    NotFound {
        /// The server block that matched.
        server: String,
    },
}

/// Whether ingress-nginx started as kind's manifest starts it serves `ing`.
pub fn serves(ing: &Ingress, classes: &[IngressClass]) -> bool {
    let spec_class = ing
        .spec
        .as_ref()
        .and_then(|s| s.ingress_class_name.as_deref());
    let legacy = ing
        .metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(LEGACY_CLASS))
        .map(String::as_str);
    match (spec_class, legacy) {
        (Some(c), _) => {
            c == CLASS_NAME
                && classes.iter().any(|k| {
                    k.metadata.name.as_deref() == Some(c)
                        && k.spec.as_ref().and_then(|s| s.controller.as_deref())
                            == Some(CONTROLLER_CLASS)
                })
        }
        (None, Some(l)) => l == CLASS_NAME,
        // --watch-ingress-without-class=true
        (None, None) => true,
    }
}

fn annotation<'a>(ing: &'a Ingress, key: &str) -> Option<&'a str> {
    ing.metadata
        .annotations
        .as_ref()?
        .get(key)
        .map(String::as_str)
}

fn kind_of(t: &str) -> PathKind {
    match t {
        "Exact" => PathKind::Exact,
        "Prefix" => PathKind::Prefix,
        _ => PathKind::ImplementationSpecific,
    }
}

/// Builds the configuration from the Ingresses the controller serves, oldest first (the
/// oldest Ingress wins a path two of them define, as ingress-nginx decides).
pub fn build(ingresses: &[&Ingress]) -> Config {
    let mut ings: Vec<&&Ingress> = ingresses.iter().collect();
    ings.sort_by_key(|i| {
        (
            i.metadata.creation_timestamp.as_ref().map(|t| t.0),
            i.metadata.namespace.clone(),
            i.metadata.name.clone(),
        )
    });
    let mut cfg = Config::default();
    cfg.servers.entry("_".into()).or_default();
    for ing in ings {
        add_ingress(&mut cfg, ing);
    }
    cfg
}

fn add_ingress(cfg: &mut Config, ing: &Ingress) {
    let ns = ing.metadata.namespace.clone().unwrap_or_default();
    let key = format!("{ns}/{}", ing.metadata.name.as_deref().unwrap_or(""));
    let Some(spec) = ing.spec.as_ref() else {
        return;
    };
    let rewrite = annotation(ing, REWRITE_TARGET).map(str::to_string);
    let regex = rewrite.is_some() || annotation(ing, USE_REGEX) == Some("true");
    let redirect = annotation(ing, SSL_REDIRECT) != Some("false");
    let default = spec
        .default_backend
        .as_ref()
        .and_then(|b| Backend::of(&ns, b));
    if let Some(b) = &default {
        let s = cfg.servers.entry("_".into()).or_default();
        s.default_backend.get_or_insert((b.clone(), key.clone()));
    }
    for rule in spec.rules.iter().flatten() {
        let host = rule.host.clone().unwrap_or_else(|| "_".into());
        let server = cfg.servers.entry(host.to_ascii_lowercase()).or_default();
        server.regex |= regex;
        if let Some(b) = &default {
            server
                .default_backend
                .get_or_insert((b.clone(), key.clone()));
        }
        for p in rule.http.iter().flat_map(|h| h.paths.iter()) {
            let Some(backend) = Backend::of(&ns, &p.backend) else {
                continue;
            };
            let path = p.path.clone().unwrap_or_else(|| "/".into());
            let kind = kind_of(&p.path_type);
            if server
                .locations
                .iter()
                .any(|l| l.path == path && l.kind == kind)
            {
                continue;
            }
            server.locations.push(Location {
                path,
                kind,
                backend,
                ingress: key.clone(),
                rewrite: rewrite.clone(),
            });
        }
    }
    for t in spec.tls.iter().flatten() {
        for h in t.hosts.iter().flatten() {
            if let Some(s) = cfg.servers.get_mut(&h.to_ascii_lowercase()) {
                s.tls |= redirect;
                // createServers: only a server without a certificate gets one.
                s.cert.get_or_insert_with(|| TlsRef {
                    namespace: ns.clone(),
                    secret: t.secret_name.clone().unwrap_or_default(),
                });
            }
        }
    }
}

/// The server block nginx picks for `host` (the Host header, port stripped).
pub fn server_for<'a>(cfg: &'a Config, host: &str) -> (&'a str, &'a Server) {
    let host = host
        .rsplit_once(':')
        .filter(|(_, p)| p.chars().all(|c| c.is_ascii_digit()))
        .map_or(host, |(h, _)| h)
        .to_ascii_lowercase();
    if let Some((k, s)) = cfg.servers.get_key_value(&host) {
        return (k, s);
    }
    let wildcard = host.split_once('.').map(|(_, rest)| format!("*.{rest}"));
    if let Some((k, s)) = wildcard.and_then(|w| cfg.servers.get_key_value(&w)) {
        return (k, s);
    }
    match cfg.servers.get_key_value("_") {
        Some((k, s)) => (k, s),
        None => ("_", &EMPTY),
    }
}

static EMPTY: Server = Server {
    locations: Vec::new(),
    regex: false,
    tls: false,
    default_backend: None,
    cert: None,
};

fn prefix_matches(prefix: &str, path: &str) -> bool {
    let p = prefix.trim_end_matches('/');
    p.is_empty() || path == p || path.starts_with(&format!("{p}/"))
}

fn regex_of(path: &str) -> Option<regex::Regex> {
    regex::Regex::new(&format!("(?i)^{path}")).ok()
}

/// The location of `server` that answers `path` (no query), as nginx chooses it.
pub fn location_for<'a>(server: &'a Server, path: &str) -> Option<&'a Location> {
    if let Some(l) = server
        .locations
        .iter()
        .find(|l| l.kind != PathKind::ImplementationSpecific && l.path == path)
    {
        return Some(l);
    }
    if server.regex {
        let mut ls: Vec<&Location> = server
            .locations
            .iter()
            .filter(|l| l.kind != PathKind::Exact)
            .collect();
        ls.sort_by_key(|l| std::cmp::Reverse(l.path.len()));
        return ls
            .into_iter()
            .find(|l| regex_of(&l.path).is_some_and(|r| r.is_match(path)));
    }
    server
        .locations
        .iter()
        .filter(|l| match l.kind {
            PathKind::Exact => false,
            PathKind::Prefix => prefix_matches(&l.path, path),
            PathKind::ImplementationSpecific => path.starts_with(&l.path),
        })
        .max_by_key(|l| l.path.trim_end_matches('/').len())
}

/// `rewrite (?i)^PATH TARGET break;`: the target with `$1`… filled from the match.
fn rewrite(l: &Location, path: &str) -> String {
    let Some(target) = &l.rewrite else {
        return path.to_string();
    };
    let Some(caps) = regex_of(&l.path).and_then(|r| r.captures(path)) else {
        return path.to_string();
    };
    let mut out = String::new();
    let mut chars = target.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, chars.peek().and_then(|d| d.to_digit(10))) {
            ('$', Some(n)) => {
                chars.next();
                out.push_str(caps.get(n as usize).map_or("", |m| m.as_str()));
            }
            _ => out.push(c),
        }
    }
    if out.is_empty() || !out.starts_with('/') {
        out.insert(0, '/');
    }
    out
}

/// What nginx does with `GET uri` for `host`, over HTTPS or plain HTTP.
pub fn decide(cfg: &Config, host: &str, uri: &str, https: bool) -> Decision {
    let (name, server) = server_for(cfg, host);
    let (path, query) = uri
        .split_once('?')
        .map_or((uri, None), |(p, q)| (p, Some(q)));
    if server.tls && !https {
        let h = host.split(':').next().unwrap_or(host);
        return Decision::Redirect {
            location: format!("https://{h}{uri}"),
        };
    }
    let with_query = |p: String| match query {
        Some(q) => format!("{p}?{q}"),
        None => p,
    };
    if let Some(l) = location_for(server, path) {
        let location = match (server.regex, l.kind) {
            (_, PathKind::Exact) => format!("location = {}", l.path),
            (true, _) => format!("location ~* \"^{}\"", l.path),
            (false, PathKind::Prefix) if l.path == path && l.path != "/" => {
                format!("location = {}", l.path)
            }
            (false, PathKind::Prefix) => {
                format!("location {}/", l.path.trim_end_matches('/'))
            }
            (false, PathKind::ImplementationSpecific) => format!("location {}", l.path),
        };
        return Decision::Proxy {
            backend: l.backend.clone(),
            server: name.to_string(),
            location: format!("{location} ({})", l.kind.name()),
            ingress: l.ingress.clone(),
            uri: with_query(rewrite(l, path)),
        };
    }
    match &server.default_backend {
        Some((b, ing)) => Decision::Proxy {
            backend: b.clone(),
            server: name.to_string(),
            location: "location / (defaultBackend)".into(),
            ingress: ing.clone(),
            uri: uri.to_string(),
        },
        None => Decision::NotFound {
            server: name.to_string(),
        },
    }
}

#[cfg(test)]
#[path = "ingress_route_tests.rs"]
mod tests;
