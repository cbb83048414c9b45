//! `etcdctl get|watch|endpoint status` against the etcd member.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

use base64::Engine;

use crate::cmd::flags::{self, flag, Flag};
use crate::cmd::kubectl::Task;
use crate::etcd::{EtcdOp, EtcdResult, KeyValue};
use crate::process::{Io, Output, Process, Sys};

const FLAGS: &[Flag] = &[
    flag("prefix", None, false),
    flag("keys-only", None, false),
    flag("write-out", Some('w'), true),
    flag("limit", None, true),
    flag("rev", None, true),
    flag("endpoints", None, true),
    flag("cacert", None, true),
    flag("cert", None, true),
    flag("key", None, true),
    flag("print-value-only", None, false),
];

/// The member id etcd reports.
pub const MEMBER_ID: u64 = 0x8e9e_05c5_2164_694d;
/// The cluster id.
pub const CLUSTER_ID: u64 = 0xcdf8_1819_4e4e_a4d0;
/// The etcd version kubeadm v1.35 deploys.
pub const ETCD_VERSION: &str = "3.6.5";

fn value_text(kv: &KeyValue) -> String {
    serde_json::to_string(&kv.value.to_value()).unwrap_or_default()
}

fn header(rev: u64) -> serde_json::Value {
    serde_json::json!({"cluster_id": CLUSTER_ID, "member_id": MEMBER_ID, "revision": rev, "raft_term": 2})
}

fn kv_json(kv: &KeyValue, keys_only: bool) -> serde_json::Value {
    let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s.as_bytes());
    let mut v = serde_json::json!({
        "key": b64(&kv.key),
        "create_revision": kv.create_revision,
        "mod_revision": kv.mod_revision,
        "version": kv.version,
    });
    if !keys_only {
        v["value"] = serde_json::Value::String(b64(&value_text(kv)));
    }
    v
}

/// Parses an etcdctl command line into a task.
pub fn task(args: &[String]) -> Result<(Rc<RefCell<Io>>, Task), Output> {
    let p = flags::parse(args, FLAGS, "etcdctl").map_err(|e| Output {
        exit_code: 1,
        stdout: String::new(),
        stderr: e.replace("error: ", "Error: "),
    })?;
    let (io, sys) = Process::sys("root", &[], None, Rc::new(BTreeMap::new()));
    let words = p.args.clone();
    let task: Task = Box::pin(async move { run(sys, words, p).await });
    Ok((io, task))
}

async fn run(sys: Sys, words: Vec<String>, p: flags::Parsed) -> i32 {
    let fail = |sys: &Sys, e: &str| {
        sys.err(&format!("Error: {e}\n"));
        1
    };
    match words.first().map(String::as_str) {
        Some("get") => {
            let Some(key) = words.get(1) else {
                return fail(
                    &sys,
                    "get command needs one argument as key and an optional argument as range_end",
                );
            };
            let limit = p.get("limit").and_then(|l| l.parse().ok()).unwrap_or(0);
            match sys
                .etcd(EtcdOp::Range {
                    key: key.clone(),
                    prefix: p.bool("prefix"),
                    limit,
                })
                .await
            {
                Ok(EtcdResult::Range {
                    kvs,
                    count,
                    revision,
                }) => {
                    let keys_only = p.bool("keys-only");
                    match p.get("write-out").unwrap_or("simple") {
                        "json" => {
                            let mut v =
                                serde_json::json!({"header": header(revision), "count": count});
                            if !kvs.is_empty() {
                                v["kvs"] = serde_json::Value::Array(
                                    kvs.iter().map(|kv| kv_json(kv, keys_only)).collect(),
                                );
                            }
                            sys.out(&format!(
                                "{}\n",
                                serde_json::to_string(&v).unwrap_or_default()
                            ));
                        }
                        "simple" => {
                            for kv in &kvs {
                                if !p.bool("print-value-only") {
                                    sys.out(&format!("{}\n", kv.key));
                                }
                                if keys_only {
                                    sys.out("\n");
                                } else {
                                    sys.out(&format!("{}\n", value_text(kv)));
                                }
                            }
                        }
                        other => return fail(&sys, &format!("unknown output format \"{other}\"")),
                    }
                    0
                }
                Ok(_) => 1,
                Err(e) => fail(&sys, &etcd_error(&e)),
            }
        }
        Some("watch") => {
            let Some(key) = words.get(1) else {
                return fail(&sys, "bad number of arguments");
            };
            if let Err(e) = sys
                .etcd(EtcdOp::Watch {
                    prefix: if p.bool("prefix") {
                        key.clone()
                    } else {
                        key.clone()
                    },
                    start_revision: 0,
                })
                .await
            {
                return fail(&sys, &etcd_error(&e));
            }
            loop {
                let b = sys.next_etcd_batch().await;
                match b.events {
                    Ok(evs) => {
                        for e in evs {
                            if !p.bool("prefix") && e.kv.key != *key {
                                continue;
                            }
                            let t = if e.deleted { "DELETE" } else { "PUT" };
                            if e.deleted {
                                sys.out(&format!("{t}\n{}\n", e.kv.key));
                            } else {
                                sys.out(&format!("{t}\n{}\n{}\n", e.kv.key, value_text(&e.kv)));
                            }
                        }
                    }
                    Err((m, _)) => return fail(&sys, &m),
                }
            }
        }
        Some("endpoint") if words.get(1).map(String::as_str) == Some("status") => {
            match sys.etcd(EtcdOp::Status).await {
                Ok(EtcdResult::Status {
                    revision, db_size, ..
                }) => {
                    let size = format!("{} kB", db_size / 1000);
                    match p.get("write-out").unwrap_or("simple") {
                    "table" => {
                        let head = ["ENDPOINT", "ID", "VERSION", "STORAGE VERSION", "DB SIZE", "IN USE", "IS LEADER", "IS LEARNER", "RAFT TERM", "RAFT INDEX", "RAFT APPLIED INDEX", "ERRORS"];
                        let row = ["127.0.0.1:2379".to_string(), format!("{MEMBER_ID:x}"), ETCD_VERSION.into(), "3.6.0".into(), size.clone(), size, "true".into(), "false".into(), "2".into(), revision.to_string(), revision.to_string(), String::new()];
                        sys.out(&ascii_table(&head, &row));
                    }
                    _ => sys.out(&format!("127.0.0.1:2379, {MEMBER_ID:x}, {ETCD_VERSION}, 3.6.0, {size}, {size}, true, false, 2, {revision}, {revision}, \n")),
                }
                    0
                }
                Ok(_) => 1,
                Err(e) => fail(&sys, &etcd_error(&e)),
            }
        }
        Some(other) => fail(
            &sys,
            &format!("unknown command \"{other}\" for \"etcdctl\""),
        ),
        None => {
            sys.out("NAME:\n\tetcdctl - A simple command line client for etcd3.\n");
            0
        }
    }
}

fn etcd_error(e: &str) -> String {
    if e.contains("refused") || e.contains("deadline") {
        "context deadline exceeded".into()
    } else {
        e.to_string()
    }
}

fn ascii_table(head: &[&str], row: &[String]) -> String {
    let widths: Vec<usize> = head
        .iter()
        .zip(row)
        .map(|(h, r)| h.len().max(r.len()) + 2)
        .collect();
    let sep: String = format!(
        "+{}+\n",
        widths
            .iter()
            .map(|w| "-".repeat(*w))
            .collect::<Vec<_>>()
            .join("+")
    );
    let center = |s: &str, w: usize| {
        let pad = w - s.len();
        format!(
            "{}{}{}",
            " ".repeat(pad / 2 + pad % 2),
            s,
            " ".repeat(pad / 2)
        )
    };
    let line = |cells: Vec<String>| format!("|{}|\n", cells.join("|"));
    let mut out = sep.clone();
    out.push_str(&line(
        head.iter()
            .zip(&widths)
            .map(|(h, w)| center(h, *w))
            .collect(),
    ));
    out.push_str(&sep);
    out.push_str(&line(
        row.iter()
            .zip(&widths)
            .map(|(r, w)| format!(" {r:<width$} ", width = w - 2))
            .collect(),
    ));
    out.push_str(&sep);
    out
}
