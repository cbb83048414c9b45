//! Bad manifests give the errors kubectl prints, change nothing, and never panic.

use std::collections::BTreeMap;

use kubeloop_sim::cluster::ClusterConfig;
use kubeloop_sim::cmd;
use kubeloop_sim::process::Output;
use kubeloop_sim::time::SECOND;
use kubeloop_sim::World;

mod common;
use common::NGINX as GOOD;

fn apply(text: &str) -> (Output, World) {
    let mut w = World::new(ClusterConfig::default());
    let files: BTreeMap<String, String> = [("bad.yaml".to_string(), text.to_string())]
        .into_iter()
        .collect();
    let out = cmd::run(&mut w, "kubectl apply -f bad.yaml", &files, 10 * SECOND);
    (out, w)
}

fn nothing_created(w: &mut World) {
    let out = cmd::run(w, "kubectl get deployments", &BTreeMap::new(), 10 * SECOND);
    assert_eq!(out.stderr, "No resources found in default namespace.\n");
}

#[test]
fn unknown_field_is_a_strict_decoding_error() {
    let (out, mut w) = apply(&GOOD.replace("replicas: 3", "replica: 3"));
    assert_eq!(out.exit_code, 1);
    assert_eq!(
        out.stderr,
        "Error from server (BadRequest): error when creating \"bad.yaml\": Deployment in version \"v1\" cannot be handled as a Deployment: strict decoding error: unknown field \"spec.replica\"\n"
    );
    nothing_created(&mut w);
}

#[test]
fn invalid_yaml_reports_the_line() {
    let (out, mut w) =
        apply("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: x\n labels: {}\n");
    assert_eq!(out.exit_code, 1);
    assert!(
        out.stderr.starts_with(
            "error: error parsing bad.yaml: error converting YAML to JSON: yaml: line "
        ),
        "{}",
        out.stderr
    );
    nothing_created(&mut w);
}

#[test]
fn negative_replicas_are_invalid() {
    let (out, mut w) = apply(&GOOD.replace("replicas: 3", "replicas: -1"));
    assert_eq!(out.stderr, "The Deployment \"nginx\" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0\n");
    nothing_created(&mut w);
}

#[test]
fn selector_must_match_template_labels() {
    let (out, mut w) = apply(&GOOD.replace(
        "        app: nginx\n    spec:",
        "        app: web\n    spec:",
    ));
    assert_eq!(
        out.stderr,
        "The Deployment \"nginx\" is invalid: spec.template.metadata.labels: Invalid value: {\"app\":\"web\"}: `selector` does not match template `labels`\n"
    );
    nothing_created(&mut w);
}

#[test]
fn unknown_kind_is_a_mapping_error() {
    let (out, mut w) = apply(&GOOD.replace("kind: Deployment", "kind: Deploymnt"));
    assert_eq!(
        out.stderr,
        "error: resource mapping not found for name: \"nginx\" namespace: \"\" from \"bad.yaml\": no matches for kind \"Deploymnt\" in version \"apps/v1\"\nensure CRDs are installed first\n"
    );
    nothing_created(&mut w);
}

#[test]
fn garbage_never_panics() {
    for text in [
        "",
        "---",
        "{",
        "[]",
        "kind: 5",
        "apiVersion: v1\nkind: Pod\nmetadata: {name: 3}\nspec: {containers: 7}",
        "\u{0}\u{1}",
        "a: &a [*a]",
    ] {
        let (out, _) = apply(text);
        assert!(
            out.exit_code == 0 || out.exit_code == 1,
            "{text:?} → {out:?}"
        );
    }
}

/// Issue 13: `[` × 100,000 took minutes inside libyaml before its depth limit refused it.
#[test]
fn deeply_nested_yaml_is_refused_at_the_depth_limit() {
    let (out, mut w) = apply(&"[".repeat(100_000));
    assert_eq!(
        out.stderr,
        "error: error parsing bad.yaml: error converting YAML to JSON: yaml: recursion limit exceeded\n"
    );
    nothing_created(&mut w);
}

/// Issue 13: a 393-character share link that inflates to `[` × 100,000 hung the page.
#[test]
fn a_deeply_nested_shared_scenario_is_refused_with_its_position() {
    let link = kubeloop_sim::share::encode_share_fragment(&"[".repeat(100_000));
    assert!(link.len() < 400, "{}", link.len());
    let text = kubeloop_sim::share::decode_share_fragment(&link).unwrap();
    let errors = kubeloop_sim::scenario::parse_scenario(&text).unwrap_err();
    assert_eq!(
        errors.iter().map(ToString::to_string).collect::<Vec<_>>(),
        ["1:129: yaml: recursion limit exceeded"]
    );
}

fn pod_requesting(resources: &str) -> String {
    format!(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n  - name: c\n    image: nginx:1.27\n    resources:\n      requests: {resources}\n"
    )
}

/// Issue 13: malformed quantities were stored and run; upstream's decoder refuses them.
#[test]
fn malformed_quantities_are_refused_while_decoding() {
    for bad in ["{cpu: 1KiB}", "{memory: 1.5.5}"] {
        let (out, mut w) = apply(&pod_requesting(bad));
        assert_eq!(
            out.stderr,
            "Error from server (BadRequest): error when creating \"bad.yaml\": Pod in version \"v1\" cannot be handled as a Pod: quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'\n",
            "{bad}"
        );
        let out = cmd::run(&mut w, "kubectl get pods", &BTreeMap::new(), 10 * SECOND);
        assert_eq!(out.stderr, "No resources found in default namespace.\n");
    }
    let (out, _) = apply(&GOOD.replace(
        "image: nginx:1.27",
        "image: nginx:1.27\n        resources: {limits: {memory: 12Zi}}",
    ));
    assert_eq!(
        out.stderr,
        "Error from server (BadRequest): error when creating \"bad.yaml\": Deployment in version \"v1\" cannot be handled as a Deployment: quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'\n"
    );
}

/// Issue 13: `cpu: "1e19"` is beyond an int64 of millicores; it read as 0 and ran on a
/// 4-CPU node. It fits no node.
#[test]
fn a_request_beyond_int64_fits_no_node() {
    let (out, mut w) = apply(&pod_requesting("{cpu: \"1e19\"}"));
    assert_eq!(out.stdout, "pod/p created\n", "{out:?}");
    w.run_for(10 * SECOND);
    let out = cmd::run(&mut w, "kubectl get pod p", &BTreeMap::new(), 10 * SECOND);
    assert!(out.stdout.contains("Pending"), "{}", out.stdout);
    let out = cmd::run(
        &mut w,
        "kubectl describe pod p",
        &BTreeMap::new(),
        10 * SECOND,
    );
    assert!(
        out.stdout
            .contains("0/3 nodes are available: 3 Insufficient cpu."),
        "{}",
        out.stdout
    );
}

/// Issue 13: a file saved with a UTF-8 byte order mark gave `kind not set`.
#[test]
fn a_byte_order_mark_is_ignored() {
    let (out, _) = apply(&format!("\u{feff}{GOOD}"));
    assert_eq!(out.stdout, "deployment.apps/nginx created\n", "{out:?}");
}

/// Issue 13: YAML merge keys (`<<: *anchor`) failed to decode; go-yaml resolves them.
#[test]
fn yaml_merge_keys_are_resolved() {
    let text = "apiVersion: v1
kind: ConfigMap
metadata:
  name: merged
data:
  <<: &base {a: \"1\", b: \"2\"}
  b: own
";
    let (out, mut w) = apply(text);
    assert_eq!(out.stdout, "configmap/merged created\n", "{out:?}");
    let out = cmd::run(
        &mut w,
        "kubectl get configmap merged -o jsonpath={.data}",
        &BTreeMap::new(),
        10 * SECOND,
    );
    assert_eq!(out.stdout, "{\"a\":\"1\",\"b\":\"own\"}");
}

/// Issue 13: `apply` of an object with only `generateName` created `configmap/`.
#[test]
fn apply_refuses_generate_name() {
    let (out, _) = apply("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  generateName: cm-\n");
    assert_eq!(out.exit_code, 1);
    assert_eq!(
        out.stderr,
        "error: from cm-: cannot use generate name with apply\n"
    );
    assert_eq!(out.stdout, "");
}
