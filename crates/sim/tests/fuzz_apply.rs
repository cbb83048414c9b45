//! A seeded, in-tree fuzzer for the YAML → kubectl → kube-apiserver path (the
//! cargo-fuzz target in fuzz/ does the same with coverage guidance): manifests mutated
//! line by line and byte by byte go through `kubectl apply -f` and `kubectl create -f`
//! against one long-lived cluster. Nothing may panic and every command must end with
//! kubectl's exit codes. `KUBELOOP_FUZZ_ITERS=N` runs longer, `KUBELOOP_FUZZ_SEED=S`
//! another stream; a failure prints the seed, the iteration and the input.

use std::collections::BTreeMap;

use kubeloop_sim::cluster::ClusterConfig;
use kubeloop_sim::cmd;
use kubeloop_sim::rng::Rng;
use kubeloop_sim::time::SECOND;
use kubeloop_sim::World;

const SEEDS: &[&str] = &[
    include_str!("../../../fuzz/corpus/apply_manifest/seed-deployment.yaml"),
    include_str!("../../../fuzz/corpus/apply_manifest/seed-service.yaml"),
    include_str!("../../../fuzz/corpus/apply_manifest/seed-pod.yaml"),
    include_str!("../../../fuzz/corpus/apply_manifest/seed-multi.yaml"),
    include_str!("../../../fuzz/corpus/apply_manifest/seed-pdb.yaml"),
];

/// Values that hit edge cases of decoding, defaulting and validation.
const VALUES: &[&str] = &[
    "",
    "null",
    "~",
    "-1",
    "0",
    "1",
    "2147483648",
    "9223372036854775808",
    "1e400",
    "-0.5",
    "true",
    "\"\"",
    "[]",
    "{}",
    "[1, 2]",
    "{a: b}",
    "'x'",
    "\"\\u0000\"",
    "&a x",
    "*a",
    "!!binary aGVsbG8=",
    "!!int 3",
    "1Gi",
    "1.5",
    "100m",
    "-100m",
    "0x10",
    "Ünïcödé",
    "a-very-long-name-a-very-long-name-a-very-long-name-a-very-long-name-x",
    "UPPER",
    "nginx:latest",
    "kube-system",
    "ClusterIP",
    "NodePort",
    "None",
    "TCP",
    "SCTP",
    "30000",
    "32768",
    "65536",
    "10.96.0.1",
    "256.1.1.1",
    "::1",
    "Always",
    "Never",
];

fn mutate(rng: &mut Rng, text: &str) -> String {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let rounds = 1 + rng.intn(2);
    for _ in 0..rounds {
        if lines.is_empty() {
            lines.push(String::new());
        }
        let i = rng.intn(lines.len() as u64) as usize;
        match rng.intn(9) {
            0 => {
                lines.remove(i);
            }
            1 => {
                let l = lines[i].clone();
                lines.insert(i, l);
            }
            2 => {
                let j = rng.intn(lines.len() as u64) as usize;
                lines.swap(i, j);
            }
            3 | 4 => {
                // Replace a value.
                let v = VALUES[rng.intn(VALUES.len() as u64) as usize];
                if let Some((k, _)) = lines[i].split_once(':') {
                    lines[i] = format!("{k}: {v}");
                } else {
                    lines[i] = format!("{}{v}", lines[i]);
                }
            }
            5 => {
                // Indentation shifts.
                if rng.intn(2) == 0 {
                    lines[i] = format!("  {}", lines[i]);
                } else {
                    lines[i] = lines[i].trim_start_matches(' ').to_string();
                }
            }
            6 => {
                // A byte-level flip inside the line.
                let mut b = lines[i].clone().into_bytes();
                if !b.is_empty() {
                    let k = rng.intn(b.len() as u64) as usize;
                    b[k] = b" :-[]{}#&*!|>'\"%@`,?\tx0\n"[rng.intn(24) as usize];
                }
                lines[i] = String::from_utf8_lossy(&b).into_owned();
            }
            7 => {
                // A line from another seed (kinds and fields mixed).
                let other = SEEDS[rng.intn(SEEDS.len() as u64) as usize];
                let ol: Vec<&str> = other.lines().collect();
                if !ol.is_empty() {
                    lines.insert(i, ol[rng.intn(ol.len() as u64) as usize].to_string());
                }
            }
            _ => {
                lines.truncate(i + 1);
            }
        }
    }
    let mut s = lines.join("\n");
    if rng.intn(4) != 0 {
        s.push('\n');
    }
    s
}

#[test]
fn mutated_manifests_never_panic_through_kubectl_apply() {
    let seed: u64 = std::env::var("KUBELOOP_FUZZ_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1);
    let iters: usize = std::env::var("KUBELOOP_FUZZ_ITERS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(400);
    let mut rng = Rng::stream(seed, "fuzz-apply");
    let mut w = World::new(ClusterConfig::default());
    let mut created = 0;
    for it in 0..iters {
        let base = SEEDS[rng.intn(SEEDS.len() as u64) as usize];
        let input = mutate(&mut rng, base);
        let files: BTreeMap<String, String> = [("f.yaml".to_string(), input.clone())]
            .into_iter()
            .collect();
        for line in ["kubectl apply -f f.yaml", "kubectl create -f f.yaml"] {
            let out = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                cmd::run(&mut w, line, &files, 30 * SECOND)
            }));
            let out = match out {
                Ok(o) => o,
                Err(_) => panic!("seed {seed} iteration {it}: `{line}` panicked on:\n{input}"),
            };
            assert!(
                out.exit_code == 0 || out.exit_code == 1,
                "seed {seed} iteration {it}: `{line}` exited {} on:\n{input}\n{out:?}",
                out.exit_code
            );
            if out.stdout.contains(" created") {
                created += 1;
            }
        }
        w.run_for(50);
    }
    println!("{iters} inputs, {created} objects created");
    assert!(
        created > 0,
        "the mutations should leave some manifests valid"
    );
}
