//! The custom resource handler's write path: the CRD's version is looked up, the object
//! pruned (strict field validation reports what pruning would drop), defaulted, its
//! status and generation handled as the CR strategy does, and validated.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    CustomResourceDefinitionVersion, JSONSchemaProps,
};
use serde_json::Value;

use crate::api::{Status, StatusReason};
use crate::apiserver::crd::validation::without_core_finalizer_rule;
use crate::apiserver::crd::{prune, rules, schema, served, storage_kind};
use crate::apiserver::field_error::{invalid_message, FieldError, Path};
use crate::apiserver::validation::meta::{validate_object_meta, validate_object_meta_update};
use crate::apiserver::validation::names::name_is_dns_subdomain;
use crate::apiserver::watch::WatchCache;
use crate::object::{CustomObject, Kind, Object};

/// What the write is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Write {
    /// A create.
    Create,
    /// An update or patch of the main resource.
    Update,
    /// An update or patch of `/status`.
    Status,
}

fn not_served() -> Status {
    Status::new(
        404,
        StatusReason::NotFound,
        "the server could not find the requested resource",
    )
}

fn schema_of(v: &CustomResourceDefinitionVersion) -> Option<&JSONSchemaProps> {
    v.schema.as_ref()?.open_api_v3_schema.as_ref()
}

/// Whether the version has the status subresource.
pub fn has_status(v: &CustomResourceDefinitionVersion) -> bool {
    v.subresources.as_ref().is_some_and(|s| s.status.is_some())
}

fn content_without(o: &CustomObject, key: &str) -> serde_json::Map<String, Value> {
    let mut c = o.content.clone();
    c.remove(key);
    c
}

/// Admits a custom object for a write; `strict` is kubectl's `fieldValidation=Strict`.
pub fn admit(
    cache: &WatchCache,
    obj: &mut Object,
    old: Option<&Object>,
    write: Write,
    strict: bool,
) -> Result<(), Status> {
    let Object::Custom(o) = obj else {
        return Ok(());
    };
    let (crd, version) = served(cache, Kind::Custom(o.kind)).ok_or_else(not_served)?;
    let old = match old {
        Some(Object::Custom(c)) => Some(&**c),
        _ => None,
    };
    let info = o.kind.info();
    let empty = JSONSchemaProps::default();
    let s = schema_of(&version).unwrap_or(&empty);
    let mut dropped = Vec::new();
    prune::prune_root(s, &mut o.content, &mut dropped);
    if strict && !dropped.is_empty() {
        let list: Vec<String> = dropped
            .iter()
            .map(|f| format!("unknown field \"{f}\""))
            .collect();
        return Err(Status::bad_request(format!(
            "{k} in version \"{v}\" cannot be handled as a {k}: strict decoding error: {}",
            list.join(", "),
            k = info.kind,
            v = info.version
        )));
    }
    prune::default_root(s, &mut o.content);
    let status_sub = has_status(&version);
    if write == Write::Status && !status_sub {
        return Err(not_served());
    }
    apply_strategy(o, old, write, status_sub);
    // The apiserver defaults again when it reads the object back from etcd, so a status
    // default (Gateway API's `Pending` conditions) shows on the created object.
    prune::default_root(s, &mut o.content);
    if let Some(Kind::Custom(c)) = storage_kind(&crd) {
        o.kind = c;
    }
    let errs = validate(o, old, s, info.namespaced);
    if errs.is_empty() {
        return Ok(());
    }
    let mut st = Status::new(
        422,
        StatusReason::Invalid,
        invalid_message(
            info.kind,
            info.group,
            o.metadata.name.as_deref().unwrap_or(""),
            &errs,
        ),
    );
    st.causes = errs.iter().map(|e| e.to_string()).collect();
    st.details_kind = info.kind.to_string();
    st.details_name = o.metadata.name.clone().unwrap_or_default();
    Err(st)
}

/// The custom resource strategy: generation, and status only through `/status` when the
/// version has the status subresource.
fn apply_strategy(
    o: &mut CustomObject,
    old: Option<&CustomObject>,
    write: Write,
    status_sub: bool,
) {
    match (write, old) {
        (Write::Create, _) => {
            if status_sub {
                o.content.remove("status");
            }
            o.metadata.generation = Some(1);
        }
        (Write::Update, Some(prev)) => {
            if status_sub {
                match prev.content.get("status") {
                    Some(st) => o.content.insert("status".into(), st.clone()),
                    None => o.content.remove("status"),
                };
            }
            let g = prev.metadata.generation.unwrap_or(1);
            let changed = content_without(o, "status") != content_without(prev, "status")
                || (!status_sub && o.content.get("status") != prev.content.get("status"));
            o.metadata.generation = Some(if changed { g + 1 } else { g });
        }
        (Write::Status, Some(prev)) => {
            let status = o.content.get("status").cloned();
            o.content = content_without(prev, "status");
            if let Some(st) = status {
                o.content.insert("status".into(), st);
            }
            o.metadata.generation = prev.metadata.generation;
        }
        (_, None) => {}
    }
}

fn validate(
    o: &CustomObject,
    old: Option<&CustomObject>,
    s: &JSONSchemaProps,
    namespaced: bool,
) -> Vec<FieldError> {
    let meta = Path::new("metadata");
    let mut errs = without_core_finalizer_rule(match old {
        Some(prev) => validate_object_meta_update(&o.metadata, &prev.metadata, &meta),
        None => validate_object_meta(&o.metadata, namespaced, name_is_dns_subdomain, &meta),
    });
    let value = Value::Object(o.content.clone());
    schema::validate(s, &value, &schema::root(), &mut errs);
    if errs.is_empty() {
        let old_value = old.map(|p| Value::Object(p.content.clone()));
        rules::check(s, &value, old_value.as_ref(), &schema::root(), &mut errs);
    }
    errs
}

/// Whether an update leaves the stored object as it is (resourceVersion aside).
pub fn unchanged(new: &Object, current: &Object) -> bool {
    let mut a = new.clone();
    a.meta_mut().resource_version = current.meta().resource_version.clone();
    a == *current
}

/// The object with its kind handle set to the version a request addressed (conversion
/// strategy `None`: only apiVersion changes).
pub fn at_version(o: &Object, kind: Kind) -> Object {
    match (o, kind) {
        (Object::Custom(c), Kind::Custom(k)) if c.kind.info().version != k.info().version => {
            let mut c = c.clone();
            c.kind = k;
            Object::Custom(c)
        }
        _ => o.clone(),
    }
}
