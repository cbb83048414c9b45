//! What the terminal keeps between commands: what `kubectl config` changed in its
//! kubeconfig (the current context, each context's namespace; `cmd::kubeconfig` reads it
//! to pick a command's identity and namespace), and the interactive shell a
//! `kubectl exec -it POD -- sh` opened. The world holds it for the terminal.

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
    /// Contexts `set-context NAME --cluster=C --user=U` made or changed: name → (cluster,
    /// user), either possibly empty.
    pub contexts: BTreeMap<String, (String, String)>,
}

/// One context of the kubeconfig.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Context {
    /// Its name.
    pub name: String,
    /// `context.cluster` (empty: not specified).
    pub cluster: String,
    /// `context.user` (empty: not specified).
    pub user: String,
}

impl State {
    /// The current context's name.
    pub fn current(&self) -> &str {
        self.current_context.as_deref().unwrap_or(CURRENT_CONTEXT)
    }

    /// Every context, sorted by name as the merged kubeconfig lists them: kubeadm's and
    /// jane's, with what `set-context` made or changed.
    pub fn contexts(&self) -> Vec<Context> {
        let mut all: BTreeMap<String, Context> = crate::cmd::kubeconfig::CONTEXTS
            .iter()
            .map(|(name, user)| {
                let c = Context {
                    name: name.to_string(),
                    cluster: crate::cmd::kubeconfig::CLUSTER.to_string(),
                    user: user.to_string(),
                };
                (name.to_string(), c)
            })
            .collect();
        for (name, (cluster, user)) in &self.contexts {
            all.insert(
                name.clone(),
                Context {
                    name: name.clone(),
                    cluster: cluster.clone(),
                    user: user.clone(),
                },
            );
        }
        all.into_values().collect()
    }

    /// The context of this name.
    pub fn context(&self, name: &str) -> Option<Context> {
        self.contexts().into_iter().find(|c| c.name == name)
    }
}

/// An interactive shell in a container (`kubectl exec -it POD -- sh`): the lines typed go
/// to it until `exit`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShellSession {
    /// The session's id (the container keeps the shell's state under it).
    pub id: u64,
    /// The `kubectl exec` arguments naming the pod and container (`-n ns -c c pod`).
    pub target: Vec<String>,
    /// The shell's prompt (`/ # ` for busybox's ash, `root@POD:/# ` for bash).
    pub prompt: String,
    /// What `exit` prints (`kubectl run -ti`'s "Session ended, …" note).
    pub exit_note: String,
    /// kubectl arguments run after `exit` (`kubectl run --rm -ti` deletes its pod).
    pub on_exit: Vec<String>,
}
