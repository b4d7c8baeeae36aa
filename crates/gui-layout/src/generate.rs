//! Random trees and layouts, for training the layout embedder, property tests and benches.

use gui_core::WidgetKind;
use rand::Rng;

use crate::{LayoutTree, NodeId};

/// A random recursive tree of `nodes` nodes: each new node hangs under a uniformly chosen
/// earlier one (expected depth grows like ln n), labels drawn from `labels`.
pub fn random_tree(rng: &mut impl Rng, nodes: usize, labels: &[&str]) -> LayoutTree {
    assert!(
        nodes >= 1 && !labels.is_empty(),
        "a tree needs a node and a label"
    );
    let pick = |rng: &mut dyn rand::RngCore| labels[(rng.next_u32() as usize) % labels.len()];
    let mut t = LayoutTree::new(pick(rng));
    for n in 1..nodes {
        let parent = NodeId(rng.random_range(0..n as u32));
        let label = pick(rng);
        t.add_child(parent, label);
    }
    t
}

/// A random four-level layout tree like those the characterisation produces:
/// `{screen{group{line{w:kind}...}...}...}` with 1..=max_groups groups, 1..=max_lines lines
/// per group and 1..=max_columns widgets per line; widget labels carry their kind when
/// `with_kinds`, else are plain `w`.
pub fn random_layout(
    rng: &mut impl Rng,
    max_groups: usize,
    max_lines: usize,
    max_columns: usize,
    with_kinds: bool,
) -> LayoutTree {
    let mut t = LayoutTree::new("screen");
    for _ in 0..rng.random_range(1..=max_groups.max(1)) {
        let g = t.add_child(t.root(), "group");
        for _ in 0..rng.random_range(1..=max_lines.max(1)) {
            let l = t.add_child(g, "line");
            for _ in 0..rng.random_range(1..=max_columns.max(1)) {
                let label = if with_kinds {
                    let k = WidgetKind::ALL[rng.random_range(0..WidgetKind::COUNT)];
                    format!("w:{}", serde_kind(k))
                } else {
                    "w".to_owned()
                };
                t.add_child(l, label);
            }
        }
    }
    t
}

/// The snake_case name of a widget kind, as used in labels.
pub(crate) fn serde_kind(k: WidgetKind) -> &'static str {
    match k {
        WidgetKind::Button => "button",
        WidgetKind::TextView => "text_view",
        WidgetKind::EditText => "edit_text",
        WidgetKind::CheckBox => "check_box",
        WidgetKind::ImageButton => "image_button",
        WidgetKind::ImageView => "image_view",
        WidgetKind::RadioButton => "radio_button",
        WidgetKind::Switch => "switch",
        WidgetKind::SeekBar => "seek_bar",
        WidgetKind::ProgressBar => "progress_bar",
        WidgetKind::Spinner => "spinner",
        WidgetKind::ListItem => "list_item",
        WidgetKind::Tab => "tab",
        WidgetKind::Icon => "icon",
    }
}
