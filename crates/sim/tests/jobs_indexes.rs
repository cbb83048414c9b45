//! Indexed Jobs' per-index back-off (`backoffLimitPerIndex`, `maxFailedIndexes`, the
//! FailIndex action) and success policies, through the terminal, with upstream's
//! conditions, reasons, status fields and validation messages.

mod common;
use common::Term as T;

/// Index i exits with code i: index 0 succeeds, the others fail.
fn job(extra: &str) -> String {
    format!(
        "apiVersion: batch/v1
kind: Job
metadata:
  name: ix
spec:
  completions: 3
  parallelism: 3
  completionMode: Indexed
{extra}  template:
    spec:
      restartPolicy: Never
      containers:
      - name: main
        image: busybox:1.37
        command: [\"sh\", \"-c\", \"exit $JOB_COMPLETION_INDEX\"]
"
    )
}

fn get(t: &mut T, path: &str) -> String {
    t.ok(&format!("kubectl get job ix -o jsonpath={{{path}}}"))
}

#[test]
fn a_per_index_limit_retries_each_index_then_fails_with_failed_indexes() {
    let mut t = T::new();
    t.file("j.yaml", &job("  backoffLimitPerIndex: 1\n"));
    t.ok("kubectl apply -f j.yaml");
    assert_eq!(get(&mut t, ".spec.backoffLimit"), "2147483647");
    t.settle(5);
    // Indexes 1 and 2 failed once: each waits 10 s for its second pod.
    assert_eq!(get(&mut t, ".status.completedIndexes"), "0");
    assert_eq!(get(&mut t, ".status.failedIndexes"), "");
    let pods = t.ok("kubectl get pods -l batch.kubernetes.io/job-completion-index=1 --no-headers");
    assert_eq!(pods.lines().count(), 1, "{pods}");
    t.settle(15);
    let yaml = t.ok("kubectl get pods -l batch.kubernetes.io/job-completion-index=1 -o yaml");
    let mut counts: Vec<&str> = yaml
        .lines()
        .filter_map(|l| {
            l.trim()
                .strip_prefix("batch.kubernetes.io/job-index-failure-count: ")
        })
        .collect();
    counts.sort();
    assert_eq!(
        counts,
        ["\"0\"", "\"1\""],
        "the replacement carries the index's failure count"
    );
    t.settle(30);
    assert_eq!(get(&mut t, ".status.failedIndexes"), "1,2");
    assert_eq!(get(&mut t, ".status.failed"), "4");
    assert_eq!(get(&mut t, ".status.succeeded"), "1");
    assert_eq!(
        get(&mut t, ".status.conditions[*].type"),
        "FailureTarget Failed"
    );
    assert_eq!(get(&mut t, ".status.conditions[1].reason"), "FailedIndexes");
    assert_eq!(
        get(&mut t, ".status.conditions[1].message"),
        "Job has failed indexes"
    );
    let jobs = t.ok("kubectl get jobs");
    assert!(
        jobs.lines()
            .nth(1)
            .unwrap()
            .starts_with("ix     Failed   1/3 "),
        "{jobs}"
    );
    let d = t.ok("kubectl describe job ix");
    assert!(d.contains("Warning  FailedIndexes  "), "{d}");
}

#[test]
fn max_failed_indexes_stops_the_job_at_the_first_index_too_many() {
    let mut t = T::new();
    t.file(
        "j.yaml",
        &job("  backoffLimitPerIndex: 0\n  maxFailedIndexes: 1\n"),
    );
    t.ok("kubectl apply -f j.yaml");
    t.settle(40);
    assert_eq!(get(&mut t, ".status.failedIndexes"), "1,2");
    assert_eq!(get(&mut t, ".status.conditions[1].type"), "Failed");
    assert_eq!(
        get(&mut t, ".status.conditions[1].reason"),
        "MaxFailedIndexesExceeded"
    );
    assert_eq!(
        get(&mut t, ".status.conditions[1].message"),
        "Job has exceeded the specified maximal number of failed indexes"
    );
}

#[test]
fn a_fail_index_rule_fails_its_index_without_retrying() {
    let mut t = T::new();
    t.file(
        "j.yaml",
        &job("  backoffLimitPerIndex: 3\n  podFailurePolicy:\n    rules:\n    - action: FailIndex\n      onExitCodes:\n        operator: In\n        values: [2]\n"),
    );
    t.ok("kubectl apply -f j.yaml");
    t.settle(15);
    // Index 2 failed for good at once; index 1 waits for its retry.
    assert_eq!(get(&mut t, ".status.failedIndexes"), "2");
    let two = t.ok("kubectl get pods -l batch.kubernetes.io/job-completion-index=2 --no-headers");
    assert_eq!(two.lines().count(), 1, "{two}");
    let one = t.ok("kubectl get pods -l batch.kubernetes.io/job-completion-index=1 --no-headers");
    assert_eq!(one.lines().count(), 2, "{one}");
}

#[test]
fn a_success_policy_completes_the_job_when_its_indexes_succeed() {
    let mut t = T::new();
    let manifest = job("  successPolicy:\n    rules:\n    - succeededIndexes: \"0\"\n").replace(
        "exit $JOB_COMPLETION_INDEX",
        "sleep ${JOB_COMPLETION_INDEX}00",
    );
    t.file("j.yaml", &manifest);
    t.ok("kubectl apply -f j.yaml");
    t.settle(5);
    assert_eq!(
        get(&mut t, ".status.conditions[0].type"),
        "SuccessCriteriaMet"
    );
    assert_eq!(get(&mut t, ".status.conditions[0].reason"), "SuccessPolicy");
    assert_eq!(
        get(&mut t, ".status.conditions[0].message"),
        "Matched rules at index 0"
    );
    t.settle(60);
    assert_eq!(
        get(&mut t, ".status.conditions[*].type"),
        "SuccessCriteriaMet Complete"
    );
    assert_eq!(get(&mut t, ".status.conditions[1].reason"), "SuccessPolicy");
    assert_eq!(get(&mut t, ".status.completedIndexes"), "0");
    let jobs = t.ok("kubectl get jobs");
    assert!(
        jobs.lines()
            .nth(1)
            .unwrap()
            .starts_with("ix     Complete   1/3 "),
        "{jobs}"
    );
    let o = t.run("kubectl get pods --field-selector=status.phase=Running");
    assert_eq!(
        o.stderr, "No resources found in default namespace.\n",
        "{o:?}"
    );
}

#[test]
fn per_index_and_success_policy_fields_are_validated_as_upstream() {
    let mut t = T::new();
    let cases = [
        (
            job("  backoffLimitPerIndex: 1\n").replace("  completionMode: Indexed\n", ""),
            "spec.backoffLimitPerIndex: Invalid value: 1: requires indexed completion mode",
        ),
        (
            job("  maxFailedIndexes: 1\n"),
            "spec.backoffLimitPerIndex: Required value: when maxFailedIndexes is specified",
        ),
        (
            job("  backoffLimitPerIndex: 1\n  maxFailedIndexes: 4\n"),
            "spec.maxFailedIndexes: Invalid value: 4: must be less than or equal to completions",
        ),
        (
            job("  podFailurePolicy:\n    rules:\n    - action: FailIndex\n      onExitCodes: {operator: In, values: [1]}\n"),
            "spec.podFailurePolicy.rules[0].action: Invalid value: \"FailIndex\": requires the backoffLimitPerIndex to be set",
        ),
        (
            job("  successPolicy:\n    rules:\n    - succeededCount: 4\n"),
            "spec.successPolicy.rules[0].succeededCount: Invalid value: 4: must be less than or equal to 3 (the number of specified completions)",
        ),
        (
            job("  successPolicy:\n    rules:\n    - succeededIndexes: \"0-1\"\n      succeededCount: 3\n"),
            "spec.successPolicy.rules[0].succeededCount: Invalid value: 3: must be less than or equal to 2 (the number of indexes in the specified succeededIndexes field)",
        ),
        (
            job("  successPolicy:\n    rules:\n    - succeededIndexes: \"2-1\"\n"),
            "spec.successPolicy.rules[0].succeededIndexes: Invalid value: \"2-1\": error parsing succeededIndexes: non-increasing order, previous: 2, current: 1",
        ),
        (
            job("  successPolicy:\n    rules:\n    - {}\n"),
            "spec.successPolicy.rules[0]: Required value: at least one of succeededCount or succeededIndexes must be specified",
        ),
    ];
    for (i, (manifest, want)) in cases.iter().enumerate() {
        t.file(&format!("bad{i}.yaml"), manifest);
        let e = t.err(&format!("kubectl apply -f bad{i}.yaml"));
        assert!(e.contains(want), "{want}\nin\n{e}");
        assert!(e.starts_with("The Job \"ix\" is invalid: "), "{e}");
    }
}
