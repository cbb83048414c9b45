//! Issue 13: API details probing found wrong — each asserted as a user sees it.

mod common;
use common::Term;

/// `kubectl patch` that renames the object is refused: the name must match the URL.
#[test]
fn a_patch_that_renames_the_object_is_refused() {
    let mut t = Term::new();
    t.ok("kubectl create configmap c --from-literal=a=1");
    assert_eq!(
        t.err(r#"kubectl patch configmap c --type merge -p '{"metadata":{"name":"d"}}'"#),
        "Error from server (BadRequest): the name of the object (d) does not match the name on the URL (c)\n"
    );
    assert_eq!(t.ok("kubectl get configmap c -o name"), "configmap/c\n");
}

/// `kubectl delete --all -A` deletes in every namespace, not only the current one.
#[test]
fn delete_all_in_all_namespaces() {
    let mut t = Term::new();
    t.ok("kubectl create namespace other");
    t.ok("kubectl create configmap here -n default");
    t.ok("kubectl create configmap there -n other");
    let out = t.ok("kubectl delete configmap --all -A");
    assert!(out.contains("configmap \"here\" deleted"), "{out}");
    assert!(out.contains("configmap \"there\" deleted"), "{out}");
    assert_eq!(
        t.err("kubectl get configmap there -n other"),
        "Error from server (NotFound): configmaps \"there\" not found\n"
    );
}

const OWNED_CM: &str = "apiVersion: v1
kind: ConfigMap
metadata:
  name: owned
  ownerReferences:
  - apiVersion: apps/v1
    kind: Deployment
    name: nginx
    uid: UID
    blockOwnerDeletion: true
";

fn uid_of(t: &mut Term, what: &str) -> String {
    t.ok(&format!("kubectl get {what} -o jsonpath={{.metadata.uid}}"))
}

/// The garbage collector covers every kind: a ConfigMap owned by a deleted Deployment
/// is collected (it used to stay forever).
#[test]
fn a_configmap_owned_by_a_deleted_deployment_is_collected() {
    let mut t = Term::new();
    t.ok("kubectl apply -f nginx.yaml");
    let uid = uid_of(&mut t, "deployment nginx");
    t.file("cm.yaml", &OWNED_CM.replace("UID", &uid));
    t.ok("kubectl apply -f cm.yaml");
    t.settle(5);
    t.ok("kubectl delete deployment nginx");
    t.settle(40);
    assert_eq!(
        t.err("kubectl get configmap owned"),
        "Error from server (NotFound): configmaps \"owned\" not found\n"
    );
}

/// A status patch with a field PodStatus does not have is refused with upstream's strict
/// decoding error (the apiserver's status-only path leaves such patches to the general
/// one); a valid one is applied, keeping what it does not name.
#[test]
fn a_status_patch_is_decoded_strictly_and_merged_into_the_status() {
    let mut t = Term::new();
    t.ok("kubectl run p --image=nginx:1.27");
    t.settle(10);
    assert_eq!(
        t.err(r#"kubectl patch pod p --subresource=status --type=merge -p '{"status":{"colour":"green"}}'"#),
        "Error from server (BadRequest): Pod in version \"v1\" cannot be handled as a Pod: strict decoding error: unknown field \"status.colour\"\n"
    );
    let ip = t.ok("kubectl get pod p -o jsonpath={.status.podIP}");
    t.ok(r#"kubectl patch pod p --subresource=status --type=merge -p '{"status":{"message":"hello"}}'"#);
    assert_eq!(
        t.ok("kubectl get pod p -o jsonpath={.status.message}"),
        "hello"
    );
    assert_eq!(t.ok("kubectl get pod p -o jsonpath={.status.podIP}"), ip);
}

/// A Role (a kind the collector lists rather than watches) owned by a deleted ConfigMap
/// is collected within a list period, and one left with no owner is not touched.
#[test]
fn a_role_owned_by_a_deleted_configmap_is_collected() {
    let mut t = Term::new();
    t.ok("kubectl create configmap owner");
    let uid = uid_of(&mut t, "configmap owner");
    t.file(
        "role.yaml",
        &format!(
            "apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: owned
  ownerReferences:
  - apiVersion: v1
    kind: ConfigMap
    name: owner
    uid: {uid}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: unowned
"
        ),
    );
    t.ok("kubectl apply -f role.yaml");
    // Past the first lists: the owner is there, the Role stays.
    t.settle(40);
    assert_eq!(
        t.ok("kubectl get role owned -o name"),
        "role.rbac.authorization.k8s.io/owned\n"
    );
    t.ok("kubectl delete configmap owner");
    t.settle(15);
    assert_eq!(
        t.err("kubectl get role owned"),
        "Error from server (NotFound): roles.rbac.authorization.k8s.io \"owned\" not found\n"
    );
    assert_eq!(
        t.ok("kubectl get role unowned -o name"),
        "role.rbac.authorization.k8s.io/unowned\n"
    );
}

/// An object naming an owner that never existed is collected at once (upstream's
/// collector looks the owner up and deletes the dependent of a missing one).
#[test]
fn a_dependent_of_an_owner_that_never_existed_is_collected() {
    let mut t = Term::new();
    t.file(
        "cm.yaml",
        &OWNED_CM.replace("UID", "00000000-0000-0000-0000-000000000000"),
    );
    t.ok("kubectl apply -f cm.yaml");
    t.settle(2);
    assert_eq!(
        t.err("kubectl get configmap owned"),
        "Error from server (NotFound): configmaps \"owned\" not found\n"
    );
}

/// Foreground deletion of an owner of a kind the informers do not hold finishes.
#[test]
fn foreground_deletion_of_a_configmap_owner_finishes() {
    let mut t = Term::new();
    t.ok("kubectl create configmap owner");
    let uid = uid_of(&mut t, "configmap owner");
    let dependent = OWNED_CM
        .replace("apps/v1", "v1")
        .replace("Deployment", "ConfigMap")
        .replace("name: nginx", "name: owner")
        .replace("UID", &uid);
    t.file("cm.yaml", &dependent);
    t.ok("kubectl apply -f cm.yaml");
    t.settle(5);
    t.ok("kubectl delete configmap owner --cascade=foreground --wait=false");
    t.settle(70);
    assert_eq!(
        t.err("kubectl get configmap owner"),
        "Error from server (NotFound): configmaps \"owner\" not found\n"
    );
    assert_eq!(
        t.err("kubectl get configmap owned"),
        "Error from server (NotFound): configmaps \"owned\" not found\n"
    );
}

/// Two objects owning each other, deleted in foreground: upstream breaks the cycle by
/// making the dependent's references non-blocking; both go.
#[test]
fn an_owner_cycle_in_foreground_deletion_unwinds() {
    let mut t = Term::new();
    t.ok("kubectl create configmap a");
    t.ok("kubectl create configmap b");
    let (ua, ub) = (uid_of(&mut t, "configmap a"), uid_of(&mut t, "configmap b"));
    let owned_by = |name: &str, owner: &str, uid: &str| {
        format!("{{\"metadata\":{{\"ownerReferences\":[{{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"name\":\"{owner}\",\"uid\":\"{uid}\",\"blockOwnerDeletion\":true}}]}}}}")
            + &format!("#{name}")
    };
    for (name, owner, uid) in [("a", "b", &ub), ("b", "a", &ua)] {
        let p = owned_by(name, owner, uid);
        let p = p.split('#').next().unwrap_or_default().to_string();
        t.ok(&format!(
            "kubectl patch configmap {name} --type merge -p '{p}'"
        ));
    }
    t.settle(5);
    t.ok("kubectl delete configmap a --cascade=foreground --wait=false");
    t.settle(120);
    for name in ["a", "b"] {
        assert_eq!(
            t.err(&format!("kubectl get configmap {name}")),
            format!("Error from server (NotFound): configmaps \"{name}\" not found\n")
        );
    }
}

/// kube-apiserver's `kubernetes` service controller recreates a deleted `kubernetes`
/// Service (it used to stay gone).
#[test]
fn a_deleted_kubernetes_service_is_recreated() {
    let mut t = Term::new();
    t.ok("kubectl delete service kubernetes");
    t.settle(11);
    let out = t.ok("kubectl get service kubernetes");
    assert!(
        out.contains("kubernetes   ClusterIP   10.96.0.1    <none>        443/TCP"),
        "{out}"
    );
}

/// An apiserver started while etcd is down answers within its request timeout (it used
/// to keep every request for 10 minutes), and a create reported as failed is never
/// applied once etcd is back (it used to be, 20 minutes later).
#[test]
fn an_apiserver_without_etcd_times_requests_out_and_forgets_them() {
    let mut t = Term::new();
    t.ok("sim stop etcd");
    t.ok("sim stop kube-apiserver");
    t.ok("sim start kube-apiserver");
    let before = t.w.now();
    assert_eq!(
        t.err("kubectl create configmap late"),
        "Error from server (Timeout): Timeout: request did not complete within requested timeout - context deadline exceeded\n"
    );
    assert!(t.w.now() - before <= 62_000, "{}", t.w.now() - before);
    t.ok("sim start etcd");
    t.settle(60);
    assert_eq!(
        t.err("kubectl get configmap late"),
        "Error from server (NotFound): configmaps \"late\" not found\n"
    );
}
