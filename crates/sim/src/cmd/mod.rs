//! The terminal's command language (design §3.2): shell-style tokenizing and dispatch to
//! kubectl, etcdctl, ssh and sim.

pub mod apply;
pub mod apply_custom;
pub mod auth;
pub mod autoscale;
pub mod cloud_provider;
pub mod cluster_dump;
pub mod complete;
pub mod config;
pub mod cp;
pub mod create;
pub mod create_ingress;
pub mod create_job;
pub mod create_more;
pub mod crictl;
pub mod diff;
pub mod discovery;
pub mod drain;
pub mod edit;
pub mod etcdctl;
mod etcdctl_lease;
pub mod explain;
pub mod expose;
pub mod flags;
pub mod generate;
pub mod get;
pub mod help;
pub mod interactive;
pub mod kubeconfig;
pub mod kubectl;
pub mod local;
pub mod logs;
pub mod nodeos;
pub mod port_forward;
pub mod replace;
pub mod rollout;
pub mod rollout_apps;
pub mod run;
pub mod select;
pub mod sim;
pub mod sort_by;
pub mod ssh;
pub mod top;
pub mod typed_order;
pub mod unified;
pub mod wait;

use std::collections::BTreeMap;
use std::rc::Rc;

use crate::envelope;
use crate::process::{Output, Process};
use crate::world::World;

/// Splits a command line like a POSIX shell: whitespace separates words, single quotes
/// keep everything, double quotes keep spaces, backslash escapes.
pub fn tokenize(line: &str) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut in_word = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(x) => cur.push(x),
                        None => return Err("unexpected EOF while looking for matching `''".into()),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('"') => break,
                        // In double quotes a backslash only escapes $ ` " \ and newline.
                        Some('\\') => match chars.peek() {
                            Some(&x) if matches!(x, '"' | '\\' | '$' | '`' | '\n') => {
                                cur.push(x);
                                chars.next();
                            }
                            _ => cur.push('\\'),
                        },
                        Some(x) => cur.push(x),
                        None => return Err("unexpected EOF while looking for matching `\"'".into()),
                    }
                }
            }
            '\\' => {
                in_word = true;
                if let Some(x) = chars.next() {
                    cur.push(x);
                }
            }
            c if c.is_whitespace() => {
                if in_word {
                    out.push(std::mem::take(&mut cur));
                    in_word = false;
                }
            }
            '#' if !in_word => break,
            c => {
                in_word = true;
                cur.push(c);
            }
        }
    }
    if in_word {
        out.push(cur);
    }
    Ok(out)
}

/// A command started in the terminal.
#[derive(Debug)]
pub enum Started {
    /// Finished at once (sim, ssh, parse errors).
    Done(Output),
    /// Running as terminal process `id`.
    Running(u32),
}

fn done(code: i32, stdout: impl Into<String>, stderr: impl Into<String>) -> Started {
    Started::Done(Output {
        exit_code: code,
        stdout: stdout.into(),
        stderr: stderr.into(),
    })
}

/// Starts a command line in the world's terminal, with `files` as the working directory.
pub fn start(world: &mut World, line: &str, files: &BTreeMap<String, String>) -> Started {
    start_within(world, line, files, envelope::MAX_EVENTS_PER_COMMAND)
}

/// [`start`], delivering at most `budget` messages for a command that runs the world
/// before it returns (`sim advance`): the page gives it less than the CLI, so a long
/// advance stops early with a note instead of holding the tab.
pub fn start_within(
    world: &mut World,
    line: &str,
    files: &BTreeMap<String, String>,
    budget: u64,
) -> Started {
    if let Some(s) = world.shell_session().cloned() {
        return interactive::line(world, &s, line, files);
    }
    let words = match tokenize(line) {
        Ok(w) => w,
        Err(e) => return done(2, "", format!("bash: {e}\n")),
    };
    let Some(cmd) = words.first() else {
        return done(0, "", "");
    };
    let args = &words[1..];
    match cmd.as_str() {
        "kubectl" | "k" => {
            // `kubectl config` reads and changes the terminal's kubeconfig only.
            if let Some(o) = interactive::open(world, args) {
                return Started::Done(o);
            }
            if let Some((i, "config")) = kubectl::subcommand(args) {
                let rest: Vec<String> = args[..i].iter().chain(&args[i + 1..]).cloned().collect();
                return Started::Done(config::run(world.kubeconfig_mut(), &rest));
            }
            match kubectl::task_in(
                args,
                Rc::new(files.clone()),
                world.kubeconfig(),
                world.observe().custom_kinds(),
            ) {
                Ok((io, task)) => {
                    Started::Running(world.spawn(Process::new(line, io, task, world.now())))
                }
                Err(out) => Started::Done(out),
            }
        }
        "etcdctl" => match etcdctl::task(args) {
            Ok((io, task)) => {
                Started::Running(world.spawn(Process::new(line, io, task, world.now())))
            }
            Err(out) => Started::Done(out),
        },
        "sim" => Started::Done(sim::run(world, args, budget)),
        "cloud-provider-kind" => Started::Done(cloud_provider::run(world, args)),
        "curl" => Started::Done(local::curl(world, args)),
        "ssh" => match ssh::run(world, args) {
            (o, 0) => Started::Done(o),
            (o, delay) => {
                let p = ssh::delayed(line, o, delay, world.now());
                Started::Running(world.spawn(p))
            }
        },
        "" => done(0, "", ""),
        other => done(127, "", format!("bash: {other}: command not found\n")),
    }
}

/// Runs a command to completion, advancing the world (at most `limit` ms of virtual time;
/// a command still running then is interrupted like Ctrl-C). At most
/// [`envelope::MAX_EVENTS_PER_COMMAND`] messages are delivered meanwhile.
pub fn run(
    world: &mut World,
    line: &str,
    files: &BTreeMap<String, String>,
    limit: crate::time::Time,
) -> Output {
    run_within(world, line, files, limit, envelope::MAX_EVENTS_PER_COMMAND)
}

/// [`run`] with an event budget: a command still running when `budget` messages have
/// been delivered is interrupted, and its stderr ends with a note saying why.
pub fn run_within(
    world: &mut World,
    line: &str,
    files: &BTreeMap<String, String>,
    limit: crate::time::Time,
    budget: u64,
) -> Output {
    run_collecting(world, line, files, limit, budget).0
}

/// [`run`] in a working directory the command may write to (`kubectl cp POD:PATH FILE`):
/// the files it wrote are placed in `files`.
pub fn run_in_dir(
    world: &mut World,
    line: &str,
    files: &mut BTreeMap<String, String>,
    limit: crate::time::Time,
) -> Output {
    let (out, written) =
        run_collecting(world, line, files, limit, envelope::MAX_EVENTS_PER_COMMAND);
    files.extend(written);
    out
}

/// [`run_within`], also returning the files the command wrote.
fn run_collecting(
    world: &mut World,
    line: &str,
    files: &BTreeMap<String, String>,
    limit: crate::time::Time,
    budget: u64,
) -> (Output, Vec<(String, String)>) {
    let before = world.delivered();
    match start_within(world, line, files, budget) {
        Started::Done(o) => (o, Vec::new()),
        Started::Running(id) => {
            let deadline = world.now() + limit;
            loop {
                if let Some(o) = world
                    .observe()
                    .processes()
                    .get(&id)
                    .and_then(|p| p.output())
                {
                    let written = world.take_process(id).map(|mut p| p.take_written());
                    return (o, written.unwrap_or_default());
                }
                let spent = world.delivered() - before;
                match world.next_event_time() {
                    Some(t) if t <= deadline && spent < budget => {
                        world.step();
                    }
                    Some(t) if t <= deadline => {
                        let mut p = world.take_process(id).expect("process");
                        p.interrupt();
                        let mut o = p.output().unwrap_or_default();
                        o.stderr.push_str(&format!(
                            "kubeloop: {}\n",
                            envelope::budget_note(spent, world.now())
                        ));
                        return (o, p.take_written());
                    }
                    _ => {
                        world.run_until(deadline);
                        let mut p = world.take_process(id).expect("process");
                        p.interrupt();
                        return (p.output().unwrap_or_default(), p.take_written());
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokenizes_like_a_shell() {
        assert_eq!(
            tokenize("kubectl get pods -o wide").unwrap(),
            ["kubectl", "get", "pods", "-o", "wide"]
        );
        assert_eq!(
            tokenize("a 'b c' \"d \\\"e\" f\\ g").unwrap(),
            ["a", "b c", "d \"e", "f g"]
        );
        assert_eq!(
            tokenize("kubectl get pods # comment").unwrap(),
            ["kubectl", "get", "pods"]
        );
        assert!(tokenize("echo 'oops").is_err());
        assert_eq!(
            tokenize("curl -w \"%{http_code}\\n\" x").unwrap()[2],
            "%{http_code}\\n"
        );
        assert_eq!(
            tokenize("x -o jsonpath='{.items[*].metadata.name}'").unwrap()[2],
            "jsonpath={.items[*].metadata.name}"
        );
    }
}
