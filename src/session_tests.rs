//! Tests of the session: commands, their output, steps at their times, editor errors.

use super::*;
use crate::examples::default_scenario;
use crate::terminal::LineKind;
use kubeloop_sim::scenario::parse_scenario;
use kubeloop_sim::view::{pod_class, PodClass};
use wasm_bindgen_test::wasm_bindgen_test;

fn text(s: &Session) -> String {
    s.terminal()
        .lines()
        .map(|l| l.text.clone())
        .collect::<Vec<_>>()
        .join("\n")
}

/// The user's Ready pods (the add-ons run in kube-system and local-path-storage).
fn ready_pods(s: &mut Session) -> usize {
    s.view()
        .nodes
        .iter()
        .flat_map(|n| &n.pods)
        .filter(|p| p.namespace == "default" && pod_class(p) == PodClass::Ready)
        .count()
}

#[wasm_bindgen_test(unsupported = test)]
fn should_apply_the_default_deployment_and_run_three_pods() {
    let mut s = Session::new(default_scenario());
    s.run_button("kubectl apply -f nginx-deploy.yaml");
    s.advance(20 * SECOND);
    assert!(
        text(&s).contains("deployment.apps/nginx created"),
        "{}",
        text(&s)
    );
    assert_eq!(ready_pods(&mut s), 3);
    let stages = s.stages();
    assert!(stages[..6].iter().all(|st| st.at.is_some()), "{stages:?}");
    assert!(
        s.traffic().total() > 20,
        "messages became dots: {}",
        s.traffic().total()
    );
    assert_eq!(
        s.scenario().spec.steps.len(),
        1,
        "Apply is recorded as a step"
    );
    assert_eq!(s.scenario().spec.steps[0].at_ms, 0);
}

#[wasm_bindgen_test(unsupported = test)]
fn should_print_three_node_rows_for_kubectl_get_nodes() {
    let mut s = Session::new(default_scenario());
    s.submit("kubectl get nodes");
    s.advance(SECOND);
    let out: Vec<String> = s
        .terminal()
        .lines()
        .filter(|l| l.kind == LineKind::Out)
        .map(|l| l.text.clone())
        .collect();
    assert_eq!(out.len(), 4, "header and three nodes: {out:?}");
    assert!(out[1].starts_with("node-1") && out[3].starts_with("node-3"));
}

#[wasm_bindgen_test(unsupported = test)]
fn should_wait_for_the_running_command_and_interrupt_a_watch() {
    let mut s = Session::new(default_scenario());
    s.submit("kubectl get pods -w");
    s.advance(SECOND);
    assert_eq!(s.busy().0, Some("kubectl get pods -w"));
    s.submit("kubectl get nodes");
    assert!(
        text(&s).contains("^C"),
        "the watch is interrupted by the next command"
    );
    s.advance(SECOND);
    assert!(text(&s).contains("node-2"));
    s.submit("kubectl get pods -w");
    s.interrupt();
    assert_eq!(s.busy(), (None, 0));
    assert!(
        s.world().observe().processes().is_empty(),
        "nothing left running"
    );
}

#[wasm_bindgen_test(unsupported = test)]
fn should_run_scenario_steps_at_their_times() {
    let mut sc = default_scenario();
    sc.spec.steps = vec![
        Step {
            at: "2s".into(),
            at_ms: 2 * SECOND,
            run: "kubectl apply -f nginx-deploy.yaml".into(),
        },
        Step {
            at: "10s".into(),
            at_ms: 10 * SECOND,
            run: "kubectl get pods".into(),
        },
    ];
    let mut s = Session::new(sc);
    s.advance(SECOND);
    assert!(!text(&s).contains("kubectl apply"));
    s.advance(2 * SECOND);
    let steps: Vec<_> = s
        .terminal()
        .lines()
        .filter(|l| l.kind == LineKind::Step)
        .map(|l| (l.text.clone(), l.at))
        .collect();
    assert_eq!(
        steps,
        [(
            "kubectl apply -f nginx-deploy.yaml".to_string(),
            Some(2 * SECOND)
        )]
    );
    s.advance(10 * SECOND);
    assert!(text(&s).contains("Running"), "{}", text(&s));
    assert_eq!(
        s.scenario().spec.steps.len(),
        2,
        "replayed steps are not recorded twice"
    );
}

#[wasm_bindgen_test(unsupported = test)]
fn should_replay_recorded_commands_from_the_saved_scenario() {
    let mut s = Session::new(default_scenario());
    s.advance(3 * SECOND);
    s.run_button("kubectl apply -f nginx-deploy.yaml");
    s.submit("sim stop kube-scheduler");
    s.submit("help");
    let yaml = s.scenario().to_yaml();
    let back = parse_scenario(&yaml).expect("the saved scenario parses");
    let runs: Vec<&str> = back.spec.steps.iter().map(|st| st.run.as_str()).collect();
    assert_eq!(
        runs,
        [
            "kubectl apply -f nginx-deploy.yaml",
            "sim stop kube-scheduler"
        ],
        "page commands are not recorded"
    );
    assert_eq!(back.spec.steps[0].at_ms, 3 * SECOND);
    let mut again = Session::new(back);
    again.advance(20 * SECOND);
    assert!(
        !again.view().pending.is_empty(),
        "scheduler stopped again: pods wait"
    );
}

#[wasm_bindgen_test(unsupported = test)]
fn should_place_apply_errors_in_the_file() {
    let mut s = Session::new(default_scenario());
    let bad = s
        .file("nginx-deploy.yaml")
        .unwrap()
        .replace("replicas: 3", "replica: 3");
    s.set_file("nginx-deploy.yaml", &bad);
    assert!(s.editor_errors("nginx-deploy.yaml").is_empty(), "it parses");
    s.run_button("kubectl apply -f nginx-deploy.yaml");
    s.advance(SECOND);
    assert!(
        text(&s).contains("unknown field \"spec.replica\""),
        "{}",
        text(&s)
    );
    let errors = s.editor_errors("nginx-deploy.yaml");
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_eq!((errors[0].line, errors[0].column), (8, 3));
    s.set_file(
        "nginx-deploy.yaml",
        &bad.replace("replica: 3", "replicas: 3"),
    );
    assert!(
        s.editor_errors("nginx-deploy.yaml").is_empty(),
        "edited: the server's errors are gone"
    );
}

#[wasm_bindgen_test(unsupported = test)]
fn should_show_syntax_errors_and_keep_running() {
    let mut s = Session::new(default_scenario());
    let bad = s
        .file("nginx-deploy.yaml")
        .unwrap()
        .replace("  replicas: 3", " replicas: 3");
    s.set_file("nginx-deploy.yaml", &bad);
    let errors = s.editor_errors("nginx-deploy.yaml");
    assert!(!errors.is_empty());
    assert!(errors[0].line >= 8 && errors[0].line <= 9, "{errors:?}");
    s.run_button("kubectl apply -f nginx-deploy.yaml");
    s.advance(SECOND);
    let err: Vec<_> = s
        .terminal()
        .lines()
        .filter(|l| l.kind == LineKind::Err)
        .collect();
    assert!(
        err.iter()
            .any(|l| l.text.starts_with("error: error parsing nginx-deploy.yaml")),
        "{}",
        text(&s)
    );
    for junk in [
        "'",
        "kubectl apply -f",
        "kubectl get pods -o nonsense",
        "nope",
        "sim poweroff node-9",
        "ssh",
        "kubectl delete pod ''",
    ] {
        s.submit(junk);
        s.advance(100);
    }
    s.advance(SECOND);
}

#[wasm_bindgen_test(unsupported = test)]
fn should_step_to_the_next_message() {
    let mut s = Session::new(default_scenario());
    s.run_button("kubectl apply -f nginx-deploy.yaml");
    let before = s.traffic().total();
    let t0 = s.world().now();
    s.step();
    assert!(s.traffic().total() > before);
    assert!(s.world().now() - t0 <= SECOND, "a step is short");
}

#[wasm_bindgen_test(unsupported = test)]
fn should_reset_and_resize_the_cluster() {
    let mut s = Session::new(default_scenario());
    s.run_button("kubectl apply -f nginx-deploy.yaml");
    s.advance(5 * SECOND);
    s.set_node_count(12);
    assert_eq!(s.world().now(), 0);
    assert_eq!(s.view().nodes.len(), 12);
    assert!(s.scenario().spec.steps.is_empty());
    assert!(s.file("nginx-deploy.yaml").is_some(), "files stay");
}

#[wasm_bindgen_test(unsupported = test)]
fn should_find_the_files_a_command_applies() {
    assert_eq!(
        applied_files("kubectl apply -f a.yaml -f=b.yaml --filename c.yaml"),
        ["a.yaml", "b.yaml", "c.yaml"]
    );
    assert_eq!(
        applied_files("kubectl create --filename=x.yaml"),
        ["x.yaml"]
    );
    assert!(applied_files("kubectl delete -f a.yaml").is_empty());
    assert!(applied_files("sim stop etcd").is_empty());
    assert_eq!(shell_quote("nginx-deploy.yaml"), "nginx-deploy.yaml");
    assert_eq!(shell_quote("my file.yaml"), "'my file.yaml'");
    assert_eq!(
        cmd::tokenize(&shell_quote("it's.yaml")).unwrap(),
        ["it's.yaml"]
    );
}

#[wasm_bindgen_test(unsupported = test)]
fn should_fast_forward_to_the_last_step() {
    let mut sc = default_scenario();
    sc.spec.steps = vec![
        Step {
            at: "1s".into(),
            at_ms: SECOND,
            run: "kubectl apply -f nginx-deploy.yaml".into(),
        },
        Step {
            at: "40s".into(),
            at_ms: 40 * SECOND,
            run: "kubectl get pods".into(),
        },
    ];
    let mut s = Session::new(sc);
    s.fast_forward();
    assert_eq!(s.world().now(), 40 * SECOND);
    assert_eq!(ready_pods(&mut s), 3);
    assert!(
        text(&s).contains("nginx-"),
        "the last step ran: {}",
        text(&s)
    );
    assert!(s.traffic().is_empty(), "nothing drawn while replaying");
    s.fast_forward();
    assert_eq!(s.world().now(), 40 * SECOND, "nothing more to replay");
}

#[wasm_bindgen_test(unsupported = test)]
fn should_come_back_to_the_saved_time() {
    let mut s = Session::new(default_scenario());
    s.run_button("kubectl apply -f nginx-deploy.yaml");
    s.advance(25 * SECOND);
    let saved = parse_scenario(&s.saved_yaml()).expect("parses");
    assert_eq!(saved.until_ms(), Some(25 * SECOND));
    let mut back = Session::new(saved);
    back.fast_forward();
    assert_eq!(back.world().now(), 25 * SECOND);
    assert_eq!(ready_pods(&mut back), 3);
    back.reset();
    assert_eq!(back.scenario().spec.until, None);
}

/// Runs `ms` through [`Session::advance_within`] with a budget that runs out after
/// `checks` looks, as the page's frames do; returns how many slices it took.
fn advance_in_slices(s: &mut Session, ms: Time, checks: u32) -> usize {
    let target = s.world().now() + ms;
    let mut slices = 0;
    while s.world().now() < target || s.replaying().is_some() {
        let mut looks = 0;
        let owed = target.saturating_sub(s.world().now());
        s.advance_within(owed, &mut || {
            looks += 1;
            looks > checks
        });
        slices += 1;
        assert!(slices < 1_000_000, "slices make progress");
    }
    slices
}

#[wasm_bindgen_test(unsupported = test)]
fn should_run_the_same_world_in_time_boxed_slices_as_at_once() {
    let mut whole = Session::new(default_scenario());
    whole.run_button("kubectl apply -f nginx-deploy.yaml");
    whole.submit("kubectl get pods -w");
    whole.advance(8 * SECOND);
    let mut sliced = Session::new(default_scenario());
    sliced.run_button("kubectl apply -f nginx-deploy.yaml");
    sliced.submit("kubectl get pods -w");
    let slices = advance_in_slices(&mut sliced, 8 * SECOND, 2);
    assert!(slices > 20, "the budget cut the run into slices: {slices}");
    assert_eq!(sliced.world().now(), whole.world().now());
    assert_eq!(
        sliced.world().log_hash(),
        whole.world().log_hash(),
        "the same events in the same order"
    );
    assert_eq!(text(&sliced), text(&whole));
    assert_eq!(ready_pods(&mut sliced), 3);
    assert!(sliced.traffic().total() > 20, "messages still become dots");
}

#[wasm_bindgen_test(unsupported = test)]
fn should_replay_a_reload_in_slices_without_dots() {
    let mut s = Session::new(default_scenario());
    s.run_button("kubectl apply -f nginx-deploy.yaml");
    s.advance(25 * SECOND);
    let saved = parse_scenario(&s.saved_yaml()).expect("parses");
    let mut at_once = Session::new(saved.clone());
    at_once.fast_forward();
    let mut back = Session::new(saved);
    back.begin_fast_forward();
    assert_eq!(back.replaying(), Some(25 * SECOND));
    let mut slices = 0;
    while back.replaying().is_some() {
        let mut looks = 0;
        let done = back.advance_within(16, &mut || {
            looks += 1;
            looks > 1
        });
        assert_eq!(done, 0, "the clock the learner sees waits for the replay");
        slices += 1;
    }
    assert!(slices > 10, "{slices}");
    assert_eq!(back.world().now(), 25 * SECOND);
    assert_eq!(back.world().log_hash(), at_once.world().log_hash());
    assert!(back.traffic().is_empty(), "nothing drawn while replaying");
    assert!(
        text(&back).contains("(replayed to t=25s)"),
        "{}",
        text(&back)
    );
}

/// Not a test: prints where the time goes while the hundred-nodes example scales to
/// 1,500 pods (`cargo test -p kubeloop-web --release -- --ignored --nocapture profile_`).
#[cfg(not(target_family = "wasm"))]
#[test]
#[ignore]
fn profile_scaling_hundred_nodes() {
    use std::time::Instant;
    let e = crate::examples::example("hundred-nodes").expect("example");
    let mut s = Session::new(crate::examples::scenario(e));
    s.advance(40 * SECOND);
    s.submit("kubectl scale deployment web --replicas=1500");
    let (mut worst_event, mut worst_view, mut events, mut view_total) = (0.0f64, 0.0f64, 0u64, 0.0);
    let started = Instant::now();
    for _frame in 0..4000 {
        let mut t = Instant::now();
        let mut n = 0;
        s.advance_within(16, &mut || {
            let dt = t.elapsed().as_secs_f64() * 1000.0;
            worst_event = worst_event.max(dt / 4.0);
            t = Instant::now();
            n += 1;
            n > 40
        });
        events += n * 4;
        let v = Instant::now();
        let ready = s
            .view()
            .nodes
            .iter()
            .flat_map(|n| &n.pods)
            .filter(|p| p.namespace == "default" && pod_class(p) == PodClass::Ready)
            .count();
        let dv = v.elapsed().as_secs_f64() * 1000.0;
        worst_view = worst_view.max(dv);
        view_total += dv;
        if ready >= 1500 {
            break;
        }
    }
    println!(
        "virtual {} ms, wall {:.0} ms, ~{events} events, worst 4-event slice/4 {worst_event:.2} ms, view worst {worst_view:.2} ms total {view_total:.0} ms",
        s.world().now(),
        started.elapsed().as_secs_f64() * 1000.0
    );
}

#[wasm_bindgen_test(unsupported = test)]
fn a_background_port_forward_lets_curl_reach_the_pods() {
    let mut s = Session::new(default_scenario());
    s.run_button("kubectl apply -f nginx-deploy.yaml");
    s.advance(20 * SECOND);
    s.submit("kubectl expose deployment nginx --port=80");
    s.advance(2 * SECOND);
    s.submit("kubectl port-forward svc/nginx 8080:80 &");
    s.advance(2 * SECOND);
    assert!(
        text(&s).contains("Forwarding from 127.0.0.1:8080 -> 80"),
        "{}",
        text(&s)
    );
    s.submit("curl -s localhost:8080");
    s.advance(2 * SECOND);
    assert!(text(&s).contains("Welcome to nginx!"), "{}", text(&s));
}

#[wasm_bindgen_test(unsupported = test)]
fn tab_completes_and_an_interactive_shell_changes_the_prompt() {
    let mut s = Session::new(default_scenario());
    assert_eq!(
        s.complete("kubectl get deploym"),
        "kubectl get deployments "
    );
    s.run_button("kubectl apply -f nginx-deploy.yaml");
    s.advance(20 * SECOND);
    let pod = s
        .view()
        .nodes
        .iter()
        .flat_map(|n| &n.pods)
        .find(|p| p.namespace == "default")
        .map(|p| p.name.clone())
        .expect("a pod");
    s.submit(&format!("kubectl exec -it {pod} -- bash"));
    s.advance(SECOND);
    assert_eq!(s.shell_prompt(), Some(format!("root@{pod}:/#")));
    s.submit("cd /usr/share/nginx/html; ls");
    s.advance(SECOND);
    assert!(text(&s).contains("50x.html\nindex.html"), "{}", text(&s));
    s.submit("exit");
    s.advance(SECOND);
    assert_eq!(s.shell_prompt(), None);
    // The scrollback keeps each line after the prompt it was typed at.
    let prompts: Vec<(Option<String>, String)> = s
        .terminal()
        .lines()
        .filter(|l| l.kind == LineKind::Prompt)
        .map(|l| (l.ps1.clone(), l.text.clone()))
        .collect();
    let ps1 = Some(format!("root@{pod}:/#"));
    assert_eq!(
        prompts[prompts.len() - 3..],
        [
            (None, format!("kubectl exec -it {pod} -- bash")),
            (ps1.clone(), "cd /usr/share/nginx/html; ls".to_string()),
            (ps1, "exit".to_string()),
        ]
    );
}

#[wasm_bindgen_test(unsupported = test)]
fn help_speaks_the_pages_language() {
    let mut s = Session::new(default_scenario());
    s.submit("help");
    assert!(text(&s).contains("kubeloop's terminal runs in the simulated cluster"));
    s.set_lang(crate::i18n::Lang::Zh);
    s.submit("help");
    assert!(
        text(&s).contains("kubeloop 的终端运行在模拟集群里"),
        "{}",
        text(&s)
    );
    assert!(text(&s).contains("kubectl apply -f nginx-deploy.yaml"));
}

#[wasm_bindgen_test(unsupported = test)]
fn should_stop_a_long_sim_advance_at_the_pages_budget_and_say_where() {
    let mut s = Session::new(default_scenario());
    s.submit("sim advance 24h");
    s.advance(SECOND);
    let t = text(&s);
    assert!(
        t.contains(&format!(
            "after {} events, the most one run may deliver",
            super::jobs::ADVANCE_BUDGET
        )),
        "{t}"
    );
    let now = s.world().now();
    assert!(now < 24 * 3_600 * SECOND, "{now}");
    assert!(now > 60 * SECOND, "it still ran a good while: {now}");
}
