//! Browser tests of the app: mount it in headless Chromium, act like a user, look at the DOM.

use std::time::Duration;

use kubeloop_web::App;
use leptos::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_test::*;
use web_sys::{HtmlElement, HtmlInputElement};

wasm_bindgen_test_configure!(run_in_browser);

/// A mounted app; dropping it unmounts it (and stops its animation loop).
struct Mounted {
    root: HtmlElement,
    _handle: leptos::mount::UnmountHandle<leptos::tachys::view::any_view::AnyViewState>,
}

impl Drop for Mounted {
    fn drop(&mut self) {
        self.root.remove();
    }
}

/// Mounts the app on a clean slate: nothing saved, no hash.
fn mount() -> Mounted {
    kubeloop_web::ui::clear_saved();
    mount_with_hash("")
}

fn mount_with_hash(hash: &str) -> Mounted {
    let w = window();
    let path = w.location().pathname().unwrap_or_default();
    w.history()
        .unwrap()
        .replace_state_with_url(
            &wasm_bindgen::JsValue::NULL,
            "",
            Some(&format!("{path}{hash}")),
        )
        .unwrap();
    let root = document()
        .create_element("div")
        .unwrap()
        .unchecked_into::<HtmlElement>();
    document().body().unwrap().append_child(&root).unwrap();
    let handle = leptos::mount::mount_to(root.clone(), || App().into_any());
    Mounted {
        root,
        _handle: handle,
    }
}

impl Mounted {
    /// Every element matching (SVG ones too: they are not `HtmlElement`s).
    fn all(&self, selector: &str) -> Vec<web_sys::Element> {
        let list = self.root.query_selector_all(selector).unwrap();
        (0..list.length())
            .filter_map(|i| list.get(i)?.dyn_into::<web_sys::Element>().ok())
            .collect()
    }

    fn one(&self, selector: &str) -> HtmlElement {
        self.root
            .query_selector(selector)
            .unwrap()
            .unwrap_or_else(|| panic!("no {selector}"))
            .unchecked_into()
    }

    fn count(&self, selector: &str) -> usize {
        self.all(selector).len()
    }

    fn text(&self, selector: &str) -> String {
        self.one(selector).text_content().unwrap_or_default()
    }

    fn click(&self, testid: &str) {
        self.one(&format!("[data-testid={testid}]")).click();
    }

    /// Types a command in the terminal and presses Enter.
    fn run(&self, line: &str) {
        let input: HtmlInputElement = self.one("[data-testid=terminal-input]").unchecked_into();
        input.set_value(line);
        input.dispatch_event(&bubbling("input")).unwrap();
        let init = web_sys::KeyboardEventInit::new();
        init.set_key("Enter");
        init.set_bubbles(true);
        let enter =
            web_sys::KeyboardEvent::new_with_keyboard_event_init_dict("keydown", &init).unwrap();
        input.dispatch_event(&enter).unwrap();
    }

    /// Waits (up to 20 s of wall time) until `check` holds.
    async fn until(&self, what: &str, check: impl Fn(&Mounted) -> bool) {
        for _ in 0..400 {
            if check(self) {
                return;
            }
            gloo_timers::future::sleep(Duration::from_millis(50)).await;
        }
        panic!("timed out waiting for {what}");
    }
}

/// Calls a method of the code editor's JavaScript object (`kubeloop` on its content).
fn editor_call(app: &Mounted, method: &str, arg: Option<&str>) -> wasm_bindgen::JsValue {
    let el = app.one("[data-testid=editor-input]");
    let editor = js_sys::Reflect::get(&el, &"kubeloop".into()).unwrap();
    let f: js_sys::Function = js_sys::Reflect::get(&editor, &method.into())
        .unwrap()
        .unchecked_into();
    match arg {
        Some(a) => f.call1(&editor, &a.into()).unwrap(),
        None => f.call0(&editor).unwrap(),
    }
}

/// The open file's text as the editor shows it, once it shows one.
async fn editor_text(app: &Mounted) -> String {
    app.until("the editor to show a file", |a| {
        a.all("[data-testid=editor-input][data-file]").len() == 1
    })
    .await;
    editor_call(app, "text", None)
        .as_string()
        .unwrap_or_default()
}

fn bubbling(name: &str) -> web_sys::Event {
    let init = web_sys::EventInit::new();
    init.set_bubbles(true);
    web_sys::Event::new_with_event_init_dict(name, &init).unwrap()
}

#[wasm_bindgen_test]
async fn should_render_the_diagram_with_three_nodes_and_the_default_deployment() {
    let app = mount();
    leptos::task::tick().await;
    assert_eq!(
        app.count("svg[data-testid=cluster-diagram] [data-testid=node]"),
        3
    );
    assert_eq!(app.count("[data-testid=component]"), 4);
    assert_eq!(app.text("h1"), "kubeloop");
    let text = editor_text(&app).await;
    assert!(text.contains("replicas: 3") && text.contains("image: nginx:1.27"));
    assert_eq!(app.count("[data-testid=stage]"), 7);
}

#[wasm_bindgen_test]
async fn should_show_three_node_rows_for_kubectl_get_nodes() {
    let app = mount();
    leptos::task::tick().await;
    app.run("kubectl get nodes");
    app.until("kubectl get nodes output", |a| {
        a.all("[data-testid=terminal-line]")
            .iter()
            .any(|l| l.text_content().unwrap_or_default().starts_with("node-3"))
    })
    .await;
    let rows = app
        .all("[data-testid=terminal-line].out")
        .iter()
        .filter(|l| l.text_content().unwrap_or_default().starts_with("node-"))
        .count();
    assert_eq!(rows, 3);
    assert!(app
        .text("[data-testid=terminal-output]")
        .contains("$kubectl get nodes"));
}

#[wasm_bindgen_test]
async fn should_mark_a_yaml_error_at_its_line() {
    let app = mount();
    leptos::task::tick().await;
    let text = editor_text(&app).await;
    editor_call(
        &app,
        "paste",
        Some(&text.replace("  replicas: 3", " replicas: 3")),
    );
    app.until("the problem listed", |a| {
        a.count("[data-testid=editor-error]") == 1
    })
    .await;
    let errors = app.all("[data-testid=editor-error]");
    assert_eq!(errors.len(), 1);
    assert_eq!(errors[0].get_attribute("data-line").as_deref(), Some("9"));
    assert!(errors[0]
        .text_content()
        .unwrap_or_default()
        .contains("mapping values are not allowed"));
    app.until("the line and the squiggle marked", |a| {
        a.all(".cm-lineNumbers .cm-error-line")
            .iter()
            .any(|e| e.text_content().as_deref() == Some("9"))
            && a.count(".cm-line .cm-lintRange-error") == 1
    })
    .await;
}

#[wasm_bindgen_test]
async fn should_run_three_pods_after_apply() {
    let app = mount();
    leptos::task::tick().await;
    app.click("speed-8");
    app.click("apply");
    app.until("three Ready pods", |a| {
        a.count("[data-testid=pod][data-namespace=default][data-class=ready]") == 3
    })
    .await;
    let nodes: std::collections::BTreeSet<String> = app
        .all("[data-testid=pod][data-namespace=default]")
        .iter()
        .filter_map(|p| p.get_attribute("data-node"))
        .collect();
    assert!(nodes.len() >= 2, "spread over nodes: {nodes:?}");
    let memory = app.one("[data-testid=memory]");
    let mib: u32 = memory
        .get_attribute("data-mib")
        .and_then(|m| m.parse().ok())
        .unwrap_or(0);
    assert!(mib > 0, "the status line shows the heap in use");
    assert!(memory
        .text_content()
        .unwrap_or_default()
        .ends_with(&format!("{mib} MiB")));
    // The flow is a panel: while the engine is behind, it is told of a redraw a frame
    // after the diagram (design.md 6.8), so it may light a frame later.
    app.until("the first six stages lit", |a| {
        a.all("[data-testid=stage]")
            .iter()
            .take(6)
            .all(|s| s.get_attribute("data-state").as_deref() == Some("lit"))
    })
    .await;
}

#[wasm_bindgen_test]
async fn should_keep_the_work_when_a_share_link_is_bad() {
    kubeloop_web::ui::clear_saved();
    let app = mount_with_hash("#s=not*base64");
    leptos::task::tick().await;
    assert!(app
        .text("[data-testid=banner]")
        .contains("could not be opened"));
    assert!(editor_text(&app).await.contains("kind: Deployment"));
    assert_eq!(
        window().location().hash().unwrap_or_default(),
        "",
        "the bad link is dropped from the address"
    );
    app.click("banner-dismiss");
    leptos::task::tick().await;
    assert_eq!(app.count("[data-testid=banner]"), 0);
}

#[wasm_bindgen_test]
async fn should_stop_the_scheduler_with_its_switch() {
    let app = mount();
    leptos::task::tick().await;
    app.click("switch-kube-scheduler");
    app.until("the scheduler drawn stopped", |a| {
        a.count("[data-testid=component][data-name=kube-scheduler][data-state=stopped]") == 1
    })
    .await;
    assert!(app
        .text("[data-testid=terminal-output]")
        .contains("sim stop kube-scheduler"));
    assert_eq!(
        app.one("[data-testid=switch-kube-scheduler]")
            .get_attribute("aria-checked")
            .as_deref(),
        Some("false")
    );
}

#[wasm_bindgen_test]
async fn should_switch_language() {
    let app = mount();
    leptos::task::tick().await;
    assert_eq!(app.text("[data-testid=apply]").trim(), "▶ Apply");
    app.click("lang");
    leptos::task::tick().await;
    assert_eq!(app.text("[data-testid=apply]").trim(), "▶ 应用");
    app.click("lang");
    kubeloop_web::ui::clear_saved();
}

#[wasm_bindgen_test]
async fn should_inspect_the_deployment_from_the_object_browser() {
    kubeloop_web::ui::clear_saved();
    let app = mount();
    leptos::task::tick().await;
    app.click("speed-8");
    app.click("apply");
    let deploy = "[data-testid=object-item][data-object=\"Deployment/default/nginx\"]";
    app.until("the Deployment in the browser", |a| a.count(deploy) == 1)
        .await;
    app.one(deploy).click();
    app.until("its inspector", |a| {
        a.count("[data-testid=inspect-yaml]") == 1
    })
    .await;
    assert!(app
        .text("[data-testid=inspect-yaml]")
        .starts_with("apiVersion: apps/v1\nkind: Deployment\n"));
    app.click("inspect-tab-etcd");
    app.until("its etcd key", |a| {
        a.count("[data-testid=inspect-etcd-key]") == 1
    })
    .await;
    assert_eq!(
        app.text("[data-testid=inspect-etcd-key]"),
        "/registry/deployments/default/nginx"
    );
    app.click("browser-tab-etcd");
    app.until("the watch stream", |a| {
        a.count("[data-testid=watch-event]") > 0
    })
    .await;
}
