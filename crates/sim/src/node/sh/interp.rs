//! The interpreter: an explicit stack of frames over the parsed script, so a run can
//! stop at a `sleep` (or when its step budget is spent) and go on later from there.

use std::collections::BTreeMap;
use std::rc::Rc;

use super::lex::lex;
use super::parse::{parse, AndOr, Cmd, List, Pipeline};
use super::{Host, OUTPUT_CAP, STEP_BUDGET};
use crate::time::Time;

/// Where a run stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Poll {
    /// The script ended with this status.
    Exited(i32),
    /// It sleeps (or waits on the network) this long; call [`Shell::run`] again after.
    Sleep(Time),
    /// It ran [`STEP_BUDGET`] commands without sleeping; call again to go on.
    Busy,
}

#[derive(Debug)]
enum Stage {
    Cond,
    AfterCond,
}

#[derive(Debug)]
enum Frame {
    Seq(Rc<List>, usize),
    AndOr(Rc<AndOr>, usize),
    Negate,
    If(Rc<Vec<(List, List)>>, Option<Rc<List>>, usize, Stage),
    Loop {
        until: bool,
        cond: Rc<List>,
        body: Rc<List>,
        stage: Stage,
        last: i32,
    },
    For(String, Vec<String>, usize, Rc<List>),
}

/// One shell process.
#[derive(Debug)]
pub struct Shell {
    pub(super) vars: BTreeMap<String, String>,
    pub(super) args: Vec<String>,
    pub(super) status: i32,
    pub(super) pending_sleep: Time,
    stack: Vec<Frame>,
    exited: Option<i32>,
    stdout: String,
    stderr: String,
    /// Output in the order it was written: (is stderr, text).
    pub(super) written: Vec<(bool, String)>,
    /// GNU coreutils' messages (debian-based images) rather than busybox's.
    pub(super) gnu: bool,
    /// `exit` was run (rather than the input running out).
    exit_called: bool,
    /// The order `env` prints the inherited environment in.
    pub(super) order: Vec<String>,
}

impl Shell {
    /// A shell with these variables (the container's environment) and `$0 $1 …`.
    pub fn new(vars: BTreeMap<String, String>, args: Vec<String>) -> Shell {
        Shell {
            vars,
            args,
            status: 0,
            pending_sleep: 0,
            stack: Vec::new(),
            exited: None,
            stdout: String::new(),
            stderr: String::new(),
            written: Vec::new(),
            gnu: false,
            exit_called: false,
            order: Vec::new(),
        }
    }

    /// Uses GNU coreutils' messages (`cat: f: No such file or directory`).
    pub fn coreutils(mut self, gnu: bool) -> Shell {
        self.gnu = gnu;
        self
    }

    /// The order the inherited environment is printed in by `env`.
    pub fn env_order(mut self, order: Vec<String>) -> Shell {
        self.order = order;
        self
    }

    /// Loads a script (`sh -c SCRIPT`); a syntax error ends the shell with status 2.
    pub fn load(&mut self, script: &str) {
        match lex(script).and_then(|t| parse(&t)) {
            Ok(list) => self.stack.push(Frame::Seq(Rc::new(list), 0)),
            Err(e) => {
                let name = self.args.first().cloned().unwrap_or_else(|| "sh".into());
                self.emit_err(&format!("{name}: {e}\n"));
                self.exited = Some(2);
            }
        }
    }

    /// Runs until the script ends, sleeps, or spends its step budget.
    pub fn run(&mut self, host: &mut dyn Host) -> Poll {
        let mut steps = 0;
        loop {
            if let Some(code) = self.exited {
                return Poll::Exited(code);
            }
            if self.pending_sleep > 0 {
                return Poll::Sleep(std::mem::take(&mut self.pending_sleep));
            }
            if steps == STEP_BUDGET {
                return Poll::Busy;
            }
            steps += 1;
            let Some(frame) = self.stack.pop() else {
                self.exited = Some(self.status);
                continue;
            };
            self.advance(frame, host);
        }
    }

    /// Runs `script` to its end in this shell, sleeps added up rather than waited: the
    /// output, errors, status and the virtual time it took.
    pub fn run_to_end(&mut self, script: &str, host: &mut dyn Host) -> (String, String, i32, Time) {
        self.load(script);
        let mut elapsed = 0;
        let mut rounds = 0;
        let code = loop {
            match self.run(host) {
                Poll::Exited(c) => break c,
                Poll::Sleep(d) => elapsed += d,
                Poll::Busy => rounds += 1,
            }
            if rounds > 10 || elapsed > 24 * 3600 * crate::time::SECOND {
                self.emit_err("sh: killed: the script ran too long\n");
                break 137;
            }
        };
        (
            self.take_stdout(),
            std::mem::take(&mut self.stderr),
            code,
            elapsed,
        )
    }

    /// Runs one command line given as words (`kubectl exec POD -- CMD ARGS`), to its end.
    pub fn run_argv(&mut self, argv: &[String], host: &mut dyn Host) -> super::RunResult {
        let mut r = self.dispatch(argv, &[], "", host);
        r.elapsed += std::mem::take(&mut self.pending_sleep);
        r
    }

    /// What the script printed on stdout since last asked.
    pub fn take_stdout(&mut self) -> String {
        std::mem::take(&mut self.stdout)
    }

    /// What it printed on stderr since last asked.
    pub fn take_stderr(&mut self) -> String {
        std::mem::take(&mut self.stderr)
    }

    /// Both streams since last asked, in the order they were written.
    pub fn take_written(&mut self) -> Vec<(bool, String)> {
        self.stdout.clear();
        self.stderr.clear();
        std::mem::take(&mut self.written)
    }

    /// A child shell (`$(...)`, `sh -c`, a pipeline stage) inheriting variables.
    pub(super) fn child(&self, args: Vec<String>) -> Shell {
        Shell::new(self.vars.clone(), args)
            .coreutils(self.gnu)
            .env_order(self.order.clone())
    }

    pub(super) fn emit_out(&mut self, s: &str) {
        push_capped(&mut self.stdout, s);
        self.written.push((false, s.to_string()));
    }

    pub(super) fn emit_err(&mut self, s: &str) {
        push_capped(&mut self.stderr, s);
        self.written.push((true, s.to_string()));
    }

    /// Ends the shell (`exit N`).
    pub(super) fn exit(&mut self, code: i32) {
        self.stack.clear();
        self.exited = Some(code);
        self.exit_called = true;
    }

    /// An interactive shell after a line ran out: ready for the next line unless the line
    /// ran `exit`. Returns whether the shell is still there.
    pub fn resume(&mut self) -> bool {
        if self.exit_called {
            return false;
        }
        self.exited = None;
        true
    }

    pub(super) fn cwd(&self) -> String {
        self.vars.get("PWD").cloned().unwrap_or_else(|| "/".into())
    }

    fn advance(&mut self, frame: Frame, host: &mut dyn Host) {
        match frame {
            Frame::Seq(list, i) => {
                if let Some(item) = list.get(i) {
                    let item = Rc::new(item.clone());
                    self.stack.push(Frame::Seq(list, i + 1));
                    self.stack.push(Frame::AndOr(item, 0));
                }
            }
            Frame::AndOr(ao, i) => self.and_or(ao, i, host),
            Frame::Negate => self.status = i32::from(self.status == 0),
            Frame::If(arms, otherwise, k, stage) => self.if_step(arms, otherwise, k, stage),
            Frame::Loop {
                until,
                cond,
                body,
                stage,
                last,
            } => self.loop_step(until, cond, body, stage, last),
            Frame::For(var, items, i, body) => {
                if let Some(v) = items.get(i).cloned() {
                    self.vars.insert(var.clone(), v);
                    self.stack.push(Frame::For(var, items, i + 1, body.clone()));
                    self.stack.push(Frame::Seq(body, 0));
                }
            }
        }
    }

    fn and_or(&mut self, ao: Rc<AndOr>, i: usize, host: &mut dyn Host) {
        let next = if i == 0 {
            Some(&ao.first)
        } else {
            ao.rest
                .get(i - 1)
                .filter(|(on_success, _)| (self.status == 0) == *on_success)
                .map(|(_, p)| p)
        };
        let more = i < ao.rest.len();
        let pipeline = next.cloned();
        if more {
            self.stack.push(Frame::AndOr(ao, i + 1));
        }
        if let Some(p) = pipeline {
            self.pipeline(&p, host);
        }
    }

    fn pipeline(&mut self, p: &Pipeline, host: &mut dyn Host) {
        if p.negate {
            self.stack.push(Frame::Negate);
        }
        if let [only] = p.cmds.as_slice() {
            self.command(only, host, None);
            return;
        }
        let mut input = String::new();
        for (k, c) in p.cmds.iter().enumerate() {
            let last = k + 1 == p.cmds.len();
            let captured = self.capture(c, host, &input);
            if last {
                self.emit_out(&captured);
            }
            input = captured;
        }
    }

    /// Runs one command of a pipeline to its end and returns its stdout.
    fn capture(&mut self, c: &Cmd, host: &mut dyn Host, stdin: &str) -> String {
        if let Cmd::Simple {
            assigns,
            words,
            redirs,
        } = c
        {
            return self.simple(assigns, words, redirs, host, Some(stdin), true);
        }
        let mut sub = self.child(self.args.clone());
        let only = AndOr {
            first: Pipeline {
                negate: false,
                cmds: vec![c.clone()],
            },
            rest: Vec::new(),
        };
        sub.stack.push(Frame::Seq(Rc::new(vec![only]), 0));
        let (out, err, code, elapsed) = sub.finish(host);
        self.pending_sleep += elapsed;
        self.emit_err(&err);
        self.status = code;
        out
    }

    fn finish(&mut self, host: &mut dyn Host) -> (String, String, i32, Time) {
        let mut elapsed = 0;
        let code = loop {
            match self.run(host) {
                Poll::Exited(c) => break c,
                Poll::Sleep(d) => elapsed += d,
                Poll::Busy => break 137,
            }
        };
        (self.take_stdout(), self.take_stderr(), code, elapsed)
    }

    fn command(&mut self, c: &Cmd, host: &mut dyn Host, stdin: Option<&str>) {
        match c {
            Cmd::Simple {
                assigns,
                words,
                redirs,
            } => {
                self.simple(assigns, words, redirs, host, stdin, false);
            }
            Cmd::If { arms, otherwise } => self.stack.push(Frame::If(
                Rc::new(arms.clone()),
                otherwise.clone().map(Rc::new),
                0,
                Stage::Cond,
            )),
            Cmd::Loop { until, cond, body } => self.stack.push(Frame::Loop {
                until: *until,
                cond: Rc::new(cond.clone()),
                body: Rc::new(body.clone()),
                stage: Stage::Cond,
                last: 0,
            }),
            Cmd::For { var, words, body } => {
                let items = match words {
                    Some(ws) => ws.iter().flat_map(|w| self.expand(w, host)).collect(),
                    None => self.args.get(1..).unwrap_or(&[]).to_vec(),
                };
                self.stack
                    .push(Frame::For(var.clone(), items, 0, Rc::new(body.clone())));
            }
        }
    }

    fn if_step(
        &mut self,
        arms: Rc<Vec<(List, List)>>,
        otherwise: Option<Rc<List>>,
        k: usize,
        stage: Stage,
    ) {
        match stage {
            Stage::Cond => {
                let cond = Rc::new(arms[k].0.clone());
                self.stack
                    .push(Frame::If(arms, otherwise, k, Stage::AfterCond));
                self.stack.push(Frame::Seq(cond, 0));
            }
            Stage::AfterCond if self.status == 0 => {
                self.stack.push(Frame::Seq(Rc::new(arms[k].1.clone()), 0));
            }
            Stage::AfterCond if k + 1 < arms.len() => {
                self.stack
                    .push(Frame::If(arms, otherwise, k + 1, Stage::Cond));
            }
            Stage::AfterCond => match otherwise {
                Some(e) => self.stack.push(Frame::Seq(e, 0)),
                None => self.status = 0,
            },
        }
    }

    fn loop_step(&mut self, until: bool, cond: Rc<List>, body: Rc<List>, stage: Stage, last: i32) {
        match stage {
            Stage::Cond => {
                let c = cond.clone();
                self.stack.push(Frame::Loop {
                    until,
                    cond,
                    body,
                    stage: Stage::AfterCond,
                    last,
                });
                self.stack.push(Frame::Seq(c, 0));
            }
            Stage::AfterCond => {
                if (self.status == 0) != until {
                    let b = body.clone();
                    self.stack.push(Frame::Loop {
                        until,
                        cond,
                        body,
                        stage: Stage::Cond,
                        last: 0,
                    });
                    self.stack.push(Frame::Seq(b, 0));
                } else {
                    self.status = last;
                }
            }
        }
    }

    /// `break` and `continue`: unwinds to the innermost loop.
    pub(super) fn unwind(&mut self, brk: bool) {
        while let Some(f) = self.stack.pop() {
            match f {
                Frame::Loop {
                    until, cond, body, ..
                } => {
                    if !brk {
                        self.stack.push(Frame::Loop {
                            until,
                            cond,
                            body,
                            stage: Stage::Cond,
                            last: 0,
                        });
                    }
                    return;
                }
                f @ Frame::For(..) => {
                    if !brk {
                        self.stack.push(f);
                    }
                    return;
                }
                _ => {}
            }
        }
    }
}

fn push_capped(buf: &mut String, s: &str) {
    buf.push_str(s);
    if buf.len() > OUTPUT_CAP {
        let mut cut = buf.len() - OUTPUT_CAP;
        while !buf.is_char_boundary(cut) {
            cut += 1;
        }
        buf.drain(..cut);
    }
}
