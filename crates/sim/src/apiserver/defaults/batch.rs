//! batch/v1 CronJob defaults (`SetDefaults_CronJob` and the pod template's).

use k8s_openapi::api::batch::v1::CronJob;

/// `SetDefaults_CronJob` (v1.35): Allow, not suspended, keep 3 successful and 1 failed
/// Job; the job template's pod template gets the pod defaults (the JobSpec itself is not
/// defaulted until a Job is created from it).
pub fn default_cron_job(c: &mut CronJob) {
    let spec = c.spec.get_or_insert_with(Default::default);
    if spec.concurrency_policy.as_deref().unwrap_or("").is_empty() {
        spec.concurrency_policy = Some("Allow".into());
    }
    spec.suspend.get_or_insert(false);
    spec.successful_jobs_history_limit.get_or_insert(3);
    spec.failed_jobs_history_limit.get_or_insert(1);
    if let Some(js) = spec.job_template.spec.as_mut() {
        super::pod::default_pod_template(&mut js.template);
    }
}
