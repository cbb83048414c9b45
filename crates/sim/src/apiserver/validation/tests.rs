//! Validation rules, one test per rule, each asserting upstream's exact message.

use serde_json::json;

use super::*;
use crate::apiserver::defaults::set_defaults;
use crate::apiserver::field_error::invalid_message;
use crate::object::Kind;

/// Decodes, defaults and validates a manifest; returns the apiserver's Invalid message.
pub(super) fn create_message(kind: Kind, v: serde_json::Value) -> String {
    let mut obj = Object::from_value(kind, &v, &mut Vec::new()).expect("decodes");
    set_defaults(&mut obj);
    let errs = validate_create(&obj);
    let info = kind.info();
    invalid_message(info.kind, info.group, obj.name(), &errs)
}

#[test]
fn placeholder_compiles() {
    let m = create_message(
        Kind::ConfigMap,
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "default"}}),
    );
    assert_eq!(m, "ConfigMap \"c\" is invalid");
}
