//! What kubectl learns from the apiserver's discovery: `kubectl api-resources` (every
//! kind the simulated apiserver serves), `kubectl api-versions`, and `kubectl
//! cluster-info` (the control plane and the `kubernetes.io/cluster-service` Services).

use crate::api::{ApiRequest, ApiResult, Transport, Verb};
use crate::cluster::APISERVER_HOST;
use crate::cmd::kubectl::Kubectl;
use crate::kubectl::tabwriter::{align, TabConfig};
use crate::object::{CustomKinds, Kind, Object};
use crate::selector::LabelSelector;

/// Every group/version the apiserver serves (autoscaling/v1 besides each kind's own, and
/// the served versions of established CRDs).
fn group_versions(custom: &CustomKinds) -> Vec<String> {
    let mut gv: Vec<String> = Kind::ALL.iter().map(|k| k.info().api_version()).collect();
    gv.push("autoscaling/v1".into());
    gv.extend(custom.group_versions());
    gv.sort();
    gv.dedup();
    gv
}

/// Discovery needs the apiserver: a request that fails in transport fails the command.
async fn reachable(k: &Kubectl) -> Result<(), i32> {
    let req = ApiRequest::new(Verb::Get, Kind::Namespace, "", "default");
    match k.sys.api(req).await {
        Err(s) if s.transport != Transport::Server => Err(k.status_error(&s)),
        _ => Ok(()),
    }
}

fn verbs(kind: Kind) -> &'static str {
    match kind {
        Kind::SelfSubjectAccessReview => "[create]",
        // The custom resource handler's verbs, in the order its discovery lists them.
        Kind::Custom(_) => "[delete deletecollection get list patch create update watch]",
        _ => "[create delete deletecollection get list patch update watch]",
    }
}

/// `kubectl api-resources [--namespaced=BOOL] [--api-group=G] [-o wide|name]
/// [--no-headers] [--sort-by=name|kind]`.
pub async fn api_resources(k: Kubectl) -> i32 {
    let output = k.flags.get("output").unwrap_or("");
    if !matches!(output, "" | "wide" | "name") {
        return k.error(&format!("--output {output} is not available"));
    }
    let namespaced = match k.flags.get("namespaced") {
        None => None,
        Some("true") | Some("") => Some(true),
        Some("false") => Some(false),
        Some(v) => {
            return k.error(&format!(
                "invalid argument \"{v}\" for \"--namespaced\" flag: strconv.ParseBool: parsing \"{v}\": invalid syntax"
            ))
        }
    };
    let sort = k.flags.get("sort-by").unwrap_or("");
    if !matches!(sort, "" | "name" | "kind") {
        return k.error(&format!("--sort-by accepts only name or kind"));
    }
    if let Err(code) = reachable(&k).await {
        return code;
    }
    let group = k.flags.get("api-group");
    let mut kinds: Vec<Kind> = Kind::ALL
        .iter()
        .copied()
        .chain(k.custom.preferred())
        .filter(|kd| namespaced.is_none_or(|n| kd.info().namespaced == n))
        .filter(|kd| group.is_none_or(|g| kd.info().group == g))
        .collect();
    kinds.sort_by(|a, b| {
        let (a, b) = (a.info(), b.info());
        let key = |i: &crate::object::KindInfo| match sort {
            "name" => i.plural.to_string(),
            "kind" => i.kind.to_string(),
            _ => i.group.to_string(),
        };
        key(a).cmp(&key(b)).then(a.plural.cmp(b.plural))
    });
    if output == "name" {
        for kd in kinds {
            let i = kd.info();
            let name = if i.group.is_empty() {
                i.plural.to_string()
            } else {
                format!("{}.{}", i.plural, i.group)
            };
            k.sys.out(&format!("{name}\n"));
        }
        return 0;
    }
    let wide = output == "wide";
    let mut text = String::new();
    if !k.flags.bool("no-headers") {
        text.push_str("NAME\tSHORTNAMES\tAPIVERSION\tNAMESPACED\tKIND");
        text.push_str(if wide { "\tVERBS\tCATEGORIES\n" } else { "\n" });
    }
    for kd in kinds {
        let i = kd.info();
        text.push_str(&format!(
            "{}\t{}\t{}\t{}\t{}",
            i.plural,
            i.short_names.join(","),
            i.api_version(),
            i.namespaced,
            i.kind
        ));
        if wide {
            let cat = if crate::cmd::get::ALL.contains(&kd) {
                "all".to_string()
            } else {
                i.categories.join(",")
            };
            text.push_str(&format!("\t{}\t{cat}", verbs(kd)));
        }
        text.push('\n');
    }
    k.sys.out(&align(&text, TabConfig::KUBECTL_GET));
    0
}

/// `kubectl api-versions`.
pub async fn api_versions(k: Kubectl) -> i32 {
    if let Err(code) = reachable(&k).await {
        return code;
    }
    for gv in group_versions(&k.custom) {
        k.sys.out(&format!("{gv}\n"));
    }
    0
}

/// `kubectl cluster-info`.
pub async fn cluster_info(k: Kubectl) -> i32 {
    match k.flags.args.first().map(String::as_str) {
        Some("dump") => return crate::cmd::cluster_dump::dump(k).await,
        Some(sub) => {
            return k.error(&format!(
                "\"kubectl cluster-info {sub}\" is not available in kubeloop"
            ))
        }
        None => {}
    }
    let host = format!("https://{APISERVER_HOST}");
    let mut req = ApiRequest::new(Verb::List, Kind::Service, "kube-system", "");
    req.options.label_selector = LabelSelector::parse("kubernetes.io/cluster-service=true").ok();
    let services = match k.sys.api(req).await {
        Ok(ApiResult::List { items, .. }) => items,
        Ok(_) => Vec::new(),
        Err(s) => return k.status_error(&s),
    };
    k.sys
        .out(&format!("Kubernetes control plane is running at {host}\n"));
    for o in services {
        let Object::Service(svc) = &*o else { continue };
        let name = svc
            .metadata
            .labels
            .as_ref()
            .and_then(|l| l.get("kubernetes.io/name"))
            .cloned()
            .unwrap_or_else(|| o.name().to_string());
        let port = svc
            .spec
            .as_ref()
            .and_then(|s| s.ports.as_ref())
            .and_then(|p| p.first())
            .map(|p| p.name.clone().unwrap_or_else(|| p.port.to_string()))
            .unwrap_or_default();
        let link = if port.is_empty() {
            format!(
                "{host}/api/v1/namespaces/kube-system/services/{}/proxy",
                o.name()
            )
        } else {
            format!(
                "{host}/api/v1/namespaces/kube-system/services/{}:{port}/proxy",
                o.name()
            )
        };
        k.sys.out(&format!("{name} is running at {link}\n"));
    }
    k.sys.out(
        "\nTo further debug and diagnose cluster problems, use 'kubectl cluster-info dump'.\n",
    );
    0
}
