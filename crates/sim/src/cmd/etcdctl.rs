//! `etcdctl get|watch|compact|endpoint status|endpoint health` (and `lease list|timetolive`,
//! `etcdctl_lease.rs`) against the etcd member,
//! printed as etcdctl 3.6 prints them (simple, JSON in the protobuf field order, tables).

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

use base64::Engine;

use crate::cmd::flags::{self, flag, Flag, Parsed};
use crate::cmd::kubectl::Task;
use crate::etcd::{EtcdOp, EtcdResult, KeyValue};
use crate::process::{Io, Output, Process, Sys};

const FLAGS: &[Flag] = &[
    flag("prefix", None, false),
    flag("keys-only", None, false),
    flag("count-only", None, false),
    flag("write-out", Some('w'), true),
    flag("limit", None, true),
    flag("rev", None, true),
    flag("prev-kv", None, false),
    flag("endpoints", None, true),
    flag("cacert", None, true),
    flag("cert", None, true),
    flag("key", None, true),
    flag("print-value-only", None, false),
    flag("hex", None, false),
    flag("keys", None, false),
];

/// The member id etcd reports.
pub const MEMBER_ID: u64 = 0x8e9e_05c5_2164_694d;
/// The cluster id (a single member with the default name has this one).
pub const CLUSTER_ID: u64 = 14_841_639_068_965_178_418;
/// The etcd version kubeadm v1.35 deploys.
pub const ETCD_VERSION: &str = "3.6.5";
/// What `endpoint status` calls the storage version.
pub const STORAGE_VERSION: &str = "3.6.0";
/// The default backend quota (`--quota-backend-bytes`: 2 GiB).
const QUOTA: u64 = 2 * 1024 * 1024 * 1024;
/// The client URL kubeadm's etcd listens on locally.
const ENDPOINT: &str = "127.0.0.1:2379";
/// The raft term of a member that has been leader since boot.
const RAFT_TERM: u64 = 2;

/// Exit code of `cobrautl.ExitBadFeature` (unsupported output format).
const EXIT_BAD_FEATURE: i32 = 4;
/// Exit code of `cobrautl.ExitInterrupted` (a watch the server canceled).
const EXIT_INTERRUPTED: i32 = 5;
/// Exit code of `cobrautl.ExitBadArgs`.
pub(super) const EXIT_BAD_ARGS: i32 = 128;

/// The value as stored: the object's JSON without `resourceVersion` (the apiserver
/// clears it before writing; it is the key's mod_revision).
fn value_text(kv: &KeyValue) -> String {
    let mut v = kv.value.to_value();
    if let Some(m) = v.get_mut("metadata").and_then(|m| m.as_object_mut()) {
        m.remove("resourceVersion");
    }
    serde_json::to_string(&v).unwrap_or_default()
}

fn b64(s: &str) -> String {
    base64::engine::general_purpose::STANDARD.encode(s.as_bytes())
}

/// `pb.ResponseHeader` as Go's encoding/json writes it (field order, omitempty).
fn header_json(rev: u64) -> String {
    format!(
        "{{\"cluster_id\":{CLUSTER_ID},\"member_id\":{MEMBER_ID},\"revision\":{rev},\"raft_term\":{RAFT_TERM}}}"
    )
}

/// `mvccpb.KeyValue` in its field order; empty fields are omitted.
fn kv_json(kv: &KeyValue, keys_only: bool) -> String {
    let mut s = format!(
        "{{\"key\":\"{}\",\"create_revision\":{},\"mod_revision\":{},\"version\":{}",
        b64(&kv.key),
        kv.create_revision,
        kv.mod_revision,
        kv.version
    );
    if !keys_only {
        s.push_str(&format!(",\"value\":\"{}\"", b64(&value_text(kv))));
    }
    s.push('}');
    s
}

/// `dustin/go-humanize.Bytes`: SI units, one decimal under 10.
pub fn humanize_bytes(n: u64) -> String {
    if n < 10 {
        return format!("{n} B");
    }
    const UNITS: [&str; 7] = ["B", "kB", "MB", "GB", "TB", "PB", "EB"];
    let e = ((n as f64).ln() / 1000f64.ln()).floor() as usize;
    let e = e.min(UNITS.len() - 1);
    let val = ((n as f64) / 1000f64.powi(e as i32) * 10.0 + 0.5).floor() / 10.0;
    if val < 10.0 {
        format!("{val:.1} {}", UNITS[e])
    } else {
        format!("{val:.0} {}", UNITS[e])
    }
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

pub(super) fn fail(sys: &Sys, code: i32, e: &str) -> i32 {
    sys.err(&format!("Error: {e}\n"));
    code
}

fn number(p: &Parsed, name: &str) -> Result<u64, String> {
    match p.get(name) {
        None => Ok(0),
        Some(v) => v.parse().map_err(|_| {
            format!("invalid argument \"{v}\" for \"--{name}\" flag: strconv.ParseInt: parsing \"{v}\": invalid syntax")
        }),
    }
}

async fn run(sys: Sys, words: Vec<String>, p: Parsed) -> i32 {
    let format = p.get("write-out").unwrap_or("simple").to_string();
    if !matches!(
        format.as_str(),
        "simple" | "json" | "table" | "fields" | "protobuf"
    ) {
        return fail(&sys, 1, &format!("unknown output format \"{format}\""));
    }
    match words.first().map(String::as_str) {
        Some("get") => get(&sys, &words, &p, &format).await,
        Some("watch") => watch(&sys, &words, &p).await,
        Some("compact") | Some("compaction") => compact(&sys, &words).await,
        Some("lease") => super::etcdctl_lease::lease(&sys, &words, &p).await,
        Some("endpoint") if words.get(1).map(String::as_str) == Some("status") => {
            status(&sys, &format).await
        }
        Some("endpoint") if words.get(1).map(String::as_str) == Some("health") => {
            health(&sys).await
        }
        Some("version") => {
            sys.out(&format!(
                "etcdctl version: {ETCD_VERSION}\nAPI version: 3.6\n"
            ));
            0
        }
        Some(other) => fail(
            &sys,
            1,
            &format!("unknown command \"{other}\" for \"etcdctl\""),
        ),
        None => {
            sys.out("NAME:\n\tetcdctl - A simple command line client for etcd3.\n");
            0
        }
    }
}

async fn get(sys: &Sys, words: &[String], p: &Parsed, format: &str) -> i32 {
    let Some(key) = words.get(1) else {
        return fail(
            sys,
            EXIT_BAD_ARGS,
            "get command needs one argument as key and an optional argument as range_end",
        );
    };
    if format == "table" {
        return fail(
            sys,
            EXIT_BAD_FEATURE,
            "table is not supported as output format",
        );
    }
    let (limit, rev) = match (number(p, "limit"), number(p, "rev")) {
        (Ok(l), Ok(r)) => (l as usize, r),
        (Err(e), _) | (_, Err(e)) => return fail(sys, 1, &e),
    };
    let result = sys
        .etcd(EtcdOp::Range {
            key: key.clone(),
            prefix: p.bool("prefix"),
            limit,
            revision: rev,
        })
        .await;
    let (kvs, count, more, revision) = match result {
        Ok(EtcdResult::Range {
            kvs,
            count,
            more,
            revision,
        }) => (kvs, count, more, revision),
        Ok(_) => return 1,
        Err(e) => return fail(sys, 1, &etcd_error(&e)),
    };
    let keys_only = p.bool("keys-only");
    if p.bool("count-only") && format != "json" {
        sys.out(&format!("{count}\n"));
        return 0;
    }
    match format {
        "json" => {
            let mut s = format!("{{\"header\":{}", header_json(revision));
            if !kvs.is_empty() && !p.bool("count-only") {
                let items: Vec<String> = kvs.iter().map(|kv| kv_json(kv, keys_only)).collect();
                s.push_str(&format!(",\"kvs\":[{}]", items.join(",")));
            }
            if more {
                s.push_str(",\"more\":true");
            }
            if count > 0 {
                s.push_str(&format!(",\"count\":{count}"));
            }
            s.push_str("}\n");
            sys.out(&s);
        }
        _ => {
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
    }
    0
}

async fn watch(sys: &Sys, words: &[String], p: &Parsed) -> i32 {
    let Some(key) = words.get(1) else {
        return fail(sys, EXIT_BAD_ARGS, "bad number of arguments");
    };
    let rev = match number(p, "rev") {
        Ok(r) => r,
        Err(e) => return fail(sys, 1, &e),
    };
    if let Err(e) = sys
        .etcd(EtcdOp::Watch {
            prefix: key.clone(),
            start_revision: rev,
        })
        .await
    {
        return fail(sys, 1, &etcd_error(&e));
    }
    let json = p.get("write-out") == Some("json");
    loop {
        let b = sys.next_etcd_batch().await;
        match b.events {
            Ok(evs) => {
                for e in evs {
                    if !p.bool("prefix") && e.kv.key != *key {
                        continue;
                    }
                    if json {
                        continue;
                    }
                    let t = if e.deleted { "DELETE" } else { "PUT" };
                    sys.out(&format!("{t}\n"));
                    if p.bool("prev-kv") {
                        if let Some(prev) = &e.prev {
                            sys.out(&format!("{}\n{}\n", prev.key, value_text(prev)));
                        }
                    }
                    // A delete event's key-value has the key and no value.
                    let value = if e.deleted {
                        String::new()
                    } else {
                        value_text(&e.kv)
                    };
                    sys.out(&format!("{}\n{value}\n", e.kv.key));
                }
            }
            Err((m, _)) => {
                sys.err(&format!("watch was canceled (etcdserver: {m})\n"));
                return fail(sys, EXIT_INTERRUPTED, "watch is canceled by the server");
            }
        }
    }
}

async fn compact(sys: &Sys, words: &[String]) -> i32 {
    let Some(arg) = words.get(1) else {
        return fail(sys, EXIT_BAD_ARGS, "compaction command needs 1 argument");
    };
    let Ok(rev) = arg.parse::<u64>() else {
        return fail(
            sys,
            EXIT_BAD_ARGS,
            &format!("strconv.ParseInt: parsing \"{arg}\": invalid syntax"),
        );
    };
    match sys.etcd(EtcdOp::Compact { revision: rev }).await {
        Ok(_) => {
            sys.out(&format!("compacted revision {rev}\n"));
            0
        }
        Err(e) => fail(sys, 1, &etcd_error(&e)),
    }
}

async fn status(sys: &Sys, format: &str) -> i32 {
    let (revision, db_size, in_use) = match sys.etcd(EtcdOp::Status).await {
        Ok(EtcdResult::Status {
            revision,
            db_size,
            db_size_in_use,
            ..
        }) => (revision, db_size, db_size_in_use),
        Ok(_) => return 1,
        Err(e) => {
            sys.err(&format!(
                "Failed to get the status of endpoint {ENDPOINT} (context deadline exceeded)\n"
            ));
            let _ = e;
            return 0;
        }
    };
    // Raft entries outnumber revisions (reads, leases and compactions are entries too).
    let raft_index = revision + 3;
    let not_in_use = if db_size == 0 {
        0
    } else {
        (100 * (db_size - in_use.min(db_size))) / db_size
    };
    let row: Vec<String> = vec![
        ENDPOINT.into(),
        format!("{MEMBER_ID:x}"),
        ETCD_VERSION.into(),
        STORAGE_VERSION.into(),
        humanize_bytes(db_size),
        humanize_bytes(in_use),
        format!("{not_in_use}%"),
        humanize_bytes(QUOTA),
        "true".into(),
        "false".into(),
        RAFT_TERM.to_string(),
        raft_index.to_string(),
        raft_index.to_string(),
        String::new(),
        String::new(),
        "false".into(),
    ];
    match format {
        "table" => {
            let head = [
                "endpoint",
                "ID",
                "version",
                "storage version",
                "db size",
                "in use",
                "percentage not in use",
                "quota",
                "is leader",
                "is learner",
                "raft term",
                "raft index",
                "raft applied index",
                "errors",
                "downgrade target version",
                "downgrade enabled",
            ];
            sys.out(&ascii_table(&head, &[row]));
        }
        "json" => sys.out(&format!(
            "[{{\"Endpoint\":\"{ENDPOINT}\",\"Status\":{{\"header\":{},\"version\":\"{ETCD_VERSION}\",\"dbSize\":{db_size},\"leader\":{MEMBER_ID},\"raftIndex\":{raft_index},\"raftTerm\":{RAFT_TERM},\"raftAppliedIndex\":{raft_index},\"dbSizeInUse\":{in_use},\"storageVersion\":\"{STORAGE_VERSION}\",\"dbSizeQuota\":{QUOTA},\"downgradeInfo\":{{}}}}}}]\n",
            header_json(revision)
        )),
        _ => sys.out(&format!("{}\n", row.join(", "))),
    }
    0
}

async fn health(sys: &Sys) -> i32 {
    match sys.etcd(EtcdOp::Status).await {
        Ok(_) => {
            sys.out(&format!(
                "{ENDPOINT} is healthy: successfully committed proposal: took = 1.283562ms\n"
            ));
            0
        }
        Err(_) => {
            sys.err(&format!(
                "{ENDPOINT} is unhealthy: failed to commit proposal: context deadline exceeded\n"
            ));
            fail(sys, 1, "unhealthy cluster")
        }
    }
}

pub(super) fn etcd_error(e: &str) -> String {
    if e.contains("refused") || e.contains("deadline") {
        "context deadline exceeded".into()
    } else {
        e.to_string()
    }
}

/// olekukonko/tablewriter 0.0.5 as etcdctl sets it up: upper-case centred headers,
/// right-aligned cells, one space of padding, `+`/`-`/`|` borders.
pub fn ascii_table(head: &[&str], rows: &[Vec<String>]) -> String {
    let head: Vec<String> = head.iter().map(|h| h.to_uppercase()).collect();
    let widths: Vec<usize> = head
        .iter()
        .enumerate()
        .map(|(i, h)| {
            rows.iter()
                .filter_map(|r| r.get(i))
                .map(|c| c.chars().count())
                .chain(std::iter::once(h.chars().count()))
                .max()
                .unwrap_or(0)
        })
        .collect();
    let sep = format!(
        "+{}+\n",
        widths
            .iter()
            .map(|w| "-".repeat(w + 2))
            .collect::<Vec<_>>()
            .join("+")
    );
    let center = |s: &str, w: usize| {
        let gap = w - s.chars().count();
        let left = gap / 2;
        format!("{}{s}{}", " ".repeat(left), " ".repeat(gap - left))
    };
    let mut out = sep.clone();
    let cells: Vec<String> = head
        .iter()
        .zip(&widths)
        .map(|(h, w)| format!(" {} ", center(h, *w)))
        .collect();
    out.push_str(&format!("|{}|\n", cells.join("|")));
    out.push_str(&sep);
    for r in rows {
        let cells: Vec<String> = r
            .iter()
            .zip(&widths)
            .map(|(c, w)| format!(" {c:>w$} "))
            .collect();
        out.push_str(&format!("|{}|\n", cells.join("|")));
    }
    out.push_str(&sep);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn humanizes_like_go_humanize() {
        assert_eq!(humanize_bytes(5), "5 B");
        assert_eq!(humanize_bytes(20480), "20 kB");
        assert_eq!(humanize_bytes(16384), "16 kB");
        assert_eq!(humanize_bytes(6_600_000), "6.6 MB");
        assert_eq!(humanize_bytes(171_000_000), "171 MB");
        assert_eq!(humanize_bytes(2 * 1024 * 1024 * 1024), "2.1 GB");
    }

    #[test]
    fn tables_center_headers_with_the_odd_space_right_and_align_cells_right() {
        let t = ascii_table(
            &["quota", "raft term"],
            &[vec!["2.1 GB".into(), "2".into()]],
        );
        assert_eq!(
            t,
            "+--------+-----------+\n| QUOTA  | RAFT TERM |\n+--------+-----------+\n| 2.1 GB |         2 |\n+--------+-----------+\n"
        );
    }
}
