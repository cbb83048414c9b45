//! The certificate reader against certificates `openssl req -x509` made.

use super::*;

const FOO_CRT: &str = include_str!("../../tests/testdata/tls/foo.bar.com.crt");
const FOO_KEY: &str = include_str!("../../tests/testdata/tls/foo.bar.com.key");
const SAN_CRT: &str = include_str!("../../tests/testdata/tls/san.crt");
const SAN_KEY: &str = include_str!("../../tests/testdata/tls/other.key");

#[test]
fn reads_subject_issuer_and_validity_of_a_common_name_certificate() {
    let c = key_pair(FOO_CRT, FOO_KEY).unwrap();
    assert_eq!(
        Certificate::name_line(&c.subject),
        "CN=foo.bar.com; O=foo.bar.com"
    );
    assert!(c.self_signed());
    assert!(!c.has_san);
    assert_eq!(c.common_name(), "foo.bar.com");
    assert_eq!(c.not_before.len(), 15, "{}", c.not_before);
    assert!(Certificate::print_time(&c.not_after).ends_with(" GMT"));
}

#[test]
fn go_rejects_a_common_name_only_certificate_and_ingress_nginx_accepts_it() {
    let c = key_pair(FOO_CRT, FOO_KEY).unwrap();
    assert_eq!(
        c.verify_hostname("foo.bar.com").unwrap_err(),
        "x509: certificate relies on legacy Common Name field, use SANs instead"
    );
    assert_eq!(c.verify_hostname_legacy("FOO.bar.com"), Ok(()));
    assert_eq!(
        c.verify_hostname_legacy("other.com").unwrap_err(),
        "x509: certificate is not valid for any names, but wanted to match other.com"
    );
}

#[test]
fn san_names_and_one_label_wildcards_match() {
    let c = key_pair(SAN_CRT, SAN_KEY).unwrap();
    assert_eq!(c.dns_names, vec!["www.example.com", "*.example.com"]);
    assert_eq!(c.verify_hostname("api.example.com"), Ok(()));
    assert_eq!(
        c.verify_hostname("a.b.example.com").unwrap_err(),
        "x509: certificate is valid for www.example.com, *.example.com, not a.b.example.com"
    );
}

#[test]
fn a_key_of_another_certificate_or_no_pem_is_refused_with_gos_errors() {
    assert_eq!(
        key_pair(FOO_CRT, SAN_KEY).unwrap_err(),
        "tls: private key does not match public key"
    );
    assert_eq!(
        key_pair("not a pem", FOO_KEY).unwrap_err(),
        "tls: failed to find any PEM data in certificate input"
    );
    assert_eq!(
        key_pair(FOO_CRT, "").unwrap_err(),
        "tls: failed to find any PEM data in key input"
    );
    assert_eq!(
        key_pair(FOO_CRT, FOO_CRT).unwrap_err(),
        "tls: found a certificate rather than a key in the PEM for the private key"
    );
}

#[test]
fn truncated_or_garbage_der_is_malformed_not_a_panic() {
    let der = &pem_blocks(FOO_CRT)[0].der;
    for n in [0, 1, 2, 10, 100, der.len() - 1] {
        assert_eq!(parse(&der[..n]).unwrap_err(), MALFORMED, "{n}");
    }
    assert!(parse(&[0x30, 0x84, 0xff, 0xff, 0xff, 0xff]).is_err());
    // A UTCTime whose first character is multi-byte.
    assert_eq!(time(0x17, "é0101000000Z".as_bytes()), None);
    let junk = "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n";
    assert_eq!(key_pair(junk, FOO_KEY).unwrap_err(), MALFORMED);
}

#[test]
fn mutated_certificates_never_panic() {
    let der = pem_blocks(SAN_CRT).remove(0).der;
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (state >> 33) as usize
    };
    for _ in 0..3000 {
        let mut d = der.clone();
        for _ in 0..1 + next() % 4 {
            let i = next() % d.len();
            d[i] = (next() % 256) as u8;
        }
        let cut = d.len() - next() % 8;
        if let Ok(c) = parse(&d[..cut]) {
            let _ = c.verify_hostname("www.example.com");
            let _ = Certificate::print_time(&c.not_after);
        }
    }
}
