//! What the lesson panel shows (design §6.20): the lesson's steps in the page's language,
//! which are done (and when), the current step's check and why it does not hold yet, its
//! hints and solution. Plain Rust over `kubeloop_sim::lesson`; the panel only draws it.

use kubeloop_sim::lesson::{CheckReport, Lesson, LessonState, Text};
use kubeloop_sim::time::Time;

use crate::markdown::{self, Block};

/// Where a step stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StepState {
    /// Its check held at this virtual time.
    Done(Time),
    /// The step the learner is on.
    Current,
    /// After the current one.
    Later,
}

/// One step as drawn.
#[derive(Clone, Debug, PartialEq)]
pub struct StepView {
    /// 1-based.
    pub number: usize,
    /// Its title.
    pub title: String,
    /// Its text.
    pub text: Vec<Block>,
    /// Done, current or later.
    pub state: StepState,
    /// For the current step: whether its check holds now, and why (or why not).
    pub check: Option<(bool, String)>,
    /// Its hints, in order.
    pub hints: Vec<Vec<Block>>,
    /// Its solution.
    pub solution: Option<Vec<Block>>,
}

/// The lesson as drawn.
#[derive(Clone, Debug, PartialEq)]
pub struct LessonView {
    /// The lesson's title.
    pub title: String,
    /// Every step.
    pub steps: Vec<StepView>,
    /// How many steps are done.
    pub done: usize,
}

impl LessonView {
    /// Whether every step is done.
    pub fn complete(&self) -> bool {
        self.done == self.steps.len()
    }
}

fn text(t: &Text, zh: bool) -> String {
    t.get(zh).to_string()
}

fn blocks(t: &Text, zh: bool) -> Vec<Block> {
    markdown::parse(t.get(zh))
}

/// The lesson panel's content for `lesson` in `state`, with `report`, the current step's
/// check explained.
pub fn lesson_view(
    lesson: &Lesson,
    state: &LessonState,
    report: Option<&CheckReport>,
    zh: bool,
) -> LessonView {
    let current = state.current();
    let steps = lesson
        .steps
        .iter()
        .enumerate()
        .map(|(i, step)| {
            let state = match state.done.get(i).copied().flatten() {
                Some(at) => StepState::Done(at),
                None if current == Some(i) => StepState::Current,
                None => StepState::Later,
            };
            let check = report
                .filter(|_| state == StepState::Current)
                .map(|r| (r.holds, text(&r.why, zh)));
            StepView {
                number: i + 1,
                title: text(&step.title, zh),
                text: blocks(&step.text, zh),
                state,
                check,
                hints: step.hints.iter().map(|h| blocks(h, zh)).collect(),
                solution: step.solution.as_ref().map(|s| blocks(s, zh)),
            }
        })
        .collect::<Vec<_>>();
    let done = steps
        .iter()
        .filter(|s| matches!(s.state, StepState::Done(_)))
        .count();
    LessonView {
        title: text(&lesson.title, zh),
        steps,
        done,
    }
}
