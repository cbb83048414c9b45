//! `kubectl logs` and `kubectl exec`: the pod from the apiserver, then the node's kubelet
//! through the apiserver's proxy — with kubectl's container defaulting and errors.

use k8s_openapi::api::core::v1::{ContainerStatus, Pod};

use crate::api::{ApiRequest, ApiResult, Verb};
use crate::cmd::kubectl::Kubectl;
use crate::node::kubelet_api::{KubeletCall, KubeletReply, APISERVER_DOWN};
use crate::object::{Kind, Object};
use crate::selector::LabelSelector;
use crate::time::SECOND;

fn bad_request(k: &Kubectl, msg: &str) -> i32 {
    k.sys
        .err(&format!("Error from server (BadRequest): {msg}\n"));
    1
}

fn transport(k: &Kubectl, e: &str, what: String) -> i32 {
    if e == APISERVER_DOWN {
        k.sys.err(&format!(
            "The connection to the server {} was refused - did you specify the right host or port?\n",
            crate::cluster::APISERVER_HOST
        ));
    } else {
        k.sys.err(&format!("Error from server: {what}{e}\n"));
    }
    1
}

/// Resolves `POD`, `pod/POD`, `deploy/NAME` (first pod of its selector) to a pod.
pub(crate) async fn target_pod(k: &Kubectl, arg: &str) -> Result<Pod, i32> {
    let ns = k.namespace();
    let (kind, name) = match arg.split_once('/') {
        Some((t, n)) => match crate::cmd::kubectl::resolve_kind(t, &k.custom) {
            Ok(kind) => (kind, n.to_string()),
            Err(e) => return Err(k.error(&e)),
        },
        None => (Kind::Pod, arg.to_string()),
    };
    let obj = match k
        .sys
        .api(ApiRequest::new(Verb::Get, kind, &ns, &name))
        .await
    {
        Ok(ApiResult::Object(o)) => o,
        Ok(_) => return Err(k.error("unexpected response")),
        Err(s) => return Err(k.status_error(&s)),
    };
    let selector = match &*obj {
        Object::Pod(p) => return Ok((**p).clone()),
        Object::Deployment(d) => d.spec.as_ref().map(|s| s.selector.clone()),
        Object::ReplicaSet(r) => r.spec.as_ref().map(|s| s.selector.clone()),
        Object::Job(j) => j.spec.as_ref().and_then(|s| s.selector.clone()),
        Object::Service(s) => s.spec.as_ref().and_then(|s| s.selector.clone()).map(|m| {
            k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector {
                match_labels: Some(m),
                match_expressions: None,
            }
        }),
        _ => None,
    };
    let Some(sel) = selector else {
        return Err(k.error(&format!(
            "cannot attach to {}: selector for {} not implemented",
            kind.info().kind,
            kind.info().kind
        )));
    };
    let text: Vec<String> = sel
        .match_labels
        .unwrap_or_default()
        .iter()
        .map(|(a, b)| format!("{a}={b}"))
        .collect();
    let mut req = ApiRequest::new(Verb::List, Kind::Pod, &ns, "");
    req.options.label_selector = LabelSelector::parse(&text.join(",")).ok();
    let pods: Vec<Pod> = match k.sys.api(req).await {
        Ok(ApiResult::List { items, .. }) => items
            .iter()
            .filter_map(|o| match &**o {
                Object::Pod(p) => Some((**p).clone()),
                _ => None,
            })
            .collect(),
        Ok(_) => Vec::new(),
        Err(s) => return Err(k.status_error(&s)),
    };
    let mut sorted = pods.clone();
    sorted.sort_by_key(pod_preference);
    match sorted.first() {
        None => Err(k.error("timed out waiting for the condition")),
        Some(p) => {
            if pods.len() > 1 {
                k.sys.err(&format!(
                    "Found {} pods, using pod/{}\n",
                    pods.len(),
                    p.metadata.name.clone().unwrap_or_default()
                ));
            }
            Ok(p.clone())
        }
    }
}

/// Picks the container: `-c`, the default-container annotation, or the first one
/// (saying so when there are several).
fn container(k: &Kubectl, pod: &Pod, verb: &str) -> Result<String, i32> {
    let spec = pod.spec.clone().unwrap_or_default();
    let name = pod.metadata.name.clone().unwrap_or_default();
    let all: Vec<String> = spec
        .containers
        .iter()
        .map(|c| c.name.clone())
        .chain(
            spec.init_containers
                .iter()
                .flatten()
                .map(|c| c.name.clone()),
        )
        .collect();
    if let Some(c) = k.flags.get("container") {
        if !all.iter().any(|x| x == c) {
            if verb == "exec" {
                return Err(k.error(&format!("container {c} not found in pod {name}")));
            }
            return Err(bad_request(
                k,
                &format!("container {c} is not valid for pod {name}"),
            ));
        }
        return Ok(c.to_string());
    }
    let annotated = pod
        .metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get("kubectl.kubernetes.io/default-container"))
        .filter(|c| all.contains(c))
        .cloned();
    let first = annotated
        .or_else(|| spec.containers.first().map(|c| c.name.clone()))
        .unwrap_or_default();
    if all.len() > 1 {
        let mut list: Vec<String> = spec.containers.iter().map(|c| c.name.clone()).collect();
        list.extend(
            spec.init_containers
                .iter()
                .flatten()
                .map(|c| format!("{} (init)", c.name)),
        );
        k.sys.err(&format!(
            "Defaulted container \"{first}\" out of: {}\n",
            list.join(", ")
        ));
    }
    Ok(first)
}

fn status_of<'a>(pod: &'a Pod, c: &str) -> Option<&'a ContainerStatus> {
    let st = pod.status.as_ref()?;
    st.container_statuses
        .iter()
        .flatten()
        .chain(st.init_container_statuses.iter().flatten())
        .find(|s| s.name == c)
}

/// `kubectl logs`.
pub async fn logs(k: Kubectl) -> i32 {
    if k.flags.args.is_empty() && k.flags.has("selector") {
        return by_selector(k).await;
    }
    let Some(arg) = k.flags.args.first().cloned() else {
        return k.error("expected 'logs [-f] [-p] (POD | TYPE/NAME) [-c CONTAINER]'.\nPOD or TYPE/NAME is a required argument for the logs command\nSee 'kubectl logs -h' for help and examples");
    };
    let pod = match target_pod(&k, &arg).await {
        Ok(p) => p,
        Err(code) => return code,
    };
    let name = pod.metadata.name.clone().unwrap_or_default();
    let ns = pod.metadata.namespace.clone().unwrap_or_default();
    let containers: Vec<String> = if k.flags.bool("all-containers") {
        let spec = pod.spec.clone().unwrap_or_default();
        spec.init_containers
            .iter()
            .flatten()
            .chain(spec.containers.iter())
            .map(|c| c.name.clone())
            .collect()
    } else {
        match container(&k, &pod, "logs") {
            Ok(c) => vec![c],
            Err(code) => return code,
        }
    };
    let Some(node) = pod.spec.as_ref().and_then(|s| s.node_name.clone()) else {
        return 0;
    };
    let host_ip = pod
        .status
        .as_ref()
        .and_then(|s| s.host_ip.clone())
        .unwrap_or_default();
    let previous = k.flags.bool("previous");
    let follow = k.flags.bool("follow");
    let timestamps = k.flags.bool("timestamps");
    let tail = k
        .flags
        .get("tail")
        .and_then(|t| t.parse::<i64>().ok())
        .filter(|t| *t >= 0)
        .map(|t| t as usize);
    for c in containers {
        if let Some(st) = status_of(&pod, &c) {
            let last = st.last_state.as_ref().and_then(|l| l.terminated.as_ref());
            if previous && last.is_none() {
                return bad_request(
                    &k,
                    &format!("previous terminated container \"{c}\" in pod \"{name}\" not found"),
                );
            }
            if let Some(w) = st.state.as_ref().and_then(|s| s.waiting.as_ref()) {
                if last.is_none() && !previous {
                    let reason = w.reason.clone().unwrap_or_default();
                    let why = match reason.as_str() {
                        "ErrImagePull" => "image can't be pulled".to_string(),
                        "ImagePullBackOff" => "trying and failing to pull image".to_string(),
                        r => r.to_string(),
                    };
                    return bad_request(
                        &k,
                        &format!("container \"{c}\" in pod \"{name}\" is waiting to start: {why}"),
                    );
                }
            }
        } else if previous {
            return bad_request(
                &k,
                &format!("previous terminated container \"{c}\" in pod \"{name}\" not found"),
            );
        }
        let mut skip = 0;
        loop {
            let call = KubeletCall::Logs {
                namespace: ns.clone(),
                pod: name.clone(),
                container: c.clone(),
                previous,
                skip,
                tail: if skip == 0 { tail } else { None },
                timestamps,
            };
            match k.sys.kubelet(&node, call).await {
                Ok(KubeletReply::Logs {
                    text,
                    next,
                    running,
                }) => {
                    k.sys.out(&text);
                    skip = next;
                    if !follow || !running {
                        break;
                    }
                }
                Ok(_) => break,
                Err(e) if e.starts_with("dial tcp") => {
                    return transport(
                        &k,
                        &e,
                        format!("Get \"https://{host_ip}:10250/containerLogs/{ns}/{name}/{c}\": "),
                    );
                }
                Err(e) if e == APISERVER_DOWN => return transport(&k, &e, String::new()),
                Err(e) => return bad_request(&k, &e),
            }
            k.sys.sleep(SECOND).await;
        }
    }
    0
}

/// `kubectl logs -l SELECTOR`: each selected pod's log in turn (kubectl's
/// `--max-log-requests` of 5 applies when following).
async fn by_selector(k: Kubectl) -> i32 {
    let pods = match crate::cmd::select::names(&k, Kind::Pod).await {
        Ok(p) => p,
        Err(code) => return code,
    };
    if pods.is_empty() {
        k.sys
            .err(&crate::kubectl::printers::no_resources_message(Some(
                &k.namespace(),
            )));
        return 0;
    }
    if k.flags.bool("follow") && pods.len() > 5 {
        return k.error(&format!("you are attempting to follow {} log streams, but maximum allowed concurrency is 5, use --max-log-requests to increase the limit", pods.len()));
    }
    let mut code = 0;
    for p in pods {
        let mut flags = k.flags.clone();
        flags.flags.remove("selector");
        flags.args = vec![p];
        let one = Kubectl {
            sys: k.sys.clone(),
            flags,
            context_namespace: k.context_namespace.clone(),
            custom: k.custom.clone(),
        };
        code = code.max(Box::pin(logs(one)).await);
    }
    code
}

/// The kubelet call that runs `command` in the pod `arg` names (its node, and the call),
/// or kubectl's error already printed.
pub(crate) async fn exec_call(
    k: &Kubectl,
    arg: &str,
    command: Vec<String>,
) -> Result<(String, KubeletCall), i32> {
    let pod = match target_pod(k, arg).await {
        Ok(p) => p,
        Err(code) => return Err(code),
    };
    let phase = pod
        .status
        .as_ref()
        .and_then(|s| s.phase.clone())
        .unwrap_or_default();
    if phase == "Succeeded" || phase == "Failed" {
        return Err(k.error(&format!(
            "cannot exec into a container in a completed pod; current phase is {phase}"
        )));
    }
    let c = match container(k, &pod, "exec") {
        Ok(c) => c,
        Err(code) => return Err(code),
    };
    let name = pod.metadata.name.clone().unwrap_or_default();
    let ns = pod.metadata.namespace.clone().unwrap_or_default();
    let Some(node) = pod.spec.as_ref().and_then(|s| s.node_name.clone()) else {
        return Err(k.error("unable to upgrade connection: pod does not exist"));
    };
    let session = k
        .flags
        .get("kubeloop-session")
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let call = KubeletCall::Exec {
        namespace: ns,
        pod: name,
        container: c,
        command,
        session,
    };
    Ok((node, call))
}

/// `kubectl exec POD [-c C] -- COMMAND [ARGS…]`.
pub async fn exec(k: Kubectl) -> i32 {
    let args = k.flags.args.clone();
    let Some(arg) = args.first().cloned() else {
        return k.error("expected 'exec (POD | TYPE/NAME) COMMAND [ARG1] [ARG2] ... [ARGN]'.\nPOD or TYPE/NAME is a required argument for the exec command\nSee 'kubectl exec -h' for help and examples");
    };
    let command: Vec<String> = args[1..].to_vec();
    if command.is_empty() {
        return k.error("you must specify at least one command for the container");
    }
    let (node, call) = match exec_call(&k, &arg, command).await {
        Ok(x) => x,
        Err(code) => return code,
    };
    let tty = k.flags.bool("tty");
    match k.sys.kubelet(&node, call).await {
        Ok(KubeletReply::Exec(r)) => {
            if r.elapsed > 0 {
                k.sys.sleep(r.elapsed).await;
            }
            k.sys.out(&r.stdout);
            let stderr = if tty {
                r.stderr
                    .lines()
                    .filter(|l| {
                        !l.starts_with("  % Total")
                            && !l.starts_with("                                 Dload")
                            && !l.starts_with("100 ")
                    })
                    .map(|l| format!("{l}\n"))
                    .collect()
            } else {
                r.stderr
            };
            k.sys.err(&stderr);
            if r.code != 0 {
                k.sys
                    .err(&format!("command terminated with exit code {}\n", r.code));
            }
            r.code
        }
        Ok(KubeletReply::ExecFailed(e)) => k.error(&e),
        Ok(_) => 1,
        Err(e) if e.starts_with("dial tcp") => transport(&k, &e, "error dialing backend: ".into()),
        Err(e) if e == APISERVER_DOWN => transport(&k, &e, String::new()),
        Err(e) => k.error(&e),
    }
}

/// Which of a controller's pods kubectl attaches to: a running one, then by name.
pub(crate) fn pod_preference(p: &Pod) -> (bool, Option<String>) {
    let running = p.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Running");
    (!running, p.metadata.name.clone())
}

/// One container's whole log, as `cluster-info dump` fetches it (no follow, no tail).
pub(crate) async fn container_log(
    k: &Kubectl,
    pod: &k8s_openapi::api::core::v1::Pod,
    container: &str,
) -> Result<String, String> {
    let Some(node) = pod.spec.as_ref().and_then(|s| s.node_name.clone()) else {
        return Ok(String::new());
    };
    let call = KubeletCall::Logs {
        namespace: pod.metadata.namespace.clone().unwrap_or_default(),
        pod: pod.metadata.name.clone().unwrap_or_default(),
        container: container.to_string(),
        previous: false,
        skip: 0,
        tail: None,
        timestamps: false,
    };
    match k.sys.kubelet(&node, call).await {
        Ok(KubeletReply::Logs { text, .. }) => Ok(text),
        Ok(_) => Ok(String::new()),
        Err(e) => Err(e),
    }
}
