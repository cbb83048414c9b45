//! Browser entry point: mounts the kubeloop app on the page body.

// The allocator (crates/heap) is declared by the library.

fn main() {
    console_error_panic_hook::set_once();
    leptos::mount::mount_to_body(kubeloop_web::App);
}
