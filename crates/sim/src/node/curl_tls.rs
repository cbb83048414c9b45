//! curl's name pinning (`--resolve`, `--connect-to`) and the `-v` lines for a server's
//! certificate.

use std::net::Ipv4Addr;

use super::Url;

/// `--resolve HOST:PORT:ADDR` entries: the address pinned for the URL's host and port.
pub(super) fn pinned_address(entries: &[String], u: &Url) -> Result<Option<Ipv4Addr>, String> {
    let mut found = None;
    for e in entries {
        let bad = || format!("Couldn't parse CURLOPT_RESOLVE entry '{e}'");
        let mut parts = e.splitn(3, ':');
        let (Some(host), Some(port), Some(addr)) = (parts.next(), parts.next(), parts.next())
        else {
            return Err(bad());
        };
        let port: u16 = port.parse().map_err(|_| bad())?;
        let first = addr.split(',').next().unwrap_or(addr);
        let ip: Ipv4Addr = first
            .trim_start_matches('[')
            .trim_end_matches(']')
            .parse()
            .map_err(|_| bad())?;
        if host.is_empty() {
            return Err(bad());
        }
        if found.is_none() && (host == "*" || host.eq_ignore_ascii_case(&u.host)) && port == u.port
        {
            found = Some(ip);
        }
    }
    Ok(found)
}

/// `--connect-to HOST:PORT:ADDR:PORT2`: where a connection for the URL's host and port
/// goes instead (the URL, hence SNI and Host, unchanged).
pub(super) fn connect_target(entries: &[String], u: &Url) -> Option<(Ipv4Addr, u16)> {
    entries.iter().find_map(|e| {
        let p: Vec<&str> = e.split(':').collect();
        let [h, port, addr, to] = p.as_slice() else {
            return None;
        };
        let matches = (h.is_empty() || h.eq_ignore_ascii_case(&u.host))
            && (port.is_empty() || port.parse::<u16>().ok() == Some(u.port));
        let to = if to.is_empty() {
            Some(u.port)
        } else {
            to.parse().ok()
        };
        matches.then(|| Some((addr.parse().ok()?, to?))).flatten()
    })
}

/// curl's `-v` lines for the server's certificate when `-k` lets an unverified one pass.
pub(super) fn server_certificate(c: &crate::node::x509::Certificate) -> String {
    use crate::node::x509::Certificate as C;
    let verdict = if c.self_signed() {
        "self-signed certificate (18)"
    } else {
        "unable to get local issuer certificate (20)"
    };
    format!(
        "* SSL connection using TLSv1.3 / TLS_AES_256_GCM_SHA384 / X25519 / RSASSA-PSS\n* Server certificate:\n*  subject: {}\n*  start date: {}\n*  expire date: {}\n*  issuer: {}\n*  SSL certificate verify result: {verdict}, continuing anyway.\n",
        C::name_line(&c.subject),
        C::print_time(&c.not_before),
        C::print_time(&c.not_after),
        C::name_line(&c.issuer),
    )
}

/// The first malformed `--resolve` entry's error, as curl reports it.
pub(crate) fn malformed(entries: &[String]) -> Option<String> {
    let any = Url {
        scheme: String::new(),
        host: String::new(),
        port: 0,
        path: String::new(),
    };
    entries
        .iter()
        .find_map(|e| pinned_address(std::slice::from_ref(e), &any).err())
}
