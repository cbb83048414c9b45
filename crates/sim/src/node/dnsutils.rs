//! The DNS tools of Debian's dnsutils (the docs' `jessie-dnsutils` image): `dig` (BIND
//! 9.9.5: no search path unless `+search`, `+short`, `-t TYPE`, sections aligned on BIND's
//! tab columns) and BIND's `nslookup`, both over the pod's resolver.

use crate::node::dns::{QType, Record, TTL};
use crate::node::kubelet_api::RunResult;
use crate::node::net::{Network, Source};
use crate::node::resolver::{self, Lookup};
use crate::time::{k8s_time, SECOND};

const VERSION: &str = "9.9.5-9+deb8u19-Debian";

/// What `dig` was asked.
struct DigArgs {
    short: bool,
    search: bool,
    qtype: QType,
    name: String,
}

/// `dig [@server] [-t TYPE] [+short] [+search] NAME [TYPE]` (other options ignored).
fn dig_args(args: &[String]) -> Result<DigArgs, RunResult> {
    let mut d = DigArgs {
        short: false,
        search: false,
        qtype: QType::A,
        name: String::new(),
    };
    let mut i = 0;
    while i < args.len() {
        let a = args[i].as_str();
        match a.to_ascii_lowercase().as_str() {
            "+short" => d.short = true,
            "+search" => d.search = true,
            "-t" => {
                i += 1;
                match args.get(i).map(|t| t.to_ascii_lowercase()).as_deref() {
                    Some("a") => d.qtype = QType::A,
                    Some("srv") => d.qtype = QType::Srv,
                    t => {
                        let t = t.unwrap_or("");
                        return Err(RunResult::err(1, format!("invalid type: {t}\n")));
                    }
                }
            }
            "a" if !d.name.is_empty() => d.qtype = QType::A,
            "srv" if !d.name.is_empty() => d.qtype = QType::Srv,
            s if s.starts_with('+') || s.starts_with('@') || s.starts_with('-') => {}
            _ => d.name = a.to_string(),
        }
        i += 1;
    }
    if d.name.is_empty() {
        d.name = ".".into();
    }
    Ok(d)
}

/// `dig`: the query goes to the pod's first nameserver, without the search path unless
/// `+search`.
pub fn dig(net: &mut Network, src: &Source, args: &[String]) -> RunResult {
    let d = match dig_args(args) {
        Ok(d) => d,
        Err(r) => return r,
    };
    let asked = if d.search || d.name.ends_with('.') {
        d.name.clone()
    } else {
        format!("{}.", d.name)
    };
    let banner = format!(
        "\n; <<>> DiG {VERSION} <<>> {}\n;; global options: +cmd\n",
        args.join(" ")
    );
    let server = resolver::server_of(net, src);
    let (status, qname, records) = match resolver::lookup(net, src, &asked, d.qtype) {
        Lookup::Timeout => {
            let text = ";; connection timed out; no servers could be reached\n";
            return RunResult {
                stdout: if d.short {
                    text.to_string()
                } else {
                    format!("{banner}{text}")
                },
                code: 9,
                elapsed: 15 * SECOND,
                ..RunResult::default()
            };
        }
        Lookup::Answer { fqdn, records, .. } => ("NOERROR", fqdn, records),
        _ => (
            "NXDOMAIN",
            d.name.trim_end_matches('.').to_string(),
            Vec::new(),
        ),
    };
    if d.short {
        let lines: String = records.iter().map(|r| format!("{}\n", rdata(r))).collect();
        return RunResult::out(lines);
    }
    let reply = Reply {
        status,
        qname: &qname,
        qtype: d.qtype,
        records: &records,
        server: &server,
        now: net.now,
    };
    RunResult::out(format!("{banner}{}", reply.render()))
}

/// A reply as dig prints it after its banner.
struct Reply<'a> {
    status: &'a str,
    qname: &'a str,
    qtype: QType,
    records: &'a [Record],
    server: &'a str,
    now: crate::time::Time,
}

impl Reply<'_> {
    fn render(&self) -> String {
        let (qname, records) = (self.qname, self.records);
        let id = crate::rng::fnv1a(format!("{}{qname}", self.now).as_bytes()) % 65536;
        let soa = self.status == "NXDOMAIN" && qname.ends_with("cluster.local");
        let mut out = format!(
            ";; Got answer:\n;; ->>HEADER<<- opcode: QUERY, status: {}, id: {id}\n;; flags: qr aa rd; QUERY: 1, ANSWER: {}, AUTHORITY: {}, ADDITIONAL: 1\n;; WARNING: recursion requested but not available\n\n;; OPT PSEUDOSECTION:\n; EDNS: version: 0, flags:; udp: 4096\n;; QUESTION SECTION:\n",
            self.status,
            records.len(),
            u8::from(soa)
        );
        let type_name = match self.qtype {
            QType::A => "A",
            QType::Srv => "SRV",
        };
        out.push_str(&columns(&[&format!(";{qname}."), "", "IN", type_name]));
        out.push('\n');
        if !records.is_empty() {
            out.push_str("\n;; ANSWER SECTION:\n");
            for r in records {
                let owner = format!("{}.", owner(r));
                let ttl = TTL.to_string();
                out.push_str(&columns(&[&owner, &ttl, "IN", kind(r), &rdata(r)]));
                out.push('\n');
            }
        }
        if soa {
            out.push_str("\n;; AUTHORITY SECTION:\n");
            out.push_str(&columns(&[
                "cluster.local.",
                &TTL.to_string(),
                "IN",
                "SOA",
                "ns.dns.cluster.local. hostmaster.cluster.local. 1767225600 7200 1800 86400 30",
            ]));
            out.push('\n');
        }
        let when = k8s_time(self.now).0.strftime("%a %b %d %H:%M:%S UTC %Y");
        let server = self.server;
        out.push_str(&format!(
            "\n;; Query time: 0 msec\n;; SERVER: {server}#53({server})\n;; WHEN: {when}\n;; MSG SIZE  rcvd: {}\n\n",
            size(qname, records, soa)
        ));
        out
    }
}

/// BIND's `nslookup NAME`: the search path, `Address: server#53`.
pub fn nslookup(net: &mut Network, src: &Source, args: &[String]) -> RunResult {
    let mut qtype = QType::A;
    let mut name = None;
    for a in args {
        match a.to_ascii_lowercase().as_str() {
            "-type=srv" | "-query=srv" | "-q=srv" => qtype = QType::Srv,
            "-type=a" | "-query=a" | "-q=a" => qtype = QType::A,
            s if s.starts_with('-') => {}
            _ if name.is_none() => name = Some(a.clone()),
            _ => {}
        }
    }
    let Some(name) = name else {
        return RunResult::err(1, "nslookup: interactive mode is not supported here\n");
    };
    let server = resolver::server_of(net, src);
    let head = format!("Server:\t\t{server}\nAddress:\t{server}#53\n\n");
    match resolver::lookup(net, src, &name, qtype) {
        Lookup::Answer { records, .. } => {
            let mut out = head;
            for r in &records {
                out.push_str(&match r {
                    Record::A { name, ip } => format!("Name:\t{name}\nAddress: {ip}\n"),
                    Record::Cname { name, target } => {
                        format!("{name}\tcanonical name = {target}.\n")
                    }
                    Record::Srv { name, .. } => format!("{name}\tservice = {}\n", rdata(r)),
                });
            }
            out.push('\n');
            RunResult::out(out)
        }
        Lookup::Timeout => RunResult {
            stdout: ";; connection timed out; no servers could be reached\n\n".into(),
            code: 1,
            elapsed: 15 * SECOND,
            ..RunResult::default()
        },
        _ => RunResult {
            stdout: format!("{head}** server can't find {name}: NXDOMAIN\n\n"),
            code: 1,
            ..RunResult::default()
        },
    }
}

fn owner(r: &Record) -> &str {
    match r {
        Record::A { name, .. } | Record::Cname { name, .. } | Record::Srv { name, .. } => name,
    }
}

fn kind(r: &Record) -> &'static str {
    match r {
        Record::A { .. } => "A",
        Record::Cname { .. } => "CNAME",
        Record::Srv { .. } => "SRV",
    }
}

fn rdata(r: &Record) -> String {
    match r {
        Record::A { ip, .. } => ip.to_string(),
        Record::Cname { target, .. } => format!("{target}."),
        Record::Srv {
            priority,
            weight,
            port,
            target,
            ..
        } => format!("{priority} {weight} {port} {target}."),
    }
}

/// BIND's master-file style: fields at columns 24 (TTL), 32 (class), 40 (type) and 48
/// (data), reached with tabs, or one space when a field runs past its column.
fn columns(fields: &[&str]) -> String {
    const COLS: [usize; 4] = [24, 32, 40, 48];
    let mut s = String::new();
    let mut width = 0;
    for (i, f) in fields.iter().enumerate() {
        if i > 0 {
            let col = COLS[i - 1];
            if f.is_empty() {
                continue;
            }
            if width >= col {
                s.push(' ');
                width += 1;
            } else {
                while width < col {
                    s.push('\t');
                    width = (width / 8 + 1) * 8;
                }
            }
        }
        s.push_str(f);
        width += f.len();
    }
    s
}

/// The reply's size on the wire: header, question, answers (owner compressed to a
/// pointer), the SOA when there is one, and the OPT record.
fn size(qname: &str, records: &[Record], soa: bool) -> usize {
    let wire = |n: &str| {
        n.split('.')
            .filter(|l| !l.is_empty())
            .map(|l| l.len() + 1)
            .sum::<usize>()
            + 1
    };
    let answers: usize = records
        .iter()
        .map(|r| {
            12 + match r {
                Record::A { .. } => 4,
                Record::Cname { target, .. } => wire(target),
                Record::Srv { target, .. } => 6 + wire(target),
            }
        })
        .sum();
    12 + wire(qname) + 4 + answers + if soa { 12 + 56 } else { 0 } + 11
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_align_on_binds_tab_columns() {
        assert_eq!(
            columns(&["example.com.", "30", "IN", "A", "1.2.3.4"]),
            "example.com.\t\t30\tIN\tA\t1.2.3.4"
        );
        assert_eq!(
            columns(&[
                "kubernetes.default.svc.cluster.local.",
                "30",
                "IN",
                "A",
                "10.96.0.1"
            ]),
            "kubernetes.default.svc.cluster.local. 30 IN A\t10.96.0.1"
        );
        assert_eq!(
            columns(&[";example.com.", "", "IN", "A"]),
            ";example.com.\t\t\tIN\tA"
        );
    }
}
