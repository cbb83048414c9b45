//! The machine's own views: `ip addr`, `ip route` (routes to other nodes' podCIDRs as
//! flannel host-gw/kindnet install them), `ps aux`, `mount`, `ls`, `journalctl` and
//! `systemctl status`.

use crate::cmd::ssh::{fail, out};
use crate::message::Actor;
use crate::node::cri::ContainerState;
use crate::node::journal::{syslog_time, Unit};
use crate::process::Output;
use crate::time::{Time, EPOCH_UNIX_MS};
use crate::world::World;

fn gateway(cidr: &str) -> String {
    cidr.split('/')
        .next()
        .unwrap_or("")
        .trim_end_matches(".0")
        .to_string()
        + ".1"
}

fn broadcast(cidr: &str) -> String {
    cidr.split('/')
        .next()
        .unwrap_or("")
        .trim_end_matches(".0")
        .to_string()
        + ".255"
}

/// `ip addr`.
pub fn ip_addr(world: &World, n: u32) -> String {
    let host = &world.observe().nodes()[n as usize];
    format!(
        "1: lo: <LOOPBACK,UP,LOWER_UP> mtu 65536 qdisc noqueue state UNKNOWN group default qlen 1000\n    inet 127.0.0.1/8 scope host lo\n2: eth0: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500 qdisc noqueue state UP group default\n    inet {}/16 brd 172.18.255.255 scope global eth0\n3: cni0: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500 qdisc noqueue state UP group default qlen 1000\n    inet {}/24 brd {} scope global cni0\n",
        host.ip,
        gateway(&host.pod_cidr),
        broadcast(&host.pod_cidr)
    )
}

/// `ip route`: the default route, this node's podCIDR on the bridge, every other node's
/// podCIDR via that node's InternalIP, and the node network.
pub fn ip_route(world: &World, n: u32) -> String {
    let host = &world.observe().nodes()[n as usize];
    let mut routes: Vec<(u32, String)> = Vec::new();
    let key = |cidr: &str| -> u32 {
        cidr.split('/')
            .next()
            .and_then(|a| a.parse::<std::net::Ipv4Addr>().ok())
            .map_or(0, u32::from)
    };
    routes.push((
        key(&host.pod_cidr),
        format!(
            "{} dev cni0 proto kernel scope link src {}",
            host.pod_cidr,
            gateway(&host.pod_cidr)
        ),
    ));
    for (i, other) in world.observe().nodes().iter().enumerate() {
        if i as u32 == n {
            continue;
        }
        routes.push((
            key(&other.pod_cidr),
            format!("{} via {} dev eth0", other.pod_cidr, other.ip),
        ));
    }
    routes.push((
        key("172.18.0.0"),
        format!(
            "172.18.0.0/16 dev eth0 proto kernel scope link src {}",
            host.ip
        ),
    ));
    routes.sort();
    let mut s = "default via 172.18.0.1 dev eth0\n".to_string();
    for (_, r) in routes {
        s.push_str(&r);
        s.push('\n');
    }
    s
}

/// `journalctl -u UNIT [-n N] [--no-pager]`.
pub fn journalctl(world: &World, n: u32, args: &[&str]) -> Output {
    let mut unit = None;
    let mut lines = None;
    let mut i = 0;
    while i < args.len() {
        match args[i] {
            "-u" | "--unit" => {
                i += 1;
                unit = args.get(i).copied();
            }
            a if a.starts_with("--unit=") => unit = Some(&a[7..]),
            "-n" | "--lines" => {
                i += 1;
                lines = args.get(i).and_then(|v| v.parse::<usize>().ok());
            }
            a if a.starts_with("-n") && a.len() > 2 => lines = a[2..].parse().ok(),
            a if a.starts_with("--lines=") => lines = a[8..].parse().ok(),
            "--no-pager" | "-l" | "--no-hostname" | "-q" => {}
            "-f" | "--follow" => {}
            other if other.starts_with('-') => {
                return fail(1, format!("journalctl: unrecognized option '{other}'\n"));
            }
            _ => {}
        }
        i += 1;
    }
    let os = &world.observe().nodes()[n as usize].os;
    match unit {
        None => {
            // Everything, in time order.
            let mut all: Vec<String> = Vec::new();
            for u in [Unit::Containerd, Unit::Kubelet, Unit::KubeProxy] {
                all.extend(
                    os.journalctl(u, None)
                        .lines()
                        .filter(|l| !l.starts_with("--"))
                        .map(String::from),
                );
            }
            all.sort_by(|a, b| a.get(..15).cmp(&b.get(..15)));
            let skip = lines.map_or(0, |k| all.len().saturating_sub(k));
            out(all[skip..].iter().map(|l| format!("{l}\n")).collect())
        }
        Some(u) => match Unit::parse(u) {
            Some(unit) => out(os.journalctl(unit, lines)),
            None => out("-- No entries --\n".into()),
        },
    }
}

struct Row {
    user: String,
    pid: u32,
    cpu: String,
    mem: String,
    vsz: u64,
    rss: u64,
    stat: &'static str,
    start: Time,
    time: String,
    cmd: String,
}

fn hhmm(t: Time) -> String {
    k8s_openapi::jiff::Timestamp::from_millisecond(EPOCH_UNIX_MS + t as i64)
        .unwrap_or(k8s_openapi::jiff::Timestamp::UNIX_EPOCH)
        .strftime("%H:%M")
        .to_string()
}

/// `ps aux`: systemd, journald, containerd, kubelet, kube-proxy, then per pod its
/// containerd-shim, pause and container processes.
pub fn ps(world: &World, n: u32, args: &[&str]) -> Output {
    let host = &world.observe().nodes()[n as usize];
    let now = world.now();
    let mem_total: u64 = host
        .config
        .capacity
        .get("memory")
        .and_then(|m| crate::quantity::parse(m).ok())
        .map_or(8 * 1024 * 1024 * 1024, |q| q.value().max(1) as u64);
    let pct = |kb: u64| format!("{:.1}", (kb * 1024) as f64 * 100.0 / mem_total as f64);
    let boot = host.os.booted_at;
    let cpu_time = |secs: u64| format!("{}:{:02}", secs / 60, secs % 60);
    let up = now.saturating_sub(boot) / 1000;
    let mut rows = vec![
        Row {
            user: "root".into(),
            pid: 1,
            cpu: "0.0".into(),
            mem: pct(12_608),
            vsz: 21_532,
            rss: 12_608,
            stat: "Ss",
            start: boot,
            time: cpu_time(up / 300),
            cmd: "/sbin/init".into(),
        },
        Row {
            user: "root".into(),
            pid: 88,
            cpu: "0.0".into(),
            mem: pct(11_776),
            vsz: 32_572,
            rss: 11_776,
            stat: "Ss",
            start: boot,
            time: cpu_time(up / 900),
            cmd: "/lib/systemd/systemd-journald".into(),
        },
    ];
    let running = |a: Actor| world.is_running(a);
    if running(Actor::Runtime(n)) {
        rows.push(Row {
            user: "root".into(),
            pid: host.os.pid(Unit::Containerd),
            cpu: "0.9".into(),
            mem: pct(52_036),
            vsz: 1_875_380,
            rss: 52_036,
            stat: "Ssl",
            start: boot,
            time: cpu_time(up / 100),
            cmd: "/usr/local/bin/containerd".into(),
        });
    }
    if running(Actor::Kubelet(n)) {
        rows.push(Row { user: "root".into(), pid: host.os.pid(Unit::Kubelet), cpu: "1.6".into(), mem: pct(84_760), vsz: 2_195_044, rss: 84_760, stat: "Ssl", start: boot, time: cpu_time(up / 60), cmd: format!("/usr/bin/kubelet --bootstrap-kubeconfig=/etc/kubernetes/bootstrap-kubelet.conf --kubeconfig=/etc/kubernetes/kubelet.conf --config=/var/lib/kubelet/config.yaml --container-runtime-endpoint=unix:///run/containerd/containerd.sock --node-ip={} --node-labels= --pod-infra-container-image=registry.k8s.io/pause:3.10 --provider-id=kind://docker/kind/{} --runtime-cgroups=/system.slice/containerd.service", host.ip, host.config.name) });
    }
    if running(Actor::KubeProxy(n)) {
        rows.push(Row { user: "root".into(), pid: host.os.pid(Unit::KubeProxy), cpu: "0.1".into(), mem: pct(42_008), vsz: 1_287_700, rss: 42_008, stat: "Ssl", start: boot, time: cpu_time(up / 600), cmd: format!("/usr/local/bin/kube-proxy --config=/var/lib/kube-proxy/config.conf --hostname-override={}", host.config.name) });
    }
    let rt = &host.runtime;
    let mut sandboxes: Vec<_> = rt.sandboxes.values().filter(|s| s.ready).collect();
    sandboxes.sort_by_key(|s| s.pid);
    for sb in sandboxes {
        rows.push(Row { user: "root".into(), pid: sb.pid, cpu: "0.0".into(), mem: pct(12_032), vsz: 1_233_668, rss: 12_032, stat: "Sl", start: sb.created, time: "0:00".into(), cmd: format!("/usr/local/bin/containerd-shim-runc-v2 -namespace k8s.io -id {} -address /run/containerd/containerd.sock", sb.id) });
        rows.push(Row {
            user: "65535".into(),
            pid: sb.pid + 4,
            cpu: "0.0".into(),
            mem: pct(640),
            vsz: 1_020,
            rss: 640,
            stat: "Ss",
            start: sb.created,
            time: "0:00".into(),
            cmd: "/pause".into(),
        });
        let mut cs: Vec<_> = rt
            .containers
            .values()
            .filter(|c| c.sandbox == sb.id && c.state == ContainerState::Running)
            .collect();
        cs.sort_by_key(|c| c.pid);
        for c in cs {
            for (i, p) in c.behaviour.processes.iter().enumerate() {
                rows.push(Row {
                    user: p.user.to_string(),
                    pid: c.pid + i as u32,
                    cpu: "0.0".into(),
                    mem: pct(p.rss_kb),
                    vsz: p.vsz_kb,
                    rss: p.rss_kb,
                    stat: if i == 0 { "Ss" } else { "S" },
                    start: c.started.unwrap_or(c.created),
                    time: "0:00".into(),
                    cmd: p.cmd.clone(),
                });
            }
        }
    }
    let aux = args.is_empty()
        || args
            .iter()
            .any(|a| a.contains('a') || a == &"-ef" || a == &"-e");
    if !aux {
        return out("    PID TTY          TIME CMD\n      1 ?        00:00:00 bash\n".into());
    }
    let mut s =
        "USER         PID %CPU %MEM    VSZ   RSS TTY      STAT START   TIME COMMAND\n".to_string();
    for r in rows {
        // procps lets a wide value push into the next column's padding.
        let head = format!(
            "{:<8} {:>7} {:>4} {:>4} {:>6} {:>5}",
            r.user, r.pid, r.cpu, r.mem, r.vsz, r.rss
        );
        let over = head.len().saturating_sub(40);
        let tty = format!("{:<w$}", "?", w = 8usize.saturating_sub(over).max(1));
        s.push_str(&format!(
            "{head} {tty} {:<4} {:>5} {:>6} {}\n",
            r.stat,
            hhmm(r.start),
            r.time,
            r.cmd
        ));
    }
    out(s)
}

/// `mount`: the node's filesystems, containerd's rootfs and shm mounts, and what the
/// kubelet mounted for pod volumes.
pub fn mount(world: &World, n: u32) -> String {
    let host = &world.observe().nodes()[n as usize];
    let mut s = String::from("overlay on / type overlay (rw,relatime,lowerdir=/var/lib/docker/overlay2/l/ABCD:/var/lib/docker/overlay2/l/EFGH,upperdir=/var/lib/docker/overlay2/0a1b/diff,workdir=/var/lib/docker/overlay2/0a1b/work)\nproc on /proc type proc (rw,nosuid,nodev,noexec,relatime)\ntmpfs on /dev type tmpfs (rw,nosuid,size=65536k,mode=755)\nsysfs on /sys type sysfs (ro,nosuid,nodev,noexec,relatime)\ncgroup on /sys/fs/cgroup type cgroup2 (rw,nosuid,nodev,noexec,relatime)\n/dev/sda1 on /var type ext4 (rw,relatime)\n/dev/sda1 on /etc/hosts type ext4 (rw,relatime)\ntmpfs on /run type tmpfs (rw,nosuid,nodev,size=4096k)\n");
    let rt = &host.runtime;
    let mut sbs: Vec<_> = rt.sandboxes.values().filter(|s| s.ready).collect();
    sbs.sort_by_key(|s| s.created);
    for sb in sbs {
        s.push_str(&format!("shm on /run/containerd/io.containerd.grpc.v1.cri/sandboxes/{}/shm type tmpfs (rw,nosuid,nodev,noexec,relatime,size=65536k)\n", sb.id));
        s.push_str(&format!("overlay on /run/containerd/io.containerd.runtime.v2.task/k8s.io/{}/rootfs type overlay (rw,relatime)\n", sb.id));
        let mut cs: Vec<_> = rt
            .containers
            .values()
            .filter(|c| c.sandbox == sb.id && c.state == ContainerState::Running)
            .collect();
        cs.sort_by_key(|c| c.created);
        for c in cs {
            s.push_str(&format!("overlay on /run/containerd/io.containerd.runtime.v2.task/k8s.io/{}/rootfs type overlay (rw,relatime)\n", c.id));
        }
    }
    for m in host.os.mounts.values() {
        s.push_str(&format!(
            "{} on {} type {} ({})\n",
            m.source, m.target, m.fstype, m.options
        ));
    }
    s
}

/// `ls PATH` for the kubelet's directories.
pub fn ls(world: &World, n: u32, args: &[&str]) -> Output {
    let host = &world.observe().nodes()[n as usize];
    let path = args
        .iter()
        .find(|a| !a.starts_with('-'))
        .copied()
        .unwrap_or("/root");
    let path = path.trim_end_matches('/');
    let mut children: std::collections::BTreeSet<String> = std::collections::BTreeSet::new();
    let prefix = format!("{path}/");
    let mut known = false;
    for d in host
        .os
        .dirs
        .keys()
        .map(String::as_str)
        .chain(host.os.mounts.keys().map(String::as_str))
    {
        if d == path {
            known = true;
        }
        if let Some(rest) = d.strip_prefix(&prefix) {
            known = true;
            if let Some(first) = rest.split('/').next().filter(|x| !x.is_empty()) {
                children.insert(first.to_string());
            }
        }
    }
    match path {
        "/var/lib/kubelet" => {
            known = true;
            children.extend(
                [
                    "config.yaml",
                    "cpu_manager_state",
                    "device-plugins",
                    "kubeadm-flags.env",
                    "memory_manager_state",
                    "pki",
                    "plugins",
                    "plugins_registry",
                    "pod-resources",
                    "pods",
                ]
                .map(String::from),
            );
        }
        "/var/lib/kubelet/pods" => known = true,
        "/var/log/pods" => {
            known = true;
            for sb in host.runtime.sandboxes.values() {
                children.insert(format!("{}_{}_{}", sb.namespace, sb.name, sb.pod_uid));
            }
        }
        "/var/local-path-provisioner" => known = true,
        "/" => {
            known = true;
            children.extend("bin boot dev etc home kind lib lib64 media mnt opt proc root run sbin srv sys tmp usr var".split(' ').map(String::from));
        }
        "/root" | "" => known = true,
        _ => {}
    }
    if !known {
        return fail(
            2,
            format!("ls: cannot access '{path}': No such file or directory\n"),
        );
    }
    out(children.into_iter().map(|c| format!("{c}\n")).collect())
}

/// `systemctl status UNIT` with the unit's last journal lines.
pub fn status(world: &World, n: u32, a: Actor, u: Unit) -> Output {
    let host = &world.observe().nodes()[n as usize];
    let running = world.is_running(a);
    let name = u.name();
    let desc = match u {
        Unit::Kubelet => "kubelet: The Kubernetes Node Agent",
        Unit::Containerd => "containerd container runtime",
        Unit::KubeProxy => "kube-proxy: The Kubernetes network proxy",
    };
    let since =
        k8s_openapi::jiff::Timestamp::from_millisecond(EPOCH_UNIX_MS + host.os.booted_at as i64)
            .unwrap_or(k8s_openapi::jiff::Timestamp::UNIX_EPOCH)
            .strftime("%a %Y-%m-%d %H:%M:%S UTC")
            .to_string();
    let state = if running {
        format!("active (running) since {since}")
    } else {
        "inactive (dead)".to_string()
    };
    let mut o = format!("● {name}.service - {desc}\n     Loaded: loaded (/etc/systemd/system/{name}.service; enabled; preset: enabled)\n     Active: {state}\n");
    if running {
        o.push_str(&format!("   Main PID: {} ({name})\n", host.os.pid(u)));
    }
    let tail = host.os.journalctl(u, Some(10));
    if !tail.starts_with("--") {
        o.push('\n');
        o.push_str(&tail);
    }
    let _ = syslog_time;
    Output {
        exit_code: if running { 0 } else { 3 },
        stdout: o,
        stderr: String::new(),
    }
}
