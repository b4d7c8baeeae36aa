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
//! - The blur is separable and in fixed point: 8-bit weights summing to 256, both passes
//!   in 16-bit lanes (the vertical one exact, the horizontal one with high-half multiplies
//!   in 1/256 grey levels), one rounding at the end.
//! - Magnitudes are compared squared (`gx² + gy²` in `i32`), so the L2 norm costs no square
//!   root and the thresholds are exact; directions are quantised with integer tangent tests
//!   instead of `atan2`.
//! - Runs of 32 pixels below the low threshold (most of a GUI screenshot) are skipped by one
//!   vectorised maximum.
//! - Non-maximum suppression is branch-free over blocks that have a candidate, so that
//!   textured regions vectorise instead of mispredicting.
//! - Bands run on rayon's *current* pool, and their inner loops are compiled for AVX2 when
//!   the CPU has it (runtime dispatch through `pulp`, safe code only). Hysteresis is a flood
//!   fill with an explicit stack, first inside each band (in parallel), then once across
//!   band borders.
//!
//! The output does not depend on the number of threads: every pixel's class is a pure
//! function of its neighbourhood, and hysteresis marks exactly the weak pixels connected to
//! a strong one, whatever the order of the flood.

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
const SKIP_BLOCK: usize = 32;

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
                format!("must not exceed high ({}), got {}", self.high, self.low),
            );
        }
        Ok(())
    }
}

/// Converts RGB to grey with the ITU-R BT.601 luma weights (0.299, 0.587, 0.114) in 16-bit
/// fixed point, rounded. Runs on rayon's current pool.
pub fn to_gray(img: &RgbImage) -> GrayImage {
    let (width, height) = img.dimensions();
    let mut out = vec![0u8; width as usize * height as usize];
    let src: &[u8] = img.as_raw();
    let row = width as usize;
    if row > 0 {
        out.par_chunks_mut(row * 16)
            .zip(src.par_chunks(row * 3 * 16))
            .for_each(|(dst, src)| pulp::Arch::new().dispatch(GrayTask { src, dst }));
    }
    GrayImage::from_raw(width, height, out).expect("buffer has width * height bytes")
}

/// RGB to luma for a run of pixels, compiled per instruction set like [`BandTask`].
struct GrayTask<'a> {
    src: &'a [u8],
    dst: &'a mut [u8],
}

impl pulp::WithSimd for GrayTask<'_> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _simd: S) {
        // Q16 weights; they sum to exactly 65536 so white stays 255.
        const R: u32 = 19_595;
        const G: u32 = 38_470;
        const B: u32 = 7_471;
        for (d, p) in self.dst.iter_mut().zip(self.src.chunks_exact(3)) {
            let y = R * u32::from(p[0]) + G * u32::from(p[1]) + B * u32::from(p[2]);
            *d = ((y + (1 << 15)) >> 16) as u8;
        }
    }
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
    // A few bands per thread balance the load; each band recomputes two rows of halo, so
    // bands stay at least 16 rows high.
    let bands = rayon::current_num_threads() * 4;
    let band_rows = h.div_ceil(bands.max(1)).max(16);
    let out = detect(gray.as_raw(), w, h, config, band_rows);
    Ok(GrayImage::from_raw(width, height, out).expect("buffer has width * height bytes"))
}

/// [`canny`] on a validated, non-empty `w` x `h` image, in bands of `band_rows` rows.
fn detect(src: &[u8], w: usize, h: usize, config: &CannyConfig, band_rows: usize) -> Vec<u8> {
    let mut out = vec![NONE; w * h];
    if w < 3 || h < 3 {
        return out;
    }
    let params = Params::new(config, w, h);
    out.par_chunks_mut(band_rows * w)
        .enumerate()
        .for_each(|(i, band)| {
            pulp::Arch::new().dispatch(BandTask {
                src,
                params: &params,
                first: i * band_rows,
                band,
            });
        });
    connect_bands(&mut out, w, band_rows);
    out.par_chunks_mut(band_rows * w).for_each(|band| {
        for p in band {
            *p = if *p == EDGE { EDGE } else { NONE };
        }
    });
    out
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
    /// Horizontal blur sums of the general (radius above 4) path.
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

/// One band's work, as a `pulp` operation so that it is compiled once per instruction set
/// (AVX2, baseline) and the widest one the CPU has runs: every function it calls is
/// `#[inline(always)]` so that it is compiled with those target features.
struct BandTask<'a> {
    src: &'a [u8],
    params: &'a Params,
    first: usize,
    band: &'a mut [u8],
}

impl pulp::WithSimd for BandTask<'_> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _simd: S) {
        suppress_band(self.src, self.params, self.first, self.band);
    }
}

/// Blur, gradients, non-maximum suppression and band-local hysteresis for the output rows
/// `first..` covered by `band`, which ends up holding [`WEAK`] and [`EDGE`] pixels.
#[inline(always)]
fn suppress_band(src: &[u8], p: &Params, first: usize, band: &mut [u8]) {
    let (w, h) = (p.width, p.height);
    let last = first + band.len() / w;
    // Rows that may hold edges: the image frame never does.
    let (start, end) = (first.max(1), last.min(h - 1));
    if start >= end {
        return;
    }
    let radius = p.kernel.len() / 2;
    let mut rows = Rows::new(w, radius);
    // Strong pixels, as indices into `band`.
    let mut strong = Vec::new();
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
            let y = r - 1 - first;
            let out = &mut band[y * w..(y + 1) * w];
            suppress_row(&rows, p, out, y * w, &mut strong);
        }
    }
    flood(band, w, strong);
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
    let lines = |d: usize| (line(y as isize - d as isize), line((y + d) as isize));
    let vertical = &mut rows.vertical[radius..radius + w];
    let blurred = &mut rows.blurred[slot][1..w + 1];
    // Fused single passes for the usual radii (sigma up to 2), separate passes otherwise.
    match radius {
        1 => {
            vertical_fixed::<1>(line(y as isize), [lines(1)], kernel, vertical);
            pad(&mut rows.vertical, radius, w);
            horizontal_fixed::<1>(&rows.vertical, kernel, blurred);
        }
        2 => {
            vertical_fixed::<2>(line(y as isize), [lines(1), lines(2)], kernel, vertical);
            pad(&mut rows.vertical, radius, w);
            horizontal_fixed::<2>(&rows.vertical, kernel, blurred);
        }
        3 => {
            let pairs = [lines(1), lines(2), lines(3)];
            vertical_fixed::<3>(line(y as isize), pairs, kernel, vertical);
            pad(&mut rows.vertical, radius, w);
            horizontal_fixed::<3>(&rows.vertical, kernel, blurred);
        }
        4 => {
            let pairs = [lines(1), lines(2), lines(3), lines(4)];
            vertical_fixed::<4>(line(y as isize), pairs, kernel, vertical);
            pad(&mut rows.vertical, radius, w);
            horizontal_fixed::<4>(&rows.vertical, kernel, blurred);
        }
        _ => {
            let kc = kernel[radius];
            for (v, &c) in vertical.iter_mut().zip(line(y as isize)) {
                *v = kc * u16::from(c);
            }
            for d in 1..=radius {
                let k = kernel[radius + d];
                let (above, below) = lines(d);
                for ((v, &a), &b) in vertical.iter_mut().zip(above).zip(below) {
                    *v += k * (u16::from(a) + u16::from(b));
                }
            }
            pad(&mut rows.vertical, radius, w);
            let padded = &rows.vertical[..];
            let acc = &mut rows.horizontal[..w];
            for (a, &c) in acc.iter_mut().zip(&padded[radius..radius + w]) {
                *a = u32::from(kc) * u32::from(c);
            }
            for d in 1..=radius {
                let k = u32::from(kernel[radius + d]);
                let l = &padded[radius - d..radius - d + w];
                let r = &padded[radius + d..radius + d + w];
                for ((a, &l), &r) in acc.iter_mut().zip(l).zip(r) {
                    *a += k * (u32::from(l) + u32::from(r));
                }
            }
            for (o, &a) in blurred.iter_mut().zip(acc.iter()) {
                *o = ((a + (1 << 15)) >> 16) as u8;
            }
        }
    }
    let out = &mut rows.blurred[slot];
    out[0] = out[1];
    out[w + 1] = out[w];
}

/// Replicates the first and last of the `w` values at `radius..radius + w` into the
/// `radius` padding cells on each side.
#[inline(always)]
fn pad(padded: &mut [u16], radius: usize, w: usize) {
    let (left, right) = (padded[radius], padded[radius + w - 1]);
    padded[..radius].fill(left);
    padded[radius + w..].fill(right);
}

/// Vertical blur pass of radius `R`: `out = kc * centre + sum_d k_d * (above_d + below_d)`,
/// exact in `u16` (the weights sum to 256).
#[inline(always)]
fn vertical_fixed<const R: usize>(
    centre: &[u8],
    pairs: [(&[u8], &[u8]); R],
    kernel: &[u16],
    out: &mut [u16],
) {
    let w = out.len();
    let centre = &centre[..w];
    let pairs = pairs.map(|(a, b)| (&a[..w], &b[..w]));
    let kc = kernel[R];
    let k: [u16; R] = std::array::from_fn(|d| kernel[R + 1 + d]);
    for x in 0..w {
        let mut acc = kc * u16::from(centre[x]);
        for d in 0..R {
            acc += k[d] * (u16::from(pairs[d].0[x]) + u16::from(pairs[d].1[x]));
        }
        out[x] = acc;
    }
}

/// Horizontal blur pass of radius `R` over padded vertical sums, rounded to `u8`.
///
/// Stays in 16-bit lanes: each mirrored pair is averaged (moving at most half a unit of
/// the 1/256-level vertical sums) and weighted with a high-half multiply by `2 k_d 256`,
/// so every term is in 1/256 grey levels and floors by less than one such unit; the sum
/// is rounded once at the end.
#[inline(always)]
fn horizontal_fixed<const R: usize>(padded: &[u16], kernel: &[u16], out: &mut [u8]) {
    let w = out.len();
    let centre = &padded[R..R + w];
    let pairs: [(&[u16], &[u16]); R] = std::array::from_fn(|d| {
        (
            &padded[R - 1 - d..R - 1 - d + w],
            &padded[R + 1 + d..R + 1 + d + w],
        )
    });
    // A centre weight of 256/256 (sigma below 0.28: no blur) becomes 65535/65536, which
    // is off by at most 1/256 of a grey level before rounding.
    let kc = (u32::from(kernel[R]) << 8).min(0xffff) as u16;
    let k: [u16; R] = std::array::from_fn(|d| kernel[R + 1 + d] << 9);
    let mul_high = |a: u16, b: u16| ((u32::from(a) * u32::from(b)) >> 16) as u16;
    for x in 0..w {
        let mut acc = mul_high(centre[x], kc);
        for d in 0..R {
            // Rounded mean (one `pavgw`): up by at most half a unit.
            let mean = ((u32::from(pairs[d].0[x]) + u32::from(pairs[d].1[x]) + 1) >> 1) as u16;
            acc = acc.wrapping_add(mul_high(mean, k[d]));
        }
        out[x] = (acc.saturating_add(128) >> 8) as u8;
    }
}

/// Sobel gradients and squared magnitudes of blurred row `r`: `rows.blurred` holds rows
/// r-1, r, r+1, and the results go to slot 2 of the gradient and magnitude rings, which
/// lag the blur ring by one row.
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
/// [`WEAK`]/[`EDGE`] into `out` and pushing strong pixels' indices (plus `offset`) onto
/// `strong`.
///
/// Blocks of [`SKIP_BLOCK`] pixels without a magnitude above the low threshold are skipped
/// (flat GUI areas); the others are classified without branches, so that textured areas,
/// where nearly every pixel is a candidate, vectorise instead of mispredicting.
#[inline(always)]
fn suppress_row(rows: &Rows, p: &Params, out: &mut [u8], offset: usize, strong: &mut Vec<u32>) {
    let w = p.width;
    let (prev, cur, next) = (&rows.mag[0][..w], &rows.mag[1][..w], &rows.mag[2][..w]);
    let (gx, gy) = (&rows.gx[1][..w], &rows.gy[1][..w]);
    let out = &mut out[..w];
    let mut x0 = 1;
    while x0 < w - 1 {
        let x1 = (x0 + SKIP_BLOCK).min(w - 1);
        let peak = cur[x0..x1].iter().fold(0, |m, &v| m.max(v));
        if peak >= p.low2 {
            let block = Block {
                prev: [&prev[x0 - 1..x1 - 1], &prev[x0..x1], &prev[x0 + 1..x1 + 1]],
                cur: [&cur[x0 - 1..x1 - 1], &cur[x0..x1], &cur[x0 + 1..x1 + 1]],
                next: [&next[x0 - 1..x1 - 1], &next[x0..x1], &next[x0 + 1..x1 + 1]],
                gx: &gx[x0..x1],
                gy: &gy[x0..x1],
            };
            let out = &mut out[x0..x1];
            if x1 - x0 == SKIP_BLOCK {
                suppress_block::<SKIP_BLOCK>(&block, p, out);
            } else {
                suppress_block::<0>(&block, p, out);
            }
            // Strong pixels are rare: find them with one OR over the block first.
            if out.iter().fold(0, |a, &v| a | (v & 0x80)) != 0 {
                for (x, &v) in (x0..).zip(out.iter()) {
                    if v == EDGE {
                        strong.push((offset + x) as u32);
                    }
                }
            }
        }
        x0 = x1;
    }
}

/// The magnitudes around a run of pixels (each row shifted by -1, 0, +1) and its gradients.
struct Block<'a> {
    prev: [&'a [i32]; 3],
    cur: [&'a [i32]; 3],
    next: [&'a [i32]; 3],
    gx: &'a [i16],
    gy: &'a [i16],
}

/// Classifies a run of pixels as [`NONE`], [`WEAK`] or [`EDGE`]: a local maximum across
/// the edge (direction quantised to 0°, 45°, 90°, 135° with integer tangent tests) at or
/// above the low threshold. `N` is the run length when known at compile time, else 0.
#[inline(always)]
fn suppress_block<const N: usize>(b: &Block<'_>, p: &Params, out: &mut [u8]) {
    let n = if N > 0 { N } else { out.len() };
    let out = &mut out[..n];
    let [pl, pc, pr] = b.prev.map(|r| &r[..n]);
    let [cl, m, cr] = b.cur.map(|r| &r[..n]);
    let [nl, nc, nr] = b.next.map(|r| &r[..n]);
    let (gx, gy) = (&b.gx[..n], &b.gy[..n]);
    let (low2, high2) = (p.low2, p.high2);
    for i in 0..n {
        let (dx, dy) = (i32::from(gx[i]), i32::from(gy[i]));
        let (ax, ay) = (dx.abs(), dy.abs() << 15);
        let tan22 = ax * TAN_22_5_Q15;
        let horizontal = ay < tan22;
        let vertical = ay > tan22 + (ax << 16);
        // Strictly above the neighbour before, at least the one after: a two-pixel
        // plateau keeps exactly one pixel. All four tests are computed and the right one
        // picked, rather than picking neighbours: selecting between loads would make the
        // compiler select addresses and give up on vectorising.
        let mi = m[i];
        let across_h = mi > cl[i] && mi >= cr[i];
        let across_v = mi > pc[i] && mi >= nc[i];
        // 45° and 135° (y grows downwards): same signs point down-right.
        let across_falling = mi > pl[i] && mi >= nr[i];
        let across_rising = mi > pr[i] && mi >= nl[i];
        let across_d = if (dx ^ dy) < 0 {
            across_rising
        } else {
            across_falling
        };
        let across = if horizontal {
            across_h
        } else if vertical {
            across_v
        } else {
            across_d
        };
        let keep = mi >= low2 && across;
        let strong = mi >= high2;
        out[i] = if keep {
            if strong { EDGE } else { WEAK }
        } else {
            NONE
        };
    }
}

/// Hysteresis: flood fill from the `stack` of [`EDGE`] pixels through 8-connected [`WEAK`]
/// ones, turning them into edges, within `out` (whole rows of width `w`). Rows outside
/// `out` are not looked at; the frame columns hold no weak or edge pixel, so neighbours
/// never wrap around a row.
#[inline(always)]
fn flood(out: &mut [u8], w: usize, mut stack: Vec<u32>) {
    let len = out.len();
    while let Some(i) = stack.pop() {
        let i = i as usize;
        // The pixel itself is an edge already, so each row's three cells can be checked.
        let first = if i >= w { i - w } else { i };
        let last = if i + w < len { i + w } else { i };
        for centre in (first..=last).step_by(w) {
            let [a, b, c] = [out[centre - 1], out[centre], out[centre + 1]];
            if (a == WEAK) | (b == WEAK) | (c == WEAK) {
                take_weak(out, centre - 1, &mut stack);
            }
        }
    }
}

/// Turns the weak pixels among the three from `left` on into edges and stacks them.
#[inline(always)]
fn take_weak(out: &mut [u8], left: usize, stack: &mut Vec<u32>) {
    for (n, c) in (left..).zip(&mut out[left..left + 3]) {
        if *c == WEAK {
            *c = EDGE;
            stack.push(n as u32);
        }
    }
}

/// Finishes hysteresis across band borders: the bands flooded only within themselves, so
/// every weak pixel next to an edge pixel across a border starts a flood over the whole
/// image. Together with the band floods this marks exactly the weak pixels connected to a
/// strong one, whatever the band layout.
fn connect_bands(out: &mut [u8], w: usize, band_rows: usize) {
    let h = out.len() / w;
    let mut stack = Vec::new();
    for border in (band_rows..h).step_by(band_rows) {
        for (from, to) in [(border - 1, border), (border, border - 1)] {
            for x in 1..w - 1 {
                if out[from * w + x] != EDGE {
                    continue;
                }
                take_weak(out, to * w + x - 1, &mut stack);
            }
        }
    }
    flood(out, w, stack);
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
    text_runs(
        &mut img,
        &mut rng,
        w / 20,
        bar / 3,
        w / 2,
        bar / 3,
        [255, 255, 255],
    );
    // Cards: a bordered box, a line or two of text, sometimes a button and an icon.
    let margin = (w / 24).max(1);
    let mut y = bar + margin;
    while y + h / 10 < h - h / 6 {
        let card_h = h / 12 + rng.below(h as u64 / 16 + 1) as i64;
        let border = 255 - (20 + rng.below(60) as u8);
        let inside = 255 - rng.below(6) as u8;
        fill(&mut img, margin, y, w - margin, y + card_h, grey(border));
        fill(
            &mut img,
            margin + 1,
            y + 1,
            w - margin - 1,
            y + card_h - 1,
            grey(inside),
        );
        let glyph = (card_h / 8).clamp(2, 14);
        let ink = grey(rng.below(80) as u8 + 20);
        text_runs(
            &mut img,
            &mut rng,
            margin * 3,
            y + card_h / 5,
            w / 2,
            glyph,
            ink,
        );
        text_runs(
            &mut img,
            &mut rng,
            margin * 3,
            y + card_h / 2,
            w / 3,
            glyph * 3 / 4,
            ink,
        );
        if rng.below(2) == 0 {
            let (bx, by) = (w - margin * 6, y + card_h - card_h / 3);
            fill(
                &mut img,
                bx,
                by,
                bx + margin * 4,
                by + card_h / 5,
                [0, 120, 90],
            );
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
        disc(
            &mut img,
            cx,
            (h - bar / 2) as f64,
            (bar / 4) as f64,
            grey(90),
        );
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
            assert_eq!(
                k.iter().map(|&v| u32::from(v)).sum::<u32>(),
                256,
                "sigma {sigma}"
            );
            assert!(k.iter().eq(k.iter().rev()), "sigma {sigma}: {k:?}");
            let r = k.len() / 2;
            assert!(
                k[..r].windows(2).all(|p| p[0] <= p[1]),
                "sigma {sigma}: {k:?}"
            );
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
    fn band_layout_does_not_change_edges() {
        // Wavy contours plus noise with a low weak threshold: long weak chains that wander
        // across every band border, so hysteresis has to connect bands.
        let (w, h) = (157, 211);
        let mut rng = SplitMix(9);
        let img: Vec<u8> = (0..w * h)
            .map(|i| {
                let (x, y) = ((i % w) as f64, (i / w) as f64);
                let wave = 60.0 * (x / 7.0 + y / 23.0).sin() * (y / 9.0).cos();
                (128.0 + wave + rng.below(21) as f64 - 10.0) as u8
            })
            .collect();
        let config = CannyConfig {
            sigma: 1.0,
            low: 8.0,
            high: 60.0,
        };
        let whole = detect(&img, w, h, &config, h);
        let edges = |v: &[u8]| v.iter().filter(|&&p| p == EDGE).count();
        let strong_only = CannyConfig {
            low: 60.0,
            ..config
        };
        let strong = edges(&detect(&img, w, h, &strong_only, h));
        // The flood must have added many weak pixels for this test to mean anything.
        assert!(
            edges(&whole) > strong + 500,
            "{} vs {strong}",
            edges(&whole)
        );
        for band_rows in [1, 2, 3, 7, 16, 100] {
            let banded = detect(&img, w, h, &config, band_rows);
            assert!(banded == whole, "bands of {band_rows} rows differ");
        }
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
