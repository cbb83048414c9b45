//! Fuzzes share links: any UTF-8 text as a URL fragment goes through
//! `decode_share_fragment` (and a decoded scenario through `parse_scenario`) without
//! panicking, and any text encoded with `encode_share_fragment` decodes back to itself.
//! The check is in fuzz/checks.rs, shared with crates/sim/tests/fuzz_inputs.rs.

#![no_main]

#[path = "../checks.rs"]
mod checks;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| checks::share_link(data));
