//! kubeloop-web: the Leptos CSR page that renders the engine's cluster.
//!
//! Placeholder app proving the build, serve and test pipeline: a title, a cluster
//! diagram with one rectangle per worker node, and a button that adds a node.

mod app;
pub mod layout;

pub use app::App;
