//! The engine's memory as the status line shows it: the wasm heap in use (what the page
//! allocated and has not freed: the cluster, its history and the views) and the wasm
//! memory it grew to, which never shrinks and cannot pass 4 GiB.

const MIB: usize = 1 << 20;

/// One reading, in whole MiB (a signal changes only when a figure does).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reading {
    /// Heap in use.
    pub in_use_mib: u32,
    /// Wasm memory (the heap's reservation).
    pub memory_mib: u32,
}

impl Reading {
    /// From byte counts, rounded up so that a heap in use always reads at least 1 MiB.
    pub fn from_bytes(in_use: usize, memory: usize) -> Self {
        let mib = |b: usize| u32::try_from(b.div_ceil(MIB)).unwrap_or(u32::MAX);
        Reading {
            in_use_mib: mib(in_use),
            memory_mib: mib(memory),
        }
    }

    /// The status line's text: `312 MiB`, `1.4 GiB` from 1,000 MiB.
    pub fn text(&self) -> String {
        size_text(self.in_use_mib)
    }
}

/// `312 MiB`, `1.4 GiB`.
pub fn size_text(mib: u32) -> String {
    if mib < 1000 {
        format!("{mib} MiB")
    } else {
        format!("{:.1} GiB", f64::from(mib) / 1024.0)
    }
}

/// The page's reading now (none outside wasm32, where the allocator is the system's).
pub fn read() -> Option<Reading> {
    #[cfg(target_arch = "wasm32")]
    {
        Some(Reading::from_bytes(
            kubeloop_heap::heap_in_use(),
            kubeloop_heap::memory_bytes(),
        ))
    }
    #[cfg(not(target_arch = "wasm32"))]
    {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasm_bindgen_test::wasm_bindgen_test;

    #[wasm_bindgen_test(unsupported = test)]
    fn should_read_whole_mib_rounded_up_and_switch_to_gib() {
        let r = Reading::from_bytes(MIB + 1, 64 * MIB);
        assert_eq!((r.in_use_mib, r.memory_mib), (2, 64));
        assert_eq!(r.text(), "2 MiB");
        assert_eq!(Reading::from_bytes(1, 0).in_use_mib, 1);
        assert_eq!(size_text(999), "999 MiB");
        assert_eq!(size_text(1434), "1.4 GiB");
        assert_eq!(size_text(4096), "4.0 GiB");
    }

    #[cfg(target_arch = "wasm32")]
    #[wasm_bindgen_test]
    fn should_count_what_the_page_allocates() {
        let before = read().expect("wasm32 counts its heap");
        // black_box: an allocation nothing reads could be optimised away.
        let block = std::hint::black_box(vec![1u8; 8 * MIB]);
        let during = read().unwrap();
        assert!(
            during.in_use_mib >= before.in_use_mib + 7,
            "{before:?} → {during:?}"
        );
        assert!(during.memory_mib >= during.in_use_mib);
        drop(block);
        let after = read().unwrap();
        assert!(
            after.in_use_mib + 7 <= during.in_use_mib,
            "{during:?} → {after:?}"
        );
    }
}
