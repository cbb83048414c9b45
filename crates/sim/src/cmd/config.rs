//! `kubectl config`: the terminal's kubeconfig — `view`, `current-context`,
//! `get-contexts`, `get-clusters`, `get-users`, `use-context`, and `set-context
//! [NAME|--current] [--namespace=NS] [--cluster=C] [--user=U]` (which makes a context
//! when NAME is new; later commands use its namespace, user and cluster). Local to the
//! terminal: no request reaches the cluster.

use serde_json::{json, Value};

use crate::cluster::APISERVER_HOST;
use crate::cmd::flags::{self, flag, Flag, Parsed};
use crate::cmd::kubeconfig::{State, CLUSTER, USERS};
use crate::kubectl::output::{to_json, OutputFormat};
use crate::kubectl::tabwriter::{align, TabConfig};
use crate::kubectl::yaml::to_yaml;
use crate::process::Output;

const FLAGS: &[Flag] = &[
    flag("current", None, false),
    flag("minify", None, false),
    flag("output", Some('o'), true),
    flag("no-headers", None, false),
];

fn ok(stdout: String) -> Output {
    Output {
        exit_code: 0,
        stdout,
        stderr: String::new(),
    }
}

fn fail(msg: &str) -> Output {
    Output {
        exit_code: 1,
        stdout: String::new(),
        stderr: format!("error: {msg}\n"),
    }
}

/// The kubeconfig as `kubectl config view` shows it (certificate data omitted).
fn view(state: &State, minify: bool) -> Value {
    let current = state.current();
    let shown: Vec<_> = state
        .contexts()
        .into_iter()
        .filter(|c| !minify || c.name == current)
        .collect();
    let ctxs: Vec<Value> = shown
        .iter()
        .map(|ctx| {
            let mut c = serde_json::Map::new();
            if !ctx.cluster.is_empty() {
                c.insert("cluster".into(), json!(ctx.cluster));
            }
            if let Some(ns) = state.namespaces.get(&ctx.name) {
                c.insert("namespace".into(), json!(ns));
            }
            if !ctx.user.is_empty() {
                c.insert("user".into(), json!(ctx.user));
            }
            json!({"context": c, "name": ctx.name})
        })
        .collect();
    let in_use: Vec<&str> = shown.iter().map(|c| c.user.as_str()).collect();
    let mut users: Vec<&str> = USERS.iter().map(|u| u.name).collect();
    users.sort();
    let users: Vec<Value> = users
        .into_iter()
        .filter(|u| !minify || in_use.contains(u))
        .map(|u| {
            json!({"name": u, "user": {
                "client-certificate-data": "DATA+OMITTED",
                "client-key-data": "DATA+OMITTED"
            }})
        })
        .collect();
    json!({
        "apiVersion": "v1",
        "clusters": [{"cluster": {
            "certificate-authority-data": "DATA+OMITTED",
            "server": format!("https://{APISERVER_HOST}")
        }, "name": CLUSTER}],
        "contexts": ctxs,
        "current-context": current,
        "kind": "Config",
        "preferences": {},
        "users": users,
    })
}

fn print_view(state: &State, p: &Parsed) -> Output {
    let v = view(state, p.bool("minify"));
    match OutputFormat::parse(p.get("output").unwrap_or("yaml")) {
        Ok(OutputFormat::Yaml | OutputFormat::Table) => ok(to_yaml(&v)),
        Ok(OutputFormat::Json) => ok(to_json(&v)),
        Ok(OutputFormat::JsonPath { template, as_json }) => {
            match crate::kubectl::jsonpath::JsonPath::parse(&template)
                .and_then(|j| j.execute(&v, as_json))
            {
                Ok(s) => ok(s),
                Err(e) => fail(&e),
            }
        }
        Ok(_) => fail(&format!(
            "unable to match a printer suitable for the output format \"{}\", allowed formats are: go-template,go-template-file,json,jsonpath,jsonpath-as-json,jsonpath-file,name,template,templatefile,yaml",
            p.get("output").unwrap_or_default()
        )),
        Err(e) => fail(&e),
    }
}

fn get_contexts(state: &State, p: &Parsed) -> Output {
    let wanted: Vec<&String> = p.args.iter().skip(1).collect();
    for w in &wanted {
        if state.context(w).is_none() {
            return fail(&format!("context {w} not found"));
        }
    }
    let rows: Vec<_> = state
        .contexts()
        .into_iter()
        .filter(|c| wanted.is_empty() || wanted.iter().any(|w| **w == c.name))
        .collect();
    if p.get("output") == Some("name") {
        return ok(rows.iter().map(|c| format!("{}\n", c.name)).collect());
    }
    let mut text = String::new();
    if !p.bool("no-headers") {
        text.push_str("CURRENT\tNAME\tCLUSTER\tAUTHINFO\tNAMESPACE\n");
    }
    for c in rows {
        let mark = if c.name == state.current() { "*" } else { "" };
        let ns = state.namespaces.get(&c.name).map_or("", String::as_str);
        text.push_str(&format!(
            "{mark}\t{}\t{}\t{}\t{ns}\n",
            c.name, c.cluster, c.user
        ));
    }
    ok(align(&text, TabConfig::KUBECTL_GET))
}

fn set_context(state: &mut State, p: &Parsed) -> Output {
    let name = p.args.get(1).cloned();
    let current = p.bool("current");
    let name = match (name, current) {
        (Some(_), true) => return fail("you cannot specify both a context name and --current"),
        (None, false) => return fail("you must specify a non-empty context name or --current"),
        (Some(n), false) => n,
        (None, true) => state.current().to_string(),
    };
    let existing = state.context(&name);
    let created = existing.is_none();
    if p.has("cluster") || p.has("user") || created {
        let (mut cluster, mut user) = existing.map(|c| (c.cluster, c.user)).unwrap_or_default();
        if let Some(c) = p.get("cluster") {
            cluster = c.to_string();
        }
        if let Some(u) = p.get("user") {
            user = u.to_string();
        }
        state.contexts.insert(name.clone(), (cluster, user));
    }
    if let Some(ns) = p.get("namespace") {
        if ns.is_empty() {
            state.namespaces.remove(&name);
        } else {
            state.namespaces.insert(name.clone(), ns.to_string());
        }
    }
    let verb = if created { "created" } else { "modified" };
    ok(format!("Context \"{name}\" {verb}.\n"))
}

/// Runs `kubectl config ARGS…` (`args` without the word `config`) against the terminal's
/// kubeconfig.
pub fn run(state: &mut State, args: &[String]) -> Output {
    let spec: Vec<Flag> = crate::cmd::kubectl::GLOBAL
        .iter()
        .chain(FLAGS)
        .copied()
        .collect();
    let name = match args.iter().find(|a| !a.starts_with('-')) {
        Some(sub) => format!("kubectl config {sub}"),
        None => "kubectl config".to_string(),
    };
    let p = match flags::parse(args, &spec, &name) {
        Ok(p) => p,
        Err(e) => {
            return Output {
                exit_code: 1,
                stdout: String::new(),
                stderr: e,
            }
        }
    };
    match p.args.first().map(String::as_str) {
        Some("view") => print_view(state, &p),
        Some("current-context") => ok(format!("{}\n", state.current())),
        Some("get-contexts") => get_contexts(state, &p),
        Some("get-clusters") => ok(format!("NAME\n{CLUSTER}\n")),
        Some("get-users") => {
            let mut users: Vec<&str> = USERS.iter().map(|u| u.name).collect();
            users.sort();
            ok(format!("NAME\n{}\n", users.join("\n")))
        }
        Some("use-context") => match p.args.get(1) {
            Some(c) if state.context(c).is_some() => {
                state.current_context = Some(c.clone());
                ok(format!("Switched to context \"{c}\".\n"))
            }
            Some(c) => fail(&format!("no context exists with the name: \"{c}\"")),
            None => fail("Unexpected args: []\nSee 'kubectl config use-context -h' for help and examples"),
        },
        Some("set-context") => set_context(state, &p),
        Some(other) => fail(&format!("unknown command \"{other}\" for \"kubectl config\"")),
        None => ok("Modify kubeconfig files using subcommands like \"kubectl config set current-context my-context\".\n\nAvailable Commands (in kubeloop):\n  current-context   Display the current-context\n  get-clusters      Display clusters defined in the kubeconfig\n  get-contexts      Describe one or many contexts\n  get-users         Display users defined in the kubeconfig\n  set-context       Set a context entry in kubeconfig\n  use-context       Set the current-context in a kubeconfig file\n  view              Display merged kubeconfig settings\n".into()),
    }
}
