//! A small iptables rule model, printed as kube-proxy writes it or as `iptables-save` shows it.
//!
//! kube-proxy hands `iptables-restore` its arguments in its own order (`-m comment … -m tcp
//! -p tcp -d 10.96.0.1 --dport 443`); the kernel keeps the rule as addresses, protocol and a
//! list of matches, and `iptables-save` prints them back normalized (`-d 10.96.0.1/32 -p tcp
//! -m comment --comment "…" -m tcp --dport 443`). Keeping rules structured lets one model
//! produce both texts and be evaluated by the packet walk.

use std::fmt::Write as _;

use super::model::Protocol;
use super::net::Cidr;

/// One piece of a rule, in the order kube-proxy writes it.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Part {
    /// `-m comment --comment X`; `quoted` says whether kube-proxy put quotes around it.
    Comment { text: String, quoted: bool },
    /// `-m tcp -p tcp`.
    Proto(Protocol),
    /// `-p tcp` alone (no protocol match module), as IPVS mode writes it.
    ProtoOnly(Protocol),
    /// `[!] -s X` with X as kube-proxy wrote it (bare IP or CIDR).
    Src { not: bool, text: String, cidr: Cidr },
    /// `[!] -d X`.
    Dst { not: bool, text: String, cidr: Cidr },
    /// `--dport N` (an option of the protocol match).
    DPort(u16),
    /// `-m addrtype [!] --src-type LOCAL` (`src`) or `--dst-type LOCAL`.
    AddrType { src: bool, not: bool },
    /// `-m set [!] --match-set NAME dst,dst`.
    Set {
        name: &'static str,
        not: bool,
        dims: &'static str,
    },
    /// `-m physdev ! --physdev-is-in`: the packet did not come in over a bridge port.
    PhysdevNotIsIn,
    /// `-m statistic --mode random --probability P`, P as kube-proxy formats it.
    Statistic(String),
    /// `-m recent --name N --set`.
    RecentSet(String),
    /// `-m recent --name N --rcheck --seconds S --reap`.
    RecentCheck { name: String, seconds: u32 },
    /// `-m mark [!] --mark V/V`.
    Mark { not: bool, mark: u32 },
    /// `-m conntrack [!] --ctstate S`.
    Conntrack { not: bool, states: &'static str },
    /// `-m nfacct --nfacct-name N`.
    Nfacct(&'static str),
}

/// What a rule does when it matches.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Target {
    /// `-j CHAIN`.
    Jump(String),
    /// `-j DNAT --to-destination ip:port`.
    Dnat(String),
    /// `-j REJECT` (the kernel's default `icmp-port-unreachable`).
    Reject,
    /// `-j DROP`.
    Drop,
    /// `-j ACCEPT`.
    Accept,
    /// `-j RETURN`.
    Return,
    /// `-j MARK --or-mark V`.
    MarkOr(u32),
    /// `-j MARK --xor-mark V`.
    MarkXor(u32),
    /// `-j MASQUERADE [--random-fully]`.
    Masquerade { random_fully: bool },
    /// No target: the rule only counts packets.
    None,
}

/// One `-A CHAIN …` line.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Rule {
    pub chain: String,
    pub parts: Vec<Part>,
    pub target: Target,
}

impl Rule {
    pub fn new(chain: &str, parts: Vec<Part>, target: Target) -> Rule {
        Rule {
            chain: chain.to_string(),
            parts,
            target,
        }
    }

    /// The line as kube-proxy writes it into `iptables-restore` input.
    pub fn restore_line(&self) -> String {
        let mut s = format!("-A {}", self.chain);
        for p in &self.parts {
            match p {
                Part::Comment { text, quoted: true } => {
                    let _ = write!(s, " -m comment --comment \"{text}\"");
                }
                Part::Comment {
                    text,
                    quoted: false,
                } => {
                    let _ = write!(s, " -m comment --comment {text}");
                }
                Part::Proto(p) => {
                    let _ = write!(s, " -m {0} -p {0}", p.lower());
                }
                Part::Src { not, text, .. } => {
                    let _ = write!(s, "{} -s {text}", bang(*not));
                }
                Part::Dst { not, text, .. } => {
                    let _ = write!(s, "{} -d {text}", bang(*not));
                }
                Part::DPort(n) => {
                    let _ = write!(s, " --dport {n}");
                }
                Part::ProtoOnly(p) => {
                    let _ = write!(s, " -p {}", p.lower());
                }
                Part::AddrType { .. }
                | Part::Set { .. }
                | Part::PhysdevNotIsIn
                | Part::Mark { .. }
                | Part::Conntrack { .. }
                | Part::Nfacct(_) => {
                    s.push_str(&match_text(p));
                }
                Part::Statistic(p) => {
                    let _ = write!(s, " -m statistic --mode random --probability {p}");
                }
                Part::RecentSet(n) => {
                    let _ = write!(s, " -m recent --name {n} --set");
                }
                Part::RecentCheck { name, seconds } => {
                    let _ = write!(
                        s,
                        " -m recent --name {name} --rcheck --seconds {seconds} --reap"
                    );
                }
            }
        }
        s.push_str(&target_text(&self.target, false));
        s
    }

    /// The line as `iptables-save` prints the rule back: addresses with their prefix,
    /// `-p` before the matches, matches in insertion order with their saved options.
    pub fn save_line(&self) -> String {
        let mut s = format!("-A {}", self.chain);
        for p in &self.parts {
            if let Part::Src { not, cidr, .. } = p {
                let _ = write!(s, "{} -s {}", bang(*not), cidr.network());
            }
        }
        for p in &self.parts {
            if let Part::Dst { not, cidr, .. } = p {
                let _ = write!(s, "{} -d {}", bang(*not), cidr.network());
            }
        }
        let proto = self.parts.iter().find_map(|p| match p {
            Part::Proto(p) | Part::ProtoOnly(p) => Some(*p),
            _ => None,
        });
        if let Some(p) = proto {
            let _ = write!(s, " -p {}", p.lower());
        }
        let dport = self.parts.iter().find_map(|p| match p {
            Part::DPort(n) => Some(*n),
            _ => None,
        });
        for p in &self.parts {
            match p {
                Part::Comment { text, .. } => {
                    let _ = write!(s, " -m comment --comment {}", save_string(text));
                }
                Part::Proto(p) => {
                    let _ = write!(s, " -m {}", p.lower());
                    if let Some(n) = dport {
                        let _ = write!(s, " --dport {n}");
                    }
                }
                Part::Src { .. } | Part::Dst { .. } | Part::DPort(_) | Part::ProtoOnly(_) => {}
                Part::AddrType { .. }
                | Part::Set { .. }
                | Part::PhysdevNotIsIn
                | Part::Mark { .. }
                | Part::Conntrack { .. }
                | Part::Nfacct(_) => {
                    s.push_str(&match_text(p));
                }
                Part::Statistic(p) => {
                    let _ = write!(
                        s,
                        " -m statistic --mode random --probability {:.11}",
                        f64::from(kernel_probability(p)) / 2_147_483_648.0
                    );
                }
                Part::RecentSet(n) => {
                    let _ = write!(
                        s,
                        " -m recent --set --name {n} --mask 255.255.255.255 --rsource"
                    );
                }
                Part::RecentCheck { name, seconds } => {
                    let _ = write!(
                        s,
                        " -m recent --rcheck --seconds {seconds} --reap --name {name} \
                         --mask 255.255.255.255 --rsource"
                    );
                }
            }
        }
        s.push_str(&target_text(&self.target, true));
        s
    }
}

fn bang(not: bool) -> &'static str {
    if not {
        " !"
    } else {
        ""
    }
}

/// Matches printed the same way in restore input and in `iptables-save`.
/// ` -j …` for a target, as written to iptables-restore or, `saved`, as the kernel
/// prints it back (REJECT with its default, MARK as `--set-xmark value/mask`).
fn target_text(t: &Target, saved: bool) -> String {
    match t {
        Target::Jump(c) => format!(" -j {c}"),
        Target::Dnat(d) => format!(" -j DNAT --to-destination {d}"),
        Target::Reject if saved => " -j REJECT --reject-with icmp-port-unreachable".into(),
        Target::Reject => " -j REJECT".into(),
        Target::Drop => " -j DROP".into(),
        Target::Accept => " -j ACCEPT".into(),
        Target::Return => " -j RETURN".into(),
        Target::MarkOr(m) if saved => format!(" -j MARK --set-xmark {m:#x}/{m:#x}"),
        Target::MarkOr(m) => format!(" -j MARK --or-mark {m:#x}"),
        Target::MarkXor(m) if saved => format!(" -j MARK --set-xmark {m:#x}/0x0"),
        Target::MarkXor(m) => format!(" -j MARK --xor-mark {m:#x}"),
        Target::Masquerade { random_fully: true } => " -j MASQUERADE --random-fully".into(),
        Target::Masquerade {
            random_fully: false,
        } => " -j MASQUERADE".into(),
        Target::None => String::new(),
    }
}

fn match_text(p: &Part) -> String {
    match p {
        Part::AddrType { src, not } => {
            format!(" -m addrtype{} --{}-type LOCAL", bang(*not), src_dst(*src))
        }
        Part::Set { name, not, dims } => format!(" -m set{} --match-set {name} {dims}", bang(*not)),
        Part::PhysdevNotIsIn => " -m physdev ! --physdev-is-in".to_string(),
        Part::Mark { not, mark } => format!(" -m mark{} --mark {mark:#x}/{mark:#x}", bang(*not)),
        Part::Conntrack { not, states } => {
            format!(" -m conntrack{} --ctstate {states}", bang(*not))
        }
        Part::Nfacct(n) => format!(" -m nfacct --nfacct-name {n}"),
        _ => String::new(),
    }
}

fn src_dst(src: bool) -> &'static str {
    if src {
        "src"
    } else {
        "dst"
    }
}

/// The statistic match's stored probability: `lround(2^31 * p)` (libxt_statistic), the
/// value the kernel compares `random & 0x7fffffff` against.
pub(crate) fn kernel_probability(p: &str) -> u32 {
    let v: f64 = p.parse().unwrap_or(1.0);
    (v * 2_147_483_648.0).round().clamp(0.0, 2_147_483_648.0) as u32
}

/// `xtables_save_string`: bare if only `[A-Za-z0-9_-]`, else double-quoted with `"`, `\`
/// and `'` escaped.
pub(crate) fn save_string(s: &str) -> String {
    let plain = !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    if plain {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        if matches!(c, '"' | '\\' | '\'') {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
    out
}

/// `fmt.Sprintf("%0.10f", 1.0/float64(n))`: the probability kube-proxy writes for the
/// rule that still has `n` endpoints to choose from.
pub(crate) fn probability(n: usize) -> String {
    format!("{:.10}", 1.0 / n as f64)
}

/// A table's chains and rules, in the order they are printed.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Table {
    /// User chains, in declaration order.
    pub chains: Vec<String>,
    /// Rules, in kube-proxy's write order.
    pub rules: Vec<Rule>,
}

impl Table {
    pub fn chain(&mut self, name: &str) {
        if !self.chains.iter().any(|c| c == name) {
            self.chains.push(name.to_string());
        }
    }

    pub fn rules_of<'a>(&'a self, chain: &'a str) -> impl Iterator<Item = &'a Rule> + 'a {
        self.rules.iter().filter(move |r| r.chain == chain)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::Ipv4Addr;

    #[test]
    fn probabilities_are_formatted_as_upstream_and_as_the_kernel_prints_them() {
        assert_eq!(probability(3), "0.3333333333");
        assert_eq!(probability(2), "0.5000000000");
        assert_eq!(probability(4), "0.2500000000");
        let r = Rule::new(
            "KUBE-SVC-X",
            vec![Part::Statistic(probability(3))],
            Target::None,
        );
        assert!(r.save_line().ends_with("--probability 0.33333333349"));
        let r = Rule::new(
            "KUBE-SVC-X",
            vec![Part::Statistic(probability(2))],
            Target::None,
        );
        assert!(r.save_line().ends_with("--probability 0.50000000000"));
        // kube-proxy before 1.28 wrote %0.5f; real dumps of that era show 0.33332999982.
        assert_eq!(kernel_probability("0.33333"), 715_820_724);
        let r = Rule::new(
            "KUBE-SVC-X",
            vec![Part::Statistic("0.33333".into())],
            Target::None,
        );
        assert!(r.save_line().ends_with("--probability 0.33332999982"));
    }

    #[test]
    fn save_line_normalizes_order_and_addresses() {
        let cidr = Cidr::parse("10.96.0.1").unwrap();
        let r = Rule::new(
            "KUBE-SVC-X",
            vec![
                Part::Comment {
                    text: "default/kubernetes:https cluster IP".into(),
                    quoted: true,
                },
                Part::Proto(Protocol::Tcp),
                Part::Dst {
                    not: false,
                    text: "10.96.0.1".into(),
                    cidr,
                },
                Part::DPort(443),
                Part::Src {
                    not: true,
                    text: "10.244.0.0/16".into(),
                    cidr: Cidr::new(Ipv4Addr::new(10, 244, 0, 0), 16),
                },
            ],
            Target::Jump("KUBE-MARK-MASQ".into()),
        );
        assert_eq!(
            r.restore_line(),
            "-A KUBE-SVC-X -m comment --comment \"default/kubernetes:https cluster IP\" -m tcp -p tcp -d 10.96.0.1 --dport 443 ! -s 10.244.0.0/16 -j KUBE-MARK-MASQ"
        );
        assert_eq!(
            r.save_line(),
            "-A KUBE-SVC-X ! -s 10.244.0.0/16 -d 10.96.0.1/32 -p tcp -m comment --comment \"default/kubernetes:https cluster IP\" -m tcp --dport 443 -j KUBE-MARK-MASQ"
        );
    }

    #[test]
    fn save_string_quotes_like_xtables() {
        assert_eq!(save_string("abc-1_2"), "abc-1_2");
        assert_eq!(save_string("default/nginx"), "\"default/nginx\"");
        assert_eq!(save_string("a\"b"), "\"a\\\"b\"");
    }
}
