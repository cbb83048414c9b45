//! `ssh NODE CMD`: looking at a machine — crictl, ps, ip, iptables-save, systemctl.

use crate::node::runtime::ContainerState;
use crate::process::Output;
use crate::world::{Actor, World};

fn out(s: String) -> Output {
    Output {
        exit_code: 0,
        stdout: s,
        stderr: String::new(),
    }
}

fn fail(code: i32, s: String) -> Output {
    Output {
        exit_code: code,
        stdout: String::new(),
        stderr: s,
    }
}

/// Runs `ssh NODE CMD…`.
pub fn run(world: &mut World, args: &[String]) -> Output {
    let Some(node) = args.first() else {
        return fail(255, "usage: ssh NODE COMMAND\n".into());
    };
    let Some(n) = world.node_index(node) else {
        return fail(
            255,
            format!("ssh: Could not resolve hostname {node}: Name or service not known\n"),
        );
    };
    if !world.nodes[n as usize].powered {
        return fail(
            255,
            format!("ssh: connect to host {node} port 22: No route to host\n"),
        );
    }
    let cmd: Vec<&str> = args[1..].iter().map(String::as_str).collect();
    let host = &world.nodes[n as usize];
    match cmd.as_slice() {
        [] => fail(1, "Pseudo-terminal will not be allocated because stdin is not a terminal.\n".into()),
        ["crictl", rest @ ..] | ["sudo", "crictl", rest @ ..] => crictl(world, n, rest),
        ["hostname"] => out(format!("{node}\n")),
        ["ip", "addr"] | ["ip", "a"] => out(format!(
            "1: lo: <LOOPBACK,UP,LOWER_UP> mtu 65536 qdisc noqueue state UNKNOWN group default qlen 1000\n    inet 127.0.0.1/8 scope host lo\n2: eth0: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500 qdisc noqueue state UP group default\n    inet {}/16 brd 172.18.255.255 scope global eth0\n3: cni0: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1450 qdisc noqueue state UP group default qlen 1000\n    inet {}/24 brd {} scope global cni0\n",
            host.ip,
            gateway(&host.pod_cidr),
            broadcast(&host.pod_cidr)
        )),
        ["systemctl", verb, unit] | ["sudo", "systemctl", verb, unit] => systemctl(world, n, verb, unit),
        ["iptables-save", ..] | ["sudo", "iptables-save", ..] => rules(world, n, false),
        ["ipvsadm", "-Ln"] | ["sudo", "ipvsadm", "-Ln"] | ["ipvsadm", "-L", "-n"] => rules(world, n, true),
        [other, ..] => fail(127, format!("bash: {other}: command not found\n")),
    }
}

fn gateway(cidr: &str) -> String {
    cidr.split('/')
        .next()
        .unwrap_or("")
        .trim_end_matches(".0")
        .to_string()
        + ".1"
}

fn broadcast(cidr: &str) -> String {
    cidr.split('/')
        .next()
        .unwrap_or("")
        .trim_end_matches(".0")
        .to_string()
        + ".255"
}

fn unit_actor(n: u32, unit: &str) -> Option<Actor> {
    match unit.trim_end_matches(".service") {
        "kubelet" => Some(Actor::Kubelet(n)),
        "containerd" => Some(Actor::Runtime(n)),
        "kube-proxy" => Some(Actor::KubeProxy(n)),
        _ => None,
    }
}

fn systemctl(world: &mut World, n: u32, verb: &str, unit: &str) -> Output {
    let Some(a) = unit_actor(n, unit) else {
        return fail(
            5,
            format!("Failed to {verb} {unit}: Unit {unit} not found.\n"),
        );
    };
    let name = unit.trim_end_matches(".service");
    match verb {
        "stop" => {
            world.stop(a);
            out(String::new())
        }
        "start" => {
            world.start(a);
            out(String::new())
        }
        "restart" => {
            world.stop(a);
            world.start(a);
            out(String::new())
        }
        "status" => {
            let running = world.is_running(a);
            let state = if running {
                "active (running)"
            } else {
                "inactive (dead)"
            };
            let o = format!("● {name}.service - {name}\n     Loaded: loaded (/usr/lib/systemd/system/{name}.service; enabled; preset: enabled)\n     Active: {state}\n");
            Output {
                exit_code: if running { 0 } else { 3 },
                stdout: o,
                stderr: String::new(),
            }
        }
        "is-active" => {
            let running = world.is_running(a);
            Output {
                exit_code: if running { 0 } else { 3 },
                stdout: if running {
                    "active\n".into()
                } else {
                    "inactive\n".into()
                },
                stderr: String::new(),
            }
        }
        other => fail(1, format!("Unknown command verb '{other}'.\n")),
    }
}

fn ago(now: u64, t: u64) -> String {
    let s = now.saturating_sub(t) / 1000;
    if s < 60 {
        format!("{s} seconds ago")
    } else if s < 3600 {
        format!("{} minutes ago", s / 60)
    } else {
        format!("{} hours ago", s / 3600)
    }
}

fn crictl(world: &World, n: u32, args: &[&str]) -> Output {
    let host = &world.nodes[n as usize];
    if !host.runtime_running {
        return fail(1, "E0101 00:00:00.000000    1234 remote_runtime.go:296] \"ListContainers with filter from runtime service failed\" err=\"rpc error: code = Unavailable desc = connection error: desc = \\\"transport: Error while dialing: dial unix /run/containerd/containerd.sock: connect: connection refused\\\"\"\n".into());
    }
    let rt = &host.runtime;
    let now = world.now();
    let mut w = crate::kubectl::tabwriter::TabWriter::new(crate::kubectl::tabwriter::TabConfig {
        minwidth: 0,
        tabwidth: 8,
        padding: 3,
        padchar: ' ',
        remember_widths: false,
    });
    match args {
        ["ps", rest @ ..] => {
            let all = rest.contains(&"-a");
            w.write_str(
                "CONTAINER\tIMAGE\tCREATED\tSTATE\tNAME\tATTEMPT\tPOD ID\tPOD\tNAMESPACE\n",
            );
            let mut cs: Vec<_> = rt
                .containers
                .values()
                .filter(|c| all || c.state == ContainerState::Running)
                .collect();
            cs.sort_by(|a, b| b.created.cmp(&a.created));
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
            ss.sort_by(|a, b| b.created.cmp(&a.created));
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
        ["images", ..] => {
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
        [other, ..] => fail(1, format!("No help topic for '{other}'\n")),
        [] => out("NAME:\n   crictl - client for CRI\n".into()),
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

/// `iptables-save` / `ipvsadm -Ln`: the rules kube-proxy last wrote into this kernel.
fn rules(world: &World, n: u32, ipvs: bool) -> Output {
    let host = &world.nodes[n as usize];
    let nodes = world.node_addresses();
    let state = host.rules.clone().unwrap_or_default();
    let mode = if host.rules.is_some() {
        state.mode
    } else {
        crate::proxy::ProxyMode::Iptables
    };
    if ipvs && mode != crate::proxy::ProxyMode::Ipvs {
        // No IPVS module loaded: ipvsadm shows an empty table.
        return out("IP Virtual Server version 1.2.1 (size=4096)\nProt LocalAddress:Port Scheduler Flags\n  -> RemoteAddress:Port           Forward Weight ActiveConn InActConn\n".into());
    }
    let input = crate::proxy::ProxyInput {
        node_name: host.config.name.clone(),
        node_ip: host.ip.parse().unwrap_or(std::net::Ipv4Addr::UNSPECIFIED),
        pod_cidr: crate::proxy::Cidr::parse(&host.pod_cidr),
        cluster_cidr: crate::proxy::Cidr::parse(crate::cluster::CLUSTER_CIDR),
        services: &state.services,
        slices: &state.slices,
        nodes: &nodes,
        mode,
        now: world.now(),
        options: crate::proxy::ProxyOptions::default(),
    };
    if ipvs {
        out(crate::proxy::ipvs::ipvsadm_ln(&input))
    } else {
        out(crate::proxy::iptables::iptables_save(&input))
    }
}
