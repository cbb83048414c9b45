//! Placeholder defaulting (replaced by the full SetDefaults_* port).

use crate::object::Object;

/// Applies upstream defaults in place.
pub fn set_defaults(obj: &mut Object) {
    if let Object::Pod(p) = obj {
        if let Some(spec) = p.spec.as_mut() {
            spec.restart_policy.get_or_insert_with(|| "Always".into());
            spec.termination_grace_period_seconds.get_or_insert(30);
            spec.scheduler_name
                .get_or_insert_with(|| "default-scheduler".into());
        }
    }
}
