//! run.sh's kubectl and etcdctl steps run through kubeloop's own terminal.

use std::collections::BTreeMap;

use super::{file, gallery, step_lines, LABELLED};
use crate::export::*;
use crate::scenario::{parse_scenario, NodeGroup, Scenario};

/// The scenario with its nodes named as kind names them: the world run.sh's commands
/// find on kind.
fn as_on_kind(sc: &Scenario) -> Scenario {
    let names = NodeNames::of(sc);
    let mut kind = sc.clone();
    kind.spec.nodes = sc
        .nodes()
        .into_iter()
        .zip(&names.workers)
        .map(|(n, (_, k))| NodeGroup {
            name: Some(k.clone()),
            capacity: n.capacity,
            allocatable: Some(n.allocatable),
            labels: n.labels,
            taints: n.taints,
            images: n.images,
            unschedulable: n.unschedulable,
            ..NodeGroup::default()
        })
        .collect();
    kind
}

/// Runs run.sh's kubectl and etcdctl steps through kubeloop's terminal at their times, in a
/// world built from the scenario (nodes named as kind names them) with manifests/ as the
/// working directory. Returns (command, exit code, stdout, stderr).
fn dry_run(sc: &Scenario) -> Vec<(String, i32, String, String)> {
    let files = to_kind(sc);
    let dir: BTreeMap<String, String> = files
        .iter()
        .filter_map(|(p, c)| Some((p.strip_prefix("manifests/")?.to_string(), c.clone())))
        .collect();
    let mut world = crate::runner::new_world(&as_on_kind(sc));
    let mut out = Vec::new();
    for (at, cmd) in step_lines(file(&files, RUN_SH)) {
        if !(cmd.starts_with("kubectl ") || cmd.starts_with("etcdctl ")) {
            continue;
        }
        let t = (at * 1000.0).round() as crate::time::Time;
        if world.now() < t {
            world.run_until(t);
        }
        let o = crate::cmd::run_within(
            &mut world,
            &cmd,
            &dir,
            30_000,
            crate::envelope::MAX_EVENTS_PER_COMMAND,
        );
        out.push((cmd, o.exit_code, o.stdout, o.stderr));
    }
    out
}

#[test]
fn run_sh_kubectl_commands_run_in_kubeloops_terminal() {
    let ran = dry_run(&gallery("nginx-basic"));
    assert_eq!(ran.len(), 5);
    for (cmd, code, _, err) in &ran {
        assert_eq!(*code, 0, "{cmd}: {err}");
        assert!(!err.contains("error"), "{cmd}: {err}");
    }
    // The pods landed on the nodes as kind names them.
    let wide = &ran[2].2;
    assert!(wide.contains("nginx-basic-worker"), "{wide}");
    assert_eq!(wide.matches(" Running ").count(), 3, "{wide}");
    let ran = dry_run(&parse_scenario(LABELLED).unwrap());
    let pinned = ran.iter().find(|r| r.0.contains("jsonpath")).unwrap();
    assert_eq!(pinned.2, "zones-worker3");
}

#[test]
fn run_sh_commands_of_the_gallery_are_all_known_to_kubeloop() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../public/scenarios");
    for name in [
        "crashloop",
        "node-failure",
        "scheduler-down",
        "readiness-rollout",
        "mysql-pvc",
        "service-iptables-mode",
    ] {
        if !dir.join(format!("{name}.yaml")).exists() {
            continue;
        }
        for (cmd, _, _, err) in dry_run(&gallery(name)) {
            for bad in [
                "unknown command",
                "unknown flag",
                "unknown shorthand",
                "command not found",
                "not found: node",
            ] {
                assert!(!err.contains(bad), "{name}: {cmd}: {err}");
            }
        }
    }
}

#[test]
fn export_is_deterministic() {
    let sc = parse_scenario(LABELLED).unwrap();
    assert_eq!(to_kind(&sc), to_kind(&sc));
    let files = to_kind(&sc);
    assert_eq!(to_tar(&files, "zones"), to_tar(&files, "zones"));
}
