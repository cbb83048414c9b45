//! Browser tests of the app: mount it in headless Chromium and look at the DOM.

use kubeloop_web::App;
use leptos::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

/// Mounts the app in a fresh container and returns that container.
fn mount_app() -> web_sys::HtmlElement {
    let container = document()
        .create_element("div")
        .expect("create container")
        .unchecked_into::<web_sys::HtmlElement>();
    document()
        .body()
        .expect("document has a body")
        .append_child(&container)
        .expect("append container");
    leptos::mount::mount_to(container.clone(), App).forget();
    container
}

fn count(container: &web_sys::HtmlElement, selector: &str) -> u32 {
    container
        .query_selector_all(selector)
        .expect("valid selector")
        .length()
}

#[wasm_bindgen_test]
fn should_render_cluster_diagram_with_three_nodes() {
    let app = mount_app();

    let svg = app
        .query_selector("svg[data-testid=cluster-diagram]")
        .expect("valid selector");
    assert!(svg.is_some(), "cluster diagram SVG is rendered");
    assert_eq!(
        count(
            &app,
            "[data-testid=cluster-diagram] [data-testid=node] rect"
        ),
        3
    );
    assert_eq!(
        app.query_selector("h1")
            .unwrap()
            .unwrap()
            .text_content()
            .as_deref(),
        Some("kubeloop")
    );
}

#[wasm_bindgen_test]
async fn should_add_a_node_when_add_node_is_clicked() {
    let app = mount_app();

    app.query_selector("[data-testid=add-node]")
        .unwrap()
        .expect("add-node button")
        .unchecked_into::<web_sys::HtmlElement>()
        .click();
    leptos::task::tick().await;

    assert_eq!(count(&app, "[data-testid=node]"), 4);
}
