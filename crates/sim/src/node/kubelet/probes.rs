//! The kubelet's probe manager: a worker per container and probe kind, ticking every
//! `periodSeconds` from when the pod was added, skipping the initial delay; results move
//! readiness, and liveness/startup failures condemn the container to a restart.

use std::collections::BTreeMap;

use crate::client::recorder::WARNING;
use crate::message::Ctx;
use crate::node::journal::{q, Level};
use crate::node::logs;
use crate::node::podworker::{pod_key, pod_of};
use crate::node::prober::{self, ProbeKind, ProbeWorker};
use crate::node::runtime::ContainerState;
use crate::time::Time;

use super::{Kubelet, Timer};

/// What the probes say about a pod's containers (by name), for its status.
#[derive(Clone, Debug, Default)]
pub struct ProbeView {
    /// Readiness per container (true without a readiness probe once started).
    pub ready: BTreeMap<String, bool>,
    /// Whether each running container counts as started (startup probe passed).
    pub started: BTreeMap<String, bool>,
}

const KINDS: [ProbeKind; 3] = [
    ProbeKind::Startup,
    ProbeKind::Liveness,
    ProbeKind::Readiness,
];

impl Kubelet {
    /// Brings the probe workers in line with the pod's containers after an inspection.
    pub(super) fn sync_probes(&mut self, ctx: &mut Ctx, uid: &str) {
        let Some(w) = self.workers.get_mut(uid) else {
            return;
        };
        // The pod is shared (an `Arc`), so its containers are read in place while the
        // worker and the probes change.
        let pod_obj = w.pod.clone();
        let Some(spec) = pod_of(&pod_obj).and_then(|p| p.spec.as_ref()) else {
            return;
        };
        let added = w.start_time.unwrap_or(0);
        let mut schedule: Vec<(String, ProbeKind, Time)> = Vec::new();
        let mut trigger: Vec<String> = Vec::new();
        let probed = spec.containers.iter().chain(
            spec.init_containers
                .iter()
                .flatten()
                .filter(|c| c.restart_policy.as_deref() == Some("Always")),
        );
        for c in probed {
            let Some(latest) = w.latest(&c.name).cloned() else {
                continue;
            };
            if latest.state != ContainerState::Running {
                continue;
            }
            if c.startup_probe.is_none() {
                w.started.insert(latest.id.clone());
            }
            for kind in KINDS {
                let Some(p) = kind.of(c) else {
                    continue;
                };
                let key = (uid.to_string(), c.name.clone(), kind);
                let fresh = self
                    .probes
                    .get(&key)
                    .is_none_or(|pw| pw.container_id != latest.id);
                if fresh {
                    self.probes.insert(key, ProbeWorker::new(&latest.id));
                    let period = prober::period(p);
                    // Ticks run from when the worker started (the pod was added), or at a
                    // random point of the first period after a kubelet restart.
                    let base = if self.started_at > added {
                        self.started_at + self.rng.intn(period)
                    } else {
                        added
                    };
                    let next = if ctx.now < base {
                        base
                    } else {
                        base + ((ctx.now - base) / period + 1) * period
                    };
                    schedule.push((c.name.clone(), kind, next));
                    if kind == ProbeKind::Readiness && prober::initial_delay(p) == 0 {
                        trigger.push(c.name.clone());
                    }
                }
            }
        }
        for (name, kind, at) in schedule {
            self.probe_timer(ctx, uid, &name, kind, at);
        }
        for name in trigger {
            self.probe_once(ctx, uid, &name, ProbeKind::Readiness);
        }
    }

    fn probe_timer(
        &mut self,
        ctx: &mut Ctx,
        uid: &str,
        container: &str,
        kind: ProbeKind,
        at: Time,
    ) {
        let t = Timer::Probe(uid.to_string(), container.to_string(), kind);
        self.timers.cancel(|x| *x == t);
        self.timers.set(ctx, at.saturating_sub(ctx.now), t);
    }

    pub(super) fn on_probe_timer(
        &mut self,
        ctx: &mut Ctx,
        uid: String,
        container: String,
        kind: ProbeKind,
    ) {
        let Some(spec) = self
            .workers
            .get(&uid)
            .and_then(|w| w.container_spec(&container))
            .cloned()
        else {
            self.probes.remove(&(uid, container, kind));
            return;
        };
        let Some(p) = kind.of(&spec).cloned() else {
            return;
        };
        self.probe_once(ctx, &uid, &container, kind);
        if self
            .probes
            .contains_key(&(uid.clone(), container.clone(), kind))
        {
            let at = ctx.now + prober::period(&p);
            self.probe_timer(ctx, &uid, &container, kind, at);
        }
    }

    /// Runs one probe (if due) and acts on a changed result.
    fn probe_once(&mut self, ctx: &mut Ctx, uid: &str, container: &str, kind: ProbeKind) {
        let now = ctx.now;
        let key = (uid.to_string(), container.to_string(), kind);
        let Some(w) = self.workers.get(uid) else {
            self.probes.remove(&key);
            return;
        };
        if w.terminating {
            return;
        }
        let pod_obj = w.pod.clone();
        let (Some(pod), Some(spec)) = (pod_of(&pod_obj), w.container_spec(container).cloned())
        else {
            return;
        };
        let Some(p) = kind.of(&spec).cloned() else {
            return;
        };
        let Some(pw) = self.probes.get(&key).cloned() else {
            return;
        };
        let Some(c) = w.latest(container).cloned() else {
            return;
        };
        if c.id != pw.container_id || c.state != ContainerState::Running || pw.on_hold {
            return;
        }
        if kind != ProbeKind::Startup && !w.started.contains(&c.id) {
            return;
        }
        if kind == ProbeKind::Startup && w.started.contains(&c.id) {
            return;
        }
        if now < c.started.unwrap_or(0) + prober::initial_delay(&p) {
            return;
        }
        let pod_ip = w.sandbox.as_ref().map(|s| s.1.clone()).unwrap_or_default();
        let pod_name = pod.metadata.name.clone().unwrap_or_default();
        let result = prober::run(&p, &spec, &c, &pod_ip, &pod_name, now);
        if let Some((port, path)) = prober::http_target(&p, &spec) {
            let server = c
                .behaviour
                .listening(&c.declared_ports)
                .into_iter()
                .find(|(x, _)| *x == port)
                .and_then(|(_, s)| prober::is_http(s));
            if let (Some(server), true) = (server, c.accepts(port, now)) {
                let req = crate::node::http::Request {
                    host: &pod_ip,
                    path: &path,
                    client: &self.gateway,
                    agent: "kube-probe/1.35",
                    pod_name: &pod_name,
                    pod_ip: &pod_ip,
                    port,
                    now,
                };
                let r = crate::node::http::respond(server, &c, &req);
                if let Some(line) = logs::access(
                    &c,
                    now,
                    &self.gateway,
                    &path,
                    r.status,
                    r.body.len(),
                    "kube-probe/1.35",
                ) {
                    self.container_logs.push((c.id.clone(), line));
                }
            }
        }
        let ok = result.is_ok();
        if let Err(out) = &result {
            let out = out.trim_end().to_string();
            self.container_event(
                ctx,
                uid,
                container,
                WARNING,
                "Unhealthy",
                &format!("{} probe failed: {out}", kind.name()),
            );
            self.klog(now, Level::Info, "prober.go:107", format!(
                "\"Probe failed\" probeType={} pod={} podUID={} containerName={} probeResult=\"failure\" output={}",
                q(kind.name()), q(&pod_key(&pod)), q(uid), q(container), q(&out)
            ));
        }
        let Some(pw) = self.probes.get_mut(&key) else {
            return;
        };
        let changed = pw.record(ok, &p);
        match (kind, changed) {
            (ProbeKind::Readiness, Some(_)) => self.report_status(ctx, uid),
            (ProbeKind::Startup, Some(true)) => {
                if let Some(w) = self.workers.get_mut(uid) {
                    w.started.insert(c.id.clone());
                }
                if spec
                    .readiness_probe
                    .as_ref()
                    .is_some_and(|r| prober::initial_delay(r) == 0)
                {
                    self.probe_once(ctx, uid, container, ProbeKind::Readiness);
                }
                self.report_status(ctx, uid);
            }
            (ProbeKind::Liveness | ProbeKind::Startup, Some(false)) => {
                pw.on_hold = true;
                let what = if kind == ProbeKind::Liveness {
                    "liveness"
                } else {
                    "startup"
                };
                if let Some(w) = self.workers.get_mut(uid) {
                    w.condemned.insert(
                        container.to_string(),
                        format!("Container {container} failed {what} probe, will be restarted"),
                    );
                }
                self.sync(ctx, uid);
            }
            _ => {}
        }
    }

    /// Readiness and started flags of a pod's containers for its status.
    pub(super) fn probe_view(&self, uid: &str) -> ProbeView {
        let mut v = ProbeView::default();
        let Some(w) = self.workers.get(uid) else {
            return v;
        };
        let Some(spec) = w.pod().and_then(|p| p.spec.as_ref()) else {
            return v;
        };
        for c in spec
            .containers
            .iter()
            .chain(spec.init_containers.iter().flatten())
        {
            let Some(latest) = w.latest(&c.name) else {
                continue;
            };
            let running = latest.state == ContainerState::Running;
            let started = running && w.started.contains(&latest.id);
            let ready = started
                && match &c.readiness_probe {
                    None => true,
                    Some(_) => self
                        .probes
                        .get(&(uid.to_string(), c.name.clone(), ProbeKind::Readiness))
                        .is_some_and(|pw| pw.container_id == latest.id && pw.result == Some(true)),
                };
            v.started.insert(c.name.clone(), started);
            v.ready.insert(c.name.clone(), ready);
        }
        v
    }

    /// Drops every probe worker of a pod.
    pub(super) fn forget_probes(&mut self, uid: &str) {
        self.probes.retain(|(u, _, _), _| u != uid);
        self.timers
            .cancel(|t| matches!(t, Timer::Probe(u, _, _) if u == uid));
    }
}
