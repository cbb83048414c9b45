//! A container whose main process is the shell (`command: ["sh", "-c", SCRIPT]`, or an
//! applet such as `sleep 3600` or `env`): containerd runs it step by step in virtual
//! time. What it prints goes to the container's log as it prints it; a `sleep` (or a
//! network wait) sets a timer; its exit status is the container's exit code, which
//! drives restartPolicy, Jobs and init containers as for any other process.

use crate::message::Ctx;
use crate::node::cri::ContainerState;
use crate::node::logs::{err, out, LogEntry};
use crate::node::machine::Machine;
use crate::node::sh::{Poll, Shell};
use crate::node::shell::ContainerHost;

/// Timer tokens of shell main processes (below the load loops').
pub const SCRIPT_TIMER_BASE: u64 = 1 << 55;

/// The shell's `$0 $1 …` and script for a container command.
fn program(command: &[String]) -> (Vec<String>, String) {
    match command {
        [sh, flag, script, rest @ ..] if flag == "-c" && is_shell(sh) => {
            let mut args = vec![rest.first().cloned().unwrap_or_else(|| sh.clone())];
            args.extend(rest.iter().skip(1).cloned());
            (args, script.clone())
        }
        _ => (
            vec!["sh".into()],
            command
                .iter()
                .map(|w| quote(w))
                .collect::<Vec<_>>()
                .join(" "),
        ),
    }
}

fn is_shell(s: &str) -> bool {
    matches!(s.rsplit('/').next(), Some("sh" | "ash" | "bash"))
}

fn quote(w: &str) -> String {
    format!("'{}'", w.replace('\'', "'\\''"))
}

/// Runs the shell of the container a timer belongs to until it sleeps or ends.
pub fn step(m: &mut Machine, ctx: &mut Ctx, token: u64) {
    let Some(id) = m.runtime_mut().script_timers.remove(&token) else {
        return;
    };
    let running = m
        .runtime()
        .containers
        .get(&id)
        .is_some_and(|c| c.state == ContainerState::Running);
    if !running {
        m.runtime_mut().shells.remove(&id);
        return;
    }
    let Some(mut host) = ContainerHost::new(m, &id) else {
        return;
    };
    let mut shell = match host.runtime_shell(&id) {
        Some(s) => s,
        None => {
            let command = host.command();
            let (args, script) = program(&command);
            let mut s: Shell = host.shell(args);
            s.load(&script);
            s
        }
    };
    let poll = shell.run(&mut host);
    let written = shell.take_written();
    drop(host);
    let now = m.now();
    let lines = to_lines(now, written);
    m.runtime_mut().append_logs(&id, lines);
    match poll {
        Poll::Exited(code) => m.runtime_mut().script_exited(ctx, &id, code),
        Poll::Sleep(d) => {
            m.runtime_mut().shells.insert(id.clone(), shell);
            m.runtime_mut().script_timer(ctx, d, &id);
        }
        Poll::Busy => {
            m.runtime_mut().shells.insert(id.clone(), shell);
            m.runtime_mut().script_timer(ctx, 1, &id);
        }
    }
}

/// What the shell wrote, as log lines (a last line without its newline is kept too).
fn to_lines(at: crate::time::Time, written: Vec<(bool, String)>) -> Vec<LogEntry> {
    let mut lines = Vec::new();
    for (is_err, text) in written {
        for l in text.split_inclusive('\n') {
            let l = l.strip_suffix('\n').unwrap_or(l);
            lines.push(if is_err { err(at, l) } else { out(at, l) });
        }
    }
    lines
}
