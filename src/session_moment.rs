//! Viewing a past moment, and the timeline and traces the page shows.
//!
//! The live session logs what the learner did at its virtual time ([`Action`]: a typed
//! line, a button, Ctrl-C, a scenario step, the files as the next command reads them).
//! Jumping to a moment T builds a second session from the same scenario (same seed, same
//! nodes) and replays those actions up to T, in time-boxed slices like a reload's replay,
//! while the live session waits inside it: the views then show the moment's world,
//! terminal and diagram. Playing on from a moment replays the same history (slowly, if
//! asked); reaching the live time hands the page back to the live session. The world is
//! deterministic, so the moment's world is the one the live session had at T (same
//! `World::log_hash`, tested).

use std::collections::BTreeMap;

use kubeloop_sim::time::Time;
use kubeloop_sim::view::timeline::Timeline;
use kubeloop_sim::view::trace::{self, PodTrace, RolloutTrace, ServiceTrace};

use super::Session;

/// Something the learner did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Act {
    /// A line typed in the terminal.
    Submit(String),
    /// A command from a button (Apply, a switch).
    Button(String),
    /// A scenario step that came due.
    Step(String),
    /// Ctrl-C.
    Interrupt,
    /// The files, as the commands after this read them.
    Files(BTreeMap<String, String>),
}

/// An [`Act`] at its virtual time.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Action {
    pub at: Time,
    pub act: Act,
}

/// Around this many virtual ms of a message that is not a heartbeat, the page's
/// slow motion slows virtual time down.
pub const BURST_WINDOW: Time = 40;

impl Session {
    /// Logs an action at the current time; before a command, the files it may read.
    pub(super) fn log(&mut self, act: Act) {
        let at = self.world.now();
        if !matches!(act, Act::Interrupt) && !self.files_logged {
            self.files_logged = true;
            let files = self.scenario.spec.files.clone();
            self.actions.push(Action {
                at,
                act: Act::Files(files),
            });
        }
        self.actions.push(Action { at, act });
    }

    /// Records the messages sent since the last look (the live session only).
    pub(super) fn note(&mut self) {
        if self.live.is_none() {
            self.timeline.record(&self.world);
        }
    }

    /// The next time a scenario step or a replayed action is due.
    pub(super) fn next_due(&self) -> Option<Time> {
        let step = self.schedule.get(self.next_step).map(|s| s.at_ms);
        let action = self.pending.front().map(|a| a.at);
        match (step, action) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Replays the live session's actions that are due.
    pub(super) fn apply_due_actions(&mut self) {
        while self
            .pending
            .front()
            .is_some_and(|a| a.at <= self.world.now())
        {
            let Some(a) = self.pending.pop_front() else {
                break;
            };
            match a.act {
                Act::Files(f) => self.replay_files = Some(f),
                Act::Submit(line) => self.submit_line(&line),
                Act::Button(line) => {
                    self.record(&line);
                    self.start(&line, super::Origin::Typed, false);
                    self.pump();
                }
                Act::Step(line) => self.queue.push_back((line, super::Origin::Setup)),
                Act::Interrupt => self.interrupt_now(),
            }
        }
    }

    /// While a moment is shown, commands wait for the live session: says so.
    pub(super) fn refuse_in_moment(&mut self) -> bool {
        let Some(at) = self.moment() else {
            return false;
        };
        self.terminal.info(&format!(
            "(viewing t={}s of the timeline: go back to live to run commands)",
            kubeloop_sim::runner::seconds(at)
        ));
        self.revision += 1;
        true
    }

    /// The moment shown, while the page views one (where its replay is going, while it
    /// runs); `None` when the page is live.
    pub fn moment(&self) -> Option<Time> {
        self.live
            .as_ref()
            .map(|_| self.replay_to.unwrap_or(self.world.now()))
    }

    /// The live session's virtual time.
    pub fn live_now(&self) -> Time {
        self.live
            .as_ref()
            .map_or(self.world.now(), |l| l.world.now())
    }

    /// The timeline (the live session's, also while a moment is shown).
    pub fn timeline(&self) -> &Timeline {
        self.live.as_ref().map_or(&self.timeline, |l| &l.timeline)
    }

    /// Shows the world as it was at `at` (at most the live time): rebuilt from the seed
    /// and the recorded actions in slices ([`Session::advance_within`]); a moment later
    /// than the one shown goes on from it.
    pub fn view_moment(&mut self, at: Time) {
        let at = at.min(self.live_now());
        if self.live.is_some() && at >= self.world.now() {
            self.replay_to = (at > self.world.now()).then_some(at);
            self.revision += 1;
            return;
        }
        if self.live.is_none() && at == self.world.now() {
            return;
        }
        let old_revision = self.revision;
        let shell = Session::blank(self.scenario().clone());
        let live = match self.live.take() {
            Some(live) => {
                *self = shell;
                live
            }
            None => Box::new(std::mem::replace(self, shell)),
        };
        self.steps_at_start = live.steps_at_start;
        self.lang = live.lang;
        self.greet(live.steps_at_start);
        self.schedule.clear();
        self.pending = live.actions.iter().cloned().collect();
        self.anim_duration = live.anim_duration;
        self.revision = live.revision.max(old_revision) + 1;
        self.scenario_revision = live.scenario_revision;
        self.files_revision = live.files_revision;
        self.replay_to = (at > 0).then_some(at);
        self.live = Some(live);
        self.apply_due_actions();
        self.pump();
    }

    /// Leaves the moment: the page shows the live session again.
    pub fn back_to_live(&mut self) {
        if let Some(mut live) = self.live.take() {
            live.revision = live.revision.max(self.revision) + 1;
            live.anim_duration = self.anim_duration;
            *self = *live;
        }
    }

    /// How far playback may go: a moment plays at most up to the live time.
    pub(super) fn playback_limit(&self, target: Time) -> Time {
        match &self.live {
            Some(l) => target.min(l.world.now()),
            None => target,
        }
    }

    /// A moment that played up to the live time is the live world: hand back.
    pub(super) fn catch_up(&mut self) {
        if self.replay_to.is_none() && self.moment().is_some_and(|t| t >= self.live_now()) {
            self.back_to_live();
        }
    }

    /// Whether control-plane messages (not heartbeats) were sent within
    /// [`BURST_WINDOW`] of now: the page's slow motion runs slower then. A moment also
    /// sees the burst coming (the live timeline knows what follows).
    pub fn burst(&self) -> bool {
        let ahead = if self.live.is_some() { BURST_WINDOW } else { 0 };
        self.timeline()
            .activity(self.world.now(), BURST_WINDOW, ahead)
            > 0
    }

    /// The causal trace of the pod `namespace/name` in the world shown.
    pub fn pod_trace(&self, pod: &str) -> Option<PodTrace> {
        let (ns, name) = pod.split_once('/')?;
        trace::pod_trace(&self.world, self.timeline(), ns, name)
    }

    /// The rollout of the Deployment `namespace/name` in the world shown.
    pub fn rollout_trace(&self, deployment: &str) -> Option<RolloutTrace> {
        let (ns, name) = deployment.split_once('/')?;
        trace::rollout_trace(&self.world, self.timeline(), ns, name)
    }

    /// The endpoint changes of the Service `namespace/name` in the world shown.
    pub fn service_trace(&self, service: &str) -> Option<ServiceTrace> {
        let (ns, name) = service.split_once('/')?;
        trace::service_trace(&self.world, self.timeline(), ns, name)
    }
}
