//! `kubectl explain TYPE[.FIELD…] [--recursive]` in the layout of kubectl's OpenAPI v3
//! plaintext template, from the served kinds' schemas as k8s-openapi v1_35 carries them
//! (`kubectl/explain_schema.json`, made by `scripts/gen-explain-schema.py`). The schema
//! has no `enum` lists, so the `enum:` lines kubectl prints for some fields are missing.

use std::collections::BTreeSet;
use std::sync::OnceLock;

use serde_json::{Map, Value};

use crate::cmd::kubectl::{resolve_kind, Kubectl};
use crate::object::Kind;

static SCHEMA_TEXT: &str = include_str!("../kubectl/explain_schema.json");
static SCHEMA: OnceLock<Map<String, Value>> = OnceLock::new();

fn schema() -> &'static Map<String, Value> {
    SCHEMA.get_or_init(|| serde_json::from_str(SCHEMA_TEXT).unwrap_or_default())
}

/// `io.k8s.api.apps.v1.Deployment` for a kind.
fn definition_name(kind: Kind) -> String {
    let info = kind.info();
    let package = match info.group {
        "" => "core",
        g => g.split('.').next().unwrap_or(g),
    };
    format!("io.k8s.api.{package}.{}.{}", info.version, info.kind)
}

fn def(name: &str) -> Option<&'static Value> {
    schema().get(name)
}

/// `typeGuess`: `string`, `[]Container`, `map[string]string`, `ObjectMeta`, `Object`.
fn type_guess(f: &Value) -> String {
    if let Some(items) = f.get("items") {
        return format!("[]{}", type_guess(items));
    }
    if let Some(m) = f.get("map") {
        return format!("map[string]{}", type_guess(m));
    }
    if let Some(r) = f.get("ref").and_then(Value::as_str) {
        return match def(r).and_then(|d| d.get("t")).and_then(Value::as_str) {
            None | Some("object") => r.rsplit('.').next().unwrap_or("Object").to_string(),
            Some(t) => t.to_string(),
        };
    }
    match f.get("t").and_then(Value::as_str) {
        None | Some("object") => "Object".into(),
        Some(t) => t.into(),
    }
}

/// go-wordwrap's `WrapString`: break at whitespace so lines stay within `lim`; a word
/// longer than `lim` keeps its own line; newlines are kept.
pub fn wrap(s: &str, lim: usize) -> String {
    let mut out = String::new();
    let (mut current, mut word, mut space) = (0usize, String::new(), String::new());
    let (mut word_len, mut space_len) = (0usize, 0usize);
    for c in s.chars() {
        if c == '\n' {
            if word.is_empty() {
                if current + space_len <= lim {
                    out.push_str(&space);
                }
            } else {
                out.push_str(&space);
                out.push_str(&word);
            }
            space.clear();
            word.clear();
            space_len = 0;
            word_len = 0;
            out.push('\n');
            current = 0;
        } else if c.is_whitespace() && c != '\u{a0}' {
            if space.is_empty() || !word.is_empty() {
                current += space_len + word_len;
                out.push_str(&space);
                out.push_str(&word);
                space.clear();
                word.clear();
                space_len = 0;
                word_len = 0;
            }
            space.push(c);
            space_len += 1;
        } else {
            word.push(c);
            word_len += 1;
            if current + space_len + word_len > lim && word_len < lim {
                out.push('\n');
                current = 0;
                space.clear();
                space_len = 0;
            }
        }
    }
    if word.is_empty() {
        if current + space_len <= lim {
            out.push_str(&space);
        }
    } else {
        out.push_str(&space);
        out.push_str(&word);
    }
    out
}

/// sprig's `indent`: every line, the last (possibly empty) one included.
fn indent(s: &str, n: usize) -> String {
    let pad = " ".repeat(n);
    format!("{pad}{}", s.replace('\n', &format!("\n{pad}")))
}

/// The template's `description`: the field's own text, then its type's.
fn description(f: &Value) -> String {
    let mut out = String::new();
    if let Some(d) = f.get("d").and_then(Value::as_str) {
        out.push_str(d);
        out.push('\n');
    }
    if let Some(inner) = f.get("items").or_else(|| f.get("map")) {
        out.push_str(&description(inner));
    } else if let Some(d) = f.get("ref").and_then(Value::as_str).and_then(def) {
        out.push_str(&description(d));
    }
    out
}

/// The object schema whose fields a field has (through refs, arrays and maps).
fn resolve(f: &Value) -> Option<&Value> {
    if let Some(inner) = f.get("items").or_else(|| f.get("map")) {
        return resolve(inner);
    }
    match f.get("ref").and_then(Value::as_str) {
        Some(r) => def(r),
        None => f.get("p").map(|_| f),
    }
}

fn ref_name(f: &Value) -> Option<&str> {
    match f.get("items").or_else(|| f.get("map")) {
        Some(inner) => ref_name(inner),
        None => f.get("ref").and_then(Value::as_str),
    }
}

fn field_list(
    out: &mut String,
    obj: &Value,
    level: usize,
    recursive: bool,
    seen: &mut BTreeSet<String>,
) {
    let Some(props) = obj.get("p").and_then(Value::as_object) else {
        return;
    };
    let required: Vec<&str> = obj
        .get("r")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let pad = level * 2;
    for (name, f) in props {
        out.push_str(&format!("{}{name}\t<{}>", " ".repeat(pad), type_guess(f)));
        if required.contains(&name.as_str()) {
            out.push_str(" -required-");
        }
        out.push('\n');
        if recursive {
            let Some(r) = ref_name(f) else { continue };
            if seen.contains(r) {
                continue;
            }
            if let Some(inner) = resolve(f) {
                seen.insert(r.to_string());
                field_list(out, inner, level + 1, true, seen);
                seen.remove(r);
            }
            continue;
        }
        let d = f
            .get("d")
            .and_then(Value::as_str)
            .unwrap_or("<no description>");
        out.push_str(&indent(&wrap(d, 78 - pad), pad + 2));
        out.push_str("\n\n");
    }
}

/// `kubectl explain`.
pub async fn explain(k: Kubectl) -> i32 {
    let Some(arg) = k.flags.args.first() else {
        return k.error("You must specify the type of resource to explain. Use \"kubectl api-resources\" for a complete list of supported resources.");
    };
    if k.flags.args.len() > 1 {
        return k.error("We accept only this format: explain RESOURCE");
    }
    let mut path = arg.split('.');
    let kind = match resolve_kind(path.next().unwrap_or_default(), &k.custom) {
        Ok(kind) => kind,
        Err(e) => return k.error(&e),
    };
    if matches!(kind, Kind::Custom(_) | Kind::CustomResourceDefinition) {
        return k.error(&format!(
            "\"kubectl explain\" of {} is not available in kubeloop yet",
            kind.info().group_resource()
        ));
    }
    let Some(top) = def(&definition_name(kind)) else {
        return k.error(&format!(
            "GVK {} not found in OpenAPI schema",
            kind.info().api_version()
        ));
    };
    let info = kind.info();
    let mut out = String::new();
    if !info.group.is_empty() {
        out.push_str(&format!("GROUP:      {}\n", info.group));
    }
    out.push_str(&format!(
        "KIND:       {}\nVERSION:    {}\n\n",
        info.kind, info.version
    ));
    let fields: Vec<&str> = path.filter(|p| !p.is_empty()).collect();
    let mut node: &Value = top;
    let mut field: Option<&Value> = None;
    for (i, name) in fields.iter().enumerate() {
        let Some(f) = resolve(node)
            .and_then(|o| o.get("p"))
            .and_then(|p| p.get(*name))
        else {
            return k.error(&format!("field \"{name}\" does not exist"));
        };
        if i + 1 == fields.len() {
            out.push_str(&format!("FIELD: {name} <{}>\n\n\n", type_guess(f)));
        }
        node = f;
        field = Some(f);
    }
    let text = match field {
        Some(f) => description(f),
        None => description(top),
    };
    let text = if text.is_empty() {
        "<empty>".to_string()
    } else {
        text
    };
    out.push_str("DESCRIPTION:\n");
    out.push_str(&indent(&wrap(&text, 76), 4));
    out.push('\n');
    if let Some(obj) = resolve(node).filter(|o| o.get("p").is_some()) {
        let mut seen = BTreeSet::new();
        if let Some(r) = ref_name(node) {
            seen.insert(r.to_string());
        } else {
            seen.insert(definition_name(kind));
        }
        out.push_str("FIELDS:\n");
        field_list(&mut out, obj, 1, k.flags.bool("recursive"), &mut seen);
    }
    out.push('\n');
    k.sys.out(&out);
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wraps_like_go_wordwrap() {
        assert_eq!(wrap("aaa bbb ccc", 7), "aaa bbb\nccc");
        assert_eq!(wrap("a verylongword b", 5), "a\nverylongword\nb");
        assert_eq!(wrap("one\ntwo three", 6), "one\ntwo\nthree");
        assert_eq!(indent("x\ny\n", 4), "    x\n    y\n    ");
    }

    #[test]
    fn every_served_kind_has_a_schema() {
        // CustomResourceDefinitions are not explained yet (docs/controlplane.md).
        for kind in Kind::ALL
            .iter()
            .filter(|k| **k != Kind::CustomResourceDefinition)
        {
            assert!(def(&definition_name(*kind)).is_some(), "{kind:?}");
        }
    }
}
