//! Structural pruning and defaulting of custom objects (apiextensions' `pruning` and
//! `defaulting` packages): fields the schema does not specify are dropped unless a
//! `x-kubernetes-preserve-unknown-fields: true` covers them, and missing properties get
//! their schema `default`.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::JSONSchemaProps;
use serde_json::{Map, Value};

use crate::apiserver::crd::schema::{additional, allows_any, items};

fn preserves(s: &JSONSchemaProps) -> bool {
    s.x_kubernetes_preserve_unknown_fields == Some(true)
        || s.x_kubernetes_embedded_resource == Some(true)
}

fn join(prefix: &str, name: &str) -> String {
    if prefix.is_empty() {
        name.to_string()
    } else {
        format!("{prefix}.{name}")
    }
}

/// Drops unknown fields of the object's content (everything but apiVersion, kind and
/// metadata), recording each dropped field's path in `dropped`.
pub fn prune_root(
    s: &JSONSchemaProps,
    content: &mut Map<String, Value>,
    dropped: &mut Vec<String>,
) {
    prune_map(s, content, "", dropped);
}

fn prune_map(
    s: &JSONSchemaProps,
    map: &mut Map<String, Value>,
    path: &str,
    dropped: &mut Vec<String>,
) {
    let props = s.properties.as_ref();
    let keys: Vec<String> = map.keys().cloned().collect();
    for k in keys {
        let sub = join(path, &k);
        if let Some(p) = props.and_then(|p| p.get(&k)) {
            if let Some(v) = map.get_mut(&k) {
                prune(p, v, &sub, dropped);
            }
        } else if let Some(a) = additional(s) {
            if let Some(v) = map.get_mut(&k) {
                prune(a, v, &sub, dropped);
            }
        } else if !preserves(s) && !allows_any(s) {
            map.remove(&k);
            dropped.push(sub);
        }
    }
}

fn prune(s: &JSONSchemaProps, v: &mut Value, path: &str, dropped: &mut Vec<String>) {
    match v {
        Value::Object(map) => prune_map(s, map, path, dropped),
        Value::Array(list) => {
            if let Some(item) = items(s) {
                for (i, x) in list.iter_mut().enumerate() {
                    prune(item, x, &format!("{path}[{i}]"), dropped);
                }
            }
        }
        _ => {}
    }
}

/// Fills missing properties that have a schema default, depth first.
pub fn default_root(s: &JSONSchemaProps, content: &mut Map<String, Value>) {
    default_map(s, content);
}

fn default_map(s: &JSONSchemaProps, map: &mut Map<String, Value>) {
    if let Some(props) = &s.properties {
        for (k, p) in props {
            if !map.contains_key(k) {
                if let Some(d) = &p.default {
                    map.insert(k.clone(), d.0.clone());
                }
            }
            if let Some(v) = map.get_mut(k) {
                default(p, v);
            }
        }
    } else if let Some(a) = additional(s) {
        for v in map.values_mut() {
            default(a, v);
        }
    }
}

fn default(s: &JSONSchemaProps, v: &mut Value) {
    match v {
        Value::Object(map) => default_map(s, map),
        Value::Array(list) => {
            if let Some(item) = items(s) {
                for x in list {
                    default(item, x);
                }
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn unknown_fields_go_and_defaults_come() {
        let s: JSONSchemaProps = serde_json::from_value(json!({"type": "object", "properties": {
            "spec": {"type": "object", "properties": {
                "replicas": {"type": "integer", "default": 1},
                "extra": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}}}))
        .unwrap();
        let mut content = json!({"spec": {"bogus": 1, "extra": {"anything": true}}, "top": 2})
            .as_object()
            .cloned()
            .unwrap();
        let mut dropped = Vec::new();
        prune_root(&s, &mut content, &mut dropped);
        default_root(&s, &mut content);
        assert_eq!(dropped, ["spec.bogus", "top"]);
        assert_eq!(
            Value::Object(content),
            json!({"spec": {"replicas": 1, "extra": {"anything": true}}})
        );
    }
}
