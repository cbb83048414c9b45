//! The scale subresource of custom objects: `spec.replicas` (or whatever
//! `specReplicasPath` names) written through `/scale`.

use serde_json::Value;

use crate::api::{Status, StatusReason};
use crate::apiserver::crd::served;
use crate::apiserver::watch::WatchCache;
use crate::object::{CustomObject, Kind};

fn not_found() -> Status {
    Status::new(
        404,
        StatusReason::NotFound,
        "the server could not find the requested resource",
    )
}

/// The `.a.b` path's segments.
pub fn segments(path: &str) -> Vec<&str> {
    path.trim_start_matches('.')
        .split('.')
        .filter(|s| !s.is_empty())
        .collect()
}

/// The CRD's `specReplicasPath` (and `statusReplicasPath`) for the object's version.
pub fn paths(cache: &WatchCache, kind: Kind) -> Option<(String, String)> {
    let (_, v) = served(cache, kind)?;
    let s = v.subresources?.scale?;
    Some((s.spec_replicas_path, s.status_replicas_path))
}

/// Sets the replicas at `specReplicasPath`; 404 when the version has no scale subresource.
pub fn set_replicas(cache: &WatchCache, o: &mut CustomObject, n: i32) -> Result<(), Status> {
    let (spec_path, _) = paths(cache, Kind::Custom(o.kind)).ok_or_else(not_found)?;
    let parts = segments(&spec_path);
    let Some((last, parents)) = parts.split_last() else {
        return Err(not_found());
    };
    let mut map = &mut o.content;
    for p in parents {
        let next = map
            .entry(p.to_string())
            .or_insert_with(|| Value::Object(Default::default()));
        if !next.is_object() {
            *next = Value::Object(Default::default());
        }
        let Value::Object(m) = next else {
            return Err(not_found());
        };
        map = m;
    }
    map.insert(last.to_string(), Value::from(n));
    Ok(())
}
