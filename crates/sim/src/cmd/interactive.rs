//! `kubectl exec -it POD -- sh` in the terminal: an interactive shell in the container.
//! Lines typed then go to that shell (its variables and directory kept between lines)
//! until `exit`; each line is one exec over the kubelet API, in virtual time.

use std::collections::BTreeMap;
use std::rc::Rc;

use super::{kubectl, Started};
use crate::kubeconfig_state::ShellSession;
use crate::object::Object;
use crate::process::{Output, Process};
use crate::world::World;

const SHELLS: &[&str] = &["sh", "/bin/sh", "bash", "/bin/bash", "ash", "/bin/ash"];

/// Opens the shell when `args` (after `kubectl`) are `exec -it POD [-c C] [-n NS] -- sh`
/// and the pod is running; None lets the ordinary exec run (and report what is wrong).
pub fn open(world: &mut World, args: &[String]) -> Option<Output> {
    let (i, sub) = kubectl::subcommand(args)?;
    if sub != "exec" {
        return None;
    }
    let dash = args.iter().position(|a| a == "--")?;
    let [shell] = &args[dash + 1..] else {
        return None;
    };
    if !SHELLS.contains(&shell.as_str()) {
        return None;
    }
    let before: Vec<&String> = args[..dash]
        .iter()
        .enumerate()
        .filter(|(k, _)| *k != i)
        .map(|(_, a)| a)
        .collect();
    let stdin = before
        .iter()
        .any(|a| matches!(a.as_str(), "-i" | "--stdin" | "-it" | "-ti"));
    let tty = before
        .iter()
        .any(|a| matches!(a.as_str(), "-t" | "--tty" | "-it" | "-ti"));
    if !(stdin && tty) {
        return None;
    }
    let target: Vec<String> = before
        .iter()
        .filter(|a| {
            !matches!(
                a.as_str(),
                "-i" | "--stdin" | "-t" | "--tty" | "-it" | "-ti"
            )
        })
        .map(|a| a.to_string())
        .collect();
    let prompt = prompt_for(world, &target, shell)?;
    let id = 1 + crate::rng::fnv1a(format!("{}/{}", world.now(), target.join(" ")).as_bytes())
        % (1 << 40);
    world.set_shell_session(Some(ShellSession {
        id,
        target,
        prompt,
        exit_note: String::new(),
        on_exit: Vec::new(),
    }));
    Some(Output::default())
}

/// The prompt of `shell` in the targeted pod, if the pod is running: busybox's ash shows
/// `/ # `, bash `root@POD:/# `, other images' sh `# `.
fn prompt_for(world: &World, target: &[String], shell: &str) -> Option<String> {
    let mut ns = world
        .kubeconfig()
        .namespaces
        .get(world.kubeconfig().current())
        .cloned()
        .unwrap_or_else(|| "default".into());
    let mut container = None;
    let mut pod = None;
    let mut it = target.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "-n" | "--namespace" => ns = it.next()?.clone(),
            "-c" | "--container" => container = it.next().cloned(),
            s if s.starts_with('-') => {}
            s => {
                pod = Some(
                    s.trim_start_matches("pod/")
                        .trim_start_matches("pods/")
                        .to_string(),
                )
            }
        }
    }
    let pod = pod?;
    let stored = world
        .observe()
        .etcd()
        .store
        .get(&format!("/registry/pods/{ns}/{pod}"))?;
    let Object::Pod(p) = &*stored.value else {
        return None;
    };
    if p.status.as_ref().and_then(|s| s.phase.as_deref()) != Some("Running") {
        return None;
    }
    let spec = p.spec.as_ref()?;
    let c = match &container {
        Some(n) => spec.containers.iter().find(|c| &c.name == n)?,
        None => spec.containers.first()?,
    };
    Some(prompt(c.image.as_deref().unwrap_or(""), shell, &pod))
}

/// The prompt `shell` shows in a container of `image` in pod `pod`.
pub(crate) fn prompt(image: &str, shell: &str, pod: &str) -> String {
    let image = crate::node::images::parse(image);
    let busybox = matches!(
        image.repo.rsplit('/').next(),
        Some("busybox" | "alpine" | "curl")
    );
    if shell.ends_with("bash") && !busybox {
        format!("root@{pod}:/# ")
    } else if busybox {
        "/ # ".to_string()
    } else {
        "# ".to_string()
    }
}

/// A line typed while the shell is open.
pub fn line(
    world: &mut World,
    s: &ShellSession,
    line: &str,
    files: &BTreeMap<String, String>,
) -> Started {
    let text = line.trim();
    if text.is_empty() {
        return Started::Done(Output::default());
    }
    if text == "exit" || text.starts_with("exit ") || text == "logout" {
        world.set_shell_session(None);
        if s.on_exit.is_empty() {
            return Started::Done(Output {
                stdout: s.exit_note.clone(),
                ..Output::default()
            });
        }
        return match kubectl::task_in(
            &s.on_exit,
            Rc::new(files.clone()),
            world.kubeconfig(),
            world.observe().custom_kinds(),
        ) {
            Ok((io, task)) => {
                {
                    let mut io = io.borrow_mut();
                    io.stdout.push_str(&s.exit_note);
                    io.unread.push_str(&s.exit_note);
                }
                Started::Running(world.spawn(Process::new(line, io, task, world.now())))
            }
            Err(out) => Started::Done(out),
        };
    }
    let mut args = vec!["exec".to_string()];
    args.extend(s.target.iter().cloned());
    args.extend([
        "--kubeloop-session".to_string(),
        s.id.to_string(),
        "--".to_string(),
        text.to_string(),
    ]);
    match kubectl::task_in(
        &args,
        Rc::new(files.clone()),
        world.kubeconfig(),
        world.observe().custom_kinds(),
    ) {
        Ok((io, task)) => Started::Running(world.spawn(Process::new(line, io, task, world.now()))),
        Err(out) => Started::Done(out),
    }
}
