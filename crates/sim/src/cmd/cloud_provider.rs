//! `cloud-provider-kind` typed in the terminal: starts the host program kind's docs
//! install (docs/design.md §6.19) as if in a second terminal, printing its first log
//! lines; `sim stop cloud-provider-kind` is Ctrl-C in that terminal.

use crate::node::journal::{klog_header, Level};
use crate::process::Output;
use crate::world::{Actor, World};

/// The pid its log lines carry.
const PID: u32 = 48213;

/// Runs `cloud-provider-kind [FLAGS]`.
pub fn run(world: &mut World, args: &[String]) -> Output {
    let mut verbosity = "2".to_string();
    let mut port_mapping = "false".to_string();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "-v" | "--verbosity" => verbosity = it.next().cloned().unwrap_or_default(),
            s if s.starts_with("--verbosity=") || s.starts_with("-v=") => {
                verbosity = s.split_once('=').map_or("", |x| x.1).to_string()
            }
            "--enable-lb-port-mapping" => port_mapping = "true".into(),
            s if s.starts_with("--enable-lb-port-mapping=") => {
                port_mapping = s["--enable-lb-port-mapping=".len()..].to_string()
            }
            "version" => {
                return Output {
                    exit_code: 0,
                    stdout: "cloud-provider-kind v0.8.0\n".into(),
                    stderr: String::new(),
                }
            }
            "list-images" => {
                return Output {
                    exit_code: 0,
                    stdout: format!("{}\n", crate::cloud::docker::ENVOY_IMAGE),
                    stderr: String::new(),
                }
            }
            other => {
                return Output {
                    exit_code: 1,
                    stdout: String::new(),
                    stderr: format!("Error: unknown flag: {other}\nUsage:\n  cloud-provider-kind [flags]\n  cloud-provider-kind [command]\n"),
                }
            }
        }
    }
    if world.is_running(Actor::CloudProvider) {
        return Output {
            exit_code: 1,
            stdout: String::new(),
            stderr: "cloud-provider-kind is already running on this host (sim stop cloud-provider-kind stops it)\n".into(),
        };
    }
    let now = world.now();
    let flags = [
        ("enable-default-ingress", "true".to_string()),
        ("enable-lb-port-mapping", port_mapping),
        ("enable-log-dumping", "false".to_string()),
        ("gateway-channel", "standard".to_string()),
        ("logs-dir", String::new()),
        ("verbosity", verbosity),
    ];
    let mut err = String::new();
    for (name, v) in flags {
        err.push_str(&klog_header(now, Level::Info, PID, "app.go:108"));
        err.push_str(&format!("FLAG: --{name}={v:?}\n"));
    }
    err.push_str(&klog_header(now, Level::Info, PID, "controller.go:102"));
    err.push_str("\"Starting cloud controller\" cluster=\"kind\"\n");
    world.start(Actor::CloudProvider);
    Output {
        exit_code: 0,
        stdout: String::new(),
        stderr: err,
    }
}
