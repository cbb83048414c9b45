//! Property test: arbitrary (randomly mutated) objects never panic defaulting, validation
//! or the admission plugins. Deterministic: a fixed seed drives every mutation.

use serde_json::{json, Map, Value};

use crate::apiserver::admission::{
    defaulttolerationseconds, limitranger, namespacelifecycle, priority, resourcequota,
    serviceaccount, Operation,
};
use crate::apiserver::defaults::{generate_job_selector, set_defaults};
use crate::apiserver::field_error::invalid_message;
use crate::apiserver::quantity::parse_quantity;
use crate::apiserver::validation::{decode_quantity_error, validate_create, validate_update};
use crate::object::{Kind, Object};
use crate::rng::Rng;

/// A rich, valid manifest of every kind, so mutations reach deep fields.
fn seeds() -> Vec<(Kind, Value)> {
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

/// Strings chosen to hit edge cases: empty, too long, non-ASCII, odd quantities and ports.
const STRINGS: &[&str] = &[
    "",
    " ",
    "-",
    ".",
    "a",
    "A",
    "web",
    "nginx",
    "http",
    "TCP",
    "UDP",
    "SCTP",
    "Always",
    "Never",
    "None",
    "Exists",
    "In",
    "NotIn",
    "Equal",
    "NoExecute",
    "RollingUpdate",
    "Recreate",
    "OnDelete",
    "ClusterIP",
    "NodePort",
    "LoadBalancer",
    "ExternalName",
    "ReadWriteOnce",
    "Filesystem",
    "Block",
    "0",
    "-1",
    "1",
    "1m",
    "0.5",
    "1e3",
    "1E308",
    "1e-9",
    "1e1000",
    "1Ei",
    "8Ei",
    "1.5Gi",
    "999999999999999999999999999999999999",
    "0.000000000000000000001",
    "9223372036854775807",
    "-9223372036854775808",
    "1Ki",
    "+1",
    "1.",
    ".5",
    "1..2",
    "1e",
    "1e+",
    "Ki",
    "1KiB",
    "1k",
    "50%",
    "0%",
    "100%",
    "101%",
    "-5%",
    "%",
    "1.5%",
    "abc%",
    "65536",
    "30000",
    "/",
    "/data",
    "../x",
    "a/b",
    "example.com/gpu",
    "requests.cpu",
    "limits.memory",
    "count/pods",
    "kubernetes.io/hostname",
    "-bad-",
    "UPPER",
    "a_b",
    "🙂",
    "ü",
    "a\u{0}b",
    "x\ny",
    "10.0.0.1",
    "::1",
    "10.0.0.0/8",
    "None",
    "IPv4",
    "IPv6",
    "PreferDualStack",
    "RequireDualStack",
    "Local",
    "Cluster",
    "ClientIP",
    "NotBestEffort",
    "BestEffort",
    "Terminating",
    "PriorityClass",
    "Container",
    "Pod",
    "PersistentVolumeClaim",
    "storage",
    "cpu",
    "memory",
    "pods",
    "services",
    "Role",
    "ClusterRole",
    "ServiceAccount",
    "User",
    "Group",
    "get",
    "*",
    "Indexed",
    "NonIndexed",
    "FailJob",
    "Ignore",
    "Count",
    "OnExitCodes",
];

fn long_string(rng: &mut Rng) -> String {
    let unit = ["a", "-", ".", "0", "ü"][rng.intn(5) as usize];
    unit.repeat(1 + rng.intn(400) as usize)
}

fn random_string(rng: &mut Rng) -> String {
    match rng.intn(10) {
        0 => long_string(rng),
        1 => {
            // Random quantity-like strings.
            const CHARS: &[u8] = b"0123456789.+-eEinumkKMGTP%";
            (0..rng.intn(12))
                .map(|_| CHARS[rng.intn(CHARS.len() as u64) as usize] as char)
                .collect()
        }
        _ => STRINGS[rng.intn(STRINGS.len() as u64) as usize].to_string(),
    }
}

fn random_int(rng: &mut Rng) -> i64 {
    const INTS: &[i64] = &[
        0,
        1,
        -1,
        2,
        3,
        10,
        80,
        100,
        101,
        443,
        1000,
        30000,
        32767,
        32768,
        65535,
        65536,
        2_147_483_647,
        2_147_483_648,
        -2_147_483_648,
        1_000_000_000,
        2_000_000_001,
        i64::MAX,
        i64::MIN,
        i64::MAX - 1,
    ];
    if rng.intn(4) == 0 {
        rng.next_u64() as i64
    } else {
        INTS[rng.intn(INTS.len() as u64) as usize]
    }
}

fn random_leaf(rng: &mut Rng, keys: &[String], donors: &[Value]) -> Value {
    match rng.intn(10) {
        0 => Value::Null,
        1 => Value::Bool(rng.intn(2) == 0),
        2 | 3 => json!(random_int(rng)),
        4 => json!(rng.float() * 1e6 - 5e5),
        5 => json!({}),
        6 => json!([]),
        7 => {
            // A fragment of some valid manifest, in a place it may not belong.
            let mut v = donors[rng.intn(donors.len() as u64) as usize].clone();
            for _ in 0..rng.intn(4) {
                v = match &v {
                    Value::Object(m) if !m.is_empty() => m
                        .values()
                        .nth(rng.intn(m.len() as u64) as usize)
                        .cloned()
                        .unwrap_or(Value::Null),
                    Value::Array(a) if !a.is_empty() => {
                        a[rng.intn(a.len() as u64) as usize].clone()
                    }
                    _ => v,
                };
            }
            v
        }
        8 => {
            let mut m = Map::new();
            for _ in 0..rng.intn(3) {
                let k = keys[rng.intn(keys.len() as u64) as usize].clone();
                m.insert(k, json!(random_string(rng)));
            }
            Value::Object(m)
        }
        _ => Value::String(random_string(rng)),
    }
}

fn collect_keys(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                out.push(k.clone());
                collect_keys(x, out);
            }
        }
        Value::Array(a) => a.iter().for_each(|x| collect_keys(x, out)),
        _ => {}
    }
}

/// Applies one random mutation somewhere in `v`.
fn mutate(v: &mut Value, rng: &mut Rng, keys: &[String], donors: &[Value]) {
    let descend = rng.intn(5) != 0;
    match v {
        Value::Object(m) if descend && !m.is_empty() => {
            let i = rng.intn(m.len() as u64) as usize;
            let k = m.keys().nth(i).cloned().unwrap_or_default();
            match rng.intn(8) {
                0 => {
                    m.remove(&k);
                }
                1 => {
                    let nk = match rng.intn(3) {
                        0 => random_string(rng),
                        _ => keys[rng.intn(keys.len() as u64) as usize].clone(),
                    };
                    m.insert(nk, random_leaf(rng, keys, donors));
                }
                _ => {
                    if let Some(x) = m.get_mut(&k) {
                        mutate(x, rng, keys, donors);
                    }
                }
            }
        }
        Value::Array(a) if descend && !a.is_empty() => {
            let i = rng.intn(a.len() as u64) as usize;
            match rng.intn(6) {
                0 => {
                    a.remove(i);
                }
                1 => {
                    let x = a[i].clone();
                    a.push(x);
                }
                _ => mutate(&mut a[i], rng, keys, donors),
            }
        }
        _ => *v = random_leaf(rng, keys, donors),
    }
}

/// Runs everything this module's siblings export on one object; only panics matter.
fn exercise(obj: &Object, original: &Object, cluster: &[Object]) {
    let mut obj = obj.clone();
    set_defaults(&mut obj);
    if let Object::Job(j) = &mut obj {
        generate_job_selector(j, "0b0c1ab5-1b6a-4f0e-8a35-9b8a1a2b3c4d");
    }
    let _ = decode_quantity_error(&obj);
    let errs = validate_create(&obj);
    let info = obj.kind().info();
    let _ = invalid_message(info.kind, info.group, obj.name(), &errs);
    for e in &errs {
        let _ = e.to_string();
    }
    let _ = validate_update(&obj, original);
    let _ = validate_update(original, &obj);
    let _ = validate_update(&obj, &obj);

    let ns = cluster.iter().find_map(|o| match o {
        Object::Namespace(n) => Some(n.clone()),
        _ => None,
    });
    let mut ranges = Vec::new();
    let mut quotas = Vec::new();
    let mut classes = priority::system_priority_classes();
    let mut accounts = Vec::new();
    for o in cluster {
        match o {
            Object::LimitRange(l) => ranges.push(l.clone()),
            Object::ResourceQuota(q) => quotas.push(q.clone()),
            Object::PriorityClass(p) => classes.push(p.clone()),
            Object::ServiceAccount(s) => accounts.push(s.clone()),
            _ => {}
        }
    }
    for op in [Operation::Create, Operation::Update, Operation::Delete] {
        let _ = namespacelifecycle::admit(
            op,
            obj.kind(),
            obj.name(),
            obj.namespace(),
            Some(&obj),
            ns.as_ref(),
        );
        let _ = resourcequota::check(op, &obj, Some(original), &quotas);
        let _ = resourcequota::check(op, &obj, None, &quotas);
    }
    match &obj {
        Object::Pod(p) => {
            let mut p = p.clone();
            limitranger::mutate_pod(&mut p, &ranges);
            let _ = limitranger::validate_pod(&p, &ranges);
            let _ = serviceaccount::admit(&mut p, &accounts, "x7k2q");
            let old = match original {
                Object::Pod(o) => Some(o),
                _ => None,
            };
            let _ = priority::admit_pod(Operation::Create, &mut p, None, &classes);
            let _ = priority::admit_pod(Operation::Update, &mut p, old, &classes);
            defaulttolerationseconds::admit(&mut p);
            let _ = resourcequota::pod_requests(&p);
            let _ = resourcequota::pod_limits(&p);
            let _ = validate_create(&Object::Pod(p));
        }
        Object::PersistentVolumeClaim(c) => {
            let _ = limitranger::validate_pvc(c, &ranges);
        }
        Object::PriorityClass(pc) => {
            let _ = priority::admit_priority_class(Operation::Create, pc, &classes);
        }
        _ => {}
    }
}

#[test]
fn arbitrary_objects_never_panic() {
    let seeds = seeds();
    let donors: Vec<Value> = seeds.iter().map(|(_, v)| v.clone()).collect();
    let mut keys = Vec::new();
    donors.iter().for_each(|v| collect_keys(v, &mut keys));
    keys.sort();
    keys.dedup();
    let decode = |kind: Kind, v: &Value| Object::from_value(kind, v, &mut Vec::new()).ok();
    let cluster: Vec<Object> = seeds.iter().filter_map(|(k, v)| decode(*k, v)).collect();
    assert_eq!(cluster.len(), seeds.len(), "every seed decodes");

    // `KUBELOOP_FUZZ_ROUNDS` / `KUBELOOP_FUZZ_SEED` allow longer explorations by hand.
    let env = |name: &str, default: u64| {
        std::env::var(name)
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(default)
    };
    let mut rng = Rng::new(env("KUBELOOP_FUZZ_SEED", 0x6b75_6265_6c6f_6f70));
    let mut decoded = 0;
    for round in 0..env("KUBELOOP_FUZZ_ROUNDS", 120) {
        for (kind, seed) in &seeds {
            let original = decode(*kind, seed).unwrap_or_else(|| panic!("{kind:?} seed decodes"));
            let mut v = seed.clone();
            for _ in 0..1 + rng.intn(1 + round % 6) {
                mutate(&mut v, &mut rng, &keys, &donors);
            }
            let Some(obj) = decode(*kind, &v) else {
                continue;
            };
            decoded += 1;
            // Some mutated objects also serve as the cluster state admission reads.
            let mut state = cluster.clone();
            if rng.intn(3) == 0 {
                state.push(obj.clone());
            }
            exercise(&obj, &original, &state);
        }
    }
    assert!(decoded > 1000, "only {decoded} mutated objects decoded");
}

#[test]
fn arbitrary_quantities_never_panic() {
    let mut rng = Rng::new(42);
    let mut parsed = Vec::new();
    for _ in 0..20_000 {
        let s = random_string(&mut rng);
        if let Ok(q) = parse_quantity(&s) {
            let _ = (q.value(), q.milli_value(), q.canonical(), q.to_string());
            let _ = (
                q.round_up(0),
                q.round_up(-3),
                q.scaled_value(6),
                q.scaled_value(-9),
            );
            parsed.push(q);
        }
    }
    for w in parsed.windows(2) {
        let (a, b) = (&w[0], &w[1]);
        let _ = (
            a.add(b).canonical(),
            a.sub(b).canonical(),
            a.cmp_value(b),
            a == b,
            a < b,
        );
    }
    assert!(parsed.len() > 1000);
}

#[test]
fn extreme_quantities_in_every_resource_field_never_panic() {
    let extremes = [
        "8Ei",
        "9223372036854775807",
        "1e18",
        "999999999999999999999999999999999999",
        "0.000000001m",
        "1E308",
        "-8Ei",
        "9.999999999999999999999E18",
    ];
    let (cluster, seeds) = (seeds(), seeds());
    let state: Vec<Object> = cluster
        .iter()
        .filter_map(|(k, v)| Object::from_value(*k, v, &mut Vec::new()).ok())
        .collect();
    for q in extremes {
        for (kind, seed) in &seeds {
            let mut v = seed.clone();
            replace_quantities(&mut v, q);
            let Ok(obj) = Object::from_value(*kind, &v, &mut Vec::new()) else {
                continue;
            };
            let original = Object::from_value(*kind, seed, &mut Vec::new()).expect("seed decodes");
            // Quotas, ranges and classes full of extremes too.
            let mut extreme_state = state.clone();
            extreme_state.push(obj.clone());
            exercise(&obj, &original, &extreme_state);
        }
    }
}

/// Replaces every string that parses as a quantity (and every integer) with `q`.
fn replace_quantities(v: &mut Value, q: &str) {
    match v {
        Value::Object(m) => m.values_mut().for_each(|x| replace_quantities(x, q)),
        Value::Array(a) => a.iter_mut().for_each(|x| replace_quantities(x, q)),
        Value::String(s) if parse_quantity(s).is_ok() => *s = q.to_string(),
        _ => {}
    }
}
