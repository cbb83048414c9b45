//! The engine's benchmarks in wasm32: node instantiates this module, gives it a clock
//! (`env.now_ms`, `performance.now`) and calls `bench_list`, `bench_writes`,
//! `bench_scheduling` or `bench_envelope`.

use std::sync::atomic::{AtomicU64, Ordering};

use kubeloop_sim::bench;

/// The allocator: std's, growing wasm memory geometrically (crates/heap, shared with the
/// page).
#[cfg(target_arch = "wasm32")]
#[global_allocator]
static ALLOCATOR: kubeloop_heap::GrowAhead = kubeloop_heap::GrowAhead;

extern "C" {
    /// Milliseconds from the host's monotonic clock.
    fn now_ms() -> f64;
}

fn now() -> f64 {
    // SAFETY-free in spirit: a host import with no arguments; wasm imports need `unsafe`.
    #[allow(unsafe_code)]
    unsafe {
        now_ms()
    }
}

/// Loads `pods` pods, then lists them cluster-wide `runs` times; returns the median
/// list time in ms (negative if a list came back short).
#[no_mangle]
pub extern "C" fn bench_list(pods: u32, runs: u32) -> f64 {
    let mut w = bench::bare_control_plane();
    bench::load_pods(&mut w, pods as usize);
    let mut times = Vec::new();
    for _ in 0..runs.max(1) {
        let t = now();
        let n = bench::list_pods(&mut w);
        let dt = now() - t;
        // The control plane's own pods (CoreDNS …) come on top of the loaded ones.
        if n < pods as usize {
            return -1.0;
        }
        times.push(dt);
    }
    times.sort_by(|a, b| a.total_cmp(b));
    times[times.len() / 2]
}

/// Times `total` ConfigMap creates with `watchers` watchers; returns writes per second.
#[no_mangle]
pub extern "C" fn bench_writes(total: u32, clients: u32, watchers: u32) -> f64 {
    let mut w = bench::bare_control_plane();
    bench::start_watchers(&mut w, watchers as usize);
    bench::run_writes(&mut w, 1_000, clients as usize, 10_000_000);
    let t = now();
    let r = bench::run_writes(&mut w, total as usize, clients as usize, 0);
    r.acknowledged as f64 * 1000.0 / (now() - t)
}

/// The placements hash of the last `bench_scheduling` run (equal ⇒ same decisions).
static LAST_PLACEMENTS: AtomicU64 = AtomicU64::new(0);

/// Runs the scheduler_perf SchedulingBasic workload (`nodes` nodes, `initial` pods
/// scheduled first, then `pods` measured); returns measured pods per second, or a
/// negative number if not every pod was bound. `scheduling_placements` gives the hash.
#[no_mangle]
pub extern "C" fn bench_scheduling(nodes: u32, initial: u32, pods: u32) -> f64 {
    let b = bench::SchedulingBasic {
        nodes: nodes as usize,
        initial_pods: initial as usize,
        measured_pods: pods as usize,
    };
    let mut clock = || now() / 1000.0;
    let r = b.run(&mut clock);
    LAST_PLACEMENTS.store(r.placements, Ordering::Relaxed);
    if r.bound != (initial + pods) as usize {
        return -1.0;
    }
    r.pods_per_second
}

/// The placements hash of the last `bench_scheduling` run (a BigInt in JavaScript).
#[no_mangle]
pub extern "C" fn scheduling_placements() -> u64 {
    LAST_PLACEMENTS.load(Ordering::Relaxed)
}

/// Wasm memory size in MiB (how much the heap grew to).
#[no_mangle]
pub extern "C" fn memory_mib() -> u32 {
    #[cfg(target_arch = "wasm32")]
    return (core::arch::wasm32::memory_size::<0>() / 16) as u32;
    #[cfg(not(target_arch = "wasm32"))]
    0
}

/// What the last `bench_envelope` run measured, read by the host after it returns.
static LAST_ENVELOPE: std::sync::Mutex<Option<bench::EnvelopeReport>> =
    std::sync::Mutex::new(None);

/// Runs the envelope workload (`nodes` nodes with kubelets and kube-proxy, Deployments
/// totalling `pods` pods, to all Running and Ready); returns the seconds from the first
/// Deployment create to all Ready, or a negative number if not every pod got Ready.
/// `envelope_report(i)` gives the rest.
#[no_mangle]
pub extern "C" fn bench_envelope(nodes: u32, pods: u32) -> f64 {
    let b = bench::Envelope {
        nodes: nodes as usize,
        pods: pods as usize,
        seed: 1,
    };
    let mut clock = || now() / 1000.0;
    let r = b.run(&mut clock);
    let ok = r.ready == pods as usize;
    let seconds = r.seconds;
    if let Ok(mut last) = LAST_ENVELOPE.lock() {
        *last = Some(r);
    }
    if ok {
        seconds
    } else {
        -1.0
    }
}

/// A field of the last envelope run: 0 setup seconds, 1 virtual ms, 2 messages, 3 ready
/// pods, 4 deployments, 5 namespaces.
#[no_mangle]
pub extern "C" fn envelope_report(field: u32) -> f64 {
    let Ok(last) = LAST_ENVELOPE.lock() else {
        return -1.0;
    };
    let Some(r) = last.as_ref() else {
        return -1.0;
    };
    match field {
        0 => r.setup_seconds,
        1 => r.virtual_ms as f64,
        2 => r.messages as f64,
        3 => r.ready as f64,
        4 => r.deployments as f64,
        5 => r.namespaces as f64,
        _ => -1.0,
    }
}

/// The placements hash of the last envelope run (a BigInt in JavaScript).
#[no_mangle]
pub extern "C" fn envelope_placements() -> u64 {
    LAST_ENVELOPE
        .lock()
        .ok()
        .and_then(|l| l.as_ref().map(|r| r.placements))
        .unwrap_or(0)
}
