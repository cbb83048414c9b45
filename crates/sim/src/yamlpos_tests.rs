use super::*;

const DEPLOY: &str = "\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels:
    app.kubernetes.io/name: web
spec:
  replica: 3
  template:
    spec:
      containers:
      - name: a
        image: nginx
      - name: b
        imagee: redis
";

fn key(text: &str, doc: usize, path: &str) -> Option<Pos> {
    locate(text, doc, path, Target::Key)
}

fn value(text: &str, doc: usize, path: &str) -> Option<Pos> {
    locate(text, doc, path, Target::Value)
}

#[test]
fn paths_parse_like_upstream_prints_them() {
    use Segment::*;
    assert_eq!(
        parse_path("spec.template.spec.containers[0].imagee"),
        vec![
            Field("spec".into()),
            Field("template".into()),
            Field("spec".into()),
            Field("containers".into()),
            Index(0),
            Field("imagee".into()),
        ]
    );
    assert_eq!(
        parse_path(r#"spec.files["a.yaml"]"#),
        vec![
            Field("spec".into()),
            Field("files".into()),
            Key("a.yaml".into())
        ]
    );
    assert_eq!(
        parse_path(".a[x]"),
        vec![Field("a".into()), Key("x".into())]
    );
    assert_eq!(parse_path(""), vec![]);
    assert_eq!(
        parse_path("[\"unterminated"),
        vec![Key("unterminated".into())]
    );
}

#[test]
fn block_style_keys_are_found() {
    assert_eq!(key(DEPLOY, 0, "spec.replica"), Some(Pos::new(8, 3)));
    assert_eq!(
        key(DEPLOY, 0, "spec.template.spec.containers[1].imagee"),
        Some(Pos::new(15, 9))
    );
    assert_eq!(
        key(DEPLOY, 0, "spec.template.spec.containers[1]"),
        Some(Pos::new(14, 9))
    );
    assert_eq!(key(DEPLOY, 0, "kind"), Some(Pos::new(2, 1)));
    assert_eq!(key(DEPLOY, 0, "spec.nothing"), None);
    assert_eq!(key(DEPLOY, 0, "spec.template.spec.containers[7]"), None);
}

#[test]
fn values_are_found() {
    assert_eq!(value(DEPLOY, 0, "spec.replica"), Some(Pos::new(8, 12)));
    assert_eq!(value(DEPLOY, 0, "metadata"), Some(Pos::new(4, 3)));
    assert_eq!(value(DEPLOY, 0, ""), Some(Pos::new(1, 1)));
}

#[test]
fn dotted_keys_match_joined_segments() {
    assert_eq!(
        key(DEPLOY, 0, "metadata.labels.app.kubernetes.io/name"),
        Some(Pos::new(6, 5))
    );
    assert_eq!(
        key(DEPLOY, 0, r#"metadata.labels["app.kubernetes.io/name"]"#),
        Some(Pos::new(6, 5))
    );
}

#[test]
fn flow_style_and_json_are_found() {
    let flow = "spec: {nodes: [{name: a, capacity: {cpu: \"4\"}}, {name: b}]}\n";
    assert_eq!(key(flow, 0, "spec.nodes[1].name"), Some(Pos::new(1, 50)));
    assert_eq!(
        value(flow, 0, "spec.nodes[0].capacity.cpu"),
        Some(Pos::new(1, 42))
    );
    let json = "{\n  \"kind\": \"Pod\",\n  \"spec\": {\"containers\": [{\"imagee\": \"x\"}]}\n}\n";
    assert_eq!(
        key(json, 0, "spec.containers[0].imagee"),
        Some(Pos::new(3, 28))
    );
}

#[test]
fn later_documents_count_from_the_top_of_the_text() {
    let text = "a: 1\n---\nb:\n  c: 2\n---\nd: [x, {e: 1}]\n";
    assert_eq!(key(text, 1, "b.c"), Some(Pos::new(4, 3)));
    assert_eq!(key(text, 2, "d[1].e"), Some(Pos::new(6, 9)));
    assert_eq!(key(text, 3, "a"), None);
    assert_eq!(count_documents(text, 100), 3);
}

#[test]
fn nearest_falls_back_to_the_parent() {
    assert_eq!(
        locate_nearest(
            DEPLOY,
            0,
            "spec.template.spec.containers[1].ports[0]",
            Target::Key
        ),
        Pos::new(14, 9)
    );
    assert_eq!(
        locate_nearest(DEPLOY, 0, "status.replicas", Target::Key),
        Pos::START
    );
    assert_eq!(locate_nearest("a: [", 0, "a", Target::Key), Pos::START);
}

#[test]
fn anchors_and_tags_do_not_confuse_the_search() {
    let text = "base: &b {x: 1}\nuse: *b\ntagged: !thing\n  y: 2\n";
    assert_eq!(key(text, 0, "tagged.y"), Some(Pos::new(4, 3)));
    assert_eq!(key(text, 0, "use"), Some(Pos::new(2, 1)));
}

#[test]
fn syntax_errors_map_to_go_yaml_messages() {
    let cases: &[(&str, &str, Pos)] = &[
        (
            "a: b: c\n",
            "yaml: mapping values are not allowed in this context",
            Pos::new(1, 5),
        ),
        (
            "x: 1\ny: 2\na: b: c\n",
            "yaml: line 3: mapping values are not allowed in this context",
            Pos::new(3, 5),
        ),
        (
            "metadata:\n  name: x\n labels: y\n",
            "yaml: line 2: did not find expected key",
            Pos::new(3, 2),
        ),
        (
            "a: [1, 2\nb: 3\n",
            "yaml: line 1: did not find expected ',' or ']'",
            Pos::new(2, 2),
        ),
        (
            "a:\n  - x\n  y: 1\n",
            "yaml: line 2: did not find expected '-' indicator",
            Pos::new(3, 3),
        ),
        (
            "a: \"open\nb: 2\n",
            "yaml: line 3: found unexpected end of stream",
            Pos::new(3, 1),
        ),
        (
            "a: @x\n",
            "yaml: found character that cannot start any token",
            Pos::new(1, 4),
        ),
        (
            "key: value\n\tother: 1\n",
            "yaml: line 2: found a tab character that violates indentation",
            Pos::new(2, 1),
        ),
    ];
    for (text, want, pos) in cases {
        let err = serde_yaml::from_str::<serde_yaml::Value>(text).unwrap_err();
        assert_eq!(&go_yaml_message(&err), want, "{text:?} → {err:?}");
        assert_eq!(error_pos(&err), Some(*pos), "{text:?} → {err:?}");
    }
}

#[test]
fn data_errors_keep_their_position() {
    let err = serde_yaml::from_str::<std::collections::BTreeMap<String, u32>>("a: 1\nb: x\n")
        .unwrap_err();
    assert_eq!(error_pos(&err), Some(Pos::new(2, 4)));
    assert!(syntax_error(&err).is_none());
    assert_eq!(
        error_message(&err),
        "b: invalid type: string \"x\", expected u32"
    );
}

#[test]
fn yaml_converts_to_json_like_sigs_yaml() {
    let v = first_document_to_json(
        "a: 1\n1: x\ntrue: y\nnull: z\nf: .inf\nt: !foo {k: v}\nl: [1, 2.5, ~]\n",
        Duplicates::LastWins,
    )
    .unwrap();
    assert_eq!(
        v,
        serde_json::json!({"a": 1, "1": "x", "true": "y", "null": "z", "f": "+Inf",
            "t": {"k": "v"}, "l": [1, 2.5, null]})
    );
    assert_eq!(
        first_document_to_json("", Duplicates::LastWins).unwrap(),
        serde_json::Value::Null
    );
}

#[test]
fn duplicate_keys_follow_the_chosen_policy() {
    let text = "a: 1\nb: 2\na: 3\n";
    assert_eq!(
        first_document_to_json(text, Duplicates::LastWins).unwrap(),
        serde_json::json!({"a": 3, "b": 2})
    );
    let err = first_document_to_json(text, Duplicates::Reject).unwrap_err();
    assert_eq!(error_pos(&err), Some(Pos::new(3, 1)));
    assert_eq!(error_message(&err), "mapping key \"a\" already defined");
}

#[test]
fn complex_keys_and_deep_nesting_are_errors_not_panics() {
    assert!(first_document_to_json("? [a, b]\n: c\n", Duplicates::LastWins).is_err());
    let deep = "[".repeat(10_000);
    assert!(first_document_to_json(&deep, Duplicates::LastWins).is_err());
    assert_eq!(key(&deep, 0, "a"), None);
    let bomb = "a: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\n\
        c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]\n\
        e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d]\nf: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e]\n\
        g: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f]\nh: [*g, *g, *g, *g, *g, *g, *g, *g, *g]\n";
    assert!(first_document_to_json(bomb, Duplicates::LastWins).is_err());
}
