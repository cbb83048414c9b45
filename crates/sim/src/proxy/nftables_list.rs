//! `nft list ruleset` / `nft list table ip kube-proxy`: the listing form nft prints.
//!
//! nft prints a table's named sets and maps first, then its chains, each in creation
//! order, separated by blank lines; base chains show `type … hook … priority …; policy
//! accept;` with the standard priority names (`dstnat - 10`, `filter`, `srcnat`); marks
//! print as `0x%08x`; ports and protocols numerically/by name; map elements one per line,
//! set elements of addresses eight per line (nft's `calculate_delim`).

use std::fmt::Write as _;

use super::nftables::{
    kube_proxy_table, kube_proxy_table_v6, Elem, Family, Hook, Key, Match, NftChain, NftRule,
    NftSet, NftTable, Stmt, TABLE,
};
use super::ProxyInput;

/// What `nft list ruleset` prints on a node in nftables mode: kube-proxy's two tables.
pub fn nft_list_ruleset(input: &ProxyInput) -> String {
    let mut out = render_table(&kube_proxy_table(input));
    out.push_str(&render_table(&kube_proxy_table_v6(input)));
    out
}

/// `nft list table ip kube-proxy` (or `ip6`).
pub fn nft_list_table(input: &ProxyInput, family: Family) -> String {
    match family {
        Family::Ip => render_table(&kube_proxy_table(input)),
        Family::Ip6 => render_table(&kube_proxy_table_v6(input)),
    }
}

/// One table as nft lists it.
pub fn render_table(t: &NftTable) -> String {
    let mut out = format!("table {} {TABLE} {{\n", t.family.as_str());
    out.push_str("\tcomment \"rules for kube-proxy\"\n");
    for s in &t.sets {
        out.push('\n');
        render_set(&mut out, t.family, s);
    }
    for c in &t.chains {
        out.push('\n');
        render_chain(&mut out, t.family, c);
    }
    out.push_str("}\n");
    out
}

fn render_set(out: &mut String, fam: Family, s: &NftSet) {
    let kind = if s.is_map { "map" } else { "set" };
    let _ = writeln!(out, "\t{kind} {} {{", s.name);
    let _ = writeln!(out, "\t\ttype {}", s.type_);
    if let Some(secs) = s.timeout {
        out.push_str("\t\tflags dynamic,timeout\n");
        let _ = writeln!(out, "\t\ttimeout {}", nft_duration(secs));
    }
    if let Some(c) = s.comment {
        let _ = writeln!(out, "\t\tcomment \"{c}\"");
    }
    if !s.elements.is_empty() {
        let mut elems: Vec<&Elem> = s.elements.iter().collect();
        elems.sort_by(|a, b| a.key.cmp(&b.key));
        out.push_str("\t\telements = { ");
        let per_line = if s.is_map { 1 } else { 8 };
        for (i, e) in elems.iter().enumerate() {
            if i > 0 {
                if i % per_line == 0 {
                    out.push_str(",\n\t\t\t     ");
                } else {
                    out.push_str(", ");
                }
            }
            out.push_str(&elem_text(fam, e));
        }
        out.push_str(" }\n");
    }
    out.push_str("\t}\n");
}

/// `10.96.0.10 . udp . 53 comment "kube-system/kube-dns:dns" : goto service-…`.
pub(crate) fn elem_text(fam: Family, e: &Elem) -> String {
    let mut s = key_text(&e.key);
    if let Some(c) = &e.comment {
        let _ = write!(s, " comment \"{c}\"");
    }
    if let Some(v) = &e.value {
        let _ = write!(s, " : {}", stmt_text(fam, v));
    }
    s
}

pub(crate) fn key_text(k: &Key) -> String {
    match k {
        Key::Ip(ip) => ip.to_string(),
        Key::IpProtoPort(ip, p, port) => format!("{ip} . {} . {port}", p.lower()),
        Key::ProtoPort(p, port) => format!("{} . {port}", p.lower()),
    }
}

fn render_chain(out: &mut String, fam: Family, c: &NftChain) {
    let _ = writeln!(out, "\tchain {} {{", c.name);
    if let Some(h) = c.hook {
        let _ = writeln!(
            out,
            "\t\ttype {} hook {} priority {}; policy accept;",
            h.kind,
            h.hook,
            priority_text(h)
        );
    }
    if let Some(comment) = c.comment {
        let _ = writeln!(out, "\t\tcomment \"{comment}\"");
    }
    for r in &c.rules {
        let _ = writeln!(out, "\t\t{}", rule_text(fam, r));
    }
    out.push_str("\t}\n");
}

/// nft's standard priority names for the ip family, with an offset from the nearest.
fn priority_text(h: Hook) -> String {
    // The nearest of nft's standard ip-family priorities (dstnat -100, filter 0, srcnat 100).
    let (name, base) = match h.priority {
        p if p < -50 => ("dstnat", -100),
        p if p >= 50 => ("srcnat", 100),
        _ => ("filter", 0),
    };
    match h.priority - base {
        0 => name.to_string(),
        d if d < 0 => format!("{name} - {}", -d),
        d => format!("{name} + {d}"),
    }
}

/// nft's time format: `3h`, `10s`, `1h30m`, `1d`.
pub(crate) fn nft_duration(secs: u32) -> String {
    if secs == 0 {
        return "0s".into();
    }
    let mut out = String::new();
    let (d, h, m, s) = (secs / 86400, secs / 3600 % 24, secs / 60 % 60, secs % 60);
    for (v, unit) in [(d, "d"), (h, "h"), (m, "m"), (s, "s")] {
        if v > 0 {
            let _ = write!(out, "{v}{unit}");
        }
    }
    out
}

/// A rule as `nft list` prints it.
pub(crate) fn rule_text(fam: Family, r: &NftRule) -> String {
    let mut parts: Vec<String> = r.matches.iter().map(|m| match_text(fam, m)).collect();
    parts.push(stmt_text(fam, &r.stmt));
    let mut s = parts.join(" ");
    if let Some(c) = &r.comment {
        let _ = write!(s, " comment \"{c}\"");
    }
    s
}

fn match_text(fam: Family, m: &Match) -> String {
    let ip = fam.as_str();
    match m {
        Match::CtStateNew => "ct state new".into(),
        Match::Daddr(a) => format!("{ip} daddr {a}"),
        Match::Saddr(a) => format!("{ip} saddr {a}"),
        Match::SaddrIn(c) => format!("{ip} saddr {c}"),
        Match::SaddrNotIn(c) => format!("{ip} saddr != {c}"),
        Match::SaddrNotInAny(cs) => {
            let list: Vec<String> = cs.iter().map(cidr_text).collect();
            if list.len() == 1 {
                format!("{ip} saddr != {}", list[0])
            } else {
                format!("{ip} saddr != {{ {} }}", list.join(", "))
            }
        }
        Match::DaddrIn(c) => format!("{ip} daddr {c}"),
        Match::DaddrSet(s) => format!("{ip} daddr @{s}"),
        Match::SaddrSet(s) => format!("{ip} saddr @{s}"),
        Match::FibSaddrLocal => "fib saddr type local".into(),
        Match::MarkClear(mark) => format!("meta mark & 0x{mark:08x} == 0x00000000"),
    }
}

/// nft prints a /32 in a set as the bare address.
fn cidr_text(c: &super::Cidr) -> String {
    let s = c.to_string();
    s.strip_suffix("/32").map(str::to_string).unwrap_or(s)
}

pub(crate) fn stmt_text(fam: Family, s: &Stmt) -> String {
    let ip = fam.as_str();
    match s {
        Stmt::Jump(c) => format!("jump {c}"),
        Stmt::Goto(c) => format!("goto {c}"),
        Stmt::Drop => "drop".into(),
        Stmt::Reject => "reject".into(),
        Stmt::Return => "return".into(),
        Stmt::VmapAddr(m) => format!("{ip} daddr . meta l4proto . th dport vmap @{m}"),
        Stmt::VmapPort(m) => format!("meta l4proto . th dport vmap @{m}"),
        Stmt::Numgen(targets) => {
            let items: Vec<String> = targets
                .iter()
                .enumerate()
                .map(|(i, c)| format!("{i} : goto {c}"))
                .collect();
            format!(
                "numgen random mod {} vmap {{ {} }}",
                targets.len(),
                items.join(", ")
            )
        }
        Stmt::Dnat(p, a, port) => format!("meta l4proto {} dnat to {a}:{port}", p.lower()),
        Stmt::MarkOr(m) => format!("meta mark set meta mark | 0x{m:08x}"),
        Stmt::MarkXor(m) => format!("meta mark set meta mark ^ 0x{m:08x}"),
        Stmt::Masquerade => "masquerade fully-random".into(),
        Stmt::Update(set) => format!("update @{set} {{ {ip} saddr }}"),
    }
}
