use super::*;

const TWO: &str = "\
--- # leading separator and comment
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: shop
spec:
  replicas: 2
---
# only a comment: skipped
---

---
apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  ports:
  - port: 80
";

fn err(text: &str, source: &str) -> ManifestError {
    parse_manifests(text, source).unwrap_err()
}

#[test]
fn documents_are_split_like_kubectl() {
    let ms = parse_manifests(TWO, "app.yaml").unwrap();
    assert_eq!(ms.len(), 2);
    assert_eq!(ms[0].kind, Some(Kind::Deployment));
    assert_eq!(ms[0].api_version, "apps/v1");
    assert_eq!(ms[0].name, "web");
    assert_eq!(ms[0].namespace, "shop");
    assert_eq!((ms[0].doc_index, ms[0].line), (0, 2));
    assert_eq!(ms[1].kind, Some(Kind::Service));
    assert_eq!(ms[1].namespace, "");
    assert_eq!((ms[1].doc_index, ms[1].line), (3, 14));
    assert_eq!(ms[1].value["spec"]["ports"][0]["port"], 80);
}

#[test]
fn empty_and_comment_only_files_have_no_objects() {
    assert_eq!(parse_manifests("", "a.yaml").unwrap(), vec![]);
    assert_eq!(
        parse_manifests("\n# x\n---\n---\n", "a.yaml").unwrap(),
        vec![]
    );
    assert_eq!(parse_manifests("null\n", "a.yaml").unwrap(), vec![]);
}

#[test]
fn lists_are_expanded() {
    let text = "\
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: ConfigMap
  metadata: {name: a}
- apiVersion: v1
  kind: Secret
  metadata: {name: b}
";
    let ms = parse_manifests(text, "list.yaml").unwrap();
    assert_eq!(ms.len(), 2);
    assert_eq!(ms[0].kind, Some(Kind::ConfigMap));
    assert_eq!((ms[0].item_index, ms[0].line), (Some(0), 4));
    assert_eq!(ms[1].kind, Some(Kind::Secret));
    assert_eq!((ms[1].item_index, ms[1].line), (Some(1), 7));
    assert_eq!(
        locate_field(text, &ms[1], "metadata.name", Target::Key),
        Pos::new(9, 14)
    );
}

#[test]
fn crlf_line_ends_are_read() {
    let text = "apiVersion: v1\r\nkind: Pod\r\nmetadata:\r\n  name: p\r\n---\r\napiVersion: v1\r\nkind: Pod\r\nmetadata: {name: q}\r\n";
    let ms = parse_manifests(text, "p.yaml").unwrap();
    assert_eq!(
        ms.iter().map(|m| m.name.as_str()).collect::<Vec<_>>(),
        vec!["p", "q"]
    );
}

#[test]
fn yaml_syntax_errors_read_like_kubectl_with_document_relative_lines() {
    let text = "\
apiVersion: v1
kind: ConfigMap
metadata: {name: ok}
---
apiVersion: v1
kind: Pod
metadata:
  name: bad: x
";
    let e = err(text, "pod.yaml");
    assert_eq!(e.kind, ManifestErrorKind::Syntax);
    assert_eq!(
        e.to_string(),
        "error: error parsing pod.yaml: error converting YAML to JSON: yaml: line 4: mapping values are not allowed in this context"
    );
    assert_eq!(e.pos, Pos::new(8, 12));
    assert_eq!(e.doc_index, 1);
    assert_eq!(
        e.located().to_string(),
        "8:12: mapping values are not allowed in this context"
    );
    // kubectl has read (and will apply) the first document already.
    let stream = parse_manifest_stream(text, "pod.yaml");
    assert_eq!(stream.manifests.len(), 1);
    assert_eq!(stream.errors, vec![e]);
}

#[test]
fn did_not_find_expected_key_keeps_go_yamls_line() {
    let text = "\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
 labels:
   app: web
";
    let e = err(text, "deploy.yaml");
    assert_eq!(
        e.message,
        "error parsing deploy.yaml: error converting YAML to JSON: yaml: line 4: did not find expected key"
    );
    assert_eq!(e.pos, Pos::new(5, 2));
    assert_eq!(e.detail, "did not find expected key");
}

#[test]
fn missing_kind_and_api_version_are_validation_errors() {
    let e = err("apiVersion: v1\nmetadata:\n  name: x\n", "x.yaml");
    assert_eq!(e.kind, ManifestErrorKind::Validation);
    assert_eq!(
        e.to_string(),
        "error: error validating \"x.yaml\": error validating data: kind not set; if you choose to ignore these errors, turn validation off with --validate=false"
    );
    assert_eq!(e.pos, Pos::new(1, 1));
    let e = err("kind: Pod\nmetadata:\n  name: x\n", "x.yaml");
    assert_eq!(
        e.message,
        "error validating \"x.yaml\": error validating data: apiVersion not set; if you choose to ignore these errors, turn validation off with --validate=false"
    );
    let e = err("metadata:\n  name: x\n", "x.yaml");
    assert_eq!(
        e.message,
        "error validating \"x.yaml\": error validating data: [apiVersion not set, kind not set]; if you choose to ignore these errors, turn validation off with --validate=false"
    );
    let e = err("- a\n- b\n", "x.yaml");
    assert_eq!(e.detail, "invalid object to validate");
    let e = err("apiVersion: v1\nkind: [Pod]\n", "x.yaml");
    assert_eq!(e.detail, "kind isn't string type");
    assert_eq!(e.pos, Pos::new(2, 7));
    let e = err("apiVersion: a/b/c\nkind: Pod\n", "x.yaml");
    assert_eq!(e.detail, "unexpected GroupVersion string: a/b/c");
}

#[test]
fn validation_stops_the_stream_but_keeps_what_came_before() {
    let text = "apiVersion: v1\nkind: Pod\nmetadata: {name: a}\n---\nmetadata: {name: b}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: c}\n";
    let stream = parse_manifest_stream(text, "s.yaml");
    assert_eq!(stream.manifests.len(), 1);
    assert_eq!(stream.errors.len(), 1);
    assert_eq!(stream.errors[0].pos, Pos::new(5, 1));
}

#[test]
fn list_items_without_kind_are_validation_errors() {
    let text = "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Pod\n- apiVersion: v1\n  metadata: {name: x}\n";
    let e = err(text, "l.yaml");
    assert_eq!(e.detail, "kind not set");
    assert_eq!(e.pos, Pos::new(6, 3));
}

#[test]
fn unknown_kinds_are_mapping_errors_and_do_not_stop_the_stream() {
    let text = "\
apiVersion: example.com/v1
kind: Widget
metadata:
  name: w
  namespace: prod
---
apiVersion: v1
kind: ConfigMap
metadata: {name: c}
---
apiVersion: apps/v1beta1
kind: Deployment
metadata: {name: old}
";
    let e = err(text, "crd.yaml");
    assert_eq!(e.kind, ManifestErrorKind::Mapping);
    assert_eq!(
        e.to_string(),
        "error: resource mapping not found for name: \"w\" namespace: \"prod\" from \"crd.yaml\": no matches for kind \"Widget\" in version \"example.com/v1\"\nensure CRDs are installed first"
    );
    assert_eq!(e.pos, Pos::new(2, 7));
    let stream = parse_manifest_stream(text, "crd.yaml");
    assert_eq!(stream.manifests.len(), 3);
    assert_eq!(
        stream.manifests.iter().map(|m| m.kind).collect::<Vec<_>>(),
        vec![None, Some(Kind::ConfigMap), None]
    );
    assert_eq!(stream.errors.len(), 2);
    assert_eq!(
        stream.errors[1].message,
        "resource mapping not found for name: \"old\" namespace: \"\" from \"crd.yaml\": no matches for kind \"Deployment\" in version \"apps/v1beta1\"\nensure CRDs are installed first"
    );
    assert_eq!(stream.errors[1].pos, Pos::new(12, 7));
}

#[test]
fn bad_separators_are_syntax_errors() {
    let e = err("apiVersion: v1\nkind: Pod\n--- oops\n", "s.yaml");
    assert_eq!(
        e.message,
        "error parsing s.yaml: invalid Yaml document separator: oops"
    );
    assert_eq!(e.pos, Pos::new(3, 5));
    let stream = parse_manifest_stream("apiVersion: v1\nkind: Pod\n--- oops\n", "s.yaml");
    assert_eq!(stream.manifests.len(), 1);
}

#[test]
fn json_streams_are_read_with_gos_json_errors() {
    let text = "{\"apiVersion\": \"v1\", \"kind\": \"Pod\", \"metadata\": {\"name\": \"a\"}}\n{\n\t\"apiVersion\": \"v1\",\n\t\"kind\": \"Pod\",\n\t\"metadata\": {\"name\": \"b\"}\n}\n";
    let ms = parse_manifests(text, "p.json").unwrap();
    assert_eq!(ms.len(), 2);
    assert_eq!(
        (ms[1].name.as_str(), ms[1].doc_index, ms[1].line),
        ("b", 1, 2)
    );
    assert_eq!(
        locate_field(text, &ms[1], "metadata.name", Target::Value),
        Pos::new(5, 23)
    );
    assert_eq!(
        locate_field(text, &ms[0], "kind", Target::Key),
        Pos::new(1, 22)
    );

    let e = err("{\"apiVersion\": \"v1\",\n \"kind\": \"Pod\",}\n", "p.json");
    assert_eq!(
        e.message,
        "error parsing p.json: json: offset 37: invalid character '}' looking for beginning of object key string"
    );
    assert_eq!(e.pos, Pos::new(2, 16));
    assert_eq!(
        e.detail,
        "invalid character '}' looking for beginning of object key string"
    );
    let e = err("{\"apiVersion\": \"v1\"", "p.json");
    assert_eq!(e.message, "error parsing p.json: unexpected EOF");
    let e = err("{\"apiVersion\": \"v1\"}", "p.json");
    assert_eq!(e.detail, "kind not set");
}

#[test]
fn strict_decoding_errors_can_be_placed_in_the_editor() {
    let ms = parse_manifests(TWO, "app.yaml").unwrap();
    assert_eq!(
        locate_field(TWO, &ms[0], "spec.replicas", Target::Key),
        Pos::new(8, 3)
    );
    assert_eq!(
        locate_field(TWO, &ms[1], "spec.ports[0].port", Target::Value),
        Pos::new(20, 11)
    );
    // A missing field points at its parent.
    assert_eq!(
        locate_field(TWO, &ms[1], "spec.selector.app", Target::Key),
        Pos::new(18, 1)
    );
}

#[test]
fn duplicate_keys_take_the_last_value_like_go_yaml() {
    let ms = parse_manifests("apiVersion: v1\nkind: Pod\nkind: ConfigMap\n", "d.yaml").unwrap();
    assert_eq!(ms[0].kind, Some(Kind::ConfigMap));
}

#[test]
fn an_empty_kind_cannot_be_decoded() {
    let stream = parse_manifest_stream(
        "apiVersion: v1\nkind: \"\"\nmetadata: {name: x}\n---\napiVersion: v1\nkind: Pod\n",
        "e.yaml",
    );
    assert_eq!(stream.manifests.len(), 1);
    assert_eq!(stream.errors.len(), 1);
    assert_eq!(stream.errors[0].kind, ManifestErrorKind::Decode);
    assert_eq!(
        stream.errors[0].message,
        "unable to decode \"e.yaml\": Object 'Kind' is missing in '{\"apiVersion\":\"v1\",\"kind\":\"\",\"metadata\":{\"name\":\"x\"}}'"
    );
}

#[test]
fn big_lists_and_streams_stay_linear() {
    let mut list = String::from("apiVersion: v1\nkind: List\nitems:\n");
    for i in 0..600 {
        list.push_str(&format!(
            "- {{apiVersion: v1, kind: ConfigMap, metadata: {{name: c{i}}}}}\n"
        ));
    }
    let ms = parse_manifests(&list, "big.yaml").unwrap();
    assert_eq!(ms.len(), 600);
    assert_eq!(ms[5].line, 9);
    assert_eq!(ms[599].line, 1);
    assert_eq!(ms[599].name, "c599");
    let mut json = String::new();
    for i in 0..2000 {
        json.push_str(&format!("{{\"apiVersion\": \"v1\", \"kind\": \"Widget\", \"metadata\": {{\"name\": \"w{i}\"}}}}\n"));
    }
    let stream = parse_manifest_stream(&json, "w.json");
    assert_eq!(stream.manifests.len(), 2000);
    assert_eq!(stream.errors.len(), 2000);
    assert_eq!(stream.errors[1999].pos, Pos::new(2000, 30));
}
