//! Tests for the `-o` printers; golden files in `testdata/` were printed by real kubectl
//! (`kubectl annotate --local -f FILE zz- -o yaml|json`).

use std::sync::Arc;

use super::*;
use crate::object::{Kind, Object};

fn load(kind: Kind, json: &str) -> Arc<Object> {
    let v: Value = serde_json::from_str(json).unwrap();
    let mut unknown = Vec::new();
    Arc::new(Object::from_value(kind, &v, &mut unknown).unwrap())
}

fn deployment() -> Arc<Object> {
    load(Kind::Deployment, include_str!("testdata/deployment.json"))
}

#[test]
fn yaml_of_a_deployment_matches_kubectl() {
    let got = print_objects(&[deployment()], &OutputFormat::Yaml, true, false).unwrap();
    assert_eq!(got, include_str!("testdata/deployment.yaml"));
}

#[test]
fn json_of_a_deployment_matches_kubectl() {
    let got = print_objects(&[deployment()], &OutputFormat::Json, true, false).unwrap();
    assert_eq!(got, include_str!("testdata/deployment.out.json"));
}

#[test]
fn yaml_quoting_folding_and_key_order_match_kubectl() {
    let cm = load(
        Kind::ConfigMap,
        include_str!("testdata/configmap-tricky.json"),
    );
    let got = print_objects(&[cm.clone()], &OutputFormat::Yaml, true, false).unwrap();
    assert_eq!(got, include_str!("testdata/configmap-tricky.yaml"));
    let got = print_objects(&[cm], &OutputFormat::Json, true, false).unwrap();
    assert_eq!(got, include_str!("testdata/configmap-tricky.out.json"));
}

#[test]
fn several_objects_print_as_a_list() {
    let d = deployment();
    let got = print_objects(&[d.clone(), d], &OutputFormat::Yaml, false, false).unwrap();
    assert!(got.starts_with("apiVersion: v1\nitems:\n- apiVersion: apps/v1\n  kind: Deployment\n"));
    assert!(
        got.ends_with("    updatedReplicas: 3\nkind: List\nmetadata:\n  resourceVersion: \"\"\n")
    );
    let empty = print_objects(&[], &OutputFormat::Json, false, false).unwrap();
    assert_eq!(
        empty,
        "{\n    \"apiVersion\": \"v1\",\n    \"items\": [],\n    \"kind\": \"List\",\n    \"metadata\": {\n        \"resourceVersion\": \"\"\n    }\n}\n"
    );
}

#[test]
fn name_output_uses_kind_and_group() {
    let got = print_objects(&[deployment()], &OutputFormat::Name, true, false).unwrap();
    assert_eq!(got, "deployment.apps/nginx\n");
    let cm = load(
        Kind::ConfigMap,
        include_str!("testdata/configmap-tricky.json"),
    );
    assert_eq!(resource_name(&cm), "configmap/tricky");
}

#[test]
fn jsonpath_prints_like_kubectl() {
    let d = deployment();
    let run = |t: &str, single: bool| {
        let f = OutputFormat::parse(&format!("jsonpath={t}")).unwrap();
        print_objects(&[d.clone()], &f, single, false).unwrap()
    };
    assert_eq!(run("{.metadata.name}", true), "nginx");
    assert_eq!(run("{.metadata.labels}", true), "{\"app\":\"nginx\"}");
    assert_eq!(run("{.items[*].metadata.name}", false), "nginx");
    assert_eq!(
        run(
            "{range .items[*]}{.metadata.name}{\"\\t\"}{.spec.replicas}{\"\\n\"}{end}",
            false
        ),
        "nginx\t3\n"
    );
    assert_eq!(
        run(
            "{.status.conditions[?(@.type==\"Available\")].status}",
            true
        ),
        "True"
    );
    assert_eq!(
        run("{.status.conditions[*].type}", true),
        "Available Progressing"
    );
    assert_eq!(run("{.nope}", true), "");
    assert_eq!(run("x={.spec.replicas}", true), "x=3");
    // `\.` keeps a dot inside a field name (annotation and label keys).
    assert_eq!(
        run(
            "{.metadata.annotations.deployment\\.kubernetes\\.io/revision}",
            true
        ),
        "1"
    );
    assert_eq!(
        OutputFormat::parse("jsonpath={.metadata.name").unwrap_err(),
        "error parsing jsonpath {.metadata.name, unclosed action"
    );
}

#[test]
fn custom_columns_align_and_fill_none() {
    let f = OutputFormat::parse(
        "custom-columns=NAME:.metadata.name,IMAGES:.spec.template.spec.containers[*].image,X:.nope",
    )
    .unwrap();
    let got = print_objects(&[deployment()], &f, false, false).unwrap();
    assert_eq!(got, "NAME    IMAGES       X\nnginx   nginx:1.25   <none>\n");
    assert_eq!(
        OutputFormat::parse("custom-columns=NAME").unwrap_err(),
        "unexpected custom-columns spec: NAME, expected <header>:<json-path-expr>"
    );
}

#[test]
fn unknown_formats_are_rejected_as_kubectl_does() {
    assert_eq!(
        OutputFormat::parse("foo").unwrap_err(),
        "unable to match a printer suitable for the output format \"foo\", allowed formats are: \
         custom-columns,custom-columns-file,go-template,go-template-file,json,jsonpath,\
         jsonpath-as-json,jsonpath-file,kyaml,name,template,templatefile,wide,yaml"
    );
    assert_eq!(OutputFormat::parse("wide"), Ok(OutputFormat::Wide));
}
