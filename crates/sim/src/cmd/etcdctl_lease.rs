//! `etcdctl lease list` and `etcdctl lease timetolive ID [--keys]`, as etcdctl 3.6's
//! simple printer writes them: the leases kube-apiserver writes Events with.

use crate::cmd::flags::Parsed;
use crate::etcd::{EtcdOp, EtcdResult};
use crate::process::Sys;

use super::etcdctl::{etcd_error, fail, EXIT_BAD_ARGS};

/// `etcdctl lease …`.
pub async fn lease(sys: &Sys, words: &[String], p: &Parsed) -> i32 {
    match words.get(1).map(String::as_str) {
        Some("list") => match sys.etcd(EtcdOp::LeaseLeases).await {
            Ok(EtcdResult::Leases(ids)) => {
                let mut out = format!("found {} leases\n", ids.len());
                for id in ids {
                    out.push_str(&format!("{id:016x}\n"));
                }
                sys.out(&out);
                0
            }
            Ok(_) => 1,
            Err(e) => fail(sys, 1, &etcd_error(&e)),
        },
        Some("timetolive") => {
            let Some(arg) = words.get(2) else {
                return fail(
                    sys,
                    EXIT_BAD_ARGS,
                    "lease timetolive command needs lease ID as argument",
                );
            };
            let Ok(id) = i64::from_str_radix(arg, 16) else {
                return fail(
                    sys,
                    EXIT_BAD_ARGS,
                    &format!("bad lease ID arg (strconv.ParseInt: parsing \"{arg}\": invalid syntax), expecting ID in Hex"),
                );
            };
            match sys.etcd(EtcdOp::LeaseTimeToLive { id }).await {
                Ok(EtcdResult::TimeToLive {
                    granted_ttl,
                    ttl,
                    keys,
                }) => {
                    if granted_ttl == 0 && ttl == -1 {
                        sys.out(&format!("lease {id:016x} already expired\n"));
                        return 0;
                    }
                    let mut txt = format!(
                        "lease {id:016x} granted with TTL({granted_ttl}s), remaining({ttl}s)"
                    );
                    if p.bool("keys") {
                        txt.push_str(&format!(", attached keys([{}])", keys.join(" ")));
                    }
                    sys.out(&format!("{txt}\n"));
                    0
                }
                Ok(_) => 1,
                Err(e) => fail(sys, 1, &etcd_error(&e)),
            }
        }
        Some(other) => fail(
            sys,
            1,
            &format!("unknown command \"{other}\" for \"etcdctl lease\""),
        ),
        None => {
            sys.out("NAME:\n\tlease - Lease related commands\n");
            0
        }
    }
}
