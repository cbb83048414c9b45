//! `kubectl get` tables: the apiserver's column definitions and cells per kind
//! (`pkg/printers/internalversion/printers.go`) and kubectl's decoration and layout
//! (`cli-runtime/pkg/printers/tableprinter.go`, `kubectl/pkg/cmd/get/get.go`).

pub(crate) mod autoscaling;
mod batch;
mod cluster;
mod custom;
pub(crate) mod ingress;
mod networking;
mod pods;
mod policy;
mod workloads;

pub use cluster::{node_roles, service_external_ip, service_ports};
pub use pods::pod_status;

use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, Time as K8sTime};

use super::output::kind_prefix;
use super::tabwriter::{TabConfig, TabWriter};
use crate::object::{Kind, Object};
use crate::time::{human_duration, Time, EPOCH_UNIX_MS};

/// The flags of `kubectl get` that shape a table.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PrintOptions {
    /// `-o wide`: also print priority columns.
    pub wide: bool,
    /// `-A/--all-namespaces`: prepend NAMESPACE (namespaced kinds only).
    pub all_namespaces: bool,
    /// `--show-labels`: append LABELS.
    pub show_labels: bool,
    /// `--no-headers`.
    pub no_headers: bool,
    /// Prefix names with `kind.group/`, as kubectl does when one `get` spans several kinds.
    pub with_kind_prefix: bool,
    /// `-L key`: one column per label key, headed by the key's last path segment.
    pub label_columns: Vec<String>,
}

/// One column definition of a server-side table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Column {
    /// Name as the server defines it (`Up-to-date`); kubectl prints it uppercased.
    pub name: &'static str,
    /// 0 for default columns, 1 for `-o wide` only.
    pub priority: u8,
}

/// A table as the apiserver would return it, before kubectl decorates it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Table {
    /// Column definitions.
    pub columns: Vec<Column>,
    /// One row of cells per object, in the objects' order.
    pub rows: Vec<Vec<String>>,
}

pub(crate) const fn col(name: &'static str) -> Column {
    Column { name, priority: 0 }
}

pub(crate) const fn wide(name: &'static str) -> Column {
    Column { name, priority: 1 }
}

/// The server-side table for objects of one kind, evaluated at virtual time `now`.
pub fn table(kind: Kind, objects: &[Arc<Object>], now: Time) -> Table {
    let custom = matches!(kind, Kind::Custom(_));
    let columns = if custom {
        custom::columns(kind)
    } else {
        columns(kind)
    };
    let rows = objects
        .iter()
        .filter(|o| o.kind() == kind)
        .map(|o| {
            if custom {
                custom::row(kind, o, now)
            } else {
                row(o, now)
            }
        })
        .collect();
    Table { columns, rows }
}

fn columns(kind: Kind) -> Vec<Column> {
    match kind {
        Kind::Pod => pods::COLUMNS.to_vec(),
        Kind::Deployment | Kind::ReplicaSet | Kind::DaemonSet | Kind::StatefulSet | Kind::Job => {
            workloads::columns(kind)
        }
        Kind::PodDisruptionBudget => policy::columns(),
        Kind::NetworkPolicy => networking::columns(),
        Kind::HorizontalPodAutoscaler => autoscaling::columns(),
        Kind::CronJob => batch::columns(),
        Kind::Ingress | Kind::IngressClass => ingress::columns(kind),
        _ => cluster::columns(kind),
    }
}

fn row(obj: &Object, now: Time) -> Vec<String> {
    match obj {
        Object::Pod(p) => pods::row(p, now),
        Object::Deployment(_)
        | Object::ReplicaSet(_)
        | Object::DaemonSet(_)
        | Object::StatefulSet(_)
        | Object::Job(_) => workloads::row(obj, now),
        Object::PodDisruptionBudget(p) => policy::row(p, now),
        Object::NetworkPolicy(p) => networking::row(p, now),
        Object::HorizontalPodAutoscaler(h) => autoscaling::row(h, now),
        Object::CronJob(c) => batch::row(c, now),
        Object::Ingress(i) => ingress::ingress_row(i, now),
        Object::IngressClass(i) => ingress::ingress_class_row(i, now),
        _ => cluster::row(obj, now),
    }
}

/// `kubectl get` for objects of one kind: the table decorated and aligned as kubectl prints
/// it. An empty list prints nothing (see [`no_resources_message`]). Events are listed in the
/// apiserver's order (namespace, then name), which is what `kubectl get events` shows.
pub fn print_table(kind: Kind, objects: &[Arc<Object>], opts: &PrintOptions, now: Time) -> String {
    let mut w = TabWriter::new(TabConfig::KUBECTL_GET);
    write_table(&mut w, kind, objects, opts, now);
    w.finish()
}

/// `kubectl get a,b,…`: one table per kind in the given order, separated by a blank line,
/// each with its own column widths; names carry their kind prefix.
pub fn print_tables(groups: &[(Kind, Vec<Arc<Object>>)], opts: &PrintOptions, now: Time) -> String {
    let mut opts = opts.clone();
    // `multipleGVKsRequested` looks at what came back, not at what was asked for.
    let kinds_found = groups
        .iter()
        .filter(|(k, objs)| objs.iter().any(|o| o.kind() == *k))
        .count();
    opts.with_kind_prefix = opts.with_kind_prefix || kinds_found > 1;
    let mut out = String::new();
    for (kind, objects) in groups {
        let text = print_table(*kind, objects, &opts, now);
        if text.is_empty() {
            continue;
        }
        if !out.is_empty() && !opts.no_headers {
            out.push('\n');
        }
        out.push_str(&text);
    }
    out
}

/// What kubectl prints on stderr when a `get` finds nothing: `No resources found in NS
/// namespace.` for namespaced requests, `No resources found` otherwise (cluster-scoped kinds
/// or `-A`). Ends with a newline.
pub fn no_resources_message(namespace: Option<&str>) -> String {
    match namespace {
        Some(ns) => format!("No resources found in {ns} namespace.\n"),
        None => "No resources found\n".to_string(),
    }
}

fn write_table(
    w: &mut TabWriter,
    kind: Kind,
    objects: &[Arc<Object>],
    opts: &PrintOptions,
    now: Time,
) {
    let mut objects: Vec<Arc<Object>> = objects
        .iter()
        .filter(|o| o.kind() == kind)
        .cloned()
        .collect();
    if kind == Kind::Event {
        objects.sort_by(|a, b| (a.namespace(), a.name()).cmp(&(b.namespace(), b.name())));
    }
    let t = table(kind, &objects, now);
    if t.rows.is_empty() {
        return;
    }
    let with_namespace = opts.all_namespaces && kind.info().namespaced;
    let visible: Vec<usize> = (0..t.columns.len())
        .filter(|&i| opts.wide || t.columns[i].priority == 0)
        .collect();
    let name_col = t.columns.iter().position(|c| c.name == "Name");

    let mut headers: Vec<String> = Vec::new();
    if with_namespace {
        headers.push("NAMESPACE".into());
    }
    headers.extend(visible.iter().map(|&i| t.columns[i].name.to_uppercase()));
    headers.extend(
        opts.label_columns
            .iter()
            .map(|l| l.rsplit('/').next().unwrap_or(l).to_uppercase()),
    );
    if opts.show_labels {
        headers.push("LABELS".into());
    }

    let mut rows: Vec<Vec<String>> = Vec::new();
    for (obj, cells) in objects.iter().zip(t.rows) {
        let mut out = Vec::new();
        if with_namespace {
            out.push(obj.namespace().to_string());
        }
        for &i in &visible {
            let mut cell = cells[i].clone();
            if opts.with_kind_prefix && Some(i) == name_col {
                cell = format!("{}/{}", kind_prefix(kind), cell);
            }
            out.push(cell);
        }
        let labels = obj.meta().labels.clone().unwrap_or_default();
        for key in &opts.label_columns {
            out.push(labels.get(key).cloned().unwrap_or_default());
        }
        if opts.show_labels {
            out.push(format_labels(&labels));
        }
        rows.push(out);
    }

    // kubectl pads the header (or, without headers, the first row) to each column's widest
    // cell counted in bytes, which only matters for non-ASCII cells.
    let ncols = headers.len();
    let mut max = vec![0; ncols];
    for r in &rows {
        for (i, c) in r.iter().enumerate() {
            max[i] = max[i].max(sanitize(c).len());
        }
    }
    let pad_line = |cells: &[String]| -> String {
        let mut line = String::new();
        for (i, c) in cells.iter().enumerate() {
            if i > 0 {
                line.push('\t');
            }
            let c = sanitize(c);
            line.push_str(&c);
            if i + 1 != ncols {
                line.push_str(&" ".repeat(max[i].saturating_sub(c.len())));
            }
        }
        line.push('\n');
        line
    };
    if !opts.no_headers {
        w.write_str(&pad_line(&headers));
    }
    for (ri, r) in rows.iter().enumerate() {
        if ri == 0 && opts.no_headers {
            w.write_str(&pad_line(r));
            continue;
        }
        let line: Vec<String> = r.iter().map(|c| sanitize(c)).collect();
        w.write_str(&line.join("\t"));
        w.write_str("\n");
    }
}

/// Cells are cut at the first line break and marked `...`, as kubectl does.
fn sanitize(cell: &str) -> String {
    match cell.find(['\n', '\r', '\u{c}']) {
        Some(p) => format!("{}...", &cell[..p]),
        None => cell.to_string(),
    }
}

/// `labels.FormatLabels`: `k=v,k2=v2` sorted by key, `<none>` when empty.
pub fn format_labels(labels: &BTreeMap<String, String>) -> String {
    if labels.is_empty() {
        return "<none>".to_string();
    }
    labels
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(",")
}

/// `labels.Selector.String()` of a label selector: requirements sorted by key; empty for
/// "everything". `None` is "nothing", which also prints empty.
pub fn selector_string(sel: Option<&LabelSelector>) -> String {
    let Some(sel) = sel else {
        return String::new();
    };
    let mut reqs: Vec<(String, String)> = Vec::new();
    for (k, v) in sel.match_labels.iter().flatten() {
        reqs.push((k.clone(), format!("{k}={v}")));
    }
    for e in sel.match_expressions.iter().flatten() {
        let mut values = e.values.clone().unwrap_or_default();
        values.sort();
        let s = match e.operator.as_str() {
            "In" => format!("{} in ({})", e.key, values.join(",")),
            "NotIn" => format!("{} notin ({})", e.key, values.join(",")),
            "Exists" => e.key.clone(),
            "DoesNotExist" => format!("!{}", e.key),
            _ => return "<error>".to_string(),
        };
        reqs.push((e.key.clone(), s));
    }
    reqs.sort_by(|a, b| a.0.cmp(&b.0));
    reqs.into_iter().map(|r| r.1).collect::<Vec<_>>().join(",")
}

/// `metav1.FormatLabelSelector`: like [`selector_string`] but `<none>` when empty.
pub fn format_label_selector(sel: Option<&LabelSelector>) -> String {
    let s = selector_string(sel);
    if s.is_empty() {
        "<none>".to_string()
    } else {
        s
    }
}

/// Milliseconds from a Kubernetes timestamp to virtual `now` (negative if in the future).
pub fn since(t: &K8sTime, now: Time) -> i64 {
    now as i64 - (t.0.as_millisecond() - EPOCH_UNIX_MS)
}

/// `translateTimestampSince`: `<unknown>` for a missing timestamp, else its human age.
pub fn age(t: Option<&K8sTime>, now: Time) -> String {
    match t {
        Some(t) => human_duration(since(t, now)),
        None => "<unknown>".to_string(),
    }
}

/// The `CONTAINERS` and `IMAGES` wide cells of a pod template.
pub(crate) fn container_cells(
    spec: Option<&k8s_openapi::api::core::v1::PodSpec>,
) -> (String, String) {
    let containers = spec.map(|s| s.containers.as_slice()).unwrap_or(&[]);
    let names: Vec<&str> = containers.iter().map(|c| c.name.as_str()).collect();
    let images: Vec<&str> = containers
        .iter()
        .map(|c| c.image.as_deref().unwrap_or(""))
        .collect();
    (names.join(","), images.join(","))
}

#[cfg(test)]
#[path = "printers_tests.rs"]
mod tests;
