//! `kubeloop bench soak`: runs the engine's soak workload and prints one JSON line per
//! virtual hour, with this process's resident set beside what the engine holds.

use std::process::ExitCode;

use kubeloop_sim::bench::{Soak, SoakSample};

/// Runs `kubeloop bench soak [--nodes N] [--hours N] [--seed N]`.
pub fn soak_main(args: &[String], usage: &str) -> ExitCode {
    let mut b = Soak::default();
    let mut it = args.iter();
    while let Some(flag) = it.next() {
        let value = it.next().and_then(|v| v.parse::<u64>().ok());
        match (flag.as_str(), value) {
            ("--nodes", Some(v)) => b.nodes = v as usize,
            ("--hours", Some(v)) => b.hours = v,
            ("--seed", Some(v)) => b.seed = v,
            _ => {
                eprint!("kubeloop: bad flag {flag}\n{usage}");
                return ExitCode::from(2);
            }
        }
    }
    let start = std::time::Instant::now();
    let mut peak_rss = 0;
    let report = b.run(&mut |s| {
        let rss = crate::proc_status_kb("VmRSS:").unwrap_or(0) * 1024;
        peak_rss = peak_rss.max(rss);
        println!("{}", line(&b, s, rss, start.elapsed().as_secs_f64()));
    });
    let last = report.samples.last().cloned().unwrap_or_default();
    println!(
        "{{\"benchmark\":\"soak\",\"summary\":true,\"nodes\":{},\"hours\":{},\"seed\":{},\"wall_seconds\":{:.3},\"cpu_seconds\":{},\"peak_rss_bytes\":{},\"commands\":{},\"failed\":{},\"messages\":{}}}",
        b.nodes,
        b.hours,
        b.seed,
        start.elapsed().as_secs_f64(),
        crate::cpu_seconds().map_or("null".to_string(), |c| format!("{c:.3}")),
        crate::proc_status_kb("VmHWM:").map_or(peak_rss, |kb| kb * 1024),
        last.commands,
        last.failed,
        last.messages,
    );
    ExitCode::SUCCESS
}

/// One hour's JSON line.
fn line(b: &Soak, s: &SoakSample, rss: u64, wall: f64) -> String {
    format!(
        "{{\"benchmark\":\"soak\",\"nodes\":{},\"seed\":{},\"hour\":{},\"wall_seconds\":{wall:.3},\"rss_bytes\":{rss},\"virtual_ms\":{},\"messages\":{},\"commands\":{},\"failed\":{},\"etcd_revision\":{},\"etcd_keys\":{},\"etcd_history\":{},\"events\":{},\"pods\":{},\"replicasets\":{},\"jobs\":{},\"configmaps\":{},\"watch_cache_objects\":{},\"watch_cache_history\":{},\"informer_objects\":{},\"containers\":{},\"sandboxes\":{},\"pod_workers\":{},\"processes\":{}}}",
        b.nodes,
        b.seed,
        s.hour,
        s.virtual_ms,
        s.messages,
        s.commands,
        s.failed,
        s.etcd_revision,
        s.etcd_keys,
        s.etcd_history,
        s.events,
        s.pods,
        s.replicasets,
        s.jobs,
        s.configmaps,
        s.watch_cache_objects,
        s.watch_cache_history,
        s.informer_objects,
        s.containers,
        s.sandboxes,
        s.pod_workers,
        s.processes,
    )
}
