//! What containers write to stdout/stderr (the files under `/var/log/pods` that
//! `kubectl logs` and `crictl logs` read): each image's real startup lines, nginx/httpd
//! access lines for requests that reached them, and what they print when stopped.

use crate::node::cri::Container;
use crate::node::images::parse;
use crate::time::{Time, EPOCH_UNIX_MS};

/// How many lines a container's log keeps (older lines are rotated away).
pub const LOG_LINES: usize = 2000;

/// stdout or stderr.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stream {
    /// Standard output.
    Stdout,
    /// Standard error.
    Stderr,
}

/// One line of a container's log.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LogEntry {
    /// When it was written.
    pub at: Time,
    /// Which stream.
    pub stream: Stream,
    /// The text, without the newline.
    pub text: String,
}

fn ts(at: Time) -> k8s_openapi::jiff::Timestamp {
    k8s_openapi::jiff::Timestamp::from_millisecond(EPOCH_UNIX_MS + at as i64)
        .unwrap_or(k8s_openapi::jiff::Timestamp::UNIX_EPOCH)
}

pub(crate) fn out(at: Time, text: impl Into<String>) -> LogEntry {
    LogEntry {
        at,
        stream: Stream::Stdout,
        text: text.into(),
    }
}

pub(crate) fn err(at: Time, text: impl Into<String>) -> LogEntry {
    LogEntry {
        at,
        stream: Stream::Stderr,
        text: text.into(),
    }
}

/// The nginx release an image tag runs.
pub fn nginx_version(tag: &str) -> &str {
    let base = tag.split('-').next().unwrap_or("");
    if exact_version(base) {
        return base;
    }
    match base {
        "1.25" | "1.25.5" => "1.25.5",
        "1.26" | "1.26.3" => "1.26.3",
        "1.27" | "1.27.5" => "1.27.5",
        "1.27.3" => "1.27.3",
        "1.27.4" => "1.27.4",
        "1.28" | "1.28.0" | "stable" => "1.28.0",
        _ => "1.29.3",
    }
}

/// Whether an image tag names one release exactly (`1.14.2`, `6.0.5`): the image then
/// reports that version.
fn exact_version(base: &str) -> bool {
    let parts: Vec<&str> = base.split('.').collect();
    parts.len() == 3
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()))
}

/// The Redis release an image tag runs (`redis:6.0.5` is 6.0.5; untagged is 7.4.2).
pub fn redis_version(tag: &str) -> &str {
    let base = tag.split('-').next().unwrap_or("");
    if exact_version(base) {
        return base;
    }
    match base {
        "6" | "6.2" => "6.2.20",
        "7.2" => "7.2.11",
        "8" | "8.2" => "8.2.2",
        _ => "7.4.2",
    }
}

fn mysql_version(tag: &str) -> &str {
    let base = tag.split('-').next().unwrap_or("");
    if exact_version(base) {
        return base;
    }
    match base {
        "8.0" => "8.0.44",
        "8" | "8.4" | "lts" | "8.4.7" => "8.4.7",
        _ => "9.5.0",
    }
}

/// The lines a container writes while it starts, given when it started and its pod IP.
pub fn startup(c: &Container, pod_ip: &str, initialized: bool) -> Vec<LogEntry> {
    let Some(t0) = c.started else {
        return Vec::new();
    };
    if c.behaviour.script {
        // The shell prints for itself as it runs (node::script).
        return Vec::new();
    }
    let image = parse(&c.image);
    let repo = image.repo.rsplit('/').next().unwrap_or("");
    let up = c.listening_at().unwrap_or(t0);
    match repo {
        "nginx" => {
            let v = nginx_version(&image.tag);
            let alpine = image.tag.contains("alpine");
            let mut l: Vec<LogEntry> = [
                "/docker-entrypoint.sh: /docker-entrypoint.d/ is not empty, will attempt to perform configuration",
                "/docker-entrypoint.sh: Looking for shell scripts in /docker-entrypoint.d/",
                "/docker-entrypoint.sh: Launching /docker-entrypoint.d/10-listen-on-ipv6-by-default.sh",
                "10-listen-on-ipv6-by-default.sh: info: Getting the checksum of /etc/nginx/conf.d/default.conf",
                "10-listen-on-ipv6-by-default.sh: info: Enabled listen on IPv6 in /etc/nginx/conf.d/default.conf",
                "/docker-entrypoint.sh: Sourcing /docker-entrypoint.d/15-local-resolvers.envsh",
                "/docker-entrypoint.sh: Launching /docker-entrypoint.d/20-envsubst-on-templates.sh",
                "/docker-entrypoint.sh: Launching /docker-entrypoint.d/30-tune-worker-processes.sh",
                "/docker-entrypoint.sh: Configuration complete; ready for start up",
            ]
            .iter()
            .map(|s| out(t0, *s))
            .collect();
            let stamp = ts(up).strftime("%Y/%m/%d %H:%M:%S").to_string();
            let gcc = if alpine {
                "built by gcc 14.2.0 (Alpine 14.2.0) "
            } else {
                "built by gcc 12.2.0 (Debian 12.2.0-14+deb12u1) "
            };
            let mut notices = vec![
                "using the \"epoll\" event method".to_string(),
                format!("nginx/{v}"),
                gcc.trim_end().to_string(),
                "OS: Linux 6.1.0-28-amd64".to_string(),
                "getrlimit(RLIMIT_NOFILE): 1048576:1048576".to_string(),
                "start worker processes".to_string(),
            ];
            let workers = c.behaviour.processes.len().saturating_sub(1);
            for i in 0..workers {
                notices.push(format!("start worker process {}", 29 + i));
            }
            l.extend(
                notices
                    .into_iter()
                    .map(|n| err(up, format!("{stamp} [notice] 1#1: {n}"))),
            );
            l
        }
        "httpd" => {
            let warn = format!("AH00558: httpd: Could not reliably determine the server's fully qualified domain name, using {pod_ip}. Set the 'ServerName' directive globally to suppress this message");
            let stamp = ts(up).strftime("%a %b %d %H:%M:%S").to_string();
            let year = ts(up).strftime("%Y").to_string();
            let micros = (up % 1000) * 1000;
            vec![
                err(t0, warn.clone()),
                err(t0, warn),
                err(up, format!("[{stamp}.{micros:06} {year}] [mpm_event:notice] [pid 1:tid 1] AH00489: Apache/2.4.65 (Unix) configured -- resuming normal operations")),
                err(up, format!("[{stamp}.{micros:06} {year}] [core:notice] [pid 1:tid 1] AH00094: Command line: 'httpd -D FOREGROUND'")),
            ]
        }
        "redis" => {
            let version = redis_version(&image.tag);
            let stamp = |t: Time| {
                format!(
                    "{}.{:03}",
                    ts(t).strftime("%d %b %Y %H:%M:%S"),
                    t % 1000
                )
            };
            vec![
                out(t0, format!("1:C {} * oO0OoO0OoO0Oo Redis is starting oO0OoO0OoO0Oo", stamp(t0))),
                out(t0, format!("1:C {} * Redis version={version}, bits=64, commit=00000000, modified=0, pid=1, just started", stamp(t0))),
                out(t0, format!("1:C {} # Warning: no config file specified, using the default config. In order to specify a config file use redis-server /path/to/redis.conf", stamp(t0))),
                out(up, format!("1:M {} * monotonic clock: POSIX clock_gettime", stamp(up))),
                out(up, format!("1:M {} * Running mode=standalone, port=6379.", stamp(up))),
                out(up, format!("1:M {} * Server initialized", stamp(up))),
                out(up, format!("1:M {} * Ready to accept connections tcp", stamp(up))),
            ]
        }
        "mysql" => mysql(c, t0, up, &image.tag, initialized),
        "postgres" => postgres(c, t0, up),
        "coredns" => vec![
            out(up, ".:53"),
            out(up, "[INFO] plugin/reload: Running configuration SHA512 = 1b226df79860026c6a52e67daa10d7f0d57ec5b023288ec00c5e05f93523c894564e15b91770d3a07ae1cfbe861d15b37d4a0027e69c546ab112970993a3b03b"),
            out(up, "CoreDNS-1.12.1"),
            out(up, "linux/amd64, go1.24.1, 707c7c1"),
        ],
        "agnhost" => {
            let port = c.behaviour.ports.first().map_or(8080, |p| p.0);
            let hdr = crate::node::journal::klog_header(up, crate::node::journal::Level::Info, 1, "log.go:245");
            if port == 9376 {
                vec![err(up, format!("{hdr}Serving on port 9376."))]
            } else {
                vec![
                    err(up, format!("{hdr}Started HTTP server on port {port}")),
                    err(up, format!("{hdr}Started UDP server on port  8081")),
                ]
            }
        }
        "echoserver" => vec![
            out(t0, "Generating self-signed cert"),
            out(t0, "Generating a 2048 bit RSA private key"),
            out(t0, "writing new private key to '/certs/privateKey.key'"),
            out(t0, "-----"),
            out(up, "Starting nginx"),
        ],
        "gb-frontend" => {
            let warn = format!("AH00558: apache2: Could not reliably determine the server's fully qualified domain name, using {pod_ip}. Set the 'ServerName' directive globally to suppress this message");
            vec![err(t0, warn.clone()), err(t0, warn)]
        }
        "perl" => {
            // `perl -Mbignum=bpi -wle 'print bpi(N)'` prints π when it ends.
            let line = c.command.join(" ");
            let n = line
                .split("bpi(")
                .nth(1)
                .and_then(|r| r.split(')').next())
                .and_then(|n| n.trim().parse::<usize>().ok());
            let at = c.behaviour.exits.map_or(up, |(t, _, _)| t0 + t);
            n.filter(|_| line.contains("print"))
                .map(|n| vec![out(at, crate::node::pi::pi(n))])
                .unwrap_or_default()
        }
        _ => echoes(&c.command)
            .into_iter()
            .map(|s| expand_vars(&s, &c.env))
            .map(|s| {
                // `date` prints the container's clock (UTC).
                let s = if s == DATE {
                    ts(up).strftime("%a %b %e %H:%M:%S UTC %Y").to_string()
                } else {
                    s
                };
                out(up, s)
            })
            .collect(),
    }
}

/// The shell's `$VAR` and `${VAR}` expansion from the container's environment (unset
/// variables expand to nothing).
pub(crate) fn expand_vars(s: &str, env: &std::collections::BTreeMap<String, String>) -> String {
    let mut out = String::new();
    let mut rest = s;
    while let Some(i) = rest.find('$') {
        out.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        let (name, tail) = match after.strip_prefix('{') {
            Some(b) => match b.find('}') {
                Some(j) => (&b[..j], &b[j + 1..]),
                None => ("", after),
            },
            None => {
                let n = after
                    .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                    .unwrap_or(after.len());
                (&after[..n], &after[n..])
            }
        };
        if name.is_empty() {
            out.push('$');
        } else {
            out.push_str(env.get(name).map_or("", String::as_str));
        }
        rest = tail;
    }
    out.push_str(rest);
    out
}

/// The placeholder `echoes` gives for a `date` command (the caller knows the time).
const DATE: &str = "\u{0}date";

/// What `echo` (and `date`) commands in a shell command line print.
fn echoes(command: &[String]) -> Vec<String> {
    let line = command.join(" ");
    let mut v = Vec::new();
    for part in line.split([';', '&', '|']) {
        let p = part.trim();
        let p = ["sh -c ", "/bin/sh -c "]
            .iter()
            .find_map(|x| p.strip_prefix(x))
            .unwrap_or(p)
            .trim();
        if p == "date" {
            v.push(DATE.to_string());
        } else if let Some(rest) = p.strip_prefix("echo ") {
            v.push(
                rest.trim()
                    .trim_matches(|c| c == '\'' || c == '"')
                    .to_string(),
            );
        } else if p == "echo" {
            v.push(String::new());
        }
    }
    v
}

fn mysql(c: &Container, t0: Time, up: Time, tag: &str, initialized: bool) -> Vec<LogEntry> {
    let v = mysql_version(tag);
    let note = |t: Time, m: &str| {
        out(
            t,
            format!(
                "{}+00:00 [Note] [Entrypoint]: {m}",
                ts(t).strftime("%Y-%m-%d %H:%M:%S")
            ),
        )
    };
    let started = format!("Entrypoint script for MySQL Server {v}-1.el9 started.");
    let mut l = vec![
        note(t0, &started),
        note(t0, "Switching to dedicated user 'mysql'"),
        note(t0, &started),
    ];
    if let Some((after, 1, _)) = c.behaviour.exits {
        let at = t0 + after;
        let stamp = ts(at).strftime("%Y-%m-%d %H:%M:%S").to_string();
        l.push(err(at, format!("{stamp}+00:00 [ERROR] [Entrypoint]: Database is uninitialized and password option is not specified")));
        for s in [
            "    You need to specify one of the following as an environment variable:",
            "    - MYSQL_ROOT_PASSWORD",
            "    - MYSQL_ALLOW_EMPTY_PASSWORD",
            "    - MYSQL_RANDOM_ROOT_PASSWORD",
        ] {
            l.push(err(at, s));
        }
        return l;
    }
    let server = |t: Time, m: &str| {
        err(
            t,
            format!(
                "{}.{:06}Z 0 {m}",
                ts(t).strftime("%Y-%m-%dT%H:%M:%S"),
                (t % 1000) * 1000
            ),
        )
    };
    if !initialized {
        let mid = t0 + (up - t0) / 2;
        l.push(note(t0, "Initializing database files"));
        l.push(server(
            t0,
            "[System] [MY-015017] [Server] MySQL Server Initialization - start.",
        ));
        l.push(server(
            mid,
            "[System] [MY-015018] [Server] MySQL Server Initialization - end.",
        ));
        l.push(note(mid, "Database files initialized"));
        l.push(note(mid, "Starting temporary server"));
        l.push(note(mid, "Temporary server started."));
        if let Some(db) = c.env.get("MYSQL_DATABASE").filter(|d| !d.is_empty()) {
            l.push(note(mid, &format!("Creating database {db}")));
        }
        l.push(note(up, "Stopping temporary server"));
        l.push(note(up, "Temporary server stopped"));
        l.push(note(up, "MySQL init process done. Ready for start up."));
    }
    l.push(server(
        up,
        "[System] [MY-015015] [Server] MySQL Server - start.",
    ));
    l.push(server(
        up,
        &format!(
            "[System] [MY-010116] [Server] /usr/sbin/mysqld (mysqld {v}) starting as process 1"
        ),
    ));
    l.push(server(up, &format!("[System] [MY-010931] [Server] /usr/sbin/mysqld: ready for connections. Version: '{v}'  socket: '/var/run/mysqld/mysqld.sock'  port: 3306  MySQL Community Server - GPL.")));
    l
}

fn postgres(c: &Container, t0: Time, up: Time) -> Vec<LogEntry> {
    if let Some((after, 1, _)) = c.behaviour.exits {
        let at = t0 + after;
        return [
            "Error: Database is uninitialized and superuser password is not specified.",
            "       You must specify POSTGRES_PASSWORD to a non-empty value for the",
            "       superuser. For example, \"-e POSTGRES_PASSWORD=password\" on \"docker run\".",
            "",
            "       You may also use \"POSTGRES_HOST_AUTH_METHOD=trust\" to allow all",
            "       connections without a password. This is *not* recommended.",
            "",
            "       See PostgreSQL documentation about \"trust\":",
            "       https://www.postgresql.org/docs/current/auth-trust.html",
        ]
        .iter()
        .map(|s| err(at, *s))
        .collect();
    }
    let stamp = format!(
        "{}.{:03} UTC",
        ts(up).strftime("%Y-%m-%d %H:%M:%S"),
        up % 1000
    );
    vec![
        out(t0, "The files belonging to this database system will be owned by user \"postgres\"."),
        out(t0, "This user must also own the server process."),
        out(up, "PostgreSQL init process complete; ready for start up."),
        err(up, format!("{stamp} [1] LOG:  starting PostgreSQL 17.6 (Debian 17.6-1.pgdg12+1) on x86_64-pc-linux-gnu, compiled by gcc (Debian 12.2.0-14+deb12u1) 12.2.0, 64-bit")),
        err(up, format!("{stamp} [1] LOG:  listening on IPv4 address \"0.0.0.0\", port 5432")),
        err(up, format!("{stamp} [1] LOG:  database system is ready to accept connections")),
    ]
}

/// What a container prints when it gets its stop signal (nginx's graceful shutdown).
pub fn on_stop(c: &Container, at: Time) -> Vec<LogEntry> {
    let repo = parse(&c.image).repo;
    if repo.rsplit('/').next() != Some("nginx") || c.behaviour.on_sigterm.is_none() {
        return Vec::new();
    }
    let stamp = ts(at).strftime("%Y/%m/%d %H:%M:%S").to_string();
    let workers = c.behaviour.processes.len().saturating_sub(1);
    let mut l = vec![err(
        at,
        format!("{stamp} [notice] 1#1: signal 3 (SIGQUIT) received, shutting down"),
    )];
    for i in 0..workers {
        let pid = 29 + i;
        l.push(err(
            at,
            format!("{stamp} [notice] {pid}#{pid}: gracefully shutting down"),
        ));
        l.push(err(at, format!("{stamp} [notice] {pid}#{pid}: exiting")));
        l.push(err(at, format!("{stamp} [notice] {pid}#{pid}: exit")));
    }
    for i in 0..workers {
        let pid = 29 + i;
        l.push(err(
            at,
            format!("{stamp} [notice] 1#1: signal 17 (SIGCHLD) received from {pid}"),
        ));
        l.push(err(
            at,
            format!("{stamp} [notice] 1#1: worker process {pid} exited with code 0"),
        ));
    }
    l.push(err(at, format!("{stamp} [notice] 1#1: exit")));
    l
}

/// An access-log line for an HTTP request the container answered, if it logs them.
pub fn access(
    c: &Container,
    at: Time,
    client: &str,
    path: &str,
    status: u16,
    bytes: usize,
    agent: &str,
) -> Option<LogEntry> {
    let repo = parse(&c.image).repo;
    let when = ts(at).strftime("%d/%b/%Y:%H:%M:%S +0000").to_string();
    match repo.rsplit('/').next() {
        Some("nginx") => Some(out(
            at,
            format!("{client} - - [{when}] \"GET {path} HTTP/1.1\" {status} {bytes} \"-\" \"{agent}\" \"-\""),
        )),
        Some("httpd") | Some("gb-frontend") => Some(out(
            at,
            format!("{client} - - [{when}] \"GET {path} HTTP/1.1\" {status} {bytes}"),
        )),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shell_variables_expand_from_the_environment() {
        let env: std::collections::BTreeMap<String, String> =
            [("JOB_COMPLETION_INDEX".to_string(), "2".to_string())]
                .into_iter()
                .collect();
        assert_eq!(
            expand_vars("index $JOB_COMPLETION_INDEX!", &env),
            "index 2!"
        );
        assert_eq!(
            expand_vars("${JOB_COMPLETION_INDEX}x $UNSET.", &env),
            "2x ."
        );
        assert_eq!(expand_vars("cost: $", &env), "cost: $");
    }

    #[test]
    fn echo_segments_are_printed() {
        let cmd = vec![
            "sh".into(),
            "-c".into(),
            "echo hello; sleep 5 && echo 'bye now'".into(),
        ];
        assert_eq!(echoes(&cmd), ["hello", "bye now"]);
    }

    #[test]
    fn nginx_versions_follow_tags() {
        assert_eq!(nginx_version("1.27"), "1.27.5");
        assert_eq!(nginx_version("1.27-alpine"), "1.27.5");
        assert_eq!(nginx_version("latest"), "1.29.3");
        assert_eq!(nginx_version("1.14.2"), "1.14.2");
        assert_eq!(redis_version("6.0.5"), "6.0.5");
        assert_eq!(redis_version("latest"), "7.4.2");
    }
}
