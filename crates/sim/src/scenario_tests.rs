use super::*;

const EXAMPLE: &str = r#"apiVersion: kubeloop.dev/v1alpha1
kind: Scenario
metadata:
  name: nginx-rollout
  annotations:
    kubeloop.dev/description: Three nginx replicas roll out, then one node fails.
spec:
  seed: 42
  nodes:
  - name: node-1
    capacity: {cpu: "4", memory: 8Gi, pods: "110"}
    labels: {topology.kubernetes.io/zone: zone-a}
    taints: [{key: dedicated, value: db, effect: NoSchedule}]
    images: [{names: ["docker.io/library/nginx:1.27"], sizeBytes: 72000000}]
  schedulerConfiguration: {}
  files:
    nginx-deploy.yaml: |
      apiVersion: apps/v1
      kind: Deployment
  steps:
  - at: 0s
    run: kubectl apply -f nginx-deploy.yaml
  - at: 30s
    run: kubectl get pods -o wide
"#;

fn errors(text: &str) -> Vec<String> {
    match parse_scenario(text) {
        Ok(s) => panic!("expected errors, parsed {s:?}"),
        Err(es) => es.iter().map(|e| e.to_string()).collect(),
    }
}

const HEAD: &str = "apiVersion: kubeloop.dev/v1alpha1\nkind: Scenario\n";

#[test]
fn the_design_example_parses() {
    let s = parse_scenario(EXAMPLE).unwrap();
    assert_eq!(s.metadata.name, "nginx-rollout");
    assert_eq!(
        s.metadata.annotations["kubeloop.dev/description"],
        "Three nginx replicas roll out, then one node fails."
    );
    assert_eq!(s.spec.seed, 42);
    let nodes = s.nodes();
    assert_eq!(nodes.len(), 1);
    let n = &nodes[0];
    assert_eq!(n.name, "node-1");
    assert_eq!(n.capacity["cpu"], "4");
    assert_eq!(n.allocatable, n.capacity);
    assert_eq!(n.labels["topology.kubernetes.io/zone"], "zone-a");
    assert_eq!(
        n.taints,
        vec![Taint {
            key: "dedicated".into(),
            value: "db".into(),
            effect: TaintEffect::NoSchedule
        }]
    );
    assert_eq!(n.images[0].size_bytes, 72_000_000);
    assert_eq!(s.spec.scheduler_configuration, Some(serde_json::json!({})));
    assert!(s.spec.files["nginx-deploy.yaml"].starts_with("apiVersion: apps/v1\n"));
    assert_eq!(s.spec.steps.len(), 2);
    assert_eq!(s.spec.steps[1].at_ms, 30_000);
    assert_eq!(s.spec.proxy_mode, ProxyMode::Iptables);
    assert!(s.spec.scheduling_annotations);
}

#[test]
fn without_nodes_there_are_three_default_nodes() {
    let s = parse_scenario(HEAD).unwrap();
    assert_eq!(s.spec.seed, 1);
    let nodes = s.nodes();
    assert_eq!(
        nodes.iter().map(|n| n.name.as_str()).collect::<Vec<_>>(),
        vec!["node-1", "node-2", "node-3"]
    );
    for n in &nodes {
        assert_eq!(n.capacity["cpu"], "4");
        assert_eq!(n.capacity["memory"], "8Gi");
        assert_eq!(n.capacity["pods"], "110");
        assert_eq!(n.allocatable, n.capacity);
    }
    let empty_list = parse_scenario(&format!("{HEAD}spec:\n  nodes: []\n")).unwrap();
    assert_eq!(empty_list.nodes().len(), 3);
}

#[test]
fn name_prefix_and_count_expand() {
    let text = format!(
        "{HEAD}spec:\n  nodes:\n  - namePrefix: node-\n    count: 100\n    capacity: {{cpu: 8}}\n    allocatable: {{cpu: 7500m}}\n  - name: big\n    unschedulable: true\n"
    );
    let s = parse_scenario(&text).unwrap();
    let nodes = s.nodes();
    assert_eq!(nodes.len(), 101);
    assert_eq!(nodes[0].name, "node-1");
    assert_eq!(nodes[99].name, "node-100");
    assert_eq!(nodes[0].capacity["cpu"], "8");
    assert_eq!(nodes[0].capacity["memory"], "8Gi");
    assert_eq!(nodes[0].allocatable["cpu"], "7500m");
    assert_eq!(nodes[0].allocatable["memory"], "8Gi");
    assert_eq!(nodes[100].name, "big");
    assert!(nodes[100].unschedulable);
    assert!(!nodes[0].unschedulable);
}

#[test]
fn steps_run_by_time_with_ties_in_file_order() {
    let text = format!(
        "{HEAD}spec:\n  steps:\n  - {{at: 1m, run: c}}\n  - {{at: 30s, run: a}}\n  - {{at: 1m, run: d}}\n  - {{run: first}}\n  - {{at: 30s, run: b}}\n  - {{at: 500ms, run: half}}\n"
    );
    let s = parse_scenario(&text).unwrap();
    let order: Vec<&str> = s.spec.steps.iter().map(|s| s.run.as_str()).collect();
    assert_eq!(order, vec!["c", "a", "d", "first", "b", "half"]);
    let run: Vec<String> = steps_in_order(&s).into_iter().map(|s| s.run).collect();
    assert_eq!(run, vec!["first", "half", "a", "b", "c", "d"]);
    assert_eq!(s.last_step_ms(), 60_000);
    assert_eq!(s.spec.steps[3].at, "0s");
}

#[test]
fn unknown_fields_are_reported_at_their_keys() {
    let text = format!("{HEAD}metadata:\n  nam: x\nspec:\n  sede: 4\n  nodes:\n  - name: a\n    capacty: {{}}\n  steps:\n  - at: 1s\n    run: x\n    expect: y\n");
    assert_eq!(
        errors(&text),
        vec![
            "4:3: unknown field \"metadata.nam\"",
            "6:3: unknown field \"spec.sede\"",
            "9:5: unknown field \"spec.nodes[0].capacty\"",
            "13:5: unknown field \"spec.steps[0].expect\"",
        ]
    );
}

#[test]
fn every_problem_is_listed_with_its_place() {
    let text = "\
apiVersion: kubeloop.dev/v1
kind: Scenario
spec:
  seed: -3
  nodes:
  - name: node-1
  - namePrefix: node-
    count: 2
  - namePrefix: extra-
  - name: zero
    count: 0
  - namePrefix: w-
    count: 0
  - capacity: {cpu: 4x, memory: -1Gi, gpu: 1, nvidia.com/gpu: 1}
    taints: [{key: a, effect: NoScheduel}, {value: v}]
  steps:
  - at: 3x
    run: kubectl get pods
  - at: 10s
  - at: -5s
    run: ''
  proxyMode: kernelspace
  startTime: yesterday
";
    assert_eq!(
        errors(text),
        vec![
            "1:13: apiVersion: Unsupported value: \"kubeloop.dev/v1\": supported values: \"kubeloop.dev/v1alpha1\"",
            "4:9: spec.seed: Invalid value: -3: must be greater than or equal to 0",
            "7:17: spec.nodes[1].namePrefix: Duplicate value: \"node-1\"",
            "9:5: spec.nodes[2].count: Required value: required when namePrefix is set",
            "11:5: spec.nodes[3].count: Forbidden: may only be set with namePrefix",
            "13:12: spec.nodes[4].count: Invalid value: 0: must be greater than or equal to 1",
            "14:5: spec.nodes[5].name: Required value: set name, or namePrefix and count",
            "14:21: spec.nodes[5].capacity.cpu: Invalid value: \"4x\": quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
            "14:33: spec.nodes[5].capacity.memory: Invalid value: \"-1Gi\": must be greater than or equal to 0",
            "14:39: spec.nodes[5].capacity.gpu: Invalid value: \"gpu\": must be a standard resource type or fully qualified",
            "15:31: spec.nodes[5].taints[0].effect: Unsupported value: \"NoScheduel\": supported values: \"NoExecute\", \"NoSchedule\", \"PreferNoSchedule\"",
            "15:44: spec.nodes[5].taints[1].key: Required value",
            "15:44: spec.nodes[5].taints[1].effect: Required value",
            "17:9: spec.steps[0].at: Invalid value: \"3x\": time: invalid duration \"3x\"",
            "19:5: spec.steps[1].run: Required value: the command line to run",
            "20:9: spec.steps[2].at: Invalid value: \"-5s\": must not be negative",
            "21:5: spec.steps[2].run: Required value: the command line to run",
            "22:14: spec.proxyMode: Unsupported value: \"kernelspace\": supported values: \"iptables\", \"ipvs\", \"nftables\"",
            "23:14: spec.startTime: Invalid value: \"yesterday\": must be an RFC 3339 timestamp such as 2026-01-01T00:00:00Z",
        ]
    );
}

#[test]
fn wrong_types_are_reported_at_their_values() {
    let text = format!(
        "{HEAD}spec:\n  seed: abc\n  nodes: {{name: a}}\n  files:\n    a.yaml:\n      kind: Pod\n  steps:\n  - at: [1]\n    run: 5\n  schedulingAnnotations: maybe\n"
    );
    assert_eq!(
        errors(&text),
        vec![
            "4:9: spec.seed: Invalid value: \"abc\": must be an integer, not a string",
            "5:10: spec.nodes: Invalid value: {...}: must be a list, not a mapping",
            "8:7: spec.files[a.yaml]: Invalid value: {...}: must be a string (the file's contents: write them as a block scalar, `name: |`), not a mapping",
            "10:9: spec.steps[0].at: Invalid value: [...]: must be a duration such as 90s or 2m30s, not a list",
            "11:10: spec.steps[0].run: Invalid value: 5: must be a string, not a number",
            "12:26: spec.schedulingAnnotations: Invalid value: \"maybe\": must be a boolean (true or false), not a string",
        ]
    );
}

#[test]
fn missing_header_and_bad_names() {
    assert_eq!(
        errors("spec:\n  nodes:\n  - name: Node_1\n"),
        vec![
            "1:1: apiVersion: Required value: must be \"kubeloop.dev/v1alpha1\"",
            "1:1: kind: Required value: must be \"Scenario\"",
            "3:11: spec.nodes[0].name: Invalid value: \"Node_1\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
        ]
    );
    assert_eq!(
        errors("- a\n"),
        vec!["1:1: : Invalid value: [...]: a scenario must be a mapping"]
    );
    assert_eq!(
        errors(""),
        vec![
            "1:1: apiVersion: Required value: must be \"kubeloop.dev/v1alpha1\"",
            "1:1: kind: Required value: must be \"Scenario\"",
        ]
    );
}

#[test]
fn too_many_nodes_is_an_error_not_an_allocation() {
    let text = format!(
        "{HEAD}spec:\n  nodes:\n  - {{namePrefix: a-, count: 4000}}\n  - {{namePrefix: b-, count: 4000}}\n  - {{namePrefix: c-, count: 4000000000}}\n"
    );
    assert_eq!(
        errors(&text),
        vec![
            "4:3: spec.nodes: Too many: 8000: must have at most 5000 nodes",
            "7:29: spec.nodes[2].count: Invalid value: 4000000000: must be less than or equal to 5000",
        ]
    );
}

#[test]
fn syntax_errors_are_located() {
    assert_eq!(
        errors("apiVersion: kubeloop.dev/v1alpha1\nkind: Scenario\nspec:\n  seed: 1: 2\n"),
        vec!["4:10: yaml: mapping values are not allowed in this context"]
    );
    assert_eq!(
        errors("spec:\n  seed: 1\n nodes: []\n"),
        vec!["3:2: yaml: did not find expected key (while parsing a block mapping at 1:1)"]
    );
    assert_eq!(
        errors(&format!("{HEAD}spec:\n  seed: 1\n  seed: 2\n")),
        vec!["5:3: yaml: spec: mapping key \"seed\" already defined"]
    );
    assert_eq!(
        errors(&format!("{HEAD}---\napiVersion: v1\n")),
        vec!["4:1: a scenario is a single YAML document: remove the second one"]
    );
    // A trailing empty document is harmless.
    assert!(parse_scenario(&format!("{HEAD}---\n")).is_ok());
}

#[test]
fn json_is_accepted() {
    let text = "{\n\t\"apiVersion\": \"kubeloop.dev/v1alpha1\",\n\t\"kind\": \"Scenario\",\n\t\"spec\": {\"seed\": 7, \"nodes\": [{\"namePrefix\": \"n\", \"count\": 2}], \"steps\": [{\"at\": \"1s\", \"run\": \"kubectl get nodes\"}], \"bogus\": 1}\n}\n";
    assert_eq!(errors(text), vec!["4:119: unknown field \"spec.bogus\""]);
    let s = parse_scenario(&text.replace(", \"bogus\": 1", "")).unwrap();
    assert_eq!(s.spec.seed, 7);
    assert_eq!(s.nodes()[1].name, "n2");
}

#[test]
fn a_step_naming_a_missing_file_is_fine() {
    let s = parse_scenario(&format!(
        "{HEAD}spec:\n  steps:\n  - {{at: 0s, run: kubectl apply -f nope.yaml}}\n"
    ))
    .unwrap();
    assert_eq!(s.spec.steps.len(), 1);
}

#[test]
fn extension_fields_parse() {
    let s = parse_scenario(&format!(
        "{HEAD}spec:\n  proxyMode: ipvs\n  schedulingAnnotations: false\n  startTime: 2025-06-01T12:00:00Z\n  until: 5m\n"
    ))
    .unwrap();
    assert_eq!(s.spec.proxy_mode, ProxyMode::Ipvs);
    assert!(!s.spec.scheduling_annotations);
    assert_eq!(s.spec.start_time.as_deref(), Some("2025-06-01T12:00:00Z"));
    assert_eq!(s.until_ms(), Some(300_000));
}

#[test]
fn to_yaml_round_trips() {
    for text in [
        EXAMPLE.to_string(),
        HEAD.to_string(),
        format!("{HEAD}spec:\n  nodes:\n  - {{namePrefix: w-, count: 3, allocatable: {{cpu: 3}}, unschedulable: true}}\n  proxyMode: ipvs\n  schedulingAnnotations: false\n  until: 90s\n  steps:\n  - run: |\n      echo multi\n      line\n"),
    ] {
        let s = parse_scenario(&text).unwrap();
        let yaml = to_yaml(&s);
        let again = parse_scenario(&yaml).unwrap_or_else(|e| panic!("{yaml}\n{e:?}"));
        assert_eq!(again, s, "{yaml}");
        let json = s.to_json();
        assert_eq!(parse_scenario(&json).unwrap(), s, "{json}");
    }
    let yaml = parse_scenario(HEAD).unwrap().to_yaml();
    assert_eq!(
        yaml,
        "apiVersion: kubeloop.dev/v1alpha1\nkind: Scenario\nmetadata: {}\nspec:\n  seed: 1\n"
    );
}

#[test]
fn quantities_parse_like_kubernetes() {
    let ok = [
        ("4", 4000),
        ("500m", 500),
        ("0.5", 500),
        ("1.5", 1500),
        ("8Gi", 8 * 1024 * 1024 * 1024 * 1000),
        ("1k", 1_000_000),
        ("1e3", 1_000_000),
        ("1n", 1),
        ("+2", 2000),
        ("-1", -1000),
        (".5", 500),
        ("0", 0),
    ];
    for (q, milli) in ok {
        assert_eq!(parse_quantity_milli(q), Ok(milli), "{q}");
    }
    for bad in ["", "abc", "4x", "1.2.3", "4mm", "Gi", "1e", "1 Gi"] {
        assert!(parse_quantity_milli(bad).is_err(), "{bad}");
    }
    assert!(parse_quantity_milli("99999999999999999999999999999999999999999E").is_err());
    assert!(parse_quantity_milli("1e99999").is_err());
}

/// kube-scheduler refuses to start with an invalid KubeSchedulerConfiguration, with its
/// own messages; a scenario carrying one is refused at the field, before anything runs.
#[test]
fn invalid_scheduler_configurations_are_refused_with_kube_schedulers_errors() {
    let cfg = |body: &str| {
        errors(&format!(
            "{HEAD}spec:\n  schedulerConfiguration:\n    apiVersion: kubescheduler.config.k8s.io/v1\n    kind: KubeSchedulerConfiguration\n    {body}\n"
        ))
    };
    let prefix =
        "4:3: initializing profiles: creating profile for scheduler name default-scheduler: ";
    assert_eq!(
        cfg("profiles: [{plugins: {score: {enabled: [{name: NoSuchPlugin}]}}}]"),
        vec![format!(
            "{prefix}ScorePlugin \"NoSuchPlugin\" does not exist"
        )]
    );
    assert_eq!(
        cfg("profiles: [{plugins: {bind: {disabled: [{name: \"*\"}]}}}]"),
        vec![format!("{prefix}at least one bind plugin is needed for profile with scheduler name \"default-scheduler\"")]
    );
    assert_eq!(
        cfg("profiles: [{pluginConfig: [{name: NodeResourcesFit, args: {scoringStrategy: {type: LeastAllocated, resources: [{name: cpu, weight: 101}]}}}]}]"),
        vec![format!("{prefix}initializing plugin \"NodeResourcesFit\": scoringStrategy.resources[0].weight: Invalid value: 101: resource weight of cpu not in valid range (0, 100]")]
    );
    assert_eq!(
        cfg("percentageOfNodesToScore: 120"),
        vec!["4:3: percentageOfNodesToScore: Invalid value: 120: not in valid range [0-100]"]
    );
    // A negative Score weight makes Go's overflow check wrap and fail; never a panic.
    assert_eq!(
        cfg("profiles: [{plugins: {score: {enabled: [{name: TaintToleration, weight: -1}]}}}]"),
        vec![format!(
            "{prefix}total score of Score plugins could overflow"
        )]
    );
    assert!(parse_scenario(&format!(
        "{HEAD}spec:\n  schedulerConfiguration:\n    profiles: [{{plugins: {{score: {{disabled: [{{name: ImageLocality}}]}}}}}}]\n"
    ))
    .is_ok());
}
