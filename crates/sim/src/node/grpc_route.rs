//! A GRPCRoute's matches as envoy routes them: gRPC calls are HTTP/2 POSTs to
//! `/<service>/<method>`, so Envoy Gateway turns a `method` match into a path match —
//! service and method `Exact` into the exact path, service alone into its path prefix,
//! method alone or `RegularExpression` into a regex over the path.

use serde_json::Value;

use crate::node::gateway_model::{Match, PathType, ValueMatch};

fn text<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str).filter(|s| !s.is_empty())
}

/// The path match of a GRPCRoute `method` match (`None` or empty: every call).
pub fn path_of(method: Option<&Value>) -> (PathType, String) {
    let m = method.cloned().unwrap_or(Value::Null);
    let (service, name) = (text(&m, "service"), text(&m, "method"));
    let regex = text(&m, "type") == Some("RegularExpression");
    match (service, name, regex) {
        (None, None, _) => (PathType::Prefix, "/".into()),
        (Some(s), Some(n), false) => (PathType::Exact, format!("/{s}/{n}")),
        (Some(s), None, false) => (PathType::Prefix, format!("/{s}")),
        (s, n, regex) => {
            let part = |p: Option<&str>| match p {
                Some(p) if regex => p.to_string(),
                Some(p) => regex::escape(p),
                None => "[^/]+".into(),
            };
            (PathType::Regex, format!("/{}/{}", part(s), part(n)))
        }
    }
}

/// One GRPCRoute match: the method as a path, headers as HTTPRoute's.
pub fn read_match(m: &Value, headers: Vec<ValueMatch>) -> Match {
    Match {
        path: path_of(m.get("method")),
        headers,
        method: None,
        query: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn methods_become_the_paths_grpc_calls_use() {
        let p = |v: Value| path_of(Some(&v));
        assert_eq!(
            p(json!({"service": "echo.Echo", "method": "Say"})),
            (PathType::Exact, "/echo.Echo/Say".into())
        );
        assert_eq!(
            p(json!({"service": "echo.Echo"})),
            (PathType::Prefix, "/echo.Echo".into())
        );
        assert_eq!(
            p(json!({"method": "Say"})),
            (PathType::Regex, "/[^/]+/Say".into())
        );
        assert_eq!(
            p(json!({"type": "RegularExpression", "service": "echo\\..*", "method": "S.*"})),
            (PathType::Regex, "/echo\\..*/S.*".into())
        );
        assert_eq!(path_of(None), (PathType::Prefix, "/".into()));
    }
}
