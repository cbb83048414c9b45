//! `kubectl apply|create|replace|delete`: manifests from files, client-side apply with the
//! last-applied-configuration three-way merge, and deletion with cascade and wait.

use serde_json::{Map, Value};

use crate::api::{ApiRequest, ApiResult, Body, PatchType, Propagation, Status, StatusReason, Verb};
use crate::cluster::{gateway_api, ingress_nginx};
use crate::cmd::generate::DryRun;
use crate::cmd::kubectl::{kind_name, kind_quoted, resolve_kind, Kubectl};
use crate::manifest::{parse_manifest_stream, Manifest};
use crate::object::Kind;
use crate::selector::LabelSelector;

/// The annotation client-side apply keeps the applied configuration in.
pub const LAST_APPLIED: &str = "kubectl.kubernetes.io/last-applied-configuration";

/// The manifests of every `-f` that kubectl could read, and the errors it reports after
/// acting on them (unserved kinds, a syntax error that stopped reading a file).
pub(crate) struct Files {
    pub(crate) manifests: Vec<(String, Manifest)>,
    pub(crate) errors: Vec<String>,
}

impl Files {
    /// Prints the deferred errors; returns the exit code so far.
    pub(crate) fn finish(&self, k: &Kubectl, code: i32) -> i32 {
        for e in &self.errors {
            k.sys.err(&format!("{e}\n"));
        }
        if self.errors.is_empty() {
            code
        } else {
            1
        }
    }
}

/// Reads and parses the manifests of every `-f`.
pub(crate) fn manifests(k: &Kubectl) -> Result<Files, i32> {
    let files = k.flags.all("filename");
    if files.is_empty() {
        return Err(k.error("must specify one of -f and -k"));
    }
    let mut out = Files {
        manifests: Vec::new(),
        errors: Vec::new(),
    };
    let mut paths = Vec::new();
    let mut fetched: Vec<(String, &'static str)> = Vec::new();
    for f in files {
        if ingress_nginx::is_url(&f) {
            // No network: the URLs of the add-ons kubeloop ships stand for their manifests.
            match ingress_nginx::manifest_for_url(&f).or_else(|| gateway_api::manifest_for_url(&f))
            {
                Some(text) => fetched.push((f.clone(), text)),
                None => {
                    k.sys.err(&format!("{}\n", ingress_nginx::fetch_error(&f)));
                    return Err(1);
                }
            }
            paths.push(f);
            continue;
        }
        if k.sys.files.contains_key(&f) {
            paths.push(f);
            continue;
        }
        match directory(k, &f) {
            Some(found) if found.is_empty() => {
                return Err(k.error(&format!(
                    "error reading [{f}]: recognized file extensions are [.json .yaml .yml]"
                )))
            }
            Some(found) => paths.extend(found),
            None => return Err(k.error(&format!("the path \"{f}\" does not exist"))),
        }
    }
    for f in paths {
        let remote = fetched.iter().find(|(u, _)| *u == f).map(|(_, t)| *t);
        let Some(text) = remote.or_else(|| k.sys.files.get(&f).map(String::as_str)) else {
            continue;
        };
        let mut stream = parse_manifest_stream(text, &f);
        stream.resolve_custom(&k.custom);
        out.manifests.extend(
            stream
                .manifests
                .into_iter()
                .filter(|m| m.kind.is_some())
                .map(|m| (f.clone(), m)),
        );
        out.errors
            .extend(stream.errors.iter().map(|e| e.to_string()));
    }
    Ok(out)
}

/// The manifests of directory `dir` (`.`, `dir`, `dir/`) in name order: its `.yaml`,
/// `.yml` and `.json` files, and with `-R` those of its subdirectories. None when no
/// file lives under it.
fn directory(k: &Kubectl, dir: &str) -> Option<Vec<String>> {
    let prefix = match dir.trim_end_matches('/') {
        "." | "" => String::new(),
        d => format!("{}/", d.trim_start_matches("./")),
    };
    let recursive = k.flags.bool("recursive");
    let under: Vec<&String> = k
        .sys
        .files
        .keys()
        .filter(|f| f.starts_with(&prefix))
        .collect();
    if under.is_empty() {
        return None;
    }
    Some(
        under
            .into_iter()
            .filter(|f| recursive || !f[prefix.len()..].contains('/'))
            .filter(|f| [".yaml", ".yml", ".json"].iter().any(|e| f.ends_with(e)))
            .cloned()
            .collect(),
    )
}

/// The kind and namespace of a manifest, or kubectl's error.
pub(crate) fn target(k: &Kubectl, _file: &str, m: &Manifest) -> Result<(Kind, String), String> {
    let Some(kind) = m.kind else {
        return Err(format!(
            "no matches for kind \"{}\" in version \"{}\"",
            m.kind_name, m.api_version
        ));
    };
    if !kind.info().namespaced {
        return Ok((kind, String::new()));
    }
    let flag_ns = k.flags.get("namespace");
    match (m.namespace.as_str(), flag_ns) {
        (ns, Some(f)) if !ns.is_empty() && ns != f => Err(format!(
            "the namespace from the provided object \"{ns}\" does not match the namespace \"{f}\". You must pass '--namespace={ns}' to perform this operation."
        )),
        ("", _) => Ok((kind, k.namespace())),
        (ns, _) => Ok((kind, ns.to_string())),
    }
}

/// Wraps a server error with the file it came from, as kubectl does (Invalid errors keep
/// their own format).
pub(crate) fn file_error(k: &Kubectl, s: Status, verb: &str, file: &str) -> i32 {
    let mut s = s;
    if s.transport == crate::api::Transport::Server && s.reason != StatusReason::Invalid {
        s.message = format!("error when {verb} \"{file}\": {}", s.message);
    }
    k.status_error(&s)
}

pub(crate) fn with_last_applied(v: &Value) -> Value {
    let mut applied = v.clone();
    // The annotation holds the configuration without itself.
    if let Some(a) = applied
        .pointer_mut("/metadata/annotations")
        .and_then(Value::as_object_mut)
    {
        a.remove(LAST_APPLIED);
        if a.is_empty() {
            if let Some(m) = applied
                .pointer_mut("/metadata")
                .and_then(Value::as_object_mut)
            {
                m.remove("annotations");
            }
        }
    }
    let text = format!("{}\n", serde_json::to_string(&applied).unwrap_or_default());
    let mut out = v.clone();
    let meta = out.as_object_mut().map(|o| {
        o.entry("metadata")
            .or_insert_with(|| Value::Object(Map::new()))
    });
    if let Some(Value::Object(m)) = meta {
        let ann = m
            .entry("annotations")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(a) = ann {
            a.insert(LAST_APPLIED.into(), Value::String(text));
        }
    }
    out
}

/// The merge key of list field `field` when every element has it (else the list is
/// replaced whole, as JSON merge patch would).
fn list_key(field: &str, modified: &[Value], current: &[Value]) -> Option<&'static str> {
    let key = crate::apiserver::patch::merge_key(field, modified.first().or(current.first()))?;
    modified
        .iter()
        .chain(current)
        .all(|e| e.get(key).is_some())
        .then_some(key)
}

/// The patch `kubectl apply` sends: a strategic merge patch for the built-in kinds, a JSON
/// merge patch for custom objects (their schemas carry no merge keys).
pub(crate) fn patch_type(kind: Kind) -> PatchType {
    if matches!(kind, Kind::Custom(_)) {
        PatchType::Merge
    } else {
        PatchType::StrategicMerge
    }
}

/// Client-side apply's three-way merge (a strategic merge patch): changes from `modified` that differ from `current`,
/// and deletions (null) of fields `original` had that `modified` dropped.
pub fn three_way(original: Option<&Value>, modified: &Value, current: &Value) -> Value {
    merge_three_way(original, modified, current, true)
}

/// [`three_way`] for `kind`: custom objects get a JSON merge patch (lists replaced whole).
pub(crate) fn three_way_for(
    kind: Kind,
    original: Option<&Value>,
    modified: &Value,
    current: &Value,
) -> Value {
    merge_three_way(
        original,
        modified,
        current,
        !matches!(kind, Kind::Custom(_)),
    )
}

fn merge_three_way(
    original: Option<&Value>,
    modified: &Value,
    current: &Value,
    keyed: bool,
) -> Value {
    let mut patch = Map::new();
    if let Value::Object(m) = modified {
        for (key, mv) in m {
            let cv = current.get(key).unwrap_or(&Value::Null);
            let ov = original.and_then(|o| o.get(key));
            match (mv, cv) {
                (Value::Object(_), Value::Object(_)) => {
                    let sub = merge_three_way(ov, mv, cv, keyed);
                    if sub.as_object().is_some_and(|s| !s.is_empty()) {
                        patch.insert(key.clone(), sub);
                    }
                }
                (Value::Array(ml), Value::Array(cl))
                    if keyed && list_key(key, ml, cl).is_some() =>
                {
                    let mk = list_key(key, ml, cl).unwrap_or("name");
                    if let Some(sub) = keyed_list_patch(mk, ov, ml, cl) {
                        patch.insert(key.clone(), sub);
                    }
                }
                _ if !subset(mv, cv) => {
                    patch.insert(key.clone(), mv.clone());
                }
                // A JSON merge patch replaces a list whole: one the file changed since
                // the last apply is sent even when the live list (server defaults kept)
                // already holds all of it — a field dropped from an element goes.
                (Value::Array(_), _) if !keyed && ov.is_some_and(|o| o != mv) => {
                    patch.insert(key.clone(), mv.clone());
                }
                _ => {}
            }
        }
    }
    if let Some(Value::Object(o)) = original {
        for key in o.keys() {
            if modified.get(key).is_none() && current.get(key).is_some() {
                patch.insert(key.clone(), Value::Null);
            }
        }
    }
    Value::Object(patch)
}

/// Whether every field of `a` is present with the same value in `b` (arrays element-wise),
/// so server-side defaults in `b` do not count as differences.
fn subset(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => x
            .iter()
            .all(|(k, v)| y.get(k).is_some_and(|w| subset(v, w))),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(v, w)| subset(v, w))
        }
        // `1` in the file and a float field's stored `1.0` are the same number.
        (Value::Number(x), Value::Number(y)) => x == y || x.as_f64() == y.as_f64(),
        _ => a == b,
    }
}

/// A keyed list's part of a strategic merge patch (lists the built-in types merge by a
/// key: containers and env by `name`, volumeMounts by `mountPath`, …): each element of
/// `modified` that differs from its live twin (by key) with only what differs, new
/// elements whole, and `$patch: delete` for elements `original` had and `modified`
/// dropped. Elements the server added (the service-account token's volume and mount)
/// stay. None when nothing changes.
fn keyed_list_patch(
    key: &str,
    original: Option<&Value>,
    modified: &[Value],
    current: &[Value],
) -> Option<Value> {
    let find = |list: &[Value], e: &Value| -> Option<Value> {
        list.iter().find(|v| v.get(key) == e.get(key)).cloned()
    };
    let original = original
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[]);
    let mut out = Vec::new();
    for e in modified {
        let Some(live) = find(current, e) else {
            out.push(e.clone());
            continue;
        };
        let sub = three_way(find(original, e).as_ref(), e, &live);
        if let Value::Object(mut m) = sub {
            if !m.is_empty() {
                m.insert(key.to_string(), e.get(key).cloned().unwrap_or(Value::Null));
                out.push(Value::Object(m));
            }
        }
    }
    for e in original {
        if find(modified, e).is_none() && find(current, e).is_some() {
            let mut m = Map::new();
            m.insert(key.to_string(), e.get(key).cloned().unwrap_or(Value::Null));
            m.insert("$patch".into(), Value::String("delete".into()));
            out.push(Value::Object(m));
        }
    }
    (!out.is_empty()).then_some(Value::Array(out))
}

/// `kubectl apply -f`.
pub async fn apply(k: Kubectl) -> i32 {
    let dry = match crate::cmd::generate::dry_run(&k) {
        Ok(d) => d,
        Err(c) => return c,
    };
    let files = match manifests(&k) {
        Ok(m) => m,
        Err(c) => return c,
    };
    if files.manifests.is_empty() && files.errors.is_empty() {
        // apply.go's Run: files that hold no object (empty, only comments).
        return k.error("no objects passed to apply");
    }
    let mut code = 0;
    // `--server-side`: the apiserver merges (no last-applied annotation) and kubectl
    // reports every object as `serverside-applied`.
    let ssa = k.flags.bool("server-side");
    let word = |w: &'static str| if ssa { "serverside-applied" } else { w };
    for (file, m) in files.manifests.clone() {
        let (kind, ns) = match target(&k, &file, &m) {
            Ok(t) => t,
            Err(e) => {
                code = k.error(&e);
                continue;
            }
        };
        if m.name.is_empty() {
            let generate = m.value["metadata"]["generateName"].as_str().unwrap_or("");
            if !generate.is_empty() {
                // apply.go's applyOneObject: apply needs the name to find the live object.
                code = k.error(&format!(
                    "from {generate}: cannot use generate name with apply"
                ));
                continue;
            }
        }
        let modified = if ssa {
            m.value.clone()
        } else {
            with_last_applied(&m.value)
        };
        let note = dry.suffix();
        match k
            .sys
            .api(ApiRequest::new(Verb::Get, kind, &ns, &m.name))
            .await
        {
            Err(s) if s.is_not_found() && dry == DryRun::Client => k.sys.out(&format!(
                "{} {}{note}\n",
                kind_name(kind, &m.name),
                word("created")
            )),
            Err(s) if s.is_not_found() => {
                let mut req =
                    ApiRequest::new(Verb::Create, kind, &ns, "").with_body(Body::Raw(modified));
                req.options.dry_run = dry == DryRun::Server;
                req.options.ignore_unknown_fields =
                    crate::cmd::apply_custom::ignores_unknown_fields(&k);
                match k.sys.api(req).await {
                    Ok(_) => {
                        k.sys.out(&format!(
                            "{} {}{note}\n",
                            kind_name(kind, &m.name),
                            word("created")
                        ));
                        crate::cmd::apply_custom::warn_unevaluated_rules(&k, kind, &m.value);
                    }
                    Err(s) => code = file_error(&k, s, "creating", &file),
                }
            }
            Err(s) => return file_error(&k, s, "retrieving current configuration of", &file),
            Ok(ApiResult::Object(live)) => {
                let current = live.to_value();
                let original = last_applied(&live);
                let patch = three_way_for(kind, original.as_ref(), &modified, &current);
                if patch.as_object().is_none_or(|p| p.is_empty()) {
                    k.sys.out(&format!(
                        "{} {}{note}\n",
                        kind_name(kind, &m.name),
                        word("unchanged")
                    ));
                    continue;
                }
                if dry == DryRun::Client {
                    k.sys.out(&format!(
                        "{} {}{note}\n",
                        kind_name(kind, &m.name),
                        word("configured")
                    ));
                    continue;
                }
                let mut req = ApiRequest::new(Verb::Patch, kind, &ns, &m.name)
                    .with_body(Body::Patch(crate::cmd::apply::patch_type(kind), patch));
                req.options.dry_run = dry == DryRun::Server;
                req.options.ignore_unknown_fields =
                    crate::cmd::apply_custom::ignores_unknown_fields(&k);
                match k.sys.api(req).await {
                    Ok(_) => {
                        k.sys.out(&format!(
                            "{} {}{note}\n",
                            kind_name(kind, &m.name),
                            word("configured")
                        ));
                        crate::cmd::apply_custom::warn_unevaluated_rules(&k, kind, &m.value);
                    }
                    Err(s) => code = file_error(&k, s, "patching", &file),
                }
            }
            Ok(_) => {}
        }
    }
    files.finish(&k, code)
}

/// `kubectl create -f`.
pub async fn create(k: Kubectl) -> i32 {
    write_each(k, Verb::Create).await
}

/// `kubectl replace -f`.
pub async fn replace(k: Kubectl) -> i32 {
    write_each(k, Verb::Update).await
}

/// Creates (POST) or replaces (PUT) every object of the files, as given.
async fn write_each(k: Kubectl, verb: Verb) -> i32 {
    if let Err(c) = crate::cmd::generate::dry_run(&k) {
        return c;
    }
    let files = match manifests(&k) {
        Ok(m) => m,
        Err(c) => return c,
    };
    let (doing, done) = if verb == Verb::Create {
        ("creating", "created")
    } else {
        ("replacing", "replaced")
    };
    let mut code = 0;
    for (file, m) in files.manifests.clone() {
        let (kind, ns) = match target(&k, &file, &m) {
            Ok(t) => t,
            Err(e) => {
                code = k.error(&e);
                continue;
            }
        };
        let value = if verb == Verb::Create && k.flags.bool("save-config") {
            with_last_applied(&m.value)
        } else {
            m.value.clone()
        };
        if verb == Verb::Update && k.flags.bool("force") {
            if let Err(c) =
                crate::cmd::replace::force_replace(&k, kind, &ns, &m.name, value, &file).await
            {
                code = c;
            }
            continue;
        }
        let name = if verb == Verb::Create {
            ""
        } else {
            m.name.as_str()
        };
        let dry = crate::cmd::generate::dry_run(&k).unwrap_or(DryRun::None);
        let note = dry.suffix();
        if dry == DryRun::Client {
            k.sys
                .out(&format!("{} {done}{note}\n", kind_name(kind, &m.name)));
            continue;
        }
        let mut req = ApiRequest::new(verb, kind, &ns, name).with_body(Body::Raw(value));
        req.options.dry_run = dry == DryRun::Server;
        req.options.ignore_unknown_fields = crate::cmd::apply_custom::ignores_unknown_fields(&k);
        match k.sys.api(req).await {
            Ok(ApiResult::Object(o)) => k
                .sys
                .out(&format!("{} {done}{note}\n", kind_name(kind, o.name()))),
            Ok(_) => k
                .sys
                .out(&format!("{} {done}{note}\n", kind_name(kind, &m.name))),
            Err(s) => code = file_error(&k, s, doing, &file),
        }
    }
    files.finish(&k, code)
}

fn propagation(k: &Kubectl) -> Result<Option<Propagation>, String> {
    match k.flags.get("cascade") {
        None => Ok(None),
        Some("background") | Some("true") => Ok(Some(Propagation::Background)),
        Some("foreground") => Ok(Some(Propagation::Foreground)),
        Some("orphan") | Some("false") => Ok(Some(Propagation::Orphan)),
        Some(v) => Err(format!(
            "invalid cascade value ({v}). Must be \"background\", \"foreground\", or \"orphan\""
        )),
    }
}

/// (kind, namespace, name, file) of an object to delete.
type Target = (Kind, String, String, Option<String>);

/// `TYPE[,TYPE…] NAME…|--all|-l SELECTOR`: what to delete, each kind in turn.
async fn by_type(k: &Kubectl, types: &str, names: &[String], ns: &str) -> Result<Vec<Target>, i32> {
    let mut kinds = Vec::new();
    for t in types.split(',').filter(|t| !t.is_empty()) {
        kinds.push(resolve_kind(t, &k.custom).map_err(|e| k.error(&e))?);
    }
    let select = k.flags.bool("all") || k.flags.has("selector");
    if !select && names.is_empty() {
        return Err(k.error("resource(s) were provided, but no name was specified"));
    }
    let mut targets = Vec::new();
    for kind in kinds {
        let all_namespaces = k.flags.bool("all-namespaces") && kind.info().namespaced;
        let tns = if kind.info().namespaced && !all_namespaces {
            ns.to_string()
        } else {
            String::new()
        };
        if !select {
            targets.extend(names.iter().map(|n| (kind, tns.clone(), n.clone(), None)));
            continue;
        }
        let mut req = ApiRequest::new(Verb::List, kind, &tns, "");
        if let Some(l) = k.flags.get("selector") {
            req.options.label_selector = Some(LabelSelector::parse(l).map_err(|e| k.error(&e))?);
        }
        match k.sys.api(req).await {
            // With -A each object is deleted in its own namespace.
            Ok(ApiResult::List { items, .. }) => targets.extend(
                items
                    .iter()
                    .map(|o| (kind, o.namespace().to_string(), o.name().to_string(), None)),
            ),
            Ok(_) => {}
            Err(s) => return Err(k.status_error(&s)),
        }
    }
    // DeleteResult prints this on stdout, without the namespace `get` names.
    if select && targets.is_empty() {
        k.sys.out("No resources found\n");
    }
    Ok(targets)
}

/// `kubectl delete -f FILE` or `kubectl delete TYPE NAME…|--all|-l`.
pub async fn delete(k: Kubectl) -> i32 {
    let prop = match propagation(&k) {
        Ok(p) => p,
        Err(e) => return k.error(&e),
    };
    let force = k.flags.bool("force");
    let grace: Option<i64> = match k.flags.get("grace-period").map(str::parse::<i64>) {
        None if k.flags.bool("now") => Some(1),
        None if force => Some(0),
        None => None,
        Some(Ok(g)) if g < 0 => None,
        Some(Ok(g)) => Some(if g == 0 && !force { 1 } else { g }),
        Some(Err(_)) => return k.error("invalid argument for --grace-period"),
    };
    let mut targets: Vec<Target> = Vec::new();
    let mut deferred = Files {
        manifests: Vec::new(),
        errors: Vec::new(),
    };
    if k.flags.has("filename") {
        deferred = match manifests(&k) {
            Ok(m) => m,
            Err(c) => return c,
        };
        for (file, m) in deferred.manifests.clone() {
            match target(&k, &file, &m) {
                Ok((kind, ns)) => targets.push((kind, ns, m.name.clone(), Some(file))),
                Err(e) => return k.error(&e),
            }
        }
    } else {
        let args = &k.flags.args;
        let Some(first) = args.first() else {
            return k.error("You must provide one or more resources by argument or filename.\nExample resource specifications include:\n   '-f rsrc.yaml'\n   '--filename=rsrc.json'\n   '<resource> <name>'\n   '<resource>'");
        };
        let ns = k.namespace();
        if first.contains('/') {
            for a in args {
                let (t, n) = a.split_once('/').unwrap_or((a, ""));
                match resolve_kind(t, &k.custom) {
                    Ok(kind) => targets.push((
                        kind,
                        if kind.info().namespaced {
                            ns.clone()
                        } else {
                            String::new()
                        },
                        n.to_string(),
                        None,
                    )),
                    Err(e) => return k.error(&e),
                }
            }
        } else {
            match by_type(&k, first, &args[1..], &ns).await {
                Ok(t) => targets.extend(t),
                Err(code) => return code,
            }
        }
    }
    if force && grace == Some(0) {
        k.sys.err("Warning: Immediate deletion does not wait for confirmation that the running resource has been terminated. The resource may continue to run on the cluster indefinitely.\n");
    }
    let mut code = 0;
    let mut deleted = Vec::new();
    let dry = match crate::cmd::generate::dry_run(&k) {
        Ok(d) => d,
        Err(c) => return c,
    };
    for (kind, ns, name, file) in targets {
        let mut req = ApiRequest::new(Verb::Delete, kind, &ns, &name);
        req.options.propagation = prop;
        req.options.grace_period_seconds = grace;
        req.options.dry_run = dry == DryRun::Server;
        // A client dry run only looks the object up, as kubectl's builder does.
        if dry == DryRun::Client {
            req.verb = Verb::Get;
        }
        let result = k.sys.api(req).await;
        match result {
            Ok(result) => {
                let uid = match &result {
                    ApiResult::Object(o) | ApiResult::Success(o) => o.meta().uid.clone(),
                    _ => None,
                };
                let verb = if force && grace == Some(0) {
                    "force deleted"
                } else {
                    "deleted"
                };
                let from = if ns.is_empty() {
                    String::new()
                } else {
                    format!(" from {ns} namespace")
                };
                let dry_note = dry.suffix();
                k.sys.out(&format!(
                    "{} {verb}{dry_note}{from}\n",
                    kind_quoted(kind, &name)
                ));
                if dry == DryRun::None {
                    deleted.push((kind, ns, name, uid));
                }
            }
            Err(s) if s.is_not_found() && k.flags.bool("ignore-not-found") => {}
            Err(s) => {
                code = match &file {
                    Some(f) => file_error(&k, s, "deleting", f),
                    None => k.status_error(&s),
                };
            }
        }
    }
    let code = deferred.finish(&k, code);
    let wait = k.flags.get("wait").is_none_or(|w| w != "false") && !(force && grace == Some(0));
    if wait {
        for (kind, ns, name, uid) in deleted {
            loop {
                match k
                    .sys
                    .api(ApiRequest::new(Verb::Get, kind, &ns, &name))
                    .await
                {
                    Err(s) if s.is_not_found() => break,
                    // kubectl waits for the deleted object's uid: an object a controller
                    // created again under the same name is another object.
                    Ok(ApiResult::Object(o)) if uid.is_some() && o.meta().uid != uid => break,
                    Err(s) if s.transport != crate::api::Transport::Server => {
                        return k.status_error(&s)
                    }
                    _ => k.sys.sleep(500).await,
                }
            }
        }
    }
    code
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn three_way_removes_fields_dropped_from_the_file() {
        let original =
            json!({"spec": {"replicas": 3, "paused": false}, "metadata": {"labels": {"a": "1"}}});
        let modified = json!({"spec": {"replicas": 5}, "metadata": {"labels": {"a": "1"}}});
        let current = json!({"spec": {"replicas": 3, "paused": false, "revisionHistoryLimit": 10}, "metadata": {"labels": {"a": "1"}, "uid": "x"}});
        assert_eq!(
            three_way(Some(&original), &modified, &current),
            json!({"spec": {"replicas": 5, "paused": null}})
        );
        assert_eq!(
            three_way(Some(&modified), &modified, &current.clone()),
            json!({"spec": {"replicas": 5}})
        );
    }

    #[test]
    fn three_way_matches_keyed_list_elements_as_strategic_merge_does() {
        let file = json!({"spec": {"containers": [{"name": "c", "image": "busybox",
            "volumeMounts": [{"name": "cfg", "mountPath": "/etc/config"}]}]}});
        // The server added the token's mount and defaulted fields: nothing to change.
        let live = json!({"spec": {"containers": [{"name": "c", "image": "busybox",
            "imagePullPolicy": "IfNotPresent",
            "volumeMounts": [{"name": "cfg", "mountPath": "/etc/config"},
                {"name": "kube-api-access-x", "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount"}]}]}});
        assert_eq!(three_way(Some(&file), &file, &live), json!({}));
        // A mount dropped from the file is a change; so is a new image.
        let fewer = json!({"spec": {"containers": [{"name": "c", "image": "busybox", "volumeMounts": []}]}});
        assert_eq!(
            three_way(Some(&file), &fewer, &live),
            json!({"spec": {"containers": [{"name": "c", "volumeMounts": [
                {"mountPath": "/etc/config", "$patch": "delete"}]}]}})
        );
        let newer = json!({"spec": {"containers": [{"name": "c", "image": "busybox:1.37",
            "volumeMounts": [{"name": "cfg", "mountPath": "/etc/config"}]}]}});
        assert_eq!(
            three_way(Some(&file), &newer, &live),
            json!({"spec": {"containers": [{"name": "c", "image": "busybox:1.37"}]}})
        );
    }
}

/// The configuration `kubectl apply` last applied to an object (its annotation), parsed.
pub(crate) fn last_applied(live: &crate::object::Object) -> Option<Value> {
    live.meta()
        .annotations
        .as_ref()
        .and_then(|a| a.get(LAST_APPLIED))
        .and_then(|s| serde_json::from_str(s).ok())
}
