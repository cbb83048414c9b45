//! Validating a custom object against its version's openAPIV3Schema, with the field
//! errors apiextensions-apiserver converts kube-openapi's results to
//! (`validation.go`'s `kubeOpenAPIResultToFieldErrors`).

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    JSONSchemaProps, JSONSchemaPropsOrArray, JSONSchemaPropsOrBool,
};
use serde_json::Value;

use crate::apiserver::field_error::{BadValue, FieldError, Path};

/// The schema of an array's items, if it has one.
pub fn items(s: &JSONSchemaProps) -> Option<&JSONSchemaProps> {
    match s.items.as_ref()? {
        JSONSchemaPropsOrArray::Schema(b) => Some(b),
        JSONSchemaPropsOrArray::Schemas(v) => v.first(),
    }
}

/// The schema of a map's values (`additionalProperties: {schema}`), if it has one.
pub fn additional(s: &JSONSchemaProps) -> Option<&JSONSchemaProps> {
    match s.additional_properties.as_ref()? {
        JSONSchemaPropsOrBool::Schema(b) => Some(b),
        JSONSchemaPropsOrBool::Bool(_) => None,
    }
}

/// Whether the schema lets any field through (`additionalProperties: true`).
pub fn allows_any(s: &JSONSchemaProps) -> bool {
    matches!(
        s.additional_properties,
        Some(JSONSchemaPropsOrBool::Bool(true))
    )
}

/// The schema's type name for a JSON value: `integer` for whole numbers.
pub fn type_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(n) if n.as_f64().is_some_and(|f| f.fract() == 0.0) => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn type_matches(expected: &str, v: &Value, s: &JSONSchemaProps) -> bool {
    let actual = type_of(v);
    if s.x_kubernetes_int_or_string == Some(true) {
        return matches!(actual, "integer" | "string");
    }
    match expected {
        "" => true,
        "number" => matches!(actual, "number" | "integer"),
        t => t == actual,
    }
}

/// How Go's `%v` prints a float64 bound: `10`, `2.5`.
fn go_float(f: f64) -> String {
    if f.fract() == 0.0 && f.abs() < 1e15 {
        format!("{}", f as i64)
    } else {
        format!("{f}")
    }
}

fn bad_value(v: &Value) -> BadValue {
    match v {
        Value::String(s) => BadValue::Str(s.clone()),
        Value::Bool(b) => BadValue::Bool(*b),
        Value::Number(n) if n.is_i64() => BadValue::Int(n.as_i64().unwrap_or(0)),
        other => BadValue::Json(other.to_string()),
    }
}

/// The path as kube-openapi names it in messages (`spec.replicas`).
fn body_name(p: &Path) -> String {
    p.as_str().to_string()
}

/// Validates `v` at `path` against `s`, appending field errors.
pub fn validate(s: &JSONSchemaProps, v: &Value, path: &Path, errs: &mut Vec<FieldError>) {
    if v.is_null() && s.nullable == Some(true) {
        return;
    }
    let expected = s.type_.as_deref().unwrap_or("");
    if !type_matches(expected, v, s) {
        let actual = type_of(v);
        let expected = if s.x_kubernetes_int_or_string == Some(true) {
            "integer,string"
        } else {
            expected
        };
        errs.push(FieldError::invalid(
            path,
            actual,
            &format!(
                "{} in body must be of type {expected}: \"{actual}\"",
                body_name(path)
            ),
        ));
        return;
    }
    if let Some(options) = &s.enum_ {
        if !options.iter().any(|o| &o.0 == v) {
            let names: Vec<String> = options
                .iter()
                .map(|o| match &o.0 {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                })
                .collect();
            let refs: Vec<&str> = names.iter().map(String::as_str).collect();
            errs.push(FieldError::not_supported(path, bad_value(v), &refs));
        }
    }
    match v {
        Value::String(text) => validate_string(s, text, path, errs),
        Value::Number(n) => validate_number(s, n.as_f64().unwrap_or(0.0), v, path, errs),
        Value::Array(list) => validate_array(s, list, path, errs),
        Value::Object(map) => validate_object(s, map, path, errs),
        _ => {}
    }
}

fn validate_string(s: &JSONSchemaProps, text: &str, path: &Path, errs: &mut Vec<FieldError>) {
    let chars = text.chars().count() as i64;
    if let Some(max) = s.max_length.filter(|m| chars > *m) {
        errs.push(FieldError::too_long(path, max as usize));
    }
    if let Some(min) = s.min_length.filter(|m| chars < *m) {
        errs.push(FieldError::invalid(
            path,
            text,
            &format!(
                "{} in body should be at least {min} chars long",
                body_name(path)
            ),
        ));
    }
    if let Some(p) = &s.pattern {
        // An ECMA-262 pattern the regex engine cannot compile was refused with the CRD.
        if let Ok(re) = regex::Regex::new(p) {
            if !re.is_match(text) {
                errs.push(FieldError::invalid(
                    path,
                    text,
                    &format!("{} in body should match '{p}'", body_name(path)),
                ));
            }
        }
    }
}

fn validate_number(
    s: &JSONSchemaProps,
    f: f64,
    v: &Value,
    path: &Path,
    errs: &mut Vec<FieldError>,
) {
    let name = body_name(path);
    if let Some(max) = s.maximum {
        let exclusive = s.exclusive_maximum == Some(true);
        if f > max || (exclusive && f == max) {
            let rel = if exclusive {
                "less than"
            } else {
                "less than or equal to"
            };
            let d = format!("{name} in body should be {rel} {}", go_float(max));
            errs.push(FieldError::invalid(path, bad_value(v), &d));
        }
    }
    if let Some(min) = s.minimum {
        let exclusive = s.exclusive_minimum == Some(true);
        if f < min || (exclusive && f == min) {
            let rel = if exclusive {
                "greater than"
            } else {
                "greater than or equal to"
            };
            let d = format!("{name} in body should be {rel} {}", go_float(min));
            errs.push(FieldError::invalid(path, bad_value(v), &d));
        }
    }
    if let Some(m) = s
        .multiple_of
        .filter(|m| *m != 0.0 && (f / m).fract() != 0.0)
    {
        let d = format!("{name} in body should be a multiple of {}", go_float(m));
        errs.push(FieldError::invalid(path, bad_value(v), &d));
    }
}

fn validate_array(s: &JSONSchemaProps, list: &[Value], path: &Path, errs: &mut Vec<FieldError>) {
    let n = list.len();
    if let Some(max) = s.max_items.filter(|m| n as i64 > *m) {
        errs.push(FieldError::too_many(path, n, max as usize));
    }
    if let Some(min) = s.min_items.filter(|m| (n as i64) < *m) {
        errs.push(FieldError::invalid(
            path,
            n as i64,
            &format!(
                "{} in body should have at least {min} items",
                body_name(path)
            ),
        ));
    }
    if let Some(item) = items(s) {
        for (i, x) in list.iter().enumerate() {
            validate(item, x, &path.index(i), errs);
        }
    }
    duplicates(s, list, path, errs);
}

/// `x-kubernetes-list-type: set` (items unique) and `map` (items unique by their
/// `x-kubernetes-list-map-keys`): `Duplicate value` at each repeated item.
fn duplicates(s: &JSONSchemaProps, list: &[Value], path: &Path, errs: &mut Vec<FieldError>) {
    let identity = |x: &Value| -> Value {
        match s.x_kubernetes_list_type.as_deref() {
            Some("map") => {
                let keys = s.x_kubernetes_list_map_keys.iter().flatten();
                Value::Object(
                    keys.map(|k| (k.clone(), x.get(k).cloned().unwrap_or(Value::Null)))
                        .collect(),
                )
            }
            _ => x.clone(),
        }
    };
    if !matches!(s.x_kubernetes_list_type.as_deref(), Some("set" | "map")) {
        return;
    }
    let mut seen: Vec<Value> = Vec::new();
    for (i, x) in list.iter().enumerate() {
        let id = identity(x);
        if seen.contains(&id) {
            errs.push(FieldError::duplicate(&path.index(i), bad_value(&id)));
        } else {
            seen.push(id);
        }
    }
}

fn validate_object(
    s: &JSONSchemaProps,
    map: &serde_json::Map<String, Value>,
    path: &Path,
    errs: &mut Vec<FieldError>,
) {
    for r in s.required.iter().flatten() {
        if !map.contains_key(r) {
            errs.push(FieldError::required(&child(path, r), ""));
        }
    }
    let n = map.len() as i64;
    if let Some(max) = s.max_properties.filter(|m| n > *m) {
        errs.push(FieldError::too_many(path, n as usize, max as usize));
    }
    if let Some(min) = s.min_properties.filter(|m| n < *m) {
        errs.push(FieldError::invalid(
            path,
            n,
            &format!(
                "{} in body should have at least {min} properties",
                body_name(path)
            ),
        ));
    }
    let props = s.properties.as_ref();
    for (k, x) in map {
        let sub = child(path, k);
        if let Some(p) = props.and_then(|p| p.get(k)) {
            validate(p, x, &sub, errs);
        } else if let Some(a) = additional(s) {
            validate(a, x, &sub, errs);
        }
    }
}

/// The root of an object's fields (`Path::new("")`, printed `[]` by itself).
pub fn root() -> Path {
    Path::new("")
}

/// `a.b`, or just `b` at the root.
pub fn child(path: &Path, name: &str) -> Path {
    if path.as_str() == root().as_str() {
        Path::new(name)
    } else {
        path.child(name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema(v: Value) -> JSONSchemaProps {
        serde_json::from_value(v).unwrap()
    }

    fn errors(s: Value, v: Value) -> Vec<String> {
        let mut errs = Vec::new();
        validate(&schema(s), &v, &root(), &mut errs);
        errs.iter().map(|e| e.to_string()).collect()
    }

    #[test]
    fn field_errors_read_like_kube_openapi() {
        let s = json!({"type": "object", "required": ["spec"], "properties": {"spec": {
            "type": "object", "required": ["image"], "properties": {
                "replicas": {"type": "integer", "minimum": 1, "maximum": 10},
                "cronSpec": {"type": "string", "pattern": "^\\d+$"},
                "size": {"type": "string", "enum": ["small", "large"]},
                "name": {"type": "string", "maxLength": 3, "minLength": 2},
                "tags": {"type": "array", "maxItems": 1, "items": {"type": "string"}},
                "image": {"type": "string"}}}}});
        let got = errors(
            s,
            json!({"spec": {"replicas": 11, "cronSpec": "x", "size": "huge", "name": "abcd",
                "tags": ["a", 2]}}),
        );
        assert_eq!(
            got,
            [
                "spec.image: Required value",
                "spec.cronSpec: Invalid value: \"x\": spec.cronSpec in body should match '^\\d+$'",
                "spec.name: Too long: may not be more than 3 bytes",
                "spec.replicas: Invalid value: 11: spec.replicas in body should be less than or equal to 10",
                "spec.size: Unsupported value: \"huge\": supported values: \"small\", \"large\"",
                "spec.tags: Too many: 2: must have at most 1 items",
                "spec.tags[1]: Invalid value: \"integer\": spec.tags[1] in body must be of type string: \"integer\"",
            ]
        );
    }

    #[test]
    fn lower_bounds_nullable_and_int_or_string() {
        let s = json!({"type": "object", "properties": {
            "name": {"type": "string", "minLength": 3},
            "ports": {"type": "array", "minItems": 1, "items": {"type": "integer"}},
            "weight": {"type": "number", "exclusiveMinimum": true, "minimum": 0},
            "note": {"type": "string", "nullable": true},
            "port": {"x-kubernetes-int-or-string": true}}});
        let got = errors(
            s.clone(),
            json!({"name": "ab", "ports": [], "weight": 0, "note": null, "port": "http"}),
        );
        assert_eq!(
            got,
            [
                "name: Invalid value: \"ab\": name in body should be at least 3 chars long",
                "ports: Invalid value: 0: ports in body should have at least 1 items",
                "weight: Invalid value: 0: weight in body should be greater than 0",
            ]
        );
        let lists = json!({"type": "object", "properties": {
            "tags": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
            "ports": {"type": "array", "x-kubernetes-list-type": "map",
                "x-kubernetes-list-map-keys": ["name"], "items": {"type": "object",
                    "properties": {"name": {"type": "string"}, "port": {"type": "integer"}}}}}});
        assert_eq!(
            errors(
                lists,
                json!({"tags": ["a", "b", "a"],
                "ports": [{"name": "http", "port": 80}, {"name": "http", "port": 81}]})
            ),
            [
                "ports[1]: Duplicate value: {\"name\":\"http\"}",
                "tags[2]: Duplicate value: \"a\"",
            ]
        );
        assert_eq!(
            errors(s, json!({"port": true})),
            ["port: Invalid value: \"boolean\": port in body must be of type integer,string: \"boolean\""]
        );
    }
}
