//! `kubectl drain NODE`: cordon, sort the node's pods into evictable, ignored and
//! blocking ones (kubectl's drain filters), evict through `pods/eviction`, wait for each
//! pod to be gone, with kubectl's messages.

use std::sync::Arc;

use serde_json::json;

use crate::api::{ApiRequest, ApiResult, Body, PatchType, Subresource, Transport, Verb};
use crate::cmd::kubectl::Kubectl;
use crate::object::{Kind, Object};
use crate::selector::{FieldSelector, LabelSelector};

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
        let controller = p
            .metadata
            .owner_references
            .iter()
            .flatten()
            .find(|r| r.controller == Some(true));
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
    let mut pending = Vec::new();
    for o in &list.evict {
        if dry {
            k.sys.out(&format!(
                "evicting pod {}/{} (dry run)\n",
                o.namespace(),
                o.name()
            ));
            continue;
        }
        k.sys
            .out(&format!("evicting pod {}/{}\n", o.namespace(), o.name()));
        let mut req = ApiRequest::new(Verb::Create, Kind::Pod, o.namespace(), o.name())
            .with_subresource(Subresource::Eviction);
        req.options.grace_period_seconds = grace;
        match k.sys.api(req).await {
            Ok(_) => pending.push(o.clone()),
            Err(s) if s.is_not_found() => {}
            Err(s) => return k.status_error(&s),
        }
    }
    if dry {
        k.sys.out(&format!("node/{name} drained (dry run)\n"));
        return 0;
    }
    // waitForDelete: poll every second until each pod is gone (or replaced by a new UID).
    while !pending.is_empty() {
        let mut still = Vec::new();
        for o in pending {
            let req = ApiRequest::new(Verb::Get, Kind::Pod, o.namespace(), o.name());
            match k.sys.api(req).await {
                Err(s) if s.is_not_found() => {
                    k.sys.out(&format!("pod/{} evicted\n", o.name()));
                }
                Ok(ApiResult::Object(now)) if now.meta().uid != o.meta().uid => {
                    k.sys.out(&format!("pod/{} evicted\n", o.name()));
                }
                Err(s) if s.transport != Transport::Server => return k.status_error(&s),
                _ => still.push(o),
            }
        }
        pending = still;
        if !pending.is_empty() {
            k.sys.sleep(1000).await;
        }
    }
    k.sys.out(&format!("node/{name} drained\n"));
    0
}
