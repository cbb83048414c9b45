//! kubectl's output formatting as pure functions: tables, describe, and -o formats.

pub mod describe;
pub mod jsonpath;
pub mod output;
pub mod printers;
pub mod tabwriter;
pub mod yaml;
pub mod yaml_resolve;
