//! A pod worker's sync: run its actions one by one against containerd and react to each
//! result (events, waiting reasons, back-offs), as `SyncPod` does.

use std::sync::Arc;

use crate::client::recorder::{NORMAL, WARNING};
use crate::message::Ctx;
use crate::node::journal::{q, Level};
use crate::node::podworker::{pod_key, pod_ref, Action, Backoff, Waiting, MIN_GRACE};
use crate::node::runtime::{ContainerState, CriOp, CriResult, Sandbox};
use crate::time::{format_duration, Time, SECOND};

use super::{default_pull_policy, Inflight, Kubelet, OsOp};

/// How long a preStop hook takes: `sleep N` (exec or the sleep action), else a moment.
fn prestop_ms(c: &k8s_openapi::api::core::v1::Container) -> Option<Time> {
    let h = c.lifecycle.as_ref()?.pre_stop.as_ref()?;
    if let Some(s) = &h.sleep {
        return Some((s.seconds.max(0) as Time).saturating_mul(SECOND));
    }
    if let Some(e) = &h.exec {
        let line = e.command.clone().unwrap_or_default().join(" ");
        if let Some(i) = line.find("sleep ") {
            let n: String = line[i + 6..]
                .chars()
                .take_while(|c| c.is_ascii_digit())
                .collect();
            return Some(n.parse::<Time>().unwrap_or(0).saturating_mul(SECOND));
        }
        return Some(100);
    }
    Some(50)
}

impl Kubelet {
    /// Starts a sync of one pod (or marks it to run again after the current one).
    pub(super) fn sync(&mut self, ctx: &mut Ctx, uid: &str) {
        let Some(w) = self.workers.get_mut(uid) else {
            return;
        };
        if w.busy {
            w.again = true;
            return;
        }
        if w.terminated && w.pod.is_none() {
            self.workers.remove(uid);
            self.last_status.remove(uid);
            self.forget_probes(uid);
            self.os_ops.push(OsOp::RemovePod(uid.to_string()));
            return;
        }
        w.busy = true;
        w.actions = [Action::Inspect].into_iter().collect();
        self.next_action(ctx, uid);
    }

    pub(super) fn sync_error(
        &mut self,
        now: Time,
        uid: &str,
        container: &str,
        reason: &str,
        msg: &str,
    ) {
        let Some(p) = self.workers.get(uid).and_then(|w| w.pod().cloned()) else {
            return;
        };
        let err = format!(
            "failed to \"StartContainer\" for {} with {reason}: {}",
            q(container),
            q(msg)
        );
        self.klog(
            now,
            Level::Error,
            "pod_workers.go:1301",
            format!(
                "\"Error syncing pod, skipping\" err={} pod={} podUID={}",
                q(&err),
                q(&pod_key(&p)),
                q(uid)
            ),
        );
    }

    /// Runs the worker's next action, or finishes the sync.
    pub(super) fn next_action(&mut self, ctx: &mut Ctx, uid: &str) {
        loop {
            let Some(w) = self.workers.get_mut(uid) else {
                return;
            };
            let Some(action) = w.actions.pop_front() else {
                w.busy = false;
                self.report_status(ctx, uid);
                let again = self
                    .workers
                    .get_mut(uid)
                    .is_some_and(|w| std::mem::take(&mut w.again));
                if again {
                    self.sync(ctx, uid);
                }
                return;
            };
            match &action {
                Action::FinalDelete => {
                    self.final_delete(ctx, uid);
                    continue;
                }
                Action::Prepare => {
                    if self.prepare(ctx, uid) {
                        return;
                    }
                    continue;
                }
                Action::EnsureImage { container } if self.image_blocked(ctx, uid, container) => {
                    continue;
                }
                Action::Create { container, attempt } => {
                    let (container, attempt) = (container.clone(), *attempt);
                    match self.container_config(uid, &container, attempt) {
                        Ok(cfg) => {
                            let Some(sandbox) =
                                self.workers.get(uid).and_then(|w| w.sandbox.clone())
                            else {
                                self.skip_container(uid, &container);
                                continue;
                            };
                            let op = CriOp::CreateContainer {
                                sandbox: sandbox.0,
                                config: Box::new(cfg),
                            };
                            self.send_action(ctx, uid, action, op, 0);
                            return;
                        }
                        Err(e) => {
                            if let Some(w) = self.workers.get_mut(uid) {
                                w.waiting.insert(
                                    container.clone(),
                                    Waiting {
                                        reason: "CreateContainerConfigError".into(),
                                        message: Some(e.clone()),
                                    },
                                );
                            }
                            self.skip_container(uid, &container);
                            self.container_event(
                                ctx,
                                uid,
                                &container,
                                WARNING,
                                "Failed",
                                &format!("Error: {e}"),
                            );
                            self.sync_error(
                                ctx.now,
                                uid,
                                &container,
                                "CreateContainerConfigError",
                                &e,
                            );
                            // The pod worker retries after its back-off period.
                            self.pod_timer(ctx, 10 * SECOND, uid);
                            continue;
                        }
                    }
                }
                Action::Kill {
                    id,
                    name,
                    grace_ms,
                    message,
                } => {
                    let (id, name, grace, message) =
                        (id.clone(), name.clone(), *grace_ms, message.clone());
                    let msg = message.unwrap_or_else(|| format!("Stopping container {name}"));
                    self.container_event(ctx, uid, &name, NORMAL, "Killing", &msg);
                    let spec = self
                        .workers
                        .get(uid)
                        .and_then(|w| w.container_spec(&name).cloned());
                    let hook = spec.as_ref().and_then(prestop_ms).filter(|_| grace > 0);
                    let remaining = hook
                        .map_or(grace, |h| grace.saturating_sub(h))
                        .max(MIN_GRACE);
                    let key = self
                        .workers
                        .get(uid)
                        .and_then(|w| w.pod())
                        .map(pod_key)
                        .unwrap_or_default();
                    self.klog(ctx.now, Level::Info, "kuberuntime_container.go:809", format!(
                        "\"Killing container with a grace period\" pod={} podUID={} containerName={} containerID={} gracePeriod={}",
                        q(&key), q(uid), q(&name), q(&format!("containerd://{id}")), remaining / SECOND
                    ));
                    let op = CriOp::StopContainer {
                        id,
                        timeout_ms: remaining,
                    };
                    self.send_action(ctx, uid, action, op, hook.unwrap_or(0).min(grace));
                    return;
                }
                _ => {}
            }
            let Some(w) = self.workers.get_mut(uid) else {
                return;
            };
            let Some(op) = w.cri_op(&action) else {
                continue;
            };
            if let Action::Pull { container } = &action {
                let image = w
                    .container_spec(container)
                    .and_then(|c| c.image.clone())
                    .unwrap_or_default();
                let container = container.clone();
                self.container_event(
                    ctx,
                    uid,
                    &container,
                    NORMAL,
                    "Pulling",
                    &format!("Pulling image \"{image}\""),
                );
            }
            self.send_action(ctx, uid, action, op, 0);
            return;
        }
    }

    /// Sends an action's CRI call (after `delay`); the action stays first until it answers.
    fn send_action(&mut self, ctx: &mut Ctx, uid: &str, action: Action, op: CriOp, delay: Time) {
        if let Some(w) = self.workers.get_mut(uid) {
            w.actions.push_front(action);
        }
        let id = self.cri_after(ctx, delay, op, Inflight::Cri(uid.to_string()));
        if let Some(w) = self.workers.get_mut(uid) {
            w.waiting_on = Some(id);
        }
    }

    pub(super) fn on_action_result(
        &mut self,
        ctx: &mut Ctx,
        uid: &str,
        result: Result<CriResult, String>,
    ) {
        let now = ctx.now;
        let Some(w) = self.workers.get_mut(uid) else {
            return;
        };
        w.waiting_on = None;
        let Some(action) = w.actions.pop_front() else {
            return;
        };
        match (action, result) {
            (
                Action::Inspect,
                Ok(CriResult::PodStatus {
                    sandboxes,
                    containers,
                }),
            ) => {
                for c in &containers {
                    if c.state == ContainerState::Exited {
                        w.seen_exits.insert(c.id.clone());
                    }
                }
                w.sandboxes = sandboxes;
                w.containers = containers;
                w.sandbox = w.ready_sandbox().map(|s| (s.id.clone(), s.ip.clone()));
                w.waiting.retain(|_, v| v.reason != "CrashLoopBackOff");
                w.mark_started();
                let actions = w.compute_actions(now);
                let crashloops: Vec<(String, String)> = w
                    .waiting
                    .iter()
                    .filter(|(_, v)| v.reason == "CrashLoopBackOff")
                    .map(|(k, v)| (k.clone(), v.message.clone().unwrap_or_default()))
                    .collect();
                let wake = crashloops
                    .iter()
                    .filter_map(|(n, _)| w.backoff_ends(n))
                    .filter(|t| *t > now)
                    .min();
                w.actions = actions;
                if w.terminated && w.pod.is_none() {
                    // Nothing left to stop: the next sync forgets the worker.
                    w.again = true;
                }
                let pod = w.pod().map(pod_ref).unwrap_or_default();
                for (name, msg) in crashloops {
                    self.container_event(
                        ctx,
                        uid,
                        &name,
                        WARNING,
                        "BackOff",
                        &format!("Back-off restarting failed container {name} in pod {pod}"),
                    );
                    self.sync_error(now, uid, &name, "CrashLoopBackOff", &msg);
                }
                if let Some(t) = wake {
                    self.pod_timer(ctx, t - now, uid);
                }
                self.sync_probes(ctx, uid);
                // The status manager learns the new state before the sync's actions run.
                self.report_status(ctx, uid);
            }
            (Action::RunSandbox, Ok(CriResult::Sandbox { id, ip })) => {
                w.sandbox = Some((id.clone(), ip.clone()));
                w.sandboxes.insert(
                    0,
                    Arc::new(Sandbox {
                        id,
                        pod_uid: uid.to_string(),
                        name: String::new(),
                        namespace: String::new(),
                        ip,
                        ready: true,
                        created: now,
                        pid: 0,
                        dns: Default::default(),
                        port_mappings: Vec::new(),
                    }),
                );
                w.containers.clear();
            }
            (Action::RunSandbox, Err(e)) => {
                w.actions.clear();
                let msg = format!("Failed to create pod sandbox: {e}");
                self.pod_event(ctx, uid, WARNING, "FailedCreatePodSandBox", &msg);
                self.pod_timer(ctx, 10 * SECOND, uid);
            }
            (Action::EnsureImage { container }, Ok(CriResult::Image(present))) => {
                let spec = w.container_spec(&container).cloned().unwrap_or_default();
                let image = spec.image.clone().unwrap_or_default();
                let policy = spec
                    .image_pull_policy
                    .clone()
                    .unwrap_or_else(|| default_pull_policy(&image));
                let need = match policy.as_str() {
                    "Always" => true,
                    "Never" => false,
                    _ => present.is_none(),
                };
                if need {
                    w.actions.push_front(Action::Pull { container });
                } else if present.is_none() {
                    let msg = format!(
                        "Container image \"{image}\" is not present with pull policy of Never"
                    );
                    w.waiting.insert(
                        container.clone(),
                        Waiting {
                            reason: "ErrImageNeverPull".into(),
                            message: Some(msg.clone()),
                        },
                    );
                    self.skip_container(uid, &container);
                    self.container_event(ctx, uid, &container, WARNING, "ErrImageNeverPull", &msg);
                    self.container_event(
                        ctx,
                        uid,
                        &container,
                        WARNING,
                        "Failed",
                        "Error: ErrImageNeverPull",
                    );
                } else {
                    self.container_event(ctx, uid, &container, NORMAL, "Pulled", &format!("Container image \"{image}\" already present on machine and can be accessed by the pod"));
                }
            }
            (
                Action::Pull { container },
                Ok(CriResult::Pulled {
                    size, took, waited, ..
                }),
            ) => {
                let image = w
                    .container_spec(&container)
                    .and_then(|c| c.image.clone())
                    .unwrap_or_default();
                w.pull_backoff.remove(&image);
                w.pull_errors.remove(&image);
                let msg = format!(
                    "Successfully pulled image \"{image}\" in {} ({} including waiting). Image size: {size} bytes.",
                    format_duration(took),
                    format_duration(waited)
                );
                self.container_event(ctx, uid, &container, NORMAL, "Pulled", &msg);
            }
            (Action::Pull { container }, Err(e)) => {
                let image = w
                    .container_spec(&container)
                    .and_then(|c| c.image.clone())
                    .unwrap_or_default();
                let prev = w.pull_backoff.get(&image).copied();
                let b = Backoff::next(prev, now);
                w.pull_backoff.insert(image.clone(), b);
                w.pull_errors.insert(image.clone(), e.clone());
                w.waiting.insert(
                    container.clone(),
                    Waiting {
                        reason: "ErrImagePull".into(),
                        message: Some(e.clone()),
                    },
                );
                self.skip_container(uid, &container);
                self.container_event(
                    ctx,
                    uid,
                    &container,
                    WARNING,
                    "Failed",
                    &format!("Failed to pull image \"{image}\": {e}"),
                );
                self.container_event(
                    ctx,
                    uid,
                    &container,
                    WARNING,
                    "Failed",
                    "Error: ErrImagePull",
                );
                self.sync_error(now, uid, &container, "ErrImagePull", &e);
                // The pod worker retries soon after an error: the back-off shows.
                self.pod_timer(ctx, SECOND, uid);
                let _ = b;
            }
            (Action::Create { container, .. }, Ok(CriResult::Container(id))) => {
                w.created.insert(container.clone(), id);
                self.container_event(ctx, uid, &container, NORMAL, "Created", "Container created");
            }
            (Action::Start { container }, Ok(_)) => {
                w.waiting.remove(&container);
                self.container_event(ctx, uid, &container, NORMAL, "Started", "Container started");
                // Re-inspect so the status shows the running container.
                if let Some(w) = self.workers.get_mut(uid) {
                    if !w.actions.contains(&Action::Inspect) {
                        w.again = true;
                    }
                }
            }
            (Action::Create { container, .. } | Action::Start { container }, Err(e)) => {
                let e = e
                    .split_once(" desc = ")
                    .map_or(e.clone(), |(_, d)| d.to_string());
                w.waiting.insert(
                    container.clone(),
                    Waiting {
                        reason: "CreateContainerError".into(),
                        message: Some(e.clone()),
                    },
                );
                self.skip_container(uid, &container);
                self.container_event(
                    ctx,
                    uid,
                    &container,
                    WARNING,
                    "Failed",
                    &format!("Error: {e}"),
                );
            }
            (
                Action::Kill {
                    message: Some(_), ..
                },
                _,
            ) => w.again = true,
            (Action::RemoveSandbox, Ok(_)) if w.pod.is_none() => {
                // Look again: once nothing of a removed pod is left, its worker goes.
                w.again = true;
            }
            (Action::Kill { .. } | Action::StopSandbox | Action::RemoveSandbox, _) => {}
            (_, Err(_)) => {
                // containerd unreachable: retry later.
                w.actions.clear();
                self.pod_timer(ctx, 2 * SECOND, uid);
            }
            _ => {}
        }
        self.next_action(ctx, uid);
    }
}
