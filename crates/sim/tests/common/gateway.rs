//! What the Gateway API tests share: Envoy Gateway's install manifest and the proxy
//! Service it creates for the Gateway `eg` in `default`.

use super::Term;

/// Envoy Gateway v1.5.0's install manifest (kubeloop serves it offline).
pub const EG: &str = "https://github.com/envoyproxy/gateway/releases/download/v1.5.0/install.yaml";

/// The proxy Deployment and Service Envoy Gateway names for Gateway default/eg.
pub const PROXY: &str = "envoy-default-eg-e41e7b31";

/// Installs Envoy Gateway with a server-side apply, as its docs do.
pub fn install(t: &mut Term) {
    t.ok(&format!("kubectl apply --server-side -f {EG}"));
}

/// The proxy Service's cluster IP.
pub fn proxy_ip(t: &mut Term) -> String {
    t.ok(&format!(
        "kubectl get svc {PROXY} -n envoy-gateway-system -o jsonpath={{.spec.clusterIP}}"
    ))
}
