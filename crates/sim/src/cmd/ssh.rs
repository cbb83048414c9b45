//! `ssh NODE CMD`: a shell on a machine — crictl, ps, ip, mount, ls, journalctl,
//! systemctl, curl, iptables-save, ipvsadm, nft — with simple `| grep/head/tail/wc` pipes.

use crate::message::Actor;
use crate::node::journal::Unit;
use crate::node::net::Source;
use crate::process::{Output, Process};
use crate::time::Time;
use crate::world::World;

pub(crate) fn out(s: String) -> Output {
    Output {
        exit_code: 0,
        stdout: s,
        stderr: String::new(),
    }
}

pub(crate) fn fail(code: i32, s: String) -> Output {
    Output {
        exit_code: code,
        stdout: String::new(),
        stderr: s,
    }
}

/// A command that prints `out` after `delay` of virtual time (a curl waiting for a
/// timeout): a terminal process sleeping, then printing.
pub fn delayed(line: &str, o: Output, delay: Time, now: Time) -> Process {
    let (io, sys) = Process::sys("root", &[], None, Default::default());
    let task = Box::pin(async move {
        sys.sleep(delay).await;
        sys.out(&o.stdout);
        sys.err(&o.stderr);
        o.exit_code
    });
    Process::new(line, io, task, now)
}

/// Runs `ssh NODE CMD…`: the output, and how long the command takes.
pub fn run(world: &mut World, args: &[String]) -> (Output, Time) {
    let Some(node) = args.first() else {
        return (fail(255, "usage: ssh NODE COMMAND\n".into()), 0);
    };
    let Some(n) = world.node_index(node) else {
        return (
            fail(
                255,
                format!("ssh: Could not resolve hostname {node}: Name or service not known\n"),
            ),
            0,
        );
    };
    if !world.observe().nodes()[n as usize].powered {
        return (
            fail(
                255,
                format!("ssh: connect to host {node} port 22: No route to host\n"),
            ),
            0,
        );
    }
    // Split a pipeline: the first stage runs on the node, the rest filter its output.
    let words: Vec<String> = args[1..].to_vec();
    let mut stages: Vec<Vec<String>> = vec![Vec::new()];
    for w in words {
        if w == "|" {
            stages.push(Vec::new());
        } else if let Some(last) = stages.last_mut() {
            last.push(w);
        }
    }
    let first: Vec<&str> = stages[0].iter().map(String::as_str).collect();
    let (mut o, delay) = command(world, n, &first);
    for stage in &stages[1..] {
        o = filter(o, stage);
    }
    (o, delay)
}

fn filter(o: Output, stage: &[String]) -> Output {
    let s: Vec<&str> = stage.iter().map(String::as_str).collect();
    let lines: Vec<&str> = o.stdout.lines().collect();
    let keep = |v: Vec<&str>| -> String { v.iter().map(|l| format!("{l}\n")).collect() };
    match s.as_slice() {
        ["grep", rest @ ..] => {
            let invert = rest.contains(&"-v");
            let icase = rest.contains(&"-i");
            let Some(pat) = rest.iter().find(|a| !a.starts_with('-')) else {
                return fail(2, "Usage: grep [OPTION]... PATTERNS [FILE]...\nTry 'grep --help' for more information.\n".into());
            };
            let m = |l: &str| {
                if icase {
                    l.to_lowercase().contains(&pat.to_lowercase())
                } else {
                    l.contains(pat)
                }
            };
            let v: Vec<&str> = lines.into_iter().filter(|l| m(l) != invert).collect();
            let code = if v.is_empty() { 1 } else { 0 };
            Output {
                exit_code: code,
                stdout: keep(v),
                stderr: o.stderr,
            }
        }
        ["head", rest @ ..] | ["tail", rest @ ..] => {
            let n: usize = rest
                .iter()
                .find_map(|a| {
                    a.trim_start_matches("-n")
                        .trim_start_matches('-')
                        .parse()
                        .ok()
                })
                .unwrap_or(10);
            let v: Vec<&str> = if s[0] == "head" {
                lines.into_iter().take(n).collect()
            } else {
                let skip = lines.len().saturating_sub(n);
                lines.into_iter().skip(skip).collect()
            };
            Output {
                exit_code: 0,
                stdout: keep(v),
                stderr: o.stderr,
            }
        }
        ["wc", "-l"] => Output {
            exit_code: 0,
            stdout: format!("{}\n", lines.len()),
            stderr: o.stderr,
        },
        [other, ..] => fail(127, format!("bash: {other}: command not found\n")),
        [] => fail(2, "bash: syntax error near unexpected token `|'\n".into()),
    }
}

fn command(world: &mut World, n: u32, cmd: &[&str]) -> (Output, Time) {
    let cmd = match cmd {
        ["sudo", rest @ ..] => rest,
        c => c,
    };
    let node = world.observe().nodes()[n as usize].config.name.clone();
    let o = match cmd {
        [] => fail(
            1,
            "Pseudo-terminal will not be allocated because stdin is not a terminal.\n".into(),
        ),
        ["crictl", rest @ ..] => crate::cmd::crictl::run(world, n, rest),
        ["hostname"] => out(format!("{node}\n")),
        ["ip", "addr", ..] | ["ip", "a"] | ["ip", "address", ..] => {
            out(crate::cmd::nodeos::ip_addr(world, n))
        }
        ["ip", "route", ..] | ["ip", "r"] => out(crate::cmd::nodeos::ip_route(world, n)),
        ["ip", other, ..] => fail(
            255,
            format!("Object \"{other}\" is unknown, try \"ip help\".\n"),
        ),
        ["systemctl", verb, unit] => systemctl(world, n, verb, unit),
        ["systemctl", _] => fail(1, "Too few arguments.\n".into()),
        ["journalctl", rest @ ..] => crate::cmd::nodeos::journalctl(world, n, rest),
        ["ps", rest @ ..] => crate::cmd::nodeos::ps(world, n, rest),
        ["mount"] | ["findmnt"] => out(crate::cmd::nodeos::mount(world, n)),
        ["ls", rest @ ..] => crate::cmd::nodeos::ls(world, n, rest),
        ["iptables-save", rest @ ..] => {
            let o = rules(world, n, false);
            match rest
                .iter()
                .position(|a| *a == "-t" || *a == "--table")
                .and_then(|i| rest.get(i + 1))
            {
                Some(t) => table(o, t),
                None => o,
            }
        }
        ["ipvsadm", "-Ln"] | ["ipvsadm", "-L", "-n"] | ["ipvsadm", "-ln"] => rules(world, n, true),
        ["nft", rest @ ..] => nft(world, n, rest),
        ["curl", rest @ ..] => {
            let src = node_source(world, n, "curl/7.88.1");
            let args: Vec<String> = rest.iter().map(|s| s.to_string()).collect();
            let r = world
                .on_machine(n, |m| crate::node::curl::curl(m.net(), &src, &args))
                .unwrap_or_default();
            return (
                Output {
                    exit_code: r.code,
                    stdout: r.stdout,
                    stderr: r.stderr,
                },
                r.elapsed,
            );
        }
        ["cat", "/etc/resolv.conf"] => {
            out("nameserver 172.18.0.1\noptions edns0 trust-ad ndots:0\n".into())
        }
        ["echo", rest @ ..] => out(format!("{}\n", rest.join(" "))),
        [other, ..] => fail(127, format!("bash: {other}: command not found\n")),
    };
    (o, 0)
}

fn node_source(world: &World, n: u32, agent: &str) -> Source {
    Source {
        node: n,
        ip: world.observe().nodes()[n as usize]
            .ip
            .parse()
            .unwrap_or(std::net::Ipv4Addr::UNSPECIFIED),
        pod: None,
        agent: agent.into(),
    }
}

fn unit_actor(n: u32, unit: &str) -> Option<(Actor, Unit)> {
    match Unit::parse(unit)? {
        Unit::Kubelet => Some((Actor::Kubelet(n), Unit::Kubelet)),
        Unit::Containerd => Some((Actor::Runtime(n), Unit::Containerd)),
        Unit::KubeProxy => Some((Actor::KubeProxy(n), Unit::KubeProxy)),
    }
}

fn systemctl(world: &mut World, n: u32, verb: &str, unit: &str) -> Output {
    let Some((a, u)) = unit_actor(n, unit) else {
        return match verb {
            "status" => fail(
                4,
                format!("Unit {unit}.service could not be found.\n")
                    .replace(".service.service", ".service"),
            ),
            _ => fail(
                5,
                format!("Failed to {verb} {unit}: Unit {unit} not found.\n"),
            ),
        };
    };
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
        "status" => crate::cmd::nodeos::status(world, n, a, u),
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

/// `iptables-save -t TABLE`: only that table's block.
fn table(o: Output, t: &str) -> Output {
    let lines: Vec<&str> = o.stdout.lines().collect();
    let Some(start) = lines.iter().position(|l| *l == format!("*{t}")) else {
        return fail(
            1,
            format!("iptables-save: Unable to initialize table '{t}'\n"),
        );
    };
    let from = start.saturating_sub(1);
    let to = lines[start..]
        .iter()
        .position(|l| l.starts_with("# Completed"))
        .map_or(lines.len(), |i| start + i + 1);
    out(lines[from..to].iter().map(|l| format!("{l}\n")).collect())
}

/// The proxy input for node `n` from the rules kube-proxy last wrote into its kernel.
fn with_input<T>(world: &World, n: u32, f: impl FnOnce(&crate::proxy::ProxyInput) -> T) -> T {
    let host = &world.observe().nodes()[n as usize];
    let nodes = world.node_addresses();
    let state = host.rules.clone().unwrap_or_default();
    let mode = if host.rules.is_some() {
        state.mode
    } else {
        crate::proxy::ProxyMode::Iptables
    };
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
    f(&input)
}

/// `iptables-save` / `ipvsadm -Ln`: the rules kube-proxy last wrote into this kernel.
fn rules(world: &World, n: u32, ipvs: bool) -> Output {
    with_input(world, n, |input| {
        if ipvs && input.mode != crate::proxy::ProxyMode::Ipvs {
            // No IPVS module loaded: ipvsadm shows an empty table.
            return out("IP Virtual Server version 1.2.1 (size=4096)\nProt LocalAddress:Port Scheduler Flags\n  -> RemoteAddress:Port           Forward Weight ActiveConn InActConn\n".into());
        }
        if ipvs {
            out(crate::proxy::ipvs::ipvsadm_ln(input))
        } else {
            out(crate::proxy::iptables::iptables_save(input))
        }
    })
}

/// `nft list ruleset|tables`, `nft list table ip|ip6 kube-proxy`: kube-proxy's nftables
/// tables in nftables mode (the iptables-nft tables of other modes are not rendered).
fn nft(world: &World, n: u32, args: &[&str]) -> Output {
    use crate::proxy::nftables::{self, Family};
    let nft_mode = with_input(world, n, |i| i.mode == crate::proxy::ProxyMode::Nftables);
    match args {
        ["list", "ruleset"] => {
            if !nft_mode {
                return out(String::new());
            }
            out(with_input(world, n, nftables::nft_list_ruleset))
        }
        ["list", "tables"] => {
            if !nft_mode {
                return out(String::new());
            }
            out("table ip kube-proxy\ntable ip6 kube-proxy\n".into())
        }
        ["list", "table", fam, name] => {
            let family = match *fam {
                "ip" => Family::Ip,
                "ip6" => Family::Ip6,
                _ => return nft_no_table(fam, name),
            };
            if !nft_mode || *name != nftables::TABLE {
                return nft_no_table(fam, name);
            }
            out(with_input(world, n, |i| {
                nftables::nft_list_table(i, family)
            }))
        }
        ["list", "table", name] => nft(world, n, &["list", "table", "ip", name]),
        _ => fail(
            1,
            format!(
                "Error: syntax error, unexpected end of file or unsupported command\n{}\n",
                args.join(" ")
            ),
        ),
    }
}

fn nft_no_table(fam: &str, name: &str) -> Output {
    let pad = " ".repeat("list table ".len() + fam.len() + 1);
    fail(
        1,
        format!(
            "Error: No such file or directory\nlist table {fam} {name}\n{pad}{}\n",
            "^".repeat(name.len())
        ),
    )
}
