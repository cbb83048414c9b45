//! Tables of workload controllers: deployments, replicasets, daemonsets, statefulsets, jobs.

use k8s_openapi::api::batch::v1::JobCondition;

use super::{
    age, col, container_cells, format_label_selector, format_labels, selector_string, wide, Column,
};
use crate::object::{Kind, Object};
use crate::time::{human_duration, Time};

pub(super) fn columns(kind: Kind) -> Vec<Column> {
    let tail = [wide("Containers"), wide("Images"), wide("Selector")];
    let mut c = match kind {
        Kind::Deployment => vec![
            col("Name"),
            col("Ready"),
            col("Up-to-date"),
            col("Available"),
            col("Age"),
        ],
        Kind::ReplicaSet => vec![
            col("Name"),
            col("Desired"),
            col("Current"),
            col("Ready"),
            col("Age"),
        ],
        Kind::DaemonSet => vec![
            col("Name"),
            col("Desired"),
            col("Current"),
            col("Ready"),
            col("Up-to-date"),
            col("Available"),
            col("Node Selector"),
            col("Age"),
        ],
        Kind::StatefulSet => {
            return vec![
                col("Name"),
                col("Ready"),
                col("Age"),
                wide("Containers"),
                wide("Images"),
            ]
        }
        Kind::Job => vec![
            col("Name"),
            col("Status"),
            col("Completions"),
            col("Duration"),
            col("Age"),
        ],
        _ => Vec::new(),
    };
    c.extend(tail);
    c
}

fn has_job_condition(conditions: &[JobCondition], t: &str) -> bool {
    conditions
        .iter()
        .find(|c| c.type_ == t)
        .is_some_and(|c| c.status == "True")
}

pub(super) fn row(obj: &Object, now: Time) -> Vec<String> {
    let name = obj.name().to_string();
    let created = age(obj.meta().creation_timestamp.as_ref(), now);
    match obj {
        Object::Deployment(d) => {
            let spec = d.spec.as_ref();
            let st = d.status.clone().unwrap_or_default();
            let (names, images) = container_cells(spec.and_then(|s| s.template.spec.as_ref()));
            vec![
                name,
                format!(
                    "{}/{}",
                    st.ready_replicas.unwrap_or(0),
                    spec.and_then(|s| s.replicas).unwrap_or(0)
                ),
                st.updated_replicas.unwrap_or(0).to_string(),
                st.available_replicas.unwrap_or(0).to_string(),
                created,
                names,
                images,
                selector_string(spec.map(|s| &s.selector)),
            ]
        }
        Object::ReplicaSet(rs) => {
            let spec = rs.spec.as_ref();
            let st = rs.status.clone().unwrap_or_default();
            let (names, images) = container_cells(
                spec.and_then(|s| s.template.as_ref())
                    .and_then(|t| t.spec.as_ref()),
            );
            vec![
                name,
                spec.and_then(|s| s.replicas).unwrap_or(0).to_string(),
                st.replicas.to_string(),
                st.ready_replicas.unwrap_or(0).to_string(),
                created,
                names,
                images,
                format_label_selector(spec.map(|s| &s.selector)),
            ]
        }
        Object::DaemonSet(ds) => {
            let spec = ds.spec.as_ref();
            let st = ds.status.clone().unwrap_or_default();
            let pod_spec = spec.and_then(|s| s.template.spec.as_ref());
            let (names, images) = container_cells(pod_spec);
            let node_selector = pod_spec
                .and_then(|p| p.node_selector.clone())
                .unwrap_or_default();
            vec![
                name,
                st.desired_number_scheduled.to_string(),
                st.current_number_scheduled.to_string(),
                st.number_ready.to_string(),
                st.updated_number_scheduled.unwrap_or(0).to_string(),
                st.number_available.unwrap_or(0).to_string(),
                format_labels(&node_selector),
                created,
                names,
                images,
                format_label_selector(spec.map(|s| &s.selector)),
            ]
        }
        Object::StatefulSet(sts) => {
            let spec = sts.spec.as_ref();
            let st = sts.status.clone().unwrap_or_default();
            let (names, images) = container_cells(spec.and_then(|s| s.template.spec.as_ref()));
            vec![
                name,
                format!(
                    "{}/{}",
                    st.ready_replicas.unwrap_or(0),
                    spec.and_then(|s| s.replicas).unwrap_or(0)
                ),
                created,
                names,
                images,
            ]
        }
        Object::Job(job) => {
            let spec = job.spec.clone().unwrap_or_default();
            let st = job.status.clone().unwrap_or_default();
            let succeeded = st.succeeded.unwrap_or(0);
            let completions = match spec.completions {
                Some(c) => format!("{succeeded}/{c}"),
                None => match spec.parallelism.unwrap_or(0) {
                    p if p > 1 => format!("{succeeded}/1 of {p}"),
                    _ => format!("{succeeded}/1"),
                },
            };
            let duration = match (&st.start_time, &st.completion_time) {
                (None, _) => String::new(),
                (Some(s), None) => human_duration(super::since(s, now)),
                (Some(s), Some(c)) => human_duration(c.0.as_millisecond() - s.0.as_millisecond()),
            };
            let conds = st.conditions.as_deref().unwrap_or(&[]);
            let status = if has_job_condition(conds, "Complete") {
                "Complete"
            } else if has_job_condition(conds, "Failed") {
                "Failed"
            } else if job.metadata.deletion_timestamp.is_some() {
                "Terminating"
            } else if has_job_condition(conds, "Suspended") {
                "Suspended"
            } else if has_job_condition(conds, "FailureTarget") {
                "FailureTarget"
            } else if has_job_condition(conds, "SuccessCriteriaMet") {
                "SuccessCriteriaMet"
            } else {
                "Running"
            };
            let (names, images) = container_cells(spec.template.spec.as_ref());
            vec![
                name,
                status.to_string(),
                completions,
                duration,
                created,
                names,
                images,
                format_label_selector(spec.selector.as_ref()),
            ]
        }
        _ => Vec::new(),
    }
}
