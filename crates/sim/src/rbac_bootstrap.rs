//! The default ClusterRoles and ClusterRoleBindings a kubeadm cluster starts with.

use k8s_openapi::api::rbac::v1::{PolicyRule, Subject};

use crate::cluster::{cluster_role, cluster_role_binding};
use crate::object::Object;
use crate::rng::Rng;

fn rule(groups: &[&str], resources: &[&str], verbs: &[&str]) -> PolicyRule {
    let v = |xs: &[&str]| Some(xs.iter().map(|s| s.to_string()).collect::<Vec<_>>());
    PolicyRule {
        api_groups: v(groups),
        resources: v(resources),
        verbs: verbs.iter().map(|s| s.to_string()).collect(),
        ..PolicyRule::default()
    }
}

const READ: &[&str] = &["get", "list", "watch"];
const WRITE: &[&str] = &["create", "delete", "deletecollection", "patch", "update"];

fn subject(kind: &str, name: &str) -> Subject {
    Subject {
        api_group: Some("rbac.authorization.k8s.io".into()),
        kind: kind.into(),
        name: name.into(),
        namespace: None,
    }
}

/// The bootstrap RBAC objects.
pub fn objects(rng: &mut Rng) -> Vec<Object> {
    let workloads = [
        "pods",
        "pods/log",
        "pods/exec",
        "pods/eviction",
        "services",
        "endpoints",
        "configmaps",
        "secrets",
        "persistentvolumeclaims",
        "serviceaccounts",
        "events",
    ];
    let apps = [
        "deployments",
        "deployments/scale",
        "deployments/rollback",
        "replicasets",
        "replicasets/scale",
        "statefulsets",
        "statefulsets/scale",
        "daemonsets",
    ];
    let all_verbs: Vec<&str> = READ.iter().chain(WRITE).copied().collect();
    let view = vec![
        rule(
            &[""],
            &[
                "pods",
                "pods/log",
                "pods/status",
                "services",
                "endpoints",
                "configmaps",
                "persistentvolumeclaims",
                "serviceaccounts",
                "events",
                "namespaces",
                "resourcequotas",
                "limitranges",
                "replicationcontrollers",
            ],
            READ,
        ),
        rule(
            &["apps"],
            &[
                "controllerrevisions",
                "daemonsets",
                "daemonsets/status",
                "deployments",
                "deployments/scale",
                "replicasets",
                "replicasets/scale",
                "statefulsets",
                "statefulsets/scale",
                "statefulsets/status",
            ],
            READ,
        ),
        rule(&["batch"], &["jobs", "cronjobs"], READ),
        rule(&["discovery.k8s.io"], &["endpointslices"], READ),
        rule(&["policy"], &["poddisruptionbudgets"], READ),
        rule(&["autoscaling"], &["horizontalpodautoscalers"], READ),
        rule(&["networking.k8s.io"], &["networkpolicies"], READ),
    ];
    let mut edit = view.clone();
    edit.push(rule(&[""], &workloads, &all_verbs));
    edit.push(rule(&["apps"], &apps, &all_verbs));
    edit.push(rule(&["batch"], &["jobs", "cronjobs"], &all_verbs));
    edit.push(rule(&["policy"], &["poddisruptionbudgets"], &all_verbs));
    edit.push(rule(
        &["networking.k8s.io"],
        &["networkpolicies"],
        &all_verbs,
    ));
    edit.push(rule(
        &["autoscaling"],
        &["horizontalpodautoscalers"],
        &all_verbs,
    ));
    let mut admin = edit.clone();
    admin.push(rule(
        &["rbac.authorization.k8s.io"],
        &["roles", "rolebindings"],
        &all_verbs,
    ));
    admin.push(rule(&[""], &["resourcequotas", "limitranges"], &all_verbs));
    let everything = vec![rule(&["*"], &["*"], &["*"])];
    let mut out: Vec<Object> = vec![
        cluster_role("cluster-admin", everything.clone(), rng).into(),
        cluster_role("admin", admin, rng).into(),
        cluster_role("edit", edit, rng).into(),
        cluster_role("view", view, rng).into(),
        cluster_role(
            "system:basic-user",
            vec![
                rule(
                    &["authorization.k8s.io"],
                    &["selfsubjectaccessreviews", "selfsubjectrulesreviews"],
                    &["create"],
                ),
                rule(
                    &["authentication.k8s.io"],
                    &["selfsubjectreviews"],
                    &["create"],
                ),
            ],
            rng,
        )
        .into(),
        cluster_role("system:kube-scheduler", everything.clone(), rng).into(),
        cluster_role("system:kube-controller-manager", everything.clone(), rng).into(),
        cluster_role(
            "system:node-proxier",
            vec![
                rule(&[""], &["services", "endpoints", "nodes"], READ),
                rule(&["discovery.k8s.io"], &["endpointslices"], READ),
                rule(
                    &["", "events.k8s.io"],
                    &["events"],
                    &["create", "patch", "update"],
                ),
            ],
            rng,
        )
        .into(),
    ];
    out.push(
        cluster_role_binding(
            "cluster-admin",
            "cluster-admin",
            vec![subject("Group", "system:masters")],
            rng,
        )
        .into(),
    );
    out.push(
        cluster_role_binding(
            "kubeadm:cluster-admins",
            "cluster-admin",
            vec![subject("Group", "kubeadm:cluster-admins")],
            rng,
        )
        .into(),
    );
    out.push(
        cluster_role_binding(
            "system:basic-user",
            "system:basic-user",
            vec![subject("Group", "system:authenticated")],
            rng,
        )
        .into(),
    );
    for (name, user) in [
        ("system:kube-scheduler", "system:kube-scheduler"),
        (
            "system:kube-controller-manager",
            "system:kube-controller-manager",
        ),
        ("system:node-proxier", "system:kube-proxy"),
    ] {
        out.push(cluster_role_binding(name, name, vec![subject("User", user)], rng).into());
    }
    out
}
