//! What a real cluster keeps beside the workloads: v1 Endpoints, Service links in the
//! containers' environment, `kube-root-ca.crt` in every namespace, static PVs bound
//! without a StorageClass object (the MySQL tutorial), quota usage.

mod common;

use common::{Term as T, NGINX};

/// The Kubernetes documentation's single-instance MySQL tutorial
/// (content/en/examples/application/mysql/mysql-pv.yaml and mysql-deployment.yaml).
const MYSQL_PV: &str = "apiVersion: v1
kind: PersistentVolume
metadata:
  name: mysql-pv-volume
  labels:
    type: local
spec:
  storageClassName: manual
  capacity:
    storage: 20Gi
  accessModes:
    - ReadWriteOnce
  hostPath:
    path: \"/mnt/data\"
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: mysql-pv-claim
spec:
  storageClassName: manual
  accessModes:
    - ReadWriteOnce
  resources:
    requests:
      storage: 20Gi
";

const MYSQL_DEPLOYMENT: &str = "apiVersion: v1
kind: Service
metadata:
  name: mysql
spec:
  ports:
  - port: 3306
  selector:
    app: mysql
  clusterIP: None
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: mysql
spec:
  selector:
    matchLabels:
      app: mysql
  strategy:
    type: Recreate
  template:
    metadata:
      labels:
        app: mysql
    spec:
      containers:
      - image: mysql:9
        name: mysql
        env:
          # Use secret in real usage
        - name: MYSQL_ROOT_PASSWORD
          value: password
        ports:
        - containerPort: 3306
          name: mysql
        volumeMounts:
        - name: mysql-persistent-storage
          mountPath: /var/lib/mysql
      volumes:
      - name: mysql-persistent-storage
        persistentVolumeClaim:
          claimName: mysql-pv-claim
";

const WEB_SERVICE: &str = "apiVersion: v1
kind: Service
metadata:
  name: my-svc
spec:
  selector:
    app: nginx
  ports:
  - name: http
    port: 80
    targetPort: 80
";

#[test]
fn the_mysql_tutorial_binds_its_static_volume_without_a_storage_class_object() {
    let mut t = T::new();
    t.file("mysql-pv.yaml", MYSQL_PV);
    t.file("mysql-deployment.yaml", MYSQL_DEPLOYMENT);
    t.ok("kubectl apply -f mysql-pv.yaml");
    t.ok("kubectl apply -f mysql-deployment.yaml");
    t.settle(60);
    let pvc = t.ok("kubectl get pvc mysql-pv-claim");
    assert!(
        pvc.lines().nth(1).is_some_and(|l| l.starts_with(
            "mysql-pv-claim   Bound    mysql-pv-volume   20Gi       RWO            manual"
        )),
        "{pvc}"
    );
    let pods = t.ok("kubectl get pods -l app=mysql");
    assert!(pods.contains("1/1     Running"), "{pods}");
}

#[test]
fn endpoints_list_ready_pods_and_kubectl_warns_that_they_are_deprecated() {
    let mut t = T::new();
    t.file("svc.yaml", WEB_SERVICE);
    t.ok("kubectl apply -f nginx.yaml");
    t.ok("kubectl apply -f svc.yaml");
    t.settle(40);
    let out = t.run("kubectl get endpoints my-svc");
    assert_eq!(
        out.stderr,
        "Warning: v1 Endpoints is deprecated in v1.33+; use discovery.k8s.io/v1 EndpointSlice\n"
    );
    let row = out.stdout.lines().nth(1).unwrap_or_default().to_string();
    assert!(row.starts_with("my-svc   10.244."), "{}", out.stdout);
    assert_eq!(row.matches(":80").count(), 3, "three ready pods: {row}");
    // Scaled to one, the Endpoints follow.
    t.ok("kubectl scale deployment nginx --replicas=1");
    t.settle(40);
    let row = t.ok("kubectl get ep my-svc");
    assert_eq!(row.matches(":80").count(), 1, "{row}");
    // Deleting the Service deletes its Endpoints.
    t.ok("kubectl delete svc my-svc");
    t.settle(5);
    let gone = t.run("kubectl get endpoints my-svc");
    assert_eq!(gone.exit_code, 1, "{gone:?}");
    assert!(
        gone.stderr
            .ends_with("Error from server (NotFound): endpoints \"my-svc\" not found\n"),
        "{}",
        gone.stderr
    );
}

#[test]
fn every_namespace_holds_the_root_ca_config_map() {
    let mut t = T::new();
    t.ok("kubectl create namespace team-a");
    t.settle(5);
    let cms = t.ok("kubectl get configmaps -n team-a");
    assert!(cms.contains("kube-root-ca.crt   1      "), "{cms}");
    // Deleted, it comes back.
    t.ok("kubectl delete configmap kube-root-ca.crt -n team-a");
    t.settle(5);
    let ca = t.ok("kubectl get cm kube-root-ca.crt -n team-a -o jsonpath='{.data.ca\\.crt}'");
    assert!(ca.starts_with("-----BEGIN CERTIFICATE-----\n"), "{ca}");
}

#[test]
fn containers_see_the_services_of_their_namespace_in_their_environment() {
    let mut t = T::new();
    t.file("svc.yaml", WEB_SERVICE);
    t.ok("kubectl apply -f svc.yaml");
    t.settle(2);
    // Pods started after the Service get its variables.
    t.file("web.yaml", &NGINX.replace("replicas: 3", "replicas: 1"));
    t.ok("kubectl apply -f web.yaml");
    t.settle(40);
    let ip = t.ok("kubectl get svc my-svc -o jsonpath={.spec.clusterIP}");
    let pod = t.ok("kubectl get pods -l app=nginx -o name");
    let env = t.ok(&format!("kubectl exec {} -- env", pod.trim()));
    for want in [
        format!("MY_SVC_SERVICE_HOST={ip}"),
        "MY_SVC_SERVICE_PORT=80".to_string(),
        "MY_SVC_SERVICE_PORT_HTTP=80".to_string(),
        format!("MY_SVC_PORT=tcp://{ip}:80"),
        format!("MY_SVC_PORT_80_TCP_ADDR={ip}"),
        "KUBERNETES_SERVICE_HOST=10.96.0.1".to_string(),
    ] {
        assert!(
            env.lines().any(|l| l == want),
            "{want} missing from:\n{env}"
        );
    }
}
