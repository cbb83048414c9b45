//! `kubeloop`: run a scenario headless and print what its terminal printed, export it to a
//! kind cluster, import a real cluster as a scenario, or time the engine's benchmarks.

mod bench;
mod soak;
mod transfer;

use std::io::Read;
use std::process::ExitCode;

use kubeloop_sim::scenario::parse_scenario;
use kubeloop_sim::time::{format_duration, parse_duration};
use kubeloop_sim::{envelope, runner};

const USAGE: &str = "Usage: kubeloop run SCENARIO [--until DURATION] [--output text|json]\n       kubeloop export SCENARIO --to kind DIR [--force]\n       kubeloop import FILE [-o SCENARIO_FILE]\n       kubeloop bench apiserver [--writes N] [--clients N] [--watchers N] [--pods N] [--runs N]\n       kubeloop bench scheduling-basic [--nodes N] [--initial N] [--pods N]\n       kubeloop bench envelope [--nodes N] [--pods N] [--seed N]\n       kubeloop bench soak [--nodes N] [--hours N] [--seed N]\n\nSCENARIO is a scenario file (YAML or JSON), or - for standard input.\n";

fn bench_main(args: &[String]) -> ExitCode {
    match args.first().map(String::as_str) {
        Some("apiserver") => {}
        Some("scheduling-basic") => return scheduling_basic(&args[1..]),
        Some("envelope") => return envelope_bench(&args[1..]),
        Some("soak") => return soak::soak_main(&args[1..], USAGE),
        _ => {
            eprint!(
                "kubeloop: bench needs a suite: apiserver, scheduling-basic, envelope or soak\n{USAGE}"
            );
            return ExitCode::from(2);
        }
    }
    let mut o = bench::Options::default();
    let mut it = args[1..].iter();
    while let Some(flag) = it.next() {
        let (name, inline) = match flag.split_once('=') {
            Some((n, v)) => (n.to_string(), Some(v.to_string())),
            None => (flag.clone(), None),
        };
        let Some(v) = inline
            .or_else(|| it.next().cloned())
            .and_then(|v| v.parse::<usize>().ok())
        else {
            eprint!("kubeloop: {name} needs a number\n{USAGE}");
            return ExitCode::from(2);
        };
        match name.as_str() {
            "--writes" => o.writes = v,
            "--clients" => o.clients = v,
            "--watchers" => o.watchers = v,
            "--pods" => o.pods = v,
            "--runs" => o.runs = v,
            _ => {
                eprint!("kubeloop: unknown flag {name}\n{USAGE}");
                return ExitCode::from(2);
            }
        }
    }
    bench::apiserver(&o);
    ExitCode::SUCCESS
}

struct Args {
    scenario: String,
    until: Option<String>,
    output: String,
}

fn parse_args(args: &[String]) -> Result<Args, String> {
    let mut it = args.iter();
    match it.next().map(String::as_str) {
        Some("run") => {}
        Some("-h") | Some("--help") | None => return Err(String::new()),
        Some(other) => return Err(format!("unknown command \"{other}\"")),
    }
    let mut scenario = None;
    let mut until = None;
    let mut output = "text".to_string();
    while let Some(a) = it.next() {
        let (flag, inline) = match a.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f.to_string(), Some(v.to_string())),
            _ => (a.clone(), None),
        };
        match flag.as_str() {
            "--until" => {
                until = Some(
                    inline
                        .or_else(|| it.next().cloned())
                        .ok_or("--until needs a duration")?,
                )
            }
            "--output" | "-o" => {
                output = inline
                    .or_else(|| it.next().cloned())
                    .ok_or("--output needs text or json")?
            }
            "-h" | "--help" => return Err(String::new()),
            f if f.starts_with('-') && f != "-" => return Err(format!("unknown flag {f}")),
            _ if scenario.is_none() => scenario = Some(a.clone()),
            _ => return Err(format!("unexpected argument \"{a}\"")),
        }
    }
    if output != "text" && output != "json" {
        return Err(format!("--output must be text or json, not \"{output}\""));
    }
    let scenario = scenario.ok_or("a SCENARIO is required")?;
    Ok(Args {
        scenario,
        until,
        output,
    })
}

/// `kubeloop bench scheduling-basic`: the scheduler_perf SchedulingBasic workload natively.
fn scheduling_basic(args: &[String]) -> ExitCode {
    let mut b = kubeloop_sim::bench::SchedulingBasic::default();
    let mut it = args.iter();
    while let Some(flag) = it.next() {
        let value = it.next().and_then(|v| v.parse::<usize>().ok());
        match (flag.as_str(), value) {
            ("--nodes", Some(v)) => b.nodes = v,
            ("--initial", Some(v)) => b.initial_pods = v,
            ("--pods", Some(v)) => b.measured_pods = v,
            _ => {
                eprint!("kubeloop: bad flag {flag}\n{USAGE}");
                return ExitCode::from(2);
            }
        }
    }
    let start = std::time::Instant::now();
    // The harness reads the clock at the start, after setup and after the measured phase;
    // beside wall time it notes the process's CPU time then, so a run on a shared machine
    // also reports pods per CPU-second.
    let mut cpu = Vec::new();
    let mut clock = || {
        cpu.push(cpu_seconds());
        start.elapsed().as_secs_f64()
    };
    let r = b.run(&mut clock);
    let (cpu_measured, per_cpu_second) = match cpu.as_slice() {
        [_, Some(t1), Some(t2), ..] => (
            format!("{:.3}", t2 - t1),
            format!("{:.0}", b.measured_pods as f64 / (t2 - t1).max(1e-9)),
        ),
        _ => ("null".to_string(), "null".to_string()),
    };
    println!(
        "{{\"benchmark\":\"SchedulingBasic\",\"nodes\":{},\"initial_pods\":{},\"measured_pods\":{},\"bound\":{},\"seconds\":{:.3},\"setup_seconds\":{:.3},\"pods_per_second\":{:.0},\"cpu_seconds\":{cpu_measured},\"pods_per_cpu_second\":{per_cpu_second},\"placements\":\"{:016x}\",\"virtual_ms\":{},\"messages\":{}}}",
        b.nodes, b.initial_pods, b.measured_pods, r.bound, r.seconds, r.setup_seconds, r.pods_per_second, r.placements, r.virtual_ms, r.messages
    );
    ExitCode::SUCCESS
}

/// `kubeloop bench envelope`: a full cluster (kubelets, kube-proxy, controllers) with
/// Deployments totalling `--pods` pods, timed to all Running and Ready.
fn envelope_bench(args: &[String]) -> ExitCode {
    let mut b = kubeloop_sim::bench::Envelope {
        nodes: 1000,
        pods: 30_000,
        seed: 1,
    };
    let mut it = args.iter();
    while let Some(flag) = it.next() {
        let value = it.next().and_then(|v| v.parse::<usize>().ok());
        match (flag.as_str(), value) {
            ("--nodes", Some(v)) => b.nodes = v,
            ("--pods", Some(v)) => b.pods = v,
            ("--seed", Some(v)) => b.seed = v as u64,
            _ => {
                eprint!("kubeloop: bad flag {flag}\n{USAGE}");
                return ExitCode::from(2);
            }
        }
    }
    let start = std::time::Instant::now();
    let mut cpu = Vec::new();
    let mut rss = Vec::new();
    let mut clock = || {
        cpu.push(cpu_seconds());
        rss.push(proc_status_kb("VmRSS:").unwrap_or(0) * 1024);
        start.elapsed().as_secs_f64()
    };
    let r = b.run(&mut clock);
    let wall = start.elapsed().as_secs_f64();
    let cpu_total = cpu_seconds();
    let num = |v: Option<f64>| v.map_or("null".to_string(), |v| format!("{v:.3}"));
    let (cpu_measured, per_1000) = match cpu.as_slice() {
        [_, Some(t1), Some(t2), ..] => (
            num(Some(t2 - t1)),
            num(Some((t2 - t1) * 1000.0 / b.pods.max(1) as f64)),
        ),
        _ => ("null".to_string(), "null".to_string()),
    };
    let peak = proc_status_kb("VmHWM:").map(|kb| kb * 1024);
    let per_pod = peak.map_or("null".to_string(), |p| {
        (p / b.pods.max(1) as u64).to_string()
    });
    // What the workload added: the peak over the resident set once the nodes had settled.
    let setup_rss = rss.get(1).copied().unwrap_or(0);
    let added_per_pod = peak.map_or("null".to_string(), |p| {
        (p.saturating_sub(setup_rss) / b.pods.max(1) as u64).to_string()
    });
    println!(
        "{{\"benchmark\":\"envelope\",\"build\":\"native\",\"nodes\":{},\"pods\":{},\"seed\":{},\"deployments\":{},\"namespaces\":{},\"ready\":{},\"wall_seconds\":{:.3},\"setup_seconds\":{:.3},\"seconds\":{:.3},\"cpu_seconds_total\":{},\"cpu_seconds\":{cpu_measured},\"cpu_seconds_per_1000_pods\":{per_1000},\"virtual_ms\":{},\"messages\":{},\"peak_rss_bytes\":{},\"setup_rss_bytes\":{setup_rss},\"bytes_per_pod\":{per_pod},\"added_bytes_per_pod\":{added_per_pod},\"pod_writes\":{},\"event_writes\":{},\"other_writes\":{},\"placements\":\"{:016x}\"}}",
        b.nodes,
        b.pods,
        b.seed,
        r.deployments,
        r.namespaces,
        r.ready,
        wall,
        r.setup_seconds,
        r.seconds,
        num(cpu_total),
        r.virtual_ms,
        r.messages,
        peak.map_or("null".to_string(), |p| p.to_string()),
        r.writes.pods,
        r.writes.events,
        r.writes.other,
        r.placements,
    );
    if r.ready == b.pods {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

/// A line of Linux `/proc/self/status` in kB (`VmHWM:` the peak resident set, `VmRSS:`
/// the current one), if known.
fn proc_status_kb(field: &str) -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    s.lines()
        .find(|l| l.starts_with(field))?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

/// Seconds this process has run on a CPU (Linux `/proc/self/schedstat`), if known.
fn cpu_seconds() -> Option<f64> {
    let s = std::fs::read_to_string("/proc/self/schedstat").ok()?;
    let ns: f64 = s.split_whitespace().next()?.parse().ok()?;
    Some(ns / 1e9)
}

fn main() -> ExitCode {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    match argv.first().map(String::as_str) {
        Some("bench") => return bench_main(&argv[1..]),
        Some("export") => return transfer::export_main(&argv[1..]),
        Some("import") => return transfer::import_main(&argv[1..]),
        _ => {}
    }
    let args = match parse_args(&argv) {
        Ok(a) => a,
        Err(e) if e.is_empty() => {
            print!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprint!("kubeloop: {e}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    // Read one byte past the envelope, so a huge file (or /dev/zero) is refused by the
    // parser's size check instead of filling memory.
    let limit = envelope::MAX_SCENARIO_BYTES as u64 + 1;
    let read = if args.scenario == "-" {
        read_capped(std::io::stdin().take(limit))
            .map_err(|e| format!("reading standard input: {e}"))
    } else {
        std::fs::File::open(&args.scenario)
            .and_then(|f| read_capped(f.take(limit)))
            .map_err(|e| format!("{}: {e}", args.scenario))
    };
    let text = match read {
        Ok(s) => s,
        Err(e) => {
            eprintln!("kubeloop: {e}");
            return ExitCode::from(2);
        }
    };
    let scenario = match parse_scenario(&text) {
        Ok(s) => s,
        Err(errors) => {
            let name = if args.scenario == "-" {
                "<stdin>"
            } else {
                &args.scenario
            };
            for e in errors {
                eprintln!("{name}:{e}");
            }
            return ExitCode::from(2);
        }
    };
    let until = match args.until.as_deref().map(parse_duration) {
        None => None,
        Some(Ok(ms)) if ms > envelope::MAX_DURATION => {
            eprintln!(
                "kubeloop: --until: {} is longer than the {} one run may last (kubeloop's envelope)",
                args.until.as_deref().unwrap_or_default(),
                format_duration(envelope::MAX_DURATION)
            );
            return ExitCode::from(2);
        }
        Some(Ok(ms)) => Some(ms),
        Some(Err(e)) => {
            eprintln!("kubeloop: --until: {e}");
            return ExitCode::from(2);
        }
    };
    let run = runner::run_within(&scenario, until, envelope::MAX_EVENTS_PER_RUN);
    if args.output == "json" {
        println!("{}", runner::format_json(&run.results));
    } else {
        print!("{}", runner::format_text(&run.results));
    }
    match run.stopped {
        // The scenario asked for more than the envelope: say where it stopped.
        Some(why) => {
            eprintln!("kubeloop: {why}");
            ExitCode::from(3)
        }
        None => ExitCode::SUCCESS,
    }
}

/// Reads a scenario's text (at most what `r` lets through); more than the envelope, or
/// bytes that are not UTF-8, are an error.
fn read_capped(mut r: impl Read) -> std::io::Result<String> {
    let mut bytes = Vec::new();
    r.read_to_end(&mut bytes)?;
    if bytes.len() > envelope::MAX_SCENARIO_BYTES {
        return Err(std::io::Error::other(format!(
            "the scenario is more than {} bytes (1 MiB, kubeloop's envelope)",
            envelope::MAX_SCENARIO_BYTES
        )));
    }
    String::from_utf8(bytes).map_err(|_| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            "stream did not contain valid UTF-8",
        )
    })
}
