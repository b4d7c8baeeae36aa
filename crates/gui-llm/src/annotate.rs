//! The visual prompt of VisionDroid (Section III-A2): bounding boxes around the
//! actionable widgets of a screenshot, coloured by action type, and widget ids in
//! reading order, drawn only on the first widget of each row. Also the IMAGE view of
//! the testing history (Section III-B1): a screenshot with the acted-on widget marked.
//!
//! Everything is drawn with plain pixel loops and a built-in digit font, so the crate
//! needs no drawing or font dependency.

use std::io::Cursor;

use gui_core::{Rect, Screenshot, Size, UiElement, UiHierarchy};
use image::{Rgb, RgbImage};
use serde::{Deserialize, Serialize};

use crate::{Error, Result};

/// The five kinds of operation VisionDroid offers the model (Section III-A2), each
/// shown by the colour of a widget's bounding box.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ActionType {
    Click,
    Input,
    LongClick,
    Check,
    Scroll,
}

impl ActionType {
    /// Every type, in the order boxes are nested (outermost first) and listed.
    pub const ALL: [ActionType; 5] = [
        ActionType::Click,
        ActionType::Input,
        ActionType::LongClick,
        ActionType::Check,
        ActionType::Scroll,
    ];

    /// The box colour of the paper: red, blue, purple, pink, yellow.
    pub fn colour(self) -> Rgb<u8> {
        match self {
            ActionType::Click => Rgb([230, 0, 0]),
            ActionType::Input => Rgb([0, 70, 255]),
            ActionType::LongClick => Rgb([140, 0, 200]),
            ActionType::Check => Rgb([255, 80, 180]),
            ActionType::Scroll => Rgb([240, 200, 0]),
        }
    }

    /// The colour's name, for the legend of the prompt.
    pub fn colour_name(self) -> &'static str {
        match self {
            ActionType::Click => "red",
            ActionType::Input => "blue",
            ActionType::LongClick => "purple",
            ActionType::Check => "pink",
            ActionType::Scroll => "yellow",
        }
    }

    /// The operation as the prompt names it.
    pub fn verb(self) -> &'static str {
        match self {
            ActionType::Click => "click",
            ActionType::Input => "input",
            ActionType::LongClick => "long click",
            ActionType::Check => "check",
            ActionType::Scroll => "scroll",
        }
    }

    /// The types `e` supports, in [`ActionType::ALL`] order; empty for an element that
    /// is not actionable.
    ///
    /// A text field is only [`Input`](ActionType::Input): it is nearly always clickable
    /// and long-clickable too, but tapping it merely focuses it and a long press opens
    /// the system's selection menu, neither of which tests the app. A checkable element
    /// is [`Check`](ActionType::Check) rather than also [`Click`](ActionType::Click), as
    /// checking is what the tap does; it keeps long-click and scroll when it has them.
    pub fn of(e: &UiElement) -> Vec<ActionType> {
        if e.editable {
            return vec![ActionType::Input];
        }
        ActionType::ALL
            .into_iter()
            .filter(|t| match t {
                ActionType::Click => e.clickable && !e.checkable,
                ActionType::Input => false,
                ActionType::LongClick => e.long_clickable,
                ActionType::Check => e.checkable,
                ActionType::Scroll => e.scrollable,
            })
            .collect()
    }
}

/// How widgets are grouped, numbered and drawn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct AnnotateConfig {
    /// Two widgets share a row when their vertical extents overlap by at least this
    /// fraction of the shorter height (and they stand side by side rather than one
    /// inside the other, see [`number_widgets`]).
    pub row_overlap: f32,
    /// Box line width in logical pixels; multiplied by the screenshot's scale.
    pub line_width: u32,
    /// Size multiplier of the 5x7 digit font; multiplied by the screenshot's scale.
    pub digit_scale: u32,
    /// Draw every widget's id instead of only the first of each row (the paper's rule,
    /// which keeps crowded screens legible).
    pub label_every_widget: bool,
    /// Widgets whose visible part is narrower or shorter than this many screenshot
    /// pixels are left out.
    ///
    /// Unlike the drawing sizes this is not multiplied by the scale: [`number_widgets`]
    /// sees no screenshot, and it must number exactly the widgets [`annotate`] draws,
    /// or ids in a text prompt would point at other widgets than ids on the image.
    pub min_size: u32,
}

impl Default for AnnotateConfig {
    fn default() -> Self {
        Self {
            row_overlap: 0.5,
            line_width: 2,
            digit_scale: 2,
            label_every_widget: false,
            min_size: 4,
        }
    }
}

/// One numbered widget of the visual prompt.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AnnotatedWidget {
    /// 1-based position in reading order: the id the model answers with.
    pub id: u32,
    /// Index into [`UiHierarchy::elements`].
    pub element: usize,
    /// The box colours drawn, outermost first; never empty.
    pub types: Vec<ActionType>,
    /// 0-based row, top to bottom.
    pub row: u32,
    /// Whether the id is drawn on the image (the first widget of its row).
    pub labelled: bool,
    /// The element's bounds clipped to the screen.
    pub bounds: Rect,
}

/// A screenshot annotated for the model, with the widgets its ids stand for.
#[derive(Debug, Clone)]
pub struct Annotation {
    /// In id order: `widgets[i].id == i + 1`.
    pub widgets: Vec<AnnotatedWidget>,
    pub image: RgbImage,
}

impl Annotation {
    /// The widget the model means by `id`.
    pub fn widget(&self, id: u32) -> Option<&AnnotatedWidget> {
        let index = usize::try_from(id.checked_sub(1)?).ok()?;
        self.widgets.get(index).filter(|w| w.id == id)
    }

    /// The annotated image as PNG bytes.
    pub fn to_png(&self) -> Result<Vec<u8>> {
        let mut out = Vec::new();
        self.image
            .write_to(&mut Cursor::new(&mut out), image::ImageFormat::Png)
            .map_err(|e| Error::Image(format!("encoding the annotated screenshot: {e}")))?;
        Ok(out)
    }
}

/// Numbers the actionable widgets of `ui` in reading order, "as a screen reader
/// would": top to bottom by rows, left to right within a row (Section III-A2).
///
/// Elements that are not actionable, lie entirely outside `screen`, or whose visible
/// part is smaller than [`AnnotateConfig::min_size`] get no id. Rows are built greedily
/// over the widgets sorted by top: a widget joins the current row when it overlaps the
/// row's first widget vertically by `row_overlap` of the shorter height and overlaps
/// it horizontally by less than half the narrower width. The second condition
/// keeps a widget nested in a container (an item of a scrollable list, a checkbox in a
/// clickable list row) from vanishing into the container's row: it is inside it, not
/// beside it. Ties are broken by document order, so the numbering is deterministic.
pub fn number_widgets(
    ui: &UiHierarchy,
    screen: Size,
    config: &AnnotateConfig,
) -> Vec<AnnotatedWidget> {
    let mut candidates: Vec<(usize, Rect, Vec<ActionType>)> = ui
        .elements
        .iter()
        .enumerate()
        .filter_map(|(index, e)| {
            let types = ActionType::of(e);
            if types.is_empty() {
                return None;
            }
            let visible = e.bounds.clip_to(screen)?;
            (visible.width >= config.min_size && visible.height >= config.min_size)
                .then_some((index, visible, types))
        })
        .collect();
    candidates.sort_by_key(|(index, bounds, _)| (bounds.y, *index));

    let mut rows: Vec<Vec<(usize, Rect, Vec<ActionType>)>> = Vec::new();
    for candidate in candidates {
        match rows.last_mut() {
            Some(row) if beside(&row[0].1, &candidate.1, config.row_overlap) => {
                row.push(candidate);
            }
            _ => rows.push(vec![candidate]),
        }
    }

    let mut widgets = Vec::new();
    for (row_index, mut row) in rows.into_iter().enumerate() {
        row.sort_by_key(|(index, bounds, _)| (bounds.x, *index));
        for (position, (element, bounds, types)) in row.into_iter().enumerate() {
            widgets.push(AnnotatedWidget {
                id: widgets.len() as u32 + 1,
                element,
                types,
                row: row_index as u32,
                labelled: position == 0 || config.label_every_widget,
                bounds,
            });
        }
    }
    widgets
}

/// How much of the narrower of two widgets may overlap the other horizontally while
/// they still count as side by side; beyond it one is inside or above the other.
const SIDE_BY_SIDE_OVERLAP: f32 = 0.5;

/// Whether `b` stands in the same row as `a`: level with it (`row_overlap`) and next to
/// it rather than inside or above it.
fn beside(a: &Rect, b: &Rect, row_overlap: f32) -> bool {
    let overlap = |a0: i32, a1: i32, b0: i32, b1: i32| (a1.min(b1) - a0.max(b0)).max(0) as f32;
    let vertical = overlap(a.y, a.bottom(), b.y, b.bottom());
    let horizontal = overlap(a.x, a.right(), b.x, b.right());
    vertical > 0.0
        && vertical >= row_overlap * a.height.min(b.height) as f32
        && horizontal < SIDE_BY_SIDE_OVERLAP * a.width.min(b.width) as f32
}

/// The visual prompt of Section III-A2: `shot` with a box per action type around every
/// numbered widget and the ids of the labelled ones.
///
/// A widget with several types gets nested outlines, the second inside the first and
/// so on. Boxes are drawn largest first so that widgets inside containers stay
/// visible, and labels last so that no box crosses a number. A label sits just above
/// the widget's top-left corner, or inside it when there is no room above or the place
/// above lies on another widget's box or label (the item above in a list); in a tight
/// spot it moves to the top-right corner.
pub fn annotate(shot: &Screenshot, ui: &UiHierarchy, config: &AnnotateConfig) -> Annotation {
    let widgets = number_widgets(ui, shot.size(), config);
    let mut image = shot.pixels().clone();
    let scale = device_scale(shot.scale);
    let line = scaled(config.line_width, scale);
    let digit = scaled(config.digit_scale, scale);

    let mut by_area: Vec<&AnnotatedWidget> = widgets.iter().collect();
    by_area.sort_by_key(|w| (std::cmp::Reverse(w.bounds.area()), w.id));
    for w in by_area {
        for (nesting, ty) in w.types.iter().enumerate() {
            if let Some(inner) = inset(w.bounds, nesting as u32 * line) {
                draw_outline(&mut image, inner, line, ty.colour());
            }
        }
    }
    let screen = shot.size();
    let mut labels: Vec<Rect> = Vec::new();
    for w in widgets.iter().filter(|w| w.labelled) {
        // A label lying on another widget's box could be read as that widget's id; the
        // boxes of the widget's own containers are no such risk.
        let foreign: Vec<Rect> = widgets
            .iter()
            .filter(|other| {
                other.id != w.id && other.bounds.intersection(&w.bounds) != Some(w.bounds)
            })
            .map(|other| other.bounds)
            .collect();
        let size = label_size(w.id, digit);
        let label = place_label(screen, w.bounds, size, &labels, &foreign);
        draw_number(&mut image, label, w.id, w.types[0].colour(), digit);
        labels.push(label);
    }
    Annotation { widgets, image }
}

/// A record for the IMAGE view of the testing history (Section III-B1): `shot` with
/// the acted-on widget outlined in thick red and, when given, the step number at the
/// outline's top-left corner.
pub fn mark_action(shot: &Screenshot, bounds: Rect, caption_step: Option<u32>) -> RgbImage {
    let mut image = shot.pixels().clone();
    let scale = device_scale(shot.scale);
    let Some(visible) = bounds.clip_to(shot.size()) else {
        return image;
    };
    let colour = ActionType::Click.colour();
    draw_outline(&mut image, visible, scaled(3, scale), colour);
    if let Some(step) = caption_step {
        let digit = scaled(AnnotateConfig::default().digit_scale, scale);
        let label = place_label(shot.size(), visible, label_size(step, digit), &[], &[]);
        draw_number(&mut image, label, step, colour, digit);
    }
    image
}

/// `img` shrunk so that its longer side is at most `max_side` pixels (image tokens are
/// paid per tile), keeping the aspect ratio; a plain copy when it is already small
/// enough.
pub fn downscale_for_prompt(img: &RgbImage, max_side: u32) -> RgbImage {
    let max_side = max_side.max(1);
    let (width, height) = img.dimensions();
    let longer = width.max(height);
    if longer <= max_side {
        return img.clone();
    }
    let shrink = |side: u32| {
        ((side as u64 * max_side as u64 + longer as u64 / 2) / longer as u64).max(1) as u32
    };
    image::imageops::resize(
        img,
        shrink(width),
        shrink(height),
        image::imageops::FilterType::Triangle,
    )
}

/// A usable device pixel ratio: a missing or nonsensical one counts as 1.
fn device_scale(scale: f32) -> f32 {
    if scale.is_finite() && scale > 0.0 {
        scale
    } else {
        1.0
    }
}

/// A logical size in device pixels, at least 1.
fn scaled(logical: u32, scale: f32) -> u32 {
    ((logical as f32 * scale).round() as u32).max(1)
}

/// `r` shrunk by `by` pixels on every side; `None` when nothing is left.
fn inset(r: Rect, by: u32) -> Option<Rect> {
    let shrink = 2 * by;
    (r.width > shrink && r.height > shrink).then(|| {
        Rect::new(
            r.x + by as i32,
            r.y + by as i32,
            r.width - shrink,
            r.height - shrink,
        )
    })
}

/// Fills the part of `r` that lies on the image.
fn fill(img: &mut RgbImage, r: Rect, colour: Rgb<u8>) {
    let Some(r) = r.clip_to(Size::new(img.width(), img.height())) else {
        return;
    };
    for y in r.y..r.bottom() {
        for x in r.x..r.right() {
            img.put_pixel(x as u32, y as u32, colour);
        }
    }
}

/// An outline `thickness` pixels wide drawn inside `r`.
fn draw_outline(img: &mut RgbImage, r: Rect, thickness: u32, colour: Rgb<u8>) {
    let t = thickness.min(r.width).min(r.height);
    fill(img, Rect::new(r.x, r.y, r.width, t), colour);
    fill(
        img,
        Rect::new(r.x, r.bottom() - t as i32, r.width, t),
        colour,
    );
    fill(img, Rect::new(r.x, r.y, t, r.height), colour);
    fill(
        img,
        Rect::new(r.right() - t as i32, r.y, t, r.height),
        colour,
    );
}

/// 5x7 glyphs of the digits 0-9, one byte per row, the leftmost pixel in bit 4.
const DIGITS: [[u8; GLYPH_HEIGHT]; 10] = [
    [0x0E, 0x11, 0x13, 0x15, 0x19, 0x11, 0x0E],
    [0x04, 0x0C, 0x04, 0x04, 0x04, 0x04, 0x0E],
    [0x0E, 0x11, 0x01, 0x02, 0x04, 0x08, 0x1F],
    [0x1F, 0x02, 0x04, 0x02, 0x01, 0x11, 0x0E],
    [0x02, 0x06, 0x0A, 0x12, 0x1F, 0x02, 0x02],
    [0x1F, 0x10, 0x1E, 0x01, 0x01, 0x11, 0x0E],
    [0x06, 0x08, 0x10, 0x1E, 0x11, 0x11, 0x0E],
    [0x1F, 0x01, 0x02, 0x04, 0x08, 0x08, 0x08],
    [0x0E, 0x11, 0x11, 0x0E, 0x11, 0x11, 0x0E],
    [0x0E, 0x11, 0x11, 0x0F, 0x01, 0x02, 0x0C],
];
const GLYPH_WIDTH: u32 = 5;
const GLYPH_HEIGHT: usize = 7;

/// The colour of digits on a label of colour `background`: white, as in the paper's
/// figures, except on light backgrounds (the yellow of scroll boxes) where white would
/// be hard to read, for the model as for a person, and black is used instead.
fn ink_on(background: Rgb<u8>) -> Rgb<u8> {
    let [r, g, b] = background.0.map(u32::from);
    // Rec. 601 luma, scaled by 1000.
    if 299 * r + 587 * g + 114 * b > 150_000 {
        Rgb([0, 0, 0])
    } else {
        Rgb([255, 255, 255])
    }
}

/// The size of the label of `number`: the digits at `dot` pixels per glyph pixel, one
/// glyph pixel apart and inside a one glyph pixel margin.
fn label_size(number: u32, dot: u32) -> Size {
    let count = number.to_string().len() as u32;
    Size::new(
        dot * (count * GLYPH_WIDTH + (count - 1) + 2),
        dot * (GLYPH_HEIGHT as u32 + 2),
    )
}

/// Where the label of the widget at `anchor` goes: at its top-left corner, just above
/// it (the paper's figures) or else just inside it; failing both, at its top-right
/// corner, above or inside. The first place that overlaps neither an earlier label nor
/// a box in `foreign` wins; then the first that overlaps no earlier label; then the
/// top-left corner inside. Labels never leave the screen.
fn place_label(screen: Size, anchor: Rect, size: Size, labels: &[Rect], foreign: &[Rect]) -> Rect {
    let max_x = (screen.width as i32 - size.width as i32).max(0);
    let left = anchor.x.clamp(0, max_x);
    let right = (anchor.right() - size.width as i32).clamp(0, max_x);
    let above = anchor.y - size.height as i32;
    let candidates = [
        (left, above),
        (left, anchor.y),
        (right, above),
        (right, anchor.y),
    ]
    .map(|(x, y)| Rect::new(x, y, size.width, size.height));
    let clear = |r: &Rect, boxes: &[Rect]| boxes.iter().all(|b| b.intersection(r).is_none());
    let on_screen = |r: &Rect| r.y >= 0;
    candidates
        .iter()
        .find(|r| on_screen(r) && clear(r, labels) && clear(r, foreign))
        .or_else(|| candidates.iter().find(|r| on_screen(r) && clear(r, labels)))
        .copied()
        .unwrap_or(candidates[1])
}

/// Draws `number` in `label`, filled with `background`.
fn draw_number(img: &mut RgbImage, label: Rect, number: u32, background: Rgb<u8>, dot: u32) {
    fill(img, label, background);
    let ink = ink_on(background);
    for (i, d) in number.to_string().bytes().enumerate() {
        let glyph = &DIGITS[usize::from(d - b'0')];
        let left = label.x + (dot * (1 + i as u32 * (GLYPH_WIDTH + 1))) as i32;
        for (row, bits) in glyph.iter().enumerate() {
            for col in 0..GLYPH_WIDTH {
                if bits & (1 << (GLYPH_WIDTH - 1 - col)) != 0 {
                    let px = left + (col * dot) as i32;
                    let py = label.y + (dot * (1 + row as u32)) as i32;
                    fill(img, Rect::new(px, py, dot, dot), ink);
                }
            }
        }
    }
}
