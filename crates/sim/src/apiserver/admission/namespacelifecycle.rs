//! `NamespaceLifecycle`: no content in missing or terminating namespaces, and the
//! system namespaces cannot be deleted.

use k8s_openapi::api::core::v1::Namespace;

use super::{forbidden, AdmissionError, Operation};
use crate::apiserver::field_error::{forbidden_message, go_quote};
use crate::object::{Kind, Object};

/// Namespaces that may never be deleted.
pub const IMMORTAL_NAMESPACES: &[&str] = &["default", "kube-system", "kube-public"];

/// Admits a request for `obj` (`kind` and `name` for deletes, which carry no object) in
/// `namespace`, given that namespace as currently stored (`None` if it does not exist).
pub fn admit(
    op: Operation,
    kind: Kind,
    name: &str,
    namespace: &str,
    obj: Option<&Object>,
    ns: Option<&Namespace>,
) -> Result<(), AdmissionError> {
    if kind == Kind::Namespace {
        if op == Operation::Delete && IMMORTAL_NAMESPACES.contains(&name) {
            return Err(AdmissionError::Forbidden(forbidden_message(
                "namespaces",
                name,
                "this namespace may not be deleted",
            )));
        }
        return Ok(());
    }
    if namespace.is_empty() || op == Operation::Delete {
        return Ok(());
    }
    let Some(ns) = ns else {
        return Err(AdmissionError::NotFound(format!(
            "namespaces {} not found",
            go_quote(namespace)
        )));
    };
    let terminating = ns.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Terminating");
    if op == Operation::Create && terminating {
        let reason = format!(
            "unable to create new content in namespace {namespace} because it is being terminated"
        );
        return Err(match obj {
            Some(o) => forbidden(o, &reason),
            None => AdmissionError::Forbidden(forbidden_message(
                &kind.info().group_resource(),
                name,
                &reason,
            )),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::{ConfigMap, NamespaceStatus};

    fn cm() -> Object {
        let mut c = ConfigMap::default();
        c.metadata.name = Some("cfg".into());
        c.metadata.namespace = Some("dev".into());
        Object::from(c)
    }

    #[test]
    fn missing_namespace_is_not_found() {
        let err = admit(
            Operation::Create,
            Kind::ConfigMap,
            "cfg",
            "dev",
            Some(&cm()),
            None,
        )
        .unwrap_err();
        assert_eq!(
            err,
            AdmissionError::NotFound("namespaces \"dev\" not found".into())
        );
        assert_eq!(err.code(), 404);
    }

    #[test]
    fn terminating_namespace_refuses_new_content() {
        let ns = Namespace {
            status: Some(NamespaceStatus {
                phase: Some("Terminating".into()),
                ..Default::default()
            }),
            ..Default::default()
        };
        let err = admit(
            Operation::Create,
            Kind::ConfigMap,
            "cfg",
            "dev",
            Some(&cm()),
            Some(&ns),
        )
        .unwrap_err();
        assert_eq!(
            err.message(),
            "configmaps \"cfg\" is forbidden: unable to create new content in namespace dev because it is being terminated"
        );
        assert!(admit(
            Operation::Update,
            Kind::ConfigMap,
            "cfg",
            "dev",
            Some(&cm()),
            Some(&ns)
        )
        .is_ok());
    }

    #[test]
    fn system_namespaces_cannot_be_deleted() {
        let err = admit(
            Operation::Delete,
            Kind::Namespace,
            "kube-system",
            "",
            None,
            None,
        )
        .unwrap_err();
        assert_eq!(
            err.message(),
            "namespaces \"kube-system\" is forbidden: this namespace may not be deleted"
        );
        assert!(admit(Operation::Delete, Kind::Namespace, "dev", "", None, None).is_ok());
    }
}
