//! `kubectl port-forward TYPE/NAME [LOCAL:]REMOTE…`: forwards local ports of the terminal's
//! machine to a pod (a Service's or a controller's pod, as kubectl picks it). It runs until
//! Ctrl-C; started with `&`, the terminal's own `curl localhost:LOCAL` reaches the pod
//! through it (see [`crate::cmd::local`]).

use k8s_openapi::api::core::v1::{Pod, Service};

use crate::api::{ApiRequest, ApiResult, Verb};
use crate::cmd::kubectl::Kubectl;
use crate::object::{Kind, Object};
use crate::time::MINUTE;

/// One `LOCAL:REMOTE` pair.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PortPair {
    /// The terminal machine's port.
    pub local: u16,
    /// The port asked for on the target (a Service port for `svc/…`).
    pub remote: u16,
}

/// Parses `8080:80`, `80` (same port both sides).
pub fn parse_pair(s: &str) -> Result<PortPair, String> {
    let (l, r) = s.split_once(':').unwrap_or((s, s));
    let port = |p: &str| p.parse::<u16>().ok().filter(|n| *n > 0);
    match (port(l), port(r)) {
        (Some(local), Some(remote)) => Ok(PortPair { local, remote }),
        _ => Err(format!(
            "Error parsing local port '{l}': strconv.ParseUint: parsing \"{l}\": invalid syntax"
        )),
    }
}

/// The pod port a Service port forwards to (`targetPort`, by number or by the pod's
/// named port), as kubectl translates it.
pub fn target_port(svc: &Service, pod: &Pod, port: u16) -> Result<u16, String> {
    let sp = svc
        .spec
        .as_ref()
        .and_then(|s| s.ports.as_ref())
        .and_then(|ps| ps.iter().find(|p| p.port == i32::from(port)));
    let Some(sp) = sp else {
        return Err(format!(
            "Service {} does not have a service port {port}",
            svc.metadata.name.as_deref().unwrap_or("")
        ));
    };
    use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
    match &sp.target_port {
        None => Ok(port),
        Some(IntOrString::Int(n)) => Ok(*n as u16),
        Some(IntOrString::String(name)) => pod
            .spec
            .iter()
            .flat_map(|s| s.containers.iter())
            .flat_map(|c| c.ports.iter().flatten())
            .find(|p| p.name.as_deref() == Some(name))
            .map(|p| p.container_port as u16)
            .ok_or_else(|| {
                format!(
                    "Pod '{}' does not have a named port '{name}'",
                    pod.metadata.name.as_deref().unwrap_or("")
                )
            }),
    }
}

/// Runs `kubectl port-forward`.
pub async fn port_forward(k: Kubectl) -> i32 {
    let args = k.flags.args.clone();
    let Some(target) = args.first().cloned() else {
        return k.error("TYPE/NAME and list of ports are required for port-forward");
    };
    let pairs: Result<Vec<PortPair>, String> = args[1..].iter().map(|s| parse_pair(s)).collect();
    let pairs = match pairs {
        Ok(p) if !p.is_empty() => p,
        Ok(_) => return k.error("at least 1 PORT is required for port-forward"),
        Err(e) => return k.error(&e),
    };
    let pod = match crate::cmd::logs::target_pod(&k, &target).await {
        Ok(p) => p,
        Err(code) => return code,
    };
    let phase = pod
        .status
        .as_ref()
        .and_then(|s| s.phase.clone())
        .unwrap_or_default();
    if phase != "Running" {
        return k.error(&format!(
            "unable to forward port because pod is not running. Current status={phase}"
        ));
    }
    let svc = match target.split_once('/') {
        Some((t, name)) if Kind::from_resource_arg(t) == Some(Kind::Service) => {
            match k
                .sys
                .api(ApiRequest::new(
                    Verb::Get,
                    Kind::Service,
                    &k.namespace(),
                    name,
                ))
                .await
            {
                Ok(ApiResult::Object(o)) => match &*o {
                    Object::Service(s) => Some(s.clone()),
                    _ => None,
                },
                _ => None,
            }
        }
        _ => None,
    };
    let mut out = String::new();
    for p in &pairs {
        let remote = match &svc {
            Some(s) => match target_port(s, &pod, p.remote) {
                Ok(r) => r,
                Err(e) => return k.error(&e),
            },
            None => p.remote,
        };
        out.push_str(&format!(
            "Forwarding from 127.0.0.1:{} -> {remote}\nForwarding from [::1]:{} -> {remote}\n",
            p.local, p.local
        ));
    }
    k.sys.out(&out);
    loop {
        k.sys.sleep(60 * MINUTE).await;
    }
}
