//! Field errors and Invalid/Forbidden messages rendered exactly as apimachinery does.

use super::*;

#[test]
fn required_has_no_value() {
    let e = FieldError::required(&Path::new("spec").child("selector"), "");
    assert_eq!(e.to_string(), "spec.selector: Required value");
}

#[test]
fn invalid_quotes_strings_and_prints_ints_bare() {
    let p = Path::new("metadata").child("name");
    assert_eq!(
        FieldError::invalid(&p, "A", "bad").to_string(),
        "metadata.name: Invalid value: \"A\": bad"
    );
    let r = Path::new("spec").child("replicas");
    assert_eq!(
        FieldError::invalid(&r, -1i64, "must be greater than or equal to 0").to_string(),
        "spec.replicas: Invalid value: -1: must be greater than or equal to 0"
    );
}

#[test]
fn maps_render_as_json() {
    let mut m = BTreeMap::new();
    m.insert("app".to_string(), "web".to_string());
    let e = FieldError::invalid(
        &Path::new("spec")
            .child("template")
            .child("metadata")
            .child("labels"),
        BadValue::string_map(Some(&m)),
        "`selector` does not match template `labels`",
    );
    assert_eq!(
        e.to_string(),
        "spec.template.metadata.labels: Invalid value: {\"app\":\"web\"}: `selector` does not match template `labels`"
    );
    assert_eq!(BadValue::string_map(None), BadValue::Json("null".into()));
}

#[test]
fn not_supported_lists_quoted_values() {
    let e = FieldError::not_supported(
        &Path::new("spec").child("restartPolicy"),
        BadValue::typed_str("Sometimes"),
        &["Always", "OnFailure", "Never"],
    );
    assert_eq!(
        e.to_string(),
        "spec.restartPolicy: Unsupported value: \"Sometimes\": supported values: \"Always\", \"OnFailure\", \"Never\""
    );
}

#[test]
fn paths_render_keys_and_indexes() {
    let p = Path::new("spec")
        .child("containers")
        .index(0)
        .child("resources")
        .child("limits")
        .key("cpu");
    assert_eq!(p.as_str(), "spec.containers[0].resources.limits[cpu]");
    assert_eq!(Path::new("").as_str(), "[]");
}

#[test]
fn invalid_message_single_and_multiple() {
    let e1 = FieldError::required(&Path::new("spec").child("selector"), "");
    assert_eq!(
        invalid_message("Deployment", "apps", "nginx", std::slice::from_ref(&e1)),
        "Deployment.apps \"nginx\" is invalid: spec.selector: Required value"
    );
    let e2 = FieldError::required(&Path::new("spec").child("template"), "");
    assert_eq!(
        invalid_message("Pod", "", "p", &[e1.clone(), e2, e1]),
        "Pod \"p\" is invalid: [spec.selector: Required value, spec.template: Required value]"
    );
    assert_eq!(invalid_message("Pod", "", "p", &[]), "Pod \"p\" is invalid");
}

#[test]
fn forbidden_and_too_long_print_no_value() {
    let e = FieldError::forbidden(&Path::new("spec"), "nope");
    assert_eq!(e.to_string(), "spec: Forbidden: nope");
    let e = FieldError::too_long(&Path::new("data"), 1048576);
    assert_eq!(
        e.to_string(),
        "data: Too long: may not be more than 1048576 bytes"
    );
    let e = FieldError::too_many(&Path::new("x"), 5, 3);
    assert_eq!(e.to_string(), "x: Too many: 5: must have at most 3 items");
}

#[test]
fn go_quoting_matches_strconv_quote() {
    assert_eq!(go_quote("a\"b\\c\n\u{1}é"), "\"a\\\"b\\\\c\\n\\x01é\"");
    assert_eq!(go_quote("\u{a0}"), "\"\\u00a0\"");
    assert_eq!(go_json_quote("<a&b>"), "\"\\u003ca\\u0026b\\u003e\"");
}

#[test]
fn forbidden_message_formats() {
    assert_eq!(
        forbidden_message("pods", "web-", "exceeded quota: q"),
        "pods \"web-\" is forbidden: exceeded quota: q"
    );
    assert_eq!(aggregate(&["a", "b", "a"]), "[a, b]");
    assert_eq!(aggregate(&["a", "a"]), "a");
}
