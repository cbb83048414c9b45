//! kubectl's output formatting as pure functions: tables, describe, and -o formats.

// pub mod describe;
// pub mod output;
// pub mod printers;
pub mod tabwriter;
