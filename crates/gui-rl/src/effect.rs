//! Did an action do anything a person could see? The agent compares the screen before an
//! action with the screen after it.
//!
//! Eq. 1 rewards a step by how unexplored the next page is, so an action that changes
//! nothing earns about what any other action on a fresh page earns. On the web such
//! actions are common: a right or middle click on a button that is not a link, a double
//! click on a label (`docs/pirltest.md` has the counts). [`AgentConfig::idle_reward`]
//! gives such steps their own reward, so the Q-network can learn which actions do
//! nothing, and [`EffectPrior`] learns how often each kind of action changes anything.
//!
//! A resize (window size, split screen, orientation) changes every pixel, so the agent
//! judges it by the page it leads to instead: it counts when that page is new. The prior
//! does not learn resizes; the agent weighs them as the screen's other actions on
//! average.
//!
//! [`AgentConfig::idle_reward`]: crate::AgentConfig::idle_reward

use std::collections::HashMap;

use gui_core::{Action, ActionKind, ActionParam, Rect, Screenshot, SwipeDirection, WidgetKind};

use crate::{ActionKey, PageId};

/// A screen reduced to the mean brightness of each `CELL`×`CELL` block of pixels: enough
/// to tell whether anything changed, and where, at 1/16 of the pixels.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScreenPrint {
    width: u32,
    height: u32,
    cols: u32,
    rows: u32,
    luma: Vec<u8>,
}

/// Cells that changed by at most this much brightness (of 255) count as unchanged: it
/// absorbs rounding, not a hover tint (about 10 on the demo's buttons).
const LUMA_TOLERANCE: u8 = 2;

/// Share of the cells outside the target that must change for the action to count as
/// seen: 0.1 % is 64 cells at 1280x800. A blinking text caret touches about 5.
pub const SEEN_SHARE: f64 = 0.001;

/// Changed cells outside the target that count as seen whatever the screen's size
/// ([`had_effect`]): a counter going from 0 to 1 in the demo's 28-px figures changes 33
/// cells (0.05 % at 1280x800) and from 1 to 2 changes 26, under [`SEEN_SHARE`]; a
/// blinking caret changes about 5, or 10 across a cell boundary.
pub const SEEN_CELLS: usize = 16;

/// The share that a double or long click on a widget that does not show its own state
/// must change: such a click on text selects a word and clears the last selection, two
/// highlights of about 1,000 pixels each (0.2 % at 1280x800). 0.5 % is 320 cells there.
pub const SELECTION_SHARE: f64 = 0.005;

/// How far a cell behind a backdrop may be from the fitted `k · before + b`, in
/// brightness levels (of 255): the fit's rounding and the cells' own.
pub const BACKDROP_FIT: f64 = 4.0;

/// The factor `k` of a backdrop: it dims by 10 % to 85 % (the demo's 55 % black layer
/// gives 0.45).
pub const BACKDROP_DIMMING: std::ops::RangeInclusive<f64> = 0.15..=0.9;

/// Share of the cells outside the dialog that the fit must explain.
pub const BACKDROP_OUTSIDE: f64 = 0.97;

/// Largest share of the screen a dialog may cover: a layer over more is a new page.
pub const BACKDROP_MAX_BOX: f64 = 0.6;

/// Shortest side of a dialog, in pixels.
pub const BACKDROP_MIN_SIDE: u32 = 48;

/// Share of the screen that must change when a backdrop comes.
pub const BACKDROP_MIN_CHANGED: f64 = 0.3;

/// Largest share of the cells outside an open dialog that may change while the dialog
/// stays open: hover tints and text selections behind the backdrop come and go, while
/// closing the dialog lifts the backdrop, which changes at least
/// [`BACKDROP_MIN_CHANGED`]. A click inside a dialog that clears a word selected behind
/// it changes about 0.1 % of a 1280x800 screen, and must not close the dialog.
pub const DIALOG_KEPT_SHARE: f64 = 0.02;

/// Share of a screen's edge row of cells that must stand out from the row's most common
/// brightness for the page to go on past that edge ([`ScreenPrint::cut_at_bottom`]): 1 %,
/// about 13 px of a 1280-px row. The one-pixel side borders of a card cut by the edge
/// make 2 cells of 320 and do not count; the demo's profile form at 1280x800, cut off
/// through its card and its Submit button, makes 121.
pub const CUT_SHARE: f64 = 0.01;

/// How far, in brightness levels (of 255), a cell of an edge row may be from the row's
/// most common brightness and still count as the same flat colour: a gentle background
/// gradient stays within it, a one-pixel grey border in a 4-px cell (about 10) does not.
pub const CUT_TOLERANCE: u8 = 8;

/// How many cells apart two changed cells may be and still belong to one changed part of
/// the screen ([`ScreenPrint::changed_parts`]): 2 cells, 8 px, the space between two
/// words of a label at the demo's font size.
pub const PART_GAP: u32 = 2;

/// How far around the target widget its own changes may reach (hover shadows, focus
/// rings), in pixels.
pub const TARGET_MARGIN: u32 = 8;

impl ScreenPrint {
    /// Side of a cell in pixels.
    pub const CELL: u32 = 4;

    pub fn of(screen: &Screenshot) -> Self {
        let pixels = screen.pixels();
        let (width, height) = pixels.dimensions();
        let cols = width.div_ceil(Self::CELL);
        let rows = height.div_ceil(Self::CELL);
        let mut sum = vec![0u32; (cols * rows) as usize];
        let mut count = vec![0u32; (cols * rows) as usize];
        for (y, row) in pixels.as_raw().chunks_exact(width as usize * 3).enumerate() {
            let base = (y as u32 / Self::CELL * cols) as usize;
            for (x, p) in row.chunks_exact(3).enumerate() {
                // Rec. 601 weights in integers (sum 256).
                let l = (77 * u32::from(p[0]) + 150 * u32::from(p[1]) + 29 * u32::from(p[2])) >> 8;
                let i = base + x / Self::CELL as usize;
                sum[i] += l;
                count[i] += 1;
            }
        }
        let luma = sum
            .iter()
            .zip(&count)
            .map(|(s, c)| (s / (*c).max(1)) as u8)
            .collect();
        Self {
            width,
            height,
            cols,
            rows,
            luma,
        }
    }

    /// A hash of the screen's size and of its cells at 16 brightness levels: screens
    /// that look alike to a person hash alike, whatever small rounding differs.
    pub fn coarse_hash(&self) -> u64 {
        let size = [self.width, self.height].map(u32::to_le_bytes);
        fnv1a(
            size.into_iter()
                .flatten()
                .chain(self.luma.iter().map(|l| l >> 4)),
        )
    }

    /// [`coarse_hash`](Self::coarse_hash) of the cells that `rect` touches alone, with
    /// the box's place: a dialog over a dimmed page hashes alike whatever page is
    /// behind it.
    pub fn coarse_hash_within(&self, rect: Rect) -> u64 {
        let (c0, r0, c1, r1) = self.cells_of(rect);
        let place = [self.width, self.height, c0, r0, c1, r1].map(u32::to_le_bytes);
        let cells = (r0..r1)
            .flat_map(|row| (c0..c1).map(move |col| (row * self.cols + col) as usize))
            .map(|i| self.luma[i] >> 4);
        fnv1a(place.into_iter().flatten().chain(cells))
    }

    /// Whether the screen's last row of cells shows content, not one flat colour: the
    /// page goes on below the screen's edge (a form whose Submit button is cut off), and
    /// scrolling down may show more ([`CUT_SHARE`]).
    pub fn cut_at_bottom(&self) -> bool {
        self.rows > 0 && self.row_shows_content(self.rows - 1)
    }

    /// [`cut_at_bottom`](Self::cut_at_bottom) for the first row: the page goes on above.
    /// A header fixed at the top shows a flat colour there, so this says nothing on
    /// pages that have one.
    pub fn cut_at_top(&self) -> bool {
        self.rows > 0 && self.row_shows_content(0)
    }

    /// Whether more than [`CUT_SHARE`] of row `row`'s cells differ by more than
    /// [`CUT_TOLERANCE`] from the row's most common brightness.
    fn row_shows_content(&self, row: u32) -> bool {
        let start = (row * self.cols) as usize;
        let cells = &self.luma[start..start + self.cols as usize];
        let mut counts = [0u32; 256];
        for l in cells {
            counts[usize::from(*l)] += 1;
        }
        let mode = (0..256)
            .max_by_key(|l| (counts[*l], usize::MAX - l))
            .unwrap_or(0) as u8;
        let differ = cells
            .iter()
            .filter(|l| l.abs_diff(mode) > CUT_TOLERANCE)
            .count();
        differ as f64 > CUT_SHARE * cells.len() as f64
    }

    /// Size of the screen it was made from, in pixels.
    pub fn size(&self) -> (u32, u32) {
        (self.width, self.height)
    }

    /// Share of cells that differ between the two screens, leaving out the cells that
    /// touch `except`; 1.0 when the screens differ in size.
    pub fn changed_outside(&self, other: &ScreenPrint, except: Option<Rect>) -> f64 {
        self.changed_outside_all(other, except.as_slice())
    }

    /// [`changed_outside`](Self::changed_outside) leaving out the cells that touch any of
    /// the rectangles.
    pub fn changed_outside_all(&self, other: &ScreenPrint, except: &[Rect]) -> f64 {
        if self.size() != other.size() {
            return 1.0;
        }
        let (changed, counted) = self.cells_changed_outside(other, except);
        changed as f64 / counted.max(1) as f64
    }

    /// How many cells differ between the two screens, of the same size, outside `except`
    /// (cells touching any of them left out), and how many were compared.
    fn cells_changed_outside(&self, other: &ScreenPrint, except: &[Rect]) -> (usize, usize) {
        let skip: Vec<CellBox> = except.iter().map(|r| self.cells_of(*r)).collect();
        let mut changed = 0usize;
        let mut counted = 0usize;
        for row in 0..self.rows {
            for col in 0..self.cols {
                if in_any(&skip, col, row) {
                    continue;
                }
                let i = (row * self.cols + col) as usize;
                counted += 1;
                changed += usize::from(self.luma[i].abs_diff(other.luma[i]) > LUMA_TOLERANCE);
            }
        }
        (changed, counted)
    }

    /// The boxes of the separate parts of the screen that differ between the two
    /// screens, leaving out the cells that touch any of `except`: groups of changed cells
    /// at most `PART_GAP` cells apart, so that the letters of one changed word make
    /// one part and a tick and a count elsewhere make two. Empty when nothing differs or
    /// the sizes differ.
    pub fn changed_parts(&self, other: &ScreenPrint, except: &[Rect]) -> Vec<Rect> {
        if self.size() != other.size() {
            return Vec::new();
        }
        let skip: Vec<CellBox> = except.iter().map(|r| self.cells_of(*r)).collect();
        let changed: Vec<bool> = (0..self.luma.len())
            .map(|i| {
                let (row, col) = (i as u32 / self.cols, i as u32 % self.cols);
                self.luma[i].abs_diff(other.luma[i]) > LUMA_TOLERANCE && !in_any(&skip, col, row)
            })
            .collect();
        let cell = Self::CELL;
        let parts: Vec<Rect> = cell_groups(&changed, self.cols, self.rows, PART_GAP)
            .into_iter()
            .map(|(_, (c0, r0, c1, r1))| {
                let (x, y) = (c0 * cell, r0 * cell);
                Rect::new(
                    x as i32,
                    y as i32,
                    ((c1 - c0) * cell).min(self.width - x),
                    ((r1 - r0) * cell).min(self.height - y),
                )
            })
            .collect();
        parts
    }

    /// Whether any cell touching `rect` changed; `true` when the sizes differ.
    pub fn changed_inside(&self, other: &ScreenPrint, rect: Rect) -> bool {
        if self.size() != other.size() {
            return true;
        }
        let (c0, r0, c1, r1) = self.cells_of(rect);
        (r0..r1).any(|row| {
            (c0..c1).any(|col| {
                let i = (row * self.cols + col) as usize;
                self.luma[i].abs_diff(other.luma[i]) > LUMA_TOLERANCE
            })
        })
    }

    /// The box of a dialog that `after` shows over a dimmed copy of `self`, the screen
    /// before it: a modal backdrop. `None` when `after` is not that.
    ///
    /// A backdrop is a translucent layer of one colour over the whole page, so each cell
    /// outside the dialog turns into `k · before + b` for one pair `(k, b)`: a black layer
    /// at 55 % opacity (the demo's) gives `k = 0.45, b = 0`, jQuery UI's grey one at 30 %
    /// gives `k = 0.7, b = 51`. A first line goes through the most common brightness
    /// after each brightness before; it is then fitted again by least squares over the
    /// cells it explains, within 4 × [`BACKDROP_FIT`] once and [`BACKDROP_FIT`] twice, so
    /// the dialog's cells drop out of the fit. The dialog is the box around the largest
    /// 8-connected group of cells left unexplained. It is a backdrop when
    /// - the fit dims: `k` is within [`BACKDROP_DIMMING`] (a dark theme switched on
    ///   inverts brightness, `k < 0`; a page that did not change has `k = 1`);
    /// - the fit explains at least [`BACKDROP_OUTSIDE`] of the cells outside the box and
    ///   the page before it had contrast to fit (a blank page fits any pair);
    /// - the box is at most [`BACKDROP_MAX_BOX`] of the screen and at least
    ///   [`BACKDROP_MIN_SIDE`] pixels on each side, and at least
    ///   [`BACKDROP_MIN_CHANGED`] of the screen changed.
    ///
    /// The cells touching `pointer` (the widget the action clicked and the one the pointer
    /// left) are left out of the share the fit must explain: the pointer's hover tint
    /// lies under the backdrop too. The demo's Help button is 3 % of the cells outside its
    /// dialog at 640x400, enough to miss the 97 %.
    pub fn dialog_over_backdrop(&self, after: &ScreenPrint, pointer: &[Rect]) -> Option<Rect> {
        if self.size() != after.size() || self.luma.is_empty() {
            return None;
        }
        if self.changed_outside(after, None) < BACKDROP_MIN_CHANGED {
            return None;
        }
        let pairs = || {
            self.luma
                .iter()
                .zip(&after.luma)
                .map(|(x, y)| (f64::from(*x), f64::from(*y)))
        };
        // A first line by vote: each pair of brightnesses (before, after) votes, for
        // every dimming factor `k` in steps of 0.01, for the offset `b` that puts it on
        // the line. The backdrop's cells, whatever their brightness, agree on one
        // `(k, b)`; a dialog's cells agree with each other only along lines of their
        // own, one per brightness pair.
        let mut counts = vec![0u32; 256 * 256];
        for (x, y) in self.luma.iter().zip(&after.luma) {
            counts[usize::from(*x) * 256 + usize::from(*y)] += 1;
        }
        let pairs_seen: Vec<(f64, f64, u32)> = counts
            .iter()
            .enumerate()
            .filter(|(_, c)| **c > 0)
            .map(|(i, c)| ((i / 256) as f64, (i % 256) as f64, *c))
            .collect();
        let (mut k, mut b) = vote_line(&pairs_seen);
        let explained = |k: f64, b: f64, tolerance: f64| -> Vec<bool> {
            pairs()
                .map(|(x, y)| (k * x + b - y).abs() <= tolerance)
                .collect()
        };
        for tolerance in [4.0 * BACKDROP_FIT, BACKDROP_FIT, BACKDROP_FIT] {
            let inlier = explained(k, b, tolerance);
            let points = pairs()
                .zip(&inlier)
                .filter(|(_, i)| **i)
                .map(|((x, y), _)| (x, y, 1.0));
            (k, b) = fit_line(points)?;
        }
        let inlier = explained(k, b, BACKDROP_FIT);
        if !BACKDROP_DIMMING.contains(&k) {
            return None;
        }
        // The box: around the largest 8-connected group of unexplained cells, so that a
        // focus ring or a caret elsewhere does not widen it.
        let unexplained: Vec<bool> = inlier.iter().map(|i| !i).collect();
        let best = cell_groups(&unexplained, self.cols, self.rows, 1)
            .into_iter()
            .fold(None, |best: Option<(usize, CellBox)>, g| match best {
                Some((s, _)) if g.0 <= s => best,
                _ => Some(g),
            });
        let cols = self.cols as usize;
        let (_, (c0, r0, c1, r1)) = best?;
        let (c0, r0, c1, r1) = (c0 as usize, r0 as usize, c1 as usize, r1 as usize);
        let cell = Self::CELL as usize;
        let (w, h) = ((c1 - c0) * cell, (r1 - r0) * cell);
        let min = BACKDROP_MIN_SIDE as usize;
        if w < min
            || h < min
            || (w * h) as f64 > BACKDROP_MAX_BOX * (self.width * self.height) as f64
        {
            return None;
        }
        let skip: Vec<CellBox> = pointer.iter().map(|r| self.cells_of(*r)).collect();
        let (mut outside, mut explained) = (0usize, 0usize);
        for (i, ok) in inlier.iter().enumerate() {
            let (r, c) = (i / cols, i % cols);
            if in_any(&skip, c as u32, r as u32) {
                continue;
            }
            if !((r0..r1).contains(&r) && (c0..c1).contains(&c)) {
                outside += 1;
                explained += usize::from(*ok);
            }
        }
        if (explained as f64) < BACKDROP_OUTSIDE * outside as f64 {
            return None;
        }
        let (x, y) = ((c0 * cell) as u32, (r0 * cell) as u32);
        // The last cells of a row or column may be narrower than `CELL`.
        Some(Rect::new(
            x as i32,
            y as i32,
            (w as u32).min(self.width - x),
            (h as u32).min(self.height - y),
        ))
    }

    /// Columns and rows `[c0, c1) × [r0, r1)` of the cells that `rect` touches, clipped to
    /// the screen.
    fn cells_of(&self, rect: Rect) -> (u32, u32, u32, u32) {
        let clip = |v: i64, max: u32| v.clamp(0, i64::from(max)) as u32;
        let x0 = clip(i64::from(rect.x), self.width);
        let y0 = clip(i64::from(rect.y), self.height);
        let x1 = clip(i64::from(rect.x) + i64::from(rect.width), self.width);
        let y1 = clip(i64::from(rect.y) + i64::from(rect.height), self.height);
        (
            x0 / Self::CELL,
            y0 / Self::CELL,
            x1.div_ceil(Self::CELL),
            y1.div_ceil(Self::CELL),
        )
    }
}

/// Columns and rows `[c0, c1) × [r0, r1)` of a box of cells.
type CellBox = (u32, u32, u32, u32);

/// Whether the cell at `col`, `row` lies in any of `boxes`.
fn in_any(boxes: &[CellBox], col: u32, row: u32) -> bool {
    boxes
        .iter()
        .any(|&(c0, r0, c1, r1)| (c0..c1).contains(&col) && (r0..r1).contains(&row))
}

/// The groups of set cells of a `cols` × `rows` mask, two cells joining one group when
/// they are at most `gap` cells apart in both directions (1: 8-connected), in the order
/// their first cell comes in the mask: each group's cell count and box.
fn cell_groups(mask: &[bool], cols: u32, rows: u32, gap: u32) -> Vec<(usize, CellBox)> {
    let (cols, rows, gap) = (i64::from(cols), i64::from(rows), i64::from(gap));
    let mut seen = vec![false; mask.len()];
    let mut groups = Vec::new();
    let mut stack = Vec::new();
    for start in 0..mask.len() {
        if !mask[start] || seen[start] {
            continue;
        }
        seen[start] = true;
        stack.push(start);
        let (mut size, mut c0, mut r0, mut c1, mut r1) = (0, cols, rows, 0, 0);
        while let Some(i) = stack.pop() {
            let (r, c) = (i as i64 / cols, i as i64 % cols);
            size += 1;
            (c0, r0, c1, r1) = (c0.min(c), r0.min(r), c1.max(c + 1), r1.max(r + 1));
            for rr in (r - gap).max(0)..=(r + gap).min(rows - 1) {
                for cc in (c - gap).max(0)..=(c + gap).min(cols - 1) {
                    let j = (rr * cols + cc) as usize;
                    if mask[j] && !seen[j] {
                        seen[j] = true;
                        stack.push(j);
                    }
                }
            }
        }
        groups.push((size, (c0 as u32, r0 as u32, c1 as u32, r1 as u32)));
    }
    groups
}

/// FNV-1a over `bytes`: fixed, so runs repeat.
fn fnv1a(bytes: impl Iterator<Item = u8>) -> u64 {
    bytes.fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// The line `y = k · x + b`, `k` within [`BACKDROP_DIMMING`] in steps of 0.01, that the
/// most of the weighted points `(x, y, count)` lie within [`BACKDROP_FIT`] of (ties go to
/// the smaller `k`, then the smaller `b`; with no points, the smallest of both).
fn vote_line(points: &[(f64, f64, u32)]) -> (f64, f64) {
    let (lo, hi) = (*BACKDROP_DIMMING.start(), *BACKDROP_DIMMING.end());
    let steps = ((hi - lo) / 0.01).round() as usize;
    let reach = BACKDROP_FIT as usize;
    // Votes, `k` and `b` of the best line so far.
    let mut best = (0u32, lo, -255.0);
    // Offsets of a dimming line lie in [-255, 255]: one bin per brightness level.
    let mut bins = vec![0u32; 511 + 2 * reach];
    for step in 0..=steps {
        let k = lo + step as f64 * 0.01;
        bins.iter_mut().for_each(|v| *v = 0);
        for &(x, y, c) in points {
            let b = (y - k * x).round() as i64 + 255 + reach as i64;
            bins[b as usize] += c;
        }
        // Votes within `reach` of each offset.
        let mut window: u32 = bins[..2 * reach].iter().sum();
        for centre in reach..bins.len() - reach {
            window += bins[centre + reach];
            if window > best.0 {
                best = (window, k, centre as f64 - 255.0 - reach as f64);
            }
            window -= bins[centre - reach];
        }
    }
    (best.1, best.2)
}

/// The weighted least-squares line `y = k·x + b` through `(x, y, weight)` points; `None`
/// when the points have less spread in `x` than a standard deviation of 8 levels (a
/// nearly blank screen fits any line).
fn fit_line(points: impl Iterator<Item = (f64, f64, f64)>) -> Option<(f64, f64)> {
    let (mut sw, mut sx, mut sy, mut sxx, mut sxy) = (0.0, 0.0, 0.0, 0.0, 0.0);
    for (x, y, w) in points {
        sw += w;
        sx += w * x;
        sy += w * y;
        sxx += w * x * x;
        sxy += w * x * y;
    }
    if sw <= 0.0 {
        return None;
    }
    let (mx, my) = (sx / sw, sy / sw);
    let var = sxx / sw - mx * mx;
    if var < 64.0 {
        return None;
    }
    let k = (sxy / sw - mx * my) / var;
    Some((k, my - k * mx))
}

/// Widget kinds whose own look is their state: a change inside the widget alone (a tick,
/// a moved thumb, typed text) is the action's effect, not a hover tint.
pub fn shows_own_state(kind: WidgetKind) -> bool {
    use WidgetKind::*;
    matches!(
        kind,
        EditText | CheckBox | RadioButton | Switch | SeekBar | Spinner
    )
}

/// `r` grown by [`TARGET_MARGIN`] on every side.
pub(crate) fn grown(r: Rect) -> Rect {
    r.grown(TARGET_MARGIN as i32)
}

/// Whether `widget` lies within `dialog` grown by [`TARGET_MARGIN`].
pub(crate) fn inside(widget: Rect, dialog: Rect) -> bool {
    let d = grown(dialog);
    widget.x >= d.x
        && widget.y >= d.y
        && widget.right() <= d.right()
        && widget.bottom() <= d.bottom()
}

/// Whether an action of `kind` on `target` (a widget's box and kind, `None` for page and
/// system actions) changed what the screen shows, from the screen `before` it to the
/// screen `after` it. `left` is the box of the widget the pointer moved away from to make
/// the action (the last action's target), if any.
///
/// The screen changed when its size changed, or when more than [`SEEN_SHARE`] of it, or
/// at least [`SEEN_CELLS`] cells, changed outside the target and `left`, both grown by
/// [`TARGET_MARGIN`]
/// ([`SELECTION_SHARE`] for a double or long click, which selects text, and for a drag
/// that starts on a widget that does not show its own state, which sweeps a selection
/// over the text it crosses). A change inside
/// the target alone counts for typed text and for clicks on widgets that
/// [show their own state](shows_own_state); on a button or a label it is the pointer's
/// hover or press tint, and a double or long click in a text field selects a word of it.
/// A change inside `left` alone is that widget losing its hover tint.
pub fn had_effect(
    before: &ScreenPrint,
    after: &ScreenPrint,
    kind: ActionKind,
    target: Option<(Rect, WidgetKind)>,
    left: Option<Rect>,
) -> bool {
    let except: Vec<Rect> = target
        .map(|(r, _)| r)
        .into_iter()
        .chain(left)
        .map(grown)
        .collect();
    let selecting = matches!(kind, ActionKind::DoubleClick | ActionKind::LongClick);
    // A drag from a label or a button sweeps a text selection over what it crosses; a
    // drag on a slider or a switch moves it.
    let sweeps = kind == ActionKind::Drag;
    let selects = (selecting || sweeps) && !target.is_some_and(|(_, w)| shows_own_state(w));
    if before.size() != after.size() {
        return true;
    }
    let (changed, counted) = before.cells_changed_outside(after, &except);
    let share = changed as f64 / counted.max(1) as f64;
    let seen = if selects {
        share > SELECTION_SHARE
    } else {
        share > SEEN_SHARE || changed >= SEEN_CELLS
    };
    if seen {
        return true;
    }
    match target {
        // A double or long click inside a field selects a word of its text: the field
        // changes, the app did nothing.
        Some((rect, widget))
            if kind == ActionKind::Input || (shows_own_state(widget) && !selecting) =>
        {
            before.changed_inside(after, rect)
        }
        _ => false,
    }
}

/// What an action's record is kept by, beside its kind: the kind of the widget it is aimed
/// at, and for a scroll whether the screen shows more in its direction. Every record of
/// the same action kind and aim is one tally ([`EffectPrior`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Aim {
    /// The target widget's kind; `None` for page and system actions.
    pub widget: Option<WidgetKind>,
    /// Whether the action scrolls toward content that the screen's edge cuts off
    /// ([`ScreenPrint::cut_at_bottom`], [`ScreenPrint::cut_at_top`]). Scrolls of a page
    /// that ends on the screen do nothing, and on most pages of most apps that is all
    /// scrolls do; learnt together, a long form's hidden Submit button would stay hidden.
    pub beyond: bool,
}

impl Aim {
    /// The aim of `action` on the screen `print`: its target's kind, and for a scroll
    /// whether the screen cuts the page off in the direction it scrolls. A swipe up moves
    /// the content up and shows what lies below.
    pub(crate) fn of(action: &Action, print: &ScreenPrint) -> Self {
        let beyond = action.kind == ActionKind::Swipe
            && match action.param {
                Some(ActionParam::Direction(SwipeDirection::Down)) => print.cut_at_top(),
                _ => print.cut_at_bottom(),
            };
        Self {
            widget: action.widget().map(|w| w.kind),
            beyond,
        }
    }
}

impl From<Option<WidgetKind>> for Aim {
    fn from(widget: Option<WidgetKind>) -> Self {
        Self {
            widget,
            beyond: false,
        }
    }
}

/// How often actions showed something new, learnt during the run: per action kind and
/// target widget kind, and per action of a page. The agent multiplies each candidate's
/// softmax term by [`chance`](Self::chance) ([`AgentConfig::effect_prior`]).
///
/// The record of an action kind on an [`Aim`] (all right clicks on buttons, say, or all
/// scrolls toward a part of the page the screen cuts off) is Laplace's rule, `p = (novel + 1) / (tried + 2)`: it starts at 1/2 and never reaches
/// 0 or 1, so a rare effect can still be found, and what is learnt on one page carries to
/// the next. A page's own action, once tried, scales that by its own record,
/// `p · ((novel + 1) / (tried + 1))²`: an action that showed nothing new once counts a
/// quarter as much as its untried neighbours, twice a ninth. So a page's untried actions
/// come first, which helps the agent find the one button of a modal dialog that closes
/// it among a hundred candidates that do nothing.
///
/// A page's state can change while it stays the same page: a coupon applied in a cart, a
/// list with every item selected. What its actions did was learnt in the state before
/// ([`state_changed`](Self::state_changed)). An action that once showed something new
/// counts as untried again in the new state, since it may now show something else (the
/// checkout of a cart with a coupon). An action that never showed anything keeps its
/// record: a right click on a label does nothing in either state.
///
/// A value typed, ticked, chosen or slid into one of the page's widgets changes what the
/// page holds ([`values_changed`](Self::values_changed)). That can change what its
/// buttons do (Apply once a coupon is typed, Submit once an email is), but not what its
/// other fields do, so only the page's buttons count as untried again. Otherwise every
/// value of every field would make all the others untried, and a form of a dozen fields
/// would offer new states for longer than a run lasts.
///
/// Right after a command (a button that changed its page and stayed on it), an action's
/// record can also be kept for that pair alone ([`chance_after`](Self::chance_after),
/// [`AgentConfig::command_states`]): Archive right after Select all is another
/// experience than Archive after anything else.
///
/// [`AgentConfig::effect_prior`]: crate::AgentConfig::effect_prior
/// [`AgentConfig::command_states`]: crate::AgentConfig::command_states
#[derive(Debug, Clone, Default)]
pub struct EffectPrior {
    by_kind: HashMap<(ActionKind, Aim), Tally>,
    by_action: HashMap<(PageId, ActionKey), Tally>,
    /// Per (page, command, action right after it).
    by_pair: HashMap<(PageId, ActionKey, ActionKey), Tally>,
    /// How many times each page's state and values changed ([`Self::state_changed`],
    /// [`Self::values_changed`]).
    states: HashMap<PageId, PageState>,
}

#[derive(Debug, Clone, Copy, Default)]
struct Tally {
    tried: u32,
    /// Tries that showed a screen not seen before.
    novel: u32,
    /// The page's counts (`EffectPrior::states`) when `tried` and `novel` were counted.
    state: PageState,
    /// Whether any try, in any state, showed a screen not seen before.
    ever_novel: bool,
}

impl Tally {
    fn add(&mut self, novel: bool) {
        self.tried += 1;
        self.novel += u32::from(novel);
        self.ever_novel |= novel;
    }

    /// Whether the action once showed something new and its counts are of an earlier
    /// state than `now`, or, for a button, from before the page's latest value change:
    /// then it counts as untried.
    fn stale(self, now: PageState, button: bool) -> bool {
        (self.state.state < now.state || (button && self.state.values < now.values))
            && self.ever_novel
    }

    fn chance(self) -> f64 {
        (f64::from(self.novel) + 1.0) / (f64::from(self.tried) + 2.0)
    }

    /// How an action's own record scales its kind's chance: `((novel + 1) / (tried + 1))²`.
    fn scale(self) -> f64 {
        ((f64::from(self.novel) + 1.0) / (f64::from(self.tried) + 1.0)).powi(2)
    }
}

impl EffectPrior {
    /// The chance of an action nothing is known about.
    pub const UNTRIED: f64 = 0.5;

    /// Records that `key` on `page` with `aim` (a widget's kind, `None` for page and
    /// system actions, or an [`Aim`]) did or did not show a screen not seen before.
    pub fn record(&mut self, page: PageId, key: ActionKey, aim: impl Into<Aim>, novel: bool) {
        let aim = aim.into();
        self.by_kind.entry((key.kind, aim)).or_default().add(novel);
        let now = self.state_of(page);
        let button = is_button(key, aim);
        let tally = self.by_action.entry((page, key)).or_default();
        if tally.stale(now, button) {
            tally.tried = 0;
            tally.novel = 0;
        }
        tally.state = now;
        tally.add(novel);
    }

    /// Records that an action on `page` showed something new and left the agent on the
    /// same page: the page is in a new state, and its actions that once showed something
    /// new count as untried again.
    pub fn state_changed(&mut self, page: PageId) {
        self.states.entry(page).or_default().state += 1;
    }

    /// Records that an action on `page` changed a value the page shows (typed text, a
    /// tick, a choice, a slider) and left the agent on the same page: the page's buttons
    /// that once showed something new count as untried again, its other actions keep
    /// their records.
    pub fn values_changed(&mut self, page: PageId) {
        self.states.entry(page).or_default().values += 1;
    }

    /// Records that `key`, chosen on `page` right after the command `command`, did or
    /// did not show something new. [`record`](Self::record) keeps the action's other
    /// records; this keeps the pair's.
    pub fn record_after(&mut self, page: PageId, command: ActionKey, key: ActionKey, novel: bool) {
        self.by_pair
            .entry((page, command, key))
            .or_default()
            .add(novel);
    }

    /// The chance that `key` on `page` shows something new right after the command
    /// `command`: the pair's own record once it has one, as [`chance`](Self::chance)
    /// scales by an action's record. Before that, an action that ever showed something
    /// new counts as untried after the command, and one that never did keeps its record
    /// ([`chance`](Self::chance)).
    pub fn chance_after(
        &self,
        page: PageId,
        command: ActionKey,
        key: ActionKey,
        aim: impl Into<Aim>,
    ) -> f64 {
        let aim = aim.into();
        let kind = self.kind_chance(key, aim);
        match self.by_pair.get(&(page, command, key)) {
            Some(t) => kind * t.scale(),
            None => match self.by_action.get(&(page, key)) {
                Some(t) if t.ever_novel => kind,
                _ => self.scaled(page, key, aim, kind),
            },
        }
    }

    /// The record of `key`'s action kind on `aim`, over all pages.
    fn kind_chance(&self, key: ActionKey, aim: Aim) -> f64 {
        self.by_kind
            .get(&(key.kind, aim))
            .copied()
            .unwrap_or_default()
            .chance()
    }

    /// `kind` scaled by the record of `key` on `page` in the page's present state.
    fn scaled(&self, page: PageId, key: ActionKey, aim: Aim, kind: f64) -> f64 {
        match self.by_action.get(&(page, key)) {
            Some(t) if !t.stale(self.state_of(page), is_button(key, aim)) => kind * t.scale(),
            _ => kind,
        }
    }

    fn state_of(&self, page: PageId) -> PageState {
        self.states.get(&page).copied().unwrap_or_default()
    }

    /// The estimated chance, in `(0, 1]`, that `key` on `page` shows something new.
    pub fn chance(&self, page: PageId, key: ActionKey, aim: impl Into<Aim>) -> f64 {
        let aim = aim.into();
        self.scaled(page, key, aim, self.kind_chance(key, aim))
    }
}

/// A page's counts of state and value changes ([`EffectPrior`]).
#[derive(Debug, Clone, Copy, Default)]
struct PageState {
    state: u32,
    values: u32,
}

/// Whether `key` is a click on a button, which acts on the values a page holds.
fn is_button(key: ActionKey, aim: Aim) -> bool {
    clicks_a_button(key.kind, aim.widget)
}

/// Whether an action of `kind` on a widget of `target` kind is a click on a button or an
/// image button: what the effect prior refreshes after a value change, and what
/// [`AgentConfig::command_states`](crate::AgentConfig::command_states) calls a command.
pub(crate) fn clicks_a_button(kind: ActionKind, target: Option<WidgetKind>) -> bool {
    kind == ActionKind::Click
        && matches!(target, Some(WidgetKind::Button | WidgetKind::ImageButton))
}

/// Whether an action of `kind` on a widget of `target` kind sets a value its page
/// shows: typed text, a tick, a choice, a slider's place ([`EffectPrior::values_changed`]).
pub fn sets_a_value(kind: ActionKind, target: Option<WidgetKind>) -> bool {
    match kind {
        ActionKind::Input => true,
        ActionKind::Click | ActionKind::Drag => target.is_some_and(shows_own_state),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use image::{Rgb, RgbImage};

    fn screen(w: u32, h: u32, paint: &[(Rect, [u8; 3])]) -> ScreenPrint {
        let mut img = RgbImage::from_pixel(w, h, Rgb([240, 240, 240]));
        for (r, c) in paint {
            for y in r.y..r.y + r.height as i32 {
                for x in r.x..r.x + r.width as i32 {
                    img.put_pixel(x as u32, y as u32, Rgb(*c));
                }
            }
        }
        ScreenPrint::of(&Screenshot::new(img, 1.0, 0).unwrap())
    }

    const BUTTON: Rect = Rect::new(100, 100, 120, 40);

    #[test]
    fn print_averages_cells_and_keeps_the_size() {
        let p = screen(
            10,
            6,
            &[
                (Rect::new(0, 0, 4, 4), [0, 0, 0]),
                (Rect::new(8, 4, 1, 2), [0, 0, 0]),
            ],
        );
        assert_eq!(p.size(), (10, 6));
        assert_eq!((p.cols, p.rows), (3, 2));
        assert_eq!((p.luma[0], p.luma[1]), (0, 240));
        // The 2x2 cell at the corner averages its own 4 pixels, 2 of them black.
        assert_eq!(p.luma[5], 120);
    }

    #[test]
    fn a_hover_tint_on_a_button_is_no_effect() {
        let before = screen(640, 400, &[(BUTTON, [30, 90, 200])]);
        let after = screen(640, 400, &[(BUTTON, [50, 110, 220])]);
        let target = Some((BUTTON, WidgetKind::Button));
        assert!(!had_effect(
            &before,
            &after,
            ActionKind::RightClick,
            target,
            None
        ));
        // The same change on a checkbox is its new state.
        let target = Some((BUTTON, WidgetKind::CheckBox));
        assert!(had_effect(&before, &after, ActionKind::Click, target, None));
        // Typed text counts on any kind.
        let target = Some((BUTTON, WidgetKind::TextView));
        assert!(had_effect(&before, &after, ActionKind::Input, target, None));
    }

    #[test]
    fn the_widget_the_pointer_left_losing_its_hover_tint_is_no_effect() {
        let last = Rect::new(300, 100, 120, 40);
        let target = Some((BUTTON, WidgetKind::Button));
        // The last action's button was tinted under the pointer; now it is not.
        let before = screen(640, 400, &[(last, [50, 110, 220])]);
        let after = screen(640, 400, &[(last, [30, 90, 200])]);
        assert!(had_effect(&before, &after, ActionKind::Click, target, None));
        assert!(!had_effect(
            &before,
            &after,
            ActionKind::Click,
            target,
            Some(last)
        ));
        // Anything beyond that widget still counts.
        let more = screen(
            640,
            400,
            &[
                (last, [30, 90, 200]),
                (Rect::new(300, 250, 200, 100), [0, 0, 0]),
            ],
        );
        assert!(had_effect(
            &before,
            &more,
            ActionKind::Click,
            target,
            Some(last)
        ));
    }

    #[test]
    fn a_counter_going_up_is_an_effect_on_a_large_screen() {
        // "Add one" and its count beside it, at 1280x800: the figure's change, 20x24 px
        // (30 cells), is under SEEN_SHARE's 64 cells and still seen.
        let target = Some((Rect::new(197, 183, 120, 42), WidgetKind::Button));
        let before = screen(1280, 800, &[]);
        let one = screen(1280, 800, &[(Rect::new(400, 190, 20, 24), [30, 30, 30])]);
        let seen = |after: &ScreenPrint, kind| had_effect(&before, after, kind, target, None);
        assert!(before.changed_outside(&one, None) < SEEN_SHARE);
        assert!(seen(&one, ActionKind::Click));
        // A caret, even across a cell boundary, is not.
        let caret = screen(1280, 800, &[(Rect::new(402, 302, 2, 16), [0, 0, 0])]);
        assert!(!seen(&caret, ActionKind::Click));
        // A double click keeps its own bar: the same figure could be a word selected.
        assert!(!seen(&one, ActionKind::DoubleClick));
    }

    #[test]
    fn a_change_elsewhere_is_an_effect_and_a_caret_is_not() {
        let target = Some((BUTTON, WidgetKind::Button));
        let before = screen(640, 400, &[]);
        let dialog = screen(
            640,
            400,
            &[(Rect::new(300, 200, 200, 100), [255, 255, 255])],
        );
        assert!(had_effect(
            &before,
            &dialog,
            ActionKind::Click,
            target,
            None
        ));
        assert!(had_effect(&before, &dialog, ActionKind::Swipe, None, None));
        let caret = screen(640, 400, &[(Rect::new(400, 300, 1, 16), [0, 0, 0])]);
        assert!(!had_effect(
            &before,
            &caret,
            ActionKind::Click,
            target,
            None
        ));
        assert!(!had_effect(
            &before,
            &before,
            ActionKind::Return,
            None,
            None
        ));
        // A shadow within the margin belongs to the target.
        let shadow = screen(640, 400, &[(Rect::new(96, 140, 128, 4), [150, 150, 150])]);
        assert!(!had_effect(
            &before,
            &shadow,
            ActionKind::Click,
            target,
            None
        ));
    }

    #[test]
    fn a_page_cut_off_by_the_screen_edge_shows_there_and_a_card_border_does_not() {
        // A card whose one-pixel grey sides run past the bottom edge: nothing cut.
        let sides = [
            (Rect::new(176, 120, 1, 680), [200, 200, 200]),
            (Rect::new(1103, 120, 1, 680), [200, 200, 200]),
        ];
        let card = screen(1280, 800, &sides);
        assert!(!card.cut_at_bottom());
        assert!(!screen(1280, 800, &[]).cut_at_bottom());
        // The same card with a button half below the edge, as the demo's form at 1280x800.
        let mut form = sides.to_vec();
        form.push((Rect::new(197, 781, 120, 19), [30, 90, 200]));
        let form = screen(1280, 800, &form);
        assert!(form.cut_at_bottom());
        assert!(!form.cut_at_top());
        // A dark header across the top is one flat colour; text at the very top is not.
        let header = screen(1280, 800, &[(Rect::new(0, 0, 1280, 62), [35, 45, 60])]);
        assert!(!header.cut_at_top());
        let text = screen(1280, 800, &[(Rect::new(40, 0, 300, 3), [20, 20, 20])]);
        assert!(text.cut_at_top());
    }

    #[test]
    fn changed_parts_are_apart_and_the_letters_of_a_word_are_one() {
        let before = screen(640, 400, &[]);
        // Three letters 4 px apart, a tick far below, and a hover tint to leave out.
        let letters = [0, 12, 24].map(|x| (Rect::new(100 + x, 40, 8, 12), [20, 20, 20]));
        let tick = (Rect::new(100, 300, 16, 16), [30, 90, 200]);
        let hover = (Rect::new(400, 200, 120, 40), [50, 110, 220]);
        let mut paint = letters.to_vec();
        paint.extend([tick, hover]);
        let after = screen(640, 400, &paint);
        let parts = before.changed_parts(&after, &[grown(hover.0)]);
        assert_eq!(
            parts,
            vec![Rect::new(100, 40, 32, 12), Rect::new(100, 300, 16, 16)]
        );
        assert!(before.changed_parts(&before, &[]).is_empty());
        assert!(before.changed_parts(&screen(320, 200, &[]), &[]).is_empty());
    }

    #[test]
    fn scrolls_toward_a_cut_off_page_keep_a_record_of_their_own() {
        let swipe = ActionKey {
            kind: ActionKind::Swipe,
            target: None,
            variant: 0,
        };
        let beyond = Aim {
            widget: None,
            beyond: true,
        };
        let mut prior = EffectPrior::default();
        // Ten pages that end on the screen: their scrolls showed nothing.
        for page in 0..10 {
            prior.record(PageId(page), swipe, None, false);
        }
        assert!((prior.chance(PageId(10), swipe, None) - 1.0 / 12.0).abs() < 1e-12);
        // A page cut off at the bottom: its scroll is still a fair chance.
        assert_eq!(prior.chance(PageId(10), swipe, beyond), 0.5);
        prior.record(PageId(10), swipe, beyond, true);
        assert!((prior.chance(PageId(11), swipe, beyond) - 2.0 / 3.0).abs() < 1e-12);
        assert!((prior.chance(PageId(11), swipe, None) - 1.0 / 12.0).abs() < 1e-12);
    }

    #[test]
    fn the_prior_learns_per_kind_and_per_action() {
        let key = |kind, target| ActionKey {
            kind,
            target,
            variant: 0,
        };
        let button = Some(WidgetKind::Button);
        let mut prior = EffectPrior::default();
        let right = key(ActionKind::RightClick, Some(0));
        assert_eq!(prior.chance(PageId(0), right, button), 0.5);
        for page in 0..8 {
            prior.record(PageId(page), right, button, false);
        }
        // Never tried on page 9: the kind's record, 8 tries and no change, 1 / 10.
        let other = key(ActionKind::RightClick, Some(4));
        assert!((prior.chance(PageId(9), other, button) - 0.1).abs() < 1e-12);
        // Tried once and idle on page 0: a quarter of that.
        assert!((prior.chance(PageId(0), right, button) - 0.025).abs() < 1e-12);
        // Other widget kinds and action kinds keep their own records.
        assert_eq!(
            prior.chance(PageId(9), other, Some(WidgetKind::TextView)),
            0.5
        );
        let click = key(ActionKind::Click, Some(4));
        prior.record(PageId(1), click, button, true);
        assert!((prior.chance(PageId(9), click, button) - 2.0 / 3.0).abs() < 1e-12);
        // An action that showed something new each time keeps its kind's chance.
        assert!((prior.chance(PageId(1), click, button) - 2.0 / 3.0).abs() < 1e-12);
    }

    #[test]
    fn a_new_state_of_a_page_makes_its_effective_actions_untried_again() {
        let key = |target| ActionKey {
            kind: ActionKind::Click,
            target: Some(target),
            variant: 0,
        };
        let button = Some(WidgetKind::Button);
        let (page, other) = (PageId(0), PageId(1));
        let mut prior = EffectPrior::default();
        let (checkout, label) = (key(0), key(1));
        // Checkout showed a message once and nothing the second time; the label never
        // did anything.
        prior.record(page, checkout, button, true);
        prior.record(page, checkout, button, false);
        prior.record(page, label, button, false);
        prior.record(other, checkout, button, true);
        prior.record(other, checkout, button, false);
        // Kind: 2 novel of 5 tries, 3 / 7.
        let kind = 3.0 / 7.0;
        let before = prior.chance(page, checkout, button);
        assert!((before - kind * (2.0f64 / 3.0).powi(2)).abs() < 1e-12);
        let idle = prior.chance(page, label, button);
        assert!((idle - kind / 4.0).abs() < 1e-12);

        prior.state_changed(page);
        // Checkout counts as untried in the new state; the label keeps its record, and
        // the same action on another page is not touched.
        assert!((prior.chance(page, checkout, button) - kind).abs() < 1e-12);
        assert!((prior.chance(page, label, button) - idle).abs() < 1e-12);
        assert!((prior.chance(other, checkout, button) - before).abs() < 1e-12);

        // Tried in the new state, it is counted afresh there: one idle try, a quarter.
        prior.record(page, checkout, button, false);
        let kind = 3.0 / 8.0;
        assert!((prior.chance(page, checkout, button) - kind / 4.0).abs() < 1e-12);
        // It showed something new once, so the next state makes it untried again.
        prior.state_changed(page);
        assert!((prior.chance(page, checkout, button) - kind).abs() < 1e-12);
    }

    #[test]
    fn a_new_value_makes_only_the_buttons_untried_again() {
        let page = PageId(0);
        let (button, field) = (Some(WidgetKind::Button), Some(WidgetKind::EditText));
        let apply = ActionKey {
            kind: ActionKind::Click,
            target: Some(0),
            variant: 0,
        };
        let typing = ActionKey {
            kind: ActionKind::Input,
            target: Some(1),
            variant: 0,
        };
        let tick = ActionKey {
            kind: ActionKind::Click,
            target: Some(2),
            variant: 0,
        };
        let checkbox = Some(WidgetKind::CheckBox);
        let mut prior = EffectPrior::default();
        // Each showed something new once, then nothing.
        for (key, aim) in [(apply, button), (typing, field), (tick, checkbox)] {
            prior.record(page, key, aim, true);
            prior.record(page, key, aim, false);
        }
        let before = [
            prior.chance(page, apply, button),
            prior.chance(page, typing, field),
            prior.chance(page, tick, checkbox),
        ];
        prior.values_changed(page);
        // Apply may act on the new value: untried again, at its kind's chance.
        let kind = prior.kind_chance(apply, button.into());
        assert!((prior.chance(page, apply, button) - kind).abs() < 1e-12);
        assert!(before[0] < kind);
        // The field and the box keep their records.
        assert_eq!(prior.chance(page, typing, field), before[1]);
        assert_eq!(prior.chance(page, tick, checkbox), before[2]);
        // A state change still refreshes them all.
        prior.state_changed(page);
        assert!(prior.chance(page, typing, field) > before[1]);
        assert!(prior.chance(page, tick, checkbox) > before[2]);

        assert!(sets_a_value(ActionKind::Input, None));
        assert!(sets_a_value(ActionKind::Click, checkbox));
        assert!(sets_a_value(ActionKind::Drag, Some(WidgetKind::SeekBar)));
        assert!(!sets_a_value(ActionKind::Click, button));
        assert!(!sets_a_value(ActionKind::Drag, Some(WidgetKind::TextView)));
    }

    #[test]
    fn right_after_a_command_each_pair_keeps_its_own_record() {
        let key = |target| ActionKey {
            kind: ActionKind::Click,
            target: Some(target),
            variant: 0,
        };
        let button = Some(WidgetKind::Button);
        let page = PageId(0);
        let mut prior = EffectPrior::default();
        let (select_all, archive, label) = (key(0), key(1), key(2));
        // Archive showed a message once, then nothing; the label never did anything.
        prior.record(page, archive, button, true);
        prior.record(page, archive, button, false);
        prior.record(page, label, button, false);
        let kind = 2.0 / 5.0;
        assert!((prior.chance(page, archive, button) - kind * 4.0 / 9.0).abs() < 1e-12);
        // Right after Select all, Archive is untried; the label keeps its record.
        let after = prior.chance_after(page, select_all, archive, button);
        assert!((after - kind).abs() < 1e-12);
        let idle = prior.chance_after(page, select_all, label, button);
        assert!((idle - prior.chance(page, label, button)).abs() < 1e-12);
        // Once the pair was made and showed nothing, it counts a quarter; another
        // command's pair is untouched.
        prior.record_after(page, select_all, archive, false);
        let tried = prior.chance_after(page, select_all, archive, button);
        assert!((tried - kind / 4.0).abs() < 1e-12);
        let other = prior.chance_after(page, label, archive, button);
        assert!((other - kind).abs() < 1e-12);
    }

    #[test]
    fn a_text_selection_is_no_effect() {
        // A double click on a label selects a word there and clears the one selected
        // before, elsewhere: two small highlights.
        let label = Rect::new(100, 300, 60, 14);
        let old = Rect::new(400, 100, 60, 20);
        let new = Rect::new(100, 298, 60, 20);
        let before = screen(1280, 800, &[(old, [120, 160, 250])]);
        let after = screen(1280, 800, &[(new, [120, 160, 250])]);
        let target = Some((label, WidgetKind::TextView));
        assert!(!had_effect(
            &before,
            &after,
            ActionKind::DoubleClick,
            target,
            None
        ));
        // A click that changes as much elsewhere is an effect.
        assert!(had_effect(&before, &after, ActionKind::Click, target, None));
        // A double click that opens something larger is one too.
        let panel = screen(
            1280,
            800,
            &[(Rect::new(300, 100, 400, 300), [255, 255, 255])],
        );
        assert!(had_effect(
            &before,
            &panel,
            ActionKind::DoubleClick,
            target,
            None
        ));
        // A word selected inside a text field changes the field alone; typing into it
        // changes it just as much and is an effect.
        let field = Rect::new(100, 300, 300, 40);
        let plain = screen(1280, 800, &[(field, [255, 255, 255])]);
        let word = screen(
            1280,
            800,
            &[
                (field, [255, 255, 255]),
                (Rect::new(110, 310, 50, 20), [120, 160, 250]),
            ],
        );
        let target = Some((field, WidgetKind::EditText));
        assert!(!had_effect(
            &plain,
            &word,
            ActionKind::DoubleClick,
            target,
            None
        ));
        assert!(!had_effect(
            &plain,
            &word,
            ActionKind::LongClick,
            target,
            None
        ));
        assert!(had_effect(&plain, &word, ActionKind::Input, target, None));
    }

    #[test]
    fn a_drag_that_selects_text_is_no_effect_and_one_that_moves_a_slider_is() {
        // A drag from a title sweeps a highlight over a word of a dialog beside it.
        let title = Rect::new(18, 22, 124, 19);
        let word = Rect::new(445, 313, 62, 34);
        let before = screen(1280, 800, &[]);
        let after = screen(1280, 800, &[(word, [50, 100, 200])]);
        let target = Some((title, WidgetKind::TextView));
        assert!(!had_effect(&before, &after, ActionKind::Drag, target, None));
        // A click that changes as much is an effect, and so is a drag that moves a box.
        assert!(had_effect(&before, &after, ActionKind::Click, target, None));
        let moved = screen(
            1280,
            800,
            &[(Rect::new(300, 300, 150, 150), [200, 120, 40])],
        );
        assert!(had_effect(&before, &moved, ActionKind::Drag, target, None));
        // A slider's thumb moves inside the slider: its new state.
        let slider = Rect::new(100, 600, 300, 20);
        let thumb = screen(1280, 800, &[(Rect::new(300, 602, 16, 16), [30, 90, 200])]);
        let target = Some((slider, WidgetKind::SeekBar));
        assert!(had_effect(&before, &thumb, ActionKind::Drag, target, None));
    }

    #[test]
    fn a_new_size_is_an_effect() {
        let a = screen(640, 400, &[]);
        let b = screen(320, 400, &[]);
        assert_eq!(a.changed_outside(&b, None), 1.0);
        assert!(had_effect(&a, &b, ActionKind::WindowSize, None, None));
    }

    #[test]
    fn targets_off_the_screen_are_clipped() {
        let a = screen(64, 40, &[]);
        let b = screen(64, 40, &[(Rect::new(60, 36, 4, 4), [0, 0, 0])]);
        let off = Rect::new(50, 30, 500, 500);
        assert!(a.changed_inside(&b, off));
        assert_eq!(a.changed_outside(&b, Some(off)), 0.0);
        let away = Rect::new(-100, -100, 10, 10);
        assert!(!a.changed_inside(&b, away));
        assert!(a.changed_outside(&b, Some(away)) > 0.0);
    }

    /// A page with buttons, text lines and a dark header: enough contrast to fit.
    fn page() -> RgbImage {
        let mut img = RgbImage::from_pixel(640, 400, Rgb([240, 240, 240]));
        let mut paint = |r: Rect, c: [u8; 3]| {
            for y in r.y..r.bottom() {
                for x in r.x..r.right() {
                    img.put_pixel(x as u32, y as u32, Rgb(c));
                }
            }
        };
        paint(Rect::new(0, 0, 640, 40), [30, 40, 60]);
        for i in 0..6 {
            paint(Rect::new(20 + 100 * i, 60, 80, 30), [30, 90, 200]);
            paint(
                Rect::new(20, 110 + 40 * i, 300 + 20 * i as u32, 8),
                [20, 20, 20],
            );
        }
        paint(Rect::new(400, 120, 200, 200), [200, 120, 40]);
        img
    }

    /// `img` under a layer of colour `c` at opacity `alpha`, with a white `dialog` box
    /// (a dark title and a blue button in it) on top.
    fn with_backdrop(img: &RgbImage, c: u8, alpha: f32, dialog: Option<Rect>) -> RgbImage {
        let mut out = img.clone();
        for p in out.pixels_mut() {
            for v in &mut p.0 {
                *v = (f32::from(*v) * (1.0 - alpha) + f32::from(c) * alpha).round() as u8;
            }
        }
        if let Some(d) = dialog {
            for y in d.y..d.bottom() {
                for x in d.x..d.right() {
                    let title = y < d.y + 30 && x < d.x + 100;
                    let button = y > d.bottom() - 50 && x < d.x + 90;
                    let v = if title {
                        [20, 20, 20]
                    } else if button {
                        [40, 100, 230]
                    } else {
                        [255, 255, 255]
                    };
                    out.put_pixel(x as u32, y as u32, Rgb(v));
                }
            }
        }
        out
    }

    fn print(img: RgbImage) -> ScreenPrint {
        ScreenPrint::of(&Screenshot::new(img, 1.0, 0).unwrap())
    }

    const DIALOG: Rect = Rect::new(200, 120, 240, 160);

    #[test]
    fn a_dialog_over_a_dimmed_page_is_found_with_its_box() {
        let before = print(page());
        // The demo's black layer at 55 %, and jQuery UI's grey one at 30 %.
        for (c, alpha) in [(0, 0.55), (170, 0.3)] {
            let after = print(with_backdrop(&page(), c, alpha, Some(DIALOG)));
            let found = before
                .dialog_over_backdrop(&after, &[])
                .expect("a backdrop");
            // To the cell: the box's edges lie on the 4-pixel grid.
            assert_eq!(found, DIALOG, "layer {c} at {alpha}");
            assert!(inside(Rect::new(204, 244, 80, 30), found));
            assert!(!inside(Rect::new(20, 60, 80, 30), found));
        }
    }

    #[test]
    fn the_hover_tint_under_the_pointer_does_not_hide_a_backdrop() {
        let before = print(page());
        // The button clicked to open the dialog takes its hover tint under the layer:
        // 480 cells, 3.5 % of those outside the dialog.
        let button = Rect::new(480, 12, 128, 60);
        let mut after = with_backdrop(&page(), 0, 0.55, Some(DIALOG));
        for y in 12..72 {
            for x in 480..608 {
                after.put_pixel(x, y, Rgb([140, 120, 30]));
            }
        }
        let after = print(after);
        assert_eq!(before.dialog_over_backdrop(&after, &[]), None);
        assert_eq!(before.dialog_over_backdrop(&after, &[button]), Some(DIALOG));
    }

    #[test]
    fn other_big_changes_are_no_backdrop() {
        let before = print(page());
        // Nothing changed; the page itself dimmed with no dialog; a brightening layer.
        assert_eq!(before.dialog_over_backdrop(&before, &[]), None);
        let dim = print(with_backdrop(&page(), 0, 0.55, None));
        assert_eq!(before.dialog_over_backdrop(&dim, &[]), None);
        let light = print(with_backdrop(&page(), 255, 0.05, Some(DIALOG)));
        assert_eq!(before.dialog_over_backdrop(&light, &[]), None);
        // A dark theme: brightness inverted, with a box of new content.
        let mut dark = page();
        for p in dark.pixels_mut() {
            p.0 = p.0.map(|v| 255 - v);
        }
        let dark = with_backdrop(&dark, 0, 0.0, Some(DIALOG));
        assert_eq!(before.dialog_over_backdrop(&print(dark), &[]), None);
        // Another page: the content moved.
        let mut moved = RgbImage::from_pixel(640, 400, Rgb([240, 240, 240]));
        image::imageops::overlay(&mut moved, &page(), 0, 96);
        assert_eq!(before.dialog_over_backdrop(&print(moved), &[]), None);
        // A dialog covering most of the screen is a new page; a tiny one is a tooltip.
        let big = with_backdrop(&page(), 0, 0.55, Some(Rect::new(20, 20, 600, 360)));
        assert_eq!(before.dialog_over_backdrop(&print(big), &[]), None);
        let tiny = with_backdrop(&page(), 0, 0.55, Some(Rect::new(300, 200, 40, 20)));
        assert_eq!(before.dialog_over_backdrop(&print(tiny), &[]), None);
        // A blank page before: any layer fits it, so none is claimed.
        let blank = RgbImage::from_pixel(640, 400, Rgb([240, 240, 240]));
        let over = with_backdrop(&blank, 0, 0.55, Some(DIALOG));
        assert_eq!(print(blank).dialog_over_backdrop(&print(over), &[]), None);
        // Screens of different sizes.
        assert_eq!(
            before.dialog_over_backdrop(&screen(320, 400, &[]), &[]),
            None
        );
    }

    #[test]
    fn a_dialog_hashes_alike_over_any_page() {
        let a = print(with_backdrop(&page(), 0, 0.55, Some(DIALOG)));
        let mut other = page();
        image::imageops::overlay(
            &mut other,
            &RgbImage::from_pixel(120, 60, Rgb([0, 0, 0])),
            20,
            300,
        );
        let b = print(with_backdrop(&other, 0, 0.55, Some(DIALOG)));
        assert_ne!(a.coarse_hash(), b.coarse_hash());
        assert_eq!(a.coarse_hash_within(DIALOG), b.coarse_hash_within(DIALOG));
        // The same cells elsewhere are another dialog.
        let moved = Rect::new(DIALOG.x + 4, DIALOG.y, DIALOG.width, DIALOG.height);
        assert_ne!(a.coarse_hash_within(DIALOG), a.coarse_hash_within(moved));
    }
}
