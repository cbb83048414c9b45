//! An HTTPS listener's TLS as Envoy Gateway's translator validates it
//! (`validateTLSConfiguration`, `validateTerminateModeAndGetTLSSecrets`,
//! `validateTLSSecretsData`): the Terminate mode, the certificateRefs (group, kind,
//! ReferenceGrant, the Secret, its type and data), with Envoy Gateway's conditions and
//! messages; and the certificates envoy then serves. Shared by the controller (listener
//! statuses) and envoy on the data plane, so both agree.

use k8s_openapi::api::core::v1::Secret;
use serde_json::Value;

use crate::node::gateway_model::{Gateway, Grant, Listener, GROUP};
use crate::node::x509::{self, Certificate};

/// Why a listener's TLS cannot be served: the condition Envoy Gateway sets.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    /// `Programmed` or `ResolvedRefs`.
    pub type_: &'static str,
    /// The reason (`Invalid`, `InvalidCertificateRef`, `RefNotPermitted`…).
    pub reason: &'static str,
    /// Envoy Gateway's message.
    pub message: String,
}

fn problem(type_: &'static str, reason: &'static str, message: String) -> Problem {
    Problem {
        type_,
        reason,
        message,
    }
}

fn text<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}

/// A grant in the Secret's namespace lets Gateways of `from_ns` use it.
fn granted(grants: &[Grant], from_ns: &str, ns: &str, name: &str) -> bool {
    grants.iter().any(|g| {
        g.namespace == ns
            && g.from
                .iter()
                .any(|(gr, k, n)| gr == GROUP && k == "Gateway" && n == from_ns)
            && g.to
                .iter()
                .any(|(gr, k, n)| gr.is_empty() && k == "Secret" && (n.is_empty() || n == name))
    })
}

/// The certificates listener `l` of `gw` serves (none for a plain HTTP listener), or
/// the condition that stops it. `secret(ns, name)` reads the Envoy Gateway's store.
pub fn check(
    gw: &Gateway,
    l: &Listener,
    secret: &dyn Fn(&str, &str) -> Option<Secret>,
    grants: &[Grant],
) -> Result<Vec<Certificate>, Problem> {
    let invalid = |m: String| problem("Programmed", "Invalid", m);
    match (l.protocol.as_str(), &l.tls) {
        ("HTTP" | "TCP" | "UDP", Some(_)) => Err(invalid(format!(
            "Listener must not have TLS set when protocol is {}.",
            l.protocol
        ))),
        ("HTTPS", None) => Err(invalid(
            "Listener must have TLS set when protocol is HTTPS.".into(),
        )),
        ("HTTPS", Some(tls)) => {
            if let Some(mode) = text(tls, "mode").filter(|m| *m != "Terminate") {
                return Err(problem(
                    "Programmed",
                    "UnsupportedTLSMode",
                    format!("TLS {mode} mode is not supported, TLS mode must be Terminate."),
                ));
            }
            terminate(gw, tls, secret, grants)
        }
        _ => Ok(Vec::new()),
    }
}

fn terminate(
    gw: &Gateway,
    tls: &Value,
    secret: &dyn Fn(&str, &str) -> Option<Secret>,
    grants: &[Grant],
) -> Result<Vec<Certificate>, Problem> {
    let refs = tls
        .get("certificateRefs")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if refs.is_empty() {
        return Err(problem(
            "Programmed",
            "Invalid",
            "Listener must have at least 1 TLS certificate ref".into(),
        ));
    }
    let bad = |m: String| problem("ResolvedRefs", "InvalidCertificateRef", m);
    let mut certs = Vec::new();
    for r in &refs {
        let name = text(r, "name").unwrap_or("");
        if text(r, "group").is_some_and(|g| !g.is_empty()) {
            return Err(bad(
                "Listener's TLS certificate ref group must be unspecified/empty.".into(),
            ));
        }
        if text(r, "kind").is_some_and(|k| k != "Secret") {
            return Err(bad(
                "Listener's TLS certificate ref kind must be Secret.".into()
            ));
        }
        let ns = text(r, "namespace")
            .filter(|n| !n.is_empty())
            .unwrap_or(&gw.namespace);
        if ns != gw.namespace && !granted(grants, &gw.namespace, ns, name) {
            return Err(problem(
                "ResolvedRefs",
                "RefNotPermitted",
                format!(
                    "Certificate ref to secret {ns}/{name} not permitted by any ReferenceGrant."
                ),
            ));
        }
        // Envoy Gateway names the Gateway's namespace in these messages.
        let key = format!("{}/{name}", gw.namespace);
        let Some(s) = secret(ns, name) else {
            return Err(bad(format!("Secret {key} does not exist.")));
        };
        if s.type_.as_deref() != Some("kubernetes.io/tls") {
            return Err(bad(format!(
                "Secret {key} must be of type kubernetes.io/tls."
            )));
        }
        let data = s.data.unwrap_or_default();
        let field = |k: &str| {
            data.get(k)
                .filter(|b| !b.0.is_empty())
                .map(|b| String::from_utf8_lossy(&b.0).into_owned())
        };
        let (Some(crt), Some(tls_key)) = (field("tls.crt"), field("tls.key")) else {
            return Err(bad(format!(
                "Secret {key} must contain tls.crt and tls.key."
            )));
        };
        certs.push(secret_data(&format!("{ns}/{name}"), &crt, &tls_key).map_err(bad)?);
    }
    Ok(certs)
}

/// `validateTLSSecretsData` for one Secret: the message after `Secret `.
fn secret_data(key: &str, crt: &str, tls_key: &str) -> Result<Certificate, String> {
    let valid = format!("Secret {key} must contain valid tls.crt and tls.key");
    let Some(block) = x509::pem_blocks(crt).into_iter().next() else {
        return Err(format!("{valid}, unable to decode pem data in tls.crt."));
    };
    let cert = x509::parse(&block.der)
        .map_err(|e| format!("{valid}, unable to parse certificate in tls.crt: {e}."))?;
    if x509::pem_blocks(tls_key).is_empty() {
        return Err(format!("{valid}, unable to decode pem data in tls.key."));
    }
    Ok(cert)
}

/// The certificate envoy presents for `sni` among a listener's: the first whose names
/// cover it, else the first.
pub fn for_sni<'a>(certs: &'a [Certificate], sni: Option<&str>) -> Option<&'a Certificate> {
    sni.and_then(|h| certs.iter().find(|c| c.verify_hostname_legacy(h).is_ok()))
        .or_else(|| certs.first())
}

#[cfg(test)]
#[path = "gateway_tls_tests.rs"]
mod tests;
