//! Reads the X.509 certificates and private keys of `kubernetes.io/tls` Secrets as Go's
//! `crypto/x509` and `tls.X509KeyPair` do, far enough for a proxy to pick, check and show
//! one: subject, issuer, validity, DNS SANs, and whether an RSA key belongs to it.

use base64::Engine as _;

/// One relative distinguished name attribute, `O=Acme Co`.
pub type Attribute = (String, String);

/// A parsed certificate.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Certificate {
    /// Subject attributes in order.
    pub subject: Vec<Attribute>,
    /// Issuer attributes in order.
    pub issuer: Vec<Attribute>,
    /// `notBefore` as written (`YYYYMMDDHHMMSSZ`, four-digit year).
    pub not_before: String,
    /// `notAfter`, same form.
    pub not_after: String,
    /// DNS names of the subjectAltName extension.
    pub dns_names: Vec<String>,
    /// Whether a subjectAltName extension is present.
    pub has_san: bool,
    /// The RSA modulus of the public key, when it is RSA.
    pub rsa_modulus: Option<Vec<u8>>,
}

/// A PEM block: its type and DER bytes.
pub struct Block {
    /// `CERTIFICATE`, `PRIVATE KEY`…
    pub label: String,
    /// The decoded bytes.
    pub der: Vec<u8>,
}

/// The PEM blocks of `text`, in order (malformed ones skipped, as `pem.Decode` does).
pub fn pem_blocks(text: &str) -> Vec<Block> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("-----BEGIN ") {
        let after = &rest[start + 11..];
        let Some(end_label) = after.find("-----") else {
            break;
        };
        let label = after[..end_label].to_string();
        let body_start = &after[end_label + 5..];
        let end_marker = format!("-----END {label}-----");
        let Some(end) = body_start.find(&end_marker) else {
            break;
        };
        let b64: String = body_start[..end]
            .chars()
            .filter(|c| !c.is_whitespace())
            .collect();
        if let Ok(der) = base64::engine::general_purpose::STANDARD.decode(b64) {
            out.push(Block { label, der });
        }
        rest = &body_start[end + end_marker.len()..];
    }
    out
}

/// A DER element: tag, contents, and where the next one starts.
fn tlv(b: &[u8], at: usize) -> Option<(u8, &[u8], usize)> {
    let tag = *b.get(at)?;
    let first = *b.get(at + 1)? as usize;
    let (len, head) = if first < 0x80 {
        (first, 2)
    } else {
        let n = first & 0x7f;
        if n == 0 || n > 3 {
            return None;
        }
        let mut len = 0usize;
        for i in 0..n {
            len = (len << 8) | *b.get(at + 2 + i)? as usize;
        }
        (len, 2 + n)
    };
    let start = at + head;
    let end = start.checked_add(len)?;
    Some((tag, b.get(start..end)?, end))
}

/// The elements inside a constructed element's contents.
fn children(b: &[u8]) -> Option<Vec<(u8, &[u8])>> {
    let mut out = Vec::new();
    let mut at = 0;
    while at < b.len() {
        let (tag, body, next) = tlv(b, at)?;
        out.push((tag, body));
        at = next;
    }
    Some(out)
}

fn attribute_name(oid: &[u8]) -> String {
    match oid {
        [0x55, 0x04, 0x03] => "CN".into(),
        [0x55, 0x04, 0x06] => "C".into(),
        [0x55, 0x04, 0x07] => "L".into(),
        [0x55, 0x04, 0x08] => "ST".into(),
        [0x55, 0x04, 0x0a] => "O".into(),
        [0x55, 0x04, 0x0b] => "OU".into(),
        [0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x09, 0x01] => "emailAddress".into(),
        _ => oid.iter().map(|b| format!("{b:02x}")).collect(),
    }
}

fn name(b: &[u8]) -> Option<Vec<Attribute>> {
    let mut out = Vec::new();
    for (_, set) in children(b)? {
        for (_, atv) in children(set)? {
            let parts = children(atv)?;
            let (_, oid) = parts.first()?;
            let (_, value) = parts.get(1)?;
            out.push((
                attribute_name(oid),
                String::from_utf8_lossy(value).into_owned(),
            ));
        }
    }
    Some(out)
}

fn time(tag: u8, b: &[u8]) -> Option<String> {
    let s = std::str::from_utf8(b).ok()?;
    match tag {
        0x17 if s.len() >= 12 => {
            let yy: u32 = s.get(..2)?.parse().ok()?;
            let century = if yy >= 50 { "19" } else { "20" };
            Some(format!("{century}{s}"))
        }
        0x18 => Some(s.to_string()),
        _ => None,
    }
}

fn san_dns(ext_value: &[u8]) -> Option<Vec<String>> {
    let (_, seq, _) = tlv(ext_value, 0)?;
    Some(
        children(seq)?
            .into_iter()
            .filter(|(t, _)| *t == 0x82)
            .map(|(_, v)| String::from_utf8_lossy(v).into_owned())
            .collect(),
    )
}

/// The RSA modulus of a SubjectPublicKeyInfo, leading zero bytes stripped.
fn spki_modulus(spki: &[u8]) -> Option<Vec<u8>> {
    let parts = children(spki)?;
    let (_, alg) = parts.first()?;
    let (_, oid) = children(alg)?.into_iter().next()?;
    if oid != [0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x01] {
        return None;
    }
    let (_, bits) = parts.get(1)?;
    let (_, key, _) = tlv(bits.get(1..)?, 0)?;
    let (_, modulus) = children(key)?.into_iter().next()?;
    Some(strip(modulus))
}

fn strip(b: &[u8]) -> Vec<u8> {
    let i = b.iter().position(|&x| x != 0).unwrap_or(b.len());
    b[i..].to_vec()
}

const MALFORMED: &str = "x509: malformed certificate";

/// `x509.ParseCertificate`: the certificate in `der`, or Go's error.
pub fn parse(der: &[u8]) -> Result<Certificate, String> {
    parse_inner(der).ok_or_else(|| MALFORMED.to_string())
}

fn parse_inner(der: &[u8]) -> Option<Certificate> {
    let (0x30, cert, _) = tlv(der, 0)? else {
        return None;
    };
    let (_, tbs) = *children(cert)?.first()?;
    let mut f = children(tbs)?.into_iter().peekable();
    if f.peek().map(|(t, _)| *t) == Some(0xa0) {
        f.next();
    }
    let _serial = f.next()?;
    let _alg = f.next()?;
    let issuer = name(f.next()?.1)?;
    let validity = children(f.next()?.1)?;
    let (t0, b0) = *validity.first()?;
    let (t1, b1) = *validity.get(1)?;
    let subject = name(f.next()?.1)?;
    let rsa_modulus = spki_modulus(f.next()?.1);
    let mut dns_names = Vec::new();
    let mut has_san = false;
    for (tag, body) in f {
        if tag != 0xa3 {
            continue;
        }
        let (_, exts, _) = tlv(body, 0)?;
        for (_, ext) in children(exts)? {
            let parts = children(ext)?;
            let (_, oid) = *parts.first()?;
            let (_, value) = *parts.last()?;
            if oid == [0x55, 0x1d, 0x11] {
                has_san = true;
                dns_names = san_dns(value)?;
            }
        }
    }
    Some(Certificate {
        subject,
        issuer,
        not_before: time(t0, b0)?,
        not_after: time(t1, b1)?,
        dns_names,
        has_san,
        rsa_modulus,
    })
}

/// The RSA modulus of a PKCS#1 (`RSA PRIVATE KEY`) or PKCS#8 (`PRIVATE KEY`) RSA key.
fn key_modulus(block: &Block) -> Option<Vec<u8>> {
    let (_, seq, _) = tlv(&block.der, 0)?;
    let parts = children(seq)?;
    if block.label == "RSA PRIVATE KEY" {
        return parts.get(1).map(|(_, m)| strip(m));
    }
    let (_, inner) = parts.get(2)?;
    let (_, rsa, _) = tlv(inner, 0)?;
    children(rsa)?.get(1).map(|(_, m)| strip(m))
}

/// `tls.X509KeyPair(cert, key)`: the leaf certificate, or Go's error text.
pub fn key_pair(cert_pem: &str, key_pem: &str) -> Result<Certificate, String> {
    let certs: Vec<Block> = pem_blocks(cert_pem)
        .into_iter()
        .filter(|b| b.label == "CERTIFICATE")
        .collect();
    let Some(leaf) = certs.first() else {
        return Err("tls: failed to find any PEM data in certificate input".into());
    };
    let keys = pem_blocks(key_pem);
    let Some(key) = keys
        .iter()
        .find(|b| b.label == "PRIVATE KEY" || b.label.ends_with(" PRIVATE KEY"))
    else {
        if keys.iter().any(|b| b.label == "CERTIFICATE") {
            return Err(
                "tls: found a certificate rather than a key in the PEM for the private key".into(),
            );
        }
        return Err("tls: failed to find any PEM data in key input".into());
    };
    let cert = parse(&leaf.der)?;
    match (&cert.rsa_modulus, key_modulus(key)) {
        (Some(a), Some(b)) if *a != b => Err("tls: private key does not match public key".into()),
        (Some(_), None) if key.label != "PRIVATE KEY" => {
            Err("tls: private key type does not match public key type".into())
        }
        _ => Ok(cert),
    }
}

impl Certificate {
    /// The subject's common name, or "".
    pub fn common_name(&self) -> &str {
        self.subject
            .iter()
            .find(|(k, _)| k == "CN")
            .map_or("", |(_, v)| v.as_str())
    }

    /// Issuer and subject are the same name: no CA vouches for it.
    pub fn self_signed(&self) -> bool {
        self.issuer == self.subject
    }

    /// `O=Acme Co; CN=…`, as curl prints a name.
    pub fn name_line(attrs: &[Attribute]) -> String {
        attrs
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join("; ")
    }

    /// `x509.Certificate.VerifyHostname` (SANs only), with Go's `HostnameError` text.
    pub fn verify_hostname(&self, host: &str) -> Result<(), String> {
        let host = host.to_ascii_lowercase();
        if self.dns_names.iter().any(|n| matches_host(n, &host)) {
            return Ok(());
        }
        Err(self.hostname_error(&host))
    }

    /// ingress-nginx's `verifyHostname`: SANs, or the common name when there are none.
    pub fn verify_hostname_legacy(&self, host: &str) -> Result<(), String> {
        let host = host.to_ascii_lowercase();
        let ok = if self.dns_names.is_empty() {
            matches_host(self.common_name(), &host)
        } else {
            self.dns_names.iter().any(|n| matches_host(n, &host))
        };
        if ok {
            Ok(())
        } else {
            Err(self.hostname_error(&host))
        }
    }

    fn hostname_error(&self, host: &str) -> String {
        if !self.has_san && matches_host(self.common_name(), host) {
            return "x509: certificate relies on legacy Common Name field, use SANs instead".into();
        }
        if self.dns_names.is_empty() {
            return format!(
                "x509: certificate is not valid for any names, but wanted to match {host}"
            );
        }
        format!(
            "x509: certificate is valid for {}, not {host}",
            self.dns_names.join(", ")
        )
    }

    /// `Dec  3 06:00:00 2026 GMT` (OpenSSL's `ASN1_TIME_print`) of `not_before`/`not_after`.
    pub fn print_time(t: &str) -> String {
        const MONTHS: [&str; 12] = [
            "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
        ];
        let digits = |r: std::ops::Range<usize>| t.get(r).and_then(|s| s.parse::<usize>().ok());
        match (
            digits(0..4),
            digits(4..6),
            digits(6..8),
            t.get(8..10),
            t.get(10..12),
            t.get(12..14),
        ) {
            (Some(y), Some(m @ 1..=12), Some(d), Some(hh), Some(mm), Some(ss)) => {
                format!("{} {d:>2} {hh}:{mm}:{ss} {y} GMT", MONTHS[m - 1])
            }
            _ => t.to_string(),
        }
    }
}

/// Go's `matchHostnames`: label by label, a leading `*` matching exactly one label.
fn matches_host(pattern: &str, host: &str) -> bool {
    let pattern = pattern.to_ascii_lowercase();
    let p: Vec<&str> = pattern.trim_end_matches('.').split('.').collect();
    let h: Vec<&str> = host.trim_end_matches('.').split('.').collect();
    if pattern.is_empty() || host.is_empty() || p.len() != h.len() {
        return false;
    }
    p.iter()
        .zip(&h)
        .enumerate()
        .all(|(i, (a, b))| (i == 0 && *a == "*") || a == b)
}

#[cfg(test)]
#[path = "x509_tests.rs"]
mod tests;
