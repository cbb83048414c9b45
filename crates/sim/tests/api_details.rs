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
