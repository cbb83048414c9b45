//! How a container behaves once started: what it listens on, when it is up, how it exits,
//! how it answers SIGTERM, what `ps` and `kubectl top` see, plus the documented
//! `kubeloop.dev/behavior` annotation that makes it crash, start slowly or go unready.

use std::collections::BTreeMap;

use crate::node::images::ImageRef;
use crate::time::{parse_duration, Time, SECOND};

/// Durations beyond this (ten years) are treated as forever, so timers never overflow.
pub const FOREVER: Time = 10 * 365 * 24 * 3600 * SECOND;

/// The annotation that tunes every container of a pod (`crash-after=5s,start-delay=20s`).
pub const BEHAVIOR_ANNOTATION: &str = "kubeloop.dev/behavior";

/// What answers on a port.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Proto {
    /// An HTTP server of this flavour.
    Http(Server),
    /// A TCP service that does not speak HTTP (redis, mysql, postgres).
    Tcp,
    /// DNS over UDP and TCP (CoreDNS).
    Dns,
}

/// HTTP servers the catalog knows, each with its real default pages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Server {
    /// nginx: welcome page, access log lines.
    Nginx,
    /// Apache httpd: "It works!".
    Httpd,
    /// agnhost netexec / serve-hostname.
    Agnhost,
    /// registry.k8s.io/echoserver: echoes the request.
    Echo,
    /// The guestbook frontend (PHP on Apache).
    Guestbook,
    /// registry.k8s.io/hpa-example: PHP on Apache whose index.php burns CPU and says `OK!`.
    HpaExample,
    /// CoreDNS health (:8080/health), ready (:8181/ready) and metrics (:9153).
    CoreDns,
    /// The ingress-nginx controller: routes :80/:443 by the cluster's Ingresses
    /// (`node::ingress_nginx`), `/healthz` on :10254.
    IngressNginx,
    /// Envoy Gateway's envoy proxy and its controller: the listener ports route by the
    /// Gateway's HTTPRoutes (`node::envoy_proxy`), the admin ports answer health checks.
    Envoy,
    /// Any other image: answers 200 with an empty body.
    Generic,
}

/// A process inside a container, as `ps aux` shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Proc {
    /// User (name or uid).
    pub user: &'static str,
    /// Command line.
    pub cmd: String,
    /// Resident memory (KiB).
    pub rss_kb: u64,
    /// Virtual memory (KiB).
    pub vsz_kb: u64,
}

/// How a container of an image behaves.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Behaviour {
    /// Time from start until the process listens (ms).
    pub start_ms: Time,
    /// Ports it listens on and what answers there.
    pub ports: Vec<(i32, Proto)>,
    /// Exits on its own after this long with this code and reason (None: runs until stopped).
    pub exits: Option<(Time, i32, &'static str)>,
    /// After SIGTERM: exits after this long with this code; None: ignores it (PID 1
    /// without a handler) and is SIGKILLed when the grace period ends (137).
    pub on_sigterm: Option<(Time, i32)>,
    /// After it listens, HTTP answers 503 for this long (readiness fails).
    pub not_ready_ms: Time,
    /// Processes (`ps`), main process first.
    pub processes: Vec<Proc>,
    /// CPU it uses when idle (millicores, `kubectl top`).
    pub cpu_m: u64,
    /// Memory it uses (bytes, `kubectl top`).
    pub mem_bytes: u64,
    /// Binaries the image ships that `kubectl exec` can run.
    pub has_curl: bool,
    /// Whether it has `wget` (busybox, alpine).
    pub has_wget: bool,
    /// CPU each HTTP request it answers costs (microseconds of one core); see
    /// [`crate::node::load`].
    pub cost_us: u64,
    /// The container's CPU limit (millicores), which caps what `kubectl top` sees.
    pub cpu_limit_m: Option<u64>,
    /// A shell loop requesting a URL (`while sleep 0.01; do wget -q -O- URL; done`): the
    /// URL and the time between requests.
    pub load: Option<(String, Time)>,
    /// Its main process is the container shell (`sh -c SCRIPT`, or an applet such as
    /// `sleep 3600`): output, timing and exit come from running it (see `node::script`).
    pub script: bool,
    /// What answers on the ports the container declares besides `ports` (Generic: only
    /// when `ports` is empty).
    pub declared_as: Server,
}

/// Per-container tuning from the `kubeloop.dev/behavior` annotation.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Overrides {
    /// `crash-after=D`: exits with `exit-code` (default 1) D after start.
    pub crash_after: Option<Time>,
    /// `exit-code=N`.
    pub exit_code: Option<i32>,
    /// `start-delay=D`: listens only D after start.
    pub start_delay: Option<Time>,
    /// `not-ready-for=D`: answers 503 for D once listening.
    pub not_ready_for: Option<Time>,
    /// `oom-after=D`: exceeds its memory limit D after start (OOMKilled, 137).
    pub oom_after: Option<Time>,
    /// `ignore-sigterm`: PID 1 without a handler.
    pub ignore_sigterm: bool,
    /// `memory=Q`: memory use for `kubectl top`.
    pub memory: Option<u64>,
    /// `cpu=Q`: CPU use for `kubectl top` (millicores).
    pub cpu: Option<u64>,
    /// The container's `resources.limits.cpu` (millicores), set by the kubelet.
    pub cpu_limit: Option<u64>,
}

impl Overrides {
    /// Parses `crash-after=5s,start-delay=20s` (commas or spaces). Unknown keys and bad
    /// values are reported, never fatal.
    pub fn parse(s: &str) -> (Overrides, Vec<String>) {
        let mut o = Overrides::default();
        let mut errors = Vec::new();
        for item in s
            .split(|c: char| c == ',' || c.is_whitespace())
            .filter(|x| !x.is_empty())
        {
            let (k, v) = item.split_once('=').unwrap_or((item, ""));
            let dur = |v: &str| parse_duration(v).ok();
            let ok = match k {
                "crash-after" => dur(v).map(|d| o.crash_after = Some(d)).is_some(),
                "start-delay" => dur(v).map(|d| o.start_delay = Some(d)).is_some(),
                "not-ready-for" => dur(v).map(|d| o.not_ready_for = Some(d)).is_some(),
                "oom-after" => dur(v).map(|d| o.oom_after = Some(d)).is_some(),
                "exit-code" => v.parse().ok().map(|c| o.exit_code = Some(c)).is_some(),
                "ignore-sigterm" => {
                    o.ignore_sigterm = true;
                    true
                }
                "memory" => crate::quantity::parse(v)
                    .ok()
                    .map(|q| o.memory = Some(q.value().max(0) as u64))
                    .is_some(),
                "cpu" => crate::quantity::parse(v)
                    .ok()
                    .map(|q| o.cpu = Some(q.milli_value().max(0) as u64))
                    .is_some(),
                _ => false,
            };
            if !ok {
                errors.push(item.to_string());
            }
        }
        (o, errors)
    }

    /// The overrides for one container: the pod-wide annotation, then
    /// `kubeloop.dev/behavior.<container>` on top.
    pub fn for_container(annotations: &BTreeMap<String, String>, container: &str) -> Overrides {
        let mut text = annotations
            .get(BEHAVIOR_ANNOTATION)
            .cloned()
            .unwrap_or_default();
        if let Some(own) = annotations.get(&format!("{BEHAVIOR_ANNOTATION}.{container}")) {
            text.push(',');
            text.push_str(own);
        }
        Overrides::parse(&text).0
    }
}

fn proc(user: &'static str, cmd: &str, rss_kb: u64, vsz_kb: u64) -> Proc {
    Proc {
        user,
        cmd: cmd.to_string(),
        rss_kb,
        vsz_kb,
    }
}

const MIB: u64 = 1024 * 1024;

/// Whether a shell command line exits on its own, after how long and with what code:
/// `exit N` ends it (after the sleeps before it); a trailing finite `sleep` or only
/// echoes end it with 0; `sleep infinity`, `tail -f`, `while true` never end.
fn script_exit(cmdline: &str) -> Option<(Time, i32)> {
    let body = ["/bin/sh -c ", "sh -c ", "/bin/bash -c ", "bash -c "]
        .iter()
        .find_map(|p| cmdline.strip_prefix(p))
        .unwrap_or(cmdline)
        .trim();
    if body.is_empty() || body == "sh" || body == "/bin/sh" {
        return Some((0, 0));
    }
    let long_running = [
        "sleep infinity",
        "tail -f",
        "while true",
        "while :",
        "while sleep",
        "httpd -f",
        "nc -l",
        "sleep 1d",
        "sleep inf",
    ];
    let mut t: Time = 0;
    let mut last = 0;
    for seg in body
        .split([';', '&', '|', '\n'])
        .map(str::trim)
        .filter(|x| !x.is_empty())
    {
        if long_running.iter().any(|p| seg.starts_with(p)) {
            return None;
        }
        let words: Vec<&str> = seg.split_whitespace().collect();
        match words.as_slice() {
            ["exit", n, ..] => return Some((t, n.parse::<u32>().map_or(0, |n| (n & 0xff) as i32))),
            ["exit"] => return Some((t, last)),
            ["sleep", n, ..] => {
                match n
                    .trim_end_matches('s')
                    .parse::<f64>()
                    .ok()
                    .filter(|s| s.is_finite() && *s >= 0.0)
                {
                    Some(s) => t = t.saturating_add((s * SECOND as f64) as Time).min(FOREVER),
                    None => return None,
                }
                last = 0;
            }
            ["false"] => last = 1,
            _ => last = 0,
        }
    }
    Some((t, last))
}

/// A perl one-liner is not interpreted: it runs for `PERL_RUN` (a `bpi(N)` for about
/// N/500 s, the docs' `bpi(2000)` 4 s) and exits 0, or with N for a script that ends in
/// `exit N` / `exit(N)`, or 255 for one that calls `die`.
fn perl_exit(cmdline: &str) -> (Time, i32, &'static str) {
    const PERL_RUN: Time = 500;
    let digits = cmdline
        .split("bpi(")
        .nth(1)
        .and_then(|r| r.split(')').next())
        .and_then(|n| n.trim().parse::<u64>().ok())
        .unwrap_or(0);
    let t = PERL_RUN + digits.min(1_000_000) * 2;
    let code = if cmdline.contains("die") {
        255
    } else {
        cmdline
            .rsplit("exit")
            .next()
            .filter(|_| cmdline.contains("exit"))
            .map(|r| r.trim_start_matches(['(', ' ']))
            .and_then(|r| {
                let n: String = r.chars().take_while(char::is_ascii_digit).collect();
                n.parse().ok()
            })
            .unwrap_or(0)
    };
    (t, code, if code == 0 { "Completed" } else { "Error" })
}

/// How a container of `image` running `command` (command + args, as the pod gives them)
/// with `env` behaves on a machine with `cpus` CPUs.
pub fn behaviour(
    image: &ImageRef,
    command: &[String],
    env: &BTreeMap<String, String>,
    cpus: u32,
    o: &Overrides,
) -> Behaviour {
    let cmdline = command.join(" ");
    let main = command.first().cloned().unwrap_or_else(|| "/app".into());
    let generic = Behaviour {
        start_ms: 200,
        ports: Vec::new(),
        exits: None,
        on_sigterm: Some((100, 143)),
        not_ready_ms: 0,
        processes: vec![proc("root", &main, 24_000, 1_200_000)],
        cpu_m: 2,
        mem_bytes: 24 * MIB,
        has_curl: true,
        has_wget: false,
        cost_us: 0,
        cpu_limit_m: o.cpu_limit,
        load: crate::node::load::parse_loop(&cmdline),
        script: false,
        declared_as: Server::Generic,
    };
    let repo = image.repo.rsplit('/').next().unwrap_or("");
    let mut b = match repo {
        "nginx" | "nginx-slim" => Behaviour {
            start_ms: 150,
            ports: vec![(80, Proto::Http(Server::Nginx))],
            on_sigterm: Some((100, 0)),
            processes: std::iter::once(proc(
                "root",
                "nginx: master process nginx -g daemon off;",
                7_552,
                11_472,
            ))
            .chain((0..cpus.max(1)).map(|_| proc("101", "nginx: worker process", 2_904, 11_936)))
            .collect(),
            cpu_m: 0,
            mem_bytes: 3 * MIB,
            ..generic.clone()
        },
        "httpd" => Behaviour {
            start_ms: 300,
            ports: vec![(80, Proto::Http(Server::Httpd))],
            on_sigterm: Some((200, 0)),
            processes: vec![
                proc("root", "httpd -DFOREGROUND", 4_560, 5_920),
                proc("www-data", "httpd -DFOREGROUND", 3_456, 1_999_232),
                proc("www-data", "httpd -DFOREGROUND", 3_456, 1_999_232),
                proc("www-data", "httpd -DFOREGROUND", 3_456, 1_999_232),
            ],
            cpu_m: 1,
            mem_bytes: 9 * MIB,
            has_curl: false,
            ..generic.clone()
        },
        "redis" | "gb-redis-follower" => Behaviour {
            start_ms: 100,
            ports: vec![(6379, Proto::Tcp)],
            on_sigterm: Some((100, 0)),
            processes: vec![proc("999", "redis-server *:6379", 9_984, 55_424)],
            cpu_m: 3,
            mem_bytes: 4 * MIB,
            has_curl: false,
            ..generic.clone()
        },
        "mysql" => {
            let has_password = ["MYSQL_ROOT_PASSWORD", "MYSQL_ALLOW_EMPTY_PASSWORD", "MYSQL_RANDOM_ROOT_PASSWORD"]
                .iter()
                .any(|k| env.get(*k).is_some_and(|v| !v.is_empty()));
            Behaviour {
                start_ms: 12 * SECOND,
                ports: vec![(3306, Proto::Tcp), (33060, Proto::Tcp)],
                exits: (!has_password).then_some((400, 1, "Error")),
                on_sigterm: Some((2 * SECOND, 0)),
                processes: vec![proc("999", "mysqld", 420_000, 2_670_000)],
                cpu_m: 6,
                mem_bytes: 410 * MIB,
                ..generic.clone()
            }
        }
        "postgres" => Behaviour {
            start_ms: 3 * SECOND,
            ports: vec![(5432, Proto::Tcp)],
            exits: (env.get("POSTGRES_PASSWORD").is_none_or(|v| v.is_empty())
                && env.get("POSTGRES_HOST_AUTH_METHOD").map(String::as_str) != Some("trust"))
            .then_some((300, 1, "Error")),
            on_sigterm: Some((500, 0)),
            processes: vec![
                proc("999", "postgres", 28_000, 220_000),
                proc("999", "postgres: checkpointer", 6_000, 220_000),
                proc("999", "postgres: background writer", 5_000, 220_000),
                proc("999", "postgres: walwriter", 9_000, 220_000),
            ],
            cpu_m: 2,
            mem_bytes: 40 * MIB,
            ..generic.clone()
        },
        "busybox" => {
            // The shell expands `$VAR` first (`exit $JOB_COMPLETION_INDEX`).
            let exits = script_exit(&crate::node::logs::expand_vars(&cmdline, env))
                .map(|(t, code)| (50 + t, code, if code == 0 { "Completed" } else { "Error" }));
            Behaviour {
                start_ms: 20,
                exits,
                on_sigterm: None,
                processes: vec![proc(
                    "root",
                    if cmdline.is_empty() { "sh" } else { &cmdline },
                    1_024,
                    4_400,
                )],
                cpu_m: 0,
                mem_bytes: MIB / 2,
                has_curl: false,
                has_wget: true,
                ..generic.clone()
            }
        }
        "perl" => Behaviour {
            exits: Some(perl_exit(&cmdline)),
            on_sigterm: Some((50, 143)),
            processes: vec![proc("root", if cmdline.is_empty() { "perl" } else { &cmdline }, 12_000, 24_000)],
            cpu_m: 950,
            mem_bytes: 12 * MIB,
            ..generic.clone()
        },
        "curl" => Behaviour {
            exits: if cmdline.is_empty() {
                Some((100, 2, "Error"))
            } else {
                script_exit(&cmdline).map(|(t, c)| (100 + t, c, if c == 0 { "Completed" } else { "Error" }))
            },
            on_sigterm: None,
            processes: vec![proc("100", if cmdline.is_empty() { "curl" } else { &cmdline }, 1_800, 6_000)],
            cpu_m: 0,
            mem_bytes: MIB,
            has_wget: true,
            ..generic.clone()
        },
        "agnhost" => {
            let sub = command.iter().find(|a| !a.starts_with('-') && !a.ends_with("agnhost"));
            let (port, proto) = match sub.map(String::as_str) {
                Some("serve-hostname") => (9376, Proto::Http(Server::Agnhost)),
                _ => (
                    flag_port(command, "--http-port").unwrap_or(8080),
                    Proto::Http(Server::Agnhost),
                ),
            };
            Behaviour {
                start_ms: 100,
                ports: vec![(port, proto)],
                on_sigterm: Some((50, 2)),
                processes: vec![proc("root", &agnhost_cmdline(command), 12_000, 740_000)],
                cpu_m: 1,
                mem_bytes: 8 * MIB,
                ..generic.clone()
            }
        }
        "echoserver" => Behaviour {
            start_ms: 300,
            ports: vec![(8080, Proto::Http(Server::Echo))],
            on_sigterm: Some((100, 0)),
            processes: vec![
                proc("root", "nginx: master process nginx -g daemon off;", 6_000, 70_000),
                proc("nobody", "nginx: worker process", 4_000, 72_000),
            ],
            cpu_m: 1,
            mem_bytes: 3 * MIB,
            ..generic.clone()
        },
        "hpa-example" => Behaviour {
            start_ms: 800,
            ports: vec![(80, Proto::Http(Server::HpaExample))],
            on_sigterm: Some((300, 0)),
            processes: vec![
                proc("root", "apache2 -DFOREGROUND", 20_000, 240_000),
                proc("www-data", "apache2 -DFOREGROUND", 8_000, 240_000),
            ],
            cpu_m: 1,
            mem_bytes: 10 * MIB,
            ..generic.clone()
        },
        "gb-frontend" => Behaviour {
            start_ms: 800,
            ports: vec![(80, Proto::Http(Server::Guestbook))],
            on_sigterm: Some((300, 0)),
            processes: vec![
                proc("root", "apache2 -DFOREGROUND", 22_000, 250_000),
                proc("www-data", "apache2 -DFOREGROUND", 9_000, 250_000),
            ],
            cpu_m: 1,
            mem_bytes: 18 * MIB,
            ..generic.clone()
        },
        "coredns" => Behaviour {
            start_ms: 300,
            ports: vec![
                (53, Proto::Dns),
                (8080, Proto::Http(Server::CoreDns)),
                (8181, Proto::Http(Server::CoreDns)),
                (9153, Proto::Http(Server::CoreDns)),
            ],
            on_sigterm: Some((5 * SECOND, 0)),
            processes: vec![proc("65532", "/coredns -conf /etc/coredns/Corefile", 18_000, 760_000)],
            cpu_m: 3,
            mem_bytes: 14 * MIB,
            has_curl: false,
            ..generic.clone()
        },
        "local-path-provisioner" => Behaviour {
            processes: vec![proc(
                "root",
                "local-path-provisioner --debug start --helper-image docker.io/library/busybox:1.37.0 --config /etc/config/config.json",
                16_000,
                750_000,
            )],
            cpu_m: 1,
            mem_bytes: 9 * MIB,
            has_curl: false,
            ..generic.clone()
        },
        // kind's kube-proxy DaemonSet pod: the node's kube-proxy unit is the process that
        // writes the rules (docs/nodes.md), so the container adds none of its own.
        "kube-proxy" => Behaviour {
            processes: Vec::new(),
            on_sigterm: Some((100, 0)),
            cpu_m: 1,
            mem_bytes: 18 * MIB,
            has_curl: false,
            ..generic.clone()
        },
        "controller" if image.repo.ends_with("ingress-nginx/controller") => Behaviour {
            start_ms: 1_500,
            ports: vec![
                (80, Proto::Http(Server::IngressNginx)),
                (443, Proto::Http(Server::IngressNginx)),
                (8443, Proto::Tcp),
                (10254, Proto::Http(Server::IngressNginx)),
            ],
            on_sigterm: Some((300, 0)),
            processes: std::iter::once(proc("101", "/usr/bin/dumb-init -- /nginx-ingress-controller --election-id=ingress-nginx-leader --controller-class=k8s.io/ingress-nginx --ingress-class=nginx --configmap=ingress-nginx/ingress-nginx-controller --watch-ingress-without-class=true --publish-status-address=localhost", 1_000, 1_600))
                .chain(std::iter::once(proc("101", "/nginx-ingress-controller --election-id=ingress-nginx-leader --controller-class=k8s.io/ingress-nginx --ingress-class=nginx --configmap=ingress-nginx/ingress-nginx-controller --watch-ingress-without-class=true --publish-status-address=localhost", 48_000, 1_280_000)))
                .chain(std::iter::once(proc("101", "nginx: master process /usr/bin/nginx -c /etc/nginx/nginx.conf", 38_000, 150_000)))
                .chain((0..cpus.max(1)).map(|_| proc("101", "nginx: worker process", 40_000, 162_000)))
                .collect(),
            cpu_m: 2,
            mem_bytes: 90 * MIB,
            has_curl: false,
            ..generic.clone()
        },
        // Envoy Gateway's controller (`server`) and the proxy pods' shutdown manager.
        "gateway" if image.repo.ends_with("envoyproxy/gateway") => {
            let shutdown = cmdline.contains("shutdown-manager");
            Behaviour {
                start_ms: 1_000,
                ports: if shutdown {
                    vec![(19002, Proto::Http(Server::Envoy))]
                } else {
                    vec![
                        (8081, Proto::Http(Server::Envoy)),
                        (18000, Proto::Tcp),
                        (18001, Proto::Tcp),
                        (18002, Proto::Tcp),
                        (19001, Proto::Http(Server::Envoy)),
                    ]
                },
                on_sigterm: Some((200, 0)),
                processes: vec![proc(
                    "65532",
                    if shutdown {
                        "/usr/local/bin/envoy-gateway envoy shutdown-manager"
                    } else {
                        "/usr/local/bin/envoy-gateway server --config-path=/config/envoy-gateway.yaml"
                    },
                    60_000,
                    1_300_000,
                )],
                cpu_m: 2,
                mem_bytes: if shutdown { 12 * MIB } else { 80 * MIB },
                has_curl: false,
                ..generic.clone()
            }
        }
        // The envoy proxy Envoy Gateway runs per Gateway: readiness on :19003, metrics
        // on :19001, a listener on each declared port.
        "envoy" if image.repo.ends_with("envoyproxy/envoy") => Behaviour {
            start_ms: 800,
            ports: vec![
                (19001, Proto::Http(Server::Envoy)),
                (19003, Proto::Http(Server::Envoy)),
            ],
            declared_as: Server::Envoy,
            on_sigterm: Some((300, 0)),
            processes: vec![proc(
                "65532",
                "envoy --service-cluster envoy-gateway --service-node $(ENVOY_POD_NAME) --config-yaml $(ENVOY_BOOTSTRAP) --log-level warn --cpuset-threads --drain-strategy immediate",
                40_000,
                2_200_000,
            )],
            cpu_m: 3,
            mem_bytes: 30 * MIB,
            has_curl: false,
            ..generic.clone()
        },
        "kindnetd" => Behaviour {
            processes: vec![proc("root", "/bin/kindnetd", 12_000, 1_270_000)],
            on_sigterm: Some((100, 0)),
            cpu_m: 1,
            mem_bytes: 11 * MIB,
            has_curl: false,
            ..generic.clone()
        },
        "pause" => Behaviour {
            processes: vec![proc("65535", "/pause", 640, 1_020)],
            on_sigterm: Some((10, 0)),
            cpu_m: 0,
            mem_bytes: MIB / 4,
            has_curl: false,
            ..generic.clone()
        },
        _ => {
            let shell = main.ends_with("sh") || main == "echo" || main == "true" || main == "sleep";
            let exits = if command.is_empty() || !shell {
                None
            } else {
                script_exit(&cmdline).map(|(t, c)| (100 + t, c, if c == 0 { "Completed" } else { "Error" }))
            };
            Behaviour { exits, ..generic.clone() }
        }
    };
    b.cost_us = crate::node::load::cost_us(repo);
    let name = main.rsplit('/').next().unwrap_or("");
    b.script = b.load.is_none()
        && !command.is_empty()
        && !matches!(repo, "coredns" | "pause" | "agnhost")
        && (crate::node::sh::APPLETS.contains(&name)
            || (repo == "busybox" && matches!(name, "wget" | "nslookup")));
    if b.script {
        b.exits = None;
    }
    apply(&mut b, o);
    b
}

/// Whether the container's command is a shell with no script, which reads its commands
/// from stdin (busybox's default `sh` too).
pub fn reads_stdin(repo: &str, command: &[String]) -> bool {
    match command {
        [] => repo.ends_with("busybox"),
        [sh] => matches!(sh.rsplit('/').next(), Some("sh" | "ash" | "bash")),
        _ => false,
    }
}

fn agnhost_cmdline(command: &[String]) -> String {
    let args: Vec<&str> = command
        .iter()
        .map(String::as_str)
        .filter(|a| !a.ends_with("agnhost"))
        .collect();
    format!("/agnhost {}", args.join(" "))
        .trim_end()
        .to_string()
}

fn flag_port(command: &[String], name: &str) -> Option<i32> {
    command.iter().enumerate().find_map(|(i, a)| {
        if let Some(v) = a.strip_prefix(&format!("{name}=")) {
            v.parse().ok()
        } else if a == name {
            command.get(i + 1)?.parse().ok()
        } else {
            None
        }
    })
}

fn apply(b: &mut Behaviour, o: &Overrides) {
    let cap = |d: Time| d.min(FOREVER);
    if let Some(d) = o.start_delay {
        b.start_ms = cap(b.start_ms.saturating_add(d));
    }
    if let Some(d) = o.not_ready_for {
        b.not_ready_ms = cap(d);
    }
    if let Some(d) = o.crash_after {
        b.exits = Some((cap(d), o.exit_code.unwrap_or(1), "Error"));
    } else if let Some(c) = o.exit_code {
        if let Some(e) = b.exits.as_mut() {
            e.1 = c;
            e.2 = if c == 0 { "Completed" } else { "Error" };
        }
    }
    if let Some(d) = o.oom_after {
        let d = cap(d);
        if b.exits.is_none_or(|(t, _, _)| d < t) {
            b.exits = Some((d, 137, "OOMKilled"));
        }
    }
    if o.ignore_sigterm {
        b.on_sigterm = None;
    }
    if let Some(m) = o.memory {
        b.mem_bytes = m;
    }
    if let Some(c) = o.cpu {
        b.cpu_m = c;
    }
}

impl Behaviour {
    /// The ports a container listens on: the image's, or (for images the catalog does
    /// not know) the ports the pod declares.
    pub fn listening(&self, declared: &[i32]) -> Vec<(i32, Proto)> {
        if self.ports.is_empty() {
            declared
                .iter()
                .map(|p| (*p, Proto::Http(self.declared_as)))
                .collect()
        } else if self.declared_as != Server::Generic {
            let mut v = self.ports.clone();
            for p in declared {
                if !v.iter().any(|(q, _)| q == p) {
                    v.push((*p, Proto::Http(self.declared_as)));
                }
            }
            v
        } else {
            self.ports.clone()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::node::images::parse;

    fn env(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn annotation_parses_and_reports_bad_items() {
        let (o, bad) = Overrides::parse(
            "crash-after=5s, start-delay=20s not-ready-for=30s,oom-after=1m,bogus=1,exit-code=x",
        );
        assert_eq!(o.crash_after, Some(5_000));
        assert_eq!(o.start_delay, Some(20_000));
        assert_eq!(o.not_ready_for, Some(30_000));
        assert_eq!(o.oom_after, Some(60_000));
        assert_eq!(bad, ["bogus=1", "exit-code=x"]);
    }

    #[test]
    fn mysql_without_a_password_exits_1() {
        let none = behaviour(
            &parse("mysql:8.4"),
            &[],
            &env(&[]),
            4,
            &Overrides::default(),
        );
        assert_eq!(none.exits, Some((400, 1, "Error")));
        let ok = behaviour(
            &parse("mysql:8.4"),
            &[],
            &env(&[("MYSQL_ROOT_PASSWORD", "s3cret")]),
            4,
            &Overrides::default(),
        );
        assert_eq!(ok.exits, None);
    }

    #[test]
    fn oom_and_crash_overrides() {
        let o = Overrides::parse("oom-after=10s").0;
        let b = behaviour(&parse("nginx"), &[], &env(&[]), 2, &o);
        assert_eq!(b.exits, Some((10_000, 137, "OOMKilled")));
        let o = Overrides::parse("crash-after=5s,exit-code=3").0;
        let b = behaviour(&parse("nginx"), &[], &env(&[]), 2, &o);
        assert_eq!(b.exits, Some((5_000, 3, "Error")));
        assert_eq!(b.processes.len(), 3, "master and one worker per CPU");
    }

    #[test]
    fn busybox_commands_run_in_the_shell() {
        let sh = |s: &str| vec!["sh".to_string(), "-c".to_string(), s.to_string()];
        let b = |c: Vec<String>| {
            behaviour(
                &parse("busybox:1.37"),
                &c,
                &env(&[]),
                1,
                &Overrides::default(),
            )
        };
        // Shell commands run in the container shell: their exit comes from running them.
        for cmd in ["echo hi", "exit 3", "sleep 3600", "sleep infinity"] {
            let x = b(sh(cmd));
            assert!(x.script && x.exits.is_none(), "{cmd}");
        }
        assert!(b(vec!["sleep".into(), "10".into()]).script);
        // A request loop stays a load loop.
        assert!(
            !b(sh(
                "while sleep 0.01; do wget -q -O- http://php-apache; done"
            ))
            .script
        );
        assert_eq!(b(vec![]).exits, Some((50, 0, "Completed")));
    }
}
