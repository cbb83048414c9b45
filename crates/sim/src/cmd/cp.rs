//! `kubectl cp FILE POD:PATH [-c C]`: copies one of the page's files into a container.
//! kubectl streams a tar archive into `tar xf -` in the container; kubeloop writes the
//! file with the container's shell, so, like kubectl, it needs the image to have one.

use crate::cmd::kubectl::Kubectl;
use crate::node::kubelet_api::KubeletReply;

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
    let (pod, path) = match (remote(src), remote(dst)) {
        (None, Some(r)) => r,
        (Some(_), None) => {
            return k.error(
                "copying from a container into the page's files is not available in kubeloop yet",
            )
        }
        (Some(_), Some(_)) => {
            return k.error("one of src or dest must be a local file specification")
        }
        (None, None) => return k.error("one of src or dest must be a remote file specification"),
    };
    let Some(content) = k.sys.files.get(src.as_str()).cloned() else {
        return k.error(&format!("{src} doesn't exist in local filesystem"));
    };
    let name = src.rsplit('/').next().unwrap_or(src);
    let path = if path.ends_with('/') {
        format!("{path}{name}")
    } else {
        path
    };
    let script = format!("printf '%s' {} > {}", quote(&content), quote(&path));
    let command = vec!["sh".to_string(), "-c".to_string(), script];
    let (node, call) = match crate::cmd::logs::exec_call(&k, &pod, command).await {
        Ok(x) => x,
        Err(code) => return code,
    };
    match k.sys.kubelet(&node, call).await {
        Ok(KubeletReply::Exec(r)) if r.code == 0 => 0,
        Ok(KubeletReply::Exec(r)) => {
            k.sys.err(&r.stderr);
            k.sys
                .err(&format!("command terminated with exit code {}\n", r.code));
            r.code
        }
        Ok(KubeletReply::ExecFailed(e)) => k.error(&e),
        Ok(_) => 1,
        Err(e) => k.error(&e),
    }
}
