//! The CronJob table (`printCronJob`).

use k8s_openapi::api::batch::v1::CronJob;

use super::{age, col, container_cells, format_label_selector, wide, Column};
use crate::time::Time;

pub(super) fn columns() -> Vec<Column> {
    vec![
        col("Name"),
        col("Schedule"),
        col("Timezone"),
        col("Suspend"),
        col("Active"),
        col("Last Schedule"),
        col("Age"),
        wide("Containers"),
        wide("Images"),
        wide("Selector"),
    ]
}

/// `printBoolPtr`.
fn bool_ptr(v: Option<bool>) -> String {
    match v {
        Some(true) => "True".into(),
        Some(false) => "False".into(),
        None => "<unset>".into(),
    }
}

pub(super) fn row(cj: &CronJob, now: Time) -> Vec<String> {
    let spec = cj.spec.clone().unwrap_or_default();
    let st = cj.status.clone().unwrap_or_default();
    let last = match &st.last_schedule_time {
        Some(t) => age(Some(t), now),
        None => "<none>".into(),
    };
    let js = spec.job_template.spec.clone().unwrap_or_default();
    let (names, images) = container_cells(js.template.spec.as_ref());
    vec![
        cj.metadata.name.clone().unwrap_or_default(),
        spec.schedule.clone(),
        spec.time_zone.clone().unwrap_or_else(|| "<none>".into()),
        bool_ptr(spec.suspend),
        st.active.map_or(0, |a| a.len()).to_string(),
        last,
        age(cj.metadata.creation_timestamp.as_ref(), now),
        names,
        images,
        format_label_selector(js.selector.as_ref()),
    ]
}
