//! `kubectl`: global flags, subcommand dispatch, and what every subcommand shares
//! (resource resolution, namespaces, error printing as kubectl prints it).

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;

use crate::api::Status;
use crate::cluster::APISERVER_HOST;
use crate::cmd::flags::{self, flag, Flag, Parsed};
use crate::object::{CustomKinds, Kind};
use crate::process::{Io, Output, Process, Sys};

/// The admin identity in the terminal's kubeconfig (kubeadm's `kubernetes-admin`).
pub const ADMIN_USER: &str = "kubernetes-admin";
/// Its groups.
pub const ADMIN_GROUPS: &[&str] = &["kubeadm:cluster-admins"];

/// Flags every kubectl command accepts.
pub const GLOBAL: &[Flag] = &[
    flag("namespace", Some('n'), true),
    flag("as", None, true),
    flag("as-group", None, true),
    flag("kubeconfig", None, true),
    flag("context", None, true),
    flag("cluster", None, true),
    flag("user", None, true),
    flag("token", None, true),
    flag("server", Some('s'), true),
    flag("request-timeout", None, true),
    flag("v", Some('v'), true),
    flag("help", Some('h'), false),
];

/// A boxed command task.
pub type Task = Pin<Box<dyn Future<Output = i32>>>;

/// Every kubectl command kubeloop runs.
pub const SUBCOMMANDS: &[&str] = &[
    "annotate",
    "api-resources",
    "api-versions",
    "apply",
    "auth",
    "autoscale",
    "cluster-info",
    "config",
    "cordon",
    "cp",
    "create",
    "delete",
    "describe",
    "diff",
    "drain",
    "edit",
    "exec",
    "explain",
    "expose",
    "get",
    "label",
    "logs",
    "patch",
    "port-forward",
    "replace",
    "rollout",
    "run",
    "scale",
    "set",
    "taint",
    "top",
    "uncordon",
    "version",
    "wait",
];

/// kubectl commands the simulator does not offer: they say so, instead of claiming
/// kubectl has no such command.
const UNAVAILABLE: &[&str] = &[
    "alpha",
    "attach",
    "certificate",
    "completion",
    "debug",
    "events",
    "kustomize",
    "options",
    "plugin",
    "proxy",
];

fn fail(stderr: String) -> Output {
    Output {
        exit_code: 1,
        stdout: String::new(),
        stderr,
    }
}

/// Parses a kubectl command line into a task, or the immediate error output.
pub fn task(
    args: &[String],
    files: Rc<BTreeMap<String, String>>,
) -> Result<(Rc<RefCell<Io>>, Task), Output> {
    task_in(
        args,
        files,
        &crate::cmd::kubeconfig::State::default(),
        CustomKinds::default(),
    )
}

/// The subcommand of a kubectl command line: the first word that is not a global flag
/// or its value, with its index.
pub fn subcommand(args: &[String]) -> Option<(usize, &str)> {
    let mut i = 0;
    while i < args.len() && args[i].starts_with('-') {
        let takes_value = GLOBAL.iter().any(|f| {
            f.value
                && (args[i] == format!("--{}", f.long)
                    || f.short.is_some_and(|c| args[i] == format!("-{c}")))
        });
        i += if takes_value { 2 } else { 1 };
    }
    args.get(i).map(|s| (i, s.as_str()))
}

/// [`task`] with the terminal's kubeconfig (its current context and namespaces).
pub fn task_in(
    args: &[String],
    files: Rc<BTreeMap<String, String>>,
    kubeconfig: &crate::cmd::kubeconfig::State,
    custom: CustomKinds,
) -> Result<(Rc<RefCell<Io>>, Task), Output> {
    // The subcommand is the first word that is not a global flag or its value.
    let Some((i, _)) = subcommand(args) else {
        return Err(Output {
            exit_code: 0,
            stdout: crate::cmd::help::kubectl(),
            stderr: String::new(),
        });
    };
    let sub = &args[i];
    let rest: Vec<String> = args[..i]
        .iter()
        .chain(args[i + 1..].iter())
        .cloned()
        .collect();
    let sub = sub.as_str();
    if UNAVAILABLE.contains(&sub) {
        return Err(fail(format!(
            "error: \"kubectl {sub}\" is not available in kubeloop yet\n"
        )));
    }
    if !SUBCOMMANDS.contains(&sub) {
        let suggestion = SUBCOMMANDS.iter().find(|c| crate::cmd::sim::close(sub, c));
        let hint = suggestion.map_or(String::new(), |s| {
            format!("\n\nDid you mean this?\n\t{s}\n")
        });
        return Err(fail(format!("error: unknown command \"{sub}\" for \"kubectl\"{hint}\nRun 'kubectl --help' for usage.\n")));
    }
    if rest.iter().any(|a| a == "--help" || a == "-h") {
        return Err(Output {
            exit_code: 0,
            stdout: crate::cmd::help::command(sub, sub_flags(sub)),
            stderr: String::new(),
        });
    }
    let spec: Vec<Flag> = GLOBAL.iter().chain(sub_flags(sub)).copied().collect();
    let parsed = flags::parse(&rest, &spec, &format!("kubectl {sub}")).map_err(fail)?;
    // `kubectl create rolebinding --user=x` names a subject, not the kubeconfig user.
    let mut for_identity = parsed.clone();
    if sub == "create" && crate::cmd::create::owns_user_flag(&parsed.args) {
        for_identity.flags.remove("user");
    }
    let id = crate::cmd::kubeconfig::identity_in(&for_identity, kubeconfig)
        .map_err(|e| fail(format!("{e}\n")))?;
    let context_namespace = kubeconfig.namespace(&parsed).map(str::to_string);
    let groups: Vec<&str> = id.groups.iter().map(String::as_str).collect();
    let user = id.user.clone().unwrap_or_default();
    let (io, sys) = Process::sys(&user, &groups, id.impersonate.clone(), files);
    let ctx = Kubectl {
        sys,
        flags: parsed,
        context_namespace,
        custom: Rc::new(custom),
    };
    let task: Task = match sub {
        "get" => Box::pin(crate::cmd::get::get(ctx)),
        "apply" => Box::pin(crate::cmd::apply::apply(ctx)),
        "create"
            if ctx
                .flags
                .args
                .first()
                .is_some_and(|a| crate::cmd::create::GENERATORS.contains(&a.as_str())) =>
        {
            Box::pin(crate::cmd::create::create(ctx))
        }
        "create" => Box::pin(crate::cmd::apply::create(ctx)),
        "auth" => Box::pin(crate::cmd::auth::auth(ctx)),
        "autoscale" => Box::pin(crate::cmd::autoscale::autoscale(ctx)),
        "drain" => Box::pin(crate::cmd::drain::drain(ctx)),
        "replace" => Box::pin(crate::cmd::apply::replace(ctx)),
        "delete" => Box::pin(crate::cmd::apply::delete(ctx)),
        "expose" => Box::pin(crate::cmd::expose::expose(ctx)),
        "scale" => Box::pin(crate::cmd::expose::scale(ctx)),
        "describe" => Box::pin(crate::cmd::get::describe(ctx)),
        "rollout" => Box::pin(crate::cmd::rollout::rollout(ctx)),
        "version" => Box::pin(version(ctx)),
        "set" => Box::pin(crate::cmd::edit::set(ctx)),
        "label" => Box::pin(crate::cmd::edit::label(ctx, false)),
        "annotate" => Box::pin(crate::cmd::edit::label(ctx, true)),
        "patch" => Box::pin(crate::cmd::edit::patch(ctx)),
        "cordon" => Box::pin(crate::cmd::edit::cordon(ctx, true)),
        "uncordon" => Box::pin(crate::cmd::edit::cordon(ctx, false)),
        "taint" => Box::pin(crate::cmd::edit::taint(ctx)),
        "logs" => Box::pin(crate::cmd::logs::logs(ctx)),
        "exec" => Box::pin(crate::cmd::logs::exec(ctx)),
        "top" => Box::pin(crate::cmd::top::top(ctx)),
        "run" => Box::pin(crate::cmd::run::run(ctx)),
        "wait" => Box::pin(crate::cmd::wait::wait(ctx)),
        "port-forward" => Box::pin(crate::cmd::port_forward::port_forward(ctx)),
        "cp" => Box::pin(crate::cmd::cp::cp(ctx)),
        "diff" => Box::pin(crate::cmd::diff::diff(ctx)),
        "explain" => Box::pin(crate::cmd::explain::explain(ctx)),
        "api-resources" => Box::pin(crate::cmd::discovery::api_resources(ctx)),
        "api-versions" => Box::pin(crate::cmd::discovery::api_versions(ctx)),
        "cluster-info" => Box::pin(crate::cmd::discovery::cluster_info(ctx)),
        other => {
            let other = other.to_string();
            Box::pin(async move {
                ctx.sys.err(&format!(
                    "error: \"kubectl {other}\" is not available in kubeloop yet\n"
                ));
                1
            })
        }
    };
    Ok((io, task))
}

const GET_FLAGS: &[Flag] = &[
    flag("output", Some('o'), true),
    flag("selector", Some('l'), true),
    flag("field-selector", None, true),
    flag("all-namespaces", Some('A'), false),
    flag("watch", Some('w'), false),
    flag("watch-only", None, false),
    flag("show-labels", None, false),
    flag("no-headers", None, false),
    flag("label-columns", Some('L'), true),
    flag("chunk-size", None, true),
    flag("ignore-not-found", None, false),
    flag("show-kind", None, false),
    flag("sort-by", None, true),
    flag("filename", Some('f'), true),
    flag("recursive", Some('R'), false),
];
const WRITE_FLAGS: &[Flag] = &[
    flag("filename", Some('f'), true),
    flag("recursive", Some('R'), false),
    flag("dry-run", None, true),
    flag("cascade", None, true),
    flag("grace-period", None, true),
    flag("force", None, false),
    flag("wait", None, true),
    flag("all", None, false),
    flag("selector", Some('l'), true),
    flag("now", None, false),
    flag("ignore-not-found", None, false),
    flag("output", Some('o'), true),
    flag("all-namespaces", Some('A'), false),
    flag("server-side", None, false),
    flag("validate", None, true),
    flag("save-config", None, false),
];
const EXPOSE_FLAGS: &[Flag] = &[
    flag("port", None, true),
    flag("target-port", None, true),
    flag("type", None, true),
    flag("name", None, true),
    flag("protocol", None, true),
    flag("selector", None, true),
    flag("labels", Some('l'), true),
    flag("cluster-ip", None, true),
    flag("external-ip", None, true),
    flag("session-affinity", None, true),
    flag("output", Some('o'), true),
    flag("dry-run", None, true),
    flag("filename", Some('f'), true),
];
const SCALE_FLAGS: &[Flag] = &[
    flag("replicas", None, true),
    flag("current-replicas", None, true),
    flag("filename", Some('f'), true),
    flag("selector", Some('l'), true),
    flag("all", None, false),
];
const AUTOSCALE_FLAGS: &[Flag] = &[
    flag("max", None, true),
    flag("min", None, true),
    flag("cpu-percent", None, true),
    flag("cpu", None, true),
    flag("name", None, true),
    flag("dry-run", None, true),
    flag("output", Some('o'), true),
];
const DESCRIBE_FLAGS: &[Flag] = &[
    flag("selector", Some('l'), true),
    flag("all-namespaces", Some('A'), false),
    flag("show-events", None, true),
    flag("filename", Some('f'), true),
];
const ROLLOUT_FLAGS: &[Flag] = &[
    flag("watch", Some('w'), true),
    flag("timeout", None, true),
    flag("revision", None, true),
    flag("to-revision", None, true),
    flag("selector", Some('l'), true),
    flag("output", Some('o'), true),
];
const OVERWRITE_FLAGS: &[Flag] = &[
    flag("overwrite", None, false),
    flag("all", None, false),
    flag("selector", Some('l'), true),
];
const PATCH_FLAGS: &[Flag] = &[
    flag("patch", Some('p'), true),
    flag("type", None, true),
    flag("filename", Some('f'), true),
    flag("subresource", None, true),
];
const CREATE_FLAGS: &[Flag] = &[
    flag("filename", Some('f'), true),
    flag("recursive", Some('R'), false),
    flag("dry-run", None, true),
    flag("output", Some('o'), true),
    flag("save-config", None, false),
    flag("validate", None, true),
    flag("edit", None, false),
    flag("image", None, true),
    flag("replicas", Some('r'), true),
    flag("port", None, true),
    flag("from-literal", None, true),
    flag("from-file", None, true),
    flag("from-env-file", None, true),
    flag("cert", None, true),
    flag("key", None, true),
    flag("type", None, true),
    flag("tcp", None, true),
    flag("node-port", None, true),
    flag("clusterip", None, true),
    flag("external-name", None, true),
    flag("verb", None, true),
    flag("resource", None, true),
    flag("resource-name", None, true),
    flag("role", None, true),
    flag("clusterrole", None, true),
    flag("group", None, true),
    flag("serviceaccount", None, true),
    flag("value", None, true),
    flag("global-default", None, false),
    flag("description", None, true),
    flag("preemption-policy", None, true),
    flag("from", None, true),
    flag("schedule", None, true),
    flag("restart", None, true),
    flag("hard", None, true),
    flag("scopes", None, true),
    flag("selector", None, true),
    flag("min-available", None, true),
    flag("max-unavailable", None, true),
    flag("rule", None, true),
    flag("class", None, true),
    flag("default-backend", None, true),
    flag("annotation", None, true),
];
const AUTH_FLAGS: &[Flag] = &[
    flag("all-namespaces", Some('A'), false),
    flag("quiet", Some('q'), false),
    flag("subresource", None, true),
    flag("list", None, false),
    flag("no-headers", None, false),
    flag("output", Some('o'), true),
];
const DRAIN_FLAGS: &[Flag] = &[
    flag("ignore-daemonsets", None, false),
    flag("delete-emptydir-data", None, false),
    flag("force", None, false),
    flag("grace-period", None, true),
    flag("timeout", None, true),
    flag("selector", Some('l'), true),
    flag("pod-selector", None, true),
    flag("disable-eviction", None, false),
    flag("dry-run", None, true),
    flag("skip-wait-for-delete-timeout", None, true),
];
const CLUSTER_INFO_FLAGS: &[Flag] = &[
    flag("all-namespaces", Some('A'), false),
    flag("namespaces", None, true),
    flag("output-directory", None, true),
    flag("output", Some('o'), true),
];
const VERSION_FLAGS: &[Flag] = &[flag("client", None, false), flag("output", Some('o'), true)];
const LOGS_FLAGS: &[Flag] = &[
    flag("container", Some('c'), true),
    flag("previous", Some('p'), false),
    flag("follow", Some('f'), false),
    flag("tail", None, true),
    flag("timestamps", None, false),
    flag("all-containers", None, false),
    flag("since", None, true),
    flag("selector", Some('l'), true),
    flag("prefix", None, false),
];
const CP_FLAGS: &[Flag] = &[
    flag("container", Some('c'), true),
    flag("no-preserve", None, false),
    flag("retries", None, true),
];
const PORT_FORWARD_FLAGS: &[Flag] = &[
    flag("address", None, true),
    flag("pod-running-timeout", None, true),
];
const EXEC_FLAGS: &[Flag] = &[
    flag("container", Some('c'), true),
    // The terminal's interactive shell session (`exec -it POD -- sh`), one line at a time.
    flag("kubeloop-session", None, true),
    flag("stdin", Some('i'), false),
    flag("tty", Some('t'), false),
    flag("quiet", Some('q'), false),
];
const RUN_FLAGS: &[Flag] = &[
    flag("image", None, true),
    flag("restart", None, true),
    flag("labels", Some('l'), true),
    flag("env", None, true),
    flag("port", None, true),
    flag("command", None, false),
    flag("stdin", Some('i'), false),
    flag("tty", Some('t'), false),
    flag("attach", None, false),
    flag("rm", None, false),
    flag("quiet", Some('q'), false),
    flag("dry-run", None, true),
    flag("output", Some('o'), true),
    flag("annotations", None, true),
    flag("image-pull-policy", None, true),
    flag("pod-running-timeout", None, true),
];
const DIFF_FLAGS: &[Flag] = &[
    flag("filename", Some('f'), true),
    flag("recursive", Some('R'), false),
    flag("server-side", None, false),
    flag("field-manager", None, true),
    flag("force-conflicts", None, false),
];
const API_RESOURCES_FLAGS: &[Flag] = &[
    flag("namespaced", None, true),
    flag("api-group", None, true),
    flag("output", Some('o'), true),
    flag("no-headers", None, false),
    flag("sort-by", None, true),
    flag("verbs", None, true),
    flag("cached", None, false),
];
const EXPLAIN_FLAGS: &[Flag] = &[flag("recursive", None, false)];
const WAIT_FLAGS: &[Flag] = &[
    flag("filename", Some('f'), true),
    flag("recursive", Some('R'), false),
    flag("for", None, true),
    flag("timeout", None, true),
    flag("selector", Some('l'), true),
    flag("all", None, false),
    flag("all-namespaces", Some('A'), false),
    flag("output", Some('o'), true),
];
const TOP_FLAGS: &[Flag] = &[
    flag("all-namespaces", Some('A'), false),
    flag("containers", None, false),
    flag("sort-by", None, true),
    flag("selector", Some('l'), true),
    flag("no-headers", None, false),
];

/// The flags of a kubectl command (besides the global ones).
pub fn sub_flags(sub: &str) -> &'static [Flag] {
    match sub {
        "get" => GET_FLAGS,
        "apply" | "replace" | "delete" => WRITE_FLAGS,
        "diff" => DIFF_FLAGS,
        "api-resources" => API_RESOURCES_FLAGS,
        "explain" => EXPLAIN_FLAGS,
        "create" => CREATE_FLAGS,
        "auth" => AUTH_FLAGS,
        "drain" => DRAIN_FLAGS,
        "expose" => EXPOSE_FLAGS,
        "scale" => SCALE_FLAGS,
        "autoscale" => AUTOSCALE_FLAGS,
        "describe" => DESCRIBE_FLAGS,
        "rollout" => ROLLOUT_FLAGS,
        "version" => VERSION_FLAGS,
        "cluster-info" => CLUSTER_INFO_FLAGS,
        "label" | "annotate" | "taint" => OVERWRITE_FLAGS,
        "patch" => PATCH_FLAGS,
        "logs" => LOGS_FLAGS,
        "exec" => EXEC_FLAGS,
        "top" => TOP_FLAGS,
        "run" => RUN_FLAGS,
        "wait" => WAIT_FLAGS,
        "port-forward" => PORT_FORWARD_FLAGS,
        "cp" => CP_FLAGS,
        _ => &[],
    }
}

/// A running kubectl: its I/O and parsed flags.
pub struct Kubectl {
    /// I/O.
    pub sys: Sys,
    /// Flags and positional arguments.
    pub flags: Parsed,
    /// The namespace the kubeconfig's context sets, if any.
    pub context_namespace: Option<String>,
    /// The custom kinds discovery served when the command started.
    pub custom: Rc<CustomKinds>,
}

impl Kubectl {
    /// The request namespace: `-n`, the context's namespace, or `default`.
    pub fn namespace(&self) -> String {
        self.flags
            .get("namespace")
            .or(self.context_namespace.as_deref())
            .unwrap_or("default")
            .to_string()
    }

    /// Prints an API error as kubectl does; returns the exit code 1.
    pub fn status_error(&self, s: &Status) -> i32 {
        self.sys
            .err(&format!("{}\n", s.kubectl_message(APISERVER_HOST)));
        1
    }

    /// Prints `error: …`; returns 1.
    pub fn error(&self, msg: &str) -> i32 {
        self.sys.err(&format!("error: {msg}\n"));
        1
    }
}

/// Resolves a resource word (built-in kinds first, then the custom kinds discovery
/// serves) or `error: the server doesn't have a resource type "x"`.
pub fn resolve_kind(word: &str, custom: &CustomKinds) -> Result<Kind, String> {
    Kind::from_resource_arg(word)
        .or_else(|| custom.resource_arg(word))
        .ok_or_else(|| format!("the server doesn't have a resource type \"{word}\""))
}

/// `kind.group/name` as kubectl prints it in `created`/`configured` lines.
pub fn kind_name(kind: Kind, name: &str) -> String {
    let info = kind.info();
    if info.group.is_empty() {
        format!("{}/{}", info.singular, name)
    } else {
        format!("{}.{}/{}", info.singular, info.group, name)
    }
}

/// `kind.group "name"` as kubectl prints it in `deleted` lines.
pub fn kind_quoted(kind: Kind, name: &str) -> String {
    let info = kind.info();
    if info.group.is_empty() {
        format!("{} \"{}\"", info.singular, name)
    } else {
        format!("{}.{} \"{}\"", info.singular, info.group, name)
    }
}

async fn version(k: Kubectl) -> i32 {
    match k.flags.get("output") {
        None | Some("") => {}
        // The build facts (git commit, build date, Go version) of -o json|yaml are not
        // something the simulator has.
        Some("json" | "yaml") => {
            return k.error("\"kubectl version -o json|yaml\" is not available in kubeloop yet")
        }
        Some(_) => return k.error("--output must be 'yaml' or 'json'"),
    }
    k.sys.out(&format!(
        "Client Version: {v}\nKustomize Version: v5.7.1\n",
        v = crate::cluster::KUBERNETES_VERSION
    ));
    if !k.flags.bool("client") {
        let req =
            crate::api::ApiRequest::new(crate::api::Verb::Get, Kind::Namespace, "", "default");
        if let Err(s) = k.sys.api(req).await {
            if s.transport != crate::api::Transport::Server {
                return k.status_error(&s);
            }
        }
        k.sys.out(&format!(
            "Server Version: {}\n",
            crate::cluster::KUBERNETES_VERSION
        ));
    }
    0
}
