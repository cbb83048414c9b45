//! The machine's own state outside the components: journald (a bounded log per unit in
//! the real components' formats), host process ids, and the kernel's mount table.

use std::collections::{BTreeMap, VecDeque};

use crate::time::{Time, EPOCH_UNIX_MS};

/// How many journal lines a node keeps (oldest dropped first).
pub const JOURNAL_LINES: usize = 4000;

/// A systemd unit on the node.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Unit {
    /// kubelet.service
    Kubelet,
    /// containerd.service
    Containerd,
    /// kube-proxy.service
    KubeProxy,
}

impl Unit {
    /// The unit's name as `journalctl -u` and `systemctl` take it.
    pub fn name(self) -> &'static str {
        match self {
            Unit::Kubelet => "kubelet",
            Unit::Containerd => "containerd",
            Unit::KubeProxy => "kube-proxy",
        }
    }

    /// Parses `kubelet`, `kubelet.service`, …
    pub fn parse(s: &str) -> Option<Unit> {
        match s.trim_end_matches(".service") {
            "kubelet" => Some(Unit::Kubelet),
            "containerd" => Some(Unit::Containerd),
            "kube-proxy" => Some(Unit::KubeProxy),
            _ => None,
        }
    }
}

/// klog severities.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
    /// `I`
    Info,
    /// `W`
    Warning,
    /// `E`
    Error,
}

/// One line a component wrote, before journald adds its prefix.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LogLine {
    /// When.
    pub at: Time,
    /// Severity.
    pub level: Level,
    /// `file.go:line` for klog components (empty for containerd's logrus lines).
    pub source: &'static str,
    /// The structured message (`"SyncLoop ADD" source="api" pods=[…]`).
    pub msg: String,
    /// logrus fields after `msg=…` (containerd: `error="…"`).
    pub extra: String,
}

impl LogLine {
    /// A klog-style line.
    pub fn klog(at: Time, level: Level, source: &'static str, msg: impl Into<String>) -> LogLine {
        LogLine {
            at,
            level,
            source,
            msg: msg.into(),
            extra: String::new(),
        }
    }

    /// A logrus-style line (containerd) with extra `key=value` fields.
    pub fn logrus(
        at: Time,
        level: Level,
        msg: impl Into<String>,
        extra: impl Into<String>,
    ) -> LogLine {
        LogLine {
            at,
            level,
            source: "",
            msg: msg.into(),
            extra: extra.into(),
        }
    }
}

/// A journal entry: the unit, its PID at the time, and the line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    /// The unit.
    pub unit: Unit,
    /// PID of the process that wrote it.
    pub pid: u32,
    /// The line.
    pub line: LogLine,
}

/// A mount in the node's mount table (`mount` / `findmnt`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mount {
    /// Source device or `tmpfs`.
    pub source: String,
    /// Mount point.
    pub target: String,
    /// Filesystem type.
    pub fstype: String,
    /// Options.
    pub options: String,
    /// The pod the mount belongs to.
    pub pod_uid: String,
}

/// What a node's operating system holds: journald, host processes and mounts.
#[derive(Clone, Debug)]
pub struct NodeOs {
    /// Hostname.
    pub hostname: String,
    journal: VecDeque<Entry>,
    pids: BTreeMap<Unit, u32>,
    next_pid: u32,
    /// Mounts kubelet made for pod volumes, by target.
    pub mounts: BTreeMap<String, Mount>,
    /// Directories kubelet created (for `ls`), by path.
    pub dirs: BTreeMap<String, u32>,
    /// Files kubelet wrote (a ConfigMap or Secret volume's keys), by path.
    pub files: BTreeMap<String, String>,
    /// When the machine last booted.
    pub booted_at: Time,
}

impl NodeOs {
    /// A freshly booted machine running containerd, kubelet and kube-proxy.
    pub fn new(hostname: &str) -> NodeOs {
        let mut os = NodeOs {
            hostname: hostname.to_string(),
            journal: VecDeque::new(),
            pids: BTreeMap::new(),
            next_pid: 96,
            mounts: BTreeMap::new(),
            dirs: BTreeMap::new(),
            files: BTreeMap::new(),
            booted_at: 0,
        };
        os.started(Unit::Containerd);
        os
    }

    /// A unit's process (re)started: it gets a new PID.
    pub fn started(&mut self, unit: Unit) -> u32 {
        self.next_pid += match unit {
            Unit::Containerd => 8,
            Unit::Kubelet => 611,
            Unit::KubeProxy => 37,
        };
        let pid = self.next_pid;
        self.pids.insert(unit, pid);
        pid
    }

    /// After a power cycle: processes start over, tmpfs mounts are gone, the disk stays.
    pub fn reboot(&mut self, now: Time) {
        self.mounts.clear();
        self.next_pid = 96;
        self.booted_at = now;
        self.pids.clear();
        self.started(Unit::Containerd);
    }

    /// Applies a change the kubelet made.
    pub fn apply(&mut self, op: crate::node::kubelet::OsOp) {
        use crate::node::kubelet::OsOp;
        match op {
            OsOp::Mount(m) => {
                self.mounts.insert(m.target.clone(), m);
            }
            OsOp::Mkdir(p) => {
                self.dirs.insert(p, 0);
            }
            OsOp::WriteFile { path, content } => {
                self.files.insert(path, content);
            }
            OsOp::RemoveFile(path) => {
                self.files.remove(&path);
            }
            OsOp::RemovePod(uid) => {
                let prefix = format!("/var/lib/kubelet/pods/{uid}/");
                self.mounts
                    .retain(|_, m| m.pod_uid != uid && !m.target.starts_with(&prefix));
                self.dirs.retain(|d, _| !d.starts_with(&prefix));
                self.files.retain(|f, _| !f.starts_with(&prefix));
            }
        }
    }

    /// The names directly under directory `dir` among the files written, sorted.
    pub fn dir_entries(&self, dir: &str) -> Vec<String> {
        let prefix = format!("{}/", dir.trim_end_matches('/'));
        let under = |keys: &mut dyn Iterator<Item = &String>| -> Vec<String> {
            keys.filter_map(|p| p.strip_prefix(&prefix))
                .filter_map(|r| r.split('/').next().map(String::from))
                .filter(|s| !s.is_empty())
                .collect()
        };
        let mut names = under(
            &mut self
                .files
                .range(prefix.clone()..)
                .map(|(k, _)| k)
                .take_while(|k| k.starts_with(&prefix)),
        );
        names.extend(under(
            &mut self
                .dirs
                .range(prefix.clone()..)
                .map(|(k, _)| k)
                .take_while(|k| k.starts_with(&prefix)),
        ));
        names.sort();
        names.dedup();
        names
    }

    /// The current PID of a unit.
    pub fn pid(&self, unit: Unit) -> u32 {
        self.pids.get(&unit).copied().unwrap_or(1)
    }

    /// Appends lines a unit wrote (bounded; oldest dropped).
    pub fn append(&mut self, unit: Unit, lines: Vec<LogLine>) {
        let pid = self.pid(unit);
        for line in lines {
            self.journal.push_back(Entry { unit, pid, line });
        }
        while self.journal.len() > JOURNAL_LINES {
            self.journal.pop_front();
        }
    }

    /// The entries of one unit, oldest first.
    pub fn entries(&self, unit: Unit) -> impl Iterator<Item = &Entry> {
        self.journal.iter().filter(move |e| e.unit == unit)
    }

    /// `journalctl -u UNIT` output (short format), optionally only the last `n` lines.
    pub fn journalctl(&self, unit: Unit, last: Option<usize>) -> String {
        let lines: Vec<&Entry> = self.entries(unit).collect();
        if lines.is_empty() {
            return "-- No entries --\n".into();
        }
        let skip = last.map_or(0, |n| lines.len().saturating_sub(n));
        let mut out = String::new();
        for e in &lines[skip..] {
            out.push_str(&format!(
                "{} {} {}[{}]: {}\n",
                syslog_time(e.line.at),
                self.hostname,
                unit.name(),
                e.pid,
                render(e)
            ));
        }
        out
    }
}

/// A line as the process printed it: klog header for kubelet and kube-proxy, logrus
/// `key=value` for containerd.
pub fn render(e: &Entry) -> String {
    match e.unit {
        Unit::Containerd => {
            let level = match e.line.level {
                Level::Info => "info",
                Level::Warning => "warning",
                Level::Error => "error",
            };
            let mut s = format!(
                "time=\"{}\" level={level} msg=\"{}\"",
                rfc3339_nanos(e.line.at),
                e.line.msg.replace('\\', "\\\\").replace('"', "\\\"")
            );
            if !e.line.extra.is_empty() {
                s.push(' ');
                s.push_str(&e.line.extra);
            }
            s
        }
        _ => format!(
            "{}{}",
            klog_header(e.line.at, e.line.level, e.pid, e.line.source),
            e.line.msg
        ),
    }
}

/// klog's header: `I0101 00:00:05.123456     712 kubelet.go:2468] `.
pub fn klog_header(at: Time, level: Level, pid: u32, source: &str) -> String {
    let c = match level {
        Level::Info => 'I',
        Level::Warning => 'W',
        Level::Error => 'E',
    };
    let ts = timestamp(at);
    format!(
        "{c}{} {}.{:06} {pid:>7} {source}] ",
        ts.strftime("%m%d"),
        ts.strftime("%H:%M:%S"),
        (at % 1000) * 1000
    )
}

fn timestamp(at: Time) -> k8s_openapi::jiff::Timestamp {
    k8s_openapi::jiff::Timestamp::from_millisecond(EPOCH_UNIX_MS + at as i64)
        .unwrap_or(k8s_openapi::jiff::Timestamp::UNIX_EPOCH)
}

/// journald's short timestamp: `Jan 01 00:00:05`.
pub fn syslog_time(at: Time) -> String {
    timestamp(at).strftime("%b %d %H:%M:%S").to_string()
}

/// RFC 3339 with nanoseconds (containerd's logrus and CRI timestamps).
pub fn rfc3339_nanos(at: Time) -> String {
    format!(
        "{}.{:09}Z",
        timestamp(at).strftime("%Y-%m-%dT%H:%M:%S"),
        (at % 1000) * 1_000_000
    )
}

/// A Go `%q`-style quoted string (for structured log values).
pub fn q(s: &str) -> String {
    format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn journal_lines_look_like_journalctl_with_klog_headers() {
        let mut os = NodeOs::new("node-1");
        os.started(Unit::Kubelet);
        os.append(
            Unit::Kubelet,
            vec![LogLine::klog(
                5_123,
                Level::Info,
                "kubelet.go:2468",
                "\"SyncLoop ADD\" source=\"api\" pods=[\"default/web\"]",
            )],
        );
        let pid = os.pid(Unit::Kubelet);
        assert_eq!(
            os.journalctl(Unit::Kubelet, None),
            format!("Jan 01 00:00:05 node-1 kubelet[{pid}]: I0101 00:00:05.123000 {pid:>7} kubelet.go:2468] \"SyncLoop ADD\" source=\"api\" pods=[\"default/web\"]\n")
        );
        assert_eq!(os.journalctl(Unit::KubeProxy, None), "-- No entries --\n");
    }

    #[test]
    fn containerd_lines_are_logrus() {
        let e = Entry {
            unit: Unit::Containerd,
            pid: 104,
            line: LogLine::klog(1, Level::Info, "", "PullImage \"nginx:1.27\""),
        };
        assert_eq!(
            render(&e),
            "time=\"2026-01-01T00:00:00.001000000Z\" level=info msg=\"PullImage \\\"nginx:1.27\\\"\""
        );
    }

    #[test]
    fn journal_is_bounded() {
        let mut os = NodeOs::new("n");
        let lines = (0..JOURNAL_LINES + 10)
            .map(|i| LogLine::klog(i as Time, Level::Info, "x.go:1", "m"))
            .collect();
        os.append(Unit::Kubelet, lines);
        assert_eq!(os.entries(Unit::Kubelet).count(), JOURNAL_LINES);
    }
}
