//! Browser entry point: mounts the kubeloop app on the page body.

/// std's allocator growing wasm memory geometrically, as the wasm benchmarks do
/// (crates/heap): dlmalloc alone grows it 64 KiB at a time, and each `memory.grow` is a
/// call into the browser's runtime.
#[cfg(target_arch = "wasm32")]
#[global_allocator]
static ALLOCATOR: kubeloop_heap::GrowAhead = kubeloop_heap::GrowAhead;

fn main() {
    console_error_panic_hook::set_once();
    leptos::mount::mount_to_body(kubeloop_web::App);
}
