//! Admission plugins' pure logic.
