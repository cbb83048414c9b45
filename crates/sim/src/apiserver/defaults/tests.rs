//! Defaulted objects compared with what a real v1.35 cluster returns for the same manifest.

use serde_json::json;

use super::*;
use crate::object::Kind;

fn defaulted(kind: Kind, v: serde_json::Value) -> serde_json::Value {
    let mut unknown = Vec::new();
    let mut obj = Object::from_value(kind, &v, &mut unknown).expect("decodes");
    set_defaults(&mut obj);
    obj.to_value()
}

#[test]
fn deployment_matches_cluster_output() {
    let got = defaulted(
        Kind::Deployment,
        json!({
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "nginx", "labels": {"app": "nginx"}},
            "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "nginx"}},
                "template": {"metadata": {"labels": {"app": "nginx"}},
                    "spec": {"containers": [{"name": "nginx", "image": "nginx:1.27",
                        "ports": [{"containerPort": 80}]}]}}}
        }),
    );
    // `kubectl get deploy nginx -o json` on v1.35, less `template.metadata.creationTimestamp:
    // null`, which Go prints for a zero time and k8s-openapi omits.
    assert_eq!(
        got["spec"],
        json!({
            "progressDeadlineSeconds": 600,
            "replicas": 3,
            "revisionHistoryLimit": 10,
            "selector": {"matchLabels": {"app": "nginx"}},
            "strategy": {"rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}, "type": "RollingUpdate"},
            "template": {
                "metadata": {"labels": {"app": "nginx"}},
                "spec": {
                    "containers": [{
                        "image": "nginx:1.27",
                        "imagePullPolicy": "IfNotPresent",
                        "name": "nginx",
                        "ports": [{"containerPort": 80, "protocol": "TCP"}],
                        "resources": {},
                        "terminationMessagePath": "/dev/termination-log",
                        "terminationMessagePolicy": "File"
                    }],
                    "dnsPolicy": "ClusterFirst",
                    "restartPolicy": "Always",
                    "schedulerName": "default-scheduler",
                    "securityContext": {},
                    "terminationGracePeriodSeconds": 30
                }
            }
        })
    );
}

#[test]
fn pod_matches_cluster_output_before_admission() {
    let got = defaulted(
        Kind::Pod,
        json!({
            "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web", "namespace": "default"},
            "spec": {"containers": [{"name": "web", "image": "nginx",
                "resources": {"limits": {"cpu": "0.5", "memory": "128Mi"}},
                "readinessProbe": {"httpGet": {"port": 80}}}]}
        }),
    );
    assert_eq!(
        got["spec"],
        json!({
            "containers": [{
                "image": "nginx",
                "imagePullPolicy": "Always",
                "name": "web",
                "readinessProbe": {
                    "failureThreshold": 3,
                    "httpGet": {"path": "/", "port": 80, "scheme": "HTTP"},
                    "periodSeconds": 10,
                    "successThreshold": 1,
                    "timeoutSeconds": 1
                },
                "resources": {
                    "limits": {"cpu": "500m", "memory": "128Mi"},
                    "requests": {"cpu": "500m", "memory": "128Mi"}
                },
                "terminationMessagePath": "/dev/termination-log",
                "terminationMessagePolicy": "File"
            }],
            "dnsPolicy": "ClusterFirst",
            "enableServiceLinks": true,
            "restartPolicy": "Always",
            "schedulerName": "default-scheduler",
            "securityContext": {},
            "terminationGracePeriodSeconds": 30
        })
    );
}

#[test]
fn service_matches_cluster_output_before_ip_allocation() {
    let got = defaulted(
        Kind::Service,
        json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"},
            "spec": {"selector": {"app": "web"}, "ports": [{"port": 80}]}}),
    );
    assert_eq!(
        got["spec"],
        json!({
            "internalTrafficPolicy": "Cluster",
            "ipFamilies": ["IPv4"],
            "ipFamilyPolicy": "SingleStack",
            "ports": [{"port": 80, "protocol": "TCP", "targetPort": 80}],
            "selector": {"app": "web"},
            "sessionAffinity": "None",
            "type": "ClusterIP"
        })
    );
    let got = defaulted(
        Kind::Service,
        json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"},
            "spec": {"type": "NodePort", "sessionAffinity": "ClientIP", "selector": {"app": "web"},
                "ports": [{"port": 80, "targetPort": "http"}]}}),
    );
    assert_eq!(got["spec"]["externalTrafficPolicy"], "Cluster");
    assert_eq!(got["spec"]["ports"][0]["targetPort"], "http");
    assert_eq!(
        got["spec"]["sessionAffinityConfig"],
        json!({"clientIP": {"timeoutSeconds": 10800}})
    );
}

#[test]
fn headless_service_without_selector_requires_dual_stack() {
    let got = defaulted(
        Kind::Service,
        json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "h"},
            "spec": {"clusterIP": "None"}}),
    );
    assert_eq!(got["spec"]["clusterIPs"], json!(["None"]));
    assert_eq!(got["spec"]["ipFamilyPolicy"], "RequireDualStack");
}

#[test]
fn image_pull_policy_follows_the_tag() {
    for (image, want) in [
        ("nginx", "latest"),
        ("nginx:latest", "latest"),
        ("nginx:1.27", "1.27"),
        ("localhost:5000/app", "latest"),
        ("registry.io:5000/team/app:v2", "v2"),
        (
            "nginx@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
            "",
        ),
        ("Nginx", ""),
        ("", ""),
    ] {
        assert_eq!(image_tag(image), want, "{image}");
    }
}

#[test]
fn volumes_get_source_and_mode_defaults() {
    let got = defaulted(
        Kind::Pod,
        json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
            "spec": {"containers": [{"name": "c", "image": "busybox"}],
                "volumes": [{"name": "scratch"}, {"name": "cfg", "configMap": {"name": "cfg"}},
                    {"name": "host", "hostPath": {"path": "/var/log"}}]}}),
    );
    let vols = &got["spec"]["volumes"];
    assert_eq!(vols[0], json!({"name": "scratch", "emptyDir": {}}));
    assert_eq!(vols[1]["configMap"]["defaultMode"], 420);
    assert_eq!(vols[2]["hostPath"], json!({"path": "/var/log", "type": ""}));
}

#[test]
fn workloads_get_their_strategy_defaults() {
    let tmpl = json!({"metadata": {"labels": {"a": "b"}}, "spec": {"containers": [{"name": "c", "image": "i"}]}});
    let ds = defaulted(
        Kind::DaemonSet,
        json!({"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "d"},
            "spec": {"selector": {"matchLabels": {"a": "b"}}, "template": tmpl.clone()}}),
    );
    assert_eq!(
        ds["spec"]["updateStrategy"],
        json!({"rollingUpdate": {"maxSurge": 0, "maxUnavailable": 1}, "type": "RollingUpdate"})
    );
    assert_eq!(ds["spec"]["revisionHistoryLimit"], 10);
    let sts = defaulted(
        Kind::StatefulSet,
        json!({"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "s"},
            "spec": {"serviceName": "s", "selector": {"matchLabels": {"a": "b"}}, "template": tmpl.clone()}}),
    );
    assert_eq!(sts["spec"]["podManagementPolicy"], "OrderedReady");
    assert_eq!(
        sts["spec"]["updateStrategy"],
        json!({"rollingUpdate": {"partition": 0}, "type": "RollingUpdate"})
    );
    assert_eq!(
        sts["spec"]["persistentVolumeClaimRetentionPolicy"],
        json!({"whenDeleted": "Retain", "whenScaled": "Retain"})
    );
    let job = defaulted(
        Kind::Job,
        json!({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j"},
            "spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "i"}]}}}}),
    );
    for (k, v) in [
        ("backoffLimit", json!(6)),
        ("completionMode", json!("NonIndexed")),
        ("completions", json!(1)),
        ("parallelism", json!(1)),
        ("podReplacementPolicy", json!("TerminatingOrFailed")),
        ("suspend", json!(false)),
    ] {
        assert_eq!(job["spec"][k], v, "{k}");
    }
}

#[test]
fn other_kinds_get_their_defaults() {
    let ns = defaulted(
        Kind::Namespace,
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "dev"}}),
    );
    assert_eq!(
        ns["metadata"]["labels"],
        json!({"kubernetes.io/metadata.name": "dev"})
    );
    assert_eq!(ns["status"], json!({"phase": "Active"}));
    let pvc = defaulted(
        Kind::PersistentVolumeClaim,
        json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "c"},
            "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1.5Gi"}}}}),
    );
    assert_eq!(pvc["spec"]["volumeMode"], "Filesystem");
    assert_eq!(pvc["spec"]["resources"]["requests"]["storage"], "1536Mi");
    assert_eq!(pvc["status"], json!({"phase": "Pending"}));
    let sc = defaulted(
        Kind::StorageClass,
        json!({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "s"}, "provisioner": "p"}),
    );
    assert_eq!(sc["reclaimPolicy"], "Delete");
    assert_eq!(sc["volumeBindingMode"], "Immediate");
    let secret = defaulted(
        Kind::Secret,
        json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}, "stringData": {"k": "v"}}),
    );
    assert_eq!(secret["type"], "Opaque");
    assert_eq!(secret["data"], json!({"k": "dg=="}));
    assert!(secret.get("stringData").is_none());
    let rb = defaulted(
        Kind::RoleBinding,
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding", "metadata": {"name": "r"},
            "roleRef": {"kind": "Role", "name": "r", "apiGroup": ""},
            "subjects": [{"kind": "User", "name": "alice"}, {"kind": "ServiceAccount", "name": "sa"}]}),
    );
    assert_eq!(rb["roleRef"]["apiGroup"], "rbac.authorization.k8s.io");
    assert_eq!(rb["subjects"][0]["apiGroup"], "rbac.authorization.k8s.io");
    assert_eq!(rb["subjects"][1]["apiGroup"], "");
    let lr = defaulted(
        Kind::LimitRange,
        json!({"apiVersion": "v1", "kind": "LimitRange", "metadata": {"name": "l"},
            "spec": {"limits": [{"type": "Container", "max": {"cpu": "2"}, "min": {"memory": "64Mi"}}]}}),
    );
    let item = &lr["spec"]["limits"][0];
    assert_eq!(item["default"], json!({"cpu": "2"}));
    assert_eq!(
        item["defaultRequest"],
        json!({"cpu": "2", "memory": "64Mi"})
    );
}

#[test]
fn job_selector_is_generated_from_the_uid() {
    let mut obj = Object::from_value(
        Kind::Job,
        &json!({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "pi"},
            "spec": {"template": {"spec": {"containers": [{"name": "c", "image": "perl"}]}}}}),
        &mut Vec::new(),
    )
    .unwrap();
    if let Object::Job(j) = &mut obj {
        generate_job_selector(j, "u-1");
    }
    let v = obj.to_value();
    assert_eq!(
        v["spec"]["selector"],
        json!({"matchLabels": {"batch.kubernetes.io/controller-uid": "u-1"}})
    );
    assert_eq!(
        v["spec"]["template"]["metadata"]["labels"]["job-name"],
        "pi"
    );
}
