//! Patch application: JSON merge patch (RFC 7386), strategic merge patch (merge keys of
//! the built-in types), and JSON patch (RFC 6902).

use serde_json::{Map, Value};

use crate::api::PatchType;

/// Applies a patch of the given type to `target`.
pub fn apply(target: &Value, patch_type: PatchType, patch: &Value) -> Result<Value, String> {
    match patch_type {
        PatchType::Merge => Ok(merge_patch(target, patch)),
        PatchType::StrategicMerge => strategic_merge(target, patch, ""),
        PatchType::Json => json_patch(target, patch),
    }
}

/// RFC 7386: objects merge recursively, `null` deletes, anything else replaces.
pub fn merge_patch(target: &Value, patch: &Value) -> Value {
    let Value::Object(p) = patch else {
        return patch.clone();
    };
    let mut out = match target {
        Value::Object(t) => t.clone(),
        _ => Map::new(),
    };
    for (k, v) in p {
        if v.is_null() {
            out.remove(k);
        } else {
            let merged = merge_patch(out.get(k).unwrap_or(&Value::Null), v);
            out.insert(k.clone(), merged);
        }
    }
    Value::Object(out)
}

/// The merge key of a list field of the built-in types, by field name and item shape.
pub(crate) fn merge_key(field: &str, sample: Option<&Value>) -> Option<&'static str> {
    match field {
        "containers"
        | "initContainers"
        | "ephemeralContainers"
        | "volumes"
        | "env"
        | "imagePullSecrets"
        | "resourceClaims" => Some("name"),
        "volumeMounts" => Some("mountPath"),
        "volumeDevices" => Some("devicePath"),
        "conditions" => Some("type"),
        "ownerReferences" => Some("uid"),
        "addresses" => Some("type"),
        "hostAliases" => Some("ip"),
        "topologySpreadConstraints" => Some("topologyKey"),
        "ports" => {
            if sample.and_then(|s| s.get("containerPort")).is_some() {
                Some("containerPort")
            } else {
                Some("port")
            }
        }
        _ => None,
    }
}

/// Primitive lists merged as sets.
fn is_set_list(field: &str) -> bool {
    field == "finalizers"
}

/// Strategic merge patch with `$patch: delete|replace` and `$retainKeys`-free semantics.
pub fn strategic_merge(target: &Value, patch: &Value, field: &str) -> Result<Value, String> {
    match patch {
        Value::Object(p) => {
            if p.get("$patch").and_then(Value::as_str) == Some("replace") {
                let mut c = p.clone();
                c.remove("$patch");
                return Ok(Value::Object(c));
            }
            let mut out = match target {
                Value::Object(t) => t.clone(),
                _ => Map::new(),
            };
            for (k, v) in p {
                if k.starts_with('$') {
                    continue;
                }
                if let Some(list) = k.strip_prefix("$setElementOrder/") {
                    let _ = list;
                    continue;
                }
                if v.is_null() {
                    out.remove(k);
                    continue;
                }
                let merged = strategic_merge(out.get(k).unwrap_or(&Value::Null), v, k)?;
                out.insert(k.clone(), merged);
            }
            Ok(Value::Object(out))
        }
        Value::Array(items) => {
            let existing = target.as_array().cloned().unwrap_or_default();
            if is_set_list(field) {
                let mut out = existing;
                for i in items {
                    if !out.contains(i) {
                        out.push(i.clone());
                    }
                }
                return Ok(Value::Array(out));
            }
            let Some(key) = merge_key(field, items.first().or(existing.first())) else {
                return Ok(patch.clone());
            };
            let mut out = existing;
            for item in items {
                let Some(kv) = item.get(key) else {
                    return Err(format!(
                        "map: {item} does not contain declared merge key: {key}"
                    ));
                };
                let pos = out.iter().position(|e| e.get(key) == Some(kv));
                let directive = item.get("$patch").and_then(Value::as_str);
                match (pos, directive) {
                    (Some(i), Some("delete")) => {
                        out.remove(i);
                    }
                    (None, Some("delete")) => {}
                    (Some(i), _) => {
                        let merged = strategic_merge(&out[i], item, "")?;
                        out[i] = merged;
                    }
                    (None, _) => {
                        let mut clean = item.clone();
                        if let Value::Object(m) = &mut clean {
                            m.remove("$patch");
                        }
                        out.push(clean);
                    }
                }
            }
            Ok(Value::Array(out))
        }
        other => Ok(other.clone()),
    }
}

fn pointer_parts(path: &str) -> Result<Vec<String>, String> {
    if path.is_empty() {
        return Ok(Vec::new());
    }
    let Some(rest) = path.strip_prefix('/') else {
        return Err(format!(
            "add operation does not apply: doc is missing path: \"{path}\""
        ));
    };
    Ok(rest
        .split('/')
        .map(|p| p.replace("~1", "/").replace("~0", "~"))
        .collect())
}

fn parent_mut<'a>(
    doc: &'a mut Value,
    parts: &[String],
    path: &str,
) -> Result<&'a mut Value, String> {
    let mut cur = doc;
    for p in &parts[..parts.len().saturating_sub(1)] {
        cur = match cur {
            Value::Object(m) => m.get_mut(p),
            Value::Array(a) => p.parse::<usize>().ok().and_then(|i| a.get_mut(i)),
            _ => None,
        }
        .ok_or_else(|| format!("doc is missing path: \"{path}\": missing value"))?;
    }
    Ok(cur)
}

/// RFC 6902 JSON patch (add, remove, replace, test, move, copy).
pub fn json_patch(target: &Value, patch: &Value) -> Result<Value, String> {
    let ops = patch
        .as_array()
        .ok_or("json: cannot unmarshal object into Go value of type jsonpatch.Patch")?;
    let mut doc = target.clone();
    for op in ops {
        let kind = op.get("op").and_then(Value::as_str).unwrap_or("");
        let path = op.get("path").and_then(Value::as_str).unwrap_or("");
        match kind {
            "add" | "replace" => {
                let value = op.get("value").cloned().unwrap_or(Value::Null);
                set_at(&mut doc, path, value, kind == "add")?;
            }
            "remove" => {
                remove_at(&mut doc, path)?;
            }
            "test" => {
                let want = op.get("value").cloned().unwrap_or(Value::Null);
                if doc.pointer(path) != Some(&want) {
                    return Err(format!("testing value {path} failed: test failed"));
                }
            }
            "move" | "copy" => {
                let from = op.get("from").and_then(Value::as_str).unwrap_or("");
                let v = doc
                    .pointer(from)
                    .cloned()
                    .ok_or_else(|| format!("doc is missing from path: \"{from}\""))?;
                if kind == "move" {
                    remove_at(&mut doc, from)?;
                }
                set_at(&mut doc, path, v, true)?;
            }
            other => return Err(format!("Unexpected kind: {other}")),
        }
    }
    Ok(doc)
}

fn set_at(doc: &mut Value, path: &str, value: Value, insert: bool) -> Result<(), String> {
    let parts = pointer_parts(path)?;
    let Some(last) = parts.last() else {
        *doc = value;
        return Ok(());
    };
    match parent_mut(doc, &parts, path)? {
        Value::Object(m) => {
            if !insert && !m.contains_key(last) {
                return Err(format!(
                    "replace operation does not apply: doc is missing key: {path}: missing value"
                ));
            }
            m.insert(last.clone(), value);
        }
        Value::Array(a) => {
            if last == "-" {
                a.push(value);
            } else {
                let i: usize = last.parse().map_err(|_| format!("invalid index: {last}"))?;
                if insert && i <= a.len() {
                    a.insert(i, value);
                } else if !insert && i < a.len() {
                    a[i] = value;
                } else {
                    return Err(format!(
                        "add operation does not apply: doc is missing path: \"{path}\""
                    ));
                }
            }
        }
        _ => return Err(format!("doc is missing path: \"{path}\": missing value")),
    }
    Ok(())
}

fn remove_at(doc: &mut Value, path: &str) -> Result<(), String> {
    let parts = pointer_parts(path)?;
    let Some(last) = parts.last() else {
        return Err("cannot remove the root".into());
    };
    let missing = || {
        format!("remove operation does not apply: doc is missing path: \"{path}\": missing value")
    };
    match parent_mut(doc, &parts, path)? {
        Value::Object(m) => m.remove(last).map(|_| ()).ok_or_else(missing),
        Value::Array(a) => {
            let i: usize = last.parse().map_err(|_| missing())?;
            if i < a.len() {
                a.remove(i);
                Ok(())
            } else {
                Err(missing())
            }
        }
        _ => Err(missing()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn merge_patch_deletes_with_null_and_replaces_lists() {
        let t = json!({"a": 1, "b": {"c": 2, "d": 3}, "l": [1, 2]});
        let p = json!({"b": {"c": null, "e": 4}, "l": [3]});
        assert_eq!(
            merge_patch(&t, &p),
            json!({"a": 1, "b": {"d": 3, "e": 4}, "l": [3]})
        );
    }

    #[test]
    fn strategic_merge_merges_containers_by_name() {
        let t = json!({"spec": {"containers": [{"name": "a", "image": "nginx:1"}, {"name": "b", "image": "redis"}]}});
        let p = json!({"spec": {"containers": [{"name": "a", "image": "nginx:2"}, {"name": "b", "$patch": "delete"}]}});
        let r = strategic_merge(&t, &p, "").unwrap();
        assert_eq!(
            r,
            json!({"spec": {"containers": [{"name": "a", "image": "nginx:2"}]}})
        );
    }

    #[test]
    fn json_patch_ops() {
        let t = json!({"spec": {"replicas": 1, "l": [1, 2]}});
        let p = json!([
            {"op": "replace", "path": "/spec/replicas", "value": 3},
            {"op": "add", "path": "/spec/l/-", "value": 9},
            {"op": "remove", "path": "/spec/l/0"}
        ]);
        assert_eq!(
            json_patch(&t, &p).unwrap(),
            json!({"spec": {"replicas": 3, "l": [2, 9]}})
        );
        assert!(json_patch(&t, &json!([{"op": "remove", "path": "/nope"}])).is_err());
    }
}
