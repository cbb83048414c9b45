//! `kubectl create TYPE NAME [flags]`: the imperative generators (namespace,
//! serviceaccount, configmap, secret generic, deployment, service, role, clusterrole,
//! rolebinding, clusterrolebinding, priorityclass) with kubectl's objects, messages and
//! output.

use std::collections::BTreeMap;

use base64::Engine;
use serde_json::{json, Map, Value};

use crate::cmd::kubectl::Kubectl;
use crate::object::Kind;

/// The generators `kubectl create` has, with their aliases.
pub const GENERATORS: &[&str] = &[
    "namespace",
    "ns",
    "serviceaccount",
    "sa",
    "configmap",
    "cm",
    "secret",
    "deployment",
    "deploy",
    "service",
    "svc",
    "role",
    "clusterrole",
    "rolebinding",
    "clusterrolebinding",
    "priorityclass",
    "pc",
    "job",
    "cronjob",
    "cj",
    "quota",
    "resourcequota",
    "poddisruptionbudget",
    "pdb",
    "ingress",
    "ing",
];

/// Verbs `kubectl create role` accepts without a warning (`validResourceVerbs`).
const VALID_VERBS: &[&str] = &[
    "*",
    "get",
    "delete",
    "list",
    "create",
    "update",
    "patch",
    "watch",
    "proxy",
    "deletecollection",
    "use",
    "bind",
    "escalate",
    "impersonate",
];

/// Whether `--user` is this generator's own flag (a binding subject) rather than the
/// kubeconfig user.
pub fn owns_user_flag(args: &[String]) -> bool {
    args.iter()
        .any(|a| a == "rolebinding" || a == "clusterrolebinding")
}

fn comma_list(k: &Kubectl, flag: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for v in k.flags.all(flag) {
        for x in v.split(',') {
            if !out.iter().any(|o| o == x) {
                out.push(x.to_string());
            }
        }
    }
    out
}

fn one_name(k: &Kubectl, sub: &str, args: &[String]) -> Result<String, i32> {
    crate::cmd::create_more::name_before_dash(k, sub, args)
}

fn required(k: &Kubectl, flag: &str) -> Result<String, i32> {
    k.flags
        .get(flag)
        .map(str::to_string)
        .ok_or_else(|| k.error(&format!("required flag(s) \"{flag}\" not set")))
}

/// `kubectl create TYPE …` (the caller has checked TYPE is a generator).
pub async fn create(k: Kubectl) -> i32 {
    let sub = k.flags.args[0].clone();
    let rest: Vec<String> = k.flags.args[1..].to_vec();
    let ns = k.namespace();
    let emit = match crate::cmd::generate::options(&k) {
        Ok(e) => e,
        Err(code) => return code,
    };
    let built = match sub.as_str() {
        "namespace" | "ns" => one_name(&k, "namespace", &rest).map(|n| {
            (
                Kind::Namespace,
                json!({"metadata": {"name": n}, "spec": {}}),
            )
        }),
        "serviceaccount" | "sa" => one_name(&k, "serviceaccount", &rest)
            .map(|n| (Kind::ServiceAccount, json!({"metadata": {"name": n}}))),
        "configmap" | "cm" => configmap(&k, &rest, false),
        "secret" => match rest.first().map(String::as_str) {
            Some("generic") => configmap(&k, &rest[1..], true),
            Some("tls") => tls_secret(&k, &rest[1..]),
            Some(t @ "docker-registry") => Err(k.error(&format!(
                "\"kubectl create secret {t}\" is not available in kubeloop yet"
            ))),
            _ => Err(k.error("you must specify a subcommand: docker-registry, generic, tls")),
        },
        "deployment" | "deploy" => deployment(&k, &rest),
        "service" | "svc" => service(&k, &rest),
        "role" | "clusterrole" => role(&k, &sub, &rest),
        "rolebinding" | "clusterrolebinding" => binding(&k, &sub, &rest, &ns),
        "priorityclass" | "pc" => priority_class(&k, &rest),
        "job" => crate::cmd::create_job::job(&k, &rest).await,
        "cronjob" | "cj" => crate::cmd::create_more::cronjob(&k, &rest),
        "quota" | "resourcequota" => crate::cmd::create_more::quota(&k, &rest),
        "poddisruptionbudget" | "pdb" => crate::cmd::create_more::pdb(&k, &rest),
        "ingress" | "ing" => crate::cmd::create_ingress::ingress(&k, &rest),
        _ => Err(k.error(&format!("unknown resource type \"{sub}\" for create"))),
    };
    let (kind, mut value) = match built {
        Ok(x) => x,
        Err(code) => return code,
    };
    // Generators that warn leave their warnings under `metadata.$warnings`.
    let warnings: Vec<String> = value
        .get_mut("metadata")
        .and_then(Value::as_object_mut)
        .and_then(|m| m.remove("$warnings"))
        .and_then(|w| crate::object::decode(&w).ok())
        .unwrap_or_default();
    for w in warnings {
        k.sys.err(&w);
    }
    match crate::cmd::generate::send(&k, &emit, kind, value).await {
        Ok(_) => 0,
        Err(code) => code,
    }
}

/// `kubectl create priorityclass NAME --value=VALUE [--global-default]
/// [--description=D] [--preemption-policy=P]` (value 0 and PreemptLowerPriority by default).
fn priority_class(k: &Kubectl, args: &[String]) -> Result<(Kind, Value), i32> {
    let name = one_name(k, "priorityclass", args)?;
    let value = match k.flags.get("value") {
        None => 0,
        Some(v) => v.parse::<i32>().map_err(|_| {
            let why = if v.parse::<i64>().is_ok() {
                "value out of range"
            } else {
                "invalid syntax"
            };
            k.error(&format!(
                "invalid argument \"{v}\" for \"--value\" flag: strconv.ParseInt: parsing \"{v}\": {why}"
            ))
        })?,
    };
    let global_default = match k.flags.get("global-default") {
        None => false,
        Some("" | "true" | "1" | "t" | "T" | "TRUE" | "True") => true,
        Some("false" | "0" | "f" | "F" | "FALSE" | "False") => false,
        Some(v) => {
            return Err(k.error(&format!(
                "invalid argument \"{v}\" for \"--global-default\" flag: strconv.ParseBool: parsing \"{v}\": invalid syntax"
            )))
        }
    };
    let mut pc = json!({
        "metadata": {"name": name},
        "value": value,
        "preemptionPolicy": k.flags.get("preemption-policy").unwrap_or("PreemptLowerPriority"),
    });
    if global_default {
        pc["globalDefault"] = json!(true);
    }
    if let Some(d) = k.flags.get("description").filter(|d| !d.is_empty()) {
        pc["description"] = json!(d);
    }
    Ok((Kind::PriorityClass, pc))
}

/// `kubectl create secret tls NAME --cert=FILE --key=FILE`: checked as
/// `tls.X509KeyPair` checks the pair, then stored as a `kubernetes.io/tls` Secret.
fn tls_secret(k: &Kubectl, args: &[String]) -> Result<(Kind, Value), i32> {
    let name = one_name(k, "secret tls", args)?;
    let (Some(cert), Some(key)) = (
        k.flags.get("cert").filter(|c| !c.is_empty()),
        k.flags.get("key").filter(|c| !c.is_empty()),
    ) else {
        return Err(k.error("key and cert must be specified"));
    };
    let read = |f: &str| {
        k.sys
            .files
            .get(f)
            .cloned()
            .ok_or_else(|| k.error(&format!("open {f}: no such file or directory")))
    };
    let (cert_pem, key_pem) = (read(cert)?, read(key)?);
    if let Err(e) = crate::node::x509::key_pair(&cert_pem, &key_pem) {
        return Err(k.error(&e));
    }
    let b64 = |t: &str| base64::engine::general_purpose::STANDARD.encode(t.as_bytes());
    Ok((
        Kind::Secret,
        json!({
            "metadata": {"name": name},
            "type": "kubernetes.io/tls",
            "data": {"tls.crt": b64(&cert_pem), "tls.key": b64(&key_pem)},
        }),
    ))
}

fn configmap(k: &Kubectl, args: &[String], secret: bool) -> Result<(Kind, Value), i32> {
    let sub = if secret {
        "secret generic"
    } else {
        "configmap"
    };
    let name = one_name(k, sub, args)?;
    let mut data: BTreeMap<String, String> = BTreeMap::new();
    for lit in k.flags.all("from-literal") {
        let Some((key, val)) = lit.split_once('=') else {
            return Err(k.error(&format!("invalid literal source {lit}, expected key=value")));
        };
        if data.insert(key.to_string(), val.to_string()).is_some() {
            return Err(k.error(&format!(
                "cannot add key {key}, another key by that name already exists in Data for {}: map[]",
                if secret { "Secret" } else { "ConfigMap" }
            )));
        }
    }
    for f in k.flags.all("from-env-file") {
        let Some(text) = k.sys.files.get(&f) else {
            return Err(k.error(&format!("error reading {f}: no such file or directory")));
        };
        // Docker env-file syntax: KEY=VALUE lines; blank lines and # comments skipped.
        for (i, line) in text.lines().enumerate() {
            let line = line.trim_start();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            match line.split_once('=') {
                Some((key, val)) if !key.is_empty() => {
                    data.insert(key.to_string(), val.to_string());
                }
                _ => {
                    return Err(k.error(&format!(
                        "\"{line}\" is not a valid key name: a valid environment variable name must consist of alphabetic characters, digits, '_', '-', or '.', and must not start with a digit (line {} of {f})",
                        i + 1
                    )))
                }
            }
        }
    }
    for f in k.flags.all("from-file") {
        let (key, path) = match f.split_once('=') {
            Some((key, p)) => (key.to_string(), p.to_string()),
            None => (f.rsplit('/').next().unwrap_or(&f).to_string(), f.clone()),
        };
        if let Some(text) = k.sys.files.get(&path) {
            data.insert(key, text.clone());
            continue;
        }
        // A directory: each file directly in it, keyed by its name.
        let prefix = format!("{}/", path.trim_end_matches('/'));
        let entries: Vec<(&String, &String)> = k
            .sys
            .files
            .iter()
            .filter(|(n, _)| n.starts_with(&prefix) && !n[prefix.len()..].contains('/'))
            .collect();
        if entries.is_empty() || f.contains('=') {
            return Err(k.error(&format!("error reading {path}: no such file or directory")));
        }
        for (n, text) in entries {
            data.insert(n[prefix.len()..].to_string(), text.clone());
        }
    }
    let mut v = json!({"metadata": {"name": name}});
    if secret {
        let enc: Map<String, Value> = data
            .into_iter()
            .map(|(key, val)| {
                let b = base64::engine::general_purpose::STANDARD.encode(val.as_bytes());
                (key, Value::String(b))
            })
            .collect();
        v["data"] = Value::Object(enc);
        v["type"] = json!(k.flags.get("type").unwrap_or("Opaque"));
        Ok((Kind::Secret, v))
    } else {
        if !data.is_empty() {
            v["data"] = json!(data);
        }
        Ok((Kind::ConfigMap, v))
    }
}

/// The container name kubectl derives from an image: its last path segment without
/// tag or digest, underscores made dashes.
fn container_name(image: &str) -> String {
    let last = image.rsplit('/').next().unwrap_or(image);
    let last = last.split('@').next().unwrap_or(last);
    let last = last.split(':').next().unwrap_or(last);
    last.replace('_', "-")
}

fn deployment(k: &Kubectl, args: &[String]) -> Result<(Kind, Value), i32> {
    let name = one_name(k, "deployment", args)?;
    let images = k.flags.all("image");
    if images.is_empty() {
        return Err(k.error("required flag(s) \"image\" not set"));
    }
    let replicas: i64 = match k.flags.get("replicas") {
        None => 1,
        Some(r) => r.parse().map_err(|_| {
            k.error(&format!(
                "invalid argument \"{r}\" for \"-r, --replicas\" flag: strconv.ParseInt: parsing \"{r}\": invalid syntax"
            ))
        })?,
    };
    let port: Option<i64> = k.flags.get("port").and_then(|p| p.parse().ok());
    let command: Vec<String> = args[1..].to_vec();
    if images.len() > 1 && !command.is_empty() {
        return Err(k.error("cannot specify multiple --image options and command"));
    }
    let mut seen: Vec<String> = Vec::new();
    let containers: Vec<Value> = images
        .iter()
        .map(|img| {
            let mut n = container_name(img);
            if seen.contains(&n) {
                n = format!("{n}-{}", seen.len());
            }
            seen.push(n.clone());
            let mut c = json!({"name": n, "image": img, "resources": {}});
            if seen.len() == 1 {
                if !command.is_empty() {
                    c["command"] = json!(command);
                }
                if let Some(p) = port {
                    c["ports"] = json!([{"containerPort": p}]);
                }
            }
            c
        })
        .collect();
    let labels = json!({"app": name});
    Ok((
        Kind::Deployment,
        json!({
            "metadata": {"name": name, "labels": labels},
            "spec": {
                "replicas": replicas,
                "selector": {"matchLabels": labels},
                "strategy": {},
                "template": {
                    "metadata": {"labels": labels},
                    "spec": {"containers": containers}
                }
            }
        }),
    ))
}

fn service(k: &Kubectl, args: &[String]) -> Result<(Kind, Value), i32> {
    let (type_, ty) =
        match args.first().map(String::as_str) {
            Some("clusterip") => ("ClusterIP", "clusterip"),
            Some("nodeport") => ("NodePort", "nodeport"),
            Some("loadbalancer") => ("LoadBalancer", "loadbalancer"),
            Some("externalname") => ("ExternalName", "externalname"),
            _ => return Err(k.error(
                "you must specify a subcommand: clusterip, externalname, loadbalancer, nodeport",
            )),
        };
    let name = one_name(k, &format!("service {ty}"), &args[1..])?;
    let labels = json!({"app": name});
    let mut spec = json!({"type": type_, "selector": labels});
    if type_ == "ExternalName" {
        let ext = required(k, "external-name")?;
        spec = json!({"type": type_, "externalName": ext});
    } else {
        let tcp = k.flags.all("tcp");
        if tcp.is_empty() && k.flags.get("clusterip") != Some("None") {
            return Err(k.error("at least one tcp port specifier must be provided"));
        }
        let mut ports = Vec::new();
        for t in tcp
            .iter()
            .flat_map(|t| t.split(',').map(str::to_string).collect::<Vec<_>>())
        {
            let (p, tp) = t.split_once(':').unwrap_or((&t, &t));
            let (Ok(port), Ok(target)) = (p.parse::<i64>(), tp.parse::<i64>()) else {
                return Err(k.error(&format!("{t} is not a valid port specifier")));
            };
            let mut sp = json!({"name": format!("{port}-{target}"), "port": port, "protocol": "TCP", "targetPort": target});
            if let Some(np) = k.flags.get("node-port").and_then(|n| n.parse::<i64>().ok()) {
                sp["nodePort"] = json!(np);
            }
            ports.push(sp);
        }
        spec["ports"] = Value::Array(ports);
        if let Some(ip) = k.flags.get("clusterip") {
            spec["clusterIP"] = json!(ip);
        }
    }
    Ok((
        Kind::Service,
        json!({"metadata": {"name": name, "labels": labels}, "spec": spec}),
    ))
}

fn role(k: &Kubectl, sub: &str, args: &[String]) -> Result<(Kind, Value), i32> {
    let name = one_name(k, sub, args)?;
    let verbs = comma_list(k, "verb");
    if verbs.is_empty() {
        return Err(k.error("at least one verb must be specified"));
    }
    let resources = comma_list(k, "resource");
    if resources.is_empty() {
        return Err(k.error("at least one resource must be specified"));
    }
    let warnings: Vec<String> = verbs
        .iter()
        .filter(|v| !VALID_VERBS.contains(&v.as_str()))
        .map(|v| format!("Warning: '{v}' is not a standard resource verb\n"))
        .collect();
    let verbs = if verbs.iter().any(|v| v == "*") {
        vec!["*".to_string()]
    } else {
        verbs
    };
    // One rule per API group, groups in the order their first resource appeared.
    let mut groups: Vec<(String, Vec<String>)> = Vec::new();
    for r in &resources {
        let (res, sub_res) = match r.split_once('/') {
            Some((a, b)) => (a, Some(b)),
            None => (r.as_str(), None),
        };
        let (group, plural) = if res == "*" {
            (String::new(), "*".to_string())
        } else {
            match Kind::from_resource_arg(res).or_else(|| k.custom.resource_arg(res)) {
                Some(kind) => (
                    kind.info().group.to_string(),
                    kind.info().plural.to_string(),
                ),
                None => {
                    return Err(k.error(&format!(
                        "the server doesn't have a resource type \"{res}\""
                    )))
                }
            }
        };
        let full = match sub_res {
            Some(s) => format!("{plural}/{s}"),
            None => plural,
        };
        match groups.iter_mut().find(|(g, _)| *g == group) {
            Some((_, rs)) => rs.push(full),
            None => groups.push((group, vec![full])),
        }
    }
    let names = comma_list(k, "resource-name");
    let rules: Vec<Value> = groups
        .into_iter()
        .map(|(g, rs)| {
            let mut r = json!({"apiGroups": [g], "resources": rs, "verbs": verbs});
            if !names.is_empty() {
                r["resourceNames"] = json!(names);
            }
            r
        })
        .collect();
    let kind = if sub == "role" {
        Kind::Role
    } else {
        Kind::ClusterRole
    };
    Ok((
        kind,
        json!({"metadata": {"name": name, "$warnings": warnings}, "rules": rules}),
    ))
}

fn binding(k: &Kubectl, sub: &str, args: &[String], ns: &str) -> Result<(Kind, Value), i32> {
    let name = one_name(k, sub, args)?;
    let cluster = sub == "clusterrolebinding";
    let (role_kind, role_name) = if cluster {
        ("ClusterRole", required(k, "clusterrole")?)
    } else {
        match (k.flags.get("role"), k.flags.get("clusterrole")) {
            (Some(r), None) => ("Role", r.to_string()),
            (None, Some(c)) => ("ClusterRole", c.to_string()),
            _ => return Err(k.error("exactly one of clusterrole or role must be specified")),
        }
    };
    let mut subjects = Vec::new();
    for u in k.flags.all("user") {
        subjects.push(json!({"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": u}));
    }
    for g in k.flags.all("group") {
        subjects.push(json!({"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": g}));
    }
    for sa in k.flags.all("serviceaccount") {
        let Some((sa_ns, sa_name)) = sa.split_once(':') else {
            return Err(k.error("serviceaccount must be <namespace>:<name>"));
        };
        subjects.push(json!({"kind": "ServiceAccount", "name": sa_name, "namespace": sa_ns}));
    }
    let _ = ns;
    let mut v = json!({
        "metadata": {"name": name},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": role_kind, "name": role_name}
    });
    if !subjects.is_empty() {
        v["subjects"] = Value::Array(subjects);
    }
    Ok((
        if cluster {
            Kind::ClusterRoleBinding
        } else {
            Kind::RoleBinding
        },
        v,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn container_names_come_from_the_image() {
        assert_eq!(container_name("nginx:1.27"), "nginx");
        assert_eq!(container_name("registry.k8s.io/pause@sha256:abc"), "pause");
        assert_eq!(container_name("docker.io/library/my_app"), "my-app");
    }
}
