//! What `kubectl apply` does for CustomResourceDefinitions and custom objects beyond the
//! common path: kubeloop's note on CEL rules it does not evaluate, and field validation.

use serde_json::Value;

use crate::cmd::kubectl::Kubectl;
use crate::object::Kind;

/// kubeloop's note for the `x-kubernetes-validations` rules of an applied CRD that its
/// CEL subset cannot evaluate: the apiserver keeps them and enforces nothing for them.
pub(crate) fn warn_unevaluated_rules(k: &Kubectl, kind: Kind, v: &Value) {
    if kind != Kind::CustomResourceDefinition {
        return;
    }
    let Ok(crd) = crate::object::decode(v) else {
        return;
    };
    for (path, rule, why) in crate::apiserver::crd::validation::unevaluated_rules(&crd) {
        k.sys.err(&format!(
            "Warning: kubeloop does not evaluate the x-kubernetes-validations rule {rule:?} at {path} ({why}); it is stored but not enforced\n"
        ));
    }
}

/// `--validate=false|ignore`: kubectl asks for `fieldValidation=Ignore`.
pub(crate) fn ignores_unknown_fields(k: &Kubectl) -> bool {
    matches!(k.flags.get("validate"), Some("false" | "ignore"))
}
