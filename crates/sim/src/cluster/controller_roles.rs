//! kube-apiserver's bootstrap roles for kube-controller-manager's controllers
//! (`bootstrappolicy/controller_policy.go`): a `system:controller:<name>` ClusterRole
//! for each controller kubeloop runs, bound to the `<name>` ServiceAccount in
//! kube-system, as kubeadm's `--use-service-account-credentials` relies on.

use k8s_openapi::api::rbac::v1::{PolicyRule, Subject};

use super::{cluster_role, cluster_role_binding};
use crate::object::Object;
use crate::rng::Rng;

fn rule(verbs: &[&str], groups: &[&str], resources: &[&str]) -> PolicyRule {
    let v = |xs: &[&str]| xs.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    PolicyRule {
        api_groups: Some(v(groups)),
        resources: Some(v(resources)),
        verbs: v(verbs),
        ..PolicyRule::default()
    }
}

/// `eventsRule`.
fn events() -> PolicyRule {
    rule(&["create", "update", "patch"], &["", "events.k8s.io"], &["events"])
}

/// The roles, in upstream's order.
fn roles() -> Vec<(&'static str, Vec<PolicyRule>)> {
    let apps = &["extensions", "apps"];
    vec![
        ("cronjob-controller", vec![
            rule(&["get", "list", "watch", "update"], &["batch"], &["cronjobs"]),
            rule(&["get", "list", "watch", "create", "update", "delete", "patch"], &["batch"], &["jobs"]),
            rule(&["update"], &["batch"], &["cronjobs/status"]),
            rule(&["update"], &["batch"], &["cronjobs/finalizers"]),
            rule(&["list", "watch", "delete"], &[""], &["pods"]),
            events(),
        ]),
        ("daemon-set-controller", vec![
            rule(&["get", "list", "watch"], apps, &["daemonsets"]),
            rule(&["update"], apps, &["daemonsets/status"]),
            rule(&["update"], apps, &["daemonsets/finalizers"]),
            rule(&["list", "watch"], &[""], &["nodes"]),
            rule(&["list", "watch", "create", "delete", "patch"], &[""], &["pods"]),
            rule(&["create"], &[""], &["pods/binding"]),
            rule(&["get", "list", "watch", "create", "delete", "update", "patch"], &["apps"], &["controllerrevisions"]),
            events(),
        ]),
        ("deployment-controller", vec![
            rule(&["get", "list", "watch", "update"], apps, &["deployments"]),
            rule(&["update"], apps, &["deployments/status"]),
            rule(&["update"], apps, &["deployments/finalizers"]),
            rule(&["get", "list", "watch", "create", "update", "patch", "delete"], &["apps", "extensions"], &["replicasets"]),
            rule(&["get", "list", "watch", "update"], &[""], &["pods"]),
            events(),
        ]),
        ("disruption-controller", vec![
            rule(&["get", "list", "watch"], apps, &["deployments"]),
            rule(&["get", "list", "watch"], &["apps", "extensions"], &["replicasets"]),
            rule(&["get", "list", "watch"], &[""], &["replicationcontrollers"]),
            rule(&["get", "list", "watch"], &["policy"], &["poddisruptionbudgets"]),
            rule(&["get", "list", "watch"], &["apps"], &["statefulsets"]),
            rule(&["update"], &["policy"], &["poddisruptionbudgets/status"]),
            rule(&["patch", "update"], &[""], &["pods/status"]),
            rule(&["get"], &["*"], &["*/scale"]),
            events(),
        ]),
        ("endpoint-controller", vec![
            rule(&["get", "list", "watch"], &[""], &["services", "pods"]),
            rule(&["get", "list", "watch", "create", "update", "delete"], &[""], &["endpoints"]),
            rule(&["create"], &[""], &["endpoints/restricted"]),
            events(),
        ]),
        ("endpointslice-controller", vec![
            rule(&["get", "list", "watch"], &[""], &["services", "pods", "nodes"]),
            rule(&["update"], &[""], &["services/finalizers"]),
            rule(&["get", "list", "watch", "create", "update", "delete"], &["discovery.k8s.io"], &["endpointslices"]),
            events(),
        ]),
        ("generic-garbage-collector", vec![
            rule(&["get", "list", "watch", "patch", "update", "delete"], &["*"], &["*"]),
            events(),
        ]),
        ("horizontal-pod-autoscaler", vec![
            rule(&["get", "list", "watch"], &["autoscaling"], &["horizontalpodautoscalers"]),
            rule(&["update"], &["autoscaling"], &["horizontalpodautoscalers/status"]),
            rule(&["get", "update"], &["*"], &["*/scale"]),
            rule(&["list", "watch"], &[""], &["pods"]),
            rule(&["list", "watch"], &["metrics.k8s.io"], &["pods"]),
            rule(&["get", "list", "watch"], &["custom.metrics.k8s.io"], &["*"]),
            rule(&["get", "list", "watch"], &["external.metrics.k8s.io"], &["*"]),
            events(),
        ]),
        ("job-controller", vec![
            rule(&["get", "list", "watch", "update", "patch"], &["batch"], &["jobs"]),
            rule(&["update"], &["batch"], &["jobs/status"]),
            rule(&["update"], &["batch"], &["jobs/finalizers"]),
            rule(&["list", "watch", "create", "delete", "patch"], &[""], &["pods"]),
            events(),
        ]),
        ("namespace-controller", vec![
            rule(&["get", "list", "watch", "delete"], &[""], &["namespaces"]),
            rule(&["update"], &[""], &["namespaces/finalize", "namespaces/status"]),
            rule(&["get", "list", "watch", "delete", "deletecollection"], &["*"], &["*"]),
        ]),
        ("node-controller", vec![
            rule(&["get", "list", "watch", "update", "delete", "patch"], &[""], &["nodes"]),
            rule(&["patch", "update"], &[""], &["nodes/status"]),
            rule(&["patch", "update"], &[""], &["pods/status"]),
            rule(&["list", "watch", "get", "delete"], &[""], &["pods"]),
            events(),
        ]),
        ("persistent-volume-binder", vec![
            rule(&["get", "list", "watch", "update", "create", "delete"], &[""], &["persistentvolumes"]),
            rule(&["update"], &[""], &["persistentvolumes/status"]),
            rule(&["get", "list", "watch", "update"], &[""], &["persistentvolumeclaims"]),
            rule(&["update"], &[""], &["persistentvolumeclaims/status"]),
            rule(&["list", "watch", "get", "create", "delete"], &[""], &["pods"]),
            rule(&["get", "list", "watch"], &["storage.k8s.io"], &["storageclasses"]),
            rule(&["list", "watch"], &[""], &["nodes"]),
            events(),
            rule(&["watch"], &[""], &["events"]),
            rule(&["get"], &[""], &["services"]),
        ]),
        ("replicaset-controller", vec![
            rule(&["get", "list", "watch", "update"], &["apps", "extensions"], &["replicasets"]),
            rule(&["update"], &["apps", "extensions"], &["replicasets/status"]),
            rule(&["update"], &["apps", "extensions"], &["replicasets/finalizers"]),
            rule(&["list", "watch", "patch", "create", "delete"], &[""], &["pods"]),
            events(),
        ]),
        ("resourcequota-controller", vec![
            rule(&["list", "watch"], &["*"], &["*"]),
            rule(&["update"], &[""], &["resourcequotas/status"]),
            events(),
        ]),
        ("service-account-controller", vec![
            rule(&["create"], &[""], &["serviceaccounts"]),
            events(),
        ]),
        ("statefulset-controller", vec![
            rule(&["list", "watch"], &[""], &["pods"]),
            rule(&["get", "list", "watch"], &["apps"], &["statefulsets"]),
            rule(&["update"], &["apps"], &["statefulsets/status"]),
            rule(&["update"], &["apps"], &["statefulsets/finalizers"]),
            rule(&["get", "create", "delete", "update", "patch"], &[""], &["pods"]),
            rule(&["get", "create", "delete", "update", "patch", "list", "watch"], &["apps"], &["controllerrevisions"]),
            rule(&["get", "create", "list", "watch"], &[""], &["persistentvolumeclaims"]),
            rule(&["update", "delete"], &[""], &["persistentvolumeclaims"]),
            rule(&["update"], &[""], &["pods/finalizers"]),
            events(),
        ]),
        ("ttl-after-finished-controller", vec![
            rule(&["get", "list", "watch", "delete"], &["batch"], &["jobs"]),
            events(),
        ]),
        ("root-ca-cert-publisher", vec![
            rule(&["create", "update"], &[""], &["configmaps"]),
            events(),
        ]),
    ]
}

/// Each controller's ClusterRole and its binding to the controller's ServiceAccount.
pub fn objects(rng: &mut Rng) -> Vec<Object> {
    let mut out = Vec::new();
    for (name, rules) in roles() {
        let full = format!("system:controller:{name}");
        out.push(cluster_role(&full, rules, rng).into());
        let sa = Subject {
            kind: "ServiceAccount".into(),
            name: name.into(),
            namespace: Some("kube-system".into()),
            api_group: None,
        };
        out.push(cluster_role_binding(&full, &full, vec![sa], rng).into());
    }
    out
}
