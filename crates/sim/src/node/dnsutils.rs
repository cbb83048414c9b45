//! The DNS tools of Debian's dnsutils (the docs' `jessie-dnsutils` image): `dig` (BIND
//! 9.9.5: no search path unless `+search`, `+short`, `-t TYPE`, sections aligned on BIND's
//! tab columns) and BIND's `nslookup`, both over the pod's resolver.

use crate::node::dns::{QType, Record, TTL};
use crate::node::kubelet_api::RunResult;
use crate::node::net::{Network, Source};
use crate::node::resolver::{self, Lookup};
use crate::time::{k8s_time, SECOND};

const VERSION: &str = "9.9.5-9+deb8u19-Debian";

/// `dig [@server] [-t TYPE] [+short] [+search] NAME [TYPE]`.
pub fn dig(net: &mut Network, src: &Source, args: &[String]) -> RunResult {
    let mut short = false;
    let mut search = false;
    let mut qtype = QType::A;
    let mut name = None;
    let mut i = 0;
    while i < args.len() {
        let a = args[i].as_str();
        match a.to_ascii_lowercase().as_str() {
            "+short" => short = true,
            "+search" => search = true,
            "-t" => {
                i += 1;
                match args.get(i).map(|t| t.to_ascii_lowercase()).as_deref() {
                    Some("a") => qtype = QType::A,
                    Some("srv") => qtype = QType::Srv,
                    t => return RunResult::err(1, format!("invalid type: {}\n", t.unwrap_or(""))),
                }
            }
            "a" if name.is_some() => qtype = QType::A,
            "srv" if name.is_some() => qtype = QType::Srv,
            s if s.starts_with('+') || s.starts_with('@') || s.starts_with('-') => {}
            _ => name = Some(a.to_string()),
        }
        i += 1;
    }
    let name = name.unwrap_or_else(|| ".".into());
    let asked = if search || name.ends_with('.') {
        name.clone()
    } else {
        format!("{name}.")
    };
    let server = resolver::server_of(net, src);
    let banner = format!(
        "\n; <<>> DiG {VERSION} <<>> {}\n;; global options: +cmd\n",
        args.join(" ")
    );
    let result = resolver::lookup(net, src, &asked, qtype);
    if result == Lookup::Timeout {
        let text = ";; connection timed out; no servers could be reached\n";
        return RunResult {
            stdout: if short {
                text.to_string()
            } else {
                format!("{banner}{text}")
            },
            code: 9,
            elapsed: 15 * SECOND,
            ..RunResult::default()
        };
    }
    let (status, qname, records) = match result {
        Lookup::Answer { fqdn, records, .. } => ("NOERROR", fqdn, records),
        _ => (
            "NXDOMAIN",
            name.trim_end_matches('.').to_string(),
            Vec::new(),
        ),
    };
    if short {
        return RunResult::out(
            records
                .iter()
                .map(|r| format!("{}\n", rdata(r)))
                .collect::<String>(),
        );
    }
    let mut out = banner;
    let id = crate::rng::fnv1a(format!("{}{qname}", net.now).as_bytes()) % 65536;
    let soa = status == "NXDOMAIN" && qname.ends_with("cluster.local");
    out.push_str(&format!(
        ";; Got answer:\n;; ->>HEADER<<- opcode: QUERY, status: {status}, id: {id}\n;; flags: qr aa rd; QUERY: 1, ANSWER: {}, AUTHORITY: {}, ADDITIONAL: 1\n;; WARNING: recursion requested but not available\n\n;; OPT PSEUDOSECTION:\n; EDNS: version: 0, flags:; udp: 4096\n;; QUESTION SECTION:\n",
        records.len(),
        u8::from(soa)
    ));
    let type_name = match qtype {
        QType::A => "A",
        QType::Srv => "SRV",
    };
    out.push_str(&columns(&[&format!(";{qname}."), "", "IN", type_name]));
    out.push('\n');
    if !records.is_empty() {
        out.push_str("\n;; ANSWER SECTION:\n");
        for r in &records {
            out.push_str(&columns(&[
                &format!("{}.", owner(r)),
                &TTL.to_string(),
                "IN",
                kind(r),
                &rdata(r),
            ]));
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
    let when = k8s_time(net.now).0.strftime("%a %b %d %H:%M:%S UTC %Y");
    out.push_str(&format!(
        "\n;; Query time: 0 msec\n;; SERVER: {server}#53({server})\n;; WHEN: {when}\n;; MSG SIZE  rcvd: {}\n\n",
        size(&qname, &records, soa)
    ));
    RunResult::out(out)
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
