//! `kubectl expose` (a Service from a workload's selector and ports) and `kubectl scale`.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{Service, ServicePort, ServiceSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use crate::api::{ApiRequest, ApiResult, Body, Subresource, Verb};
use crate::cmd::kubectl::{kind_name, resolve_kind, Kubectl};
use crate::object::{Kind, Object};

fn target(k: &Kubectl) -> Result<(Kind, String), String> {
    let args = &k.flags.args;
    let (t, n) = match args.first().and_then(|a| a.split_once('/')) {
        Some((t, n)) => (t.to_string(), n.to_string()),
        None => match (args.first(), args.get(1)) {
            (Some(t), Some(n)) => (t.clone(), n.clone()),
            _ => {
                return Err(
                    "You must provide one or more resources by argument or filename.".into(),
                )
            }
        },
    };
    Ok((resolve_kind(&t, &k.custom)?, n))
}

fn int_or_string(s: &str) -> IntOrString {
    match s.parse::<i32>() {
        Ok(i) => IntOrString::Int(i),
        Err(_) => IntOrString::String(s.to_string()),
    }
}

/// The selector and container ports `expose` introspects from an object.
fn introspect(o: &Object) -> Result<(BTreeMap<String, String>, Vec<(i32, String)>), String> {
    let (sel, tpl) = match o {
        Object::Deployment(d) => {
            let spec = d.spec.clone().unwrap_or_default();
            (spec.selector, Some(spec.template))
        }
        Object::ReplicaSet(r) => {
            let spec = r.spec.clone().unwrap_or_default();
            (spec.selector, spec.template)
        }
        Object::Pod(p) => {
            let labels = p.metadata.labels.clone().unwrap_or_default();
            let ports = container_ports(p.spec.as_ref());
            return Ok((labels, ports));
        }
        _ => return Err(format!("cannot expose a {}", o.kind())),
    };
    if sel
        .match_expressions
        .as_ref()
        .is_some_and(|e| !e.is_empty())
    {
        return Err(format!("couldn't retrieve selectors via --selector flag or introspection: the {} has a selector with matchExpressions", o.kind()));
    }
    let ports = container_ports(tpl.as_ref().and_then(|t| t.spec.as_ref()));
    Ok((sel.match_labels.unwrap_or_default(), ports))
}

fn container_ports(spec: Option<&k8s_openapi::api::core::v1::PodSpec>) -> Vec<(i32, String)> {
    spec.into_iter()
        .flat_map(|s| s.containers.iter())
        .flat_map(|c| c.ports.iter().flatten())
        .map(|p| {
            (
                p.container_port,
                p.protocol.clone().unwrap_or_else(|| "TCP".into()),
            )
        })
        .collect()
}

/// `kubectl expose TYPE NAME --port=… [--target-port] [--type] [--name]`.
pub async fn expose(k: Kubectl) -> i32 {
    let emit = match crate::cmd::generate::options(&k) {
        Ok(e) => e,
        Err(code) => return code,
    };
    let (kind, name) = match target(&k) {
        Ok(t) => t,
        Err(e) => return k.error(&e),
    };
    let ns = k.namespace();
    let obj = match k
        .sys
        .api(ApiRequest::new(Verb::Get, kind, &ns, &name))
        .await
    {
        Ok(ApiResult::Object(o)) => o,
        Ok(_) => return 1,
        Err(s) => return k.status_error(&s),
    };
    let (mut selector, introspected) = match introspect(&obj) {
        Ok(x) => x,
        Err(e) => return k.error(&e),
    };
    if let Some(s) = k.flags.get("selector") {
        selector = s
            .split(',')
            .filter_map(|kv| kv.split_once('='))
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect();
    }
    let protocol = k.flags.get("protocol").map(str::to_string);
    let ports: Vec<(i32, String)> = match k.flags.get("port") {
        Some(p) => match p.parse::<i32>() {
            Ok(p) => vec![(p, protocol.clone().unwrap_or_else(|| "TCP".into()))],
            Err(_) => return k.error(&format!("invalid argument \"{p}\" for \"--port\" flag: strconv.ParseInt: parsing \"{p}\": invalid syntax")),
        },
        None => introspected,
    };
    if ports.is_empty() {
        return k.error("couldn't find port via --port flag or introspection\nSee 'kubectl expose -h' for help and examples");
    }
    let named = ports.len() > 1;
    let sports: Vec<ServicePort> = ports
        .iter()
        .enumerate()
        .map(|(i, (p, proto))| ServicePort {
            name: named.then(|| format!("port-{}", i + 1)),
            port: *p,
            protocol: Some(proto.clone()),
            target_port: Some(
                k.flags
                    .get("target-port")
                    .map_or(IntOrString::Int(*p), int_or_string),
            ),
            ..ServicePort::default()
        })
        .collect();
    let svc_name = k.flags.get("name").unwrap_or(&name).to_string();
    let svc = Service {
        metadata: ObjectMeta {
            name: Some(svc_name.clone()),
            namespace: Some(ns.clone()),
            labels: obj.meta().labels.clone(),
            ..ObjectMeta::default()
        },
        spec: Some(ServiceSpec {
            selector: Some(selector),
            ports: Some(sports),
            type_: k.flags.get("type").map(str::to_string),
            cluster_ip: k.flags.get("cluster-ip").map(str::to_string),
            session_affinity: k.flags.get("session-affinity").map(str::to_string),
            ..ServiceSpec::default()
        }),
        status: None,
    };
    // The generator's object: the namespace only with -n (generate::typed adds it).
    let mut value = serde_json::to_value(&svc).unwrap_or_default();
    if let Some(m) = value
        .get_mut("metadata")
        .and_then(serde_json::Value::as_object_mut)
    {
        m.remove("namespace");
    }
    match crate::cmd::generate::send_as(&k, &emit, Kind::Service, value, "exposed").await {
        Ok(_) => 0,
        Err(code) => code,
    }
}

/// `kubectl scale TYPE NAME|-l SELECTOR|--all --replicas=N`.
pub async fn scale(k: Kubectl) -> i32 {
    let Some(n) = k.flags.get("replicas") else {
        return k.error("required flag(s) \"replicas\" not set");
    };
    let Ok(n) = n.parse::<i32>() else {
        return k.error(&format!("invalid argument \"{n}\" for \"--replicas\" flag: strconv.ParseInt: parsing \"{n}\": invalid syntax"));
    };
    if n < 0 {
        return k.error(
            "The --replicas=COUNT flag is required, and COUNT must be greater than or equal to 0",
        );
    }
    let (kind, names) = match k.flags.args.first() {
        Some(first) if crate::cmd::select::selects(&k) && !first.contains('/') => {
            let kind = match resolve_kind(first, &k.custom) {
                Ok(kind) => kind,
                Err(e) => return k.error(&e),
            };
            match crate::cmd::select::names(&k, kind).await {
                Ok(names) => (kind, names),
                Err(code) => return code,
            }
        }
        _ => match target(&k) {
            Ok((kind, name)) => (kind, vec![name]),
            Err(e) => return k.error(&e),
        },
    };
    if !matches!(
        kind,
        Kind::Deployment | Kind::ReplicaSet | Kind::StatefulSet | Kind::Custom(_)
    ) {
        return k.error(&format!(
            "no scaler has been implemented for {{\"{}\" \"{}\"}}",
            kind.info().group,
            kind.info().kind
        ));
    }
    let ns = k.namespace();
    if names.is_empty() {
        return k.error("no objects passed to scale");
    }
    for name in names {
        let req = ApiRequest::new(Verb::Patch, kind, &ns, &name)
            .with_subresource(Subresource::Scale)
            .with_body(Body::Scale(n));
        match k.sys.api(req).await {
            Ok(_) => k.sys.out(&format!("{} scaled\n", kind_name(kind, &name))),
            Err(s) => return k.status_error(&s),
        }
    }
    0
}
