//! `kubectl create job NAME --image=IMAGE [-- COMMAND…]` and
//! `kubectl create job NAME --from=cronjob/CRONJOB` (`create_job.go`).

use serde_json::{json, Value};

use crate::api::{ApiRequest, ApiResult, Verb};
use crate::cmd::kubectl::Kubectl;
use crate::object::{Kind, Object};

/// The Job to create, as kubectl builds it.
pub async fn job(k: &Kubectl, args: &[String]) -> Result<(Kind, Value), i32> {
    let name = crate::cmd::create_more::name_before_dash(k, "job", args)?;
    let image = k.flags.get("image").map(str::to_string);
    let from = k.flags.get("from").map(str::to_string);
    match (image, from) {
        (None, None) => Err(k.error("either --image or --from must be specified")),
        (Some(_), Some(_)) => Err(k.error("--image or --from can't be specified with each other")),
        (Some(image), None) => {
            let mut c = json!({"name": name, "image": image, "resources": {}});
            if args.len() > 1 {
                c["command"] = json!(args[1..]);
            }
            Ok((
                Kind::Job,
                json!({
                    "metadata": {"name": name},
                    "spec": {"template": {"metadata": {}, "spec": {
                        "containers": [c], "restartPolicy": "Never"
                    }}}
                }),
            ))
        }
        (None, Some(from)) => {
            let (t, cj_name) = from.split_once('/').unwrap_or(("", from.as_str()));
            let kind = crate::cmd::kubectl::resolve_kind(t, &k.custom).map_err(|e| k.error(&e))?;
            let req = ApiRequest::new(Verb::Get, kind, &k.namespace(), cj_name);
            let obj = match k.sys.api(req).await {
                Ok(ApiResult::Object(o)) => o,
                Ok(_) => return Err(1),
                Err(s) => return Err(k.status_error(&s)),
            };
            let Object::CronJob(cj) = &*obj else {
                return Err(k.error(&format!("from must be an existing cronjob: {from}")));
            };
            let spec = cj.spec.clone().unwrap_or_default();
            let tm = spec.job_template.metadata.clone().unwrap_or_default();
            let mut annotations = serde_json::Map::new();
            annotations.insert("cronjob.kubernetes.io/instantiate".into(), json!("manual"));
            for (a, v) in tm.annotations.iter().flatten() {
                annotations.insert(a.clone(), json!(v));
            }
            let mut meta = json!({
                "name": name,
                "annotations": annotations,
                "ownerReferences": [{
                    "apiVersion": "batch/v1", "kind": "CronJob", "name": obj.name(),
                    "uid": obj.meta().uid.clone().unwrap_or_default(), "controller": true
                }]
            });
            if let Some(l) = tm.labels {
                meta["labels"] = json!(l);
            }
            Ok((
                Kind::Job,
                json!({"metadata": meta, "spec": serde_json::to_value(spec.job_template.spec.unwrap_or_default()).unwrap_or_default()}),
            ))
        }
    }
}
