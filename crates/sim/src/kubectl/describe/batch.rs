//! `describeJob` and `describeCronJob` (with `describeJobTemplate` and `printActiveJobs`).

use k8s_openapi::api::batch::v1::{CronJob, Job, JobSpec};

use super::workloads::describe_pod_template;
use super::{annotations_multiline, controlled_by, labels_multiline, rfc1123z, Writer};
use crate::kubectl::printers::format_label_selector;
use crate::time::human_duration;

/// `capIndexesListOrNone`: `<none>`, or the list cut at the first comma past `limit`.
fn cap_indexes(indexes: &str, limit: usize) -> String {
    if indexes.is_empty() {
        return "<none>".into();
    }
    match indexes.char_indices().skip(limit).find(|(_, c)| *c == ',') {
        Some((i, _)) => format!("{}...", &indexes[..=i]),
        None => indexes.to_string(),
    }
}

pub(super) fn describe_job(w: &mut Writer, job: &Job) {
    let m = &job.metadata;
    let spec = job.spec.clone().unwrap_or_default();
    let st = job.status.clone().unwrap_or_default();
    w.line(0, &format!("Name:\t{}", m.name.as_deref().unwrap_or("")));
    w.line(
        0,
        &format!("Namespace:\t{}", m.namespace.as_deref().unwrap_or("")),
    );
    w.line(
        0,
        &format!(
            "Selector:\t{}",
            format_label_selector(spec.selector.as_ref())
        ),
    );
    labels_multiline(w, "", "Labels", m.labels.as_ref());
    annotations_multiline(w, "Annotations", m.annotations.as_ref());
    if let Some(c) = controlled_by(m) {
        w.line(0, &format!("Controlled By:\t{c}"));
    }
    if let Some(p) = spec.parallelism {
        w.line(0, &format!("Parallelism:\t{p}"));
    }
    match spec.completions {
        Some(c) => w.line(0, &format!("Completions:\t{c}")),
        None => w.line(0, "Completions:\t<unset>"),
    }
    if let Some(mode) = &spec.completion_mode {
        w.line(0, &format!("Completion Mode:\t{mode}"));
    }
    if let Some(s) = spec.suspend {
        w.line(0, &format!("Suspend:\t{s}"));
    }
    if let Some(b) = spec.backoff_limit {
        w.line(0, &format!("Backoff Limit:\t{b}"));
    }
    if let Some(t) = spec.ttl_seconds_after_finished {
        w.line(0, &format!("TTL Seconds After Finished:\t{t}"));
    }
    if st.start_time.is_some() {
        w.line(
            0,
            &format!("Start Time:\t{}", rfc1123z(st.start_time.as_ref())),
        );
    }
    if st.completion_time.is_some() {
        w.line(
            0,
            &format!("Completed At:\t{}", rfc1123z(st.completion_time.as_ref())),
        );
    }
    if let (Some(s), Some(c)) = (&st.start_time, &st.completion_time) {
        let d = c.0.as_millisecond() - s.0.as_millisecond();
        w.line(0, &format!("Duration:\t{}", human_duration(d)));
    }
    if let Some(a) = spec.active_deadline_seconds {
        w.line(0, &format!("Active Deadline Seconds:\t{a}s"));
    }
    let (active, succeeded, failed) = (
        st.active.unwrap_or(0),
        st.succeeded.unwrap_or(0),
        st.failed.unwrap_or(0),
    );
    match st.ready {
        None => w.line(0, &format!("Pods Statuses:\t{active} Active / {succeeded} Succeeded / {failed} Failed")),
        Some(r) => w.line(0, &format!("Pods Statuses:\t{active} Active ({r} Ready) / {succeeded} Succeeded / {failed} Failed")),
    }
    if spec.completion_mode.as_deref() == Some("Indexed") {
        let ix = st.completed_indexes.as_deref().unwrap_or("");
        w.line(0, &format!("Completed Indexes:\t{}", cap_indexes(ix, 50)));
    }
    describe_pod_template(w, &spec.template);
}

/// `describeJobTemplate`.
fn describe_job_template(w: &mut Writer, spec: &JobSpec) {
    match &spec.selector {
        Some(s) => w.line(0, &format!("Selector:\t{}", format_label_selector(Some(s)))),
        None => w.line(0, "Selector:\t<unset>"),
    }
    match spec.parallelism {
        Some(p) => w.line(0, &format!("Parallelism:\t{p}")),
        None => w.line(0, "Parallelism:\t<unset>"),
    }
    match spec.completions {
        Some(c) => w.line(0, &format!("Completions:\t{c}")),
        None => w.line(0, "Completions:\t<unset>"),
    }
    if let Some(a) = spec.active_deadline_seconds {
        w.line(0, &format!("Active Deadline Seconds:\t{a}s"));
    }
    describe_pod_template(w, &spec.template);
}

pub(super) fn describe_cron_job(w: &mut Writer, cj: &CronJob) {
    let m = &cj.metadata;
    let spec = cj.spec.clone().unwrap_or_default();
    let st = cj.status.clone().unwrap_or_default();
    w.line(0, &format!("Name:\t{}", m.name.as_deref().unwrap_or("")));
    w.line(
        0,
        &format!("Namespace:\t{}", m.namespace.as_deref().unwrap_or("")),
    );
    labels_multiline(w, "", "Labels", m.labels.as_ref());
    annotations_multiline(w, "Annotations", m.annotations.as_ref());
    w.line(0, &format!("Schedule:\t{}", spec.schedule));
    w.line(
        0,
        &format!(
            "Concurrency Policy:\t{}",
            spec.concurrency_policy.as_deref().unwrap_or("")
        ),
    );
    let suspend = spec
        .suspend
        .map_or("<unset>".to_string(), |s| s.to_string());
    w.line(0, &format!("Suspend:\t{suspend}"));
    let opt = |v: Option<i32>| v.map_or("<unset>".to_string(), |n| n.to_string());
    w.line(
        0,
        &format!(
            "Successful Job History Limit:\t{}",
            opt(spec.successful_jobs_history_limit)
        ),
    );
    w.line(
        0,
        &format!(
            "Failed Job History Limit:\t{}",
            opt(spec.failed_jobs_history_limit)
        ),
    );
    match spec.starting_deadline_seconds {
        Some(s) => w.line(0, &format!("Starting Deadline Seconds:\t{s}s")),
        None => w.line(0, "Starting Deadline Seconds:\t<unset>"),
    }
    describe_job_template(w, &spec.job_template.spec.clone().unwrap_or_default());
    match &st.last_schedule_time {
        Some(t) => w.line(0, &format!("Last Schedule Time:\t{}", rfc1123z(Some(t)))),
        None => w.line(0, "Last Schedule Time:\t<unset>"),
    }
    let active: Vec<String> = st
        .active
        .iter()
        .flatten()
        .map(|r| r.name.clone().unwrap_or_default())
        .collect();
    if active.is_empty() {
        w.line(0, "Active Jobs:\t<none>");
    } else {
        w.line(0, &format!("Active Jobs:\t{}", active.join(", ")));
    }
}

#[cfg(test)]
mod tests {
    use super::cap_indexes;

    #[test]
    fn completed_indexes_are_capped_at_the_comma_after_fifty_characters() {
        assert_eq!(cap_indexes("", 50), "<none>");
        assert_eq!(cap_indexes("0-3,5", 50), "0-3,5");
        let long: Vec<String> = (0..40).map(|i| (i * 2).to_string()).collect();
        let s = long.join(",");
        let capped = cap_indexes(&s, 50);
        assert!(capped.ends_with(",..."));
        assert!(capped.len() < s.len());
    }
}
