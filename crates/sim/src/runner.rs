//! Running a scenario: build the cluster it describes, run its steps at their virtual
//! times through the terminal, and collect what each step printed (design §3.3).

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{ContainerImage, Taint};

use crate::cluster::{ClusterConfig, NodeConfig, ProxyMode};
use crate::cmd;
use crate::envelope;
use crate::scenario::{self, Scenario};
use crate::time::{Time, MINUTE};
use crate::world::World;

/// How long a command that does not stream may keep the terminal (like a user waiting).
pub const COMMAND_LIMIT: Time = 10 * MINUTE;

/// What one step printed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StepResult {
    /// The step's time (ms).
    pub at_ms: Time,
    /// The command line.
    pub command: String,
    /// Exit code.
    pub exit_code: i32,
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
}

/// The cluster a scenario describes.
pub fn cluster_config(sc: &Scenario) -> ClusterConfig {
    let nodes: Vec<NodeConfig> = sc
        .nodes()
        .into_iter()
        .map(|n| NodeConfig {
            name: n.name,
            capacity: n.capacity,
            allocatable: n.allocatable,
            labels: n.labels,
            taints: n
                .taints
                .into_iter()
                .map(|t| Taint {
                    key: t.key,
                    value: (!t.value.is_empty()).then_some(t.value),
                    effect: t.effect.as_str().into(),
                    time_added: None,
                })
                .collect(),
            images: n
                .images
                .into_iter()
                .map(|i| ContainerImage {
                    names: Some(i.names),
                    size_bytes: Some(i.size_bytes as i64),
                })
                .collect(),
        })
        .collect();
    ClusterConfig {
        seed: sc.spec.seed,
        nodes,
        scheduler_config: sc.spec.scheduler_configuration.clone(),
        proxy_mode: match sc.spec.proxy_mode {
            scenario::ProxyMode::Iptables => ProxyMode::Iptables,
            scenario::ProxyMode::Ipvs => ProxyMode::Ipvs,
            scenario::ProxyMode::Nftables => ProxyMode::Nftables,
        },
        scheduling_annotations: sc.spec.scheduling_annotations,
        hollow_nodes: false,
        max_pods: envelope::MAX_PODS,
    }
}

/// The `spec.addons` names and the command their docs install them with.
pub const ADDONS: &[(&str, &str)] = &[
    // Runs on the host, not applied: `new_world` starts it (the command is what the
    // docs type in a second terminal).
    (crate::cloud::ADDON, "cloud-provider-kind"),
    (
        crate::cluster::gateway_api::ADDON,
        "kubectl apply --server-side -f https://github.com/envoyproxy/gateway/releases/download/v1.5.0/install.yaml",
    ),
    (
        crate::cluster::gateway_api::CRDS_ADDON,
        "kubectl apply -f https://github.com/kubernetes-sigs/gateway-api/releases/download/v1.4.0/standard-install.yaml",
    ),
    (
        crate::cluster::ingress_nginx::ADDON,
        "kubectl apply -f https://kind.sigs.k8s.io/examples/ingress/deploy-ingress-nginx.yaml",
    ),
];

/// The world a scenario starts in: its cluster, with the `spec.addons` applied at time 0
/// as their docs apply them (`kubectl apply -f <URL>`, not shown as a step).
pub fn new_world(sc: &Scenario) -> World {
    let mut world = World::new(cluster_config(sc));
    for a in &sc.spec.addons {
        if a == crate::cloud::ADDON {
            // Started on the host before the first step, as the docs run it.
            world.start(crate::world::Actor::CloudProvider);
            continue;
        }
        let Some((_, line)) = ADDONS.iter().find(|(n, _)| n == a) else {
            continue;
        };
        cmd::run_within(
            &mut world,
            line,
            &BTreeMap::new(),
            COMMAND_LIMIT,
            envelope::MAX_EVENTS_PER_COMMAND,
        );
    }
    world
}

/// Whether a command streams until interrupted (`kubectl get -w`, `etcdctl watch`).
pub fn is_streaming(line: &str) -> bool {
    let words = cmd::tokenize(line).unwrap_or_default();
    match words.first().map(String::as_str) {
        Some("kubectl") | Some("k") => match words.get(1).map(String::as_str) {
            Some("get") => words
                .iter()
                .any(|w| w == "-w" || w == "--watch" || w == "--watch-only" || w == "--watch=true"),
            // `kubectl logs -f` follows the log until interrupted.
            Some("logs") => words
                .iter()
                .any(|w| w == "-f" || w == "--follow" || w == "--follow=true"),
            _ => false,
        },
        Some("etcdctl") => words.get(1).map(String::as_str) == Some("watch"),
        _ => false,
    }
}

/// Runs a scenario: each step at its time (or when the previous command returned), then
/// the world until `until` (default: the last step's time).
pub fn run(sc: &Scenario, until: Option<Time>) -> (World, Vec<StepResult>) {
    let r = run_within(sc, until, envelope::MAX_EVENTS_PER_RUN);
    (r.world, r.results)
}

/// A scenario run that may have stopped at its event budget.
pub struct Run {
    /// The world as the run left it.
    pub world: World,
    /// What each step that ran printed.
    pub results: Vec<StepResult>,
    /// Why the run stopped before its end, if it did: the budget was spent.
    pub stopped: Option<String>,
}

/// [`run`], delivering at most `budget` messages in all: when they are spent the run
/// stops where it is, the steps after it do not run, and [`Run::stopped`] says so.
pub fn run_within(sc: &Scenario, until: Option<Time>, budget: u64) -> Run {
    let mut world = new_world(sc);
    let files: BTreeMap<String, String> = sc.spec.files.clone();
    let steps = sc.steps_in_order();
    let until = until.or(sc.until_ms()).unwrap_or_else(|| sc.last_step_ms());
    let mut results = Vec::new();
    let start = world.delivered();
    let left = |w: &World| budget.saturating_sub(w.delivered() - start);
    let stopped = |w: &World| Some(envelope::budget_note(w.delivered() - start, w.now()));
    for (i, step) in steps.iter().enumerate() {
        if step.at_ms > world.now() && !world.run_until_within(step.at_ms, left(&world)) {
            let stopped = stopped(&world);
            return Run {
                world,
                results,
                stopped,
            };
        }
        let limit = if is_streaming(&step.run) {
            let end = steps.get(i + 1).map_or(until, |s| s.at_ms);
            end.saturating_sub(world.now())
        } else {
            COMMAND_LIMIT
        };
        let budget = left(&world).min(envelope::MAX_EVENTS_PER_COMMAND);
        let out = cmd::run_within(&mut world, &step.run, &files, limit, budget);
        results.push(StepResult {
            at_ms: step.at_ms,
            command: step.run.clone(),
            exit_code: out.exit_code,
            stdout: out.stdout,
            stderr: out.stderr,
        });
        if left(&world) == 0 {
            let stopped = stopped(&world);
            return Run {
                world,
                results,
                stopped,
            };
        }
    }
    if until > world.now() && !world.run_until_within(until, left(&world)) {
        let stopped = stopped(&world);
        return Run {
            world,
            results,
            stopped,
        };
    }
    Run {
        world,
        results,
        stopped: None,
    }
}

/// `[<seconds>s] $ <command>` followed by what the terminal printed.
pub fn format_text(results: &[StepResult]) -> String {
    let mut out = String::new();
    for r in results {
        out.push_str(&format!("[{}s] $ {}\n", seconds(r.at_ms), r.command));
        out.push_str(&r.stdout);
        out.push_str(&r.stderr);
    }
    out
}

/// Seconds with only the decimals needed (`0`, `30`, `1.5`).
pub fn seconds(ms: Time) -> String {
    if ms % 1000 == 0 {
        (ms / 1000).to_string()
    } else {
        let s = format!("{}.{:03}", ms / 1000, ms % 1000);
        s.trim_end_matches('0').to_string()
    }
}

/// The JSON array of design §3.3.
pub fn format_json(results: &[StepResult]) -> String {
    let v: Vec<serde_json::Value> = results
        .iter()
        .map(|r| {
            serde_json::json!({
                "at_ms": r.at_ms,
                "command": r.command,
                "exit_code": r.exit_code,
                "stdout": r.stdout,
                "stderr": r.stderr,
            })
        })
        .collect();
    serde_json::to_string_pretty(&v).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_are_printed_minimally() {
        assert_eq!(seconds(0), "0");
        assert_eq!(seconds(30_000), "30");
        assert_eq!(seconds(1_500), "1.5");
        assert_eq!(seconds(250), "0.25");
    }

    #[test]
    fn watch_commands_stream() {
        assert!(is_streaming("kubectl get pods -w"));
        assert!(is_streaming("etcdctl watch /registry --prefix"));
        assert!(!is_streaming("kubectl get pods"));
        assert!(!is_streaming("kubectl rollout status deploy/nginx"));
    }
}
