//! The terminal's model: the scrollback (prompts, output, errors) and the command history
//! that ↑/↓ walk, with no browser in sight.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};

use kubeloop_sim::time::Time;

/// How many lines the scrollback keeps: everything since the page opened up to this
/// bound; past it the oldest lines go and the terminal says so ([`Terminal::dropped`]).
pub const MAX_LINES: usize = 5000;
/// How many commands the history keeps.
pub const MAX_HISTORY: usize = 500;

/// Line ids are unique across terminals, so a view keyed by id never mistakes a new
/// session's first line for an old one's.
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// What a scrollback line is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LineKind {
    /// A command the user (or a button) ran: `$ kubectl get pods`.
    Prompt,
    /// A command a scenario step ran at its time.
    Step,
    /// Standard output.
    Out,
    /// Standard error.
    Err,
    /// A note from the page itself (reset, help, `^C`).
    Info,
}

impl LineKind {
    /// The CSS class suffix.
    pub fn as_str(self) -> &'static str {
        match self {
            LineKind::Prompt => "prompt",
            LineKind::Step => "step",
            LineKind::Out => "out",
            LineKind::Err => "err",
            LineKind::Info => "info",
        }
    }
}

/// One scrollback line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TermLine {
    /// Unique and increasing: the key for keyed rendering.
    pub id: u64,
    /// What it is.
    pub kind: LineKind,
    /// The text, without a newline.
    pub text: String,
    /// For prompts: the virtual time the command started.
    pub at: Option<Time>,
    /// For prompts typed in a container's shell (`kubectl exec -it`): that shell's
    /// prompt (`/ # `) instead of the terminal's `$`.
    pub ps1: Option<String>,
}

/// The scrollback and the history.
#[derive(Clone, Debug, Default)]
pub struct Terminal {
    lines: VecDeque<TermLine>,
    /// How many of the oldest lines were dropped to keep [`MAX_LINES`].
    dropped: u64,
    history: Vec<String>,
    /// Position while walking the history with ↑/↓ (`None`: at the draft).
    nav: Option<usize>,
    /// What was typed before ↑ was first pressed.
    draft: String,
}

pub fn clock_text(ms: Time) -> String {
    let (h, m, s, milli) = (
        ms / 3_600_000,
        (ms / 60_000) % 60,
        (ms / 1000) % 60,
        ms % 1000,
    );
    if h > 0 {
        format!("{h}:{m:02}:{s:02}.{milli:03}")
    } else {
        format!("{m:02}:{s:02}.{milli:03}")
    }
}

/// Whether an output line reads like an error (for output that arrived mixed).
fn looks_like_error(line: &str) -> bool {
    const PREFIXES: [&str; 7] = [
        "error:",
        "Error from server",
        "The connection to the server",
        "Unable to connect",
        "sim:",
        "bash:",
        "ssh:",
    ];
    PREFIXES.iter().any(|p| line.starts_with(p))
        || (line.starts_with("The ") && line.contains(" is invalid"))
}

impl Terminal {
    /// An empty terminal.
    pub fn new() -> Terminal {
        Terminal::default()
    }

    /// The scrollback, oldest first.
    pub fn lines(&self) -> impl Iterator<Item = &TermLine> {
        self.lines.iter()
    }

    /// Number of scrollback lines.
    pub fn len(&self) -> usize {
        self.lines.len()
    }

    /// Whether the scrollback is empty.
    pub fn is_empty(&self) -> bool {
        self.lines.is_empty()
    }

    fn push(&mut self, kind: LineKind, text: &str, at: Option<Time>) {
        let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
        self.lines.push_back(TermLine {
            id,
            kind,
            text: text.to_string(),
            at,
            ps1: None,
        });
        while self.lines.len() > MAX_LINES {
            self.lines.pop_front();
            self.dropped += 1;
        }
    }

    /// Shows a command line as it starts.
    pub fn prompt(&mut self, line: &str, at: Time, from_step: bool) {
        let kind = if from_step {
            LineKind::Step
        } else {
            LineKind::Prompt
        };
        self.push(kind, line, Some(at));
    }

    /// Shows a line typed in a container's shell, after that shell's prompt.
    pub fn prompt_in_shell(&mut self, line: &str, at: Time, ps1: &str) {
        self.push(LineKind::Prompt, line, Some(at));
        if let Some(l) = self.lines.back_mut() {
            l.ps1 = Some(ps1.to_string());
        }
    }

    /// Prints text from one stream, one scrollback line per line of text.
    pub fn print(&mut self, text: &str, stderr: bool) {
        let text = text.strip_suffix('\n').unwrap_or(text);
        if text.is_empty() {
            return;
        }
        for line in text.split('\n') {
            let kind = if stderr { LineKind::Err } else { LineKind::Out };
            self.push(kind, line.strip_suffix('\r').unwrap_or(line), None);
        }
    }

    /// Prints output whose streams arrived mixed, marking lines that read like errors.
    pub fn print_mixed(&mut self, text: &str) {
        let text = text.strip_suffix('\n').unwrap_or(text);
        if text.is_empty() {
            return;
        }
        for line in text.split('\n') {
            self.print(line, looks_like_error(line));
        }
    }

    /// A note from the page.
    pub fn info(&mut self, text: &str) {
        for line in text.split('\n') {
            self.push(LineKind::Info, line, None);
        }
    }

    /// Empties the scrollback (`clear`).
    pub fn clear(&mut self) {
        self.lines.clear();
        self.dropped = 0;
    }

    /// How many of the oldest lines were dropped since the last `clear` (the scrollback
    /// keeps [`MAX_LINES`]).
    pub fn dropped(&self) -> u64 {
        self.dropped
    }

    /// The scrollback as plain text, as it reads on screen: prompts with their time and
    /// `$` (or a container shell's prompt), output lines as printed (the copy button).
    pub fn as_text(&self) -> String {
        let mut out = String::new();
        for l in &self.lines {
            match (l.kind, &l.ps1) {
                (LineKind::Prompt | LineKind::Step, ps1) => {
                    let at = l.at.map(clock_text).unwrap_or_default();
                    let ps1 = match (ps1, l.kind) {
                        (Some(p), _) => p.trim_end().to_string(),
                        (None, LineKind::Step) => "▸ $".to_string(),
                        (None, _) => "$".to_string(),
                    };
                    out.push_str(&format!("{at} {ps1} {}\n", l.text));
                }
                _ => {
                    out.push_str(&l.text);
                    out.push('\n');
                }
            }
        }
        out
    }

    /// Adds a command to the history (not blank lines, not a repeat of the last one) and
    /// ends any walk through it.
    pub fn remember(&mut self, line: &str) {
        self.nav = None;
        self.draft.clear();
        let line = line.trim();
        if line.is_empty() || self.history.last().is_some_and(|l| l == line) {
            return;
        }
        self.history.push(line.to_string());
        if self.history.len() > MAX_HISTORY {
            self.history.remove(0);
        }
    }

    /// The history, oldest first.
    pub fn history(&self) -> &[String] {
        &self.history
    }

    /// ↑: the previous command, remembering `current` as the draft on the first press.
    /// `None` when there is nothing older.
    pub fn history_up(&mut self, current: &str) -> Option<String> {
        let next = match self.nav {
            None if self.history.is_empty() => return None,
            None => {
                self.draft = current.to_string();
                self.history.len() - 1
            }
            Some(0) => return None,
            Some(i) => i - 1,
        };
        self.nav = Some(next);
        self.history.get(next).cloned()
    }

    /// ↓: the next command, or the draft after the newest. `None` when not walking.
    pub fn history_down(&mut self) -> Option<String> {
        let i = self.nav?;
        if i + 1 < self.history.len() {
            self.nav = Some(i + 1);
            self.history.get(i + 1).cloned()
        } else {
            self.nav = None;
            Some(std::mem::take(&mut self.draft))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasm_bindgen_test::wasm_bindgen_test;

    #[wasm_bindgen_test(unsupported = test)]
    fn should_walk_history_up_and_down_back_to_the_draft() {
        let mut t = Terminal::new();
        t.remember("kubectl get pods");
        t.remember("kubectl get nodes");
        t.remember("kubectl get nodes");
        t.remember("  ");
        assert_eq!(t.history().len(), 2);
        assert_eq!(t.history_up("kub").as_deref(), Some("kubectl get nodes"));
        assert_eq!(t.history_up("").as_deref(), Some("kubectl get pods"));
        assert_eq!(t.history_up(""), None, "nothing older");
        assert_eq!(t.history_down().as_deref(), Some("kubectl get nodes"));
        assert_eq!(
            t.history_down().as_deref(),
            Some("kub"),
            "back to what was typed"
        );
        assert_eq!(t.history_down(), None);
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn should_split_output_into_lines_and_cap_the_scrollback() {
        let mut t = Terminal::new();
        t.prompt("kubectl get nodes", 1500, false);
        t.print("NAME STATUS\nnode-1 Ready\n", false);
        t.print("", false);
        t.print_mixed("pod/x created\nerror: the path \"x.yaml\" does not exist\n");
        let kinds: Vec<LineKind> = t.lines().map(|l| l.kind).collect();
        assert_eq!(
            kinds,
            [
                LineKind::Prompt,
                LineKind::Out,
                LineKind::Out,
                LineKind::Out,
                LineKind::Err
            ]
        );
        for i in 0..MAX_LINES + 10 {
            t.info(&i.to_string());
        }
        assert_eq!(t.len(), MAX_LINES);
        assert_eq!(t.dropped(), 15, "the five first lines and ten notes went");
        let ids: Vec<u64> = t.lines().map(|l| l.id).collect();
        assert!(ids.windows(2).all(|w| w[0] < w[1]), "ids increase");
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn should_copy_the_scrollback_as_it_reads() {
        let mut t = Terminal::new();
        t.prompt("kubectl get nodes", 1500, false);
        t.print("NAME     STATUS\nnode-1   Ready\n", false);
        t.prompt("kubectl apply -f x.yaml", 61_000, true);
        t.print("error: the path \"x.yaml\" does not exist\n", true);
        t.prompt_in_shell("ls", 62_000, "/ # ");
        assert_eq!(
            t.as_text(),
            "00:01.500 $ kubectl get nodes\nNAME     STATUS\nnode-1   Ready\n\
             01:01.000 ▸ $ kubectl apply -f x.yaml\nerror: the path \"x.yaml\" does not exist\n\
             01:02.000 / # ls\n"
        );
        t.clear();
        assert_eq!(t.as_text(), "");
        assert_eq!(t.dropped(), 0);
    }
}
