//! Fuzzes the terminal's command language: each input is up to 8 lines typed into the
//! terminal of one long-lived cluster (replaced every 500 inputs). Nothing may panic and
//! every exit code must be one the real tool returns (kubectl 0/1, curl's, etcdctl's,
//! bash's 2 and 127, 130 for an interrupted command).
//! The check is in fuzz/checks.rs, shared with crates/sim/tests/fuzz_inputs.rs.

#![no_main]

#[path = "../checks.rs"]
mod checks;

use std::cell::RefCell;

use libfuzzer_sys::fuzz_target;

thread_local! {
    static TERMINAL: RefCell<checks::Terminal> = RefCell::new(checks::Terminal::default());
}

fuzz_target!(|data: &[u8]| TERMINAL.with(|t| t.borrow_mut().check(data)));
