//! kube-apiserver's bootstrap roles for kube-controller-manager's controllers
//! (`bootstrappolicy/controller_policy.go`): a `system:controller:<name>` ClusterRole
//! for each controller kubeloop runs, bound to the `<name>` ServiceAccount in
//! kube-system, as kubeadm's `--use-service-account-credentials` relies on.

use k8s_openapi::api::rbac::v1::{PolicyRule, Subject};

use super::{cluster_role, cluster_role_binding};
use crate::object::Object;
use crate::rng::Rng;

fn rule((verbs, groups, resources): &Rule) -> PolicyRule {
    let v = |xs: &[&str]| xs.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    PolicyRule {
        api_groups: Some(v(groups)),
        resources: Some(v(resources)),
        verbs: v(verbs),
        ..PolicyRule::default()
    }
}

/// A rule: verbs, API groups, resources.
type Rule = (
    &'static [&'static str],
    &'static [&'static str],
    &'static [&'static str],
);

/// `eventsRule`.
const EVENTS: Rule = (
    &["create", "update", "patch"],
    &["", "events.k8s.io"],
    &["events"],
);

/// The roles, in upstream's order (`controller_policy.go`).
const ROLES: &[(&str, &[Rule])] = &[
    (
        "cronjob-controller",
        &[
            (
                &["get", "list", "watch", "update"],
                &["batch"],
                &["cronjobs"],
            ),
            (
                &[
                    "get", "list", "watch", "create", "update", "delete", "patch",
                ],
                &["batch"],
                &["jobs"],
            ),
            (&["update"], &["batch"], &["cronjobs/status"]),
            (&["update"], &["batch"], &["cronjobs/finalizers"]),
            (&["list", "watch", "delete"], &[""], &["pods"]),
            EVENTS,
        ],
    ),
    (
        "daemon-set-controller",
        &[
            (
                &["get", "list", "watch"],
                &["extensions", "apps"],
                &["daemonsets"],
            ),
            (&["update"], &["extensions", "apps"], &["daemonsets/status"]),
            (
                &["update"],
                &["extensions", "apps"],
                &["daemonsets/finalizers"],
            ),
            (&["list", "watch"], &[""], &["nodes"]),
            (
                &["list", "watch", "create", "delete", "patch"],
                &[""],
                &["pods"],
            ),
            (&["create"], &[""], &["pods/binding"]),
            (
                &[
                    "get", "list", "watch", "create", "delete", "update", "patch",
                ],
                &["apps"],
                &["controllerrevisions"],
            ),
            EVENTS,
        ],
    ),
    (
        "deployment-controller",
        &[
            (
                &["get", "list", "watch", "update"],
                &["extensions", "apps"],
                &["deployments"],
            ),
            (
                &["update"],
                &["extensions", "apps"],
                &["deployments/status"],
            ),
            (
                &["update"],
                &["extensions", "apps"],
                &["deployments/finalizers"],
            ),
            (
                &[
                    "get", "list", "watch", "create", "update", "patch", "delete",
                ],
                &["apps", "extensions"],
                &["replicasets"],
            ),
            (&["get", "list", "watch", "update"], &[""], &["pods"]),
            EVENTS,
        ],
    ),
    (
        "disruption-controller",
        &[
            (
                &["get", "list", "watch"],
                &["extensions", "apps"],
                &["deployments"],
            ),
            (
                &["get", "list", "watch"],
                &["apps", "extensions"],
                &["replicasets"],
            ),
            (
                &["get", "list", "watch"],
                &[""],
                &["replicationcontrollers"],
            ),
            (
                &["get", "list", "watch"],
                &["policy"],
                &["poddisruptionbudgets"],
            ),
            (&["get", "list", "watch"], &["apps"], &["statefulsets"]),
            (&["update"], &["policy"], &["poddisruptionbudgets/status"]),
            (&["patch", "update"], &[""], &["pods/status"]),
            (&["get"], &["*"], &["*/scale"]),
            EVENTS,
        ],
    ),
    (
        "endpoint-controller",
        &[
            (&["get", "list", "watch"], &[""], &["services", "pods"]),
            (
                &["get", "list", "watch", "create", "update", "delete"],
                &[""],
                &["endpoints"],
            ),
            (&["create"], &[""], &["endpoints/restricted"]),
            EVENTS,
        ],
    ),
    (
        "endpointslice-controller",
        &[
            (
                &["get", "list", "watch"],
                &[""],
                &["services", "pods", "nodes"],
            ),
            (&["update"], &[""], &["services/finalizers"]),
            (
                &["get", "list", "watch", "create", "update", "delete"],
                &["discovery.k8s.io"],
                &["endpointslices"],
            ),
            EVENTS,
        ],
    ),
    (
        "generic-garbage-collector",
        &[
            (
                &["get", "list", "watch", "patch", "update", "delete"],
                &["*"],
                &["*"],
            ),
            EVENTS,
        ],
    ),
    (
        "horizontal-pod-autoscaler",
        &[
            (
                &["get", "list", "watch"],
                &["autoscaling"],
                &["horizontalpodautoscalers"],
            ),
            (
                &["update"],
                &["autoscaling"],
                &["horizontalpodautoscalers/status"],
            ),
            (&["get", "update"], &["*"], &["*/scale"]),
            (&["list", "watch"], &[""], &["pods"]),
            (&["list", "watch"], &["metrics.k8s.io"], &["pods"]),
            (
                &["get", "list", "watch"],
                &["custom.metrics.k8s.io"],
                &["*"],
            ),
            (
                &["get", "list", "watch"],
                &["external.metrics.k8s.io"],
                &["*"],
            ),
            EVENTS,
        ],
    ),
    (
        "job-controller",
        &[
            (
                &["get", "list", "watch", "update", "patch"],
                &["batch"],
                &["jobs"],
            ),
            (&["update"], &["batch"], &["jobs/status"]),
            (&["update"], &["batch"], &["jobs/finalizers"]),
            (
                &["list", "watch", "create", "delete", "patch"],
                &[""],
                &["pods"],
            ),
            EVENTS,
        ],
    ),
    (
        "namespace-controller",
        &[
            (&["get", "list", "watch", "delete"], &[""], &["namespaces"]),
            (
                &["update"],
                &[""],
                &["namespaces/finalize", "namespaces/status"],
            ),
            (
                &["get", "list", "watch", "delete", "deletecollection"],
                &["*"],
                &["*"],
            ),
        ],
    ),
    (
        "node-controller",
        &[
            (
                &["get", "list", "watch", "update", "delete", "patch"],
                &[""],
                &["nodes"],
            ),
            (&["patch", "update"], &[""], &["nodes/status"]),
            (&["patch", "update"], &[""], &["pods/status"]),
            (&["list", "watch", "get", "delete"], &[""], &["pods"]),
            EVENTS,
        ],
    ),
    (
        "persistent-volume-binder",
        &[
            (
                &["get", "list", "watch", "update", "create", "delete"],
                &[""],
                &["persistentvolumes"],
            ),
            (&["update"], &[""], &["persistentvolumes/status"]),
            (
                &["get", "list", "watch", "update"],
                &[""],
                &["persistentvolumeclaims"],
            ),
            (&["update"], &[""], &["persistentvolumeclaims/status"]),
            (
                &["list", "watch", "get", "create", "delete"],
                &[""],
                &["pods"],
            ),
            (
                &["get", "list", "watch"],
                &["storage.k8s.io"],
                &["storageclasses"],
            ),
            (&["list", "watch"], &[""], &["nodes"]),
            EVENTS,
            (&["watch"], &[""], &["events"]),
            (&["get"], &[""], &["services"]),
        ],
    ),
    (
        "replicaset-controller",
        &[
            (
                &["get", "list", "watch", "update"],
                &["apps", "extensions"],
                &["replicasets"],
            ),
            (
                &["update"],
                &["apps", "extensions"],
                &["replicasets/status"],
            ),
            (
                &["update"],
                &["apps", "extensions"],
                &["replicasets/finalizers"],
            ),
            (
                &["list", "watch", "patch", "create", "delete"],
                &[""],
                &["pods"],
            ),
            EVENTS,
        ],
    ),
    (
        "resourcequota-controller",
        &[
            (&["list", "watch"], &["*"], &["*"]),
            (&["update"], &[""], &["resourcequotas/status"]),
            EVENTS,
        ],
    ),
    (
        "service-account-controller",
        &[(&["create"], &[""], &["serviceaccounts"]), EVENTS],
    ),
    (
        "statefulset-controller",
        &[
            (&["list", "watch"], &[""], &["pods"]),
            (&["get", "list", "watch"], &["apps"], &["statefulsets"]),
            (&["update"], &["apps"], &["statefulsets/status"]),
            (&["update"], &["apps"], &["statefulsets/finalizers"]),
            (
                &["get", "create", "delete", "update", "patch"],
                &[""],
                &["pods"],
            ),
            (
                &[
                    "get", "create", "delete", "update", "patch", "list", "watch",
                ],
                &["apps"],
                &["controllerrevisions"],
            ),
            (
                &["get", "create", "list", "watch"],
                &[""],
                &["persistentvolumeclaims"],
            ),
            (&["update", "delete"], &[""], &["persistentvolumeclaims"]),
            (&["update"], &[""], &["pods/finalizers"]),
            EVENTS,
        ],
    ),
    (
        "ttl-after-finished-controller",
        &[
            (&["get", "list", "watch", "delete"], &["batch"], &["jobs"]),
            EVENTS,
        ],
    ),
    (
        "root-ca-cert-publisher",
        &[(&["create", "update"], &[""], &["configmaps"]), EVENTS],
    ),
];

/// Each controller's ClusterRole and its binding to the controller's ServiceAccount.
pub fn objects(rng: &mut Rng) -> Vec<Object> {
    let mut out = Vec::new();
    for (name, rules) in ROLES {
        let full = format!("system:controller:{name}");
        out.push(cluster_role(&full, rules.iter().map(rule).collect(), rng).into());
        let sa = Subject {
            kind: "ServiceAccount".into(),
            name: name.to_string(),
            namespace: Some("kube-system".into()),
            api_group: None,
        };
        out.push(cluster_role_binding(&full, &full, vec![sa], rng).into());
    }
    out
}
