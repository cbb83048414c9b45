//! Valid manifests of every kind, rich enough that random mutations reach deep fields.

use serde_json::{json, Value};

use crate::object::Kind;

/// A rich, valid manifest of every kind, so mutations reach deep fields.
pub(super) fn seeds() -> Vec<(Kind, Value)> {
    let meta = |name: &str| json!({"name": name, "namespace": "default", "labels": {"app": "web"}, "annotations": {"a": "b"}});
    let container = json!({
        "name": "web", "image": "nginx:1.27", "command": ["nginx"], "args": ["-g"],
        "ports": [{"name": "http", "containerPort": 80, "hostPort": 8080, "protocol": "TCP"}],
        "env": [{"name": "A", "value": "1"},
                {"name": "B", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
                {"name": "C", "valueFrom": {"resourceFieldRef": {"resource": "limits.cpu", "divisor": "1m"}}},
                {"name": "D", "valueFrom": {"configMapKeyRef": {"name": "cm", "key": "k"}}}],
        "envFrom": [{"configMapRef": {"name": "cm"}, "prefix": "X_"}],
        "resources": {"requests": {"cpu": "100m", "memory": "64Mi", "example.com/gpu": "1"},
                      "limits": {"cpu": "1", "memory": "128Mi", "example.com/gpu": "1"}},
        "volumeMounts": [{"name": "data", "mountPath": "/data", "subPath": "x"}],
        "livenessProbe": {"httpGet": {"path": "/", "port": "http"}, "periodSeconds": 5},
        "readinessProbe": {"tcpSocket": {"port": 80}, "initialDelaySeconds": 1},
        "startupProbe": {"exec": {"command": ["true"]}, "failureThreshold": 30},
        "lifecycle": {"preStop": {"sleep": {"seconds": 3}}},
        "securityContext": {"runAsUser": 1000, "capabilities": {"add": ["NET_ADMIN"]}}
    });
    let pod_spec = json!({
        "initContainers": [{"name": "init", "image": "busybox", "resources": {"requests": {"cpu": "2"}}}],
        "containers": [container],
        "volumes": [{"name": "data", "emptyDir": {"sizeLimit": "1Gi"}},
                    {"name": "cm", "configMap": {"name": "cm", "items": [{"key": "k", "path": "p"}]}},
                    {"name": "sec", "secret": {"secretName": "s", "defaultMode": 256}},
                    {"name": "claim", "persistentVolumeClaim": {"claimName": "c"}},
                    {"name": "host", "hostPath": {"path": "/tmp", "type": "Directory"}},
                    {"name": "proj", "projected": {"sources": [{"downwardAPI": {"items": [{"path": "l", "fieldRef": {"fieldPath": "metadata.labels"}}]}}]}}],
        "tolerations": [{"key": "k", "operator": "Equal", "value": "v", "effect": "NoExecute", "tolerationSeconds": 10}],
        "nodeSelector": {"disk": "ssd"},
        "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{"matchExpressions": [{"key": "z", "operator": "In", "values": ["a"]}]}]}},
                     "podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 10, "podAffinityTerm": {"topologyKey": "kubernetes.io/hostname", "labelSelector": {"matchLabels": {"app": "web"}}}}]}},
        "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule", "labelSelector": {"matchLabels": {"app": "web"}}}],
        "priorityClassName": "high", "serviceAccountName": "default",
        "activeDeadlineSeconds": 100, "hostname": "h", "subdomain": "s",
        "dnsConfig": {"nameservers": ["1.1.1.1"], "options": [{"name": "ndots", "value": "2"}]},
        "overhead": {"cpu": "10m"}
    });
    let template = json!({"metadata": {"labels": {"app": "web"}}, "spec": pod_spec});
    let selector = json!({"matchLabels": {"app": "web"}, "matchExpressions": [{"key": "tier", "operator": "NotIn", "values": ["db"]}]});
    vec![
        (Kind::Pod, json!({"metadata": meta("p"), "spec": pod_spec})),
        (
            Kind::Deployment,
            json!({"metadata": meta("d"), "spec": {"replicas": 3, "selector": selector, "template": template,
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "50%", "maxUnavailable": 1}},
            "minReadySeconds": 5, "progressDeadlineSeconds": 60, "revisionHistoryLimit": 2}}),
        ),
        (
            Kind::ReplicaSet,
            json!({"metadata": meta("rs"), "spec": {"replicas": 2, "selector": selector, "template": template}}),
        ),
        (
            Kind::DaemonSet,
            json!({"metadata": meta("ds"), "spec": {"selector": selector, "template": template,
            "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "10%", "maxSurge": 0}}}}),
        ),
        (
            Kind::StatefulSet,
            json!({"metadata": meta("sts"), "spec": {"serviceName": "web", "replicas": 2, "selector": selector, "template": template,
            "volumeClaimTemplates": [{"metadata": {"name": "data"}, "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}],
            "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 1}}, "podManagementPolicy": "Parallel",
            "persistentVolumeClaimRetentionPolicy": {"whenDeleted": "Delete"}, "ordinals": {"start": 2}}}),
        ),
        (
            Kind::PodDisruptionBudget,
            json!({"metadata": meta("pdb"), "spec": {"maxUnavailable": "25%", "selector": selector,
            "unhealthyPodEvictionPolicy": "AlwaysAllow"}}),
        ),
        (
            Kind::Job,
            json!({"metadata": meta("j"), "spec": {"completions": 3, "parallelism": 2, "backoffLimit": 1, "completionMode": "Indexed",
            "activeDeadlineSeconds": 60, "ttlSecondsAfterFinished": 10,
            "podFailurePolicy": {"rules": [{"action": "FailJob", "onExitCodes": {"operator": "In", "values": [42]}}]},
            "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}}}}),
        ),
        (
            Kind::Service,
            json!({"metadata": meta("svc"), "spec": {"type": "LoadBalancer", "selector": {"app": "web"},
            "ports": [{"name": "http", "port": 80, "targetPort": "http", "nodePort": 30080}, {"name": "dns", "port": 53, "protocol": "UDP", "targetPort": 5353}],
            "sessionAffinity": "ClientIP", "sessionAffinityConfig": {"clientIP": {"timeoutSeconds": 60}},
            "externalTrafficPolicy": "Local", "healthCheckNodePort": 31000, "clusterIP": "10.96.0.10", "clusterIPs": ["10.96.0.10"],
            "loadBalancerSourceRanges": ["10.0.0.0/8"], "externalIPs": ["1.2.3.4"], "ipFamilies": ["IPv4"], "ipFamilyPolicy": "SingleStack"}}),
        ),
        (
            Kind::Service,
            json!({"metadata": meta("ext"), "spec": {"type": "ExternalName", "externalName": "example.com"}}),
        ),
        (
            Kind::Endpoints,
            json!({"metadata": meta("svc"), "subsets": [{"addresses": [{"ip": "10.0.0.1", "targetRef": {"kind": "Pod", "name": "p"}}],
            "notReadyAddresses": [{"ip": "10.0.0.2"}], "ports": [{"name": "http", "port": 80, "protocol": "TCP"}]}]}),
        ),
        (
            Kind::EndpointSlice,
            json!({"metadata": meta("svc-abc"), "addressType": "IPv4",
            "endpoints": [{"addresses": ["10.0.0.1"], "conditions": {"ready": true}, "nodeName": "n1"}],
            "ports": [{"name": "http", "port": 80, "protocol": "TCP"}]}),
        ),
        (
            Kind::Namespace,
            json!({"metadata": {"name": "team-a", "labels": {"x": "y"}}, "spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Active"}}),
        ),
        (
            Kind::ConfigMap,
            json!({"metadata": meta("cm"), "data": {"a.conf": "x", "B_2": "y"}, "binaryData": {"bin": "AAEC"}, "immutable": true}),
        ),
        (
            Kind::Secret,
            json!({"metadata": meta("s"), "type": "kubernetes.io/tls", "data": {"tls.crt": "AAEC", "tls.key": "AAEC"}, "stringData": {"x": "y"}}),
        ),
        (
            Kind::ServiceAccount,
            json!({"metadata": meta("default"), "secrets": [{"name": "s"}], "imagePullSecrets": [{"name": "reg"}], "automountServiceAccountToken": false}),
        ),
        (
            Kind::Event,
            json!({"metadata": meta("p.1"), "involvedObject": {"kind": "Pod", "name": "p", "namespace": "default"},
            "reason": "Started", "message": "m", "type": "Normal", "count": 1, "source": {"component": "kubelet"}}),
        ),
        (
            Kind::PersistentVolumeClaim,
            json!({"metadata": meta("c"), "spec": {"accessModes": ["ReadWriteOnce", "ReadOnlyMany"],
            "resources": {"requests": {"storage": "1Gi"}, "limits": {"storage": "2Gi"}}, "storageClassName": "standard", "volumeMode": "Filesystem",
            "selector": {"matchLabels": {"a": "b"}}}}),
        ),
        (
            Kind::PersistentVolume,
            json!({"metadata": {"name": "pv1"}, "spec": {"capacity": {"storage": "5Gi"}, "accessModes": ["ReadWriteOnce"],
            "hostPath": {"path": "/data"}, "persistentVolumeReclaimPolicy": "Retain", "storageClassName": "standard",
            "claimRef": {"name": "c", "namespace": "default"},
            "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [{"key": "k", "operator": "Exists"}]}]}}}}),
        ),
        (
            Kind::ResourceQuota,
            json!({"metadata": meta("q"), "spec": {"hard": {"pods": "10", "requests.cpu": "4", "limits.memory": "8Gi", "count/configmaps": "5", "services.nodeports": "2"},
            "scopes": ["NotBestEffort"], "scopeSelector": {"matchExpressions": [{"scopeName": "PriorityClass", "operator": "In", "values": ["high"]}]}},
            "status": {"hard": {"pods": "10", "requests.cpu": "4", "limits.memory": "8Gi", "count/configmaps": "5", "services.nodeports": "2"},
                       "used": {"pods": "1", "requests.cpu": "1", "limits.memory": "1Gi", "count/configmaps": "0", "services.nodeports": "0"}}}),
        ),
        (
            Kind::LimitRange,
            json!({"metadata": meta("lr"), "spec": {"limits": [
            {"type": "Container", "default": {"cpu": "500m", "memory": "256Mi"}, "defaultRequest": {"cpu": "100m"}, "max": {"cpu": "2"}, "min": {"cpu": "10m"}, "maxLimitRequestRatio": {"cpu": "10"}},
            {"type": "Pod", "max": {"memory": "1Gi"}},
            {"type": "PersistentVolumeClaim", "min": {"storage": "1Gi"}, "max": {"storage": "10Gi"}}]}}),
        ),
        (
            Kind::Node,
            json!({"metadata": {"name": "n1", "labels": {"kubernetes.io/hostname": "n1"}}, "spec": {"podCIDR": "10.244.0.0/24", "podCIDRs": ["10.244.0.0/24"],
            "taints": [{"key": "k", "value": "v", "effect": "NoSchedule"}], "unschedulable": false},
            "status": {"capacity": {"cpu": "4", "memory": "8Gi", "pods": "110"}, "allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}),
        ),
        (
            Kind::Lease,
            json!({"metadata": meta("l"), "spec": {"holderIdentity": "a", "leaseDurationSeconds": 15, "leaseTransitions": 0}}),
        ),
        (
            Kind::Role,
            json!({"metadata": meta("r"), "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list"], "resourceNames": ["p"]}]}),
        ),
        (
            Kind::ClusterRole,
            json!({"metadata": {"name": "cr"}, "rules": [{"nonResourceURLs": ["/healthz"], "verbs": ["get"]}],
            "aggregationRule": {"clusterRoleSelectors": [{"matchLabels": {"agg": "true"}}]}}),
        ),
        (
            Kind::RoleBinding,
            json!({"metadata": meta("rb"), "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "r"},
            "subjects": [{"kind": "ServiceAccount", "name": "default", "namespace": "default"}, {"kind": "User", "name": "alice", "apiGroup": "rbac.authorization.k8s.io"}]}),
        ),
        (
            Kind::ClusterRoleBinding,
            json!({"metadata": {"name": "crb"}, "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cr"},
            "subjects": [{"kind": "Group", "name": "devs", "apiGroup": "rbac.authorization.k8s.io"}]}),
        ),
        (
            Kind::PriorityClass,
            json!({"metadata": {"name": "high"}, "value": 1000, "globalDefault": true, "preemptionPolicy": "Never", "description": "d"}),
        ),
        (
            Kind::StorageClass,
            json!({"metadata": {"name": "standard"}, "provisioner": "rancher.io/local-path", "reclaimPolicy": "Retain",
            "volumeBindingMode": "WaitForFirstConsumer", "allowVolumeExpansion": true, "parameters": {"a": "b"}, "mountOptions": ["ro"],
            "allowedTopologies": [{"matchLabelExpressions": [{"key": "zone", "values": ["a"]}]}]}),
        ),
    ]
}
