//! `kubectl describe` of ConfigMap, Secret, ResourceQuota, LimitRange and
//! PersistentVolumeClaim through the terminal, in upstream's layout (`describe.go`).

mod common;
use common::Term as T;

#[test]
fn describe_configmap_prints_its_data() {
    let mut t = T::new();
    t.ok("kubectl create configmap game --from-literal=lives=3 --from-literal=color=blue");
    assert_eq!(
        t.ok("kubectl describe configmap game"),
        "Name:         game
Namespace:    default
Labels:       <none>
Annotations:  <none>

Data
====
color:
----
blue

lives:
----
3


BinaryData
====

Events:  <none>
"
    );
}

#[test]
fn describe_secret_prints_type_and_sizes_not_values() {
    let mut t = T::new();
    t.ok(
        "kubectl create secret generic db --from-literal=password=s3cr3t --from-literal=user=admin",
    );
    let d = t.ok("kubectl describe secret db");
    assert_eq!(
        d,
        "Name:         db
Namespace:    default
Labels:       <none>
Annotations:  <none>

Type:  Opaque

Data
====
password:  6 bytes
user:      5 bytes
"
    );
    assert!(!d.contains("s3cr3t"));
}

#[test]
fn describe_quota_shows_used_and_hard() {
    let mut t = T::new();
    t.ok("kubectl create quota q --hard=cpu=1,pods=2");
    t.file(
        "pod.yaml",
        "apiVersion: v1
kind: Pod
metadata:
  name: small
spec:
  containers:
  - name: app
    image: nginx
    resources:
      requests: {cpu: 250m}
      limits: {cpu: 250m}
",
    );
    t.ok("kubectl apply -f pod.yaml");
    t.settle(5);
    assert_eq!(
        t.ok("kubectl describe quota q"),
        "Name:       q
Namespace:  default
Resource    Used  Hard
--------    ----  ----
cpu         250m  1
pods        1     2
"
    );
}

#[test]
fn describe_limitrange_and_pvc() {
    let mut t = T::new();
    t.file(
        "lr.yaml",
        "apiVersion: v1
kind: LimitRange
metadata:
  name: cpu-limits
spec:
  limits:
  - type: Container
    default: {cpu: 500m}
    defaultRequest: {cpu: 250m}
    max: {cpu: \"1\"}
",
    );
    t.ok("kubectl apply -f lr.yaml");
    assert_eq!(
        t.ok("kubectl describe limitrange cpu-limits"),
        "Name:       cpu-limits
Namespace:  default
Type        Resource  Min  Max  Default Request  Default Limit  Max Limit/Request Ratio
----        --------  ---  ---  ---------------  -------------  -----------------------
Container   cpu       -    1    250m             500m           -
"
    );
    t.file(
        "pvc.yaml",
        "apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: data
spec:
  accessModes: [ReadWriteOnce]
  resources:
    requests: {storage: 1Gi}
---
apiVersion: v1
kind: Pod
metadata:
  name: user
spec:
  volumes:
  - name: d
    persistentVolumeClaim: {claimName: data}
  containers:
  - name: app
    image: nginx
    volumeMounts: [{name: d, mountPath: /data}]
",
    );
    t.ok("kubectl apply -f pvc.yaml");
    let d = t.ok("kubectl describe pvc data");
    let lines: Vec<&str> = d.lines().collect();
    assert_eq!(lines[0], "Name:          data");
    assert_eq!(lines[1], "Namespace:     default");
    assert!(
        lines.iter().any(|l| l.starts_with("Status:        ")),
        "{d}"
    );
    assert!(lines.iter().any(|l| l.starts_with("Access Modes:")), "{d}");
    assert!(lines.contains(&"Used By:       user"), "{d}");
    assert!(d.contains("\nEvents:"), "{d}");
}
