//! How envoy, configured by Envoy Gateway, picks a route for a request on a listener:
//! the most specific hostname (exact, then the longest wildcard, then any host), then
//! the Gateway API precedence among matches (Exact path, RegularExpression, the longest
//! PathPrefix, a method, the most header matches, the most query matches, then the
//! oldest route, then namespace/name, then rule and match order), then a weighted
//! backendRef (docs/design.md §6.18).

use crate::node::gateway_model::{
    effective_hostnames, host_matches, BackendRef, Listener, Match, PathType, Route,
};

/// The request envoy matches.
#[derive(Clone, Copy, Debug)]
pub struct Req<'a> {
    /// Host header without a port.
    pub host: &'a str,
    /// Path with the query string.
    pub path: &'a str,
    /// Method.
    pub method: &'a str,
    /// Headers sent (names as typed).
    pub headers: &'a [(String, String)],
}

/// The route, rule and match chosen.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Chosen {
    /// Index of the route in the list given.
    pub route: usize,
    /// Rule index.
    pub rule: usize,
    /// Match index.
    pub matched: usize,
    /// The hostname the request matched (`*` for any).
    pub host: String,
}

fn split_query(path: &str) -> (&str, &str) {
    path.split_once('?').unwrap_or((path, ""))
}

fn full_regex(pattern: &str, s: &str) -> bool {
    regex::Regex::new(&format!("^(?:{pattern})$")).is_ok_and(|r| r.is_match(s))
}

fn path_matches(ty: PathType, value: &str, path: &str) -> bool {
    match ty {
        PathType::Exact => path == value,
        PathType::Regex => full_regex(value, path),
        PathType::Prefix => {
            let v = value.trim_end_matches('/');
            v.is_empty() || path == v || path.starts_with(&format!("{v}/"))
        }
    }
}

/// Whether `m` matches the request.
pub fn matches(m: &Match, r: &Req) -> bool {
    let (path, query) = split_query(r.path);
    if !path_matches(m.path.0, &m.path.1, path) {
        return false;
    }
    if m.method.as_deref().is_some_and(|x| x != r.method) {
        return false;
    }
    let header_ok = m.headers.iter().all(|h| {
        r.headers
            .iter()
            .filter(|(n, _)| n.eq_ignore_ascii_case(&h.name))
            .any(|(_, v)| {
                if h.regex {
                    full_regex(&h.value, v)
                } else {
                    *v == h.value
                }
            })
    });
    let params: Vec<(&str, &str)> = query
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|p| p.split_once('=').unwrap_or((p, "")))
        .collect();
    let query_ok = m.query.iter().all(|q| {
        // The first value of a repeated parameter counts, as Envoy does.
        params
            .iter()
            .find(|(n, _)| *n == q.name)
            .is_some_and(|(_, v)| {
                if q.regex {
                    full_regex(&q.value, v)
                } else {
                    *v == q.value
                }
            })
    });
    header_ok && query_ok
}

/// How specific a matched hostname is: exact beats any wildcard, a longer wildcard beats
/// a shorter one, and any host comes last.
fn host_rank(hostnames: &[String], host: &str) -> Option<(u8, usize, String)> {
    if hostnames.is_empty() {
        return Some((0, 0, "*".into()));
    }
    hostnames
        .iter()
        .filter(|h| host_matches(h, host))
        .map(|h| {
            if h.starts_with('*') {
                (1, h.len(), h.clone())
            } else {
                (2, h.len(), h.clone())
            }
        })
        .max()
}

/// The precedence key of a match: smaller sorts first.
fn precedence(
    m: &Match,
) -> (
    u8,
    std::cmp::Reverse<usize>,
    u8,
    std::cmp::Reverse<usize>,
    std::cmp::Reverse<usize>,
) {
    let (kind, len) = match m.path.0 {
        PathType::Exact => (0, m.path.1.len()),
        PathType::Regex => (1, m.path.1.len()),
        PathType::Prefix => (2, m.path.1.len()),
    };
    (
        kind,
        std::cmp::Reverse(len),
        u8::from(m.method.is_none()),
        std::cmp::Reverse(m.headers.len()),
        std::cmp::Reverse(m.query.len()),
    )
}

/// The route, rule and match a request takes among `routes` attached to listener `l`,
/// if any.
pub fn choose(routes: &[Route], l: &Listener, r: &Req) -> Option<Chosen> {
    let ranked: Vec<(usize, (u8, usize, String))> = routes
        .iter()
        .enumerate()
        .filter_map(|(i, route)| {
            let hosts = effective_hostnames(route, l)?;
            host_rank(&hosts, r.host).map(|rank| (i, rank))
        })
        .collect();
    let best = ranked.iter().map(|(_, k)| (k.0, k.1)).max()?;
    let mut candidates = Vec::new();
    for (i, rank) in ranked.iter().filter(|(_, k)| (k.0, k.1) == best) {
        let route = &routes[*i];
        for (ri, rule) in route.rules.iter().enumerate() {
            for (mi, m) in rule.matches.iter().enumerate() {
                if matches(m, r) {
                    let key = (
                        precedence(m),
                        route.created.clone(),
                        format!("{}/{}", route.namespace, route.name),
                        ri,
                        mi,
                    );
                    candidates.push((
                        key,
                        Chosen {
                            route: *i,
                            rule: ri,
                            matched: mi,
                            host: rank.2.clone(),
                        },
                    ));
                }
            }
        }
    }
    candidates.sort_by(|a, b| a.0.cmp(&b.0));
    candidates.into_iter().next().map(|(_, c)| c)
}

/// The backendRef a draw in `0..total` picks (weights in order), and the total weight.
pub fn pick(backends: &[BackendRef], draw: impl FnOnce(u64) -> u64) -> (Option<usize>, u64) {
    let total: u64 = backends.iter().map(|b| b.weight).sum();
    if total == 0 {
        return (None, 0);
    }
    let mut x = draw(total);
    for (i, b) in backends.iter().enumerate() {
        if x < b.weight {
            return (Some(i), total);
        }
        x -= b.weight;
    }
    (None, total)
}

/// A match as the traffic walk names it (`PathPrefix /`, `Exact /a, GET, 1 header`).
pub fn describe(m: &Match) -> String {
    let ty = match m.path.0 {
        PathType::Exact => "Exact",
        PathType::Regex => "RegularExpression",
        PathType::Prefix => "PathPrefix",
    };
    let mut s = format!("{ty} {}", m.path.1);
    if let Some(x) = &m.method {
        s.push_str(&format!(", method {x}"));
    }
    for h in &m.headers {
        s.push_str(&format!(", header {}={}", h.name, h.value));
    }
    for q in &m.query {
        s.push_str(&format!(", query {}={}", q.name, q.value));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::node::gateway_model::{From, Rule, ValueMatch};

    fn m(ty: PathType, v: &str) -> Match {
        Match {
            path: (ty, v.into()),
            headers: vec![],
            method: None,
            query: vec![],
        }
    }

    fn route(name: &str, created: &str, hosts: &[&str], matches: Vec<Match>) -> Route {
        Route {
            kind: "HTTPRoute".into(),
            namespace: "default".into(),
            name: name.into(),
            created: created.into(),
            hostnames: hosts.iter().map(|h| h.to_string()).collect(),
            parents: vec![],
            rules: vec![Rule {
                matches,
                backends: vec![],
            }],
        }
    }

    fn listener(host: Option<&str>) -> Listener {
        Listener {
            name: "http".into(),
            port: 80,
            protocol: "HTTP".into(),
            hostname: host.map(String::from),
            from: From::Same,
            kinds: vec![],
            tls: None,
        }
    }

    fn req<'a>(host: &'a str, path: &'a str, headers: &'a [(String, String)]) -> Req<'a> {
        Req {
            host,
            path,
            method: "GET",
            headers,
        }
    }

    #[test]
    fn prefix_matches_whole_path_elements() {
        assert!(path_matches(PathType::Prefix, "/foo", "/foo/bar"));
        assert!(path_matches(PathType::Prefix, "/foo/", "/foo"));
        assert!(!path_matches(PathType::Prefix, "/foo", "/foobar"));
        assert!(path_matches(PathType::Regex, "/v[0-9]+/.*", "/v2/x"));
        assert!(!path_matches(PathType::Regex, "/v[0-9]+", "/v2/x"));
    }

    #[test]
    fn precedence_and_hostnames_order_the_candidates() {
        let routes = vec![
            route(
                "a",
                "2026-01-01T00:00:01Z",
                &[],
                vec![m(PathType::Prefix, "/")],
            ),
            route(
                "b",
                "2026-01-01T00:00:02Z",
                &[],
                vec![m(PathType::Prefix, "/api")],
            ),
            route(
                "c",
                "2026-01-01T00:00:03Z",
                &[],
                vec![m(PathType::Exact, "/api/x")],
            ),
            route(
                "d",
                "2026-01-01T00:00:04Z",
                &["*.example.com"],
                vec![m(PathType::Prefix, "/")],
            ),
            route(
                "e",
                "2026-01-01T00:00:05Z",
                &["www.example.com"],
                vec![m(PathType::Prefix, "/")],
            ),
        ];
        let l = listener(None);
        let pick = |h: &str, p: &str| {
            choose(&routes, &l, &req(h, p, &[])).map(|c| routes[c.route].name.clone())
        };
        assert_eq!(pick("x.org", "/api/x").as_deref(), Some("c"));
        assert_eq!(pick("x.org", "/api/y").as_deref(), Some("b"));
        assert_eq!(pick("x.org", "/other").as_deref(), Some("a"));
        assert_eq!(pick("foo.example.com", "/api/x").as_deref(), Some("d"));
        assert_eq!(pick("www.example.com", "/").as_deref(), Some("e"));
    }

    #[test]
    fn headers_break_ties_and_must_all_match() {
        let mut with = m(PathType::Prefix, "/");
        with.headers.push(ValueMatch {
            regex: false,
            name: "env".into(),
            value: "canary".into(),
        });
        let routes = vec![
            route(
                "plain",
                "2026-01-01T00:00:01Z",
                &[],
                vec![m(PathType::Prefix, "/")],
            ),
            route("canary", "2026-01-01T00:00:02Z", &[], vec![with]),
        ];
        let l = listener(None);
        let h = vec![("Env".to_string(), "canary".to_string())];
        assert_eq!(
            choose(&routes, &l, &req("a", "/", &h)).map(|c| c.route),
            Some(1)
        );
        assert_eq!(
            choose(&routes, &l, &req("a", "/", &[])).map(|c| c.route),
            Some(0)
        );
    }

    #[test]
    fn weights_split_in_order_and_zero_takes_nothing() {
        let b = |w| BackendRef {
            group: String::new(),
            kind: "Service".into(),
            name: "x".into(),
            namespace: "default".into(),
            port: Some(80),
            weight: w,
        };
        let v = vec![b(90), b(0), b(10)];
        assert_eq!(pick(&v, |_| 89), (Some(0), 100));
        assert_eq!(pick(&v, |_| 90), (Some(2), 100));
        assert_eq!(pick(&[b(0)], |_| 0), (None, 0));
    }
}
