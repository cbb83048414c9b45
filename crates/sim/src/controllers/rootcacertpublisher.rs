//! The root CA certificate publisher: every active namespace holds the `kube-root-ca.crt`
//! ConfigMap, which service-account token volumes project as `ca.crt` (recreated if
//! deleted, restored if edited), as pkg/controller/certificates/rootcacertpublisher does.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use crate::api::{ApiRequest, ApiResponse, Body, ReqId, Verb};
use crate::client::{Change, Pending, WorkQueue};
use crate::controllers::{Action, Controller, Env, Informers, SyncResult};
use crate::object::{Kind, Object};
use crate::time::Time;

/// The ConfigMap's name.
pub const NAME: &str = "kube-root-ca.crt";
/// The description upstream puts on it.
const DESCRIPTION: &str = "Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. No other usage is guaranteed across distributions of Kubernetes clusters.";

/// The cluster's root CA, PEM-encoded. A fixed stand-in: the simulated cluster does no
/// TLS, so the bundle is not a certificate anything verifies against.
pub const ROOT_CA: &str = "-----BEGIN CERTIFICATE-----\nMIIDBTCCAe2gAwIBAgIIa3ViZWxvb3AwDQYJKoZIhvcNAQELBQAwFTETMBEGA1UE\nAxMKa3ViZXJuZXRlczAeFw0yNjAxMDEwMDAwMDBaFw0zNjAxMDEwMDAwMDBaMBUx\nEzARBgNVBAMTCmt1YmVybmV0ZXMwggEiMA0GCSqGSIb3DQEBAQUAA4IBDwAwggEK\n-----END CERTIFICATE-----\n";

/// The root CA certificate publisher.
#[derive(Default)]
pub struct RootCaCertPublisher {
    /// Writes in flight, with their namespace.
    sent: Pending<String>,
}

fn wanted(ns: &str) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(NAME.into()),
            namespace: Some(ns.into()),
            annotations: Some(BTreeMap::from([(
                "kubernetes.io/description".to_string(),
                DESCRIPTION.to_string(),
            )])),
            ..ObjectMeta::default()
        },
        data: Some(BTreeMap::from([(
            "ca.crt".to_string(),
            ROOT_CA.to_string(),
        )])),
        ..ConfigMap::default()
    }
}

impl Controller for RootCaCertPublisher {
    fn name(&self) -> &'static str {
        "root-ca-certificate-publisher-controller"
    }

    fn component(&self) -> &'static str {
        "root-ca-cert-publisher"
    }

    fn watches(&self) -> &'static [Kind] {
        &[Kind::Namespace, Kind::ConfigMap]
    }

    fn on_change(
        &mut self,
        kind: Kind,
        change: &Change,
        queue: &mut WorkQueue<String>,
        _inf: &Informers,
        _now: Time,
    ) {
        let o = change.object();
        match kind {
            Kind::Namespace => queue.add(o.name().to_string()),
            Kind::ConfigMap if o.name() == NAME => queue.add(o.namespace().to_string()),
            _ => {}
        }
    }

    fn sync(&mut self, ns: &str, env: &mut Env, inf: &Informers) -> SyncResult {
        let active = inf.of(Kind::Namespace).get("", ns).is_some_and(
            |o| matches!(&**o, Object::Namespace(n) if n.metadata.deletion_timestamp.is_none()),
        );
        if !active {
            return Ok(Action::await_change());
        }
        let want = wanted(ns);
        let req = match inf.of(Kind::ConfigMap).get(ns, NAME).map(|o| &**o) {
            None => ApiRequest::new(Verb::Create, Kind::ConfigMap, ns, "")
                .with_body(Body::Object(want.into())),
            Some(Object::ConfigMap(cm)) if cm.data != want.data => {
                let mut fixed = cm.clone();
                fixed.data = want.data;
                ApiRequest::new(Verb::Update, Kind::ConfigMap, ns, NAME)
                    .with_body(Body::Object(fixed.into()))
            }
            Some(_) => return Ok(Action::await_change()),
        };
        let id = env.send(req);
        self.sent.insert(id, ns.to_string());
        Ok(Action::await_change())
    }

    fn on_response(&mut self, id: ReqId, resp: &ApiResponse, env: &mut Env, _inf: &Informers) {
        if let (Some(ns), Err(s)) = (self.sent.take(id), &resp.result) {
            if !s.is_already_exists() && !s.is_not_found() {
                env.retry(ns);
            }
        }
    }
}
