//! API validation: `validate_create` and `validate_update` for every kind the apiserver serves.

pub mod meta;
pub mod names;
