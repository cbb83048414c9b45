//! Probes as the kubelet's prober runs them: HTTP GET, TCP connect, exec and gRPC against
//! a container, with upstream's output strings, and the per-container probe worker state
//! (thresholds, initial delay, results).

use k8s_openapi::api::core::v1::{Container as K8sContainer, Probe};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use crate::node::behavior::{Proto, Server};
use crate::node::cri::{Container, ContainerState};
use crate::node::http::{self, Request};
use crate::time::{Time, SECOND};

/// Which probe.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ProbeKind {
    /// startupProbe.
    Startup,
    /// livenessProbe.
    Liveness,
    /// readinessProbe.
    Readiness,
}

impl ProbeKind {
    /// `Startup`, `Liveness`, `Readiness` (as events and logs spell it).
    pub fn name(self) -> &'static str {
        match self {
            ProbeKind::Startup => "Startup",
            ProbeKind::Liveness => "Liveness",
            ProbeKind::Readiness => "Readiness",
        }
    }

    /// The probe of this kind in a container spec.
    pub fn of(self, c: &K8sContainer) -> Option<&Probe> {
        match self {
            ProbeKind::Startup => c.startup_probe.as_ref(),
            ProbeKind::Liveness => c.liveness_probe.as_ref(),
            ProbeKind::Readiness => c.readiness_probe.as_ref(),
        }
    }
}

/// A probe worker: one per container and probe kind.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProbeWorker {
    /// The container instance it last probed.
    pub container_id: String,
    /// Last result (None before the first probe).
    pub result: Option<bool>,
    /// Consecutive successes.
    pub successes: i32,
    /// Consecutive failures.
    pub failures: i32,
    /// Stop probing until the container restarts (after a liveness/startup kill).
    pub on_hold: bool,
}

impl ProbeWorker {
    /// A worker for a container instance; readiness starts as failed, the others as
    /// unknown (`initialValue`).
    pub fn new(container_id: &str) -> ProbeWorker {
        ProbeWorker {
            container_id: container_id.to_string(),
            result: None,
            successes: 0,
            failures: 0,
            on_hold: false,
        }
    }

    /// Records one probe; returns the result if it changed (thresholds applied).
    pub fn record(&mut self, ok: bool, p: &Probe) -> Option<bool> {
        if ok {
            self.failures = 0;
            self.successes += 1;
        } else {
            self.successes = 0;
            self.failures += 1;
        }
        let success_threshold = p.success_threshold.unwrap_or(1).max(1);
        let failure_threshold = p.failure_threshold.unwrap_or(3).max(1);
        let new = if ok && self.successes >= success_threshold {
            Some(true)
        } else if !ok && self.failures >= failure_threshold {
            Some(false)
        } else {
            None
        };
        match new {
            Some(r) if self.result != Some(r) => {
                self.result = Some(r);
                Some(r)
            }
            _ => None,
        }
    }
}

/// `periodSeconds` in ms (default 10 s).
pub fn period(p: &Probe) -> Time {
    p.period_seconds.unwrap_or(10).max(1) as Time * SECOND
}

/// `initialDelaySeconds` in ms.
pub fn initial_delay(p: &Probe) -> Time {
    p.initial_delay_seconds.unwrap_or(0).max(0) as Time * SECOND
}

fn resolve_port(port: &IntOrString, spec: &K8sContainer) -> Result<i32, String> {
    match port {
        IntOrString::Int(i) => Ok(*i),
        IntOrString::String(s) => spec
            .ports
            .iter()
            .flatten()
            .find(|p| p.name.as_deref() == Some(s.as_str()))
            .map(|p| p.container_port)
            .or_else(|| s.parse().ok())
            .ok_or_else(|| format!("port {s} not found")),
    }
}

/// The port and path an HTTP probe hits.
pub fn http_target(p: &Probe, spec: &K8sContainer) -> Option<(i32, String)> {
    let h = p.http_get.as_ref()?;
    let port = resolve_port(&h.port, spec).ok()?;
    let path = h
        .path
        .clone()
        .filter(|x| !x.is_empty())
        .unwrap_or_else(|| "/".into());
    Some((port, path))
}

/// Runs a probe once against a running container: Ok, or the failure output the
/// `Unhealthy` event shows (`Get "http://10.244.1.2:80/": dial tcp …: connect: connection refused`).
pub fn run(
    p: &Probe,
    spec: &K8sContainer,
    c: &Container,
    pod_ip: &str,
    pod_name: &str,
    now: Time,
) -> Result<(), String> {
    if c.state != ContainerState::Running {
        return Err("container not running".into());
    }
    if let Some(h) = &p.http_get {
        let port = resolve_port(&h.port, spec)?;
        let host = h
            .host
            .clone()
            .filter(|x| !x.is_empty())
            .unwrap_or_else(|| pod_ip.to_string());
        let scheme = h.scheme.as_deref().unwrap_or("HTTP").to_ascii_lowercase();
        let path = h
            .path
            .clone()
            .filter(|x| !x.is_empty())
            .unwrap_or_else(|| "/".into());
        let url = format!("{scheme}://{host}:{port}{path}");
        if !c.accepts(port, now) {
            return Err(format!(
                "Get \"{url}\": dial tcp {host}:{port}: connect: connection refused"
            ));
        }
        let server = c
            .behaviour
            .listening(&c.declared_ports)
            .into_iter()
            .find(|(x, _)| *x == port)
            .map(|(_, s)| s);
        let status = match server {
            Some(Proto::Http(s)) => {
                let req = Request {
                    host: &host,
                    path: &path,
                    client: "",
                    agent: "kube-probe/1.35",
                    pod_name,
                    pod_ip,
                    port,
                    now,
                };
                http::respond(s, c, &req).status
            }
            _ => {
                return Err(format!(
                    "Get \"{url}\": net/http: HTTP/1.x transport connection broken: malformed HTTP response \"\\x00\\x00\\x00\\n\""
                ))
            }
        };
        if (200..400).contains(&status) {
            return Ok(());
        }
        return Err(format!("HTTP probe failed with statuscode: {status}"));
    }
    if let Some(t) = &p.tcp_socket {
        let port = resolve_port(&t.port, spec)?;
        let host = t
            .host
            .clone()
            .filter(|x| !x.is_empty())
            .unwrap_or_else(|| pod_ip.to_string());
        if c.accepts(port, now) {
            return Ok(());
        }
        return Err(format!(
            "dial tcp {host}:{port}: connect: connection refused"
        ));
    }
    if let Some(g) = &p.grpc {
        if c.accepts(g.port, now) && !c.unready(now) {
            return Ok(());
        }
        return Err(format!(
            "timeout: failed to connect service \"{pod_ip}:{}\" within 1s: context deadline exceeded",
            g.port
        ));
    }
    if let Some(e) = &p.exec {
        return exec(&e.command.clone().unwrap_or_default(), c, now);
    }
    Ok(())
}

/// An exec probe: the classic `cat /tmp/healthy` against the container's own
/// `touch … && sleep N && rm …` timeline, database pings, `true`/`false`.
fn exec(cmd: &[String], c: &Container, now: Time) -> Result<(), String> {
    let line = cmd.join(" ");
    let file_target = cmd
        .iter()
        .position(|a| a == "cat" || a == "test" || a == "ls")
        .and_then(|i| cmd[i + 1..].iter().find(|a| a.starts_with('/')))
        .cloned();
    if let Some(f) = file_target {
        return if file_exists(c, &f, now) {
            Ok(())
        } else {
            Err(format!(
                "cat: can't open '{f}': No such file or directory\n"
            ))
        };
    }
    if line.contains("false") && !line.contains("true") {
        return Err(String::new());
    }
    let ready = c.listening_at().is_some_and(|t| now >= t) && !c.unready(now);
    if line.contains("mysqladmin") || line.contains("pg_isready") || line.contains("redis-cli") {
        return if ready {
            Ok(())
        } else if line.contains("mysqladmin") {
            Err("mysqladmin: connect to server at 'localhost' failed\nerror: 'Can't connect to local MySQL server through socket '/var/run/mysqld/mysqld.sock' (2)'\nCheck that mysqld is running and that the socket: '/var/run/mysqld/mysqld.sock' exists!\n".into())
        } else if line.contains("pg_isready") {
            Err("/var/run/postgresql:5432 - no response\n".into())
        } else {
            Err("Could not connect to Redis at 127.0.0.1:6379: Connection refused\n".into())
        };
    }
    if c.unready(now) {
        return Err(String::new());
    }
    Ok(())
}

/// Whether the container's own command has created (and not yet removed) a file by `now`:
/// `touch F; sleep 30; rm -f F` steps, run from the start time.
pub fn file_exists(c: &Container, file: &str, now: Time) -> bool {
    let Some(start) = c.started else {
        return false;
    };
    let line = c.command.join(" ");
    let mut t = start;
    let mut exists = false;
    for step in line.split([';', '&', '\n']) {
        let words: Vec<&str> = step
            .split_whitespace()
            .skip_while(|w| !matches!(*w, "touch" | "rm" | "sleep"))
            .collect();
        match words.as_slice() {
            ["touch", files @ ..] if files.contains(&file) && t <= now => exists = true,
            ["rm", rest @ ..] if rest.contains(&file) && t <= now => exists = false,
            ["sleep", n, ..] => {
                let d = n.parse::<f64>().ok().filter(|s| s.is_finite() && *s >= 0.0);
                t = t.saturating_add(d.map_or(Time::MAX, |s| (s * SECOND as f64) as Time));
            }
            _ => {}
        }
    }
    exists
}

/// Whether a server of this flavour counts as an HTTP endpoint (for `Proto`).
pub fn is_http(p: Proto) -> Option<Server> {
    match p {
        Proto::Http(s) => Some(s),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::Probe;

    #[test]
    fn thresholds_flip_results_once() {
        let p = Probe {
            failure_threshold: Some(3),
            ..Probe::default()
        };
        let mut w = ProbeWorker::new("c1");
        assert_eq!(w.record(true, &p), Some(true));
        assert_eq!(w.record(false, &p), None);
        assert_eq!(w.record(false, &p), None);
        assert_eq!(w.record(false, &p), Some(false));
        assert_eq!(w.record(false, &p), None);
        assert_eq!(w.record(true, &p), Some(true));
    }
}
