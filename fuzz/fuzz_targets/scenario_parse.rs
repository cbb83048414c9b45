//! Fuzzes the scenario parser and runner: any UTF-8 text as a scenario file goes through
//! `parse_scenario`; a scenario that parses must print (`to_yaml`) as YAML that parses
//! again and must run a little (2 s virtual, 20,000 messages) without panicking.
//! The check is in fuzz/checks.rs, shared with crates/sim/tests/fuzz_inputs.rs.

#![no_main]

#[path = "../checks.rs"]
mod checks;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| checks::scenario_parse(data));
