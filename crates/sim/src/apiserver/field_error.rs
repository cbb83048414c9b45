//! Placeholder field errors (replaced by the full field.Error port).

/// One validation error.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldError {
    /// Field path.
    pub field: String,
    /// Rendered message.
    pub message: String,
}

/// The Invalid status message.
pub fn invalid_message(kind: &str, group: &str, name: &str, errs: &[FieldError]) -> String {
    let k = if group.is_empty() {
        kind.to_string()
    } else {
        format!("{kind}.{group}")
    };
    let parts: Vec<String> = errs
        .iter()
        .map(|e| format!("{}: {}", e.field, e.message))
        .collect();
    if parts.len() == 1 {
        format!("{k} \"{name}\" is invalid: {}", parts[0])
    } else {
        format!("{k} \"{name}\" is invalid: [{}]", parts.join(", "))
    }
}

impl std::fmt::Display for FieldError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.field, self.message)
    }
}
