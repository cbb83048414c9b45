//! The properties the fuzz targets check, in one place: the cargo-fuzz targets in
//! fuzz/fuzz_targets/ include this file with `#[path = "../checks.rs"] mod checks;` and
//! the stable-Rust test crates/sim/tests/fuzz_inputs.rs with
//! `#[path = "../../../fuzz/checks.rs"] mod checks;`, so both check exactly the same.
//! A check returns normally when the input is fine and panics when it is not.

#![allow(dead_code)]

use std::collections::BTreeMap;

use kubeloop_sim::cluster::ClusterConfig;
use kubeloop_sim::time::{Time, SECOND};
use kubeloop_sim::{cmd, runner, scenario, share, World};

/// How far a parsed scenario is run (virtual ms) and how many messages it may deliver.
pub const SCENARIO_UNTIL: Time = 2_000;
pub const SCENARIO_BUDGET: u64 = 20_000;

/// At most this many terminal lines per input.
pub const TERMINAL_MAX_LINES: usize = 8;
/// Each terminal line may run this long (virtual) and deliver this many messages.
pub const TERMINAL_LIMIT: Time = 30 * SECOND;
pub const TERMINAL_BUDGET: u64 = 20_000;
/// The terminal's cluster is replaced by a fresh one after this many inputs.
pub const TERMINAL_RESET_EVERY: u64 = 500;

/// `scenario_parse`: any UTF-8 text as a scenario file. Parsing must not panic; a
/// scenario that parses must print (`to_yaml`) as YAML that parses again, and must run a
/// little (`runner::run_within`) without panicking.
pub fn scenario_parse(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(sc) = scenario::parse_scenario(text) else {
        return;
    };
    let yaml = scenario::to_yaml(&sc);
    if let Err(e) = scenario::parse_scenario(&yaml) {
        panic!("to_yaml of a parsed scenario does not parse again: {e:?}\n--- to_yaml:\n{yaml}");
    }
    let _ = runner::run_within(&sc, Some(SCENARIO_UNTIL), SCENARIO_BUDGET);
}

/// `share_link`: any UTF-8 text as a share-link fragment. Decoding must not panic and a
/// decoded scenario must go through `parse_scenario` without panicking; and any text
/// (within [`share::MAX_DECODED_BYTES`], the most a link may hold) encoded as a link
/// decodes back to itself.
pub fn share_link(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(yaml) = share::decode_share_fragment(text) {
        let _ = scenario::parse_scenario(&yaml);
    }
    if text.len() <= share::MAX_DECODED_BYTES {
        let fragment = share::encode_share_fragment(text);
        assert_eq!(
            share::decode_share_fragment(&fragment),
            Ok(text.to_string()),
            "a share link does not decode to what was encoded: {fragment}"
        );
    }
}

/// Exit codes of curl (`curl: (N) …`): 1 unsupported protocol / HTTP/0.9, 2 bad usage,
/// 3 malformed URL, 6 unresolved host, 7 no connection, 22 `--fail` on HTTP ≥ 400,
/// 28 timeout, 35 TLS handshake, 49 bad `--resolve`/telnet option, 52 empty reply,
/// 56 receive failure, 60 certificate problem.
pub const CURL_CODES: &[i32] = &[0, 1, 2, 3, 6, 7, 22, 28, 35, 49, 52, 56, 60];

/// Exit codes of etcdctl: 1 error, 4 bad feature, 5 interrupted (watch canceled),
/// 128 bad arguments; 130 if the terminal interrupts it.
pub const ETCDCTL_CODES: &[i32] = &[0, 1, 4, 5, 128, 130];

/// Exit codes of `ssh NODE CMD`: the node's commands (grep 1/2; systemctl 3 for an
/// inactive unit, 4 `status` of an unknown unit, 5 another verb on one; dig 9; unknown
/// command 127; ssh's usage 255) and curl's.
pub const SSH_CODES: &[i32] = &[0, 1, 2, 3, 4, 5, 9, 127, 130, 255];

/// kubectl subcommands whose exit code is a container's (`kubectl exec`, `run -i`,
/// `attach`, `debug`, and `cp`, which runs tar in the container): any code the
/// container's process exits with.
const KUBECTL_PASSTHROUGH: &[&str] = &["exec", "run", "attach", "debug", "cp"];

/// Whether `code` is an exit code the real tool would return for `line`. `in_shell`: the
/// line went to a container's interactive shell (`kubectl exec -it … sh`), whose `exit N`
/// passes N through.
pub fn exit_code_allowed(line: &str, in_shell: bool, code: i32) -> bool {
    if in_shell {
        return true;
    }
    let Ok(words) = cmd::tokenize(line) else {
        // bash: unexpected EOF while looking for a matching quote.
        return code == 2;
    };
    let Some(first) = words.first() else {
        return code == 0;
    };
    match first.as_str() {
        "kubectl" | "k" => {
            if words[1..]
                .iter()
                .any(|w| KUBECTL_PASSTHROUGH.contains(&w.as_str()))
            {
                true
            } else if words[1..].iter().any(|w| w == "diff") {
                // kubectl diff: 1 when there are differences, 2 (> 1) on an error.
                matches!(code, 0 | 1 | 2 | 130)
            } else {
                // kubectl: 0 or 1; 130 when the terminal interrupts it (limit, budget).
                matches!(code, 0 | 1 | 130)
            }
        }
        "etcdctl" => ETCDCTL_CODES.contains(&code),
        "sim" | "cloud-provider-kind" => matches!(code, 0 | 1),
        "curl" => CURL_CODES.contains(&code),
        "ssh" => SSH_CODES.contains(&code) || CURL_CODES.contains(&code),
        "" => code == 0,
        _ => code == 127,
    }
}

/// The terminal's working directory: a valid Deployment, a Service and a Pod.
pub fn terminal_files() -> BTreeMap<String, String> {
    [
        ("f.yaml", DEPLOYMENT),
        ("svc.yaml", SERVICE),
        ("pod.yaml", POD),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect()
}

const DEPLOYMENT: &str = "apiVersion: apps/v1
kind: Deployment
metadata:
  name: nginx
  labels:
    app: nginx
spec:
  replicas: 2
  selector:
    matchLabels:
      app: nginx
  template:
    metadata:
      labels:
        app: nginx
    spec:
      containers:
      - name: nginx
        image: nginx:1.27
        ports:
        - containerPort: 80
";

const SERVICE: &str = "apiVersion: v1
kind: Service
metadata:
  name: nginx
spec:
  selector:
    app: nginx
  ports:
  - port: 80
    targetPort: 80
";

const POD: &str = "apiVersion: v1
kind: Pod
metadata:
  name: box
spec:
  containers:
  - name: box
    image: busybox:1.36
    command: [sleep, '3600']
";

/// `terminal`: one long-lived cluster; each input is up to [`TERMINAL_MAX_LINES`] lines
/// typed into its terminal.
pub struct Terminal {
    world: World,
    files: BTreeMap<String, String>,
    inputs: u64,
}

impl Default for Terminal {
    fn default() -> Self {
        Terminal {
            world: World::new(ClusterConfig::default()),
            files: terminal_files(),
            inputs: 0,
        }
    }
}

impl Terminal {
    /// Runs the lines of `data` (UTF-8 only): nothing may panic and every exit code must
    /// be one the real tool returns ([`exit_code_allowed`]).
    pub fn check(&mut self, data: &[u8]) {
        let Ok(text) = std::str::from_utf8(data) else {
            return;
        };
        for line in text.split('\n').take(TERMINAL_MAX_LINES) {
            let in_shell = self.world.shell_session().is_some();
            let out = cmd::run_within(
                &mut self.world,
                line,
                &self.files,
                TERMINAL_LIMIT,
                TERMINAL_BUDGET,
            );
            assert!(
                exit_code_allowed(line, in_shell, out.exit_code),
                "`{line}` exited {}, not a code the real tool returns: {out:?}",
                out.exit_code
            );
        }
        // The next input starts at the terminal's prompt, not in a container's shell.
        self.world.set_shell_session(None);
        self.world.run_for(100);
        self.inputs += 1;
        if self.inputs % TERMINAL_RESET_EVERY == 0 {
            self.world = World::new(ClusterConfig::default());
        }
    }
}
