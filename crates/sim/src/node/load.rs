//! Load: what HTTP requests cost the pods that answer them, and the shell loops that send
//! them. Every request a pod answers (`curl`, `wget`, a load generator) is counted per
//! metrics window; `kubectl top` and the resource metrics add `requests × cost` of CPU to
//! the serving container (capped at its CPU limit). A container whose command is a loop
//! such as `while sleep 0.01; do wget -q -O- http://php-apache; done` sends its requests
//! for real, through DNS and the node's Service rules; to keep the event count sane it
//! sends [`WALKS_PER_TICK`] of them each second, each standing for its share of the rate.

use crate::time::{Time, SECOND};

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
