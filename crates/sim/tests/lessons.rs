//! The gallery's lessons (public/scenarios/lesson-*.yaml, design §6.20): each lesson's
//! solution, typed by a learner, completes every step in order; doing nothing, or a wrong
//! answer, does not; and a lesson with a bad step is refused with located errors.

use std::collections::BTreeMap;

use kubeloop_sim::cmd;
use kubeloop_sim::lesson::{Lesson, LessonState, Ran};
use kubeloop_sim::runner::{self, COMMAND_LIMIT};
use kubeloop_sim::scenario::{parse_scenario, Scenario};
use kubeloop_sim::time::{Time, SECOND};
use kubeloop_sim::world::World;

/// How long a learner waits for a step's check after typing its solution.
const PATIENCE: Time = 300 * SECOND;
/// How long a learner reads the first step.
const READING: Time = 30 * SECOND;
/// How long a learner takes to type a line of a solution (a cluster keeps moving meanwhile:
/// a new Service's DNS name resolves a moment after it is created, as on a real cluster).
const TYPING: Time = 2 * SECOND;

fn lesson_files() -> Vec<(String, String)> {
    let dir = format!("{}/../../public/scenarios", env!("CARGO_MANIFEST_DIR"));
    let mut out: Vec<(String, String)> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| {
            let name = e.ok()?.file_name().into_string().ok()?;
            name.starts_with("lesson-").then_some(name)
        })
        .map(|name| {
            let text = std::fs::read_to_string(format!("{dir}/{name}")).unwrap();
            (name, text)
        })
        .collect();
    out.sort();
    out
}

/// A learner at the page: the world after the scenario's own steps, the commands typed.
struct Learner {
    scenario: Scenario,
    lesson: Lesson,
    world: World,
    files: BTreeMap<String, String>,
    ran: Vec<Ran>,
    state: LessonState,
}

impl Learner {
    fn open(name: &str) -> Learner {
        let text = lesson_files()
            .into_iter()
            .find(|(n, _)| n == name)
            .unwrap_or_else(|| panic!("no lesson {name}"))
            .1;
        let scenario = parse_scenario(&text).unwrap_or_else(|e| panic!("{name}: {e:?}"));
        let lesson = scenario.spec.lesson.clone().expect("a lesson");
        let (mut world, _) = runner::run(&scenario, None);
        // The learner reads the first step before typing.
        world.run_for(READING);
        let state = LessonState::new(&lesson);
        Learner {
            files: scenario.spec.files.clone(),
            scenario,
            lesson,
            world,
            ran: Vec::new(),
            state,
        }
    }

    fn check(&mut self) {
        self.state.update(&self.world, &self.ran, &self.lesson);
    }

    fn type_line(&mut self, line: &str) -> String {
        // As the page does: the steps the world already satisfies are done before the
        // command starts, so it counts for the step after them.
        self.check();
        let out = cmd::run_in_dir(&mut self.world, line, &mut self.files, COMMAND_LIMIT);
        let output = format!("{}{}", out.stdout, out.stderr);
        self.ran.push(Ran {
            line: line.to_string(),
            exit_code: out.exit_code,
            output: output.clone(),
        });
        self.check();
        output
    }

    /// Waits (virtual time) up to `PATIENCE` for step `i` to be done.
    fn wait_for(&mut self, i: usize) -> bool {
        let until = self.world.now() + PATIENCE;
        while self.state.done[i].is_none() && self.world.now() < until {
            self.world.run_for(SECOND);
            self.check();
        }
        self.state.done[i].is_some()
    }

    fn why(&self) -> String {
        self.state
            .report(&self.world, &self.ran, &self.lesson)
            .map(|r| r.why.en)
            .unwrap_or_default()
    }

    /// Types each step's solution, asserting the step completes.
    fn solve(&mut self, steps: std::ops::Range<usize>) {
        for i in steps {
            assert_eq!(
                self.state.current(),
                Some(i),
                "{}",
                self.scenario.metadata.name
            );
            let mut log = String::new();
            for line in self.lesson.steps[i].solution_commands() {
                self.world.run_for(TYPING);
                self.check();
                let out = self.type_line(&line);
                log.push_str(&format!("$ {line}\n{out}"));
            }
            assert!(
                self.wait_for(i),
                "{} step {} ({}) not done: {}\n{log}",
                self.scenario.metadata.name,
                i + 1,
                self.lesson.steps[i].title.en,
                self.why()
            );
        }
    }
}

#[test]
fn the_gallery_has_lessons_in_both_languages() {
    let files = lesson_files();
    let names: Vec<&String> = files.iter().map(|(n, _)| n).collect();
    assert!(files.len() >= 2, "{names:?}");
    for (name, text) in files {
        let sc = parse_scenario(&text).unwrap_or_else(|e| panic!("{name}: {e:?}"));
        assert_eq!(format!("{}.yaml", sc.metadata.name), name);
        let lesson = sc.spec.lesson.expect("spec.lesson");
        assert_ne!(
            lesson.title.en, lesson.title.zh,
            "{name}: title not translated"
        );
        for (i, s) in lesson.steps.iter().enumerate() {
            assert_ne!(
                s.text.en,
                s.text.zh,
                "{name} step {}: text not translated",
                i + 1
            );
            assert!(
                !s.solution_commands().is_empty(),
                "{name} step {}: the solution has no commands",
                i + 1
            );
        }
    }
}

#[test]
fn every_lessons_solution_completes_every_step() {
    for (name, _) in lesson_files() {
        let mut l = Learner::open(&name);
        let n = l.lesson.steps.len();
        l.solve(0..n);
        assert!(l.state.complete(), "{name}");
        // Steps are done in order, at non-decreasing times.
        let times: Vec<Time> = l.state.done.iter().map(|d| d.unwrap()).collect();
        assert!(times.windows(2).all(|w| w[0] <= w[1]), "{name}: {times:?}");
    }
}

#[test]
fn doing_nothing_completes_no_step() {
    for (name, _) in lesson_files() {
        let mut l = Learner::open(&name);
        assert!(!l.wait_for(0), "{name}: the first step completed by itself");
        assert!(
            !l.why().is_empty(),
            "{name}: a failing check explains itself"
        );
    }
}

#[test]
fn self_healing_explains_pods_that_are_not_ready_yet() {
    let mut l = Learner::open("lesson-self-healing.yaml");
    l.type_line("kubectl apply -f web.yaml");
    l.world.run_for(SECOND);
    l.check();
    let why = l.why();
    assert!(
        why.starts_with("0 of 3 pods app=web are Ready: web-"),
        "{why}"
    );
    assert!(
        why.contains(" is ContainerCreating") || why.contains(" is Pending"),
        "{why}"
    );
    assert!(l.wait_for(0));
}

#[test]
fn self_healing_a_wrong_replica_count_does_not_complete_the_step() {
    let mut l = Learner::open("lesson-self-healing.yaml");
    l.solve(0..2);
    l.type_line("kubectl scale deployment web --replicas=4");
    assert!(!l.wait_for(2));
    assert_eq!(
        l.why(),
        "Deployment web: {.spec.replicas} is \"4\", not \"5\""
    );
    // Deleting pods in a later step before it begins does not count for it: a command
    // check reads only what was typed since the step began.
    l.solve(2..3);
    assert!(!l.wait_for(3));
}

#[test]
fn a_lesson_check_reads_zh_too() {
    let mut l = Learner::open("lesson-self-healing.yaml");
    l.solve(0..3);
    let report = l.state.report(&l.world, &l.ran, &l.lesson).unwrap();
    assert!(!report.holds);
    assert_eq!(report.why.en, "kube-controller-manager is running");
    assert_eq!(report.why.zh, "kube-controller-manager 正在运行");
}

/// Types `lines` as a learner would, then waits for step `i`; returns why it is not done.
fn wrong(l: &mut Learner, i: usize, lines: &[&str]) -> String {
    for line in lines {
        l.world.run_for(TYPING);
        l.type_line(line);
    }
    assert!(
        !l.wait_for(i),
        "{} step {} done by a wrong answer",
        l.scenario.metadata.name,
        i + 1
    );
    l.why()
}

#[test]
fn pod_creation_the_wrong_key_in_etcd_is_not_the_deployment() {
    let mut l = Learner::open("lesson-pod-creation.yaml");
    let why = wrong(
        &mut l,
        0,
        &[
            "kubectl apply -f web.yaml",
            "etcdctl get /registry/deployments/web --keys-only",
        ],
    );
    assert_eq!(
        why,
        "`etcdctl get /registry/deployments/web --keys-only` printed nothing matching //registry/deployments/default/web/"
    );
}

#[test]
fn control_plane_stopping_the_wrong_component_leaves_pods_scheduled() {
    let mut l = Learner::open("lesson-control-plane-failures.yaml");
    let why = wrong(
        &mut l,
        0,
        &[
            "sim stop kube-controller-manager",
            "kubectl scale deployment web --replicas=4",
        ],
    );
    assert_eq!(why, "kube-scheduler is running");
}

#[test]
fn rollout_a_wrong_container_name_changes_nothing() {
    let mut l = Learner::open("lesson-rollout-rollback.yaml");
    let why = wrong(
        &mut l,
        0,
        &["kubectl set image deployment/web web=nginx:1.28"],
    );
    assert_eq!(
        why,
        "Deployment web: {.spec.template.spec.containers[0].image} is \"nginx:1.27\", not \"nginx:1.28\""
    );
}

#[test]
fn kubelet_deleting_a_pod_does_not_fix_its_image() {
    let mut l = Learner::open("lesson-kubelet-troubleshooting.yaml");
    let why = wrong(&mut l, 0, &["kubectl delete pod -l app=front"]);
    assert!(
        why.starts_with("0 of 1 pods app=front are Ready: front-"),
        "{why}"
    );
    assert!(
        why.ends_with(" is ImagePullBackOff") || why.ends_with(" is ErrImagePull"),
        "{why}"
    );
}

#[test]
fn services_a_misspelt_service_name_does_not_resolve() {
    let mut l = Learner::open("lesson-services-kube-proxy.yaml");
    l.solve(0..2);
    let why = wrong(&mut l, 2, &["kubectl exec client -- curl -s webb"]);
    assert_eq!(why, "`kubectl exec client -- curl -s webb` exited 6");
}

#[test]
fn mysql_a_new_claim_is_a_new_empty_volume() {
    let mut l = Learner::open("lesson-mysql-pvc.yaml");
    l.solve(0..3);
    let why = wrong(
        &mut l,
        3,
        &[
            "kubectl delete -f mysql.yaml",
            "kubectl apply -f mysql.yaml",
            "kubectl wait --for=condition=Ready pod -l app=mysql --timeout=120s",
            "kubectl delete pod -l app=mysql",
            "kubectl wait --for=condition=Ready pod -l app=mysql --timeout=120s",
            "kubectl exec deploy/mysql -- cat /var/lib/mysql/note.txt",
        ],
    );
    // The claim was deleted with the file's Deployment: its volume went with it.
    let last = l.ran.last().unwrap();
    assert_eq!(last.exit_code, 1, "{}", last.output);
    assert_eq!(
        why,
        "`kubectl exec deploy/mysql -- cat /var/lib/mysql/note.txt` printed nothing matching /order 42/"
    );
}

#[test]
fn broken_1_restarting_the_pods_does_not_fix_the_site() {
    let mut l = Learner::open("lesson-broken-1.yaml");
    l.solve(0..1);
    let why = wrong(&mut l, 1, &["kubectl rollout restart deployment/web"]);
    assert_eq!(
        why,
        "Service web: {.spec.selector.app} is \"frontend\", not \"web\""
    );
}

#[test]
fn broken_2_uncordoning_one_node_is_not_enough() {
    let mut l = Learner::open("lesson-broken-2.yaml");
    l.solve(0..1);
    let why = wrong(&mut l, 1, &["kubectl uncordon node-3"]);
    // Every shop pod found a node (node-3), but the taints are still there: the check names one.
    let nodes = l.type_line("kubectl get pods -l app=shop -o jsonpath={.items[*].spec.nodeName}");
    assert_eq!(nodes.split_whitespace().count(), 5, "{nodes}");
    assert_eq!(why, "Node node-1: {.spec.taints[*].key} is \"maintenance\"");
    l.type_line("kubectl taint nodes node-1 maintenance-");
    assert!(!l.wait_for(1));
    assert_eq!(
        l.why(),
        "Node node-2: {.spec.taints[*].key} is \"maintenance\""
    );
    l.type_line("kubectl taint nodes node-2 maintenance-");
    assert!(l.wait_for(1));
}

#[test]
fn broken_3_restarting_the_pods_does_not_fix_the_port() {
    let mut l = Learner::open("lesson-broken-3.yaml");
    l.solve(0..1);
    let why = wrong(&mut l, 1, &["kubectl rollout restart deployment/api"]);
    assert_eq!(
        why,
        "Service api: {.spec.ports[0].targetPort} is \"8080\", not \"80\""
    );
}
