//! kubeloop-web: the Leptos CSR page over the engine — an editor, a terminal, the cluster
//! diagram with messages in flight, the seven stages of the pod creation flow, and
//! failure switches, all on one world running in virtual time.
//!
//! Logic lives in plain modules ([`session`], [`terminal`], [`traffic`], [`geometry`],
//! [`highlight`], [`i18n`], [`startup`]) with unit tests; [`ui`] holds the thin views.

pub mod chip_text;
pub mod examples;
pub mod geometry;
pub mod highlight;
pub mod i18n;
pub mod inspect;
pub mod inspect_object;
pub mod label_spot;
pub mod lesson_progress;
pub mod lesson_view;
pub mod markdown;
pub mod proxy_svg;
pub mod session;
pub mod startup;
pub mod svg;
pub mod svg_summary;
pub mod terminal;
pub mod traffic;
pub mod transfer;
pub mod ui;

pub use ui::App;

/// std's allocator growing wasm memory geometrically, as the wasm benchmarks do
/// (crates/heap): dlmalloc alone grows it 64 KiB at a time, and each `memory.grow` is a
/// call into the browser's runtime. It also counts the heap in use for the status line.
/// Declared by the library so the page and its wasm tests run on the same heap.
#[cfg(target_arch = "wasm32")]
#[global_allocator]
static ALLOCATOR: kubeloop_heap::GrowAhead = kubeloop_heap::GrowAhead;

#[cfg(all(test, target_family = "wasm"))]
wasm_bindgen_test::wasm_bindgen_test_configure!(run_in_browser);
