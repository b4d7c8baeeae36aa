//! Layout characterisation, PIRLTest Section 3.1.2 (Fig. 4 and Fig. 5): the widget boxes of
//! one screen become the four-level hierarchy *whole screen → Groups → Lines → Columns*.
//!
//! - **Group** (red contours in Fig. 4): widgets that are close to each other, because
//!   designers place related widgets together and unrelated ones apart. We take the
//!   connected components of a "near" relation between boxes (single-linkage
//!   clustering), close to what dilating every box and labelling the connected blobs of a
//!   widget mask would give in the pixel domain.
//! - **Line** (blue): within a Group, the horizontal rows: connected components of the
//!   "share a row" relation (vertical extents overlapping enough).
//! - **Column** (green): the widgets of a Line from left to right. The paper calls this
//!   level "actually the real widgets", so every widget is one Column, and each Line has
//!   its own number of Columns.
//!
//! The paper names the levels but gives no thresholds; ours are in [`LayoutConfig`] with
//! the reasons for their defaults. The result is deterministic: it depends on the set of
//! boxes, never on the order they were passed in (see [`characterise`]).

use std::cmp::Ordering;
use std::fmt;

use gui_core::{Rect, Size, Widget, WidgetKind};
use serde::{Deserialize, Serialize};

use crate::LayoutTree;
use crate::generate::serde_kind;

/// A distance threshold, in the pixels of the boxes or relative to the screen.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Gap {
    /// A number of pixels in the units of the widget boxes.
    Pixels(f64),
    /// A fraction of the screen's shorter side, for boxes in device pixels of unknown
    /// density: a phone's shorter side is about 412 dp whether its screenshot is 412 or
    /// 1080 pixels wide. It overestimates the density of landscape desktop screens (a
    /// 1280 × 800 window counts as twice a phone's).
    ShorterSideFraction(f64),
}

impl Gap {
    /// The threshold in pixels on a screen of `screen`.
    pub fn resolve(self, screen: Size) -> f64 {
        match self {
            Gap::Pixels(px) => px,
            Gap::ShorterSideFraction(f) => f * f64::from(screen.width.min(screen.height)),
        }
    }
}

/// Thresholds of the characterisation.
///
/// Pixel defaults are in logical pixels (CSS pixels, Android dp), the units of
/// `Device::viewport` and of actions, in which a desktop browser window and a phone
/// screen have about the same density. For boxes in device pixels, use
/// [`LayoutConfig::scaled`] with the screenshot's scale.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct LayoutConfig {
    /// Two widgets are near, and so in one Group, when the whitespace between them is at
    /// most this both horizontally and vertically: one above the other with a gap of at
    /// most this, or diagonal neighbours within this along both axes. Overlapping and
    /// touching boxes are always near.
    ///
    /// Default: 20 px, between Material Design's 8–16 dp spacing of related elements (a
    /// label and its field, consecutive fields, an icon and its name) and the 24 dp or more
    /// that separates sections.
    pub group_gap: Gap,
    /// For two widgets that share a row (see [`line_overlap`](Self::line_overlap)), the
    /// horizontal whitespace allowed between them instead of
    /// [`group_gap`](Self::group_gap).
    ///
    /// Default: 64 px. Rows spread their widgets over the width: a dock of four icons on a
    /// phone leaves about 40 dp between them, a bottom navigation bar of four destinations
    /// about 55 dp between its labels, so whitespace inside a row is wider than between the
    /// rows of a Group; the paper likewise calls Groups a horizontal operation. The wider
    /// allowance holds for widgets sharing a row only, so that rows are not joined through
    /// a diagonal neighbour far to the side.
    pub group_gap_in_row: Gap,
    /// Two widgets share a row when their vertical extents overlap by more than zero
    /// pixels and by at least this fraction of the taller one's height. Lines are the
    /// connected components of this relation within a Group; the same relation tells
    /// which widgets are side by side for [`group_gap_in_row`](Self::group_gap_in_row),
    /// and which Groups are read left to right as one band.
    ///
    /// Default: 0.3. A label beside a field twice its height overlaps half of it; an avatar
    /// beside a title and a snippet (a list row) overlaps each by a third to a half, so the
    /// row stays one Line; consecutive lines of text do not overlap at all. Measuring
    /// against the taller widget lets one more than about three times as tall as its
    /// neighbours (a chart beside a task list) span their rows on a Line of its own
    /// instead of fusing them into one.
    pub line_overlap: f64,
}

impl Default for LayoutConfig {
    fn default() -> Self {
        Self {
            group_gap: Gap::Pixels(20.0),
            group_gap_in_row: Gap::Pixels(64.0),
            line_overlap: 0.3,
        }
    }
}

impl LayoutConfig {
    /// The same configuration for boxes `factor` times larger, such as boxes in device
    /// pixels with `factor` the screenshot's scale: pixel gaps are multiplied, fractions
    /// kept.
    pub fn scaled(&self, factor: f64) -> Self {
        let scale = |gap: Gap| match gap {
            Gap::Pixels(px) => Gap::Pixels(px * factor),
            fraction => fraction,
        };
        Self {
            group_gap: scale(self.group_gap),
            group_gap_in_row: scale(self.group_gap_in_row),
            line_overlap: self.line_overlap,
        }
    }
}

/// The fourth level: one widget, where it sits in the input, its box clipped to the screen.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Column {
    /// Position of the widget in the slice given to [`characterise`].
    pub index: usize,
    /// The input widget, with `rect` clipped to the screen.
    pub widget: Widget,
}

/// A horizontal row of widgets within a [`Group`], left to right.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Line {
    /// The smallest box holding the Line's widgets.
    pub bounds: Rect,
    pub columns: Vec<Column>,
}

/// Widgets close to each other, as Lines from top to bottom.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Group {
    /// The smallest box holding the Group's widgets.
    pub bounds: Rect,
    pub lines: Vec<Line>,
}

/// The characterised layout of one screen: Groups in reading order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Layout {
    pub screen: Size,
    pub groups: Vec<Group>,
    /// Input positions of the widgets with nothing visible on the screen (a zero-sized box
    /// or one wholly outside), in increasing order. Every input position is in exactly one
    /// Column or here.
    pub dropped: Vec<usize>,
}

/// How widgets are labelled in [`Layout::tree`]; groups and lines are always `group` and
/// `line`, the root `screen`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum TreeLabels {
    /// Every widget is `w`: the tree is the bare arrangement.
    #[default]
    Plain,
    /// `w:<kind>` with the snake_case kind (`w:edit_text`), as [`crate::random_layout`]
    /// labels its widgets.
    Kinds,
}

impl TreeLabels {
    fn widget(self, kind: WidgetKind) -> String {
        match self {
            TreeLabels::Plain => "w".to_owned(),
            TreeLabels::Kinds => format!("w:{}", serde_kind(kind)),
        }
    }
}

impl Layout {
    /// The layout tree of Fig. 5: `{screen{group{line{w}{w}}{line{w}}}{group...}}`, with
    /// groups, lines and widgets in the order of the characterisation. A screen without
    /// visible widgets is `{screen}`.
    pub fn tree(&self, labels: TreeLabels) -> LayoutTree {
        let mut tree = LayoutTree::new("screen");
        for group in &self.groups {
            let g = tree.add_child(tree.root(), "group");
            for line in &group.lines {
                let l = tree.add_child(g, "line");
                for column in &line.columns {
                    tree.add_child(l, labels.widget(column.widget.kind));
                }
            }
        }
        tree
    }

    /// The widgets in reading order: group by group, line by line, left to right.
    pub fn columns(&self) -> impl Iterator<Item = &Column> {
        self.groups
            .iter()
            .flat_map(|g| &g.lines)
            .flat_map(|l| &l.columns)
    }

    /// Number of characterised (visible) widgets.
    pub fn widget_count(&self) -> usize {
        self.columns().count()
    }
}

/// Characterises the layout of a screen of size `screen` from its widget boxes.
///
/// Decisions the paper leaves open:
/// - **Off-screen and empty boxes.** Every box is clipped to the screen first and the
///   visible part is what counts, both for closeness and in the output (a widget scrolled
///   half out of view sits where its visible half is). A box with nothing visible, such as
///   a zero-sized one, is left out of the layout and listed in [`Layout::dropped`].
/// - **Duplicates** are kept, one Column each: removing double detections is the
///   detector's business (non-maximum suppression), and dropping one here would hide it.
/// - **Nested boxes** (an icon inside a button, the widgets of a card together with the
///   card) overlap, so they are near and share a Group; an inner box sharing the outer
///   one's row joins its Line, where Columns are ordered by left edge, while a small badge
///   in a much taller card sits on a Line of its own. A box covering most of the screen
///   therefore pulls everything into one Group, as it would in a dilated widget mask.
/// - **Order.** Groups are read like words on a page: Groups that share a row (by
///   [`LayoutConfig::line_overlap`], the rule of Lines) form a band, bands go top to
///   bottom and the Groups of a band left to right, so two side-by-side Groups keep their
///   order when their tops differ by a pixel. Lines go top to bottom by their topmost
///   widget, Columns left to right. Ties are broken by x, then y, then width, height,
///   kind, confidence and finally input position.
///
/// Because everything is decided on boxes sorted by their content, shuffling the input
/// changes no Group, Line or Column, only the [`Column::index`] values (and which of two
/// exact duplicates comes first).
///
/// Cost: O(n²) box comparisons; n is a screen's widget count, rarely above a few hundred.
pub fn characterise(widgets: &[Widget], screen: Size, config: &LayoutConfig) -> Layout {
    let mut visible = Vec::with_capacity(widgets.len());
    let mut dropped = Vec::new();
    for (index, w) in widgets.iter().enumerate() {
        match w.rect.clip_to(screen) {
            Some(rect) => visible.push(Column {
                index,
                widget: Widget { rect, ..w.clone() },
            }),
            None => dropped.push(index),
        }
    }
    // A canonical order first: everything below depends on this order only.
    visible.sort_by(top_first);

    let (gap, gap_in_row) = (
        config.group_gap.resolve(screen),
        config.group_gap_in_row.resolve(screen),
    );
    let overlap = config.line_overlap;
    let near = |a: &Column, b: &Column| {
        let (a, b) = (&a.widget.rect, &b.widget.rect);
        let gx = axis_gap(a.x, a.right(), b.x, b.right());
        if share_row(a, b, overlap) {
            gx <= gap_in_row
        } else {
            gx <= gap && axis_gap(a.y, a.bottom(), b.y, b.bottom()) <= gap
        }
    };
    let mut groups: Vec<Group> = components(visible, near)
        .into_iter()
        .map(|members| {
            let lines: Vec<Line> = components(members, |a, b| {
                share_row(&a.widget.rect, &b.widget.rect, overlap)
            })
            .into_iter()
            .map(|mut columns| {
                columns.sort_by(left_first);
                Line {
                    bounds: bounds(columns.iter().map(|c| c.widget.rect)),
                    columns,
                }
            })
            .collect();
            Group {
                bounds: bounds(lines.iter().map(|l| l.bounds)),
                lines,
            }
        })
        .collect();

    groups.sort_by(|a, b| cmp_rect_yx(&a.bounds, &b.bounds).then_with(|| first_cmp(a, b)));
    let groups = components(groups, |a, b| share_row(&a.bounds, &b.bounds, overlap))
        .into_iter()
        .flat_map(|mut band| {
            band.sort_by(|a, b| cmp_rect_xy(&a.bounds, &b.bounds).then_with(|| first_cmp(a, b)));
            band
        })
        .collect();

    Layout {
        screen,
        groups,
        dropped,
    }
}

/// Connected components of `linked` over `items`: each component keeps the items' order,
/// components come in the order of their first item.
fn components<T>(items: Vec<T>, linked: impl Fn(&T, &T) -> bool) -> Vec<Vec<T>> {
    fn find(parent: &mut [usize], mut i: usize) -> usize {
        while parent[i] != i {
            parent[i] = parent[parent[i]];
            i = parent[i];
        }
        i
    }
    let mut parent: Vec<usize> = (0..items.len()).collect();
    for i in 0..items.len() {
        for j in i + 1..items.len() {
            if linked(&items[i], &items[j]) {
                let (ri, rj) = (find(&mut parent, i), find(&mut parent, j));
                parent[ri.max(rj)] = ri.min(rj);
            }
        }
    }
    let mut slot_of_root = vec![usize::MAX; items.len()];
    let mut out: Vec<Vec<T>> = Vec::new();
    for (i, item) in items.into_iter().enumerate() {
        let root = find(&mut parent, i);
        if slot_of_root[root] == usize::MAX {
            slot_of_root[root] = out.len();
            out.push(Vec::new());
        }
        out[slot_of_root[root]].push(item);
    }
    out
}

/// Whitespace between the ranges `a0..a1` and `b0..b1`, 0 when they touch or overlap.
fn axis_gap(a0: i32, a1: i32, b0: i32, b1: i32) -> f64 {
    (i64::from(a0.max(b0)) - i64::from(a1.min(b1))).max(0) as f64
}

/// Whether two boxes share a row: their vertical extents overlap by more than zero pixels
/// and by at least `min_overlap` of the taller one's height.
fn share_row(a: &Rect, b: &Rect, min_overlap: f64) -> bool {
    let overlap = i64::from(a.bottom().min(b.bottom())) - i64::from(a.y.max(b.y));
    overlap > 0 && overlap as f64 >= min_overlap * f64::from(a.height.max(b.height))
}

/// The smallest box holding all of `rects` (which is never empty here).
fn bounds(rects: impl IntoIterator<Item = Rect>) -> Rect {
    rects
        .into_iter()
        .reduce(|a, b| a.union(&b))
        .expect("groups and lines are never empty")
}

fn cmp_rect_yx(a: &Rect, b: &Rect) -> Ordering {
    (a.y, a.x, a.width, a.height).cmp(&(b.y, b.x, b.width, b.height))
}

fn cmp_rect_xy(a: &Rect, b: &Rect) -> Ordering {
    (a.x, a.y, a.width, a.height).cmp(&(b.x, b.y, b.width, b.height))
}

/// Tie-break after the box: what the widget is, then where it came from.
fn cmp_content(a: &Column, b: &Column) -> Ordering {
    a.widget
        .kind
        .cmp(&b.widget.kind)
        .then_with(|| a.widget.confidence.total_cmp(&b.widget.confidence))
        .then_with(|| a.index.cmp(&b.index))
}

fn top_first(a: &Column, b: &Column) -> Ordering {
    cmp_rect_yx(&a.widget.rect, &b.widget.rect).then_with(|| cmp_content(a, b))
}

fn left_first(a: &Column, b: &Column) -> Ordering {
    cmp_rect_xy(&a.widget.rect, &b.widget.rect).then_with(|| cmp_content(a, b))
}

/// Groups with equal bounds (rare: it takes two Groups reaching the same four edges)
/// are ordered by their topmost widget.
fn first_cmp(a: &Group, b: &Group) -> Ordering {
    let first = |g: &Group| g.lines.first().and_then(|l| l.columns.first()).cloned();
    match (first(a), first(b)) {
        (Some(x), Some(y)) => top_first(&x, &y),
        _ => Ordering::Equal,
    }
}

fn fmt_rect(r: &Rect) -> String {
    format!("{},{} {}x{}", r.x, r.y, r.width, r.height)
}

/// A compact outline, one row per Group, Line and widget (`#i` is the input position).
impl fmt::Display for Layout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let lines: usize = self.groups.iter().map(|g| g.lines.len()).sum();
        writeln!(
            f,
            "screen {}x{}: {} groups, {} lines, {} widgets",
            self.screen.width,
            self.screen.height,
            self.groups.len(),
            lines,
            self.widget_count()
        )?;
        for group in &self.groups {
            writeln!(f, "group [{}]", fmt_rect(&group.bounds))?;
            for line in &group.lines {
                writeln!(f, "  line [{}]", fmt_rect(&line.bounds))?;
                for c in &line.columns {
                    writeln!(
                        f,
                        "    {} #{} [{}]",
                        serde_kind(c.widget.kind),
                        c.index,
                        fmt_rect(&c.widget.rect)
                    )?;
                }
            }
        }
        if !self.dropped.is_empty() {
            let dropped: Vec<String> = self.dropped.iter().map(|i| format!("#{i}")).collect();
            writeln!(f, "dropped {}", dropped.join(" "))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand::seq::SliceRandom;

    const SCREEN: Size = Size::new(400, 800);

    fn w(x: i32, y: i32, width: u32, height: u32) -> Widget {
        Widget::new(Rect::new(x, y, width, height), WidgetKind::Button, 1.0)
    }

    fn kind(k: WidgetKind, x: i32, y: i32, width: u32, height: u32) -> Widget {
        Widget::new(Rect::new(x, y, width, height), k, 0.9)
    }

    /// Pixel thresholds: `gap` in general, `in_row` beside each other.
    fn px(in_row: u32, gap: u32) -> LayoutConfig {
        LayoutConfig {
            group_gap: Gap::Pixels(f64::from(gap)),
            group_gap_in_row: Gap::Pixels(f64::from(in_row)),
            ..LayoutConfig::default()
        }
    }

    fn bracket(widgets: &[Widget], config: &LayoutConfig) -> String {
        characterise(widgets, SCREEN, config)
            .tree(TreeLabels::Plain)
            .to_bracket()
    }

    fn indices(layout: &Layout) -> Vec<usize> {
        layout.columns().map(|c| c.index).collect()
    }

    #[test]
    fn the_gap_threshold_is_inclusive_and_splits_groups_beyond_it() {
        // Side by side, 10 px of whitespace between them.
        let pair = [w(0, 0, 50, 20), w(60, 0, 50, 20)];
        assert_eq!(bracket(&pair, &px(10, 0)), "{screen{group{line{w}{w}}}}");
        assert_eq!(
            bracket(&pair, &px(9, 100)),
            "{screen{group{line{w}}}{group{line{w}}}}"
        );
        // One above the other, 10 px apart.
        let stack = [w(0, 0, 50, 20), w(0, 30, 50, 20)];
        assert_eq!(
            bracket(&stack, &px(0, 10)),
            "{screen{group{line{w}}{line{w}}}}"
        );
        assert_eq!(
            bracket(&stack, &px(100, 9)),
            "{screen{group{line{w}}}{group{line{w}}}}"
        );
        // Diagonal neighbours, 30 px apart horizontally and 5 px vertically: the wide
        // allowance of a row does not apply, both gaps must be within `group_gap`.
        let diagonal = [w(0, 0, 50, 20), w(80, 25, 50, 20)];
        assert_eq!(
            characterise(&diagonal, SCREEN, &px(100, 29)).groups.len(),
            2
        );
        assert_eq!(characterise(&diagonal, SCREEN, &px(0, 30)).groups.len(), 1);
        // Raised to overlap half of the first, the second is beside it: the row allowance.
        let beside = [w(0, 0, 50, 20), w(80, 10, 50, 20)];
        assert_eq!(characterise(&beside, SCREEN, &px(30, 0)).groups.len(), 1);
        assert_eq!(characterise(&beside, SCREEN, &px(29, 100)).groups.len(), 2);
    }

    #[test]
    fn touching_boxes_share_a_group_at_zero_gap_and_groups_chain() {
        let rows = [w(0, 0, 100, 40), w(0, 40, 100, 40), w(0, 80, 100, 40)];
        let layout = characterise(&rows, SCREEN, &px(0, 0));
        assert_eq!(layout.groups.len(), 1);
        assert_eq!(layout.groups[0].bounds, Rect::new(0, 0, 100, 120));
        assert_eq!(layout.groups[0].lines.len(), 3);
        // The first and last rows are 40 px apart but linked through the middle one.
        assert_eq!(
            characterise(&[rows[0].clone(), rows[2].clone()], SCREEN, &px(0, 0))
                .groups
                .len(),
            2
        );
    }

    #[test]
    fn scaled_and_screen_relative_gaps_give_the_same_tree_at_twice_the_resolution() {
        let phone = [
            w(16, 16, 380, 48),
            w(16, 72, 380, 48),
            w(16, 200, 160, 40),
            w(216, 200, 180, 40),
        ];
        let doubled: Vec<Widget> = phone
            .iter()
            .map(|v| {
                let r = v.rect;
                w(r.x * 2, r.y * 2, r.width * 2, r.height * 2)
            })
            .collect();
        let expected = "{screen{group{line{w}}{line{w}}}{group{line{w}{w}}}}";
        let (small, large) = (Size::new(412, 915), Size::new(824, 1830));
        let tree = |widgets: &[Widget], screen, config: &LayoutConfig| {
            characterise(widgets, screen, config)
                .tree(TreeLabels::Plain)
                .to_bracket()
        };
        let pixels = LayoutConfig::default();
        assert_eq!(tree(&phone, small, &pixels), expected);
        assert_eq!(tree(&doubled, large, &pixels.scaled(2.0)), expected);
        // Unscaled, the 40 px between the two buttons of a row, doubled, exceeds the row
        // allowance.
        assert_ne!(tree(&doubled, large, &pixels), expected);
        let relative = LayoutConfig {
            group_gap: Gap::ShorterSideFraction(0.05),
            group_gap_in_row: Gap::ShorterSideFraction(0.15),
            ..LayoutConfig::default()
        };
        assert_eq!(tree(&phone, small, &relative), expected);
        assert_eq!(tree(&doubled, large, &relative), expected);
    }

    #[test]
    fn lines_split_where_vertical_overlap_falls_below_the_threshold() {
        // A label centred beside a taller field: one line, label first.
        let label_and_field = [w(120, 0, 200, 40), w(0, 10, 100, 20)];
        let layout = characterise(&label_and_field, SCREEN, &px(40, 40));
        assert_eq!(layout.groups[0].lines.len(), 1);
        assert_eq!(indices(&layout), [1, 0]);

        // Two boxes 20 px high overlapping by 6 px (0.3 of the smaller height).
        let staggered = [w(0, 0, 100, 20), w(110, 14, 100, 20)];
        let at = |overlap| LayoutConfig {
            line_overlap: overlap,
            ..px(40, 40)
        };
        assert_eq!(
            bracket(&staggered, &at(0.5)),
            "{screen{group{line{w}}{line{w}}}}"
        );
        assert_eq!(
            bracket(&staggered, &at(0.25)),
            "{screen{group{line{w}{w}}}}"
        );
        assert_eq!(
            bracket(&staggered, &at(0.31)),
            "{screen{group{line{w}}{line{w}}}}"
        );
        // Touching is no overlap, even at a threshold of zero.
        let touching = [w(0, 0, 100, 20), w(110, 20, 100, 20)];
        assert_eq!(
            bracket(&touching, &at(0.0)),
            "{screen{group{line{w}}{line{w}}}}"
        );
    }

    #[test]
    fn a_tall_widget_holds_the_text_rows_beside_it_in_one_line() {
        // A list item: avatar, title and subtitle, then the next item's avatar.
        let item = [
            w(72, 4, 200, 20),  // title
            w(16, 0, 48, 48),   // avatar
            w(72, 28, 160, 16), // subtitle
            w(16, 56, 48, 48),  // next avatar
        ];
        let layout = characterise(&item, SCREEN, &px(16, 16));
        assert_eq!(
            layout.tree(TreeLabels::Plain).to_bracket(),
            "{screen{group{line{w}{w}{w}}{line{w}}}}"
        );
        // Left to right; title above subtitle at the same left edge.
        assert_eq!(indices(&layout), [1, 0, 2, 3]);
        assert_eq!(layout.groups[0].lines[0].bounds, Rect::new(16, 0, 256, 48));
    }

    #[test]
    fn a_much_taller_widget_spans_the_rows_beside_it_on_a_line_of_its_own() {
        // A chart panel beside a task list of three rows, each with a check box inside.
        let widgets = [
            w(0, 0, 300, 200),   // chart
            w(332, 0, 300, 56),  // rows
            w(332, 56, 300, 56), //
            w(332, 112, 300, 56),
            w(348, 16, 24, 24), // check boxes
            w(348, 72, 24, 24),
            w(348, 128, 24, 24),
        ];
        let layout = characterise(&widgets, SCREEN, &px(64, 20));
        // The chart is 32 px from the rows but shares no row with them: two Groups.
        assert_eq!(layout.groups.len(), 2);
        assert_eq!(
            layout.tree(TreeLabels::Plain).to_bracket(),
            "{screen{group{line{w}}}{group{line{w}{w}}{line{w}{w}}{line{w}{w}}}}"
        );
        // With a heading over each panel, the headings link them into one Group, where
        // the chart still keeps to a Line of its own.
        let mut with_headings = widgets.to_vec();
        with_headings.extend([w(0, -36, 300, 28), w(332, -36, 300, 28)]);
        let moved: Vec<Widget> = with_headings
            .iter()
            .map(|v| w(v.rect.x, v.rect.y + 40, v.rect.width, v.rect.height))
            .collect();
        let layout = characterise(&moved, SCREEN, &px(64, 20));
        assert_eq!(
            layout.tree(TreeLabels::Plain).to_bracket(),
            "{screen{group{line{w}{w}}{line{w}}{line{w}{w}}{line{w}{w}}{line{w}{w}}}}"
        );
        assert_eq!(indices(&layout)[..3], [7, 8, 0]);
    }

    #[test]
    fn groups_read_top_to_bottom_then_left_to_right_despite_small_misalignment() {
        // Two cards side by side, the right one a pixel higher, and a footer below.
        let widgets = [
            w(10, 700, 380, 40), // footer
            w(210, 99, 180, 80), // right card
            w(10, 100, 180, 80), // left card
        ];
        let layout = characterise(&widgets, SCREEN, &px(10, 10));
        assert_eq!(layout.groups.len(), 3);
        assert_eq!(indices(&layout), [2, 1, 0]);
        // Columns of a line go left to right whatever the input order.
        let row = [w(300, 0, 40, 40), w(0, 0, 40, 40), w(150, 0, 40, 40)];
        let layout = characterise(&row, SCREEN, &px(200, 0));
        assert_eq!(indices(&layout), [1, 2, 0]);
    }

    #[test]
    fn shuffling_the_input_changes_nothing_but_input_positions() {
        use WidgetKind::*;
        let widgets = vec![
            kind(ImageView, 0, 0, 400, 200),
            kind(TextView, 16, 216, 300, 24),
            kind(TextView, 16, 244, 200, 16),
            kind(Button, 16, 280, 120, 40),
            kind(Button, 152, 280, 120, 40),
            kind(Icon, 340, 280, 40, 40),
            kind(EditText, 16, 400, 368, 48),
            kind(EditText, 16, 456, 368, 48),
            // Exact duplicates and a duplicate box of another kind.
            kind(CheckBox, 16, 520, 24, 24),
            kind(CheckBox, 16, 520, 24, 24),
            kind(Switch, 16, 520, 24, 24),
            kind(TextView, 48, 522, 200, 20),
            kind(Tab, 0, 740, 100, 60),
            kind(Tab, 100, 740, 100, 60),
            kind(Tab, 200, 740, 100, 60),
            kind(Tab, 300, 740, 100, 60),
            kind(Icon, 380, 100, 40, 40), // partly off screen
            kind(Icon, 10, 10, 0, 0),     // empty
        ];
        let config = LayoutConfig::default();
        let reference = characterise(&widgets, SCREEN, &config);
        let content = |l: &Layout| -> Vec<(Rect, WidgetKind)> {
            l.columns()
                .map(|c| (c.widget.rect, c.widget.kind))
                .collect()
        };
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        let mut shuffled = widgets.clone();
        for _ in 0..50 {
            shuffled.shuffle(&mut rng);
            let layout = characterise(&shuffled, SCREEN, &config);
            assert_eq!(
                layout.tree(TreeLabels::Kinds),
                reference.tree(TreeLabels::Kinds)
            );
            assert_eq!(content(&layout), content(&reference));
            let bounds = |l: &Layout| -> Vec<Rect> {
                l.groups
                    .iter()
                    .flat_map(|g| std::iter::once(g.bounds).chain(g.lines.iter().map(|l| l.bounds)))
                    .collect()
            };
            assert_eq!(bounds(&layout), bounds(&reference));
            // Positions still point at the same widgets of the shuffled input.
            for c in layout.columns() {
                assert_eq!(c.widget.kind, shuffled[c.index].kind);
            }
        }
    }

    #[test]
    fn an_empty_screen_is_a_lone_root() {
        let layout = characterise(&[], SCREEN, &LayoutConfig::default());
        assert!(layout.groups.is_empty());
        assert_eq!(layout.tree(TreeLabels::Kinds).to_bracket(), "{screen}");
        assert_eq!(
            layout.to_string(),
            "screen 400x800: 0 groups, 0 lines, 0 widgets\n"
        );
        // So is one whose every box is invisible.
        let invisible = [w(5, 5, 0, 30), w(-100, 0, 50, 50), w(0, 800, 10, 10)];
        let layout = characterise(&invisible, SCREEN, &LayoutConfig::default());
        assert_eq!(layout.tree(TreeLabels::Plain).to_bracket(), "{screen}");
        assert_eq!(layout.dropped, [0, 1, 2]);
    }

    #[test]
    fn a_single_widget_is_one_group_of_one_line() {
        let one = [kind(WidgetKind::EditText, 20, 30, 200, 40)];
        let layout = characterise(&one, SCREEN, &LayoutConfig::default());
        assert_eq!(
            layout.tree(TreeLabels::Kinds).to_bracket(),
            "{screen{group{line{w:edit_text}}}}"
        );
        assert_eq!(layout.groups[0].bounds, one[0].rect);
        assert_eq!(layout.groups[0].lines[0].bounds, one[0].rect);
        assert_eq!(layout.widget_count(), 1);
    }

    #[test]
    fn boxes_are_clipped_to_the_screen_and_invisible_ones_dropped() {
        let widgets = [
            w(-20, -10, 60, 40), // partly off, top left
            w(0, 0, 0, 0),       // zero-sized
            w(390, 790, 30, 30), // partly off, bottom right
            w(500, 0, 20, 20),   // wholly off
        ];
        let layout = characterise(&widgets, SCREEN, &LayoutConfig::default());
        let rects: Vec<(usize, Rect)> =
            layout.columns().map(|c| (c.index, c.widget.rect)).collect();
        assert_eq!(
            rects,
            [
                (0, Rect::new(0, 0, 40, 30)),
                (2, Rect::new(390, 790, 10, 10))
            ]
        );
        assert_eq!(layout.dropped, [1, 3]);
    }

    #[test]
    fn nested_and_duplicate_boxes_stay_together_as_separate_columns() {
        use WidgetKind::*;
        let widgets = [
            kind(Icon, 24, 112, 24, 24),      // icon inside the button
            kind(Button, 16, 100, 200, 48),   // the button
            kind(TextView, 56, 114, 100, 20), // its caption, also inside
            kind(TextView, 56, 114, 100, 20), // detected twice
            kind(Button, 16, 400, 200, 48),   // far below
        ];
        let layout = characterise(&widgets, SCREEN, &LayoutConfig::default());
        assert_eq!(
            layout.tree(TreeLabels::Kinds).to_bracket(),
            "{screen{group{line{w:button}{w:icon}{w:text_view}{w:text_view}}}\
             {group{line{w:button}}}}"
        );
        assert_eq!(indices(&layout), [1, 0, 2, 3, 4]);
    }

    #[test]
    fn the_tree_has_four_levels_and_round_trips_through_brackets() {
        use WidgetKind::*;
        let widgets = [
            kind(TextView, 16, 16, 200, 24),
            kind(EditText, 16, 48, 368, 48),
            kind(CheckBox, 16, 104, 24, 24),
            kind(TextView, 48, 106, 120, 20),
            kind(Button, 16, 300, 368, 48),
        ];
        let layout = characterise(&widgets, SCREEN, &LayoutConfig::default());
        let tree = layout.tree(TreeLabels::Kinds);
        assert_eq!(tree.depth(), 4);
        assert_eq!(tree.len(), 1 + layout.groups.len() + 4 + widgets.len());
        assert_eq!(LayoutTree::parse(&tree.to_bracket()).unwrap(), tree);
        assert_eq!(
            tree.to_bracket(),
            "{screen{group{line{w:text_view}}{line{w:edit_text}}{line{w:check_box}{w:text_view}}}\
             {group{line{w:button}}}}"
        );
    }

    #[test]
    fn config_gaps_resolve_and_scale() {
        let config = LayoutConfig::default();
        let phone = Size::new(412, 915);
        assert_eq!(config.group_gap.resolve(phone), 20.0);
        assert_eq!(config.scaled(2.625).group_gap_in_row.resolve(phone), 168.0);
        let fraction = Gap::ShorterSideFraction(0.05);
        assert!((fraction.resolve(phone) - 20.6).abs() < 1e-9);
        assert!((fraction.resolve(Size::new(1280, 800)) - 40.0).abs() < 1e-9);
        // A partial config file takes the defaults for what it leaves out.
        let parsed: LayoutConfig = serde_json::from_str(
            r#"{"group_gap": {"shorter_side_fraction": 0.05}, "line_overlap": 0.25}"#,
        )
        .unwrap();
        assert_eq!(parsed.group_gap, fraction);
        assert_eq!(parsed.group_gap_in_row, config.group_gap_in_row);
        assert_eq!(parsed.line_overlap, 0.25);
    }
}
