//! Admission plugins' pure logic: each plugin is a function of the request's object and
//! the cluster state it reads (namespaces, limit ranges, quotas, …), so the request
//! pipeline stays in charge of I/O and ordering.
//!
//! Upstream order (kube-apiserver defaults) for the plugins here: mutating
//! `NamespaceLifecycle` → `LimitRanger` → `ServiceAccount` → `Priority` →
//! `DefaultTolerationSeconds`; then validation; then validating `LimitRanger` →
//! `ServiceAccount` → … → `ResourceQuota` (last, because it charges usage).

pub mod defaultingressclass;
pub mod defaulttolerationseconds;
pub mod limitranger;
pub mod namespacelifecycle;
pub mod priority;
pub mod resourcequota;
pub mod serviceaccount;

use std::fmt;

use crate::apiserver::field_error::forbidden_message;
use crate::object::Object;

/// The operation being admitted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operation {
    /// POST.
    Create,
    /// PUT / PATCH.
    Update,
    /// DELETE.
    Delete,
}

/// Why admission rejected a request; the pipeline turns it into a `Status`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AdmissionError {
    /// 403, reason `Forbidden`; the message is complete (`pods "x" is forbidden: …`).
    Forbidden(String),
    /// 404, reason `NotFound` (`namespaces "x" not found`).
    NotFound(String),
}

impl AdmissionError {
    /// The HTTP status code.
    pub fn code(&self) -> u16 {
        match self {
            AdmissionError::Forbidden(_) => 403,
            AdmissionError::NotFound(_) => 404,
        }
    }

    /// The `Status.reason`.
    pub fn reason(&self) -> &'static str {
        match self {
            AdmissionError::Forbidden(_) => "Forbidden",
            AdmissionError::NotFound(_) => "NotFound",
        }
    }

    /// The `Status.message`.
    pub fn message(&self) -> &str {
        match self {
            AdmissionError::Forbidden(m) | AdmissionError::NotFound(m) => m,
        }
    }
}

impl fmt::Display for AdmissionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.message())
    }
}

/// `admission.NewForbidden`: names the object by name, else by generateName (admission
/// runs before the registry generates names, hence `pods "web-7c5d-" is forbidden`).
pub fn forbidden(obj: &Object, reason: &str) -> AdmissionError {
    let m = obj.meta();
    let name = match m.name.as_deref().filter(|n| !n.is_empty()) {
        Some(n) => n,
        None => m.generate_name.as_deref().unwrap_or(""),
    };
    AdmissionError::Forbidden(forbidden_message(
        &obj.kind().info().group_resource(),
        name,
        reason,
    ))
}
