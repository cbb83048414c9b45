//! Programs of the terminal's own machine (the learner's laptop beside a kind cluster):
//! `curl` reaches `localhost` ports a running `kubectl port-forward` forwards, and the
//! nodes' addresses (kind's nodes are containers on the host's network); pod and Service
//! addresses are not routed from the host.

use std::net::Ipv4Addr;

use k8s_openapi::api::core::v1::Pod;

use crate::cmd::port_forward::{parse_pair, target_port};
use crate::node::net::Source;
use crate::object::{Kind, Object};
use crate::process::Output;
use crate::world::World;

fn fail(code: i32, msg: String) -> Output {
    Output {
        exit_code: code,
        stdout: String::new(),
        stderr: msg,
    }
}

/// `curl ARGS…` typed in the terminal.
pub fn curl(world: &mut World, args: &[String]) -> Output {
    let Some(i) = url_arg(args) else {
        return fail(
            2,
            "curl: try 'curl --help' or 'curl --manual' for more information\n".into(),
        );
    };
    let url = args[i].clone();
    let (scheme, rest) = url.split_once("://").unwrap_or(("http", url.as_str()));
    let default_port = if scheme.eq_ignore_ascii_case("https") {
        443
    } else {
        80
    };
    let (hostport, path) = rest.split_once('/').map_or((rest, ""), |(h, p)| (h, p));
    let (host, port) = match hostport.rsplit_once(':') {
        Some((h, p)) => (
            h.trim_matches(['[', ']']),
            p.parse::<u16>().unwrap_or(default_port),
        ),
        None => (hostport, default_port),
    };
    // `--resolve HOST:PORT:ADDR` pins the address; the URL (SNI, Host) stays as typed.
    let entries: Vec<String> = args
        .windows(2)
        .filter(|w| w[0] == "--resolve")
        .map(|w| w[1].clone())
        .collect();
    if let Some(e) = crate::node::curl::curl_tls::malformed(&entries) {
        return fail(49, format!("curl: (49) {e}\n"));
    }
    let pinned = args
        .windows(2)
        .filter(|w| w[0] == "--resolve")
        .find_map(|w| {
            let mut p = w[1].splitn(3, ':');
            let (h, pt, addr) = (p.next()?, p.next()?, p.next()?);
            (h.eq_ignore_ascii_case(host) && pt.parse::<u16>().ok() == Some(port))
                .then(|| addr.trim_matches(['[', ']']).to_string())
        });
    let typed_host = host;
    let host = pinned.as_deref().unwrap_or(host);
    let (node, target) = if matches!(host, "localhost" | "127.0.0.1" | "::1") {
        match forwarded(world, port).or_else(|| mapped_host_port(world, port)) {
            Some(t) => t,
            None => return fail(7, format!("curl: (7) Failed to connect to {host} port {port} after 0 ms: Couldn't connect to server\n")),
        }
    } else if let Ok(ip) = host.parse::<Ipv4Addr>() {
        let obs = world.observe();
        let lb = obs.net().docker.by_ip(ip).is_some() && !obs.nodes().is_empty();
        match obs.nodes().iter().position(|h| h.ip == ip.to_string()) {
            Some(n) => (n as u32, (ip, port)),
            // A load balancer on the kind network: the host reaches it through the bridge.
            None if lb => return host_to_load_balancer(world, args),
            None => return fail(7, format!("curl: (7) Failed to connect to {host} port {port} after 3 ms: No route to host\n")),
        }
    } else {
        return fail(6, format!("curl: (6) Could not resolve host: {host}\n"));
    };
    let mut argv = args.to_vec();
    if pinned.is_some() {
        argv.push("--connect-to".into());
        argv.push(format!("{typed_host}:{port}:{}:{}", target.0, target.1));
    } else {
        argv[i] = format!("{scheme}://{}:{}/{path}", target.0, target.1);
    }
    let has_host = pinned.is_some()
        || args.windows(2).any(|w| {
            matches!(w[0].as_str(), "-H" | "--header")
                && w[1].to_ascii_lowercase().starts_with("host:")
        });
    if !has_host {
        argv.push("-H".into());
        argv.push(format!("Host: {hostport}"));
    }
    let Some(ip) = world
        .observe()
        .nodes()
        .get(node as usize)
        .map(|h| h.ip.parse().unwrap_or(Ipv4Addr::UNSPECIFIED))
    else {
        return fail(7, "curl: (7) Couldn't connect to server\n".into());
    };
    let src = Source {
        node,
        ip,
        pod: None,
        agent: "curl/8.5.0".into(),
    };
    let r = world
        .on_machine(node, |m| crate::node::curl::curl(m.net(), &src, &argv))
        .unwrap_or_default();
    Output {
        exit_code: r.code,
        stdout: r.stdout,
        stderr: r.stderr,
    }
}

/// `curl` from the host to a cloud-provider-kind load balancer (docs/design.md §6.19):
/// the connection leaves the host's bridge address; envoy does the rest.
fn host_to_load_balancer(world: &mut World, args: &[String]) -> Output {
    let src = Source {
        node: 0,
        ip: crate::cloud::docker::HOST_IP,
        pod: None,
        agent: "curl/8.5.0".into(),
    };
    let argv = args.to_vec();
    let r = world
        .on_machine(0, |m| crate::node::curl::curl(m.net(), &src, &argv))
        .unwrap_or_default();
    Output {
        exit_code: r.code,
        stdout: r.stdout,
        stderr: r.stderr,
    }
}

/// The index of the URL among curl's arguments (option values such as `-H 'Host: x'`
/// are skipped).
fn url_arg(args: &[String]) -> Option<usize> {
    const VALUED: &[&str] = &[
        "-H",
        "--header",
        "-o",
        "--output",
        "-w",
        "--write-out",
        "-m",
        "--max-time",
        "--connect-timeout",
        "-A",
        "--user-agent",
        "-X",
        "--request",
        "-d",
        "--data",
        "--resolve",
        "--connect-to",
    ];
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        if VALUED.contains(&a.as_str()) {
            i += 2;
            continue;
        }
        if !a.starts_with('-')
            && (a.contains("://") || a.contains("localhost") || a.contains('.') || a.contains(':'))
        {
            return Some(i);
        }
        i += 1;
    }
    None
}

/// The node whose `hostPort` `port` the host's `localhost:port` reaches: kind's
/// `extraPortMappings` forward the host's 80 and 443 to the node running the ingress
/// controller (docs/design.md §6.16). The node's own address is the target, so the
/// node's portmap rule is walked.
fn mapped_host_port(world: &World, port: u16) -> Option<(u32, (Ipv4Addr, u16))> {
    if !matches!(port, 80 | 443) {
        return None;
    }
    let obs = world.observe();
    obs.nodes().iter().enumerate().find_map(|(n, h)| {
        let mapped = h
            .runtime
            .sandboxes
            .values()
            .any(|s| s.ready && s.port_mappings.iter().any(|(hp, _)| *hp == port));
        let ip = h.ip.parse().ok().filter(|_| mapped)?;
        Some((n as u32, (ip, port)))
    })
}

/// The pod address and node a running `kubectl port-forward` sends local `port` to.
fn forwarded(world: &World, port: u16) -> Option<(u32, (Ipv4Addr, u16))> {
    let obs = world.observe();
    for p in obs.processes().values().filter(|p| !p.is_finished()) {
        let words = crate::cmd::tokenize(&p.line).ok()?;
        // `kubectl [-n NS] port-forward …`: global flags may come before the verb.
        let Some(verb) = words.iter().position(|w| w == "port-forward") else {
            continue;
        };
        let mut rest: Vec<String> = words[1..verb].to_vec();
        rest.extend(words[verb + 1..].iter().cloned());
        let (target, pairs, ns) = parse_forward(&rest);
        let Some(pair) = pairs.iter().find(|x| x.local == port) else {
            continue;
        };
        let pod = pod_for(world, &ns, &target)?;
        let remote = match target.split_once('/') {
            Some((t, name)) if Kind::from_resource_arg(t) == Some(Kind::Service) => {
                let Object::Service(s) = &*obs
                    .etcd()
                    .store
                    .get(&format!("/registry/services/specs/{ns}/{name}"))?
                    .value
                else {
                    return None;
                };
                target_port(s, &pod, pair.remote).ok()?
            }
            _ => pair.remote,
        };
        let ip: Ipv4Addr = pod.status.as_ref()?.pod_ip.as_ref()?.parse().ok()?;
        let node = world.node_index(pod.spec.as_ref()?.node_name.as_deref()?)?;
        return Some((node, (ip, remote)));
    }
    None
}

fn parse_forward(words: &[String]) -> (String, Vec<crate::cmd::port_forward::PortPair>, String) {
    let mut ns = "default".to_string();
    let mut positional = Vec::new();
    let mut it = words.iter();
    while let Some(w) = it.next() {
        match w.as_str() {
            "-n" | "--namespace" => ns = it.next().cloned().unwrap_or(ns),
            s if s.starts_with("--namespace=") => ns = s["--namespace=".len()..].to_string(),
            s if s.starts_with('-') => {}
            s => positional.push(s.to_string()),
        }
    }
    let target = positional.first().cloned().unwrap_or_default();
    let pairs = positional
        .iter()
        .skip(1)
        .filter_map(|s| parse_pair(s).ok())
        .collect();
    (target, pairs, ns)
}

/// The pod a port-forward to `target` uses, chosen as kubectl chose it.
fn pod_for(world: &World, ns: &str, target: &str) -> Option<Pod> {
    let store = &world.observe().etcd().store;
    let (kind, name) = match target.split_once('/') {
        Some((t, n)) => (Kind::from_resource_arg(t)?, n),
        None => (Kind::Pod, target),
    };
    let key = |k: Kind, n: &str| format!("/registry/{}/{ns}/{n}", k.info().etcd_prefix);
    let obj = store.get(&key(kind, name))?;
    let selector = match &*obj.value {
        Object::Pod(p) => return Some((**p).clone()),
        Object::Service(s) => s.spec.as_ref()?.selector.clone()?,
        Object::Deployment(d) => d.spec.as_ref()?.selector.match_labels.clone()?,
        Object::ReplicaSet(r) => r.spec.as_ref()?.selector.match_labels.clone()?,
        _ => return None,
    };
    let prefix = format!("/registry/pods/{ns}/");
    let mut pods: Vec<Pod> = store
        .range_prefix(&prefix)
        .filter_map(|kv| match &*kv.value {
            Object::Pod(p) => Some((**p).clone()),
            _ => None,
        })
        .filter(|p| {
            let labels = p.metadata.labels.clone().unwrap_or_default();
            selector.iter().all(|(k, v)| labels.get(k) == Some(v))
        })
        .collect();
    pods.sort_by_key(crate::cmd::logs::pod_preference);
    pods.into_iter().next()
}
