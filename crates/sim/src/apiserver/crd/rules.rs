//! Evaluating `x-kubernetes-validations` over a custom object, each rule with `self` bound
//! to the value its schema node describes (and `oldSelf` to the old value on updates).

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    JSONSchemaProps, ValidationRule,
};
use serde_json::Value;

use crate::apiserver::crd::cel;
use crate::apiserver::crd::schema::{additional, child, items, type_of};
use crate::apiserver::field_error::{FieldError, Path};

/// Appends the errors of every failing rule under `s`.
pub fn check(
    s: &JSONSchemaProps,
    v: &Value,
    old: Option<&Value>,
    path: &Path,
    errs: &mut Vec<FieldError>,
) {
    for r in s.x_kubernetes_validations.iter().flatten() {
        if let Some(e) = check_rule(r, s, v, old, path) {
            errs.push(e);
        }
    }
    match v {
        Value::Object(map) => {
            for (k, x) in map {
                let sub = s
                    .properties
                    .as_ref()
                    .and_then(|p| p.get(k))
                    .or_else(|| additional(s));
                if let Some(sub) = sub {
                    let o = old.and_then(|o| o.get(k));
                    check(sub, x, o, &child(path, k), errs);
                }
            }
        }
        Value::Array(list) => {
            if let Some(item) = items(s) {
                for (i, x) in list.iter().enumerate() {
                    // Items are correlated with their old value only for map lists upstream;
                    // kubeloop correlates none, so item transition rules are skipped.
                    check(item, x, None, &path.index(i), errs);
                }
            }
        }
        _ => {}
    }
}

fn check_rule(
    r: &ValidationRule,
    s: &JSONSchemaProps,
    v: &Value,
    old: Option<&Value>,
    path: &Path,
) -> Option<FieldError> {
    // Rules outside the subset are reported when the CRD is applied, not evaluated.
    let expr = cel::parse(&r.rule).ok()?;
    if cel::uses_old_self(&expr) && old.is_none() {
        return None;
    }
    let ty = s.type_.clone().unwrap_or_else(|| type_of(v).to_string());
    let field = match r.field_path.as_deref() {
        Some(fp) if !fp.is_empty() => {
            let mut p = path.clone();
            for part in fp.trim_start_matches('.').split('.') {
                p = child(&p, part);
            }
            p
        }
        _ => path.clone(),
    };
    let message = match cel::eval(&expr, &mut cel::Env::new(v, old)) {
        Ok(Value::Bool(true)) => return None,
        Ok(Value::Bool(false)) => r
            .message
            .clone()
            .filter(|m| !m.is_empty())
            .unwrap_or_else(|| format!("failed rule: {}", r.rule)),
        Ok(_) => format!("rule did not evaluate to a boolean: {}", r.rule),
        Err(e) => format!("{e} evaluating rule: {}", r.rule),
    };
    Some(match r.reason.as_deref() {
        Some("FieldValueForbidden") => FieldError::forbidden(&field, &message),
        Some("FieldValueRequired") => FieldError::required(&field, &message),
        _ => FieldError::invalid(&field, ty.as_str(), &message),
    })
}
