//! `crictl` on a node: ps, pods, images, inspect, logs — containerd as the kubelet sees it.

use crate::cmd::ssh::{fail, out};
use crate::kubectl::tabwriter::{TabConfig, TabWriter};
use crate::node::cri::{Container, ContainerState};
use crate::node::journal::rfc3339_nanos;
use crate::node::logs::Stream;
use crate::process::Output;
use crate::world::World;

fn ago(now: u64, t: u64) -> String {
    let s = now.saturating_sub(t) / 1000;
    if s < 60 {
        format!("{s} seconds ago")
    } else if s < 3600 {
        let m = s / 60;
        if m == 1 {
            "About a minute ago".into()
        } else {
            format!("{m} minutes ago")
        }
    } else {
        let h = s / 3600;
        if h == 1 {
            "About an hour ago".into()
        } else {
            format!("{h} hours ago")
        }
    }
}

/// crictl's size format (`72MB`, `320kB`).
fn human_size(b: u64) -> String {
    if b >= 1_000_000_000 {
        format!("{:.3}GB", b as f64 / 1e9)
    } else if b >= 1_000_000 {
        format!("{:.3}MB", b as f64 / 1e6).replace(".000", "")
    } else {
        format!("{}kB", b / 1000)
    }
}

fn writer() -> TabWriter {
    TabWriter::new(TabConfig {
        minwidth: 0,
        tabwidth: 8,
        padding: 3,
        padchar: ' ',
        remember_widths: false,
    })
}

fn not_found(what: &str, id: &str) -> Output {
    fail(
        1,
        format!("E0101 00:00:00.000000    4242 log.go:32] \"{what} from runtime service failed\" err=\"rpc error: code = NotFound desc = an error occurred when try to find container \\\"{id}\\\": not found\" containerID=\"{id}\"\nFATA[0000] getting the status of the container \"{id}\": rpc error: code = NotFound desc = an error occurred when try to find container \"{id}\": not found \n"),
    )
}

/// The container an id prefix names.
fn by_prefix<'a>(world: &'a World, n: u32, id: &str) -> Option<&'a Container> {
    if id.is_empty() {
        return None;
    }
    let rt = &world.observe().nodes()[n as usize].runtime;
    let mut m = rt.containers.values().filter(|c| c.id.starts_with(id));
    let first = m.next()?;
    m.next().is_none().then_some(first)
}

/// Runs `crictl ARGS` on node `n`.
pub fn run(world: &World, n: u32, args: &[&str]) -> Output {
    let host = &world.observe().nodes()[n as usize];
    if !host.runtime_running {
        return fail(1, "E0101 00:00:00.000000    4242 log.go:32] \"ListContainers with filter from runtime service failed\" err=\"rpc error: code = Unavailable desc = connection error: desc = \\\"transport: Error while dialing: dial unix /run/containerd/containerd.sock: connect: connection refused\\\"\"\nFATA[0000] listing containers: rpc error: code = Unavailable desc = connection error: desc = \"transport: Error while dialing: dial unix /run/containerd/containerd.sock: connect: connection refused\" \n".into());
    }
    let rt = &host.runtime;
    let now = world.now();
    let mut w = writer();
    match args {
        ["ps", rest @ ..] => {
            let all = rest.contains(&"-a") || rest.contains(&"--all");
            let quiet = rest.contains(&"-q");
            let name = rest.iter().position(|a| *a == "--name").and_then(|i| rest.get(i + 1));
            w.write_str("CONTAINER\tIMAGE\tCREATED\tSTATE\tNAME\tATTEMPT\tPOD ID\tPOD\tNAMESPACE\n");
            let mut cs: Vec<_> = rt
                .containers
                .values()
                .filter(|c| all || c.state == ContainerState::Running)
                .filter(|c| name.is_none_or(|x| c.name.contains(x)))
                .collect();
            cs.sort_by(|a, b| b.created.cmp(&a.created).then(a.id.cmp(&b.id)));
            if quiet {
                return out(cs.iter().map(|c| format!("{}\n", c.id)).collect());
            }
            for c in cs {
                let sb = rt.sandboxes.get(&c.sandbox);
                let state = match c.state {
                    ContainerState::Running => "Running",
                    ContainerState::Created => "Created",
                    ContainerState::Exited => "Exited",
                };
                w.write_str(&format!(
                    "{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\n",
                    &c.id[..13],
                    &c.image_id.trim_start_matches("sha256:")[..13],
                    ago(now, c.created),
                    state,
                    c.name,
                    c.attempt,
                    &c.sandbox[..13],
                    sb.map_or("", |s| s.name.as_str()),
                    sb.map_or("", |s| s.namespace.as_str())
                ));
            }
            out(w.finish())
        }
        ["pods", ..] => {
            w.write_str("POD ID\tCREATED\tSTATE\tNAME\tNAMESPACE\tATTEMPT\tRUNTIME\n");
            let mut ss: Vec<_> = rt.sandboxes.values().collect();
            ss.sort_by(|a, b| b.created.cmp(&a.created).then(a.id.cmp(&b.id)));
            for s in ss {
                w.write_str(&format!(
                    "{}\t{}\t{}\t{}\t{}\t0\t(default)\n",
                    &s.id[..13],
                    ago(now, s.created),
                    if s.ready { "Ready" } else { "NotReady" },
                    s.name,
                    s.namespace
                ));
            }
            out(w.finish())
        }
        ["images", ..] | ["img", ..] => {
            w.write_str("IMAGE\tTAG\tIMAGE ID\tSIZE\n");
            let mut rows = Vec::new();
            for img in rt.images.values() {
                for name in &img.names {
                    let (repo, tag) = name.rsplit_once(':').unwrap_or((name, "<none>"));
                    rows.push(format!(
                        "{repo}\t{tag}\t{}\t{}\n",
                        &img.id.trim_start_matches("sha256:")[..13],
                        human_size(img.size)
                    ));
                }
            }
            rows.sort();
            for r in rows {
                w.write_str(&r);
            }
            out(w.finish())
        }
        ["inspect", id, ..] => match by_prefix(world, n, id) {
            None => not_found("ContainerStatus", id),
            Some(c) => out(inspect(world, n, c)),
        },
        ["inspect"] => fail(1, "FATA[0000] ID cannot be empty \n".into()),
        ["logs", rest @ ..] => {
            let tail = rest
                .iter()
                .position(|a| *a == "--tail")
                .and_then(|i| rest.get(i + 1))
                .and_then(|v| v.parse::<usize>().ok())
                .or_else(|| rest.iter().find_map(|a| a.strip_prefix("--tail=")?.parse().ok()));
            let timestamps = rest.contains(&"-t") || rest.contains(&"--timestamps");
            let Some(id) = rest.iter().find(|a| !a.starts_with('-') && a.parse::<usize>().is_err()) else {
                return fail(1, "FATA[0000] ID cannot be empty \n".into());
            };
            let Some(c) = by_prefix(world, n, id) else {
                return not_found("ContainerStatus", id);
            };
            let lines: Vec<_> = rt.logs.get(&c.id).map(|l| l.iter().filter(|e| e.at <= now).collect()).unwrap_or_default();
            let skip = tail.map_or(0, |t| lines.len().saturating_sub(t));
            let mut o = Output::default();
            for e in &lines[skip..] {
                let text = if timestamps { format!("{} {}\n", rfc3339_nanos(e.at), e.text) } else { format!("{}\n", e.text) };
                match e.stream {
                    Stream::Stdout => o.stdout.push_str(&text),
                    Stream::Stderr => o.stderr.push_str(&text),
                }
            }
            o
        }
        ["version"] => out("Version:  0.1.0\nRuntimeName:  containerd\nRuntimeVersion:  v2.1.4\nRuntimeApiVersion:  v1\n".into()),
        [other, ..] => fail(1, format!("No help topic for '{other}'\n")),
        [] => out("NAME:\n   crictl - client for CRI\n\nUSAGE:\n   crictl [global options] command [command options]\n\nCOMMANDS:\n   images, image, img  List images\n   inspect             Display the status of one or more containers\n   logs                Fetch the logs of a container\n   pods                List pods\n   ps                  List containers\n".into()),
    }
}

fn inspect(world: &World, n: u32, c: &Container) -> String {
    let rt = &world.observe().nodes()[n as usize].runtime;
    let sb = rt.sandboxes.get(&c.sandbox);
    let state = match c.state {
        ContainerState::Running => "CONTAINER_RUNNING",
        ContainerState::Created => "CONTAINER_CREATED",
        ContainerState::Exited => "CONTAINER_EXITED",
    };
    let image = crate::node::images::parse(&c.image);
    let repo = image
        .full
        .rsplit_once(':')
        .map_or(image.full.as_str(), |(r, _)| r);
    let zero = "0001-01-01T00:00:00Z".to_string();
    let (ns, pod, uid) = sb.map_or((String::new(), String::new(), String::new()), |s| {
        (s.namespace.clone(), s.name.clone(), s.pod_uid.clone())
    });
    let mounts: Vec<serde_json::Value> = c
        .mounts
        .iter()
        .map(|(cp, hp)| serde_json::json!({"containerPath": cp, "hostPath": hp, "propagation": "PROPAGATION_PRIVATE", "readonly": false, "selinuxRelabel": false}))
        .collect();
    let v = serde_json::json!({
        "status": {
            "id": c.id,
            "metadata": {"attempt": c.attempt, "name": c.name},
            "state": state,
            "createdAt": rfc3339_nanos(c.created),
            "startedAt": c.started.map_or(zero.clone(), rfc3339_nanos),
            "finishedAt": c.finished.map_or(zero, rfc3339_nanos),
            "exitCode": c.exit_code,
            "image": {"annotations": {}, "image": image.full, "runtimeHandler": "", "userSpecifiedImage": ""},
            "imageRef": format!("{repo}@{}", c.image_id),
            "reason": c.reason,
            "message": "",
            "labels": {
                "io.kubernetes.container.name": c.name,
                "io.kubernetes.pod.name": pod,
                "io.kubernetes.pod.namespace": ns,
                "io.kubernetes.pod.uid": uid
            },
            "annotations": {
                "io.kubernetes.container.restartCount": c.attempt.to_string(),
                "io.kubernetes.container.terminationMessagePath": "/dev/termination-log",
                "io.kubernetes.container.terminationMessagePolicy": "File",
                "io.kubernetes.pod.terminationGracePeriod": "30"
            },
            "mounts": mounts,
            "logPath": format!("/var/log/pods/{ns}_{pod}_{uid}/{}/{}.log", c.name, c.attempt),
        },
        "info": {
            "sandboxID": c.sandbox,
            "pid": if c.state == ContainerState::Running { c.pid } else { 0 },
            "removing": false,
            "snapshotKey": c.id,
            "snapshotter": "overlayfs",
            "runtimeType": "io.containerd.runc.v2",
            "config": {
                "metadata": {"name": c.name, "attempt": c.attempt},
                "image": {"image": c.image_id},
                "command": c.command,
                "envs": c.env.iter().map(|(k, v)| serde_json::json!({"key": k, "value": v})).collect::<Vec<_>>(),
                "log_path": format!("{}/{}.log", c.name, c.attempt)
            }
        }
    });
    serde_json::to_string_pretty(&v).unwrap_or_default() + "\n"
}
