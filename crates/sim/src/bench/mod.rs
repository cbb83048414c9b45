//! Benchmark workloads. The engine builds and drives them; the caller (the CLI natively,
//! a small wasm host in the browser engine) times them. Nothing here reads a clock.

pub mod apiserver;
pub mod envelope;
pub mod scheduling;
pub mod soak;

pub use apiserver::*;
pub use envelope::{Envelope, EnvelopeReport};
pub use scheduling::{SchedulingBasic, SchedulingReport};
pub use soak::{Soak, SoakReport, SoakSample};
