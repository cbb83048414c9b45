//! `sim`: what only a simulator can do — stop and start components, cut and power nodes,
//! add nodes, crash containers, advance time.

use crate::cluster::NodeConfig;
use crate::envelope;
use crate::message::Actor;
use crate::process::Output;
use crate::time::{format_duration, parse_duration};
use crate::world::World;

fn ok(s: String) -> Output {
    Output {
        exit_code: 0,
        stdout: s + "\n",
        stderr: String::new(),
    }
}

fn err(s: String) -> Output {
    Output {
        exit_code: 1,
        stdout: String::new(),
        stderr: format!("sim: {s}\n"),
    }
}

/// Whether `a` is within one edit of `b` (for "did you mean").
pub fn close(a: &str, b: &str) -> bool {
    let (x, y): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    if x.len().abs_diff(y.len()) > 1 || a == b {
        return false;
    }
    let mut dp: Vec<Vec<usize>> = vec![vec![0; y.len() + 1]; x.len() + 1];
    for (i, row) in dp.iter_mut().enumerate() {
        row[0] = i;
    }
    for j in 0..=y.len() {
        dp[0][j] = j;
    }
    for i in 1..=x.len() {
        for j in 1..=y.len() {
            let cost = usize::from(x[i - 1] != y[j - 1]);
            dp[i][j] = (dp[i - 1][j] + 1)
                .min(dp[i][j - 1] + 1)
                .min(dp[i - 1][j - 1] + cost);
        }
    }
    dp[x.len()][y.len()] <= 1
}

const COMPONENTS: &[&str] = &[
    "etcd",
    "kube-apiserver",
    "kube-scheduler",
    "kube-controller-manager",
    "cloud-provider-kind",
];

fn component(name: &str) -> Option<Actor> {
    match name {
        "etcd" => Some(Actor::Etcd),
        "kube-apiserver" | "apiserver" => Some(Actor::ApiServer),
        "kube-scheduler" | "scheduler" => Some(Actor::Scheduler),
        "kube-controller-manager" | "controller-manager" => Some(Actor::ControllerManager),
        "cloud-provider-kind" => Some(Actor::CloudProvider),
        _ => None,
    }
}

fn node(world: &World, name: Option<&String>) -> Result<u32, Output> {
    let Some(name) = name else {
        return Err(err("a node name is required".into()));
    };
    world
        .node_index(name)
        .ok_or_else(|| err(format!("node \"{name}\" not found")))
}

/// Runs a `sim` command; `sim advance` delivers at most `budget` messages.
pub fn run(world: &mut World, args: &[String], budget: u64) -> Output {
    let sub = args.first().map(String::as_str).unwrap_or("");
    let arg = args.get(1);
    match sub {
        "stop" | "start" => {
            let Some(name) = arg else {
                return err(format!("usage: sim {sub} {}", COMPONENTS.join("|")));
            };
            let Some(a) = component(name) else {
                return err(format!(
                    "unknown component \"{name}\" (one of: {})",
                    COMPONENTS.join(", ")
                ));
            };
            let was = world.is_running(a);
            if sub == "stop" {
                world.stop(a);
                ok(if was {
                    format!("{} stopped", a.component_name())
                } else {
                    format!("{} is not running", a.component_name())
                })
            } else {
                world.start(a);
                ok(if was {
                    format!("{} is already running", a.component_name())
                } else {
                    format!("{} started", a.component_name())
                })
            }
        }
        "partition" | "heal" | "poweroff" | "poweron" => match node(world, arg) {
            Err(o) => o,
            Ok(n) => {
                let name = arg.cloned().unwrap_or_default();
                match sub {
                    "partition" => {
                        world.partition(n);
                        ok(format!("{name} partitioned from the control plane"))
                    }
                    "heal" => {
                        world.heal(n);
                        ok(format!("{name} network restored"))
                    }
                    "poweroff" => {
                        world.poweroff(n);
                        ok(format!("{name} powered off"))
                    }
                    _ => {
                        world.poweron(n);
                        ok(format!("{name} powered on"))
                    }
                }
            }
        },
        "node" if arg.map(String::as_str) == Some("add") => add_node(world, &args[2..]),
        "crash" => crash(world, &args[1..]),
        "advance" => match arg.map(|d| parse_duration(d)) {
            Some(Ok(d)) if d > envelope::MAX_DURATION => err(format!(
                "cannot advance {}: at most {} at a time (kubeloop's envelope)",
                format_duration(d),
                format_duration(envelope::MAX_DURATION)
            )),
            Some(Ok(d)) => advance(world, d, budget),
            Some(Err(e)) => err(e),
            None => err("usage: sim advance DURATION".into()),
        },
        "speed" => match arg.and_then(|s| s.trim_end_matches('x').parse::<f64>().ok()) {
            Some(x) if x > 0.0 => ok(format!("speed {x}x")),
            _ => err("usage: sim speed FACTOR (e.g. 2 or 0.5)".into()),
        },
        "" => err(
            "usage: sim stop|start|partition|heal|poweroff|poweron|node add|crash|advance|speed"
                .into(),
        ),
        other => err(format!("unknown command \"{other}\"")),
    }
}

/// `sim advance D`: runs the world for `d`, delivering at most `budget` messages; a run
/// that spends its budget first says how far it got.
pub fn advance(world: &mut World, d: crate::time::Time, budget: u64) -> Output {
    let start = world.now();
    if world.run_until_within(start + d, budget) {
        return ok(format!(
            "advanced {} to t={}",
            format_duration(d),
            format_duration(world.now())
        ));
    }
    let mut o = ok(format!(
        "advanced {} to t={}",
        format_duration(world.now() - start),
        format_duration(world.now())
    ));
    o.stderr = format!("sim: {}\n", envelope::budget_note(budget, world.now()));
    o
}

fn add_node(world: &mut World, args: &[String]) -> Output {
    let Some(name) = args.first() else {
        return err("usage: sim node add NAME [--cpu N] [--memory Q] [--pods N] [--label k=v] [--taint k=v:Effect]".into());
    };
    if world.node_index(name).is_some() {
        return err(format!("node \"{name}\" already exists"));
    }
    let mut cfg = NodeConfig::standard(name);
    let mut i = 1;
    while i < args.len() {
        let (flag, value) = match args[i].split_once('=') {
            Some((f, v)) => (f.to_string(), Some(v.to_string())),
            None => (args[i].clone(), args.get(i + 1).cloned()),
        };
        let consumed = if args[i].contains('=') { 1 } else { 2 };
        let Some(v) = value else {
            return err(format!("flag {flag} needs a value"));
        };
        match flag.as_str() {
            "--cpu" | "--memory" | "--pods" => {
                let key = flag.trim_start_matches('-').to_string();
                if crate::quantity::parse(&v).is_err() {
                    return err(format!("invalid quantity \"{v}\" for {flag}"));
                }
                cfg.capacity.insert(key.clone(), v.clone());
                cfg.allocatable.insert(key, v);
            }
            "--label" => {
                let Some((k, val)) = v.split_once('=') else {
                    return err(format!("invalid label \"{v}\""));
                };
                cfg.labels.insert(k.into(), val.into());
            }
            "--taint" => {
                let Some((kv, effect)) = v.split_once(':') else {
                    return err(format!("invalid taint \"{v}\""));
                };
                let (k, val) = kv
                    .split_once('=')
                    .map_or((kv, None), |(a, b)| (a, Some(b.to_string())));
                cfg.taints.push(k8s_openapi::api::core::v1::Taint {
                    key: k.into(),
                    value: val,
                    effect: effect.into(),
                    time_added: None,
                });
            }
            other => return err(format!("unknown flag {other}")),
        }
        i += consumed;
    }
    // The kubelet registers the node through the apiserver; one it would refuse is never
    // added (it used to print `added` and then never register).
    let errs = crate::cluster::validate_node_config(&cfg);
    if !errs.is_empty() {
        return err(format!(
            "The {}",
            crate::apiserver::field_error::invalid_message("Node", "", name, &errs)
        ));
    }
    if world.observe().nodes().len() >= crate::envelope::MAX_NODES as usize {
        return err(format!(
            "the cluster already has {} nodes, the most kubeloop simulates",
            crate::envelope::MAX_NODES
        ));
    }
    world.add_node(cfg);
    ok(format!("node {name} added"))
}

/// `sim crash`'s arguments: the namespace (`-n NS`, default `default`) and the other
/// words (`POD [CONTAINER]`).
pub fn crash_args(args: &[String]) -> (String, Vec<String>) {
    let mut ns = "default".to_string();
    let mut words = Vec::new();
    let mut i = 0;
    while i < args.len() {
        if args[i] == "-n" || args[i] == "--namespace" {
            ns = args.get(i + 1).cloned().unwrap_or_default();
            i += 2;
            continue;
        }
        words.push(args[i].clone());
        i += 1;
    }
    (ns, words)
}

fn crash(world: &mut World, args: &[String]) -> Output {
    let (ns, words) = crash_args(args);
    let Some(pod) = words.first() else {
        return err("usage: sim crash POD [CONTAINER]".into());
    };
    let container = words.get(1).cloned();
    let code = 1;
    match world.crash_container(&ns, pod, container.as_deref(), code) {
        Ok(c) => ok(format!(
            "container {c} in pod {ns}/{pod} crashed (exit code {code})"
        )),
        Err(e) => err(e),
    }
}
