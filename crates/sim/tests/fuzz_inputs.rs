//! The short, stable-Rust run of the `scenario_parse`, `terminal` and `share_link` fuzz
//! targets (fuzz/fuzz_targets/): every file of their corpora in fuzz/corpus/ goes
//! through the same checks as the targets (one copy, in fuzz/checks.rs), then a seeded
//! mutation pass of a few hundred inputs per target. `KUBELOOP_FUZZ_ITERS=N` runs N
//! inputs per target, `KUBELOOP_FUZZ_SEED=S` another stream; a failure prints the
//! target, seed, iteration and input.

#[path = "../../../fuzz/checks.rs"]
mod checks;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

use kubeloop_sim::rng::Rng;

fn corpus_dir(target: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fuzz/corpus")
        .join(target)
}

/// The corpus files of a target, sorted by name.
fn corpus(target: &str) -> Vec<(String, Vec<u8>)> {
    let dir = corpus_dir(target);
    let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("corpus entry").path())
        .filter(|p| p.is_file())
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read(&p).expect("corpus file"))
        })
        .collect();
    files.sort();
    assert!(!files.is_empty(), "{} is empty", dir.display());
    files
}

fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

/// Runs `check` on `input`, turning a panic into one that names the input.
fn expect_ok(what: &str, input: &[u8], check: impl FnOnce(&[u8])) {
    if catch_unwind(AssertUnwindSafe(|| check(input))).is_err() {
        panic!(
            "{what} failed on this input:\n{}",
            String::from_utf8_lossy(input)
        );
    }
}

/// Tokens that hit edge cases of each language: YAML values and keys of scenarios,
/// command words and flags of the terminal, the wrapping of share links.
const SCENARIO_TOKENS: &[&str] = &[
    "",
    "null",
    "~",
    "-1",
    "0",
    "1",
    "1e400",
    "9223372036854775808",
    "true",
    "[]",
    "{}",
    "&a x",
    "*a",
    "!!binary aGVsbG8=",
    "'x'",
    "\"\\u0000\"",
    "24h",
    "99999h",
    "0s",
    "-5s",
    "1ms",
    "10000",
    "5001",
    "at: 0s",
    "at: 1h",
    "run: sim advance 1h",
    "run: kubectl get pods",
    "run: kubectl apply -f nginx-deploy.yaml",
    "count: 100",
    "seed: 7",
    "until: 3s",
    "proxyMode: ipvs",
    "proxyMode: nftables",
    "steps: []",
    "files: {}",
    "nodes: []",
    "- name: n",
    "Ünïcödé",
    "|",
    ">-",
    "---",
    "...",
    "kubeloop.dev/v1alpha1",
    "Scenario",
];

const TERMINAL_TOKENS: &[&str] = &[
    "kubectl",
    "k",
    "etcdctl",
    "sim",
    "ssh",
    "curl",
    "cloud-provider-kind",
    "get",
    "apply",
    "create",
    "delete",
    "describe",
    "logs",
    "exec",
    "run",
    "scale",
    "rollout",
    "wait",
    "expose",
    "port-forward",
    "drain",
    "cordon",
    "top",
    "diff",
    "patch",
    "label",
    "config",
    "explain",
    "auth",
    "-f",
    "f.yaml",
    "svc.yaml",
    "pod.yaml",
    "-o",
    "yaml",
    "json",
    "wide",
    "name",
    "jsonpath={.items[*].metadata.name}",
    "custom-columns=N:.metadata.name",
    "-n",
    "kube-system",
    "-A",
    "-l",
    "app=nginx",
    "-w",
    "--watch",
    "--timeout=0s",
    "--timeout=-1s",
    "--replicas=-1",
    "--replicas=99999",
    "--dry-run=client",
    "--dry-run=server",
    "--force",
    "--grace-period=0",
    "--",
    "-it",
    "--rm",
    "deploy/nginx",
    "pod/box",
    "node/node-1",
    "node-1",
    "node-9",
    "nginx",
    "box",
    "--sort-by=.status.phase",
    "--field-selector=status.phase=Running",
    "advance",
    "1h",
    "24h",
    "0s",
    "stop",
    "start",
    "partition",
    "poweroff",
    "crash",
    "etcd",
    "kube-apiserver",
    "kubelet",
    "--prefix",
    "/registry",
    "-w",
    "table",
    "http://10.96.0.1",
    "-v",
    "-k",
    "--resolve",
    "'",
    "\"",
    "\\",
    "#",
    "|",
    "exit",
    "exit 300",
    "sh",
    "nslookup",
    "dig",
    "=",
    "%",
    "",
    "  ",
];

const SHARE_TOKENS: &[&str] = &[
    "#s=", "s=", "#a=b&s=", "&", "=", "==", "%2B", "%2F", "%3D", "%", "%zz", "+", "/", "-", "_",
    " ", "\n", "eJ", "AAAA", "____", "8", "#", "#s=&s=", "s=s=",
];

/// A random mutation of `text`: byte, token and line edits, a splice with another input.
fn mutate(rng: &mut Rng, text: &[u8], tokens: &[&str], others: &[Vec<u8>]) -> Vec<u8> {
    let mut b = text.to_vec();
    let rounds = 1 + rng.intn(3);
    for _ in 0..rounds {
        let at = |rng: &mut Rng, b: &Vec<u8>| rng.intn(b.len() as u64 + 1) as usize;
        match rng.intn(8) {
            0 if !b.is_empty() => {
                // Delete a span.
                let i = at(rng, &b).min(b.len() - 1);
                let n = (1 + rng.intn(16) as usize).min(b.len() - i);
                b.drain(i..i + n);
            }
            1 if !b.is_empty() => {
                // Flip a byte to a meaningful one.
                let i = rng.intn(b.len() as u64) as usize;
                let set = b" :-[]{}#&*!|>'\"%@`,?\tx0=/+_\n\\";
                b[i] = set[rng.intn(set.len() as u64) as usize];
            }
            2 | 3 => {
                // Insert a token.
                let t = tokens[rng.intn(tokens.len() as u64) as usize];
                let i = at(rng, &b);
                let sep = if rng.intn(2) == 0 { " " } else { "" };
                let ins = format!("{sep}{t}{sep}");
                b.splice(i..i, ins.bytes());
            }
            4 => {
                // Duplicate a line.
                let lines: Vec<&[u8]> = b.split(|&c| c == b'\n').collect();
                let l = lines[rng.intn(lines.len() as u64) as usize].to_vec();
                let i = at(rng, &b);
                b.splice(i..i, l.into_iter().chain([b'\n']));
            }
            5 if !others.is_empty() => {
                // Splice in a piece of another input.
                let o = &others[rng.intn(others.len() as u64) as usize];
                if !o.is_empty() {
                    let s = rng.intn(o.len() as u64) as usize;
                    let e = (s + 1 + rng.intn(64) as usize).min(o.len());
                    let i = at(rng, &b);
                    b.splice(i..i, o[s..e].iter().copied());
                }
            }
            6 if !b.is_empty() => {
                // Truncate.
                let i = rng.intn(b.len() as u64) as usize;
                b.truncate(i);
            }
            _ => {
                // Replace a word (up to a space or newline) with a token.
                let t = tokens[rng.intn(tokens.len() as u64) as usize];
                let i = at(rng, &b);
                let e = b[i..]
                    .iter()
                    .position(|&c| c == b' ' || c == b'\n')
                    .map_or(b.len(), |p| i + p);
                b.splice(i..e, t.bytes());
            }
        }
    }
    b
}

/// The mutation pass of one target: `iters` mutants of its corpus through `check`.
fn mutation_pass(
    target: &str,
    default_iters: usize,
    tokens: &[&str],
    mut check: impl FnMut(&[u8]),
) {
    let seed: u64 = env_or("KUBELOOP_FUZZ_SEED", 1);
    let iters: usize = env_or("KUBELOOP_FUZZ_ITERS", default_iters);
    let inputs: Vec<Vec<u8>> = corpus(target).into_iter().map(|(_, b)| b).collect();
    let mut rng = Rng::stream(seed, &format!("fuzz-{target}"));
    for it in 0..iters {
        let base = &inputs[rng.intn(inputs.len() as u64) as usize];
        let input = mutate(&mut rng, base, tokens, &inputs);
        if catch_unwind(AssertUnwindSafe(|| check(&input))).is_err() {
            panic!(
                "{target}: seed {seed} iteration {it} failed on:\n{}",
                String::from_utf8_lossy(&input)
            );
        }
    }
    println!("{target}: {iters} mutated inputs (seed {seed})");
}

#[test]
fn scenario_parse_corpus_passes_its_checks() {
    let files = corpus("scenario_parse");
    let parsed = files
        .iter()
        .filter(|(_, b)| {
            std::str::from_utf8(b)
                .ok()
                .is_some_and(|t| kubeloop_sim::scenario::parse_scenario(t).is_ok())
        })
        .count();
    for (name, data) in &files {
        expect_ok(
            &format!("scenario_parse {name}"),
            data,
            checks::scenario_parse,
        );
    }
    assert!(parsed > 0, "the corpus should hold scenarios that parse");
}

#[test]
fn terminal_corpus_passes_its_checks() {
    let mut t = checks::Terminal::default();
    for (name, data) in corpus("terminal") {
        expect_ok(&format!("terminal {name}"), &data, |d| t.check(d));
    }
}

#[test]
fn share_link_corpus_passes_its_checks() {
    let files = corpus("share_link");
    let decoded = files
        .iter()
        .filter(|(_, b)| {
            std::str::from_utf8(b)
                .ok()
                .is_some_and(|t| kubeloop_sim::share::decode_share_fragment(t).is_ok())
        })
        .count();
    for (name, data) in &files {
        expect_ok(&format!("share_link {name}"), data, checks::share_link);
    }
    assert!(decoded > 0, "the corpus should hold links that decode");
}

#[test]
fn mutated_scenarios_pass_the_scenario_parse_checks() {
    mutation_pass(
        "scenario_parse",
        200,
        SCENARIO_TOKENS,
        checks::scenario_parse,
    );
}

#[test]
fn mutated_terminal_lines_pass_the_terminal_checks() {
    let mut t = checks::Terminal::default();
    mutation_pass("terminal", 300, TERMINAL_TOKENS, |d| t.check(d));
}

#[test]
fn mutated_share_links_pass_the_share_link_checks() {
    mutation_pass("share_link", 1000, SHARE_TOKENS, checks::share_link);
}

/// Writes the share-link seeds made with `encode_share_fragment` (run once by hand:
/// `cargo test -p kubeloop-sim --test fuzz_inputs -- --ignored`).
#[test]
#[ignore]
fn write_share_link_seeds() {
    let dir = corpus_dir("share_link");
    std::fs::create_dir_all(&dir).unwrap();
    for name in ["playground", "crashloop", "scheduler-down"] {
        let yaml = std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../../public/scenarios")
                .join(format!("{name}.yaml")),
        )
        .unwrap();
        let link = kubeloop_sim::share::encode_share_fragment(&yaml);
        std::fs::write(dir.join(format!("seed-{name}.txt")), &link).unwrap();
    }
    let tiny = "apiVersion: kubeloop.dev/v1alpha1\nkind: Scenario\nmetadata:\n  name: t\nspec:\n  steps:\n  - at: 0s\n    run: kubectl get nodes\n";
    let payload = kubeloop_sim::share::encode_share_payload(tiny);
    let seeds = [
        ("tiny", format!("#s={payload}")),
        ("bare", payload.clone()),
        ("params", format!("#v=1&s={payload}&x=y")),
        ("s-only", format!("s={payload}")),
        ("padded", format!("#s={payload}==")),
        (
            "std-alphabet",
            format!("#s={}", payload.replace('-', "+").replace('_', "/")),
        ),
        ("percent", format!("#s={}", payload.replace('-', "%2D"))),
        ("cut", format!("#s={}", &payload[..payload.len() / 2])),
        ("empty", "#s=".to_string()),
        ("no-s", "#a=b&c=d".to_string()),
    ];
    for (name, text) in seeds {
        std::fs::write(dir.join(format!("seed-{name}.txt")), text).unwrap();
    }
}
