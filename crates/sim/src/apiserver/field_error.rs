//! Field-level validation errors, rendered exactly as apimachinery's `field.Error` and
//! `errors.NewInvalid` print them.
//!
//! Bad values render like upstream since v1.34 (kubernetes#132314): plain strings Go-quoted
//! (`"web"`), integers and booleans bare, composite values as Go's `encoding/json` would
//! marshal them (`{"app":"web"}`, `null`). Internal Go types without JSON tags keep their
//! Go field names (`{"Name":"","Protocol":"TCP",…}`); [`GoJson`] builds those by hand.

use std::collections::BTreeMap;
use std::fmt;

/// Why a field is invalid (upstream `field.ErrorType`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorType {
    /// A looked-up value does not exist (`Not found`).
    NotFound,
    /// A required value is missing (`Required value`).
    Required,
    /// A value that must be unique is repeated (`Duplicate value`).
    Duplicate,
    /// A malformed or out-of-range value (`Invalid value`).
    Invalid,
    /// A value outside an enumeration (`Unsupported value`).
    NotSupported,
    /// A well-formed value that is not allowed here (`Forbidden`).
    Forbidden,
    /// A value that is too long (`Too long`).
    TooLong,
    /// A list with too many items (`Too many`).
    TooMany,
    /// An error not caused by user input (`Internal error`).
    Internal,
}

impl ErrorType {
    /// The canonical message prefix (`Required value`, `Invalid value`, …).
    pub fn message(self) -> &'static str {
        match self {
            ErrorType::NotFound => "Not found",
            ErrorType::Required => "Required value",
            ErrorType::Duplicate => "Duplicate value",
            ErrorType::Invalid => "Invalid value",
            ErrorType::NotSupported => "Unsupported value",
            ErrorType::Forbidden => "Forbidden",
            ErrorType::TooLong => "Too long",
            ErrorType::TooMany => "Too many",
            ErrorType::Internal => "Internal error",
        }
    }

    /// The machine-readable cause type carried in `Status.details.causes[].reason`.
    pub fn cause_type(self) -> &'static str {
        match self {
            ErrorType::NotFound => "FieldValueNotFound",
            ErrorType::Required => "FieldValueRequired",
            ErrorType::Duplicate => "FieldValueDuplicate",
            ErrorType::Invalid => "FieldValueInvalid",
            ErrorType::NotSupported => "FieldValueNotSupported",
            ErrorType::Forbidden => "FieldValueForbidden",
            ErrorType::TooLong => "FieldValueTooLong",
            ErrorType::TooMany => "FieldValueTooMany",
            ErrorType::Internal => "InternalError",
        }
    }
}

/// The offending value, already classified the way Go's `ErrorBody` formats it.
#[derive(Clone, Debug, PartialEq)]
pub enum BadValue {
    /// Not printed at all (TooMany with an unknown count).
    Omit,
    /// A plain Go `string`: printed with `%q`.
    Str(String),
    /// An integer: printed bare.
    Int(i64),
    /// A boolean: printed bare.
    Bool(bool),
    /// Anything else: the JSON text Go's `json.Marshal` would produce.
    Json(String),
}

impl BadValue {
    /// A Go named string type (`core.Protocol`, `core.DNSPolicy`, …): upstream marshals it
    /// as JSON, which quotes it like `%q` except for HTML-sensitive characters.
    pub fn typed_str(s: &str) -> BadValue {
        BadValue::Json(go_json_quote(s))
    }

    /// A `map[string]string` (nil when `None`).
    pub fn string_map(m: Option<&BTreeMap<String, String>>) -> BadValue {
        BadValue::Json(GoJson::opt_string_map(m).render())
    }

    /// A `[]string` (nil when `None`).
    pub fn string_list(v: Option<&[String]>) -> BadValue {
        BadValue::Json(GoJson::opt_string_list(v).render())
    }

    /// An optional integer: `null` when absent.
    pub fn opt_int(v: Option<i64>) -> BadValue {
        match v {
            Some(i) => BadValue::Int(i),
            None => BadValue::Json("null".into()),
        }
    }
}

impl From<&str> for BadValue {
    fn from(s: &str) -> BadValue {
        BadValue::Str(s.to_string())
    }
}
impl From<String> for BadValue {
    fn from(s: String) -> BadValue {
        BadValue::Str(s)
    }
}
impl From<&String> for BadValue {
    fn from(s: &String) -> BadValue {
        BadValue::Str(s.clone())
    }
}
impl From<i64> for BadValue {
    fn from(i: i64) -> BadValue {
        BadValue::Int(i)
    }
}
impl From<i32> for BadValue {
    fn from(i: i32) -> BadValue {
        BadValue::Int(i64::from(i))
    }
}
impl From<bool> for BadValue {
    fn from(b: bool) -> BadValue {
        BadValue::Bool(b)
    }
}
impl From<GoJson> for BadValue {
    fn from(j: GoJson) -> BadValue {
        BadValue::Json(j.render())
    }
}

/// A field path (`spec.template.spec.containers[0].image`), built like upstream's
/// `field.Path`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Path(String);

impl Path {
    /// A root path: `Path::new("spec")`.
    pub fn new(name: &str) -> Path {
        if name.is_empty() {
            // Go prints an unnamed root as a subscript with an empty index.
            Path("[]".to_string())
        } else {
            Path(name.to_string())
        }
    }

    /// `parent.name`.
    pub fn child(&self, name: &str) -> Path {
        if name.is_empty() {
            return self.join(&["[]"]);
        }
        self.join(&[".", name])
    }

    /// `parent[i]`.
    pub fn index(&self, i: usize) -> Path {
        self.join(&["[", &i.to_string(), "]"])
    }

    /// `parent[key]` (unquoted, as upstream).
    pub fn key(&self, key: &str) -> Path {
        self.join(&["[", key, "]"])
    }

    /// This path with `parts` appended: one allocation, no formatting (validation builds a
    /// path for every field it visits, error or not).
    fn join(&self, parts: &[&str]) -> Path {
        let len = self.0.len() + parts.iter().map(|p| p.len()).sum::<usize>();
        let mut s = String::with_capacity(len);
        s.push_str(&self.0);
        for p in parts {
            s.push_str(p);
        }
        Path(s)
    }

    /// The rendered path.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Path {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// One field-level validation error.
#[derive(Clone, Debug, PartialEq)]
pub struct FieldError {
    /// The kind of problem.
    pub error_type: ErrorType,
    /// The field path.
    pub field: String,
    /// The offending value.
    pub bad_value: BadValue,
    /// Human-readable detail, possibly empty.
    pub detail: String,
}

impl FieldError {
    fn new(error_type: ErrorType, field: &Path, bad_value: BadValue, detail: &str) -> FieldError {
        FieldError {
            error_type,
            field: field.0.clone(),
            bad_value,
            detail: detail.to_string(),
        }
    }

    /// `Required value`.
    pub fn required(field: &Path, detail: &str) -> FieldError {
        FieldError::new(
            ErrorType::Required,
            field,
            BadValue::Str(String::new()),
            detail,
        )
    }

    /// `Invalid value: <v>: <detail>`.
    pub fn invalid(field: &Path, value: impl Into<BadValue>, detail: &str) -> FieldError {
        FieldError::new(ErrorType::Invalid, field, value.into(), detail)
    }

    /// `Unsupported value: <v>: supported values: "a", "b"`.
    pub fn not_supported(field: &Path, value: impl Into<BadValue>, valid: &[&str]) -> FieldError {
        let detail = if valid.is_empty() {
            String::new()
        } else {
            let quoted: Vec<String> = valid.iter().map(|v| go_quote(v)).collect();
            format!("supported values: {}", quoted.join(", "))
        };
        FieldError::new(ErrorType::NotSupported, field, value.into(), &detail)
    }

    /// `Forbidden: <detail>`.
    pub fn forbidden(field: &Path, detail: &str) -> FieldError {
        FieldError::new(
            ErrorType::Forbidden,
            field,
            BadValue::Str(String::new()),
            detail,
        )
    }

    /// `Duplicate value: <v>`.
    pub fn duplicate(field: &Path, value: impl Into<BadValue>) -> FieldError {
        FieldError::new(ErrorType::Duplicate, field, value.into(), "")
    }

    /// `Not found: <v>`.
    pub fn not_found(field: &Path, value: impl Into<BadValue>) -> FieldError {
        FieldError::new(ErrorType::NotFound, field, value.into(), "")
    }

    /// `Too long: may not be more than <n> bytes`.
    pub fn too_long(field: &Path, max_len: usize) -> FieldError {
        let detail = format!("may not be more than {max_len} bytes");
        FieldError::new(ErrorType::TooLong, field, BadValue::Omit, &detail)
    }

    /// `Too many: <n>: must have at most <max> items`.
    pub fn too_many(field: &Path, actual: usize, max: usize) -> FieldError {
        let detail = format!("must have at most {max} items");
        FieldError::new(
            ErrorType::TooMany,
            field,
            BadValue::Int(actual as i64),
            &detail,
        )
    }

    /// `Internal error: <detail>`.
    pub fn internal(field: &Path, detail: &str) -> FieldError {
        FieldError::new(ErrorType::Internal, field, BadValue::Omit, detail)
    }

    /// The message without the field (`Invalid value: "x": must be …`), as carried in
    /// `Status.details.causes[].message`.
    pub fn body(&self) -> String {
        let mut s = match (self.error_type, &self.bad_value) {
            (
                ErrorType::Required
                | ErrorType::Forbidden
                | ErrorType::TooLong
                | ErrorType::Internal,
                _,
            )
            | (_, BadValue::Omit) => self.error_type.message().to_string(),
            (t, BadValue::Str(v)) => format!("{}: {}", t.message(), go_quote(v)),
            (t, BadValue::Int(v)) => format!("{}: {}", t.message(), v),
            (t, BadValue::Bool(v)) => format!("{}: {}", t.message(), v),
            (t, BadValue::Json(v)) => format!("{}: {}", t.message(), v),
        };
        if !self.detail.is_empty() {
            s.push_str(": ");
            s.push_str(&self.detail);
        }
        s
    }
}

impl fmt::Display for FieldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.field, self.body())
    }
}

/// A list of field errors.
pub type ErrorList = Vec<FieldError>;

/// Formats error messages as `utilerrors.NewAggregate(...).Error()`: duplicates dropped
/// (first wins), one message bare, several as `[a, b]`, none as "".
pub fn aggregate<S: AsRef<str>>(msgs: &[S]) -> String {
    let mut seen: Vec<&str> = Vec::new();
    for m in msgs {
        if !seen.contains(&m.as_ref()) {
            seen.push(m.as_ref());
        }
    }
    match seen.len() {
        0 => String::new(),
        1 => seen[0].to_string(),
        _ => format!("[{}]", seen.join(", ")),
    }
}

/// `errs.ToAggregate().Error()`.
pub fn aggregate_errors(errs: &[FieldError]) -> String {
    let msgs: Vec<String> = errs.iter().map(|e| e.to_string()).collect();
    aggregate(&msgs)
}

/// The message of the apiserver's 422 Invalid status (`errors.NewInvalid`):
/// `Deployment.apps "nginx" is invalid: spec.replicas: Invalid value: -1: …`.
pub fn invalid_message(kind: &str, group: &str, name: &str, errs: &[FieldError]) -> String {
    let qualified = if group.is_empty() {
        kind.to_string()
    } else {
        format!("{kind}.{group}")
    };
    if errs.is_empty() {
        format!("{qualified} {} is invalid", go_quote(name))
    } else {
        format!(
            "{qualified} {} is invalid: {}",
            go_quote(name),
            aggregate_errors(errs)
        )
    }
}

/// The message of a 403 Forbidden status (`errors.NewForbidden`): `pods "x" is forbidden: …`.
/// `resource` is the group-qualified resource (`pods`, `deployments.apps`).
pub fn forbidden_message(resource: &str, name: &str, reason: &str) -> String {
    if resource.is_empty() {
        format!("forbidden: {reason}")
    } else if name.is_empty() {
        format!("{resource} is forbidden: {reason}")
    } else {
        format!("{resource} {} is forbidden: {reason}", go_quote(name))
    }
}

/// Go's `strconv.Quote`: double quotes, `\"` and `\\`, C escapes for control characters,
/// `\u`/`\U` for other non-printable runes; printable Unicode is kept as is.
pub fn go_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{b}' => out.push_str("\\v"),
            ' ' => out.push(' '),
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                out.push_str(&format!("\\x{:02x}", c as u32));
            }
            c if c.is_control() || c.is_whitespace() || is_go_unprintable(c) => {
                let v = c as u32;
                if v < 0x10000 {
                    out.push_str(&format!("\\u{v:04x}"));
                } else {
                    out.push_str(&format!("\\U{v:08x}"));
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Format and private-use runes Go's `unicode.IsPrint` rejects (the common ones).
fn is_go_unprintable(c: char) -> bool {
    matches!(c as u32,
        0xad | 0x200b..=0x200f | 0x2028..=0x202e | 0x2060..=0x206f | 0xfeff
        | 0xfff9..=0xfffb | 0xe000..=0xf8ff)
}

/// Go's `encoding/json` string encoding: HTML-safe (`<`, `>`, `&` escaped), `\b`/`\f`
/// short escapes, other control characters as `\u00XX`, U+2028/2029 escaped.
pub fn go_json_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
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
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A JSON value with ordered object keys, for rendering Go structs in declaration order.
#[derive(Clone, Debug, PartialEq)]
pub enum GoJson {
    /// `null`.
    Null,
    /// `true` / `false`.
    Bool(bool),
    /// An integer.
    Int(i64),
    /// A string.
    Str(String),
    /// An array.
    Arr(Vec<GoJson>),
    /// An object whose fields print in the given order.
    Obj(Vec<(String, GoJson)>),
}

impl GoJson {
    /// Compact JSON text, as `json.Marshal` writes it.
    pub fn render(&self) -> String {
        let mut out = String::new();
        self.write(&mut out);
        out
    }

    fn write(&self, out: &mut String) {
        match self {
            GoJson::Null => out.push_str("null"),
            GoJson::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            GoJson::Int(i) => out.push_str(&i.to_string()),
            GoJson::Str(s) => out.push_str(&go_json_quote(s)),
            GoJson::Arr(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    item.write(out);
                }
                out.push(']');
            }
            GoJson::Obj(fields) => {
                out.push('{');
                for (i, (k, v)) in fields.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    out.push_str(&go_json_quote(k));
                    out.push(':');
                    v.write(out);
                }
                out.push('}');
            }
        }
    }

    /// An object built from field/value pairs.
    pub fn obj(fields: Vec<(&str, GoJson)>) -> GoJson {
        GoJson::Obj(
            fields
                .into_iter()
                .map(|(k, v)| (k.to_string(), v))
                .collect(),
        )
    }

    /// A string.
    pub fn str(s: &str) -> GoJson {
        GoJson::Str(s.to_string())
    }

    /// An optional string pointer: `null` when absent.
    pub fn opt_str(s: Option<&str>) -> GoJson {
        s.map(GoJson::str).unwrap_or(GoJson::Null)
    }

    /// A Go map (keys sorted, as `encoding/json` sorts them); `null` when nil.
    pub fn opt_string_map(m: Option<&BTreeMap<String, String>>) -> GoJson {
        match m {
            None => GoJson::Null,
            Some(m) => GoJson::Obj(
                m.iter()
                    .map(|(k, v)| (k.clone(), GoJson::Str(v.clone())))
                    .collect(),
            ),
        }
    }

    /// A Go `[]string`; `null` when nil.
    pub fn opt_string_list(v: Option<&[String]>) -> GoJson {
        match v {
            None => GoJson::Null,
            Some(v) => GoJson::Arr(v.iter().map(|s| GoJson::Str(s.clone())).collect()),
        }
    }

    /// A JSON value converted from serde (map keys sorted), for external (tagged) types.
    pub fn from_value(v: &serde_json::Value) -> GoJson {
        match v {
            serde_json::Value::Null => GoJson::Null,
            serde_json::Value::Bool(b) => GoJson::Bool(*b),
            serde_json::Value::Number(n) => GoJson::Int(n.as_i64().unwrap_or(0)),
            serde_json::Value::String(s) => GoJson::Str(s.clone()),
            serde_json::Value::Array(a) => GoJson::Arr(a.iter().map(GoJson::from_value).collect()),
            serde_json::Value::Object(o) => GoJson::Obj(
                o.iter()
                    .map(|(k, v)| (k.clone(), GoJson::from_value(v)))
                    .collect(),
            ),
        }
    }
}

#[cfg(test)]
mod tests;
