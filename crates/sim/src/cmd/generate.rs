//! What kubectl's generators (`run`, `create TYPE`) share: `--dry-run=none|client|server`,
//! `-o`, and printing the generated object as kubectl prints it (`pod/x created`,
//! `... created (dry run)`, or the object itself).

use std::sync::Arc;

use serde_json::{json, Value};

use crate::api::{ApiRequest, ApiResult, Body, Verb};
use crate::cmd::kubectl::{kind_name, Kubectl};
use crate::kubectl::output::{print_objects, OutputFormat};
use crate::kubectl::yaml::to_yaml;
use crate::object::{Kind, Object};

/// `--dry-run`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DryRun {
    /// Sent and stored.
    None,
    /// Printed, never sent.
    Client,
    /// Sent with `dryRun=All`: admitted and validated, never stored.
    Server,
}

/// How a generated object is sent and printed.
#[derive(Clone, Debug)]
pub struct Emit {
    /// `--dry-run`.
    pub dry: DryRun,
    /// `-o`, if given.
    pub format: Option<OutputFormat>,
}

/// Reads `--dry-run`, or prints kubectl's error and returns its exit code.
pub fn dry_run(k: &Kubectl) -> Result<DryRun, i32> {
    match k.flags.get("dry-run") {
        None | Some("none") => Ok(DryRun::None),
        Some("client") => Ok(DryRun::Client),
        Some("server") => Ok(DryRun::Server),
        Some(other) => Err(k.error(&format!(
            "Invalid dry-run value ({other}). Must be \"none\", \"server\", or \"client\"."
        ))),
    }
}

impl DryRun {
    /// What kubectl appends to a success line.
    pub fn suffix(self) -> &'static str {
        match self {
            DryRun::None => "",
            DryRun::Client => " (dry run)",
            DryRun::Server => " (server dry run)",
        }
    }
}

/// Reads `--dry-run` and `-o`, or prints kubectl's error and returns its exit code.
pub fn options(k: &Kubectl) -> Result<Emit, i32> {
    let dry = dry_run(k)?;
    let format = match k.flags.get("output") {
        None => None,
        Some(o) => match OutputFormat::parse(o) {
            Ok(OutputFormat::Table) => None,
            Ok(OutputFormat::Wide) => {
                return Err(k.error(&format!(
                    "unable to match a printer suitable for the output format \"wide\", allowed formats are: {}",
                    PRINT_FORMATS.join(",")
                )))
            }
            Ok(f) => Some(f),
            Err(e) => return Err(k.error(&e)),
        },
    };
    Ok(Emit { dry, format })
}

/// The formats a generator's `-o` accepts (PrintFlags without the table printer).
const PRINT_FORMATS: &[&str] = &[
    "go-template",
    "go-template-file",
    "json",
    "jsonpath",
    "jsonpath-as-json",
    "jsonpath-file",
    "kyaml",
    "name",
    "template",
    "templatefile",
    "yaml",
];

/// The `status` a typed object of this kind serializes when empty (Go structs that are
/// not pointers print as `{}`), or None for kinds without status.
fn empty_status(kind: Kind) -> Option<Value> {
    match kind {
        Kind::Service | Kind::Ingress => Some(json!({"loadBalancer": {}})),
        // PodDisruptionBudgetStatus's counters are not omitempty.
        Kind::PodDisruptionBudget => Some(json!({
            "currentHealthy": 0, "desiredHealthy": 0, "disruptionsAllowed": 0, "expectedPods": 0
        })),
        Kind::Pod
        | Kind::Deployment
        | Kind::Job
        | Kind::CronJob
        | Kind::Namespace
        | Kind::ResourceQuota
        | Kind::ReplicaSet
        | Kind::StatefulSet
        | Kind::DaemonSet => Some(json!({})),
        _ => None,
    }
}

/// The generated object as kubectl holds it before sending: `apiVersion`, `kind`, the
/// namespace only when `-n` was given (kubectl's EnforceNamespace), the empty status.
pub fn typed(k: &Kubectl, kind: Kind, mut value: Value) -> Value {
    let info = kind.info();
    if let Some(m) = value.as_object_mut() {
        m.insert("apiVersion".into(), json!(info.api_version()));
        m.insert("kind".into(), json!(info.kind));
        if let Some(st) = empty_status(kind) {
            m.entry("status").or_insert(st);
        }
    }
    if info.namespaced && k.flags.has("namespace") {
        value["metadata"]["namespace"] = json!(k.namespace());
    }
    value
}

/// Sends (or, with `--dry-run=client`, keeps) the generated object and prints it as
/// kubectl does. Returns the stored object (None for a client dry run) or the exit code.
pub async fn send(
    k: &Kubectl,
    emit: &Emit,
    kind: Kind,
    value: Value,
) -> Result<Option<Arc<Object>>, i32> {
    send_as(k, emit, kind, value, "created").await
}

/// [`send`] with another verb in the success line (`service/x exposed`).
pub async fn send_as(
    k: &Kubectl,
    emit: &Emit,
    kind: Kind,
    value: Value,
    verb: &str,
) -> Result<Option<Arc<Object>>, i32> {
    let value = typed(k, kind, value);
    let name = value
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    if emit.dry == DryRun::Client {
        print_value(k, emit, kind, &name, &value, verb)?;
        return Ok(None);
    }
    let ns = if kind.info().namespaced {
        k.namespace()
    } else {
        String::new()
    };
    let mut body = value;
    if let Some(m) = body.as_object_mut() {
        m.remove("status");
    }
    let mut req = ApiRequest::new(Verb::Create, kind, &ns, "").with_body(Body::Raw(body));
    req.options.dry_run = emit.dry == DryRun::Server;
    let obj = match k.sys.api(req).await {
        Ok(ApiResult::Object(o)) => o,
        Ok(_) => return Err(1),
        // `create priorityclass` wraps the server's error (CheckErr then prints it as a
        // plain error, not as "Error from server").
        Err(s) if kind == Kind::PriorityClass => {
            return Err(k.error(&format!("failed to create priorityclass: {}", s.message)))
        }
        Err(s) => return Err(k.status_error(&s)),
    };
    match &emit.format {
        None => k.sys.out(&format!(
            "{} {verb}{}\n",
            kind_name(kind, &name),
            if emit.dry == DryRun::Server {
                " (server dry run)"
            } else {
                ""
            }
        )),
        Some(OutputFormat::Name) => k.sys.out(&format!("{}\n", kind_name(kind, &name))),
        Some(f) => match print_objects(std::slice::from_ref(&obj), f, true, false) {
            Ok(s) => k.sys.out(&s),
            Err(e) => return Err(k.error(&e)),
        },
    }
    Ok(Some(obj))
}

/// Prints a client-side object: the success line, its name, or the object itself.
fn print_value(
    k: &Kubectl,
    emit: &Emit,
    kind: Kind,
    name: &str,
    value: &Value,
    verb: &str,
) -> Result<(), i32> {
    let text = match &emit.format {
        None => format!("{} {verb} (dry run)\n", kind_name(kind, name)),
        Some(OutputFormat::Name) => format!("{}\n", kind_name(kind, name)),
        Some(OutputFormat::Yaml) => to_yaml(value),
        Some(OutputFormat::Json) => crate::cmd::typed_order::to_json(value),
        Some(f) => {
            // jsonpath and custom columns read the object the same way for both.
            let obj = match crate::apiserver::write::decode_value(kind, value) {
                Ok(o) => Arc::new(o),
                Err(s) => return Err(k.status_error(&s)),
            };
            print_objects(&[obj], f, true, false).map_err(|e| k.error(&e))?
        }
    };
    k.sys.out(&text);
    Ok(())
}
