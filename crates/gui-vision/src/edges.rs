//! Canny edge detection for GUI screenshots, the first step of widget extraction in
//! PIRLTest Section 3.1.1 ("the Canny algorithm identifies the edges of widgets ... an image
//! of binary thresholding, where edges are represented with white pixels").
//!
//! The stages are the classic ones (Canny 1986): Gaussian blur, Sobel gradients, non-maximum
//! suppression along the quantised gradient direction, and hysteresis between two
//! thresholds. What makes this version fast is how the stages are laid out:
//!
//! - Everything up to non-maximum suppression streams over rows. Each horizontal band of the
//!   image keeps only three rows of blurred pixels, gradients and magnitudes, so the working
//!   set stays in the L1/L2 cache and nothing image-sized is allocated except the output.
//! - The blur is separable and in fixed point: 8-bit weights summing to 256, the vertical
//!   pass in `u16`, the horizontal one in `u32`, one rounding at the end.
//! - Magnitudes are compared squared (`gx² + gy²` in `i32`), so the L2 norm costs no square
//!   root and the thresholds are exact; directions are quantised with integer tangent tests
//!   instead of `atan2`.
//! - Runs of 16 pixels below the low threshold (most of a GUI screenshot) are skipped by one
//!   vectorised maximum.
//! - Bands run on rayon's *current* pool, and their inner loops are compiled for AVX2 when
//!   the CPU has it (runtime dispatch through `pulp`). Hysteresis follows as one sequential
//!   flood fill from all strong pixels, which crosses band borders for free and is cheap
//!   because it only visits edge pixels.
//!
//! The output does not depend on the number of threads: every pixel's class is a pure
//! function of its neighbourhood, and the flood fill's result does not depend on its order.

use image::{GrayImage, RgbImage};
use rayon::prelude::*;

use crate::{Error, Result};

/// Largest accepted blur sigma; the kernel radius is `ceil(2 sigma)` pixels.
const MAX_SIGMA: f32 = 16.0;

/// Fixed-point scale of the blur weights (they sum to this).
const WEIGHT_ONE: u16 = 256;

/// `tan(22.5°)` in Q15, for quantising gradient directions without `atan2`.
const TAN_22_5_Q15: i32 = 13_573;

/// Pixels per block in the "anything above the low threshold here?" pre-check.
const SKIP_BLOCK: usize = 16;

/// Output values while the detector runs; only [`EDGE`] survives the final pass.
const NONE: u8 = 0;
const WEAK: u8 = 1;
const EDGE: u8 = 255;

/// Parameters of [`canny`].
///
/// The thresholds are on the L2 gradient magnitude `sqrt(gx² + gy²)` of the 3x3 Sobel
/// operator on the blurred image, the same scale as `imageproc::edges::canny` (at most
/// `2 sqrt(5) 255 ≈ 1140`). A pixel is a strong edge when its magnitude is `>= high`, and a
/// weak one, kept only when connected to a strong one, when it is `>= low`.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct CannyConfig {
    /// Standard deviation of the Gaussian blur, in pixels.
    ///
    /// Default 1.4, the value `imageproc::edges::canny` hard-codes (the textbook choice for
    /// a 5x5 to 7x7 Canny smoothing kernel). PIRLTest (Section 3.1.1) follows UIED
    /// (Chen et al. 2020) in using Canny but gives no parameters.
    pub sigma: f32,
    /// Low hysteresis threshold on the gradient magnitude.
    ///
    /// Default 20: after the blur a step of contrast `c` (in grey levels) has a Sobel
    /// magnitude of about `2c`, so a weak edge continues down to steps of about 10 grey
    /// levels, enough to follow a faint border around a corner without picking up the
    /// 1–3 level ripples of compression and anti-aliasing.
    pub low: f32,
    /// High hysteresis threshold on the gradient magnitude.
    ///
    /// Default 50: strong edges need steps of about 25 grey levels, which still catches the
    /// faintest borders GUI toolkits draw (Material's `#e0e0e0` divider on white is 31 levels)
    /// while flat fills, gradients and shadows stay below it.
    pub high: f32,
}

impl Default for CannyConfig {
    fn default() -> Self {
        Self {
            sigma: 1.4,
            low: 20.0,
            high: 50.0,
        }
    }
}

impl CannyConfig {
    /// Checks that the values can be used: `0 < sigma <= 16`, finite non-negative
    /// thresholds, and `low <= high`.
    pub fn validate(&self) -> Result<()> {
        let bad = |field, message: String| Err(Error::Config { field, message });
        if !(self.sigma > 0.0 && self.sigma <= MAX_SIGMA) {
            return bad(
                "sigma",
                format!("must be in (0, {MAX_SIGMA}], got {}", self.sigma),
            );
        }
        for (field, value) in [("low", self.low), ("high", self.high)] {
            if !(value.is_finite() && value >= 0.0) {
                return bad(field, format!("must be finite and >= 0, got {value}"));
            }
        }
        if self.low > self.high {
            return bad(
                "low",
                format!(
                    "must not exceed high ({}), got {}",
                    self.high, self.low
                ),
            );
        }
        Ok(())
    }
}

/// Converts RGB to grey with the ITU-R BT.601 luma weights (0.299, 0.587, 0.114) in 16-bit
/// fixed point, rounded. Runs on rayon's current pool.
pub fn to_gray(img: &RgbImage) -> GrayImage {
    // Q16 weights; they sum to exactly 65536 so white stays 255.
    const R: u32 = 19_595;
    const G: u32 = 38_470;
    const B: u32 = 7_471;
    let (width, height) = img.dimensions();
    let mut out = vec![0u8; width as usize * height as usize];
    let src: &[u8] = img.as_raw();
    let row = width as usize;
    if row > 0 {
        out.par_chunks_mut(row * 16)
            .zip(src.par_chunks(row * 3 * 16))
            .for_each(|(dst, src)| {
                for (d, p) in dst.iter_mut().zip(src.chunks_exact(3)) {
                    let y = R * u32::from(p[0]) + G * u32::from(p[1]) + B * u32::from(p[2]);
                    *d = ((y + (1 << 15)) >> 16) as u8;
                }
            });
    }
    GrayImage::from_raw(width, height, out).expect("buffer has width * height bytes")
}

/// Canny edges of a grey image: 255 on edge pixels, 0 elsewhere.
///
/// The one-pixel frame of the image is never an edge (as in `imageproc`), so images
/// narrower or lower than 3 pixels have no edges. Uses rayon's current pool: run it inside
/// `ThreadPool::install` to bound the threads; the result is the same for any pool size.
///
/// # Errors
/// [`Error::Config`] for an invalid `config`, [`Error::Image`] for a zero-sized image or one
/// of more than `u32::MAX` pixels.
pub fn canny(gray: &GrayImage, config: &CannyConfig) -> Result<GrayImage> {
    config.validate()?;
    let (width, height) = gray.dimensions();
    if width == 0 || height == 0 {
        return Err(Error::image(
            "canny input",
            format!("zero-sized image {width}x{height}"),
        ));
    }
    let (w, h) = (width as usize, height as usize);
    if u32::try_from(w * h).is_err() {
        return Err(Error::image(
            "canny input",
            format!("{width}x{height} has more than u32::MAX pixels"),
        ));
    }
    let mut out = vec![NONE; w * h];
    if w >= 3 && h >= 3 {
        let params = Params::new(config, w, h);
        let src: &[u8] = gray.as_raw();
        // A few bands per thread balance the load; each band recomputes two rows of
        // halo, so bands stay at least 16 rows high.
        let bands = (rayon::current_num_threads() * 4).max(1);
        let band_rows = h.div_ceil(bands).max(16);
        let mut seeds: Vec<Vec<u32>> = out
            .par_chunks_mut(band_rows * w)
            .enumerate()
            .map(|(i, band)| {
                let first = i * band_rows;
                pulp::Arch::new().dispatch(|| suppress_band(src, &params, first, band))
            })
            .collect();
        let mut stack = std::mem::take(&mut seeds[0]);
        for more in &seeds[1..] {
            stack.extend_from_slice(more);
        }
        hysteresis(&mut out, w, stack);
        out.par_chunks_mut(band_rows * w).for_each(|band| {
            for p in band {
                *p = if *p == EDGE { EDGE } else { NONE };
            }
        });
    }
    Ok(GrayImage::from_raw(width, height, out).expect("buffer has width * height bytes"))
}

/// Everything a band needs to know, computed once per call.
#[derive(Debug)]
struct Params {
    width: usize,
    height: usize,
    /// Blur weights, `2 * radius + 1` of them, summing to [`WEIGHT_ONE`].
    kernel: Vec<u16>,
    /// Squared thresholds, rounded up so that `m² >= low2` iff `m >= low`.
    low2: i32,
    high2: i32,
}

impl Params {
    fn new(config: &CannyConfig, width: usize, height: usize) -> Self {
        // A zero gradient is never an edge, whatever the thresholds.
        let square = |t: f32| (f64::from(t) * f64::from(t)).ceil().clamp(1.0, 1e9) as i32;
        Self {
            width,
            height,
            kernel: gaussian_kernel(config.sigma),
            low2: square(config.low),
            high2: square(config.high),
        }
    }
}

/// Gaussian weights over `[-ceil(2 sigma), ceil(2 sigma)]` (the support `imageproc` uses),
/// rounded to multiples of 1/256 with the centre absorbing the rounding error.
fn gaussian_kernel(sigma: f32) -> Vec<u16> {
    let radius = (2.0 * f64::from(sigma)).ceil().max(1.0) as usize;
    let g = |i: usize| (-((i * i) as f64) / (2.0 * f64::from(sigma).powi(2))).exp();
    let total: f64 = 1.0 + 2.0 * (1..=radius).map(g).sum::<f64>();
    let side: Vec<u16> = (1..=radius)
        .map(|i| (g(i) / total * f64::from(WEIGHT_ONE)).round() as u16)
        .collect();
    let centre = WEIGHT_ONE - 2 * side.iter().sum::<u16>();
    side.iter()
        .rev()
        .copied()
        .chain(std::iter::once(centre))
        .chain(side.iter().copied())
        .collect()
}

/// Row buffers of one band: three rows each of blurred pixels (with one replicated pixel of
/// padding at both ends), gradients and squared magnitudes, rotated as the band advances.
struct Rows {
    /// Vertical blur sums with `radius` replicated values of padding at both ends.
    vertical: Vec<u16>,
    horizontal: Vec<u32>,
    blurred: [Vec<u8>; 3],
    gx: [Vec<i16>; 3],
    gy: [Vec<i16>; 3],
    mag: [Vec<i32>; 3],
}

impl Rows {
    fn new(w: usize, radius: usize) -> Self {
        Self {
            vertical: vec![0; w + 2 * radius],
            horizontal: vec![0; w],
            blurred: std::array::from_fn(|_| vec![0; w + 2]),
            gx: std::array::from_fn(|_| vec![0; w]),
            gy: std::array::from_fn(|_| vec![0; w]),
            mag: std::array::from_fn(|_| vec![0; w]),
        }
    }

    fn rotate(&mut self) {
        self.blurred.rotate_left(1);
        self.gx.rotate_left(1);
        self.gy.rotate_left(1);
        self.mag.rotate_left(1);
    }
}

/// Blur, gradients and non-maximum suppression for the output rows `first..` covered by
/// `band`, writing [`WEAK`] and [`EDGE`] into it; returns the indices of the strong pixels.
#[inline(always)]
fn suppress_band(src: &[u8], p: &Params, first: usize, band: &mut [u8]) -> Vec<u32> {
    let (w, h) = (p.width, p.height);
    let last = first + band.len() / w;
    // Rows that may hold edges: the image frame never does.
    let (start, end) = (first.max(1), last.min(h - 1));
    let mut strong = Vec::new();
    if start >= end {
        return strong;
    }
    let radius = p.kernel.len() / 2;
    let mut rows = Rows::new(w, radius);
    let clamp = |y: isize| y.clamp(0, h as isize - 1) as usize;
    blur_row(src, p, clamp(start as isize - 2), &mut rows, 1);
    blur_row(src, p, start - 1, &mut rows, 2);
    // Magnitude row `r` needs blurred rows r-1..=r+1; suppression of row r-1 needs
    // magnitude rows r-2..=r.
    for r in start - 1..=end {
        rows.rotate();
        blur_row(src, p, clamp(r as isize + 1), &mut rows, 2);
        sobel_row(&mut rows);
        if r > start {
            let y = r - 1;
            let out = &mut band[(y - first) * w..(y - first + 1) * w];
            suppress_row(&rows, p, out, y, &mut strong);
        }
    }
    strong
}

/// Gaussian-blurs source row `y` into `rows.blurred[slot]` (clamped borders).
#[inline(always)]
fn blur_row(src: &[u8], p: &Params, y: usize, rows: &mut Rows, slot: usize) {
    let (w, h) = (p.width, p.height);
    let kernel = &p.kernel[..];
    let radius = kernel.len() / 2;
    let line = |yy: isize| {
        let yy = yy.clamp(0, h as isize - 1) as usize;
        &src[yy * w..yy * w + w]
    };
    // Vertical pass: the kernel is symmetric, so add the mirrored rows before weighting.
    let vertical = &mut rows.vertical[radius..radius + w];
    let centre = line(y as isize);
    let kc = kernel[radius];
    for (v, &c) in vertical.iter_mut().zip(centre) {
        *v = kc * u16::from(c);
    }
    for d in 1..=radius {
        let k = kernel[radius + d];
        let (above, below) = (line(y as isize - d as isize), line((y + d) as isize));
        for ((v, &a), &b) in vertical.iter_mut().zip(above).zip(below) {
            *v += k * (u16::from(a) + u16::from(b));
        }
    }
    let (left, right) = (rows.vertical[radius], rows.vertical[radius + w - 1]);
    rows.vertical[..radius].fill(left);
    rows.vertical[radius + w..].fill(right);
    // Horizontal pass in u32: up to 256 * 65280.
    let padded = &rows.vertical[..];
    let acc = &mut rows.horizontal[..w];
    let centre = &padded[radius..radius + w];
    for (a, &c) in acc.iter_mut().zip(centre) {
        *a = u32::from(kc) * u32::from(c);
    }
    for d in 1..=radius {
        let k = u32::from(kernel[radius + d]);
        let (l, r) = (&padded[radius - d..radius - d + w], &padded[radius + d..radius + d + w]);
        for ((a, &l), &r) in acc.iter_mut().zip(l).zip(r) {
            *a += k * (u32::from(l) + u32::from(r));
        }
    }
    let out = &mut rows.blurred[slot];
    for (o, &a) in out[1..w + 1].iter_mut().zip(acc.iter()) {
        *o = ((a + (1 << 15)) >> 16) as u8;
    }
    out[0] = out[1];
    out[w + 1] = out[w];
}

/// Sobel gradients and squared magnitudes of the middle blurred row into slot 1... of the
/// newest slot: rows.blurred[0..3] are rows r-1, r, r+1 and the result goes to slot 2 of
/// the gradient and magnitude rings (they lag the blur ring by one row).
#[inline(always)]
fn sobel_row(rows: &mut Rows) {
    let w = rows.mag[2].len();
    let [a, b, c] = &rows.blurred;
    let (a0, a1, a2) = (&a[..w], &a[1..w + 1], &a[2..w + 2]);
    let (b0, b2) = (&b[..w], &b[2..w + 2]);
    let (c0, c1, c2) = (&c[..w], &c[1..w + 1], &c[2..w + 2]);
    let gx = &mut rows.gx[2][..w];
    let gy = &mut rows.gy[2][..w];
    let mag = &mut rows.mag[2][..w];
    let i = |v: u8| i16::from(v);
    for x in 0..w {
        let dx = (i(a2[x]) - i(a0[x])) + 2 * (i(b2[x]) - i(b0[x])) + (i(c2[x]) - i(c0[x]));
        let dy = (i(c0[x]) + 2 * i(c1[x]) + i(c2[x])) - (i(a0[x]) + 2 * i(a1[x]) + i(a2[x]));
        gx[x] = dx;
        gy[x] = dy;
        mag[x] = i32::from(dx) * i32::from(dx) + i32::from(dy) * i32::from(dy);
    }
}

/// Non-maximum suppression of image row `y` (the middle of the magnitude ring), writing
/// [`WEAK`]/[`EDGE`] into `out` and pushing strong pixels' indices onto `strong`.
#[inline(always)]
fn suppress_row(rows: &Rows, p: &Params, out: &mut [u8], y: usize, strong: &mut Vec<u32>) {
    let w = p.width;
    let (prev, cur, next) = (&rows.mag[0][..w], &rows.mag[1][..w], &rows.mag[2][..w]);
    let (gx, gy) = (&rows.gx[1][..w], &rows.gy[1][..w]);
    let out = &mut out[..w];
    let (low2, high2) = (p.low2, p.high2);
    let mut x0 = 1;
    while x0 < w - 1 {
        let x1 = (x0 + SKIP_BLOCK).min(w - 1);
        let peak = cur[x0..x1].iter().fold(0, |m, &v| m.max(v));
        if peak >= low2 {
            for x in x0..x1 {
                let m = cur[x];
                if m < low2 {
                    continue;
                }
                let (dx, dy) = (i32::from(gx[x]), i32::from(gy[x]));
                let (ax, ay) = (dx.abs(), dy.abs() << 15);
                let tan22 = ax * TAN_22_5_Q15;
                // Compare against the two neighbours across the edge: strictly greater than
                // the one before, at least the one after, so a two-pixel plateau keeps one.
                let is_max = if ay < tan22 {
                    m > cur[x - 1] && m >= cur[x + 1]
                } else if ay > tan22 + (ax << 16) {
                    m > prev[x] && m >= next[x]
                } else if (dx ^ dy) < 0 {
                    m > prev[x + 1] && m >= next[x - 1]
                } else {
                    m > prev[x - 1] && m >= next[x + 1]
                };
                if is_max {
                    if m >= high2 {
                        out[x] = EDGE;
                        strong.push((y * w + x) as u32);
                    } else {
                        out[x] = WEAK;
                    }
                }
            }
        }
        x0 = x1;
    }
}

/// Flood fill from the strong pixels through 8-connected weak ones, turning them into
/// edges. The frame holds no weak or strong pixel, so neighbours never leave the image.
fn hysteresis(out: &mut [u8], w: usize, mut stack: Vec<u32>) {
    while let Some(i) = stack.pop() {
        let i = i as usize;
        for n in [
            i - w - 1,
            i - w,
            i - w + 1,
            i - 1,
            i + 1,
            i + w - 1,
            i + w,
            i + w + 1,
        ] {
            if out[n] == WEAK {
                out[n] = EDGE;
                stack.push(n as u32);
            }
        }
    }
}

/// A deterministic synthetic GUI screenshot for tests, benches and `cargo xtask
/// canny-compare`: an app bar, cards with 1-pixel borders of varied contrast, text-like
/// runs of glyph blocks, buttons, round icons with soft rims, a photo-like gradient region
/// and ±2 levels of noise over a slightly graded background.
pub fn synthetic_gui_screen(width: u32, height: u32, seed: u64) -> RgbImage {
    let mut rng = SplitMix(seed);
    let (w, h) = (width as i64, height as i64);
    let mut img = RgbImage::from_fn(width, height, |_, y| {
        let v = 250 - (y as i64 * 6 / h.max(1)) as u8;
        image::Rgb([v, v, v.saturating_sub(2)])
    });
    let fill = |img: &mut RgbImage, x0: i64, y0: i64, x1: i64, y1: i64, c: [u8; 3]| {
        for y in y0.max(0)..y1.min(h) {
            for x in x0.max(0)..x1.min(w) {
                img.put_pixel(x as u32, y as u32, image::Rgb(c));
            }
        }
    };
    let grey = |v: u8| [v, v, v];
    // App bar with a title and two action icons.
    let bar = (h / 14).max(2);
    fill(&mut img, 0, 0, w, bar, [33, 80, 160]);
    text_runs(&mut img, &mut rng, w / 20, bar / 3, w / 2, bar / 3, [255, 255, 255]);
    // Cards: a bordered box, a line or two of text, sometimes a button and an icon.
    let margin = (w / 24).max(1);
    let mut y = bar + margin;
    while y + h / 10 < h - h / 6 {
        let card_h = h / 12 + rng.below(h as u64 / 16 + 1) as i64;
        let border = 255 - (20 + rng.below(60) as u8);
        let inside = 255 - rng.below(6) as u8;
        fill(&mut img, margin, y, w - margin, y + card_h, grey(border));
        fill(&mut img, margin + 1, y + 1, w - margin - 1, y + card_h - 1, grey(inside));
        let glyph = (card_h / 8).clamp(2, 14);
        let ink = grey(rng.below(80) as u8 + 20);
        text_runs(&mut img, &mut rng, margin * 3, y + card_h / 5, w / 2, glyph, ink);
        text_runs(&mut img, &mut rng, margin * 3, y + card_h / 2, w / 3, glyph * 3 / 4, ink);
        if rng.below(2) == 0 {
            let (bx, by) = (w - margin * 6, y + card_h - card_h / 3);
            fill(&mut img, bx, by, bx + margin * 4, by + card_h / 5, [0, 120, 90]);
        }
        let r = (card_h / 6).max(2) as f64;
        let (cx, cy) = ((w - margin * 4) as f64, (y + card_h / 4) as f64 + r / 2.0);
        disc(&mut img, cx, cy, r, [200, 60, 40]);
        y += card_h + margin;
    }
    // A photo-like region: a diagonal colour gradient with texture, then a bottom bar.
    let top = h - h / 6;
    for yy in top.max(0)..(h - bar).max(0) {
        for x in 0..w {
            let t = ((x + yy - top) * 255 / (w + h / 6).max(1)) as u8;
            let bump = rng.below(9) as u8;
            img.put_pixel(x as u32, yy as u32, image::Rgb([t, 120 + bump, 255 - t]));
        }
    }
    fill(&mut img, 0, h - bar, w, h, grey(238));
    fill(&mut img, 0, h - bar, w, h - bar + 1, grey(205));
    for i in 0..4 {
        let cx = (w * (2 * i + 1) / 8) as f64;
        disc(&mut img, cx, (h - bar / 2) as f64, (bar / 4) as f64, grey(90));
    }
    for p in img.pixels_mut() {
        let n = rng.below(5) as i16 - 2;
        for c in &mut p.0 {
            *c = (i16::from(*c) + n).clamp(0, 255) as u8;
        }
    }
    img
}

/// Rows of glyph-sized blocks with word gaps, like text seen from afar.
fn text_runs(
    img: &mut RgbImage,
    rng: &mut SplitMix,
    x0: i64,
    y0: i64,
    len: i64,
    glyph: i64,
    ink: [u8; 3],
) {
    let (w, h) = (i64::from(img.width()), i64::from(img.height()));
    let mut x = x0;
    while x < x0 + len {
        let gw = 1 + rng.below(glyph.max(1) as u64) as i64;
        let tall = glyph + rng.below(glyph as u64 / 3 + 1) as i64;
        for yy in (y0 + glyph - tall).max(0)..(y0 + glyph).min(h) {
            for xx in x.max(0)..(x + gw).min(w) {
                img.put_pixel(xx as u32, yy as u32, image::Rgb(ink));
            }
        }
        x += gw + 1 + if rng.below(5) == 0 { glyph } else { 0 };
    }
}

/// An anti-aliased filled disc.
fn disc(img: &mut RgbImage, cx: f64, cy: f64, r: f64, c: [u8; 3]) {
    let (w, h) = (img.width() as i64, img.height() as i64);
    for y in ((cy - r - 1.0) as i64).max(0)..((cy + r + 2.0) as i64).min(h) {
        for x in ((cx - r - 1.0) as i64).max(0)..((cx + r + 2.0) as i64).min(w) {
            let d = ((x as f64 - cx).powi(2) + (y as f64 - cy).powi(2)).sqrt();
            let a = (r + 0.5 - d).clamp(0.0, 1.0);
            if a > 0.0 {
                let p = img.get_pixel_mut(x as u32, y as u32);
                for (o, &n) in p.0.iter_mut().zip(&c) {
                    *o = (f64::from(*o) * (1.0 - a) + f64::from(n) * a).round() as u8;
                }
            }
        }
    }
}

/// splitmix64: a tiny seeded generator, so the fixture needs no `rand` dependency.
#[derive(Debug)]
struct SplitMix(u64);

impl SplitMix {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        (z ^ (z >> 31)) % n.max(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_is_symmetric_and_sums_to_one() {
        for sigma in [0.1, 0.5, 1.0, 1.4, 2.0, 5.0, 16.0] {
            let k = gaussian_kernel(sigma);
            assert_eq!(k.len() % 2, 1, "sigma {sigma}");
            assert_eq!(k.iter().map(|&v| u32::from(v)).sum::<u32>(), 256, "sigma {sigma}");
            assert!(k.iter().eq(k.iter().rev()), "sigma {sigma}: {k:?}");
            let r = k.len() / 2;
            assert!(k[..r].windows(2).all(|p| p[0] <= p[1]), "sigma {sigma}: {k:?}");
        }
        assert_eq!(gaussian_kernel(1.4).len(), 7);
    }

    #[test]
    fn squared_thresholds_round_up() {
        let p = Params::new(
            &CannyConfig {
                sigma: 1.0,
                low: 2.5,
                high: 3.0,
            },
            10,
            10,
        );
        // 6.25 -> 7: a magnitude of sqrt(6) < 2.5 must not pass, sqrt(7) > 2.5 must.
        assert_eq!((p.low2, p.high2), (7, 9));
        let zero = Params::new(
            &CannyConfig {
                sigma: 1.0,
                low: 0.0,
                high: 0.0,
            },
            10,
            10,
        );
        assert_eq!((zero.low2, zero.high2), (1, 1));
    }

    #[test]
    fn gray_weights_keep_white_and_black() {
        let img = RgbImage::from_fn(4, 3, |x, _| match x {
            0 => image::Rgb([255, 255, 255]),
            1 => image::Rgb([0, 0, 0]),
            2 => image::Rgb([255, 0, 0]),
            _ => image::Rgb([0, 0, 255]),
        });
        let g = to_gray(&img);
        assert_eq!(g.get_pixel(0, 2).0, [255]);
        assert_eq!(g.get_pixel(1, 0).0, [0]);
        assert_eq!(g.get_pixel(2, 1).0, [76]); // 0.299 * 255 = 76.2
        assert_eq!(g.get_pixel(3, 1).0, [29]); // 0.114 * 255 = 29.1
    }
}

#[cfg(test)]
mod stage_timing {
    use super::*;
    #[test]
    fn stage_timing() {
        let gray = to_gray(&synthetic_gui_screen(1080, 1920, 1));
        let p = Params::new(&CannyConfig::default(), 1080, 1920);
        let src: &[u8] = gray.as_raw();
        let (w, h) = (1080, 1920);
        let mut rows = Rows::new(w, 3);
        let t = std::time::Instant::now();
        for _ in 0..20 { for y in 0..h { pulp::Arch::new().dispatch(|| blur_row(src, &p, y, &mut rows, 2)); } }
        eprintln!("blur {:.2} ms", t.elapsed().as_secs_f64() * 1e3 / 20.0);
        let t = std::time::Instant::now();
        for _ in 0..20 { for _ in 0..h { pulp::Arch::new().dispatch(|| sobel_row(&mut rows)); } }
        eprintln!("sobel {:.2} ms", t.elapsed().as_secs_f64() * 1e3 / 20.0);
        let mut out = vec![0u8; w * h];
        let t = std::time::Instant::now();
        let mut strong = Vec::new();
        for _ in 0..20 { strong = pulp::Arch::new().dispatch(|| suppress_band(src, &p, 0, &mut out)); }
        eprintln!("band total {:.2} ms, strong {}", t.elapsed().as_secs_f64() * 1e3 / 20.0, strong.len());
        let t = std::time::Instant::now();
        for _ in 0..20 { let mut o = out.clone(); hysteresis(&mut o, w, strong.clone()); }
        eprintln!("hysteresis+clone {:.2} ms", t.elapsed().as_secs_f64() * 1e3 / 20.0);
        let t = std::time::Instant::now();
        for _ in 0..20 { let o = out.clone(); std::hint::black_box(o); }
        eprintln!("clone {:.2} ms", t.elapsed().as_secs_f64() * 1e3 / 20.0);
        let weak = out.iter().filter(|&&v| v == WEAK).count();
        eprintln!("weak {weak}");
        let one = rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
        let t = std::time::Instant::now();
        for _ in 0..20 { one.install(|| canny(&gray, &CannyConfig::default()).unwrap()); }
        eprintln!("canny 1 thread {:.2} ms", t.elapsed().as_secs_f64() * 1e3 / 20.0);
        let t = std::time::Instant::now();
        for _ in 0..20 { canny(&gray, &CannyConfig::default()).unwrap(); }
        eprintln!("canny all {:.2} ms", t.elapsed().as_secs_f64() * 1e3 / 20.0);
        let rgb = synthetic_gui_screen(1080, 1920, 1);
        let t = std::time::Instant::now();
        for _ in 0..20 { one.install(|| to_gray(&rgb)); }
        eprintln!("to_gray 1 thread {:.2} ms", t.elapsed().as_secs_f64() * 1e3 / 20.0);
    }
}
