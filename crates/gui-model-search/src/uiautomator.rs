//! UI Automator's view hierarchy dumps (`adb shell uiautomator dump`), and which control a
//! tap at a point reaches.
//!
//! Monkey's log gives only coordinates. The paper turned them into controls with UI
//! Automator's dump of the screen (each view's id, bounds and whether it is clickable);
//! [`UiDump::control_at`] does that lookup the way Android delivers a touch.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::{Error, Result};

/// One dumped screen.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UiDump {
    /// `rotation` of `<hierarchy>`: 0 portrait, 1..3 turned.
    pub rotation: i32,
    /// The top-level nodes (usually one window's decor view), in drawing order.
    pub roots: Vec<UiNode>,
}

/// A view in a dump, with its attributes as UI Automator writes them.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct UiNode {
    /// Position among its siblings.
    pub index: usize,
    pub text: String,
    pub resource_id: String,
    pub class: String,
    pub package: String,
    pub content_desc: String,
    pub checkable: bool,
    pub checked: bool,
    pub clickable: bool,
    pub enabled: bool,
    pub focusable: bool,
    pub focused: bool,
    pub scrollable: bool,
    pub long_clickable: bool,
    pub password: bool,
    pub selected: bool,
    /// `[x1, y1, x2, y2]` in screen pixels; the right and bottom edges are outside.
    pub bounds: [i32; 4],
    /// Children in drawing order (a later one is drawn over an earlier one).
    pub children: Vec<UiNode>,
}

impl UiNode {
    /// Whether (x, y) is inside the bounds (left and top edges in, right and bottom out,
    /// as Android's `Rect.contains`).
    pub fn contains(&self, x: f64, y: f64) -> bool {
        let [x1, y1, x2, y2] = self.bounds.map(f64::from);
        x >= x1 && x < x2 && y >= y1 && y < y2
    }

    /// Whether a tap on this view would be taken by it.
    pub fn takes_taps(&self) -> bool {
        self.clickable || self.long_clickable || self.checkable
    }

    /// This node and its descendants, parents first.
    pub fn walk(&self) -> Vec<&UiNode> {
        let mut out = Vec::new();
        let mut stack = vec![self];
        while let Some(n) = stack.pop() {
            out.push(n);
            stack.extend(n.children.iter().rev());
        }
        out
    }
}

/// What happened to a tap sent into a subtree.
enum Delivery<'d> {
    Taken(&'d UiNode),
    /// A disabled clickable view swallows the tap without reacting, as on Android.
    Swallowed,
    Passed,
}

fn deliver(node: &UiNode, x: f64, y: f64) -> Delivery<'_> {
    if !node.contains(x, y) {
        return Delivery::Passed;
    }
    // Children drawn last are on top and get the touch first; one that does not take it
    // lets it through to the ones below, then to the parent.
    for child in node.children.iter().rev() {
        match deliver(child, x, y) {
            Delivery::Passed => continue,
            done => return done,
        }
    }
    match (node.takes_taps(), node.enabled) {
        (true, true) => Delivery::Taken(node),
        (true, false) => Delivery::Swallowed,
        (false, _) => Delivery::Passed,
    }
}

impl UiDump {
    /// Reads the XML `uiautomator dump` writes. Errors say what is wrong and, for a bad
    /// node, where it is (the `index` path from the top, like `0/0/2`). A dump nesting
    /// elements more than [`UiHierarchy::MAX_DEPTH`] deep is refused before it is parsed:
    /// both the XML parser and this reader descend one stack frame per level.
    ///
    /// [`UiHierarchy::MAX_DEPTH`]: gui_core::UiHierarchy::MAX_DEPTH
    pub fn parse(xml: &str) -> std::result::Result<UiDump, String> {
        if let Some(at) = gui_core::UiHierarchy::too_deep_at(xml) {
            return Err(format!(
                "elements nest more than {} levels deep (line {})",
                gui_core::UiHierarchy::MAX_DEPTH,
                xml[..at].matches('\n').count() + 1
            ));
        }
        let doc = roxmltree::Document::parse(xml).map_err(|e| format!("not XML: {e}"))?;
        let root = doc.root_element();
        if root.tag_name().name() != "hierarchy" {
            return Err(format!(
                "the root element is <{}>, not <hierarchy>",
                root.tag_name().name()
            ));
        }
        let rotation = match root.attribute("rotation") {
            None => 0,
            Some(r) => r
                .trim()
                .parse()
                .map_err(|_| format!("rotation `{r}` is not a number"))?,
        };
        let roots = nodes_under(root)?;
        Ok(UiDump { rotation, roots })
    }

    /// Reads a dump file; errors name it.
    pub fn load(path: &Path) -> Result<UiDump> {
        let text = std::fs::read_to_string(path).map_err(|source| Error::Io {
            path: path.to_path_buf(),
            source,
        })?;
        UiDump::parse(&text).map_err(|message| Error::BadFile {
            path: path.to_path_buf(),
            message: format!("not a UI Automator dump: {message}"),
        })
    }

    /// The control a tap at (x, y) reaches: the topmost enabled view there that is
    /// clickable, long-clickable or checkable, found the way Android hands a touch down
    /// the tree (later siblings first, children before their parent). `None` when the tap
    /// lands on nothing that reacts, or on a disabled control (which swallows it).
    pub fn control_at(&self, x: f64, y: f64) -> Option<&UiNode> {
        for root in self.roots.iter().rev() {
            match deliver(root, x, y) {
                Delivery::Taken(n) => return Some(n),
                Delivery::Swallowed => return None,
                Delivery::Passed => {}
            }
        }
        None
    }

    /// Every node, parents first.
    pub fn nodes(&self) -> Vec<&UiNode> {
        self.roots.iter().flat_map(UiNode::walk).collect()
    }
}

/// The `<node>` elements under `root` as trees, in document order. Built with a stack of
/// open nodes rather than by recursion, so a dump as deep as
/// [`gui_core::UiHierarchy::MAX_DEPTH`] needs no deep call stack (unoptimised builds spend
/// kilobytes of stack per level on iterator adapters). A node's own attributes are checked
/// before its children, so the first error is the first bad node in document order.
fn nodes_under(root: roxmltree::Node<'_, '_>) -> std::result::Result<Vec<UiNode>, String> {
    struct Open<'a, 'input> {
        /// `None` for `root`, which is not a node itself.
        node: Option<UiNode>,
        path: String,
        /// The next child to look at, and how many `<node>` children came before it.
        cursor: Option<roxmltree::Node<'a, 'input>>,
        position: usize,
    }
    let mut open = vec![Open {
        node: None,
        path: String::new(),
        cursor: root.first_child(),
        position: 0,
    }];
    let mut roots = Vec::new();
    while let Some(top) = open.last_mut() {
        match top.cursor {
            Some(child) => {
                top.cursor = child.next_sibling();
                if !(child.is_element() && child.tag_name().name() == "node") {
                    continue;
                }
                let position = top.position;
                top.position += 1;
                let (node, path) = node(child, &top.path, position)?;
                open.push(Open {
                    node: Some(node),
                    path,
                    cursor: child.first_child(),
                    position: 0,
                });
            }
            None => {
                // Every child seen: the node is complete and joins its parent.
                if let Some(finished) = open.pop().and_then(|o| o.node) {
                    match open.last_mut().and_then(|o| o.node.as_mut()) {
                        Some(parent) => parent.children.push(finished),
                        None => roots.push(finished),
                    }
                }
            }
        }
    }
    Ok(roots)
}

/// One `<node>`'s attributes, without its children, and its path for error messages.
fn node(
    n: roxmltree::Node<'_, '_>,
    parent: &str,
    position: usize,
) -> std::result::Result<(UiNode, String), String> {
    let index_attr = n.attribute("index");
    let step = index_attr.map_or_else(|| position.to_string(), str::to_string);
    let path = if parent.is_empty() {
        step
    } else {
        format!("{parent}/{step}")
    };
    let index = match index_attr {
        None => position,
        Some(i) => i
            .trim()
            .parse()
            .map_err(|_| format!("node {path}: index `{i}` is not a number"))?,
    };
    let text = |name: &str| n.attribute(name).unwrap_or("").to_string();
    let flag = |name: &str, default: bool| match n.attribute(name) {
        None => Ok(default),
        Some("true") => Ok(true),
        Some("false") => Ok(false),
        Some(v) => Err(format!("node {path}: {name}=`{v}` is not true or false")),
    };
    let bounds = match n.attribute("bounds") {
        None => return Err(format!("node {path} has no bounds")),
        Some(b) => parse_bounds(b).ok_or_else(|| {
            format!("node {path}: bounds `{b}` are not `[x1,y1][x2,y2]` with x1<=x2, y1<=y2")
        })?,
    };
    let node = UiNode {
        index,
        text: text("text"),
        resource_id: text("resource-id"),
        class: text("class"),
        package: text("package"),
        content_desc: text("content-desc"),
        checkable: flag("checkable", false)?,
        checked: flag("checked", false)?,
        clickable: flag("clickable", false)?,
        // A view is enabled unless it says otherwise.
        enabled: flag("enabled", true)?,
        focusable: flag("focusable", false)?,
        focused: flag("focused", false)?,
        scrollable: flag("scrollable", false)?,
        long_clickable: flag("long-clickable", false)?,
        password: flag("password", false)?,
        selected: flag("selected", false)?,
        bounds,
        children: Vec::new(),
    };
    Ok((node, path))
}

/// `[0,63][1080,210]`.
fn parse_bounds(b: &str) -> Option<[i32; 4]> {
    let inner = b.trim().strip_prefix('[')?.strip_suffix(']')?;
    let (a, c) = inner.split_once("][")?;
    let pair = |s: &str| -> Option<(i32, i32)> {
        let (x, y) = s.split_once(',')?;
        Some((x.trim().parse().ok()?, y.trim().parse().ok()?))
    };
    let ((x1, y1), (x2, y2)) = (pair(a)?, pair(c)?);
    (x1 <= x2 && y1 <= y2).then_some([x1, y1, x2, y2])
}
