//! `kubectl describe` (`kubectl/pkg/describe/describe.go`): a prefix writer over a tabwriter
//! (`0, 8, 2, ' '`), so "Key:\tvalue" lines align per run of consecutive tabbed lines.

mod apps;
mod autoscaling;
mod batch;
mod core;
mod generic;
mod ingress;
mod networking;
mod node_pods;
mod pod;
mod policy;
mod workloads;

use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_openapi::api::core::v1::{Event, Toleration};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time as K8sTime};

use super::printers::age;
use super::tabwriter::{TabConfig, TabWriter};
use crate::object::Object;
use crate::time::{human_duration, Time, EPOCH_UNIX_MS};

/// Objects a describer looks up besides the described one.
#[derive(Clone, Debug, Default)]
pub struct DescribeContext {
    /// Events (`Kind::Event`); those about the described object are picked by involvedObject.
    pub events: Vec<Arc<Object>>,
    /// ReplicaSets in the namespace (for a Deployment's old and new ReplicaSets).
    pub replica_sets: Vec<Arc<Object>>,
    /// Pods in scope (for a ReplicaSet's pod status line, a node's pods).
    pub pods: Vec<Arc<Object>>,
    /// Endpoints or EndpointSlices (for a Service's `Endpoints:` line).
    pub endpoints: Vec<Arc<Object>>,
    /// Services in the namespace (for an Ingress's backends).
    pub services: Vec<Arc<Object>>,
}

/// `kubectl describe` for one object. Kinds without a describer here print their metadata.
pub fn describe(obj: &Object, related: &DescribeContext, now: Time) -> String {
    let mut w = Writer::new();
    match obj {
        Object::Pod(p) => pod::describe_pod(&mut w, p, now),
        Object::Deployment(d) => workloads::describe_deployment(&mut w, d, related),
        Object::ReplicaSet(rs) => workloads::describe_replica_set(&mut w, rs, related),
        Object::Service(s) => workloads::describe_service(&mut w, s, related),
        Object::Node(n) => workloads::describe_node(&mut w, n, related, now),
        Object::PriorityClass(pc) => describe_priority_class(&mut w, pc),
        Object::PodDisruptionBudget(p) => policy::describe_pod_disruption_budget(&mut w, p),
        Object::NetworkPolicy(p) => networking::describe_network_policy(&mut w, p),
        Object::HorizontalPodAutoscaler(h) => autoscaling::describe_hpa(&mut w, h),
        Object::Job(j) => batch::describe_job(&mut w, j),
        Object::CronJob(c) => batch::describe_cron_job(&mut w, c),
        Object::StatefulSet(s) => apps::describe_stateful_set(&mut w, s, related),
        Object::DaemonSet(d) => apps::describe_daemon_set(&mut w, d, related),
        Object::ConfigMap(c) => core::describe_config_map(&mut w, c),
        Object::Secret(s) => core::describe_secret(&mut w, s),
        Object::ResourceQuota(q) => core::describe_resource_quota(&mut w, q),
        Object::LimitRange(l) => core::describe_limit_range(&mut w, l),
        Object::PersistentVolumeClaim(c) => core::describe_pvc(&mut w, c, &related.pods),
        Object::Ingress(i) => ingress::describe_ingress(&mut w, i, related),
        Object::IngressClass(i) => ingress::describe_ingress_class(&mut w, i),
        Object::Custom(_) | Object::CustomResourceDefinition(_) => {
            generic::describe_generic(&mut w, obj)
        }
        _ => {
            let m = obj.meta();
            w.line(0, &format!("Name:\t{}", m.name.as_deref().unwrap_or("")));
            if obj.kind().info().namespaced {
                w.line(
                    0,
                    &format!("Namespace:\t{}", m.namespace.as_deref().unwrap_or("")),
                );
            }
            labels_multiline(&mut w, "", "Labels", m.labels.as_ref());
            annotations_multiline(&mut w, "Annotations", m.annotations.as_ref());
        }
    }
    // Upstream's describers for these print no events.
    if !matches!(
        obj,
        Object::Secret(_)
            | Object::ResourceQuota(_)
            | Object::LimitRange(_)
            | Object::NetworkPolicy(_)
    ) {
        describe_events(&mut w, obj, &related.events, now);
    }
    w.finish()
}

/// `describePriorityClass`: annotations on one line (`labels.FormatLabels`).
fn describe_priority_class(w: &mut Writer, pc: &k8s_openapi::api::scheduling::v1::PriorityClass) {
    w.line(
        0,
        &format!("Name:\t{}", pc.metadata.name.as_deref().unwrap_or("")),
    );
    w.line(0, &format!("Value:\t{}", pc.value));
    w.line(
        0,
        &format!("GlobalDefault:\t{}", pc.global_default.unwrap_or(false)),
    );
    w.line(
        0,
        &format!(
            "PreemptionPolicy:\t{}",
            pc.preemption_policy.as_deref().unwrap_or("")
        ),
    );
    w.line(
        0,
        &format!("Description:\t{}", pc.description.as_deref().unwrap_or("")),
    );
    let annotations = match pc.metadata.annotations.as_ref().filter(|a| !a.is_empty()) {
        None => "<none>".to_string(),
        Some(a) => a
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(","),
    };
    w.line(0, &format!("Annotations:\t{annotations}"));
}

/// kubectl's `PrefixWriter` over a describe tabwriter.
pub(crate) struct Writer {
    tw: TabWriter,
}

impl Writer {
    fn new() -> Writer {
        Writer {
            tw: TabWriter::new(TabConfig::KUBECTL_DESCRIBE),
        }
    }

    /// Writes `text` at `level` (two spaces each), without adding a newline.
    pub(crate) fn write(&mut self, level: usize, text: &str) {
        self.tw.write_str(&"  ".repeat(level));
        self.tw.write_str(text);
    }

    /// Writes `text` and a newline at `level`.
    pub(crate) fn line(&mut self, level: usize, text: &str) {
        self.write(level, text);
        self.tw.write_str("\n");
    }

    fn flush(&mut self) {
        self.tw.flush();
    }

    fn finish(self) -> String {
        self.tw.finish()
    }
}

/// RFC 1123 with numeric zone, as describe prints instants.
pub(crate) fn rfc1123z(t: Option<&K8sTime>) -> String {
    match t {
        Some(t) => t.0.strftime("%a, %d %b %Y %H:%M:%S %z").to_string(),
        None => "Mon, 01 Jan 0001 00:00:00 +0000".to_string(),
    }
}

/// `printLabelsMultilineWithIndent`: sorted `k=v`, one per line, or `<none>`.
pub(crate) fn labels_multiline(
    w: &mut Writer,
    indent: &str,
    title: &str,
    labels: Option<&BTreeMap<String, String>>,
) {
    w.write(0, &format!("{indent}{title}:\t"));
    let labels = labels.cloned().unwrap_or_default();
    if labels.is_empty() {
        w.line(0, "<none>");
        return;
    }
    for (i, (k, v)) in labels.iter().enumerate() {
        if i != 0 {
            w.write(0, &format!("{indent}\t"));
        }
        w.line(0, &format!("{k}={v}"));
    }
}

const MAX_ANNOTATION_LEN: usize = 140;

/// `printAnnotationsMultilineWithIndent`: sorted `k: v`, long or multi-line values folded
/// below their key, `last-applied-configuration` skipped.
pub(crate) fn annotations_multiline_indent(
    w: &mut Writer,
    indent: &str,
    title: &str,
    annotations: Option<&BTreeMap<String, String>>,
) {
    w.write(0, &format!("{indent}{title}:\t"));
    let all = annotations.cloned().unwrap_or_default();
    let keys: Vec<&String> = all
        .keys()
        .filter(|k| k.as_str() != "kubectl.kubernetes.io/last-applied-configuration")
        .collect();
    if keys.is_empty() {
        w.line(0, "<none>");
        return;
    }
    for (i, k) in keys.into_iter().enumerate() {
        if i != 0 {
            w.write(0, &format!("{indent}\t"));
        }
        let value = all[k].strip_suffix('\n').unwrap_or(&all[k]);
        if value.len() + k.len() + 2 > MAX_ANNOTATION_LEN || value.contains('\n') {
            w.line(0, &format!("{k}:"));
            for s in value.split('\n') {
                let short = if s.len() > MAX_ANNOTATION_LEN - 2 {
                    let mut end = MAX_ANNOTATION_LEN - 2;
                    while !s.is_char_boundary(end) {
                        end -= 1;
                    }
                    format!("{}...", &s[..end])
                } else {
                    s.to_string()
                };
                w.line(0, &format!("{indent}\t  {short}"));
            }
        } else {
            w.line(0, &format!("{k}: {value}"));
        }
    }
}

pub(crate) fn annotations_multiline(
    w: &mut Writer,
    title: &str,
    annotations: Option<&BTreeMap<String, String>>,
) {
    annotations_multiline_indent(w, "", title, annotations);
}

/// `printTolerationsMultilineWithIndent`.
pub(crate) fn tolerations_multiline(
    w: &mut Writer,
    indent: &str,
    title: &str,
    tolerations: &[Toleration],
) {
    w.write(0, &format!("{indent}{title}:\t"));
    if tolerations.is_empty() {
        w.line(0, "<none>");
        return;
    }
    let mut tolerations = tolerations.to_vec();
    tolerations.sort_by(|a, b| a.key.cmp(&b.key));
    for (i, t) in tolerations.iter().enumerate() {
        if i != 0 {
            w.write(0, &format!("{indent}\t"));
        }
        let key = t.key.clone().unwrap_or_default();
        let value = t.value.clone().unwrap_or_default();
        let effect = t.effect.clone().unwrap_or_default();
        let mut s = key.clone();
        if !value.is_empty() {
            s += &format!("={value}");
        }
        if !effect.is_empty() {
            s += &format!(":{effect}");
        }
        if t.operator.as_deref() == Some("Exists") && value.is_empty() {
            s += if !key.is_empty() || !effect.is_empty() {
                " op=Exists"
            } else {
                "op=Exists"
            };
        }
        if let Some(secs) = t.toleration_seconds {
            s += &format!(" for {secs}s");
        }
        w.line(0, &s);
    }
}

/// `printController`: `Kind/name` of the controlling owner, if any.
pub(crate) fn controlled_by(meta: &ObjectMeta) -> Option<String> {
    meta.owner_references
        .iter()
        .flatten()
        .find(|r| r.controller == Some(true))
        .map(|r| format!("{}/{}", r.kind, r.name))
}

fn micro_age(t: &k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime, now: Time) -> String {
    human_duration(now as i64 - (t.0.as_millisecond() - EPOCH_UNIX_MS))
}

fn event_sort_key(e: &Event) -> i64 {
    e.last_timestamp
        .as_ref()
        .map(|t| t.0.as_millisecond())
        .or_else(|| e.event_time.as_ref().map(|t| t.0.as_millisecond()))
        .unwrap_or(i64::MIN)
}

/// One line of `kubectl describe`'s Events table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EventRow {
    /// `Normal` or `Warning`.
    pub type_: String,
    /// The reason (`ScalingReplicaSet`).
    pub reason: String,
    /// The Age column (`12s`, `3s (x2 over 10s)`).
    pub age: String,
    /// The From column (`deployment-controller`).
    pub from: String,
    /// The message, trimmed.
    pub message: String,
}

/// The events about `obj` as `kubectl describe` lists them, oldest last-seen first.
pub fn event_rows(obj: &Object, events: &[Arc<Object>], now: Time) -> Vec<EventRow> {
    let meta = obj.meta();
    let mut mine: Vec<&Event> = events
        .iter()
        .filter_map(|e| match e.as_ref() {
            Object::Event(ev) => Some(&**ev),
            _ => None,
        })
        .filter(|e| {
            let io = &e.involved_object;
            io.name.as_deref() == meta.name.as_deref()
                && io.namespace.as_deref().unwrap_or("") == meta.namespace.as_deref().unwrap_or("")
                && io
                    .kind
                    .as_deref()
                    .is_none_or(|k| k == obj.kind().info().kind)
                && (io.uid.is_none() || meta.uid.is_none() || io.uid == meta.uid)
        })
        .collect();
    mine.sort_by_key(|e| event_sort_key(e));
    mine.into_iter().map(|e| event_row(e, now)).collect()
}

fn event_row(e: &Event, now: Time) -> EventRow {
    let first = match &e.event_time {
        Some(t) => micro_age(t, now),
        None => age(e.first_timestamp.as_ref(), now),
    };
    let count = e.count.unwrap_or(0);
    let interval = if let Some(series) = &e.series {
        let last = series
            .last_observed_time
            .as_ref()
            .map_or("<unknown>".into(), |t| micro_age(t, now));
        format!("{last} (x{} over {first})", series.count.unwrap_or(0))
    } else if count > 1 {
        format!(
            "{} (x{count} over {first})",
            age(e.last_timestamp.as_ref(), now)
        )
    } else {
        first
    };
    let source = e
        .source
        .as_ref()
        .and_then(|s| s.component.clone())
        .filter(|c| !c.is_empty())
        .or_else(|| e.reporting_component.clone())
        .unwrap_or_default();
    EventRow {
        type_: e.type_.clone().unwrap_or_default(),
        reason: e.reason.clone().unwrap_or_default(),
        age: interval,
        from: source,
        message: e.message.as_deref().unwrap_or("").trim().to_string(),
    }
}

/// `DescribeEvents`: the events about `obj`, oldest last-seen first, or `Events: <none>`.
fn describe_events(w: &mut Writer, obj: &Object, events: &[Arc<Object>], now: Time) {
    let rows = event_rows(obj, events, now);
    if rows.is_empty() {
        w.line(0, "Events:\t<none>");
        return;
    }
    w.flush();
    w.line(0, "Events:");
    w.line(1, "Type\tReason\tAge\tFrom\tMessage");
    w.line(1, "----\t------\t----\t----\t-------");
    for r in rows {
        w.line(
            1,
            &format!(
                "{}\t{}\t{}\t{}\t{}",
                r.type_, r.reason, r.age, r.from, r.message
            ),
        );
    }
}

#[cfg(test)]
#[path = "describe_tests.rs"]
mod tests;
