//! kube-apiserver: the request pipeline, storage strategies, watch cache and admission.

pub mod admission_chain;
pub mod authz;
pub mod defaults;
pub mod field_error;
pub mod patch;
pub mod server;
pub mod strategy;
pub mod validation;
pub mod watch;
pub mod write;

pub use server::{ApiServer, AuditEntry, Span};
