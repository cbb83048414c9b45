//! `kubectl diff -f FILE`: each object as it lives against what `apply` would make of it
//! (the apply patch, or the create, sent as a server-side dry run), printed as
//! `diff -u -N` prints it; exit 1 when anything differs.

use std::sync::Arc;

use serde_json::Value;

use crate::api::{ApiRequest, ApiResult, Body, Verb};
use crate::cmd::apply::{manifests, target, three_way_for, with_last_applied};
use crate::cmd::kubectl::Kubectl;
use crate::cmd::unified::hunks;
use crate::kubectl::output::object_value;
use crate::kubectl::yaml::to_yaml;
use crate::object::{Kind, Object};

/// The object as `diff` shows it: managed fields dropped.
fn shown(o: &Object) -> Value {
    let mut v = object_value(o);
    if let Some(m) = v.get_mut("metadata").and_then(Value::as_object_mut) {
        m.remove("managedFields");
    }
    v
}

/// kubectl's Masker: a Secret's `data` values print as `***`, or as `*** (before)` and
/// `*** (after)` where a key's value changed, so a diff never shows them.
fn mask_secret_data(before: &mut Value, after: &mut Value) {
    let from = before
        .get("data")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let to = after
        .get("data")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let masked = |side: &Value, other: &serde_json::Map<String, Value>, tag: &str| {
        let mut out = serde_json::Map::new();
        for (key, value) in side
            .get("data")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
        {
            let text = match other.get(key) {
                Some(o) if o != value => format!("*** ({tag})"),
                _ => "***".to_string(),
            };
            out.insert(key.clone(), Value::String(text));
        }
        out
    };
    let (b, a) = (masked(before, &to, "before"), masked(after, &from, "after"));
    if let Some(m) = before.as_object_mut().filter(|_| !from.is_empty()) {
        m.insert("data".into(), Value::Object(b));
    }
    if let Some(m) = after.as_object_mut().filter(|_| !to.is_empty()) {
        m.insert("data".into(), Value::Object(a));
    }
}

/// `apps.v1.Deployment.default.nginx`, the name kubectl gives each object's file.
fn file_name(kind: Kind, ns: &str, name: &str) -> String {
    let info = kind.info();
    let gv = if info.group.is_empty() {
        info.version.to_string()
    } else {
        format!("{}.{}", info.group, info.version)
    };
    if ns.is_empty() {
        format!("{gv}.{}.{name}", info.kind)
    } else {
        format!("{gv}.{}.{ns}.{name}", info.kind)
    }
}

/// What applying `modified` would make of the live object (None: it does not exist).
async fn merged(
    k: &Kubectl,
    kind: Kind,
    ns: &str,
    name: &str,
    value: &Value,
    live: Option<&Arc<Object>>,
) -> Result<Arc<Object>, crate::api::Status> {
    let modified = with_last_applied(value);
    let mut req = match live {
        None => ApiRequest::new(Verb::Create, kind, ns, "").with_body(Body::Raw(modified)),
        Some(live) => {
            let original = crate::cmd::apply::last_applied(&live);
            let patch = three_way_for(kind, original.as_ref(), &modified, &live.to_value());
            if patch.as_object().is_none_or(|p| p.is_empty()) {
                return Ok(live.clone());
            }
            ApiRequest::new(Verb::Patch, kind, ns, name)
                .with_body(Body::Patch(crate::cmd::apply::patch_type(kind), patch))
        }
    };
    req.options.dry_run = true;
    match k.sys.api(req).await? {
        ApiResult::Object(o) => Ok(o),
        _ => Err(crate::api::Status::bad_request("unexpected response")),
    }
}

/// `diff -u -N`'s file header time for the virtual clock.
fn stamp(k: &Kubectl) -> String {
    let t = crate::time::k8s_time(k.sys.now()).0.to_string();
    // 2026-01-01T00:00:00Z → 2026-01-01 00:00:00.000000000 +0000
    let t = t.trim_end_matches('Z').replacen('T', " ", 1);
    let (secs, _) = t.split_once('.').unwrap_or((&t, ""));
    format!("{secs}.000000000 +0000")
}

/// `kubectl diff`.
pub async fn diff(k: Kubectl) -> i32 {
    // CheckDiffErr: errors exit 2, as 1 means "differences found".
    let files = match manifests(&k) {
        Ok(f) => f,
        Err(_) => return 2,
    };
    // kubectl keeps the two trees in temporary directories named at random; the
    // simulator names them after the virtual clock, so runs repeat.
    let live_dir = format!("/tmp/LIVE-{}", k.sys.now());
    let merged_dir = format!("/tmp/MERGED-{}", k.sys.now());
    let mut differs = false;
    for (file, m) in &files.manifests {
        let (kind, ns) = match target(&k, file, m) {
            Ok(t) => t,
            Err(e) => return k.error(&e).max(2),
        };
        let live = match k
            .sys
            .api(ApiRequest::new(Verb::Get, kind, &ns, &m.name))
            .await
        {
            Ok(ApiResult::Object(o)) => Some(o),
            Ok(_) => None,
            Err(s) if s.is_not_found() => None,
            Err(s) => return k.status_error(&s).max(2),
        };
        let after = match merged(&k, kind, &ns, &m.name, &m.value, live.as_ref()).await {
            Ok(o) => o,
            Err(s) => return k.status_error(&s).max(2),
        };
        let mut before = live.as_deref().map(shown);
        let mut after = shown(&after);
        if kind == Kind::Secret {
            mask_secret_data(before.get_or_insert(Value::Null), &mut after);
        }
        let before = before.filter(|v| !v.is_null()).map(|v| to_yaml(&v));
        let Some(h) = hunks(&before.unwrap_or_default(), &to_yaml(&after)) else {
            continue;
        };
        differs = true;
        let f = file_name(kind, &ns, &m.name);
        let when = stamp(&k);
        k.sys.out(&format!(
            "diff -u -N {live_dir}/{f} {merged_dir}/{f}\n--- {live_dir}/{f}\t{when}\n+++ {merged_dir}/{f}\t{when}\n{h}"
        ));
    }
    if files.finish(&k, 0) != 0 {
        return 2;
    }
    i32::from(differs)
}
