//! Namespace deletion as the namespace storage does it: Terminating with the
//! `kubernetes` finalizer, conflicts on a second delete, and the `finalize` subresource.

use std::sync::Arc;

use crate::api::{ApiRequest, Status, StatusReason};
use crate::apiserver::write::WriteOp;
use crate::object::{Kind, Object};
use crate::time::{k8s_time, Time};

/// A namespace's `spec.finalizers` (empty for other kinds).
pub(crate) fn namespace_finalizers(o: &Object) -> Vec<String> {
    match o {
        Object::Namespace(n) => n
            .spec
            .as_ref()
            .and_then(|s| s.finalizers.clone())
            .unwrap_or_default(),
        _ => Vec::new(),
    }
}

/// Deleting a namespace: immortal ones are refused; one with finalizers turns
/// Terminating and waits for the namespace controller; a second delete while it
/// terminates is a conflict, as upstream's namespace storage answers.
pub(crate) fn delete_namespace(
    req: &ApiRequest,
    current: Option<Arc<Object>>,
    now: Time,
) -> Result<WriteOp, Status> {
    let current = current.ok_or_else(|| Status::not_found(req.kind, &req.name))?;
    crate::apiserver::admission::namespacelifecycle::admit(
        crate::apiserver::admission::Operation::Delete,
        Kind::Namespace,
        &req.name,
        "",
        None,
        None,
    )
    .map_err(|e| Status::new(e.code(), StatusReason::Forbidden, e.message().to_string()))?;
    let key = current.key().etcd_key();
    let expect = current.resource_version();
    let spec_fins = namespace_finalizers(&current);
    let meta_fins = current.meta().finalizers.clone().unwrap_or_default();
    if current.meta().deletion_timestamp.is_some() {
        if spec_fins.is_empty() && meta_fins.is_empty() {
            return Ok(WriteOp::Delete { key, expect });
        }
        return Err(Status::new(
            409,
            StatusReason::Conflict,
            format!("Operation cannot be fulfilled on namespaces \"{}\": The system is ensuring all content is removed from this namespace.  Upon completion, this namespace will automatically be purged by the system.", req.name),
        ));
    }
    if spec_fins.is_empty() && meta_fins.is_empty() {
        return Ok(WriteOp::Delete { key, expect });
    }
    let Object::Namespace(mut ns) = (*current).clone() else {
        return Err(Status::internal("not a namespace"));
    };
    ns.metadata.deletion_timestamp = Some(k8s_time(now));
    ns.metadata.deletion_grace_period_seconds = Some(0);
    ns.metadata.resource_version = None;
    ns.status.get_or_insert_with(Default::default).phase = Some("Terminating".into());
    Ok(WriteOp::Update {
        key,
        expect,
        obj: Arc::new(Object::Namespace(ns)),
        precondition: false,
        status_only: false,
    })
}

/// `PUT /api/v1/namespaces/NAME/finalize`: replaces spec.finalizers; a terminating
/// namespace left with none is deleted.
pub(crate) fn finalize(req: &ApiRequest, current: Option<Arc<Object>>) -> Result<WriteOp, Status> {
    let current = current.ok_or_else(|| Status::not_found(req.kind, &req.name))?;
    let new = super::write::decode_body(req)?;
    let (Object::Namespace(mut ns), Object::Namespace(sent)) = ((*current).clone(), new) else {
        return Err(Status::bad_request(
            "finalize is served for namespaces only",
        ));
    };
    let key = current.key().etcd_key();
    let expect = current.resource_version();
    let fins = sent.spec.and_then(|s| s.finalizers).unwrap_or_default();
    ns.spec.get_or_insert_with(Default::default).finalizers =
        (!fins.is_empty()).then_some(fins.clone());
    if fins.is_empty()
        && ns.metadata.deletion_timestamp.is_some()
        && ns.metadata.finalizers.as_ref().is_none_or(|f| f.is_empty())
    {
        return Ok(WriteOp::Delete { key, expect });
    }
    ns.metadata.resource_version = None;
    Ok(WriteOp::Update {
        key,
        expect,
        obj: Arc::new(Object::Namespace(ns)),
        precondition: false,
        status_only: false,
    })
}
