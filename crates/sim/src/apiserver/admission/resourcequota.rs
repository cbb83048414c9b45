//! `ResourceQuota`: charges a request's usage to the namespace's quotas, rejecting it with
//! upstream's `exceeded quota` / `must specify` messages; returns the quotas with their new
//! `status.used` for the pipeline to persist before the object.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::core::v1::{Container, Pod, PodAffinityTerm, PodSpec, ResourceQuota};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity as ApiQuantity;

use super::{forbidden, AdmissionError, Operation};
use crate::apiserver::quantity::{parse_api_quantity, Format, Quantity};
use crate::object::Object;

/// A resource list with parsed quantities.
pub type Usage = BTreeMap<String, Quantity>;

fn parsed(list: Option<&BTreeMap<String, ApiQuantity>>) -> Usage {
    list.into_iter()
        .flatten()
        .filter_map(|(k, v)| parse_api_quantity(v).ok().map(|q| (k.clone(), q)))
        .collect()
}

fn add_into(acc: &mut Usage, list: &Usage) {
    for (k, v) in list {
        let sum = acc.get(k).map_or(*v, |a| a.add(v));
        acc.insert(k.clone(), sum);
    }
}

fn max_into(acc: &mut Usage, list: &Usage) {
    for (k, v) in list {
        if acc.get(k).is_none_or(|a| v > a) {
            acc.insert(k.clone(), *v);
        }
    }
}

fn container_list(c: &Container, limits: bool) -> Usage {
    let r = c.resources.as_ref();
    parsed(if limits {
        r.and_then(|r| r.limits.as_ref())
    } else {
        r.and_then(|r| r.requests.as_ref())
    })
}

/// Effective pod requests (or limits): containers plus sidecars, at least each init
/// container's (plus the sidecars started before it), plus overhead.
fn pod_totals(pod: &Pod, limits: bool) -> Usage {
    let spec = pod.spec.clone().unwrap_or_default();
    let mut total = Usage::new();
    for c in &spec.containers {
        add_into(&mut total, &container_list(c, limits));
    }
    let mut sidecars = Usage::new();
    let mut init_max = Usage::new();
    for c in spec.init_containers.iter().flatten() {
        let own = container_list(c, limits);
        if c.restart_policy.as_deref() == Some("Always") {
            add_into(&mut total, &own);
            add_into(&mut sidecars, &own);
            max_into(&mut init_max, &sidecars);
        } else {
            let mut tmp = own;
            add_into(&mut tmp, &sidecars);
            max_into(&mut init_max, &tmp);
        }
    }
    max_into(&mut total, &init_max);
    add_into(&mut total, &parsed(spec.overhead.as_ref()));
    total
}

/// `resourcehelper.PodRequests`.
pub fn pod_requests(pod: &Pod) -> Usage {
    pod_totals(pod, false)
}

/// `resourcehelper.PodLimits`.
pub fn pod_limits(pod: &Pod) -> Usage {
    pod_totals(pod, true)
}

fn one() -> Quantity {
    Quantity::new(1, Format::DecimalSI)
}

/// `podComputeUsageHelper`: requests and limits as quota resource names.
fn compute_usage(requests: &Usage, limits: &Usage) -> Usage {
    let mut u = Usage::new();
    u.insert("pods".into(), one());
    for (res, req_name, lim_name) in [
        ("cpu", "requests.cpu", "limits.cpu"),
        ("memory", "requests.memory", "limits.memory"),
        (
            "ephemeral-storage",
            "requests.ephemeral-storage",
            "limits.ephemeral-storage",
        ),
    ] {
        if let Some(r) = requests.get(res) {
            u.insert(res.into(), *r);
            u.insert(req_name.into(), *r);
        }
        if let Some(l) = limits.get(res) {
            u.insert(lim_name.into(), *l);
        }
    }
    for (k, v) in requests {
        if k.starts_with("hugepages-") {
            u.insert(k.clone(), *v);
            u.insert(format!("requests.{k}"), *v);
        } else if k.contains('/') && !k.contains("kubernetes.io/") {
            u.insert(format!("requests.{k}"), *v);
        }
    }
    u
}

fn pod_is_terminal(pod: &Pod) -> bool {
    matches!(
        pod.status.as_ref().and_then(|s| s.phase.as_deref()),
        Some("Succeeded" | "Failed")
    )
}

fn is_best_effort(pod: &Pod) -> bool {
    let spec = pod.spec.clone().unwrap_or_default();
    spec.containers
        .iter()
        .chain(spec.init_containers.iter().flatten())
        .all(|c| {
            let r = c.resources.clone().unwrap_or_default();
            [r.requests, r.limits]
                .iter()
                .flatten()
                .all(|l| !l.keys().any(|k| k == "cpu" || k == "memory"))
        })
}

/// What a quota tracks for one kind of object (upstream's evaluators).
fn usage(obj: &Object) -> Usage {
    let mut u = Usage::new();
    match obj {
        Object::Pod(p) => {
            u.insert("count/pods".into(), one());
            if !pod_is_terminal(p) {
                u.extend(compute_usage(&pod_requests(p), &pod_limits(p)));
            }
        }
        Object::Service(s) => {
            let spec = s.spec.clone().unwrap_or_default();
            let ports = spec.ports.as_ref().map_or(0, |p| p.len()) as i64;
            u.insert("count/services".into(), one());
            u.insert("services".into(), one());
            match spec.type_.as_deref() {
                Some("NodePort") => {
                    u.insert(
                        "services.nodeports".into(),
                        Quantity::new(ports, Format::DecimalSI),
                    );
                }
                Some("LoadBalancer") => {
                    let node_ports = if spec.allocate_load_balancer_node_ports == Some(false) {
                        spec.ports
                            .iter()
                            .flatten()
                            .filter(|p| p.node_port.unwrap_or(0) != 0)
                            .count() as i64
                    } else {
                        ports
                    };
                    u.insert(
                        "services.nodeports".into(),
                        Quantity::new(node_ports, Format::DecimalSI),
                    );
                    u.insert("services.loadbalancers".into(), one());
                }
                _ => {}
            }
        }
        Object::PersistentVolumeClaim(pvc) => {
            let spec = pvc.spec.clone().unwrap_or_default();
            u.insert("count/persistentvolumeclaims".into(), one());
            u.insert("persistentvolumeclaims".into(), one());
            let class = spec.storage_class_name.clone().unwrap_or_default();
            if !class.is_empty() {
                u.insert(
                    format!("{class}.storageclass.storage.k8s.io/persistentvolumeclaims"),
                    one(),
                );
            }
            if let Some(s) =
                parsed(spec.resources.as_ref().and_then(|r| r.requests.as_ref())).get("storage")
            {
                u.insert("requests.storage".into(), *s);
                if !class.is_empty() {
                    u.insert(
                        format!("{class}.storageclass.storage.k8s.io/requests.storage"),
                        *s,
                    );
                }
            }
        }
        other => {
            let info = other.kind().info();
            u.insert(format!("count/{}", info.group_resource()), one());
            if matches!(info.plural, "configmaps" | "secrets" | "resourcequotas")
                && info.group.is_empty()
            {
                u.insert(info.plural.into(), one());
            }
        }
    }
    u
}

/// The hard resources an evaluator recognises (`MatchingResources`).
fn matching_resources(obj: &Object, hard: &[String]) -> Vec<String> {
    let usage_keys: BTreeSet<String> = usage(obj).into_keys().collect();
    hard.iter()
        .filter(|h| match obj {
            Object::Pod(_) => {
                const POD: &[&str] = &[
                    "count/pods",
                    "cpu",
                    "memory",
                    "ephemeral-storage",
                    "requests.cpu",
                    "requests.memory",
                    "requests.ephemeral-storage",
                    "limits.cpu",
                    "limits.memory",
                    "limits.ephemeral-storage",
                    "pods",
                ];
                POD.contains(&h.as_str())
                    || h.starts_with("hugepages-")
                    || h.starts_with("requests.hugepages-")
                    || (h.starts_with("requests.") && h.contains('/'))
            }
            Object::Service(_) => matches!(
                h.as_str(),
                "count/services" | "services" | "services.nodeports" | "services.loadbalancers"
            ),
            Object::PersistentVolumeClaim(_) => {
                h.as_str() == "persistentvolumeclaims"
                    || h.as_str() == "requests.storage"
                    || h.as_str() == "count/persistentvolumeclaims"
                    || h.contains(".storageclass.storage.k8s.io/")
            }
            _ => usage_keys.contains(*h),
        })
        .cloned()
        .collect()
}

/// Whether an operation on this kind is charged (`Handles`).
fn handles(op: Operation, obj: &Object) -> bool {
    match obj {
        Object::Service(_) | Object::PersistentVolumeClaim(_) => {
            op == Operation::Create || op == Operation::Update
        }
        _ => op == Operation::Create,
    }
}

fn scope_matches(scope: &str, op: &str, values: &[String], pod: &Pod) -> bool {
    let spec = pod.spec.clone().unwrap_or_default();
    match scope {
        "Terminating" => spec.active_deadline_seconds.is_some_and(|d| d >= 0),
        "NotTerminating" => spec.active_deadline_seconds.is_none_or(|d| d < 0),
        "BestEffort" => is_best_effort(pod),
        "NotBestEffort" => !is_best_effort(pod),
        "PriorityClass" => {
            let pc = spec.priority_class_name.unwrap_or_default();
            match op {
                "In" => values.contains(&pc),
                "NotIn" => !values.contains(&pc),
                // `Exists` only asks whether the pod names a class at all.
                "Exists" => !pc.is_empty(),
                "DoesNotExist" => false,
                _ => false,
            }
        }
        "CrossNamespacePodAffinity" => has_cross_namespace_affinity(&spec),
        _ => false,
    }
}

/// `podHasCrossNamespacePodAffinity`: some (anti-)affinity term names namespaces or has
/// a namespace selector.
fn has_cross_namespace_affinity(spec: &PodSpec) -> bool {
    let Some(a) = spec.affinity.as_ref() else {
        return false;
    };
    let cross = |t: &PodAffinityTerm| {
        t.namespaces.as_ref().is_some_and(|n| !n.is_empty()) || t.namespace_selector.is_some()
    };
    let affinity = a.pod_affinity.as_ref().map(|p| {
        (
            &p.required_during_scheduling_ignored_during_execution,
            &p.preferred_during_scheduling_ignored_during_execution,
        )
    });
    let anti = a.pod_anti_affinity.as_ref().map(|p| {
        (
            &p.required_during_scheduling_ignored_during_execution,
            &p.preferred_during_scheduling_ignored_during_execution,
        )
    });
    [affinity, anti]
        .into_iter()
        .flatten()
        .any(|(required, preferred)| {
            required.iter().flatten().any(cross)
                || preferred
                    .iter()
                    .flatten()
                    .any(|w| cross(&w.pod_affinity_term))
        })
}

/// `evaluator.Matches`: the quota tracks one of the object's resources (by its
/// `status.hard`, which the quota controller fills in) and every scope matches.
fn quota_matches(q: &ResourceQuota, obj: &Object) -> bool {
    let hard: Vec<String> = q
        .status
        .iter()
        .flat_map(|s| s.hard.iter().flatten().map(|(k, _)| k.clone()))
        .collect();
    if matching_resources(obj, &hard).is_empty() {
        return false;
    }
    let spec = q.spec.clone().unwrap_or_default();
    let mut selectors: Vec<(String, String, Vec<String>)> = spec
        .scopes
        .iter()
        .flatten()
        .map(|s| (s.clone(), "Exists".to_string(), Vec::new()))
        .collect();
    for e in spec
        .scope_selector
        .iter()
        .flat_map(|s| s.match_expressions.iter().flatten())
    {
        selectors.push((
            e.scope_name.clone(),
            e.operator.clone(),
            e.values.clone().unwrap_or_default(),
        ));
    }
    selectors.iter().all(|(scope, op, values)| match obj {
        Object::Pod(p) => scope_matches(scope, op, values, p),
        _ => true,
    })
}

/// `podEvaluator.Constraints`: with a quota on cpu or memory, every container must set it.
fn constraints(restricted: &[String], obj: &Object) -> Result<(), String> {
    let Object::Pod(pod) = obj else { return Ok(()) };
    const VALIDATION: &[&str] = &[
        "cpu",
        "memory",
        "requests.cpu",
        "requests.memory",
        "limits.cpu",
        "limits.memory",
    ];
    let required: BTreeSet<&str> = restricted
        .iter()
        .map(|s| s.as_str())
        .filter(|r| VALIDATION.contains(r))
        .collect();
    let mut missing: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let spec = pod.spec.clone().unwrap_or_default();
    for c in spec
        .containers
        .iter()
        .chain(spec.init_containers.iter().flatten())
    {
        let have = compute_usage(&container_list(c, false), &container_list(c, true));
        for r in &required {
            if !have.contains_key(*r) {
                missing
                    .entry(r.to_string())
                    .or_default()
                    .insert(c.name.clone());
            }
        }
    }
    if missing.is_empty() {
        return Ok(());
    }
    let parts: Vec<String> = missing
        .iter()
        .map(|(r, names)| {
            format!(
                "{r} for: {}",
                names.iter().cloned().collect::<Vec<_>>().join(",")
            )
        })
        .collect();
    Err(format!("must specify {}", parts.join("; ")))
}

/// `prettyPrint`: `k=v` pairs sorted by name, comma-joined.
fn pretty(u: &Usage) -> String {
    u.iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(",")
}

fn mask(u: &Usage, names: &BTreeSet<String>) -> Usage {
    u.iter()
        .filter(|(k, _)| names.contains(*k))
        .map(|(k, v)| (k.clone(), *v))
        .collect()
}

/// The quota controller's recalculation (`CalculateUsage`): for every hard resource of
/// `q`, the sum of what the namespace's matching objects use; resources nothing uses are
/// reported as zero.
pub fn calculate_usage<'a>(
    q: &ResourceQuota,
    objects: impl IntoIterator<Item = &'a Object>,
) -> BTreeMap<String, ApiQuantity> {
    let hard: Vec<String> = q
        .spec
        .as_ref()
        .and_then(|s| s.hard.as_ref())
        .into_iter()
        .flatten()
        .map(|(k, _)| k.clone())
        .collect();
    let mut used: Usage = hard.iter().map(|h| (h.clone(), Quantity::zero())).collect();
    // Matching reads the hard limits from the status, which this recalculation writes.
    let mut q = q.clone();
    q.status.get_or_insert_with(Default::default).hard =
        q.spec.as_ref().and_then(|s| s.hard.clone());
    for o in objects {
        if !quota_matches(&q, o) {
            continue;
        }
        let names: BTreeSet<String> = matching_resources(o, &hard).into_iter().collect();
        add_into(&mut used, &mask(&usage(o), &names));
    }
    used.iter()
        .map(|(k, v)| (k.clone(), ApiQuantity(v.canonical())))
        .collect()
}

/// Charges `obj` (with `old` for updates) against `quotas` of its namespace. Returns the
/// quotas whose usage changed, with `status.used` updated, or the Forbidden rejection.
pub fn check(
    op: Operation,
    obj: &Object,
    old: Option<&Object>,
    quotas: &[ResourceQuota],
) -> Result<Vec<ResourceQuota>, AdmissionError> {
    if !handles(op, obj) {
        return Ok(Vec::new());
    }
    let mut sorted: Vec<&ResourceQuota> = quotas.iter().collect();
    sorted.sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
    let mut interesting = Vec::new();
    for q in sorted {
        if !quota_matches(q, obj) {
            continue;
        }
        let name = q.metadata.name.clone().unwrap_or_default();
        let status = q.status.clone().unwrap_or_default();
        let hard: Vec<String> = status
            .hard
            .iter()
            .flatten()
            .map(|(k, _)| k.clone())
            .collect();
        let restricted = matching_resources(obj, &hard);
        if let Err(e) = constraints(&restricted, obj) {
            return Err(forbidden(obj, &format!("failed quota: {name}: {e}")));
        }
        let used = status.used.clone().unwrap_or_default();
        if restricted.iter().any(|r| !used.contains_key(r)) {
            let mut names = restricted.clone();
            names.sort();
            return Err(forbidden(
                obj,
                &format!(
                    "status unknown for quota: {name}, resources: {}",
                    names.join(",")
                ),
            ));
        }
        interesting.push(q);
    }
    let input = usage(obj);
    let negative: Vec<&String> = input
        .iter()
        .filter(|(_, v)| v.sign() < 0)
        .map(|(k, _)| k)
        .collect();
    if !negative.is_empty() {
        let names: Vec<&str> = negative.iter().map(|s| s.as_str()).collect();
        return Err(forbidden(
            obj,
            &format!(
                "quota usage is negative for resource(s): {}",
                names.join(",")
            ),
        ));
    }
    let mut out = Vec::new();
    for q in interesting {
        let mut delta = input.clone();
        if let Some(prev) = old.filter(|o| op == Operation::Update && o.resource_version() > 0) {
            if quota_matches(q, prev) {
                let prev_usage = usage(prev);
                delta = delta
                    .into_iter()
                    .map(|(k, v)| {
                        let d = prev_usage.get(&k).map_or(v, |p| v.sub(p));
                        (k, if d.sign() < 0 { Quantity::zero() } else { d })
                    })
                    .collect();
            }
        }
        delta.retain(|_, v| !v.is_zero());
        if delta.is_empty() {
            continue;
        }
        let status = q.status.clone().unwrap_or_default();
        let hard = parsed(status.hard.as_ref());
        let hard_names: BTreeSet<String> = hard.keys().cloned().collect();
        let requested = mask(&delta, &hard_names);
        let used = parsed(status.used.as_ref());
        let mut new_used = used.clone();
        add_into(&mut new_used, &requested);
        let exceeded: BTreeSet<String> = requested
            .keys()
            .filter(|k| match (new_used.get(*k), hard.get(*k)) {
                (Some(n), Some(h)) => n > h,
                _ => false,
            })
            .cloned()
            .collect();
        let name = q.metadata.name.clone().unwrap_or_default();
        if !exceeded.is_empty() {
            return Err(forbidden(
                obj,
                &format!(
                    "exceeded quota: {name}, requested: {}, used: {}, limited: {}",
                    pretty(&mask(&requested, &exceeded)),
                    pretty(&mask(&used, &exceeded)),
                    pretty(&mask(&hard, &exceeded)),
                ),
            ));
        }
        let mut updated = q.clone();
        let s = updated.status.get_or_insert_with(Default::default);
        s.used = Some(
            new_used
                .iter()
                .map(|(k, v)| (k.clone(), ApiQuantity(v.canonical())))
                .collect(),
        );
        out.push(updated);
    }
    Ok(out)
}

#[cfg(test)]
mod tests;
