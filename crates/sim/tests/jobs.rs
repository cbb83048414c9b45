//! Jobs and CronJobs through the terminal: the docs' `pi` Job, completions and
//! parallelism, Indexed jobs, the backoff limit, the active deadline, suspension,
//! ttlSecondsAfterFinished, `kubectl get|describe job`, validation messages.

mod common;
use common::Term as T;

/// The documentation's Job (content/en/examples/controllers/job.yaml).
const PI: &str = "apiVersion: batch/v1
kind: Job
metadata:
  name: pi
spec:
  template:
    spec:
      containers:
      - name: pi
        image: perl:5.34.0
        command: [\"perl\",  \"-Mbignum=bpi\", \"-wle\", \"print bpi(2000)\"]
      restartPolicy: Never
  backoffLimit: 4
";

const FAILING: &str = "apiVersion: batch/v1
kind: Job
metadata:
  name: fail
spec:
  backoffLimit: 2
  template:
    spec:
      containers:
      - name: main
        image: busybox:1.37
        command: [\"sh\", \"-c\", \"exit 1\"]
      restartPolicy: Never
";

const INDEXED: &str = "apiVersion: batch/v1
kind: Job
metadata:
  name: idx
spec:
  completions: 3
  parallelism: 3
  completionMode: Indexed
  template:
    spec:
      containers:
      - name: main
        image: busybox:1.37
        command: [\"sh\", \"-c\", \"echo $JOB_COMPLETION_INDEX\"]
      restartPolicy: Never
";

const DEADLINE: &str = "apiVersion: batch/v1
kind: Job
metadata:
  name: slow
spec:
  activeDeadlineSeconds: 5
  template:
    spec:
      containers:
      - name: main
        image: busybox:1.37
        command: [\"sleep\", \"3600\"]
      restartPolicy: Never
";

fn column(out: &str, name: &str, col: usize) -> String {
    out.lines()
        .find(|l| l.split_whitespace().next() == Some(name))
        .and_then(|l| l.split_whitespace().nth(col))
        .unwrap_or("")
        .to_string()
}

#[test]
fn the_docs_pi_job_gets_a_generated_selector_and_completes() {
    let mut t = T::new();
    t.file("pi.yaml", PI);
    assert_eq!(t.ok("kubectl apply -f pi.yaml"), "job.batch/pi created\n");
    let uid = t.ok("kubectl get job pi -o jsonpath={.metadata.uid}");
    assert_eq!(
        t.ok("kubectl get job pi -o jsonpath={.spec.selector.matchLabels}"),
        format!("{{\"batch.kubernetes.io/controller-uid\":\"{uid}\"}}")
    );
    let labels = t.ok("kubectl get job pi -o jsonpath={.spec.template.metadata.labels}");
    for l in [
        "\"batch.kubernetes.io/job-name\":\"pi\"",
        "\"job-name\":\"pi\"",
        &format!("\"controller-uid\":\"{uid}\""),
    ] {
        assert!(labels.contains(l), "{labels}");
    }
    t.settle(60);
    let jobs = t.ok("kubectl get jobs");
    assert_eq!(
        jobs.lines().next().unwrap(),
        "NAME   STATUS     COMPLETIONS   DURATION   AGE"
    );
    assert_eq!(column(&jobs, "pi", 1), "Complete");
    assert_eq!(column(&jobs, "pi", 2), "1/1");
    let wide = t.ok("kubectl get jobs -o wide");
    assert!(wide.starts_with(
        "NAME   STATUS     COMPLETIONS   DURATION   AGE   CONTAINERS   IMAGES        SELECTOR\n"
    ), "{wide}");
    assert!(
        wide.contains(&format!(
            "   pi           perl:5.34.0   batch.kubernetes.io/controller-uid={uid}\n"
        )),
        "{wide}"
    );
    let pods = t.ok("kubectl get pods --selector=batch.kubernetes.io/job-name=pi --output=jsonpath={.items[*].metadata.name}");
    assert!(pods.starts_with("pi-") && pods.len() == 8, "{pods}");
    let logs = t.ok("kubectl logs job/pi");
    assert_eq!(logs.len(), 2002);
    assert!(logs.starts_with(
        "3.141592653589793238462643383279502884197169399375105820974944592307816406286"
    ));
    let d = t.ok("kubectl describe job pi");
    for line in [
        "Completion Mode:  NonIndexed",
        "Backoff Limit:    4",
        "Pods Statuses:    0 Active (0 Ready) / 1 Succeeded / 0 Failed",
        "Normal  Completed         ",
        "job-controller  Job completed",
    ] {
        assert!(d.contains(line), "{line}\n{d}");
    }
    let y = t.ok("kubectl get job pi -o yaml");
    assert!(
        y.contains(
            "    reason: CompletionsReached\n    status: \"True\"\n    type: SuccessCriteriaMet\n"
        ),
        "{y}"
    );
    assert!(y.contains("    type: Complete\n  ready: 0\n"), "{y}");
    assert!(
        y.contains("  succeeded: 1\n  terminating: 0\n  uncountedTerminatedPods: {}\n"),
        "{y}"
    );
    // The pod kept no tracking finalizer once counted.
    let f = t.ok("kubectl get pods -l job-name=pi -o jsonpath={.items[0].metadata.finalizers}");
    assert_eq!(f, "");
}

#[test]
fn a_failing_job_backs_off_ten_seconds_doubling_then_fails_at_its_backoff_limit() {
    let mut t = T::new();
    t.file("fail.yaml", FAILING);
    t.ok("kubectl apply -f fail.yaml");
    let pods = |t: &mut T| {
        t.ok("kubectl get pods --no-headers -l job-name=fail")
            .lines()
            .count()
    };
    t.settle(8);
    assert_eq!(pods(&mut t), 1, "the second pod waits 10 s");
    t.settle(5);
    assert_eq!(pods(&mut t), 2);
    t.settle(15);
    assert_eq!(pods(&mut t), 2, "the third waits 20 s");
    t.settle(10);
    assert_eq!(pods(&mut t), 3);
    t.settle(5);
    let jobs = t.ok("kubectl get jobs");
    assert_eq!(column(&jobs, "fail", 1), "Failed");
    assert_eq!(column(&jobs, "fail", 2), "0/1");
    let d = t.ok("kubectl describe job fail");
    assert!(
        d.contains("Pods Statuses:    0 Active (0 Ready) / 0 Succeeded / 3 Failed"),
        "{d}"
    );
    assert!(d.contains("Warning  BackoffLimitExceeded  "), "{d}");
    assert!(
        d.contains("job-controller  Job has reached the specified backoff limit"),
        "{d}"
    );
    let c = t.ok("kubectl get job fail -o jsonpath={.status.conditions[*].type}");
    assert_eq!(c, "FailureTarget Failed");
}

#[test]
fn an_indexed_job_names_its_pods_by_index_and_records_completed_indexes() {
    let mut t = T::new();
    t.file("idx.yaml", INDEXED);
    t.ok("kubectl apply -f idx.yaml");
    t.settle(30);
    let names = t.ok("kubectl get pods -l job-name=idx -o jsonpath={.items[*].metadata.name}");
    let mut prefixes: Vec<&str> = names.split(' ').map(|n| &n[..6]).collect();
    prefixes.sort();
    assert_eq!(prefixes, ["idx-0-", "idx-1-", "idx-2-"]);
    assert_eq!(
        t.ok("kubectl get job idx -o jsonpath={.status.completedIndexes}"),
        "0-2"
    );
    let pod = t.ok("kubectl get pods -l batch.kubernetes.io/job-completion-index=1 -o yaml");
    assert!(
        pod.contains("batch.kubernetes.io/job-completion-index: \"1\""),
        "{pod}"
    );
    assert!(pod.contains(" hostname: idx-1\n"), "{pod}");
    assert!(pod.contains("- name: JOB_COMPLETION_INDEX\n"), "{pod}");
    assert!(
        pod.contains(
            " fieldPath: metadata.annotations['batch.kubernetes.io/job-completion-index']\n"
        ),
        "{pod}"
    );
    let d = t.ok("kubectl describe job idx");
    assert!(d.contains("Completed Indexes:  0-2\n"), "{d}");
    let one = t.ok("kubectl get pods -l batch.kubernetes.io/job-completion-index=1 -o name");
    assert_eq!(t.ok(&format!("kubectl logs {}", one.trim())), "1\n");
}

#[test]
fn a_job_past_its_active_deadline_fails_and_its_pod_goes() {
    let mut t = T::new();
    t.file("slow.yaml", DEADLINE);
    t.ok("kubectl apply -f slow.yaml");
    t.settle(3);
    assert_eq!(column(&t.ok("kubectl get jobs"), "slow", 1), "Running");
    t.settle(60);
    let jobs = t.ok("kubectl get jobs");
    assert_eq!(column(&jobs, "slow", 1), "Failed", "{jobs}");
    let d = t.ok("kubectl describe job slow");
    assert!(d.contains("Active Deadline Seconds:  5s"), "{d}");
    assert!(d.contains("DeadlineExceeded  "), "{d}");
    assert!(
        d.contains("Job was active longer than specified deadline"),
        "{d}"
    );
    assert!(
        d.contains("Pods Statuses:            0 Active (0 Ready) / 0 Succeeded / 1 Failed"),
        "{d}"
    );
    let o = t.run("kubectl get pods -l job-name=slow");
    assert_eq!(o.stderr, "No resources found in default namespace.\n");
}

#[test]
fn a_suspended_job_creates_nothing_until_it_is_resumed() {
    let mut t = T::new();
    t.file(
        "s.yaml",
        &INDEXED.replace(
            "  completionMode: Indexed\n",
            "  completionMode: Indexed\n  suspend: true\n",
        ),
    );
    t.ok("kubectl apply -f s.yaml");
    t.settle(10);
    assert_eq!(column(&t.ok("kubectl get jobs"), "idx", 1), "Suspended");
    assert_eq!(
        t.run("kubectl get pods").stderr,
        "No resources found in default namespace.\n"
    );
    let c = t.ok("kubectl get job idx -o jsonpath={.status.conditions[0].reason}");
    assert_eq!(c, "JobSuspended");
    t.ok("kubectl patch job idx -p '{\"spec\":{\"suspend\":false}}'");
    t.settle(30);
    assert_eq!(column(&t.ok("kubectl get jobs"), "idx", 1), "Complete");
    let ev = t.ok("kubectl get events --field-selector involvedObject.kind=Job");
    assert!(
        ev.contains("Suspended          job/idx   Job suspended"),
        "{ev}"
    );
    assert!(
        ev.contains("Resumed            job/idx   Job resumed"),
        "{ev}"
    );
}

#[test]
fn a_finished_job_with_a_ttl_is_deleted_with_its_pods() {
    let mut t = T::new();
    t.file(
        "ttl.yaml",
        &INDEXED.replace(
            "  completions: 3\n",
            "  completions: 3\n  ttlSecondsAfterFinished: 20\n",
        ),
    );
    t.ok("kubectl apply -f ttl.yaml");
    t.settle(15);
    assert_eq!(column(&t.ok("kubectl get jobs"), "idx", 1), "Complete");
    t.settle(30);
    let o = t.run("kubectl get jobs,pods");
    assert_eq!(
        o.stderr, "No resources found in default namespace.\n",
        "{o:?}"
    );
    assert_eq!(
        t.run("kubectl get pods").stderr,
        "No resources found in default namespace.\n"
    );
}

#[test]
fn a_running_jobs_template_is_immutable() {
    let mut t = T::new();
    t.file("slow.yaml", DEADLINE);
    t.ok("kubectl apply -f slow.yaml");
    t.file(
        "slow.yaml",
        &DEADLINE.replace("busybox:1.37", "busybox:1.36"),
    );
    let e = t.err("kubectl apply -f slow.yaml");
    assert!(
        e.starts_with("The Job \"slow\" is invalid: spec.template: Invalid value: "),
        "{e}"
    );
    assert!(e.ends_with(": field is immutable\n"), "{e}");
}

/// The shipped scenario runs: pi completes, the flaky Job fails at its backoff limit.
#[test]
fn the_job_pi_scenario_runs() {
    let path = format!(
        "{}/../../public/scenarios/job-pi.yaml",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(path).unwrap();
    let sc = kubeloop_sim::scenario::parse_scenario(&text).expect("valid");
    let r = kubeloop_sim::runner::run(&sc, None).1;
    let out = |at: u64| r.iter().find(|s| s.at_ms == at * 1000).unwrap();
    assert!(out(1)
        .stdout
        .starts_with("{\"matchLabels\":{\"batch.kubernetes.io/controller-uid\":"));
    assert_eq!(column(&out(40).stdout, "pi", 1), "Complete");
    assert!(out(42).stdout.starts_with("3.14159"));
    assert_eq!(out(60).stdout.lines().count(), 3, "{}", out(60).stdout);
    assert_eq!(
        column(&out(90).stdout, "flaky", 1),
        "Failed",
        "{}",
        out(90).stdout
    );
    assert!(out(91).stdout.contains("BackoffLimitExceeded"));
}

#[test]
fn rollout_status_has_no_viewer_for_a_job() {
    let mut t = T::new();
    t.file("pi.yaml", PI);
    t.ok("kubectl apply -f pi.yaml");
    assert_eq!(
        t.err("kubectl rollout status job/pi"),
        "error: no status viewer has been implemented for Job.batch\n"
    );
    t.settle(30);
    let all = t.ok("kubectl get all");
    assert!(all.contains("\nNAME           STATUS     COMPLETIONS   DURATION   AGE\njob.batch/pi   Complete   1/1 "), "{all}");
}
