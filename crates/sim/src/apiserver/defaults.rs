//! Defaulting.
