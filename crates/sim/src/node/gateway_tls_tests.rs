//! Envoy Gateway's listener TLS checks, table by table.

use super::*;
use crate::node::gateway_model::From;
use k8s_openapi::ByteString;
use serde_json::json;

const CRT: &str = include_str!("../../tests/testdata/tls/san.crt");
const KEY: &str = include_str!("../../tests/testdata/tls/other.key");

fn gw() -> Gateway {
    Gateway {
        namespace: "default".into(),
        name: "eg".into(),
        class: "eg".into(),
        listeners: Vec::new(),
    }
}

fn listener(protocol: &str, tls: Option<Value>) -> Listener {
    Listener {
        name: "https".into(),
        port: 443,
        protocol: protocol.into(),
        hostname: None,
        from: From::Same,
        kinds: Vec::new(),
        tls,
    }
}

fn tls_secret(ns: &str, name: &str) -> Option<Secret> {
    let mut s = Secret::default();
    s.metadata.namespace = Some(ns.into());
    s.metadata.name = Some(name.into());
    s.type_ = Some("kubernetes.io/tls".into());
    s.data = Some(
        [
            ("tls.crt".to_string(), ByteString(CRT.as_bytes().to_vec())),
            ("tls.key".to_string(), ByteString(KEY.as_bytes().to_vec())),
        ]
        .into(),
    );
    Some(s)
}

fn reason(l: &Listener, grants: &[Grant]) -> (String, String) {
    let p = check(&gw(), l, &tls_secret, grants).unwrap_err();
    (format!("{} {}", p.type_, p.reason), p.message)
}

#[test]
fn tls_modes_and_missing_sections_are_programmed_false() {
    let passthrough = listener("HTTPS", Some(json!({"mode": "Passthrough"})));
    assert_eq!(
        reason(&passthrough, &[]),
        (
            "Programmed UnsupportedTLSMode".into(),
            "TLS Passthrough mode is not supported, TLS mode must be Terminate.".into()
        )
    );
    assert_eq!(
        reason(&listener("HTTPS", Some(json!({"mode": "Terminate"}))), &[]).1,
        "Listener must have at least 1 TLS certificate ref"
    );
    assert_eq!(
        reason(&listener("HTTPS", None), &[]).1,
        "Listener must have TLS set when protocol is HTTPS."
    );
    assert_eq!(
        reason(&listener("HTTP", Some(json!({}))), &[]).1,
        "Listener must not have TLS set when protocol is HTTP."
    );
    assert_eq!(
        check(&gw(), &listener("HTTP", None), &tls_secret, &[]),
        Ok(Vec::new())
    );
}

#[test]
fn a_reference_grant_admits_another_namespaces_secret() {
    let l = listener(
        "HTTPS",
        Some(json!({"certificateRefs": [{"name": "c", "namespace": "certs"}]})),
    );
    assert_eq!(reason(&l, &[]).0, "ResolvedRefs RefNotPermitted");
    let grant = Grant {
        namespace: "certs".into(),
        from: vec![(GROUP.into(), "Gateway".into(), "default".into())],
        to: vec![(String::new(), "Secret".into(), String::new())],
    };
    let certs = check(&gw(), &l, &tls_secret, &[grant]).unwrap();
    assert_eq!(certs[0].common_name(), "www.example.com");
    let group = listener(
        "HTTPS",
        Some(json!({"certificateRefs": [{"name": "c", "group": "example.io"}]})),
    );
    assert_eq!(
        reason(&group, &[]).1,
        "Listener's TLS certificate ref group must be unspecified/empty."
    );
}

#[test]
fn the_certificate_for_sni_is_the_one_whose_names_cover_it() {
    let l = listener("HTTPS", Some(json!({"certificateRefs": [{"name": "c"}]})));
    let certs = check(&gw(), &l, &tls_secret, &[]).unwrap();
    assert!(for_sni(&certs, Some("api.example.com")).is_some());
    assert!(for_sni(&certs, None).is_some());
    assert!(for_sni(&[], Some("x")).is_none());
}
