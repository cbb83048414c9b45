//! `kubectl explain` through the terminal, in the layout of kubectl's OpenAPI v3
//! plaintext template, from k8s-openapi's schemas of the served kinds.

mod common;
use common::Term as T;

#[test]
fn explain_a_kind_lists_its_fields() {
    let mut t = T::new();
    let out = t.ok("kubectl explain pods");
    assert!(
        out.starts_with(
            "KIND:       Pod
VERSION:    v1

DESCRIPTION:
    Pod is a collection of containers that can run on a host. This resource is
    created by clients and scheduled onto hosts.
    
FIELDS:
  apiVersion\t<string>
    APIVersion defines the versioned schema of this representation of an object.
"
        ),
        "{out}"
    );
    assert!(
        out.contains("\n  metadata\t<ObjectMeta>\n    Standard object's metadata."),
        "{out}"
    );
    assert!(out.contains("\n  spec\t<PodSpec>\n"), "{out}");
    assert!(out.ends_with("#spec-and-status\n\n\n"), "{out}");
    let d = t.ok("kubectl explain deploy");
    assert!(
        d.starts_with("GROUP:      apps\nKIND:       Deployment\nVERSION:    v1\n\n"),
        "{d}"
    );
}

#[test]
fn explain_a_field_follows_refs_arrays_and_maps() {
    let mut t = T::new();
    assert_eq!(
        t.ok("kubectl explain deployment.spec.replicas"),
        "GROUP:      apps
KIND:       Deployment
VERSION:    v1

FIELD: replicas <integer>


DESCRIPTION:
    Number of desired pods. This is a pointer to distinguish between explicit
    zero and not specified. Defaults to 1.
    

"
    );
    let c = t.ok("kubectl explain pod.spec.containers");
    assert!(
        c.contains("FIELD: containers <[]Container>\n\n\nDESCRIPTION:\n"),
        "{c}"
    );
    // The field's text, then its type's.
    assert!(c.contains("    updated.\n    A single application container that you want to run within a pod.\n    \nFIELDS:\n"), "{c}");
    assert!(c.contains("\n  name\t<string> -required-\n"), "{c}");
    let r = t.ok("kubectl explain pod.spec.containers.resources");
    assert!(r.contains("\n  limits\t<map[string]Quantity>\n"), "{r}");
    let m = t.ok("kubectl explain pod.metadata");
    assert!(m.contains("\n  creationTimestamp\t<string>\n"), "{m}");
    assert!(m.contains("\n  labels\t<map[string]string>\n"), "{m}");
}

#[test]
fn explain_recursive_and_errors() {
    let mut t = T::new();
    let r = t.ok("kubectl explain configmap --recursive");
    assert!(r.contains("FIELDS:\n  apiVersion\t<string>\n  binaryData\t<map[string]string>\n  data\t<map[string]string>\n"), "{r}");
    assert!(
        r.contains("\n  metadata\t<ObjectMeta>\n    annotations\t<map[string]string>\n"),
        "{r}"
    );
    assert_eq!(
        t.err("kubectl explain pods.spec.foo"),
        "error: field \"foo\" does not exist\n"
    );
    assert_eq!(
        t.err("kubectl explain foo"),
        "error: the server doesn't have a resource type \"foo\"\n"
    );
    assert!(t
        .err("kubectl explain")
        .starts_with("error: You must specify the type of resource to explain."));
}
