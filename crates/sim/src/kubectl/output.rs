//! `kubectl get -o …`: parsing the output flag and the non-table printers (yaml, json, name,
//! jsonpath, custom-columns), byte for byte as kubectl prints them.

use std::sync::Arc;

use serde_json::Value;

use super::jsonpath::{self, JsonPath};
use super::yaml::to_yaml;
use crate::object::{Kind, Object};

/// What `-o/--output` asked for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OutputFormat {
    /// No `-o`: the server-side table.
    Table,
    /// `-o wide`: the table with priority columns.
    Wide,
    /// `-o yaml`.
    Yaml,
    /// `-o json`.
    Json,
    /// `-o name`: `kind.group/name` per object.
    Name,
    /// `-o jsonpath=TEMPLATE` (also `jsonpath-as-json=`, with `as_json`).
    JsonPath {
        /// The template as given.
        template: String,
        /// `jsonpath-as-json`: print results as an indented JSON array.
        as_json: bool,
    },
    /// `-o custom-columns=HEADER:PATH,...`.
    CustomColumns(String),
}

/// The formats `kubectl get` accepts, sorted as in its error message (v1.35, kyaml enabled).
pub const GET_ALLOWED_FORMATS: &[&str] = &[
    "custom-columns",
    "custom-columns-file",
    "go-template",
    "go-template-file",
    "json",
    "jsonpath",
    "jsonpath-as-json",
    "jsonpath-file",
    "kyaml",
    "name",
    "template",
    "templatefile",
    "wide",
    "yaml",
];

impl OutputFormat {
    /// Parses the value of `-o`. The error is kubectl's message, without the `error: ` prefix.
    pub fn parse(flag: &str) -> Result<OutputFormat, String> {
        let (name, arg) = match flag.split_once('=') {
            Some((n, a)) => (n, Some(a)),
            None => (flag, None),
        };
        let format = match (name, arg) {
            ("", None) => OutputFormat::Table,
            ("wide", None) => OutputFormat::Wide,
            ("yaml", None) => OutputFormat::Yaml,
            ("json", None) => OutputFormat::Json,
            ("name", None) => OutputFormat::Name,
            ("jsonpath", Some(t)) | ("jsonpath-as-json", Some(t)) => {
                if t.is_empty() {
                    return Err("template format specified but no template given".to_string());
                }
                JsonPath::parse(t)?;
                OutputFormat::JsonPath {
                    template: t.to_string(),
                    as_json: name == "jsonpath-as-json",
                }
            }
            ("custom-columns", Some(spec)) => {
                jsonpath::parse_custom_columns(spec)?;
                OutputFormat::CustomColumns(spec.to_string())
            }
            _ => {
                return Err(format!(
                    "unable to match a printer suitable for the output format \"{}\", allowed formats are: {}",
                    flag,
                    GET_ALLOWED_FORMATS.join(",")
                ))
            }
        };
        Ok(format)
    }

    /// Whether this format prints a table (and so is handled by `printers::print_table`).
    pub fn is_table(&self) -> bool {
        matches!(self, OutputFormat::Table | OutputFormat::Wide)
    }
}

/// An object as kubectl's unstructured client sees it: `apiVersion` and `kind` always set.
pub fn object_value(obj: &Object) -> Value {
    let mut v = obj.to_value();
    if let Value::Object(m) = &mut v {
        let info = obj.kind().info();
        m.insert("apiVersion".into(), Value::String(info.api_version()));
        m.insert("kind".into(), Value::String(info.kind.to_string()));
    }
    v
}

/// The `kind: List` wrapper kubectl prints for several objects (or a list request).
pub fn list_value(objects: &[Arc<Object>]) -> Value {
    serde_json::json!({
        "apiVersion": "v1",
        "items": objects.iter().map(|o| object_value(o)).collect::<Vec<_>>(),
        "kind": "List",
        "metadata": {"resourceVersion": ""},
    })
}

/// Prints objects in a non-table format. `single` is kubectl's "single item implied" (one
/// object asked for by name): then the object itself is printed, otherwise a `List`.
/// `-o name` and custom-columns print one line per object either way.
pub fn print_objects(
    objects: &[Arc<Object>],
    format: &OutputFormat,
    single: bool,
    no_headers: bool,
) -> Result<String, String> {
    let value = || {
        if single && objects.len() == 1 {
            object_value(&objects[0])
        } else {
            list_value(objects)
        }
    };
    match format {
        OutputFormat::Yaml => Ok(to_yaml(&value())),
        OutputFormat::Json => Ok(to_json(&value())),
        OutputFormat::Name => Ok(objects.iter().map(|o| resource_name(o) + "\n").collect()),
        OutputFormat::JsonPath { template, as_json } => {
            JsonPath::parse(template)?.execute(&value(), *as_json)
        }
        OutputFormat::CustomColumns(spec) => {
            let columns = jsonpath::parse_custom_columns(spec)?;
            let values: Vec<Value> = objects.iter().map(|o| object_value(o)).collect();
            Ok(jsonpath::print_custom_columns(
                &columns, &values, no_headers,
            ))
        }
        OutputFormat::Table | OutputFormat::Wide => {
            Err("table formats are printed by printers::print_table".to_string())
        }
    }
}

/// `-o name`: `pod/nginx`, `deployment.apps/nginx`.
pub fn resource_name(obj: &Object) -> String {
    format!("{}/{}", kind_prefix(obj.kind()), obj.name())
}

/// The lowercased `Kind.group` kubectl puts before a name: `deployment.apps`, `pod`.
pub fn kind_prefix(kind: Kind) -> String {
    let info = kind.info();
    if info.group.is_empty() {
        info.kind.to_ascii_lowercase()
    } else {
        format!("{}.{}", info.kind.to_ascii_lowercase(), info.group)
    }
}

/// `json.MarshalIndent(obj, "", "    ")` plus a newline, over kubectl's unstructured maps
/// (so keys are sorted bytewise and `<`, `>`, `&` are escaped as Go does).
pub fn to_json(v: &Value) -> String {
    let mut out = String::new();
    write_json(&mut out, v, 0, true, &Sorted);
    out.push('\n');
    out
}

/// The order a JSON printer writes an object's keys in.
pub trait KeyOrder {
    /// Sorts `keys`, the keys of an object found under the key `parent` (`""` at the
    /// top; elements of an array are under the array's key).
    fn sort(&self, parent: &str, keys: &mut Vec<&String>);
}

/// Bytewise sorted keys, as Go marshals maps.
struct Sorted;

impl KeyOrder for Sorted {
    fn sort(&self, _parent: &str, keys: &mut Vec<&String>) {
        keys.sort();
    }
}

/// [`to_json`] with keys in `order` (typed Go structs marshal in field order).
pub fn to_json_ordered(v: &Value, order: &dyn KeyOrder) -> String {
    let mut out = String::new();
    write_json_at(&mut out, v, 0, true, order, "");
    out.push('\n');
    out
}

/// Compact Go-style JSON (`json.Marshal`), used by jsonpath for maps and lists.
pub fn to_json_compact(v: &Value) -> String {
    let mut out = String::new();
    write_json(&mut out, v, 0, false, &Sorted);
    out
}

fn write_json(out: &mut String, v: &Value, depth: usize, indent: bool, order: &dyn KeyOrder) {
    write_json_at(out, v, depth, indent, order, "")
}

fn write_json_at(
    out: &mut String,
    v: &Value,
    depth: usize,
    indent: bool,
    order: &dyn KeyOrder,
    parent: &str,
) {
    let newline = |out: &mut String, depth: usize| {
        if indent {
            out.push('\n');
            for _ in 0..depth {
                out.push_str("    ");
            }
        }
    };
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => out.push_str(&go_json_number(n)),
        Value::String(s) => write_json_string(out, s),
        Value::Array(items) if items.is_empty() => out.push_str("[]"),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                newline(out, depth + 1);
                write_json_at(out, item, depth + 1, indent, order, parent);
            }
            newline(out, depth);
            out.push(']');
        }
        Value::Object(map) if map.is_empty() => out.push_str("{}"),
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            order.sort(parent, &mut keys);
            out.push('{');
            for (i, k) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                newline(out, depth + 1);
                write_json_string(out, k);
                out.push(':');
                if indent {
                    out.push(' ');
                }
                write_json_at(out, &map[k.as_str()], depth + 1, indent, order, k);
            }
            newline(out, depth);
            out.push('}');
        }
    }
}

fn write_json_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '<' | '>' | '&' | '\u{2028}' | '\u{2029}' => {
                out.push_str(&format!("\\u{:04x}", c as u32));
            }
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Go's JSON number formatting for float64 (`'f'` unless the exponent is < -6 or >= 21).
fn go_json_number(n: &serde_json::Number) -> String {
    if n.is_i64() || n.is_u64() {
        return n.to_string();
    }
    let f = n.as_f64().unwrap_or(0.0);
    let abs = f.abs();
    if abs != 0.0 && !(1e-6..1e21).contains(&abs) {
        let s = format!("{f:e}");
        let (m, e) = s.split_once('e').unwrap_or((&s, "0"));
        let e: i32 = e.parse().unwrap_or(0);
        let sign = if e < 0 { '-' } else { '+' };
        return format!("{m}e{sign}{:02}", e.abs())
            .replace("e-0", "e-")
            .replace("e+0", "e+");
    }
    format!("{f}")
}

#[cfg(test)]
#[path = "output_tests.rs"]
mod tests;
