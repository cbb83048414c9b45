//! The terminal's kubeconfig: two users (kubeadm's `kubernetes-admin` and an ordinary
//! user `jane`), a context for each, and how `--user`, `--context`, `--token` and `--as`
//! pick the identity a kubectl request carries.

use crate::cmd::flags::Parsed;

/// The cluster's name in the kubeconfig.
pub const CLUSTER: &str = "kubernetes";
pub use crate::kubeconfig_state::CURRENT_CONTEXT;

/// A kubeconfig `users` entry: the client certificate's CN and O (user and groups).
#[derive(Clone, Copy, Debug)]
pub struct AuthInfo {
    /// Entry name (also the certificate's CN).
    pub name: &'static str,
    /// The certificate's organizations.
    pub groups: &'static [&'static str],
}

/// Every user in the kubeconfig.
pub const USERS: &[AuthInfo] = &[
    AuthInfo {
        name: "kubernetes-admin",
        groups: &["kubeadm:cluster-admins"],
    },
    AuthInfo {
        name: "jane",
        groups: &[],
    },
];

/// Every context: (name, user).
pub const CONTEXTS: &[(&str, &str)] = &[
    ("kubernetes-admin@kubernetes", "kubernetes-admin"),
    ("jane@kubernetes", "jane"),
];

pub use crate::kubeconfig_state::State;

impl State {
    /// The namespace of the context a command uses (`--context` or the current one).
    pub fn namespace(&self, flags: &Parsed) -> Option<&str> {
        let ctx = flags.get("context").unwrap_or(self.current());
        self.namespaces.get(ctx).map(String::as_str)
    }
}

/// Who a kubectl invocation authenticates as.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Identity {
    /// The authenticated user, or None when the credentials are not accepted (401).
    pub user: Option<String>,
    /// Its groups.
    pub groups: Vec<String>,
    /// `--as`.
    pub impersonate: Option<String>,
}

/// clientcmd's `ConfirmUsable` for a context: its user and cluster must exist, and the
/// cluster must have a server (`invalid configuration: [...]` otherwise).
fn confirm_usable(ctx: &crate::kubeconfig_state::Context) -> Result<(), String> {
    let mut errs = Vec::new();
    let name = &ctx.name;
    if ctx.user.is_empty() {
        errs.push(format!("user was not specified for context \"{name}\""));
    } else if !USERS.iter().any(|u| u.name == ctx.user) {
        errs.push(format!(
            "user \"{}\" was not found for context \"{name}\"",
            ctx.user
        ));
    }
    if ctx.cluster.is_empty() {
        errs.push(format!("cluster was not specified for context \"{name}\""));
    } else if ctx.cluster != CLUSTER {
        errs.push(format!(
            "cluster \"{}\" was not found for context \"{name}\"",
            ctx.cluster
        ));
    }
    if ctx.cluster != CLUSTER {
        errs.push(if ctx.cluster.is_empty() {
            "default cluster has no server defined".to_string()
        } else {
            format!("no server found for cluster \"{}\"", ctx.cluster)
        });
    }
    match errs.len() {
        0 => Ok(()),
        1 => Err(format!("error: invalid configuration: {}", errs[0])),
        _ => Err(format!(
            "error: invalid configuration: [{}]",
            errs.join(", ")
        )),
    }
}

/// Resolves the global flags to an identity, or kubectl's configuration error.
pub fn identity(flags: &Parsed) -> Result<Identity, String> {
    identity_in(flags, &State::default())
}

/// [`identity`] with the terminal's kubeconfig.
pub fn identity_in(flags: &Parsed, state: &State) -> Result<Identity, String> {
    let context = flags.get("context").unwrap_or(state.current());
    let Some(ctx) = state.context(context) else {
        return Err(format!("error: context \"{context}\" does not exist"));
    };
    if !flags.has("user") {
        confirm_usable(&ctx)?;
    }
    let user = flags.get("user").unwrap_or(&ctx.user);
    let Some(info) = USERS.iter().find(|u| u.name == user) else {
        return Err(format!("error: auth info \"{user}\" does not exist"));
    };
    let impersonate = flags.get("as").map(str::to_string);
    if flags.has("as-group") && impersonate.is_none() {
        return Err(
            "error: requesting uid, groups or user-extra for test without impersonating a user"
                .into(),
        );
    }
    // A bearer token replaces the certificate; the apiserver knows no tokens but those
    // of ServiceAccounts, which the terminal does not hold, so any token is refused.
    if flags.has("token") {
        return Ok(Identity {
            user: None,
            groups: Vec::new(),
            impersonate,
        });
    }
    Ok(Identity {
        user: Some(info.name.to_string()),
        groups: info.groups.iter().map(|g| g.to_string()).collect(),
        impersonate,
    })
}
