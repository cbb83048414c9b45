//! CronJobs through the terminal: the docs' `hello` CronJob runs a Job every minute
//! and keeps three, `kubectl get|describe cronjob`, `kubectl create job --from`,
//! concurrencyPolicy Forbid, suspend, and schedule validation.

mod common;
use common::Term as T;

/// The documentation's CronJob (content/en/examples/application/job/cronjob.yaml).
const HELLO: &str = "apiVersion: batch/v1
kind: CronJob
metadata:
  name: hello
spec:
  schedule: \"* * * * *\"
  jobTemplate:
    spec:
      template:
        spec:
          containers:
          - name: hello
            image: busybox:1.28
            imagePullPolicy: IfNotPresent
            command:
            - /bin/sh
            - -c
            - date; echo Hello from the Kubernetes cluster
          restartPolicy: OnFailure
";

fn names(out: &str) -> Vec<String> {
    out.lines()
        .skip(1)
        .filter_map(|l| l.split_whitespace().next())
        .map(str::to_string)
        .collect()
}

#[test]
fn the_docs_hello_cronjob_runs_a_job_every_minute_and_keeps_three() {
    let mut t = T::new();
    t.file("cronjob.yaml", HELLO);
    assert_eq!(
        t.ok("kubectl apply -f cronjob.yaml"),
        "cronjob.batch/hello created\n"
    );
    assert_eq!(
        t.ok("kubectl get cronjob hello"),
        "NAME    SCHEDULE    TIMEZONE   SUSPEND   ACTIVE   LAST SCHEDULE   AGE\n\
         hello   * * * * *   <none>     False     0        <none>          0s\n"
    );
    t.settle(65);
    assert_eq!(names(&t.ok("kubectl get jobs")), ["hello-29453761"]);
    assert_eq!(
        t.ok("kubectl get job hello-29453761 -o jsonpath={.metadata.annotations}"),
        "{\"batch.kubernetes.io/cronjob-scheduled-timestamp\":\"2026-01-01T00:01:00Z\"}"
    );
    let logs = t.ok("kubectl logs job/hello-29453761");
    assert_eq!(
        logs,
        "Thu Jan  1 00:01:00 UTC 2026\nHello from the Kubernetes cluster\n"
    );
    t.settle(300);
    assert_eq!(
        names(&t.ok("kubectl get jobs")),
        ["hello-29453764", "hello-29453765", "hello-29453766"]
    );
    let cj = t.ok("kubectl get cronjobs");
    assert!(
        cj.lines()
            .nth(1)
            .unwrap()
            .starts_with("hello   * * * * *   <none>     False     0        5s "),
        "{cj}"
    );
    let d = t.ok("kubectl describe cronjob hello");
    for line in [
        "Schedule:                      * * * * *\n",
        "Concurrency Policy:            Allow\n",
        "Successful Job History Limit:  3\n",
        "Failed Job History Limit:      1\n",
        "Last Schedule Time:  Thu, 01 Jan 2026 00:06:00 +0000\n",
        "cronjob-controller  Created job hello-29453766\n",
        "cronjob-controller  Saw completed job: hello-29453766, condition: Complete\n",
        "cronjob-controller  Deleted job hello-29453763\n",
    ] {
        assert!(d.contains(line), "{line}\n{d}");
    }
    assert_eq!(
        t.ok("kubectl get cronjob hello -o jsonpath={.status.lastSuccessfulTime}"),
        "2026-01-01T00:06:00Z"
    );
}

#[test]
fn a_job_created_from_a_cronjob_is_owned_by_it_and_marked_manual() {
    let mut t = T::new();
    t.file("cronjob.yaml", &HELLO.replace("* * * * *", "0 0 1 1 *"));
    t.ok("kubectl apply -f cronjob.yaml");
    assert_eq!(
        t.ok("kubectl create job once --from=cronjob/hello"),
        "job.batch/once created\n"
    );
    let a = t.ok("kubectl get job once -o jsonpath={.metadata.annotations}");
    assert_eq!(a, "{\"cronjob.kubernetes.io/instantiate\":\"manual\"}");
    let o = t.ok("kubectl get job once -o jsonpath={.metadata.ownerReferences[0].kind}");
    assert_eq!(o, "CronJob");
    t.settle(20);
    assert!(t.ok("kubectl get jobs").contains("once   Complete   1/1"));
    assert_eq!(
        t.err("kubectl create job x"),
        "error: either --image or --from must be specified\n"
    );
    assert_eq!(
        t.ok("kubectl create job y --image=busybox:1.37 -- sh -c true"),
        "job.batch/y created\n"
    );
}

#[test]
fn forbid_skips_a_schedule_while_the_previous_job_runs() {
    let mut t = T::new();
    let slow = HELLO
        .replace("  schedule:", "  concurrencyPolicy: Forbid\n  schedule:")
        .replace("date; echo Hello from the Kubernetes cluster", "sleep 90");
    t.file("cronjob.yaml", &slow);
    t.ok("kubectl apply -f cronjob.yaml");
    t.settle(150);
    assert_eq!(names(&t.ok("kubectl get jobs")), ["hello-29453761"]);
    let active = t.ok("kubectl get cronjob hello -o jsonpath={.status.active[0].name}");
    assert_eq!(active, "hello-29453761");
    let ev = t.ok("kubectl get events --field-selector involvedObject.kind=CronJob");
    assert!(ev.contains("JobAlreadyActive   cronjob/hello   Not starting job because prior execution is running and concurrency policy is Forbid"), "{ev}");
    // When the first Job ends (00:02:30) the 00:02 schedule is still the most recent
    // unmet one and, without startingDeadlineSeconds, it starts late, as upstream's
    // mostRecentScheduleTime has it.
    t.settle(10);
    assert_eq!(
        names(&t.ok("kubectl get jobs")),
        ["hello-29453761", "hello-29453762"]
    );
    assert_eq!(
        t.ok("kubectl get job hello-29453762 -o jsonpath={.metadata.creationTimestamp}"),
        "2026-01-01T00:02:30Z"
    );
}

#[test]
fn a_suspended_cronjob_creates_nothing() {
    let mut t = T::new();
    t.file(
        "cronjob.yaml",
        &HELLO.replace("  schedule:", "  suspend: true\n  schedule:"),
    );
    t.ok("kubectl apply -f cronjob.yaml");
    t.settle(180);
    assert_eq!(
        t.run("kubectl get jobs").stderr,
        "No resources found in default namespace.\n"
    );
    assert!(t
        .ok("kubectl get cronjobs")
        .contains("True      0        <none>"));
}

#[test]
fn a_fixed_offset_time_zone_shifts_the_schedule_and_the_annotation() {
    let mut t = T::new();
    let tz = HELLO.replace(
        "  schedule: \"* * * * *\"",
        "  schedule: \"2 1 * * *\"\n  timeZone: Etc/GMT-1",
    );
    t.file("cronjob.yaml", &tz);
    t.ok("kubectl apply -f cronjob.yaml");
    assert!(t
        .ok("kubectl get cronjobs")
        .contains("2 1 * * *   Etc/GMT-1"));
    t.settle(150);
    assert_eq!(names(&t.ok("kubectl get jobs")), ["hello-29453762"]);
    assert_eq!(
        t.ok("kubectl get job hello-29453762 -o jsonpath={.metadata.annotations}"),
        "{\"batch.kubernetes.io/cronjob-scheduled-timestamp\":\"2026-01-01T01:02:00+01:00\"}"
    );
}

#[test]
fn bad_schedules_are_refused_as_upstream_refuses_them() {
    let mut t = T::new();
    t.file("bad.yaml", &HELLO.replace("\"* * * * *\"", "\"* * *\""));
    assert_eq!(
        t.err("kubectl apply -f bad.yaml"),
        "The CronJob \"hello\" is invalid: spec.schedule: Invalid value: \"* * *\": expected exactly 5 fields, found 3: [* * *]\n"
    );
    t.file(
        "bad.yaml",
        &HELLO.replace("\"* * * * *\"", "\"61 * * * *\""),
    );
    assert_eq!(
        t.err("kubectl apply -f bad.yaml"),
        "The CronJob \"hello\" is invalid: spec.schedule: Invalid value: \"61 * * * *\": end of range (61) above maximum (59): 61\n"
    );
}

/// The shipped scenario runs: a Job a minute, the logs, history and a manual Job.
#[test]
fn the_cronjob_hello_scenario_runs() {
    let path = format!(
        "{}/../../public/scenarios/cronjob-hello.yaml",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(path).unwrap();
    let sc = kubeloop_sim::scenario::parse_scenario(&text).expect("valid");
    let r = kubeloop_sim::runner::run(&sc, None).1;
    let out = |at: u64| r.iter().find(|s| s.at_ms == at * 1000).unwrap();
    assert!(
        out(65).stdout.contains("hello-29453761   Complete   1/1"),
        "{:?}",
        out(65)
    );
    assert!(out(66)
        .stdout
        .ends_with("Hello from the Kubernetes cluster\n"));
    assert_eq!(out(330).stdout.matches("job.batch/hello-").count(), 3);
    assert_eq!(out(332).stdout, "job.batch/hello-now created\n");
    assert!(
        out(350).stdout.contains("hello-now        Complete   1/1"),
        "{}",
        out(350).stdout
    );
}

/// Deleting a CronJob takes its Jobs and their pods (the garbage collector, and the Job
/// controller letting orphaned pods go of their finalizer); a namespace's deletion
/// takes everything.
#[test]
fn a_deleted_cronjob_takes_its_jobs_and_pods_with_it() {
    let mut t = T::new();
    t.file("cronjob.yaml", HELLO);
    t.ok("kubectl apply -f cronjob.yaml");
    t.settle(130);
    assert_eq!(names(&t.ok("kubectl get jobs")).len(), 2);
    assert_eq!(
        t.ok("kubectl delete cronjob hello"),
        "cronjob.batch \"hello\" deleted from default namespace\n"
    );
    t.settle(60);
    let o = t.run("kubectl get cronjobs,jobs,pods");
    assert_eq!(
        o.stderr, "No resources found in default namespace.\n",
        "{o:?}"
    );
    t.ok("kubectl create namespace batch");
    t.ok("kubectl apply -f cronjob.yaml -n batch");
    t.settle(70);
    t.ok("kubectl delete namespace batch");
    t.settle(60);
    let o = t.run("kubectl get namespace batch");
    assert_eq!(
        o.stderr, "Error from server (NotFound): namespaces \"batch\" not found\n",
        "{o:?}"
    );
}

/// IANA zones with daylight-saving rules: the first run is at the zone's local time and
/// the scheduled-timestamp annotation carries the offset in force then.
#[test]
fn a_time_zone_with_dst_rules_schedules_in_local_time() {
    for (zone, schedule, annotation) in [
        (
            "America/New_York",
            "2 19 * * *",
            "2025-12-31T19:02:00-05:00",
        ),
        ("Asia/Tokyo", "2 9 * * *", "2026-01-01T09:02:00+09:00"),
        (
            "Australia/Sydney",
            "2 11 * * *",
            "2026-01-01T11:02:00+11:00",
        ),
    ] {
        let mut t = T::new();
        let tz = HELLO.replace(
            "  schedule: \"* * * * *\"",
            &format!("  schedule: \"{schedule}\"\n  timeZone: {zone}"),
        );
        t.file("cronjob.yaml", &tz);
        t.ok("kubectl apply -f cronjob.yaml");
        t.settle(150);
        assert_eq!(
            names(&t.ok("kubectl get jobs")),
            ["hello-29453762"],
            "{zone}"
        );
        assert_eq!(
            t.ok("kubectl get job hello-29453762 -o jsonpath={.metadata.annotations}"),
            format!("{{\"batch.kubernetes.io/cronjob-scheduled-timestamp\":\"{annotation}\"}}")
        );
    }
}

#[test]
fn an_unknown_time_zone_is_refused_as_time_load_location_refuses_it() {
    let mut t = T::new();
    t.file(
        "bad.yaml",
        &HELLO.replace(
            "  schedule: \"* * * * *\"",
            "  schedule: \"* * * * *\"\n  timeZone: Foo/Bar",
        ),
    );
    assert_eq!(
        t.err("kubectl apply -f bad.yaml"),
        "The CronJob \"hello\" is invalid: spec.timeZone: Invalid value: \"Foo/Bar\": unknown time zone Foo/Bar\n"
    );
}
