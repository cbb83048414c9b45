//! `kubectl wait --for=delete|condition=NAME[=VALUE]|jsonpath='{…}'[=VALUE]` (`wait.go`):
//! each resource in turn, under one `--timeout` (30s by default) in virtual time.

use std::sync::Arc;

use serde_json::Value;

use crate::api::{ApiRequest, ApiResult, Status, Verb};
use crate::cmd::kubectl::{kind_name, resolve_kind, Kubectl};
use crate::kubectl::jsonpath::{go_sprint, JsonPath};
use crate::kubectl::output::object_value;
use crate::object::{Kind, Object};
use crate::selector::LabelSelector;
use crate::time::{parse_duration, Time, SECOND};

/// How often the simulated watch looks again.
const POLL: Time = SECOND / 2;
/// A negative `--timeout` waits for a week.
const WEEK: Time = 168 * 3600 * SECOND;

/// What `--for` asked.
#[derive(Clone, Debug)]
enum Condition {
    Delete,
    Status {
        name: String,
        value: String,
    },
    JsonPath {
        path: JsonPath,
        value: Option<String>,
    },
}

/// `cmdget.RelaxedJSONPathExpression`: `.a.b`, `{.a.b}` and `a.b` all mean `{.a.b}`.
fn relaxed(expr: &str) -> Result<String, String> {
    let inner = expr.trim();
    let inner = inner.strip_prefix('{').unwrap_or(inner);
    let inner = inner.strip_suffix('}').unwrap_or(inner);
    if inner.contains(['{', '}']) {
        return Err(format!(
            "unexpected path string, expected a 'name1.name2' or '.name1.name2' or '{{name1.name2}}' or '{{.name1.name2}}'"
        ));
    }
    Ok(if inner.starts_with('.') {
        format!("{{{inner}}}")
    } else {
        format!("{{.{inner}}}")
    })
}

/// Splits on single `=`; `==` stays inside a part.
fn split_single_eq(input: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut chars = input.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '=' {
            if chars.peek() == Some(&'=') {
                chars.next();
                cur.push_str("==");
                continue;
            }
            out.push(std::mem::take(&mut cur));
            continue;
        }
        cur.push(c);
    }
    out.push(cur);
    out
}

fn parse_for(s: &str) -> Result<Condition, String> {
    if s.eq_ignore_ascii_case("delete") {
        return Ok(Condition::Delete);
    }
    if let Some(c) = s.strip_prefix("condition=") {
        let (name, value) = c.split_once('=').unwrap_or((c, "true"));
        return Ok(Condition::Status {
            name: name.to_string(),
            value: value.to_string(),
        });
    }
    if let Some(j) = s.strip_prefix("jsonpath=") {
        let parts = split_single_eq(j);
        if parts.is_empty() || parts.len() > 2 {
            return Err("jsonpath wait format must be --for=jsonpath='{.status.readyReplicas}'=3 or --for=jsonpath='{.status.readyReplicas}'".into());
        }
        if parts[0].trim().is_empty() {
            return Err("jsonpath expression cannot be empty".into());
        }
        let path = JsonPath::parse(&relaxed(&parts[0])?)?;
        let value = match parts.get(1) {
            None => None,
            Some(v) => {
                let v = v.trim_matches(|c| c == '\'' || c == '"');
                if v.is_empty() {
                    return Err("jsonpath wait has to have a value after equal sign, like --for=jsonpath='{.status.readyReplicas}'=3".into());
                }
                Some(v.to_string())
            }
        };
        return Ok(Condition::JsonPath { path, value });
    }
    Err(format!("unrecognized condition: \"{s}\""))
}

/// Whether the condition holds for `o` (`checkCondition`), or an error that ends the wait.
fn met(c: &Condition, o: &Object) -> Result<bool, String> {
    let v = object_value(o);
    match c {
        Condition::Delete => Ok(false),
        Condition::Status { name, value } => {
            let generation = v.pointer("/metadata/generation").and_then(Value::as_i64);
            let conds = v
                .pointer("/status/conditions")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            for cond in conds {
                let ty = cond.get("type").and_then(Value::as_str).unwrap_or_default();
                if !ty.eq_ignore_ascii_case(name) {
                    continue;
                }
                let Some(status) = cond.get("status").and_then(Value::as_str) else {
                    continue;
                };
                if let Some(g) = generation {
                    let observed = cond
                        .get("observedGeneration")
                        .or_else(|| v.pointer("/status/observedGeneration"))
                        .and_then(Value::as_i64);
                    if observed.is_some_and(|o| o < g) {
                        return Ok(false);
                    }
                }
                return Ok(status.eq_ignore_ascii_case(value));
            }
            Ok(false)
        }
        Condition::JsonPath { path, value } => {
            let results = path.find_results(&v)?;
            let Some(first) = results.first().filter(|r| !r.is_empty()) else {
                return Ok(false);
            };
            if results.len() > 1 {
                return Err("given jsonpath expression matches more than one list".into());
            }
            if first.len() > 1 {
                return Err("given jsonpath expression matches more than one value".into());
            }
            let Some(want) = value else { return Ok(true) };
            if matches!(first[0], Value::Object(_) | Value::Array(_)) {
                return Err(
                    "jsonpath leads to a nested object or list which is not supported".into(),
                );
            }
            Ok(go_sprint(&first[0]).trim() == want.trim())
        }
    }
}

/// The objects the arguments name: `TYPE/NAME…`, `TYPE NAME…`, `TYPE -l SEL`, `TYPE --all`.
async fn targets(k: &Kubectl, delete: bool) -> Result<Vec<Arc<Object>>, i32> {
    let args = &k.flags.args;
    let mut named: Vec<(Kind, String, String)> = Vec::new();
    if k.flags.has("filename") {
        let files = crate::cmd::apply::manifests(k)?;
        if files.finish(k, 0) != 0 {
            return Err(1);
        }
        for (file, m) in &files.manifests {
            let (kind, ns) = crate::cmd::apply::target(k, file, m).map_err(|e| k.error(&e))?;
            named.push((kind, ns, m.name.clone()));
        }
        return get_named(k, named, delete).await;
    }
    let Some(first) = args.first() else {
        return Err(k.error("You must provide one or more resources by argument or filename.\nExample resource specifications include:\n   '-f rsrc.yaml'\n   '--filename=rsrc.json'\n   '<resource> <name>'\n   '<resource>'"));
    };
    if first.contains('/') {
        for a in args {
            let (t, n) = a.split_once('/').unwrap_or((a, ""));
            let kind = resolve_kind(t, &k.custom).map_err(|e| k.error(&e))?;
            named.push((kind, ns_for(k, kind), n.to_string()));
        }
    } else {
        let kind = resolve_kind(first, &k.custom).map_err(|e| k.error(&e))?;
        if args.len() > 1 {
            named.extend(args[1..].iter().map(|n| (kind, ns_for(k, kind), n.clone())));
        } else if k.flags.has("selector") || k.flags.bool("all") {
            return list(k, kind).await;
        } else {
            return Err(k.error("resource(s) were provided, but no name was specified"));
        }
    }
    get_named(k, named, delete).await
}

/// The named objects, as the resource builder gets them.
async fn get_named(
    k: &Kubectl,
    named: Vec<(Kind, String, String)>,
    delete: bool,
) -> Result<Vec<Arc<Object>>, i32> {
    let mut out = Vec::new();
    for (kind, ns, name) in named {
        match k
            .sys
            .api(ApiRequest::new(Verb::Get, kind, &ns, &name))
            .await
        {
            Ok(ApiResult::Object(o)) => out.push(o),
            Ok(_) => {}
            // `--for=delete` ignores what is already gone.
            Err(s) if delete && s.is_not_found() => {}
            Err(s) => return Err(k.status_error(&s)),
        }
    }
    Ok(out)
}

fn ns_for(k: &Kubectl, kind: Kind) -> String {
    if kind.info().namespaced {
        k.namespace()
    } else {
        String::new()
    }
}

async fn list(k: &Kubectl, kind: Kind) -> Result<Vec<Arc<Object>>, i32> {
    let all_ns = k.flags.bool("all-namespaces");
    let ns = if all_ns {
        String::new()
    } else {
        ns_for(k, kind)
    };
    let mut req = ApiRequest::new(Verb::List, kind, &ns, "");
    if let Some(l) = k.flags.get("selector") {
        req.options.label_selector = Some(LabelSelector::parse(l).map_err(|e| k.error(&e))?);
    }
    match k.sys.api(req).await {
        Ok(ApiResult::List { items, .. }) => Ok(items),
        Ok(_) => Ok(Vec::new()),
        Err(s) => Err(k.status_error(&s)),
    }
}

fn timeout(k: &Kubectl) -> Result<Time, String> {
    match k.flags.get("timeout") {
        None => Ok(30 * SECOND),
        Some(t) if t.starts_with('-') => parse_duration(&t[1..])
            .map(|_| WEEK)
            .map_err(|e| format!("invalid argument \"{t}\" for \"--timeout\" flag: {e}")),
        Some(t) => parse_duration(t)
            .map_err(|e| format!("invalid argument \"{t}\" for \"--timeout\" flag: {e}")),
    }
}

/// `resource.group/name` as `info.ObjectName()` prints it, and `resource/name` as the
/// timeout error does.
fn object_names(kind: Kind, name: &str) -> (String, String) {
    let info = kind.info();
    let full = if info.group.is_empty() {
        format!("{}/{name}", info.plural)
    } else {
        format!("{}.{}/{name}", info.plural, info.group)
    };
    (full, format!("{}/{name}", info.plural))
}

/// Waits on one object until `deadline`.
async fn wait_one(
    k: &Kubectl,
    c: &Condition,
    o: &Object,
    deadline: Time,
    zero: bool,
) -> Result<(), i32> {
    let (kind, name) = (o.kind(), o.name().to_string());
    let ns = o.namespace().to_string();
    let uid = o.meta().uid.clone();
    let (full, short) = object_names(kind, &name);
    loop {
        let got = match k
            .sys
            .api(ApiRequest::new(Verb::Get, kind, &ns, &name))
            .await
        {
            Ok(ApiResult::Object(cur)) => Some(cur),
            Ok(_) => None,
            Err(s) if s.is_not_found() => None,
            Err(s) => return Err(k.status_error(&s)),
        };
        let done = match (&got, c) {
            (None, Condition::Delete) => true,
            (Some(cur), Condition::Delete) => cur.meta().uid != uid,
            (None, _) => return Err(k.status_error(&Status::not_found(kind, &name))),
            (Some(cur), _) => met(c, cur).map_err(|e| k.error(&e))?,
        };
        if done {
            k.sys
                .out(&format!("{} condition met\n", kind_name(kind, &name)));
            return Ok(());
        }
        if zero {
            return Err(k.error(&format!("condition not met for {full}")));
        }
        if k.sys.now() >= deadline {
            return Err(k.error(&format!("timed out waiting for the condition on {short}")));
        }
        k.sys.sleep(POLL.min(deadline - k.sys.now()).max(1)).await;
    }
}

/// `kubectl wait`.
pub async fn wait(k: Kubectl) -> i32 {
    let cond = match parse_for(k.flags.get("for").unwrap_or("")) {
        Ok(c) => c,
        Err(e) => return k.error(&e),
    };
    let limit = match timeout(&k) {
        Ok(t) => t,
        Err(e) => return k.error(&e),
    };
    let delete = matches!(cond, Condition::Delete);
    let objs = match targets(&k, delete).await {
        Ok(o) => o,
        Err(code) => return code,
    };
    if objs.is_empty() && !delete {
        return k.error("no matching resources found");
    }
    let deadline = k.sys.now() + limit;
    for o in objs {
        if let Err(code) = wait_one(&k, &cond, &o, deadline, limit == 0).await {
            return code;
        }
    }
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn for_flag_parses_as_kubectl_does() {
        assert!(matches!(parse_for("delete"), Ok(Condition::Delete)));
        match parse_for("condition=Available").unwrap() {
            Condition::Status { name, value } => {
                assert_eq!((name.as_str(), value.as_str()), ("Available", "true"))
            }
            other => panic!("{other:?}"),
        }
        match parse_for("condition=Ready=False").unwrap() {
            Condition::Status { value, .. } => assert_eq!(value, "False"),
            other => panic!("{other:?}"),
        }
        assert_eq!(split_single_eq("a==b=c"), ["a==b", "c"]);
        assert_eq!(relaxed(".status.phase").unwrap(), "{.status.phase}");
        assert_eq!(relaxed("status.phase").unwrap(), "{.status.phase}");
        assert_eq!(
            parse_for("ready").unwrap_err(),
            "unrecognized condition: \"ready\""
        );
        assert!(parse_for("jsonpath={.status.phase}=").is_err());
    }
}
