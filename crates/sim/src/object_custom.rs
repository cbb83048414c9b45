//! Custom resources: kinds a CustomResourceDefinition declares, and their objects.
//!
//! A custom kind is `Kind::Custom(CustomKind)`: a copyable handle on an interned
//! [`KindInfo`]. Handles compare, order and hash by group and plural only, so two
//! handles on one resource are equal whatever version or short names they were built
//! with, and ordering never depends on when a kind was interned. The intern table is a
//! cache of immutable facts: which test ran first changes nothing observable.

use std::collections::BTreeMap;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::Mutex;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde_json::{Map, Value};

use crate::object::{decode_tracking_unknown, Kind, KindInfo};

/// What a CustomResourceDefinition says about one served version of its kind.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct CustomKindSpec {
    /// `spec.group`.
    pub group: String,
    /// The version this handle serves.
    pub version: String,
    /// `spec.names.kind`.
    pub kind: String,
    /// `spec.names.plural`.
    pub plural: String,
    /// `spec.names.singular` (defaulted to the lowercased kind).
    pub singular: String,
    /// `spec.names.shortNames`.
    pub short_names: Vec<String>,
    /// `spec.names.categories`.
    pub categories: Vec<String>,
    /// `spec.scope == Namespaced`.
    pub namespaced: bool,
    /// The version's `additionalPrinterColumns`.
    pub printer_columns: Vec<PrinterColumn>,
}

/// One of a version's `additionalPrinterColumns`.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct PrinterColumn {
    /// `name`, as the header prints it uppercased.
    pub name: String,
    /// `type`: integer, number, string, boolean or date.
    pub type_: String,
    /// `jsonPath`, a simple path (`.spec.replicas`).
    pub json_path: String,
    /// `priority`: 0 default, more only with `-o wide`.
    pub priority: i32,
}

/// A handle on a custom kind's facts.
#[derive(Clone, Copy)]
pub struct CustomKind(&'static KindInfo);

static INTERNED: Mutex<BTreeMap<CustomKindSpec, &'static KindInfo>> = Mutex::new(BTreeMap::new());

fn leak(s: &str) -> &'static str {
    Box::leak(s.to_string().into_boxed_str())
}

fn leak_all(v: &[String]) -> &'static [&'static str] {
    let names: Vec<&'static str> = v.iter().map(|s| leak(s)).collect();
    Box::leak(names.into_boxed_slice())
}

impl CustomKind {
    /// The handle for `spec` (built once per distinct spec).
    pub fn intern(spec: &CustomKindSpec) -> CustomKind {
        let mut table = INTERNED.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(info) = table.get(spec) {
            return CustomKind(info);
        }
        let info: &'static KindInfo = Box::leak(Box::new(KindInfo {
            kind: leak(&spec.kind),
            group: leak(&spec.group),
            version: leak(&spec.version),
            plural: leak(&spec.plural),
            singular: leak(&spec.singular),
            short_names: leak_all(&spec.short_names),
            categories: leak_all(&spec.categories),
            printer_columns: Box::leak(spec.printer_columns.clone().into_boxed_slice()),
            namespaced: spec.namespaced,
            etcd_prefix: leak(&format!("{}/{}", spec.group, spec.plural)),
        }));
        table.insert(spec.clone(), info);
        CustomKind(info)
    }

    /// The kind's facts.
    pub fn info(self) -> &'static KindInfo {
        self.0
    }

    fn identity(&self) -> (&'static str, &'static str) {
        (self.0.group, self.0.plural)
    }
}

impl PartialEq for CustomKind {
    fn eq(&self, other: &CustomKind) -> bool {
        self.identity() == other.identity()
    }
}

impl Eq for CustomKind {}

impl PartialOrd for CustomKind {
    fn partial_cmp(&self, other: &CustomKind) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for CustomKind {
    fn cmp(&self, other: &CustomKind) -> std::cmp::Ordering {
        self.identity().cmp(&other.identity())
    }
}

impl Hash for CustomKind {
    fn hash<H: Hasher>(&self, h: &mut H) {
        self.identity().hash(h);
    }
}

impl fmt::Debug for CustomKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}/{}", self.0.plural, self.0.group, self.0.version)
    }
}

/// An object of a custom kind: metadata typed, everything else as JSON.
#[derive(Clone, Debug, PartialEq)]
pub struct CustomObject {
    /// The kind (and the version it is served at).
    pub kind: CustomKind,
    /// `metadata`.
    pub metadata: ObjectMeta,
    /// Every top-level field but `apiVersion`, `kind` and `metadata`.
    pub content: Map<String, Value>,
}

impl CustomObject {
    /// The object as JSON, with apiVersion and kind of its handle's version.
    pub fn to_value(&self) -> Value {
        let info = self.kind.info();
        let mut m = Map::new();
        m.insert("apiVersion".into(), Value::String(info.api_version()));
        m.insert("kind".into(), Value::String(info.kind.to_string()));
        let meta = serde_json::to_value(&self.metadata).unwrap_or(Value::Null);
        m.insert("metadata".into(), meta);
        for (k, v) in &self.content {
            m.insert(k.clone(), v.clone());
        }
        Value::Object(m)
    }

    /// Reads an object of `kind`; unknown metadata fields are collected in `unknown`.
    pub fn from_value(
        kind: CustomKind,
        value: &Value,
        unknown: &mut Vec<String>,
    ) -> Result<CustomObject, String> {
        let Some(map) = value.as_object() else {
            return Err(format!(
                "json: cannot unmarshal {} into Go value of type map[string]interface {{}}",
                json_type(value)
            ));
        };
        let meta = map.get("metadata").cloned().unwrap_or(Value::Null);
        let mut meta_unknown = Vec::new();
        let metadata: ObjectMeta = if meta.is_null() {
            ObjectMeta::default()
        } else {
            decode_tracking_unknown(&meta, &mut meta_unknown)?
        };
        unknown.extend(meta_unknown.into_iter().map(|f| format!("metadata.{f}")));
        let content = map
            .iter()
            .filter(|(k, _)| !matches!(k.as_str(), "apiVersion" | "kind" | "metadata"))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        Ok(CustomObject {
            kind,
            metadata,
            content,
        })
    }
}

/// The JSON type name as Go's decoder prints it.
pub fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// The custom kinds the apiserver serves, as kubectl's discovery sees them: for each
/// established CRD, its served versions with the preferred one first.
#[derive(Clone, Debug, Default)]
pub struct CustomKinds {
    resources: Vec<Vec<Kind>>,
}

impl CustomKinds {
    /// From each resource's served kinds (preferred version first).
    pub fn new(resources: Vec<Vec<Kind>>) -> CustomKinds {
        CustomKinds {
            resources: resources.into_iter().filter(|v| !v.is_empty()).collect(),
        }
    }

    /// Each resource at its preferred version, ordered by group then plural.
    pub fn preferred(&self) -> Vec<Kind> {
        let mut v: Vec<Kind> = self.resources.iter().map(|r| r[0]).collect();
        v.sort();
        v
    }

    /// Every served group/version.
    pub fn group_versions(&self) -> Vec<String> {
        self.resources
            .iter()
            .flatten()
            .map(|k| k.info().api_version())
            .collect()
    }

    /// Resolves `plural`, `singular`, a short name or the kind, optionally qualified with
    /// `.group` or `.version.group`, as kubectl's RESTMapper does.
    pub fn resource_arg(&self, arg: &str) -> Option<Kind> {
        let lower = arg.to_ascii_lowercase();
        let (name, qualifier) = match lower.split_once('.') {
            Some((n, q)) => (n.to_string(), Some(q.to_string())),
            None => (lower.clone(), None),
        };
        for versions in &self.resources {
            let i = versions[0].info();
            let name_ok = i.plural == name
                || i.singular == name
                || i.kind.eq_ignore_ascii_case(&name)
                || i.short_names.contains(&name.as_str());
            if !name_ok {
                continue;
            }
            match &qualifier {
                None => return Some(versions[0]),
                Some(q) if q == i.group => return Some(versions[0]),
                Some(q) => {
                    if let Some(k) = versions
                        .iter()
                        .find(|k| format!("{}.{}", k.info().version, i.group) == *q)
                    {
                        return Some(*k);
                    }
                }
            }
        }
        None
    }

    /// Resolves a manifest's `apiVersion` and `kind`.
    pub fn api_version_kind(&self, api_version: &str, kind: &str) -> Option<Kind> {
        self.resources
            .iter()
            .flatten()
            .copied()
            .find(|k| k.info().kind == kind && k.info().api_version() == api_version)
    }

    /// The resources (preferred versions) that list `category` in their categories.
    pub fn in_category(&self, category: &str) -> Vec<Kind> {
        self.preferred()
            .into_iter()
            .filter(|k| k.info().categories.contains(&category))
            .collect()
    }

    /// Whether no custom kind is served.
    pub fn is_empty(&self) -> bool {
        self.resources.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(version: &str, short: &[&str]) -> CustomKindSpec {
        CustomKindSpec {
            group: "stable.example.com".into(),
            version: version.into(),
            kind: "CronTab".into(),
            plural: "crontabs".into(),
            singular: "crontab".into(),
            short_names: short.iter().map(|s| s.to_string()).collect(),
            categories: vec![],
            namespaced: true,
            printer_columns: vec![],
        }
    }

    #[test]
    fn handles_compare_by_group_and_plural() {
        let a = CustomKind::intern(&spec("v1", &["ct"]));
        let b = CustomKind::intern(&spec("v1beta1", &[]));
        assert_eq!(a, b);
        assert_eq!(a.info().version, "v1");
        assert_eq!(b.info().version, "v1beta1");
        assert_eq!(a.info().etcd_prefix, "stable.example.com/crontabs");
    }

    #[test]
    fn resource_args_resolve_with_group_and_version() {
        let v1 = Kind::Custom(CustomKind::intern(&spec("v1", &["ct"])));
        let beta = Kind::Custom(CustomKind::intern(&spec("v1beta1", &["ct"])));
        let kinds = CustomKinds::new(vec![vec![v1, beta]]);
        let version = |k: Option<Kind>| k.map(|k| k.info().version);
        assert_eq!(version(kinds.resource_arg("ct")), Some("v1"));
        assert_eq!(version(kinds.resource_arg("CronTab")), Some("v1"));
        assert_eq!(
            version(kinds.resource_arg("crontabs.v1beta1.stable.example.com")),
            Some("v1beta1")
        );
        assert_eq!(kinds.resource_arg("crontabs.other.io"), None);
        assert_eq!(
            version(kinds.api_version_kind("stable.example.com/v1beta1", "CronTab")),
            Some("v1beta1")
        );
    }
}
