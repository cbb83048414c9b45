//! Resource quantities (`100m`, `1.5Gi`): the apiserver's parser, shared by every component.

pub use crate::apiserver::quantity::{parse_quantity as parse, Quantity};
