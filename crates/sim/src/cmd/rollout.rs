//! `kubectl rollout status`: watches the object and prints upstream's status messages.

use k8s_openapi::api::apps::v1::Deployment;

use std::sync::Arc;

use crate::api::{ApiRequest, ApiResult, Body, PatchType, Verb};
use crate::cmd::kubectl::{resolve_kind, Kubectl};
use crate::controllers::deployment_util::{get_condition, revision_of};
use crate::controllers::util::controlled_by;
use crate::object::{Kind, Object};
use crate::selector::FieldSelector;

/// The status line for a Deployment (`DeploymentStatusViewer.Status`), and whether done.
pub fn deployment_status(
    d: &Deployment,
    name: &str,
    revision: Option<i64>,
) -> Result<(String, bool), String> {
    if let Some(r) = revision {
        let current = revision_of(d.metadata.annotations.as_ref());
        if current != r {
            return Err(format!(
                "desired revision ({r}) is different from the running revision ({current})"
            ));
        }
    }
    let status = d.status.clone().unwrap_or_default();
    if d.metadata.generation.unwrap_or(0) > status.observed_generation.unwrap_or(0) {
        return Ok((
            "Waiting for deployment spec update to be observed...\n".into(),
            false,
        ));
    }
    if get_condition(&status, "Progressing")
        .is_some_and(|c| c.reason.as_deref() == Some("ProgressDeadlineExceeded"))
    {
        return Err(format!(
            "deployment \"{name}\" exceeded its progress deadline"
        ));
    }
    let replicas = d.spec.as_ref().and_then(|s| s.replicas).unwrap_or(1);
    let updated = status.updated_replicas.unwrap_or(0);
    let total = status.replicas.unwrap_or(0);
    let available = status.available_replicas.unwrap_or(0);
    if updated < replicas {
        return Ok((format!("Waiting for deployment \"{name}\" rollout to finish: {updated} out of {replicas} new replicas have been updated...\n"), false));
    }
    if total > updated {
        return Ok((format!("Waiting for deployment \"{name}\" rollout to finish: {} old replicas are pending termination...\n", total - updated), false));
    }
    if available < updated {
        return Ok((format!("Waiting for deployment \"{name}\" rollout to finish: {available} of {updated} updated replicas are available...\n"), false));
    }
    Ok((
        format!("deployment \"{name}\" successfully rolled out\n"),
        true,
    ))
}

/// `kubectl rollout SUBCOMMAND TYPE/NAME`.
pub async fn rollout(k: Kubectl) -> i32 {
    let args = k.flags.args.clone();
    let Some(sub) = args.first() else {
        return k
            .error("You must specify a subcommand: history, pause, restart, resume, status, undo");
    };
    let rest = &args[1..];
    let (t, name) = match rest.first().and_then(|a| a.split_once('/')) {
        Some((t, n)) => (t.to_string(), n.to_string()),
        None => match (rest.first(), rest.get(1)) {
            (Some(t), Some(n)) => (t.clone(), n.clone()),
            _ => return k.error("required resource not specified"),
        },
    };
    let kind = match resolve_kind(&t, &k.custom) {
        Ok(kd) => kd,
        Err(e) => return k.error(&e),
    };
    let apps = matches!(kind, Kind::StatefulSet | Kind::DaemonSet);
    if (apps || kind == Kind::Deployment) && sub == "restart" {
        return crate::cmd::rollout_apps::restart(&k, kind, &name).await;
    }
    if apps && matches!(sub.as_str(), "history" | "undo") {
        return match sub.as_str() {
            "history" => crate::cmd::rollout_apps::history(&k, kind, &name).await,
            _ => crate::cmd::rollout_apps::undo(&k, kind, &name).await,
        };
    }
    if kind != Kind::Deployment && sub != "status" {
        return k.error(&format!(
            "no {sub}er has been implemented for {}",
            kind.info().group_resource()
        ));
    }
    match sub.as_str() {
        "status" => status(&k, kind, &name).await,
        "history" => history(&k, &name).await,
        "undo" => undo(&k, &name).await,
        "pause" | "resume" => pause(&k, &name, sub == "pause").await,
        other => k.error(&format!(
            "unknown command \"{other}\" for \"kubectl rollout\""
        )),
    }
}

async fn status(k: &Kubectl, kind: Kind, name: &str) -> i32 {
    if !matches!(kind, Kind::Deployment | Kind::StatefulSet | Kind::DaemonSet) {
        // `StatusViewerFor` names the GroupKind (`Job.batch`, `Pod`).
        let info = kind.info();
        let gk = if info.group.is_empty() {
            info.kind.to_string()
        } else {
            format!("{}.{}", info.kind, info.group)
        };
        return k.error(&format!("no status viewer has been implemented for {gk}"));
    }
    let ns = k.namespace();
    let revision = k.flags.get("revision").and_then(|r| r.parse().ok());
    let watch = k.flags.get("watch").is_none_or(|w| w != "false");
    // --timeout: how long to watch; 0 (the default) waits for ever.
    let timeout = match k.flags.get("timeout") {
        None => 0,
        Some(t) => match crate::time::parse_duration(t) {
            Ok(ms) => ms,
            Err(e) => {
                return k.error(&format!(
                    "invalid argument \"{t}\" for \"--timeout\" flag: {e}"
                ))
            }
        },
    };
    let deadline = k.sys.now() + timeout;
    let obj = match k.sys.api(ApiRequest::new(Verb::Get, kind, &ns, name)).await {
        Ok(ApiResult::Object(o)) => o,
        Ok(_) => return 1,
        Err(s) => return k.status_error(&s),
    };
    let strategy = match &*obj {
        Object::Deployment(d) => d
            .spec
            .as_ref()
            .and_then(|s| s.strategy.as_ref())
            .and_then(|s| s.type_.clone()),
        _ => None,
    };
    if strategy.as_deref() == Some("Recreate") {
        // Upstream supports Recreate for Deployments; only DaemonSets/StatefulSets refuse.
    }
    let mut req = ApiRequest::new(Verb::Watch, kind, &ns, "");
    req.options.field_selector = Some(FieldSelector::eq("metadata.name", name));
    let id = match k.sys.watch(req).await {
        Ok(id) => id,
        Err(s) => return k.status_error(&s),
    };
    loop {
        let ev = if timeout == 0 {
            k.sys.next_event(id).await
        } else {
            let left = deadline.saturating_sub(k.sys.now());
            match k.sys.next_event_within(id, left.max(1)).await {
                Ok(ev) => ev,
                Err(()) => return k.error("timed out waiting for the condition"),
            }
        };
        let Some(ev) = ev else { break };
        let Ok((_, o)) = ev.event else { break };
        let line = match &*o {
            Object::Deployment(d) => deployment_status(d, name, revision),
            other => match crate::cmd::rollout_apps::status_line(other, name) {
                Some(l) => l,
                None => continue,
            },
        };
        match line {
            Err(e) => return k.error(&e),
            Ok((line, done)) => {
                k.sys.out(&line);
                if done || !watch {
                    return 0;
                }
            }
        }
    }
    k.error("watch closed before rollout finished")
}

async fn get_deployment(k: &Kubectl, name: &str) -> Result<Arc<Object>, i32> {
    match k
        .sys
        .api(ApiRequest::new(
            Verb::Get,
            Kind::Deployment,
            &k.namespace(),
            name,
        ))
        .await
    {
        Ok(ApiResult::Object(o)) => Ok(o),
        Ok(_) => Err(1),
        Err(s) => Err(k.status_error(&s)),
    }
}

/// The Deployment's ReplicaSets, by revision.
async fn revisions(k: &Kubectl, d: &Object) -> Vec<(i64, Arc<Object>)> {
    let uid = d.meta().uid.clone().unwrap_or_default();
    let items = match k
        .sys
        .api(ApiRequest::new(
            Verb::List,
            Kind::ReplicaSet,
            &k.namespace(),
            "",
        ))
        .await
    {
        Ok(ApiResult::List { items, .. }) => items,
        _ => Vec::new(),
    };
    let mut out: Vec<(i64, Arc<Object>)> = items
        .into_iter()
        .filter(|r| controlled_by(r, &uid))
        .map(|r| (revision_of(r.meta().annotations.as_ref()), r))
        .filter(|(rev, _)| *rev > 0)
        .collect();
    out.sort_by_key(|(r, _)| *r);
    out
}

async fn history(k: &Kubectl, name: &str) -> i32 {
    let d = match get_deployment(k, name).await {
        Ok(d) => d,
        Err(c) => return c,
    };
    let revs = revisions(k, &d).await;
    if let Some(want) = k.flags.get("revision").and_then(|r| r.parse::<i64>().ok()) {
        let Some((_, rs)) = revs.iter().find(|(r, _)| *r == want) else {
            return k.error("unable to find the specified revision");
        };
        let Object::ReplicaSet(r) = &**rs else {
            return 1;
        };
        let tpl = r
            .spec
            .as_ref()
            .and_then(|s| s.template.clone())
            .unwrap_or_default();
        k.sys
            .out(&format!("deployment.apps/{name} with revision #{want}\n"));
        k.sys.out(&template_summary(&tpl));
        return 0;
    }
    k.sys.out(&format!(
        "deployment.apps/{name} \nREVISION  CHANGE-CAUSE\n"
    ));
    for (rev, rs) in &revs {
        let cause = rs
            .meta()
            .annotations
            .as_ref()
            .and_then(|a| a.get("kubernetes.io/change-cause"))
            .cloned()
            .unwrap_or_else(|| "<none>".into());
        k.sys.out(&format!("{:<10}{cause}\n", rev));
    }
    k.sys.out("\n");
    0
}

/// `kubectl rollout history --revision`'s pod template printout (a subset of describe).
pub(crate) fn template_summary(t: &k8s_openapi::api::core::v1::PodTemplateSpec) -> String {
    let mut out = String::from("Pod Template:\n");
    let labels = t
        .metadata
        .as_ref()
        .and_then(|m| m.labels.clone())
        .unwrap_or_default();
    let lines: Vec<String> = labels.iter().map(|(a, b)| format!("{a}={b}")).collect();
    out.push_str(&format!("  Labels:\t{}\n", lines.join("\n\t")));
    out.push_str("  Containers:\n");
    for c in t.spec.iter().flat_map(|s| s.containers.iter()) {
        out.push_str(&format!(
            "   {}:\n    Image:\t{}\n",
            c.name,
            c.image.clone().unwrap_or_default()
        ));
        let ports: Vec<String> = c
            .ports
            .iter()
            .flatten()
            .map(|p| {
                format!(
                    "{}/{}",
                    p.container_port,
                    p.protocol.clone().unwrap_or_else(|| "TCP".into())
                )
            })
            .collect();
        out.push_str(&format!(
            "    Port:\t{}\n",
            if ports.is_empty() {
                "<none>".into()
            } else {
                ports.join(", ")
            }
        ));
    }
    out.push('\n');
    crate::kubectl::tabwriter::align(&out, crate::kubectl::tabwriter::TabConfig::KUBECTL_DESCRIBE)
}

async fn undo(k: &Kubectl, name: &str) -> i32 {
    let d = match get_deployment(k, name).await {
        Ok(d) => d,
        Err(c) => return c,
    };
    if let Object::Deployment(dep) = &*d {
        if dep.spec.as_ref().and_then(|s| s.paused).unwrap_or(false) {
            return k.error(&format!("you cannot rollback a paused deployment; resume it first with 'kubectl rollout resume deployment/{name}' and try again"));
        }
    }
    let revs = revisions(k, &d).await;
    let current = revision_of(d.meta().annotations.as_ref());
    let target = match k
        .flags
        .get("to-revision")
        .and_then(|r| r.parse::<i64>().ok())
        .filter(|r| *r != 0)
    {
        Some(want) => match revs.iter().find(|(r, _)| *r == want) {
            Some(x) => x.clone(),
            None => {
                return k.error(&format!(
                    "unable to find specified revision {want} in history"
                ))
            }
        },
        None => match revs.iter().rev().find(|(r, _)| *r != current) {
            Some(x) => x.clone(),
            None => {
                return k.error(&format!(
                    "no rollout history found for deployment \"{name}\""
                ))
            }
        },
    };
    let Object::ReplicaSet(rs) = &*target.1 else {
        return 1;
    };
    let mut tpl = rs
        .spec
        .as_ref()
        .and_then(|s| s.template.clone())
        .unwrap_or_default();
    if let Some(l) = tpl.metadata.as_mut().and_then(|m| m.labels.as_mut()) {
        l.remove("pod-template-hash");
    }
    if let Object::Deployment(dep) = &*d {
        if dep
            .spec
            .as_ref()
            .is_some_and(|s| crate::controllers::util::equal_ignore_hash(&s.template, &tpl))
        {
            k.sys.out(&format!("deployment.apps/{name} skipped rollback (current template already matches revision {})\n", target.0));
            return 0;
        }
    }
    let patch = serde_json::json!([{"op": "replace", "path": "/spec/template", "value": tpl}]);
    let req = ApiRequest::new(Verb::Patch, Kind::Deployment, &k.namespace(), name)
        .with_body(Body::Patch(PatchType::Json, patch));
    match k.sys.api(req).await {
        Ok(_) => {
            k.sys.out(&format!("deployment.apps/{name} rolled back\n"));
            0
        }
        Err(s) => k.status_error(&s),
    }
}

async fn pause(k: &Kubectl, name: &str, pause: bool) -> i32 {
    let d = match get_deployment(k, name).await {
        Ok(d) => d,
        Err(c) => return c,
    };
    let paused = matches!(&*d, Object::Deployment(x) if x.spec.as_ref().and_then(|s| s.paused).unwrap_or(false));
    if paused == pause {
        let state = if pause {
            "already paused"
        } else {
            "not paused"
        };
        return k.error(&format!("deployments.apps \"{name}\" is {state}"));
    }
    let patch = serde_json::json!({"spec": {"paused": if pause { serde_json::Value::Bool(true) } else { serde_json::Value::Null }}});
    let req = ApiRequest::new(Verb::Patch, Kind::Deployment, &k.namespace(), name)
        .with_body(Body::Patch(PatchType::StrategicMerge, patch));
    match k.sys.api(req).await {
        Ok(_) => {
            k.sys.out(&format!(
                "deployment.apps/{name} {}\n",
                if pause { "paused" } else { "resumed" }
            ));
            0
        }
        Err(s) => k.status_error(&s),
    }
}
