//! One recorded request as the hops to animate: client → DNS → each rule that decided
//! something → the chosen endpoint on its node → the container, or where it failed.

use crate::node::net::TrafficPath;
use crate::time::Time;

/// How a request ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PathOutcome {
    /// A container (or the apiserver) answered.
    Answered,
    /// A REJECT rule refused it (no endpoints): `Connection refused` at once.
    Rejected,
    /// A DROP rule ate it: the client times out.
    Dropped,
    /// Nothing answered (powered off, partitioned, no route): a timeout.
    Timeout,
    /// It arrived and nothing listened on the port.
    Refused,
    /// The name did not resolve.
    Unresolved,
}

impl PathOutcome {
    /// The CSS class / `data-outcome` value.
    pub fn as_str(self) -> &'static str {
        match self {
            PathOutcome::Answered => "answered",
            PathOutcome::Rejected => "rejected",
            PathOutcome::Dropped => "dropped",
            PathOutcome::Timeout => "timeout",
            PathOutcome::Refused => "refused",
            PathOutcome::Unresolved => "unresolved",
        }
    }

    /// Whether the request failed.
    pub fn failed(self) -> bool {
        self != PathOutcome::Answered
    }
}

/// What a step of the path is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StepKind {
    /// Who sent it.
    Client,
    /// The name lookup through the kube-dns Service.
    Dns,
    /// A rule that decided something (matched, or a statistic draw not taken).
    Rule,
    /// Forwarded to another node (NodePort).
    Route,
    /// The endpoint chosen, on its node.
    Endpoint,
    /// The container that answered.
    Container,
    /// Where it stopped: REJECT, DROP, timeout, refused.
    Failure,
}

impl StepKind {
    /// The CSS class / `data-kind` value.
    pub fn as_str(self) -> &'static str {
        match self {
            StepKind::Client => "client",
            StepKind::Dns => "dns",
            StepKind::Rule => "rule",
            StepKind::Route => "route",
            StepKind::Endpoint => "endpoint",
            StepKind::Container => "container",
            StepKind::Failure => "failure",
        }
    }
}

/// One step.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PathStep {
    /// What it is.
    pub kind: StepKind,
    /// Its title (`KUBE-SVC-…`, `default/client`, `10.244.2.3:80`).
    pub title: String,
    /// What happened there (`random 0.1817 < 0.33333333349: taken`).
    pub detail: String,
    /// The node it happened on, if any.
    pub node: Option<String>,
    /// False for a rule that was evaluated and not taken.
    pub taken: bool,
}

/// A request's path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PathView {
    /// When it was sent (virtual ms).
    pub at: Time,
    /// `http://web/`.
    pub url: String,
    /// Who sent it.
    pub from: String,
    /// The engine's words for where it ended.
    pub outcome_text: String,
    /// How it ended.
    pub outcome: PathOutcome,
    /// The steps, in order.
    pub steps: Vec<PathStep>,
}

impl PathView {
    /// A key that changes with every new request (for restarting the animation).
    pub fn key(&self) -> String {
        format!(
            "{}|{}|{}|{}",
            self.at,
            self.from,
            self.url,
            self.steps.len()
        )
    }
}

/// How the recorded request ended, from what the data plane wrote down.
pub fn classify(p: &TrafficPath) -> PathOutcome {
    let o = p.outcome.as_str();
    if p.dns.as_ref().is_some_and(|d| d.1 == "NXDOMAIN") {
        PathOutcome::Unresolved
    } else if o.starts_with("rejected") {
        PathOutcome::Rejected
    } else if o.starts_with("dropped") {
        PathOutcome::Dropped
    } else if o.contains("unreachable") || o.contains("no route") || o.contains("no pod has") {
        PathOutcome::Timeout
    } else if o.contains("connection refused") || o.contains("nothing listening") {
        PathOutcome::Refused
    } else {
        PathOutcome::Answered
    }
}

fn failure_title(o: PathOutcome) -> &'static str {
    match o {
        PathOutcome::Rejected => "REJECT",
        PathOutcome::Dropped => "DROP",
        PathOutcome::Timeout => "timeout",
        PathOutcome::Refused => "refused",
        PathOutcome::Unresolved => "NXDOMAIN",
        PathOutcome::Answered => "",
    }
}

/// `10.244.2.3:80 (default/web-7c5d-x) on node-2` → (`10.244.2.3:80`, pod, node).
fn endpoint_parts(outcome: &str) -> (String, Option<String>, Option<String>) {
    let addr = outcome
        .split([' ', ':'])
        .next()
        .map(str::to_string)
        .unwrap_or_default();
    let port = outcome
        .split_whitespace()
        .next()
        .and_then(|w| w.trim_end_matches(':').split_once(':'))
        .map(|(_, p)| p.to_string());
    let pod = outcome.find('(').and_then(|a| {
        outcome[a + 1..]
            .find(')')
            .map(|b| outcome[a + 1..a + 1 + b].to_string())
    });
    let node = outcome
        .find(" on ")
        .map(|a| {
            outcome[a + 4..]
                .split([':', ' '])
                .next()
                .unwrap_or("")
                .to_string()
        })
        .filter(|n| !n.is_empty());
    let addr = match port {
        Some(p) => format!("{addr}:{p}"),
        None => addr,
    };
    (addr, pod, node)
}

/// The steps of `p`, for the animation.
pub fn path_view(p: &TrafficPath) -> PathView {
    let outcome = classify(p);
    let mut steps = vec![PathStep {
        kind: StepKind::Client,
        title: p.from.clone(),
        detail: match p.url.strip_prefix("dns:") {
            Some(name) => format!("DNS query {name} (UDP 53)"),
            None => format!("GET {}", p.url),
        },
        node: Some(p.node.clone()),
        taken: true,
    }];
    if let Some((name, answer, server)) = &p.dns {
        steps.push(PathStep {
            kind: StepKind::Dns,
            title: format!("DNS {name}"),
            detail: format!("{answer} (from {server})"),
            node: None,
            taken: answer != "NXDOMAIN",
        });
    }
    for h in &p.hops {
        let kind = if h.table == "route" {
            StepKind::Route
        } else {
            StepKind::Rule
        };
        let title = match h.table.as_str() {
            "route" => h.rule.clone(),
            "ipvs" => format!("IPVS {}", h.chain),
            t => format!("{t} {}", h.chain),
        };
        steps.push(PathStep {
            kind,
            title,
            detail: h.note.clone(),
            node: Some(h.node.clone()),
            taken: h.matched,
        });
    }
    let (addr, pod, node) = endpoint_parts(&p.outcome);
    if outcome.failed() {
        steps.push(PathStep {
            kind: StepKind::Failure,
            title: failure_title(outcome).to_string(),
            detail: p.outcome.clone(),
            node,
            taken: true,
        });
    } else {
        steps.push(PathStep {
            kind: StepKind::Endpoint,
            title: addr,
            detail: pod.clone().unwrap_or_else(|| p.outcome.clone()),
            node: node.clone(),
            taken: true,
        });
        steps.push(PathStep {
            kind: StepKind::Container,
            title: pod
                .or(p.endpoint.clone())
                .unwrap_or_else(|| "kube-apiserver".into()),
            detail: "answers".into(),
            node,
            taken: true,
        });
    }
    PathView {
        at: p.at,
        url: p.url.clone(),
        from: p.from.clone(),
        outcome_text: p.outcome.clone(),
        outcome,
        steps,
    }
}
