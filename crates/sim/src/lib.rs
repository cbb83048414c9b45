//! kubeloop-sim: a deterministic Kubernetes control plane and nodes running in virtual time.
//!
//! Pure Rust: no browser dependency, so every behaviour is tested natively with `cargo test`
//! and the same code runs in the page compiled to wasm32.

pub mod api;
pub mod apiserver;
pub mod bench;
pub mod client;
pub mod cloud;
pub mod cluster;
pub mod cmd;
pub mod controllers;
pub mod engine;
pub mod envelope;
pub mod etcd;
pub mod export;
pub mod import;
pub mod kube_scheduler;
pub mod kubeconfig_state;
pub mod kubectl;
pub mod lesson;
pub mod manifest;
pub mod message;
pub mod node;
pub mod object;
pub mod object_custom;
pub mod pattern;
pub mod process;
pub mod proxy;
pub mod quantity;
pub mod rbac_bootstrap;
pub mod rng;
pub mod runner;
pub mod scenario;
pub mod scheduler;
pub mod selector;
pub mod share;
pub mod stored;
pub mod time;
pub mod view;
pub mod world;
pub mod world_observe;
pub mod yamlpos;

pub use world::{Actor, World};
