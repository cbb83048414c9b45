//! The nftables evaluator behind the packet walk: runs one hook's base chain of the
//! `ip kube-proxy` table like nf_tables does (jump/goto, verdict maps, numgen, affinity
//! sets, dnat, masquerade), recording each deciding rule as a [`Hop`].

use super::nftables::{Key, Match, NftChain, NftRule, NftTable, Stmt};
use super::nftables_list::{elem_text, key_text, rule_text, stmt_text};
use super::traffic::Hop;
use super::walk::{Env, Pkt, State, Verdict};
use crate::time::SECOND;

/// The `Hop::table` of nftables hops (the page marks `nft list ruleset` lines with it).
pub const NFT_TABLE: &str = "nft";

/// Runs base chain `chain` on `p`; `Continue` means the chain's policy (accept) applies.
/// The caller keeps filter hops only when they drop or reject, as for iptables.
pub(crate) fn run_hook(
    env: &Env,
    st: &mut State,
    chain: &str,
    p: &mut Pkt,
    service: &mut String,
) -> Verdict {
    let Some(t) = env.nft.as_ref() else {
        return Verdict::Continue;
    };
    run(env, st, t, chain, p, 0, service)
}

fn push(env: &Env, st: &mut State, chain: &str, rule: String, matched: bool, note: String) {
    st.hops.push(Hop {
        node: env.node.clone(),
        table: NFT_TABLE.into(),
        chain: chain.to_string(),
        rule,
        matched,
        note,
    });
}

fn run(
    env: &Env,
    st: &mut State,
    t: &NftTable,
    chain: &str,
    p: &mut Pkt,
    depth: usize,
    service: &mut String,
) -> Verdict {
    let Some(c) = t.chain(chain) else {
        return Verdict::Continue;
    };
    if depth > 32 {
        return Verdict::Continue;
    }
    for r in &c.rules {
        if !matches(env, st, t, c, r, p) {
            continue;
        }
        let text = rule_text(t.family, r);
        match stmt(env, st, t, c, &text, &r.stmt, p, depth, service) {
            Flow::Next => {}
            Flow::Leave => return Verdict::Continue,
            Flow::Final(v) => return v,
        }
    }
    Verdict::Continue
}

/// What a statement does to the chain holding it.
enum Flow {
    /// Go on with the next rule.
    Next,
    /// Leave this chain (`return`, or a `goto`'d chain that ran out).
    Leave,
    /// A verdict that ends the hook (drop, reject, dnat, masquerade).
    Final(Verdict),
}

fn after_jump(v: Verdict) -> Flow {
    match v {
        Verdict::Continue => Flow::Next,
        v => Flow::Final(v),
    }
}

fn after_goto(v: Verdict) -> Flow {
    match v {
        Verdict::Continue => Flow::Leave,
        v => Flow::Final(v),
    }
}

/// Applies one statement (a rule's, or a verdict map element's).
#[allow(clippy::too_many_arguments)]
fn stmt(
    env: &Env,
    st: &mut State,
    t: &NftTable,
    c: &NftChain,
    text: &str,
    s: &Stmt,
    p: &mut Pkt,
    depth: usize,
    service: &mut String,
) -> Flow {
    let here = c.name.as_str();
    let hop = |st: &mut State, note: String| push(env, st, here, text.into(), true, note);
    match s {
        Stmt::Jump(to) => {
            hop(st, format!("jump to {to}"));
            after_jump(run(env, st, t, to, p, depth + 1, service))
        }
        Stmt::Goto(to) => {
            hop(st, format!("goto {to}"));
            after_goto(run(env, st, t, to, p, depth + 1, service))
        }
        Stmt::Drop => {
            hop(st, "drop: no reply, the client times out".into());
            Flow::Final(Verdict::Drop)
        }
        Stmt::Reject => {
            hop(
                st,
                "reject with icmp port-unreachable: connection refused".into(),
            );
            Flow::Final(Verdict::Reject)
        }
        Stmt::Return => Flow::Leave,
        Stmt::VmapAddr(map) | Stmt::VmapPort(map) => {
            vmap(env, st, t, c, text, s, map, p, depth, service)
        }
        Stmt::Numgen(targets) => {
            let n = targets.len().max(1) as u64;
            let i = st.rng.intn(n) as usize;
            let Some(to) = targets.get(i) else {
                return Flow::Next;
            };
            hop(st, format!("numgen random mod {n} = {i}: goto {to}"));
            after_goto(run(env, st, t, to, p, depth + 1, service))
        }
        Stmt::Dnat(_, ip, port) => {
            p.dst = *ip;
            p.dport = *port;
            p.dnat = true;
            if let Some(s) = env.sep_service.get(here) {
                s.clone_into(service);
            }
            hop(st, format!("dnat to {ip}:{port}"));
            Flow::Final(Verdict::Dnat)
        }
        Stmt::MarkOr(m) => {
            p.mark |= m;
            hop(st, format!("mark 0x{m:08x}: masquerade on the way out"));
            Flow::Next
        }
        Stmt::MarkXor(m) => {
            p.mark ^= m;
            Flow::Next
        }
        Stmt::Masquerade => {
            let src = env.masquerade_source(p.dst);
            hop(st, format!("masquerade: source becomes {src}"));
            Flow::Final(Verdict::Masquerade)
        }
        Stmt::Update(set) => {
            st.aff
                .recent
                .entry(set.clone())
                .or_default()
                .insert(p.src, st.now);
            hop(st, format!("remember {} in @{set}", p.src));
            Flow::Next
        }
    }
}

/// `… vmap @MAP`: the element for the packet's key decides, as its own hop.
#[allow(clippy::too_many_arguments)]
fn vmap(
    env: &Env,
    st: &mut State,
    t: &NftTable,
    c: &NftChain,
    text: &str,
    s: &Stmt,
    map: &str,
    p: &mut Pkt,
    depth: usize,
    service: &mut String,
) -> Flow {
    let here = c.name.as_str();
    let key = match s {
        Stmt::VmapAddr(_) => Key::IpProtoPort(p.dst, p.proto, p.dport),
        _ => Key::ProtoPort(p.proto, p.dport),
    };
    let Some(e) = t
        .set(map)
        .and_then(|m| m.elements.iter().find(|e| e.key == key))
    else {
        return Flow::Next;
    };
    let Some(v) = &e.value else {
        return Flow::Next;
    };
    push(
        env,
        st,
        here,
        text.into(),
        true,
        format!(
            "{} found in @{map}: {}",
            key_text(&key),
            stmt_text(t.family, v)
        ),
    );
    push(
        env,
        st,
        map,
        elem_text(t.family, e),
        true,
        format!("element of @{map}"),
    );
    if let (Some(svc), Stmt::Goto(to)) = (&e.comment, v) {
        if to == super::nftables::REJECT_CHAIN {
            *service = svc.clone();
        }
    }
    stmt_quiet(env, st, t, c, v, p, depth, service)
}

/// A map element's verdict: its hops were recorded with the `vmap` rule's.
#[allow(clippy::too_many_arguments)]
fn stmt_quiet(
    env: &Env,
    st: &mut State,
    t: &NftTable,
    c: &NftChain,
    v: &Stmt,
    p: &mut Pkt,
    depth: usize,
    service: &mut String,
) -> Flow {
    match v {
        Stmt::Goto(to) => after_goto(run(env, st, t, to, p, depth + 1, service)),
        Stmt::Jump(to) => after_jump(run(env, st, t, to, p, depth + 1, service)),
        Stmt::Drop => Flow::Final(Verdict::Drop),
        Stmt::Reject => Flow::Final(Verdict::Reject),
        other => stmt(env, st, t, c, "", other, p, depth, service),
    }
}

fn matches(env: &Env, st: &mut State, t: &NftTable, c: &NftChain, r: &NftRule, p: &Pkt) -> bool {
    for m in &r.matches {
        let ok = match m {
            Match::CtStateNew => true,
            Match::Daddr(a) => p.dst == *a,
            Match::Saddr(a) => p.src == *a,
            Match::SaddrIn(cidr) => cidr.contains(p.src),
            Match::SaddrNotIn(cidr) => !cidr.contains(p.src),
            Match::SaddrNotInAny(cs) => !cs.iter().any(|c| c.contains(p.src)),
            Match::DaddrIn(cidr) => cidr.contains(p.dst),
            Match::DaddrSet(s) => t
                .set(s)
                .is_some_and(|s| s.elements.iter().any(|e| e.key == Key::Ip(p.dst))),
            Match::SaddrSet(s) => {
                let timeout = t.set(s).and_then(|s| s.timeout).unwrap_or(0);
                let hit = st
                    .aff
                    .recent
                    .get(s)
                    .and_then(|m| m.get(&p.src))
                    .is_some_and(|seen| st.now.saturating_sub(*seen) < u64::from(timeout) * SECOND);
                if !hit {
                    let note = format!("{} is not in @{s}: no affinity yet", p.src);
                    push(env, st, &c.name, rule_text(t.family, r), false, note);
                }
                hit
            }
            Match::FibSaddrLocal => env.is_node_addr(p.src),
            Match::MarkClear(mark) => p.mark & mark == 0,
        };
        if !ok {
            return false;
        }
    }
    true
}

/// Why the walk was refused or dropped: the service of a `no-endpoint-*` element, or the
/// comment of the deciding rule.
pub(crate) fn reason(st: &State, service: &str) -> String {
    if !service.is_empty() {
        return format!("{service} has no endpoints");
    }
    st.hops
        .iter()
        .rev()
        .find_map(|h| {
            let start = h.rule.find("comment \"")? + "comment \"".len();
            let end = h.rule[start..].find('"')? + start;
            Some(h.rule[start..end].to_string())
        })
        .unwrap_or_else(|| "no service rule".into())
}
