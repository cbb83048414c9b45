//! The root view: title, cluster diagram and controls.

use leptos::prelude::*;

use crate::layout::{node_boxes, view_box, NODE_HEIGHT, NODE_WIDTH};

/// Worker nodes a new cluster starts with (design §3.1: node-1 … node-3).
const DEFAULT_NODES: usize = 3;

/// The kubeloop page.
#[component]
pub fn App() -> impl IntoView {
    let node_count = RwSignal::new(DEFAULT_NODES);
    let boxes = Memo::new(move |_| node_boxes(node_count.get()));

    view! {
        <main class="kubeloop">
            <h1>"kubeloop"</h1>
            <svg
                data-testid="cluster-diagram"
                class="cluster-diagram"
                role="img"
                aria-label="cluster diagram"
                viewBox=move || view_box(node_count.get())
            >
                <For each=move || boxes.get() key=|b| b.name.clone() let:b>
                    <g data-testid="node" class="node">
                        <rect x=b.x y=b.y width=NODE_WIDTH height=NODE_HEIGHT rx="6" />
                        <text x=b.x + NODE_WIDTH / 2.0 y=b.y + NODE_HEIGHT / 2.0>
                            {b.name.clone()}
                        </text>
                    </g>
                </For>
            </svg>
            <button data-testid="add-node" on:click=move |_| node_count.update(|n| *n += 1)>
                "Add node"
            </button>
        </main>
    }
}
