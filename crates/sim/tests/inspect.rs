//! The object inspector and the etcd browser as a learner reads them after applying the
//! nginx Deployment: every object by kind, YAML exactly as `kubectl get -o yaml` prints
//! it, Events as `kubectl describe` lists them, the owner tree, the etcd key's revisions
//! with their diff, the request that wrote a revision with its spans, and the keyspace and
//! watch stream.

mod common;

use common::Term;
use kubeloop_sim::object::{Kind, ObjectKey};
use kubeloop_sim::view::etcd::{self, DiffLine};
use kubeloop_sim::view::objects::{self, display_name};

fn applied() -> Term {
    let mut t = Term::new();
    t.ok("kubectl apply -f nginx.yaml");
    t.settle(30);
    t
}

fn deployment() -> ObjectKey {
    ObjectKey::new(Kind::Deployment, "default", "nginx")
}

fn stored(t: &Term, key: &ObjectKey) -> std::sync::Arc<kubeloop_sim::object::Object> {
    objects::stored_object(&t.w, key).expect("stored")
}

#[test]
fn the_browser_lists_every_stored_object_by_kind_and_filters_by_name() {
    let t = applied();
    let all = objects::object_index(&t.w, "", 100);
    let kinds: Vec<&str> = all.iter().map(|g| g.kind.info().kind).collect();
    for k in [
        "Deployment",
        "ReplicaSet",
        "Pod",
        "Namespace",
        "Node",
        "Service",
    ] {
        assert!(kinds.contains(&k), "{kinds:?}");
    }
    let mut sorted = kinds.clone();
    sorted.sort();
    assert_eq!(kinds, sorted, "kinds in name order");
    let pods = all.iter().find(|g| g.kind == Kind::Pod).unwrap();
    assert!(pods.matching >= 3, "{pods:?}");
    let nginx = objects::object_index(&t.w, "NGINX", 100);
    let deploys = nginx.iter().find(|g| g.kind == Kind::Deployment).unwrap();
    assert_eq!(deploys.items, [deployment()]);
    let user_pods = nginx.iter().find(|g| g.kind == Kind::Pod).unwrap();
    assert_eq!(user_pods.matching, 3);
    assert!(user_pods
        .items
        .iter()
        .all(|k| display_name(k).starts_with("default/nginx-")));
    // A cap lists fewer but still counts them all.
    let capped = objects::object_index(&t.w, "nginx", 1);
    let pods = capped.iter().find(|g| g.kind == Kind::Pod).unwrap();
    assert_eq!((pods.items.len(), pods.matching), (1, 3));
}

#[test]
fn the_yaml_is_what_kubectl_get_o_yaml_prints() {
    let mut t = applied();
    let d = stored(&t, &deployment());
    let printed = t.ok("kubectl get deployment nginx -o yaml");
    assert_eq!(objects::object_yaml(&d), printed);
    assert!(printed.starts_with("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n"));
}

#[test]
fn a_secret_s_data_stays_base64_as_kubectl_shows_it() {
    let mut t = applied();
    t.ok("kubectl create secret generic db --from-literal=password=s3cret");
    let s = stored(&t, &ObjectKey::new(Kind::Secret, "default", "db"));
    let yaml = objects::object_yaml(&s);
    assert!(yaml.contains("  password: czNjcmV0\n"), "{yaml}");
    assert_eq!(yaml, t.ok("kubectl get secret db -o yaml"));
}

#[test]
fn the_events_are_the_ones_kubectl_describe_lists() {
    let mut t = applied();
    let d = stored(&t, &deployment());
    let rows = objects::object_events(&t.w, &d);
    assert_eq!(rows.len(), 1, "{rows:?}");
    let r = &rows[0];
    assert_eq!(
        (r.type_.as_str(), r.reason.as_str(), r.from.as_str()),
        ("Normal", "ScalingReplicaSet", "deployment-controller")
    );
    assert!(
        r.message.starts_with("Scaled up replica set nginx-"),
        "{r:?}"
    );
    let describe = t.ok("kubectl describe deployment nginx");
    let line = describe
        .lines()
        .find(|l| l.contains("ScalingReplicaSet"))
        .unwrap();
    let cols: Vec<&str> = line.split_whitespace().collect();
    assert_eq!(
        &cols[..4],
        [
            "Normal",
            "ScalingReplicaSet",
            &r.age,
            "deployment-controller"
        ]
    );
    assert!(line.ends_with(&r.message));
}

#[test]
fn the_owner_tree_walks_from_the_deployment_to_its_pods_and_back() {
    let t = applied();
    let d = stored(&t, &deployment());
    let tree = objects::owner_tree(&t.w, &d, 100);
    assert!(tree.owners.is_empty());
    assert_eq!(tree.dependents.len(), 1, "{tree:?}");
    let rs = &tree.dependents[0];
    assert_eq!(rs.key.kind, Kind::ReplicaSet);
    assert_eq!(rs.via, "ownerReference");
    assert_eq!(rs.children.len(), 3);
    assert!(rs.children.iter().all(|p| p.key.kind == Kind::Pod));
    let pod = stored(&t, &rs.children[0].key);
    let up = objects::owner_tree(&t.w, &pod, 100);
    assert_eq!(up.owners, [rs.key.clone(), deployment()]);
    assert!(up.dependents.is_empty());
    let capped = objects::owner_tree(&t.w, &d, 2);
    assert_eq!(capped.hidden, 2, "{capped:?}");
}

#[test]
fn a_service_owns_its_endpointslices_by_the_service_name_label() {
    let mut t = applied();
    t.ok("kubectl expose deployment nginx --port=80");
    t.settle(5);
    let svc = stored(&t, &ObjectKey::new(Kind::Service, "default", "nginx"));
    let tree = objects::owner_tree(&t.w, &svc, 100);
    let slices: Vec<_> = tree
        .dependents
        .iter()
        .filter(|n| n.key.kind == Kind::EndpointSlice)
        .collect();
    assert_eq!(slices.len(), 1, "{tree:?}");
    assert!(slices[0].key.name.starts_with("nginx-"));
}

#[test]
fn the_etcd_key_holds_each_revision_and_the_diff_between_two() {
    let mut t = applied();
    t.ok("kubectl scale deployment nginx --replicas=5");
    t.settle(10);
    let h = etcd::key_history(&t.w, &deployment(), 50);
    assert_eq!(h.key, "/registry/deployments/default/nginx");
    assert!(h.revisions.len() >= 3, "{:?}", h.revisions.len());
    assert_eq!(h.revisions[0].version, 1);
    assert_eq!(h.revisions[0].revision, h.create_revision);
    let last = h.revisions.last().unwrap();
    assert_eq!((last.revision, last.version), (h.mod_revision, h.version));
    assert!(h
        .revisions
        .windows(2)
        .all(|w| w[0].revision < w[1].revision));
    // The scale is one revision: its diff changes spec.replicas from 3 to 5.
    let scaled = h
        .revisions
        .windows(2)
        .map(|w| etcd::yaml_diff(&w[0].yaml, &w[1].yaml))
        .find(|d| d.contains(&DiffLine::Added("  replicas: 5".into())))
        .expect("a revision sets replicas: 5");
    assert!(
        scaled.contains(&DiffLine::Removed("  replicas: 3".into())),
        "{scaled:?}"
    );
    assert!(matches!(scaled[0], DiffLine::Hunk(_)));
    let capped = etcd::key_history(&t.w, &deployment(), 2);
    assert_eq!(capped.revisions.len(), 2);
    assert_eq!(capped.hidden, h.revisions.len() - 2);
    assert_eq!(capped.revisions[1], *last);
}

#[test]
fn the_request_that_wrote_a_revision_carries_its_pipeline_spans() {
    let t = applied();
    let h = etcd::key_history(&t.w, &deployment(), 50);
    let created = etcd::writer_of(&t.w, h.create_revision).expect("in the audit log");
    assert_eq!(created.verb, "create");
    assert_eq!(created.path, "/apis/apps/v1/namespaces/default/deployments");
    assert_eq!(created.client, "kubectl");
    assert_eq!(created.code, 201);
    let stages: Vec<&str> = created.spans.iter().map(|s| s.stage).collect();
    assert_eq!(
        &stages[..5],
        [
            "authentication",
            "authorization",
            "admission",
            "validation",
            "etcd"
        ],
        "{stages:?}"
    );
    // The last write (the controller's status update) is the deployment controller's.
    let status = etcd::writer_of(&t.w, h.mod_revision).expect("in the audit log");
    assert_eq!(status.client, "kube-controller-manager");
    assert!(
        status.path.ends_with("/deployments/nginx/status"),
        "{status:?}"
    );
}

#[test]
fn the_etcd_browser_counts_keys_by_prefix_and_streams_watch_events_newest_first() {
    let t = applied();
    let ks = etcd::keyspace(&t.w, "/registry/pods/default/", 2);
    let pods = ks
        .prefixes
        .iter()
        .find(|p| p.prefix == "/registry/pods/")
        .unwrap();
    assert!(pods.count >= 3);
    assert!(ks
        .prefixes
        .iter()
        .any(|p| p.prefix == "/registry/deployments/"));
    assert_eq!((ks.keys.len(), ks.matching), (2, 3));
    let k = &ks.keys[0];
    assert!(k.key.starts_with("/registry/pods/default/nginx-"));
    assert!(k.create_revision <= k.mod_revision && k.version >= 1);
    assert_eq!(k.object.etcd_key(), k.key);
    let (rows, total) = etcd::watch_stream(&t.w, 10);
    assert_eq!(rows.len(), 10);
    assert!(total > 10);
    assert!(rows.windows(2).all(|w| w[0].revision > w[1].revision));
    assert_eq!(rows[0].revision, ks.revision);
    let added = etcd::watch_stream(&t.w, total)
        .0
        .into_iter()
        .find(|r| r.key == "/registry/deployments/default/nginx" && r.kind == "ADDED");
    assert!(added.is_some());
}
