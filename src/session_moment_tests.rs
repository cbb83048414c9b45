//! Tests of viewing a past moment: the same world as running to it, in slices, and back.

use super::*;
use crate::examples::default_scenario;
use wasm_bindgen_test::wasm_bindgen_test;

fn text(s: &Session) -> String {
    s.terminal()
        .lines()
        .map(|l| l.text.clone())
        .collect::<Vec<_>>()
        .join("\n")
}

/// Runs the moment's replay in small slices, as the frame loop does.
fn replay_in_slices(s: &mut Session) -> usize {
    let mut slices = 0;
    while s.replaying().is_some() {
        let mut looks = 0;
        s.advance_within(16, &mut || {
            looks += 1;
            looks > 2
        });
        slices += 1;
        assert!(slices < 1_000_000, "the replay makes progress");
    }
    slices
}

fn user_pods(s: &mut Session) -> usize {
    s.view()
        .nodes
        .iter()
        .flat_map(|n| &n.pods)
        .filter(|p| p.namespace == "default")
        .count()
}

/// A learner's session: a watch, Apply beside it, Ctrl-C, an edit and a second apply.
/// Returns the session at t=15s with the hashes and terminal texts it had at 3s and 10s.
fn lived() -> (Session, [(u64, String); 2]) {
    let mut s = Session::new(default_scenario());
    s.submit("kubectl get pods -w");
    s.advance(500);
    s.run_button("kubectl apply -f nginx-deploy.yaml");
    s.advance(2_500);
    let at3 = (s.world().log_hash(), text(&s));
    s.advance(200);
    s.interrupt();
    let five = s
        .file("nginx-deploy.yaml")
        .unwrap_or_default()
        .replace("replicas: 3", "replicas: 5");
    s.set_file("nginx-deploy.yaml", &five);
    s.advance(800);
    s.submit("kubectl apply -f nginx-deploy.yaml");
    s.advance(6_000);
    let at10 = (s.world().log_hash(), text(&s));
    s.advance(5_000);
    (s, [at3, at10])
}

#[wasm_bindgen_test(unsupported = test)]
fn should_show_a_past_moment_with_the_world_it_had_then() {
    let (mut s, [at3, at10]) = lived();
    let live_hash = s.world().log_hash();
    let live_pods = user_pods(&mut s);
    assert_eq!(live_pods, 5, "the second apply scaled to five");
    s.view_moment(3_000);
    assert_eq!(s.moment(), Some(3_000));
    let slices = replay_in_slices(&mut s);
    assert!(slices > 5, "rebuilt in slices: {slices}");
    assert_eq!(s.world().now(), 3_000);
    assert_eq!(
        s.world().log_hash(),
        at3.0,
        "the same events as the live run had"
    );
    assert_eq!(text(&s), at3.1, "the terminal's scrollback of that moment");
    assert_eq!(user_pods(&mut s), 3, "before the edit: three replicas");
    assert_eq!(s.live_now(), 15_000);
    // Forward from the moment shown: goes on from it.
    s.view_moment(10_000);
    replay_in_slices(&mut s);
    assert_eq!(s.world().log_hash(), at10.0);
    assert_eq!(text(&s), at10.1);
    // Back to an earlier moment: rebuilt from the seed.
    s.view_moment(3_000);
    replay_in_slices(&mut s);
    assert_eq!(s.world().log_hash(), at3.0);
    s.back_to_live();
    assert_eq!(s.moment(), None);
    assert_eq!(s.world().now(), 15_000);
    assert_eq!(s.world().log_hash(), live_hash);
    assert_eq!(user_pods(&mut s), live_pods);
}

#[wasm_bindgen_test(unsupported = test)]
fn should_play_a_moment_on_to_the_live_time_and_hand_back() {
    let (mut s, _) = lived();
    let live_hash = s.world().log_hash();
    let scenario = s.scenario().clone();
    s.view_moment(10_000);
    replay_in_slices(&mut s);
    s.submit("kubectl delete deployment nginx");
    assert!(text(&s).contains("go back to live to run commands"));
    s.run_button("kubectl delete deployment nginx");
    assert_eq!(s.scenario(), &scenario, "nothing recorded while viewing");
    let mut played = 0;
    while s.moment().is_some() {
        played += s.advance_within(100, &mut || false);
        assert!(played <= 5_000, "playback stops at the live time");
    }
    assert_eq!(played, 5_000);
    assert_eq!(s.world().now(), 15_000);
    assert_eq!(
        s.world().log_hash(),
        live_hash,
        "playback retraced the live run"
    );
    assert!(s.traffic().total() > 0, "played messages became dots");
    s.submit("kubectl get deploy");
    assert!(!text(&s).ends_with("go back to live to run commands)"));
}

#[wasm_bindgen_test(unsupported = test)]
fn should_keep_the_timeline_of_the_live_run_while_a_moment_is_shown() {
    let (mut s, _) = lived();
    let entries = s.timeline().len();
    assert!(entries > 100, "{entries}");
    assert!(s
        .timeline()
        .entries()
        .any(|e| e.label == "POST /apis/apps/v1/namespaces/default/deployments"));
    s.view_moment(2_000);
    replay_in_slices(&mut s);
    assert_eq!(s.timeline().len(), entries, "the live run's list, whole");
    assert!(
        s.saved_yaml().contains("until: 15s"),
        "saving keeps the live time"
    );
    let pod = s
        .view()
        .nodes
        .iter()
        .flat_map(|n| &n.pods)
        .find(|p| p.namespace == "default")
        .map(|p| format!("{}/{}", p.namespace, p.name))
        .expect("a pod at 2s");
    let trace = s.pod_trace(&pod).expect("a trace of the pod shown");
    assert!(trace.steps[4].at.is_some_and(|t| t <= 2_000), "{trace:?}");
    assert!(s.rollout_trace("default/nginx").is_some());
}

#[wasm_bindgen_test(unsupported = test)]
fn should_see_a_burst_coming_and_going() {
    let mut s = Session::new(default_scenario());
    s.advance(20 * SECOND);
    assert!(!s.burst(), "only heartbeats once the add-ons are up");
    s.run_button("kubectl apply -f nginx-deploy.yaml");
    s.advance(5);
    assert!(s.burst(), "the apply's chain is a burst");
    s.advance(30 * SECOND);
    assert!(!s.burst());
    s.view_moment(20 * SECOND - 20);
    replay_in_slices(&mut s);
    assert!(s.burst(), "a moment sees the burst coming");
}
