//! Fuzzes the YAML → kubectl → kube-apiserver path: any bytes as a manifest file go
//! through `kubectl apply -f` and `kubectl create -f` against one long-lived cluster.
//! Nothing may panic; every command must finish with kubectl's exit codes (0 or 1).

#![no_main]

use std::cell::RefCell;
use std::collections::BTreeMap;

use kubeloop_sim::cluster::ClusterConfig;
use kubeloop_sim::cmd;
use kubeloop_sim::time::SECOND;
use kubeloop_sim::World;
use libfuzzer_sys::fuzz_target;

thread_local! {
    static WORLD: RefCell<World> = RefCell::new(World::new(ClusterConfig::default()));
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let files: BTreeMap<String, String> = [("f.yaml".to_string(), text.to_string())]
        .into_iter()
        .collect();
    WORLD.with(|w| {
        let mut w = w.borrow_mut();
        for line in ["kubectl apply -f f.yaml", "kubectl create -f f.yaml"] {
            let out = cmd::run(&mut w, line, &files, 30 * SECOND);
            assert!(
                out.exit_code == 0 || out.exit_code == 1,
                "{line} exited {}: {out:?}",
                out.exit_code
            );
        }
        // Keep the cluster from filling up: let controllers run a little.
        w.run_for(100);
    });
});
