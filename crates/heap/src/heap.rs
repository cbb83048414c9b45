//! [`GrowAhead`]: `System`, growing memory geometrically (see the crate's documentation).

extern crate std;

use core::alloc::{GlobalAlloc, Layout};
use core::arch::wasm32::memory_size;
use core::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::alloc::System;

const PAGE: usize = 64 * 1024;
/// Reserve in 1 MiB blocks: each costs dlmalloc one grow, and once freed they coalesce
/// into its free space (`memory_mib` after a run shows nothing is lost).
const BLOCK: usize = 1 << 20;
const MAX_AHEAD: usize = 128 << 20;

/// `System`, growing memory geometrically.
pub struct GrowAhead;

static RESERVING: AtomicBool = AtomicBool::new(false);
/// Bytes the program holds through this allocator (allocated and not yet freed); the
/// blocks `after` reserves ahead are not counted.
static IN_USE: AtomicUsize = AtomicUsize::new(0);

/// Bytes of heap in use: what the program allocated and has not freed.
pub fn heap_in_use() -> usize {
    IN_USE.load(Ordering::Relaxed)
}

/// Wasm memory size in bytes (how much the heap grew to; it never shrinks).
pub fn memory_bytes() -> usize {
    memory_size::<0>() * PAGE
}

fn count(p: *mut u8, add: usize, sub: usize) {
    if !p.is_null() {
        IN_USE.fetch_add(add, Ordering::Relaxed);
        IN_USE.fetch_sub(sub, Ordering::Relaxed);
    }
}

/// Wasm memory size in MiB (how much the heap grew to).
pub fn memory_mib() -> u32 {
    (memory_size::<0>() / 16) as u32
}

impl GrowAhead {
    /// If memory grew since `before` (pages), reserve more ahead of need.
    ///
    /// # Safety
    /// Called only from the allocator's own methods (it allocates through `System`).
    unsafe fn after(&self, before: usize) {
        let now = memory_size::<0>();
        if now <= before || RESERVING.swap(true, Ordering::Relaxed) {
            return;
        }
        let ahead = (now * PAGE).min(MAX_AHEAD);
        // SAFETY: BLOCK is non-zero and 8 is a power of two.
        let layout = unsafe { Layout::from_size_align_unchecked(BLOCK, 8) };
        // Allocate blocks chained through their first word, then free them all.
        let mut head: *mut u8 = core::ptr::null_mut();
        for _ in 0..ahead / BLOCK {
            // SAFETY: a non-zero-sized layout.
            let b = unsafe { System.alloc(layout) };
            if b.is_null() {
                break;
            }
            // SAFETY: `b` is a fresh, 8-aligned block of BLOCK bytes.
            unsafe { b.cast::<*mut u8>().write(head) };
            head = b;
        }
        while !head.is_null() {
            // SAFETY: every block in the chain was allocated above with `layout` and holds
            // the next block's address in its first word.
            unsafe {
                let next = head.cast::<*mut u8>().read();
                System.dealloc(head, layout);
                head = next;
            }
        }
        RESERVING.store(false, Ordering::Relaxed);
    }
}

// SAFETY: every method forwards to `System` unchanged; `after` only allocates and frees
// whole blocks of its own.
unsafe impl GlobalAlloc for GrowAhead {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let before = memory_size::<0>();
        // SAFETY: the caller's contract, forwarded.
        unsafe {
            let p = System.alloc(layout);
            count(p, layout.size(), 0);
            self.after(before);
            p
        }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let before = memory_size::<0>();
        // SAFETY: the caller's contract, forwarded.
        unsafe {
            let p = System.alloc_zeroed(layout);
            count(p, layout.size(), 0);
            self.after(before);
            p
        }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract, forwarded.
        unsafe { System.dealloc(ptr, layout) }
        IN_USE.fetch_sub(layout.size(), Ordering::Relaxed);
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let before = memory_size::<0>();
        // SAFETY: the caller's contract, forwarded.
        unsafe {
            let p = System.realloc(ptr, layout, new_size);
            count(p, new_size, layout.size());
            self.after(before);
            p
        }
    }
}
