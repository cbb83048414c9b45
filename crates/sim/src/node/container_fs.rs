//! A container's filesystem as its processes see it: the image's own files (the few a
//! learner looks at), the files the kubelet manages (`/etc/hosts`, `resolv.conf`), the
//! pod's volumes on the machine (an emptyDir is shared by the pod's containers; ConfigMap
//! and Secret volumes are read-only), and the container's writable layer.

use crate::node::cri::{Container, Sandbox};
use crate::node::images::parse;
use crate::node::journal::NodeOs;
use crate::node::machine::Machine;
use crate::node::sh::FsError;

/// The file the image or the kubelet puts at `path`, if any.
pub fn image_file(c: &Container, sb: &Sandbox, path: &str) -> Option<String> {
    let repo = parse(&c.image).repo;
    Some(match path {
        "/etc/resolv.conf" => sb.dns.resolv_conf(),
        "/etc/hostname" => format!("{}\n", sb.name),
        "/etc/hosts" => format!("# Kubernetes-managed hosts file.\n127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\nfe00::0\tip6-localnet\nfe00::0\tip6-mcastprefix\nfe00::1\tip6-allnodes\nfe00::2\tip6-allrouters\n{}\t{}\n", sb.ip, sb.name),
        "/usr/share/nginx/html/index.html" if repo == "nginx" => crate::node::http::NGINX_WELCOME.to_string(),
        "/usr/local/apache2/htdocs/index.html" if repo == "httpd" => crate::node::http::HTTPD_WORKS.to_string(),
        "/var/run/secrets/kubernetes.io/serviceaccount/namespace" => sb.namespace.clone(),
        "/dev/null" | "/dev/zero" => String::new(),
        _ => return None,
    })
}

/// The entries the image has in directory `path`, if it is one of the image's own.
pub fn image_dir(c: &Container, path: &str) -> Option<Vec<String>> {
    let repo = parse(&c.image).repo;
    let v: &[&str] = match path.trim_end_matches('/') {
        "" => &[
            "bin", "dev", "etc", "home", "lib", "media", "mnt", "opt", "proc", "root", "run",
            "sbin", "srv", "sys", "tmp", "usr", "var",
        ],
        "/etc" => &["hostname", "hosts", "resolv.conf"],
        "/dev" => &[
            "null", "random", "stderr", "stdin", "stdout", "tty", "urandom", "zero",
        ],
        "/tmp" | "/root" | "/home" | "/mnt" | "/opt" | "/srv" | "/var" | "/usr" | "/var/run"
        | "/run" => &[],
        "/etc/nginx" if repo == "nginx" => &[
            "conf.d",
            "fastcgi_params",
            "mime.types",
            "modules",
            "nginx.conf",
            "scgi_params",
            "uwsgi_params",
        ],
        "/usr/share/nginx/html" if repo == "nginx" => &["50x.html", "index.html"],
        "/usr/local/apache2/htdocs" if repo == "httpd" => &["index.html"],
        "/var/run/secrets/kubernetes.io/serviceaccount" => &["ca.crt", "namespace", "token"],
        _ => return None,
    };
    Some(v.iter().map(|s| s.to_string()).collect())
}

/// Where `path` lives: under a volume mount (the machine's host path, read-only or not)
/// or in the container itself.
enum Place {
    Volume(String, bool),
    Own,
}

fn place(c: &Container, path: &str) -> Place {
    let hit = c
        .mounts
        .iter()
        .filter(|(mp, _)| path == mp || path.starts_with(&format!("{}/", mp.trim_end_matches('/'))))
        .max_by_key(|(mp, _)| mp.len());
    match hit {
        None => Place::Own,
        Some((mp, host)) => {
            let rest = path[mp.len()..].trim_start_matches('/');
            let ro = host.contains("kubernetes.io~configmap")
                || host.contains("kubernetes.io~secret")
                || host.contains("kubernetes.io~projected");
            let full = if rest.is_empty() {
                host.clone()
            } else {
                format!("{host}/{rest}")
            };
            Place::Volume(full, ro)
        }
    }
}

/// Reads a file in container `c` on the machine whose disk is `os`.
pub fn read(os: &NodeOs, c: &Container, sb: &Sandbox, path: &str) -> Result<String, FsError> {
    match place(c, path) {
        Place::Volume(host, _) => match os.files.get(&host) {
            Some(t) => Ok(t.clone()),
            None if !os.dir_entries(&host).is_empty() || os.dirs.contains_key(&host) => {
                Err(FsError::IsDir)
            }
            None => Err(FsError::NotFound),
        },
        Place::Own => {
            if let Some(t) = c.fs.get(path) {
                return Ok(t.clone());
            }
            if c.fs.contains_key(&format!("{path}/")) || image_dir(c, path).is_some() {
                return Err(FsError::IsDir);
            }
            image_file(c, sb, path).ok_or(FsError::NotFound)
        }
    }
}

/// Lists a directory in the container.
pub fn list(os: &NodeOs, c: &Container, path: &str) -> Result<Vec<String>, FsError> {
    let path = if path.len() > 1 {
        path.trim_end_matches('/')
    } else {
        path
    };
    let mut names: Vec<String> = match place(c, path) {
        Place::Volume(host, _) => {
            if os.files.contains_key(&host) {
                return Err(FsError::NotDir);
            }
            os.dir_entries(&host)
        }
        Place::Own => {
            if c.fs.contains_key(path) {
                return Err(FsError::NotDir);
            }
            let base = image_dir(c, path);
            let own = own_entries(c, path);
            if base.is_none() && own.is_empty() && !c.fs.contains_key(&format!("{path}/")) {
                return Err(FsError::NotFound);
            }
            base.unwrap_or_default().into_iter().chain(own).collect()
        }
    };
    // Mount points directly under this directory.
    let prefix = if path == "/" {
        "/".to_string()
    } else {
        format!("{path}/")
    };
    for (mp, _) in &c.mounts {
        if let Some(rest) = mp.strip_prefix(&prefix) {
            if let Some(first) = rest.split('/').next().filter(|s| !s.is_empty()) {
                names.push(first.to_string());
            }
        }
    }
    names.sort();
    names.dedup();
    Ok(names)
}

fn own_entries(c: &Container, dir: &str) -> Vec<String> {
    let prefix = if dir == "/" {
        "/".to_string()
    } else {
        format!("{dir}/")
    };
    c.fs.keys()
        .filter_map(|p| p.strip_prefix(&prefix))
        .filter_map(|r| r.split('/').next())
        .filter(|s| !s.is_empty())
        .map(String::from)
        .collect()
}

/// Writes a file in container `id`: into its volume on the machine or its own layer.
pub fn write(
    m: &mut Machine,
    id: &str,
    path: &str,
    text: &str,
    append: bool,
) -> Result<(), FsError> {
    let Some(c) = m.runtime().containers.get(id) else {
        return Err(FsError::NotFound);
    };
    let parent = path
        .rsplit_once('/')
        .map_or("/", |(d, _)| if d.is_empty() { "/" } else { d })
        .to_string();
    match place(c, path) {
        Place::Volume(_, true) => Err(FsError::ReadOnly),
        Place::Volume(host, false) => {
            m.write_file(&host, text, append);
            Ok(())
        }
        Place::Own => {
            if list(m.os(), c, &parent).is_err() {
                return Err(FsError::NotFound);
            }
            let c = m
                .runtime_mut()
                .containers
                .get_mut(id)
                .map(std::sync::Arc::make_mut)
                .ok_or(FsError::NotFound)?;
            let f = c.fs.entry(path.to_string()).or_default();
            if !append {
                f.clear();
            }
            f.push_str(text);
            Ok(())
        }
    }
}

/// Creates a directory in container `id`.
pub fn mkdir(m: &mut Machine, id: &str, path: &str) -> Result<(), FsError> {
    let Some(c) = m.runtime().containers.get(id) else {
        return Err(FsError::NotFound);
    };
    match place(c, path) {
        Place::Volume(_, true) => Err(FsError::ReadOnly),
        Place::Volume(host, false) => {
            m.make_dir(&host);
            Ok(())
        }
        Place::Own => {
            let c = m
                .runtime_mut()
                .containers
                .get_mut(id)
                .map(std::sync::Arc::make_mut)
                .ok_or(FsError::NotFound)?;
            c.fs.insert(format!("{}/", path.trim_end_matches('/')), String::new());
            Ok(())
        }
    }
}

/// What a web server with document root `root` in container `c` finds at URL `path`: the
/// file, or None when its document root is the image's own (the image's default page).
/// A document root on a volume answers from the volume: `Err(true)` for a missing index
/// (403, no directory listing), `Err(false)` for a missing file (404).
pub fn served(
    os: &NodeOs,
    c: &Container,
    sb: &Sandbox,
    root: &str,
    path: &str,
) -> Option<Result<String, bool>> {
    let rel = if path.ends_with('/') {
        format!("{path}index.html")
    } else {
        path.to_string()
    };
    let file = format!("{root}{rel}");
    let on_volume = matches!(place(c, &file), Place::Volume(..));
    let own = c.fs.contains_key(&file);
    if !on_volume && !own {
        return None;
    }
    Some(match read(os, c, sb, &file) {
        Ok(t) => Ok(t),
        Err(_) => Err(path.ends_with('/')),
    })
}
