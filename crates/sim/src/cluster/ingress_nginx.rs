//! The ingress-nginx add-on as kind's docs install it: the manifest behind
//! `kubectl apply -f https://kind.sigs.k8s.io/examples/ingress/deploy-ingress-nginx.yaml`
//! (and upstream's deploy URLs), reduced to the objects that route traffic (docs/design.md
//! §6.16), recognised by URL because the terminal has no network.

/// The scenario add-on name (`spec.addons: [ingress-nginx]`).
pub const ADDON: &str = "ingress-nginx";
/// The URL kind's docs apply.
pub const KIND_URL: &str = "https://kind.sigs.k8s.io/examples/ingress/deploy-ingress-nginx.yaml";
/// The controller image.
pub const IMAGE: &str = "registry.k8s.io/ingress-nginx/controller:v1.12.1";

/// kind's `deploy-ingress-nginx.yaml` (controller v1.12.1) without the admission webhook,
/// its Jobs and the RBAC objects: namespace, ServiceAccount, ConfigMap, Service,
/// Deployment and IngressClass, in the manifest's order.
pub const MANIFEST: &str = r#"apiVersion: v1
kind: Namespace
metadata:
  labels:
    app.kubernetes.io/instance: ingress-nginx
    app.kubernetes.io/name: ingress-nginx
  name: ingress-nginx
---
apiVersion: v1
automountServiceAccountToken: true
kind: ServiceAccount
metadata:
  labels:
    app.kubernetes.io/component: controller
    app.kubernetes.io/instance: ingress-nginx
    app.kubernetes.io/name: ingress-nginx
    app.kubernetes.io/part-of: ingress-nginx
    app.kubernetes.io/version: 1.12.1
  name: ingress-nginx
  namespace: ingress-nginx
---
apiVersion: v1
data: null
kind: ConfigMap
metadata:
  labels:
    app.kubernetes.io/component: controller
    app.kubernetes.io/instance: ingress-nginx
    app.kubernetes.io/name: ingress-nginx
    app.kubernetes.io/part-of: ingress-nginx
    app.kubernetes.io/version: 1.12.1
  name: ingress-nginx-controller
  namespace: ingress-nginx
---
apiVersion: v1
kind: Service
metadata:
  labels:
    app.kubernetes.io/component: controller
    app.kubernetes.io/instance: ingress-nginx
    app.kubernetes.io/name: ingress-nginx
    app.kubernetes.io/part-of: ingress-nginx
    app.kubernetes.io/version: 1.12.1
  name: ingress-nginx-controller
  namespace: ingress-nginx
spec:
  ipFamilies:
  - IPv4
  ipFamilyPolicy: SingleStack
  ports:
  - appProtocol: http
    name: http
    port: 80
    protocol: TCP
    targetPort: http
  - appProtocol: https
    name: https
    port: 443
    protocol: TCP
    targetPort: https
  selector:
    app.kubernetes.io/component: controller
    app.kubernetes.io/instance: ingress-nginx
    app.kubernetes.io/name: ingress-nginx
  type: LoadBalancer
---
apiVersion: apps/v1
kind: Deployment
metadata:
  labels:
    app.kubernetes.io/component: controller
    app.kubernetes.io/instance: ingress-nginx
    app.kubernetes.io/name: ingress-nginx
    app.kubernetes.io/part-of: ingress-nginx
    app.kubernetes.io/version: 1.12.1
  name: ingress-nginx-controller
  namespace: ingress-nginx
spec:
  minReadySeconds: 0
  revisionHistoryLimit: 10
  selector:
    matchLabels:
      app.kubernetes.io/component: controller
      app.kubernetes.io/instance: ingress-nginx
      app.kubernetes.io/name: ingress-nginx
  strategy:
    rollingUpdate:
      maxUnavailable: 1
    type: RollingUpdate
  template:
    metadata:
      labels:
        app.kubernetes.io/component: controller
        app.kubernetes.io/instance: ingress-nginx
        app.kubernetes.io/name: ingress-nginx
        app.kubernetes.io/part-of: ingress-nginx
        app.kubernetes.io/version: 1.12.1
    spec:
      containers:
      - args:
        - /nginx-ingress-controller
        - --election-id=ingress-nginx-leader
        - --controller-class=k8s.io/ingress-nginx
        - --ingress-class=nginx
        - --configmap=$(POD_NAMESPACE)/ingress-nginx-controller
        - --watch-ingress-without-class=true
        - --publish-status-address=localhost
        env:
        - name: POD_NAME
          valueFrom:
            fieldRef:
              fieldPath: metadata.name
        - name: POD_NAMESPACE
          valueFrom:
            fieldRef:
              fieldPath: metadata.namespace
        - name: LD_PRELOAD
          value: /usr/local/lib/libmimalloc.so
        image: registry.k8s.io/ingress-nginx/controller:v1.12.1
        imagePullPolicy: IfNotPresent
        livenessProbe:
          failureThreshold: 5
          httpGet:
            path: /healthz
            port: 10254
            scheme: HTTP
          initialDelaySeconds: 10
          periodSeconds: 10
          successThreshold: 1
          timeoutSeconds: 1
        name: controller
        ports:
        - containerPort: 80
          hostPort: 80
          name: http
          protocol: TCP
        - containerPort: 443
          hostPort: 443
          name: https
          protocol: TCP
        readinessProbe:
          failureThreshold: 3
          httpGet:
            path: /healthz
            port: 10254
            scheme: HTTP
          initialDelaySeconds: 10
          periodSeconds: 10
          successThreshold: 1
          timeoutSeconds: 1
        resources:
          requests:
            cpu: 100m
            memory: 90Mi
      dnsPolicy: ClusterFirst
      nodeSelector:
        kubernetes.io/os: linux
      serviceAccountName: ingress-nginx
      terminationGracePeriodSeconds: 0
      tolerations:
      - effect: NoSchedule
        key: node-role.kubernetes.io/master
        operator: Equal
      - effect: NoSchedule
        key: node-role.kubernetes.io/control-plane
        operator: Equal
---
apiVersion: networking.k8s.io/v1
kind: IngressClass
metadata:
  labels:
    app.kubernetes.io/component: controller
    app.kubernetes.io/instance: ingress-nginx
    app.kubernetes.io/name: ingress-nginx
    app.kubernetes.io/part-of: ingress-nginx
    app.kubernetes.io/version: 1.12.1
  name: nginx
spec:
  controller: k8s.io/ingress-nginx
"#;

/// The built-in manifest a `-f URL` stands for, if kubeloop knows the URL: kind's, or
/// ingress-nginx's own `deploy/static/provider/<kind|cloud|baremetal>/deploy.yaml` at any
/// ref on raw.githubusercontent.com.
pub fn manifest_for_url(url: &str) -> Option<&'static str> {
    if url == KIND_URL {
        return Some(MANIFEST);
    }
    let rest = url.strip_prefix("https://raw.githubusercontent.com/kubernetes/ingress-nginx/")?;
    let (_git_ref, path) = rest.split_once('/')?;
    matches!(
        path,
        "deploy/static/provider/kind/deploy.yaml"
            | "deploy/static/provider/cloud/deploy.yaml"
            | "deploy/static/provider/baremetal/deploy.yaml"
    )
    .then_some(MANIFEST)
}

/// Whether `-f` names a URL (kubectl reads `http://` and `https://` over the network).
pub fn is_url(f: &str) -> bool {
    f.starts_with("http://") || f.starts_with("https://")
}

/// What kubectl prints when a URL cannot be fetched: there is no network.
pub fn fetch_error(url: &str) -> String {
    let host = url
        .split_once("://")
        .map_or(url, |(_, r)| r)
        .split(['/', ':'])
        .next()
        .unwrap_or("");
    format!("Unable to connect to the server: dial tcp: lookup {host}: no such host")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_and_upstreams_urls_are_recognised() {
        assert!(manifest_for_url(KIND_URL).is_some());
        assert!(manifest_for_url("https://raw.githubusercontent.com/kubernetes/ingress-nginx/controller-v1.12.1/deploy/static/provider/kind/deploy.yaml").is_some());
        assert!(manifest_for_url("https://raw.githubusercontent.com/kubernetes/ingress-nginx/main/deploy/static/provider/cloud/deploy.yaml").is_some());
        assert!(manifest_for_url("https://example.com/deploy.yaml").is_none());
        assert_eq!(
            fetch_error("https://example.com/x.yaml"),
            "Unable to connect to the server: dial tcp: lookup example.com: no such host"
        );
    }
}
