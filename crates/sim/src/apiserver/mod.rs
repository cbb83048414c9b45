//! kube-apiserver: the request pipeline, storage strategies, watch cache, defaulting,
//! validation and admission.

pub mod admission;
pub mod admission_chain;
pub mod authz;
pub mod autoscaling_v1;
pub mod crd;
pub mod defaults;
pub mod event_ttl;
pub mod eviction;
pub mod field_error;
pub mod namespace;
pub mod node_proxy;
pub mod patch;
pub mod quantity;
pub mod quantity_fields;
pub mod server;
pub mod status_patch;
pub mod strategy;
pub mod validation;
pub mod watch;
pub mod watch_window;
pub mod write;

#[cfg(test)]
mod fuzz_tests;

pub use server::{ApiServer, AuditEntry, Span};
