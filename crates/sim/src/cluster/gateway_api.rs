//! Gateway API v1 as its release installs it: the CRDs behind
//! `kubectl apply -f https://github.com/kubernetes-sigs/gateway-api/releases/download/vX.Y.Z/standard-install.yaml`
//! (GatewayClass, Gateway, GRPCRoute, HTTPRoute, ReferenceGrant, each with its real names,
//! printer columns, status defaults and the schema rules kubeloop evaluates), and the
//! Envoy Gateway install (`envoyproxy/gateway` releases' `install.yaml`): the same CRDs
//! plus the `envoy-gateway` controller in `envoy-gateway-system` (docs/design.md §6.18).

use std::collections::BTreeMap;
use std::sync::Mutex;

/// The scenario add-on name of Envoy Gateway (`spec.addons: [envoy-gateway]`).
pub const ADDON: &str = "envoy-gateway";
/// The scenario add-on name of the CRDs alone (`spec.addons: [gateway-api]`).
pub const CRDS_ADDON: &str = "gateway-api";
/// The Gateway API release the add-ons install.
pub const BUNDLE_VERSION: &str = "v1.4.0";
/// The Envoy Gateway release the add-on installs.
pub const ENVOY_GATEWAY_VERSION: &str = "v1.5.0";
/// The URL Gateway API's docs apply.
pub const STANDARD_URL: &str =
    "https://github.com/kubernetes-sigs/gateway-api/releases/download/v1.4.0/standard-install.yaml";
/// The URL Envoy Gateway's quickstart applies (`kubectl apply --server-side -f …`).
pub const ENVOY_GATEWAY_URL: &str =
    "https://github.com/envoyproxy/gateway/releases/download/v1.5.0/install.yaml";
/// The group of every Gateway API kind.
pub const GROUP: &str = "gateway.networking.k8s.io";

const CRDS: &str = include_str!("gateway_api_crds.yaml");

/// The Envoy Gateway controller's objects after the CRDs (its RBAC, certgen Job and
/// webhook left out).
const ENVOY_GATEWAY: &str = r#"apiVersion: v1
kind: Namespace
metadata:
  name: envoy-gateway-system
---
apiVersion: v1
kind: ServiceAccount
metadata:
  labels:
    app.kubernetes.io/instance: eg
    app.kubernetes.io/managed-by: Helm
    app.kubernetes.io/name: gateway-helm
    app.kubernetes.io/version: v1.5.0
    helm.sh/chart: gateway-helm-v1.5.0
  name: envoy-gateway
  namespace: envoy-gateway-system
---
apiVersion: v1
kind: ConfigMap
metadata:
  labels:
    app.kubernetes.io/instance: eg
    app.kubernetes.io/managed-by: Helm
    app.kubernetes.io/name: gateway-helm
    app.kubernetes.io/version: v1.5.0
    helm.sh/chart: gateway-helm-v1.5.0
  name: envoy-gateway-config
  namespace: envoy-gateway-system
data:
  envoy-gateway.yaml: |
    apiVersion: gateway.envoyproxy.io/v1alpha1
    kind: EnvoyGateway
    gateway:
      controllerName: gateway.envoyproxy.io/gatewayclass-controller
    logging:
      level:
        default: info
    provider:
      kubernetes:
        rateLimitDeployment:
          container:
            image: docker.io/envoyproxy/ratelimit:3fb70258
          patch:
            type: StrategicMerge
            value:
              spec:
                template:
                  spec:
                    containers:
                    - imagePullPolicy: IfNotPresent
                      name: envoy-ratelimit
        shutdownManager:
          image: docker.io/envoyproxy/gateway:v1.5.0
      type: Kubernetes
---
apiVersion: v1
kind: Service
metadata:
  labels:
    app.kubernetes.io/instance: eg
    app.kubernetes.io/managed-by: Helm
    app.kubernetes.io/name: gateway-helm
    app.kubernetes.io/version: v1.5.0
    control-plane: envoy-gateway
    helm.sh/chart: gateway-helm-v1.5.0
  name: envoy-gateway
  namespace: envoy-gateway-system
spec:
  ports:
  - name: grpc
    port: 18000
    targetPort: 18000
  - name: ratelimit
    port: 18001
    targetPort: 18001
  - name: wasm
    port: 18002
    targetPort: 18002
  - name: metrics
    port: 19001
    targetPort: 19001
  selector:
    app.kubernetes.io/instance: eg
    app.kubernetes.io/name: gateway-helm
    control-plane: envoy-gateway
---
apiVersion: apps/v1
kind: Deployment
metadata:
  labels:
    app.kubernetes.io/instance: eg
    app.kubernetes.io/managed-by: Helm
    app.kubernetes.io/name: gateway-helm
    app.kubernetes.io/version: v1.5.0
    control-plane: envoy-gateway
    helm.sh/chart: gateway-helm-v1.5.0
  name: envoy-gateway
  namespace: envoy-gateway-system
spec:
  replicas: 1
  selector:
    matchLabels:
      app.kubernetes.io/instance: eg
      app.kubernetes.io/name: gateway-helm
      control-plane: envoy-gateway
  template:
    metadata:
      labels:
        app.kubernetes.io/instance: eg
        app.kubernetes.io/name: gateway-helm
        control-plane: envoy-gateway
    spec:
      containers:
      - args:
        - server
        - --config-path=/config/envoy-gateway.yaml
        env:
        - name: ENVOY_GATEWAY_NAMESPACE
          valueFrom:
            fieldRef:
              apiVersion: v1
              fieldPath: metadata.namespace
        - name: KUBERNETES_CLUSTER_DOMAIN
          value: cluster.local
        image: docker.io/envoyproxy/gateway:v1.5.0
        imagePullPolicy: IfNotPresent
        livenessProbe:
          httpGet:
            path: /healthz
            port: 8081
          initialDelaySeconds: 15
          periodSeconds: 20
        name: envoy-gateway
        ports:
        - containerPort: 18000
          name: grpc
        - containerPort: 18001
          name: ratelimit
        - containerPort: 18002
          name: wasm
        - containerPort: 19001
          name: metrics
        readinessProbe:
          httpGet:
            path: /readyz
            port: 8081
          initialDelaySeconds: 5
          periodSeconds: 10
        resources:
          limits:
            memory: 1024Mi
          requests:
            cpu: 100m
            memory: 256Mi
        securityContext:
          allowPrivilegeEscalation: false
          capabilities:
            drop:
            - ALL
          privileged: false
          runAsGroup: 65532
          runAsNonRoot: true
          runAsUser: 65532
          seccompProfile:
            type: RuntimeDefault
      serviceAccountName: envoy-gateway
      terminationGracePeriodSeconds: 10
"#;

/// Envoy Gateway's quickstart: the class, the Gateway, and a `backend` echo app with
/// its HTTPRoute.
const QUICKSTART: &str = r#"apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata:
  name: eg
spec:
  controllerName: gateway.envoyproxy.io/gatewayclass-controller
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata:
  name: eg
spec:
  gatewayClassName: eg
  listeners:
    - name: http
      protocol: HTTP
      port: 80
---
apiVersion: v1
kind: ServiceAccount
metadata:
  name: backend
---
apiVersion: v1
kind: Service
metadata:
  name: backend
  labels:
    app: backend
    service: backend
spec:
  ports:
    - name: http
      port: 3000
      targetPort: 3000
  selector:
    app: backend
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: backend
spec:
  replicas: 1
  selector:
    matchLabels:
      app: backend
      version: v1
  template:
    metadata:
      labels:
        app: backend
        version: v1
    spec:
      serviceAccountName: backend
      containers:
        - image: gcr.io/k8s-staging-gateway-api/echo-basic:v20231214-v1.0.0-140-gf544a46e
          imagePullPolicy: IfNotPresent
          name: backend
          ports:
            - containerPort: 3000
          env:
            - name: POD_NAME
              valueFrom:
                fieldRef:
                  fieldPath: metadata.name
            - name: NAMESPACE
              valueFrom:
                fieldRef:
                  fieldPath: metadata.namespace
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata:
  name: backend
spec:
  parentRefs:
    - name: eg
  hostnames:
    - "www.example.com"
  rules:
    - backendRefs:
        - group: ""
          kind: Service
          name: backend
          port: 3000
          weight: 1
      matches:
        - path:
            type: PathPrefix
            value: /
"#;

/// Which release file a URL names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Release<'a> {
    /// Gateway API's `standard-install.yaml` or `experimental-install.yaml` at a version.
    Crds { version: &'a str, channel: &'a str },
    /// Envoy Gateway's `install.yaml` at a version.
    EnvoyGateway,
    /// Envoy Gateway's `quickstart.yaml`: GatewayClass and Gateway `eg`, the `backend`
    /// app and its HTTPRoute for `www.example.com`.
    Quickstart,
}

fn is_version(v: &str) -> bool {
    let Some(rest) = v.strip_prefix('v') else {
        return false;
    };
    let parts: Vec<&str> = rest.split('.').collect();
    parts.len() == 3
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()))
}

fn release(url: &str) -> Option<Release<'_>> {
    if let Some(file) =
        url.strip_prefix("https://github.com/kubernetes-sigs/gateway-api/releases/latest/download/")
    {
        // GitHub's alias of the newest release: the one kubeloop ships.
        let channel = match file {
            "standard-install.yaml" => "standard",
            "experimental-install.yaml" => "experimental",
            _ => return None,
        };
        return Some(Release::Crds {
            version: BUNDLE_VERSION,
            channel,
        });
    }
    if let Some(rest) =
        url.strip_prefix("https://github.com/kubernetes-sigs/gateway-api/releases/download/")
    {
        let (version, file) = rest.split_once('/')?;
        let channel = match file {
            "standard-install.yaml" => "standard",
            "experimental-install.yaml" => "experimental",
            _ => return None,
        };
        return is_version(version).then_some(Release::Crds { version, channel });
    }
    let rest = url.strip_prefix("https://github.com/envoyproxy/gateway/releases/download/")?;
    let (version, file) = rest.split_once('/')?;
    if !is_version(version) {
        return None;
    }
    match file {
        "install.yaml" => Some(Release::EnvoyGateway),
        "quickstart.yaml" => Some(Release::Quickstart),
        _ => None,
    }
}

/// The CRDs of a release, annotated with its bundle version and channel.
pub fn crds(version: &str, channel: &str) -> String {
    CRDS.replace("BUNDLE_VERSION", version)
        .replace("CHANNEL", channel)
}

static BUILT: Mutex<BTreeMap<String, &'static str>> = Mutex::new(BTreeMap::new());

/// The built-in manifest a `-f URL` stands for, if it names a Gateway API or Envoy
/// Gateway release file (built once per URL).
pub fn manifest_for_url(url: &str) -> Option<&'static str> {
    let r = release(url)?;
    let mut built = BUILT.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(t) = built.get(url) {
        return Some(t);
    }
    let text = match r {
        Release::Crds { version, channel } => crds(version, channel),
        Release::EnvoyGateway => {
            format!("{}---\n{ENVOY_GATEWAY}", crds(BUNDLE_VERSION, "standard"))
        }
        Release::Quickstart => QUICKSTART.to_string(),
    };
    let leaked: &'static str = Box::leak(text.into_boxed_str());
    built.insert(url.to_string(), leaked);
    Some(leaked)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn release_urls_are_recognised_at_any_version() {
        assert!(manifest_for_url(STANDARD_URL).is_some());
        assert!(manifest_for_url(ENVOY_GATEWAY_URL).is_some());
        let exp = manifest_for_url(
            "https://github.com/kubernetes-sigs/gateway-api/releases/download/v1.3.0/experimental-install.yaml",
        )
        .unwrap();
        assert!(exp.contains("gateway.networking.k8s.io/bundle-version: v1.3.0"));
        assert!(exp.contains("gateway.networking.k8s.io/channel: experimental"));
        assert!(manifest_for_url(
            "https://github.com/kubernetes-sigs/gateway-api/releases/download/latest/standard-install.yaml"
        )
        .is_none());
        assert!(manifest_for_url(
            "https://github.com/kubernetes-sigs/gateway-api/releases/latest/download/standard-install.yaml"
        )
        .is_some_and(|t| t.contains("bundle-version: v1.4.0")));
        assert!(manifest_for_url(
            "https://github.com/kubernetes-sigs/gateway-api/releases/download/v1.4.0/other.yaml"
        )
        .is_none());
    }

    #[test]
    fn the_crds_parse_as_manifests() {
        let text = manifest_for_url(ENVOY_GATEWAY_URL).unwrap();
        let docs = crate::manifest::parse_manifest_stream(text, "install.yaml");
        assert!(docs.errors.is_empty(), "{:?}", docs.errors);
        assert_eq!(docs.manifests.len(), 10);
    }
}
