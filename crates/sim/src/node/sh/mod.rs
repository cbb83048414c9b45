//! The container shell: a documented POSIX-shell subset (busybox ash as images ship it)
//! that `kubectl exec` and container commands run. It is pure: everything it touches
//! outside its own variables goes through [`Host`] (the container's files, its programs
//! that need the network, the clock), so it runs natively in tests and resumes across
//! virtual time: [`Shell::run`] stops at every `sleep` and says for how long.

mod applets;
mod expand;
mod interp;
mod lex;
mod parse;
mod simple;

pub use applets::APPLETS;
pub use interp::{Poll, Shell};

use crate::time::Time;

/// Why a file operation failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FsError {
    /// No such file or directory.
    NotFound,
    /// Is a directory.
    IsDir,
    /// Not a directory.
    NotDir,
    /// Read-only file system (a ConfigMap or Secret volume).
    ReadOnly,
}

/// What a command printed, its exit code, and how long it took.
pub use crate::node::kubelet_api::RunResult;

/// The world as a script in a container sees it.
pub trait Host {
    /// Current virtual time.
    fn now(&self) -> Time;
    /// The container's hostname (the pod's name).
    fn hostname(&self) -> String;
    /// A file's contents.
    fn read(&self, path: &str) -> Result<String, FsError>;
    /// A directory's entries, sorted.
    fn list(&self, path: &str) -> Result<Vec<String>, FsError>;
    /// Writes (or appends to) a file.
    fn write(&mut self, path: &str, text: &str, append: bool) -> Result<(), FsError>;
    /// Creates a directory.
    fn mkdir(&mut self, path: &str) -> Result<(), FsError>;
    /// Runs a program of the image that is not a shell built-in or applet here (curl,
    /// wget, nslookup, redis-cli …); None when the image has no such program.
    fn program(&mut self, argv: &[String], stdin: &str) -> Option<RunResult>;
}

/// Most output a script keeps before the oldest is dropped (the kubelet rotates logs).
pub const OUTPUT_CAP: usize = 1 << 20;
/// Most commands a script runs in one go before it yields (a loop without `sleep`).
pub const STEP_BUDGET: u64 = 100_000;

#[cfg(test)]
mod tests;
