//! `kubectl rollout status`: watches the object and prints upstream's status messages.

use k8s_openapi::api::apps::v1::Deployment;

use crate::api::{ApiRequest, ApiResult, Verb};
use crate::cmd::kubectl::{resolve_kind, Kubectl};
use crate::controllers::deployment_util::{get_condition, revision_of};
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
    let kind = match resolve_kind(&t) {
        Ok(kd) => kd,
        Err(e) => return k.error(&e),
    };
    match sub.as_str() {
        "status" => status(&k, kind, &name).await,
        other => k.error(&format!(
            "\"kubectl rollout {other}\" is not available in kubeloop yet"
        )),
    }
}

async fn status(k: &Kubectl, kind: Kind, name: &str) -> i32 {
    if kind != Kind::Deployment {
        return k.error(&format!(
            "no status viewer has been implemented for {}",
            kind.info().kind
        ));
    }
    let ns = k.namespace();
    let revision = k.flags.get("revision").and_then(|r| r.parse().ok());
    let watch = k.flags.get("watch").is_none_or(|w| w != "false");
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
    while let Some(ev) = k.sys.next_event(id).await {
        let Ok((_, o)) = ev.event else { break };
        let Object::Deployment(d) = &*o else { continue };
        match deployment_status(d, name, revision) {
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
