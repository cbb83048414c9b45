//! Lessons (design §6.20): a scenario's `spec.lesson`, ordered steps whose checks are
//! evaluated against the cluster's stored state and the commands the learner ran. A step
//! completes when its check holds; steps complete in order.
//!
//! Checks only read: the objects etcd stores (what `kubectl get` would list, read as the
//! page reads them, even while the apiserver is down), which components run, and the
//! output of the learner's own commands since the step began.

use serde::Serialize;

use crate::time::Time;
use crate::world::World;

mod check;
mod words;

pub use check::explain;

/// A text in English and Simplified Chinese.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Text {
    /// English.
    pub en: String,
    /// 简体中文 (the English text when a lesson gives none).
    pub zh: String,
}

impl Text {
    /// The same text in both languages.
    pub fn both(s: &str) -> Text {
        Text {
            en: s.to_string(),
            zh: s.to_string(),
        }
    }

    /// The text in the page's language.
    pub fn get(&self, zh: bool) -> &str {
        if zh {
            &self.zh
        } else {
            &self.en
        }
    }
}

/// `spec.lesson`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Lesson {
    /// The lesson's title.
    pub title: Text,
    /// Its steps, in order.
    pub steps: Vec<LessonStep>,
}

/// One step of a lesson.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LessonStep {
    /// A short title.
    pub title: Text,
    /// What to do (Markdown subset: paragraphs, `code`, **bold**, lists, fenced blocks).
    pub text: Text,
    /// Hints revealed one at a time on request.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub hints: Vec<Text>,
    /// The solution, revealed on request; its fenced code blocks are the commands.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub solution: Option<Text>,
    /// What must hold for the step to be done.
    pub check: Check,
}

impl LessonStep {
    /// The commands of the solution: the lines of its fenced code blocks (English text),
    /// without comments, blank lines or a leading `$ `.
    pub fn solution_commands(&self) -> Vec<String> {
        let Some(sol) = &self.solution else {
            return Vec::new();
        };
        let mut out = Vec::new();
        let mut fenced = false;
        for line in sol.en.lines() {
            let t = line.trim();
            if t.starts_with("```") {
                fenced = !fenced;
                continue;
            }
            let t = t.strip_prefix("$ ").unwrap_or(t);
            if fenced && !t.is_empty() && !t.starts_with('#') {
                out.push(t.to_string());
            }
        }
        out
    }
}

/// A condition on the cluster. Written (and serialized) as a mapping with one key: the
/// check's name (`podsReady: {...}`, `all: [...]`).
#[derive(Clone, Debug, PartialEq)]
pub enum Check {
    /// Objects of a kind exist (by name or label selector), optionally with a JSONPath's
    /// value.
    Exists(ObjectCheck),
    /// At least `count` pods of a selector are Ready.
    PodsReady(PodsCheck),
    /// An Event with a reason was recorded.
    Event(EventCheck),
    /// A component is running (or stopped).
    Component(ComponentCheck),
    /// The learner ran a command (since the step began) whose output matches.
    Command(CommandCheck),
    /// The learner's last `curl` (since the step began) succeeded, or failed.
    Curl(CurlCheck),
    /// Every check holds.
    All(Vec<Check>),
    /// At least one check holds.
    Any(Vec<Check>),
    /// The check does not hold.
    Not(Box<Check>),
}

impl Serialize for Check {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(Some(1))?;
        match self {
            Check::Exists(c) => m.serialize_entry("exists", c)?,
            Check::PodsReady(c) => m.serialize_entry("podsReady", c)?,
            Check::Event(c) => m.serialize_entry("event", c)?,
            Check::Component(c) => m.serialize_entry("component", c)?,
            Check::Command(c) => m.serialize_entry("command", c)?,
            Check::Curl(c) => m.serialize_entry("curl", c)?,
            Check::All(cs) => m.serialize_entry("all", cs)?,
            Check::Any(cs) => m.serialize_entry("any", cs)?,
            Check::Not(c) => m.serialize_entry("not", c)?,
        }
        m.end()
    }
}

/// `exists:`.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ObjectCheck {
    /// The kind as kubectl takes it (`deploy`, `Pod`, `services`), resolved to its name.
    pub kind: String,
    /// The object's name (any name if absent).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The namespace (`default`; ignored for cluster-scoped kinds).
    pub namespace: String,
    /// A label selector (`app=web,tier!=db`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub selector: Option<String>,
    /// A kubectl JSONPath template (`{.spec.nodeName}`), printed as `-o jsonpath` prints it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub jsonpath: Option<String>,
    /// The JSONPath's output must equal this.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub equals: Option<String>,
    /// The JSONPath's output must match this regular expression.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub matches: Option<String>,
    /// How many objects must match (default 1: at least one).
    pub count: u64,
}

/// `podsReady:`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PodsCheck {
    /// A label selector.
    pub selector: String,
    /// The namespace (`default`).
    pub namespace: String,
    /// How many must be Ready (at least).
    pub count: u64,
}

/// `event:`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct EventCheck {
    /// The Event's reason (`Scheduled`, `BackOff`, `FailedScheduling`).
    pub reason: String,
    /// The involved object's kind.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// The involved object's name, or the start of generated names (`web` matches
    /// `web-7f9c-x2`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The namespace (any if absent).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
}

/// `component:`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ComponentCheck {
    /// `etcd`, `kube-apiserver`, `kube-controller-manager`, `kube-scheduler`,
    /// `kubelet`, `containerd`, `kube-proxy` (these three with `node`), `cloud-provider-kind`.
    pub name: String,
    /// The node, for node components.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
    /// Whether it must be running (true) or stopped (false).
    pub running: bool,
}

/// `command:`.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CommandCheck {
    /// The command's words, in order (`kubectl logs` matches `kubectl logs web-1 -c app`;
    /// `k` counts as `kubectl`).
    pub run: String,
    /// A regular expression its output (stdout and stderr) must match.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output: Option<String>,
    /// Its exit code.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
}

/// `curl:`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CurlCheck {
    /// Text the curl's command line must contain (a URL, a host).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// Whether it must succeed (exit 0) or fail.
    pub succeeds: bool,
}

/// A command the learner ran, with what it printed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ran {
    /// The command line.
    pub line: String,
    /// Its exit code.
    pub exit_code: i32,
    /// Its stdout followed by its stderr.
    pub output: String,
}

/// What a check reads: the world, and the commands run since the step began.
#[derive(Clone, Copy)]
pub struct Facts<'a> {
    /// The cluster.
    pub world: &'a World,
    /// The learner's commands since the step began, oldest first.
    pub commands: &'a [Ran],
}

/// Whether a check holds, and why (or why not), in both languages.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CheckReport {
    /// Whether it holds.
    pub holds: bool,
    /// The reason, in the learner's words.
    pub why: Text,
}

/// A learner's progress through a lesson.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LessonState {
    /// When each step was done (virtual time), in step order.
    pub done: Vec<Option<Time>>,
    /// How many of the learner's commands came before the current step began.
    pub started: usize,
}

impl LessonState {
    /// Nothing done yet.
    pub fn new(lesson: &Lesson) -> LessonState {
        LessonState {
            done: vec![None; lesson.steps.len()],
            started: 0,
        }
    }

    /// The step the learner is on (the first not done), if any is left.
    pub fn current(&self) -> Option<usize> {
        self.done.iter().position(Option::is_none)
    }

    /// Checks the current step against the world and `commands` (every command the
    /// learner ran, oldest first); marks it done if it holds, then the next, and so on.
    /// True if a step completed.
    pub fn update(&mut self, world: &World, commands: &[Ran], lesson: &Lesson) -> bool {
        self.update_report(world, commands, lesson).0
    }

    /// [`LessonState::update`], also returning the check of the step now current,
    /// explained (None once the lesson is complete): the checks are evaluated once.
    pub fn update_report(
        &mut self,
        world: &World,
        commands: &[Ran],
        lesson: &Lesson,
    ) -> (bool, Option<CheckReport>) {
        let mut changed = false;
        while let Some(i) = self.current() {
            let Some(step) = lesson.steps.get(i) else {
                break;
            };
            let report = explain(&self.facts(world, commands), &step.check);
            if !report.holds {
                return (changed, Some(report));
            }
            self.done[i] = Some(world.now());
            self.started = commands.len();
            changed = true;
        }
        (changed, None)
    }

    /// What the current step's check reads.
    pub fn facts<'a>(&self, world: &'a World, commands: &'a [Ran]) -> Facts<'a> {
        Facts {
            world,
            commands: commands.get(self.started..).unwrap_or(&[]),
        }
    }

    /// The current step's check, explained.
    pub fn report(&self, world: &World, commands: &[Ran], lesson: &Lesson) -> Option<CheckReport> {
        let step = lesson.steps.get(self.current()?)?;
        Some(explain(&self.facts(world, commands), &step.check))
    }

    /// Whether every step is done.
    pub fn complete(&self) -> bool {
        self.current().is_none()
    }
}
