//! Table-driven tests of `kubectl get` tables: each asserts the exact text a user sees.

use std::sync::Arc;

use serde_json::json;

use super::*;
use crate::object::{Kind, Object};
use crate::time::MINUTE;

fn obj(kind: Kind, v: serde_json::Value) -> Arc<Object> {
    let mut unknown = Vec::new();
    let o = Object::from_value(kind, &v, &mut unknown).unwrap();
    assert!(unknown.is_empty(), "{unknown:?}");
    Arc::new(o)
}

/// `T` at `s` seconds after the virtual epoch.
fn ts(s: u64) -> String {
    serde_json::to_value(crate::time::k8s_time(s * 1000))
        .unwrap()
        .as_str()
        .unwrap()
        .to_string()
}

fn running_pod(name: &str, ip: &str, node: &str) -> Arc<Object> {
    obj(
        Kind::Pod,
        json!({
            "metadata": {"name": name, "namespace": "default", "creationTimestamp": ts(0), "labels": {"app": "nginx"}},
            "spec": {"nodeName": node, "containers": [{"name": "nginx", "image": "nginx:1.25"}]},
            "status": {
                "phase": "Running", "podIP": ip, "podIPs": [{"ip": ip}],
                "conditions": [{"type": "Ready", "status": "True"}],
                "containerStatuses": [{"name": "nginx", "image": "nginx:1.25", "imageID": "", "ready": true,
                    "restartCount": 0, "started": true, "state": {"running": {"startedAt": ts(5)}}}]
            }
        }),
    )
}

fn opts() -> PrintOptions {
    PrintOptions::default()
}

#[test]
fn three_pods_wide() {
    let pods = vec![
        running_pod("nginx-7c5ddbdf54-2xkqv", "10.244.1.2", "node-1"),
        running_pod("nginx-7c5ddbdf54-8fz9p", "10.244.2.2", "node-2"),
        running_pod("nginx-7c5ddbdf54-tq4wz", "10.244.3.2", "node-3"),
    ];
    let o = PrintOptions {
        wide: true,
        ..opts()
    };
    assert_eq!(
        print_table(Kind::Pod, &pods, &o, 5 * MINUTE),
        "\
NAME                     READY   STATUS    RESTARTS   AGE   IP           NODE     NOMINATED NODE   READINESS GATES
nginx-7c5ddbdf54-2xkqv   1/1     Running   0          5m    10.244.1.2   node-1   <none>           <none>
nginx-7c5ddbdf54-8fz9p   1/1     Running   0          5m    10.244.2.2   node-2   <none>           <none>
nginx-7c5ddbdf54-tq4wz   1/1     Running   0          5m    10.244.3.2   node-3   <none>           <none>
"
    );
}

#[test]
fn pod_statuses() {
    let crash = obj(
        Kind::Pod,
        json!({
            "metadata": {"name": "crash", "namespace": "default", "creationTimestamp": ts(0)},
            "spec": {"nodeName": "node-1", "containers": [{"name": "app", "image": "busybox"}]},
            "status": {"phase": "Running", "containerStatuses": [{"name": "app", "image": "busybox", "imageID": "",
                "ready": false, "restartCount": 4,
                "state": {"waiting": {"reason": "CrashLoopBackOff", "message": "back-off 1m20s"}},
                "lastState": {"terminated": {"exitCode": 1, "reason": "Error", "finishedAt": ts(540)}}}]}
        }),
    );
    let terminating = obj(
        Kind::Pod,
        json!({
            "metadata": {"name": "going", "namespace": "default", "creationTimestamp": ts(0), "deletionTimestamp": ts(590)},
            "spec": {"nodeName": "node-1", "containers": [{"name": "app", "image": "nginx"}]},
            "status": {"phase": "Running", "containerStatuses": [{"name": "app", "image": "nginx", "imageID": "",
                "ready": true, "restartCount": 0, "state": {"running": {"startedAt": ts(3)}}}]}
        }),
    );
    let pending = obj(
        Kind::Pod,
        json!({
            "metadata": {"name": "big", "namespace": "default", "creationTimestamp": ts(480)},
            "spec": {"containers": [{"name": "app", "image": "nginx"}]},
            "status": {"phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "False",
                "reason": "Unschedulable", "message": "0/3 nodes are available: 3 Insufficient cpu."}]}
        }),
    );
    let creating = obj(
        Kind::Pod,
        json!({
            "metadata": {"name": "new", "namespace": "default", "creationTimestamp": ts(595)},
            "spec": {"nodeName": "node-2", "initContainers": [{"name": "init", "image": "busybox"}],
                "containers": [{"name": "a", "image": "nginx"}, {"name": "b", "image": "nginx"}]},
            "status": {"phase": "Pending",
                "initContainerStatuses": [{"name": "init", "image": "busybox", "imageID": "", "ready": false, "restartCount": 0,
                    "state": {"running": {"startedAt": ts(596)}}}]}
        }),
    );
    let lost = obj(
        Kind::Pod,
        json!({
            "metadata": {"name": "lost", "namespace": "default", "creationTimestamp": ts(0), "deletionTimestamp": ts(500)},
            "spec": {"nodeName": "node-3", "containers": [{"name": "app", "image": "nginx"}]},
            "status": {"phase": "Running", "reason": "NodeLost"}
        }),
    );
    let done = obj(
        Kind::Pod,
        json!({
            "metadata": {"name": "job-x", "namespace": "default", "creationTimestamp": ts(0)},
            "spec": {"containers": [{"name": "app", "image": "busybox"}]},
            "status": {"phase": "Succeeded", "containerStatuses": [{"name": "app", "image": "busybox", "imageID": "",
                "ready": false, "restartCount": 0, "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}}]}
        }),
    );
    let oom = obj(
        Kind::Pod,
        json!({
            "metadata": {"name": "oom", "namespace": "default", "creationTimestamp": ts(0)},
            "spec": {"containers": [{"name": "app", "image": "busybox"}]},
            "status": {"phase": "Running", "containerStatuses": [{"name": "app", "image": "busybox", "imageID": "",
                "ready": false, "restartCount": 1, "state": {"terminated": {"exitCode": 137}}}]}
        }),
    );
    let pods = vec![crash, terminating, pending, creating, lost, done, oom];
    assert_eq!(
        print_table(Kind::Pod, &pods, &opts(), 10 * MINUTE),
        "\
NAME    READY   STATUS             RESTARTS      AGE
crash   0/1     CrashLoopBackOff   4 (60s ago)   10m
going   1/1     Terminating        0             10m
big     0/1     Pending            0             2m
new     0/2     Init:0/1           0             5s
lost    0/1     Unknown            0             10m
job-x   0/1     Completed          0             10m
oom     0/1     ExitCode:137       1             10m
"
    );
}

#[test]
fn namespace_labels_and_kind_prefix_decorate_the_table() {
    let pods = vec![running_pod("web", "10.244.1.2", "node-1")];
    let o = PrintOptions {
        all_namespaces: true,
        show_labels: true,
        with_kind_prefix: true,
        ..opts()
    };
    assert_eq!(
        print_table(Kind::Pod, &pods, &o, 90_000),
        "\
NAMESPACE   NAME      READY   STATUS    RESTARTS   AGE   LABELS
default     pod/web   1/1     Running   0          90s   app=nginx
"
    );
    let o = PrintOptions {
        no_headers: true,
        ..opts()
    };
    assert_eq!(
        print_table(Kind::Pod, &pods, &o, 90_000),
        "web   1/1   Running   0     90s\n"
    );
    assert_eq!(print_table(Kind::Pod, &[], &opts(), 0), "");
    assert_eq!(
        no_resources_message(Some("default")),
        "No resources found in default namespace.\n"
    );
    assert_eq!(no_resources_message(None), "No resources found\n");
}

fn node(name: &str, ready: &str, unschedulable: bool, role: Option<&str>) -> Arc<Object> {
    let mut labels = serde_json::Map::new();
    if let Some(r) = role {
        labels.insert(format!("node-role.kubernetes.io/{r}"), json!(""));
    }
    obj(
        Kind::Node,
        json!({
            "metadata": {"name": name, "creationTimestamp": ts(0), "labels": labels},
            "spec": {"unschedulable": unschedulable},
            "status": {
                "conditions": [{"type": "Ready", "status": ready}],
                "addresses": [{"type": "InternalIP", "address": "172.18.0.2"}, {"type": "Hostname", "address": name}],
                "nodeInfo": {"kubeletVersion": "v1.35.0", "osImage": "Debian GNU/Linux 12 (bookworm)",
                    "kernelVersion": "6.1.0", "containerRuntimeVersion": "containerd://2.1.0",
                    "architecture": "amd64", "bootID": "", "kubeProxyVersion": "", "machineID": "",
                    "operatingSystem": "linux", "systemUUID": ""}
            }
        }),
    )
}

#[test]
fn nodes_show_readiness_cordoning_and_roles() {
    let nodes = vec![
        node("control-plane", "True", false, Some("control-plane")),
        node("node-1", "Unknown", true, None),
    ];
    assert_eq!(
        print_table(Kind::Node, &nodes, &opts(), 3 * 3_600_000),
        "\
NAME            STATUS                        ROLES           AGE   VERSION
control-plane   Ready                         control-plane   3h    v1.35.0
node-1          NotReady,SchedulingDisabled   <none>          3h    v1.35.0
"
    );
    let o = PrintOptions {
        wide: true,
        ..opts()
    };
    assert_eq!(
        print_table(Kind::Node, &nodes[1..], &o, 3 * 3_600_000),
        "\
NAME     STATUS                        ROLES    AGE   VERSION   INTERNAL-IP   EXTERNAL-IP   OS-IMAGE                         KERNEL-VERSION   CONTAINER-RUNTIME
node-1   NotReady,SchedulingDisabled   <none>   3h    v1.35.0   172.18.0.2    <none>        Debian GNU/Linux 12 (bookworm)   6.1.0            containerd://2.1.0
"
    );
}

#[test]
fn services_show_ports_and_external_ips() {
    let svc = |name: &str, spec: serde_json::Value, status: serde_json::Value| {
        obj(
            Kind::Service,
            json!({"metadata": {"name": name, "namespace": "default", "creationTimestamp": ts(0)}, "spec": spec, "status": status}),
        )
    };
    let services = vec![
        svc(
            "kubernetes",
            json!({"type": "ClusterIP", "clusterIP": "10.96.0.1", "clusterIPs": ["10.96.0.1"],
            "ports": [{"name": "https", "port": 443, "protocol": "TCP", "targetPort": 6443}]}),
            json!({}),
        ),
        svc(
            "web",
            json!({"type": "NodePort", "clusterIP": "10.96.12.34", "clusterIPs": ["10.96.12.34"],
            "selector": {"app": "nginx", "tier": "front"},
            "ports": [{"port": 80, "protocol": "TCP", "targetPort": 80, "nodePort": 30080},
                      {"name": "dns", "port": 53, "protocol": "UDP", "targetPort": 53, "nodePort": 31053}]}),
            json!({}),
        ),
        svc(
            "lb",
            json!({"type": "LoadBalancer", "clusterIP": "10.96.0.50", "clusterIPs": ["10.96.0.50"],
            "ports": [{"port": 80, "protocol": "TCP", "nodePort": 32000}]}),
            json!({"loadBalancer": {}}),
        ),
        svc(
            "db",
            json!({"type": "ClusterIP", "clusterIP": "None", "clusterIPs": ["None"]}),
            json!({}),
        ),
    ];
    let o = PrintOptions {
        wide: true,
        ..opts()
    };
    assert_eq!(
        print_table(Kind::Service, &services, &o, 86_400_000 * 5),
        "\
NAME         TYPE           CLUSTER-IP    EXTERNAL-IP   PORT(S)                     AGE   SELECTOR
kubernetes   ClusterIP      10.96.0.1     <none>        443/TCP                     5d    <none>
web          NodePort       10.96.12.34   <none>        80:30080/TCP,53:31053/UDP   5d    app=nginx,tier=front
lb           LoadBalancer   10.96.0.50    <pending>     80:32000/TCP                5d    <none>
db           ClusterIP      None          <none>        <none>                      5d    <none>
"
    );
}

fn deployment() -> Arc<Object> {
    obj(
        Kind::Deployment,
        json!({
            "metadata": {"name": "nginx", "namespace": "default", "creationTimestamp": ts(0)},
            "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "nginx"}},
                "template": {"metadata": {"labels": {"app": "nginx"}},
                    "spec": {"containers": [{"name": "nginx", "image": "nginx:1.26"}, {"name": "log", "image": "busybox"}]}}},
            "status": {"replicas": 4, "updatedReplicas": 2, "readyReplicas": 3, "availableReplicas": 3}
        }),
    )
}

fn replica_set(name: &str, desired: i32, current: i32, ready: i32, image: &str) -> Arc<Object> {
    obj(
        Kind::ReplicaSet,
        json!({
            "metadata": {"name": name, "namespace": "default", "creationTimestamp": ts(0)},
            "spec": {"replicas": desired, "selector": {"matchLabels": {"app": "nginx", "pod-template-hash": &name[6..]}},
                "template": {"spec": {"containers": [{"name": "nginx", "image": image}]}}},
            "status": {"replicas": current, "readyReplicas": ready}
        }),
    )
}

#[test]
fn deployment_mid_rollout_with_its_replicasets() {
    let o = PrintOptions {
        wide: true,
        ..opts()
    };
    assert_eq!(
        print_table(Kind::Deployment, &[deployment()], &o, 150_000),
        "\
NAME    READY   UP-TO-DATE   AVAILABLE   AGE     CONTAINERS   IMAGES               SELECTOR
nginx   3/3     2            3           2m30s   nginx,log    nginx:1.26,busybox   app=nginx
"
    );
    let groups = vec![
        (Kind::Deployment, vec![deployment()]),
        (
            Kind::ReplicaSet,
            vec![
                replica_set("nginx-66b6c48dd5", 2, 2, 1, "nginx:1.25"),
                replica_set("nginx-7c5ddbdf54", 2, 2, 2, "nginx:1.26"),
            ],
        ),
    ];
    assert_eq!(
        print_tables(&groups, &opts(), 150_000),
        "\
NAME                    READY   UP-TO-DATE   AVAILABLE   AGE
deployment.apps/nginx   3/3     2            3           2m30s

NAME                               DESIRED   CURRENT   READY   AGE
replicaset.apps/nginx-66b6c48dd5   2         2         1       2m30s
replicaset.apps/nginx-7c5ddbdf54   2         2         2       2m30s
"
    );
}

#[test]
fn endpoint_slices_list_three_then_count_the_rest() {
    let eps: Vec<serde_json::Value> = (1..=5)
        .map(|i| json!({"addresses": [format!("10.244.{i}.2")]}))
        .collect();
    let slice = obj(
        Kind::EndpointSlice,
        json!({"metadata": {"name": "web-abcde", "namespace": "default", "creationTimestamp": ts(0)},
            "addressType": "IPv4", "ports": [{"port": 80, "protocol": "TCP"}], "endpoints": eps}),
    );
    let empty = obj(
        Kind::EndpointSlice,
        json!({"metadata": {"name": "db-xyz", "namespace": "default", "creationTimestamp": ts(0)},
            "addressType": "IPv4", "endpoints": []}),
    );
    assert_eq!(
        print_table(Kind::EndpointSlice, &[slice, empty], &opts(), 60_000),
        "\
NAME        ADDRESSTYPE   PORTS     ENDPOINTS                                      AGE
web-abcde   IPv4          80        10.244.1.2,10.244.2.2,10.244.3.2 + 2 more...   60s
db-xyz      IPv4          <unset>   <unset>                                        60s
"
    );
}

#[test]
fn events_sort_by_name_and_show_object_and_message() {
    let ev = |name: &str, reason: &str, last: u64, kind: &str, obj_name: &str, msg: &str| {
        obj(
            Kind::Event,
            json!({"metadata": {"name": name, "namespace": "default", "creationTimestamp": ts(last)},
                "involvedObject": {"kind": kind, "name": obj_name, "namespace": "default"},
                "reason": reason, "message": msg, "type": "Normal", "count": 1,
                "firstTimestamp": ts(last), "lastTimestamp": ts(last),
                "source": {"component": "default-scheduler"}}),
        )
    };
    let events = vec![
        ev(
            "nginx.1812a",
            "ScalingReplicaSet",
            10,
            "Deployment",
            "nginx",
            "Scaled up replica set nginx-7c5ddbdf54 from 0 to 3",
        ),
        ev(
            "nginx-7c5ddbdf54-2xkqv.1812c",
            "Scheduled",
            11,
            "Pod",
            "nginx-7c5ddbdf54-2xkqv",
            "Successfully assigned default/nginx-7c5ddbdf54-2xkqv to node-1",
        ),
    ];
    assert_eq!(
        print_table(Kind::Event, &events, &opts(), 120_000),
        "\
LAST SEEN   TYPE     REASON              OBJECT                       MESSAGE
109s        Normal   Scheduled           pod/nginx-7c5ddbdf54-2xkqv   Successfully assigned default/nginx-7c5ddbdf54-2xkqv to node-1
110s        Normal   ScalingReplicaSet   deployment/nginx             Scaled up replica set nginx-7c5ddbdf54 from 0 to 3
"
    );
}

#[test]
fn other_kinds_have_their_upstream_columns() {
    let now = 600_000;
    let cases: Vec<(Kind, serde_json::Value, &str)> = vec![
        (Kind::Namespace, json!({"metadata": {"name": "default", "creationTimestamp": ts(0)}, "status": {"phase": "Active"}}),
            "NAME      STATUS   AGE\ndefault   Active   10m\n"),
        (Kind::ConfigMap, json!({"metadata": {"name": "kube-root-ca.crt", "namespace": "default", "creationTimestamp": ts(0)}, "data": {"ca.crt": "x"}}),
            "NAME               DATA   AGE\nkube-root-ca.crt   1      10m\n"),
        (Kind::Secret, json!({"metadata": {"name": "s", "namespace": "default", "creationTimestamp": ts(0)}, "type": "Opaque", "data": {"a": "eA==", "b": "eQ=="}}),
            "NAME   TYPE     DATA   AGE\ns      Opaque   2      10m\n"),
        (Kind::ServiceAccount, json!({"metadata": {"name": "default", "namespace": "default", "creationTimestamp": ts(0)}}),
            "NAME      SECRETS   AGE\ndefault   0         10m\n"),
        (Kind::Lease, json!({"metadata": {"name": "node-1", "namespace": "kube-node-lease", "creationTimestamp": ts(0)}, "spec": {"holderIdentity": "node-1"}}),
            "NAME     HOLDER   AGE\nnode-1   node-1   10m\n"),
        (Kind::StorageClass, json!({"metadata": {"name": "standard", "creationTimestamp": ts(0), "annotations": {"storageclass.kubernetes.io/is-default-class": "true"}},
            "provisioner": "rancher.io/local-path", "reclaimPolicy": "Delete", "volumeBindingMode": "WaitForFirstConsumer"}),
            "NAME                 PROVISIONER             RECLAIMPOLICY   VOLUMEBINDINGMODE      ALLOWVOLUMEEXPANSION   AGE\nstandard (default)   rancher.io/local-path   Delete          WaitForFirstConsumer   false                  10m\n"),
        (Kind::PriorityClass, json!({"metadata": {"name": "system-node-critical", "creationTimestamp": ts(0)}, "value": 2000001000, "preemptionPolicy": "PreemptLowerPriority"}),
            "NAME                   VALUE        GLOBAL-DEFAULT   AGE   PREEMPTIONPOLICY\nsystem-node-critical   2000001000   false            10m   PreemptLowerPriority\n"),
        (Kind::ClusterRole, json!({"metadata": {"name": "admin", "creationTimestamp": ts(0)}}),
            "NAME    CREATED AT\nadmin   2026-01-01T00:00:00Z\n"),
        (Kind::RoleBinding, json!({"metadata": {"name": "rb", "namespace": "default", "creationTimestamp": ts(0)},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "reader"},
            "subjects": [{"kind": "ServiceAccount", "name": "app", "namespace": "default"}]}),
            "NAME   ROLE          AGE\nrb     Role/reader   10m\n"),
        (Kind::PersistentVolumeClaim, json!({"metadata": {"name": "data", "namespace": "default", "creationTimestamp": ts(0)},
            "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}, "storageClassName": "standard", "volumeName": "pvc-1"},
            "status": {"phase": "Bound", "accessModes": ["ReadWriteOnce"], "capacity": {"storage": "1Gi"}}}),
            "NAME   STATUS   VOLUME   CAPACITY   ACCESS MODES   STORAGECLASS   VOLUMEATTRIBUTESCLASS   AGE\ndata   Bound    pvc-1    1Gi        RWO            standard       <unset>                 10m\n"),
        (Kind::ResourceQuota, json!({"metadata": {"name": "q", "namespace": "default", "creationTimestamp": ts(0)},
            "status": {"hard": {"pods": "10", "limits.cpu": "4", "requests.cpu": "2"}, "used": {"pods": "3", "requests.cpu": "500m"}}}),
            "NAME   AGE   REQUEST                            LIMIT\nq      10m   pods: 3/10, requests.cpu: 500m/2   limits.cpu: 0/4\n"),
        (Kind::Job, json!({"metadata": {"name": "pi", "namespace": "default", "creationTimestamp": ts(0)},
            "spec": {"completions": 1, "template": {"spec": {"containers": [{"name": "pi", "image": "perl"}]}}},
            "status": {"succeeded": 1, "startTime": ts(0), "completionTime": ts(42), "conditions": [{"type": "Complete", "status": "True"}]}}),
            "NAME   STATUS     COMPLETIONS   DURATION   AGE\npi     Complete   1/1           42s        10m\n"),
    ];
    for (kind, v, want) in cases {
        assert_eq!(
            print_table(kind, &[obj(kind, v)], &opts(), now),
            want,
            "{kind}"
        );
    }
}

#[test]
fn bare_objects_of_every_kind_print_without_panicking() {
    for &kind in Kind::ALL {
        let v = json!({"metadata": {"name": "x", "namespace": "default"}});
        let mut unknown = Vec::new();
        let Ok(o) = Object::from_value(kind, &v, &mut unknown) else {
            continue;
        };
        let o = Arc::new(o);
        let all = PrintOptions {
            wide: true,
            all_namespaces: true,
            show_labels: true,
            ..opts()
        };
        assert!(
            print_table(kind, &[o.clone()], &all, 0).starts_with(|c: char| c.is_ascii_uppercase())
        );
        let _ = crate::kubectl::describe::describe(&o, &Default::default(), 0);
        let _ = crate::kubectl::output::print_objects(
            &[o],
            &crate::kubectl::output::OutputFormat::Yaml,
            true,
            false,
        );
    }
}
