//! `kubectl cp FILE POD:PATH [-c C]` and `kubectl cp POD:PATH FILE`: copies one of the
//! page's files into a container, or a container's file into the page's files.
//! kubectl streams a tar archive into `tar xf -` in the container; kubeloop writes the
//! file with the container's shell, so, like kubectl, it needs the image to have one.

use crate::cmd::kubectl::Kubectl;
use crate::node::kubelet_api::{KubeletReply, RunResult};

/// `pod:path` (or `namespace/pod:path`) as kubectl splits a file spec; None for a local path.
fn remote(spec: &str) -> Option<(String, String)> {
    let (pod, path) = spec.split_once(':')?;
    let pod = pod.rsplit('/').next().unwrap_or(pod);
    (!pod.is_empty()).then(|| (pod.to_string(), path.to_string()))
}

fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

/// Runs `kubectl cp`.
pub async fn cp(k: Kubectl) -> i32 {
    let args = k.flags.args.clone();
    let [src, dst] = args.as_slice() else {
        return k.error("source and destination are required");
    };
    match (remote(src), remote(dst)) {
        (None, Some((pod, path))) => copy_to(&k, src, &pod, path).await,
        (Some((pod, path)), None) => copy_from(&k, &pod, &path, dst).await,
        (Some(_), Some(_)) => k.error("one of src or dest must be a local file specification"),
        (None, None) => k.error("one of src or dest must be a remote file specification"),
    }
}

/// `kubectl cp FILE POD:PATH`: writes the page's file with the container's shell.
async fn copy_to(k: &Kubectl, src: &str, pod: &str, path: String) -> i32 {
    let Some(content) = k.sys.files.get(src).cloned() else {
        return k.error(&format!("{src} doesn't exist in local filesystem"));
    };
    let name = src.rsplit('/').next().unwrap_or(src);
    let path = if path.ends_with('/') {
        format!("{path}{name}")
    } else {
        path
    };
    let script = format!("printf '%s' {} > {}", quote(&content), quote(&path));
    match exec_script(k, pod, script).await {
        Ok(r) if r.code == 0 => 0,
        Ok(r) => {
            k.sys.err(&r.stderr);
            k.sys
                .err(&format!("command terminated with exit code {}\n", r.code));
            r.code
        }
        Err(code) => code,
    }
}

/// `kubectl cp POD:PATH FILE`: reads the file with the container's shell (kubectl runs
/// `tar cf - PATH` there) and writes it into the page's files. A directory, a file
/// that is not there, and tar's note on an absolute path print as GNU tar prints them.
async fn copy_from(k: &Kubectl, pod: &str, path: &str, dst: &str) -> i32 {
    if path.is_empty() {
        return k.error("remote path can not be empty");
    }
    let base = path
        .trim_end_matches('/')
        .rsplit('/')
        .next()
        .unwrap_or(path);
    let name = match dst {
        "." | "./" => base.to_string(),
        d if d.ends_with('/') => format!("{d}{base}"),
        d => d.trim_start_matches("./").to_string(),
    };
    let script = format!(
        "if [ -d {p} ]; then exit 3; fi; cat {p} 2>/dev/null || exit 2",
        p = quote(path)
    );
    let leading = path.starts_with('/');
    let note = |k: &Kubectl| {
        if leading {
            k.sys.err("tar: Removing leading `/' from member names\n");
        }
    };
    let r = match exec_script(k, pod, script).await {
        Ok(r) => r,
        Err(code) => return code,
    };
    note(k);
    match r.code {
        0 => {
            k.sys.write_file(&name, &r.stdout);
            0
        }
        3 => k.error(&format!(
            "{path} is a directory; kubeloop copies single files from a container"
        )),
        _ => {
            k.sys.err(&format!(
                "tar: {path}: Cannot stat: No such file or directory\n\
                 tar: Exiting with failure status due to previous errors\n\
                 command terminated with exit code 2\n"
            ));
            2
        }
    }
}

/// Runs `script` with `sh -c` in the pod's container. Err: kubectl printed why, exit code.
async fn exec_script(k: &Kubectl, pod: &str, script: String) -> Result<RunResult, i32> {
    let command = vec!["sh".to_string(), "-c".to_string(), script];
    let (node, call) = crate::cmd::logs::exec_call(k, pod, command).await?;
    match k.sys.kubelet(&node, call).await {
        Ok(KubeletReply::Exec(r)) => Ok(r),
        Ok(KubeletReply::ExecFailed(e)) => Err(k.error(&e)),
        Ok(_) => Err(1),
        Err(e) => Err(k.error(&e)),
    }
}
