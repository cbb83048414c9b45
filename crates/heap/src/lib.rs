//! The allocator of kubeloop's wasm32 builds (the page and bench/wasm): std's (dlmalloc),
//! which grows wasm memory a few 64 KiB pages at a time as the heap fills; every
//! `memory.grow` is a call into V8's runtime, and a run that builds a 5,000-node cluster
//! makes thousands of them (a third of SchedulingBasic's time in V8 went there and to the
//! garbage collector it wakes; 1,063 → 2,255 pods/s with this allocator on the same
//! loaded machine). Whenever dlmalloc has just grown memory, [`GrowAhead`] grows it
//! further right away (by as much as memory already is, at most 128 MiB) and hands that
//! space to dlmalloc as free blocks, so growth is geometric.
//!
//! Each wasm32 binary declares it:
//!
//! ```ignore
//! #[cfg(target_arch = "wasm32")]
//! #[global_allocator]
//! static ALLOCATOR: kubeloop_heap::GrowAhead = kubeloop_heap::GrowAhead;
//! ```
//!
//! It also counts the bytes in use ([`heap_in_use`]), which the page's status line shows.
//!
//! On other targets the crate is empty.

#![no_std]

#[cfg(target_arch = "wasm32")]
mod heap;

#[cfg(target_arch = "wasm32")]
pub use heap::{heap_in_use, memory_bytes, memory_mib, GrowAhead};
