//! Placeholder validation (replaced by the full validation port).

use crate::apiserver::field_error::FieldError;
use crate::object::Object;

/// Validates a new object.
pub fn validate_create(obj: &Object) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if obj.name().is_empty() {
        errs.push(FieldError {
            field: "metadata.name".into(),
            message: "Required value: name or generateName is required".into(),
        });
    }
    errs
}

/// Validates an update.
pub fn validate_update(new: &Object, _old: &Object) -> Vec<FieldError> {
    validate_create(new)
}
