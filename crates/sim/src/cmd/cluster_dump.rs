//! `kubectl cluster-info dump [-A|--namespaces=a,b]` (`clusterinfo_dump.go`): the nodes,
//! then for each namespace (kube-system and the context's, unless told) its events,
//! replication controllers, services, daemon sets, deployments, replica sets and pods as
//! JSON lists, then every container's log between `==== START logs …` and
//! `==== END logs …` lines. kubectl marshals the typed lists in Go's field order;
//! kubeloop prints their keys sorted, as `-o json` prints server objects.

use serde_json::{json, Value};

use crate::api::{ApiRequest, ApiResult, Verb};
use crate::cmd::kubectl::Kubectl;
use crate::kubectl::output::{object_value, to_json};
use crate::object::{Kind, Object};

/// The kinds dumped per namespace, with the list kind kubectl prints for each.
const PER_NAMESPACE: &[(Option<Kind>, &str, &str)] = &[
    (Some(Kind::Event), "EventList", "v1"),
    (None, "ReplicationControllerList", "v1"),
    (Some(Kind::Service), "ServiceList", "v1"),
    (Some(Kind::DaemonSet), "DaemonSetList", "apps/v1"),
    (Some(Kind::Deployment), "DeploymentList", "apps/v1"),
    (Some(Kind::ReplicaSet), "ReplicaSetList", "apps/v1"),
    (Some(Kind::Pod), "PodList", "v1"),
];

/// Lists `kind` in `ns` as a typed list value; Err: kubectl already printed why.
async fn list(
    k: &Kubectl,
    kind: Option<Kind>,
    ns: &str,
    list_kind: &str,
    api_version: &str,
) -> Result<(Value, Vec<std::sync::Arc<Object>>), i32> {
    let (items, rv) = match kind {
        None => (Vec::new(), None),
        Some(kind) => match k.sys.api(ApiRequest::new(Verb::List, kind, ns, "")).await {
            Ok(ApiResult::List {
                items,
                resource_version,
            }) => (items, Some(resource_version)),
            Ok(_) => (Vec::new(), None),
            Err(s) => return Err(k.status_error(&s)),
        },
    };
    let mut metadata = serde_json::Map::new();
    if let Some(rv) = rv {
        metadata.insert("resourceVersion".into(), json!(rv.to_string()));
    }
    let values: Vec<Value> = items.iter().map(|o| object_value(o)).collect();
    let v = json!({
        "kind": list_kind,
        "apiVersion": api_version,
        "metadata": metadata,
        "items": values,
    });
    Ok((v, items))
}

/// The namespaces to dump.
async fn namespaces(k: &Kubectl) -> Result<Vec<String>, i32> {
    if k.flags.bool("all-namespaces") {
        let (_, items) = list(k, Some(Kind::Namespace), "", "NamespaceList", "v1").await?;
        return Ok(items.iter().map(|o| o.name().to_string()).collect());
    }
    if let Some(list) = k.flags.get("namespaces").filter(|l| !l.is_empty()) {
        return Ok(list.split(',').map(str::to_string).collect());
    }
    let mut out = vec!["kube-system".to_string()];
    let own = k.namespace();
    if own != "kube-system" {
        out.push(own);
    }
    Ok(out)
}

/// Runs `kubectl cluster-info dump`.
pub async fn dump(k: Kubectl) -> i32 {
    if let Some(dir) = k
        .flags
        .get("output-directory")
        .filter(|d| !d.is_empty() && *d != "-")
    {
        return k.error(&format!(
            "--output-directory={dir}: kubeloop's terminal has no directories; dump to stdout"
        ));
    }
    let (nodes, _) = match list(&k, Some(Kind::Node), "", "NodeList", "v1").await {
        Ok(x) => x,
        Err(code) => return code,
    };
    k.sys.out(&to_json(&nodes));
    let namespaces = match namespaces(&k).await {
        Ok(n) => n,
        Err(code) => return code,
    };
    for ns in namespaces {
        let mut pods = Vec::new();
        for (kind, list_kind, api_version) in PER_NAMESPACE {
            match list(&k, *kind, &ns, list_kind, api_version).await {
                Ok((v, items)) => {
                    k.sys.out(&to_json(&v));
                    if *kind == Some(Kind::Pod) {
                        pods = items;
                    }
                }
                Err(code) => return code,
            }
        }
        for pod in pods {
            dump_logs(&k, &pod).await;
        }
    }
    0
}

/// Each container's log of one pod, between kubectl's START and END lines.
async fn dump_logs(k: &Kubectl, pod: &Object) {
    let Object::Pod(p) = pod else {
        return;
    };
    let (ns, name) = (pod.namespace().to_string(), pod.name().to_string());
    let containers = p.spec.iter().flat_map(|s| {
        s.init_containers
            .iter()
            .flatten()
            .chain(&s.containers)
            .map(|c| c.name.clone())
    });
    for c in containers.collect::<Vec<_>>() {
        k.sys.out(&format!(
            "==== START logs for container {c} of pod {ns}/{name} ====\n"
        ));
        let text = crate::cmd::logs::container_log(k, p, &c).await;
        match text {
            Ok(t) => k.sys.out(&t),
            Err(e) => k.sys.out(&format!("Request log error: {e}\n")),
        }
        k.sys.out(&format!(
            "==== END logs for container {c} of pod {ns}/{name} ====\n"
        ));
    }
}
