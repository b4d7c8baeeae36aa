//! Inference of [`WidgetCnn`](crate::WidgetCnn) in plain Rust: each 3×3 convolution, its
//! bias, ReLU and the 2×2 max pooling after it in one pass over a padded channels-last
//! buffer, then the two dense layers and the softmax. Training keeps candle's layers.
//!
//! Why: candle's CPU convolution (im2col, a matrix product, then bias, ReLU and pooling as
//! separate passes over every feature map) took 21–26 ms for the 46 crops of a 1280x800
//! screen on one core, seven times the edges and boxes together (`cargo xtask vision
//! bench`). The arithmetic is about one million multiply-adds per crop.
//!
//! Each crop is computed on its own (rayon over the crops, in the caller's pool), so the
//! result does not depend on the batch or the number of threads. The inner loops run over
//! output channels, contiguous in memory, and are compiled once per instruction set with
//! `pulp` (AVX2 when the CPU has it); the multiply and the add stay two operations, so
//! every instruction set gives the same numbers.

use rayon::prelude::*;

use gui_core::WidgetKind;

use crate::cnn_input::CnnInput;

/// One 3×3 convolution (padding 1, stride 1) with ReLU and 2×2 max pooling.
///
/// The output channels are padded with zero kernels to a width the kernels are compiled
/// for (4, 8, 16, 32 or 64, or a multiple of 64 run in blocks of 64), so any layer width
/// takes the same path; a padded channel is always 0 and the next layer's weights for it
/// are 0 too.
#[derive(Debug, Clone)]
struct ConvPool {
    /// Input channels as laid out in memory (the previous layer's padded width).
    c_in: usize,
    /// Output channels as laid out in memory (padded).
    c_out: usize,
    /// Output channels per block: `c_out` up to 64, else 64.
    block: usize,
    /// Per block, `[((ky * 3 + kx) * c_in + ci) * block + co]`: output channels innermost.
    weights: Vec<Vec<f32>>,
    biases: Vec<Vec<f32>>,
}

/// The padded width of `c` channels.
fn padded_width(c: usize) -> usize {
    match c {
        0..=4 => 4,
        5..=8 => 8,
        9..=16 => 16,
        17..=32 => 32,
        _ => c.div_ceil(64) * 64,
    }
}

impl ConvPool {
    /// From a `(c_out, c_in, 3, 3)` kernel in candle's layout; `c_in_stride` is how many
    /// channels each input pixel has in memory (`c_in` or more).
    fn new(kernel: &[f32], bias: &[f32], c_in: usize, c_in_stride: usize) -> Self {
        let c_out_real = bias.len();
        let c_out = padded_width(c_out_real);
        let block = c_out.min(64);
        let mut weights = Vec::new();
        let mut biases = Vec::new();
        for b in 0..c_out / block {
            let mut w = vec![0f32; 9 * c_in_stride * block];
            let mut bs = vec![0f32; block];
            for j in 0..block {
                let co = b * block + j;
                if co >= c_out_real {
                    continue;
                }
                bs[j] = bias[co];
                for ci in 0..c_in {
                    for tap in 0..9 {
                        w[(tap * c_in_stride + ci) * block + j] =
                            kernel[(co * c_in + ci) * 9 + tap];
                    }
                }
            }
            weights.push(w);
            biases.push(bs);
        }
        Self {
            c_in: c_in_stride,
            c_out,
            block,
            weights,
            biases,
        }
    }

    /// `src` is `(side + 2)² × c_in`, channels last, with a zero frame one pixel wide.
    /// Returns the pooled map, `(side / 2 + 2)² × c_out` with its own zero frame (ready
    /// for the next layer).
    #[inline(always)]
    fn run(&self, src: &[f32], side: usize) -> Vec<f32> {
        let out_padded = side / 2 + 2;
        let mut out = vec![0f32; out_padded * out_padded * self.c_out];
        for (b, (w, bias)) in self.weights.iter().zip(&self.biases).enumerate() {
            let offset = b * self.block;
            // A fixed width lets the compiler keep the accumulators in vector registers.
            match self.block {
                4 => self.run_fixed::<4>(src, side, w, bias, &mut out, offset),
                8 => self.run_fixed::<8>(src, side, w, bias, &mut out, offset),
                16 => self.run_fixed::<16>(src, side, w, bias, &mut out, offset),
                32 => self.run_fixed::<32>(src, side, w, bias, &mut out, offset),
                64 => self.run_fixed::<64>(src, side, w, bias, &mut out, offset),
                other => unreachable!("block width {other} is not one of the padded widths"),
            }
        }
        out
    }

    /// One block of `CO` output channels, written at channel `offset` of `out`.
    #[inline(always)]
    fn run_fixed<const CO: usize>(
        &self,
        src: &[f32],
        side: usize,
        weights: &[f32],
        bias: &[f32],
        out: &mut [f32],
        offset: usize,
    ) {
        let ci_n = self.c_in;
        let padded = side + 2;
        let half = side / 2;
        let out_padded = half + 2;
        let bias: [f32; CO] = bias.try_into().expect("CO is the bias length");
        // The weight rows as arrays, without a copy (the length is 9 × c_in × CO).
        let (taps, _) = weights.as_chunks::<CO>();
        // Two rows of the convolution's output, pooled once both are done.
        let mut rows = vec![[0f32; CO]; 2 * side];
        for py in 0..half {
            for (r, row) in rows.chunks_exact_mut(side).enumerate() {
                let oy = 2 * py + r;
                for (ox, out) in row.iter_mut().enumerate() {
                    // A local accumulator stays in registers; one behind the `&mut` into
                    // `rows` was written back to memory at every multiply-add.
                    let mut acc = bias;
                    for ky in 0..3 {
                        let at = ((oy + ky) * padded + ox) * ci_n;
                        // The three taps of a kernel row are adjacent pixels: 3 × c_in
                        // contiguous inputs against 3 × c_in weight rows.
                        let inputs = &src[at..at + 3 * ci_n];
                        let wrows = &taps[ky * 3 * ci_n..(ky + 1) * 3 * ci_n];
                        for (&v, w) in inputs.iter().zip(wrows) {
                            for c in 0..CO {
                                acc[c] += v * w[c];
                            }
                        }
                    }
                    *out = acc;
                }
            }
            let (top, bottom) = rows.split_at(side);
            for px in 0..half {
                let at = ((py + 1) * out_padded + px + 1) * self.c_out + offset;
                let dst = &mut out[at..at + CO];
                let (a0, a1) = (&top[2 * px], &top[2 * px + 1]);
                let (b0, b1) = (&bottom[2 * px], &bottom[2 * px + 1]);
                for c in 0..CO {
                    // ReLU after the maximum is the maximum after ReLU.
                    dst[c] = a0[c].max(a1[c]).max(b0[c]).max(b1[c]).max(0.0);
                }
            }
        }
    }
}

/// The network's weights laid out for [`FastCnn::run`].
#[derive(Debug, Clone)]
pub(crate) struct FastCnn {
    side: usize,
    in_channels: usize,
    convs: [ConvPool; 3],
    /// The last convolution's real width (its map in memory may be padded wider).
    c3: usize,
    /// How many of the input's geometry numbers the dense layer reads.
    geometry: usize,
    feature_dim: usize,
    /// `[input][feature]`: the first dense layer, transposed.
    fc1: Vec<f32>,
    fc1_bias: Vec<f32>,
    /// `[feature][kind]`: the logits layer, transposed.
    fc2: Vec<f32>,
    fc2_bias: Vec<f32>,
}

/// The weights of [`WidgetCnn`](crate::WidgetCnn) in candle's order and layout, flat.
pub(crate) struct Weights<'a> {
    pub side: usize,
    pub in_channels: usize,
    pub channels: [usize; 3],
    pub feature_dim: usize,
    pub geometry: usize,
    /// conv1 w, conv1 b, conv2 w, conv2 b, conv3 w, conv3 b, fc w, fc b, out w, out b.
    pub params: [&'a [f32]; 10],
}

impl FastCnn {
    pub(crate) fn new(w: &Weights<'_>) -> Self {
        let p = &w.params;
        let [c1, c2, c3] = w.channels;
        let conv1 = ConvPool::new(p[0], p[1], w.in_channels, w.in_channels);
        let conv2 = ConvPool::new(p[2], p[3], c1, conv1.c_out);
        let conv3 = ConvPool::new(p[4], p[5], c2, conv2.c_out);
        let convs = [conv1, conv2, conv3];
        let q = w.side / 8;
        let inputs = c3 * q * q + w.geometry;
        Self {
            side: w.side,
            in_channels: w.in_channels,
            convs,
            c3,
            geometry: w.geometry,
            feature_dim: w.feature_dim,
            fc1: transpose(p[6], w.feature_dim, inputs),
            fc1_bias: p[7].to_vec(),
            fc2: transpose(p[8], WidgetKind::COUNT, w.feature_dim),
            fc2_bias: p[9].to_vec(),
        }
    }

    /// Kind probabilities and features of every input, in order.
    pub(crate) fn run(&self, inputs: &[CnnInput]) -> Vec<([f32; WidgetKind::COUNT], Vec<f32>)> {
        inputs
            .par_iter()
            .map(|i| {
                pulp::Arch::new().dispatch(OneCrop {
                    net: self,
                    input: i,
                })
            })
            .collect()
    }

    #[inline(always)]
    fn one(&self, input: &CnnInput) -> ([f32; WidgetKind::COUNT], Vec<f32>) {
        let (s, c) = (self.side, self.in_channels);
        let padded = s + 2;
        // Channels-first input to a channels-last buffer with a zero frame.
        let mut x = vec![0f32; padded * padded * c];
        let plane = s * s;
        for y in 0..s {
            for xx in 0..s {
                let at = ((y + 1) * padded + xx + 1) * c;
                for (ch, v) in x[at..at + c].iter_mut().enumerate() {
                    *v = input.pixels[ch * plane + y * s + xx];
                }
            }
        }
        let mut side = s;
        for conv in &self.convs {
            x = conv.run(&x, side);
            side /= 2;
        }
        // Flatten in candle's channels-first order, then the shape numbers.
        let (c3, stride) = (self.c3, self.convs[2].c_out);
        let padded = side + 2;
        let mut flat = vec![0f32; c3 * side * side + self.geometry];
        for y in 0..side {
            for xx in 0..side {
                let at = ((y + 1) * padded + xx + 1) * stride;
                for ch in 0..c3 {
                    flat[ch * side * side + y * side + xx] = x[at + ch];
                }
            }
        }
        flat[c3 * side * side..].copy_from_slice(&input.geometry[..self.geometry]);
        let mut feat = self.fc1_bias.clone();
        for (&v, w) in flat.iter().zip(self.fc1.chunks_exact(self.feature_dim)) {
            for (f, &k) in feat.iter_mut().zip(w) {
                *f += v * k;
            }
        }
        for f in &mut feat {
            *f = f.max(0.0);
        }
        let mut logits = [0f32; WidgetKind::COUNT];
        logits.copy_from_slice(&self.fc2_bias);
        for (&v, w) in feat.iter().zip(self.fc2.chunks_exact(WidgetKind::COUNT)) {
            for (l, &k) in logits.iter_mut().zip(w) {
                *l += v * k;
            }
        }
        (softmax(logits), feat)
    }
}

struct OneCrop<'a> {
    net: &'a FastCnn,
    input: &'a CnnInput,
}

impl pulp::WithSimd for OneCrop<'_> {
    type Output = ([f32; WidgetKind::COUNT], Vec<f32>);

    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _simd: S) -> Self::Output {
        self.net.one(self.input)
    }
}

/// `(rows, cols)` row-major to `(cols, rows)` row-major.
fn transpose(m: &[f32], rows: usize, cols: usize) -> Vec<f32> {
    let mut t = vec![0f32; m.len()];
    for r in 0..rows {
        for c in 0..cols {
            t[c * rows + r] = m[r * cols + c];
        }
    }
    t
}

fn softmax(logits: [f32; WidgetKind::COUNT]) -> [f32; WidgetKind::COUNT] {
    let max = logits.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let mut out = logits.map(|l| (l - max).exp());
    let sum: f32 = out.iter().sum();
    for p in &mut out {
        *p /= sum;
    }
    out
}
