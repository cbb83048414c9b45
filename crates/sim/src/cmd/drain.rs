//! `kubectl drain NODE`: cordon, sort the node's pods into evictable, ignored and
//! blocking ones (kubectl's drain filters), evict through `pods/eviction`, wait for each
//! pod to be gone, with kubectl's messages.

use std::sync::Arc;

use serde_json::json;

use crate::api::{ApiRequest, ApiResult, Body, PatchType, Subresource, Transport, Verb};
use crate::cmd::kubectl::Kubectl;
use crate::object::{Kind, Object};
use crate::selector::{FieldSelector, LabelSelector};
use crate::time::Time;

const DAEMONSET_FATAL: &str =
    "cannot delete DaemonSet-managed Pods (use --ignore-daemonsets to ignore)";
const DAEMONSET_WARNING: &str = "ignoring DaemonSet-managed Pods";
const LOCAL_STORAGE_FATAL: &str =
    "cannot delete Pods with local storage (use --delete-emptydir-data to override)";
const LOCAL_STORAGE_WARNING: &str = "deleting Pods with local storage";
const UNMANAGED_FATAL: &str =
    "cannot delete Pods that declare no controller (use --force to override)";
const UNMANAGED_WARNING: &str = "deleting Pods that declare no controller";

/// How the drain filters sorted a node's pods.
#[derive(Default)]
struct PodList {
    evict: Vec<Arc<Object>>,
    /// (message, pods as ns/name) in kubectl's order.
    warnings: Vec<(&'static str, Vec<String>)>,
    errors: Vec<(&'static str, Vec<String>)>,
}

fn push(list: &mut Vec<(&'static str, Vec<String>)>, msg: &'static str, pod: String) {
    match list.iter_mut().find(|(m, _)| *m == msg) {
        Some((_, v)) => v.push(pod),
        None => list.push((msg, vec![pod])),
    }
}

fn join(list: &[(&'static str, Vec<String>)], sep: &str) -> String {
    list.iter()
        .map(|(m, pods)| format!("{m}: {}", pods.join(", ")))
        .collect::<Vec<_>>()
        .join(sep)
}

fn classify(k: &Kubectl, pods: &[Arc<Object>]) -> PodList {
    let force = k.flags.bool("force");
    let ignore_ds = k.flags.bool("ignore-daemonsets");
    let emptydir = k.flags.bool("delete-emptydir-data");
    let mut out = PodList::default();
    for o in pods {
        let Object::Pod(p) = &**o else { continue };
        let id = format!("{}/{}", o.namespace(), o.name());
        let annotations = p.metadata.annotations.clone().unwrap_or_default();
        if annotations.contains_key("kubernetes.io/config.mirror") {
            continue; // mirror pods go with their static manifest
        }
        let phase = p.status.as_ref().and_then(|s| s.phase.as_deref());
        let finished = matches!(phase, Some("Succeeded") | Some("Failed"));
        let controller = crate::controllers::util::controller_of(&p.metadata);
        if controller.is_some_and(|c| c.kind == "DaemonSet") {
            if ignore_ds {
                push(&mut out.warnings, DAEMONSET_WARNING, id);
            } else {
                push(&mut out.errors, DAEMONSET_FATAL, id);
            }
            continue;
        }
        let has_emptydir = p
            .spec
            .as_ref()
            .and_then(|s| s.volumes.as_ref())
            .is_some_and(|vs| vs.iter().any(|v| v.empty_dir.is_some()));
        if has_emptydir && !finished {
            if emptydir {
                push(&mut out.warnings, LOCAL_STORAGE_WARNING, id.clone());
            } else {
                push(&mut out.errors, LOCAL_STORAGE_FATAL, id);
                continue;
            }
        }
        if controller.is_none() && !finished {
            if force {
                push(&mut out.warnings, UNMANAGED_WARNING, id);
            } else {
                push(&mut out.errors, UNMANAGED_FATAL, id);
                continue;
            }
        }
        out.evict.push(o.clone());
    }
    // kubectl lists the fatal reasons with "no controller" first.
    out.errors.sort_by_key(|(m, _)| match *m {
        UNMANAGED_FATAL => 0,
        DAEMONSET_FATAL => 1,
        _ => 2,
    });
    out
}

async fn cordon(k: &Kubectl, name: &str) -> Result<(), i32> {
    let node = match k
        .sys
        .api(ApiRequest::new(Verb::Get, Kind::Node, "", name))
        .await
    {
        Ok(ApiResult::Object(o)) => o,
        Ok(_) => return Err(1),
        Err(s) => return Err(k.status_error(&s)),
    };
    let already = matches!(&*node, Object::Node(n) if n.spec.as_ref().and_then(|s| s.unschedulable).unwrap_or(false));
    if already {
        k.sys.out(&format!("node/{name} already cordoned\n"));
        return Ok(());
    }
    let req = ApiRequest::new(Verb::Patch, Kind::Node, "", name).with_body(Body::Patch(
        PatchType::StrategicMerge,
        json!({"spec": {"unschedulable": true}}),
    ));
    match k.sys.api(req).await {
        Ok(_) => {
            k.sys.out(&format!("node/{name} cordoned\n"));
            Ok(())
        }
        Err(s) => Err(k.status_error(&s)),
    }
}

/// `kubectl drain NODE`.
pub async fn drain(k: Kubectl) -> i32 {
    let Some(name) = k.flags.args.first().cloned() else {
        return k.error(
            "USAGE: kubectl drain NODE [flags]\nSee 'kubectl drain -h' for help and examples",
        );
    };
    let grace: Option<i64> = match k.flags.get("grace-period").map(str::parse::<i64>) {
        None => None,
        Some(Ok(g)) if g < 0 => None,
        Some(Ok(g)) => Some(g),
        Some(Err(_)) => return k.error("invalid argument for --grace-period"),
    };
    if let Err(c) = cordon(&k, &name).await {
        return c;
    }
    let mut req = ApiRequest::new(Verb::List, Kind::Pod, "", "");
    req.options.field_selector = Some(FieldSelector::eq("spec.nodeName", &name));
    if let Some(sel) = k.flags.get("pod-selector") {
        match LabelSelector::parse(sel) {
            Ok(s) => req.options.label_selector = Some(s),
            Err(e) => return k.error(&e),
        }
    }
    let pods = match k.sys.api(req).await {
        Ok(ApiResult::List { items, .. }) => items,
        Ok(_) => Vec::new(),
        Err(s) => return k.status_error(&s),
    };
    let list = classify(&k, &pods);
    if !list.errors.is_empty() {
        let inner = if list.errors.len() == 1 {
            join(&list.errors, "")
        } else {
            format!("[{}]", join(&list.errors, ", "))
        };
        k.sys.err(&format!(
            "error: unable to drain node \"{name}\" due to error: {inner}, continuing command...\nThere are pending nodes to be drained:\n {name}\n"
        ));
        for (m, pods) in &list.errors {
            k.sys.err(&format!("{m}: {}\n", pods.join(", ")));
        }
        return 1;
    }
    if !list.warnings.is_empty() {
        k.sys
            .err(&format!("Warning: {}\n", join(&list.warnings, "; ")));
    }
    let dry = k.flags.get("dry-run").is_some_and(|d| d != "none");
    if dry {
        for o in &list.evict {
            k.sys.out(&format!(
                "evicting pod {}/{} (dry run)\n",
                o.namespace(),
                o.name()
            ));
        }
        k.sys.out(&format!("node/{name} drained (dry run)\n"));
        return 0;
    }
    let errors = match evict_pods(&k, &list.evict, grace).await {
        Ok(errors) => errors,
        Err(code) => return code,
    };
    if !errors.is_empty() {
        return report_failure(&k, &name, &errors).await;
    }
    k.sys.out(&format!("node/{name} drained\n"));
    0
}

/// Where one pod's eviction stands (kubectl runs one goroutine per pod; this loop
/// interleaves them).
enum Step {
    /// Ask for the eviction at this time.
    Evict(Time),
    /// Evicted: poll until the pod is gone.
    Wait,
    /// Gone, or failed.
    Done,
}

/// `evictPods`: evicts every pod, retrying a 429 (a PodDisruptionBudget) every 5 s, and
/// waits for each to be gone. The errors of pods that failed otherwise, in kubectl's words.
async fn evict_pods(
    k: &Kubectl,
    pods: &[Arc<Object>],
    grace: Option<i64>,
) -> Result<Vec<String>, i32> {
    let mut steps: Vec<Step> = pods.iter().map(|_| Step::Evict(0)).collect();
    let mut errors = Vec::new();
    loop {
        for (o, step) in pods.iter().zip(steps.iter_mut()) {
            match step {
                Step::Evict(due) if *due <= k.sys.now() => {
                    *step = evict_once(k, o, grace, &mut errors).await?;
                }
                Step::Wait => {
                    let req = ApiRequest::new(Verb::Get, Kind::Pod, o.namespace(), o.name());
                    let gone = match k.sys.api(req).await {
                        Err(s) if s.is_not_found() => true,
                        Ok(ApiResult::Object(now)) => now.meta().uid != o.meta().uid,
                        Err(s) if s.transport != Transport::Server => {
                            return Err(k.status_error(&s))
                        }
                        _ => false,
                    };
                    if gone {
                        k.sys.out(&format!("pod/{} evicted\n", o.name()));
                        *step = Step::Done;
                    }
                }
                _ => {}
            }
        }
        if steps.iter().all(|s| matches!(s, Step::Done)) {
            return Ok(errors);
        }
        // waitForDelete polls every second; a refused eviction waits 5 s.
        let now = k.sys.now();
        let next = steps
            .iter()
            .filter_map(|s| match s {
                Step::Evict(due) => Some(*due),
                Step::Wait => Some(now + 1000),
                Step::Done => None,
            })
            .min()
            .unwrap_or(now + 1000);
        k.sys.sleep(next.saturating_sub(now).max(1)).await;
    }
}

/// One eviction request for one pod, as kubectl's per-pod loop makes it.
async fn evict_once(
    k: &Kubectl,
    o: &Arc<Object>,
    grace: Option<i64>,
    errors: &mut Vec<String>,
) -> Result<Step, i32> {
    let (ns, pod) = (o.namespace(), o.name());
    k.sys.out(&format!("evicting pod {ns}/{pod}\n"));
    let mut req =
        ApiRequest::new(Verb::Create, Kind::Pod, ns, pod).with_subresource(Subresource::Eviction);
    req.options.grace_period_seconds = grace;
    match k.sys.api(req).await {
        Ok(_) => Ok(Step::Wait),
        Err(s) if s.is_not_found() => Ok(Step::Done),
        Err(s) if s.is_too_many_requests() => {
            k.sys.err(&format!(
                "error when evicting pods/\"{pod}\" -n \"{ns}\" (will retry after 5s): {}\n",
                s.message
            ));
            Ok(Step::Evict(k.sys.now() + 5000))
        }
        Err(s) if s.transport != Transport::Server => Err(k.status_error(&s)),
        Err(s) => {
            errors.push(format!(
                "error when evicting pods/\"{pod}\" -n \"{ns}\": {}",
                s.message
            ));
            Ok(Step::Done)
        }
    }
}

/// What `kubectl drain` prints when evictions failed: the pods still to go, then the
/// node's failure (an aggregate error: one line per error, no `error: ` prefix).
async fn report_failure(k: &Kubectl, name: &str, errors: &[String]) -> i32 {
    let aggregate = if errors.len() == 1 {
        errors[0].clone()
    } else {
        format!("[{}]", errors.join(", "))
    };
    let mut req = ApiRequest::new(Verb::List, Kind::Pod, "", "");
    req.options.field_selector = Some(FieldSelector::eq("spec.nodeName", name));
    let selector = k.flags.get("pod-selector").map(LabelSelector::parse);
    if let Some(Ok(sel)) = selector {
        req.options.label_selector = Some(sel);
    }
    if let Ok(ApiResult::List { items, .. }) = k.sys.api(req).await {
        let pending = classify(k, &items).evict;
        if !pending.is_empty() {
            k.sys.err(&format!(
                "There are pending pods in node \"{name}\" when an error occurred: {aggregate}\n"
            ));
            for p in &pending {
                k.sys.err(&format!("pod/{}\n", p.name()));
            }
        }
    }
    k.sys.err(&format!(
        "error: unable to drain node \"{name}\" due to error: {aggregate}, continuing command...\nThere are pending nodes to be drained:\n {name}\n"
    ));
    for e in errors {
        k.sys.err(&format!("{e}\n"));
    }
    1
}
