//! One learner's session: the scenario, the world running it, the terminal's commands and
//! their output, the messages made visible, and what the editor should mark. Plain Rust:
//! the frame loop advances it, the views read it.

use std::collections::{BTreeMap, VecDeque};

use kubeloop_sim::cmd;
use kubeloop_sim::manifest::{parse_manifest_stream, Located};
use kubeloop_sim::scenario::{NodeGroup, Scenario, Step};
use kubeloop_sim::time::{format_duration, Time, SECOND};
use kubeloop_sim::view::timeline::Timeline;
use kubeloop_sim::view::{self, ClusterView, Stage, ViewCache};
use kubeloop_sim::World;

use crate::i18n::Lang;
use crate::terminal::Terminal;
use crate::traffic::Traffic;

/// How many events run between two looks at the caller's budget in
/// [`Session::advance_within`] (asking the clock is not free in a browser).
const EVENTS_PER_CHECK: u32 = 1;
/// How far a reload replays at once (virtual ms).
pub const MAX_FAST_FORWARD: Time = 30 * 60 * SECOND;
/// How far [`Session::step`] looks for the next message.
const STEP_LIMIT: Time = 30 * SECOND;

/// Commands that change or read the cluster: these are recorded as scenario steps.
const CLUSTER_COMMANDS: [&str; 5] = ["kubectl", "k", "etcdctl", "ssh", "sim"];

const HELP: &str = "kubeloop's terminal runs in the simulated cluster. Try:
  kubectl apply -f nginx-deploy.yaml      kubectl get pods -o wide
  kubectl get deploy,rs,pods              kubectl describe pod <name>
  kubectl delete pod <name>               kubectl scale deployment nginx --replicas=5
  kubectl expose deployment nginx --port=80
  kubectl get pods -w                     (Ctrl-C stops it)
  etcdctl get /registry/pods --prefix --keys-only
  ssh node-1 crictl ps                    ssh node-1 iptables-save
  sim stop kube-scheduler                 sim start kube-scheduler
  sim partition node-2 / sim heal node-2  sim poweroff node-3 / sim poweron node-3
  sim node add node-4                     sim advance 30s
Page commands: clear, history, help";

/// [`HELP`] in 简体中文: the commands stay as typed.
const HELP_ZH: &str = "kubeloop 的终端运行在模拟集群里。试试：
  kubectl apply -f nginx-deploy.yaml      kubectl get pods -o wide
  kubectl get deploy,rs,pods              kubectl describe pod <名字>
  kubectl delete pod <名字>               kubectl scale deployment nginx --replicas=5
  kubectl expose deployment nginx --port=80
  kubectl get pods -w                     （Ctrl-C 停止）
  etcdctl get /registry/pods --prefix --keys-only
  ssh node-1 crictl ps                    ssh node-1 iptables-save
  sim stop kube-scheduler                 sim start kube-scheduler
  sim partition node-2 / sim heal node-2  sim poweroff node-3 / sim poweron node-3
  sim node add node-4                     sim advance 30s
kubectl --help 列出支持的 kubectl 命令；Tab 补全命令、参数和对象名。
页面命令：clear、history、help";

/// A command running in the world.
/// Where a command came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Origin {
    /// Typed in the terminal.
    Typed,
    /// A step of the scenario as it was opened (a lesson's setup).
    Setup,
    /// A step the learner typed before a reload, replayed: still the learner's.
    Replayed,
}

impl Origin {
    /// Whether it runs as a scenario step (prompt shown as a step's).
    fn from_step(self) -> bool {
        self != Origin::Typed
    }

    /// Whether a lesson's command checks count it.
    fn learners(self) -> bool {
        self != Origin::Setup
    }
}

#[derive(Debug)]
struct Job {
    id: u32,
    line: String,
    streaming: bool,
    /// Typed in the terminal (the next typed command waits for it); buttons run beside it.
    foreground: bool,
    /// Whether output was shown while it ran (then the rest arrives mixed).
    printed: bool,
    /// Whether a lesson's command checks count it.
    learners: bool,
}

/// A learner's session.
pub struct Session {
    scenario: Scenario,
    world: World,
    terminal: Terminal,
    traffic: Traffic,
    stages: Vec<Stage>,
    jobs: Vec<Job>,
    queue: VecDeque<(String, Origin)>,
    schedule: Vec<Step>,
    next_step: usize,
    apply_errors: BTreeMap<String, Vec<Located>>,
    /// The file last parsed for the editor's problems (name, text, errors): while the
    /// cluster runs, the problems are re-read at every redraw, the YAML is not re-parsed.
    parsed: std::cell::RefCell<Option<(String, String, Vec<Located>)>>,
    view: ClusterView,
    view_cache: ViewCache,
    view_delivered: u64,
    view_stale: bool,
    /// Who last wrote each pod object (`namespace/name` → when, and whether it was the
    /// scheduler), from the apiserver's audit log, kept past the log's capacity.
    pod_writers: BTreeMap<String, (Time, bool)>,
    /// The first message sequence number not yet turned into a dot.
    flight_seq: u64,
    /// Where a reload's replay is going (virtual ms), while it runs in slices.
    replay_to: Option<Time>,
    anim_duration: f64,
    /// The page's language, for the page's own terminal text (`help`).
    lang: Lang,
    /// Every message between components, for the timeline (the live session's).
    timeline: Timeline,
    /// What the learner did, at its virtual time: a moment is rebuilt from these.
    actions: Vec<moment::Action>,
    /// Whether the files as they stand are the last ones in `actions`.
    files_logged: bool,
    /// While this session shows a past moment: the live session, waiting.
    live: Option<Box<Session>>,
    /// While it shows a past moment: the live session's actions still to replay, and the
    /// files the commands read.
    pending: VecDeque<moment::Action>,
    replay_files: Option<BTreeMap<String, String>>,
    /// How many scenario steps the session started with (its greeting says so).
    steps_at_start: usize,
    /// How many of the scenario's steps set its lesson up (the gallery lesson's own); later
    /// ones are the learner's commands, recorded and replayed after a reload.
    setup_steps: usize,
    /// The lesson's progress, once checked (session_lesson.rs).
    lesson: Option<kubeloop_sim::lesson::LessonState>,
    /// The revision the lesson was last checked at.
    lesson_checked: u64,
    /// The current step's check as evaluated at `lesson_checked`.
    lesson_report: Option<kubeloop_sim::lesson::CheckReport>,
    /// The commands the learner ran, with their output, for the lesson's checks.
    ran: Vec<kubeloop_sim::lesson::Ran>,
    /// Bumped whenever something the page shows changed.
    pub revision: u64,
    /// Bumped whenever the scenario (files, nodes, recorded steps) changed: time to save.
    pub scenario_revision: u64,
    /// Bumped when the files were replaced wholesale (load, reset): editors reload.
    pub files_revision: u64,
}

impl Session {
    /// A session running `scenario` from t=0; its steps run at their times.
    pub fn new(scenario: Scenario) -> Session {
        Session::new_in(scenario, Lang::En)
    }

    /// [`Session::new`] greeting the learner in `lang`.
    pub fn new_in(scenario: Scenario, lang: Lang) -> Session {
        let mut s = Session::blank(scenario);
        s.lang = lang;
        s.steps_at_start = s.schedule.len();
        s.setup_steps = lesson::setup_steps(&s.scenario);
        s.greet(s.steps_at_start);
        s.enqueue_due_steps();
        s.pump();
        s
    }

    /// A session at t=0 that has not greeted nor run anything yet.
    fn blank(scenario: Scenario) -> Session {
        let world = kubeloop_sim::runner::new_world(&scenario);
        let view = view::cluster_view(&world);
        Session {
            schedule: scenario.steps_in_order(),
            scenario,
            world,
            terminal: Terminal::new(),
            traffic: Traffic::new(),
            stages: view.stages.clone(),
            jobs: Vec::new(),
            queue: VecDeque::new(),
            next_step: 0,
            apply_errors: BTreeMap::new(),
            parsed: Default::default(),
            view,
            view_cache: ViewCache::new(),
            view_delivered: 0,
            view_stale: false,
            flight_seq: 0,
            replay_to: None,
            pod_writers: BTreeMap::new(),
            anim_duration: crate::traffic::duration_at(1.0),
            lang: Lang::En,
            timeline: Timeline::default(),
            actions: Vec::new(),
            files_logged: false,
            live: None,
            pending: VecDeque::new(),
            replay_files: None,
            steps_at_start: 0,
            setup_steps: 0,
            lesson: None,
            lesson_checked: 0,
            lesson_report: None,
            ran: Vec::new(),
            revision: 1,
            scenario_revision: 0,
            files_revision: 0,
        }
    }

    fn greet(&mut self, steps: usize) {
        let nodes = self.world.observe().nodes().len();
        let name = if self.scenario.metadata.name.is_empty() {
            "scenario".to_string()
        } else {
            self.scenario.metadata.name.clone()
        };
        let greeting = match self.lang {
            Lang::En => format!(
                "{name}: a cluster with {nodes} worker node{} at t=0. Type help for commands.",
                if nodes == 1 { "" } else { "s" }
            ),
            Lang::Zh => {
                format!("{name}：一个有 {nodes} 个工作节点的集群，t=0。输入 help 查看命令。")
            }
        };
        self.terminal.info(&greeting);
        if steps > 0 {
            let note = match self.lang {
                Lang::En => format!("{steps} scenario step(s) will run at their virtual times."),
                Lang::Zh => format!("{steps} 个场景步骤将在各自的虚拟时间运行。"),
            };
            self.terminal.info(&note);
        }
    }

    /// Replaces the scenario and starts it from t=0.
    pub fn load(&mut self, scenario: Scenario) {
        let revisions = (self.revision, self.scenario_revision, self.files_revision);
        *self = Session::new_in(scenario, self.lang);
        self.revision = revisions.0 + 1;
        self.scenario_revision = revisions.1 + 1;
        self.files_revision = revisions.2 + 1;
    }

    /// Restarts the cluster at t=0 with the same files and nodes, forgetting recorded steps
    /// (a lesson keeps the steps that set it up).
    pub fn reset(&mut self) {
        let mut scenario = self.scenario.clone();
        if scenario.spec.lesson.is_some() {
            scenario.spec.steps.truncate(self.setup_steps);
        } else {
            scenario.spec.steps.clear();
        }
        scenario.spec.until = None;
        let history: Vec<String> = self.terminal.history().to_vec();
        self.load(scenario);
        for h in history {
            self.terminal.remember(&h);
        }
    }

    /// Restarts with `count` nodes named node-1 … node-N.
    pub fn set_node_count(&mut self, count: u32) {
        self.scenario.spec.nodes = vec![NodeGroup {
            name_prefix: Some("node-".into()),
            count: Some(count.max(1)),
            ..NodeGroup::default()
        }];
        self.reset();
    }

    /// The scenario as it stands (files edited, commands recorded as steps).
    pub fn scenario(&self) -> &Scenario {
        self.live.as_ref().map_or(&self.scenario, |l| &l.scenario)
    }

    /// The scenario to keep for a reload: as it stands, with `spec.until` at the current
    /// virtual time so the reload replays to here.
    pub fn saved_yaml(&self) -> String {
        if let Some(live) = &self.live {
            return live.saved_yaml();
        }
        let mut sc = self.scenario.clone();
        let now = self.world.now();
        if now > 0 {
            sc.spec.until = Some(format_duration(now));
        }
        sc.to_yaml()
    }

    /// The world.
    pub fn world(&self) -> &World {
        &self.world
    }

    /// The terminal.
    pub fn terminal(&self) -> &Terminal {
        &self.terminal
    }

    /// The terminal, to walk its history.
    pub fn terminal_mut(&mut self) -> &mut Terminal {
        &mut self.terminal
    }

    /// The messages being drawn.
    pub fn traffic(&self) -> &Traffic {
        &self.traffic
    }

    /// The seven stages, each with the newest time it is known to have happened.
    pub fn stages(&self) -> &[Stage] {
        &self.stages
    }

    /// What the diagram draws, rebuilt only when the world changed.
    pub fn view(&mut self) -> &ClusterView {
        if self.view_stale || self.view_delivered != self.world.delivered() {
            self.view = view::cluster_view_cached(&self.world, &mut self.view_cache);
            self.scan_pod_writers();
            self.view_delivered = self.world.delivered();
            self.view_stale = false;
            view::latch_stages(&mut self.stages, self.view.stages.clone());
        }
        &self.view
    }

    /// The pod creation flow of `selected` (`namespace/name`), else of the newest user
    /// pod; with the Deployment a `kubectl expose` would name.
    pub fn flow(&self, selected: Option<&str>) -> (Option<view::PodFlow>, Option<String>) {
        let pod = selected
            .map(str::to_string)
            .or_else(|| view::newest_user_pod(&self.world));
        let flow = pod.and_then(|p| {
            let (ns, name) = p.split_once('/')?;
            view::pod_flow(&self.world, ns, name)
        });
        let deployment = view::deployment_to_expose(&self.world, flow.as_ref());
        (flow, deployment)
    }

    /// Whether the scheduler made the last write to the pod `namespace/name`: only then
    /// are its `kubeloop.dev/*` scheduling annotations the scheduler's results (a user's
    /// `kubectl annotate` or `apply` after it could have written anything).
    pub fn scheduler_wrote(&mut self, namespace: &str, name: &str) -> bool {
        self.view();
        self.pod_writers
            .get(&format!("{namespace}/{name}"))
            .is_some_and(|(_, scheduler)| *scheduler)
    }

    /// Records the writers of pod objects from the audit log (its entries may arrive out
    /// of order; the newest write wins).
    fn scan_pod_writers(&mut self) {
        let Some(api) = &self.world.observe().apiserver() else {
            return;
        };
        for e in api.audit() {
            if !e.verb.is_write() || e.code >= 300 {
                continue;
            }
            let Some(rest) = e.path.strip_prefix("/api/v1/namespaces/") else {
                continue;
            };
            let Some((ns, pod)) = rest.split_once("/pods/") else {
                continue;
            };
            let by_scheduler = e.client == kubeloop_sim::Actor::Scheduler;
            // The scheduler's annotations ride on its Binding (upstream copies a Binding's
            // annotations to the pod) or on a PATCH after a failed attempt; other
            // subresources (status, eviction) leave annotations alone.
            let pod = match pod.split_once('/') {
                None => pod,
                Some((pod, "binding")) if by_scheduler => pod,
                Some(_) => continue,
            };
            if pod.is_empty() {
                continue;
            }
            let entry = self
                .pod_writers
                .entry(format!("{ns}/{pod}"))
                .or_insert((e.received, by_scheduler));
            if e.received >= entry.0 {
                *entry = (e.received, by_scheduler);
            }
        }
        if self.pod_writers.len() > 4 * self.view.pending.len() + 4 * 1024 {
            let live: std::collections::BTreeSet<String> = self
                .view
                .nodes
                .iter()
                .flat_map(|n| &n.pods)
                .chain(&self.view.pending)
                .map(|p| format!("{}/{}", p.namespace, p.name))
                .collect();
            self.pod_writers.retain(|k, _| live.contains(k));
        }
    }

    /// The names of the scenario's files.
    pub fn file_names(&self) -> Vec<String> {
        self.scenario.spec.files.keys().cloned().collect()
    }

    /// A file's text.
    pub fn file(&self, name: &str) -> Option<&str> {
        self.scenario.spec.files.get(name).map(String::as_str)
    }

    /// Changes a file (the editor); the errors apply found in it are cleared.
    pub fn set_file(&mut self, name: &str, text: &str) {
        if let Some(live) = self.live.as_mut() {
            live.set_file(name, text);
        }
        if self.file(name) == Some(text) {
            return;
        }
        self.files_logged = false;
        self.scenario
            .spec
            .files
            .insert(name.to_string(), text.to_string());
        self.apply_errors.remove(name);
        self.scenario_revision += 1;
        self.revision += 1;
    }

    /// The problems to mark in a file: where it does not parse, and what the apiserver
    /// rejected when it was last applied.
    pub fn editor_errors(&self, name: &str) -> Vec<Located> {
        let Some(text) = self.file(name) else {
            return Vec::new();
        };
        let mut parsed = self.parsed.borrow_mut();
        let fresh = parsed
            .as_ref()
            .is_some_and(|(n, t, _)| n == name && t == text);
        if !fresh {
            let errors = parse_manifest_stream(text, name)
                .errors
                .iter()
                .map(|e| e.located())
                .collect();
            *parsed = Some((name.to_string(), text.to_string(), errors));
        }
        let mut out: Vec<Located> = parsed.as_ref().map(|p| p.2.clone()).unwrap_or_default();
        out.extend(self.apply_errors.get(name).into_iter().flatten().cloned());
        out.sort_by_key(|e| (e.line, e.column));
        out.dedup();
        out
    }

    /// Sets how long a message's dot travels (from the speed).
    pub fn set_anim_duration(&mut self, ms: f64) {
        self.anim_duration = ms;
    }

    /// Advances the dots' animation clock by `dt` wall-clock ms.
    pub fn tick_animation(&mut self, dt: f64) {
        self.traffic.tick(dt);
    }

    /// The command the terminal waits for, if any, and how many typed commands wait.
    pub fn busy(&self) -> (Option<&str>, usize) {
        (
            self.jobs
                .iter()
                .find(|j| j.foreground)
                .map(|j| j.line.as_str()),
            self.queue.len(),
        )
    }

    /// A line typed in the terminal: page commands run at once; cluster commands are
    /// recorded as steps and run when the terminal is free.
    pub fn submit(&mut self, line: &str) {
        if self.refuse_in_moment() {
            return;
        }
        self.submit_line(line);
    }

    fn submit_line(&mut self, line: &str) {
        let line = line.trim();
        self.log(moment::Act::Submit(line.to_string()));
        self.terminal.remember(line);
        self.revision += 1;
        match line {
            "" => self.terminal.prompt("", self.world.now(), false),
            "clear" => self.terminal.clear(),
            "help" => {
                self.terminal.prompt(line, self.world.now(), false);
                self.terminal.info(match self.lang {
                    Lang::En => HELP,
                    Lang::Zh => HELP_ZH,
                });
            }
            "history" => {
                self.terminal.prompt(line, self.world.now(), false);
                let h: Vec<String> = self
                    .terminal
                    .history()
                    .iter()
                    .enumerate()
                    .map(|(i, l)| format!("{:>5}  {l}", i + 1))
                    .collect();
                self.terminal.info(&h.join("\n"));
            }
            l if l.ends_with('&') && !l.ends_with("&&") => {
                // `CMD &`: runs in the background beside the next commands, as in bash
                // (`kubectl port-forward … &`, then `curl localhost:…`).
                // Not recorded as a scenario step: a step runs to its end before the next.
                let l = l.trim_end_matches('&').trim_end().to_string();
                self.start(&l, Origin::Typed, false);
                let n = self.jobs.iter().filter(|j| !j.foreground).count();
                if let Some(j) = self.jobs.last().filter(|j| !j.foreground) {
                    self.terminal.info(&format!("[{n}] {}", j.id));
                }
                self.pump();
            }
            _ => {
                self.record(line);
                self.queue.push_back((line.to_string(), Origin::Typed));
                self.pump();
            }
        }
    }

    /// Sets the language of the page's own terminal text.
    pub fn set_lang(&mut self, lang: Lang) {
        self.lang = lang;
    }

    /// The prompt of the shell the terminal has open in a container (`kubectl exec -it`),
    /// if any.
    pub fn shell_prompt(&self) -> Option<String> {
        self.world
            .shell_session()
            .map(|s| s.prompt.trim_end().to_string())
    }

    /// Tab in the terminal: the line completed; several candidates are listed in the
    /// scrollback under the line as typed, as bash does.
    pub fn complete(&mut self, line: &str) -> String {
        let c = cmd::complete::complete(&self.world, line, &self.scenario.spec.files);
        if !c.candidates.is_empty() {
            self.terminal.prompt(line, self.world.now(), false);
            self.terminal.info(&c.candidates.join("  "));
            self.revision += 1;
        }
        c.line
    }

    /// A command from a button (Apply, a failure switch): recorded, and started at once
    /// beside whatever the terminal is running.
    pub fn run_button(&mut self, line: &str) {
        if self.refuse_in_moment() {
            return;
        }
        self.log(moment::Act::Button(line.to_string()));
        self.record(line);
        self.start(line, Origin::Typed, false);
        self.pump();
    }

    /// Ctrl-C: interrupts the terminal's command and drops the typed commands waiting.
    pub fn interrupt(&mut self) {
        if self.refuse_in_moment() {
            return;
        }
        self.log(moment::Act::Interrupt);
        self.interrupt_now();
    }

    fn interrupt_now(&mut self) {
        self.queue.clear();
        let i = self
            .jobs
            .iter()
            .position(|j| j.foreground)
            .or(self.jobs.len().checked_sub(1));
        match i {
            Some(i) => self.kill(i),
            None => self.terminal.info("^C"),
        }
        self.revision += 1;
    }

    /// Runs `ms` of virtual time: scenario steps at their times, commands' output, and
    /// every message sent on the way turned into a dot.
    pub fn advance(&mut self, ms: Time) {
        self.finish_replay();
        let target = self.world.now().saturating_add(ms);
        self.run_to(target, true, &mut || false);
    }

    /// Like [`Session::advance`], but stops as soon as `over_budget` says so (it is asked
    /// every few events), and returns how much virtual time it ran: the page gives the
    /// engine a slice of each animation frame and carries the rest to the next one, so a
    /// burst of thousands of pods slows virtual time down instead of freezing the page.
    /// A reload's replay ([`Session::begin_fast_forward`]) runs first, in the same slices.
    pub fn advance_within(&mut self, ms: Time, over_budget: &mut dyn FnMut() -> bool) -> Time {
        if let Some(to) = self.replay_to {
            if self.run_to(to, false, over_budget) {
                self.replay_done();
            }
            return 0;
        }
        let start = self.world.now();
        let target = self.playback_limit(start.saturating_add(ms));
        self.run_to(target, true, over_budget);
        let done = self.world.now() - start;
        self.catch_up();
        done
    }

    /// Where the world would replay to on a reload: the last scenario step or
    /// `spec.until`, at most [`MAX_FAST_FORWARD`].
    fn fast_forward_target(&self) -> Option<Time> {
        let last = self
            .schedule
            .last()
            .map_or(0, |s| s.at_ms)
            .max(self.scenario.until_ms().unwrap_or(0))
            .min(MAX_FAST_FORWARD);
        (last > self.world.now()).then_some(last)
    }

    /// Runs at once to the last scenario step or `spec.until` (at most [`MAX_FAST_FORWARD`]), without
    /// drawing messages: a reload comes back to where the learner was.
    pub fn fast_forward(&mut self) {
        self.begin_fast_forward();
        self.finish_replay();
    }

    /// Starts the replay of [`Session::fast_forward`] without running it: the page runs it
    /// in slices through [`Session::advance_within`], so a long scenario never blocks.
    pub fn begin_fast_forward(&mut self) {
        self.replay_to = self.fast_forward_target();
        if self.replay_to.is_some() {
            self.terminal.info("(replaying the saved scenario…)");
            self.revision += 1;
        }
    }

    /// Where a replay in slices is going, while it runs.
    pub fn replaying(&self) -> Option<Time> {
        self.replay_to
    }

    fn finish_replay(&mut self) {
        if let Some(to) = self.replay_to {
            self.run_to(to, false, &mut || false);
            self.replay_done();
        }
    }

    fn replay_done(&mut self) {
        self.replay_to = None;
        // What was sent during the replay is history, not dots.
        self.flight_seq = self.world.next_seq();
        if self.live.is_some() {
            // A moment shows the messages in flight at that time.
            self.flight_seq = 0;
            self.sample();
            self.revision += 1;
            return;
        }
        self.terminal.info(&format!(
            "(replayed to t={}s)",
            kubeloop_sim::runner::seconds(self.world.now())
        ));
        self.revision += 1;
    }

    /// Runs events up to `target` (then sets the clock there), or until `over_budget`;
    /// true when it got there.
    fn run_to(
        &mut self,
        target: Time,
        sample: bool,
        over_budget: &mut dyn FnMut() -> bool,
    ) -> bool {
        let before = (
            self.world.delivered(),
            self.terminal.len(),
            self.traffic.len(),
        );
        let mut events = 0u32;
        let reached = loop {
            self.pump();
            let next_step = self.next_due().filter(|t| *t <= target);
            let next_event = self.world.next_event_time().filter(|t| *t <= target);
            match (next_event, next_step) {
                (None, None) => break true,
                // Events at a step's time run before it, as `World::run_until` runs them.
                (Some(e), s) if s.is_none_or(|s| e <= s) => {
                    self.note();
                    self.world.step();
                    self.note();
                    if sample {
                        self.sample();
                    }
                }
                (_, Some(s)) => {
                    self.world.run_until(s);
                    self.enqueue_due_steps();
                }
                (Some(_), None) => unreachable!("covered by the first arm"),
            }
            events += 1;
            if events % EVENTS_PER_CHECK == 0 && over_budget() {
                break false;
            }
        };
        if reached {
            self.world.run_until(target);
            self.enqueue_due_steps();
        }
        if sample {
            self.sample();
        } else {
            self.flight_seq = self.world.next_seq();
        }
        self.pump();
        if before
            != (
                self.world.delivered(),
                self.terminal.len(),
                self.traffic.len(),
            )
        {
            self.revision += 1;
        }
        reached
    }

    /// Runs to the next moment a message is sent (at most [`STEP_LIMIT`] ahead).
    pub fn step(&mut self) {
        self.finish_replay();
        let limit = self.playback_limit(self.world.now() + STEP_LIMIT);
        let before = self.traffic.total();
        loop {
            self.pump();
            let next_step = self.next_due();
            let next = match (next_step, self.world.next_event_time()) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
            let Some(t) = next.filter(|t| *t <= limit) else {
                break;
            };
            while self.world.next_event_time() == Some(t) {
                self.note();
                self.world.step();
                self.note();
            }
            self.world.run_until(t);
            self.sample();
            self.enqueue_due_steps();
            self.pump();
            if self.traffic.total() != before {
                break;
            }
        }
        self.revision += 1;
        self.catch_up();
    }

    fn sample(&mut self) {
        let flights = view::flights_since(&self.world, &mut self.flight_seq);
        if flights.is_empty() {
            return;
        }
        self.traffic
            .observe(flights, self.world.now(), self.anim_duration);
    }
}

pub use jobs::applied_files;

/// Quotes a file name for a command line if it needs it.
pub fn shell_quote(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./".contains(c))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

#[path = "session_moment.rs"]
mod moment;

#[path = "session_files.rs"]
mod files;

#[path = "session_lesson.rs"]
mod lesson;

#[path = "session_jobs.rs"]
mod jobs;
pub use files::{check_file_name, DeletedFile, FileError};

#[cfg(test)]
#[path = "session_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "session_moment_tests.rs"]
mod moment_tests;

#[cfg(test)]
#[path = "session_files_tests.rs"]
mod files_tests;
#[cfg(test)]
#[path = "session_lesson_tests.rs"]
mod lesson_tests;
