//! Tests of the session's lesson: steps complete as the learner types and the world
//! changes, a failing check says why, a reload keeps the learner's commands, and starting
//! again starts from the gallery's lesson.

use super::*;
use crate::examples;
use kubeloop_sim::scenario::parse_scenario;
use wasm_bindgen_test::wasm_bindgen_test;

fn open(id: &str) -> Session {
    Session::new(examples::scenario(
        examples::lesson(id).expect("a gallery lesson"),
    ))
}

fn current_check(s: &Session) -> (bool, String) {
    let v = s.lesson_view(false).expect("a lesson");
    let step = v
        .steps
        .iter()
        .find(|st| st.state == crate::lesson_view::StepState::Current)
        .expect("a current step");
    step.check.clone().expect("the current step is checked")
}

fn progress(s: &Session) -> usize {
    s.lesson_progress().expect("a lesson").1
}

#[wasm_bindgen_test(unsupported = test)]
fn should_complete_a_step_when_its_check_holds() {
    let mut s = open("lesson-self-healing");
    s.check_lesson();
    assert_eq!(progress(&s), 0);
    assert!(current_check(&s)
        .1
        .starts_with("0 of 3 pods app=web are Ready"));
    s.submit("kubectl apply -f web.yaml");
    s.advance(30 * SECOND);
    assert!(s.check_lesson(), "step 1 completes");
    assert_eq!(progress(&s), 1);
    assert_eq!(
        current_check(&s),
        (
            false,
            "run `kubectl delete pod …` (not run in this step yet)".to_string()
        )
    );
    // In 简体中文 the reason is Chinese.
    let zh = s.lesson_view(true).unwrap();
    assert_eq!(zh.title, "自愈");
}

#[wasm_bindgen_test(unsupported = test)]
fn should_not_count_the_lessons_own_steps_as_the_learners() {
    // The scheduler lesson applies fast.yaml itself; its first step wants the learner's
    // `kubectl describe pod`.
    let mut s = open("lesson-scheduler-choice");
    s.advance(30 * SECOND);
    s.check_lesson();
    assert_eq!(progress(&s), 0);
    s.submit("kubectl describe pod -l app=fast");
    s.advance(SECOND);
    assert!(s.check_lesson());
    assert_eq!(progress(&s), 1);
}

#[wasm_bindgen_test(unsupported = test)]
fn should_keep_the_learners_commands_across_a_reload() {
    let mut s = open("lesson-self-healing");
    s.submit("kubectl apply -f web.yaml");
    s.advance(30 * SECOND);
    s.check_lesson();
    s.submit("kubectl delete pod -l app=web");
    s.advance(40 * SECOND);
    s.check_lesson();
    assert_eq!(progress(&s), 2);
    let saved = parse_scenario(&s.saved_yaml()).expect("parses");
    let mut back = Session::new(saved);
    back.fast_forward();
    back.check_lesson();
    assert_eq!(
        progress(&back),
        2,
        "the replayed delete counts as the learner's"
    );
    back.restart_lesson();
    back.check_lesson();
    assert_eq!(progress(&back), 0);
    assert_eq!(
        back.scenario().spec.steps.len(),
        0,
        "the gallery lesson as it is"
    );
}

#[wasm_bindgen_test(unsupported = test)]
fn should_greet_in_the_pages_language_and_keep_it_on_load() {
    let lesson = examples::scenario(examples::lesson("lesson-self-healing").unwrap());
    let mut s = Session::new_in(lesson.clone(), Lang::Zh);
    let first = |s: &Session| s.terminal().lines().next().map(|l| l.text.clone());
    assert_eq!(
        first(&s).as_deref(),
        Some("lesson-self-healing：一个有 3 个工作节点的集群，t=0。输入 help 查看命令。")
    );
    s.load(lesson);
    assert!(first(&s).unwrap().contains("个工作节点"), "{:?}", first(&s));
    assert!(Session::new(examples::default_scenario())
        .terminal()
        .lines()
        .next()
        .unwrap()
        .text
        .ends_with("worker nodes at t=0. Type help for commands."));
}
