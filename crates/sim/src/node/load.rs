//! Load: what HTTP requests cost the pods that answer them, and the shell loops that send
//! them. Every request a pod answers (`curl`, `wget`, a load generator) is counted per
//! metrics window; `kubectl top` and the resource metrics add `requests × cost` of CPU to
//! the serving container (capped at its CPU limit). A container whose command is a loop
//! such as `while sleep 0.01; do wget -q -O- http://php-apache; done` sends its requests
//! for real, through DNS and the node's Service rules; to keep the event count sane it
//! sends [`WALKS_PER_TICK`] of them each second, each standing for its share of the rate.

use crate::node::net::Source;
use crate::node::server::SCRAPE;
use crate::time::{Time, SECOND};
use crate::world::{Actor, Payload, World};

/// How often a load loop sends its batch.
pub const LOAD_TICK: Time = SECOND;
/// Requests actually walked per batch; each stands for `rate / WALKS_PER_TICK` requests.
pub const WALKS_PER_TICK: u64 = 10;
/// Timer tokens of load loops on a node's containerd (above every other timer).
pub const LOAD_TIMER_BASE: u64 = 1 << 56;
/// What one request costs a server that merely answers it (nginx, httpd, agnhost).
const STATIC_COST_US: u64 = 200;
/// What one request to registry.k8s.io/hpa-example costs: its index.php computes a
/// million square roots (7 ms of a core), so ~90 requests/s keep seven 200m pods at 50%,
/// as in the documentation's walkthrough.
const HPA_EXAMPLE_COST_US: u64 = 7_000;

/// The per-image cost of answering one request (microseconds of CPU).
pub fn cost_us(repo: &str) -> u64 {
    match repo {
        "hpa-example" => HPA_EXAMPLE_COST_US,
        "nginx" | "httpd" | "agnhost" | "echoserver" | "gb-frontend" => STATIC_COST_US,
        _ => 0,
    }
}

/// The URL and period of a request loop in a shell command line, if it is one:
/// `while sleep S; do wget … URL; done` or `while true; do curl … URL; done`. The period
/// is the sleep plus a millisecond for the request itself.
pub fn parse_loop(cmdline: &str) -> Option<(String, Time)> {
    let body = cmdline.split_once("while ")?.1;
    let (cond, rest) = body.split_once(';')?;
    let rest = rest.trim_start().strip_prefix("do ")?;
    let words: Vec<&str> = rest.split([' ', ';']).filter(|w| !w.is_empty()).collect();
    let tool = words.iter().position(|w| *w == "wget" || *w == "curl")?;
    let url = words[tool..]
        .iter()
        .find(|w| w.starts_with("http://") || !w.starts_with('-') && w.contains('.'))
        .or_else(|| words[tool + 1..].iter().find(|w| !w.starts_with('-')))?;
    let mut sleep_ms: Time = 0;
    for part in [cond].into_iter().chain(rest.split(';')) {
        if let Some(s) = part.trim().strip_prefix("sleep ") {
            sleep_ms += s.trim().parse::<f64>().map_or(0, |f| (f * 1000.0) as Time);
        }
    }
    Some((url.trim_matches(['"', '\'']).to_string(), sleep_ms + 1))
}

/// Counts a request answered by `pod` (`namespace/name`).
pub fn count(world: &mut World, pod: &str) {
    let window = world.now() / SCRAPE * SCRAPE;
    let net = &mut world.net;
    if window > net.served_window {
        net.served.retain(|(_, w), _| *w + SCRAPE >= window);
        net.served_window = window;
    }
    *net.served.entry((pod.to_string(), window)).or_insert(0) += net.weight;
}

/// CPU (millicores) the requests `pod` answered in the window before `at` cost a
/// container with this per-request cost.
pub fn cpu_m(world: &World, pod: &str, at: Time, cost_us: u64) -> u64 {
    if cost_us == 0 || at < SCRAPE {
        return 0;
    }
    let n = world
        .net
        .served
        .get(&(pod.to_string(), at - SCRAPE))
        .copied()
        .unwrap_or(0);
    n * cost_us / SCRAPE
}

/// One batch of a load loop: the container's requests of the last second.
pub fn tick(world: &mut World, n: u32, token: u64) {
    let Some(host) = world.nodes.get(n as usize) else {
        return;
    };
    let rt = &host.runtime;
    let running = rt
        .load_timers
        .get(&token)
        .and_then(|id| rt.containers.get(id))
        .filter(|c| c.state == crate::node::cri::ContainerState::Running);
    let Some(c) = running else {
        world.nodes[n as usize].runtime.load_timers.remove(&token);
        return;
    };
    let Some((url, period)) = c.behaviour.load.clone() else {
        return;
    };
    let Some(sb) = rt.sandboxes.get(&c.sandbox) else {
        return;
    };
    let src = Source {
        node: n,
        ip: sb.ip.parse().unwrap_or(std::net::Ipv4Addr::UNSPECIFIED),
        pod: Some((sb.namespace.clone(), sb.name.clone())),
        agent: "Wget".into(),
    };
    let rate = (LOAD_TICK / period.max(1)).max(1);
    let walks = rate.min(WALKS_PER_TICK);
    world.net.weight = rate / walks;
    let args: Vec<String> = vec!["-q".into(), "-O-".into(), url];
    for _ in 0..walks {
        crate::node::curl::wget(world, &src, &args);
    }
    world.net.weight = 1;
    world.enqueue_timer(LOAD_TICK, Actor::Runtime(n), Payload::Timer(token));
}
