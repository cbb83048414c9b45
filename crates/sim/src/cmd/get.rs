//! `kubectl get` (tables, -o formats, selectors, -A, -w) and `kubectl describe`.

use std::sync::Arc;

use crate::api::{ApiRequest, ApiResult, Verb, WatchEventType};
use crate::cmd::kubectl::{resolve_kind, Kubectl};
use crate::kubectl::describe::{describe as describe_object, DescribeContext};
use crate::kubectl::output::{print_objects, OutputFormat};
use crate::kubectl::printers::{no_resources_message, print_table, print_tables, PrintOptions};
use crate::object::{CustomKinds, Kind, Object};
use crate::selector::{FieldSelector, LabelSelector};

/// What `kubectl get all` expands to (the `all` category).
pub(crate) const ALL: &[Kind] = &[
    Kind::Pod,
    Kind::Service,
    Kind::DaemonSet,
    Kind::Deployment,
    Kind::ReplicaSet,
    Kind::StatefulSet,
    Kind::HorizontalPodAutoscaler,
    Kind::CronJob,
    Kind::Job,
];

/// One requested group: a kind and the names asked for (empty = list).
struct Request {
    kind: Kind,
    names: Vec<String>,
    /// The namespace a manifest names (`-f`), instead of `-n`.
    namespace: Option<String>,
}

fn parse_targets(args: &[String], custom: &CustomKinds) -> Result<Vec<Request>, String> {
    let Some(first) = args.first() else {
        return Err("You must specify the type of resource to get. Use \"kubectl api-resources\" for a complete list of supported resources.".into());
    };
    if args.iter().all(|a| a.contains('/')) {
        let mut out: Vec<Request> = Vec::new();
        for a in args {
            let (t, n) = a.split_once('/').unwrap_or((a, ""));
            let kind = resolve_kind(t, custom)?;
            match out.iter_mut().find(|r| r.kind == kind) {
                Some(r) => r.names.push(n.to_string()),
                None => out.push(Request {
                    kind,
                    names: vec![n.to_string()],
                    namespace: None,
                }),
            }
        }
        return Ok(out);
    }
    if first.contains('/') {
        return Err("there is no need to specify a resource type as a separate argument when passing arguments in resource/name form (e.g. 'kubectl get resource/<resource_name>' instead of 'kubectl get resource resource/<resource_name>'".into());
    }
    let mut kinds = Vec::new();
    for t in first.split(',').filter(|t| !t.is_empty()) {
        let in_category = custom.in_category(t);
        if t == "all" {
            kinds.extend_from_slice(ALL);
            kinds.extend(in_category);
        } else if resolve_kind(t, custom).is_err() && !in_category.is_empty() {
            kinds.extend(in_category);
        } else {
            kinds.push(resolve_kind(t, custom)?);
        }
    }
    let names: Vec<String> = args[1..].to_vec();
    if !names.is_empty() && kinds.len() > 1 {
        return Err("arguments in resource/name form must have a single resource and name".into());
    }
    Ok(kinds
        .into_iter()
        .map(|kind| Request {
            kind,
            names: names.clone(),
            namespace: None,
        })
        .collect())
}

fn list_request(k: &Kubectl, kind: Kind, all_ns: bool) -> Result<ApiRequest, String> {
    let ns = if all_ns || !kind.info().namespaced {
        String::new()
    } else {
        k.namespace()
    };
    let mut req = ApiRequest::new(Verb::List, kind, &ns, "");
    if let Some(l) = k.flags.get("selector") {
        req.options.label_selector = Some(LabelSelector::parse(l)?);
    }
    if let Some(f) = k.flags.get("field-selector") {
        req.options.field_selector = Some(FieldSelector::parse(f)?);
    }
    Ok(req)
}

/// `kubectl get`.
/// The apiserver's deprecation warning for v1 Endpoints, which kubectl prints to stderr.
fn warn_deprecated(k: &Kubectl, targets: &[Request]) {
    if targets.iter().any(|t| t.kind == Kind::Endpoints) {
        k.sys
            .err("Warning: v1 Endpoints is deprecated in v1.33+; use discovery.k8s.io/v1 EndpointSlice\n");
    }
}

pub async fn get(k: Kubectl) -> i32 {
    let format = match OutputFormat::parse(k.flags.get("output").unwrap_or("")) {
        Ok(f) => f,
        Err(e) => return k.error(&e),
    };
    let targets = if k.flags.has("filename") {
        match file_targets(&k) {
            Ok(t) => t,
            Err(code) => return code,
        }
    } else {
        match parse_targets(&k.flags.args, &k.custom) {
            Ok(t) => t,
            Err(e) => return k.error(&e),
        }
    };
    let all_ns = k.flags.bool("all-namespaces");
    let opts = PrintOptions {
        wide: format == OutputFormat::Wide,
        all_namespaces: all_ns,
        show_labels: k.flags.bool("show-labels"),
        no_headers: k.flags.bool("no-headers"),
        with_kind_prefix: k
            .flags
            .args
            .first()
            .is_some_and(|a| a.contains(',') || a == "all")
            || targets.len() > 1,
        label_columns: k
            .flags
            .all("label-columns")
            .iter()
            .flat_map(|v| v.split(',').map(str::to_string))
            .collect(),
    };
    warn_deprecated(&k, &targets);
    let (mut groups, list_rv, code) = match fetch(&k, &targets, all_ns).await {
        Ok(x) => x,
        Err(code) => return code,
    };
    if let Some(expr) = k.flags.get("sort-by") {
        for (_, objs) in groups.iter_mut() {
            if let Err(e) = crate::cmd::sort_by::sort_objects(objs, expr) {
                return k.error(&e);
            }
        }
    }
    let single = targets.len() == 1 && targets[0].names.len() == 1;
    let total: usize = groups.iter().map(|(_, o)| o.len()).sum();
    let watch = k.flags.bool("watch") || k.flags.bool("watch-only");
    // Structured formats print the empty List; only tables and names say "No resources".
    let generic = matches!(
        format,
        OutputFormat::Json | OutputFormat::Yaml | OutputFormat::JsonPath { .. }
    );
    if total == 0 && targets.iter().all(|t| t.names.is_empty()) && !watch && !generic {
        let namespaced = targets.iter().any(|t| t.kind.info().namespaced);
        let ns = k.namespace();
        let msg = no_resources_message(if namespaced && !all_ns {
            Some(ns.as_str())
        } else {
            None
        });
        k.sys.err(&msg);
        return code;
    }
    let now = k.sys.now();
    if !k.flags.bool("watch-only") {
        if format.is_table() {
            if groups.len() == 1 {
                k.sys
                    .out(&print_table(groups[0].0, &groups[0].1, &opts, now));
            } else {
                k.sys.out(&print_tables(&groups, &opts, now));
            }
        } else {
            let all: Vec<Arc<Object>> =
                groups.iter().flat_map(|(_, o)| o.iter().cloned()).collect();
            match print_objects(&all, &format, single, opts.no_headers) {
                Ok(s) => k.sys.out(&s),
                Err(e) => return k.error(&e),
            }
        }
    }
    if watch && targets.len() == 1 {
        return watch_loop(&k, targets[0].kind, all_ns, list_rv, &format, &opts).await;
    }
    code
}

type Groups = Vec<(Kind, Vec<Arc<Object>>)>;

/// Lists or gets every target: the groups to print, the list's resourceVersion (for
/// `-w`) and the exit code so far.
async fn fetch(k: &Kubectl, targets: &[Request], all_ns: bool) -> Result<(Groups, u64, i32), i32> {
    let mut code = 0;
    let mut groups: Vec<(Kind, Vec<Arc<Object>>)> = Vec::new();
    let mut list_rv = 0;
    for t in targets {
        let mut objs = Vec::new();
        if t.names.is_empty() {
            let req = match list_request(k, t.kind, all_ns) {
                Ok(r) => r,
                Err(e) => return Err(k.error(&e)),
            };
            match k.sys.api(req).await {
                Ok(ApiResult::List {
                    items,
                    resource_version,
                }) => {
                    objs = items;
                    list_rv = resource_version;
                }
                Ok(_) => {}
                Err(s) => return Err(k.status_error(&s)),
            }
        } else {
            for n in &t.names {
                let ns = match &t.namespace {
                    Some(ns) => ns.clone(),
                    None if t.kind.info().namespaced => k.namespace(),
                    None => String::new(),
                };
                match k.sys.api(ApiRequest::new(Verb::Get, t.kind, &ns, n)).await {
                    Ok(ApiResult::Object(o)) => objs.push(o),
                    Ok(_) => {}
                    Err(s) if s.is_not_found() && k.flags.bool("ignore-not-found") => {}
                    Err(s) => {
                        if s.transport != crate::api::Transport::Server {
                            return Err(k.status_error(&s));
                        }
                        code = k.status_error(&s);
                    }
                }
            }
        }
        groups.push((t.kind, objs));
    }
    Ok((groups, list_rv, code))
}

/// `get -f FILE`: the objects the manifests name, grouped by kind in file order.
fn file_targets(k: &Kubectl) -> Result<Vec<Request>, i32> {
    let files = crate::cmd::apply::manifests(k)?;
    if files.finish(k, 0) != 0 {
        return Err(1);
    }
    let mut out: Vec<Request> = Vec::new();
    for (file, m) in &files.manifests {
        let (kind, ns) = crate::cmd::apply::target(k, file, m).map_err(|e| k.error(&e))?;
        match out
            .iter_mut()
            .find(|r| r.kind == kind && r.namespace.as_deref() == Some(ns.as_str()))
        {
            Some(r) => r.names.push(m.name.clone()),
            None => out.push(Request {
                kind,
                names: vec![m.name.clone()],
                namespace: Some(ns),
            }),
        }
    }
    Ok(out)
}

async fn watch_loop(
    k: &Kubectl,
    kind: Kind,
    all_ns: bool,
    rv: u64,
    format: &OutputFormat,
    opts: &PrintOptions,
) -> i32 {
    let mut req = match list_request(k, kind, all_ns) {
        Ok(r) => r,
        Err(e) => return k.error(&e),
    };
    req.verb = Verb::Watch;
    req.options.resource_version = Some(rv);
    let id = match k.sys.watch(req).await {
        Ok(id) => id,
        Err(s) => return k.status_error(&s),
    };
    let mut row_opts = opts.clone();
    row_opts.no_headers = true;
    while let Some(ev) = k.sys.next_event(id).await {
        let Ok((t, o)) = ev.event else { break };
        if t == WatchEventType::Bookmark {
            continue;
        }
        let text = if format.is_table() {
            print_table(kind, &[o], &row_opts, k.sys.now())
        } else {
            print_objects(&[o], format, true, true).unwrap_or_default()
        };
        k.sys.out(&text);
    }
    0
}

/// `kubectl describe TYPE [NAME]`.
pub async fn describe(k: Kubectl) -> i32 {
    let targets = if k.flags.has("filename") {
        match file_targets(&k) {
            Ok(t) => t,
            Err(code) => return code,
        }
    } else {
        match parse_targets(&k.flags.args, &k.custom) {
            Ok(t) => t,
            Err(e) => return k.error(&e.replace("get", "describe")),
        }
    };
    warn_deprecated(&k, &targets);
    let ns = k.namespace();
    let all_ns = k.flags.bool("all-namespaces");
    let listing = targets.iter().all(|t| t.names.is_empty());
    let namespaced = targets.iter().any(|t| t.kind.info().namespaced);
    let mut code = 0;
    let mut first = true;
    for t in targets {
        let tns = match &t.namespace {
            Some(n) => n.clone(),
            None if t.kind.info().namespaced => ns.clone(),
            None => String::new(),
        };
        let objs: Vec<Arc<Object>> = if t.names.is_empty() {
            // `-l` and `-A` select, as in `get`.
            let req = match list_request(&k, t.kind, all_ns) {
                Ok(r) => r,
                Err(e) => return k.error(&e),
            };
            match k.sys.api(req).await {
                Ok(ApiResult::List { items, .. }) => items,
                Ok(_) => Vec::new(),
                Err(s) => return k.status_error(&s),
            }
        } else {
            let mut v = Vec::new();
            for n in &t.names {
                match k.sys.api(ApiRequest::new(Verb::Get, t.kind, &tns, n)).await {
                    Ok(ApiResult::Object(o)) => v.push(o),
                    Ok(_) => {}
                    Err(s) => code = k.status_error(&s),
                }
            }
            v
        };
        for o in objs {
            let ctx = related(&k, &o).await;
            if !first {
                k.sys.out("\n\n");
            }
            first = false;
            k.sys.out(&describe_object(&o, &ctx, k.sys.now()));
        }
    }
    if first && listing {
        k.sys.err(&no_resources_message(if namespaced && !all_ns {
            Some(ns.as_str())
        } else {
            None
        }));
    }
    code
}

async fn list(k: &Kubectl, kind: Kind, ns: &str) -> Vec<Arc<Object>> {
    match k.sys.api(ApiRequest::new(Verb::List, kind, ns, "")).await {
        Ok(ApiResult::List { items, .. }) => items,
        _ => Vec::new(),
    }
}

async fn related(k: &Kubectl, o: &Object) -> DescribeContext {
    let ns = o.namespace().to_string();
    let mut ctx = DescribeContext::default();
    let uid = o.meta().uid.clone().unwrap_or_default();
    let mut req = ApiRequest::new(Verb::List, Kind::Event, &ns, "");
    req.options.field_selector = Some(FieldSelector::eq("involvedObject.uid", &uid));
    if let Ok(ApiResult::List { items, .. }) = k.sys.api(req).await {
        ctx.events = items;
    }
    match o.kind() {
        Kind::Deployment => ctx.replica_sets = list(k, Kind::ReplicaSet, &ns).await,
        Kind::ReplicaSet | Kind::StatefulSet | Kind::DaemonSet => {
            ctx.pods = list(k, Kind::Pod, &ns).await
        }
        Kind::Node => ctx.pods = list(k, Kind::Pod, "").await,
        Kind::PersistentVolumeClaim => ctx.pods = list(k, Kind::Pod, &ns).await,
        Kind::Service => ctx.endpoints = list(k, Kind::EndpointSlice, &ns).await,
        Kind::Ingress => {
            ctx.endpoints = list(k, Kind::EndpointSlice, &ns).await;
            ctx.services = list(k, Kind::Service, &ns).await;
        }
        _ => {}
    }
    ctx
}
