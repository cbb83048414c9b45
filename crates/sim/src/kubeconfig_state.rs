//! What `kubectl config` changes in the terminal's kubeconfig and keeps between commands:
//! the current context and each context's namespace. The world holds it for the terminal;
//! `cmd::kubeconfig` reads it to pick a command's identity and namespace.

use std::collections::BTreeMap;

/// The context kubectl uses unless `--context` or `use-context` says otherwise.
pub const CURRENT_CONTEXT: &str = "kubernetes-admin@kubernetes";

/// The kubeconfig's changeable part.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct State {
    /// `current-context`, when `use-context` changed it.
    pub current_context: Option<String>,
    /// `contexts[].context.namespace`.
    pub namespaces: BTreeMap<String, String>,
}

impl State {
    /// The current context's name.
    pub fn current(&self) -> &str {
        self.current_context.as_deref().unwrap_or(CURRENT_CONTEXT)
    }
}
