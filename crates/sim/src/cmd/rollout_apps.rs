//! `kubectl rollout` for StatefulSets and DaemonSets: the status viewers of
//! `rollout_status.go`, and history, undo and restart through ControllerRevisions
//! (`history.go`, `rollback.go`).

use std::sync::Arc;

use k8s_openapi::api::apps::v1::{ControllerRevision, DaemonSet, StatefulSet};

use crate::api::{ApiRequest, ApiResult, Body, PatchType, Verb};
use crate::cmd::kubectl::Kubectl;
use crate::controllers::history::template_of;
use crate::controllers::util::controlled_by;
use crate::object::{Kind, Object};

const ONLY_ROLLING: &str = "rollout status is only available for RollingUpdate strategy type";

/// `StatefulSetStatusViewer.Status`: the line, and whether the rollout is done.
pub fn statefulset_status(s: &StatefulSet) -> Result<(String, bool), String> {
    let spec = s.spec.clone().unwrap_or_default();
    let strategy = spec.update_strategy.clone().unwrap_or_default();
    if strategy.type_.as_deref().unwrap_or("RollingUpdate") != "RollingUpdate" {
        return Err(ONLY_ROLLING.into());
    }
    let st = s.status.clone().unwrap_or_default();
    let observed = st.observed_generation.unwrap_or(0);
    if observed == 0 || s.metadata.generation.unwrap_or(0) > observed {
        return Ok((
            "Waiting for statefulset spec update to be observed...\n".into(),
            false,
        ));
    }
    let ready = st.ready_replicas.unwrap_or(0);
    let updated = st.updated_replicas.unwrap_or(0);
    if let Some(r) = spec.replicas {
        if ready < r {
            return Ok((
                format!("Waiting for {} pods to be ready...\n", r - ready),
                false,
            ));
        }
    }
    if let Some(ru) = strategy.rolling_update.as_ref() {
        if let (Some(r), Some(p)) = (spec.replicas, ru.partition) {
            if updated < r - p {
                return Ok((format!("Waiting for partitioned roll out to finish: {updated} out of {} new pods have been updated...\n", r - p), false));
            }
        }
        return Ok((
            format!("partitioned roll out complete: {updated} new pods have been updated...\n"),
            true,
        ));
    }
    let update = st.update_revision.clone().unwrap_or_default();
    if st.update_revision != st.current_revision {
        return Ok((format!("waiting for statefulset rolling update to complete {updated} pods at revision {update}...\n"), false));
    }
    Ok((
        format!(
            "statefulset rolling update complete {} pods at revision {}...\n",
            st.current_replicas.unwrap_or(0),
            st.current_revision.unwrap_or_default()
        ),
        true,
    ))
}

/// `DaemonSetStatusViewer.Status`.
pub fn daemonset_status(d: &DaemonSet, name: &str) -> Result<(String, bool), String> {
    let strategy = d
        .spec
        .as_ref()
        .and_then(|s| s.update_strategy.clone())
        .unwrap_or_default();
    if strategy.type_.as_deref().unwrap_or("RollingUpdate") != "RollingUpdate" {
        return Err(ONLY_ROLLING.into());
    }
    let st = d.status.clone().unwrap_or_default();
    if d.metadata.generation.unwrap_or(0) <= st.observed_generation.unwrap_or(0) {
        let updated = st.updated_number_scheduled.unwrap_or(0);
        let desired = st.desired_number_scheduled;
        if updated < desired {
            return Ok((format!("Waiting for daemon set \"{name}\" rollout to finish: {updated} out of {desired} new pods have been updated...\n"), false));
        }
        let available = st.number_available.unwrap_or(0);
        if available < desired {
            return Ok((format!("Waiting for daemon set \"{name}\" rollout to finish: {available} of {desired} updated pods are available...\n"), false));
        }
        return Ok((
            format!("daemon set \"{name}\" successfully rolled out\n"),
            true,
        ));
    }
    Ok((
        "Waiting for daemon set spec update to be observed...\n".into(),
        false,
    ))
}

/// The status line of a StatefulSet or DaemonSet watch event.
pub fn status_line(o: &Object, name: &str) -> Option<Result<(String, bool), String>> {
    match o {
        Object::StatefulSet(s) => Some(statefulset_status(s)),
        Object::DaemonSet(d) => Some(daemonset_status(d, name)),
        _ => None,
    }
}

/// `<resource>.apps/<name>`.
fn resource_name(kind: Kind, name: &str) -> String {
    format!("{}.{}/{name}", kind.info().singular, kind.info().group)
}

async fn get(k: &Kubectl, kind: Kind, name: &str) -> Result<Arc<Object>, i32> {
    match k
        .sys
        .api(ApiRequest::new(Verb::Get, kind, &k.namespace(), name))
        .await
    {
        Ok(ApiResult::Object(o)) => Ok(o),
        Ok(_) => Err(1),
        Err(s) => Err(k.status_error(&s)),
    }
}

/// The object's ControllerRevisions, by revision number.
async fn revisions(k: &Kubectl, owner: &Object) -> Vec<ControllerRevision> {
    let uid = owner.meta().uid.clone().unwrap_or_default();
    let items = match k
        .sys
        .api(ApiRequest::new(
            Verb::List,
            Kind::ControllerRevision,
            &k.namespace(),
            "",
        ))
        .await
    {
        Ok(ApiResult::List { items, .. }) => items,
        _ => Vec::new(),
    };
    let mut out: Vec<ControllerRevision> = items
        .into_iter()
        .filter(|r| controlled_by(r, &uid))
        .filter_map(|r| match &*r {
            Object::ControllerRevision(c) => Some((**c).clone()),
            _ => None,
        })
        .collect();
    out.sort_by_key(|r| r.revision);
    out
}

/// `kubectl rollout history` for a StatefulSet or DaemonSet.
pub async fn history(k: &Kubectl, kind: Kind, name: &str) -> i32 {
    let owner = match get(k, kind, name).await {
        Ok(o) => o,
        Err(c) => return c,
    };
    let revs = revisions(k, &owner).await;
    if let Some(want) = k.flags.get("revision").and_then(|r| r.parse::<i64>().ok()) {
        let Some(r) = revs.iter().find(|r| r.revision == want) else {
            return k.error(&format!("unable to find the specified revision"));
        };
        let tpl = template_of(r).unwrap_or_default();
        k.sys.out(&format!(
            "{} with revision #{want}\n",
            resource_name(kind, name)
        ));
        k.sys.out(&crate::cmd::rollout::template_summary(&tpl));
        return 0;
    }
    if revs.is_empty() {
        k.sys.out(&format!(
            "No rollout history found in {} \"{name}\"\n",
            kind.info().singular
        ));
        return 0;
    }
    k.sys.out(&format!(
        "{} \nREVISION  CHANGE-CAUSE\n",
        resource_name(kind, name)
    ));
    for r in &revs {
        let cause = r
            .metadata
            .annotations
            .as_ref()
            .and_then(|a| a.get("kubernetes.io/change-cause"))
            .cloned()
            .unwrap_or_else(|| "<none>".into());
        k.sys.out(&format!("{:<10}{cause}\n", r.revision));
    }
    k.sys.out("\n");
    0
}

/// `kubectl rollout undo` (`StatefulSetRollbacker` / `DaemonSetRollbacker`).
pub async fn undo(k: &Kubectl, kind: Kind, name: &str) -> i32 {
    let owner = match get(k, kind, name).await {
        Ok(o) => o,
        Err(c) => return c,
    };
    let revs = revisions(k, &owner).await;
    let to = k
        .flags
        .get("to-revision")
        .and_then(|r| r.parse::<i64>().ok())
        .unwrap_or(0);
    let target = if to == 0 {
        if revs.len() < 2 {
            return k.error("no last revision to roll back to");
        }
        revs[revs.len() - 2].clone()
    } else {
        match revs.iter().find(|r| r.revision == to) {
            Some(r) => r.clone(),
            None => {
                return k.error(&format!(
                    "unable to find specified revision {to} in history"
                ))
            }
        }
    };
    let Some(tpl) = template_of(&target) else {
        return k.error("unable to find the specified revision");
    };
    let current = match &*owner {
        Object::StatefulSet(s) => s.spec.as_ref().map(|s| s.template.clone()),
        Object::DaemonSet(d) => d.spec.as_ref().map(|s| s.template.clone()),
        _ => None,
    };
    if current.as_ref() == Some(&tpl) {
        k.sys.out(&format!(
            "{} skipped rollback (current template already matches revision {})\n",
            resource_name(kind, name),
            target.revision
        ));
        return 0;
    }
    let patch = serde_json::json!([{"op": "replace", "path": "/spec/template", "value": tpl}]);
    let req = ApiRequest::new(Verb::Patch, kind, &k.namespace(), name)
        .with_body(Body::Patch(PatchType::Json, patch));
    match k.sys.api(req).await {
        Ok(_) => {
            k.sys
                .out(&format!("{} rolled back\n", resource_name(kind, name)));
            0
        }
        Err(s) => k.status_error(&s),
    }
}

/// `kubectl rollout restart` (Deployments too): the restartedAt annotation on the template.
pub async fn restart(k: &Kubectl, kind: Kind, name: &str) -> i32 {
    if let Err(c) = get(k, kind, name).await {
        return c;
    }
    let at = serde_json::to_value(crate::time::k8s_time(k.sys.now())).unwrap_or_default();
    let patch = serde_json::json!({"spec": {"template": {"metadata": {"annotations": {"kubectl.kubernetes.io/restartedAt": at}}}}});
    let req = ApiRequest::new(Verb::Patch, kind, &k.namespace(), name)
        .with_body(Body::Patch(PatchType::StrategicMerge, patch));
    match k.sys.api(req).await {
        Ok(_) => {
            k.sys
                .out(&format!("{} restarted\n", resource_name(kind, name)));
            0
        }
        Err(s) => k.status_error(&s),
    }
}
