//! What the kubelet API's calls do on the machine (port 10250, proxied by
//! kube-apiserver): container logs, exec, and the resource summary metrics-server
//! scrapes for `kubectl top`. The kubelet forwards each call to containerd on its own
//! machine, which answers it from its containers through [`Machine`].

use crate::node::cri::{Container, ContainerState};
use crate::node::journal::rfc3339_nanos;
use crate::node::kubelet_api::*;
use crate::node::machine::Machine;
use crate::node::shell;
use crate::time::Time;

fn find(m: &Machine, ns: &str, pod: &str, container: &str) -> Vec<Container> {
    let rt = m.runtime();
    let Some(sb) = rt
        .sandboxes
        .values()
        .filter(|s| s.namespace == ns && s.name == pod)
        .max_by_key(|s| (s.ready, s.created))
    else {
        return Vec::new();
    };
    let mut v: Vec<Container> = rt
        .containers
        .values()
        .filter(|c| c.sandbox == sb.id && c.name == container)
        .map(|c| (**c).clone())
        .collect();
    v.sort_by_key(|c| std::cmp::Reverse((c.attempt, c.created)));
    v
}

/// Answers one kubelet API call on this machine.
pub fn serve(m: &mut Machine, call: KubeletCall) -> Result<KubeletReply, String> {
    match call {
        KubeletCall::Logs {
            namespace,
            pod,
            container,
            previous,
            skip,
            tail,
            timestamps,
        } => {
            let cs = find(m, &namespace, &pod, &container);
            let latest_runs = cs
                .first()
                .is_some_and(|c| c.state != ContainerState::Exited);
            let target = match (previous, latest_runs) {
                (true, true) => cs.get(1),
                (true, false) | (false, _) => cs.first(),
            };
            match target {
                None if previous => Err(format!("previous terminated container \"{container}\" in pod \"{pod}\" not found")),
                None => Err(format!("container \"{container}\" in pod \"{pod}\" is waiting to start: ContainerCreating")),
                Some(c) => {
                    let now = m.now();
                    let lines: Vec<_> = m
                        .runtime()
                        .logs
                        .get(&c.id)
                        .map(|l| l.iter().filter(|e| e.at <= now).cloned().collect())
                        .unwrap_or_default();
                    let total = lines.len();
                    let start = match tail {
                        Some(t) => total.saturating_sub(t).max(skip),
                        None => skip.min(total),
                    };
                    let text: String = lines[start..]
                        .iter()
                        .map(|e| {
                            if timestamps {
                                format!("{} {}\n", rfc3339_nanos(e.at), e.text)
                            } else {
                                format!("{}\n", e.text)
                            }
                        })
                        .collect();
                    Ok(KubeletReply::Logs { text, next: total, running: c.state == ContainerState::Running })
                }
            }
        }
        KubeletCall::Exec {
            namespace,
            pod,
            container,
            command,
            session,
        } => {
            let cs = find(m, &namespace, &pod, &container);
            match cs
                .first()
                .filter(|c| c.state == ContainerState::Running)
                .cloned()
            {
                None => Err(format!(
                    "unable to upgrade connection: container not found (\"{container}\")"
                )),
                Some(c) if session != 0 => Ok(shell::exec_line(m, &c, &command.join(" "), session)),
                Some(c) => Ok(shell::exec(m, &c, &command)),
            }
        }
        KubeletCall::Stats => Ok(KubeletReply::Stats(summary(m))),
    }
}

fn jitter(id: &str, window: Time, spread: u64) -> u64 {
    if spread == 0 {
        return 0;
    }
    crate::rng::fnv1a(format!("{id}/{window}").as_bytes()) % spread
}

/// The usage summary as of the last metrics-server scrape.
pub fn summary(m: &Machine) -> Summary {
    let at = m.now() / SCRAPE * SCRAPE;
    let name = m.name();
    let rt = m.runtime();
    let mut pods: Vec<PodUsage> = Vec::new();
    let mut cpu = 60 + jitter(name, at, 40);
    let mut mem: u64 = 690 * 1024 * 1024 + jitter(name, at, 40) * 1024 * 1024;
    for sb in rt.sandboxes.values().filter(|s| s.ready) {
        let mut containers = Vec::new();
        for c in rt.running_in(&sb.id) {
            let b = &c.behaviour;
            let pod = format!("{}/{}", sb.namespace, sb.name);
            let served = m.net_ref().state_ref().cpu_m(&pod, at, b.cost_us);
            let limit = b.cpu_limit_m.unwrap_or(u64::from(rt.cpus()) * 1000);
            let u = ContainerUsage {
                name: c.name.clone(),
                cpu_m: (b.cpu_m + jitter(&c.id, at, b.cpu_m / 2 + 1) + served)
                    .min(limit.max(b.cpu_m)),
                mem_bytes: b.mem_bytes + jitter(&c.id, at, b.mem_bytes / 20 + 1),
            };
            cpu += u.cpu_m;
            mem += u.mem_bytes;
            if c.started.is_some_and(|s| s + SCRAPE <= at) {
                containers.push(u);
            }
        }
        if !containers.is_empty() {
            containers.sort_by(|a, b| a.name.cmp(&b.name));
            pods.push(PodUsage {
                namespace: sb.namespace.clone(),
                name: sb.name.clone(),
                containers,
            });
        }
    }
    pods.sort_by(|a, b| (&a.namespace, &a.name).cmp(&(&b.namespace, &b.name)));
    Summary {
        at,
        cpu_m: cpu,
        mem_bytes: mem,
        pods,
    }
}
