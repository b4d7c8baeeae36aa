//! Widget boxes from a screenshot (PIRLTest Section 3.1.1): Canny edges, connected
//! components, noise filtering by the size ratio to the screen, text grouping and nesting
//! rules in the manner of UIED (Chen et al. 2020c).

use gui_core::{Rect, Screenshot};
use image::{GrayImage, RgbImage};
use serde::{Deserialize, Serialize};

use crate::components::{Component, connected_components};
use crate::edges::{CannyConfig, canny, to_gray};
use crate::{Error, Result};

/// Thresholds of widget extraction. Pixel values are screenshot pixels at a device scale
/// of 1; [`ExtractConfig::scaled`] adapts them to high-density screens.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ExtractConfig {
    /// Edge detection.
    pub canny: CannyConfig,
    /// Edge pixels this far apart (in pixels) still belong to one component. 0 is plain
    /// 8-connectivity; 1 closes the one-pixel breaks Canny leaves in anti-aliased corners.
    pub join_gap: u32,
    /// The paper's noise rule: a box smaller than this fraction of the screen area is a
    /// "misrecognised subtle area" and dropped. The paper takes the rule from Chen et al.
    /// and Yu et al. without printing the value; ours is tuned on the training apps of
    /// `cargo xtask vision-data` (see `docs/vision.md`).
    pub min_area_ratio: f64,
    /// Boxes whose shorter side is at most this many pixels are rules and separators,
    /// not widgets.
    pub max_line_thickness: u32,
    /// Boxes covering more than this fraction of the screen are the page frame.
    pub max_area_ratio: f64,
    /// Two boxes overlapping at least this much (IoU) are one widget seen twice (the outer
    /// and inner edge of a border); the larger is kept.
    pub duplicate_iou: f64,
    /// Components at most this tall may be glyphs and are grouped into text lines.
    pub max_glyph_height: u32,
    /// Glyphs join a line when the horizontal gap is at most this times the taller
    /// glyph's height (word spaces are about 0.3 em; column gaps are wider).
    pub word_gap: f32,
    /// Lines join a text block when the vertical gap is at most this times the line
    /// height and they overlap horizontally.
    pub line_gap: f32,
    /// A box containing at least this many other boxes, or taller than
    /// `block_min_height_ratio` of the screen, is a layout block (a panel, a card grid),
    /// not a widget, and is dropped.
    pub block_min_children: usize,
    pub block_min_height_ratio: f64,
    /// Pixels taken off the left, top, right and bottom of every box (negative values
    /// grow it). Canny marks the stronger side of a step edge, which for dark-on-light
    /// pictures is often the pixel just outside the object; the median offsets against
    /// the ground truth of the training apps set this.
    pub inset: [i32; 4],
    /// A check box, radio button or icon drawn beside its label has the size of a glyph
    /// and joins the label's line. The first or last glyph of a line is split off as a
    /// widget of its own when it is at least this many pixels on its shorter side, about
    /// square (aspect 0.7 to 1.45), set apart from the rest by more than `mark_gap` times
    /// its height, and either encloses a hole of at least 40% of its box (a frame, a
    /// ring, a filled box with a tick in it) or stands taller than the line's other
    /// glyphs by 15%. 0 turns the split off.
    pub mark_min_side: u32,
    pub mark_gap: f32,
    /// Each box is grown by this many pixels and then shrunk to what is visible in it
    /// ([`crate::tighten_to_ink`]): a box with no boundary of its own becomes the
    /// bounding box of the pixels that differ from its background, a bordered or filled
    /// one its outer edge. Canny's edges lie up to a pixel off the ink on either side;
    /// on a 6 px line of text that alone costs IoU 0.8. 0 turns it off. Chosen on the
    /// training apps (`cargo xtask vision snap`; `docs/vision.md`).
    pub ink_snap: u32,
}

impl Default for ExtractConfig {
    fn default() -> Self {
        Self::web()
    }
}

impl ExtractConfig {
    /// Desktop web pages at device scale 1 (1280x800 and similar).
    ///
    /// `join_gap`, `word_gap`, `line_gap`, `max_glyph_height`, `min_area_ratio` and
    /// `inset` are the best of a 729-point grid (times marks on or off) on the training
    /// apps' desktop screens, the widget gallery's included (`cargo xtask vision tune`, F
    /// at IoU 0.8 averaged over apps); the others are fixed by reasoning given on each
    /// field. The gallery's paragraphs moved `line_gap` from 0 to 0.45.
    pub fn web() -> Self {
        Self {
            canny: CannyConfig::default(),
            join_gap: 1,
            min_area_ratio: 0.0001,
            max_line_thickness: 2,
            max_area_ratio: 0.8,
            duplicate_iou: 0.85,
            max_glyph_height: 40,
            word_gap: 0.6,
            line_gap: 0.45,
            block_min_children: 6,
            block_min_height_ratio: 0.4,
            inset: [1, 1, 1, 1],
            // Browsers draw check boxes and radio buttons at 13 px, icon fonts at 1 em;
            // a glyph of body text is rarely 9 px wide and as tall, followed by a space.
            mark_min_side: 9,
            mark_gap: 0.3,
            ink_snap: 2,
        }
    }

    /// Phone screens in CSS-pixel terms (412x915 at scale 1); use [`Self::scaled`] for
    /// the device pixel ratio of real phones (2.625 on a Pixel 7). Tuned like
    /// [`Self::web`] on the training apps' mobile screens: paragraphs wrap more on a
    /// narrow screen, so text lines stack into blocks (`line_gap` 0.8). On the data set
    /// with the gallery the grid's best (`line_gap` 0.45, `max_glyph_height` 28) scored
    /// 0.001 above this preset, less than one screen moves it, so the preset stayed.
    pub fn mobile() -> Self {
        Self {
            line_gap: 0.8,
            block_min_height_ratio: 0.3,
            ..Self::web()
        }
    }

    /// The preset for a viewport name of the labelled data sets: `mobile` gives
    /// [`Self::mobile`], anything else [`Self::web`].
    pub fn for_viewport(viewport: &str) -> Self {
        if viewport == "mobile" {
            Self::mobile()
        } else {
            Self::web()
        }
    }

    /// The same rules for a screenshot with `scale` device pixels per CSS pixel.
    pub fn scaled(&self, scale: f32) -> Self {
        let s = scale.max(0.1);
        let px = |v: u32| ((v as f32 * s).round() as u32).max(v.min(1));
        Self {
            join_gap: px(self.join_gap),
            max_line_thickness: px(self.max_line_thickness),
            max_glyph_height: px(self.max_glyph_height),
            mark_min_side: px(self.mark_min_side),
            ink_snap: px(self.ink_snap),
            inset: self.inset.map(|v| (v as f32 * s).round() as i32),
            ..self.clone()
        }
    }

    /// Checks every field's range.
    pub fn validate(&self) -> Result<()> {
        self.canny.validate()?;
        let ratio = |field: &'static str, v: f64| {
            if (0.0..=1.0).contains(&v) {
                Ok(())
            } else {
                Err(Error::Config {
                    field,
                    message: format!("{v} is not a fraction in [0, 1]"),
                })
            }
        };
        ratio("min_area_ratio", self.min_area_ratio)?;
        ratio("max_area_ratio", self.max_area_ratio)?;
        ratio("duplicate_iou", self.duplicate_iou)?;
        ratio("block_min_height_ratio", self.block_min_height_ratio)?;
        if self.min_area_ratio >= self.max_area_ratio {
            return Err(Error::Config {
                field: "min_area_ratio",
                message: format!(
                    "{} is not below max_area_ratio {}",
                    self.min_area_ratio, self.max_area_ratio
                ),
            });
        }
        for (field, v) in [
            ("word_gap", self.word_gap),
            ("line_gap", self.line_gap),
            ("mark_gap", self.mark_gap),
        ] {
            if !(v.is_finite() && v >= 0.0) {
                return Err(Error::Config {
                    field,
                    message: format!("{v} is not a non-negative number"),
                });
            }
        }
        Ok(())
    }
}

/// What made a box.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BoxOrigin {
    /// A closed edge component: a bordered or filled control, an image, an icon.
    Edges,
    /// Glyph components grouped into a line or block of text.
    Text,
    /// A text region from the OCR detector.
    TextRegion,
}

/// A widget box found on a screen.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct DetectedBox {
    pub rect: Rect,
    pub origin: BoxOrigin,
}

impl DetectedBox {
    pub fn is_text(&self) -> bool {
        self.origin != BoxOrigin::Edges
    }
}

/// Widget boxes of a screenshot, with the thresholds scaled to its device scale.
pub fn extract_screenshot(shot: &Screenshot, config: &ExtractConfig) -> Result<Vec<DetectedBox>> {
    extract_widgets(shot.pixels(), &config.scaled(shot.scale))
}

/// Widget boxes of an RGB image, sorted top to bottom, then left to right.
pub fn extract_widgets(image: &RgbImage, config: &ExtractConfig) -> Result<Vec<DetectedBox>> {
    if image.width() == 0 || image.height() == 0 {
        return Err(Error::image(
            format!("{}x{}", image.width(), image.height()),
            "cannot find widgets in an empty image",
        ));
    }
    config.validate()?;
    let edges = canny(&to_gray(image), &config.canny)?;
    let boxes = boxes_from_edges(&edges, config);
    Ok(snap_to_ink(image, boxes, config.ink_snap))
}

/// Grows every box by `grow` pixels and shrinks it to its visible extent; boxes that
/// snap onto an earlier box's rectangle are dropped. `grow` 0 returns the boxes as
/// they are.
pub fn snap_to_ink(image: &RgbImage, boxes: Vec<DetectedBox>, grow: u32) -> Vec<DetectedBox> {
    if grow == 0 {
        return boxes;
    }
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::with_capacity(boxes.len());
    for b in boxes {
        let rect = crate::tighten_to_ink(image, b.rect.grown(grow as i32)).unwrap_or(b.rect);
        if seen.insert(rect) {
            out.push(DetectedBox { rect, ..b });
        }
    }
    out.sort_by_key(|d| (d.rect.y, d.rect.x, d.rect.width, d.rect.height));
    out
}

/// The box rules applied to an edge map (non-zero = edge). Split out so that callers with
/// their own edge detector, and the tests, can use the same rules.
pub fn boxes_from_edges(edges: &GrayImage, config: &ExtractConfig) -> Vec<DetectedBox> {
    let (w, h) = edges.dimensions();
    let screen_area = w as f64 * h as f64;
    let components = connected_components(edges, config.join_gap);

    // Thin rules and the page frame go first: they would otherwise swallow or contain
    // everything.
    let comps: Vec<Component> = components
        .into_iter()
        .filter(|c| {
            let r = c.rect;
            let thin = r.width.min(r.height) <= config.max_line_thickness
                && r.width.max(r.height) > 4 * config.max_line_thickness.max(1);
            !thin && (r.area() as f64) <= config.max_area_ratio * screen_area
        })
        .collect();

    // Glyph candidates: short, not very wide components that are not rectangular outlines.
    // (A bold "o" has separate outer and inner contours; both are glyph parts.)
    let mut glyphs = Vec::new();
    let mut shapes = Vec::new();
    for c in &comps {
        let r = c.rect;
        let glyph_sized =
            r.height <= config.max_glyph_height && r.width <= 3 * config.max_glyph_height;
        if glyph_sized && !is_outline(edges, c) {
            glyphs.push(r);
        } else {
            shapes.push(r);
        }
    }
    // Shapes first lose their duplicates (outer/inner edge of one border; a border is no
    // thicker than a rule, and its two edges lie one pixel beyond it).
    let shapes = dedupe(shapes, config.duplicate_iou, config.max_line_thickness + 1);
    let groups = group_lines(&glyphs, config.word_gap);
    let (lines, marks) = split_marks(edges, &glyphs, groups, config);
    let blocks = group_blocks(lines, &shapes, config.line_gap);

    let min_area = config.min_area_ratio * screen_area;
    let block_h = config.block_min_height_ratio * h as f64;
    let mut out: Vec<DetectedBox> = Vec::new();
    // A shape holding one piece of text and nothing else is a control with its label (a
    // button): the text is part of it. A shape holding many boxes, or very tall, is a
    // layout block.
    let mut absorbed = vec![false; blocks.len()];
    for s in &shapes {
        let inner_shapes = shapes
            .iter()
            .filter(|o| *o != s && inside(o, s, 0.9))
            .count();
        let inner_text: Vec<usize> = (0..blocks.len())
            .filter(|&j| inside(&blocks[j], s, 0.9))
            .collect();
        if inner_shapes + inner_text.len() >= config.block_min_children || s.height as f64 > block_h
        {
            continue;
        }
        // One label only: a fieldset or card holding several lines (radio buttons with
        // their labels, say) keeps them as targets of their own.
        if inner_shapes == 0 && inner_text.len() == 1 {
            absorbed[inner_text[0]] = true;
        }
        if (s.area() as f64) < min_area {
            continue;
        }
        out.push(DetectedBox {
            rect: *s,
            origin: BoxOrigin::Edges,
        });
    }
    // A mark inside a shape not much larger than itself is that shape's inner contour
    // (the two edges of a frame's border): the shape stands for the widget.
    let inner_contour = |m: &Rect| {
        shapes
            .iter()
            .any(|s| inside(m, s, 0.9) && s.area() <= 4 * m.area())
    };
    out.extend(
        marks
            .into_iter()
            .filter(|m| m.area() as f64 >= min_area && !inner_contour(m))
            .map(|rect| DetectedBox {
                rect,
                origin: BoxOrigin::Edges,
            }),
    );
    for (j, b) in blocks.iter().enumerate() {
        if absorbed[j] || (b.area() as f64) < min_area {
            continue;
        }
        out.push(DetectedBox {
            rect: *b,
            origin: BoxOrigin::Text,
        });
    }
    // A shape mostly inside a text block is a glyph that looked like a box ("o", "D").
    let text_rects: Vec<Rect> = out.iter().filter(|d| d.is_text()).map(|d| d.rect).collect();
    out.retain(|d| d.is_text() || !text_rects.iter().any(|t| inside(&d.rect, t, 0.8)));
    if config.inset != [0; 4] {
        let [l, t, r, b] = config.inset;
        for d in &mut out {
            let x = d.rect.x + l;
            let y = d.rect.y + t;
            let w = (d.rect.width as i32 - l - r).max(1);
            let h = (d.rect.height as i32 - t - b).max(1);
            d.rect = Rect::new(x, y, w as u32, h as u32);
        }
    }
    out.sort_by_key(|d| (d.rect.y, d.rect.x, d.rect.width, d.rect.height));
    out
}

/// Replaces edge-grouped text with detected text regions, following UIED's merge: a
/// non-text box mostly inside a text region is part of the text and dropped; a text region
/// inside a box that holds no other box is the box's label and attached to it (dropped);
/// other text regions become text boxes.
pub fn merge_text_regions(boxes: &[DetectedBox], text: &[Rect]) -> Vec<DetectedBox> {
    let shapes: Vec<Rect> = boxes
        .iter()
        .filter(|b| !b.is_text())
        .map(|b| b.rect)
        .filter(|r| !text.iter().any(|t| inside(r, t, 0.8)))
        .collect();
    let mut out: Vec<DetectedBox> = shapes
        .iter()
        .map(|&rect| DetectedBox {
            rect,
            origin: BoxOrigin::Edges,
        })
        .collect();
    for t in text {
        let label_of = shapes.iter().any(|s| {
            inside(t, s, 0.9)
                && !shapes
                    .iter()
                    .any(|o| o != s && inside(o, s, 0.9) && o.intersection(t).is_none())
        });
        if !label_of {
            out.push(DetectedBox {
                rect: *t,
                origin: BoxOrigin::TextRegion,
            });
        }
    }
    out.sort_by_key(|d| (d.rect.y, d.rect.x, d.rect.width, d.rect.height));
    out
}

/// Whether at least `fraction` of `a`'s area lies inside `b`.
fn inside(a: &Rect, b: &Rect, fraction: f64) -> bool {
    let area = a.area();
    area > 0
        && a.intersection(b)
            .is_some_and(|i| i.area() as f64 >= fraction * area as f64)
}

/// A closed rectangular outline: most of its edge pixels lie in a band along its box
/// border and the band is mostly filled. Checkboxes and empty inputs look like this;
/// glyphs do not.
fn is_outline(edges: &GrayImage, c: &Component) -> bool {
    let r = c.rect;
    if r.width < 10 || r.height < 10 {
        return false;
    }
    // Borders drawn with a fill inside give two nested contours a few pixels apart.
    let band = (r.width.min(r.height) / 5).clamp(3, 6);
    let w = edges.width() as usize;
    let raw = edges.as_raw();
    let mut on_band = 0u32;
    let mut band_rows_hit = 0u32;
    for dy in 0..r.height {
        let y = r.y as u32 + dy;
        let row = &raw[y as usize * w + r.x as usize..y as usize * w + r.right() as usize];
        let edge_row = dy < band || dy >= r.height - band;
        if edge_row {
            let hits = row.iter().filter(|&&p| p != 0).count() as u32;
            on_band += hits;
            band_rows_hit += u32::from(hits * 10 >= r.width * 7);
        } else {
            let left = row[..band as usize].iter().filter(|&&p| p != 0).count() as u32;
            let right = row[(r.width - band) as usize..]
                .iter()
                .filter(|&&p| p != 0)
                .count() as u32;
            on_band += left + right;
        }
    }
    on_band as f64 >= 0.85 * c.pixels as f64 && band_rows_hit >= 2
}

/// Drops boxes that repeat a larger box: IoU at least `min_iou`, or nested in it with
/// every side within `border` px. The second catches the inner and outer edge of one
/// border on a small box (a 14 px check box's two contours overlap by IoU 0.5 only).
fn dedupe(mut rects: Vec<Rect>, min_iou: f64, border: u32) -> Vec<Rect> {
    let border = border as i32;
    let hugs = |outer: &Rect, r: &Rect| {
        r.x >= outer.x
            && r.y >= outer.y
            && r.right() <= outer.right()
            && r.bottom() <= outer.bottom()
            && r.x - outer.x <= border
            && r.y - outer.y <= border
            && outer.right() - r.right() <= border
            && outer.bottom() - r.bottom() <= border
    };
    rects.sort_by_key(|r| std::cmp::Reverse(r.area()));
    let mut kept: Vec<Rect> = Vec::with_capacity(rects.len());
    for r in rects {
        if !kept.iter().any(|k| k.iou(&r) >= min_iou || hugs(k, &r)) {
            kept.push(r);
        }
    }
    kept
}

/// Groups glyph boxes into text lines: same row band, horizontal gap within `word_gap`
/// times the taller glyph. Each line is its glyphs' indices, in order of left edge.
fn group_lines(glyphs: &[Rect], word_gap: f32) -> Vec<Vec<usize>> {
    let mut order: Vec<usize> = (0..glyphs.len()).collect();
    order.sort_by_key(|&i| glyphs[i].x);
    let mut parent: Vec<usize> = (0..glyphs.len()).collect();
    fn root(p: &mut [usize], mut i: usize) -> usize {
        while p[i] != i {
            p[i] = p[p[i]];
            i = p[i];
        }
        i
    }
    let max_h = glyphs.iter().map(|g| g.height).max().unwrap_or(0) as f32;
    let reach = (max_h * word_gap).ceil() as i32;
    for (pos, &i) in order.iter().enumerate() {
        let a = glyphs[i];
        for &j in &order[pos + 1..] {
            let b = glyphs[j];
            if b.x > a.right() + reach {
                break;
            }
            let gap = (b.x - a.right()).max(0) as f32;
            let tall = a.height.max(b.height) as f32;
            let y_overlap = (a.bottom().min(b.bottom()) - a.y.max(b.y)) as f32;
            let short = a.height.min(b.height) as f32;
            if gap <= word_gap * tall && y_overlap >= 0.5 * short && short >= 0.2 * tall {
                let (ra, rb) = (root(&mut parent, i), root(&mut parent, j));
                parent[ra.max(rb)] = ra.min(rb);
            }
        }
    }
    let mut lines: Vec<Vec<usize>> = vec![Vec::new(); glyphs.len()];
    for &i in &order {
        let r = root(&mut parent, i);
        lines[r].push(i);
    }
    // Punctuation and accents that joined nothing stay as their own tiny lines; the
    // area rule removes them later.
    lines.retain(|l| !l.is_empty());
    lines
}

fn union_of(glyphs: &[Rect], members: &[usize]) -> Rect {
    members
        .iter()
        .map(|&i| glyphs[i])
        .reduce(|a, b| a.union(&b))
        .expect("a line has a glyph")
}

/// Splits check boxes, radio buttons and icons off the ends of text lines (the rule is on
/// [`ExtractConfig::mark_min_side`]). Returns the lines' boxes and the marks' boxes.
fn split_marks(
    edges: &GrayImage,
    glyphs: &[Rect],
    groups: Vec<Vec<usize>>,
    config: &ExtractConfig,
) -> (Vec<Rect>, Vec<Rect>) {
    let mut lines = Vec::with_capacity(groups.len());
    let mut marks = Vec::new();
    for mut members in groups {
        if config.mark_min_side > 0 && members.len() >= 2 {
            // Members come in order of their left edge, so the leading candidate is the
            // first; the trailing one is the member reaching furthest right.
            let first = members[0];
            try_split(edges, glyphs, first, &mut members, &mut marks, config, true);
            if let Some(&last) = members.iter().max_by_key(|&&i| glyphs[i].right()) {
                try_split(edges, glyphs, last, &mut members, &mut marks, config, false);
            }
        }
        if !members.is_empty() {
            lines.push(union_of(glyphs, &members));
        }
    }
    (lines, marks)
}

/// Moves `candidate`, with the glyphs drawn inside it (the tick of a checked box), from
/// `members` to `marks` when it is a mark.
fn try_split(
    edges: &GrayImage,
    glyphs: &[Rect],
    candidate: usize,
    members: &mut Vec<usize>,
    marks: &mut Vec<Rect>,
    config: &ExtractConfig,
    leading: bool,
) {
    let m = glyphs[candidate];
    let (inner, rest): (Vec<usize>, Vec<usize>) = members
        .iter()
        .partition(|&&i| i == candidate || inside(&glyphs[i], &m, 0.9));
    if !rest.is_empty() && is_mark(edges, glyphs, candidate, &rest, config, leading) {
        debug_assert!(inner.contains(&candidate));
        marks.push(m);
        *members = rest;
    }
}

fn is_mark(
    edges: &GrayImage,
    glyphs: &[Rect],
    candidate: usize,
    rest: &[usize],
    config: &ExtractConfig,
    leading: bool,
) -> bool {
    let m = glyphs[candidate];
    let aspect = m.width as f32 / m.height.max(1) as f32;
    if m.width.min(m.height) < config.mark_min_side || !(0.7..=1.45).contains(&aspect) {
        return false;
    }
    let text = union_of(glyphs, rest);
    let gap = if leading {
        text.x - m.right()
    } else {
        m.x - text.right()
    };
    if (gap as f32) <= config.mark_gap * m.height as f32 {
        return false;
    }
    let mut heights: Vec<u32> = rest.iter().map(|&i| glyphs[i].height).collect();
    heights.sort_unstable();
    let median = heights[heights.len() / 2] as f32;
    m.height as f32 >= 1.15 * median || hole_fraction(edges, m) >= 0.4
}

/// The share of `r` that no path of non-edge pixels connects to its border: the inside
/// of a frame or a ring.
fn hole_fraction(edges: &GrayImage, r: Rect) -> f64 {
    let (w, h) = (r.width as usize, r.height as usize);
    let stride = edges.width() as usize;
    let raw = edges.as_raw();
    let edge = |x: usize, y: usize| raw[(r.y as usize + y) * stride + r.x as usize + x] != 0;
    let mut seen = vec![false; w * h];
    let mut stack = Vec::new();
    for x in 0..w {
        stack.push((x, 0));
        stack.push((x, h - 1));
    }
    for y in 0..h {
        stack.push((0, y));
        stack.push((w - 1, y));
    }
    let mut outside = 0usize;
    let mut on_edge = 0usize;
    while let Some((x, y)) = stack.pop() {
        if seen[y * w + x] || edge(x, y) {
            continue;
        }
        seen[y * w + x] = true;
        outside += 1;
        if x > 0 {
            stack.push((x - 1, y));
        }
        if x + 1 < w {
            stack.push((x + 1, y));
        }
        if y > 0 {
            stack.push((x, y - 1));
        }
        if y + 1 < h {
            stack.push((x, y + 1));
        }
    }
    for y in 0..h {
        for x in 0..w {
            on_edge += usize::from(edge(x, y));
        }
    }
    let hole = w * h - outside - on_edge;
    hole as f64 / (w * h) as f64
}

/// Stacks text lines into blocks (paragraphs) when they are close vertically, overlap
/// horizontally and sit in the same innermost shape.
fn group_blocks(mut lines: Vec<Rect>, shapes: &[Rect], line_gap: f32) -> Vec<Rect> {
    lines.sort_by_key(|l| (l.y, l.x));
    let container = |r: &Rect| -> Option<Rect> {
        shapes
            .iter()
            .filter(|s| inside(r, s, 0.9))
            .min_by_key(|s| s.area())
            .copied()
    };
    let mut blocks: Vec<(Rect, u32, Option<Rect>)> = Vec::new(); // box, line height, container
    for l in lines {
        let c = container(&l);
        let joined = blocks.iter_mut().rev().take(8).find(|(b, lh, bc)| {
            let gap = (l.y - b.bottom()) as f32;
            let h = (*lh).max(l.height) as f32;
            let x_overlap = l.right().min(b.right()) - l.x.max(b.x);
            let similar =
                (l.height as f32) <= 1.5 * *lh as f32 && (*lh as f32) <= 1.5 * l.height as f32;
            gap >= -1.0 && gap <= line_gap * h && x_overlap > 0 && similar && *bc == c
        });
        match joined {
            Some((b, _, _)) => *b = b.union(&l),
            None => blocks.push((l, l.height, c)),
        }
    }
    blocks.into_iter().map(|(b, _, _)| b).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use image::Rgb;

    fn fill(img: &mut RgbImage, r: Rect, c: [u8; 3]) {
        for y in r.y..r.bottom() {
            for x in r.x..r.right() {
                img.put_pixel(x as u32, y as u32, Rgb(c));
            }
        }
    }

    #[test]
    fn empty_image_is_an_error() {
        let err = extract_widgets(&RgbImage::new(0, 10), &ExtractConfig::web()).unwrap_err();
        assert!(err.to_string().contains("0x10"), "{err}");
    }

    #[test]
    fn bad_config_is_an_error_naming_the_field() {
        let bad = [
            (
                ExtractConfig {
                    min_area_ratio: 2.0,
                    ..ExtractConfig::web()
                },
                "min_area_ratio",
            ),
            (
                ExtractConfig {
                    mark_gap: -1.0,
                    ..ExtractConfig::web()
                },
                "mark_gap",
            ),
        ];
        for (cfg, field) in bad {
            let err = extract_widgets(&RgbImage::new(10, 10), &cfg).unwrap_err();
            assert!(err.to_string().contains(field), "{err}");
        }
    }

    #[test]
    fn filled_buttons_are_found_and_their_labels_absorbed() {
        let mut img = RgbImage::from_pixel(400, 300, Rgb([255, 255, 255]));
        let a = Rect::new(40, 40, 120, 40);
        let b = Rect::new(200, 40, 120, 40);
        fill(&mut img, a, [31, 95, 209]);
        fill(&mut img, b, [200, 60, 20]);
        // "Label" glyph stripes inside the first button.
        for k in 0..4 {
            fill(&mut img, Rect::new(70 + k * 12, 54, 6, 12), [255, 255, 255]);
        }
        // A thin separator line.
        fill(&mut img, Rect::new(0, 150, 400, 1), [180, 180, 180]);
        let found = extract_widgets(&img, &ExtractConfig::web()).unwrap();
        let rects: Vec<Rect> = found.iter().map(|d| d.rect).collect();
        for want in [a, b] {
            assert!(
                rects.iter().any(|r| r.iou(&want) >= 0.8),
                "{want:?} not in {rects:?}"
            );
        }
        assert_eq!(found.len(), 2, "{found:?}");
    }

    #[test]
    fn glyph_rows_become_one_text_line() {
        let mut img = RgbImage::from_pixel(300, 100, Rgb([255, 255, 255]));
        for k in 0..8 {
            fill(&mut img, Rect::new(20 + k * 10, 30, 6, 10), [0, 0, 0]);
        }
        let found = extract_widgets(&img, &ExtractConfig::web()).unwrap();
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found[0].is_text());
        assert!(
            found[0].rect.iou(&Rect::new(20, 30, 76, 10)) > 0.7,
            "{found:?}"
        );
    }

    #[test]
    fn boxes_snap_to_what_is_drawn() {
        let mut img = RgbImage::from_pixel(200, 100, Rgb([255, 255, 255]));
        let text = Rect::new(20, 30, 40, 6);
        fill(&mut img, text, [40, 40, 40]);
        let button = Rect::new(100, 20, 60, 30);
        fill(&mut img, button, [31, 95, 209]);
        let off = |r: Rect, d: i32| DetectedBox {
            rect: Rect::new(r.x - d, r.y + d, r.width, r.height),
            origin: BoxOrigin::Edges,
        };
        // A pixel out (the 6 px line is then at IoU 0.68), and two boxes that snap onto
        // one rectangle.
        let boxes = vec![off(text, 1), off(button, 1), off(button, -1)];
        assert!(boxes[0].rect.iou(&text) < 0.8);
        let snapped = snap_to_ink(&img, boxes.clone(), 2);
        let rects: Vec<Rect> = snapped.iter().map(|d| d.rect).collect();
        assert_eq!(rects, vec![button, text]);
        assert_eq!(snap_to_ink(&img, boxes.clone(), 0), boxes);
    }

    /// Eight glyph stripes from `x`: a label's word.
    fn label(img: &mut RgbImage, x: i32, y: i32) -> Rect {
        for k in 0..8 {
            fill(img, Rect::new(x + k * 8, y, 5, 10), [0, 0, 0]);
        }
        Rect::new(x, y, 61, 10)
    }

    #[test]
    fn a_check_box_before_its_label_is_a_widget_of_its_own() {
        let mut img = RgbImage::from_pixel(300, 120, Rgb([255, 255, 255]));
        // A checked box: blue fill with a white tick drawn inside it.
        let boxed = Rect::new(20, 20, 14, 14);
        fill(&mut img, boxed, [31, 95, 209]);
        fill(&mut img, Rect::new(24, 26, 6, 2), [255, 255, 255]);
        let text = label(&mut img, 42, 22);
        // An empty frame, as an unchecked box or a radio button is drawn.
        let frame = Rect::new(20, 60, 14, 14);
        fill(&mut img, frame, [90, 90, 90]);
        fill(&mut img, Rect::new(22, 62, 10, 10), [255, 255, 255]);
        let text2 = label(&mut img, 42, 62);
        let found = extract_widgets(&img, &ExtractConfig::web()).unwrap();
        for want in [boxed, text, frame, text2] {
            assert!(
                found.iter().any(|d| d.rect.iou(&want) >= 0.6),
                "{want:?} not in {found:?}"
            );
        }
        assert_eq!(found.len(), 4, "{found:?}");
        let off = ExtractConfig {
            mark_min_side: 0,
            ..ExtractConfig::web()
        };
        // Without the split the checked box is one more glyph of its label's line (an
        // empty frame is an outline, a shape, either way).
        let merged = extract_widgets(&img, &off).unwrap();
        assert_eq!(merged.len(), 3, "{merged:?}");
        assert!(
            !merged.iter().any(|d| d.rect.iou(&boxed) >= 0.6),
            "{merged:?}"
        );
    }

    #[test]
    fn a_ring_inside_a_word_stays_a_letter() {
        let mut img = RgbImage::from_pixel(300, 80, Rgb([255, 255, 255]));
        // An "O" one pixel before the next letters, as in "Open".
        fill(&mut img, Rect::new(20, 20, 11, 11), [0, 0, 0]);
        fill(&mut img, Rect::new(23, 23, 5, 5), [255, 255, 255]);
        label(&mut img, 33, 21);
        let found = extract_widgets(&img, &ExtractConfig::web()).unwrap();
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found[0].is_text());
    }

    #[test]
    fn merge_prefers_ocr_text_and_attaches_labels() {
        let button = DetectedBox {
            rect: Rect::new(0, 0, 100, 40),
            origin: BoxOrigin::Edges,
        };
        let glyph = DetectedBox {
            rect: Rect::new(210, 12, 10, 14),
            origin: BoxOrigin::Edges,
        };
        let line = DetectedBox {
            rect: Rect::new(200, 10, 60, 18),
            origin: BoxOrigin::Text,
        };
        let text = [Rect::new(20, 10, 60, 20), Rect::new(200, 10, 80, 20)];
        let out = merge_text_regions(&[button, glyph, line], &text);
        assert_eq!(out.len(), 2, "{out:?}");
        assert_eq!(out[0], button);
        assert_eq!(out[1].rect, text[1]);
        assert_eq!(out[1].origin, BoxOrigin::TextRegion);
    }
}
