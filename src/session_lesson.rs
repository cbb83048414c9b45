//! The session's lesson (design §6.20): its steps' checks re-run as the live world changes,
//! steps completing in order. A past moment shows the live lesson; it never checks.

use kubeloop_sim::lesson::LessonState;

use super::Session;
use crate::lesson_view::{lesson_view, LessonView};

impl Session {
    /// Re-runs the current step's check if the world changed since the last time; true if
    /// a step completed.
    pub fn check_lesson(&mut self) -> bool {
        if self.lesson_checked == self.revision {
            return false;
        }
        self.update_lesson()
    }

    /// Checks the lesson now (before a learner's command starts, so the steps it already
    /// satisfied are done and the command counts for the next one); true if a step
    /// completed. A past moment never checks.
    pub(super) fn update_lesson(&mut self) -> bool {
        if self.live.is_some() {
            return false;
        }
        let Some(lesson) = self.scenario.spec.lesson.as_ref() else {
            return false;
        };
        let state = self.lesson.get_or_insert_with(|| LessonState::new(lesson));
        let (changed, report) = state.update_report(&self.world, &self.ran, lesson);
        if changed {
            self.revision += 1;
        }
        self.lesson_checked = self.revision;
        self.lesson_report = report;
        changed
    }

    /// The lesson panel's content, if the scenario is a lesson.
    pub fn lesson_view(&self, zh: bool) -> Option<LessonView> {
        let s = self.live.as_deref().unwrap_or(self);
        let lesson = s.scenario.spec.lesson.as_ref()?;
        let fresh;
        let state = match &s.lesson {
            Some(state) => state,
            None => {
                fresh = LessonState::new(lesson);
                &fresh
            }
        };
        // The check as last evaluated, unless the world changed since.
        let report = match (&s.lesson, s.lesson_checked == s.revision) {
            (Some(_), true) => s.lesson_report.clone(),
            _ => state.report(&s.world, &s.ran, lesson),
        };
        Some(lesson_view(lesson, state, report.as_ref(), zh))
    }

    /// Starts the lesson again: a gallery lesson as the gallery has it, any other lesson
    /// with its setup steps only; the terminal's history is kept.
    pub fn restart_lesson(&mut self) {
        let mut scenario = self.scenario().clone();
        scenario.spec.steps.truncate(self.setup_steps);
        scenario.spec.until = None;
        if let Some(e) = crate::examples::lesson(&scenario.metadata.name) {
            scenario = crate::examples::scenario(e);
        }
        let history: Vec<String> = self.terminal.history().to_vec();
        self.load(scenario);
        for h in history {
            self.terminal.remember(&h);
        }
    }

    /// The lesson's id (the scenario's name) and how many of its steps are done, of how many.
    pub fn lesson_progress(&self) -> Option<(String, usize, usize)> {
        let s = self.live.as_deref().unwrap_or(self);
        let lesson = s.scenario.spec.lesson.as_ref()?;
        let done = s
            .lesson
            .as_ref()
            .map_or(0, |st| st.done.iter().filter(|d| d.is_some()).count());
        Some((s.scenario.metadata.name.clone(), done, lesson.steps.len()))
    }
}

/// How many of `scenario`'s steps set its lesson up: a gallery lesson's own steps (the
/// rest were recorded from the learner's terminal); every step of any other scenario.
pub fn setup_steps(scenario: &kubeloop_sim::scenario::Scenario) -> usize {
    let all = scenario.spec.steps.len();
    if scenario.spec.lesson.is_none() {
        return all;
    }
    crate::examples::lesson(&scenario.metadata.name).map_or(all, |e| {
        crate::examples::scenario(e).spec.steps.len().min(all)
    })
}
