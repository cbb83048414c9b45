//! The envelope: how much one scenario or command may ask of the engine.
//!
//! Everything runs synchronously in one thread (a browser tab), so a request past these
//! limits is refused up front with a message naming the limit, and every synchronous run
//! also stops at a budget of delivered events, so nothing freezes or runs out of memory.
//! The engine never reads a clock: budgets count events, not seconds. docs/design.md
//! §6.7 lists the limits.

use crate::time::{Time, MINUTE};

/// The most worker nodes a scenario (and `sim node add`) may have in all: Kubernetes'
/// tested scale limit.
pub const MAX_NODES: u32 = 5000;

/// The most pods the cluster may hold: the apiserver refuses a pod create past it, and a
/// workload whose replicas ask for more (`replicas: 2147483647`) up front.
pub const MAX_PODS: usize = 20_000;

/// The longest stretch of virtual time one scenario may span (a step's `at`,
/// `spec.until`, `kubeloop run --until`) and one `sim advance` may ask for: a day.
pub const MAX_DURATION: Time = 24 * 60 * MINUTE;

/// The most steps one scenario may have.
pub const MAX_STEPS: usize = 10_000;

/// The largest scenario text (YAML or JSON), in bytes; also the largest a share link
/// may inflate to.
pub const MAX_SCENARIO_BYTES: usize = 1 << 20;

/// The most messages one terminal command may deliver while it runs (a `sim advance`,
/// a `kubectl rollout status` waiting on a busy cluster): when it is spent the command
/// stops as if interrupted, and says so.
pub const MAX_EVENTS_PER_COMMAND: u64 = 2_000_000;

/// The most messages one scenario run (`kubeloop run`) may deliver in all.
pub const MAX_EVENTS_PER_RUN: u64 = 20_000_000;

/// The note a run that spent its event budget ends with.
pub fn budget_note(events: u64, now: Time) -> String {
    format!(
        "stopped at t={} after {events} events, the most one run may deliver (kubeloop's envelope, docs/design.md §6.7)",
        crate::time::format_duration(now)
    )
}
