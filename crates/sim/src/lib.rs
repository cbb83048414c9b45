//! kubeloop-sim: a deterministic Kubernetes control plane and nodes running in virtual time.
//!
//! Pure Rust: no browser dependency, so every behaviour is tested natively with `cargo test`
//! and the same code runs in the page compiled to wasm32.

pub mod object;
pub mod rng;
pub mod scheduler;
pub mod time;
