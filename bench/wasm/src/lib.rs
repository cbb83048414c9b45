//! The engine's list benchmark in wasm32: node instantiates this module, gives it a
//! clock (`env.now_ms`, `performance.now`) and calls `bench_list`.

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
