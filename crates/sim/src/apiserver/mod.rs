//! The kube-apiserver's pure request logic: defaulting, validation and admission plugins.

pub mod admission;
pub mod defaults;
pub mod field_error;
pub mod quantity;
pub mod validation;

#[cfg(test)]
mod fuzz_tests;
