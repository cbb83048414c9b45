//! Issue 13: what asks for more than the envelope is refused up front, naming the limit,
//! and every synchronous run stops at its event budget instead of freezing.

use kubeloop_sim::cmd;
use kubeloop_sim::runner;
use kubeloop_sim::scenario::parse_scenario;
use kubeloop_sim::time::SECOND;

mod common;
use common::Term;

#[test]
fn sim_advance_past_a_day_is_refused_and_changes_nothing() {
    let mut t = Term::new();
    let before = t.w.now();
    assert_eq!(
        t.err("sim advance 2562047h"),
        "sim: cannot advance 2562047h0m0s: at most 24h0m0s at a time (kubeloop's envelope)\n"
    );
    assert_eq!(t.w.now(), before);
}

#[test]
fn sim_advance_stops_at_its_event_budget_and_says_how_far_it_got() {
    let mut t = Term::new();
    let out = cmd::sim::advance(&mut t.w, 3_600 * SECOND, 1_000);
    assert_eq!(out.exit_code, 0);
    let now = t.w.now();
    assert!(now < 3_600 * SECOND, "{now}");
    let reached = kubeloop_sim::time::format_duration(now);
    assert_eq!(out.stdout, format!("advanced {reached} to t={reached}\n"));
    assert_eq!(
        out.stderr,
        format!("sim: stopped at t={reached} after 1000 events, the most one run may deliver (kubeloop's envelope, docs/design.md §6.7)\n")
    );
    // The world goes on from where it stopped.
    assert_eq!(
        t.ok("sim advance 1s"),
        format!(
            "advanced 1s to t={}\n",
            kubeloop_sim::time::format_duration(now + SECOND)
        )
    );
}

/// The caller's budget reaches `sim advance` (the page gives it less than the CLI; a
/// fuzzed `sim advance 2110s` after stopping the controllers ran 39 s on the CLI's).
#[test]
fn sim_advance_typed_in_a_terminal_keeps_to_the_callers_budget() {
    let mut t = Term::new();
    let out = cmd::run_within(&mut t.w, "sim advance 1h", &t.files, 300 * SECOND, 500);
    assert!(t.w.now() < 3_600 * SECOND, "{}", t.w.now());
    assert!(
        out.stderr
            .contains("after 500 events, the most one run may deliver"),
        "{out:?}"
    );
    let started = cmd::start_within(&mut t.w, "sim advance 1h", &t.files, 700);
    let cmd::Started::Done(out) = started else {
        panic!("sim advance returns at once");
    };
    assert!(out.stderr.contains("after 700 events"), "{out:?}");
}

#[test]
fn a_command_that_spends_its_budget_is_interrupted_with_a_note() {
    let mut t = Term::new();
    t.ok("kubectl apply -f nginx.yaml");
    let out = cmd::run_within(
        &mut t.w,
        "kubectl rollout status deployment/nginx",
        &t.files,
        300 * SECOND,
        10,
    );
    assert_eq!(out.exit_code, 130);
    assert!(
        out.stderr.ends_with("after 10 events, the most one run may deliver (kubeloop's envelope, docs/design.md §6.7)\n"),
        "{out:?}"
    );
}

const SCENARIO: &str = "apiVersion: kubeloop.dev/v1alpha1
kind: Scenario
spec:
  files:
    nginx.yaml: |
      apiVersion: v1
      kind: ConfigMap
      metadata: {name: c}
  steps:
  - at: 0s
    run: kubectl apply -f nginx.yaml
  - at: 10m
    run: kubectl get configmap c
";

#[test]
fn a_scenario_run_stops_at_its_budget_and_skips_the_later_steps() {
    let sc = parse_scenario(SCENARIO).unwrap();
    let run = runner::run_within(&sc, None, 1_000);
    assert_eq!(run.results.len(), 1);
    assert_eq!(run.results[0].stdout, "configmap/c created\n");
    let why = run.stopped.expect("stopped");
    assert!(why.ends_with("after 1000 events, the most one run may deliver (kubeloop's envelope, docs/design.md §6.7)"), "{why}");
    let full = runner::run_within(&sc, None, u64::MAX);
    assert_eq!(full.results.len(), 2);
    assert!(full.stopped.is_none());
}

#[test]
fn scenario_durations_past_a_day_are_located_errors() {
    let text = SCENARIO.replace("at: 10m", "at: 2562047h") + "  until: 1000000h\n";
    let errors: Vec<String> = parse_scenario(&text)
        .unwrap_err()
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(
        errors,
        [
            "12:9: spec.steps[1].at: Invalid value: \"2562047h\": must be at most 24h0m0s (the longest run kubeloop simulates)",
            "14:10: spec.until: Invalid value: \"1000000h\": must be at most 24h0m0s (the longest run kubeloop simulates)",
        ]
    );
}

#[test]
fn a_scenario_past_the_size_limit_is_refused_before_it_is_parsed() {
    let text = format!("{SCENARIO}# {}\n", "x".repeat(1 << 20));
    let errors = parse_scenario(&text).unwrap_err();
    assert_eq!(
        errors[0].to_string(),
        format!(
            "1:1: the scenario is {} bytes: at most 1048576 (1 MiB, kubeloop's envelope)",
            text.len()
        )
    );
}

#[test]
fn too_many_steps_are_refused() {
    let mut text = SCENARIO.to_string();
    for _ in 0..10_001 {
        text.push_str("  - run: kubectl get pods\n");
    }
    let errors = parse_scenario(&text).unwrap_err();
    assert_eq!(
        errors.iter().map(ToString::to_string).collect::<Vec<_>>(),
        ["9:3: spec.steps: Too many: 10003: must have at most 10000 steps"]
    );
}

const BIG_RS: &str = "apiVersion: apps/v1
kind: ReplicaSet
metadata:
  name: big
spec:
  replicas: 2147483647
  selector:
    matchLabels: {app: big}
  template:
    metadata:
      labels: {app: big}
    spec:
      containers:
      - name: c
        image: nginx:1.27
";

/// Issue 13: `replicas: 2147483647` made the controllers create pods until the run hung.
#[test]
fn a_workload_asking_for_more_pods_than_the_envelope_is_refused_up_front() {
    let mut t = Term::new();
    t.file("rs.yaml", BIG_RS);
    assert_eq!(
        t.err("kubectl apply -f rs.yaml"),
        "Error from server (Forbidden): error when creating \"rs.yaml\": replicasets.apps \"big\" is forbidden: spec.replicas: 2147483647 is more pods than kubeloop simulates (at most 20000 in the cluster)\n"
    );
    t.file("rs.yaml", &BIG_RS.replace("2147483647", "1"));
    t.ok("kubectl apply -f rs.yaml");
    assert_eq!(
        t.err("kubectl scale rs big --replicas=20001"),
        "Error from server (Forbidden): replicasets.apps \"big\" is forbidden: spec.replicas: 20001 is more pods than kubeloop simulates (at most 20000 in the cluster)\n"
    );
    t.ok("kubectl scale rs big --replicas=2");
}

/// Issue 13: `sim node add UPPER` printed `node UPPER added` though the kubelet's
/// registration was refused and the node never appeared.
#[test]
fn sim_node_add_refuses_what_the_apiserver_would_not_register() {
    let mut t = Term::new();
    assert_eq!(
        t.err("sim node add UPPER"),
        "sim: The Node \"UPPER\" is invalid: metadata.name: Invalid value: \"UPPER\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')\n"
    );
    assert_eq!(
        t.err("sim node add node-9 --cpu -4"),
        "sim: The Node \"node-9\" is invalid: [status.capacity.cpu: Invalid value: \"-4\": must be greater than or equal to 0, status.allocatable.cpu: Invalid value: \"-4\": must be greater than or equal to 0]\n"
    );
    let e = t.err("sim node add node-9 --label UP/x=1");
    assert!(e.starts_with("sim: The Node \"node-9\" is invalid: metadata.labels: Invalid value: \"UP/x\": prefix part a lowercase RFC 1123 subdomain"), "{e}");
    assert_eq!(
        t.err("kubectl get node node-9"),
        "Error from server (NotFound): nodes \"node-9\" not found\n"
    );
    assert_eq!(
        t.ok("sim node add node-9 --label tier=web"),
        "node node-9 added\n"
    );
}

#[test]
fn scenario_node_names_labels_and_taints_must_register() {
    let prefix = "n".repeat(250);
    let text = format!(
        "apiVersion: kubeloop.dev/v1alpha1
kind: Scenario
spec:
  nodes:
  - namePrefix: {prefix}
    count: 1000
  - name: ok
    labels: {{UP/x: a}}
    taints: [{{key: bad key, effect: NoSchedule}}]
"
    );
    let errors: Vec<String> = parse_scenario(&text)
        .unwrap_err()
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(errors.len(), 3, "{errors:#?}");
    assert_eq!(
        errors[0],
        format!("5:17: spec.nodes[0].namePrefix: Invalid value: \"{prefix}\": the node name \"{prefix}1000\" it makes must be no more than 253 characters")
    );
    assert!(errors[1].starts_with("8:5: spec.nodes[1].labels: Invalid value: \"UP/x\": prefix part a lowercase RFC 1123 subdomain"), "{}", errors[1]);
    assert!(errors[2].starts_with("9:20: spec.nodes[1].taints[0].key: Invalid value: \"bad key\": name part must consist of alphanumeric characters"), "{}", errors[2]);
}
