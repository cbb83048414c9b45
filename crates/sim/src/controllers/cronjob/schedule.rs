//! `syncCronJob`'s scheduling half: the time zone and schedule, suspension, the most
//! recent unmet schedule, the starting deadline, the concurrency policy, and the Job.

use super::*;

impl CronJobController {
    pub(super) fn schedule(
        &mut self,
        key: &str,
        obj: &Arc<Object>,
        cj: &CronJob,
        status: &mut CronJobStatus,
        env: &mut Env,
    ) -> SyncResult {
        if obj.meta().deletion_timestamp.is_some() {
            return Ok(Action::await_change());
        }
        let spec = cj.spec.clone().unwrap_or_default();
        let zone = match spec.time_zone.as_deref() {
            None => crate::controllers::tz::Zone::fixed(0),
            Some(tz) => match crate::controllers::tz::lookup(tz) {
                Some(z) => z,
                None => {
                    let msg = format!("invalid timeZone: {tz:?}: unknown time zone {tz}");
                    env.event(obj, WARNING, "UnknownTimeZone", &msg);
                    return Ok(Action::await_change());
                }
            },
        };
        let sched = match cron::parse(&spec.schedule) {
            Ok(s) if spec.time_zone.is_some() => cron::in_zone(s, zone),
            Ok(s) => s,
            Err(e) => {
                let msg = format!("unparseable schedule: {:?} : {e}", spec.schedule);
                env.event(obj, WARNING, "UnparseableSchedule", &msg);
                return Ok(Action::await_change());
            }
        };
        if spec.suspend == Some(true) {
            return Ok(Action::await_change());
        }
        let now = env.now();
        let now_u = cron::to_unix(now);
        let created = obj
            .meta()
            .creation_timestamp
            .as_ref()
            .map_or(0, from_k8s_time);
        let last = status.last_schedule_time.as_ref().map(from_k8s_time);
        let base = cron::to_unix(last.unwrap_or(created));
        let next_in = |from: UnixMs| -> Action {
            match sched.next(from.max(now_u)) {
                Some(n) => Action::requeue((n - now_u).max(0) as Time + NEXT_SCHEDULE_DELTA),
                None => Action::await_change(),
            }
        };
        let mut earliest = base;
        if let Some(sds) = spec.starting_deadline_seconds {
            earliest = earliest.max(now_u - sds * 1000);
        }
        let (recent, missed) = match most_recent(earliest, now_u, &sched) {
            Ok(r) => r,
            Err(e) => {
                let msg = format!("invalid schedule: {} : {e}", spec.schedule);
                env.event(obj, WARNING, "InvalidSchedule", &msg);
                return Ok(Action::await_change());
            }
        };
        let Some(scheduled_u) = recent else {
            return Ok(next_in(now_u));
        };
        if missed > 100 {
            env.event(obj, WARNING, "TooManyMissedTimes", "too many missed start times. Set or decrease .spec.startingDeadlineSeconds or check clock skew");
        }
        let scheduled = cron::from_unix(scheduled_u);
        if spec
            .starting_deadline_seconds
            .is_some_and(|s| scheduled_u + s * 1000 < now_u)
        {
            let t = crate::kubectl::describe::rfc1123z(Some(&k8s_time(scheduled)));
            env.event(
                obj,
                WARNING,
                "MissSchedule",
                &format!("Missed scheduled time to start a job: {t}"),
            );
            return Ok(next_in(now_u));
        }
        let name = job_name(obj.name(), scheduled);
        let active = status.active.clone().unwrap_or_default();
        let mem = self.mem.entry(key.to_string()).or_default();
        let processed = active
            .iter()
            .any(|r| r.name.as_deref() == Some(name.as_str()))
            || last == Some(scheduled)
            || mem.in_flight.contains(&name);
        if processed {
            return Ok(next_in(now_u));
        }
        match spec.concurrency_policy.as_deref() {
            Some("Forbid") if !active.is_empty() => {
                env.event(obj, NORMAL, "JobAlreadyActive", "Not starting job because prior execution is running and concurrency policy is Forbid");
                return Ok(next_in(now_u));
            }
            Some("Replace") => {
                for r in &active {
                    let stub = Object::from(Job {
                        metadata: ObjectMeta {
                            name: r.name.clone(),
                            namespace: r.namespace.clone(),
                            ..ObjectMeta::default()
                        },
                        ..Job::default()
                    });
                    self.delete_job(key, &Arc::new(stub), env);
                }
                status.active = None;
            }
            _ => {}
        }
        let offset = sched.zone().offset_at(scheduled_u.div_euclid(1000));
        let job = job_from_template(obj, cj, scheduled, offset);
        let req = ApiRequest::new(Verb::Create, Kind::Job, obj.namespace(), "")
            .with_body(Body::Object(job.into()));
        self.mem
            .entry(key.to_string())
            .or_default()
            .in_flight
            .insert(name);
        let id = env.send(req);
        self.sent
            .insert(id, Sent::Create(key.to_string(), scheduled));
        Ok(next_in(now_u))
    }
}
