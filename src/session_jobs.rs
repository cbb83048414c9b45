//! The terminal's jobs: scenario steps coming due, commands started in the world, their
//! output collected as they run, streams interrupted, and what a command leaves behind
//! (files it wrote, the apiserver's errors placed in the file applied).

use kubeloop_sim::cmd::{self, Started};
use kubeloop_sim::runner::is_streaming;
use kubeloop_sim::scenario::Step;
use kubeloop_sim::time::format_duration;
use kubeloop_sim::view;

use super::{moment, Job, Origin, Session, CLUSTER_COMMANDS};

/// The most messages a command that runs the world before it returns (`sim advance`)
/// delivers in the page: about a second of the engine in a tab, where the CLI allows
/// [`kubeloop_sim::envelope::MAX_EVENTS_PER_COMMAND`]. A longer advance stops with the
/// engine's note saying where, and the learner runs it again to go on.
pub const ADVANCE_BUDGET: u64 = 100_000;

impl Session {
    pub(super) fn record(&mut self, line: &str) {
        if self.live.is_some() {
            // A moment replays the live session's commands; they are recorded there.
            return;
        }
        let first = line.split_whitespace().next().unwrap_or("");
        if !CLUSTER_COMMANDS.contains(&first) {
            return;
        }
        let now = self.world.now();
        self.scenario.spec.steps.push(Step {
            at: format_duration(now),
            at_ms: now,
            run: line.to_string(),
        });
        self.scenario_revision += 1;
    }

    pub(super) fn enqueue_due_steps(&mut self) {
        while let Some(step) = self.schedule.get(self.next_step) {
            if step.at_ms > self.world.now() {
                break;
            }
            let run = step.run.clone();
            self.log(moment::Act::Step(run.clone()));
            let origin = if self.next_step < self.setup_steps {
                Origin::Setup
            } else {
                Origin::Replayed
            };
            self.queue.push_back((run, origin));
            self.next_step += 1;
        }
        self.apply_due_actions();
    }

    /// Starts waiting commands when the terminal is free (a streaming command is
    /// interrupted, as when the next scenario step comes) and collects output.
    pub(super) fn pump(&mut self) {
        loop {
            self.collect();
            let fg = self.jobs.iter().position(|j| j.foreground);
            match (fg, self.queue.is_empty()) {
                (_, true) => break,
                (None, false) => {
                    if let Some((line, origin)) = self.queue.pop_front() {
                        self.start(&line, origin, true);
                    }
                }
                (Some(i), false) if self.jobs[i].streaming => self.kill(i),
                _ => break,
            }
        }
    }

    pub(super) fn start(&mut self, line: &str, origin: Origin, foreground: bool) {
        let from_step = origin.from_step();
        if origin.learners() {
            self.update_lesson();
        }
        match self.shell_prompt() {
            Some(ps1) if !from_step => self.terminal.prompt_in_shell(line, self.world.now(), &ps1),
            _ => self.terminal.prompt(line, self.world.now(), from_step),
        }
        self.revision += 1;
        self.view_stale = true;
        let files = self
            .replay_files
            .as_ref()
            .unwrap_or(&self.scenario.spec.files);
        match cmd::start_within(&mut self.world, line, files, ADVANCE_BUDGET) {
            Started::Done(out) => {
                self.print_output(line, &out.stdout, &out.stderr);
                self.after(line, &out.stderr);
                if origin.learners() {
                    self.ran(line, &out);
                }
            }
            Started::Running(id) => {
                self.jobs.push(Job {
                    id,
                    line: line.to_string(),
                    streaming: is_streaming(line),
                    foreground,
                    printed: false,
                    learners: origin.learners(),
                });
            }
        }
    }

    /// Shows what running commands printed; finishes the ones that exited.
    pub(super) fn collect(&mut self) {
        let mut i = 0;
        while i < self.jobs.len() {
            let id = self.jobs[i].id;
            let Some(p) = self.world.terminal(id) else {
                self.jobs.remove(i);
                continue;
            };
            if p.is_finished() {
                let out = p.output().unwrap_or_default();
                let unread = p.take_unread();
                let written = p.take_written();
                self.world.take_process(id);
                let job = self.jobs.remove(i);
                if job.printed {
                    self.terminal.print_mixed(&unread);
                } else {
                    self.print_output(&job.line, &out.stdout, &out.stderr);
                }
                self.after(&job.line, &out.stderr);
                if job.learners {
                    self.ran(&job.line, &out);
                }
                self.take_files(written);
                self.revision += 1;
                continue;
            }
            let unread = p.take_unread();
            if !unread.is_empty() {
                self.terminal.print_mixed(&unread);
                self.jobs[i].printed = true;
                self.revision += 1;
            }
            i += 1;
        }
    }

    /// Prints a command's output, its two streams in the order the program wrote them
    /// (`curl -v`: its `*`/`>`/`<` lines around the body, as in a terminal).
    pub(super) fn print_output(&mut self, line: &str, stdout: &str, stderr: &str) {
        let words = cmd::tokenize(line).unwrap_or_default();
        if words.iter().any(|w| w == "curl") {
            for (err, text) in kubeloop_sim::node::curl::in_written_order(stdout, stderr) {
                self.terminal.print(&text, err);
            }
        } else {
            self.terminal.print(stdout, false);
            self.terminal.print(stderr, true);
        }
    }

    /// Keeps what a learner's command printed, for the lesson's command checks (the live
    /// session's only: a past moment replays commands already kept).
    fn ran(&mut self, line: &str, out: &kubeloop_sim::process::Output) {
        if self.live.is_some() || self.scenario.spec.lesson.is_none() {
            return;
        }
        self.ran.push(kubeloop_sim::lesson::Ran {
            line: line.to_string(),
            exit_code: out.exit_code,
            output: format!("{}{}", out.stdout, out.stderr),
        });
        self.revision += 1;
    }

    /// Files a command wrote (`kubectl cp POD:PATH FILE`) join the scenario's files.
    pub(super) fn take_files(&mut self, written: Vec<(String, String)>) {
        if written.is_empty() {
            return;
        }
        self.scenario.spec.files.extend(written);
        self.scenario_revision += 1;
        self.files_revision += 1;
    }

    pub(super) fn kill(&mut self, i: usize) {
        let job = self.jobs.remove(i);
        if let Some(mut p) = self.world.take_process(job.id) {
            p.interrupt();
            self.terminal.print_mixed(&p.take_unread());
        }
        self.terminal.info("^C");
        self.revision += 1;
    }

    /// After `kubectl apply|create|replace -f FILE`: places the server's errors in FILE.
    pub(super) fn after(&mut self, line: &str, stderr: &str) {
        for file in applied_files(line) {
            if let Some(text) = self.scenario.spec.files.get(&file) {
                let errors = view::locate_apply_errors(text, &file, stderr);
                self.apply_errors.insert(file, errors);
                self.revision += 1;
            }
        }
    }
}

/// The files a `kubectl apply|create|replace` line reads (`-f a.yaml`, `--filename=b.yaml`).
pub fn applied_files(line: &str) -> Vec<String> {
    let words = cmd::tokenize(line).unwrap_or_default();
    let is_kubectl = matches!(words.first().map(String::as_str), Some("kubectl" | "k"));
    if !is_kubectl
        || !words
            .iter()
            .any(|w| matches!(w.as_str(), "apply" | "create" | "replace"))
    {
        return Vec::new();
    }
    let mut out = Vec::new();
    let mut it = words.iter().skip(1);
    while let Some(w) = it.next() {
        if w == "-f" || w == "--filename" {
            out.extend(it.next().cloned());
        } else if let Some(f) = w
            .strip_prefix("--filename=")
            .or_else(|| w.strip_prefix("-f="))
        {
            out.push(f.to_string());
        }
    }
    out
}
