//! Commands `kubectl exec` runs inside a container: curl/wget over the data plane, cat
//! and ls of the files a pod has (resolv.conf, hosts, mounted ConfigMaps and Secrets),
//! env, hostname, nslookup, and the runtime's error for binaries the image lacks.

use std::net::Ipv4Addr;

use crate::node::cri::Container;
use crate::node::curl::{self, RunResult};
use crate::node::images::parse;
use crate::node::kubelet_api::KubeletReply;
use crate::node::machine::Machine;
use crate::node::net::{self, Fetch, Source, CLUSTER_DNS};
use crate::time::SECOND;

/// The environment a container's processes see, in the order `env` prints it.
pub fn environment(c: &Container, pod_name: &str) -> Vec<(String, String)> {
    let mut v = vec![
        (
            "PATH".to_string(),
            "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin".to_string(),
        ),
        ("HOSTNAME".to_string(), pod_name.to_string()),
    ];
    let image = parse(&c.image);
    let repo = image.repo.rsplit('/').next().unwrap_or("");
    let image_env: &[(&str, &str)] = match repo {
        "nginx" => &[
            ("NGINX_VERSION", ""),
            ("NJS_VERSION", "0.8.10"),
            ("NJS_RELEASE", "1~bookworm"),
            ("PKG_RELEASE", "1~bookworm"),
            ("DYNPKG_RELEASE", "1~bookworm"),
        ],
        "httpd" => &[
            ("HTTPD_PREFIX", "/usr/local/apache2"),
            ("HTTPD_VERSION", "2.4.65"),
        ],
        "redis" => &[(
            "REDIS_DOWNLOAD_URL",
            "http://download.redis.io/releases/redis-7.4.2.tar.gz",
        )],
        "mysql" => &[
            ("GOSU_VERSION", "1.17"),
            ("MYSQL_MAJOR", "8.4"),
            ("MYSQL_VERSION", "8.4.7-1.el9"),
            ("MYSQL_SHELL_VERSION", "8.4.7-1.el9"),
        ],
        "postgres" => &[
            ("GOSU_VERSION", "1.17"),
            ("LANG", "en_US.utf8"),
            ("PG_MAJOR", "17"),
            ("PGDATA", "/var/lib/postgresql/data"),
        ],
        _ => &[],
    };
    for (k, val) in image_env {
        let val = if *k == "NGINX_VERSION" {
            crate::node::logs::nginx_version(&image.tag).to_string()
        } else {
            val.to_string()
        };
        v.push((k.to_string(), val));
    }
    let links: Vec<String> = crate::node::volumes::service_links()
        .into_iter()
        .map(|(k, _)| k)
        .collect();
    let mut own: Vec<(String, String)> = c
        .env
        .iter()
        .filter(|(k, _)| !links.contains(k))
        .map(|(k, x)| (k.clone(), x.clone()))
        .collect();
    own.sort();
    v.extend(own);
    for k in links {
        if let Some(val) = c.env.get(&k) {
            v.push((k, val.clone()));
        }
    }
    v.push(("HOME".into(), "/root".into()));
    v
}

fn oci_missing(c: &Container, bin: &str) -> KubeletReply {
    let why = if bin.starts_with('/') {
        format!("stat {bin}: no such file or directory")
    } else {
        "executable file not found in $PATH".to_string()
    };
    let exec_id = format!(
        "{:016x}{:016x}",
        crate::rng::fnv1a(c.id.as_bytes()),
        crate::rng::fnv1a(bin.as_bytes())
    );
    KubeletReply::ExecFailed(format!(
        "Internal error occurred: error executing command in container: failed to exec in container: failed to start exec \"{exec_id}{exec_id}\": OCI runtime exec failed: exec failed: unable to start container process: exec: \"{bin}\": {why}: unknown"
    ))
}

/// The contents of a file under one of the container's volume mounts, read from the
/// machine's filesystem where the kubelet wrote the volume (a ConfigMap's or a Secret's
/// keys): `Ok(text)` for a file, `Err(entries)` for a directory.
fn volume_file(m: &Machine, c: &Container, path: &str) -> Option<Result<String, Vec<String>>> {
    let (mount_path, host_path) = c
        .mounts
        .iter()
        .find(|(mp, _)| path == mp || path.starts_with(&format!("{mp}/")))?;
    let rel = path
        .strip_prefix(mount_path.as_str())
        .unwrap_or("")
        .trim_start_matches('/');
    let host = if rel.is_empty() {
        host_path.clone()
    } else {
        format!("{host_path}/{rel}")
    };
    let fs = m.os();
    if let Some(text) = fs.files.get(&host) {
        return Some(Ok(text.clone()));
    }
    let entries = fs.dir_entries(&host);
    (rel.is_empty() || !entries.is_empty()).then_some(Err(entries))
}

/// Runs `command` in container `c` on node `n`.
pub fn exec(m: &mut Machine, c: &Container, command: &[String]) -> KubeletReply {
    let n = m.node();
    let Some(sb) = m.runtime().sandboxes.get(&c.sandbox).cloned() else {
        return KubeletReply::ExecFailed("container not found".into());
    };
    let argv: Vec<String> = match command {
        [sh, flag, script] if (sh.ends_with("sh") || sh.ends_with("bash")) && flag == "-c" => {
            crate::cmd::tokenize(script).unwrap_or_default()
        }
        _ => command.to_vec(),
    };
    let Some(bin) = argv.first().cloned() else {
        return KubeletReply::ExecFailed("Internal error occurred: error executing command in container: command must not be empty".into());
    };
    let name = bin.rsplit('/').next().unwrap_or("").to_string();
    let args = &argv[1..];
    let b = &c.behaviour;
    // busybox, and images built on alpine's busybox applets.
    let busybox = matches!(parse(&c.image).repo.as_str(), "busybox" | "curlimages/curl");
    let src = Source {
        node: n,
        ip: sb.ip.parse().unwrap_or(Ipv4Addr::UNSPECIFIED),
        pod: Some((sb.namespace.clone(), sb.name.clone())),
        agent: if parse(&c.image).repo == "curlimages/curl" {
            "curl/8.16.0".into()
        } else {
            "curl/7.88.1".into()
        },
    };
    let r = match name.as_str() {
        "curl" if b.has_curl => curl::curl(m.net(), &src, args),
        "wget" if b.has_wget => {
            let src = Source {
                agent: "Wget".into(),
                ..src
            };
            curl::wget(m.net(), &src, args)
        }
        "env" | "printenv" => {
            let env = environment(c, &sb.name);
            match args.first() {
                Some(k) => match env.iter().find(|(x, _)| x == k) {
                    Some((_, v)) => RunResult::out(format!("{v}\n")),
                    None => RunResult {
                        code: 1,
                        ..RunResult::default()
                    },
                },
                None => RunResult::out(
                    env.iter()
                        .map(|(k, v)| format!("{k}={v}\n"))
                        .collect::<String>(),
                ),
            }
        }
        "hostname" => RunResult::out(format!("{}\n", sb.name)),
        "echo" => RunResult::out(format!("{}\n", args.join(" "))),
        "true" | ":" => RunResult::default(),
        "false" => RunResult {
            code: 1,
            ..RunResult::default()
        },
        "sleep" => RunResult {
            elapsed: args
                .first()
                .and_then(|s| s.parse::<u64>().ok())
                .unwrap_or(0)
                * SECOND,
            ..RunResult::default()
        },
        "id" => RunResult::out("uid=0(root) gid=0(root) groups=0(root)\n"),
        "cat" => cat(m, c, &sb, args, busybox),
        "ls" => ls(m, c, args, busybox),
        "nslookup" if busybox => nslookup(m, &src, args),
        "redis-cli" if parse(&c.image).repo == "redis" => RunResult::out("PONG\n"),
        "ps" => RunResult::out(
            std::iter::once("PID   USER     TIME  COMMAND\n".to_string())
                .chain(b.processes.iter().enumerate().map(|(i, p)| {
                    format!(
                        "{:>5} {:<8} 0:00 {}\n",
                        if i == 0 { 1 } else { 28 + i },
                        if p.user == "root" { "root" } else { p.user },
                        p.cmd
                    )
                }))
                .collect::<String>(),
        ),
        "sh" | "bash" | "mysql" | "psql" | "nginx" | "apachectl" if has(c, &name) => {
            RunResult::default()
        }
        _ => return oci_missing(c, &bin),
    };
    KubeletReply::Exec(r)
}

fn has(c: &Container, bin: &str) -> bool {
    let repo = parse(&c.image).repo;
    let repo = repo.rsplit('/').next().unwrap_or("");
    match bin {
        "bash" => !matches!(repo, "busybox" | "curl" | "coredns" | "pause" | "agnhost"),
        "sh" => !matches!(repo, "coredns" | "pause"),
        "mysql" => repo == "mysql",
        "psql" => repo == "postgres",
        "nginx" => repo == "nginx",
        "apachectl" => repo == "httpd",
        _ => false,
    }
}

fn cat(
    m: &Machine,
    c: &Container,
    sb: &crate::node::cri::Sandbox,
    args: &[String],
    busybox: bool,
) -> RunResult {
    let mut out = String::new();
    for f in args.iter().filter(|a| !a.starts_with('-')) {
        let text = match f.as_str() {
            "/etc/resolv.conf" => Some(format!("search {ns}.svc.cluster.local svc.cluster.local cluster.local\nnameserver {CLUSTER_DNS}\noptions ndots:5\n", ns = sb.namespace)),
            "/etc/hostname" => Some(format!("{}\n", sb.name)),
            "/etc/hosts" => Some(format!("# Kubernetes-managed hosts file.\n127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\nfe00::0\tip6-localnet\nfe00::0\tip6-mcastprefix\nfe00::1\tip6-allnodes\nfe00::2\tip6-allrouters\n{}\t{}\n", sb.ip, sb.name)),
            "/usr/share/nginx/html/index.html" if parse(&c.image).repo == "nginx" => Some(crate::node::http::NGINX_WELCOME.to_string()),
            "/usr/local/apache2/htdocs/index.html" if parse(&c.image).repo == "httpd" => Some(crate::node::http::HTTPD_WORKS.to_string()),
            p if crate::node::prober::file_exists(c, p, m.now()) => Some(String::new()),
            p => match volume_file(m, c, p) {
                Some(Ok(t)) => Some(t),
                Some(Err(_)) => {
                    return RunResult::err(1, format!("cat: {}{p}{}: Is a directory\n", if busybox { "read error: " } else { "" }, ""));
                }
                None => None,
            },
        };
        match text {
            Some(t) => out.push_str(&t),
            None => {
                let msg = if busybox {
                    format!("cat: can't open '{f}': No such file or directory\n")
                } else {
                    format!("cat: {f}: No such file or directory\n")
                };
                return RunResult {
                    stdout: out,
                    stderr: msg,
                    code: 1,
                    elapsed: 0,
                };
            }
        }
    }
    RunResult::out(out)
}

fn ls(m: &Machine, c: &Container, args: &[String], busybox: bool) -> RunResult {
    let path = args
        .iter()
        .find(|a| !a.starts_with('-'))
        .map_or("/", String::as_str);
    let entries: Option<Vec<String>> = match path.trim_end_matches('/') {
        "" => Some("bin boot dev docker-entrypoint.d docker-entrypoint.sh etc home lib lib64 media mnt opt proc root run sbin srv sys tmp usr var".split(' ').map(String::from).collect()),
        "/etc/nginx" if parse(&c.image).repo == "nginx" => Some(vec!["conf.d".into(), "fastcgi_params".into(), "mime.types".into(), "modules".into(), "nginx.conf".into(), "scgi_params".into(), "uwsgi_params".into()]),
        "/usr/share/nginx/html" if parse(&c.image).repo == "nginx" => Some(vec!["50x.html".into(), "index.html".into()]),
        "/var/run/secrets/kubernetes.io/serviceaccount" => Some(vec!["ca.crt".into(), "namespace".into(), "token".into()]),
        p => match volume_file(m, c, p) {
            Some(Err(keys)) => Some(keys),
            Some(Ok(_)) => Some(vec![p.to_string()]),
            None => c.mounts.iter().any(|(m, _)| m == p).then(Vec::new),
        },
    };
    match entries {
        Some(e) => RunResult::out(e.iter().map(|x| format!("{x}\n")).collect::<String>()),
        None => RunResult::err(
            if busybox { 1 } else { 2 },
            if busybox {
                format!("ls: {path}: No such file or directory\n")
            } else {
                format!("ls: cannot access '{path}': No such file or directory\n")
            },
        ),
    }
}

fn nslookup(m: &mut Machine, src: &Source, args: &[String]) -> RunResult {
    let Some(name) = args.iter().find(|a| !a.starts_with('-')) else {
        return RunResult::err(1, "BusyBox v1.37.0 (2024-09-26 21:31:42 UTC) multi-call binary.\n\nUsage: nslookup [-type=QUERY_TYPE] [-debug] HOST [DNS_SERVER]\n");
    };
    let head = format!("Server:\t\t{CLUSTER_DNS}\nAddress:\t{CLUSTER_DNS}:53\n\n");
    let (r, dns) = net::resolve(m.net(), src, name);
    match (r, dns) {
        (Ok(ip), Some((fqdn, _, _))) => {
            RunResult::out(format!("{head}Name:\t{fqdn}\nAddress: {ip}\n\n"))
        }
        (Ok(ip), None) => RunResult::out(format!("{head}Name:\t{name}\nAddress: {ip}\n\n")),
        (Err(Fetch::Timeout), _) => RunResult {
            stdout: ";; connection timed out; no servers could be reached\n\n".into(),
            code: 1,
            elapsed: 10 * SECOND,
            ..RunResult::default()
        },
        (Err(_), _) => RunResult {
            stdout: format!("{head}** server can't find {name}: NXDOMAIN\n\n"),
            code: 1,
            ..RunResult::default()
        },
    }
}
