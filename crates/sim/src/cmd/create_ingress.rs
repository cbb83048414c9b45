//! `kubectl create ingress NAME --rule=host/path=service:port[,tls[=secret]]
//! [--class=C] [--default-backend=svc:port] [--annotation=k=v]` (`create_ingress.go`):
//! a path ending in `*` is a Prefix path, others are Exact; rules for the same host share
//! one rule; each host with `,tls` gets a TLS entry.

use serde_json::{json, Map, Value};

use crate::cmd::create_more::name_before_dash;
use crate::cmd::kubectl::Kubectl;
use crate::object::Kind;

fn word(s: &str) -> bool {
    !s.is_empty()
        && s.chars()
            .all(|c| c.is_alphanumeric() || c == '_' || c == '-')
}

/// A rule split as upstream's regular expression does: host, path, service, port, tls.
struct Rule<'a> {
    host: &'a str,
    path: &'a str,
    service: &'a str,
    port: &'a str,
    tls: Option<&'a str>,
}

fn parse_rule(rule: &str) -> Option<Rule<'_>> {
    let (main, tls) = match rule.split_once(",tls") {
        Some((m, t)) => (m, Some(t.strip_prefix('=').unwrap_or(t))),
        None => (rule, None),
    };
    if tls.is_some_and(|t| !t.is_empty() && !word(t)) {
        return None;
    }
    let slash = main.find('/')?;
    let (host, rest) = main.split_at(slash);
    if !host
        .chars()
        .all(|c| c.is_alphanumeric() || "_*-.".contains(c))
    {
        return None;
    }
    let (path, backend) = rest.rsplit_once('=')?;
    let (service, port) = backend.split_once(':')?;
    (word(service) && word(port)).then_some(Rule {
        host,
        path,
        service,
        port,
        tls,
    })
}

/// `parseIngressServicePort`: a number, else a port name.
fn backend(service: &str, port: &str) -> Value {
    let port = match port.parse::<i32>() {
        Ok(n) => json!({"number": n}),
        Err(_) => json!({"name": port}),
    };
    json!({"service": {"name": service, "port": port}})
}

/// `buildHTTPIngressPath`.
fn http_path(r: &Rule) -> Value {
    let (path, kind) = match r.path.strip_suffix('*') {
        Some(p) => (p, "Prefix"),
        None => (r.path, "Exact"),
    };
    json!({"path": path, "pathType": kind, "backend": backend(r.service, r.port)})
}

/// Builds the Ingress.
pub fn ingress(k: &Kubectl, args: &[String]) -> Result<(Kind, Value), i32> {
    let name = name_before_dash(k, "ingress", args)?;
    let rules = k.flags.all("rule");
    let default_backend = k.flags.get("default-backend").unwrap_or("");
    if default_backend.is_empty() && rules.is_empty() {
        return Err(k.error("not enough information provided: every ingress has to either specify a default-backend (which catches all traffic) or a list of rules (which catch specific paths)"));
    }
    let mut parsed = Vec::new();
    for r in &rules {
        match parse_rule(r) {
            Some(p) => parsed.push(p),
            None => {
                return Err(k.error(&format!(
                    "rule {r} is invalid and should be in format host/path=svcname:svcport[,tls[=secret]]"
                )))
            }
        }
    }
    let mut annotations = Map::new();
    for a in k.flags.all("annotation") {
        let Some((key, value)) = a.split_once('=') else {
            return Err(k.error(&format!(
                "annotation {a} is invalid and should be in format key=[value]"
            )));
        };
        annotations.insert(key.into(), value.into());
    }
    let mut spec = Map::new();
    if let Some(class) = k.flags.get("class").filter(|c| !c.is_empty()) {
        spec.insert("ingressClassName".into(), class.into());
    }
    if !default_backend.is_empty() {
        let parts: Vec<&str> = default_backend.split(':').collect();
        let [svc, port] = parts[..] else {
            return Err(k.error("default-backend should be in format servicename:serviceport"));
        };
        spec.insert("defaultBackend".into(), backend(svc, port));
    }
    let tls = tls_entries(&parsed);
    if !tls.is_empty() {
        spec.insert("tls".into(), Value::Array(tls));
    }
    let rules = http_rules(&parsed);
    if !rules.is_empty() {
        spec.insert("rules".into(), Value::Array(rules));
    }
    let mut metadata = json!({"name": name});
    if !annotations.is_empty() {
        metadata["annotations"] = Value::Object(annotations);
    }
    Ok((Kind::Ingress, json!({"metadata": metadata, "spec": spec})))
}

/// `buildTLSRules`: one entry per host with `,tls`; the secret named last carries over
/// to later hosts that name none, as upstream's loop variable does.
fn tls_entries(rules: &[Rule]) -> Vec<Value> {
    let (mut seen, mut out, mut secret) = (Vec::new(), Vec::new(), "");
    for r in rules {
        let Some(t) = r.tls else {
            continue;
        };
        if !seen.contains(&r.host) {
            if !t.is_empty() {
                secret = t;
            }
            let mut entry = Map::new();
            if !r.host.is_empty() {
                entry.insert("hosts".into(), json!([r.host]));
            }
            if !secret.is_empty() {
                entry.insert("secretName".into(), secret.into());
            }
            out.push(Value::Object(entry));
        }
        seen.push(r.host);
    }
    out
}

/// `buildIngressRules`: one rule per host, its paths in the order given.
fn http_rules(rules: &[Rule]) -> Vec<Value> {
    let mut out: Vec<(String, Vec<Value>)> = Vec::new();
    for r in rules {
        match out.iter_mut().find(|(h, _)| h == r.host) {
            Some((_, paths)) => paths.push(http_path(r)),
            None => out.push((r.host.to_string(), vec![http_path(r)])),
        }
    }
    out.into_iter()
        .map(|(host, paths)| {
            let mut rule = Map::new();
            if !host.is_empty() {
                rule.insert("host".into(), host.into());
            }
            rule.insert("http".into(), json!({"paths": paths}));
            Value::Object(rule)
        })
        .collect()
}
