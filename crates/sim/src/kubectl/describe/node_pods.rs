//! The node describer's pod table and "Allocated resources": each non-terminated pod's
//! requests and limits with their share of the node's allocatable, and the totals.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{Container, Pod};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;

use super::super::describe::Writer;
use crate::time::Time;

/// (cpu milli, memory bytes) requests and limits of a pod, as `resourcehelper` sums them:
/// app containers, max'ed with each init container.
fn pod_totals(p: &Pod) -> ([i64; 2], [i64; 2]) {
    let Some(spec) = p.spec.as_ref() else {
        return ([0; 2], [0; 2]);
    };
    let sum = |list: &dyn Fn(&Container) -> Option<&BTreeMap<String, Quantity>>| {
        let mut t = [0i64; 2];
        for c in &spec.containers {
            let v = amounts(list(c));
            t[0] += v[0];
            t[1] += v[1];
        }
        for c in spec.init_containers.iter().flatten() {
            let v = amounts(list(c));
            t[0] = t[0].max(v[0]);
            t[1] = t[1].max(v[1]);
        }
        t
    };
    let req = sum(&|c| c.resources.as_ref().and_then(|r| r.requests.as_ref()));
    let lim = sum(&|c| c.resources.as_ref().and_then(|r| r.limits.as_ref()));
    (req, lim)
}

fn amounts(list: Option<&BTreeMap<String, Quantity>>) -> [i64; 2] {
    let get = |k: &str, milli: bool| {
        list.and_then(|l| l.get(k))
            .and_then(|q| crate::apiserver::quantity::parse_quantity(&q.0).ok())
            .map_or(0, |q| {
                if milli {
                    q.milli_value()
                } else {
                    q.milli_value() / 1000
                }
            })
    };
    [get("cpu", true), get("memory", false)]
}

fn cpu(m: i64) -> String {
    if m % 1000 == 0 {
        (m / 1000).to_string()
    } else {
        format!("{m}m")
    }
}

fn memory(b: i64) -> String {
    for (div, suffix) in [(1 << 30, "Gi"), (1 << 20, "Mi"), (1 << 10, "Ki")] {
        if b != 0 && b % div == 0 {
            return format!("{}{suffix}", b / div);
        }
    }
    b.to_string()
}

fn pct(v: i64, of: i64) -> i64 {
    if of == 0 {
        0
    } else {
        (v as f64 / of as f64 * 100.0) as i64
    }
}

/// The pods table and the allocated totals, against `allocatable` (cpu milli, memory bytes).
pub(super) fn write(w: &mut Writer, pods: &[&Pod], allocatable: [i64; 2], now: Time) {
    w.line(
        0,
        &format!("Non-terminated Pods:\t({} in total)", pods.len()),
    );
    w.line(
        1,
        "Namespace\tName\tCPU Requests\tCPU Limits\tMemory Requests\tMemory Limits\tAge",
    );
    w.line(
        1,
        "---------\t----\t------------\t----------\t---------------\t-------------\t---",
    );
    let (mut req, mut lim) = ([0i64; 2], [0i64; 2]);
    for p in pods {
        let (r, l) = pod_totals(p);
        for i in 0..2 {
            req[i] += r[i];
            lim[i] += l[i];
        }
        let age = p
            .metadata
            .creation_timestamp
            .as_ref()
            .map(|t| now.saturating_sub(crate::time::from_k8s_time(t)))
            .map_or("<unknown>".to_string(), |d| {
                crate::time::short_human_duration(d as i64)
            });
        w.line(
            1,
            &format!(
                "{}\t{}\t{} ({}%)\t{} ({}%)\t{} ({}%)\t{} ({}%)\t{age}",
                p.metadata.namespace.as_deref().unwrap_or(""),
                p.metadata.name.as_deref().unwrap_or(""),
                cpu(r[0]),
                pct(r[0], allocatable[0]),
                cpu(l[0]),
                pct(l[0], allocatable[0]),
                memory(r[1]),
                pct(r[1], allocatable[1]),
                memory(l[1]),
                pct(l[1], allocatable[1]),
            ),
        );
    }
    w.line(0, "Allocated resources:");
    w.line(
        1,
        "(Total limits may be over 100 percent, i.e., overcommitted.)",
    );
    w.line(1, "Resource\tRequests\tLimits");
    w.line(1, "--------\t--------\t------");
    w.line(
        1,
        &format!(
            "cpu\t{} ({}%)\t{} ({}%)",
            cpu(req[0]),
            pct(req[0], allocatable[0]),
            cpu(lim[0]),
            pct(lim[0], allocatable[0])
        ),
    );
    w.line(
        1,
        &format!(
            "memory\t{} ({}%)\t{} ({}%)",
            memory(req[1]),
            pct(req[1], allocatable[1]),
            memory(lim[1]),
            pct(lim[1], allocatable[1])
        ),
    );
    for r in ["ephemeral-storage", "hugepages-1Gi", "hugepages-2Mi"] {
        w.line(1, &format!("{r}\t0 (0%)\t0 (0%)"));
    }
}

/// The node's allocatable (cpu milli, memory bytes).
pub(super) fn allocatable(n: &k8s_openapi::api::core::v1::Node) -> [i64; 2] {
    amounts(n.status.as_ref().and_then(|s| s.allocatable.as_ref()))
}
