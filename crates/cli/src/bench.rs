//! `kubeloop bench apiserver`: times the engine's apiserver workloads with the wall
//! clock (the engine itself never reads one) and prints one line per measurement.

use std::time::Instant;

use kubeloop_sim::bench;

/// Options of `kubeloop bench apiserver`.
pub struct Options {
    /// ConfigMap creates to time.
    pub writes: usize,
    /// Concurrent writing clients.
    pub clients: usize,
    /// Watchers of the written kind.
    pub watchers: usize,
    /// Pods for the list and memory measurements.
    pub pods: usize,
    /// Timed runs of the list (the median is reported).
    pub runs: usize,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            writes: 50_000,
            clients: 16,
            watchers: 10,
            pods: 150_000,
            runs: 5,
        }
    }
}

/// Resident set size of this process in bytes (Linux), 0 elsewhere.
fn rss() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|kb| kb.parse::<u64>().ok())
        })
        .map_or(0, |kb| kb * 1024)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

/// Runs the benchmarks and prints the results.
pub fn apiserver(o: &Options) {
    // Writes: warm up once, then time.
    let mut w = bench::bare_control_plane();
    let seen = bench::start_watchers(&mut w, o.watchers);
    bench::run_writes(&mut w, 1_000, o.clients, 10_000_000);
    let before = seen.get();
    let t = Instant::now();
    let r = bench::run_writes(&mut w, o.writes, o.clients, 0);
    let secs = t.elapsed().as_secs_f64();
    let events = seen.get() - before;
    println!(
        "writes: {} ConfigMap creates ({} refused) from {} clients, {} watchers: {:.3} s → {:.0} writes/s; {} watch events delivered",
        r.acknowledged,
        r.failed,
        o.clients,
        o.watchers,
        secs,
        r.acknowledged as f64 / secs,
        events
    );
    drop(w);

    // Memory and list.
    let base = rss();
    let mut w = bench::bare_control_plane();
    let t = Instant::now();
    bench::load_pods(&mut w, o.pods);
    let load = t.elapsed().as_secs_f64();
    let grown = rss().saturating_sub(base);
    println!(
        "memory: {} pods in etcd and the watch cache (shared: {}): RSS +{:.1} MiB → {} bytes per pod (load {:.2} s)",
        o.pods,
        bench::cache_shares_etcd_objects(&w),
        grown as f64 / (1024.0 * 1024.0),
        grown / o.pods.max(1) as u64,
        load
    );
    let mut times = Vec::new();
    let mut items = 0;
    for _ in 0..o.runs.max(1) {
        let t = Instant::now();
        items = bench::list_pods(&mut w);
        times.push(t.elapsed().as_secs_f64() * 1000.0);
    }
    println!(
        "list: all {items} pods, cluster-wide, median of {}: {:.1} ms (min {:.1}, max {:.1})",
        times.len(),
        median(times.clone()),
        times.iter().copied().fold(f64::MAX, f64::min),
        times.iter().copied().fold(0.0, f64::max)
    );
}
