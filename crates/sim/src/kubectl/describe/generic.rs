//! kubectl's generic describer (`genericDescriber`, `printUnstructuredContent`), used for
//! custom objects and CustomResourceDefinitions: name, namespace, labels and
//! annotations, then every other field in key order under labels made from its name.

use serde_json::Value;

use super::{annotations_multiline, labels_multiline, Writer};
use crate::object::Object;

/// The fields printed in the header, skipped in the body.
const SKIP: &[&str] = &[
    ".metadata.managedFields",
    ".metadata.name",
    ".metadata.namespace",
    ".metadata.labels",
    ".metadata.annotations",
];

/// `camelcase.Split`: runs of lower-case letters, upper-case letters (the last of which
/// starts the next word when a lower-case run follows), and anything else.
fn split_camel(s: &str) -> Vec<String> {
    let class = |c: char| {
        if c.is_lowercase() {
            1
        } else if c.is_uppercase() {
            2
        } else {
            3
        }
    };
    let mut runs: Vec<Vec<char>> = Vec::new();
    let mut last = 0;
    for c in s.chars() {
        let k = class(c);
        if k == last {
            if let Some(r) = runs.last_mut() {
                r.push(c);
            }
        } else {
            runs.push(vec![c]);
        }
        last = k;
    }
    for i in 0..runs.len().saturating_sub(1) {
        let upper_then_lower = runs[i].iter().all(|c| c.is_uppercase())
            && runs[i + 1].first().is_some_and(|c| c.is_lowercase());
        if upper_then_lower && runs[i].len() > 1 {
            if let Some(c) = runs[i].pop() {
                runs[i + 1].insert(0, c);
            }
        } else if upper_then_lower {
            let mut moved = std::mem::take(&mut runs[i]);
            moved.append(&mut runs[i + 1]);
            runs[i + 1] = moved;
        }
    }
    runs.into_iter()
        .filter(|r| !r.is_empty())
        .map(|r| r.into_iter().collect())
        .collect()
}

/// `smartLabelFor`: `apiVersion` → `API Version`, `cronSpec` → `Cron Spec`.
pub fn smart_label(field: &str) -> String {
    if field.chars().any(|c| !c.is_alphabetic() && c != '-') {
        return field.to_string();
    }
    let words: Vec<String> = split_camel(field)
        .into_iter()
        .filter(|p| p != "_")
        .map(|p| {
            let up = p.to_uppercase();
            if ["API", "URL", "UID", "OSB", "GUID"].contains(&up.as_str()) {
                up
            } else {
                let mut cs = p.chars();
                cs.next()
                    .map(|f| f.to_uppercase().chain(cs).collect())
                    .unwrap_or_default()
            }
        })
        .collect();
    words.join(" ")
}

/// Go's `%v` of a decoded JSON scalar.
fn scalar(v: &Value) -> String {
    match v {
        Value::Null => "<nil>".into(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn content(w: &mut Writer, level: usize, map: &serde_json::Map<String, Value>, prefix: &str) {
    for (field, value) in map {
        let expr = format!("{prefix}.{field}");
        if SKIP.contains(&expr.as_str()) {
            continue;
        }
        let label = smart_label(field);
        match value {
            Value::Object(m) => {
                w.line(level, &format!("{label}:"));
                content(w, level + 1, m, &expr);
            }
            Value::Array(items) => {
                w.line(level, &format!("{label}:"));
                for item in items {
                    match item {
                        Value::Object(m) => content(w, level + 1, m, &expr),
                        other => w.line(level + 1, &scalar(other)),
                    }
                }
            }
            other => w.line(level, &format!("{label}:\t{}", scalar(other))),
        }
    }
}

/// The generic describer's body for `obj`.
pub fn describe_generic(w: &mut Writer, obj: &Object) {
    let m = obj.meta();
    w.line(0, &format!("Name:\t{}", m.name.as_deref().unwrap_or("")));
    w.line(
        0,
        &format!("Namespace:\t{}", m.namespace.as_deref().unwrap_or("")),
    );
    labels_multiline(w, "", "Labels", m.labels.as_ref());
    annotations_multiline(w, "Annotations", m.annotations.as_ref());
    if let Value::Object(map) = obj.to_value() {
        content(w, 0, &map, "");
    }
}

#[cfg(test)]
mod tests {
    use super::smart_label;

    #[test]
    fn labels_read_like_kubectl() {
        assert_eq!(smart_label("apiVersion"), "API Version");
        assert_eq!(smart_label("creationTimestamp"), "Creation Timestamp");
        assert_eq!(smart_label("uid"), "UID");
        assert_eq!(smart_label("cronSpec"), "Cron Spec");
        assert_eq!(smart_label("openAPIV3Schema"), "openAPIV3Schema");
        assert_eq!(
            smart_label("x-kubernetes-list-type"),
            "X - Kubernetes - List - Type"
        );
        assert_eq!(smart_label("HTTPServer"), "HTTP Server");
    }
}
