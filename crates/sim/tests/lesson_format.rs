//! `spec.lesson` (design §6.20): an invalid step or check is refused like any invalid
//! scenario, every problem located; a valid lesson survives a share link's round trip.

use kubeloop_sim::lesson::Check;
use kubeloop_sim::scenario::{parse_scenario, Scenario};

fn lesson(body: &str) -> String {
    format!(
        "apiVersion: kubeloop.dev/v1alpha1\nkind: Scenario\nmetadata:\n  name: l\nspec:\n  lesson:\n{body}"
    )
}

fn errors(body: &str) -> Vec<String> {
    parse_scenario(&lesson(body))
        .map(|_| Vec::new())
        .unwrap_or_else(|errs| errs.iter().map(|e| e.to_string()).collect())
}

const GOOD: &str = "    title: {en: Pods, zh: Pod}
    steps:
    - title: Apply
      text: {en: Apply it., zh: 应用它。}
      hints: [Use kubectl apply.]
      solution: {en: \"```sh\\nkubectl apply -f a.yaml\\n```\"}
      check:
        all:
        - podsReady: {selector: app=web, count: 3}
        - not: {component: {name: kube-scheduler, running: false}}
        - exists: {kind: deploy, name: web, jsonpath: '{.spec.replicas}', equals: '3'}
        - any:
          - event: {reason: Scheduled, kind: Pod, name: web}
          - command: {run: kubectl get pods, output: Running, exitCode: 0}
          - curl: {url: 'http://web', succeeds: false}
";

#[test]
fn a_valid_lesson_parses_and_round_trips() {
    let sc = parse_scenario(&lesson(GOOD)).expect("valid");
    let l = sc.spec.lesson.clone().expect("lesson");
    assert_eq!((l.title.en.as_str(), l.title.zh.as_str()), ("Pods", "Pod"));
    let step = &l.steps[0];
    // A plain string is both languages; a missing zh falls back to en.
    assert_eq!(step.title.zh, "Apply");
    assert_eq!(
        step.solution.as_ref().unwrap().zh,
        step.solution.as_ref().unwrap().en
    );
    assert_eq!(step.solution_commands(), vec!["kubectl apply -f a.yaml"]);
    let Check::All(parts) = &step.check else {
        panic!("{:?}", step.check)
    };
    assert_eq!(parts.len(), 4);
    let again: Scenario = parse_scenario(&sc.to_yaml()).expect("its own YAML parses");
    assert_eq!(again.spec.lesson, sc.spec.lesson);
}

#[test]
fn a_lesson_without_steps_or_title_is_refused_with_located_errors() {
    let errs = errors("    steps: []\n");
    assert_eq!(
        errs,
        vec![
            "6:3: spec.lesson.title: Required value",
            "7:5: spec.lesson.steps: Required value: a lesson has at least one step",
        ],
        "{errs:?}"
    );
}

#[test]
fn bad_checks_are_each_located() {
    let errs = errors(
        "    title: T
    steps:
    - title: A
      text: B
      check: {podsReady: {selector: 'app in (web'}}
    - title: A
      text: B
      check: {component: {name: kube-sheduler}}
    - title: A
      text: B
      check: {command: {run: kubectl get, output: '(unclosed'}}
    - title: A
      text: B
      check: {podsReady: {selector: app=web}, event: {reason: X}}
    - title: A
      text: B
      check: {exist: {kind: Pod}}
    - title: A
      check: {component: {name: kubelet}}
",
    );
    let want = [
        "11:37: spec.lesson.steps[0].check.podsReady.selector: Invalid value: \"app in (web\": unable to parse requirement",
        "14:33: spec.lesson.steps[1].check.component.name: Unsupported value: \"kube-sheduler\": supported values: \"etcd\"",
        "17:51: spec.lesson.steps[2].check.command.output: Invalid value: \"(unclosed\": not a regular expression",
        "20:15: spec.lesson.steps[3].check: Invalid value: a check has one condition, not both event and podsReady: combine them with all",
        "23:7: spec.lesson.steps[4].check: Required value: one of exists, podsReady, event",
        "23:15: unknown field \"spec.lesson.steps[4].check.exist\"",
        "24:7: spec.lesson.steps[5].text: Required value",
        "25:15: spec.lesson.steps[5].check.component.node: Required value: kubelet runs on a node",
    ];
    for w in want {
        assert!(
            errs.iter().any(|e| e.starts_with(w)),
            "missing {w:?} in {errs:#?}"
        );
    }
    assert_eq!(errs.len(), want.len(), "{errs:#?}");
}

#[test]
fn an_unknown_lesson_field_is_refused() {
    let errs = errors(&GOOD.replace("    title: {en: Pods, zh: Pod}", "    titel: Pods"));
    assert!(
        errs.iter()
            .any(|e| e.contains("unknown field \"spec.lesson.titel\"")),
        "{errs:?}"
    );
    assert!(errs
        .iter()
        .any(|e| e.contains("spec.lesson.title: Required value")));
}
