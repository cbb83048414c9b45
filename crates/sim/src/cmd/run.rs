//! `kubectl run NAME --image=IMAGE [flags] [-- ARGS…]` (`run.go` and the `run-pod/v1`
//! generator): one Pod labelled `run=NAME`, or with `-i/--attach` the container's output
//! and, with `--rm`, the pod deleted afterwards.

use k8s_openapi::api::core::v1::Pod;
use serde_json::{json, Map, Value};

use crate::api::{ApiRequest, ApiResult, Verb};
use crate::cmd::flags::Parsed;
use crate::cmd::generate;
use crate::cmd::kubectl::{kind_quoted, Kubectl};
use crate::object::{Kind, Object};
use crate::time::{Time, SECOND};

/// `--pod-running-timeout`'s default (`defaultPodAttachTimeout`).
const POD_RUNNING_TIMEOUT: Time = 60 * SECOND;

/// Whether `image` is a valid reference (distribution's `ReferenceRegexp`, simplified:
/// lowercase path components, an optional `host[:port]/`, `:tag` and `@digest`).
pub fn valid_image(image: &str) -> bool {
    let (rest, digest) = match image.split_once('@') {
        Some((r, d)) => (r, Some(d)),
        None => (image, None),
    };
    if digest.is_some_and(|d| !d.contains(':') || d.contains('/')) {
        return false;
    }
    let (path, tag) = match rest.rfind(':') {
        Some(i) if !rest[i..].contains('/') => (&rest[..i], Some(&rest[i + 1..])),
        _ => (rest, None),
    };
    let tag_ok = tag.is_none_or(|t| {
        !t.is_empty()
            && t.len() <= 128
            && !t.starts_with(['.', '-'])
            && t.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))
    });
    let mut parts = path.split('/').collect::<Vec<_>>();
    // A first component with a dot, a colon or `localhost` names a registry host.
    if parts.len() > 1 && (parts[0].contains(['.', ':']) || parts[0] == "localhost") {
        parts.remove(0);
    }
    let component_ok = |p: &str| {
        !p.is_empty()
            && p.starts_with(|c: char| c.is_ascii_lowercase() || c.is_ascii_digit())
            && p.ends_with(|c: char| c.is_ascii_lowercase() || c.is_ascii_digit())
            && p.chars().all(|c| {
                c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '.' | '_' | '-')
            })
    };
    tag_ok && !parts.is_empty() && parts.iter().all(|p| component_ok(p))
}

/// `k=v,k2=v2` as kubectl's `ParseLabels` reads it.
fn parse_pairs(spec: &str, what: &str) -> Result<Map<String, Value>, String> {
    let mut out = Map::new();
    for pair in spec.split(',') {
        match pair.split_once('=') {
            Some((k, v)) if !k.is_empty() => {
                out.insert(k.to_string(), json!(v));
            }
            _ => return Err(format!("invalid {what} spec: {pair}")),
        }
    }
    Ok(out)
}

fn env_name_ok(n: &str) -> bool {
    !n.is_empty()
        && !n.starts_with(|c: char| c.is_ascii_digit())
        && n.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
}

/// What `kubectl run` was asked to do.
struct Options {
    name: String,
    attach: bool,
    tty: bool,
    remove: bool,
    quiet: bool,
    restart: String,
    pod: Value,
    /// `--pod-running-timeout`.
    timeout: Time,
}

/// Checks the flags in kubectl's order and builds the Pod (`BasicPod.Generate`).
fn options(k: &Kubectl) -> Result<Options, String> {
    let f = &k.flags;
    let Some(image) = f.get("image") else {
        return Err("required flag(s) \"image\" not set".into());
    };
    if f.args.is_empty() || f.dash == Some(0) {
        return Err("NAME is required for run".into());
    }
    if image.is_empty() {
        return Err("--image is required".into());
    }
    if !valid_image(image) {
        return Err(format!(
            "Invalid image name \"{image}\": invalid reference format"
        ));
    }
    let stdin = f.bool("stdin");
    let tty = f.bool("tty");
    if tty && !stdin {
        return Err("-i/--stdin is required for containers with -t/--tty=true".into());
    }
    let restart = f.get("restart").unwrap_or("").to_string();
    if !matches!(restart.as_str(), "" | "Always" | "OnFailure" | "Never") {
        return Err(format!("invalid restart policy: {restart}"));
    }
    let attach = if f.has("attach") {
        f.bool("attach")
    } else {
        stdin
    };
    let remove = f.bool("rm");
    if remove && !attach {
        return Err("--rm should only be used for attached containers".into());
    }
    if attach && f.get("dry-run").is_some_and(|d| d != "none") {
        return Err("--dry-run=[server|client] can't be used with attached containers options (--attach, --stdin, or --tty)".into());
    }
    let pull = f.get("image-pull-policy").unwrap_or("");
    if !matches!(pull, "" | "Always" | "IfNotPresent" | "Never") {
        return Err(format!("invalid image pull policy: {pull}"));
    }
    let timeout = match f.get("pod-running-timeout") {
        None => POD_RUNNING_TIMEOUT,
        Some(t) => crate::time::parse_duration(t).map_err(|e| {
            format!("invalid argument \"{t}\" for \"--pod-running-timeout\" flag: {e}")
        })?,
    };
    let name = f.args[0].clone();
    let pod = pod(f, &name, image, stdin, tty, pull, &restart)?;
    Ok(Options {
        name,
        attach,
        tty,
        remove,
        quiet: f.bool("quiet"),
        restart: if restart.is_empty() && stdin {
            "OnFailure".into()
        } else if restart.is_empty() {
            "Always".into()
        } else {
            restart
        },
        pod,
        timeout,
    })
}

/// The generated Pod.
fn pod(
    f: &Parsed,
    name: &str,
    image: &str,
    stdin: bool,
    tty: bool,
    pull: &str,
    restart: &str,
) -> Result<Value, String> {
    let labels = match f.get("labels").filter(|l| !l.is_empty()) {
        Some(l) => parse_pairs(l, "label")?,
        None => Map::from_iter([("run".to_string(), json!(name))]),
    };
    let mut c = json!({"name": name, "image": image, "resources": {}});
    let args = &f.args[1..];
    if !args.is_empty() {
        let field = if f.bool("command") { "command" } else { "args" };
        c[field] = json!(args);
    }
    let mut env = Vec::new();
    for e in f.all("env") {
        match e.split_once('=') {
            Some((n, v)) if env_name_ok(n) => env.push(json!({"name": n, "value": v})),
            _ => return Err(format!("invalid env: {e}")),
        }
    }
    if !env.is_empty() {
        c["env"] = json!(env);
    }
    if !pull.is_empty() {
        c["imagePullPolicy"] = json!(pull);
    }
    if let Some(p) = f.get("port").filter(|p| !p.is_empty()) {
        let port: i64 = p
            .parse()
            .map_err(|_| format!("strconv.Atoi: parsing \"{p}\": invalid syntax"))?;
        if !(0..=65535).contains(&port) {
            return Err(format!(
                "port {port} must be between 0 and 65535, inclusive"
            ));
        }
        c["ports"] = json!([{"containerPort": port}]);
    }
    if stdin {
        c["stdin"] = json!(true);
        c["stdinOnce"] = json!(true);
    }
    if tty {
        c["tty"] = json!(true);
    }
    let mut meta = json!({"name": name, "labels": labels});
    let annotations: Vec<String> = f.all("annotations");
    if !annotations.is_empty() {
        let mut m = Map::new();
        for a in &annotations {
            m.extend(parse_pairs(a, "annotation")?);
        }
        meta["annotations"] = Value::Object(m);
    }
    Ok(json!({
        "metadata": meta,
        "spec": {
            "containers": [c],
            "dnsPolicy": "ClusterFirst",
            "restartPolicy": if restart.is_empty() { "Always" } else { restart },
        }
    }))
}

/// `kubectl run`.
pub async fn run(k: Kubectl) -> i32 {
    let o = match options(&k) {
        Ok(o) => o,
        Err(e) => return k.error(&e),
    };
    let emit = match generate::options(&k) {
        Ok(e) => e,
        Err(code) => return code,
    };
    if !o.attach {
        return match generate::send(&k, &emit, Kind::Pod, o.pod).await {
            Ok(_) => 0,
            Err(code) => code,
        };
    }
    // Attached: nothing is printed for the creation itself.
    let ns = k.namespace();
    let value = generate::typed(&k, Kind::Pod, o.pod.clone());
    let req = ApiRequest::new(Verb::Create, Kind::Pod, &ns, "")
        .with_body(crate::api::Body::Raw(strip_status(value)));
    if let Err(s) = k.sys.api(req).await {
        return k.status_error(&s);
    }
    if let Some(shell) = interactive_shell(&o) {
        return open_shell(&k, &o, &ns, &shell).await;
    }
    let code = attach(&k, &o, &ns).await;
    if o.remove {
        let mut del = ApiRequest::new(Verb::Delete, Kind::Pod, &ns, &o.name);
        del.options.grace_period_seconds = None;
        match k.sys.api(del).await {
            Ok(_) if !o.quiet => k.sys.out(&format!(
                "{} deleted from {ns} namespace\n",
                kind_quoted(Kind::Pod, &o.name)
            )),
            Ok(_) => {}
            Err(s) if s.is_not_found() => {}
            Err(s) => return k.status_error(&s),
        }
    }
    match code {
        Err(msg) => {
            k.sys.err(&msg);
            1
        }
        Ok((code, msg)) => {
            k.sys.err(&msg);
            code
        }
    }
}

fn strip_status(mut v: Value) -> Value {
    if let Some(m) = v.as_object_mut() {
        m.remove("status");
    }
    v
}

fn phase(p: &Pod) -> &str {
    p.status
        .as_ref()
        .and_then(|s| s.phase.as_deref())
        .unwrap_or("Pending")
}

fn ready(p: &Pod) -> bool {
    p.status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .is_some_and(|cs| cs.iter().any(|c| c.type_ == "Ready" && c.status == "True"))
}

/// Polls the pod until `done` says so; None when it is gone or `timeout` passed.
async fn wait_pod(
    k: &Kubectl,
    ns: &str,
    name: &str,
    timeout: Option<Time>,
    done: impl Fn(&Pod) -> bool,
) -> Result<Pod, String> {
    let start = k.sys.now();
    loop {
        let req = ApiRequest::new(Verb::Get, Kind::Pod, ns, name);
        match k.sys.api(req).await {
            Ok(ApiResult::Object(o)) => {
                if let Object::Pod(p) = &*o {
                    if done(p) {
                        return Ok((**p).clone());
                    }
                }
            }
            Ok(_) => {}
            Err(s) if s.is_not_found() => {
                return Err(format!(
                    "Error from server (NotFound): pods \"{name}\" not found\n"
                ))
            }
            Err(s) => {
                return Err(format!(
                    "{}\n",
                    s.kubectl_message(crate::cluster::APISERVER_HOST)
                ))
            }
        }
        if timeout.is_some_and(|t| k.sys.now() - start >= t) {
            return Err("error: timed out waiting for the condition\n".into());
        }
        k.sys.sleep(SECOND / 2).await;
    }
}

/// The shell `kubectl run -i -t` attaches to: the container runs a shell with no script
/// (`-- sh`, `-- /bin/sh`, or busybox's default command).
fn interactive_shell(o: &Options) -> Option<String> {
    if !o.tty {
        return None;
    }
    let c = o.pod.pointer("/spec/containers/0")?;
    let words: Vec<String> = ["command", "args"]
        .iter()
        .filter_map(|f| c.get(*f).and_then(Value::as_array))
        .flatten()
        .filter_map(|v| v.as_str().map(str::to_string))
        .collect();
    let image = c.get("image").and_then(Value::as_str).unwrap_or("");
    match words.as_slice() {
        [] if crate::node::images::parse(image).repo.ends_with("busybox") => Some("sh".into()),
        [sh] if matches!(
            sh.as_str(),
            "sh" | "/bin/sh" | "ash" | "/bin/ash" | "bash" | "/bin/bash"
        ) =>
        {
            Some(sh.clone())
        }
        _ => None,
    }
}

/// `kubectl run -i -t … -- sh`: waits for the pod, then the terminal enters its shell;
/// `exit` prints attach's note and, with `--rm`, deletes the pod.
async fn open_shell(k: &Kubectl, o: &Options, ns: &str, shell: &str) -> i32 {
    let pod = match wait_pod(k, ns, &o.name, Some(o.timeout), |p| {
        matches!(phase(p), "Succeeded" | "Failed") || (phase(p) == "Running" && ready(p))
    })
    .await
    {
        Ok(p) => p,
        Err(msg) => {
            k.sys.err(&msg);
            return 1;
        }
    };
    if phase(&pod) != "Running" {
        k.sys.err(&format!("pod {ns}/{} terminated\n", o.name));
        return 1;
    }
    if !o.quiet {
        k.sys
            .err("If you don't see a command prompt, try pressing enter.\n");
    }
    let image = pod
        .spec
        .as_ref()
        .and_then(|s| s.containers.first())
        .and_then(|c| c.image.clone())
        .unwrap_or_default();
    let target = vec![
        "-n".to_string(),
        ns.to_string(),
        "-c".to_string(),
        o.name.clone(),
        o.name.clone(),
    ];
    let always = pod.spec.as_ref().and_then(|s| s.restart_policy.as_deref()) == Some("Always");
    let exit_note = if always && !o.quiet {
        format!(
            "Session ended, resume using 'kubectl attach {n} -c {n} -i -t' command when the pod is running\n",
            n = o.name
        )
    } else {
        String::new()
    };
    let on_exit = if o.remove {
        ["delete", "pod", &o.name, "-n", ns]
            .iter()
            .map(|s| s.to_string())
            .collect()
    } else {
        Vec::new()
    };
    k.sys.open_session(crate::kubeconfig_state::ShellSession {
        id: 1 + crate::rng::fnv1a(format!("{}/{ns}/{}", k.sys.now(), o.name).as_bytes())
            % (1 << 40),
        target,
        prompt: crate::cmd::interactive::prompt(&image, shell, &o.name),
        exit_note,
        on_exit,
    });
    0
}

/// Waits for the pod to run, shows its output (the simulator's attach is the container's
/// log from its start), then waits for it to finish when its restart policy lets it.
/// The exit code and what to print after `--rm`'s deletion, or the error.
async fn attach(k: &Kubectl, o: &Options, ns: &str) -> Result<(i32, String), String> {
    let terminal = |p: &Pod| matches!(phase(p), "Succeeded" | "Failed");
    let pod = wait_pod(k, ns, &o.name, Some(o.timeout), |p| {
        terminal(p) || (phase(p) == "Running" && ready(p))
    })
    .await?;
    if o.tty && !o.quiet && !terminal(&pod) {
        k.sys
            .err("If you don't see a command prompt, try pressing enter.\n");
    }
    let mut flags = Parsed::default();
    flags.args = vec![o.name.clone()];
    flags.flags.insert("namespace".into(), vec![ns.to_string()]);
    flags.flags.insert("container".into(), vec![o.name.clone()]);
    if !terminal(&pod) {
        flags.flags.insert("follow".into(), vec!["true".into()]);
    }
    let logs = Kubectl {
        sys: k.sys.clone(),
        flags,
        context_namespace: k.context_namespace.clone(),
        custom: k.custom.clone(),
    };
    crate::cmd::logs::logs(logs).await;
    if o.restart == "Always" {
        return Ok((0, String::new()));
    }
    let want = o.restart.clone();
    // Without `--restart`, `-i` waits for success (kubectl's OnFailure) under the pod
    // running timeout, even though the pod itself restarts Always.
    let pod = wait_pod(k, ns, &o.name, Some(o.timeout), |p| {
        phase(p) == "Succeeded" || (want == "Never" && phase(p) == "Failed")
    })
    .await?;
    if phase(&pod) == "Succeeded" {
        return Ok((0, String::new()));
    }
    let term = pod
        .status
        .as_ref()
        .and_then(|s| s.container_statuses.as_ref())
        .and_then(|cs| cs.first())
        .and_then(|c| c.state.as_ref())
        .and_then(|s| s.terminated.clone());
    match term {
        Some(t) if t.exit_code != 0 => Ok((
            t.exit_code,
            format!(
                "pod {ns}/{} terminated ({})\n{}",
                o.name,
                t.reason.unwrap_or_default(),
                t.message.map(|m| format!("{m}\n")).unwrap_or_default()
            ),
        )),
        _ => Err(format!(
            "error: pod {ns}/{} failed with unknown exit code\n",
            o.name
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn image_references_follow_the_distribution_grammar() {
        for ok in [
            "nginx",
            "nginx:1.27",
            "busybox:1.28",
            "registry.k8s.io/e2e-test-images/agnhost:2.53",
            "localhost:5000/app",
            "gcr.io/google-samples/hello-app:1.0",
            "nginx@sha256:abc",
        ] {
            assert!(valid_image(ok), "{ok}");
        }
        for bad in ["Nginx", "nginx:", "ng inx", "nginx:-x", "/nginx", "a//b"] {
            assert!(!valid_image(bad), "{bad}");
        }
    }
}
