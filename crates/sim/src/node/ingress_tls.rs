//! The certificate ingress-nginx's nginx presents: the `kubernetes.io/tls` Secret a TLS
//! host names, checked as the controller's store (`getPemCertificate`, `CreateSSLCert`)
//! and `createServers` check it, else the controller's fake certificate; and the klog
//! warnings those checks write.

use k8s_openapi::api::core::v1::Secret;

use crate::node::ingress_route::TlsRef;
use crate::node::net::Network;
use crate::node::x509::{self, Certificate};
use crate::object::Object;
use crate::time::{Time, EPOCH_UNIX_MS};

/// The subject and issuer common name of the controller's generated certificate.
pub const FAKE_CN: &str = "Kubernetes Ingress Controller Fake Certificate";

/// The certificate nginx serves and the warnings the controller logged choosing it.
#[derive(Clone, Debug)]
pub struct Chosen {
    /// The certificate presented.
    pub cert: Certificate,
    /// `ns/name` of the Secret it came from; `None` for the fake certificate.
    pub secret: Option<String>,
    /// klog warnings, each with the source file that writes it.
    pub warnings: Vec<(&'static str, String)>,
}

fn asn1_time(at: Time) -> String {
    k8s_openapi::jiff::Timestamp::from_millisecond(EPOCH_UNIX_MS + at as i64)
        .unwrap_or(k8s_openapi::jiff::Timestamp::UNIX_EPOCH)
        .strftime("%Y%m%d%H%M%SZ")
        .to_string()
}

/// `ssl.GetFakeSSLCert`: made when the controller starts, valid a year, for
/// `ingress.local`, organisation `Acme Co`.
pub fn fake(started: Time) -> Certificate {
    let name = vec![
        ("O".to_string(), "Acme Co".to_string()),
        ("CN".to_string(), FAKE_CN.to_string()),
    ];
    Certificate {
        subject: name.clone(),
        issuer: name,
        not_before: asn1_time(started),
        not_after: asn1_time(started.saturating_add(365 * 24 * 3600 * 1000)),
        dns_names: vec!["ingress.local".into()],
        has_san: true,
        rsa_modulus: None,
    }
}

fn secret(net: &Network, key: &str) -> Option<Secret> {
    let store = net.store()?;
    match &*store.get(&format!("/registry/secrets/{key}"))?.value {
        Object::Secret(s) => Some((**s).clone()),
        _ => None,
    }
}

/// `getPemCertificate`: the Secret's certificate, or the error `syncSecret` logs.
fn pem_certificate(net: &Network, key: &str) -> Result<Certificate, String> {
    let Some(s) = secret(net, key) else {
        return Err(format!("no object matching key \"{key}\" in local store"));
    };
    let data = s.data.unwrap_or_default();
    let text = |k: &str| {
        data.get(k)
            .map(|b| String::from_utf8_lossy(&b.0).into_owned())
    };
    let (Some(cert), Some(tls_key)) = (text("tls.crt"), text("tls.key")) else {
        return Err(format!(
            "secret \"{key}\" contains no keypair or CA certificate"
        ));
    };
    create_ssl_cert(&cert, &tls_key).map_err(|e| format!("unexpected error creating SSL Cert: {e}"))
}

/// `ssl.CreateSSLCert`: the first PEM block must be a certificate matching the key.
fn create_ssl_cert(cert: &str, key: &str) -> Result<Certificate, String> {
    let joined = format!("{cert}\n{key}");
    let Some(first) = x509::pem_blocks(&joined).into_iter().next() else {
        return Err("no valid PEM formatted block found".into());
    };
    if first.label != "CERTIFICATE" {
        return Err("no certificate PEM data found, make sure certificate content starts with 'BEGIN CERTIFICATE'".into());
    }
    x509::parse(&first.der)?;
    x509::key_pair(cert, key).map_err(|e| {
        format!("certificate and private key does not have a matching public key: {e}")
    })
}

/// The certificate of the server `host` (its TLS section, if any), as `createServers`
/// assigns it; `fake` otherwise.
pub fn choose(net: &Network, host: &str, tls: Option<&TlsRef>, fake: Certificate) -> Chosen {
    let mut warnings = Vec::new();
    let fallback = |warnings| Chosen {
        cert: fake.clone(),
        secret: None,
        warnings,
    };
    let Some(t) = tls.filter(|t| !t.secret.is_empty()) else {
        return fallback(warnings);
    };
    let key = format!("{}/{}", t.namespace, t.secret);
    let cert = match pem_certificate(net, &key) {
        Ok(c) => c,
        Err(e) => {
            warnings.push((
                "backend_ssl.go:47",
                format!("Error obtaining X.509 certificate: {e}"),
            ));
            warnings.push(("controller.go:1591", format!("Error getting SSL certificate \"{key}\": local SSL certificate {key} was not found. Using default certificate")));
            return fallback(warnings);
        }
    };
    if let Err(e) = cert.verify_hostname(host) {
        warnings.push((
            "controller.go:1612",
            format!(
                "Unexpected error validating SSL certificate \"{key}\" for server \"{host}\": {e}"
            ),
        ));
        warnings.push((
            "controller.go:1613",
            "Validating certificate against DNS names. This will be deprecated in a future version."
                .into(),
        ));
        if let Err(e) = cert.verify_hostname_legacy(host) {
            warnings.push(("controller.go:1619", format!("SSL certificate \"{key}\" does not contain a Common Name or Subject Alternative Name for server \"{host}\": {e}")));
            warnings.push(("controller.go:1621", "Using default certificate".into()));
            return fallback(warnings);
        }
    }
    Chosen {
        cert,
        secret: Some(key),
        warnings,
    }
}
