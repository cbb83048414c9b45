//! Commands `kubectl exec` runs inside a container: the container shell and its applets
//! (node::sh) over the container's files (node::container_fs), the image's own programs
//! (curl/wget over the data plane, nslookup, redis-cli, ps), and the runtime's error for
//! binaries the image lacks.

use std::collections::BTreeMap;

use crate::node::container_fs;
use crate::node::cri::Container;
use crate::node::curl::{self, RunResult};
use crate::node::dns::{QType, Record};
use crate::node::images::parse;
use crate::node::kubelet_api::KubeletReply;
use crate::node::machine::Machine;
use crate::node::net::Source;
use crate::node::resolver::{self, Lookup};
use crate::node::sh::{FsError, Host, Shell, APPLETS};
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
        "redis" => &[("REDIS_DOWNLOAD_URL", "")],
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
        } else if *k == "REDIS_DOWNLOAD_URL" {
            format!(
                "http://download.redis.io/releases/redis-{}.tar.gz",
                crate::node::logs::redis_version(&image.tag)
            )
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

/// Runs `command` in container `c` on this machine (`kubectl exec`): the shell and its
/// applets for images that have one, the image's own programs otherwise.
pub fn exec(m: &mut Machine, c: &Container, command: &[String]) -> KubeletReply {
    let Some(sb) = m.runtime().sandboxes.get(&c.sandbox).map(|s| (**s).clone()) else {
        return KubeletReply::ExecFailed("container not found".into());
    };
    let Some(bin) = command.first().cloned() else {
        return KubeletReply::ExecFailed("Internal error occurred: error executing command in container: command must not be empty".into());
    };
    let name = bin.rsplit('/').next().unwrap_or("").to_string();
    if has(c, "sh") && APPLETS.contains(&name.as_str()) && (name != "bash" || has(c, "bash")) {
        let env = environment(c, &sb.name);
        let order: Vec<String> = env.iter().map(|(k, _)| k.clone()).collect();
        let vars: BTreeMap<String, String> = env
            .into_iter()
            .chain([("PWD".to_string(), "/".to_string())])
            .collect();
        let mut shell = Shell::new(vars, vec!["sh".into()])
            .coreutils(!busybox(c))
            .env_order(order);
        let mut host = ContainerHost {
            m,
            c: c.clone(),
            sb,
        };
        return KubeletReply::Exec(shell.run_argv(command, &mut host));
    }
    match program(m, c, &sb, command) {
        Some(r) => KubeletReply::Exec(r),
        None => oci_missing(c, &bin),
    }
}

fn has(c: &Container, bin: &str) -> bool {
    let repo = parse(&c.image).repo;
    let repo = repo.rsplit('/').next().unwrap_or("");
    match bin {
        "bash" => !matches!(
            repo,
            "busybox" | "curl" | "coredns" | "pause" | "agnhost" | "alpine"
        ),
        "sh" => !matches!(repo, "coredns" | "pause"),
        "mysql" => repo == "mysql",
        "psql" => repo == "postgres",
        "nginx" => repo == "nginx",
        "apachectl" => repo == "httpd",
        _ => false,
    }
}

/// One line typed into an interactive shell (`kubectl exec -it POD -- sh`): the session's
/// shell keeps its variables and directory from line to line until it runs `exit`.
pub fn exec_line(m: &mut Machine, c: &Container, line: &str, session: u64) -> KubeletReply {
    if !has(c, "sh") {
        return oci_missing(c, "sh");
    }
    let Some(mut host) = ContainerHost::new(m, &c.id) else {
        return KubeletReply::ExecFailed("container not found".into());
    };
    let mut shell = host
        .m
        .runtime_mut()
        .exec_sessions
        .remove(&session)
        .unwrap_or_else(|| host.shell(vec!["sh".into()]));
    let (stdout, stderr, code, elapsed) = shell.run_to_end(line, &mut host);
    if shell.resume() {
        host.m.runtime_mut().exec_sessions.insert(session, shell);
    }
    KubeletReply::Exec(RunResult {
        stdout,
        stderr,
        code,
        elapsed,
    })
}

/// busybox, and images built on alpine's busybox applets.
fn busybox(c: &Container) -> bool {
    matches!(
        parse(&c.image).repo.as_str(),
        "busybox" | "curlimages/curl" | "alpine"
    )
}

/// Images that ship Debian's dnsutils (dig, BIND's nslookup).
fn dnsutils(c: &Container) -> bool {
    parse(&c.image).repo.ends_with("jessie-dnsutils")
}

/// The image's own programs that are not shell applets: curl and wget over the data
/// plane, busybox nslookup, redis-cli, ps, and the servers' binaries.
fn program(
    m: &mut Machine,
    c: &Container,
    sb: &crate::node::cri::Sandbox,
    argv: &[String],
) -> Option<RunResult> {
    let name = argv[0].rsplit('/').next().unwrap_or("");
    let args = &argv[1..];
    let b = &c.behaviour;
    let agent = if parse(&c.image).repo == "curlimages/curl" {
        "curl/8.16.0"
    } else {
        "curl/7.88.1"
    };
    let src = m.source(sb, agent);
    Some(match name {
        "curl" if b.has_curl => curl::curl(m.net(), &src, args),
        "wget" if b.has_wget => {
            let src = Source {
                agent: "Wget".into(),
                ..src
            };
            curl::wget(m.net(), &src, args)
        }
        "nslookup" if busybox(c) => nslookup(m, &src, args),
        "nslookup" if dnsutils(c) => crate::node::dnsutils::nslookup(m.net(), &src, args),
        "dig" if dnsutils(c) => crate::node::dnsutils::dig(m.net(), &src, args),
        "redis-server" | "redis-cli" if args.iter().any(|a| a == "--version" || a == "-v") => {
            RunResult::out(format!(
                "{name} v={} sha=00000000:0 malloc=jemalloc-5.3.0 bits=64 build=a1b2c3d4e5f60718\n",
                crate::node::logs::redis_version(&parse(&c.image).tag)
            ))
        }
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
        "nginx" if has(c, name) && args.iter().any(|a| a == "-v" || a == "-V") => RunResult::err(
            0,
            format!(
                "nginx version: nginx/{}\n",
                crate::node::logs::nginx_version(&parse(&c.image).tag)
            ),
        ),
        "mysql" | "psql" | "nginx" | "apachectl" if has(c, name) => RunResult::default(),
        _ => return None,
    })
}

/// A container as the shell sees it: its files and its image's programs.
pub(crate) struct ContainerHost<'m, 'a> {
    m: &'m mut Machine<'a>,
    c: Container,
    sb: crate::node::cri::Sandbox,
}

impl<'m, 'a> ContainerHost<'m, 'a> {
    /// Container `id` of machine `m`, if it exists.
    pub(crate) fn new(m: &'m mut Machine<'a>, id: &str) -> Option<ContainerHost<'m, 'a>> {
        let c = (**m.runtime().containers.get(id)?).clone();
        let sb = (**m.runtime().sandboxes.get(&c.sandbox)?).clone();
        Some(ContainerHost { m, c, sb })
    }

    /// The shell already running as this container's main process, taken out.
    pub(crate) fn runtime_shell(&mut self, id: &str) -> Option<Shell> {
        self.m.runtime_mut().shells.remove(id)
    }

    /// The container's command and args.
    pub(crate) fn command(&self) -> Vec<String> {
        self.c.command.clone()
    }

    /// The shell a process of this container starts with: its environment, `$PWD`, and
    /// the messages of its image's tools.
    pub(crate) fn shell(&self, args: Vec<String>) -> Shell {
        let env = environment(&self.c, &self.sb.name);
        let order: Vec<String> = env.iter().map(|(k, _)| k.clone()).collect();
        let vars: BTreeMap<String, String> = env
            .into_iter()
            .chain([("PWD".to_string(), "/".to_string())])
            .collect();
        Shell::new(vars, args)
            .coreutils(!busybox(&self.c))
            .env_order(order)
    }

    fn refresh(&mut self) {
        if let Some(c) = self.m.runtime().containers.get(&self.c.id) {
            self.c.fs = c.fs.clone();
        }
    }
}

impl Host for ContainerHost<'_, '_> {
    fn now(&self) -> crate::time::Time {
        self.m.now()
    }
    fn hostname(&self) -> String {
        self.sb.name.clone()
    }
    fn read(&self, path: &str) -> Result<String, FsError> {
        if crate::node::prober::file_exists(&self.c, path, self.m.now()) {
            return Ok(String::new());
        }
        container_fs::read(self.m.os(), &self.c, &self.sb, path)
    }
    fn list(&self, path: &str) -> Result<Vec<String>, FsError> {
        container_fs::list(self.m.os(), &self.c, path)
    }
    fn write(&mut self, path: &str, text: &str, append: bool) -> Result<(), FsError> {
        let r = container_fs::write(self.m, &self.c.id, path, text, append);
        self.refresh();
        r
    }
    fn mkdir(&mut self, path: &str) -> Result<(), FsError> {
        let r = container_fs::mkdir(self.m, &self.c.id, path);
        self.refresh();
        r
    }
    fn program(&mut self, argv: &[String], _stdin: &str) -> Option<RunResult> {
        program(self.m, &self.c, &self.sb, argv)
    }
}

/// busybox `nslookup [-type=a|srv] NAME`: the first nameserver of the pod's resolv.conf,
/// the search path, and busybox's output for A, CNAME and SRV answers.
fn nslookup(m: &mut Machine, src: &Source, args: &[String]) -> RunResult {
    let usage = "BusyBox v1.37.0 (2024-09-26 21:31:42 UTC) multi-call binary.\n\nUsage: nslookup [-type=QUERY_TYPE] [-debug] HOST [DNS_SERVER]\n";
    let mut qtype = QType::A;
    let mut name = None;
    for a in args {
        let lower = a.to_ascii_lowercase();
        match lower.split_once('=') {
            Some(("-type" | "-query" | "-q" | "-t", t)) => match t {
                "a" => qtype = QType::A,
                "srv" => qtype = QType::Srv,
                _ => return RunResult::err(1, format!("nslookup: invalid query type \"{t}\"\n")),
            },
            _ if a.starts_with('-') => {}
            _ if name.is_none() => name = Some(a.clone()),
            _ => {}
        }
    }
    let Some(name) = name else {
        return RunResult::err(1, usage);
    };
    let server = resolver::server_of(m.net(), src);
    let head = format!("Server:\t\t{server}\nAddress:\t{server}:53\n\n");
    match resolver::lookup(m.net(), src, &name, qtype) {
        Lookup::Answer { records, .. } => {
            let mut out = head;
            for r in &records {
                out.push_str(&match r {
                    Record::A { name, ip } => format!("Name:\t{name}\nAddress: {ip}\n"),
                    Record::Cname { name, target } => {
                        format!("{name}\tcanonical name = {target}\n")
                    }
                    Record::Srv {
                        name,
                        priority,
                        weight,
                        port,
                        target,
                    } => format!("{name}\tservice = {priority} {weight} {port} {target}\n"),
                });
            }
            out.push('\n');
            RunResult::out(out)
        }
        Lookup::Timeout => RunResult {
            stdout: ";; connection timed out; no servers could be reached\n\n".into(),
            code: 1,
            elapsed: 10 * SECOND,
            ..RunResult::default()
        },
        Lookup::NxDomain { .. } | Lookup::Refused => RunResult {
            stdout: format!("{head}** server can't find {name}: NXDOMAIN\n\n"),
            code: 1,
            ..RunResult::default()
        },
    }
}
