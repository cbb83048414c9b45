//! The field order of the Go structs kubectl's generators build, for `-o json` of a
//! client-side object (`json.MarshalIndent` of a typed object writes fields in struct
//! order; `-o yaml` sorts them, and so do objects read back from the server).

use serde_json::Value;

use crate::kubectl::output::{to_json_ordered, KeyOrder};

/// Field orders keyed by the key the struct sits under. Several structs share a key
/// (`spec`, `ports`); their orders are merged where the generators never produce
/// conflicting fields together.
const ORDERS: &[(&[&str], &[&str])] = &[
    (
        &[""],
        &[
            "kind",
            "apiVersion",
            "metadata",
            "immutable",
            "data",
            "binaryData",
            "stringData",
            "type",
            "value",
            "globalDefault",
            "description",
            "preemptionPolicy",
            "rules",
            "subjects",
            "roleRef",
            "spec",
            "status",
        ],
    ),
    (
        &["metadata"],
        &[
            "name",
            "generateName",
            "namespace",
            "uid",
            "resourceVersion",
            "generation",
            "creationTimestamp",
            "labels",
            "annotations",
            "ownerReferences",
            "finalizers",
        ],
    ),
    (
        &["spec"],
        &[
            "replicas",
            "parallelism",
            "completions",
            "activeDeadlineSeconds",
            "backoffLimit",
            "schedule",
            "timeZone",
            "startingDeadlineSeconds",
            "concurrencyPolicy",
            "suspend",
            "jobTemplate",
            "successfulJobsHistoryLimit",
            "failedJobsHistoryLimit",
            "hard",
            "scopes",
            "scopeSelector",
            "ingressClassName",
            "defaultBackend",
            "tls",
            "ports",
            "selector",
            "template",
            "strategy",
            "clusterIP",
            "clusterIPs",
            "type",
            "externalIPs",
            "sessionAffinity",
            "externalName",
            "volumes",
            "initContainers",
            "containers",
            "restartPolicy",
            "terminationGracePeriodSeconds",
            "dnsPolicy",
            "nodeSelector",
            "serviceAccountName",
            "finalizers",
        ],
    ),
    (
        &["containers", "initContainers"],
        &[
            "name",
            "image",
            "command",
            "args",
            "workingDir",
            "ports",
            "envFrom",
            "env",
            "resources",
            "volumeMounts",
            "livenessProbe",
            "readinessProbe",
            "startupProbe",
            "imagePullPolicy",
            "securityContext",
            "stdin",
            "stdinOnce",
            "tty",
        ],
    ),
    (
        &["ports"],
        &[
            "name",
            "hostPort",
            "containerPort",
            "protocol",
            "appProtocol",
            "port",
            "targetPort",
            "nodePort",
        ],
    ),
    (&["selector"], &["matchLabels", "matchExpressions"]),
    (&["template", "jobTemplate"], &["metadata", "spec"]),
    (&["subjects"], &["kind", "apiGroup", "name", "namespace"]),
    (&["roleRef"], &["apiGroup", "kind", "name"]),
    (
        &["rules"],
        &[
            "verbs",
            "apiGroups",
            "resources",
            "resourceNames",
            "nonResourceURLs",
            "host",
            "http",
        ],
    ),
    (&["env"], &["name", "value", "valueFrom"]),
    (
        &["ownerReferences"],
        &[
            "apiVersion",
            "kind",
            "name",
            "uid",
            "controller",
            "blockOwnerDeletion",
        ],
    ),
    (&["paths"], &["path", "pathType", "backend"]),
    (&["backend", "defaultBackend"], &["service", "resource"]),
    (&["service"], &["name", "port"]),
    (&["port"], &["name", "number"]),
    (&["tls"], &["hosts", "secretName"]),
    (&["resources"], &["limits", "requests"]),
];

struct Typed;

impl KeyOrder for Typed {
    fn sort(&self, parent: &str, keys: &mut Vec<&String>) {
        let order = ORDERS
            .iter()
            .find(|(parents, _)| parents.contains(&parent))
            .map_or(&[][..], |(_, o)| *o);
        // Maps (labels, data, hard…) and unknown fields sort bytewise after known fields.
        keys.sort_by_key(|k| {
            (
                order.iter().position(|o| o == k).unwrap_or(order.len()),
                (*k).clone(),
            )
        });
    }
}

/// `-o json` of a generated object, fields in struct order.
pub fn to_json(value: &Value) -> String {
    to_json_ordered(value, &Typed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn typed_json_keeps_struct_order_and_sorts_maps() {
        let v = json!({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"labels": {"run": "x", "a": "b"}, "name": "x"},
            "spec": {"restartPolicy": "Never", "dnsPolicy": "ClusterFirst",
                     "containers": [{"resources": {}, "image": "busybox", "name": "x"}]},
            "status": {}
        });
        let expected = "{\n    \"kind\": \"Pod\",\n    \"apiVersion\": \"v1\",\n    \"metadata\": {\n        \"name\": \"x\",\n        \"labels\": {\n            \"a\": \"b\",\n            \"run\": \"x\"\n        }\n    },\n    \"spec\": {\n        \"containers\": [\n            {\n                \"name\": \"x\",\n                \"image\": \"busybox\",\n                \"resources\": {}\n            }\n        ],\n        \"restartPolicy\": \"Never\",\n        \"dnsPolicy\": \"ClusterFirst\"\n    },\n    \"status\": {}\n}\n";
        assert_eq!(to_json(&v), expected);
    }
}
