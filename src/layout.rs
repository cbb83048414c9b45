//! Geometry of the cluster diagram: where each worker node's rectangle goes.

/// Width of one node rectangle, in SVG user units.
pub const NODE_WIDTH: f64 = 120.0;
/// Height of one node rectangle, in SVG user units.
pub const NODE_HEIGHT: f64 = 80.0;
/// Space around and between node rectangles.
pub const GAP: f64 = 20.0;

/// One worker node's rectangle in the diagram.
#[derive(Debug, Clone, PartialEq)]
pub struct NodeBox {
    /// The node's name, e.g. `node-1`.
    pub name: String,
    /// Left edge.
    pub x: f64,
    /// Top edge.
    pub y: f64,
}

/// Lays out `count` nodes named `node-1` … `node-<count>` in one row.
pub fn node_boxes(count: usize) -> Vec<NodeBox> {
    (0..count)
        .map(|i| NodeBox {
            name: format!("node-{}", i + 1),
            x: GAP + i as f64 * (NODE_WIDTH + GAP),
            y: GAP,
        })
        .collect()
}

/// The SVG `viewBox` that fits `count` node rectangles.
pub fn view_box(count: usize) -> String {
    let n = count.max(1) as f64;
    let width = GAP + n * (NODE_WIDTH + GAP);
    let height = 2.0 * GAP + NODE_HEIGHT;
    format!("0 0 {width} {height}")
}
