//! A container's environment as the kubelet builds it: `env` values, ConfigMap and Secret
//! keys, the downward API, `envFrom`, and the Service links every container gets.

use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_openapi::api::core::v1::{Container, Pod, Service};

use crate::object::Object;

fn singular(kind: &str) -> &'static str {
    match kind {
        "configmaps" => "configmap",
        _ => "secret",
    }
}

/// What the environment of a container resolves to, or the `CreateContainerConfigError`
/// message (`configmap "x" not found`, `couldn't find key k in ConfigMap ns/x`).
pub fn env(
    pod: &Pod,
    c: &Container,
    objects: &BTreeMap<String, Result<Arc<Object>, String>>,
    pod_ip: &str,
    host_ip: &str,
) -> Result<Vec<(String, String)>, String> {
    let ns = pod.metadata.namespace.as_deref().unwrap_or("default");
    let mut out: Vec<(String, String)> = Vec::new();
    let mut set = |k: String, v: String| {
        if let Some(e) = out.iter_mut().find(|(x, _)| *x == k) {
            e.1 = v;
        } else {
            out.push((k, v));
        }
    };
    let data = |kind: &str, name: &str| -> Result<Option<BTreeMap<String, String>>, String> {
        match objects.get(&format!("{kind}/{name}")) {
            Some(Ok(o)) => Ok(Some(match &**o {
                Object::ConfigMap(cm) => cm.data.clone().unwrap_or_default(),
                Object::Secret(s) => {
                    let mut m: BTreeMap<String, String> = s
                        .data
                        .iter()
                        .flatten()
                        .map(|(k, v)| (k.clone(), String::from_utf8_lossy(&v.0).into_owned()))
                        .collect();
                    m.extend(s.string_data.clone().unwrap_or_default());
                    m
                }
                _ => BTreeMap::new(),
            })),
            Some(Err(e)) if e.contains("not found") => Ok(None),
            Some(Err(e)) => Err(e.clone()),
            None => Ok(None),
        }
    };
    for e in c.env_from.iter().flatten() {
        let prefix = e.prefix.clone().unwrap_or_default();
        let (kind, name, optional) = if let Some(r) = &e.config_map_ref {
            ("configmaps", r.name.clone(), r.optional.unwrap_or(false))
        } else if let Some(r) = &e.secret_ref {
            ("secrets", r.name.clone(), r.optional.unwrap_or(false))
        } else {
            continue;
        };
        match data(kind, &name)? {
            Some(d) => d
                .into_iter()
                .for_each(|(k, v)| set(format!("{prefix}{k}"), v)),
            None if optional => {}
            None => return Err(format!("{} \"{name}\" not found", singular(kind))),
        }
    }
    for e in c.env.iter().flatten() {
        let Some(vf) = &e.value_from else {
            set(e.name.clone(), e.value.clone().unwrap_or_default());
            continue;
        };
        let (kind, cls, r_name, key, optional) = if let Some(r) = &vf.config_map_key_ref {
            (
                "configmaps",
                "ConfigMap",
                r.name.clone(),
                r.key.clone(),
                r.optional.unwrap_or(false),
            )
        } else if let Some(r) = &vf.secret_key_ref {
            (
                "secrets",
                "Secret",
                r.name.clone(),
                r.key.clone(),
                r.optional.unwrap_or(false),
            )
        } else if let Some(f) = &vf.field_ref {
            let v = match f.field_path.as_str() {
                "metadata.name" => pod.metadata.name.clone().unwrap_or_default(),
                "metadata.namespace" => ns.to_string(),
                "metadata.uid" => pod.metadata.uid.clone().unwrap_or_default(),
                "spec.nodeName" => pod
                    .spec
                    .as_ref()
                    .and_then(|s| s.node_name.clone())
                    .unwrap_or_default(),
                "spec.serviceAccountName" => pod
                    .spec
                    .as_ref()
                    .and_then(|s| s.service_account_name.clone())
                    .unwrap_or_default(),
                "status.podIP" | "status.podIPs" => pod_ip.to_string(),
                "status.hostIP" | "status.hostIPs" => host_ip.to_string(),
                p => {
                    let k = p
                        .trim_start_matches("metadata.labels['")
                        .trim_start_matches("metadata.annotations['")
                        .trim_end_matches("']");
                    let labels = pod.metadata.labels.clone().unwrap_or_default();
                    let ann = pod.metadata.annotations.clone().unwrap_or_default();
                    labels.get(k).or(ann.get(k)).cloned().unwrap_or_default()
                }
            };
            set(e.name.clone(), v);
            continue;
        } else {
            set(e.name.clone(), String::new());
            continue;
        };
        match data(kind, &r_name)? {
            Some(d) => match d.get(&key) {
                Some(v) => set(e.name.clone(), v.clone()),
                None if optional => {}
                None => return Err(format!("couldn't find key {key} in {cls} {ns}/{r_name}")),
            },
            None if optional => {}
            None => return Err(format!("{} \"{r_name}\" not found", singular(kind))),
        }
    }
    Ok(out)
}

/// The Service links every container gets (`enableServiceLinks`): the `kubernetes`
/// Service's variables.
pub fn service_links() -> Vec<(String, String)> {
    let ip = crate::cluster::KUBERNETES_SERVICE_IP;
    [
        ("KUBERNETES_SERVICE_PORT_HTTPS", "443".to_string()),
        ("KUBERNETES_SERVICE_PORT", "443".to_string()),
        ("KUBERNETES_PORT_443_TCP", format!("tcp://{ip}:443")),
        ("KUBERNETES_PORT_443_TCP_PROTO", "tcp".to_string()),
        ("KUBERNETES_PORT_443_TCP_ADDR", ip.to_string()),
        ("KUBERNETES_SERVICE_HOST", ip.to_string()),
        ("KUBERNETES_PORT", format!("tcp://{ip}:443")),
        ("KUBERNETES_PORT_443_TCP_PORT", "443".to_string()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect()
}

/// `makeEnvVariableName`: upper case, dashes to underscores.
fn env_name(s: &str) -> String {
    s.to_uppercase().replace('-', "_")
}

/// `envvars.FromServices`: for each Service with a cluster IP, `<NAME>_SERVICE_HOST`,
/// `<NAME>_SERVICE_PORT` (the first port), `<NAME>_SERVICE_PORT_<PORTNAME>` for named
/// ports, and the Docker-link variables `<NAME>_PORT`, `<NAME>_PORT_<port>_<PROTO>` with
/// its `_PROTO`, `_PORT` and `_ADDR`.
pub fn from_services(services: &[&Service]) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for svc in services {
        let spec = svc.spec.clone().unwrap_or_default();
        let ip = spec.cluster_ip.clone().unwrap_or_default();
        let ports = spec.ports.clone().unwrap_or_default();
        if ip.is_empty() || ip == "None" || ports.is_empty() {
            continue;
        }
        let prefix = env_name(svc.metadata.name.as_deref().unwrap_or(""));
        out.push((format!("{prefix}_SERVICE_HOST"), ip.clone()));
        out.push((format!("{prefix}_SERVICE_PORT"), ports[0].port.to_string()));
        for p in ports
            .iter()
            .filter(|p| p.name.as_deref().is_some_and(|n| !n.is_empty()))
        {
            let n = env_name(p.name.as_deref().unwrap_or(""));
            out.push((format!("{prefix}_SERVICE_PORT_{n}"), p.port.to_string()));
        }
        for (i, p) in ports.iter().enumerate() {
            let proto = p.protocol.clone().unwrap_or_else(|| "TCP".into());
            let lower = proto.to_lowercase();
            let url = format!("{lower}://{ip}:{}", p.port);
            if i == 0 {
                out.push((format!("{prefix}_PORT"), url.clone()));
            }
            let pp = format!("{prefix}_PORT_{}_{}", p.port, proto.to_uppercase());
            out.push((pp.clone(), url));
            out.push((format!("{pp}_PROTO"), lower));
            out.push((format!("{pp}_PORT"), p.port.to_string()));
            out.push((format!("{pp}_ADDR"), ip.clone()));
        }
    }
    out
}

/// `getServiceEnvVarMap`: the `kubernetes` Service of the default namespace always, and
/// with `enableServiceLinks` every Service of the pod's namespace (a Service of the
/// pod's namespace wins over the master Service of the same name).
pub fn service_env(pod: &Pod, services: &[&Service]) -> Vec<(String, String)> {
    let ns = pod.metadata.namespace.as_deref().unwrap_or("default");
    let links = pod
        .spec
        .as_ref()
        .and_then(|s| s.enable_service_links)
        .unwrap_or(true);
    let mut chosen: BTreeMap<String, &Service> = BTreeMap::new();
    for svc in services {
        let name = svc.metadata.name.clone().unwrap_or_default();
        let svc_ns = svc.metadata.namespace.as_deref().unwrap_or("");
        if svc_ns == "default" && name == "kubernetes" {
            chosen.entry(name).or_insert(svc);
        } else if svc_ns == ns && links {
            chosen.insert(name, svc);
        }
    }
    let list: Vec<&Service> = chosen.into_values().collect();
    from_services(&list)
}

#[cfg(test)]
mod service_env_tests {
    use super::*;
    use serde_json::json;

    fn svc(ns: &str, name: &str, ports: serde_json::Value) -> Service {
        serde_json::from_value(json!({
            "metadata": {"name": name, "namespace": ns},
            "spec": {"clusterIP": "10.96.0.20", "ports": ports}
        }))
        .unwrap()
    }

    #[test]
    fn a_service_gives_the_docker_link_variables_of_upstream() {
        let s = svc(
            "default",
            "my-svc",
            json!([{"name": "http", "port": 80, "protocol": "TCP"}, {"name": "dns", "port": 53, "protocol": "UDP"}]),
        );
        let env: BTreeMap<String, String> = from_services(&[&s]).into_iter().collect();
        let want = [
            ("MY_SVC_SERVICE_HOST", "10.96.0.20"),
            ("MY_SVC_SERVICE_PORT", "80"),
            ("MY_SVC_SERVICE_PORT_HTTP", "80"),
            ("MY_SVC_SERVICE_PORT_DNS", "53"),
            ("MY_SVC_PORT", "tcp://10.96.0.20:80"),
            ("MY_SVC_PORT_80_TCP", "tcp://10.96.0.20:80"),
            ("MY_SVC_PORT_80_TCP_PROTO", "tcp"),
            ("MY_SVC_PORT_80_TCP_PORT", "80"),
            ("MY_SVC_PORT_80_TCP_ADDR", "10.96.0.20"),
            ("MY_SVC_PORT_53_UDP", "udp://10.96.0.20:53"),
            ("MY_SVC_PORT_53_UDP_PROTO", "udp"),
            ("MY_SVC_PORT_53_UDP_PORT", "53"),
            ("MY_SVC_PORT_53_UDP_ADDR", "10.96.0.20"),
        ];
        let want: BTreeMap<String, String> = want
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        assert_eq!(env, want);
    }

    #[test]
    fn only_the_pods_namespace_and_the_kubernetes_service_and_headless_ones_are_skipped() {
        let kube = svc(
            "default",
            "kubernetes",
            json!([{"name": "https", "port": 443}]),
        );
        let other = svc("other", "db", json!([{"port": 5432}]));
        let mine = svc("default", "web", json!([{"port": 80}]));
        let mut headless = svc("default", "peers", json!([{"port": 80}]));
        headless.spec.as_mut().unwrap().cluster_ip = Some("None".into());
        let pod: Pod = serde_json::from_value(
            json!({"metadata": {"namespace": "default"}, "spec": {"containers": []}}),
        )
        .unwrap();
        let names: Vec<String> = service_env(&pod, &[&kube, &other, &mine, &headless])
            .into_iter()
            .map(|(k, _)| k)
            .filter(|k| k.ends_with("_SERVICE_HOST"))
            .collect();
        assert_eq!(names, ["KUBERNETES_SERVICE_HOST", "WEB_SERVICE_HOST"]);
        // enableServiceLinks: false keeps only the master Service.
        let mut no_links = pod.clone();
        no_links.spec.as_mut().unwrap().enable_service_links = Some(false);
        let names: Vec<String> = service_env(&no_links, &[&kube, &mine])
            .into_iter()
            .map(|(k, _)| k)
            .filter(|k| k.ends_with("_SERVICE_HOST"))
            .collect();
        assert_eq!(names, ["KUBERNETES_SERVICE_HOST"]);
    }
}
