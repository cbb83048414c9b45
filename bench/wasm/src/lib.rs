//! The engine's benchmarks in wasm32: node instantiates this module, gives it a clock
//! (`env.now_ms`, `performance.now`) and calls `bench_list`, `bench_writes` or
//! `bench_scheduling`.

use std::sync::atomic::{AtomicU64, Ordering};

use kubeloop_sim::bench;

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
        if n != pods as usize {
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

/// Grows the heap to at least `mib` MiB up front and hands it back to the allocator, so
/// a run does not pay for thousands of small `memory.grow` calls (dlmalloc grows wasm
/// memory 64 KiB at a time, and each grow is a runtime call in V8). A page could do the
/// same at startup; run.mjs reports whether it was used.
#[no_mangle]
pub extern "C" fn reserve_heap(mib: u32) {
    // Blocks small enough to come from dlmalloc's heap (not its direct "mmap" path), so
    // that once freed they coalesce into free space it reuses.
    let blocks: Vec<Vec<u8>> = (0..mib * 16).map(|_| Vec::with_capacity(60 * 1024)).collect();
    drop(blocks);
}
